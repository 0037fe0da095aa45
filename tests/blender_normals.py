# SPDX-License-Identifier: GPL-3.0-or-later
"""Normals from positions, computed the way Blender computes a mesh's
normals after deformation (test-only: the Blender-side tests check Blender's
evaluated normals against them) (Blender's evaluated mesh recomputes them from the
deformed positions; the Armature modifier does not rotate stored normals).

Faces are given as flat corner arrays: ``face_sizes`` (F,) and
``corner_verts`` (sum of sizes,), n-gons allowed.
"""
from __future__ import annotations

import numpy as np


def _corner_layout(face_sizes):
    face_sizes = np.asarray(face_sizes, dtype=np.int64)
    starts = np.concatenate(([0], np.cumsum(face_sizes)[:-1]))
    face_of_corner = np.repeat(np.arange(len(face_sizes)), face_sizes)
    local = np.arange(int(face_sizes.sum())) - starts[face_of_corner]
    size = face_sizes[face_of_corner]
    nxt = starts[face_of_corner] + (local + 1) % size
    prv = starts[face_of_corner] + (local - 1) % size
    return face_of_corner, nxt, prv


def face_normals(positions, face_sizes, corner_verts, dtype=np.float64) -> np.ndarray:
    """Unit face normals by Newell's method (equals Blender's triangle cross
    product and quad diagonal cross product, and its n-gon method).

    ``dtype=np.float32`` computes in single precision, as Blender does."""
    p = np.asarray(positions, dtype=dtype)
    corner_verts = np.asarray(corner_verts, dtype=np.int64)
    face_of_corner, nxt, _ = _corner_layout(face_sizes)
    a = p[corner_verts]
    b = p[corner_verts[nxt]]
    cr = np.cross(a, b)
    n = np.zeros((len(face_sizes), 3), dtype=dtype)
    for axis in range(3):
        n[:, axis] = np.bincount(face_of_corner, weights=cr[:, axis], minlength=len(face_sizes))
    length = np.linalg.norm(n, axis=1, keepdims=True)
    return n / np.where(length > 0, length, dtype(1.0))


def vertex_normals(positions, face_sizes, corner_verts, dtype=np.float64) -> np.ndarray:
    """Blender's vertex normals: face normals accumulated with the corner
    angle as weight, normalised; a vertex without faces (or with a zero sum)
    gets its normalised position, as Blender does.

    ``dtype=np.float32`` follows Blender's single-precision arithmetic, which
    matters where the surface folds (near-cancelling sums) or has slivers
    (acos of a cosine near 1)."""
    p = np.asarray(positions, dtype=dtype)
    corner_verts = np.asarray(corner_verts, dtype=np.int64)
    face_of_corner, nxt, prv = _corner_layout(face_sizes)
    fn = face_normals(p, face_sizes, corner_verts, dtype)
    v = p[corner_verts]
    d_prev = p[corner_verts[prv]] - v
    d_next = p[corner_verts[nxt]] - v
    tiny = np.finfo(dtype).tiny
    d_prev /= np.maximum(np.linalg.norm(d_prev, axis=1, keepdims=True), tiny)
    d_next /= np.maximum(np.linalg.norm(d_next, axis=1, keepdims=True), tiny)
    angle = np.arccos(np.clip(np.sum(d_prev * d_next, axis=1), -1.0, 1.0)).astype(dtype)
    contrib = fn[face_of_corner] * angle[:, None]
    out = np.zeros_like(p)
    for axis in range(3):
        out[:, axis] = np.bincount(corner_verts, weights=contrib[:, axis], minlength=len(p))
    length = np.linalg.norm(out, axis=1, keepdims=True)
    plen = np.linalg.norm(p, axis=1, keepdims=True)
    fallback = p / np.where(plen > 0, plen, 1.0)
    return np.where(length > 0, out / np.where(length > 0, length, 1.0), fallback)
