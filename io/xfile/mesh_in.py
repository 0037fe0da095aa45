# SPDX-License-Identifier: GPL-3.0-or-later
"""One .X Mesh -> one scene mesh (scene space), for :mod:`.to_scene`: its
faces (turned where the file's normals say :mod:`.facing`), normals, UV
sets, vertex colours, materials and skin. Direct3D skins each SkinWeights
as a bone of its own: one that names a frame again with another
matrixOffset becomes a joint of its own (:meth:`MeshReader.skin`)."""
from __future__ import annotations

import numpy as np

from ...core.faces import corner_order, face_of_corner
from ...scene import AxisConversion, Material, Mesh, Skeleton, Skin
from ..errors import FormatError, group
from ..weld import classes_of, groups
from . import facing
from .conventions import col, shown_alpha
from .effects import read_maps
from .model import XMaterial, XMesh


class MeshReader:
    """The meshes of one .X file read one by one, with the materials they
    use (each XMaterial once) and the joints their skins add
    (:attr:`extra`: (name, parent joint, bind) each, after the skeleton's
    own). ``file_world``: each frame's world matrix as stored (file space,
    row vectors); ``frame_index``: frame name -> joint (the first frame of
    a name)."""

    def __init__(self, axes: AxisConversion, path: str, warnings: list[str], file_world: np.ndarray,
                 frame_index: dict[str, int], weld: bool = False):
        self.axes = axes
        self.path = path
        self.warnings = warnings
        self.file_world = file_world
        self.frame_index = frame_index
        self.weld = weld
        self.materials: list[Material] = []
        self._material_of: dict[int, int] = {}
        self.turned: list[tuple[str, int, int]] = []     # (mesh, faces turned, faces)
        self.extra: list[tuple[str, int, np.ndarray]] = []     # joints of further offsets (_offset_joint)

    def material(self, xm: XMaterial, mesh_name: str) -> int:
        key = id(xm)
        if key not in self._material_of:
            rgba = np.ones(4)
            fc = np.asarray(xm.face_color, dtype=np.float64).reshape(-1)
            rgba[:min(4, len(fc))] = fc[:4]
            extras: dict = {}
            alpha = shown_alpha(float(rgba[3]))
            if alpha != rgba[3]:
                extras["xfile"] = {"alpha": float(rgba[3])}      # written back by the writer
                rgba[3] = alpha
            texture, maps, more, effect = read_maps(xm)
            if effect is not None:
                extras.setdefault("xfile", {})["effect"] = effect
            self._material_of[key] = len(self.materials)
            self.materials.append(Material(xm.name or f"{mesh_name}_material", color=rgba,
                                           specular_power=float(xm.power),
                                           specular=np.asarray(xm.specular, dtype=np.float64)[:3].copy(),
                                           emissive=np.asarray(xm.emissive, dtype=np.float64)[:3].copy(),
                                           texture=texture, extras=extras, maps=maps, more_textures=more))
        return self._material_of[key]

    def mesh(self, m: XMesh, name: str, parent: int, sk: Skeleton | None, world: np.ndarray | None) -> Mesh:
        axes = self.axes
        label = f"mesh {name!r}"
        sizes = np.asarray(m.face_sizes, dtype=np.int64)
        idx = np.asarray(m.face_indices, dtype=np.int64)
        turned, to_mesh = self._turned(m, sizes, idx, parent)
        # a reflection turns the winding over, and so does a turn
        src = corner_order(sizes, turned != axes.mirrors)
        corners = idx[src]
        V = len(m.positions)
        out = Mesh(name, axes.points(m.positions), sizes, corners, parent=parent)
        if turned.any():
            out.extras["xfile"] = {"turned": "all" if turned.all() else np.flatnonzero(turned).tolist(),
                                   "faces": len(turned)}
            self.turned.append((name, int(turned.sum()), len(turned)))
        out.normals = self._normals(m, src, label)
        if to_mesh is not None and out.normals is not None:
            out.normal_matrix = self.axes.matrices(col(_affine(to_mesh)))[:3, :3]
        if m.uvs is not None and len(m.uvs) == V and len(corners):
            out.uvs = _corner_uvs(m.uvs, corners)
            out.uv_sets = _uv_sets(m, corners)
        if m.vertex_colors is not None and len(m.vertex_colors) == V:
            vc = np.ones((V, 4))
            c = np.asarray(m.vertex_colors, dtype=np.float64)
            vc[:, :c.shape[1]] = c[:, :4]
            out.colors = vc
        if m.materials:
            out.materials = [self.material(xm, name) for xm in m.materials]
            if m.material_indices is not None and len(m.material_indices) == len(sizes):
                out.face_materials = np.clip(np.asarray(m.material_indices, dtype=np.int64), 0,
                                             len(m.materials) - 1)
        if m.skin_weights and sk is not None:
            out.skin = self.skin(m, name, sk, world, parent)
        if self.weld:       # the file's positions as stored (a conversion could make two of them one)
            out.weld = groups(m.positions, classes_of(m.duplicates, V), out.skin, out.colors)
        return out

    def _turned(self, m: XMesh, sizes: np.ndarray, idx: np.ndarray,
                parent: int) -> tuple[np.ndarray, np.ndarray | None]:
        """(F,) bool: the faces :mod:`.facing` turns to show the side the
        file's normals say (none without usable normals); and the matrix
        taking the stored normals into the mesh's space (row vectors) when
        the file stores them in its frame's, else None."""
        none = np.zeros(len(sizes), dtype=bool)
        if m.normals is None or not len(m.normals) or not len(sizes):
            return none, None
        if m.normal_face_indices is not None:
            if m.normal_face_sizes is None or not np.array_equal(m.normal_face_sizes, sizes):
                return none, None
            ni = np.asarray(m.normal_face_indices, dtype=np.int64)
        elif len(m.normals) == len(m.positions):
            ni = idx
        else:
            return none, None
        if ni.min() < 0 or ni.max() >= len(m.normals):
            return none, None
        frame = self.file_world[parent][:3, :3] if parent >= 0 else None
        normals = np.asarray(m.normals)[ni]
        return facing.decide(m.positions, sizes, idx, normals, frame, self._shown(m, sizes, idx, parent),
                             m.duplicates)

    def _shown(self, m: XMesh, sizes: np.ndarray, idx: np.ndarray, parent: int) -> np.ndarray:
        """(F,) -1 where Direct3D shows a face's other side than the mesh's
        own space says (its placement at the default pose mirrors), else +1.
        A rigid mesh is placed by its frame; a skinned vertex by its joints'
        ``matrixOffset @ frame`` matrices (its frame's placement ignored, as
        D3DX skins), a vertex by the sign its weights give, a face by the
        sum of its corners' signs (a tie: its frame's)."""
        def sign(mat: np.ndarray) -> float:
            return -1.0 if np.linalg.det(np.asarray(mat, dtype=np.float64)[:3, :3]) < 0 else 1.0

        own = sign(self.file_world[parent]) if parent >= 0 else 1.0
        F = len(sizes)
        if not m.skin_weights:
            return np.full(F, own)
        V = len(m.positions)
        found = [(sw, self.frame_index.get(sw.frame_name)) for sw in m.skin_weights]
        found = [(sw, j) for sw, j in found if j is not None]
        # each record's placement matrixOffset @ frame, mirrored or not (the determinants at once)
        placed = (np.array([sw.matrix_offset for sw, _ in found], dtype=np.float64).reshape(-1, 4, 4)
                  @ self.file_world[np.array([j for _, j in found], dtype=np.int64)])
        signs = np.where(np.linalg.det(placed[:, :3, :3]) < 0, -1.0, 1.0)
        vis, ws = [], []
        for (sw, _), sg in zip(found, signs.tolist()):
            w = np.asarray(sw.weights, dtype=np.float64)
            vi = np.asarray(sw.vertex_indices, dtype=np.int64)[:len(w)]
            ok = (vi >= 0) & (vi < V)
            vis.append(vi[ok])
            ws.append(w[:len(vi)][ok] * sg)
        vote = (np.bincount(np.concatenate(vis), weights=np.concatenate(ws), minlength=V) if vis
                else np.zeros(V))
        vertex = np.where(vote != 0, np.sign(vote), own)
        face = np.bincount(face_of_corner(sizes), weights=vertex[idx], minlength=F)
        return np.where(face != 0, np.sign(face), own)

    def _normals(self, m: XMesh, src: np.ndarray, label: str):
        if m.normals is None or not len(m.normals):
            return None
        normals = np.asarray(m.normals, dtype=np.float64)
        if m.normal_face_indices is not None:
            ok = (m.normal_face_sizes is not None and len(m.normal_face_sizes) == len(m.face_sizes)
                  and np.array_equal(m.normal_face_sizes, m.face_sizes))
            if not ok:
                self.warnings.append(f"{label}: MeshNormals faces do not match the mesh faces; normals ignored")
                return None
            ni = np.asarray(m.normal_face_indices, dtype=np.int64)[src]
        elif len(normals) == len(m.positions):
            ni = np.asarray(m.face_indices, dtype=np.int64)[src]
        else:
            self.warnings.append(f"{label}: {len(normals)} normals for {len(m.positions)} vertices; "
                                 f"normals ignored")
            return None
        if len(ni) and (ni.min() < 0 or ni.max() >= len(normals)):
            self.warnings.append(f"{label}: normal index out of range; normals ignored")
            return None
        n = self.axes.directions(normals[ni])
        length = np.linalg.norm(n, axis=1, keepdims=True)
        return n / np.where(length > 0, length, 1.0)

    def skin(self, m: XMesh, name: str, sk: Skeleton, world: np.ndarray, parent: int) -> Skin:
        mw = world[parent] if parent >= 0 else np.eye(4)
        vs, js, ws, offs = [], [], [], {}
        seen: dict[int, list] = {}
        found = []
        for sw in m.skin_weights:
            j = self.frame_index.get(sw.frame_name)
            if j is None:
                group(self.warnings, "SkinWeights name frames the file does not have, their weights are ignored",
                      f"{sw.frame_name!r} (mesh {name!r})")
                continue
            found.append((sw, j))
        # every record's offset and bind (its inverse, placed), at once
        offsets = self.axes.matrices(col(np.array([sw.matrix_offset for sw, _ in found],
                                                  dtype=np.float64).reshape(-1, 4, 4)))
        try:
            binds = mw @ np.linalg.inv(offsets)
        except np.linalg.LinAlgError:
            bad = next(sw for (sw, _), off in zip(found, offsets) if not _invertible(off))
            raise FormatError(f"mesh {name!r}: SkinWeights {bad.frame_name!r}: matrixOffset is singular",
                              path=self.path) from None
        for (sw, j), off, b in zip(found, offsets, binds):
            j = self._offset_joint(j, off, b, sk, seen, name)
            if j >= len(sk):
                pass                       # a joint of its own (self.extra), bound to this offset
            elif not sk.has_bind[j]:      # another mesh may bind it differently: each mesh keeps its offsets
                sk.bind[j] = b
                sk.has_bind[j] = True
            offs[j] = off
            vs.append(np.asarray(sw.vertex_indices, dtype=np.int64))
            js.append(np.full(len(sw.vertex_indices), j, dtype=np.int64))
            ws.append(np.asarray(sw.weights, dtype=np.float64))

        def cat(a, dt):
            return np.concatenate(a) if a else np.zeros(0, dtype=dt)

        joints = np.array(sorted(offs), dtype=np.int64)
        ib = np.array([offs[j] for j in joints]).reshape(-1, 4, 4)
        return Skin(joints, ib, cat(vs, np.int64), cat(js, np.int64), cat(ws, np.float64))

    def _offset_joint(self, j: int, off: np.ndarray, bind: np.ndarray, sk: Skeleton, seen: dict, mesh: str) -> int:
        """The joint that skins the SkinWeights of frame ``j`` with matrixOffset
        ``off`` in one mesh. Direct3D makes each SkinWeights a bone of its own
        (its frame found by name: the first frame of that name), with its own
        offset. Several SkinWeights of one frame with the same offset are one
        joint (their weights add up); one with another offset (two frames of
        one name, or a frame named again) becomes a joint of its own, a child
        of the frame that moves with it (identity transform), so the mesh
        deforms as Direct3D deforms it. Reported."""
        known = seen.setdefault(j, [])
        tol = 1e-6 * max(1.0, float(np.abs(off).max()))
        for o, joint in known:
            if np.abs(o - off).max() <= tol:
                return joint
        if not known:
            known.append((off, j))
            return j
        taken = set(sk.names) | {n for n, _, _ in self.extra}
        k = len(known)
        new = f"{sk.names[j]}_offset{k}"
        while new in taken:
            k += 1
            new = f"{sk.names[j]}_offset{k}"
        self.extra.append((new, j, bind))
        joint = len(sk) + len(self.extra) - 1
        known.append((off, joint))
        self.warnings.append(f"mesh {mesh!r}: SkinWeights name frame {sk.names[j]!r} again with another "
                             f"matrixOffset: skinned by a joint of its own under it, {new!r}, as Direct3D "
                             f"skins it (frames are found by name: the first of a name)")
        return joint

    def report_turned(self) -> None:
        """One warning naming the meshes whose faces were turned (:meth:`_turned`)."""
        if self.turned:
            names = [f"{n!r}" + ("" if k == nf else f" ({k} of {nf} faces)") for n, k, nf in self.turned]
            self.warnings.append(f"{len(self.turned)} mesh(es) wound against their own normals as the file "
                                 f"places them, faces turned to point the way the normals say: {', '.join(names[:8])}"
                                 f"{' ...' if len(names) > 8 else ''} (export writes the file's winding back)")


