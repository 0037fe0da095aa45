# SPDX-License-Identifier: GPL-3.0-or-later
"""Blender rig -> RiTE RAM/RAA. Works on any rig: meshes are triangulated on
the fly (the scene is not modified), normals and UVs deduplicated into their
own id lists, weights from vertex groups that name bones, bone axes become
joint orientation/rotation. Files are written to a temporary file and renamed
(io.rite writers), so a failed export never leaves a half-written file."""
from __future__ import annotations

import json
from pathlib import Path

import bpy
import numpy as np

from ..core import quat
from ..io.rite import RaaAnimation, RaaTrack, RamModel, RiteJoint, write_raa, write_ram
from .rite_import import RIG_KEY, STRIP_KEY, ImportFailed, find_armature

NORMAL_ATTR = "rite_normal"  # exact file normals kept by the importer (Blender space)


class ExportFailed(ImportFailed):
    pass


def find_export_armature(context):
    arm = find_armature(context, prefer_selected=True)
    if arm is None:
        raise ExportFailed("select the armature to export")
    return arm


def skinned_meshes(context, arm_obj) -> list:
    out = []
    for o in context.scene.objects:
        if o.type != "MESH":
            continue
        if any(m.type == "ARMATURE" and m.object == arm_obj for m in o.modifiers) or o.parent == arm_obj:
            out.append(o)
    return out


def _inverse_conversion(arm_obj, axis_conversion, global_scale):
    d = json.loads(arm_obj.data.get(RIG_KEY, "{}") or "{}")
    if axis_conversion is not None:
        C, s = np.asarray(axis_conversion, dtype=np.float64), float(global_scale)
    elif d:
        C, s = np.array(d["C"]), float(d["scale"])
    else:
        C, s = np.array([[1.0, 0, 0], [0, 0, -1], [0, 1, 0]]), 1.0  # Y-up file <- Blender Z-up
    return C, s, d


def rig_joints(arm_obj, C, s, stored) -> tuple[list[RiteJoint], list[str], np.ndarray]:
    """Joints from bones (armature space -> file space). Uses the importer's
    stored orientation/rotation split where the bones still agree with it."""
    bones = list(arm_obj.data.bones)
    if stored:  # the file's joint order first (Blender lists bones parents-first)
        known = [arm_obj.data.bones[n] for n in stored["bones"] if n in arm_obj.data.bones]
        bones = known + [b for b in bones if b.name not in set(stored["bones"])]
    names = [b.name for b in bones]
    index = {n: i for i, n in enumerate(names)}
    rest = np.array([np.array(b.matrix_local) for b in bones]).reshape(-1, 4, 4)
    x = np.tile([0, 0, 0, 1.0], (len(bones), 1))
    stored_by_bone = {}
    if stored:
        for j, bn in enumerate(stored["bones"]):
            stored_by_bone[bn] = j
        for i, n in enumerate(names):
            if n in stored_by_bone:
                x[i] = stored["x"][stored_by_bone[n]]
    Ct = C.T
    world_r = quat.mul(quat.from_mat3(Ct @ rest[:, :3, :3]), quat.conj(x))
    world_t = (rest[:, :3, 3] @ Ct.T) / s
    joints = []
    for i, b in enumerate(bones):
        p = index[b.parent.name] if b.parent else -1
        if p >= 0:
            lr = quat.mul(quat.conj(world_r[p]), world_r[i])
            lt = quat.rotate(quat.conj(world_r[p]), world_t[i] - world_t[p])
        else:
            lr, lt = world_r[i], world_t[i]
        ori, rot = lr, np.array([0, 0, 0, 1.0])
        j = stored_by_bone.get(b.name)
        if j is not None:
            s_ori = np.array(stored["orientation"][j])
            s_rot = np.array(stored["rotation"][j])
            s_tr = np.array(stored["translation"][j])
            if abs(abs(quat.dot(quat.mul(s_ori, s_rot), lr)) - 1.0) < 1e-9 and np.allclose(s_tr, lt, atol=1e-5):
                ori, rot, lt = s_ori, s_rot, s_tr
        joints.append(RiteJoint(stored["names"][j] if j is not None else b.name, p, ori, lt, rot))
    return joints, names, x


