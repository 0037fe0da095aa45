# SPDX-License-Identifier: GPL-3.0-or-later
"""docs/testing.md's table of test files is the suite: every
tests/test_*.py file has a row, every row names a file that is there, once,
and each row says what the file checks and how it runs."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "testing.md"
#: a row of a table whose first cell is a test file: | `test_x.py` | what it checks | how it runs |
ROW = re.compile(r"^\|\s*`(?:tests/)?(test_[A-Za-z0-9_]+\.py)`\s*\|(.*)\|\s*$")
RUNS = {"numpy", "Blender", "command line", "assimp", "Irrlicht", "Node", "Panda3D"}


def _rows() -> list[tuple[str, list[str]]]:
    rows = []
    for line in DOC.read_text(encoding="utf-8").splitlines():
        m = ROW.match(line)
        if m:
            rows.append((m.group(1), [c.strip() for c in m.group(2).split("|")]))
    return rows


def test_every_test_file_has_one_row_and_every_row_a_file():
    listed = [name for name, _cells in _rows()]
    files = sorted(p.name for p in (ROOT / "tests").glob("test_*.py"))
    missing = sorted(set(files) - set(listed))
    stale = sorted(set(listed) - set(files))
    twice = sorted({n for n in listed if listed.count(n) > 1})
    assert not missing, f"tests/ files without a row in docs/testing.md: {missing}"
    assert not stale, f"docs/testing.md rows naming no file in tests/: {stale}"
    assert not twice, f"docs/testing.md lists these files more than once: {twice}"


def test_each_row_says_what_it_checks_and_how_it_runs():
    for name, cells in _rows():
        assert len(cells) == 2 and len(cells[0]) >= 20, (name, cells)
        runs = {r.strip() for r in cells[1].split(",")}
        assert runs and runs <= RUNS, (name, cells[1])
        if name.endswith("_blender.py"):       # the suffix says the file drives Blender
            assert "Blender" in runs, (name, cells[1])
