# SPDX-License-Identifier: GPL-3.0-or-later
"""What Blender shows of an action: the armature posed by the action alone
(NLA off) at scene frames, read from the evaluated pose bones (constraints,
drivers, every rotation mode and inheritance setting included), as FBX's
exporter bakes it. The scene is left as it was."""
from __future__ import annotations

import bpy
import numpy as np

from .armature_extract import matrix


def action_slot(action, arm_obj, slot=None):
    """The slot of ``action`` that animates ``arm_obj``: ``slot`` when given,
    else the one named for the object, else the first object slot."""
    if slot is not None:
        return slot
    slots = [s for s in getattr(action, "slots", ()) if getattr(s, "target_id_type", "OBJECT") == "OBJECT"]
    named = [s for s in slots if getattr(s, "name_display", None) == arm_obj.name]
    return (named or slots or [None])[0]


def posed_bones(context, arm_obj, action, slot, frames: np.ndarray, default_basis: np.ndarray) -> np.ndarray:
    """Armature-space matrices (F, B, 4, 4) of every pose bone (in
    ``arm_obj.pose.bones`` order) with ``action`` playing alone, at scene
    ``frames`` (fractions are subframes); channels the action does not key
    hold ``default_basis`` (B, 4, 4: the rig's default pose)."""
    scene = context.scene
    ad = arm_obj.animation_data or arm_obj.animation_data_create()
    saved = (ad.action, getattr(ad, "action_slot", None), ad.use_nla, ad.use_tweak_mode,
             scene.frame_current, scene.frame_subframe)
    # the rig's meshes need not deform while the bones are read
    deformers = [m for o in bpy.data.objects if o.type == "MESH" for m in o.modifiers
                 if m.type == "ARMATURE" and getattr(m, "object", None) == arm_obj and m.show_viewport]
    pbs = arm_obj.pose.bones
    out = np.empty((len(frames), len(pbs), 4, 4), dtype=np.float64)
    buf = np.empty(16 * len(pbs), dtype=np.float32)
    # a channel the action does not key would keep whatever it holds now: the default pose
    basis = np.empty(16 * len(pbs), dtype=np.float32)
    pbs.foreach_get("matrix_basis", basis)
    try:
        pbs.foreach_set("matrix_basis", np.swapaxes(default_basis, 1, 2).astype(np.float32).reshape(-1))
        for m in deformers:
            m.show_viewport = False
        if ad.use_tweak_mode:
            ad.use_tweak_mode = False
        ad.use_nla = False
        ad.action = action
        slot = action_slot(action, arm_obj, slot)
        if slot is not None and hasattr(ad, "action_slot"):
            ad.action_slot = slot
        for k, f in enumerate(np.asarray(frames, dtype=np.float64)):
            whole = int(np.floor(f))
            scene.frame_set(whole, subframe=float(f - whole))
            pbs.foreach_get("matrix", buf)
            # foreach_get gives each matrix column after column
            out[k] = np.swapaxes(buf.reshape(-1, 4, 4), 1, 2)
    finally:
        pbs.foreach_set("matrix_basis", basis)
        ad.action = saved[0]
        if saved[1] is not None and hasattr(ad, "action_slot") and saved[0] is not None:
            ad.action_slot = saved[1]
        ad.use_nla = saved[2]
        for m in deformers:
            m.show_viewport = True
        if saved[3] and not ad.use_tweak_mode:
            try:
                ad.use_tweak_mode = True
            except (RuntimeError, AttributeError, TypeError):
                pass
        scene.frame_set(saved[4], subframe=saved[5])
    return out


def joint_world(context, r, action, slot, frames: np.ndarray) -> np.ndarray:
    """World matrices (F, J, 4, 4) of the rig's joints with ``action``
    playing alone: a bone's joint follows its pose bone; a joint without a
    bone keeps its default local transform under its parent."""
    arm = r.obj
    index = {pb.name: i for i, pb in enumerate(arm.pose.bones)}
    default = np.broadcast_to(np.eye(4), (len(index), 4, 4)).copy()
    sk = r.skeleton
    if len(r.bones):
        pose = r.rest.pose_basis(sk.world()[r.bones][None])[0]
        for bi, j in enumerate(r.bones.tolist()):
            default[index[r.bone_names[int(j)]]] = pose[bi]
    posed = posed_bones(context, arm, action, slot, frames, default)
    arm_world = matrix(arm.matrix_world)
    F, J = len(frames), len(sk)
    world = np.empty((F, J, 4, 4))
    of_joint = {int(j): bi for bi, j in enumerate(r.bones.tolist())}
    for j in sk.order.tolist():
        b = of_joint.get(int(j))
        if b is not None:
            world[:, j] = arm_world @ posed[:, index[r.bone_names[int(j)]]] @ r.rest.rest_to_bind[b]
        else:
            p = int(sk.parents[j])
            world[:, j] = (world[:, p] if p >= 0 else np.eye(4)) @ sk.local[j]
    return world
