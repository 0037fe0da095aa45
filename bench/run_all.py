#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Run every benchmark, one subprocess each, in sequence (not a test).

    python3.11 tools/run.py bench [--quick] [NAME...]

NAME selects benchmarks by part of their file name (``skinning``,
``rite_blender``, ...). Each benchmark's output is shown as it runs; its
``RATIO ...`` lines (and ``INFO ...`` lines: ratios without a target) are
collected and printed together at the end (a benchmark that fails or prints
none is listed as such). ``--quick`` runs every benchmark at a smaller size
(for a smoke test: the ratios of small sizes are not the ones the targets are
about). ``--numerics plain`` runs them with the plain numerics (numpy's own
text parser, Python's ``%``-formatting: ``LSIO_PLAIN_NUMERICS=1``),
``--numerics both`` each benchmark twice in a row, the hand-written way then
the plain way, the summary lines marked ``[hand]`` and ``[plain]``. Exit
status 1 when a benchmark failed.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

#: (script, arguments of a full run, arguments of a quick run), fastest first
BENCHMARKS = (
    ("bench_xfile_parse.py", [], ["--quick"]),
    ("bench_skinning.py", [], ["--quick"]),
    ("bench_rite_io.py", [], ["--vertices", "200000", "--no-baseline"]),
    ("bench_xfile_import.py", [], ["--quick"]),
    ("bench_timeline.py", [], ["--quick"]),
    ("bench_convert.py", [], ["--quick"]),
    ("bench_batch_convert.py", [], ["--quick"]),
    ("bench_rite_blender.py", [], ["--quick"]),
    ("bench_import_checks.py", [], ["--quick"]),
    ("bench_wide_skeleton.py", [], ["--quick"]),
)


def run_one(script: str, args: list[str], plain: bool = False) -> tuple[int, list[str], float]:
    cmd = [sys.executable, str(HERE / script), *args]
    print(f"\n=== {script} {' '.join(args)}{' (plain numerics)' if plain else ''}".rstrip(), flush=True)
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    env.pop("LSIO_PLAIN_NUMERICS", None)
    if plain:
        env["LSIO_PLAIN_NUMERICS"] = "1"
    t0 = time.perf_counter()
    ratios = []
    with subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, errors="replace", bufsize=1) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            sys.stdout.write(line)
            if line.startswith("RATIO ") or (line.startswith("INFO ") and line.rstrip().endswith("informational)")):
                ratios.append(line.rstrip("\n"))
        code = proc.wait()
    return code, ratios, time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="smaller sizes, fewer runs (a smoke test)")
    ap.add_argument("--numerics", choices=("hand", "plain", "both"), default="hand",
                    help="the hand-written numerics, the plain ones (numpy's parser, %%-formatting) or both in turn")
    ap.add_argument("names", nargs="*", help="run only the benchmarks whose file name contains one of these")
    args = ap.parse_args(argv)
    chosen = [b for b in BENCHMARKS if not args.names or any(n in b[0] for n in args.names)]
    if not chosen:
        print(f"no benchmark matches {args.names}; known: {', '.join(b[0] for b in BENCHMARKS)}", file=sys.stderr)
        return 2
    summary, failed = [], 0
    t_all = time.perf_counter()
    ways = {"hand": [False], "plain": [True], "both": [False, True]}[args.numerics]
    for script, full, quick in chosen:
        for plain in ways:
            code, ratios, dt = run_one(script, quick if args.quick else full, plain)
            print(f"=== {script}: exit {code}, {dt:.0f} s", flush=True)
            if code != 0:
                failed += 1
            if not ratios:
                ratios = [f"RATIO {script}: FAILED (exit {code}, no RATIO line)"]
            elif code != 0:
                ratios.append(f"RATIO {script}: exit {code} (the lines above may be incomplete)")
            if len(ways) > 1:
                mark = "[plain]" if plain else "[hand]"
                ratios = [line.replace(": ", f" {mark}: ", 1) for line in ratios]
            summary += ratios
    print(f"\n=== summary ({'quick' if args.quick else 'full'} sizes, {time.perf_counter() - t_all:.0f} s; "
          f"ours/baseline, lower is better)")
    for line in summary:
        print(line)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
