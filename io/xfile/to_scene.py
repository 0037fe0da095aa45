# SPDX-License-Identifier: GPL-3.0-or-later
"""DirectX .X -> scene: the reading half of the adapter (the conventions it
applies are in :mod:`.conventions`)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ...core import quat, rig, sampling
from ...core.faces import corner_order, face_of_corner
from ...scene import AxisConversion, Clip, Material, Mesh, Scene, Skeleton, Skin, Source
from ...scene.orientation import AutoAxes, read_oriented
from ...scene.validate import singular
from ..errors import AnimationsOnly, Deviation, FormatError, Warnings, group
from ..weld import classes_of, groups
from . import facing
from .conventions import FORMAT, col, rotation_from_key, shown_alpha
from .effects import read_maps
from .model import XAnimation, XAnimationKey, XAnimationSet, XFile, XMaterial, XMesh
from .names import joint_index
from .time_base import AUTO, TimeBase, choose

#: a singular frame that places nothing gets its flattened axes scaled by this
#: much of its largest axis (Blender needs an invertible matrix)
FLATTENED = 1e-5
#: matrix keys decomposed into translation, rotation and scale are reported
#: when that moves a unit vector by more than this (exporters' float32
#: matrices are orthogonal to about 1e-6)
SHEARED_KEY = 1e-4


def _with_joints(sk: Skeleton, extra: list) -> Skeleton:
    """``sk`` and the joints ``extra`` ((name, parent, bind) each, identity
    local transform) after its own."""
    n = len(extra)
    return Skeleton(list(sk.names) + [e[0] for e in extra],
                    np.concatenate([sk.parents, np.array([e[1] for e in extra], dtype=np.int64)]),
                    np.concatenate([sk.local, np.tile(np.eye(4), (n, 1, 1))]),
                    np.concatenate([sk.bind, np.array([e[2] for e in extra]).reshape(n, 4, 4)]),
                    np.concatenate([sk.has_bind, np.ones(n, dtype=bool)]), extras=sk.extras)


class _Reader:
    def __init__(self, xf: XFile, axes: AxisConversion, path: str, warnings: list[str],
                 time_base: TimeBase | None = None, weld: bool = False):
        self.xf = xf
        self.weld = weld
        self.time_base = time_base if time_base is not None else choose(xf, path=path)   # default: automatic
        self.axes = axes
        self.path = path
        self.warnings = warnings
        self._sheared: tuple[float, str] = (0.0, "")      # the most sheared matrix key (_shear)
        self.frames = list(xf.all_frames())
        self.materials: list[Material] = []
        self._material_of: dict[int, int] = {}
        self.turned: list[tuple[str, int, int]] = []     # (mesh, faces turned, faces)
        self.file_world = self._file_worlds()

    def _file_worlds(self) -> np.ndarray:
        """(J, 4, 4) each frame's combined FrameTransformMatrix as stored
        (row vectors, file space): where the frames put their meshes."""
        world = np.zeros((len(self.frames), 4, 4))
        index = {id(f): i for i, f in enumerate(self.frames)}
        parent = np.full(len(self.frames), -1)
        for i, f in enumerate(self.frames):
            for c in f.children:
                parent[index[id(c)]] = i
        for i, f in enumerate(self.frames):       # parents come first (XFile.all_frames)
            m = np.asarray(f.matrix, dtype=np.float64)
            world[i] = m @ world[parent[i]] if parent[i] >= 0 else m
        return world

    def skeleton(self) -> Skeleton | None:
        frames = self.frames
        if not frames:
            return None
        index = {id(f): i for i, f in enumerate(frames)}
        parents = np.full(len(frames), -1, dtype=np.int64)
        for f in frames:
            for c in f.children:
                parents[index[id(c)]] = index[id(f)]
        names, seen = [], set()
        for i, f in enumerate(frames):
            n = f.name or f"frame{i}"
            if n in seen:
                n = f"{n}.{i}"
                group(self.warnings, "frames of the same name, renamed", f"{f.name!r} -> {n!r}")
            seen.add(n)
            names.append(n)
        local = self.axes.matrices(col(np.array([f.matrix for f in frames]).reshape(-1, 4, 4)))
        J = len(frames)
        unnamed = [i for i, f in enumerate(frames) if not f.name]     # a writer writes them unnamed again
        return Skeleton(names, parents, local, np.full((J, 4, 4), np.nan), np.zeros(J, dtype=bool),
                        extras={"xfile": {"unnamed": unnamed}} if unnamed else {})

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

    def mesh(self, m: XMesh, name: str, parent: int, sk: Skeleton | None, by_name: dict[str, int],
             world: np.ndarray | None) -> Mesh:
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
            uv = np.asarray(m.uvs, dtype=np.float64)[corners, :2].copy()
            uv[:, 1] = 1.0 - uv[:, 1]
            out.uvs = uv
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
            out.skin = self._skin(m, name, sk, by_name, world, parent)
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
        by_name = self.by_name()
        V = len(m.positions)
        found = [(sw, by_name.get(sw.frame_name)) for sw in m.skin_weights]
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

    def _skin(self, m: XMesh, name: str, sk: Skeleton, by_name: dict[str, int], world: np.ndarray,
              parent: int) -> Skin:
        mw = world[parent] if parent >= 0 else np.eye(4)
        vs, js, ws, offs = [], [], [], {}
        seen: dict[int, list] = {}
        found = []
        for sw in m.skin_weights:
            j = by_name.get(sw.frame_name)
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
                pass                       # a joint of its own (self._extra), bound to this offset
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
        taken = set(sk.names) | {n for n, _, _ in self._extra}
        k = len(known)
        new = f"{sk.names[j]}_offset{k}"
        while new in taken:
            k += 1
            new = f"{sk.names[j]}_offset{k}"
        self._extra.append((new, j, bind))
        joint = len(sk) + len(self._extra) - 1
        known.append((off, joint))
        self.warnings.append(f"mesh {mesh!r}: SkinWeights name frame {sk.names[j]!r} again with another "
                             f"matrixOffset: skinned by a joint of its own under it, {new!r}, as Direct3D "
                             f"skins it (frames are found by name: the first of a name)")
        return joint

    def _loosen_singular(self, sk: Skeleton, placed: list[tuple[XMesh, int]], by_name: dict[str, int]) -> None:
        """Frames whose matrix flattens space (SDK scene.x: a camera frame with
        a zero row) while neither they nor any frame below them places a mesh
        or a skin: the matrix becomes the nearest one Blender can invert (each
        flattened axis at FLATTENED of the largest), with one warning. One that
        a mesh or a skin depends on stays, and the scene's validation refuses it."""
        bad = np.flatnonzero(singular(sk.local))
        if not len(bad):
            return
        needed = np.zeros(len(sk), dtype=bool)
        for m, f in placed:
            if f >= 0:
                needed[f] = True
            for sw in m.skin_weights:
                j = by_name.get(sw.frame_name)
                if j is not None:
                    needed[j] = True
        for j in sk.order[::-1].tolist():          # children first: a frame is needed by what hangs below it
            p = int(sk.parents[j])
            if p >= 0 and needed[j]:
                needed[p] = True
        loose = [int(j) for j in bad if not needed[j]]
        for j in loose:
            u, s, vt = np.linalg.svd(sk.local[j, :3, :3])
            s = np.maximum(s, FLATTENED * s[0]) if s[0] > 0 else np.full(3, FLATTENED)
            sk.local[j, :3, :3] = (u * s) @ vt
        if loose:
            names = ", ".join(repr(sk.names[j]) for j in loose[:8]) + (" ..." if len(loose) > 8 else "")
            self.warnings.append(f"{len(loose)} frame(s) with a matrix that flattens space, placing no mesh: "
                                 f"{names}; imported with the flattened axis scaled by {FLATTENED:g} instead of 0")

    def by_name(self) -> dict[str, int]:
        """Frame name -> joint (the first frame of a name)."""
        out: dict[str, int] = {}
        for i, f in enumerate(self.frames):
            if f.name is not None:
                out.setdefault(f.name, i)
        return out

    def placed(self) -> list[tuple[XMesh, int]]:
        """Every mesh with the joint of the frame holding it (-1: top level)."""
        return [(m, -1) for m in self.xf.meshes] + [(m, i) for i, f in enumerate(self.frames) for m in f.meshes]

    def scene(self, name: str) -> Scene:
        sk = self.skeleton()
        self._extra: list[tuple[str, int, np.ndarray]] = []     # joints of extra offsets (_offset_joint)
        by_name: dict[str, int] = {}
        world = None
        placed = self.placed()
        if sk is not None:
            by_name = self.by_name()
            self._loosen_singular(sk, placed, by_name)
            world = sk.world()
        meshes: list[Mesh] = []
        used: set[str] = set()
        for mi, (m, f) in enumerate(placed):
            mname = m.name or (sk.names[f] if f >= 0 and self.frames[f].name else f"{name}_mesh{mi}")
            if mname in used:
                mname = f"{mname}.{mi}"
            used.add(mname)
            meshes.append(self.mesh(m, mname, f, sk, by_name, world))
        if self.turned:
            names = [f"{n!r}" + ("" if k == nf else f" ({k} of {nf} faces)") for n, k, nf in self.turned]
            self.warnings.append(f"{len(self.turned)} mesh(es) wound against their own normals as the file "
                                 f"places them, faces turned to point the way the normals say: {', '.join(names[:8])}"
                                 f"{' ...' if len(names) > 8 else ''} (export writes the file's winding back)")
        clips = []
        if sk is not None and self._extra:
            sk = _with_joints(sk, self._extra)
            world = sk.world()
        if sk is not None:
            rig.resolve_binds(sk.parents, sk.order, sk.local, world, sk.bind)
            clips = [self.clip(s, i, len(sk), by_name) for i, s in enumerate(self.xf.animation_sets)]
            self.report_shear()
        else:       # (a file without frames: every Animation names a frame it does not have)
            for i, s in enumerate(self.xf.animation_sets):
                self.unplaced(s.name or f"AnimationSet{i}", [str(a.frame_name) for a in s.animations])
        return Scene(name, sk, meshes, self.materials, clips, Source(FORMAT, self.path, self.axes))

    def probe(self, name: str) -> Scene:
        """What the automatic up axis looks at (:func:`...scene.orientation.detect`),
        without the cost of a whole scene: the skeleton, each mesh's
        positions, frame and skin (no faces, normals, UVs or materials), and
        each AnimationSet's first pose (the earliest key of each of its keys)."""
        sk = self.skeleton()
        self._extra = []
        by_name = self.by_name() if sk is not None else {}
        world = sk.world() if sk is not None else None
        empty = np.zeros(0, dtype=np.int64)
        meshes = []
        for m, f in self.placed():
            mesh = Mesh(m.name or name, self.axes.points(m.positions), empty, empty, parent=f)
            if m.skin_weights and sk is not None:
                mesh.skin = self._skin(m, mesh.name, sk, by_name, world, f)
            meshes.append(mesh)
        if sk is not None and self._extra:
            sk = _with_joints(sk, self._extra)
        clips = [self.clip(_first_keys(aset), i, len(sk), by_name)
                 for i, aset in enumerate(self.xf.animation_sets if sk is not None else ())]
        return Scene(name, sk, meshes, [], clips, Source(FORMAT, self.path, self.axes))

    def _shear(self, keys: np.ndarray, again: np.ndarray, times: np.ndarray, where: str) -> None:
        """Note how far matrix ``keys`` (K, 4, 4) are from their translation,
        rotation and scale ``again``: the largest change of a unit vector
        they move (relative to the key's own scale), with where."""
        scale = np.maximum(np.abs(keys[:, :3, :3]).max(axis=(1, 2)), 1e-300)
        err = np.linalg.norm(again[:, :3, :3] - keys[:, :3, :3], ord=2, axis=(1, 2)) / scale
        k = int(np.argmax(err)) if len(err) else 0
        if len(err) and err[k] > self._sheared[0]:
            self._sheared = (float(err[k]), f"{where}, tick {times[k]:g}")

    def report_shear(self) -> None:
        """One deviation for the matrix keys read that translation, rotation
        and scale could not hold (:meth:`_shear`), when over :data:`SHEARED_KEY`."""
        fig, where = self._sheared
        if fig > SHEARED_KEY:
            self.warnings.append(Deviation(
                f"matrix keys with shear or a scale along other than the frame's own axes, which translation, "
                f"rotation and scale cannot hold: decomposed into the nearest, moving what hangs below by up to "
                f"about {fig:.2e} of the model size ({where})", fig, where))

    def unplaced(self, clip: str, frames: list[str]) -> None:
        """The frames a set's Animations name and the file lacks: one warning line for the file."""
        for frame in frames:
            group(self.warnings, "Animations name frames the file does not have, skipped", f"{frame!r} ({clip})")

    def clip(self, aset: XAnimationSet, i: int, n_joints: int, by_name: dict[str, int],
             onto: bool = False) -> Clip:
        """The set as a clip on ``n_joints`` joints, its Animations' frames
        found by ``by_name``: the file's own frames, or (``onto``) the joints
        of another skeleton, where the frames keyed and not found are named
        in one warning instead."""
        name = aset.name or f"AnimationSet{i}"
        animated = np.zeros(n_joints, dtype=bool)
        claimed: set[int] = set()
        missing = []
        axes = self.axes
        # (kind, joint, times, values, values as stored: converted below, every kind at once), in file order
        found: list[tuple[str, int, np.ndarray, np.ndarray, bool]] = []
        for a in aset.animations:
            j = by_name.get(a.frame_name) if a.frame_name is not None else None
            if j is None:
                if not onto or any(len(k.times) for k in a.keys):
                    missing.append(str(a.frame_name))
                continue
            if j in claimed:
                group(self.warnings, "frames animated by several Animations of one set, the last wins",
                      f"{a.frame_name!r} ({name})")
            claimed.add(j)
            keys = {k.key_type: k for k in a.keys if len(k.times)}
            if not keys:
                continue
            animated[j] = True
            mat = keys.get(4) or keys.get(3)
            if mat is not None:
                if any(t in keys for t in (0, 1, 2)):
                    group(self.warnings, "frames with both matrix and separate keys, the matrix keys are used",
                          f"{a.frame_name!r} ({name})")
                m = col(np.asarray(mat.values, dtype=np.float64).reshape(-1, 4, 4))
                t, r, s = sampling.decompose_trs(m)
                times = np.asarray(mat.times, dtype=np.float64)
                self._shear(m, sampling.compose_trs(t, quat.normalize(r), s), times, f"{a.frame_name!r} in {name}")
                comps = {"r": axes.quats(r), "t": axes.translations(t), "s": axes.scales(s)}
                found += [(c, j, times, comps[c], False) for c in "rts"]
                continue
            for kt, c in ((0, "r"), (2, "t"), (1, "s")):
                k = keys.get(kt)
                if k is not None:
                    found.append((c, j, np.asarray(k.times, dtype=np.float64),
                                  np.asarray(k.values, dtype=np.float64), True))
        if onto and missing:
            self.warnings.append(f"{name}: {len(missing)} animated frame(s) match no bone, skipped: "
                                 f"{', '.join(missing[:8])}{' ...' if len(missing) > 8 else ''}")
        elif missing:
            self.unplaced(name, missing)
        convert = {"r": lambda x: axes.quats(rotation_from_key(x)), "t": axes.translations, "s": axes.scales}
        values = [v for _, _, _, v, _ in found]
        for c in "rts":
            stored = [k for k, e in enumerate(found) if e[0] == c and e[4]]
            if stored:
                parts = convert[c](np.concatenate([values[k] for k in stored]))
                for k, part in zip(stored, np.split(parts, np.cumsum([len(values[k]) for k in stored])[:-1])):
                    values[k] = part
        tracks: dict[str, tuple[list, list, list]] = {"r": ([], [], []), "t": ([], [], []), "s": ([], [], [])}
        for (c, j, times, _, _), v in zip(found, values):
            _put(tracks[c], j, times, v)

        def channels(c, width):
            targets, times, vals = tracks[c]
            if not targets:
                return sampling.Channels.empty(width)
            if c == "r":
                vals = _continuous_tracks(vals)
            return sampling.Channels.from_tracks(targets, times, vals, width)

        lo, hi = np.inf, -np.inf
        for _, _, times, _, _ in found:
            lo, hi = min(lo, times.min()), max(hi, times.max())
        if not np.isfinite(lo):
            lo = hi = 0.0
        tb = self.time_base
        return Clip(name, channels("r", 4), channels("t", 3), channels("s", 3), animated,
                    start=float(lo), end=float(hi), ticks_per_second=tb.ticks_per_second, rotation_mode="slerp",
                    extras={"xfile": tb.extras(), "time_base": tb.describe()})


