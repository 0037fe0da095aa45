# SPDX-License-Identifier: GPL-3.0-or-later
"""DirectX .X -> scene (and the .X conventions that come with it).

What is DirectX's and stays here:

* Direct3D matrices are row-vector: a stored ``M`` is used as ``M.T``
  (:func:`col`); the file is left-handed: the default conversion flips z,
  then turns Y-up into Z-up, so a file point (x, y, z) lands at (x, z, y);
* rotation keys are stored (w, x, y, z) and are the *conjugate* of the
  rotation the row-vector matrix applies (assimp negates w): a key at time 0
  reproduces the FrameTransformMatrix only with this convention (checked on
  tiny_4anim.x, BCN_Epileptic.X, anim_test.x, Testwuson.X).
  :func:`rotation_from_key` / :func:`key_from_rotation` are the one place
  that knows it;
* matrix keys are decomposed into translation, rotation and scale (as assimp
  does); a frame's unkeyed components keep its FrameTransformMatrix's;
* every frame is a joint; a joint's bind matrix is ``mesh frame world @
  inverse(matrixOffset)`` (:func:`core.rig.resolve_binds` fills the rest);
* key times are ticks: ``AnimTicksPerSecond``, 4800 when absent (D3DX);
* texture coordinates have v down.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ...core import quat, rig, sampling
from ...scene import AxisConversion, Clip, Material, Mesh, Scene, Skeleton, Skin, Source
from ..rows import dedupe_rows
from .model import XAnimationSet, XFile, XMaterial, XMesh

FORMAT = "xfile"
DEFAULT_TICKS_PER_SECOND = 4800


def default_axes(scale: float = 1.0) -> AxisConversion:
    """File (x, y, z) -> Blender (x, z, y): Direct3D's z -> -z (handedness),
    then Y-up to Z-up."""
    return AxisConversion.from_axes("-Z", "Y", scale, mirror_z=True)


def axes_from_options(forward: str = "-Z", up: str = "Y", scale: float = 1.0) -> AxisConversion:
    """The importer's Forward/Up options (they describe the file after its z
    is flipped into a right-handed space)."""
    return AxisConversion.from_axes(forward, up, scale, mirror_z=True)


def rotation_from_key(wxyz: np.ndarray) -> np.ndarray:
    """Stored rotation keys (..., 4) w, x, y, z -> rotations (x, y, z, w) for
    column vectors in file space: the conjugate of the stored quaternion."""
    wxyz = np.asarray(wxyz, dtype=np.float64)
    return np.stack((-wxyz[..., 1], -wxyz[..., 2], -wxyz[..., 3], wxyz[..., 0]), axis=-1)


def key_from_rotation(xyzw: np.ndarray) -> np.ndarray:
    """Inverse of :func:`rotation_from_key` (for writers)."""
    xyzw = np.asarray(xyzw, dtype=np.float64)
    return np.stack((xyzw[..., 3], -xyzw[..., 0], -xyzw[..., 1], -xyzw[..., 2]), axis=-1)


def col(m: np.ndarray) -> np.ndarray:
    """Direct3D row-vector matrices (..., 4, 4) <-> column-vector matrices."""
    return np.swapaxes(np.asarray(m, dtype=np.float64), -1, -2)


# ---------------------------------------------------------------------------

class _Reader:
    def __init__(self, xf: XFile, axes: AxisConversion, path: str, warnings: list[str],
                 ticks_per_second: float = 0.0):
        self.xf = xf
        self.ticks_per_second = ticks_per_second       # > 0: overrides the file's time base
        self.axes = axes
        self.path = path
        self.warnings = warnings
        self.frames = list(xf.all_frames())
        self.materials: list[Material] = []
        self._material_of: dict[int, int] = {}

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
                self.warnings.append(f"duplicate frame name {f.name!r}: renamed {n!r}")
            seen.add(n)
            names.append(n)
        local = self.axes.matrices(col(np.array([f.matrix for f in frames]).reshape(-1, 4, 4)))
        J = len(frames)
        return Skeleton(names, parents, local, np.full((J, 4, 4), np.nan), np.zeros(J, dtype=bool))

    def material(self, xm: XMaterial, mesh_name: str) -> int:
        key = id(xm)
        if key not in self._material_of:
            rgba = np.ones(4)
            fc = np.asarray(xm.face_color, dtype=np.float64).reshape(-1)
            rgba[:min(4, len(fc))] = fc[:4]
            self._material_of[key] = len(self.materials)
            self.materials.append(Material(xm.name or f"{mesh_name}_material", color=rgba,
                                           specular_power=float(xm.power),
                                           specular=np.asarray(xm.specular, dtype=np.float64)[:3].copy(),
                                           emissive=np.asarray(xm.emissive, dtype=np.float64)[:3].copy(),
                                           texture=xm.texture))
        return self._material_of[key]

    def mesh(self, m: XMesh, name: str, parent: int, sk: Skeleton | None, by_name: dict[str, int],
             world: np.ndarray | None) -> Mesh:
        axes = self.axes
        label = f"mesh {name!r}"
        sizes = np.asarray(m.face_sizes, dtype=np.int64)
        idx = np.asarray(m.face_indices, dtype=np.int64)
        starts = np.zeros(len(sizes), dtype=np.int64)
        if len(sizes) > 1:
            np.cumsum(sizes[:-1], out=starts[1:])
        local = np.arange(int(sizes.sum())) - np.repeat(starts, sizes)
        if axes.mirrors:          # a reflection turns the winding over
            local = np.repeat(sizes, sizes) - 1 - local
        src = np.repeat(starts, sizes) + local
        corners = idx[src]
        V = len(m.positions)
        out = Mesh(name, axes.points(m.positions), sizes, corners, parent=parent)
        out.normals = self._normals(m, src, label)
        if m.uvs is not None and len(m.uvs) == V and len(corners):
            uv = np.asarray(m.uvs, dtype=np.float64)[corners, :2].copy()
            uv[:, 1] = 1.0 - uv[:, 1]
            out.uvs = uv
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
        return out

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
        for sw in m.skin_weights:
            j = by_name.get(sw.frame_name)
            if j is None:
                self.warnings.append(f"mesh {name!r}: SkinWeights name a missing frame {sw.frame_name!r}; "
                                     f"its weights are ignored")
                continue
            off = self.axes.matrices(col(sw.matrix_offset))
            try:
                b = mw @ np.linalg.inv(off)
            except np.linalg.LinAlgError:
                from ..errors import FormatError

                raise FormatError(f"mesh {name!r}: SkinWeights {sw.frame_name!r}: matrixOffset is singular",
                                  path=self.path) from None
            if not sk.has_bind[j]:
                sk.bind[j] = b
                sk.has_bind[j] = True
            else:
                spread = float(np.abs(sk.bind[j] - b).max())
                self._spread[j] = max(self._spread.get(j, 0.0), spread)
            offs[j] = off
            vs.append(np.asarray(sw.vertex_indices, dtype=np.int64))
            js.append(np.full(len(sw.vertex_indices), j, dtype=np.int64))
            ws.append(np.asarray(sw.weights, dtype=np.float64))

        def cat(a, dt):
            return np.concatenate(a) if a else np.zeros(0, dtype=dt)

        joints = np.array(sorted(offs), dtype=np.int64)
        ib = np.array([offs[j] for j in joints]).reshape(-1, 4, 4)
        return Skin(joints, ib, cat(vs, np.int64), cat(js, np.int64), cat(ws, np.float64))

    def scene(self, name: str) -> Scene:
        sk = self.skeleton()
        self._spread: dict[int, float] = {}
        by_name: dict[str, int] = {}
        world = None
        if sk is not None:
            for i, f in enumerate(self.frames):
                if f.name is not None:
                    by_name.setdefault(f.name, i)
            world = sk.world()
        meshes: list[Mesh] = []
        used: set[str] = set()
        placed = [(m, -1) for m in self.xf.meshes] + [(m, i) for i, f in enumerate(self.frames) for m in f.meshes]
        for mi, (m, f) in enumerate(placed):
            mname = m.name or (sk.names[f] if f >= 0 and self.frames[f].name else f"{name}_mesh{mi}")
            if mname in used:
                mname = f"{mname}.{mi}"
            used.add(mname)
            meshes.append(self.mesh(m, mname, f, sk, by_name, world))
        clips = []
        if sk is not None:
            rig.resolve_binds(sk.parents, sk.order, sk.local, world, sk.bind)
            size = _size_hint(meshes, world)
            bad = [j for j, d in self._spread.items() if d > 1e-5 * size]
            if bad:
                self.warnings.append(f"{len(bad)} frame(s) have different bind poses in different meshes "
                                     f"(first: {sk.names[bad[0]]!r}); the first mesh's is used")
            tps = float(self.ticks_per_second or self.xf.anim_ticks_per_second or DEFAULT_TICKS_PER_SECOND)
            clips = [self.clip(s, i, sk, by_name, tps) for i, s in enumerate(self.xf.animation_sets)]
        return Scene(name, sk, meshes, self.materials, clips, Source(FORMAT, self.path, self.axes))

    def clip(self, aset: XAnimationSet, i: int, sk: Skeleton, by_name: dict[str, int], tps: float) -> Clip:
        name = aset.name or f"AnimationSet{i}"
        tracks: dict[str, tuple[list, list, list]] = {"r": ([], [], []), "t": ([], [], []), "s": ([], [], [])}
        animated = np.zeros(len(sk), dtype=bool)
        claimed: set[int] = set()
        missing = []
        lo, hi = np.inf, -np.inf
        axes = self.axes
        for a in aset.animations:
            j = by_name.get(a.frame_name) if a.frame_name is not None else None
            if j is None:
                missing.append(str(a.frame_name))
                continue
            if j in claimed:
                self.warnings.append(f"{name}: several Animations target frame {a.frame_name!r}; the last wins")
            claimed.add(j)
            keys = {k.key_type: k for k in a.keys if len(k.times)}
            if not keys:
                continue
            animated[j] = True
            mat = keys.get(4) or keys.get(3)
            if mat is not None:
                if any(t in keys for t in (0, 1, 2)):
                    self.warnings.append(f"{name}: frame {a.frame_name!r} has matrix and separate keys; "
                                         f"the matrix keys are used")
                m = col(np.asarray(mat.values, dtype=np.float64).reshape(-1, 4, 4))
                t, r, s = sampling.decompose_trs(m)
                times = np.asarray(mat.times, dtype=np.float64)
                comps = {"r": axes.quats(r), "t": axes.translations(t), "s": axes.scales(s)}
                for c in "rts":
                    _put(tracks[c], j, times, comps[c])
                lo, hi = min(lo, times.min()), max(hi, times.max())
                continue
            for kt, c in ((0, "r"), (2, "t"), (1, "s")):
                k = keys.get(kt)
                if k is None:
                    continue
                v = np.asarray(k.values, dtype=np.float64)
                v = {"r": lambda x: axes.quats(rotation_from_key(x)), "t": axes.translations,
                     "s": axes.scales}[c](v)
                times = np.asarray(k.times, dtype=np.float64)
                _put(tracks[c], j, times, v)
                lo, hi = min(lo, times.min()), max(hi, times.max())
        if missing:
            self.warnings.append(f"{name}: {len(missing)} Animation(s) name missing frames, skipped: "
                                 f"{', '.join(missing[:8])}")

        def channels(c, width):
            targets, times, values = tracks[c]
            if not targets:
                return sampling.Channels.empty(width)
            if c == "r":
                values = [quat.make_continuous(quat.normalize(v), axis=0) for v in values]
            return sampling.Channels.from_tracks(targets, times, values, width)

        if not np.isfinite(lo):
            lo = hi = 0.0
        return Clip(name, channels("r", 4), channels("t", 3), channels("s", 3), animated,
                    start=float(lo), end=float(hi), ticks_per_second=tps, rotation_mode="slerp")


def _put(track, j: int, times: np.ndarray, values: np.ndarray) -> None:
    targets, ts, vs = track
    if j in targets:  # a later Animation on the same frame replaces the earlier
        k = targets.index(j)
        ts[k], vs[k] = times, values
        return
    targets.append(j)
    ts.append(times)
    vs.append(values)


def _size_hint(meshes: list[Mesh], world: np.ndarray) -> float:
    pts = [m.positions for m in meshes if len(m.positions)]
    if not pts:
        pts = [world[:, :3, 3]] if len(world) else []
    if not pts:
        return 1.0
    p = np.concatenate(pts)
    return float(np.linalg.norm(p.max(0) - p.min(0))) or 1.0


def scene_from_xfile(xf: XFile, *, path: str = "", axes: AxisConversion | None = None,
                     warnings: list[str] | None = None, ticks_per_second: float = 0.0) -> Scene:
    """A parsed .X file as a scene in Blender space (see the module doc).
    ``ticks_per_second`` > 0 overrides the file's time base."""
    warnings = warnings if warnings is not None else []
    warnings.extend(xf.warnings)
    name = Path(path).stem if path else "xfile"
    if not (np.isfinite(ticks_per_second) and ticks_per_second >= 0):
        raise ValueError(f"ticks per second must be 0 (the file's) or positive, not {ticks_per_second!r}")
    scene = _Reader(xf, axes or default_axes(), str(path), warnings, float(ticks_per_second)).scene(name)
    scene.warnings = warnings
    return scene


