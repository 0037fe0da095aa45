# SPDX-License-Identifier: GPL-3.0-or-later
"""Blender actions -> scene clips (the extractor's animation pass): each
animated bone's channels at its keyed frames when Blender's interpolation of
them is linear (exact), else at every frame of the action's range."""
from __future__ import annotations

from typing import TYPE_CHECKING

import bpy
import numpy as np

from ..core import quat, sampling
from ..scene import Clip
from . import metadata

if TYPE_CHECKING:
    from .armature_extract import Rig


def action_channels(action, bone_names) -> dict:
    """{bone: {property: {index: fcurve}}} of an action's pose-bone F-curves (any slot)."""
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
                    prop = path.rsplit(".", 1)[-1]
                    if bone in bone_names:
                        out.setdefault(bone, {}).setdefault(prop, {})[fc.array_index] = fc
    return out


def rig_actions(arm_obj, bone_names) -> list:
    """Actions animating the armature's bones: its NLA tracks' first (track
    order), then the active action, then the others (name order)."""
    names = set(bone_names)
    out = []
    ad = arm_obj.animation_data
    if ad is not None:
        for track in ad.nla_tracks:
            for st in track.strips:
                if st.action is not None and st.action not in out:
                    out.append(st.action)
        if ad.action is not None and ad.action not in out:
            out.append(ad.action)
    for a in bpy.data.actions:
        if a not in out:
            out.append(a)
    # the layer stack's own actions (its base, signed copies) are not animations
    return [a for a in out if metadata.load(a, metadata.MIX_KEY) is None and action_channels(a, names)]


def _plain(fc) -> bool:
    """No modifier but Cycles: the keys are the curve inside their span."""
    return all(m.type == "CYCLES" for m in fc.modifiers)


def fcurve_values(fc, frames: np.ndarray) -> np.ndarray:
    """An F-curve at ``frames``: numpy for linear curves without modifiers
    but Cycles, at frames inside the keys' span for those (the same values
    Blender computes), ``fc.evaluate`` otherwise."""
    n = len(fc.keyframe_points)
    if n and _plain(fc) and (not len(fc.modifiers) or _inside_keys(fc, frames)):
        interp = np.empty(n, dtype=np.int32)
        fc.keyframe_points.foreach_get("interpolation", interp)
        if n == 1 or np.all(interp[:-1] == 1) and fc.extrapolation == "CONSTANT":
            co = np.empty(2 * n, dtype=np.float32)
            fc.keyframe_points.foreach_get("co", co)
            return np.interp(frames, co[0::2].astype(np.float64), co[1::2].astype(np.float64))
    return np.array([fc.evaluate(float(f)) for f in frames], dtype=np.float64)


def _inside_keys(fc, frames) -> bool:
    n = len(fc.keyframe_points)
    first, last = fc.keyframe_points[0].co[0], fc.keyframe_points[n - 1].co[0]
    return bool(np.all((np.asarray(frames) >= first - 1e-6) & (np.asarray(frames) <= last + 1e-6)))


def _linear_keys(ch: dict) -> np.ndarray | None:
    """The keyed frames of a bone's curves when all of them are linear
    without modifiers but Cycles (sampling only them is exact inside the
    action's range: a Cycles modifier repeats them outside), else None."""
    frames = []
    for chan in ch.values():
        for fc in chan.values():
            if not _plain(fc):
                return None
            n = len(fc.keyframe_points)
            if n == 0:
                continue
            co = np.empty(2 * n, dtype=np.float32)
            fc.keyframe_points.foreach_get("co", co)
            if n > 1:
                interp = np.empty(n, dtype=np.int32)
                fc.keyframe_points.foreach_get("interpolation", interp)
                if np.any(interp[:-1] != 1):
                    return None
            frames.append(co[0::2].astype(np.float64))
    return np.unique(np.concatenate(frames)) if frames else None


def _channel(chan: dict | None, n: int, frames: np.ndarray, current) -> np.ndarray:
    out = np.empty((len(frames), n))
    for i in range(n):
        fc = chan.get(i) if chan else None
        out[:, i] = current[i] if fc is None else fcurve_values(fc, frames)
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


