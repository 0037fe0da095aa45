# SPDX-License-Identifier: GPL-3.0-or-later
"""Scene -> DirectX .X: the writing half of the adapter (the conventions it
applies are in :mod:`.conventions`)."""
from __future__ import annotations

import numpy as np

from ...core import quat, sampling
from ...core.faces import corner_order
from ...scene import AxisConversion, Clip, Mesh, Scene
from ...scene.validate import MAX_FRAME, check_frame_count
from ..errors import FormatError, Warnings
from ..rows import dedupe_rows
from .conventions import DEFAULT_TICKS_PER_SECOND, FORMAT, col, default_axes, key_from_rotation, shown_alpha
from .key_tables import MAX_KEY_TIME
from .model import XAnimationSet, XFile, XMaterial, XMesh
from .names import file_names, report, text_identifier

KEY_TYPES = ("TRS", "MATRIX")


def writer_axes(scene: Scene, axes: AxisConversion | None = None) -> AxisConversion:
    """The conversion this format's writer inverts (``Scene.writer_axes``)."""
    return scene.writer_axes(FORMAT, default_axes(), axes)


def _is_identity(m: np.ndarray) -> bool:
    return bool(np.array_equal(np.asarray(m, dtype=np.float64), np.eye(4)))


#: AnimTicksPerSecond is a DWORD
MAX_TICKS_PER_SECOND = 2 ** 32 - 1


def check_ticks(ticks: np.ndarray, what: str) -> None:
    """Key times the file can hold: a DWORD below 2^31 (what D3DX and our
    reader take); past that, FormatError saying which settings to change."""
    if len(ticks) and not (np.isfinite(ticks).all() and np.abs(ticks).max() < MAX_KEY_TIME):
        peak = float(np.nanmax(np.abs(np.where(np.isfinite(ticks), ticks, np.inf))))
        raise FormatError(f"{what}: key times reach {peak:.4g} ticks, past the .X limit of {MAX_KEY_TIME - 1}: "
                          f"set a lower Ticks per Second (--ticks-per-second), a higher frame rate (the scene's, "
                          f"or convert's --fps), or shorten the animation")


