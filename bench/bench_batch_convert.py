# SPDX-License-Identifier: GPL-3.0-or-later
"""``convert DIR -o OUTDIR --report r.jsonl`` at archive scale: one
process, ``--jobs 2`` and ``--scheduler local:2`` (Dask) on the same tree
(not a test).

    python3.11 tools/run.py py bench/bench_batch_convert.py [--files N] [--runs N] [--to EXT] [--quick]

The tree: the real .X files of the test corpus (tests/data/x/real, files of
games and SDKs) copied into subfolders until it holds ``--files`` models
(default 2,000), converted to ``--to`` (default .glb when that format is
registered, else .x) with a report by the command itself, ``python -m
legacy_skin_io convert``, timed from its start to its exit (the worker
processes and the Dask cluster started inside the time, as a user waits
for them), with the CPU seconds of all its processes (what a busy shared
machine moves less than the wall time). ``--runs`` rounds (each mode once
per round, in turn, so that a busy moment hits all), medians compared, and
round by round. Prints files/s of each and, last:

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
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ROOT, X_CORPUS, ratio_line, spread  # noqa: E402

#: (label, the command's flags)
MODES = (("1 process", []), ("--jobs 2", ["--jobs", "2"]), ("--scheduler local:2", ["--scheduler", "local:2"]))


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


def adopt_orphans() -> bool:
    """Make this process the one that reaps the command's orphans (Linux's
    child subreaper): the processes a command leaves to end after it (the
    Dask workers' fork server) then count in its CPU time."""
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) == 0     # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        return False


def reap_orphans(limit: float = 30.0) -> None:
    """Wait (``limit`` seconds at most) for every process left to end."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            time.sleep(0.05)


def once(src: Path, out: Path, suffix: str, how: list[str]) -> tuple[float, float, int, dict]:
    """The command, as a user runs it: (seconds, CPU seconds of all its
    processes, models, statuses counted in the report)."""
    shutil.rmtree(out, ignore_errors=True)
    report = out.parent / (out.name + ".jsonl")
    report.unlink(missing_ok=True)
    cmd = [sys.executable, "-m", "legacy_skin_io", "convert", str(src), "-o", str(out), "--to", suffix,
           "--accept-loss", "--report", str(report), *how]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(cmd, cwd=ROOT, env=dict(os.environ, LSIO_PROGRESS="0"), stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
    seconds = time.perf_counter() - t0
    reap_orphans()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)    # every process of the command, reaped by now
    used = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(how) or '1 process'}: exit {done.returncode}: {done.stderr[-2000:]}")
    counts: dict[str, int] = {}
    for line in report.read_text(encoding="utf-8").splitlines():
        status = json.loads(line)["status"]
        counts[status] = counts.get(status, 0) + 1
    return seconds, used, sum(counts.values()), counts


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
    whole = adopt_orphans()
    suffix = "." + (args.to or default_suffix()).lower().lstrip(".")
    dask = importlib.util.find_spec("distributed") is not None
    modes = [m for m in MODES if "--scheduler" not in m[1] or dask]
    times: dict[str, list[float]] = {label: [] for label, _ in modes}
    cpus: dict[str, list[float]] = {label: [] for label, _ in modes}
    with tempfile.TemporaryDirectory(prefix="bench_batch_") as d:
        src = tree(Path(d), args.files)
        mb = sum(p.stat().st_size for p in src.rglob("*") if p.is_file()) / 2**20
        warm = tree(Path(d) / "warm", 1)
        for _, how in modes:                             # the file cache, compiled modules
            once(warm, Path(d) / "warm_out", suffix, how)
        counts: dict[str, dict] = {}
        for _ in range(args.runs):                       # in turn, so that a busy moment hits all
            for label, how in modes:
                t, c, n, counts[label] = once(src, Path(d) / "out", suffix, how)
                times[label].append(t)
                cpus[label].append(c)
                print(f"  {label}: {t:.2f} s, {c:.1f} CPU s", flush=True)
    if len({json.dumps(c, sort_keys=True) for c in counts.values()}) != 1 or "failed" in counts["1 process"]:
        print(f"the modes' reports differ or hold failures: {counts}")
        return 1
    med = {label: statistics.median(ts) for label, ts in times.items()}
    print(f"{n} models ({mb:.1f} MB of input, {len(real_files())} real .X files copied) -> {suffix}, "
          f"{args.runs} round(s); report: {counts['1 process']}")
    for label, ts in times.items():
        print(f"  {label + ':':<22} {spread(ts, '{:.2f}')} s = {n / med[label]:.1f} files/s; "
              f"CPU {statistics.median(cpus[label]):.1f} s "
              f"({'all its processes' if whole else 'without the processes it leaves to end after it'})")
    pairs = [("--jobs 2", "1 process")] + ([("--scheduler local:2", "--jobs 2")] if dask else [])
    for a, b in pairs:          # within a round: what a busy moment of a shared machine moves less
        print(f"  {a} / {b}, round by round: {spread([x / y for x, y in zip(times[a], times[b])])}; "
              f"CPU: {spread([x / y for x, y in zip(cpus[a], cpus[b])])}")
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
