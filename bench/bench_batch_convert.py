# SPDX-License-Identifier: GPL-3.0-or-later
"""``convert DIR -o OUTDIR --to .ram --jobs 2`` against the same folder in
one process (not a test).

    python3.11 tools/run.py py bench/bench_batch_convert.py [--copies N] [--runs N] [--jobs N] [--quick]

The folder: every readable corpus .X file (tests/data/x, the two broken
ones left out) and the RiTE sample (a model with two animations), in
``--copies`` subfolders (default 3), converted to RiTE (.X -> RAM/RAA
measures what RAA cannot carry by reading the written files back). Both
runs go through ``io.batch.convert_all``, the function the command runs,
with the same jobs, and write every file; ``--runs`` pairs (one process,
then --jobs 2, in turn, so that a busy moment of a shared machine hits
both), the medians compared. Prints files/s of each and, last:

    RATIO batch convert --jobs 2 / 1 process: ...   (target <= 0.75; 0.5 is two cores fully used)
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ROOT, ratio_line, spread, x_corpus  # noqa: E402


def folder(root: Path, copies: int) -> Path:
    src = root / "assets"
    for k in range(copies):
        here = src / f"copy{k}"
        (here / "rite").mkdir(parents=True)
        for p in x_corpus():
            shutil.copy(p, here / f"{p.parent.name}_{p.name}")
        for name in ("humanoid.ram", "walk.raa", "wave.raa"):
            shutil.copy(ROOT / "samples" / "rite" / name, here / "rite" / name)
    return src


def once(src: Path, out: Path, workers: int) -> tuple[float, int, int]:
    from legacy_skin_io.io import batch

    shutil.rmtree(out, ignore_errors=True)
    t0 = time.perf_counter()
    jobs, _ = batch.find_jobs(src, out, ".ram")
    outcomes = batch.convert_all(jobs, workers)
    return time.perf_counter() - t0, len(jobs), sum(bool(o.error) for o in outcomes)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--copies", type=int, default=3)
    ap.add_argument("--runs", type=int, default=3, help="pairs of runs (default 3)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--quick", action="store_true", help="1 copy, 1 run")
    args = ap.parse_args()
    if args.quick:
        args.copies, args.runs = 1, 1
    with tempfile.TemporaryDirectory(prefix="bench_batch_") as d:
        src = folder(Path(d), args.copies)
        mb = sum(p.stat().st_size for p in src.rglob("*") if p.is_file()) / 2**20
        once(src, Path(d) / "warm", 1)               # warm-up: imports, file cache
        one, many = [], []
        for _ in range(args.runs):                   # alternated, so a busy moment hits both
            t, n, failed = once(src, Path(d) / "one", 1)
            one.append(t)
            t, n2, failed2 = once(src, Path(d) / "many", args.jobs)
            many.append(t)
            if failed or failed2 or n != n2:
                print(f"conversions failed: {failed} in one process, {failed2} with --jobs {args.jobs}")
                return 1
    one_s, many_s = statistics.median(one), statistics.median(many)
    print(f"{n} models ({mb:.1f} MB of input) -> RAM/RAA, {args.runs} pairs:")
    print(f"  1 process:  {spread(one, '{:.2f}')} s = {n / one_s:.1f} files/s")
    print(f"  --jobs {args.jobs}:   {spread(many, '{:.2f}')} s = {n / many_s:.1f} files/s")
    print(f"  pair by pair: {spread([m / o for m, o in zip(many, one)])}")
    print(ratio_line(f"batch convert --jobs {args.jobs} / 1 process (medians)", many_s, one_s, 0.75))
    return 0


if __name__ == "__main__":
    sys.exit(main())
