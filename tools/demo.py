#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""The README's main job on the bundled samples (run through tools/run.py).

For each sample, headlessly: import it, verify Blender's deformation against
the core's evaluation of the original files at every frame (a table per
animation and a verdict), save a .blend and render a few poses (Cycles on
the CPU) into out/:

* the RiTE humanoid with its walk (mergeable) and wave (dominant) animations;
* DirectX tiny_4anim.x with its four AnimationSets.

Also converts the RiTE sample to DirectX without Blender (numpy only).
Exits non-zero if any verification fails.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples"
OUT = ROOT / "out"


def run(args: list[str]) -> int:
    cmd = [sys.executable, "-m", "legacy_skin_io", *args]
    print("$ python -m legacy_skin_io", " ".join(Path(a).name if "/" in a else a for a in args), flush=True)
    return subprocess.call(cmd, cwd=ROOT)


def main() -> int:
    rite = SAMPLES / "rite"
    if not (rite / "humanoid.ram").exists():
        subprocess.check_call([sys.executable, str(ROOT / "tools" / "make_rite_sample.py")])
    OUT.mkdir(exist_ok=True)
    codes = [
        run(["verify", str(rite / "humanoid.ram"), str(rite / "walk.raa"), "--dominant", str(rite / "wave.raa"),
             "--blend", str(OUT / "humanoid.blend"), "--render", str(OUT / "humanoid_poses.png")]),
        run(["verify", str(SAMPLES / "x" / "tiny_4anim.x"),     # authored Z-up: stood up automatically
             "--blend", str(OUT / "tiny_4anim.blend"), "--render", str(OUT / "tiny_4anim_poses.png")]),
        run(["convert", str(rite / "humanoid.ram"), str(rite / "walk.raa"), str(rite / "wave.raa"),
             "-o", str(OUT / "humanoid.x")]),
    ]
    return max(codes)


if __name__ == "__main__":
    sys.exit(main())
