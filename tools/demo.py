#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""The README's main job on the bundled samples (run through tools/run.py).

For each sample, on Blender's command line (the bpy module): import it,
verify Blender's deformation against the core's evaluation of the original
files at every frame (one line per animation and a verdict), save a .blend
into out/ and write a report (out/reports/<sample>/index.html: the error
per frame plotted, frames rendered with Cycles on the CPU):

* the RiTE humanoid with its walk (mergeable) and wave (dominant) animations;
* DirectX tiny_4anim.x with its four AnimationSets.

Also converts the RiTE sample to DirectX without Blender (numpy only). Ends
with the path of the reports (out/reports/index.html links them). Exits
non-zero if any verification fails.
"""
from __future__ import annotations

import html
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples"
OUT = ROOT / "out"
REPORTS = OUT / "reports"


def run(args: list[str]) -> int:
    cmd = [sys.executable, "-m", "legacy_skin_io", *args]
    shown = [Path(a).name if "/" in a else a for a in args]
    print("\n$ python -m legacy_skin_io", " ".join(shown), flush=True)
    return subprocess.call(cmd, cwd=ROOT)


def index(reports: list[tuple[str, Path, int]]) -> Path:
    """out/reports/index.html: a link to each sample's report and its verdict."""
    items = "".join(f'<li><a href="{html.escape(p.relative_to(REPORTS).as_posix())}">{html.escape(name)}</a>: '
                    f'{"PASS" if code == 0 else "FAIL"}</li>' for name, p, code in reports)
    page = REPORTS / "index.html"
    page.write_text(f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>legacy_skin_io demo'
                    f'</title></head><body style="font-family: sans-serif"><h1>legacy_skin_io: the demo\'s '
                    f'verify reports</h1><ul>{items}</ul></body></html>\n', encoding="utf-8")
    return page


def main() -> int:
    rite = SAMPLES / "rite"
    if not (rite / "humanoid.ram").exists():
        subprocess.check_call([sys.executable, str(ROOT / "tools" / "make_rite_sample.py")])
    REPORTS.mkdir(parents=True, exist_ok=True)
    samples = [
        ("humanoid", [str(rite / "humanoid.ram"), str(rite / "walk.raa"), "--dominant", str(rite / "wave.raa")]),
        ("tiny_4anim", [str(SAMPLES / "x" / "tiny_4anim.x")]),     # authored Z-up: stood up automatically
    ]
    reports = []
    for name, files in samples:
        code = run(["verify", *files, "--blend", str(OUT / f"{name}.blend"), "--report", str(REPORTS / name)])
        reports.append((name, REPORTS / name / "index.html", code))
    codes = [c for _, _, c in reports]
    codes.append(run(["convert", str(rite / "humanoid.ram"), str(rite / "walk.raa"), str(rite / "wave.raa"),
                      "-o", str(OUT / "humanoid.x")]))
    print("\nReports (open in a browser):", index(reports))
    return max(codes)


if __name__ == "__main__":
    sys.exit(main())
