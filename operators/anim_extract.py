# SPDX-License-Identifier: GPL-3.0-or-later
"""Blender actions -> scene clips (the extractor's animation pass).

* A set an import made and nobody touched since (its F-curves have the
  fingerprint the import recorded, no constraint or driver moves the bones)
  is the clip the import read, key for key (:mod:`.source_keys`).
* Any other action is sampled at its keys, at every whole frame of its
  range, at the times of the keys the import read (when it made the action)
  and at its first and last time; by default from the evaluated pose
  (``bake_pose``: what Blender shows: constraints, drivers, Euler and
  axis-angle rotations, any inheritance; :mod:`.pose_sampling`), else from
  the F-curves alone.

An action whose range ends between two frames (an 80.8-frame animation) was
keyed by the builder with its end pose on the next whole frame: the end pose
is written at the action's own end time.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import bpy
import numpy as np

from ..core import quat, sampling
from ..scene import Clip, SceneError
from . import fcurves, metadata, pose_sampling, source_keys

if TYPE_CHECKING:
    from .armature_extract import Rig

#: the pose bone properties an action's F-curves animate
PROPS = ("location", "rotation_quaternion", "rotation_euler", "rotation_axis_angle", "scale")
ROTATIONS = ("rotation_quaternion", "rotation_euler", "rotation_axis_angle")
#: scopes of the actions an export writes
SCOPES = ("OWNED", "ALL")


def action_channels(action, pose_bones, bone_names) -> dict:
    """{bone: {property: {index: fcurve}}} of an action's pose-bone F-curves
    (any slot). Paths are matched against the pose bones' own
    ``path_from_id`` (names holding quotes, brackets or control characters
    included)."""
    names = set(bone_names)
    paths = {pb.path_from_id(p): (pb.name, p) for pb in pose_bones if pb.name in names for p in PROPS}
    out: dict = {}
    for fc in fcurves.fcurves(action):
        hit = paths.get(fc.data_path)
        if hit is not None:
            out.setdefault(hit[0], {}).setdefault(hit[1], {})[fc.array_index] = fc
    return out


def rig_actions(arm_obj, bone_names, scope: str = "OWNED") -> list[tuple]:
    """(action, slot) pairs an export of ``arm_obj`` writes: its NLA strips'
    actions (track order), its active action, and the actions an import
    made for it (name order); with ``scope`` "ALL" also every other action
    that animates bones of its names."""
    out: list[tuple] = []
    seen: set = set()

    def add(action, slot):
        # the layer stack's own actions (its base, signed copies) are not animations
        if action is not None and action not in seen and metadata.load(action, metadata.MIX_KEY) is None:
            seen.add(action)
            out.append((action, slot))

    ad = arm_obj.animation_data
    if ad is not None:
        for track in ad.nla_tracks:
            for st in track.strips:
                add(st.action, getattr(st, "action_slot", None))
        add(ad.action, getattr(ad, "action_slot", None))
    token = source_keys.rig_token(arm_obj)
    rest = sorted((a for a in bpy.data.actions if a not in seen), key=lambda a: a.name)
    for a in rest:
        if token and source_keys.owner(a) == token:
            add(a, None)
    if scope == "ALL":
        for a in rest:
            if not source_keys.owner(a) or source_keys.owner(a) != token:
                if action_channels(a, arm_obj.pose.bones, bone_names):
                    add(a, None)
    return out


#: an object's own transform channels (an action keying these moves the whole object)
OBJECT_PROPS = ("location", "rotation_quaternion", "rotation_euler", "rotation_axis_angle", "scale",
                "delta_location", "delta_rotation_quaternion", "delta_rotation_euler", "delta_scale")


def object_motion(arm_obj, chosen: list) -> list[str]:
    """The objects whose own animation moves ``arm_obj`` as a whole: itself
    where one of the ``chosen`` (action, slot) pairs keys its transform, and
    any parent with an action keying its transform. An export writes the
    rig where the object is at the current frame (its world matrix), so
    these animations are not in the file."""
    def keyed(action) -> bool:
        return action is not None and any(fc.data_path in OBJECT_PROPS for fc in fcurves.fcurves(action))

    out = [arm_obj.name] if any(keyed(a) for a, _ in chosen) else []
    parent = arm_obj.parent
    while parent is not None:
        ad = parent.animation_data
        if ad is not None and (keyed(ad.action) or any(keyed(s.action) for t in ad.nla_tracks for s in t.strips)):
            out.append(parent.name)
        parent = parent.parent
    return out


def unclaimed_actions(arm_obj, bone_names, exported: list) -> list:
    """Actions that animate bones of ``arm_obj``'s names, are not written,
    and belong to no rig (no import made them, no other object plays them):
    the ones a user may have meant (reported, not written)."""
    mine = {a for a, _ in exported}
    played = set()
    for o in bpy.data.objects:
        ad = o.animation_data
        if o != arm_obj and ad is not None:
            played.add(ad.action)
            played.update(st.action for tr in ad.nla_tracks for st in tr.strips)
    return [a for a in bpy.data.actions
            if a not in mine and a not in played and not source_keys.owner(a)
            and metadata.load(a, metadata.MIX_KEY) is None and action_channels(a, arm_obj.pose.bones, bone_names)]


def _key_frames(chans: dict) -> np.ndarray:
    frames = []
    for ch in chans.values():
        for chan in ch.values():
            for fc in chan.values():
                n = len(fc.keyframe_points)
                if n:
                    co = np.empty(2 * n, dtype=np.float32)
                    fc.keyframe_points.foreach_get("co", co)
                    frames.append(co[0::2].astype(np.float64))
    return np.unique(np.concatenate(frames)) if frames else np.zeros(0)


def _channel(chan: dict | None, n: int, frames: np.ndarray, current) -> np.ndarray:
    out = np.empty((len(frames), n))
    for i in range(n):
        fc = chan.get(i) if chan else None
        out[:, i] = current[i] if fc is None else fcurves.fcurve_values(fc, frames)
    return out


def _basis_rotation(pb, ch: dict, frames) -> np.ndarray:
    mode = pb.rotation_mode
    if mode == "QUATERNION":
        wxyz = _channel(ch.get("rotation_quaternion"), 4, frames, tuple(pb.rotation_quaternion))
        return np.concatenate((wxyz[:, 1:], wxyz[:, :1]), axis=1)
    if mode == "AXIS_ANGLE":
        aa = _channel(ch.get("rotation_axis_angle"), 4, frames, tuple(pb.rotation_axis_angle))
        axis = aa[:, 1:]
        norm = np.linalg.norm(axis, axis=1, keepdims=True)
        axis = np.where(norm > 0, axis / np.where(norm > 0, norm, 1.0), [[0.0, 1.0, 0.0]])
        return quat.from_axis_angle(axis, aa[:, 0])
    from mathutils import Euler

    eul = _channel(ch.get("rotation_euler"), 3, frames, tuple(pb.rotation_euler))
    q = [Euler(tuple(v), mode).to_quaternion() for v in eul]
    return np.array([(e.x, e.y, e.z, e.w) for e in q], dtype=np.float64).reshape(-1, 4)


def _fcurve_world(r: Rig, chans: dict, frames: np.ndarray) -> np.ndarray:
    """Joint world matrices (F, J, 4, 4) from the F-curves alone (standard
    inheritance, no constraints or drivers); channels without a curve keep
    the pose bone's current value."""
    rs = r.rest
    sk = r.skeleton
    F = len(frames)
    bone_world = np.empty((F, len(r.bones), 4, 4))
    for bi, j in enumerate(r.bones.tolist()):
        name = r.bone_names[int(j)]
        pb = r.obj.pose.bones[name]
        ch = chans.get(name, {})
        loc = _channel(ch.get("location"), 3, frames, tuple(pb.location))
        scl = _channel(ch.get("scale"), 3, frames, tuple(pb.scale))
        basis = sampling.compose_trs(loc, quat.normalize(_basis_rotation(pb, ch, frames)), scl)
        p = int(rs.parent[bi])
        bone_world[:, bi] = (bone_world[:, p] if p >= 0 else np.eye(4)) @ rs.rel_rest[bi] @ basis
    world = np.empty((F, len(sk), 4, 4))
    of_joint = {int(j): bi for bi, j in enumerate(r.bones.tolist())}
    for j in sk.order.tolist():
        b = of_joint.get(int(j))
        if b is not None:
            world[:, j] = bone_world[:, b] @ rs.rest_to_bind[b]
        else:
            p = int(sk.parents[j])
            world[:, j] = (world[:, p] if p >= 0 else np.eye(4)) @ sk.local[j]
    return world


