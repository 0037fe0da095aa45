# SPDX-License-Identifier: GPL-3.0-or-later
"""One scene mesh -> one .X Mesh (file space), for :mod:`.from_scene`.

.X keeps positions, UVs (and, in the engines that read .X for games,
normals) per vertex and skins vertices, not corners: a vertex whose corners
carry different UVs, or whose faces have different materials, is split into
one vertex per combination (Irrlicht copies a vertex shared by two
materials into the second material's buffer without its weights: it would
stay in the bind pose). For the game targets (:mod:`.targets`) vertices are
split by their corners' normals too, and each vertex gets its one normal:
Irrlicht and DarkBASIC keep one normal per vertex, the last corner's.

Irrlicht keeps one offset (bind) per joint for all meshes: for it each
skinned mesh is put on the skeleton's bind pose, its vertices in model
space (as :mod:`...core.rebind` re-expresses them for Blender's armature)
and its offsets the joints' inverse binds.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ...core.faces import corner_order, triangulate
from ...core.skinning import limit_influences
from ...scene import Mesh
from ..rows import dedupe_rows
from .conventions import col
from .model import XMaterial, XMesh, XSkinWeights
from .targets import DARKBASIC, IRRLICHT

#: the game targets: a normal per vertex, weights summing to 1
GAMES = (IRRLICHT, DARKBASIC)
#: DarkBASIC's (FPS Creator's) bone shader skins this many weights per vertex, this many bones per mesh
GPU_WEIGHTS, GPU_BONES = 4, 60


@dataclass
class MeshOptions:
    back: object                            # scene space -> file space (an inverse AxisConversion)
    names: list[str]                        # the file's frame name of each joint
    target: str
    triangulate: bool = False
    max_influences: int = 0
    bind: np.ndarray | None = None          # (J, 4, 4) the skeleton's binds: one offset per joint (Irrlicht)
    size: float = 1.0                       # the model's size (tolerances)


@dataclass
class MeshReport:
    """What writing a mesh changed that the export reports."""

    limited: int = 0        # vertices whose weights Max Influences cut
    conflicts: int = 0      # vertices no single bind per joint can place (Irrlicht)
    over_gpu: int = 0       # vertices with more weights than DarkBASIC's bone shader skins
    bones: int = 0          # joints skinning the mesh
    notes: list[str] = field(default_factory=list)


def _split(corners: np.ndarray, columns: list[np.ndarray], V: int) -> tuple[np.ndarray, np.ndarray]:
    """(vmap: the scene vertex of each file vertex, the file vertex of each
    corner): one file vertex per distinct (vertex, ``columns``) row of the
    corners; a vertex's first combination keeps its index, the others are
    appended."""
    L = len(corners)
    if not columns or not L:
        return np.arange(V), corners
    uniq, inv = dedupe_rows(np.concatenate([corners[:, None].astype(np.float64)] + columns, axis=1))
    vertex = uniq[:, 0].astype(np.int64)
    first = np.full(len(uniq), L, dtype=np.int64)
    np.minimum.at(first, inv, np.arange(L))
    order = np.lexsort((first, vertex))
    is_first = np.ones(len(order), dtype=bool)
    is_first[1:] = vertex[order][1:] != vertex[order][:-1]
    new_index = np.empty(len(uniq), dtype=np.int64)
    new_index[order[is_first]] = vertex[order[is_first]]
    extra = order[~is_first]
    new_index[extra] = V + np.arange(len(extra))
    return np.concatenate((np.arange(V), vertex[extra])), new_index[inv]


def _expand(vmap: np.ndarray, V: int, wv, wj, ww):
    """Weights of the scene's vertices onto the file's (split vertices carry their source's)."""
    if len(vmap) == V:
        return wv, wj, ww
    order = np.argsort(vmap, kind="stable")
    count = np.bincount(vmap, minlength=V)
    first = np.concatenate(([0], np.cumsum(count)[:-1]))
    rep_n = count[wv]
    pick = np.repeat(first[wv], rep_n) + (np.arange(int(rep_n.sum())) - np.repeat(np.cumsum(rep_n) - rep_n, rep_n))
    return order[pick], np.repeat(wj, rep_n), np.repeat(ww, rep_n)


def xmesh(m: Mesh, name: str | None, opts: MeshOptions, rev: np.ndarray, material: Callable[[int], XMaterial], *,
          fold: np.ndarray | None = None, placed_at: np.ndarray | None = None) -> tuple[XMesh, MeshReport]:
    """``m`` as an XMesh in file space. ``fold`` (scene space) is folded
    into the vertices (a mesh whose placement under its joint has no
    frame); ``rev`` (F,) the faces written in reverse (``_SceneWriter.reversed_faces``);
    ``material`` the XMaterial of a scene material. With ``opts.bind`` a
    skinned mesh is written in model space on those binds (``placed_at``:
    where the mesh is at the default pose, for its unweighted vertices)."""
    back, rep = opts.back, MeshReport()
    game = opts.target in GAMES
    pos = np.asarray(m.positions, dtype=np.float64).reshape(-1, 3)
    V = len(pos)
    sizes = np.asarray(m.face_sizes, dtype=np.int64).reshape(-1)
    corners = np.asarray(m.corners, dtype=np.int64).reshape(-1)
    normals = None if m.normals is None else np.asarray(m.normals, dtype=np.float64).reshape(-1, 3)
    uvs = None if m.uvs is None else np.asarray(m.uvs, dtype=np.float64).reshape(-1, 2)
    # further UV sets: DeclData TEXCOORD1.. in order (as kW X-port writes them), at most 7
    more_uvs = [np.asarray(u, dtype=np.float64).reshape(-1, 2) for u in m.uv_sets.values()][:7] if uvs is not None \
        else []
    skin = m.skin
    ib = None if skin is None else np.asarray(skin.inverse_bind, dtype=np.float64).reshape(-1, 4, 4)
    wv = wj = ww = None
    if skin is not None:
        wv, wj, ww = (np.asarray(skin.vertex, dtype=np.int64), np.asarray(skin.joint, dtype=np.int64),
                      np.asarray(skin.weight, dtype=np.float64))
    if skin is not None and opts.bind is not None:
        pos, normals, ib, rep.conflicts = _on_binds(pos, corners, normals, skin, opts, placed_at)
    elif fold is not None:
        pos = pos @ fold[:3, :3].T + fold[:3, 3]
        if normals is not None:
            normals = normals @ np.linalg.inv(fold[:3, :3])
        if ib is not None:
            ib = ib @ np.linalg.inv(fold)
    nmat = len(m.materials)
    fm = None
    if nmat:
        fm = np.zeros(len(sizes), dtype=np.int64) if m.face_materials is None else \
            np.clip(np.asarray(m.face_materials, dtype=np.int64).reshape(-1), 0, nmat - 1)
    if opts.triangulate and len(sizes) and (sizes != 3).any():
        pick, tri_face = triangulate(pos, sizes, corners)    # scene space: the faces as Blender shows them
        corners, sizes, rev = corners[pick], np.full(len(tri_face), 3, dtype=np.int64), rev[tri_face]
        normals = None if normals is None else normals[pick]
        uvs = None if uvs is None else uvs[pick]
        more_uvs = [u[pick] for u in more_uvs]
        fm = None if fm is None else fm[tri_face]
    L = len(corners)
    pos = back.points(pos)
    src = corner_order(sizes, rev)      # file corner k = scene corner src[k]
    n = None
    if normals is not None and L:
        n = back.directions(normals)
        length = np.linalg.norm(n, axis=1, keepdims=True)
        n = n / np.where(length > 0, length, 1.0)
    columns = [] if uvs is None else [uvs, *more_uvs]
    if fm is not None and len(np.unique(fm)) > 1:
        columns.append(np.repeat(fm, sizes).astype(np.float64)[:, None])
    if game and n is not None:
        columns.append(n)
    vmap, corner_vertex = _split(corners, columns, V)
    NV = len(vmap)
    xm = XMesh(name=name, positions=pos[vmap], face_sizes=sizes.copy(), face_indices=corner_vertex[src])
    rep_corner = np.full(NV, -1, dtype=np.int64)       # a corner of each file vertex
    rep_corner[corner_vertex] = np.arange(L)
    used = rep_corner >= 0
    if n is not None:
        if game:        # one normal per vertex, the faces' own indices
            vn = np.zeros((NV, 3))
            vn[used] = n[rep_corner[used]]
            xm.normals, xm.normal_face_sizes, xm.normal_face_indices = vn, sizes.copy(), xm.face_indices
        else:
            xn, n_idx = dedupe_rows(n)
            xm.normals, xm.normal_face_sizes, xm.normal_face_indices = xn, sizes.copy(), n_idx[src]
    if uvs is not None:
        def per_vertex(corner_uvs: np.ndarray) -> np.ndarray:      # one UV a file vertex, v down
            u = np.zeros((NV, 2))
            u[used] = corner_uvs[rep_corner[used]]
            u[:, 1] = 1.0 - u[:, 1]
            return u

        xm.uvs = per_vertex(uvs)
        for k, more in enumerate(more_uvs, start=1):
            xm.extra_streams[f"TEXCOORD{k}"] = per_vertex(more)
    if m.colors is not None and len(m.colors) == V:
        c = np.ones((V, 4))
        cc = np.asarray(m.colors, dtype=np.float64).reshape(V, -1)[:, :4]
        c[:, :cc.shape[1]] = cc
        xm.vertex_colors = c[vmap]
    if fm is not None:
        xm.materials = [material(int(i)) for i in m.materials]
        xm.material_indices = fm
    if NV > V:
        xm.duplicates = vmap
    if skin is not None and opts.names:
        _skin(xm, skin.joints, ib, wv, wj, ww, vmap, V, opts, rep)
    return xm, rep


def _on_binds(pos, corners, normals, skin, opts: MeshOptions, placed_at):
    """A skinned mesh moved onto the skeleton's binds (module doc):
    (positions in model space, normals, offsets = the joints' inverse binds,
    vertices that cannot be placed so). Each vertex goes where its joints'
    ``bind @ offset`` put it (the same place for each of its joints when the
    mesh is bound like the skeleton, or bound otherwise rigidly where the
    vertex's joints agree: exact); a vertex whose joints disagree goes to
    their weighted mean (counted); an unweighted one where the mesh is
    placed at the default pose."""
    joints = np.asarray(skin.joints, dtype=np.int64)
    bind = np.asarray(opts.bind, dtype=np.float64)
    e = bind[joints] @ np.asarray(skin.inverse_bind, dtype=np.float64)           # (B, 4, 4) mesh -> model
    w = np.asarray(skin.weight, dtype=np.float64)
    keep = w > 0
    v, slot, w = np.asarray(skin.vertex)[keep], np.searchsorted(joints, np.asarray(skin.joint)[keep]), w[keep]
    V = len(pos)
    m = np.zeros((V, 4, 4))
    np.add.at(m, v, w[:, None, None] * e[slot])
    total = np.bincount(v, weights=w, minlength=V)
    weighted = total > 0
    m[weighted] /= total[weighted, None, None]
    m[~weighted] = np.eye(4) if placed_at is None else np.asarray(placed_at, dtype=np.float64)
    out = np.einsum("vij,vj->vi", m[:, :3, :3], pos) + m[:, :3, 3]
    at = np.einsum("nij,nj->ni", e[slot, :3, :3], pos[v]) + e[slot, :3, 3]          # each joint's own place
    spread = np.zeros(V)
    np.maximum.at(spread, v, np.linalg.norm(at - out[v], axis=1))
    if normals is not None:
        lin = m[corners, :3, :3]
        normals = np.linalg.solve(np.swapaxes(lin, -1, -2), normals[..., None])[..., 0]
    ib = np.linalg.inv(bind[joints])
    return out, normals, ib, int((spread > 1e-6 * max(opts.size, 1e-12)).sum())


def _skin(xm: XMesh, joints, ib, wv, wj, ww, vmap, V: int, opts: MeshOptions, rep: MeshReport) -> None:
    if opts.max_influences:
        wv, wj, ww, lost = limit_influences(wv, wj, ww, opts.max_influences)
        rep.limited = len(lost)
    if opts.target in GAMES and len(wv):          # weights summing to 1, as Blender deforms (DarkBASIC does not)
        total = np.bincount(wv, weights=ww, minlength=V)
        ww = ww / np.where(total > 0, total, 1.0)[wv]
    if opts.target == DARKBASIC and len(wv):
        per_vertex = np.bincount(wv, minlength=V)
        rep.over_gpu = int((per_vertex > GPU_WEIGHTS).sum())
    wv, wj, ww = _expand(vmap, V, wv, wj, ww)
    offsets = col(opts.back.matrices(ib))
    for k, j in enumerate(np.asarray(joints, dtype=np.int64).tolist()):
        sel = np.flatnonzero(wj == j)
        if not len(sel):        # a joint that moves no vertex: no block (assimp cannot read an empty one)
            continue
        sel = sel[np.argsort(wv[sel], kind="stable")]
        xm.skin_weights.append(XSkinWeights(frame_name=opts.names[j], vertex_indices=wv[sel], weights=ww[sel],
                                            matrix_offset=offsets[k].copy()))
    rep.bones = len(xm.skin_weights)
