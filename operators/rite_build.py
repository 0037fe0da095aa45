# SPDX-License-Identifier: GPL-3.0-or-later
"""Blender data from a RiTE rig (io.rite.playback.RiteRig): armature, mesh,
vertex groups, materials, and actions from bound RAA clips."""
from __future__ import annotations

import bpy
import numpy as np

from ..core import quat
from ..io.rite.playback import BoundClip, RiteRig
from . import anim_build, bones

MIN_BONE_FRACTION = 2e-3   # bone length floor, as a fraction of the model size


class Conversion:
    """File space -> Blender space: rotation ``C`` (3x3) and uniform scale ``s``."""

    def __init__(self, rotation: np.ndarray, scale: float = 1.0):
        self.C = np.asarray(rotation, dtype=np.float64)[:3, :3]
        self.s = float(scale)

    def points(self, p: np.ndarray) -> np.ndarray:
        return (np.asarray(p) @ self.C.T) * self.s

    def directions(self, n: np.ndarray) -> np.ndarray:
        return np.asarray(n) @ self.C.T

    def rigid(self, m: np.ndarray) -> np.ndarray:
        """Rigid file-space matrices (..., 4, 4) -> Blender space (rotation
        conjugated by C, translation scaled)."""
        out = np.array(m, dtype=np.float64, copy=True)
        out[..., :3, :3] = self.C @ out[..., :3, :3]
        out[..., :3, 3] = self.points(out[..., :3, 3])
        return out

    def similarity(self) -> np.ndarray:
        m = np.eye(4)
        m[:3, :3] = self.C * self.s
        return m


def build_armature(context, rig: RiteRig, name: str, conv: Conversion, point_at_children: bool,
                   warnings: list[str]):
    """Armature object whose bone rest matrices are the joints' bind-pose
    world transforms (in Blender space). With ``point_at_children`` each bone
    is turned to point at its children (display only: the animation keys are
    computed against the actual rest matrices, so deformation is identical).

    Returns (object, bone names per joint, x (J, 4)): x is each bone's rest
    rotation relative to its joint's axes, read back from Blender."""
    arm = bpy.data.armatures.new(name)
    obj = bpy.data.objects.new(name, arm)
    context.collection.objects.link(obj)
    rest = conv.rigid(rig.bind_world)
    parents = rig.skel.parents
    kids = bones.children(parents)
    size = rig.size() * conv.s
    min_len = max(size * MIN_BONE_FRACTION, 1e-3)
    heads = rest[:, :3, 3]
    lengths = bones.bone_lengths(heads, parents, rig.skel.order, size, min_len)
    matrices = rest.copy()
    if point_at_children:
        for j in range(rig.n_joints):
            if kids[j]:
                target = np.mean(heads[kids[j]], axis=0) - heads[j]
                if np.linalg.norm(target) > min_len:
                    matrices[j, :3, :3] = _aim_y(rest[j, :3, :3], target)
    wanted = [n or f"joint{j}" for j, n in enumerate(rig.names)]
    bone_names = bones.create_bones(context, obj, wanted, parents, matrices, lengths)
    for w, got in zip(wanted, bone_names):
        if w != got:
            warnings.append(f"joint name {w!r} is a duplicate or too long: bone named {got!r}")
    actual = np.array([np.array(arm.bones[n].matrix_local) for n in bone_names]).reshape(-1, 4, 4)
    joint_q = quat.from_mat3(rest[:, :3, :3])
    bone_q = quat.from_mat3(actual[:, :3, :3])
    x = quat.mul(quat.conj(joint_q), bone_q)
    for n in bone_names:
        obj.pose.bones[n].rotation_mode = "QUATERNION"
    return obj, bone_names, x