#: a pose bone's channels by the properties that key them
CHANNELS = {"location": "location", "scale": "scale", **{p: "rotation" for p in ROTATIONS}}


def hold_unkeyed_pose(r: Rig, actions: list) -> list[str]:
    """A rig made in Blender (its default pose: the rest pose) gets as its
    default pose each bone's location, rotation and scale as the pose
    holds them wherever none of ``actions`` ((action, slot) pairs: the
    exported ones) keys that channel: what Blender shows at every frame of
    every exported action, and without one (a pose set and not keyed). A
    channel some exported action keys stays at rest (another action leaves
    its last value behind). Returns the bones whose default pose changed."""
    if r.scene.source.format != "blender" or not len(r.bones):
        return []
    keyed: dict[str, set[str]] = {}
    for action, _ in actions:
        for bone, props in action_channels(action, r.obj.pose.bones, r.bone_names.values()).items():
            keyed.setdefault(bone, set()).update(CHANNELS[p] for p in props)
    sk = r.skeleton
    local = sk.local.copy()
    held = []
    for j in r.bones.tolist():
        name = r.bone_names[int(j)]
        pb = r.obj.pose.bones[name]
        k = keyed.get(name, set())
        loc = np.zeros(3) if "location" in k else np.array(pb.location, dtype=np.float64)
        rot = quat.IDENTITY if "rotation" in k else quat.normalize(_basis_rotation(pb, {}, np.zeros(1))[0])
        scl = np.ones(3) if "scale" in k else np.array(pb.scale, dtype=np.float64)
        basis = sampling.compose_trs(loc[None], np.asarray(rot, dtype=np.float64)[None], scl[None])[0]
        if np.abs(basis - np.eye(4)).max() > 1e-7:
            local[j] = local[j] @ basis
            held.append(name)
    if held:
        sk.local = local
    return held


