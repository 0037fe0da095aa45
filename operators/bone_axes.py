# SPDX-License-Identifier: GPL-3.0-or-later
"""An existing rig made ready for animations it could not play exactly:

* connected bones ignore their pose location: a bone the animation moves
  (its pose location not zero) is disconnected first (:func:`free_bones`;
  its head stays where it is);
* bones turned to their joints' axes, for animations whose non-uniform
  scale keys a bone pointing elsewhere could not hold (its pose would need
  shear): :func:`turn_bones`.

 Each such bone gets the rest its joint's bind axes
give (``K`` a uniform scale); what depended on the old rest follows so that
nothing moves: the bone's keys in the rig's actions and its current pose
(``basis' = U^-1 basis U``, ``U`` the turn, the same rotation at every key
and so the same interpolation), objects parented to it, and the rest split
stored on the rig. Skinning is unchanged (``pose @ rest^-1`` is)."""
from __future__ import annotations

import bpy
import numpy as np
from mathutils import Matrix

from ..core import quat, rig, rotation_modes
from . import fcurves, metadata
from .armature_build import scale_on_axes, still_heads
from .armature_extract import Rig


def bones_to_free(r: Rig, clips, size: float) -> list[str]:
    """Names of connected bones whose pose location ``clips`` move."""
    connected = np.array([r.obj.data.bones[r.bone_names[int(j)]].use_connect for j in r.bones], dtype=bool)
    if not connected.any():
        return []
    r.scene.clips = list(clips)
    try:
        still = still_heads(r.scene, r.bones, r.rest, size)
    finally:
        r.scene.clips = []
    return [r.bone_names[int(j)] for j in r.bones[connected & ~still]]


def free_bones(context, arm_obj, names: list[str]) -> None:
    """Disconnect bones ``names`` from their parents (heads unchanged)."""
    prev_active = context.view_layer.objects.active
    context.view_layer.objects.active = arm_obj
    bpy.ops.object.mode_set(mode="EDIT")
    try:
        for n in names:
            arm_obj.data.edit_bones[n].use_connect = False
    finally:
        bpy.ops.object.mode_set(mode="OBJECT")
        context.view_layer.objects.active = prev_active


def bones_to_turn(r: Rig, clips) -> list[int]:
    """Bone indices (into ``r.bones``) whose joints ``clips`` scale
    non-uniformly while the bone's axes are not its joint's (``K`` not a
    uniform scale times a signed permutation)."""
    r.scene.clips = list(clips)
    try:
        scaled = scale_on_axes(r.scene)
    finally:
        r.scene.clips = []
    k = r.rest.rest_to_bind[:, :3, :3]
    unit = k / np.maximum(np.cbrt(np.abs(np.linalg.det(k))), 1e-300)[:, None, None]
    permuted = (np.abs(np.abs(unit) - np.round(np.abs(unit))).max(axis=(1, 2)) <= 1e-6)
    return [bi for bi, j in enumerate(r.bones.tolist()) if scaled[j] and not permuted[bi]]


def _rig_actions(arm_obj) -> list:
    ad = arm_obj.animation_data
    if ad is None:
        return []
    out = [ad.action] if ad.action is not None else []
    for tr in ad.nla_tracks:
        for st in tr.strips:
            if st.action is not None and st.action not in out:
                out.append(st.action)
    return out


def _curves(action, bone: str) -> dict[str, dict[int, object]]:
    prefix = f'pose.bones["{bpy.utils.escape_identifier(bone)}"].'
    out: dict[str, dict[int, object]] = {}
    for fc in fcurves.fcurves(action):
        if fc.data_path.startswith(prefix):
            out.setdefault(fc.data_path[len(prefix):], {})[fc.array_index] = fc
    return out


def _turn_keys(curves: dict, u: np.ndarray, mode: str) -> None:
    """Rewrite a bone's location and rotation curves for the basis ``U^-1 basis U``."""
    uq = quat.from_mat3(u)

    def columns(prop, width):
        fcs = curves.get(prop, {})
        if len(fcs) != width:
            return None
        n = [len(fcs[c].keyframe_points) for c in range(width)]
        if len(set(n)) != 1:
            return None
        co = [np.empty(2 * n[0], dtype=np.float32) for _ in range(width)]
        for c in range(width):
            fcs[c].keyframe_points.foreach_get("co", co[c])
        frames = co[0][0::2]
        if any(not np.array_equal(co[c][0::2], frames) for c in range(width)):
            return None
        return fcs, frames, np.stack([x[1::2] for x in co], axis=1).astype(np.float64)

    def store(fcs, frames, vals):
        for c, fc in fcs.items():
            co = np.empty(2 * len(frames), dtype=np.float32)
            co[0::2], co[1::2] = frames, vals[:, c]
            fc.keyframe_points.foreach_set("co", co)
            fc.update()

    got = columns("location", 3)
    if got is not None:
        store(got[0], got[1], got[2] @ u)            # U^-1 loc = U^T loc
    if mode == rotation_modes.QUATERNION:
        got = columns("rotation_quaternion", 4)
        if got is not None:
            q = got[2][:, [1, 2, 3, 0]]
            q = quat.mul(quat.mul(quat.conj(uq)[None], q), uq[None])
            store(got[0], got[1], q[:, [3, 0, 1, 2]])
    elif mode == rotation_modes.AXIS_ANGLE:
        got = columns("rotation_axis_angle", 4)
        if got is not None:
            v = got[2].copy()
            v[:, 1:] = v[:, 1:] @ u
            store(got[0], got[1], v)
    else:
        got = columns("rotation_euler", 3)
        if got is not None:          # exact at the keys (Euler angles do not turn linearly)
            q = rotation_modes.quaternions(mode, got[2])[:, [1, 2, 3, 0]]
            q = quat.mul(quat.mul(quat.conj(uq)[None], q), uq[None])
            store(got[0], got[1], rotation_modes.keys(mode, q[:, [3, 0, 1, 2]])[1])


