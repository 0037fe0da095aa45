# SPDX-License-Identifier: GPL-3.0-or-later
"""RiTE import: ``load_ram`` / ``load_raa`` do the work (the operators are
thin, as in Blender's io_anim_bvh). Everything is parsed and checked before
any Blender data is created; a failure while building removes what was
created, so a failed import leaves the scene as it was."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import bpy
import numpy as np

from ..core import quat
from ..io.errors import FormatError
from ..io.rite import RamModel, read_raa, read_ram
from ..io.rite.playback import RiteRig
from . import anim_build, rite_build

RIG_KEY = "legacy_skin_io_rite"
STRIP_KEY = "legacy_skin_io_rite_stack"


class ImportFailed(Exception):
    """A user-facing import failure (message already names file and line)."""


@dataclass
class RamImport:
    armature: object
    mesh: object
    rig: RiteRig
    bone_names: list[str]
    x: np.ndarray
    conv: rite_build.Conversion
    warnings: list[str] = field(default_factory=list)


def _progress(context):
    wm = getattr(context, "window_manager", None)
    return wm if wm is not None and getattr(context, "window", None) is not None else None


def _cleanup(ids) -> None:
    for idb in reversed(ids):
        try:
            coll = {bpy.types.Object: bpy.data.objects, bpy.types.Mesh: bpy.data.meshes,
                    bpy.types.Armature: bpy.data.armatures, bpy.types.Action: bpy.data.actions,
                    bpy.types.Material: bpy.data.materials}.get(type(idb))
            if coll is not None and idb.name in coll:
                coll.remove(idb)
        except ReferenceError:
            pass


def load_ram(context, filepath: str, *, axis_conversion=None, global_scale: float = 1.0,
             point_bones_at_children: bool = False, ram: RamModel | None = None) -> RamImport:
    """Import a .ram: an armature and its skinned mesh. Raises ImportFailed."""
    warnings: list[str] = []
    try:
        if ram is None:
            ram = read_ram(filepath, warnings=warnings)
        rig = RiteRig.from_ram(ram)
    except (FormatError, ValueError) as err:
        raise ImportFailed(str(err)) from err
    conv = rite_build.Conversion(np.eye(3) if axis_conversion is None else np.array(axis_conversion),
                                 global_scale)
    name = ram.mesh_name or Path(filepath).stem
    before = {coll: set(coll) for coll in (bpy.data.objects, bpy.data.meshes, bpy.data.armatures,
                                           bpy.data.materials)}
    wm = _progress(context)
    if wm:
        wm.progress_begin(0, 3)
    try:
        arm_obj, bone_names, x = rite_build.build_armature(context, rig, name + "_rig", conv,
                                                           point_bones_at_children, warnings)
        if wm:
            wm.progress_update(1)
        mesh_obj = rite_build.build_mesh(context, rig, name, conv, arm_obj, bone_names, warnings)
        if wm:
            wm.progress_update(2)
    except Exception:
        created = [i for coll, old in before.items() for i in coll if i not in old]
        _cleanup(created)
        raise
    finally:
        if wm:
            wm.progress_end()
    arm_obj.data[RIG_KEY] = json.dumps({
        "names": rig.names, "bones": bone_names, "parents": rig.skel.parents.tolist(),
        "orientation": rig.orientation.tolist(), "translation": rig.translation.tolist(),
        "rotation": rig.bind_rotation.tolist(), "x": x.tolist(),
        "C": conv.C.tolist(), "scale": conv.s, "source": str(filepath), "mesh_name": ram.mesh_name})
    for o in context.view_layer.objects:
        o.select_set(False)
    mesh_obj.select_set(True)
    arm_obj.select_set(True)
    context.view_layer.objects.active = arm_obj
    return RamImport(arm_obj, mesh_obj, rig, bone_names, x, conv, warnings)


def rig_from_armature(arm_obj) -> tuple[RiteRig, list[str], np.ndarray]:
    """The RiTE rig stored on an armature imported from a .ram; for any other
    armature, a rig whose joints are the bones at rest (bind rotation =
    identity, so keys are rotations relative to the rest pose)."""
    data = arm_obj.data.get(RIG_KEY)
    if data:
        d = json.loads(data)
        ram = RamModel(mesh_name="", joints=[])
        from ..io.rite import RiteJoint
        ram.joints = [RiteJoint(n, p, o, t, r) for n, p, o, t, r in
                      zip(d["names"], d["parents"], d["orientation"], d["translation"], d["rotation"])]
        return RiteRig.from_ram(ram), d["bones"], np.array(d["x"]).reshape(-1, 4)
    from ..io.rite import RiteJoint
    bones = list(arm_obj.data.bones)
    index = {b.name: i for i, b in enumerate(bones)}
    joints = []
    for b in bones:
        p = index[b.parent.name] if b.parent else -1
        local = np.array(b.matrix_local) if p < 0 else \
            np.linalg.inv(np.array(b.parent.matrix_local)) @ np.array(b.matrix_local)
        joints.append(RiteJoint(b.name, p, quat.from_mat3(local[:3, :3]), local[:3, 3], [0, 0, 0, 1.0]))
    ram = RamModel(mesh_name="", joints=joints)
    return RiteRig.from_ram(ram), [b.name for b in bones], np.tile([0, 0, 0, 1.0], (len(bones), 1))


def find_armature(context, prefer_selected: bool = False):
    """The armature to work on: (the only selected one,) the active object or
    its parent, or the scene's only armature; None if ambiguous."""
    if prefer_selected:
        sel = [o for o in context.selected_objects if o.type == "ARMATURE"]
        if len(sel) == 1:
            return sel[0]
    obj = context.active_object
    if obj is not None and obj.type == "ARMATURE":
        return obj
    if obj is not None and obj.parent is not None and obj.parent.type == "ARMATURE":
        return obj.parent
    arms = [o for o in context.scene.objects if o.type == "ARMATURE"]
    return arms[0] if len(arms) == 1 else None


