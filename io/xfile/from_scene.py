# SPDX-License-Identifier: GPL-3.0-or-later
"""Scene -> DirectX .X: the writing half of the adapter (the conventions it
applies are in :mod:`.conventions`)."""
from __future__ import annotations

from functools import cached_property
from pathlib import Path

import numpy as np

from ...scene import AxisConversion, Mesh, Scene
from ...scene.timeline import describe
from ..atomic import Batch
from ..errors import FormatError, Warnings, result
from ..paths import is_regular
from ..ranges import ranges_path, write_ranges
from .clips_out import ClipWriter
from .conventions import FORMAT, col, default_axes, shown_alpha
from .effects import write_maps
from .mesh_out import GPU_BONES, GPU_WEIGHTS, MeshOptions, xmesh
from .model import XFile, XMaterial, XMesh
from .names import file_names, report, text_identifier
from .targets import DARKBASIC, DIRECTX, IRRLICHT, TARGETS
from .templates import needed

KEY_TYPES = ("TRS", "MATRIX")


def writer_axes(scene: Scene, axes: AxisConversion | None = None) -> AxisConversion:
    """The conversion this format's writer inverts (``Scene.writer_axes``)."""
    return scene.writer_axes(FORMAT, default_axes(), axes)


def _is_identity(m: np.ndarray) -> bool:
    return bool(np.array_equal(np.asarray(m, dtype=np.float64), np.eye(4)))


#: what writing the meshes changed (``_SceneWriter.mesh_counts``), one line each
_MESH_LINES = {
    "limited": "Max Influences {m}: {n} vertices kept their {m} strongest bone weights, renormalised ({where})",
    "conflicts": "Irrlicht keeps one bind per bone: {n} vertices of meshes bound differently cannot follow their "
                 "bones exactly ({where})",
    "over_gpu": "{n} vertices have more than {g} bone weights, which DarkBASIC's and FPS Creator's bone shaders "
                "do not skin ({where}): set Max Influences to {g}",
    "bones": "meshes skinned by more than {b} bones, which DarkBASIC's and FPS Creator's bone shaders do not "
             "skin: {where}",
}