def _mesh_data(context, obj, apply_modifiers: bool):
    """A triangulable copy of the mesh without armature deformation."""
    if not apply_modifiers:
        return obj.data, None
    saved = [(m, m.show_viewport) for m in obj.modifiers if m.type == "ARMATURE"]
    try:
        for m, _ in saved:
            m.show_viewport = False
        dg = context.evaluated_depsgraph_get()
        ev = obj.evaluated_get(dg)
        me = ev.to_mesh(preserve_all_data_layers=True, depsgraph=dg)
        return me, ev
    finally:
        for m, v in saved:
            m.show_viewport = v
        context.view_layer.update()


def _dedupe(rows: np.ndarray):
    """Exact duplicate rows merged: (unique rows, index of each row's unique).

    Sorts a 64-bit hash of the rows' bits (one 1-D argsort instead of
    np.unique's row-wise sort); equal rows end up adjacent and are merged,
    rows that merely share a hash are never merged."""
    r = np.ascontiguousarray(rows, dtype=np.float64) + 0.0   # -0.0 -> 0.0
    if len(r) == 0:
        return r, np.zeros(0, dtype=np.int64)
    bits = r.view(np.uint64).reshape(len(r), -1)
    h = np.zeros(len(r), dtype=np.uint64)
    with np.errstate(over="ignore"):
        for k in range(bits.shape[1]):
            h = (h ^ bits[:, k]) * np.uint64(0x9E3779B97F4A7C15)
    order = np.argsort(h, kind="stable")
    rs = r[order]
    first = np.ones(len(r), dtype=bool)
    first[1:] = np.any(rs[1:] != rs[:-1], axis=1)
    inverse = np.empty(len(r), dtype=np.int64)
    inverse[order] = np.cumsum(first) - 1
    return rs[first], inverse


