# SPDX-License-Identifier: GPL-3.0-or-later
"""Welded meshes for Blender (the ``weld`` import option): the vertices a
reader marks as one (``scene.Mesh.weld``, ``io.weld``) become one Blender
vertex, so the mesh edits as one piece; UVs and normals stay per corner,
UV seams are marked where the two sides' UVs differ, and edges are sharp
where their normals differ (so that each corner keeps the file's own
normal: Blender shares one custom normal among the corners of a smooth fan
whose normals are less than a degree apart), so it looks as before.

Vertices stay apart where welding would make a face collapse (two of its
corners one vertex) or repeat another face (a double-sided leaf's back,
the same corners in another order): the later face gets vertices of its
own, welded among themselves, as the builder keeps the first of repeated
faces (``core.faces.valid_faces``).

The Blender vertex of each of the mesh's own vertices is stored on the
Blender mesh (:func:`..metadata.store_weld`): ``verify`` and the import's
self-check compare every vertex of the file through it.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..core.faces import next_corner, valid_faces
from ..scene import Mesh, Skin
from . import mesh_arrays

#: a face repeated this many times over (layers of a double-sided sheet) gets its own vertices level by
#: level; beyond, the faces still repeating keep every vertex apart
LEVELS = 8
#: corner normals (unit) further apart than this in a component are not shared (a sharp edge between)
NORMAL_APART = 1e-6


@dataclass
class Weld:
    mesh: Mesh              # the mesh to build: one vertex per group
    vertex: np.ndarray      # (V,) the Blender vertex of each vertex of the scene's mesh
    groups: int             # vertices as the reader marked them (before any was kept apart)
    faces_apart: int        # faces given vertices of their own so that they neither collapse nor repeat
    faces: tuple            # ``mesh_build.valid_faces`` of the scene's mesh: the welded mesh's as well


def _first_of(keys: np.ndarray) -> np.ndarray:
    """(V,) for each of ``keys`` ((V,) ints) the first index holding the same key."""
    order = np.argsort(keys, kind="stable")
    ks = keys[order]
    start = np.ones(len(ks), dtype=bool)
    start[1:] = ks[1:] != ks[:-1]
    out = np.empty(len(ks), dtype=np.int64)
    out[order] = order[start][np.cumsum(start) - 1]
    return out


def _labels(marked: np.ndarray, level: np.ndarray) -> np.ndarray:
    """The first vertex of each vertex's group: its marked group (``marked``,
    a first vertex) at its level (a vertex of its own below 0)."""
    V = len(marked)
    if not level.any():
        return marked
    return _first_of(np.where(level < 0, V * (LEVELS + 2) + np.arange(V), marked * (LEVELS + 2) + level))


def welded(m: Mesh, faces: tuple) -> Weld | None:
    """``m`` with its vertices welded as ``m.weld`` says, or None when the
    mesh has nothing to weld (no ``weld``, or every vertex its own). The
    faces Blender can hold are the scene mesh's (``faces``: its
    ``mesh_build.valid_faces``): welding keeps them so."""
    if m.weld is None:
        return None
    V = len(m.positions)
    marked = _first_of(np.asarray(m.weld, dtype=np.int64).reshape(-1))
    n_groups = int((marked == np.arange(V)).sum())
    if n_groups == V:
        return None
    kept, src, sizes, _ = faces
    loop = np.asarray(m.corners, dtype=np.int64)[src]
    face = np.repeat(np.arange(len(sizes)), sizes)
    level = np.zeros(V, dtype=np.int64)
    apart = np.zeros(len(sizes), dtype=bool)
    label = marked
    for step in range(LEVELS + 1):
        label = _labels(marked, level)
        again = np.ones(len(sizes), dtype=bool)
        again[valid_faces(sizes, label[loop], V)[0]] = False
        if not again.any():
            break
        apart |= again
        bad = np.flatnonzero(again[face])                   # the corners of those faces
        order = np.lexsort((label[loop[bad]], face[bad]))
        b = bad[order]
        twice = np.zeros(len(b), dtype=bool)                 # a corner on the vertex of an earlier one of its face
        twice[1:] = (face[b[1:]] == face[b[:-1]]) & (label[loop[b[1:]]] == label[loop[b[:-1]]])
        collapsed = np.unique(face[b[twice]])
        alone = np.unique(loop[b[twice]])
        repeated = np.setdiff1d(np.unique(face[bad]), collapsed)
        if step == LEVELS:                                 # still repeating: every vertex of theirs apart
            alone = np.union1d(alone, loop[np.isin(face, repeated)])
            repeated = repeated[:0]
        level[alone] = -1 - alone                         # a vertex of its own
        up = np.unique(loop[np.isin(face, repeated)])
        up = up[level[up] >= 0]
        level[up] += 1                                     # one level up: welded among themselves
    else:
        label = _labels(marked, level)
    reps = np.flatnonzero(label == np.arange(V))
    vertex = np.searchsorted(reps, label)
    skin = m.skin
    if skin is not None:
        own = label[skin.vertex] == skin.vertex            # a group's weights once (its members' are the same)
        skin = Skin(skin.joints, skin.inverse_bind, vertex[skin.vertex[own]], skin.joint[own], skin.weight[own])
    mesh = replace(m, positions=np.asarray(m.positions)[reps], corners=vertex[np.asarray(m.corners, dtype=np.int64)],
                   colors=None if m.colors is None else np.asarray(m.colors)[reps], skin=skin, weld=None)
    return Weld(mesh, vertex, n_groups, int(apart.sum()), faces)


def _apart(n_edges: int, end: np.ndarray, corner: np.ndarray, values: np.ndarray, tolerance: float) -> np.ndarray:
    """(E,) bool: the edges whose corners at one of their ends carry
    ``values`` ((L, k)) further apart than ``tolerance`` in a component;
    ``end`` (2 * edge + which end) and ``corner`` name each edge's corners
    at each of its ends (:func:`mark_edges`)."""
    lead = np.empty(2 * n_edges, dtype=np.int64)
    lead[end] = corner                                  # one corner of each edge's end stands for it
    other = lead[end]
    off = np.zeros(len(end), dtype=bool)
    for k in range(values.shape[1]):                    # column by column (a short axis reduces slowly)
        column = np.ascontiguousarray(values[:, k])
        off |= np.abs(column[corner] - column[other]) > tolerance
    out = np.zeros(n_edges, dtype=bool)
    out[end[off] // 2] = True
    return out


#: the edge attribute Blender keeps UV seams in (``MeshEdge.use_seam``), as each version names it
SEAM_ATTRS = ("uv_seam", ".uv_seam")


def _store_seams(me, seams: np.ndarray) -> None:
    """``seams`` (E,) as the mesh's UV seams: through their attribute (an
    edge set through RNA makes it, under the name this Blender gives it),
    else edge by edge through RNA."""
    global _seam_attr
    if _seam_attr is None:
        me.edges[int(np.flatnonzero(seams)[0])].use_seam = True
        _seam_attr = next((n for n in SEAM_ATTRS if (a := me.attributes.get(n)) is not None
                           and a.domain == "EDGE" and a.data_type == "BOOLEAN"), "")
    if _seam_attr:
        mesh_arrays.write(me, _seam_attr, "BOOLEAN", "EDGE", seams)
    else:
        me.edges.foreach_set("use_seam", seams)


_seam_attr: str | None = None       # :data:`SEAM_ATTRS`' name in this Blender ("": none), once seen


def mark_edges(me, sizes: np.ndarray, uvs: np.ndarray | None, normals: np.ndarray | None,
               split: np.ndarray) -> tuple[int, int]:
    """Seams on the edges of a welded mesh ``me`` (edges made) whose two
    sides' UVs (``uvs`` (L, 2)) differ at a vertex; sharp edges where the
    corner normals (``normals`` (L, 3), as they are to be set) differ, or,
    without normals, where the file split the vertex (``split``: (L,) the
    file's vertex of each corner), which Blender then shades as the split
    mesh. Returns (seams, sharp edges)."""
    L, E = len(me.loops), len(me.edges)
    if not L:
        return 0, 0
    edge = mesh_arrays.read(me, ".corner_edge", "INT", "CORNER", L)
    if edge is None:
        edge = np.empty(L, dtype=np.int32)
        me.loops.foreach_get("edge_index", edge)
    vert = mesh_arrays.corner_vertices(me)
    nxt = next_corner(sizes)
    # a corner's edge runs from its vertex to the next corner's: the corner at one end, the next at the
    # other; an edge's ends told apart by their vertices' order
    corner = np.concatenate((np.arange(L), nxt))
    low = vert < vert[nxt]
    end = 2 * np.concatenate((edge, edge)).astype(np.int64) + np.concatenate((low, ~low))
    seams = np.zeros(E, dtype=bool)
    if uvs is not None:
        seams = _apart(E, end, corner, np.asarray(uvs, dtype=np.float32), 0.0)
        if seams.any():
            _store_seams(me, seams)
    if normals is not None:
        sharp = _apart(E, end, corner, np.asarray(normals, dtype=np.float32), NORMAL_APART)
    else:
        sharp = _apart(E, end, corner, np.asarray(split, dtype=np.float64)[:, None], 0.0)
    if sharp.any():
        mesh_arrays.write(me, "sharp_edge", "BOOLEAN", "EDGE", sharp)      # (MeshEdge.use_edge_sharp)
    return int(seams.sum()), int(sharp.sum())


def summary(name: str, m: Mesh, weld: Weld) -> str:
    """One mesh's part of the import's note: ``'Body' 5946 -> 1080 vertices``
    and the faces kept apart."""
    out = f"{name!r} {len(m.positions)} -> {len(weld.mesh.positions)} vertices"
    if weld.faces_apart:
        out += (f" ({weld.faces_apart} face(s) on vertices of their own, which welding would have collapsed "
                f"or laid on another face)")
    return out