def _first_keys(aset: XAnimationSet) -> XAnimationSet:
    """``aset`` with only the earliest key of each of its keys: its pose at
    its start (a track starting later holds its first key until then)."""
    out = XAnimationSet(aset.name)
    for a in aset.animations:
        keys = []
        for k in a.keys:
            if len(k.times):
                e = int(np.argmin(np.asarray(k.times, dtype=np.float64)))
                keys.append(XAnimationKey(k.key_type, np.asarray(k.times)[e:e + 1], np.asarray(k.values)[e:e + 1]))
        out.animations.append(XAnimation(a.name, a.frame_name, keys))
    return out


def _continuous_tracks(tracks: list[np.ndarray]) -> list[np.ndarray]:
    """Each track of rotations (K, 4) normalised and continuous along its
    keys (``quat.make_continuous``), every track at once."""
    counts = [len(v) for v in tracks]
    q = quat.normalize(np.concatenate(tracks))
    if len(q) > 1:
        # key k flips when an odd number of key pairs from its track's first to it point apart
        against = np.concatenate(([0], np.cumsum(np.sum(q[1:] * q[:-1], axis=-1) < 0.0)))
        first = np.repeat(np.concatenate(([0], np.cumsum(counts)[:-1])), counts)
        q[(against - against[first]) % 2 == 1] *= -1.0
    return np.split(q, np.cumsum(counts)[:-1])


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
            uv = np.asarray(stream, dtype=np.float64)[corners, :2].copy()
            uv[:, 1] = 1.0 - uv[:, 1]
            out[f"UVMap.{n:03d}"] = uv
    return out


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