# ---------------------------------------------------------------------------
# registry entry points (io.formats)

def read_scene(paths, *, axes: AxisConversion | None = None, warnings: list[str] | None = None,
               ticks_per_second: float = 0.0, **_) -> Scene:
    """One .X file as a scene. ``ticks_per_second`` > 0 overrides the file's
    time base (0: AnimTicksPerSecond, or 4800 when the file has none)."""
    from ..errors import FormatError
    from .reader import read_xfile

    paths = [str(p) for p in paths]
    if len(paths) != 1:
        raise FormatError(f"give exactly one .x file (got {len(paths)})")
    return scene_from_xfile(read_xfile(paths[0]), path=paths[0], axes=axes, warnings=warnings,
                            ticks_per_second=ticks_per_second)


# ---------------------------------------------------------------------------
# scene -> .X (the writer half)

KEY_TYPES = ("TRS", "MATRIX")
#: write_scene ``fmt`` values (io/xfile/writer.py's names)
WRITE_FORMATS = ("text", "binary", "text_compressed", "binary_compressed")


def writer_axes(scene: Scene, axes: AxisConversion | None = None) -> AxisConversion:
    """The conversion this format's writer inverts (``Scene.writer_axes``)."""
    return scene.writer_axes(FORMAT, default_axes(), axes)