def load_raa(context, filepaths: list[str], *, armature=None, mode: str = "ACTION", weight: float = 1.0,
             keys_only: bool = False, set_frame_range: bool = True):
    """Import .raa files onto an armature: one action per file, named after it.

    mode ``ACTION``: the first file's action becomes the active action (the
    others are kept with a fake user); ``MERGEABLE`` / ``DOMINANT``: each
    becomes an NLA track in the RiTE Animator's order (mergeable tracks
    weighted, below the dominant ones). Returns (actions, bound clips, warnings).
    """
    arm_obj = armature or find_armature(context)
    if arm_obj is None:
        raise ImportFailed("no armature to animate: select the armature (import a .ram first)")
    warnings: list[str] = []
    rig, bone_names, x = rig_from_armature(arm_obj)
    if not arm_obj.data.get(RIG_KEY):
        warnings.append(f"{arm_obj.name} was not imported from a .ram: keys are applied relative to its rest pose")
    parsed = []
    try:
        for fp in filepaths:
            anim = read_raa(fp, warnings=warnings)
            bound = rig.bind(anim, warnings)
            parsed.append((fp, bound))
    except (FormatError, ValueError) as err:
        raise ImportFailed(str(err)) from err
    for fp, bound in parsed:
        if len(bound.joints) == 0:
            raise ImportFailed(f"{Path(fp).name}: no track matches a joint of {arm_obj.name}")
    actions = []
    created = []
    wm = _progress(context)
    if wm:
        wm.progress_begin(0, len(parsed))
    try:
        for i, (fp, bound) in enumerate(parsed):
            action, slot = rite_build.build_action(arm_obj, rig, bound, bone_names, x, Path(fp).stem,
                                                   keys_only=keys_only)
            created.append(action)
            action[STRIP_KEY] = json.dumps({"mode": mode, "weight": float(weight),
                                            "frames": int(bound.frame_count),
                                            "keys": rite_build.key_signs(bound, bone_names, keys_only)})
            actions.append((action, slot, bound))
            if wm:
                wm.progress_update(i + 1)
        if mode == "ACTION":
            first_action, first_slot, _ = actions[0]
            anim_build.assign_action(arm_obj, first_action, first_slot)
            for a, _, _ in actions[1:]:
                a.use_fake_user = True
            end = actions[0][2].frame_count - 1
        else:
            end = _rebuild_stack(arm_obj, [(a, s, mode, weight) for a, s, _ in actions])
    except Exception:
        _cleanup(created)
        raise
    finally:
        if wm:
            wm.progress_end()
    if set_frame_range:
        context.scene.frame_start = 0
        context.scene.frame_end = max(int(end), 1)
    return [a for a, _, _ in actions], [b for _, _, b in actions], warnings