class _SceneWriter:
    """One scene -> XFile (see :func:`xfile_from_scene`): its frames, materials
    and meshes here (each mesh by :func:`.mesh_out.xmesh`), its clips by
    :class:`.clips_out.ClipWriter`."""

    def __init__(self, scene: Scene, axes: AxisConversion, warnings: list[str], *, fps: float,
                 ticks_per_second, key_type: str, text: bool, target: str = DIRECTX, max_influences: int = 0,
                 triangulate: bool = False):
        self.scene = scene
        self.back = axes.inverse()
        self.warnings = warnings
        self.text = text
        self.target = target
        self.max_influences = int(max_influences)
        self.triangulate = bool(triangulate)
        self.mesh_counts: dict[str, dict[str, int]] = {}    # what writing the meshes changed, per mesh
        self.material_cache: dict[int, XMaterial] = {}
        mats = [m.name for m in scene.materials]
        self.material_names, changed = file_names(mats, text=text, fallback="material",
                                                  keep_empty=set(range(len(mats))))
        if changed:
            warnings.append(report("material", changed, text))
        self.clip_writer = ClipWriter(scene, self.back, warnings, fps=fps, ticks_per_second=ticks_per_second,
                                      key_type=key_type, text=text, target=target)

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
            texture, more, effect, normal = write_maps(m)
            xm = XMaterial(name=self.material_names[index] or None, face_color=rgba, power=float(m.specular_power),
                           specular=np.asarray(m.specular, dtype=np.float64).reshape(-1)[:3].copy(),
                           emissive=np.asarray(m.emissive, dtype=np.float64).reshape(-1)[:3].copy(),
                           texture=texture, more_textures=more, effect=effect, normal_map=normal)
            self.material_cache[index] = xm
        return xm

    # -- meshes ------------------------------------------------------------
    def mesh(self, m: Mesh, name: str | None, fold: np.ndarray | None = None, *, on_binds: bool = False) -> XMesh:
        """An XMesh in file space (:func:`.mesh_out.xmesh`). ``fold`` (scene
        space) is folded into the vertices (a mesh whose placement under its
        joint has no frame); ``on_binds``: a skinned mesh in model space on
        the skeleton's binds (one offset per joint, as Irrlicht keeps)."""
        sizes = np.asarray(m.face_sizes, dtype=np.int64).reshape(-1)
        sk = self.scene.skeleton
        bind = sk.bind if on_binds and sk is not None else None
        placed_at = None
        if bind is not None:
            placed_at = np.asarray(m.matrix, dtype=np.float64)
            if m.parent >= 0:
                placed_at = self.default_world[int(m.parent)] @ placed_at
        xm, rep = xmesh(m, name, self.mesh_options(bind), self.reversed_faces(m, sizes), self.material,
                        fold=fold, placed_at=placed_at)
        label = m.name or name or "mesh"
        for what, n in (("limited", rep.limited), ("conflicts", rep.conflicts), ("over_gpu", rep.over_gpu)):
            if n:
                self.mesh_counts.setdefault(what, {})[label] = n
        if self.target == DARKBASIC and rep.bones > GPU_BONES:
            self.mesh_counts.setdefault("bones", {})[label] = rep.bones
        return xm

    @cached_property
    def default_world(self) -> np.ndarray:
        """(J, 4, 4) the joints' world matrices at the default pose."""
        sk = self.scene.skeleton
        return sk.world() if sk is not None else np.zeros((0, 4, 4))

    @cached_property
    def model_size(self) -> float:
        """The extent of the skeleton and the meshes (at least 1): the scale of the meshes' tolerances."""
        size = 1.0
        if len(self.default_world):
            size = max(size, float(np.ptp(self.default_world[:, :3, 3], axis=0).max()))
        pts = [np.asarray(m.positions).reshape(-1, 3) for m in self.scene.meshes if len(m.positions)]
        if pts:
            size = max(size, float(np.ptp(np.concatenate(pts), axis=0).max()))
        return size

    def mesh_options(self, bind) -> MeshOptions:
        return MeshOptions(self.back, self.names, self.target, self.triangulate, self.max_influences, bind,
                           self.model_size)

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
            on_binds = self.target == IRRLICHT and m.skin is not None and bool(frames)
            if on_binds:        # in model space, in a frame of its own (Irrlicht ignores it for a skinned mesh)
                matrix = np.eye(4)
            if parent >= 0 and not on_binds:
                fold = None if _is_identity(matrix) else matrix
                frames[parent].meshes.append(self.mesh(m, name, fold))
            elif not frames and (_is_identity(matrix) or m.parent >= 0):
                xf.meshes.append(self.mesh(m, name, None))
            else:
                # a frame of its own (beside the skeleton, as DirectX exporters place a skinned mesh: readers
                # such as Panda3D's skip top-level meshes of a file with frames); an unnamed mesh reads back
                # with the frame's name
                fname = file_names([name or f"mesh{mi}"], text=False, fallback="mesh", taken=taken)[0][0]
                taken.add(fname)
                fr = XFrame(fname, col(self.back.matrices(matrix)),
                            meshes=[self.mesh(m, None if name == fname else name, None, on_binds=on_binds)])
                xf.frames.append(fr)

    def report_meshes(self) -> None:
        """One line per kind of change writing the meshes made (:class:`.mesh_out.MeshReport`)."""
        for what, line in _MESH_LINES.items():
            counts = self.mesh_counts.get(what, {})
            if counts:
                where = ", ".join(f"{n!r} {k}" for n, k in list(counts.items())[:8])
                self.warnings.append(line.format(n=sum(counts.values()), where=where, m=self.max_influences,
                                                 g=GPU_WEIGHTS, b=GPU_BONES))

    def file(self) -> XFile:
        xf = XFile(version="0303")
        frames = self.frames(xf)
        self.meshes(xf, frames)
        self.report_meshes()
        if frames and self.scene.clips:
            self.clip_writer.write(xf, self.names)
        elif self.scene.clips:
            self.warnings.append("the scene has animations but no skeleton: animations not written")
        if self.target == DARKBASIC:
            xf.templates = needed(xf)
        return xf


def _scene_writer(scene: Scene, *, warnings: list[str] | None = None, fps: float = 24.0,
                  ticks_per_second: float | None = None, key_type: str = "TRS", axes: AxisConversion | None = None,
                  text: bool = True, target: str = DIRECTX, max_influences: int = 0,
                  triangulate: bool = False) -> _SceneWriter:
    warnings = warnings if warnings is not None else Warnings()
    key_type = str(key_type).upper()
    if key_type not in KEY_TYPES:
        raise FormatError(f"key_type must be one of {', '.join(KEY_TYPES)}, not {key_type!r}")
    target = str(target).upper()
    if target not in TARGETS:
        raise FormatError(f"target must be one of {', '.join(TARGETS)}, not {target!r}")
    if not (np.isfinite(fps) and fps > 0):
        raise FormatError(f"fps must be a positive number, not {fps!r}")
    if ticks_per_second is not None and not (np.isfinite(ticks_per_second) and ticks_per_second > 0):
        raise FormatError(f"ticks per second must be a positive number, not {ticks_per_second!r}")
    if not (0 <= int(max_influences) <= 255):
        raise FormatError(f"max influences must be 0 (no limit) to 255, not {max_influences!r}")
    return _SceneWriter(scene, writer_axes(scene, axes), warnings, fps=fps, ticks_per_second=ticks_per_second,
                        key_type=key_type, text=text, target=target, max_influences=int(max_influences),
                        triangulate=bool(triangulate))


