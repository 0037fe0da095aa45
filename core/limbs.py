# SPDX-License-Identifier: GPL-3.0-or-later
"""Bone lengths along the limbs and which bones touch (no bpy).

A bone that points at one child ends on it: its length is the distance to
that child's head, which then sits on the bone's tail (Blender can connect
them). A bone pointing between several children reaches their mean head; a
leaf continues its parent for a share of its length; no bone is longer than
half the model (a root far from the body would otherwise cross it)."""
from __future__ import annotations

import numpy as np

#: no bone longer than this share of the model size
MAX_SHARE = 0.5
#: a leaf: this share of its parent, at most LEAF_SHARE_OF_SIZE of the model
LEAF_SHARE, LEAF_SHARE_OF_SIZE = 0.5, 0.1


def limb_lengths(rest: np.ndarray, parent: np.ndarray, aim: np.ndarray, size: float,
                 min_len: float) -> tuple[np.ndarray, np.ndarray]:
    """(lengths (B,), touching (B,) bool) for rest matrices (B, 4, 4),
    parents (B,) (parents first) and the point each bone aims at (B, 3;
    NaN for a bone aiming at nothing). ``touching[c]``: child ``c``'s head
    is its parent's tail (the parent aims at it, along its own Y axis,
    within 1e-9 of the model size, and its length was not cut)."""
    B = len(rest)
    heads = rest[:, :3, 3]
    cap = MAX_SHARE * size
    lengths = np.zeros(B)
    ends_on = np.full(B, np.nan)
    for i in range(B):
        if np.isnan(aim[i, 0]):
            continue
        d = aim[i] - heads[i]
        along = float(d @ rest[i, :3, 1])
        if along > min_len:
            lengths[i] = min(along, cap)
            if along <= cap and np.linalg.norm(d - along * rest[i, :3, 1]) <= 1e-9 * size:
                ends_on[i] = along
    for i in range(B):                        # leaves and bones aiming at nothing: parents come first
        if lengths[i] == 0.0:
            p = parent[i]
            share = LEAF_SHARE * lengths[p] if p >= 0 else 0.1 * size
            lengths[i] = min(share, LEAF_SHARE_OF_SIZE * size) if share > 0 else 0.05 * size
    lengths = np.clip(lengths, min_len, max(cap, min_len))
    touching = np.zeros(B, dtype=bool)
    for c in range(B):
        p = parent[c]
        if p >= 0 and not np.isnan(ends_on[p]) and lengths[p] == ends_on[p]:
            tail = heads[p] + lengths[p] * rest[p, :3, 1]
            touching[c] = np.linalg.norm(tail - heads[c]) <= 1e-9 * size
    return lengths, touching
