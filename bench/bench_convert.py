# SPDX-License-Identifier: GPL-3.0-or-later
"""Format conversion without Blender against the same conversions through
Blender (not a test).

    python3.11 tools/run.py py bench/bench_convert.py [--runs N] [--quick] [FILES...]

Every corpus .X file (tests/data/x, the two deliberately broken ones left
out) goes to RAM/RAA and back to .X:

  without Blender: ``io.convert.convert([x], y.ram)`` then
                   ``convert([y.ram, y_*.raa], z.x)`` (numpy only, never imports bpy);
  through Blender: ``operators.pipeline.load`` of the .x, ``pipeline.save`` to .ram
                   (and its .raa), then ``load`` of the .ram and .raa files and
                   ``save`` to .x (``read_homefile`` before each load, not timed).

Prints, per file, the best of N of each; the throughput without Blender in
files/s and MB/s (.X input read); and, last:

    RATIO convert without Blender/through Blender: ...   (must be < 1)

A file that one path cannot convert is reported and left out of both sums.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ratio_line, x_corpus  # noqa: E402


def without_blender(src: Path, tmp: Path) -> float:
    from legacy_skin_io.io.convert import convert

    out = tmp / "without_blender"
    out.mkdir(exist_ok=True)
    for f in out.iterdir():
        f.unlink()
    t0 = time.perf_counter()
    written = convert([str(src)], str(out / "model.ram"))
    convert(written, str(out / "back.x"))
    return time.perf_counter() - t0


def through_blender(bpy, src: Path, tmp: Path) -> float:
    from legacy_skin_io.io.formats import by_id
    from legacy_skin_io.io.import_options import ImportOptions
    from legacy_skin_io.operators import pipeline

    xf, rite = by_id("xfile"), by_id("rite")
    out = tmp / "blender"
    out.mkdir(exist_ok=True)
    for f in out.iterdir():
        f.unlink()
    ctx = bpy.context

    def options(fmt):
        return ImportOptions.of({}, fmt)

    bpy.ops.wm.read_homefile(use_empty=True)
    t0 = time.perf_counter()
    pipeline.load(ctx, xf, [str(src)], options=options(xf))
    written, _ = pipeline.save(ctx, rite, str(out / "model.ram"))
    t1 = time.perf_counter()
    bpy.ops.wm.read_homefile(use_empty=True)
    t2 = time.perf_counter()
    pipeline.load(ctx, rite, written, options=options(rite))
    pipeline.save(ctx, xf, str(out / "back.x"))
    return (t1 - t0) + (time.perf_counter() - t2)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="*")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="1 run")
    args = ap.parse_args()
    if args.quick:
        args.runs = 1
    files = [Path(f) for f in args.files] or x_corpus()
    import bpy

    from legacy_skin_io import register
    from legacy_skin_io.io.errors import FormatError
    from legacy_skin_io.io.formats import UnknownFormat
    from legacy_skin_io.operators.pipeline import IOFailed

    register()
    print(f"{'file':34} {'KB':>6} {'no Blender':>10} {'Blender':>10} {'ratio':>6}")
    tot_h = tot_b = size = 0.0
    n = 0
    with tempfile.TemporaryDirectory(prefix="bench_convert_") as d:
        tmp = Path(d)
        through_blender(bpy, files[0], tmp)          # warm-up (first calls load modules)
        for p in files:
            kb = p.stat().st_size / 1024
            th, tb = [], []
            why = None
            for _ in range(args.runs):
                try:
                    th.append(without_blender(p, tmp))
                except (FormatError, UnknownFormat, ValueError) as err:
                    why = f"conversion without Blender fails: {' '.join(str(err).split())[:70]}"
                    break
                try:
                    tb.append(through_blender(bpy, p, tmp))
                except (IOFailed, RuntimeError) as err:
                    why = f"conversion through Blender fails: {' '.join(str(err).split())[:60]}"
                    break
            if why:
                print(f"{p.name:34} {kb:6.0f}  {why}")
                continue
            h, b = min(th), min(tb)
            print(f"{p.name:34} {kb:6.0f} {h * 1e3:8.1f}ms {b * 1e3:8.1f}ms {h / b:6.2f}", flush=True)
            tot_h += h
            tot_b += b
            size += kb / 1024
            n += 1
    if not n:
        print("RATIO convert without Blender/through Blender: n/a (no file converted; target < 1)")
        return 1
    print(f"{n} files, .X -> RAM/RAA -> .X, best of {args.runs} each:")
    print(f"  without Blender: {tot_h:.3f} s = {n / tot_h:.1f} files/s, {size / tot_h:.2f} MB/s of .X input")
    print(f"  through Blender: {tot_b:.3f} s = {n / tot_b:.1f} files/s, {size / tot_b:.2f} MB/s of .X input")
    print(ratio_line("convert without Blender/through Blender", tot_h, tot_b, 1.0).replace("target <= 1", "target < 1"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
