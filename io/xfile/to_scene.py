# SPDX-License-Identifier: GPL-3.0-or-later
"""DirectX .X -> scene: the reading half of the adapter (the conventions it
applies are in :mod:`.conventions`)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ...core import rig
from ...scene import AxisConversion, Clip, Mesh, Scene, Skeleton, Source
from ...scene.orientation import AutoAxes, read_oriented
from ...scene.validate import singular
from ..errors import AnimationsOnly, FormatError, Warnings, group
from .clips_in import ClipReader, first_keys
from .conventions import FORMAT, col
from .mesh_in import MeshReader
from .model import XFile, XMesh
from .names import joint_index
from .time_base import AUTO, TimeBase, choose

#: a singular frame that places nothing gets its flattened axes scaled by this
#: much of its largest axis (Blender needs an invertible matrix)
FLATTENED = 1e-5


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
    """One parsed .X file read into a scene: its frames as the skeleton, its
    meshes (:mod:`.mesh_in`), its AnimationSets as clips (:mod:`.clips_in`)."""

    def __init__(self, xf: XFile, axes: AxisConversion, path: str, warnings: list[str],
                 time_base: TimeBase | None = None, weld: bool = False):
        self.xf = xf
        self.weld = weld
        self.axes = axes
        self.path = path
        self.warnings = warnings
        self.frames = list(xf.all_frames())
        self.file_world = self._file_worlds()
        self.clip_reader = ClipReader(axes, warnings, time_base if time_base is not None
                                      else choose(xf, path=path))       # default: automatic

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
        by_name = self.by_name()        # (empty without frames)
        reader = MeshReader(self.axes, self.path, self.warnings, self.file_world, by_name, self.weld)
        world = None
        placed = self.placed()
        if sk is not None:
            self._loosen_singular(sk, placed, by_name)
            world = sk.world()
        meshes: list[Mesh] = []
        used: set[str] = set()
        for mi, (m, f) in enumerate(placed):
            mname = m.name or (sk.names[f] if f >= 0 and self.frames[f].name else f"{name}_mesh{mi}")
            if mname in used:
                mname = f"{mname}.{mi}"
            used.add(mname)
            meshes.append(reader.mesh(m, mname, f, sk, world))
        reader.report_turned()
        clips = []
        if sk is not None and reader.extra:
            sk = _with_joints(sk, reader.extra)
            world = sk.world()
        if sk is not None:
            rig.resolve_binds(sk.parents, sk.order, sk.local, world, sk.bind)
            clips = [self.clip_reader.clip(s, i, len(sk), by_name) for i, s in enumerate(self.xf.animation_sets)]
            self.clip_reader.report_shear()
        else:       # (a file without frames: every Animation names a frame it does not have)
            for i, s in enumerate(self.xf.animation_sets):
                self.clip_reader.unplaced(s.name or f"AnimationSet{i}", [str(a.frame_name) for a in s.animations])
        return Scene(name, sk, meshes, reader.materials, clips, Source(FORMAT, self.path, self.axes))

    def probe(self, name: str) -> Scene:
        """What the automatic up axis looks at (:func:`...scene.orientation.detect`),
        without the cost of a whole scene: the skeleton, each mesh's
        positions, frame and skin (no faces, normals, UVs or materials), and
        each AnimationSet's first pose (the earliest key of each of its keys)."""
        sk = self.skeleton()
        by_name = self.by_name()        # (empty without frames)
        reader = MeshReader(self.axes, self.path, self.warnings, self.file_world, by_name)
        world = sk.world() if sk is not None else None
        empty = np.zeros(0, dtype=np.int64)
        meshes = []
        for m, f in self.placed():
            mesh = Mesh(m.name or name, self.axes.points(m.positions), empty, empty, parent=f)
            if m.skin_weights and sk is not None:
                mesh.skin = reader.skin(m, mesh.name, sk, world, f)
            meshes.append(mesh)
        if sk is not None and reader.extra:
            sk = _with_joints(sk, reader.extra)
        clips = [self.clip_reader.clip(first_keys(aset), i, len(sk), by_name)
                 for i, aset in enumerate(self.xf.animation_sets if sk is not None else ())]
        return Scene(name, sk, meshes, [], clips, Source(FORMAT, self.path, self.axes))


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



def read_clips(skeleton: Skeleton, axes: AxisConversion, paths, *, playback: str = "ACTION", weight: float = 1.0,
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
        reader = ClipReader(axes, warnings, choose(xf, time_base, ticks_per_second, path=str(p)))
        # the rig's bones by name, or by the names the text writer respelt them to (a file written from this rig)
        index = joint_index(skeleton.names, {a.frame_name for s in xf.animation_sets for a in s.animations
                                             if a.frame_name is not None})
        clips = [reader.clip(s, i, len(skeleton), index, onto=True) for i, s in enumerate(xf.animation_sets)]
        reader.report_shear()
        for aset, clip in zip(xf.animation_sets, clips):
            if not clip.animated.any() and any(len(k.times) for a in aset.animations for k in a.keys):
                raise FormatError(f"{clip.name}: no animated frame matches a bone of the armature", path=p)
        for clip in apply(clips, str(p), ranges, warnings):
            clip.playback, clip.weight = playback, float(weight)
            out.append(clip)
    return out
