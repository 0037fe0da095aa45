# SPDX-License-Identifier: GPL-3.0-or-later
"""Full .X import through Blender against assimp + Blender's glTF importer
(not a test).

    python3.11 tools/run.py py bench/bench_xfile_import.py [--runs N] [--quick] [FILES...]

Per corpus file (tests/data/x, the two deliberately broken files left out),
in one run, alternating, best of N each:

  ours:      ``operators.pipeline.load`` (read, scene, validation, Blender
             build: meshes, armature, every AnimationSet; the importer's
             defaults, as ``import_scene.xfile`` runs it)
  baseline:  ``assimp export FILE x.glb`` (a process) + ``bpy.ops.import_scene.gltf``

Both start from an empty scene (``read_homefile``, not timed). Last line:
the worst (largest) ours/baseline over the files:

    RATIO xfile import worst file/assimp+glTF: ...   (target <= 1.0)
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ASSIMP_MISSING, assimp_command, ratio_line, spread, warm_gltf, x_corpus  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="*")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="2 runs")
    args = ap.parse_args()
    if args.quick:
        args.runs = min(args.runs, 2)
    assimp = assimp_command()
    if assimp is None:
        print(ASSIMP_MISSING, file=sys.stderr)
        print("RATIO xfile import worst file/assimp+glTF: n/a (assimp not found; target <= 1)")
        return 2
    exe, env = assimp
    import bpy

    from legacy_skin_io import register
    from legacy_skin_io.io.formats import by_id
    from legacy_skin_io.io.import_options import ImportOptions
    from legacy_skin_io.operators import pipeline

    register()
    fmt = by_id("xfile")
    defaults = ImportOptions.of({}, fmt)        # File > Import's options at the format's defaults
    files = [Path(f) for f in args.files] or x_corpus()
    print(f"{'file':34} {'KB':>6} {'ours':>9} {'assimp':>9} {'glTF imp':>9} {'baseline':>9} {'ratio':>6}  "
          f"ratio spread")
    worst = None
    with tempfile.TemporaryDirectory(prefix="bench_xfile_import_") as tmp:
        warm_gltf(bpy, Path(tmp))
        for p in files:
            glb = Path(tmp) / (p.stem + ".glb")
            r = subprocess.run([exe, "export", str(p), str(glb)], capture_output=True, env=env)
            if r.returncode != 0 or not glb.exists():
                why = f"signal {-r.returncode}" if r.returncode < 0 else f"exit {r.returncode}"
                print(f"{p.name:34} {p.stat().st_size / 1024:6.0f}  assimp export fails ({why}): no comparison")
                continue
            ours, conv, gimp, ratios = [], [], [], []
            failed = None
            for _ in range(args.runs):
                bpy.ops.wm.read_homefile(use_empty=True)
                t0 = time.perf_counter()
                try:
                    pipeline.load(bpy.context, fmt, [str(p)], options=defaults)
                except pipeline.IOFailed as err:
                    failed = f"our import fails: {err}"
                    break
                t_ours = time.perf_counter() - t0
                bpy.ops.wm.read_homefile(use_empty=True)
                t0 = time.perf_counter()
                subprocess.run([exe, "export", str(p), str(glb)], capture_output=True, check=True, env=env)
                t1 = time.perf_counter()
                try:
                    bpy.ops.import_scene.gltf(filepath=str(glb))
                except RuntimeError as err:
                    failed = f"glTF import of assimp's .glb fails: {str(err).splitlines()[-1][:60]}"
                    break
                t2 = time.perf_counter()
                ours.append(t_ours)
                conv.append(t1 - t0)
                gimp.append(t2 - t1)
                ratios.append(t_ours / (t2 - t0))
            if failed:
                print(f"{p.name:34} {p.stat().st_size / 1024:6.0f}  {failed}")
                continue
            o = min(ours)
            base = min(c + g for c, g in zip(conv, gimp))
            print(f"{p.name:34} {p.stat().st_size / 1024:6.0f} {o * 1e3:7.1f}ms {min(conv) * 1e3:7.1f}ms "
                  f"{min(gimp) * 1e3:7.1f}ms {base * 1e3:7.1f}ms {o / base:6.2f}  {spread(ratios)}", flush=True)
            if worst is None or o / base > worst[0] / worst[1]:
                worst = (o, base, p.name)
    print("ours: pipeline.load; baseline: assimp export (process) + glTF import; ratio = ours / baseline "
          f"(best of {args.runs} each)")
    if worst is None:
        print("RATIO xfile import worst file/assimp+glTF: n/a (no file compared; target <= 1)")
        return 1
    print(f"worst file: {worst[2]}")
    print(ratio_line("xfile import worst file/assimp+glTF", worst[0], worst[1], 1.0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