def _is_identity(m: np.ndarray) -> bool:
    return bool(np.array_equal(np.asarray(m, dtype=np.float64), np.eye(4)))


def _unique_names(names: list[str], taken: set[str], fallback: str) -> list[str]:
    out = []
    for i, n in enumerate(names):
        n = n or f"{fallback}{i}"
        base, k = n, 1
        while n in taken:
            n = f"{base}.{k}"
            k += 1
        taken.add(n)
        out.append(n)
    return out


def _whole_ticks(times: np.ndarray, what: str, warnings: list[str]) -> np.ndarray:
    """Key times as whole ticks (a DWORD in the file)."""
    ticks = np.round(np.asarray(times, dtype=np.float64))
    notes = []
    if len(ticks) and np.abs(ticks - times).max() > 1e-6:
        notes.append(f"{what}: key times rounded to whole ticks (a higher ticks per second keeps them)")
    if len(ticks) and ticks.min() < 0:
        notes.append(f"{what}: keys before time 0 moved to 0")
        ticks = np.maximum(ticks, 0.0)
    warnings.extend(n for n in notes if n not in warnings)     # once per animation
    return ticks


class _SceneWriter:
    """One scene -> XFile (see :func:`xfile_from_scene`)."""

    def __init__(self, scene: Scene, axes: AxisConversion, warnings: list[str], *, fps: float,
                 ticks_per_second, key_type: str, text: bool):
        self.scene = scene
        self.back = axes.inverse()
        self.warnings = warnings
        self.fps = float(fps)
        self.tps_option = ticks_per_second
        self.key_type = key_type
        self.text = text
        self.material_cache: dict[int, XMaterial] = {}

    # -- frames ------------------------------------------------------------
    def frames(self, xf: XFile) -> list:
        from .model import XFrame
        from .text_emit import text_name

        sk = self.scene.skeleton
        if sk is None or not len(sk):
            self.names = []
            return []
        names = _unique_names(list(sk.names), set(), "frame")
        if names != list(sk.names):
            self.warnings.append("joint names repeat: the repeats are renamed (name.1, name.2, ...)")
        if self.text and len({text_name(n) for n in names}) < len(names):
            self.warnings.append("joint names collide once spelt for text files (only A-Z, 0-9, _ . -): "
                                 "use the binary format")
        self.names = names
        mats = col(self.back.matrices(sk.local))
        frames = [XFrame(n, mats[j].copy()) for j, n in enumerate(names)]
        for j in range(len(sk)):       # children in joint order
            p = int(sk.parents[j])
            (frames[p].children if p >= 0 else xf.frames).append(frames[j])
        return frames

    # -- materials ---------------------------------------------------------
    def material(self, index: int) -> XMaterial:
        xm = self.material_cache.get(index)
        if xm is None:
            m = self.scene.materials[index]
            rgba = np.ones(4)
            c = np.asarray(m.color, dtype=np.float64).reshape(-1)[:4]
            rgba[:len(c)] = c
            xm = XMaterial(name=m.name or None, face_color=rgba, power=float(m.specular_power),
                           specular=np.asarray(m.specular, dtype=np.float64).reshape(-1)[:3].copy(),
                           emissive=np.asarray(m.emissive, dtype=np.float64).reshape(-1)[:3].copy(),
                           texture=m.texture)
            self.material_cache[index] = xm
        return xm

    # -- meshes ------------------------------------------------------------
    def mesh(self, m: Mesh, name: str | None, bake: np.ndarray | None) -> XMesh:
        """An XMesh in file space. ``bake`` (scene space) is folded into the
        vertices (a mesh whose placement under its joint has no frame)."""
        from .model import XSkinWeights

        back = self.back
        pos = np.asarray(m.positions, dtype=np.float64).reshape(-1, 3)
        V = len(pos)
        sizes = np.asarray(m.face_sizes, dtype=np.int64).reshape(-1)
        corners = np.asarray(m.corners, dtype=np.int64).reshape(-1)
        L = len(corners)
        normals = None if m.normals is None else np.asarray(m.normals, dtype=np.float64).reshape(-1, 3)
        ib = None if m.skin is None else np.asarray(m.skin.inverse_bind, dtype=np.float64).reshape(-1, 4, 4)
        if bake is not None:
            pos = pos @ bake[:3, :3].T + bake[:3, 3]
            if normals is not None:
                normals = normals @ np.linalg.inv(bake[:3, :3])
            if ib is not None:
                ib = ib @ np.linalg.inv(bake)
        pos = back.points(pos)
        # corners in file order (each face reversed when the conversion mirrors)
        starts = np.zeros(len(sizes), dtype=np.int64)
        if len(sizes) > 1:
            np.cumsum(sizes[:-1], out=starts[1:])
        local = np.arange(L) - np.repeat(starts, sizes)
        if back.mirrors:
            local = np.repeat(sizes, sizes) - 1 - local
        src = np.repeat(starts, sizes) + local            # file corner k = scene corner src[k]
        # .X keeps UVs per vertex: split vertices whose corners carry different UVs
        uvs = None if m.uvs is None else np.asarray(m.uvs, dtype=np.float64).reshape(-1, 2)
        if uvs is not None and L:
            uniq, inv = dedupe_rows(np.concatenate((corners[:, None].astype(np.float64), uvs), axis=1))
            uv_vertex = uniq[:, 0].astype(np.int64)
            first = np.full(len(uniq), L, dtype=np.int64)
            np.minimum.at(first, inv, np.arange(L))
            order = np.lexsort((first, uv_vertex))
            is_first = np.ones(len(order), dtype=bool)
            is_first[1:] = uv_vertex[order][1:] != uv_vertex[order][:-1]
            new_index = np.empty(len(uniq), dtype=np.int64)
            new_index[order[is_first]] = uv_vertex[order[is_first]]
            extra = order[~is_first]
            new_index[extra] = V + np.arange(len(extra))
            vmap = np.concatenate((np.arange(V), uv_vertex[extra]))
            corner_vertex = new_index[inv]
        else:
            vmap = np.arange(V)
            corner_vertex = corners
        NV = len(vmap)
        xm = XMesh(name=name, positions=pos[vmap], face_sizes=sizes.copy(), face_indices=corner_vertex[src])
        if normals is not None and L:
            n = back.directions(normals)
            length = np.linalg.norm(n, axis=1, keepdims=True)
            n = n / np.where(length > 0, length, 1.0)
            xn, n_idx = dedupe_rows(n)
            xm.normals = xn
            xm.normal_face_sizes = sizes.copy()
            xm.normal_face_indices = n_idx[src]
        if uvs is not None:
            rep = np.full(NV, -1, dtype=np.int64)
            rep[corner_vertex] = np.arange(L)
            u = np.zeros((NV, 2))
            has = rep >= 0
            u[has] = uvs[rep[has]]
            u[:, 1] = 1.0 - u[:, 1]
            xm.uvs = u
        if m.colors is not None and len(m.colors) == V:
            c = np.ones((V, 4))
            cc = np.asarray(m.colors, dtype=np.float64).reshape(V, -1)[:, :4]
            c[:, :cc.shape[1]] = cc
            xm.vertex_colors = c[vmap]
        if m.materials:
            xm.materials = [self.material(int(i)) for i in m.materials]
            fm = np.zeros(len(sizes), dtype=np.int64) if m.face_materials is None else \
                np.asarray(m.face_materials, dtype=np.int64).reshape(-1)
            xm.material_indices = np.clip(fm, 0, len(m.materials) - 1)
        if m.skin is not None and self.names:
            sk = m.skin
            wv = np.asarray(sk.vertex, dtype=np.int64)
            wj = np.asarray(sk.joint, dtype=np.int64)
            ww = np.asarray(sk.weight, dtype=np.float64)
            if NV > V:      # split vertices carry their source's weights
                order = np.argsort(vmap, kind="stable")
                count = np.bincount(vmap, minlength=V)
                first = np.concatenate(([0], np.cumsum(count)[:-1]))
                rep_n = count[wv]
                pick = np.repeat(first[wv], rep_n) + (np.arange(int(rep_n.sum())) - np.repeat(
                    np.cumsum(rep_n) - rep_n, rep_n))
                wv, wj, ww = order[pick], np.repeat(wj, rep_n), np.repeat(ww, rep_n)
            offsets = col(back.matrices(ib))
            for k, j in enumerate(np.asarray(sk.joints, dtype=np.int64).tolist()):
                sel = np.flatnonzero(wj == j)
                sel = sel[np.argsort(wv[sel], kind="stable")]
                xm.skin_weights.append(XSkinWeights(frame_name=self.names[j], vertex_indices=wv[sel],
                                                    weights=ww[sel], matrix_offset=offsets[k].copy()))
        return xm

    def meshes(self, xf: XFile, frames: list) -> None:
        from .model import XFrame

        taken = set(self.names)
        used_mesh: set[str] = set()
        for mi, m in enumerate(self.scene.meshes):
            parent = int(m.parent) if frames else -1
            matrix = np.asarray(m.matrix, dtype=np.float64).reshape(4, 4)
            name = m.name or None
            # a Mesh named like a Frame makes `{ Name }` references ambiguous; an
            # unnamed mesh reads back with its frame's name anyway
            if name is not None and (name in taken or name in used_mesh):
                name = None
            if name is not None:
                used_mesh.add(name)
            if parent >= 0:
                bake = None if _is_identity(matrix) else matrix
                frames[parent].meshes.append(self.mesh(m, name, bake))
            elif _is_identity(matrix) or (m.parent >= 0 and not frames):
                xf.meshes.append(self.mesh(m, name, None))
            else:       # a frame of its own; an unnamed mesh reads back with the frame's name
                fname = _unique_names([m.name or f"mesh{mi}"], taken, "mesh")[0]
                fr = XFrame(fname, col(self.back.matrices(matrix)),
                            meshes=[self.mesh(m, None if name == fname else name, None)])
                xf.frames.append(fr)

    # -- animation ---------------------------------------------------------
    @staticmethod
    def keyed(clip: Clip) -> bool:
        """A clip written key for key (it came from .X): no sampler, a tick
        rate, slerp between keys (as .X readers interpolate)."""
        return clip.sampler is None and clip.ticks_per_second is not None and clip.rotation_mode == "slerp"

    def file_ticks(self) -> float:
        if self.tps_option:
            return float(self.tps_option)
        for c in self.scene.clips:
            if self.keyed(c):
                return float(c.ticks_per_second)
        return float(DEFAULT_TICKS_PER_SECOND)

    def _keys(self, local_file: np.ndarray, ticks: np.ndarray) -> list:
        """Keys of one joint from its file-space local matrices (K, 4, 4)."""
        from .model import XAnimationKey

        if self.key_type == "MATRIX":
            return [XAnimationKey(4, ticks, col(local_file).reshape(-1, 16))]
        t, r, s = sampling.decompose_trs(local_file)
        r = quat.make_continuous(quat.normalize(r), axis=0)
        return [XAnimationKey(0, ticks, key_from_rotation(r)), XAnimationKey(1, ticks, s),
                XAnimationKey(2, ticks, t)]

    def animation_set(self, clip: Clip, tps: float) -> XAnimationSet:
        from .model import XAnimation, XAnimationKey

        sk = self.scene.skeleton
        back = self.back
        aset = XAnimationSet(name=clip.name or None)
        joints = np.flatnonzero(clip.animated).tolist()
        if self.keyed(clip):
            rate = tps / float(clip.ticks_per_second)
            chans = {"r": clip.rotation, "s": clip.scale, "t": clip.translation}
            tracks = {c: {int(j): k for k, j in enumerate(ch.targets.tolist())} for c, ch in chans.items()}

            def track(c, j):
                k = tracks[c].get(j)
                if k is None:
                    return None
                ch = chans[c]
                lo, hi = ch.starts[k], ch.starts[k + 1]
                return ch.times[lo:hi], ch.values[lo:hi]

            if self.key_type == "MATRIX":
                all_t = [track(c, j)[0] for j in joints for c in "rst" if track(c, j) is not None]
                union = np.unique(np.concatenate(all_t)) if all_t else np.zeros(0)
                local = back.matrices(clip.sample_local(sk.local, union)) if len(union) else None
            for j in joints:
                anim = XAnimation(name=None, frame_name=self.names[j])
                what = clip.name
                if self.key_type == "MATRIX":
                    own = [track(c, j)[0] for c in "rst" if track(c, j) is not None]
                    if not own:
                        continue
                    times = np.unique(np.concatenate(own))
                    rows = np.searchsorted(union, times)
                    anim.keys.append(XAnimationKey(4, _whole_ticks(times * rate, what, self.warnings),
                                                   col(local[rows, j]).reshape(-1, 16)))
                else:
                    for kt, c in ((0, "r"), (1, "s"), (2, "t")):
                        tr = track(c, j)
                        if tr is None:
                            continue
                        times, v = tr
                        if c == "r":
                            v = key_from_rotation(quat.normalize(back.quats(v)))
                        elif c == "s":
                            v = back.scales(v)
                        else:
                            v = back.translations(v)
                        anim.keys.append(XAnimationKey(kt, _whole_ticks(times * rate, what, self.warnings), v))
                if anim.keys:
                    aset.animations.append(anim)
            return aset
        # any other clip: baked at every whole frame of the clip
        frames, times = clip.bake_frames(self.fps)
        if clip.cycle is not None and clip.cycle[1] - clip.cycle[0] > 0 and len(frames) > 1:
            frames, times = frames[:-1], times[:-1]      # not the cycle's wrap key
        f0, f1 = clip.frame_range(self.fps)
        outside = (frames < f0) | (frames > f1)
        if outside.any():     # the clip's own first and last times, not whole frames beyond them
            frames = np.clip(frames, f0, f1)             # (keeps the set's length)
            times = np.where(outside, clip.to_times(frames, self.fps), times)
        ticks = _whole_ticks(frames * tps / self.fps, clip.name, self.warnings)
        ticks, keep = np.unique(ticks, return_index=True)
        if not joints:
            return aset
        local = back.matrices(clip.sample_local(sk.local, times[keep])[:, joints])
        for a, j in enumerate(joints):
            anim = XAnimation(name=None, frame_name=self.names[j])
            anim.keys.extend(self._keys(local[:, a], ticks))
            aset.animations.append(anim)
        return aset

    def file(self) -> XFile:
        xf = XFile(version="0303")
        frames = self.frames(xf)
        self.meshes(xf, frames)
        if frames and self.scene.clips:
            tps = self.file_ticks()
            itps = int(round(tps))
            if itps < 1 or abs(itps - tps) > 1e-9:
                self.warnings.append(f"ticks per second {tps:g} is not a whole number: {max(itps, 1)} used")
                itps = max(itps, 1)
            rates = {float(c.ticks_per_second) for c in self.scene.clips if self.keyed(c)}
            if rates - {float(itps)}:
                self.warnings.append(f"key times rescaled from {', '.join(f'{r:g}' for r in sorted(rates))} "
                                     f"to {itps} ticks per second")
            xf.anim_ticks_per_second = itps
            xf.animation_sets = [self.animation_set(c, float(itps)) for c in self.scene.clips]
        elif self.scene.clips:
            self.warnings.append("the scene has animations but no skeleton: animations not written")
        return xf


