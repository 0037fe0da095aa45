# SPDX-License-Identifier: GPL-3.0-or-later
"""Scene meshes -> glTF meshes: one primitive per material, triangles,
a vertex per distinct (vertex, normal, UVs of every set) of the corners,
and the skin's influences as JOINTS_n/WEIGHTS_n.

Influences follow the scene's weight policy (Blender's, what ``scene.evaluate``
evaluates): a vertex's weights are divided by their sum; a vertex whose
weights sum to at most ``BLENDER_MIN_CONTRIB``, and the part of a vertex
weighted to a joint the skin has no inverse bind for, stay where the mesh
is placed at the default pose, which the writer's *static joint* (a joint
that never moves, its inverse bind the mesh's placement) gives them.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ...core import faces
from ...core.skinning import BLENDER_MIN_CONTRIB, limit_influences, sum_pairs
from ...scene import AxisConversion, Mesh
from ..errors import FormatError
from ..rows import dedupe_rows
from .document import ARRAY_BUFFER, ELEMENT_ARRAY_BUFFER, UBYTE, UINT, USHORT, Document

#: influences per JOINTS_n/WEIGHTS_n set
SET = 4


@dataclass
class Influences:
    """A skinned mesh's influences as written: per source vertex, the slots
    of its JOINTS/WEIGHTS sets (skin joint indices, weights summing to 1)."""

    joints: np.ndarray           # (V, 4 * sets) index into the skin's joint list
    weights: np.ndarray          # (V, 4 * sets) float32, each row summing to 1 as closely as float32 can
    static: bool                 # some vertex needs the static joint (the skin list's last entry)
    limited: int = 0             # vertices that lost weights to the cap


def influences(mesh: Mesh, cap: int) -> Influences:
    """The written influences of ``mesh`` (skinned): summed per (vertex,
    joint), divided by their sum, the strongest ``cap`` kept (0: all)."""
    skin = mesh.skin
    V = len(mesh.positions)
    sj = np.asarray(skin.joints, dtype=np.int64)
    v = np.asarray(skin.vertex, dtype=np.int64)
    j = np.asarray(skin.joint, dtype=np.int64)
    w = np.asarray(skin.weight, dtype=np.float64)
    static = len(sj)                         # the static joint's place in the skin's list
    v, j, w = sum_pairs(v, j, w)             # the sum of each (vertex, joint) pair
    total = np.bincount(v, weights=w, minlength=V)
    moving = total > BLENDER_MIN_CONTRIB
    k = np.searchsorted(sj, j)
    known = (k < len(sj)) & (sj[np.minimum(k, max(len(sj) - 1, 0))] == j) if len(sj) else np.zeros(len(j), bool)
    slot = np.where(known, k, static)        # a joint without an inverse bind: the static joint
    keep = moving[v]
    v, slot, w = v[keep], slot[keep], w[keep] / total[v[keep]]
    v, slot, w = sum_pairs(v, slot, w)       # a vertex's several weights on the static joint: one
    pos = w > 0                              # (a zero weight is no influence: its slot stays empty)
    v, slot, w = v[pos], slot[pos], w[pos]
    v, slot, w, lost = limit_influences(v, slot, w, cap)
    still = np.setdiff1d(np.arange(V), v)      # no weight left: stays where the mesh is placed
    v = np.concatenate((v, still))
    slot = np.concatenate((slot, np.full(len(still), static)))
    w = np.concatenate((w, np.ones(len(still))))
    total = np.bincount(v, weights=w, minlength=V)
    w = w / total[v]
    order = np.lexsort((-w, v))                 # per vertex, the strongest first
    v, slot, w = v[order], slot[order], w[order]
    counts = np.bincount(v, minlength=V)
    sets = max(1, -(-int(counts.max(initial=1)) // SET))
    first = np.concatenate(([0], np.cumsum(counts)[:-1]))
    rank = np.arange(len(v)) - first[v]
    J = np.zeros((V, SET * sets), dtype=np.int64)
    W = np.zeros((V, SET * sets))
    J[v, rank] = slot
    W[v, rank] = w
    return Influences(J, _weights32(W), bool((slot == static).any()), len(lost))


@dataclass
class Written:
    """What one glTF mesh holds, for the measure and the checks: per
    primitive the source vertex of each of its vertices (``index`` -1: no
    mesh written, the mesh has no triangle)."""

    index: int
    sources: list[np.ndarray] = field(default_factory=list)
    dropped_faces: int = 0


def _unit(n: np.ndarray, fallback: np.ndarray) -> np.ndarray:
    """Rows of ``n`` normalised; zero or non-finite rows from ``fallback``
    (normalised too; (0, 1, 0) where that is zero as well)."""
    length = np.linalg.norm(n, axis=1, keepdims=True)
    ok = np.isfinite(length) & (length > 1e-20)
    out = np.where(ok, n / np.where(ok, length, 1.0), 0.0)
    if not ok.all():
        f = fallback[~ok[:, 0]]
        fl = np.linalg.norm(f, axis=1, keepdims=True)
        good = fl > 1e-20
        out[~ok[:, 0]] = np.where(good, f / np.where(good, fl, 1.0), [0.0, 1.0, 0.0])
    return out


def write_mesh(doc: Document, mesh: Mesh, back: AxisConversion, *, fold: np.ndarray | None, reverse: bool,
               material: Callable[[int, bool, bool], int | None], influences: Influences | None) -> Written:
    """``mesh`` as a glTF mesh of ``doc`` in file space (``back``: scene ->
    file). ``fold`` (scene space) is folded into the vertices; ``reverse``
    turns every triangle's winding; ``material(scene material, has UVs,
    has normals)`` is the document's material of a primitive (None: none)."""
    p = np.asarray(mesh.positions, dtype=np.float64).reshape(-1, 3)
    sizes = np.asarray(mesh.face_sizes, dtype=np.int64).reshape(-1)
    corners = np.asarray(mesh.corners, dtype=np.int64).reshape(-1)
    n = None if mesh.normals is None else np.asarray(mesh.normals, dtype=np.float64).reshape(-1, 3)
    if n is not None and mesh.normal_matrix is not None:
        n = n @ np.asarray(mesh.normal_matrix, dtype=np.float64).T
    if fold is not None:
        p = p @ fold[:3, :3].T + fold[:3, 3]
        if n is not None:
            n = n @ np.linalg.inv(fold[:3, :3])
    pick, face = faces.triangulate(p, sizes, corners)
    tri = pick.reshape(-1, 3)
    if reverse:
        tri = tri[:, [0, 2, 1]]
    out = Written(-1, dropped_faces=int(np.count_nonzero(sizes < 3)))
    if not len(tri):
        return out                                    # nothing to draw: no glTF mesh (a primitive needs triangles)
    out.index = doc.add("meshes", {"primitives": []})
    gm = doc.json["meshes"][out.index]
    if mesh.name:
        gm["name"] = mesh.name
    if n is not None:
        fn = faces.face_normals(p, sizes, corners)[faces.face_of_corner(sizes)]
        n = _unit(back.directions(n), back.directions(fn))
    uv = None if mesh.uvs is None else np.asarray(mesh.uvs, dtype=np.float64).reshape(-1, 2)
    # every UV set (TEXCOORD_0, _1, ...): the first, then the mesh's further sets in order
    uv_sets = [] if uv is None else [uv] + [np.asarray(u, dtype=np.float64).reshape(-1, 2)
                                          for u in mesh.uv_sets.values()]
    fp = back.points(p)
    fm = np.full(len(sizes), -1, dtype=np.int64)
    if mesh.materials:
        local = np.zeros(len(sizes), np.int64) if mesh.face_materials is None else \
            np.clip(np.asarray(mesh.face_materials, dtype=np.int64).reshape(-1), 0, len(mesh.materials) - 1)
        fm = np.asarray(mesh.materials, dtype=np.int64)[local]
    tri_mat = fm[face]
    for mat in np.unique(tri_mat).tolist():
        c = tri[tri_mat == mat].reshape(-1)           # the corners of the primitive's triangles
        vert = corners[c]
        cols = [vert[:, None].astype(np.float64)]
        if n is not None:
            cols.append(n[c])
        cols += [u[c] for u in uv_sets]
        rows, index = dedupe_rows(np.concatenate(cols, axis=1), vert)
        src = rows[:, 0].astype(np.int64)
        at = 1
        attrs = {"POSITION": doc.accessor(fp[src], "VEC3", target=ARRAY_BUFFER, bounds=True)}
        if n is not None:
            attrs["NORMAL"] = doc.accessor(rows[:, at:at + 3], "VEC3", target=ARRAY_BUFFER)
            at += 3
        for k in range(len(uv_sets)):      # v down in glTF
            attrs[f"TEXCOORD_{k}"] = doc.accessor(np.stack((rows[:, at], 1.0 - rows[:, at + 1]), axis=1), "VEC2",
                                                  target=ARRAY_BUFFER)
            at += 2
        if mesh.colors is not None:
            col = np.clip(np.asarray(mesh.colors, dtype=np.float64).reshape(-1, 4)[src], 0.0, 1.0)
            attrs["COLOR_0"] = doc.accessor(col, "VEC4", target=ARRAY_BUFFER)
        if influences is not None:
            comp = UBYTE if influences.joints.max(initial=0) < 256 else USHORT
            if influences.joints.max(initial=0) >= 65536:
                raise FormatError(f"mesh {mesh.name!r}: skinned by more than 65,536 joints, past glTF's 16-bit "
                                  f"JOINTS")
            for s in range(influences.joints.shape[1] // SET):
                part = slice(SET * s, SET * (s + 1))
                attrs[f"JOINTS_{s}"] = doc.accessor(influences.joints[src, part], "VEC4", comp, target=ARRAY_BUFFER)
                attrs[f"WEIGHTS_{s}"] = doc.accessor(influences.weights[src, part], "VEC4", target=ARRAY_BUFFER)
        prim = {"attributes": attrs,
                "indices": doc.accessor(index, "SCALAR", USHORT if len(src) < 65535 else UINT,
                                        target=ELEMENT_ARRAY_BUFFER),
                "mode": 4}
        index = material(mat, uv is not None, n is not None)
        if index is not None:
            prim["material"] = index
        gm["primitives"].append(prim)
        out.sources.append(src)
    return out


def _weights32(w: np.ndarray) -> np.ndarray:
    """Weights (V, K) as float32 whose rows sum to 1 as closely as float32
    allows (the largest weight, in the first slot, takes the rounding)."""
    w32 = w.astype(np.float32)
    rest = 1.0 - w32.astype(np.float64).sum(axis=1)
    w32[:, 0] = (w32[:, 0].astype(np.float64) + rest).astype(np.float32)
    return w32
