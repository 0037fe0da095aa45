# SPDX-License-Identifier: GPL-3.0-or-later
"""Faces and their normals: the geometric normal of each face (its winding,
by Newell's method) and corner normals made to agree with their faces for
shading.

A face's front is the side its winding makes counter-clockwise in a
right-handed space (Blender's; Direct3D's clockwise fronts in its
left-handed space are the same formula): ``sum p_i x p_(i+1)`` points out of
the front. Faces are given by their sizes and their corners' vertex indices
in winding order.
"""
from __future__ import annotations

import numpy as np

from .vectors import cross

#: a shading normal leans at least this much (the sine of 5 degrees) out of
#: its face's plane to the front (:func:`agreeing_normals`)
EDGE_ON = float(np.sin(np.radians(5.0)))


def face_of_corner(sizes: np.ndarray) -> np.ndarray:
    """(L,) the face each corner belongs to."""
    sizes = np.asarray(sizes, dtype=np.int64)
    return np.repeat(np.arange(len(sizes)), sizes)


def next_corner(sizes: np.ndarray) -> np.ndarray:
    """(L,) the corner after each corner in its face's winding (the last
    corner's is its face's first)."""
    sizes = np.asarray(sizes, dtype=np.int64)
    starts = _starts(sizes)
    nxt = np.arange(int(sizes.sum())) + 1
    nxt[starts + sizes - 1] = starts
    return nxt


def corner_order(sizes: np.ndarray, reverse) -> np.ndarray:
    """(L,) for each corner of the faces (face after face) the index of the
    corner whose place it takes: the face's own order, or the face's corners
    reversed where ``reverse`` (a bool per face, or one for all) is set."""
    sizes = np.asarray(sizes, dtype=np.int64)
    if not np.any(reverse):                 # every face in its own order
        return np.arange(int(sizes.sum()))
    starts = np.zeros(len(sizes), dtype=np.int64)
    if len(sizes) > 1:
        np.cumsum(sizes[:-1], out=starts[1:])
    first = np.repeat(starts, sizes)
    local = np.arange(int(sizes.sum())) - first
    rev = np.repeat(np.broadcast_to(np.asarray(reverse, dtype=bool), sizes.shape), sizes)
    local[rev] = np.repeat(sizes, sizes)[rev] - 1 - local[rev]
    return first + local


def face_normals(positions: np.ndarray, sizes: np.ndarray, corners: np.ndarray) -> np.ndarray:
    """(F, 3) unnormalised geometric normals (Newell) of the faces: twice
    each face's vector area. Faces of one size (all triangles, all quads)
    are summed in a (F, k, 3) block, triangles as one cross product of two
    edges (the same sum, translation-free)."""
    p = np.asarray(positions, dtype=np.float64)
    sizes = np.asarray(sizes, dtype=np.int64)
    corners = np.asarray(corners, dtype=np.int64)
    F = len(sizes)
    if not F:
        return np.zeros((0, 3))
    k = int(sizes[0])
    if k == 3 and (sizes == 3).all():
        c = corners.reshape(F, 3)
        a = p[c[:, 0]]
        b, d = p[c[:, 1]], p[c[:, 2]]
        b -= a
        d -= a
        return cross(b, d)
    if k > 3 and (sizes == k).all():
        q = p[corners.reshape(F, k)]
        return cross(q, np.roll(q, -1, axis=1)).sum(axis=1)
    face = face_of_corner(sizes)
    nxt = next_corner(sizes)
    cr = cross(p[corners], p[corners[nxt]])
    out = np.zeros((F, 3))
    for axis in range(3):
        out[:, axis] = np.bincount(face, weights=cr[:, axis], minlength=F)
    return out


