# SPDX-License-Identifier: GPL-3.0-or-later
"""Welded meshes on the Blender side (the ``weld`` import option; which
vertices become one is ``scene.weld``'s): UVs and normals stay per corner,
UV seams are marked where the two sides' UVs differ, and edges are sharp
where their normals differ (so that each corner keeps the file's own
normal: Blender shares one custom normal among the corners of a smooth fan
whose normals are less than a degree apart), so it looks as before.

The Blender vertex of each of the mesh's own vertices is stored on the
Blender mesh (:func:`..metadata.store_weld`): ``verify`` and the import's
self-check compare every vertex of the file through it.
"""
from __future__ import annotations

import numpy as np

from ..core.faces import next_corner
from . import mesh_arrays

#: corner normals (unit) further apart than this in a component are not shared (a sharp edge between)
NORMAL_APART = 1e-6


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
