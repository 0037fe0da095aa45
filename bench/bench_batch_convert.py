# SPDX-License-Identifier: GPL-3.0-or-later
"""``convert DIR -o OUTDIR --report r.jsonl`` at archive scale: one
process, ``--jobs 2`` and ``--scheduler local:2`` (Dask) on the same tree
(not a test).

    python3.11 tools/run.py py bench/bench_batch_convert.py [--files N] [--runs N] [--to EXT] [--quick]

The tree: the real .X files of the test corpus (tests/data/x/real, files of
games and SDKs) copied into subfolders until it holds ``--files`` models
(default 2,000), converted to ``--to`` (default .glb when that format is
registered, else .x) with a report, through ``io.batch.convert_all``, the
function the command runs, timed from the jobs found to the last report
line (worker processes and the Dask cluster started inside the time, as a
user waits for them). ``--runs`` rounds (each mode once per round, in
turn, so that a busy moment of a shared machine hits all), medians
compared. Prints files/s of each and, last:

    RATIO batch convert --jobs 2 / 1 process: ...              (target <= 0.75; 0.5 is two cores fully used)
    RATIO batch convert --scheduler local:2 / --jobs 2: ...    (target <= 1.1)

Without Dask installed (``pip install -r requirements-cluster.txt``) the
second says it did not run.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import X_CORPUS, ratio_line, spread  # noqa: E402

#: (label, worker processes, Dask scheduler)
MODES = (("1 process", 1, None), ("--jobs 2", 2, None), ("--scheduler local:2", 1, "local:2"))


def real_files() -> list[Path]:
    return sorted(p for p in (X_CORPUS / "real").rglob("*") if p.suffix.lower() == ".x")


def tree(root: Path, files: int) -> Path:
    """``files`` copies (at least) of the real .X files, one subfolder per round of them."""
    src = root / "archive"
    real = real_files()
    for k in range(math.ceil(files / len(real))):
        here = src / f"copy{k:03d}"
        here.mkdir(parents=True)
        for p in real:
            shutil.copy(p, here / f"{p.parent.name}_{p.name}")
    return src


def once(src: Path, out: Path, suffix: str, workers: int, scheduler: str | None) -> tuple[float, int, dict]:
    """(seconds, models, statuses counted in the report)."""
    from legacy_skin_io.io import batch
    from legacy_skin_io.io.batch_report import Report

    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    report = out / "report.jsonl"
    t0 = time.perf_counter()
    jobs, _ = batch.find_jobs(src, out, suffix)
    with Report(report) as r:
        batch.convert_all(jobs, workers, scheduler=scheduler, report=r)
    seconds = time.perf_counter() - t0
    counts: dict[str, int] = {}
    for line in report.read_text(encoding="utf-8").splitlines():
        status = json.loads(line)["status"]
        counts[status] = counts.get(status, 0) + 1
    return seconds, len(jobs), counts


def default_suffix() -> str:
    from legacy_skin_io.io.formats import FORMATS

    return ".glb" if any(".glb" in f.model_suffixes for f in FORMATS) else ".x"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", type=int, default=2000, help="models in the tree (at least; default 2000)")
    ap.add_argument("--runs", type=int, default=3, help="rounds of the three modes (default 3)")
    ap.add_argument("--to", default=None, help="the format to write (default .glb if registered, else .x)")
    ap.add_argument("--quick", action="store_true", help="160 files, 1 round")
    args = ap.parse_args()
    if args.quick:
        args.files, args.runs = 160, 1
    os.environ["LSIO_PROGRESS"] = "0"
    suffix = "." + (args.to or default_suffix()).lower().lstrip(".")
    dask = importlib.util.find_spec("distributed") is not None
    modes = [m for m in MODES if m[2] is None or dask]
    times: dict[str, list[float]] = {label: [] for label, *_ in modes}
    with tempfile.TemporaryDirectory(prefix="bench_batch_") as d:
        src = tree(Path(d), args.files)
        mb = sum(p.stat().st_size for p in src.rglob("*") if p.is_file()) / 2**20
        warm = tree(Path(d) / "warm", 1)
        for _, workers, scheduler in modes:              # imports, the file cache
            once(warm, Path(d) / "warm_out", suffix, workers, scheduler)
        counts: dict[str, dict] = {}
        for _ in range(args.runs):                       # in turn, so that a busy moment hits all
            for label, workers, scheduler in modes:
                t, n, counts[label] = once(src, Path(d) / "out", suffix, workers, scheduler)
                times[label].append(t)
                print(f"  {label}: {t:.2f} s", flush=True)
    if len({json.dumps(c, sort_keys=True) for c in counts.values()}) != 1 or "failed" in counts["1 process"]:
        print(f"the modes' reports differ or hold failures: {counts}")
        return 1
    med = {label: statistics.median(ts) for label, ts in times.items()}
    print(f"{n} models ({mb:.1f} MB of input, {len(real_files())} real .X files copied) -> {suffix}, "
          f"{args.runs} round(s); report: {counts['1 process']}")
    for label, ts in times.items():
        print(f"  {label + ':':<22} {spread(ts, '{:.2f}')} s = {n / med[label]:.1f} files/s")
    pairs = [("--jobs 2", "1 process")] + ([("--scheduler local:2", "--jobs 2")] if dask else [])
    for a, b in pairs:          # within a round: what a busy moment of a shared machine moves less
        print(f"  {a} / {b}, round by round: {spread([x / y for x, y in zip(times[a], times[b])])}")
    print(ratio_line("batch convert --jobs 2 / 1 process (medians)", med["--jobs 2"], med["1 process"], 0.75))
    if dask:
        print(ratio_line("batch convert --scheduler local:2 / --jobs 2 (medians)", med["--scheduler local:2"],
                         med["--jobs 2"], 1.1))
    else:
        print("RATIO batch convert --scheduler local:2 / --jobs 2: not run (Dask is not installed here: "
              "pip install -r requirements-cluster.txt; target <= 1.1)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