def _uv_sets(m: XMesh, corners: np.ndarray) -> dict[str, np.ndarray]:
    """The mesh's UV sets after the first, per corner (v up), named as
    Blender names further UV maps (and glTF's importer its TEXCOORD_n):
    DeclData / FVFData TEXCOORDn is "UVMap.00n"; a further MeshTextureCoords
    takes the next number free."""
    sets = {n: m.extra_streams.get(f"TEXCOORD{n}") for n in range(1, 8)}
    for more in m.more_uvs:
        free = [n for n, s in sets.items() if s is None]
        if free:
            sets[free[0]] = more
    out = {}
    for n, stream in sets.items():
        if stream is not None and stream.ndim == 2 and stream.shape[1] >= 2 and len(stream) == len(m.positions):
            out[f"UVMap.{n:03d}"] = _corner_uvs(stream, corners)
    return out


def _corner_uvs(per_vertex: np.ndarray, corners: np.ndarray) -> np.ndarray:
    """A file UV set (per vertex, v down) per corner, v up."""
    uv = np.asarray(per_vertex, dtype=np.float64)[corners, :2].copy()
    uv[:, 1] = 1.0 - uv[:, 1]
    return uv


def _invertible(m: np.ndarray) -> bool:
    try:
        np.linalg.inv(m)
    except np.linalg.LinAlgError:
        return False
    return True


def _affine(m3: np.ndarray) -> np.ndarray:
    out = np.eye(4)
    out[:3, :3] = m3
    return out