def moves_beyond_fcurves(r: Rig) -> list[str]:
    """Bones whose pose is not their F-curves' alone: constraints, drivers."""
    arm = r.obj
    names = set(r.bone_names.values())
    out = [pb.name for pb in arm.pose.bones if pb.name in names and any(c.enabled for c in pb.constraints)]
    ad = arm.animation_data
    if ad is not None:
        paths = {pb.path_from_id(): pb.name for pb in arm.pose.bones if pb.name in names}
        for d in ad.drivers:
            for prefix, name in paths.items():
                if d.data_path.startswith(prefix + ".") and name not in out:
                    out.append(name)
    return out


def _sample_frames(action, chans: dict, meta: dict, fps: float) -> tuple[np.ndarray, np.ndarray, float, float]:
    """(frames the clip gets keys at, frames Blender is read at, first
    frame, last frame): the action's keys, its whole frames, the times of
    the keys its import read, its first and last time. Where the range
    starts or ends between frames and the builder keyed the end pose on the
    whole frame beyond it, the pose is read there."""
    tps = meta.get("ticks_per_second")
    to_f = (lambda t: np.asarray(t, dtype=np.float64)) if tps is None else \
        (lambda t: np.asarray(t, dtype=np.float64) / float(tps) * fps)
    keys = _key_frames(chans)
    if "start" in meta and "end" in meta:
        f0, f1 = float(to_f(meta["start"])), float(to_f(meta["end"]))
    else:
        f0, f1 = (float(x) for x in action.frame_range)
        if len(keys) and not action.use_frame_range:
            f0, f1 = float(keys.min()), float(keys.max())
    known = to_f(source_keys.key_times(action, meta))
    cand = np.concatenate((np.arange(np.ceil(f0 - 1e-9), np.floor(f1 + 1e-9) + 1.0), keys, known, [f0, f1]))
    cand = cand[(cand >= f0 - 1e-9) & (cand <= f1 + 1e-9)]
    frames = np.unique(np.round(cand, 9))
    read = frames.copy()
    if len(keys):
        if f1 != np.floor(f1) and np.any((keys > f1 + 1e-6) & (keys <= np.ceil(f1) + 1e-6)):
            read[frames >= f1 - 1e-9] = np.ceil(f1)
        if f0 != np.floor(f0) and np.any((keys < f0 - 1e-6) & (keys >= np.floor(f0) - 1e-6)):
            read[frames <= f0 + 1e-9] = np.floor(f0)
    return frames, read, f0, f1


def _local(parent_world: np.ndarray, world: np.ndarray, name: str, frames: np.ndarray) -> np.ndarray:
    """Joints' local matrices from sampled world matrices; SceneError (one
    line) where the pose Blender shows cannot be written: a parent scaled to
    zero, or a matrix past float32 (a scale of 1e30)."""
    with np.errstate(all="ignore"):
        det = np.linalg.det(parent_world[..., :3, :3])
    bad = ~(np.isfinite(world).all(axis=(-2, -1)) & np.isfinite(det) & (np.abs(det) > 1e-300))
    if bad.any():
        k = int(np.argwhere(bad)[0][0])
        raise SceneError(f"{name}: the pose at frame {float(frames[k]) + 0.0:g} flattens or overflows space (a bone or "
                         f"object scaled to zero, or beyond Blender's float range): it cannot be written")
    return np.linalg.solve(parent_world, world)


