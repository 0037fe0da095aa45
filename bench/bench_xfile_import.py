# SPDX-License-Identifier: GPL-3.0-or-later
"""Our .X parse and Blender import against assimp (+ Blender's glTF importer).

Per corpus file, in one run:
  parse:  ``assimp info FILE`` (process, includes its start-up)  vs  read_xfile
  import: ``assimp export FILE x.glb`` + ``bpy.ops.import_scene.gltf``  vs
          ``bpy.ops.import_scene.xfile`` (meshes, armature, every AnimationSet)
Ratios > 1 mean we are faster. Best of N runs each.

    python3.11 tools/run.py py bench/bench_xfile_import.py [--repeat N] [FILES...]
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "data" / "x"
BROKEN = {"malformed_skinweights_oob.x", "OV_GetNextToken"}


def best(fn, n: int) -> float:
    out = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return min(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="*")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    if shutil.which("assimp") is None:
        print("assimp not found: apt-get install -y assimp-utils", file=sys.stderr)
        return 2
    import bpy

    from legacy_skin_io import register
    from legacy_skin_io.io.xfile import read_xfile

    register()
    files = [Path(f) for f in args.files] or sorted(p for p in CORPUS.rglob("*")
                                                    if p.suffix.lower() == ".x" and p.name not in BROKEN)
    print(f"{'file':32} {'assimp info':>11} {'our parse':>10} {'ratio':>7} | "
          f"{'assimp+glTF':>11} {'our import':>10} {'ratio':>7}")
    worst = float("inf")
    with tempfile.TemporaryDirectory() as tmp:
        for p in files:
            glb = Path(tmp) / "x.glb"
            if subprocess.run(["assimp", "export", str(p), str(glb)], capture_output=True).returncode != 0:
                print(f"{p.name:32} assimp export fails on this file (no comparison)")
                continue
            t_info = best(lambda: subprocess.run(["assimp", "info", str(p)], capture_output=True), args.repeat)
            t_parse = best(lambda: read_xfile(p), args.repeat)

            def via_assimp():
                bpy.ops.wm.read_homefile(use_empty=True)
                subprocess.run(["assimp", "export", str(p), str(glb)], capture_output=True, check=True)
                bpy.ops.import_scene.gltf(filepath=str(glb))

            def ours():
                bpy.ops.wm.read_homefile(use_empty=True)
                assert bpy.ops.import_scene.xfile(filepath=str(p)) == {"FINISHED"}

            # read_homefile is in both timings (same cost); measure it to subtract
            t_home = best(lambda: bpy.ops.wm.read_homefile(use_empty=True), args.repeat)
            t_gltf = best(via_assimp, args.repeat) - t_home
            t_ours = best(ours, args.repeat) - t_home
            r_import = t_gltf / t_ours
            worst = min(worst, r_import)
            print(f"{p.name:32} {t_info * 1e3:9.1f}ms {t_parse * 1e3:8.1f}ms {t_info / t_parse:7.2f} | "
                  f"{t_gltf * 1e3:9.1f}ms {t_ours * 1e3:8.1f}ms {r_import:7.2f}")
    print(f"worst import ratio (assimp+glTF / ours): {worst:.2f} "
          f"({'we are never slower' if worst >= 1 else 'we are slower on some file'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
