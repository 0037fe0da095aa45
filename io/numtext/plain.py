# SPDX-License-Identifier: GPL-3.0-or-later
"""Text of tables of numbers, one line per row, with Python's ``%``-formatting:
:func:`format_rows`.

:func:`format_rows` gives the bytes of ``(b"%d %r ... %s\\n" * n) % values``
for columns of integers (``%d``), floats (``%r`` of float64: Python's
``repr``, the shortest decimal that reads back as the same double) and
strings picked from a small table (``%s``), a block of rows at a time.
Fields are separated by one blank; every row ends with ``\\n``.
"""
from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence

import numpy as np

_BLOCK_ROWS = 16384                 # rows per block: the text is yielded as it is made


def format_rows(columns: Sequence, block_rows: int = _BLOCK_ROWS) -> Iterator[bytes]:
    """``numtext.format_rows``'s text, block by block, through ``%`` alone."""
    columns, n = columns_of(columns)
    for a in range(0, n, block_rows):
        yield rows(columns, a, min(n, a + block_rows))


def rows(columns: list, a: int, b: int) -> bytes:
    """Rows ``a`` to ``b`` (exclusive) of ``columns`` (as :func:`columns_of`
    gives them) through ``%``."""
    line = b" ".join(b"%s" if isinstance(c, tuple) else b"%r" if isinstance(c, np.ndarray) and c.dtype.kind == "f"
                     else b"%d" for c in columns) + b"\n"
    values = [_values(c, a, b) for c in columns]
    return (line * (b - a)) % tuple(itertools.chain.from_iterable(zip(*values)))


def columns_of(columns: Sequence) -> tuple[list, int]:
    """The columns as both writers take them, and their length (the same for all).

    Each column is an integer array (``uint64`` is written unsigned, others
    as int64), a float array (as float64), a ``range``, or a pair ``(table,
    index)`` of strings: row ``i`` is ``table[index[i]]`` (bytes). Out: a
    ``range``, an int64, uint64 or float64 array, or ``(table, index)`` as a
    list of bytes and an intp array.
    """
    out = [_column(c) for c in columns]
    lengths = [len(c[1]) if isinstance(c, tuple) else len(c) for c in out]
    n = lengths[0] if lengths else 0
    if any(k != n for k in lengths):
        raise ValueError("columns differ in length")
    return out, n


def _column(c):
    if isinstance(c, tuple):
        table, index = c
        return [bytes(s) for s in table], np.asarray(index, dtype=np.intp)
    if isinstance(c, range):
        return c
    a = np.asarray(c)
    if a.ndim != 1:
        raise ValueError(f"a column must be one-dimensional, not {a.shape}")
    if a.dtype.kind == "f":
        return a.astype(np.float64, copy=False)
    if a.dtype == np.uint64:
        return a
    if a.dtype.kind in "iub" or (a.dtype == object and not len(a)):
        return a.astype(np.int64, copy=False)
    raise TypeError(f"cannot format a column of {a.dtype}")


def _values(c, a: int, b: int):
    if isinstance(c, tuple):
        table, index = c
        return [table[i] for i in index[a:b].tolist()]
    return c[a:b] if isinstance(c, range) else c[a:b].tolist()