def _put(track, j: int, times: np.ndarray, values: np.ndarray) -> None:
    targets, ts, vs = track
    if j in targets:  # a later Animation on the same frame replaces the earlier
        k = targets.index(j)
        ts[k], vs[k] = times, values
        return
    targets.append(j)
    ts.append(times)
    vs.append(values)


def _animations_only(xf: XFile, path) -> AnimationsOnly:
    """The error for a file of animations alone: what they key."""
    sets = xf.animation_sets
    frames = list(dict.fromkeys(a.frame_name for s in sets for a in s.animations if a.frame_name is not None))
    shown = ", ".join(repr(f) for f in frames[:4]) + (" ..." if len(frames) > 4 else "")
    return AnimationsOnly(f"the file holds only animations ({len(sets)} AnimationSet{'s' if len(sets) != 1 else ''} "
                          f"keying {len(frames)} frame{'s' if len(frames) != 1 else ''}{': ' + shown if frames else ''}"
                          f"), no mesh and no skeleton: they play on the skeleton of a model with those frames",
                          path=path or None)


def scene_from_xfile(xf: XFile, *, path: str = "", axes: AxisConversion | AutoAxes | None = None,
                     warnings: list[str] | None = None, time_base: str = AUTO,
                     ticks_per_second: float = 0.0, weld: bool = False) -> Scene:
    """A parsed .X file as a scene in Blender space (see the module doc).
    ``axes``: a conversion, or :class:`AutoAxes` (None: automatic, unscaled)
    to decide up from the file's data. Its keys are read with the time base
    ``time_base`` / ``ticks_per_second`` choose (:func:`.time_base.choose`):
    each clip's ``ticks_per_second`` (None: one tick per frame) and
    ``extras`` say which. With ``weld`` each mesh's ``weld`` says which of
    its vertices are one (:mod:`..weld`: those ``VertexDuplicationIndices``
    marks as one, else those at one place with the same weights)."""
    if xf.animation_sets and not xf.meshes and not xf.frames:
        raise _animations_only(xf, path)
    warnings = warnings if warnings is not None else Warnings()
    warnings.extend(xf.warnings)
    name = Path(path).stem if path else "xfile"
    tb = choose(xf, time_base, ticks_per_second, path=str(path))
    return read_oriented(axes if axes is not None else AutoAxes(mirror_z=True),
                         lambda conv, sink: _Reader(xf, conv, str(path), sink, tb, weld).scene(name),
                         warnings, probe=lambda conv: _Reader(xf, conv, str(path), Warnings(), tb).probe(name))