def turn_bones(context, r: Rig, bis: list[int]) -> list[str]:
    """Turn bones ``bis`` of rig ``r`` to their joints' bind axes (see the
    module doc). Returns their names."""
    arm_obj = r.obj
    names = [r.bone_names[int(r.bones[bi])] for bi in bis]
    bones = arm_obj.data.bones
    old = {n: np.array(bones[n].matrix_local, dtype=np.float64) for n in names}
    k_of = {n: r.rest.rest_to_bind[bi] for n, bi in zip(names, bis)}
    new = {}
    for n in names:
        bind = old[n] @ k_of[n]
        m = rig.orthonormal(bind)
        m[:3, 3] = old[n][:3, 3]
        new[n] = m
    children = {n: [c for c in arm_obj.children if c.parent_type == "BONE" and c.parent_bone == n]
                for n in names}
    prev_active = context.view_layer.objects.active
    context.view_layer.objects.active = arm_obj
    bpy.ops.object.mode_set(mode="EDIT")
    try:
        for n in names:
            eb = arm_obj.data.edit_bones[n]
            for c in eb.children:
                c.use_connect = False
            length = eb.length
            eb.matrix = Matrix(new[n].tolist())
            eb.length = length
    finally:
        bpy.ops.object.mode_set(mode="OBJECT")
        context.view_layer.objects.active = prev_active
    meta = metadata.load(arm_obj, metadata.RIG_KEY)
    order = {int(j): i for i, j in enumerate(r.bones)}
    for n, bi in zip(names, bis):
        rest = np.array(bones[n].matrix_local, dtype=np.float64)
        u = np.linalg.inv(old[n])[:3, :3] @ rest[:3, :3]
        pb = arm_obj.pose.bones[n]
        for action in _rig_actions(arm_obj):
            _turn_keys(_curves(action, n), u, pb.rotation_mode)
        basis = np.array(pb.matrix_basis, dtype=np.float64)
        turn = np.eye(4)
        turn[:3, :3] = u
        pb.matrix_basis = Matrix((np.linalg.inv(turn) @ basis @ turn).tolist())
        tail = np.eye(4)
        tail[1, 3] = bones[n].length
        for obj in children[n]:          # the bone's matrix is now pose @ U: they keep their place
            inv = np.array(obj.matrix_parent_inverse, dtype=np.float64)
            obj.matrix_parent_inverse = Matrix((np.linalg.inv(tail) @ np.linalg.inv(turn) @ tail @ inv).tolist())
        if meta is not None and "K" in meta:
            K = np.array(meta["K"], dtype=np.float64).reshape(-1, 4, 4)
            K[order[int(r.bones[bi])]] = np.linalg.inv(rest) @ old[n] @ k_of[n]
            meta["K"] = K.reshape(-1, 16)
    if meta is not None:
        metadata.store(arm_obj, metadata.RIG_KEY, meta)
    context.view_layer.update()
    return names


def prepare(context, r: Rig, clips, warnings: list[str]) -> Rig:
    """Rig ``r`` made ready for ``clips`` (see the module doc); reports what
    changed. Returns the rig as it now is."""
    from ..scene import evaluate
    from .armature_extract import rig_of

    free = bones_to_free(r, clips, evaluate.size(r.scene))
    if free:
        free_bones(context, r.obj, free)
        r = rig_of(r.obj)
        warnings.append(f"{len(free)} bone(s) disconnected from their parents, since the animation moves their "
                        f"heads: {', '.join(free[:8])}{' ...' if len(free) > 8 else ''}")
    turn = bones_to_turn(r, clips)
    if turn:
        names = turn_bones(context, r, turn)
        r = rig_of(r.obj)
        warnings.append(f"{len(names)} bone(s) turned to their joints' axes, since the animation scales them "
                        f"non-uniformly (a bone pointing elsewhere cannot hold that scale; the rig's actions "
                        f"follow): {', '.join(names[:8])}{' ...' if len(names) > 8 else ''}")
    return r
