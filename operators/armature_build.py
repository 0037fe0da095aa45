# SPDX-License-Identifier: GPL-3.0-or-later
"""Scene skeleton -> Blender armature (the builder's armature pass).

* :func:`bone_joints` — which joints become bones (Blender has no frames
  without bones: the joints that skin or hold meshes, the animated ones and
  their ancestors, or every joint);
* :func:`rest_matrices` — Blender bones are rigid and rebuilt from a
  direction and a roll: the rest is the orthonormal part of the bind (its
  non-uniform scale left to the pose), turned along the limb, the rest of
  it is ``K`` (``core.rig.RestSplit``); mirrored rolls for left/right pairs;
* :func:`build_armature` — the armature object, its bones (lengths along
  the limbs, connected where they touch and stay so) and the default pose;
  :func:`build_empties` — the joints as empties when no bone is needed.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import bpy
import numpy as np
from mathutils import Matrix

from ..core import limbs, mirror, rig, sampling
from ..scene import Scene, SceneError
from . import metadata

if TYPE_CHECKING:
    from .built import Built

MIN_BONE_FRACTION = 2e-3    # bone length floor, as a fraction of the model size
MIN_BONE_LENGTH = 1e-3      # absolute floor (Blender units)
#: Bone directions (degrees from the parent's -Y) where Blender's float32
#: bone matrices are imprecise (errors up to 4e-5 between 2 and 15 degrees,
#: below 1e-6 outside): [PRECISE_CONE, BAD_CONE) is avoided.
PRECISE_CONE, BAD_CONE = 2.0, 16.0


def bone_joints(scene: Scene, every_joint: bool = False) -> np.ndarray:
    """(J,) bool: joints that become bones: every joint, or the joints that
    skin meshes, hold rigid meshes (when anything is skinned or animated) or
    are animated, plus their ancestors. A frame that only holds a skinned
    mesh is no bone: skinning ignores its animation (D3DX's and ``scene.evaluate``'s)."""
    sk = scene.skeleton
    assert sk is not None
    J = len(sk)
    if every_joint:
        return np.ones(J, dtype=bool)
    need = np.zeros(J, dtype=bool)
    skinned = False
    for m in scene.meshes:
        if m.skin is not None and len(m.skin.joints):
            need[m.skin.joints] = True
            skinned = True
    animated = any(c.animated.any() for c in scene.clips)
    if skinned or animated:
        for m in scene.meshes:
            if m.parent >= 0 and m.skin is None:
                need[m.parent] = True
    if animated and not skinned and not need.any():
        for c in scene.clips:
            need |= c.animated
    for j in sk.order[::-1]:
        if need[j] and sk.parents[j] >= 0:
            need[sk.parents[j]] = True
    return need


def scale_on_axes(scene: Scene) -> np.ndarray:
    """(J,) bool: joints whose own scale is non-uniform (in magnitude) in the
    default pose or in a clip's keys. A bone turned away from such a joint's
    axes would need shear in its pose, which pose bones cannot hold."""
    sk = scene.skeleton
    assert sk is not None
    out = rig.nonuniform(sampling.decompose_trs(sk.local)[2])
    for clip in scene.clips:
        ch = clip.scale
        if len(ch.targets):
            bad = rig.nonuniform(ch.values)
            out[ch.targets[np.unique(ch.track_of_key[bad])]] = True
    return out


def rest_matrices(scene: Scene, bones: np.ndarray, parent: np.ndarray, rest_from: str,
                  direction: str = "FILE", size: float = 1.0, binds: np.ndarray | None = None):
    """(rigid rest matrices (B, 4, 4), bind matrices (B, 4, 4), kept (B,)
    bool, the point each bone aims at (B, 3; NaN: none)) for the bones'
    joints. The binds are the file's with non-uniform scale taken out
    (``core.rig.armature_binds``: the pose holds it).
    ``direction`` "FILE" keeps the joints' axes; "CHILDREN" turns each bone
    about its head to point at its child; with several children, at the one
    that leads the largest sub-hierarchy (the chain: hips -> spine rather
    than a thigh), or when several equal ones tie (two arms off a chest) at
    the one child leading the next largest (the neck), else at their mean
    head; a leaf continues its parent's direction; left/right pairs get
    mirrored rolls (:func:`symmetric_rolls`). The turn keeps as much of the joint's twist as
    possible (``core.rig.aim_y``) and changes only how the bone looks and
    poses: ``K`` absorbs it, deformation and animation stay exact. Bones
    whose joint's scale is non-uniform (``kept``) keep the joint's axes
    either way (up to a swap of axes), since their pose holds that scale.
    ``binds``: the joints' binds (default: the skeleton's)."""
    sk = scene.skeleton
    arm_bind, scaled = rig.armature_binds(sk.parents, sk.order, sk.bind if binds is None else binds)
    kept = (scaled | scale_on_axes(scene))[bones]
    bind = arm_bind[bones]
    src = bind if rest_from == "BIND" else sk.world()[bones]
    target = rig.orthonormal(src)
    if kept.any():      # a kept bone turns to the axes of its joint's scale (its own axes unless sheared)
        keyed = np.zeros(scene.n_joints, dtype=np.bool_)
        for clip in scene.clips:
            keyed[clip.scale.targets] = True
        axes = np.where(keyed[bones][kept, None, None], np.eye(3), rig.scale_axes(sk.local[bones][kept]))
        target[kept, :3, :3] = rig.orthonormal(bind[kept])[:, :3, :3] @ axes
    aims = np.full((len(bones), 3), np.nan)
    if direction == "CHILDREN":
        heads = target[:, :3, 3]
        kids = rig.children(parent)
        min_len = max(size * MIN_BONE_FRACTION, MIN_BONE_LENGTH)
        leads = np.ones(len(bones), dtype=np.int64)        # bones in each sub-hierarchy
        for i in range(len(bones) - 1, -1, -1):            # parents come first
            if parent[i] >= 0:
                leads[parent[i]] += leads[i]
        for i in range(len(bones)):
            aim = None
            if kids[i]:
                far = [k for k in kids[i] if np.linalg.norm(heads[k] - heads[i]) > min_len] or kids[i]
                most = max(leads[k] for k in far)
                chain = [k for k in far if leads[k] == most]
                rest_far = [k for k in far if leads[k] < most]
                if len(chain) > 1 and rest_far:      # tied limbs (arms off a chest): the chain goes on
                    second = max(leads[k] for k in rest_far)
                    if sum(leads[k] == second for k in rest_far) == 1:
                        chain = [k for k in rest_far if leads[k] == second]
                aims[i] = heads[chain[0]] if len(chain) == 1 else np.mean(heads[chain], axis=0)
                aim = aims[i] - heads[i]
            if kept[i]:
                continue
            if aim is None and parent[i] >= 0:
                aim = target[parent[i], :3, 1]
            if aim is not None and np.linalg.norm(aim) > (min_len if kids[i] else 0.0):
                target[i, :3, :3] = rig.aim_y(target[i, :3, :3], aim)
    # Blender rebuilds each bone's rotation in its parent's space (the
    # armature's for a root) from a direction and a roll, in float32
    # (vec_roll_to_mat3), and loses precision (to ~4e-5, passed on to every
    # descendant) when the direction is a few degrees from the parent's -Y
    # (exactly -Y is a special case, and exact). K absorbs any change made here.
    turn = np.array([[1.0, 0, 0, 0], [0, 0, -1, 0], [0, 1, 0, 0], [0, 0, 0, 1]])
    for i in range(len(bones)):
        p = parent[i]
        frame = target[p, :3, :3] if p >= 0 else np.eye(3)
        y = frame.T @ target[i, :3, 1]
        angle = np.degrees(np.arccos(np.clip(-y[1], -1.0, 1.0)))
        if direction == "CHILDREN" and not kept[i]:
            if PRECISE_CONE <= angle < BAD_CONE:   # tilt out of the band, towards the nearer edge
                goal = 0.0 if angle < 0.5 * (PRECISE_CONE + BAD_CONE) else BAD_CONE
                side = np.array([y[0], 0.0, y[2]])
                side /= max(np.linalg.norm(side), 1e-300)
                a = np.radians(goal)
                new_y = frame @ (np.sin(a) * side + np.array([0.0, -np.cos(a), 0.0]))
                target[i, :3, :3] = rig.aim_y(target[i, :3, :3], new_y)
        elif p >= 0 and angle < BAD_CONE:
            target[i] = target[i] @ turn       # keep the file's axes, swapped (Y -> Z)
    if direction == "CHILDREN":
        target[:, :3, :3] = symmetric_rolls([sk.names[j] for j in bones], target, kept, size)
    return target, bind, kept, aims


def symmetric_rolls(names: list[str], rest: np.ndarray, kept: np.ndarray, size: float) -> np.ndarray:
    """Bone rotations (B, 3, 3) whose rolls mirror each other across the
    plane the left/right pairs (by name) share (``core.mirror``), so that
    Blender's Paste Pose Flipped mirrors a pose; unchanged when the pairs
    share no plane. Kept bones (their axes are their scale's) keep theirs."""
    pairs = [(a, b) for a, b in mirror.side_pairs(names) if not kept[a] and not kept[b]]
    tol = 1e-3 * size
    plane = mirror.mirror_plane(rest[:, :3, 3], pairs, tol)
    if plane is None:
        return rest[:, :3, :3]
    rot, _ = mirror.mirrored_rolls(rest[:, :3, :3], rest[:, :3, 3], pairs, plane, tol)
    return np.where(kept[:, None, None], rest[:, :3, :3], rot)


def bone_lengths(heads: np.ndarray, parents: np.ndarray, size: float, min_len: float) -> np.ndarray:
    """Mean distance to the children's heads; a leaf gets half its parent's
    length (parents come before children); never below ``min_len``."""
    kids = rig.children(parents)
    lengths = np.zeros(len(heads))
    for j in range(len(heads)):
        d = [float(np.linalg.norm(heads[k] - heads[j])) for k in kids[j]]
        d = [x for x in d if x > min_len]
        lengths[j] = float(np.mean(d)) if d else 0.0
    for j in range(len(heads)):
        if lengths[j] == 0.0:
            p = parents[j]
            lengths[j] = 0.5 * lengths[p] if p >= 0 and lengths[p] > 0 else size * 0.05
    return np.maximum(lengths, min_len)


def still_heads(scene: Scene, bones: np.ndarray, rest: rig.RestSplit, size: float) -> np.ndarray:
    """(B,) bool: bones whose pose location stays zero (within 1e-6 of the
    model size) in the default pose and at every translation key of every
    clip: a connected bone ignores its pose location, so only these may be
    connected. Where the bone's head is its bind's (``K`` moves the joint's
    origin by at most 1e-7 of the model size), its pose location is
    ``A t + a`` for its joint's translation ``t`` (``A``:
    ``RestSplit.parent_bind_in_rest``), whatever the rotation and scale: the
    keys decide it; a bone whose head is not its bind's is still only if no
    clip moves its joint."""
    sk = scene.skeleton
    assert sk is not None
    tol = 1e-6 * size
    loc = rest.pose_basis(sk.world()[bones][None])[0][:, :3, 3]
    still = np.linalg.norm(loc, axis=1) <= tol
    # (Blender's float32 rest puts a connected head within ~1e-7 of the model size of its bind's)
    on_bind = np.abs(rest.rest_to_bind[:, :3, 3]).max(axis=1) <= 1e-7 * max(size, 1e-30)
    a = rest.parent_bind_in_rest
    slot = {int(j): i for i, j in enumerate(bones)}
    for clip in scene.clips:
        ch = clip.translation
        for k, j in enumerate(ch.targets.tolist()):
            i = slot.get(int(j))
            if i is None or not still[i]:
                continue
            if not on_bind[i]:
                still[i] = False
                continue
            t = ch.values[ch.starts[k]:ch.starts[k + 1]]
            still[i] = np.linalg.norm(t @ a[i, :3, :3].T + a[i, :3, 3], axis=1).max(initial=0.0) <= tol
    return still


def create_bones(context, obj, names: list[str], parents, matrices: np.ndarray, lengths,
                 connect=None) -> list[str]:
    """Edit bones with the given armature-space rest matrices, lengths and
    parents, connected to their parents where ``connect`` says (their heads
    on the parents' tails). Returns the names Blender gave them; edit bones
    die on leaving edit mode."""
    prev_active = context.view_layer.objects.active
    context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="EDIT")
    try:
        ebones = []
        for name, m, length in zip(names, matrices, lengths):
            eb = obj.data.edit_bones.new(name)
            eb.head = (0.0, 0.0, 0.0)
            eb.tail = (0.0, float(length), 0.0)
            eb.matrix = Matrix(np.asarray(m).tolist())
            eb.use_connect = False
            ebones.append(eb)
        for i, p in enumerate(parents):
            if p >= 0:
                ebones[i].parent = ebones[p]
                if connect is not None and connect[i]:
                    ebones[i].use_connect = True
        return [eb.name for eb in ebones]
    finally:
        bpy.ops.object.mode_set(mode="OBJECT")
        context.view_layer.objects.active = prev_active


