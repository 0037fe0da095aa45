# SPDX-License-Identifier: GPL-3.0-or-later
"""Benchmark: parse every .X test file with our reader and with assimp.

    python3.11 tools/run.py py bench/bench_xfile_parse.py [--runs N] [--no-variants]

For each file under ``tests/data/x`` (plus, unless ``--no-variants``, our own
binary / compressed rewrites of ``tiny_4anim.x`` written to a temporary
directory) prints the best of N times (the two alternating) of ``read_xfile`` and of
``assimp info FILE`` run as a subprocess (wall clock, which includes process
start-up and assimp's validation), plus the import time assimp reports itself
("import took approx ..."), and the ratios ours / assimp. The assimp columns
are left empty when the ``assimp`` command is not found (it comes with the
pinned environment: cmeel-assimp, run directly, without its Python launcher:
``_common.assimp_command``). Last line, for tiny_4anim.x (the
largest animated text file) against the whole ``assimp info`` process:

    RATIO xfile parse tiny_4anim.x/assimp: ...   (target <= 1.0)
"""
from __future__ import annotations

import argparse
import cProfile
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ASSIMP_MISSING, assimp_command, print_profile, ratio_line  # noqa: E402

from legacy_skin_io.io.errors import FormatError  # noqa: E402
from legacy_skin_io.io.xfile import read_xfile, write_xfile  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "x"
_TOOK = re.compile(r"import took approx\.?\s*([0-9.eE+-]+)\s*seconds")


def time_ours(path: Path, runs: int) -> tuple[float | None, str]:
    best = None
    status = "ok"
    for _ in range(runs):
        start = time.perf_counter()
        try:
            read_xfile(path)
        except FormatError:
            status = "FormatError"
        elapsed = time.perf_counter() - start
        best = elapsed if best is None else min(best, elapsed)
    return best, status


def time_assimp(assimp: tuple[str, dict[str, str]], path: Path, runs: int) -> tuple[float | None, float | None, str]:
    exe, env = assimp
    best_wall = best_import = None
    status = "ok"
    for _ in range(runs):
        start = time.perf_counter()
        try:
            proc = subprocess.run([exe, "info", str(path)], capture_output=True, text=True, env=env,
                                  errors="replace", timeout=120)
        except subprocess.TimeoutExpired:
            return None, None, "timeout"
        wall = time.perf_counter() - start
        if proc.returncode != 0 or "Nodes:" not in proc.stdout:
            status = "fails"
        best_wall = wall if best_wall is None else min(best_wall, wall)
        m = _TOOK.search(proc.stdout)
        if m:
            took = float(m.group(1))
            best_import = took if best_import is None else min(best_import, took)
    return best_wall, best_import, status


def _ms(x: float | None) -> str:
    return "" if x is None else f"{x * 1000:9.1f}"


def _ratio(a: float | None, b: float | None) -> str:
    return "" if a is None or not b else f"{a / b:7.2f}"


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--no-variants", action="store_true")
    ap.add_argument("--profile", action="store_true", help="cProfile our parse of tiny_4anim.x")
    ap.add_argument("--quick", action="store_true", help="3 runs, no rewritten variants")
    args = ap.parse_args(argv)
    if args.quick:
        args.runs, args.no_variants = min(args.runs, 3), True
    files = sorted(p for p in DATA.rglob("*")
                   if p.is_file() and p.suffix.lower() not in (".txt", ".md"))
    assimp = assimp_command()
    with tempfile.TemporaryDirectory() as tmp:
        if not args.no_variants:
            tiny = read_xfile(DATA / "directx-sdk" / "tiny_4anim.x")
            for storage in ("binary", "text_compressed", "binary_compressed"):
                out = Path(tmp) / f"ours-{storage}" / "tiny_4anim.x"
                out.parent.mkdir()
                write_xfile(tiny, out, storage=storage)
                files.append(out)
        head = (f"{'file':42s} {'KB':>6s} {'ours ms':>9s} {'assimp ms':>9s} {'ratio':>7s} "
                f"{'ai-imp ms':>9s} {'ratio':>7s}  status (ours / assimp)")
        print(head)
        print("-" * len(head))
        summary = None
        for path in files:
            rel = f"{path.parent.name}/{path.name}"
            ours = wall = imp = None
            status, ai_status = "ok", "not found" if not assimp else "ok"
            for _ in range(args.runs):      # alternate, so that both see the same load
                t, st = time_ours(path, 1)
                ours = t if ours is None else min(ours, t)
                status = st if st != "ok" else status
                if assimp and ai_status != "timeout":
                    w, i, st = time_assimp(assimp, path, 1)
                    wall = w if wall is None or (w is not None and w < wall) else wall
                    imp = i if imp is None or (i is not None and i < imp) else imp
                    ai_status = st if st != "ok" else ai_status
            print(f"{rel:42s} {path.stat().st_size / 1024:6.0f} {_ms(ours)} {_ms(wall):>9s} "
                  f"{_ratio(ours, wall):>7s} {_ms(imp):>9s} {_ratio(ours, imp):>7s}  "
                  f"{status} / {ai_status}")
            if rel == "directx-sdk/tiny_4anim.x":
                summary = (ours, wall)
    if not assimp:
        print(f"\n{ASSIMP_MISSING} (no comparison columns)")
    print("\nratio = ours / assimp (below 1: we are faster). 'assimp ms' is the whole "
          "'assimp info' process; 'ai-imp' the import time assimp reports.")
    tiny = DATA / "directx-sdk" / "tiny_4anim.x"
    if args.profile and tiny.exists():
        pr = cProfile.Profile()
        pr.runcall(read_xfile, tiny)
        print("cProfile, read_xfile(tiny_4anim.x) (tottime):")
        print_profile(pr, 15)
    if summary is None or summary[1] is None:
        print("RATIO xfile parse tiny_4anim.x/assimp: n/a (assimp not found or file missing; target <= 1)")
    else:
        print(f"(best of {args.runs} runs each side)")
        print(ratio_line("xfile parse tiny_4anim.x/assimp", summary[0], summary[1], 1.0))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