def agreeing_normals(normals: np.ndarray, positions: np.ndarray, sizes: np.ndarray,
                     corners: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(normals (L, 3), changed (L,) bool): corner normals that point to
    their face's front. A corner whose normal points to the back (a normal
    the file gives against a winding that is right: smoothed normals shared
    by the two sides of a thin plate, a side whose normals an exporter
    flipped) is reflected across its face's plane: the part along the face
    turns over, the part in the plane (the smoothing) stays. One that then
    lies within :data:`EDGE_ON` of the plane (a plate's edge, smoothed with
    its sides) is tilted out of it to that much, in the plane of it and the
    face normal. Unit normals in, unit normals out; the others, and corners
    of degenerate faces, are returned as they are (the array given, when no
    corner changes)."""
    n = np.asarray(normals, dtype=np.float64).reshape(-1, 3)
    sizes = np.asarray(sizes, dtype=np.int64)
    g = face_normals(positions, sizes, corners)
    length = np.sqrt(np.einsum("ij,ij->i", g, g))
    F = len(sizes)
    k = int(sizes[0]) if F else 0
    uniform = bool(F and (sizes == k).all())
    if uniform:                         # faces of one size: no per-corner copy of the face normals
        dot = np.einsum("fkj,fj->fk", n.reshape(F, k, 3), g).reshape(-1)
        reach = np.repeat(length, k)
    else:
        face = face_of_corner(sizes)
        dot = np.einsum("ij,ij->i", n, g[face])
        reach = length[face]
    # the face's unit normal u = g / |g|: behind it, n . u < 0; edge-on, |n . u| < EDGE_ON
    fix = np.flatnonzero((reach > 0) & ((dot < 0) | (np.abs(dot) < EDGE_ON * reach)))
    changed = np.zeros(len(n), dtype=bool)
    if not len(fix):
        return n, changed
    face = fix // k if uniform else face[fix]
    unit = g[face] / length[face, None]
    m = n[fix]
    along = np.einsum("ij,ij->i", m, unit)
    back = along < 0
    m[back] -= 2.0 * along[back, None] * unit[back]
    along = np.abs(along)
    low = along < EDGE_ON
    if low.any():
        plane = m[low] - along[low, None] * unit[low]
        pl = np.linalg.norm(plane, axis=1, keepdims=True)
        plane = np.where(pl > 0, plane / np.where(pl > 0, pl, 1.0), 0.0)
        tilted = EDGE_ON * unit[low] + np.sqrt(1.0 - EDGE_ON ** 2) * plane
        m[low] = np.where(pl > 0, tilted, unit[low])        # (no direction in the plane: the face's own)
    out = n.copy()
    out[fix] = m
    changed[fix] = back | low
    return out, changed


def _starts(sizes: np.ndarray) -> np.ndarray:
    starts = np.zeros(len(sizes), dtype=np.int64)
    if len(sizes) > 1:
        np.cumsum(sizes[:-1], out=starts[1:])
    return starts


def _ear_clip(pts: np.ndarray, normal: np.ndarray) -> list[tuple[int, int, int]]:
    """Triangles (local corner indices, winding kept) of one simple polygon
    ``pts`` (k, 3) with Newell normal ``normal``, by ear clipping in its plane
    (a degenerate polygon falls back to a fan)."""
    k = len(pts)
    axis = int(np.argmax(np.abs(normal)))
    uv = np.delete(pts, axis, axis=1)
    if normal[axis] < 0:                    # keep the winding counter-clockwise in the plane
        uv = uv[:, ::-1]
    left = list(range(k))
    out: list[tuple[int, int, int]] = []

    def area2(a, b, c) -> float:
        return float((uv[b, 0] - uv[a, 0]) * (uv[c, 1] - uv[a, 1]) - (uv[b, 1] - uv[a, 1]) * (uv[c, 0] - uv[a, 0]))

    guard = 0
    while len(left) > 3 and guard < k * k:
        guard += 1
        n = len(left)
        for i in range(n):
            a, b, c = left[i - 1], left[i], left[(i + 1) % n]
            if area2(a, b, c) <= 0:
                continue
            if any(p not in (a, b, c) and area2(a, b, p) >= 0 and area2(b, c, p) >= 0 and area2(c, a, p) >= 0
                   for p in left):
                continue
            out.append((a, b, c))
            left.pop(i)
            break
        else:                               # no ear (degenerate or self-intersecting): fan the rest
            break
    out += [(left[0], left[i], left[i + 1]) for i in range(1, len(left) - 1)]
    return out


def triangulate(positions: np.ndarray, sizes: np.ndarray, corners: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every face as triangles with its own winding: (pick (3T,), face (T,)),
    ``pick`` the corners (indices into ``corners``) of each triangle and
    ``face`` the face each comes from, so per-corner data follows by
    indexing. Triangles stay; a quad is split along its shorter diagonal (as
    Blender's Triangulate modifier by default); a larger face is a fan from
    its first corner when it is convex, else cut by ear clipping."""
    p = np.asarray(positions, dtype=np.float64)
    sizes = np.asarray(sizes, dtype=np.int64)
    corners = np.asarray(corners, dtype=np.int64)
    starts = _starts(sizes)
    picks, faces = [], []
    tri = np.flatnonzero(sizes == 3)
    if len(tri):
        picks.append((starts[tri][:, None] + np.arange(3)).reshape(-1))
        faces.append(tri)
    quad = np.flatnonzero(sizes == 4)
    if len(quad):
        c = starts[quad][:, None] + np.arange(4)
        q = p[corners[c]]
        d02 = np.einsum("ij,ij->i", q[:, 2] - q[:, 0], q[:, 2] - q[:, 0])
        d13 = np.einsum("ij,ij->i", q[:, 3] - q[:, 1], q[:, 3] - q[:, 1])
        split13 = d13 < d02
        local = np.where(split13[:, None], [1, 2, 3, 1, 3, 0], [0, 1, 2, 0, 2, 3])
        picks.append((starts[quad][:, None] + local).reshape(-1))
        faces.append(np.repeat(quad, 2))
    for k in np.unique(sizes[sizes > 4]).tolist():
        big = np.flatnonzero(sizes == k)
        c = starts[big][:, None] + np.arange(k)
        q = p[corners[c]]                                   # (n, k, 3)
        normal = cross(q, np.roll(q, -1, axis=1)).sum(axis=1)
        turn = cross(np.roll(q, -1, axis=1) - q, np.roll(q, -2, axis=1) - np.roll(q, -1, axis=1))
        convex = (np.einsum("nkj,nj->nk", turn, normal) >= 0).all(axis=1)
        fan = np.stack([np.zeros(k - 2, dtype=np.int64), np.arange(1, k - 1), np.arange(2, k)], axis=1).reshape(-1)
        picks.append((starts[big[convex]][:, None] + fan).reshape(-1))
        faces.append(np.repeat(big[convex], k - 2))
        for i in np.flatnonzero(~convex).tolist():          # concave faces: few, one at a time
            local = np.asarray(_ear_clip(q[i], normal[i]), dtype=np.int64).reshape(-1)
            picks.append(starts[big[i]] + local)
            faces.append(np.full(len(local) // 3, big[i], dtype=np.int64))
    if not picks:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    pick, face = np.concatenate(picks), np.concatenate(faces)
    order = np.argsort(face, kind="stable")                 # triangles in face order
    return pick.reshape(-1, 3)[order].reshape(-1), face[order]


def valid_faces(face_sizes, corners, n_vertices: int):
    """The faces a mesh editor can hold (Blender's: 3+ corners, no vertex
    twice, not on the same vertices as an earlier face) of a mesh of
    ``n_vertices`` vertices: (kept faces, their corners' indices into
    ``corners``, their sizes, their loop starts, how many were degenerate,
    how many repeated an earlier face). Faces are compared size by size,
    each as its row of vertices sorted."""
    sizes = np.asarray(face_sizes, dtype=np.int64)
    idx = np.asarray(corners, dtype=np.int64)
    starts = _starts(sizes)
    keep = sizes >= 3
    degenerate = dup_faces = 0
    one_size = bool(len(sizes)) and bool((sizes == sizes[0]).all())
    if one_size:
        kinds = [int(sizes[0])] if keep[0] else []
    else:
        kinds = np.unique(sizes[keep]).tolist()
    for k in kinds:
        if one_size:                                  # faces of one size: their corners as they are
            faces = np.arange(len(sizes))
            rows = _sorted_rows(idx.reshape(-1, k))
        else:
            faces = np.flatnonzero(sizes == k)
            rows = _sorted_rows(idx[starts[faces][:, None] + np.arange(k)[None, :]])
        twice = (rows[:, 1:] == rows[:, :-1]).any(axis=1)
        if twice.any():
            keep[faces[twice]] = False
            degenerate += int(twice.sum())
            faces, rows = faces[~twice], rows[~twice]
        again = _repeated_rows(rows, n_vertices)
        if len(again):
            keep[faces[again]] = False
            dup_faces += len(again)
    degenerate += int((sizes < 3).sum())
    if one_size and keep.all():                       # every face kept: the corners as they are
        return np.arange(len(sizes)), np.arange(len(idx)), sizes.copy(), starts, degenerate, dup_faces
    kept = np.nonzero(keep)[0]
    ksizes = sizes[kept]
    kstart = _starts(ksizes)
    src = np.repeat(starts[kept], ksizes) + (np.arange(int(ksizes.sum())) - np.repeat(kstart, ksizes))
    return kept, src, ksizes, kstart, degenerate, dup_faces


def _sorted_rows(rows: np.ndarray) -> np.ndarray:
    """Each row of ``rows`` (n, k) sorted (triangles by min and max: a sort
    along short rows is several times slower)."""
    if rows.shape[1] != 3:
        return np.sort(rows, axis=1)
    a, b, c = rows[:, 0], rows[:, 1], rows[:, 2]
    out = np.empty_like(rows)
    np.minimum(np.minimum(a, b), c, out=out[:, 0])
    np.maximum(np.maximum(a, b), c, out=out[:, 2])
    np.subtract(a + b + c - out[:, 0], out[:, 2], out=out[:, 1])
    return out


def _repeated_rows(rows: np.ndarray, n_values: int) -> np.ndarray:
    """Indices of the rows of ``rows`` ((n, k) ints in 0..n_values-1) equal
    to an earlier row."""
    n, k = rows.shape
    if n < 2:
        return np.zeros(0, dtype=np.int64)
    if n_values ** k < 2 ** 63:                  # one integer per row
        key = rows[:, 0].copy()
        for c in range(1, k):
            key *= n_values
            key += rows[:, c]
        sk = np.sort(key)
        if (sk[1:] != sk[:-1]).all():           # (the usual case: no row twice)
            return np.zeros(0, dtype=np.int64)
        order = np.argsort(key, kind="stable")
        sk = key[order]
        same = sk[1:] == sk[:-1]
    else:
        order = np.lexsort(rows.T[::-1])         # stable: equal rows keep their order
        sr = rows[order]
        same = (sr[1:] == sr[:-1]).all(axis=1)
    return np.sort(order[1:][same])