def build_armature(context, built: Built, name: str, size: float, binds: np.ndarray | None = None, *,
                   every_joint_bone: bool = False, rest_from: str = "BIND", bone_direction: str = "CHILDREN") -> None:
    """The armature of ``built``'s scene (its bones: :func:`bone_joints`, all of them with
    ``every_joint_bone``; their rest: :func:`rest_matrices` by ``rest_from`` and ``bone_direction``,
    the import options of those names), in its default pose."""
    scene = built.scene
    sk = scene.skeleton
    sel = bone_joints(scene, every_joint_bone)
    bones = np.array([j for j in sk.order if sel[j]], dtype=np.int64)
    pos = {int(j): i for i, j in enumerate(bones)}
    parent = np.array([pos.get(int(sk.parents[j]), -1) for j in bones], dtype=np.int64)
    target, bind, kept, aims = rest_matrices(scene, bones, parent, rest_from, bone_direction,
                                             size, binds)
    if bone_direction == "CHILDREN" and kept.any():
        names_kept = [sk.names[j] for j in bones[kept]]
        built.warnings.append(f"{len(names_kept)} bone(s) keep the file's joint axes instead of pointing at their "
                              f"children, since their joints' scale is non-uniform (their pose holds it): "
                              f"{', '.join(names_kept[:8])}{' ...' if len(names_kept) > 8 else ''}")
    min_len = max(size * MIN_BONE_FRACTION, MIN_BONE_LENGTH)
    if bone_direction == "CHILDREN":
        lengths, touching = limbs.limb_lengths(target, parent, aims, size, min_len)
        connect = touching & still_heads(scene, bones, rig.RestSplit(target, bind, parent), size)
    else:
        lengths = np.minimum(bone_lengths(target[:, :3, 3], parent, size, min_len), max(size, min_len))
        connect = np.zeros(len(bones), dtype=bool)
    arm = bpy.data.armatures.new(name)
    obj = bpy.data.objects.new(name, arm)
    context.collection.objects.link(obj)
    wanted = [sk.names[j] for j in bones]
    names = create_bones(context, obj, wanted, parent, target, lengths, connect)
    for w, got in zip(wanted, names):
        if w != got:
            built.warnings.append(f"joint name {w!r} is a duplicate or too long: bone named {got!r}")
    # Blender's float32 bones degenerate at extreme sizes (a joint 1e20 away,
    # where head and tail are one float; Blender 4.5 drops such a bone): each
    # must exist with a rest that is a rotation, the one asked for, or
    # nothing built on it is right
    gone = [i for i, n in enumerate(names) if arm.bones.get(n) is None]
    rest = np.array([np.array(arm.bones[n].matrix_local, dtype=np.float64) if arm.bones.get(n) is not None
                     else np.zeros((4, 4)) for n in names]).reshape(-1, 4, 4)
    lost = np.flatnonzero(~(np.abs(np.linalg.det(rest[:, :3, :3]) - 1.0) < 1e-3)
                          | ~(np.abs(rest[:, :3, :3] - target[:, :3, :3]).max(axis=(1, 2)) < 1e-3))
    lost = np.union1d(lost, np.array(gone, dtype=np.int64))
    if len(lost):
        i = int(lost[0])
        raise SceneError(f"joint {wanted[i]!r}: Blender cannot hold its bone (head at "
                         f"{tuple(float(f'{x:.6g}') for x in target[i, :3, 3])}, length {lengths[i]:.6g}): "
                         f"the file's coordinates are too large")
    for n in names:
        obj.pose.bones[n].rotation_mode = "QUATERNION"
    built.armature = obj
    built.bones = bones
    built.bone_names = {int(j): n for j, n in zip(bones, names)}
    built.rest = rig.RestSplit(rest, bind, parent)
    set_pose(built, default_channels(built))
    metadata.store(obj, metadata.RIG_KEY, {
        "format": scene.source.format, "path": scene.source.path, "axes": scene.source.axes.to_json(),
        "names": list(sk.names), "parents": sk.parents, "local": sk.local.reshape(-1, 16),
        "bind": sk.bind.reshape(-1, 16), "has_bind": sk.has_bind.astype(int),
        "bones": {str(j): n for j, n in built.bone_names.items()}, "K": built.rest.rest_to_bind.reshape(-1, 16),
        "extras": sk.extras,
        "scene_extras": scene.extras})