def clip_of(context, action, r: Rig, fps: float, warnings: list[str], *, slot=None,
            bake_pose: bool = True) -> Clip | None:
    """A clip from an action (None when it animates nothing of the rig):
    the import's own keys when the set is untouched, else the pose sampled
    (see the module doc) as the joints' local transforms, keys interpolated
    by slerp (every sample is what Blender shows there)."""
    meta = metadata.load(action, metadata.CLIP_KEY) or {}
    sk = r.skeleton
    beyond = moves_beyond_fcurves(r)
    if not beyond and source_keys.untouched(action):
        stored = source_keys.stored_clip(action, meta, len(sk))
        if stored is not None:
            return stored
    chans = action_channels(action, r.obj.pose.bones, r.bone_names.values())
    if not chans and not meta:
        return None
    frames, read, f0, f1 = _sample_frames(action, chans, meta, fps)
    if bake_pose:
        world = pose_sampling.joint_world(context, r, action, slot, read)
    else:
        if beyond:
            warnings.append(f"{action.name}: constraints or drivers on {len(beyond)} bone(s) are not exported "
                            f"({', '.join(beyond[:6])}): turn on Bake Pose to export them")
        world = _fcurve_world(r, chans, read)
    parent_world = np.where((sk.parents >= 0)[None, :, None, None], world[:, np.maximum(sk.parents, 0)], np.eye(4))
    local = _local(parent_world, world, action.name, frames)
    lt, lr, ls = sampling.decompose_trs(local)
    t0, r0, s0 = sampling.decompose_trs(sk.local)
    size = max(float(np.ptp(sk.world()[:, :3, 3], axis=0).max()) if len(sk) else 1.0, 1e-9)
    shear = np.abs(sampling.compose_trs(lt, lr, ls) - local).max(axis=(0, 2, 3))
    keyed = {r.bone_names[int(j)] for j in r.bones.tolist()} & set(chans)
    tracks: dict[str, tuple[list, list, list]] = {"r": ([], [], []), "t": ([], [], []), "s": ([], [], [])}
    animated = np.zeros(len(sk), dtype=bool)
    tps = meta.get("ticks_per_second")
    times = frames if tps is None else frames / fps * float(tps)
    for j in sorted(r.bone_names):
        ch = chans.get(r.bone_names[j], {})
        # moved by something else than its F-curves (a constraint, a driver): beyond float32 noise
        moved_r = np.minimum(np.abs(lr[:, j] - r0[j]), np.abs(lr[:, j] + r0[j])).max() > 1e-5
        moved_t = np.abs(lt[:, j] - t0[j]).max() > 1e-5 * size
        moved_s = np.abs(ls[:, j] - s0[j]).max() > 1e-5 * max(float(np.abs(s0[j]).max()), 1e-30)
        use = {"r": moved_r or any(p in ch for p in ROTATIONS), "t": moved_t or "location" in ch,
               "s": moved_s or "scale" in ch}
        if not any(use.values()) and r.bone_names[j] not in keyed:
            continue
        animated[j] = True
        if shear[j] > 1e-6 * max(size, 1.0):
            warnings.append(f"{action.name}: bone {r.bone_names[j]!r} is sheared (non-uniform scale under a "
                            f"rotation), which a file's keys cannot hold: up to {shear[j]:.2e} off")
        rot = quat.make_continuous(np.where(lr[:1, j, 3:] < 0, -lr[:, j], lr[:, j]), axis=0)
        for c, vals in (("r", rot), ("t", lt[:, j]), ("s", ls[:, j])):
            if use[c]:
                tracks[c][0].append(j)
                tracks[c][1].append(times)
                tracks[c][2].append(vals)
    if not animated.any() and not meta:
        return None

    def channels(c, width):
        targets, ts, vs = tracks[c]
        if not targets:
            return sampling.Channels.empty(width)
        return sampling.Channels.from_tracks(targets, ts, vs, width)

    to_t = (lambda f: f) if tps is None else (lambda f: f / fps * float(tps))
    cycle = meta.get("cycle")
    return Clip(action.name, channels("r", 4), channels("t", 3), channels("s", 3), animated,
                start=float(meta.get("start", to_t(f0))), end=float(meta.get("end", to_t(f1))),
                ticks_per_second=tps, rotation_mode="slerp",
                cycle=tuple(cycle) if cycle else None, playback=metadata.playback(meta),
                weight=float(meta.get("weight", 1.0)), extras=meta.get("extras") or {})