def _whole_ticks(times: np.ndarray, what: str, warnings: list[str]) -> np.ndarray:
    """Key times as whole ticks (a DWORD in the file)."""
    ticks = np.round(np.asarray(times, dtype=np.float64))
    check_ticks(ticks, what)
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
        mats = [m.name for m in scene.materials]
        self.material_names, changed = file_names(mats, text=text, fallback="material",
                                                  keep_empty=set(range(len(mats))))
        if changed:
            warnings.append(report("material", changed, text))
        clips = [c.name for c in scene.clips]
        self.set_names, changed = file_names(clips, text=text, fallback="set", keep_empty=set(range(len(clips))))
        if changed:
            warnings.append(report("animation", changed, text))

    # -- frames ------------------------------------------------------------
    def frames(self, xf: XFile) -> list:
        from .model import XFrame

        sk = self.scene.skeleton
        if sk is None or not len(sk):
            self.names = []
            return []
        # an unnamed frame nothing refers to by name stays unnamed (as assimp and D3DX read it)
        referenced = {int(j) for m in self.scene.meshes if m.skin is not None for j in m.skin.joints}
        referenced |= {int(j) for c in self.scene.clips for j in np.flatnonzero(c.animated)}
        was = set((sk.extras.get("xfile") or {}).get("unnamed", ())) if self.scene.source.format == FORMAT else set()
        unnamed = {j for j, n in enumerate(sk.names)
                   if (not n or (j in was and n == f"frame{j}")) and j not in referenced}
        names, changed = file_names(["" if j in unnamed else n for j, n in enumerate(sk.names)], text=self.text,
                                    fallback="frame", keep_empty=unnamed)
        if changed:
            self.warnings.append(report("joint", changed, self.text))
        self.names = names
        mats = col(self.back.matrices(sk.local))
        frames = [XFrame(n or None, mats[j].copy()) for j, n in enumerate(names)]
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
            written = (m.extras.get("xfile") or {}).get("alpha") if isinstance(m.extras, dict) else None
            if isinstance(written, (int, float)) and rgba[3] == shown_alpha(float(written)):
                rgba[3] = float(written)        # the file's own alpha, which the reader showed as rgba[3]
            xm = XMaterial(name=self.material_names[index] or None, face_color=rgba, power=float(m.specular_power),
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
        src = corner_order(sizes, self.reversed_faces(m, sizes))   # file corner k = scene corner src[k]
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
                if not len(sel):        # a joint that moves no vertex: no block (assimp cannot read an empty one)
                    continue
                sel = sel[np.argsort(wv[sel], kind="stable")]
                xm.skin_weights.append(XSkinWeights(frame_name=self.names[j], vertex_indices=wv[sel],
                                                    weights=ww[sel], matrix_offset=offsets[k].copy()))
        return xm

    def reversed_faces(self, m: Mesh, sizes: np.ndarray) -> np.ndarray:
        """(F,) bool: the faces whose corners are written in reverse: all when
        the conversion mirrors, and again those the reader turned to follow
        the file's normals (``extras["xfile"]["turned"]``: "all", or face
        indices while the mesh still has the faces it was read with)."""
        rev = np.full(len(sizes), self.back.mirrors)
        turned = (m.extras.get("xfile") or {}).get("turned") if isinstance(m.extras, dict) else None
        if turned == "all":
            rev = ~rev
        elif isinstance(turned, list) and turned:
            idx = np.asarray(turned, dtype=np.int64)
            if idx.min() >= 0 and idx.max() < len(sizes) and (m.extras["xfile"].get("faces") == len(sizes)):
                rev[idx] = ~rev[idx]
            else:
                self.warnings.append(f"mesh {m.name!r}: faces changed since the import; written as Blender "
                                     f"shows them")
        return rev

    def meshes(self, xf: XFile, frames: list) -> None:
        from .model import XFrame

        taken = set(self.names)
        used_mesh: set[str] = set()
        for mi, m in enumerate(self.scene.meshes):
            parent = int(m.parent) if frames else -1
            matrix = np.asarray(m.matrix, dtype=np.float64).reshape(4, 4)
            name = (text_identifier(m.name) if self.text else m.name) or None
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
                fname = file_names([name or f"mesh{mi}"], text=False, fallback="mesh", taken=taken)[0][0]
                fr = XFrame(fname, col(self.back.matrices(matrix)),
                            meshes=[self.mesh(m, None if name == fname else name, None)])
                xf.frames.append(fr)

    # -- animation ---------------------------------------------------------
    @staticmethod
    def keyed(clip: Clip) -> bool:
        """A clip written key for key: no sampler, slerp between keys (as .X
        readers interpolate): a set read from .X, or one sampled where each
        key is what it shows (Blender's export)."""
        return clip.sampler is None and clip.rotation_mode == "slerp"

    def own_rate(self, clip: Clip) -> float | None:
        """The ticks per second of a clip read from .X (read at one tick per
        frame: the frame rate), else None."""
        if clip.ticks_per_second is not None:
            return float(clip.ticks_per_second)
        if (clip.extras.get("xfile") or {}).get("time_base") == "FRAMES":
            return float(self.fps)
        return None

    def clip_rate(self, clip: Clip) -> float:
        """A keyed clip's clip units per second (a clip without a tick rate counts scene frames)."""
        rate = self.own_rate(clip)
        return self.fps if rate is None else rate

    def file_ticks(self) -> float:
        """The option's ticks per second, else the time base the first clip
        read from .X was read with (keyed, or imported and baked: its ticks
        come back as they were, one per frame for a file read at one tick per
        frame), else 4800."""
        if self.tps_option:
            return float(self.tps_option)
        for c in self.scene.clips:
            rate = self.own_rate(c)
            if rate is not None:
                return rate
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
        aset = XAnimationSet(name=self.set_names[self.scene.clips.index(clip)] or None)
        joints = np.flatnonzero(clip.animated).tolist()
        if self.keyed(clip):
            rate = tps / self.clip_rate(clip)
            first = min((float(ch.times.min()) for ch in (clip.rotation, clip.translation, clip.scale)
                         if len(ch.times)), default=0.0)
            shift = -first if first < 0 else 0.0     # ticks are unsigned: a set starting before 0 moves
            if shift:
                self.warnings.append(f"{clip.name}: starts {shift * rate / tps * self.fps:g} frame(s) before 0; "
                                     f"written from tick 0 (every key that much later)")
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
                    anim.keys.append(XAnimationKey(4, _whole_ticks((times + shift) * rate, what, self.warnings),
                                                   col(local[rows, j]).reshape(-1, 16)))
                else:
                    for kt, c in ((0, "r"), (1, "s"), (2, "t")):
                        tr = track(c, j)
                        if tr is None:
                            continue
                        times, v = tr
                        if c == "r":
                            v = key_from_rotation(back.quats(v))     # as read: a non-unit key is the file's own
                        elif c == "s":
                            v = back.scales(v)
                        else:
                            v = back.translations(v)
                        anim.keys.append(XAnimationKey(kt, _whole_ticks((times + shift) * rate, what, self.warnings),
                                                       v))
                if anim.keys:
                    aset.animations.append(anim)
            return aset
        # any other clip: baked at every whole frame of the clip
        check_frame_count(clip, self.fps, MAX_FRAME)     # before baking them (Blender's range)
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
            if itps > MAX_TICKS_PER_SECOND:
                raise FormatError(f"ticks per second {itps} is past the .X limit of {MAX_TICKS_PER_SECOND} (a DWORD): "
                                  f"set a lower Ticks per Second (--ticks-per-second)")
            rates = {r for r in (self.own_rate(c) for c in self.scene.clips if self.keyed(c)) if r is not None}
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
    warnings = warnings if warnings is not None else Warnings()
    key_type = str(key_type).upper()
    if key_type not in KEY_TYPES:
        raise FormatError(f"key_type must be one of {', '.join(KEY_TYPES)}, not {key_type!r}")
    if not (np.isfinite(fps) and fps > 0):
        raise FormatError(f"fps must be a positive number, not {fps!r}")
    if ticks_per_second is not None and not (np.isfinite(ticks_per_second) and ticks_per_second > 0):
        raise FormatError(f"ticks per second must be a positive number, not {ticks_per_second!r}")
    return _SceneWriter(scene, writer_axes(scene, axes), warnings, fps=fps, ticks_per_second=ticks_per_second,
                        key_type=key_type, text=text).file()


def write_scene(scene: Scene, path, *, warnings: list[str] | None = None, storage: str = "text",
                float_size: int | str = 32, ticks_per_second: float | None = None, fps: float = 24.0,
                key_type: str = "TRS", axes: AxisConversion | None = None) -> list[str]:
    """Write ``scene`` as one .X file (``storage``: text, binary,
    text_compressed or binary_compressed; 32 or 64-bit floats; the
    options of :data:`.options.EXPORT_OPTIONS`), converted back to file space
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
    from .options import STORAGE
    from .writer import write_xfile

    if storage not in STORAGE.values:
        raise FormatError(f"storage must be one of {', '.join(STORAGE.values)}, not {storage!r}", path=path)
    if str(float_size) not in ("32", "64"):        # the operator's enum gives "32" / "64"
        raise FormatError(f"float size must be 32 or 64, not {float_size!r}", path=path)
    float_size = int(float_size)
    try:
        xf = xfile_from_scene(scene, warnings=warnings, fps=fps, ticks_per_second=ticks_per_second or None,
                              key_type=key_type, axes=axes, text=storage.startswith("text"))
    except FormatError as err:
        if err.path is None:
            raise FormatError(err.message, path=path) from None
        raise
    write_xfile(xf, path, storage=storage, float_size=float_size)
    return [str(path)]

