# SPDX-License-Identifier: GPL-3.0-or-later
"""Array helpers shared by the format writers."""
from __future__ import annotations

import numpy as np


def dedupe_rows(rows: np.ndarray, groups: np.ndarray | None = None):
    """Exact duplicate rows merged: (unique rows, index of each row's unique).

    Sorts a 64-bit hash of the rows' bits (one 1-D argsort instead of
    np.unique's row-wise sort); equal rows end up adjacent and are merged,
    rows that merely share a hash are never merged (when two distinct rows
    share one, the rows are sorted by value instead). (-0.0 counts as 0.0.)

    ``groups`` (optional, one non-negative int per row) names rows that are
    likely equal, such as the corners of one vertex, whose normal or UV is
    usually shared: a row equal to its group's last row is merged with it
    first, so only one row per group and the rows that differ from their
    group are hashed and sorted. The unique rows are the same either way."""
    r = np.ascontiguousarray(rows, dtype=np.float64) + 0.0   # -0.0 -> 0.0
    if len(r) == 0:
        return r.reshape(0, r.shape[1] if r.ndim == 2 else 0), np.zeros(0, dtype=np.int64)
    r = r.reshape(len(r), -1)
    if groups is None:
        return _dedupe(r)
    g = np.asarray(groups, dtype=np.int64).reshape(-1)
    rep = np.empty(int(g.max()) + 1, dtype=np.int64)
    rep[g] = np.arange(len(r))                 # the last row of each group stands for it
    own = rep[g]
    alone = np.flatnonzero(_differ(r, r[own]))
    stand = np.flatnonzero(own == np.arange(len(r)))
    cand = np.concatenate((stand, alone))
    uniq, inv = _dedupe(r[cand])
    where = np.empty(len(r), dtype=np.int64)
    where[cand] = np.arange(len(cand))
    inverse = inv[where[own]]
    inverse[alone] = inv[len(stand):]
    return uniq, inverse


def _dedupe(r: np.ndarray):
    """(unique rows, inverse) of the (n, k) float64 rows ``r`` (-0.0 already 0.0)."""
    bits = r.view(np.uint64)
    h = np.zeros(len(r), dtype=np.uint64)
    with np.errstate(over="ignore"):
        for k in range(bits.shape[1]):
            h ^= bits[:, k]
            h *= _MUL
            h ^= h >> _SHIFT                     # the multiply only carries upwards: fold back
    order = np.argsort(h, kind="stable")
    rs = r[order]
    differ = _differ(rs[1:], rs[:-1])
    hs = h[order]
    if (differ & (hs[1:] == hs[:-1])).any():     # a collision: rows sorted by value instead
        order = np.lexsort(r.T[::-1])
        rs = r[order]
        differ = _differ(rs[1:], rs[:-1])
    first = np.ones(len(r), dtype=bool)
    first[1:] = differ
    inverse = np.empty(len(r), dtype=np.int64)
    inverse[order] = np.cumsum(first) - 1
    return rs[first], inverse


def _differ(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Rows of ``a`` and ``b`` (n, k) that differ (column by column: a reduction
    along a short axis is several times slower)."""
    out = a[:, 0] != b[:, 0]
    for k in range(1, a.shape[1]):
        out |= a[:, k] != b[:, k]
    return out


_MUL = np.uint64(0x9E3779B97F4A7C15)
_SHIFT = np.uint64(29)