def build_ram(context, arm_obj, *, apply_modifiers=False, axis_conversion=None, global_scale=1.0,
              warnings: list[str] | None = None) -> tuple[RamModel, list[str], np.ndarray]:
    warnings = warnings if warnings is not None else []
    C, s, stored = _inverse_conversion(arm_obj, axis_conversion, global_scale)
    joints, bone_names, x = rig_joints(arm_obj, C, s, stored)
    bone_index = {n: i for i, n in enumerate(bone_names)}
    meshes = skinned_meshes(context, arm_obj)
    if not meshes:
        raise ExportFailed(f"{arm_obj.name} has no skinned mesh to export")
    arm_inv = np.linalg.inv(np.array(arm_obj.matrix_world))
    P, N, UV, TV, SH, WV, WJ, WW = [], [], [], [], [], [], [], []
    v_off = 0
    mesh_name = meshes[0].name
    for obj in meshes:
        me, ev = _mesh_data(context, obj, apply_modifiers)
        try:
            V = len(me.vertices)
            co = np.empty(V * 3, dtype=np.float32)
            me.vertices.foreach_get("co", co)
            m = arm_inv @ np.array(obj.matrix_world)
            pos = co.reshape(-1, 3).astype(np.float64) @ m[:3, :3].T + m[:3, 3]
            me.calc_loop_triangles()
            T = len(me.loop_triangles)
            tri_loops = np.empty(T * 3, dtype=np.int32)
            me.loop_triangles.foreach_get("loops", tri_loops)
            tri_verts = np.empty(T * 3, dtype=np.int32)
            me.loop_triangles.foreach_get("vertices", tri_verts)
            tri_poly = np.empty(T, dtype=np.int32)
            me.loop_triangles.foreach_get("polygon_index", tri_poly)
            mat_idx = np.empty(len(me.polygons), dtype=np.int32)
            me.polygons.foreach_get("material_index", mat_idx)
            L = len(me.loops)
            attr = me.attributes.get(NORMAL_ATTR)
            if attr is not None and attr.domain == "CORNER" and len(attr.data) == L:
                cn = np.empty(L * 3, dtype=np.float32)
                attr.data.foreach_get("vector", cn)
            else:
                cn = np.empty(L * 3, dtype=np.float32)
                me.corner_normals.foreach_get("vector", cn)
            cn = cn.reshape(-1, 3).astype(np.float64) @ (m[:3, :3] / np.linalg.norm(m[:3, :3], axis=0)).T
            uv_layer = me.uv_layers.active
            if uv_layer is not None:
                uv = np.empty(L * 2, dtype=np.float32)
                uv_layer.data.foreach_get("uv", uv)
                uv = uv.reshape(-1, 2).astype(np.float64)
            else:
                uv = np.zeros((L, 2))
            shader = np.array([_shader_id(me, i) for i in range(max(len(me.materials), 1))])
            # weights: vertex groups that name bones
            gmap = {g.index: bone_index.get(g.name) for g in obj.vertex_groups}
            if any(v is None for v in gmap.values()):
                skipped = [g.name for g in obj.vertex_groups if bone_index.get(g.name) is None]
                warnings.append(f"{obj.name}: vertex groups without a bone ignored: {', '.join(skipped[:8])}")
            for vert in me.vertices:
                for g in vert.groups:
                    j = gmap.get(g.group)
                    if j is not None and g.weight > 0.0:
                        WV.append(v_off + vert.index)
                        WJ.append(j)
                        WW.append(g.weight)
            P.append(pos)
            N.append(cn[tri_loops])
            UV.append(uv[tri_loops])
            TV.append(tri_verts.reshape(-1, 3) + v_off)
            SH.append(shader[np.clip(mat_idx[tri_poly], 0, len(shader) - 1)])
            v_off += V
        finally:
            if ev is not None:
                ev.to_mesh_clear()
    pos = np.concatenate(P) @ C / s          # Blender -> file: C^T p / s
    corner_n = np.concatenate(N) @ C
    corner_uv = np.concatenate(UV)
    normals, n_idx = _dedupe(corner_n)
    uvs, uv_idx = _dedupe(corner_uv)
    ram = RamModel(mesh_name=mesh_name, joints=joints, positions=pos, normals=normals, uvs=uvs,
                   tri_shader=np.concatenate(SH), tri_vertices=np.concatenate(TV),
                   tri_normals=n_idx.reshape(-1, 3), tri_uvs=uv_idx.reshape(-1, 3),
                   weight_vertex=np.array(WV, dtype=np.int64), weight_joint=np.array(WJ, dtype=np.int64),
                   weight_value=np.array(WW, dtype=np.float64))
    if stored and stored.get("mesh_name"):
        ram.mesh_name = stored["mesh_name"]
    return ram, bone_names, x


def _shader_id(me, slot: int) -> int:
    if slot >= len(me.materials) or me.materials[slot] is None:
        return slot
    name = me.materials[slot].name
    tail = name.rsplit("_shader", 1)
    if len(tail) == 2 and tail[1].isdigit():
        return int(tail[1])
    return slot


def action_bones(action, bone_names) -> dict:
    """{bone: {channel: fcurves}} of an action's pose-bone F-curves (any slot)."""
    out: dict = {}
    for layer in action.layers:
        for strip in layer.strips:
            for bag in strip.channelbags:
                for fc in bag.fcurves:
                    path = fc.data_path
                    if not path.startswith('pose.bones["'):
                        continue
                    bone = path[len('pose.bones["'):].split('"]', 1)[0]
                    bone = bone.replace('\\"', '"').replace("\\\\", "\\")
                    chan = path.rsplit(".", 1)[-1]
                    if bone in bone_names:
                        out.setdefault(bone, {}).setdefault(chan, {})[fc.array_index] = fc
    return out


