# SPDX-License-Identifier: GPL-3.0-or-later
"""``tools/run.py bench`` runs every benchmark: each ``bench/bench_*.py`` is
in ``bench/run_all.BENCHMARKS`` (``bench_import_checks.py`` was left out) and
named in the documents (README.md, docs/: the command line's developer
commands, the benchmarks page)."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _listed() -> set[str]:
    tree = ast.parse((ROOT / "bench" / "run_all.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "BENCHMARKS":
            return {elt.elts[0].value for elt in node.value.elts}
    raise AssertionError("no BENCHMARKS in bench/run_all.py")


def test_every_benchmark_runs_in_run_all_and_is_in_the_docs():
    scripts = {p.name for p in (ROOT / "bench").glob("bench_*.py")}
    assert scripts, "no benchmarks found"
    assert scripts == _listed()
    docs = "\n".join(p.read_text(encoding="utf-8")
                     for p in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))])
    assert not [s for s in scripts if f"bench/{s}" not in docs]
