# SPDX-License-Identifier: GPL-3.0-or-later
"""File ids -> array indices: uniqueness checks and vectorised reference lookup."""
from __future__ import annotations

import numpy as np

from .lexer import LineBuffer


class IdTable:
    """The ids of one section (in file order) and their ascending order.

    ``index_of(ids)`` maps ids to positions in the *sorted* order, which is
    the order of every output array.
    """

    def __init__(self, src: LineBuffer, ids: np.ndarray, line_of, what: str):
        self.ids = ids
        if _is_range(ids):
            self.order = None  # already 0..n-1 in order
            self.sorted = None
            return
        order = np.argsort(ids, kind="stable")
        sorted_ids = ids[order]
        dup = np.flatnonzero(sorted_ids[1:] == sorted_ids[:-1])
        if dup.size:
            later = order[dup + 1]   # stable sort: the later occurrence in file order
            k = int(np.argmin(later))
            r, first = int(later[k]), int(order[dup[k]])
            raise src.error(line_of(r), f"duplicate {what} id {int(ids[r])} "
                                        f"(first defined on line {line_of(first)})")
        self.order = order
        self.sorted = sorted_ids

    def __len__(self) -> int:
        return len(self.ids)

    def arrange(self, values: np.ndarray) -> np.ndarray:
        """``values`` (file order) in ascending id order."""
        return values if self.order is None else values[self.order]

    def lookup(self, refs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(indices into the sorted order, validity mask or None when all are valid)."""
        n = len(self.ids)
        if self.order is None:
            if refs.size == 0 or (refs.min() >= 0 and refs.max() < n):
                return refs, None
            ok = (refs >= 0) & (refs < n)
            return np.where(ok, refs, 0), ok
        pos = np.searchsorted(self.sorted, refs)
        pos = np.minimum(pos, n - 1)
        ok = self.sorted[pos] == refs
        return pos, (None if ok.all() else ok)


_STEP = 1 << 16
_RANGE = np.arange(_STEP, dtype=np.int64)


def _is_range(ids: np.ndarray) -> bool:
    """Are ``ids`` exactly 0, 1, ..., n-1? (Compared in slices: no array of n temporaries.)"""
    n = len(ids)
    if n == 0:
        return True
    if ids[0] != 0 or ids[-1] != n - 1:
        return False
    for a in range(0, n, _STEP):
        part = ids[a:a + _STEP]
        if not np.array_equal(part, _RANGE[:len(part)] + a):
            return False
    return True


def first_bad_row(ok: np.ndarray) -> int | None:
    """Index of the first row (axis 0) where ``ok`` is False anywhere, or None."""
    if ok.ndim > 1:
        ok = ok.all(axis=tuple(range(1, ok.ndim)))
    bad = np.flatnonzero(~ok)
    return int(bad[0]) if bad.size else None