def build_raa(action, arm_obj, joints: list[RiteJoint], bone_names: list[str], x: np.ndarray,
              warnings: list[str]) -> RaaAnimation:
    """Rotation tracks: r = bind * x * basis * conj(x) at the action's keys."""
    meta = json.loads(action.get(STRIP_KEY, "{}") or "{}")
    chans = action_bones(action, bone_names)
    moved = []
    tracks = []
    index = {n: i for i, n in enumerate(bone_names)}
    f0, f1 = action.frame_range
    frame_count = int(meta.get("frames") or int(round(f1)) + 1)
    for bone, ch in chans.items():
        for kind, rest_value in (("location", 0.0), ("scale", 1.0)):
            for fc in ch.get(kind, {}).values():
                kp = np.empty(len(fc.keyframe_points) * 2, dtype=np.float32)
                fc.keyframe_points.foreach_get("co", kp)
                if np.any(np.abs(kp[1::2] - rest_value) > 1e-6):
                    moved.append(bone)
        rq = ch.get("rotation_quaternion")
        if not rq or len(rq) < 4:
            if ch.get("rotation_euler"):
                warnings.append(f"{action.name}: bone {bone!r} uses Euler rotation: not exported "
                                f"(use quaternion rotation)")
            continue
        original = meta.get("keys", {}).get(bone)
        if original:  # imported from a .raa: its own key frames, original signs
            frames = [f for f, _ in original]
            signs = np.array([sg for _, sg in original], dtype=np.float64)
        else:  # any other action: a key on every frame, so RiTE playback equals Blender's
            frames = list(range(max(int(np.floor(f0)), 0), frame_count))
            signs = np.ones(len(frames))
        if not frames:
            continue
        wxyz = np.array([[rq[i].evaluate(f) for i in range(4)] for f in frames])
        basis = np.concatenate((wxyz[:, 1:], wxyz[:, :1]), axis=1)
        j = index[bone]
        bind = quat.normalize(joints[j].rotation)
        r = quat.mul(quat.mul(bind, x[j]), quat.mul(basis, quat.conj(x[j]))) * signs[:, None]
        tracks.append(RaaTrack(joint_id=j, joint_name=joints[j].name, frames=np.array(frames), rotations=r))
    if moved:
        warnings.append(f"{action.name}: RAA carries rotations only; location/scale keys ignored on "
                        f"bones: {', '.join(sorted(set(moved))[:12])}")
    tracks.sort(key=lambda t: t.joint_id)
    return RaaAnimation(name=action.name, frame_count=frame_count, frame_count_given=True, tracks=tracks)


def rig_actions(arm_obj, bone_names) -> list:
    out = []
    for a in bpy.data.actions:
        if action_bones(a, bone_names):
            out.append(a)
    return out


def save_ram(context, filepath: str, *, armature=None, export_animations=False, apply_modifiers=False,
             axis_conversion=None, global_scale=1.0) -> list[str]:
    warnings: list[str] = []
    arm_obj = armature or find_export_armature(context)
    ram, bone_names, x = build_ram(context, arm_obj, apply_modifiers=apply_modifiers,
                                   axis_conversion=axis_conversion, global_scale=global_scale,
                                   warnings=warnings)
    anims = []
    if export_animations:
        for action in rig_actions(arm_obj, bone_names):
            anims.append(build_raa(action, arm_obj, ram.joints, bone_names, x, warnings))
    write_ram(ram, filepath)
    for a in anims:
        write_raa(a, Path(filepath).with_name(bpy.path.clean_name(a.name, replace="_") + ".raa"))
    return warnings


def save_raa(context, filepath: str, *, armature=None, action=None) -> list[str]:
    warnings: list[str] = []
    arm_obj = armature or find_export_armature(context)
    action = action or (arm_obj.animation_data.action if arm_obj.animation_data else None)
    if action is None:
        raise ExportFailed(f"{arm_obj.name} has no active action to export")
    C, s, stored = _inverse_conversion(arm_obj, None, 1.0)
    joints, bone_names, x = rig_joints(arm_obj, C, s, stored)
    write_raa(build_raa(action, arm_obj, joints, bone_names, x, warnings), filepath)
    return warnings