def read_scene(paths, *, axes: AxisConversion | AutoAxes | None = None, warnings: list[str] | None = None,
               time_base: str = AUTO, ticks_per_second: float = 0.0, ranges: str = "", weld: bool = True) -> Scene:
    """One .X file as a scene. ``axes`` None or :class:`AutoAxes`: up decided
    from the file's data. Its keys are read with the time base the options
    choose (``io/xfile/time_base.py``; default: automatic); ``ranges`` (a
    ranges file, else ``STEM.ranges.json`` beside the file when there is
    one) cuts its timeline into named clips (:mod:`.timeline_ranges`);
    ``weld`` marks the vertices the builder welds (:func:`scene_from_xfile`)."""
    from .reader import read_xfile
    from .timeline_ranges import apply

    paths = [str(p) for p in paths]
    if len(paths) != 1:
        raise FormatError(f"give exactly one .x file (got {len(paths)})", path=paths[1] if len(paths) > 1 else None)
    warnings = warnings if warnings is not None else Warnings()
    scene = scene_from_xfile(read_xfile(paths[0]), path=paths[0], axes=axes, warnings=warnings,
                             time_base=time_base, ticks_per_second=ticks_per_second, weld=weld)
    scene.clips = apply(scene.clips, paths[0], ranges, warnings)
    return scene



