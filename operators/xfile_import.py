# SPDX-License-Identifier: GPL-3.0-or-later
"""DirectX .X import: ``load_x`` does the work (the operators are thin).

The file is parsed and checked before any Blender data is created; a failure
while building removes everything created, so a failed import leaves the
scene as it was. ``verify_x`` compares Blender's evaluated meshes with the
core's evaluation of the parsed file (io.xfile.playback), frame by frame.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import bpy
import numpy as np
from mathutils import Matrix

from ..io.errors import FormatError
from ..io.xfile import XFile, read_xfile
from ..io.xfile.playback import DEFAULT_AXES, Handedness, XRig, bone_selection
from . import anim_build, xfile_build
from .verify import FrameError, Report, evaluated_world

META_KEY = "legacy_skin_io_xfile"
MESH_KEY = "legacy_skin_io_xfile_mesh"
MIRROR_Z = np.diag([1.0, 1.0, -1.0])


class ImportFailed(Exception):
    """A user-facing import failure (message names the file and where)."""


@dataclass
class XImport:
    rig: XRig
    conv: Handedness
    armature: object | None
    rig_build: object | None
    meshes: dict[int, object]          # rig mesh index -> mesh object
    actions: list = field(default_factory=list)   # (action, slot, clip)
    baked: bool = False
    warnings: list[str] = field(default_factory=list)


def handedness(axis_conversion=None, global_scale: float = 1.0) -> Handedness:
    """File -> Blender: Direct3D's z -> -z (handedness), then the rotation of
    the Forward/Up options (default -Z forward, Y up: (x, y, z) -> (x, z, y))."""
    if axis_conversion is None:
        return Handedness(DEFAULT_AXES, global_scale)
    rot = np.asarray(axis_conversion, dtype=np.float64)[:3, :3]
    return Handedness(rot @ MIRROR_Z, global_scale)


def _progress(context):
    wm = getattr(context, "window_manager", None)
    return wm if wm is not None and getattr(context, "window", None) is not None else None


_COLLECTIONS = ("objects", "meshes", "armatures", "materials", "actions", "images")


def _snapshot():
    return {name: set(getattr(bpy.data, name)) for name in _COLLECTIONS}


def _cleanup(before) -> None:
    for name in reversed(_COLLECTIONS):
        coll = getattr(bpy.data, name)
        for idb in [i for i in coll if i not in before[name]]:
            try:
                coll.remove(idb)
            except (ReferenceError, RuntimeError):
                pass


def load_x(context, filepath: str, *, axis_conversion=None, global_scale: float = 1.0,
           every_frame_bone: bool = False, rest_from: str = "BIND", bake: bool = False,
           import_animations: bool = True, set_frame_range: bool = True,
           xfile: XFile | None = None) -> XImport:
    """Import a .X file: meshes, armature, one action per AnimationSet."""
    try:
        if xfile is None:
            xfile = read_xfile(filepath)
        rig = XRig.from_xfile(xfile)
    except FormatError as err:
        raise ImportFailed(str(err)) from err
    except (ValueError, np.linalg.LinAlgError) as err:
        raise ImportFailed(f"{Path(filepath).name}: {err}") from err
    if not rig.meshes and not rig.n_frames:
        raise ImportFailed(f"{Path(filepath).name}: no mesh and no frame to import")
    warnings = list(xfile.warnings) + list(rig.warnings)
    conv = handedness(axis_conversion, global_scale)
    stem = Path(filepath).stem
    before = _snapshot()
    wm = _progress(context)
    if wm:
        wm.progress_begin(0, 3)
    try:
        res = _build(context, rig, conv, stem, filepath, every_frame_bone, rest_from, bake,
                     import_animations, set_frame_range, warnings, wm)
    except Exception:
        _cleanup(before)
        raise
    finally:
        if wm:
            wm.progress_end()
    return res


def _build(context, rig, conv, stem, filepath, every_frame_bone, rest_from, bake, import_animations,
           set_frame_range, warnings, wm) -> XImport:
    sel = bone_selection(rig, every_frame_bone)
    rb = None
    if sel.any():
        rb = xfile_build.build_armature(context, rig, sel, stem, conv, rest_from, warnings)
        xfile_build.set_pose(rb, rb.pose_basis(conv.matrices(rig.world0)[None])[0])
        bad = np.nonzero(rig.bind_spread > 1e-5 * max(rig.size(), 1e-9))[0]
        if len(bad):
            warnings.append(f"{len(bad)} frame(s) have different bind poses in different meshes "
                            f"(first: {rig.names[bad[0]]!r}); the first mesh's is used")
    if wm:
        wm.progress_update(1)
    meshes: dict[int, object] = {}
    cache: dict = {}
    used = set()
    for mi, m in enumerate(rig.meshes):
        f = int(rig.mesh_frame[mi])
        name = m.name or (rig.names[f] if f >= 0 and rig.frames[f].name else f"{stem}_mesh{mi}")
        if name in used:
            name = f"{name}.{mi}"
        used.add(name)
        obj = xfile_build.build_mesh(context, rig, mi, name, conv, filepath, cache, warnings)
        obj[MESH_KEY] = mi
        meshes[mi] = obj
        mw = conv.matrices(rig.mesh_world0(mi))
        if rig.skins[mi] is not None and rb is not None:
            obj.parent = rb.obj
            obj.matrix_parent_inverse = Matrix.Identity(4)
            obj.matrix_basis = Matrix(mw.tolist())
            xfile_build.add_vertex_groups(obj, rig, mi, rb.bone_names)
            mod = obj.modifiers.new("Armature", "ARMATURE")
            mod.object = rb.obj
            sk = rig.skins[mi]
            if len(sk.vertex):
                total = np.bincount(sk.vertex, weights=sk.weight, minlength=len(m.positions))
                if np.any(total <= 1e-4):
                    warnings.append(f"mesh {name!r}: {int(np.sum(total <= 1e-4))} vertices without weights "
                                    f"(they follow the armature object only)")
        elif rb is not None and f >= 0 and f in rb.bone_names:
            bi = int(np.nonzero(rb.bones == f)[0][0])
            bone = rb.obj.data.bones[rb.bone_names[f]]
            obj.parent = rb.obj
            obj.parent_type = "BONE"
            obj.parent_bone = bone.name
            obj.matrix_parent_inverse = Matrix.Identity(4)
            tail = np.eye(4)
            tail[1, 3] = -bone.length
            obj.matrix_basis = Matrix((tail @ rb.K[bi]).tolist())
        else:
            obj.matrix_basis = Matrix(mw.tolist())
    if wm:
        wm.progress_update(2)
    res = XImport(rig, conv, rb.obj if rb else None, rb, meshes, [], False, warnings)
    scene = context.scene
    fps = scene.render.fps / scene.render.fps_base
    if rb is not None and import_animations and rig.clips:
        exact = rb.channel_mode_exact(rig)
        res.baked = bool(bake or not exact)
        if not bake and not exact:
            warnings.append("the rest pose cannot hold the bind pose exactly (non-uniform scale or rest "
                            "from the frame hierarchy): animation baked on every frame")
        ad = rb.obj.animation_data or rb.obj.animation_data_create()
        for clip in rig.clips:
            if res.baked:
                action, slot = xfile_build.build_action_baked(rb, rig, clip, fps, clip.name)
            else:
                action, slot = xfile_build.build_action_keys(rb, rig, clip, fps, clip.name)
            f0, f1 = xfile_build.clip_frames(rig, clip, fps)
            action.frame_range = (min(f0, 0.0), max(f1, f0 + 1.0))
            action.use_frame_range = True
            track = ad.nla_tracks.new()
            track.name = clip.name
            strip = track.strips.new(action.name, 0, action)
            strip.action_slot = slot
            track.mute = True
            res.actions.append((action, slot, clip))
        first, slot, _ = res.actions[0]
        anim_build.assign_action(rb.obj, first, slot)
        if set_frame_range:
            end = max(xfile_build.clip_frames(rig, c, fps)[1] for c in rig.clips)
            scene.frame_start = 0
            scene.frame_end = max(int(np.ceil(end - 1e-6)), 1)
    if rb is not None:
        rb.obj[META_KEY] = json.dumps({"C": res.conv.C.tolist(), "scale": res.conv.s, "baked": res.baked,
                                       "source": str(filepath)})
    for o in context.view_layer.objects:
        o.select_set(False)
    for o in list(meshes.values()) + ([rb.obj] if rb else []):
        o.select_set(True)
    context.view_layer.objects.active = rb.obj if rb else (next(iter(meshes.values()), None))
    return res


def show_default_pose(imp: XImport) -> None:
    """No active action; pose bones showing the FrameTransformMatrix hierarchy."""
    rb = imp.rig_build
    if rb.obj.animation_data is not None:
        rb.obj.animation_data.action = None
    xfile_build.set_pose(rb, rb.pose_basis(imp.conv.matrices(imp.rig.world0)[None])[0])


# ---------------------------------------------------------------------------
# verification

def verify_x(context, imp: XImport, rig: XRig, clip_index: int | None, frames, rot_mode: str,
             rel_tolerance: float = 1e-5) -> Report:
    """Blender's evaluated meshes (world space) against the core's evaluation
    of ``rig`` (a parse of the original file) mapped to Blender space, at each
    scene frame. ``clip_index`` selects the AnimationSet made the active
    action (None: the scene as it is against the frame matrices, e.g. after an
    import without animations or ``show_default_pose``)."""
    scene = context.scene
    fps = scene.render.fps / scene.render.fps_base
    clip = None
    if clip_index is not None:
        action, slot, _ = imp.actions[clip_index]
        anim_build.assign_action(imp.armature, action, slot)
        clip = rig.clips[clip_index]
    size = rig.size() * imp.conv.s
    infl = {mi: rig.influences(mi) for mi in imp.meshes if rig.skins[mi] is not None}
    out = []
    for f in frames:
        whole = int(np.floor(f))
        scene.frame_set(whole, subframe=float(f - whole))
        world = rig.sample_world(clip, rig.frames_to_ticks([f], fps), rot_mode)[0]
        errs = []
        for mi, obj in imp.meshes.items():
            got = evaluated_world(context, obj)
            want = imp.conv.points(rig.positions(mi, world, infl.get(mi)))
            errs.append(np.linalg.norm(got - want, axis=1))
        d = np.concatenate(errs) if errs else np.zeros(0)
        out.append(FrameError(float(f), float(d.max()) if len(d) else 0.0, float(d.mean()) if len(d) else 0.0))
    return Report(out, size, rel_tolerance * size)