def clip_of(action, r: Rig, fps: float, warnings: list[str]) -> Clip | None:
    """A clip from an action: the local channels of the joints whose bones it
    animates, at each bone's keyed frames when that is exact, else at every
    frame of the action's range (quaternion rotation keys interpolate per
    component in Blender: the clip's rotation mode is "nlerp")."""
    chans = action_channels(action, set(r.bone_names.values()))
    if not chans:
        return None
    meta = metadata.load(action, metadata.CLIP_KEY) or {}
    f0, f1 = (float(x) for x in action.frame_range)
    every = np.arange(np.floor(f0), np.ceil(f1) + 0.5)
    sk = r.skeleton
    rs = r.rest
    pbs = r.obj.pose.bones
    joint_of = {n: j for j, n in r.bone_names.items()}
    heads = rs.rest[:, :3, 3]
    extent = float(np.linalg.norm(heads.max(0) - heads.min(0))) if len(heads) else 1.0
    # where K is a similarity the builder's channel map is linear: invert it
    similar = rs.similarity_k(max(extent, 1e-6))
    turned = rs.turned()
    tracks: dict[str, tuple[list, list, list]] = {"r": ([], [], []), "t": ([], [], []), "s": ([], [], [])}
    animated = np.zeros(len(sk), dtype=bool)
    bone_index = {int(j): i for i, j in enumerate(r.bones)}
    for bone, ch in chans.items():
        j = joint_of[bone]
        bi = bone_index[j]
        pb = pbs[bone]
        frames = _linear_keys(ch)
        if frames is None:
            frames = every
        if pb.bone.use_connect:
            loc = np.zeros((len(frames), 3))
        else:
            loc = _channel(ch.get("location"), 3, frames, tuple(pb.location))
        rot = _basis_rotation(pb, ch, frames)
        scl = _channel(ch.get("scale"), 3, frames, tuple(pb.scale))
        uniform = np.ptp(scl, axis=1).max() <= 1e-6 * max(float(np.abs(scl).max()), 1e-30)
        if similar[bi] and (uniform or not turned[bi]):
            # the builder's channel map, inverted linearly (keeps quaternion signs)
            lt = np.einsum("ij,fj->fi", np.linalg.inv(rs.parent_bind_rotation[bi]),
                           loc - rs.parent_bind_in_rest[bi, :3, 3]) / rs.parent_bind_scale[bi]
            lr = quat.mul(quat.mul(quat.conj(rs.parent_bind_quat[bi]), rot), rs.rest_to_bind_quat[bi])
            ls = scl * (rs.rest_to_bind_scale[bi] / rs.parent_bind_scale[bi])
        else:
            basis = sampling.compose_trs(loc, quat.normalize(rot), scl)
            world = _world_of_bone(r, bi, basis, frames, chans, fps)
            p = sk.parents[j]
            pw = _world_of_joint(r, p, frames, chans, fps) if p >= 0 else np.eye(4)[None]
            lt, lr, ls = sampling.decompose_trs(np.linalg.solve(pw, world))
        times = frames if meta.get("ticks_per_second") is None else frames / fps * meta["ticks_per_second"]
        animated[j] = True
        r_keyed = any(p in ch for p in ("rotation_quaternion", "rotation_euler", "rotation_axis_angle"))
        for c, keyed, vals in (("r", r_keyed, lr), ("t", "location" in ch, lt), ("s", "scale" in ch, ls)):
            if keyed:
                tracks[c][0].append(j)
                tracks[c][1].append(times)
                tracks[c][2].append(vals)

    def channels(c, width):
        targets, ts, vs = tracks[c]
        if not targets:
            return sampling.Channels.empty(width)
        return sampling.Channels.from_tracks(targets, ts, vs, width)

    tps = meta.get("ticks_per_second")
    to_t = (lambda f: f) if tps is None else (lambda f: f / fps * tps)
    cycle = meta.get("cycle")
    clip = Clip(action.name, channels("r", 4), channels("t", 3), channels("s", 3), animated,
                start=float(meta.get("start", to_t(f0))), end=float(meta.get("end", to_t(f1))),
                ticks_per_second=tps, rotation_mode="nlerp",
                cycle=tuple(cycle) if cycle else None, layer=meta.get("layer", "ACTION"),
                weight=float(meta.get("weight", 1.0)), extras=meta.get("extras") or {})
    return clip


def _world_of_joint(r: Rig, j: int, frames, chans, fps) -> np.ndarray:
    bi = np.nonzero(r.bones == j)[0]
    if not len(bi):
        return np.broadcast_to(r.skeleton.world()[j], (len(frames), 4, 4))
    return _world_of_bone(r, int(bi[0]), None, frames, chans, fps)


def _world_of_bone(r: Rig, bi: int, basis, frames, chans, fps) -> np.ndarray:
    """World matrices (F, 4, 4) of bone ``bi``'s joint at frames, from the
    action's curves of the bone and its ancestors."""
    rs = r.rest
    chain = [bi]
    while rs.parent[chain[-1]] >= 0:
        chain.append(int(rs.parent[chain[-1]]))
    P = np.broadcast_to(np.eye(4), (len(frames), 4, 4)).copy()
    for b in reversed(chain):
        if b == bi and basis is not None:
            bb = basis
        else:
            name = r.bone_names[int(r.bones[b])]
            ch = chans.get(name, {})
            pb = r.obj.pose.bones[name]
            loc = _channel(ch.get("location"), 3, frames, tuple(pb.location))
            scl = _channel(ch.get("scale"), 3, frames, tuple(pb.scale))
            bb = sampling.compose_trs(loc, quat.normalize(_basis_rotation(pb, ch, frames)), scl)
        P = P @ rs.rel_rest[b] @ bb
    return P @ rs.rest_to_bind[bi]