def xfile_from_scene(scene: Scene, **options) -> XFile:
    """A scene as an XFile in file space (see :func:`write_scene`; its
    options but storage and float size; ``text``: the file will be text:
    names are respelt, collisions reported)."""
    return _scene_writer(scene, **options).file()


def write_scene(scene: Scene, path, *, warnings: list[str] | None = None, storage: str = "text",
                float_size: int | str = 32, ticks_per_second: float | None = None, fps: float = 24.0,
                key_type: str = "TRS", axes: AxisConversion | None = None, target: str = DIRECTX,
                max_influences: int = 0, triangulate: bool = False) -> list[str]:
    """Write ``scene`` as one .X file (``storage``: text, binary,
    text_compressed or binary_compressed; 32 or 64-bit floats; the
    options of :data:`.options.EXPORT_OPTIONS`), converted back to file space
    (the inverse of ``axes``, else of the axes the scene was read with when
    it came from .X, else of :func:`default_axes`).

    One Frame per joint (FrameTransformMatrix = the joint's default local
    transform); meshes under their joint's frame (or, with a skeleton or
    placed by a matrix, under a frame of their own; top-level otherwise),
    vertices split where corners carry different UVs or their faces
    different materials, SkinWeights with matrixOffset = the inverse bind
    (at most ``max_influences`` per vertex when above 0); every face a
    triangle with ``triangulate``. ``target`` DIRECTX: one AnimationSet per
    clip, a clip read from .X key for key, any other clip baked at its whole
    frames (``tick = frame * tps / fps``), ``key_type`` "TRS" (rotation,
    scale, position keys) or "MATRIX". A one-timeline target (IRRLICHT,
    DARKBASIC: :mod:`.targets`): every clip on one frame-numbered timeline,
    its frame ranges written beside the file (``STEM.ranges.json``, and for
    IRRLICHT ``STEM.ranges.lua``) and reported. Written to a temporary file
    and renamed over ``path``. Returns the paths written."""
    from .options import STORAGE
    from .targets import UNCOMPRESSED
    from .writer import write_xfile

    warnings = warnings if warnings is not None else Warnings()
    if storage not in STORAGE.values:
        raise FormatError(f"storage must be one of {', '.join(STORAGE.values)}, not {storage!r}", path=path)
    if str(float_size) not in ("32", "64"):        # the operator's enum gives "32" / "64"
        raise FormatError(f"float size must be 32 or 64, not {float_size!r}", path=path)
    float_size = int(float_size)
    target = str(target).upper()
    if target in UNCOMPRESSED and storage.endswith("_compressed"):
        plain = storage[:-len("_compressed")]
        warnings.append(f"{target.title()} reads no compressed .X file: written as {plain} (Storage)")
        storage = plain
    try:
        writer = _scene_writer(scene, warnings=warnings, fps=fps, ticks_per_second=ticks_per_second or None,
                               key_type=key_type, axes=axes, text=storage.startswith("text"), target=target,
                               max_influences=max_influences, triangulate=triangulate)
        xf = writer.file()
    except FormatError as err:
        if err.path is None:
            raise FormatError(err.message, path=path) from None
        raise
    written = [str(path)]
    clips = writer.clip_writer
    with Batch() as batch:          # the file and its frame ranges: all written, or none
        write_xfile(xf, path, storage=storage, float_size=float_size, batch=batch)
        if clips.placements:
            written += write_ranges(path, [p.range for p in clips.placements], clips.timeline_fps,
                                    lua=target == IRRLICHT, batch=batch)
    if clips.placements:
        result(warnings, describe(clips.placements, clips.timeline_fps))
    elif is_regular(ranges_path(path)):     # (False for a name the system refuses: too long)
        warnings.append(f"{ranges_path(path).name} beside the file is not this export's (a DirectX export has no "
                        f"frame ranges): an import of {Path(path).name} would cut its animations at its ranges")
    return written