def read_clips(skeleton: Skeleton, axes: AxisConversion, paths, *, layer: str = "ACTION", weight: float = 1.0,
               warnings: list[str] | None = None, time_base: str = AUTO,
               ticks_per_second: float = 0.0, ranges: str = "") -> list[Clip]:
    """The AnimationSets of .X files as clips on another ``skeleton``,
    each Animation's frame found by name among its joints (the name-based
    rebinding that readers of a 2D skeletal animation article advise):
    a set's keys replace the components of a joint's local transform
    that they key; the other components keep the target's own (its default
    pose). The file's own frames play no part: a file of animations alone
    (no mesh, no frames, made to be played on another file's skeleton)
    plays on a skeleton with its frames' names. Keyed frames with no joint
    of that name are reported."""
    from .reader import read_xfile
    from .timeline_ranges import apply

    warnings = warnings if warnings is not None else Warnings()
    out = []
    for p in paths:
        xf = read_xfile(p)
        warnings.extend(xf.warnings)
        if not xf.animation_sets:
            raise FormatError("the file has no AnimationSet", path=p)
        reader = _Reader(xf, axes, str(p), warnings, choose(xf, time_base, ticks_per_second, path=str(p)))
        # the rig's bones by name, or by the names the text writer respelt them to (a file written from this rig)
        index = joint_index(skeleton.names, {a.frame_name for s in xf.animation_sets for a in s.animations
                                             if a.frame_name is not None})
        clips = [reader.clip(s, i, len(skeleton), index, onto=True) for i, s in enumerate(xf.animation_sets)]
        reader.report_shear()
        for aset, clip in zip(xf.animation_sets, clips):
            if not clip.animated.any() and any(len(k.times) for a in aset.animations for k in a.keys):
                raise FormatError(f"{clip.name}: no animated frame matches a bone of the armature", path=p)
        for clip in apply(clips, str(p), ranges, warnings):
            clip.layer, clip.weight = layer, float(weight)
            out.append(clip)
    return out