def _aim_y(rot: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Rotation whose Y axis points along ``target``, closest to ``rot``."""
    y = target / np.linalg.norm(target)
    x = rot[:, 0] - y * np.dot(rot[:, 0], y)
    if np.linalg.norm(x) < 1e-6:
        x = rot[:, 2] - y * np.dot(rot[:, 2], y)
        x = np.cross(y, x)
    x /= np.linalg.norm(x)
    z = np.cross(x, y)
    return np.stack((x, y, z), axis=1)


def build_mesh(context, rig: RiteRig, name: str, conv: Conversion, arm_obj, bone_names: list[str],
               warnings: list[str]):
    """Triangle mesh: vertex i is the file's i-th vertex; custom split normals,
    UV map, one material slot per SHADER id, one vertex group per joint,
    Armature modifier, parented to the armature."""
    ram = rig.ram
    tv = ram.tri_vertices
    keep = (tv[:, 0] != tv[:, 1]) & (tv[:, 1] != tv[:, 2]) & (tv[:, 0] != tv[:, 2])
    if not keep.all():
        warnings.append(f"{int((~keep).sum())} degenerate triangles (a vertex used twice) skipped")
    tri_v = tv[keep]
    tri_n = ram.tri_normals[keep] if ram.tri_normals is not None else None
    tri_uv = ram.tri_uvs[keep] if ram.tri_uvs is not None else None
    tri_shader = ram.tri_shader[keep]
    me = bpy.data.meshes.new(name)
    V, T = len(ram.positions), len(tri_v)
    me.vertices.add(V)
    me.vertices.foreach_set("co", conv.points(ram.positions).astype(np.float32).reshape(-1))
    me.loops.add(3 * T)
    me.polygons.add(T)
    me.loops.foreach_set("vertex_index", tri_v.astype(np.int32).reshape(-1))
    me.polygons.foreach_set("loop_start", np.arange(0, 3 * T, 3, dtype=np.int32))
    shader_ids, mat_index = np.unique(tri_shader, return_inverse=True)
    me.polygons.foreach_set("material_index", mat_index.astype(np.int32))
    me.polygons.foreach_set("use_smooth", np.ones(T, dtype=bool))
    if tri_uv is not None and len(ram.uvs):
        uv = me.uv_layers.new(name="UVMap")
        uv.data.foreach_set("uv", ram.uvs[tri_uv.reshape(-1)].astype(np.float32).reshape(-1))
    me.update(calc_edges=True)
    if tri_n is not None and len(ram.normals):
        n = conv.directions(ram.normals[tri_n.reshape(-1)])
        length = np.linalg.norm(n, axis=1, keepdims=True)
        n = n / np.where(length > 0, length, 1.0)
        me.normals_split_custom_set(n.astype(np.float32))
        # the exact file normals, for a lossless export (custom split normals
        # are stored quantised); they are not used for display
        attr = me.attributes.new("rite_normal", "FLOAT_VECTOR", "CORNER")
        attr.data.foreach_set("vector", n.astype(np.float32).reshape(-1))
    palette = [(0.8, 0.62, 0.5), (0.25, 0.4, 0.7), (0.3, 0.3, 0.32), (0.15, 0.1, 0.08), (0.6, 0.6, 0.2)]
    for k, sid in enumerate(shader_ids):
        mat = bpy.data.materials.get(f"{name}_shader{sid}")
        if mat is None:  # RiTE shaders (.ras) are not part of the format: distinct colours per id
            mat = bpy.data.materials.new(f"{name}_shader{sid}")
            mat.diffuse_color = (*palette[k % len(palette)], 1.0)
            bsdf = mat.node_tree.nodes.get("Principled BSDF") if mat.node_tree else None
            if bsdf is not None:
                bsdf.inputs["Base Color"].default_value = (*palette[k % len(palette)], 1.0)
        me.materials.append(mat)
    obj = bpy.data.objects.new(name, me)
    context.collection.objects.link(obj)
    obj.parent = arm_obj
    groups = [obj.vertex_groups.new(name=n) for n in bone_names]
    wv, wj, ww = ram.weight_vertex, ram.weight_joint, ram.weight_value.astype(np.float32)
    if len(wv):
        order = np.lexsort((wv, ww, wj))
        wv, wj, ww = wv[order], wj[order], ww[order]
        brk = np.nonzero((np.diff(wj) != 0) | (np.diff(ww) != 0))[0] + 1
        for lo, hi in zip(np.r_[0, brk], np.r_[brk, len(wv)]):
            groups[int(wj[lo])].add(wv[lo:hi].tolist(), float(ww[lo]), "REPLACE")
        total = np.bincount(ram.weight_vertex, weights=ram.weight_value, minlength=V)
        off = np.abs(total - 1.0) > 1e-4
        if off.any():
            warnings.append(f"{int(off.sum())} vertices have weights that do not sum to 1 (kept as given; "
                            f"the RiTE runtime uses them as is, Blender divides by the sum)")
    unweighted = V - len(np.unique(ram.weight_vertex))
    if unweighted:
        warnings.append(f"{unweighted} vertices have no weights (they stay at their bind position in Blender)")
    mod = obj.modifiers.new("Armature", "ARMATURE")
    mod.object = arm_obj
    return obj


def bone_basis(rig: RiteRig, x: np.ndarray, joints: np.ndarray, rotations: np.ndarray) -> np.ndarray:
    """Pose-bone quaternions (x, y, z, w) for joint rotations (..., T, 4):
    ``conj(x) * conj(bind) * rotation * x``, the bone's rotation relative to
    its rest that reproduces the joint's local rotation."""
    b = quat.normalize(rig.bind_rotation[joints])
    xj = x[joints]
    return quat.mul(quat.mul(quat.conj(xj), quat.mul(quat.conj(b), rotations)), xj)


def build_action(arm_obj, rig: RiteRig, bound: BoundClip, bone_names: list[str], x: np.ndarray,
                 name: str, keys_only: bool = False):
    """One action with quaternion keys on the pose bones of bound tracks.

    Default: every frame 0..N-1 keyed with the RiTE playback (exact at every
    frame). ``keys_only``: only the file's keys, linear (approximate: Blender
    interpolates per component, the runtime slerps)."""
    action, slot, bag = anim_build.new_action_for(arm_obj, name)
    if keys_only:
        for t, tr_joint in enumerate(bound.joints):
            lo, hi = bound.clip.starts[t], bound.clip.starts[t + 1]
            frames = bound.clip.times[lo:hi]
            rot = quat.make_continuous(bound.clip.rotations[lo:hi])
            q = bone_basis(rig, x, np.full(len(frames), tr_joint), rot)
            _key_bone(bag, bone_names[tr_joint], frames, q)
    else:
        baked = bound.baked()                                     # (N + 1, T, 4)
        frames = np.arange(len(baked), dtype=np.float64)          # 0..N (key N: the wrap to 1)
        q = bone_basis(rig, x, bound.joints, baked)
        for t, tr_joint in enumerate(bound.joints):
            _key_bone(bag, bone_names[tr_joint], frames, q[:, t])
    action.frame_range = (0.0, float(max(bound.frame_count - 1, 1)))
    action.use_frame_range = True
    action.use_cyclic = True
    return action, slot


def key_signs(bound: BoundClip, bone_names: list[str], keys_only: bool) -> dict:
    """{bone: [[frame, sign], ...]}: the file's key frames of each track and
    the sign the action stores each key with (continuity may flip it), so the
    exporter can write the original keys back."""
    baked = None if keys_only else bound.baked()
    out = {}
    for t, j in enumerate(bound.joints):
        lo, hi = bound.clip.starts[t], bound.clip.starts[t + 1]
        frames = bound.clip.times[lo:hi].astype(int)
        orig = bound.clip.rotations[lo:hi]
        stored = quat.make_continuous(orig) if keys_only else baked[frames, t]
        signs = np.where(np.sum(stored * orig, axis=1) < 0, -1, 1)
        out[bone_names[j]] = [[int(f), int(sg)] for f, sg in zip(frames, signs)]
    return out


def _key_bone(bag, bone: str, frames, q: np.ndarray) -> None:
    wxyz = np.concatenate((q[:, 3:], q[:, :3]), axis=1)
    path = f'pose.bones["{bpy.utils.escape_identifier(bone)}"].rotation_quaternion'
    fcs = anim_build.add_vector_keys(bag, path, frames, wxyz, group=bone)
    for fc in fcs:
        fc.extrapolation = "CONSTANT"
