# SPDX-License-Identifier: GPL-3.0-or-later
"""A mesh with its vertices welded (the ``weld`` import option): the
vertices a reader marks as one (``scene.Mesh.weld``, ``io.weld``) become one
vertex, so the mesh edits as one piece in Blender (``operators.mesh_weld``
marks its seams and sharp edges there).

Vertices stay apart where welding would make a face collapse (two of its
corners one vertex) or repeat another face (a double-sided leaf's back,
the same corners in another order): the later face gets vertices of its
own, welded among themselves, as the builder keeps the first of repeated
faces (``core.faces.valid_faces``).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..core.faces import valid_faces
from .model import Mesh, Skin

#: a face repeated this many times over (layers of a double-sided sheet) gets its own vertices level by
#: level; beyond, the faces still repeating keep every vertex apart
LEVELS = 8


@dataclass
class Weld:
    mesh: Mesh              # the mesh to build: one vertex per group
    vertex: np.ndarray      # (V,) the welded vertex (the Blender vertex) of each vertex of the scene's mesh
    faces_apart: int        # faces given vertices of their own so that they neither collapse nor repeat


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
    if (marked == np.arange(V)).all():
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
    return Weld(mesh, vertex, int(apart.sum()))


def weld_note(name: str, m: Mesh, weld: Weld) -> str:
    """One mesh's part of the import's note: ``'Body' 5946 -> 1080 vertices``
    and the faces kept apart."""
    out = f"{name!r} {len(m.positions)} -> {len(weld.mesh.positions)} vertices"
    if weld.faces_apart:
        out += (f" ({weld.faces_apart} face(s) on vertices of their own, which welding would have collapsed "
                f"or laid on another face)")
    return out
