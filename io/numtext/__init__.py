# SPDX-License-Identifier: GPL-3.0-or-later
"""Text of tables of numbers, one line per row, vectorised with numpy:
:func:`format_rows` is the one entry point.

Why by hand: the RAM writer's record sections (every vertex, normal, UV,
triangle and weight) are formatted here, 2.6 times as fast as the same rows
through ``%``-formatting (``plain.py``, the benchmarks' ``--numerics
plain``: ``repr`` per float, byte for byte the same text), with which the
RiTE export misses its target (``docs/benchmarks.md``, "Numerics": 1.60
against 0.71).

:func:`format_rows` gives the bytes of ``("%d %r ... %s\\n" * n) % values``
for columns of integers (``%d``), floats (``%r`` of float64: Python's
``repr``, the shortest decimal that reads back as the same double) and
strings picked from a small table (``%s``), a block of rows at a time. Fields
are separated by one blank; every row ends with ``\\n``.

Each field of a block is built as 64-bit words, one array per word position
(:mod:`.fields`; a float's digits from :mod:`.shortest`): its text
left-aligned, its separator, NUL padding. The block's words are laid out row
by row and the NULs deleted (``bytes.translate``); a NUL inside a table
string is carried through as a byte that no string of the table and no number
uses. Tables of fewer than ``_SMALL`` rows are formatted with ``%`` itself
(``plain.rows``).
"""
from __future__ import annotations

import os
from collections.abc import Iterator, Sequence

import numpy as np

from . import plain
from .fields import float_words, int_words, string_words
from .plain import columns_of

_BLOCK_ROWS = 16384                 # rows per block: a column's arrays stay in the caches
_SMALL = 512                        # below this many rows, Python's % is cheaper (fixed costs)
_NUMBER_BYTES = b"0123456789.-+einfa \n"     # what numbers and separators are written with


class _Strings:
    """A column of strings: row ``i`` is ``table[index[i]]`` (bytes)."""

    def __init__(self, table: Sequence[bytes], index):
        self.table = [bytes(s) for s in table]
        self.index = np.asarray(index, dtype=np.intp)

    def __len__(self) -> int:
        return len(self.index)


def format_rows(columns: Sequence, block_rows: int = _BLOCK_ROWS) -> Iterator[bytes]:
    """Yield the text of the rows of ``columns``, a block of rows at a time.

    Each column is an integer array (``uint64`` is written unsigned, others
    as int64), a float array (as float64), a ``range``, or a pair ``(table,
    index)`` of strings: row ``i`` is ``table[index[i]]`` (bytes); all have
    the same length.
    """
    columns, n = columns_of(columns)
    if n < _SMALL:
        if n:
            yield plain.rows(columns, 0, n)
        return
    columns = [_Strings(*c) if isinstance(c, tuple) else c for c in columns]
    mark = _placeholder(columns)
    if mark is not None:
        columns = [_Strings([s.replace(b"\0", mark) for s in c.table], c.index) if isinstance(c, _Strings) else c
                   for c in columns]
    for a in range(0, n, block_rows):
        b = min(n, a + block_rows)
        fields = []
        for j, c in enumerate(columns):
            end = 10 if j == len(columns) - 1 else 32
            if isinstance(c, _Strings):
                fields.append(string_words(c.table, c.index[a:b], end))
            elif isinstance(c, range):
                fields.append(int_words(np.arange(c[a], c[a] + (b - a) * c.step, c.step, dtype=np.int64), end))
            elif c.dtype.kind == "f":
                fields.append(float_words(np.ascontiguousarray(c[a:b]), end))
            else:
                fields.append(int_words(np.ascontiguousarray(c[a:b]), end))
        text = _join(fields, b - a)
        yield text if mark is None else text.replace(mark, b"\0")


def _placeholder(columns) -> bytes | None:
    """A byte to carry the NULs of table strings through, if they have any."""
    tables = [c.table for c in columns if isinstance(c, _Strings)]
    if not any(b"\0" in s for t in tables for s in t):
        return None
    used = set(_NUMBER_BYTES).union(*(b"".join(t) for t in tables))
    free = [x for x in range(255, 0, -1) if x not in used]
    if not free:
        raise ValueError("the strings use every byte value: none is left to stand for NUL")
    return bytes([free[0]])


def _join(fields: list, m: int) -> bytes:
    """The text of a block: each row's words in column order, NULs deleted."""
    rows = np.empty((m, sum(len(f) for f in fields)), dtype=np.uint64)
    j = 0
    for words in fields:
        for w in words:
            rows[:, j] = w
            j += 1
    return rows.tobytes().translate(None, b"\0")


if os.environ.get("LSIO_PLAIN_NUMERICS"):      # bench/run_all.py --numerics plain: Python's % formatting
    from .plain import format_rows  # noqa: F401, F811