def xfile_from_scene(scene: Scene, *, warnings: list[str] | None = None, fps: float = 24.0,
                     ticks_per_second: float | None = None, key_type: str = "TRS",
                     axes: AxisConversion | None = None, text: bool = True) -> XFile:
    """A scene as an XFile in file space (see :func:`write_scene`). ``text``:
    the file will be text (names are respelt; collisions are reported)."""
    warnings = warnings if warnings is not None else []
    key_type = str(key_type).upper()
    if key_type not in KEY_TYPES:
        raise ValueError(f"key_type must be one of {', '.join(KEY_TYPES)}, not {key_type!r}")
    if not (np.isfinite(fps) and fps > 0):
        raise ValueError(f"fps must be a positive number, not {fps!r}")
    if ticks_per_second is not None and not (np.isfinite(ticks_per_second) and ticks_per_second > 0):
        raise ValueError(f"ticks per second must be a positive number, not {ticks_per_second!r}")
    return _SceneWriter(scene, writer_axes(scene, axes), warnings, fps=fps, ticks_per_second=ticks_per_second,
                        key_type=key_type, text=text).file()


def write_scene(scene: Scene, path, *, warnings: list[str] | None = None, fmt: str = "text",
                float_size: int = 32, ticks_per_second: float | None = None, fps: float = 24.0,
                key_type: str = "TRS", axes: AxisConversion | None = None) -> list[str]:
    """Write ``scene`` as one .X file (text, binary, text_compressed or
    binary_compressed; 32 or 64-bit floats), converted back to file space
    (the inverse of ``axes``, else of the axes the scene was read with when
    it came from .X, else of :func:`default_axes`).

    One Frame per joint (FrameTransformMatrix = the joint's default local
    transform); meshes under their joint's frame (top-level, or under a
    frame of their own when placed by a matrix), vertices split where
    corners carry different UVs, SkinWeights with matrixOffset = the inverse
    bind. One AnimationSet per clip: a clip read from .X key for key; any
    other clip baked at its whole frames (``tick = frame * tps / fps``).
    ``key_type`` "TRS" (rotation, scale, position keys) or "MATRIX".
    Written to a temporary file and renamed over ``path``. Returns [path]."""
    from ..errors import FormatError
    from .writer import FORMATS as WRITER_FORMATS
    from .writer import write_xfile

    if fmt not in WRITER_FORMATS:
        raise FormatError(f"format must be one of {', '.join(WRITE_FORMATS)}, not {fmt!r}", path=path)
    if str(float_size) not in ("32", "64"):        # the operator's enum gives "32" / "64"
        raise FormatError(f"float size must be 32 or 64, not {float_size!r}", path=path)
    float_size = int(float_size)
    try:
        xf = xfile_from_scene(scene, warnings=warnings, fps=fps, ticks_per_second=ticks_per_second,
                              key_type=key_type, axes=axes, text=WRITER_FORMATS[fmt] in ("txt", "tzip"))
    except ValueError as err:
        if isinstance(err, FormatError):
            raise
        raise FormatError(f"cannot write: {err}", path=path) from None
    write_xfile(xf, path, fmt=fmt, float_size=int(float_size))
    return [str(path)]