def default_channels(built: Built):
    """(location, rotation (x, y, z, w with w >= 0), scale) of every bone's
    pose basis at the skeleton's default pose (made once per build)."""
    if built.default_channels is None:
        assert built.scene.skeleton is not None and built.rest is not None
        dt, dr, ds = sampling.decompose_trs(built.rest.pose_basis(built.scene.skeleton.world()[built.bones][None])[0])
        built.default_channels = (dt, np.where(dr[:, 3:4] < 0, -dr, dr), ds)
    return built.default_channels


def set_pose(built: Built, channels) -> None:
    """Pose-bone location/rotation/scale from channels (location (B, 3),
    rotation (B, 4, x y z w), scale (B, 3)) of the bones of ``built``."""
    t, r, s = channels
    pb = built.armature.pose.bones
    idx = {built.bone_names[int(j)]: i for i, j in enumerate(built.bones)}
    perm = np.array([idx[b.name] for b in pb], dtype=np.int64)
    pb.foreach_set("location", t[perm].astype(np.float32).reshape(-1))
    pb.foreach_set("rotation_quaternion",
                   np.concatenate((r[:, 3:], r[:, :3]), axis=1)[perm].astype(np.float32).reshape(-1))
    pb.foreach_set("scale", s[perm].astype(np.float32).reshape(-1))


def build_empties(context, built: Built, size: float) -> None:
    """A scene whose joints need no armature (nothing skinned or animated):
    the joint hierarchy as empties, as Blender's glTF importer makes nodes."""
    sk = built.scene.skeleton
    for j in sk.order.tolist():
        obj = bpy.data.objects.new(sk.names[j], None)
        obj.empty_display_type = "PLAIN_AXES"
        obj.empty_display_size = max(size * 0.02, 1e-3)
        context.collection.objects.link(obj)
        p = int(sk.parents[j])
        if p >= 0:
            obj.parent = built.empties[p]
        obj.matrix_basis = Matrix(sk.local[j].tolist())
        built.empties[j] = obj
