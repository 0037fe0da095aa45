#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""The README's main job on the bundled samples (run through tools/run.py).

Imports the RiTE humanoid with its walk (mergeable) and wave (dominant)
animations headlessly, verifies Blender's deformation against the core at
every frame (table + verdict), writes out/humanoid.blend and renders
out/humanoid_poses.png (Cycles on the CPU, a few poses side by side).
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples" / "rite"
OUT = ROOT / "out"


def main() -> int:
    if not (SAMPLES / "humanoid.ram").exists():
        subprocess.check_call([sys.executable, str(ROOT / "tools" / "make_rite_sample.py")])
    OUT.mkdir(exist_ok=True)
    cmd = [sys.executable, "-m", "legacy_skin_io", "verify", str(SAMPLES / "humanoid.ram"),
           str(SAMPLES / "walk.raa"), "--dominant", str(SAMPLES / "wave.raa"),
           "--blend", str(OUT / "humanoid.blend"), "--render", str(OUT / "humanoid_poses.png")]
    print("$", " ".join(Path(c).name if i else c for i, c in enumerate(cmd)), flush=True)
    return subprocess.call(cmd, cwd=ROOT)


if __name__ == "__main__":
    sys.exit(main())
