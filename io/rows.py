# SPDX-License-Identifier: GPL-3.0-or-later
"""Array helpers shared by the format writers."""
from __future__ import annotations

import numpy as np


def dedupe_rows(rows: np.ndarray):
    """Exact duplicate rows merged: (unique rows, index of each row's unique).

    Sorts a 64-bit hash of the rows' bits (one 1-D argsort instead of
    np.unique's row-wise sort); equal rows end up adjacent and are merged,
    rows that merely share a hash are never merged. (-0.0 counts as 0.0.)"""
    r = np.ascontiguousarray(rows, dtype=np.float64) + 0.0   # -0.0 -> 0.0
    if len(r) == 0:
        return r.reshape(0, r.shape[1] if r.ndim == 2 else 0), np.zeros(0, dtype=np.int64)
    bits = r.view(np.uint64).reshape(len(r), -1)
    h = np.zeros(len(r), dtype=np.uint64)
    with np.errstate(over="ignore"):
        for k in range(bits.shape[1]):
            h = (h ^ bits[:, k]) * np.uint64(0x9E3779B97F4A7C15)
    order = np.argsort(h, kind="stable")
    rs = r[order]
    first = np.ones(len(r), dtype=bool)
    first[1:] = np.any(rs[1:] != rs[:-1], axis=1)
    inverse = np.empty(len(r), dtype=np.int64)
    inverse[order] = np.cumsum(first) - 1
    return rs[first], inverse