def read_clips(skeleton: Skeleton, axes: AxisConversion, paths, *, layer: str = "ACTION", weight: float = 1.0,
               warnings: list[str] | None = None, ticks_per_second: float = 0.0) -> list[Clip]:
    """The AnimationSets of .X files as clips on another ``skeleton``,
    matching frames to joints by name (seed 002's rebinding): a set's keys
    replace the components of a joint's local transform that they key; the
    other components keep the target's own (its default pose). Frames with
    no joint of that name are reported."""
    from ..errors import FormatError
    from .reader import read_xfile

    warnings = warnings if warnings is not None else []
    index = skeleton.index()
    out = []
    for p in paths:
        src = scene_from_xfile(read_xfile(p), path=str(p), axes=axes, warnings=warnings,
                               ticks_per_second=ticks_per_second)
        if not src.clips:
            raise FormatError("the file has no AnimationSet", path=p)
        names = src.skeleton.names
        for clip in src.clips:
            moved = np.flatnonzero(clip.animated)
            missing = [names[j] for j in moved if names[j] not in index]
            if missing:
                warnings.append(f"{clip.name}: {len(missing)} animated frame(s) match no bone, skipped: "
                                f"{', '.join(missing[:8])}{' ...' if len(missing) > 8 else ''}")
            if len(missing) == len(moved) and len(moved):
                raise FormatError(f"{clip.name}: no animated frame matches a bone of the armature", path=p)
            out.append(_retarget(clip, names, index, len(skeleton), layer, weight))
    return out


def _retarget(clip: Clip, names: list[str], index: dict[str, int], n_joints: int, layer: str,
              weight: float) -> Clip:
    """``clip``'s channels moved from its own joints to those of the same name."""
    def move(ch: sampling.Channels, width: int) -> sampling.Channels:
        keep = [t for t, j in enumerate(ch.targets.tolist()) if names[j] in index]
        if not keep:
            return sampling.Channels.empty(width)
        times = [ch.times[ch.starts[t]:ch.starts[t + 1]] for t in keep]
        values = [ch.values[ch.starts[t]:ch.starts[t + 1]] for t in keep]
        targets = [index[names[int(ch.targets[t])]] for t in keep]
        return sampling.Channels.from_tracks(targets, times, values, width)

    animated = np.zeros(n_joints, dtype=bool)
    for j in np.flatnonzero(clip.animated):
        if names[j] in index:
            animated[index[names[j]]] = True
    return Clip(clip.name, move(clip.rotation, 4), move(clip.translation, 3), move(clip.scale, 3), animated,
                start=clip.start, end=clip.end, ticks_per_second=clip.ticks_per_second,
                rotation_mode=clip.rotation_mode, layer=layer, weight=float(weight))
