# SPDX-License-Identifier: GPL-3.0-or-later
"""Which vertices of a mesh as read are one point of its surface (the
``weld`` import option; ``scene.Mesh.weld``).

A legacy file stores a vertex once per combination of UV, normal and
material, so a UV seam or a hard edge is two vertices at one place. A
reader that keeps the file's vertices marks which of them may be one
(:func:`groups`); ``scene.weld`` welds them for the Blender builder,
keeping apart those whose faces would otherwise collapse or repeat.
Vertices are one only where nothing they carry per vertex differs: the same
position (as stored), the same weights on the same joints, the same colour,
so that welding changes neither the look nor the deformation.
"""
from __future__ import annotations

import numpy as np

from ..core.skinning import sum_pairs
from .rows import dedupe_rows


def classes_of(duplicates: np.ndarray | None, n: int) -> np.ndarray:
    """(n,) the class of each vertex: the vertex a file's duplication
    indices (each vertex's original, e.g. .X ``VertexDuplicationIndices``)
    lead to, followed to the end of any chain; without them every vertex
    is in one class (vertices at one place with the same weights are one)."""
    if duplicates is None:
        return np.zeros(n, dtype=np.int64)
    cls = np.asarray(duplicates, dtype=np.int64).reshape(-1)
    if len(cls) != n or (n and (cls.min() < 0 or cls.max() >= n)):
        return np.arange(n, dtype=np.int64)            # indices that do not fit: no vertex is another's
    for _ in range(max(1, int(np.ceil(np.log2(max(n, 2))))) + 1):     # pointer jumping: a chain's end
        nxt = cls[cls]
        if np.array_equal(nxt, cls):
            break
        cls = nxt
    return cls


def groups(positions: np.ndarray, classes: np.ndarray, skin=None, colors: np.ndarray | None = None) -> np.ndarray:
    """(V,) for each vertex the first vertex it is one with (itself for a
    vertex of its own): vertices of one class (:func:`classes_of`) at the
    same position with the same weights on the same joints (a ``scene.Skin``'s
    triples; weights of one (vertex, joint) pair added up) and the same
    colour (``colors`` (V, k), optional). Exact comparisons: welding them
    changes nothing a vertex carries."""
    pos = np.asarray(positions, dtype=np.float64).reshape(-1, 3)
    V = len(pos)
    if not V:
        return np.zeros(0, dtype=np.int64)
    cols = [np.asarray(classes, dtype=np.float64).reshape(V, 1), pos]
    infl = _influences(skin, V)
    if infl is not None:
        count, h = infl[3], infl[4]
        cols += [count[:, None].astype(np.float64), (h & np.uint64(0xFFFFFFFF)).astype(np.float64)[:, None],
                 (h >> np.uint64(32)).astype(np.float64)[:, None]]
    if colors is not None and len(colors) == V:
        cols.append(np.asarray(colors, dtype=np.float64).reshape(V, -1))
    _, inv = dedupe_rows(np.concatenate(cols, axis=1))
    first = np.full(int(inv.max()) + 1, V, dtype=np.int64)
    np.minimum.at(first, inv, np.arange(V))
    label = first[inv]
    if infl is not None:
        label = _same_influences(label, *infl[:4])
    return label


def _influences(skin, V: int):
    """(vertex, joint, weight) of ``skin`` with each (vertex, joint) pair
    once (weights added up), sorted by vertex then joint, with each vertex's
    count and an order-independent 64-bit hash of its (joint, weight) pairs;
    None without a skin."""
    if skin is None:
        return None
    v = np.asarray(skin.vertex, dtype=np.int64).reshape(-1)
    j = np.asarray(skin.joint, dtype=np.int64).reshape(-1)
    w = np.asarray(skin.weight, dtype=np.float64).reshape(-1)
    n = min(len(v), len(j), len(w))
    v, j, w = v[:n], j[:n], w[:n]
    ok = (v >= 0) & (v < V) & (j >= 0)
    v, j, w = v[ok], j[ok], w[ok]
    v, j, w = sum_pairs(v, j, w)
    w = w + 0.0                                                      # -0.0 -> 0.0
    with np.errstate(over="ignore"):
        h = (j.astype(np.uint64) + np.uint64(1)) * np.uint64(0x9E3779B97F4A7C15)
        h ^= w.view(np.uint64)
        h *= np.uint64(0xBF58476D1CE4E5B9)
        h ^= h >> np.uint64(31)
        per_vertex = np.zeros(V, dtype=np.uint64)
        np.add.at(per_vertex, v, h)
    return v, j, w, np.bincount(v, minlength=V), per_vertex


def _same_influences(label: np.ndarray, v: np.ndarray, j: np.ndarray, w: np.ndarray,
                     count: np.ndarray) -> np.ndarray:
    """``label`` with every vertex whose (joint, weight) pairs are not
    exactly those of its group's first vertex made its own (a hash
    collision; never merged on a hash alone). The pairs are sorted by
    vertex then joint, and a vertex and its first have as many."""
    moved = np.flatnonzero(label != np.arange(len(label)))
    if not len(moved):
        return label
    start = np.concatenate(([0], np.cumsum(count)[:-1]))
    n = count[moved]
    ramp = np.arange(int(n.sum())) - np.repeat(np.cumsum(n) - n, n)
    mine = np.repeat(start[moved], n) + ramp
    theirs = np.repeat(start[label[moved]], n) + ramp
    differ = (j[mine] != j[theirs]) | (w[mine] != w[theirs])
    bad = np.unique(np.repeat(moved, n)[differ])
    if not len(bad):
        return label
    out = label.copy()
    out[bad] = bad
    return out