def _rebuild_stack(arm_obj, new: list) -> int:
    """(Re)build the RiTE NLA stack: existing RiTE tracks plus ``new``
    (action, slot, mode, weight); mergeable tracks first (weights turned into
    Replace influences w_i / (w_1 + ... + w_i)), dominant ones on top, every
    strip repeated to loop as the Animator does up to the longest one."""
    from ..core.blend import mergeable_influences

    ad = arm_obj.animation_data or arm_obj.animation_data_create()
    entries = []
    for tr in list(ad.nla_tracks):
        meta = _track_meta(tr)
        if meta:
            st = tr.strips[0]
            entries.append((st.action, st.action_slot, meta["mode"], meta["weight"]))
            ad.nla_tracks.remove(tr)
    entries += new
    merge = [e for e in entries if e[2] != "DOMINANT"]
    dom = [e for e in entries if e[2] == "DOMINANT"]
    infl = list(mergeable_influences([e[3] for e in merge])) + [1.0] * len(dom)
    frames = [json.loads(e[0][STRIP_KEY])["frames"] for e in merge + dom]
    end = max(max(f - 1 for f in frames), 1)
    prev = None
    # keep any non-RiTE tracks below ours
    others = list(ad.nla_tracks)
    if others:
        prev = others[-1]
    for (action, slot, mode, weight), inf, n in zip(merge + dom, infl, frames):
        tr = ad.nla_tracks.new(prev=prev)
        tr.name = action.name
        action[STRIP_KEY] = json.dumps({**json.loads(action[STRIP_KEY]), "mode": mode, "weight": float(weight)})
        # frame 0 shows action frame 0; from frame 1 on the loop 1..N-1 repeats
        # (action frames [1, N], key N = frame 1), as the RiTE Animator plays.
        strips = [tr.strips.new(action.name, 0, action)]
        strips[0].action_frame_start, strips[0].action_frame_end = 0.0, 1.0
        strips[0].frame_end = 1.0
        if n >= 2:
            loop = tr.strips.new(action.name + " loop", 1, action)
            loop.action_frame_start, loop.action_frame_end = 1.0, float(n)
            period = n - 1
            # loop well past the longest clip, so every track keeps looping
            loop.repeat = float(int(np.floor(10 * end / period)) + 2)
            strips.append(loop)
        for st in strips:
            st.action_slot = slot
            st.blend_type = "REPLACE"
            st.extrapolation = "HOLD_FORWARD" if prev is not None else "HOLD"
            if inf < 1.0:
                st.use_animated_influence = True
                for fc in st.fcurves:
                    if fc.data_path == "influence":
                        for kp in fc.keyframe_points:
                            kp.co[1] = inf
                        fc.update()
                st.influence = inf
        prev = tr
    ad.action = None
    return end


def _track_meta(track):
    """The RiTE stack metadata of an NLA track made by this importer, or None
    (the metadata lives on the strip's action: tracks hold no ID properties)."""
    if not 1 <= len(track.strips) <= 2 or track.strips[0].action is None:
        return None
    meta = track.strips[0].action.get(STRIP_KEY)
    if not meta:
        return None
    m = json.loads(meta)
    return m if m.get("mode") in ("MERGEABLE", "DOMINANT") else None
