# SPDX-License-Identifier: GPL-3.0-or-later
"""Scene clips -> Blender actions (the builder's animation pass; the
F-curves through ``fcurves``).

* :func:`build_action` — a clip becomes an action: the file's keys mapped
  channel by channel when that is exact (:func:`channel_mode_exact`), else
  baked from the clip's own playback (``scene.bone_keys``: evaluated where it
  bends and keyed where Blender's linear interpolation needs a key to play
  it within 1e-7 of the model size at every frame); with Key Every Frame
  off, a sampler that knows which frames its keys need (``linear_keys``)
  keys only those;
* a clip that loops as the RiTE Animator does (frame 0, then 1..N-1 for
  ever) loops by itself: Cycles modifiers on its F-curves, keyed 0..N-1
  (:func:`animator_loop`);
* where the actions then play (NLA tracks, the layer stack, the active
  action) is ``anim_place``'s.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import bpy
import numpy as np

from ..core import rotation_modes
from ..io.errors import group
from ..scene import Clip, bone_keys
from ..scene.timeline import TIMELINE
from . import armature_build, fcurves, metadata, source_keys

if TYPE_CHECKING:
    from .built import Built

def channel_mode_exact(built: Built, size: float) -> bool:
    """True when the file's keys map channel by channel (``RestSplit.channels``):
    every K a similarity without translation, and bones whose K rotates only
    uniform scales."""
    rs = built.rest
    if rs is None or not len(rs):
        return True
    if not rs.similarity_k(size).all():
        return False
    turned = rs.turned()
    if turned.any():
        joints = set(int(j) for j in built.bones[turned])
        s0 = bone_keys.local_channels(built)[2]
        vals = [s0[j] for j in joints]
        for clip in built.scene.clips:
            ch = clip.scale
            for t, j in enumerate(ch.targets):
                if int(j) in joints:
                    vals.append(ch.values[ch.starts[t]:ch.starts[t + 1]])
        v = np.concatenate([np.reshape(x, (-1, 3)) for x in vals])
        if np.abs(v - v.mean(axis=1, keepdims=True)).max() > 1e-6 * max(np.abs(v).max(), 1e-30):
            return False
    return True


#: F-curve keys closer than about 0.01 frame are merged by ``fcurve.update()``.
MIN_KEY_GAP = 0.02


def short_clip_warning(built: Built, clip: Clip, fps: float) -> None:
    f0, f1 = clip.frame_range(fps)
    if f1 - f0 < 2.0 and clip.end > clip.start:
        built.warnings.append(f"{clip.name}: the animation lasts {f1 - f0:.3g} frame(s) at {fps:g} fps: if it "
                              f"should be longer, set the importer's Time Base")


def time_base_note(clips: list[Clip], fps: float) -> str | None:
    """One line for the import summary: the time base the clips' keys were
    read with (a reader's ``extras["time_base"]``, e.g. .X's Time Base
    option) and the length it gives them; None when no clip says."""
    said = [c for c in clips if isinstance(c.extras.get("time_base"), str)]
    if not said:
        return None
    notes = list(dict.fromkeys(c.extras["time_base"] for c in said))
    lengths = [f1 - f0 for f0, f1 in (c.frame_range(fps) for c in said)]
    longest = said[int(np.argmax(lengths))]
    return (f"time base {'; '.join(notes)}: {max(lengths):.4g} frames at {fps:g} fps"
            + (f" ({longest.name}, longest of {len(said)})" if len(said) > 1 else "")
            + "; set Time Base to change it")


def dense_keys(clip: Clip, fps: float) -> bool:
    """True when two keys of a channel are closer than MIN_KEY_GAP frames."""
    for ch in (clip.rotation, clip.translation, clip.scale):
        if len(ch.times) < 2:
            continue
        gaps = np.diff(clip.to_frames(ch.times, fps))
        same_track = ch.track_of_key[1:] == ch.track_of_key[:-1]
        if np.any(gaps[same_track] < MIN_KEY_GAP):
            return True
    return False


def _key(bag, bone: str, prop: str, frames, values, mode: str = rotation_modes.QUATERNION,
         keyed: dict | None = None) -> None:
    """Keys of one channel of one bone; rotations (w, x, y, z) go to the
    channel of the bone's rotation ``mode``."""
    if prop == "rotation_quaternion":
        prop, values = rotation_modes.keys(mode, values)
    path = f'pose.bones["{bpy.utils.escape_identifier(bone)}"].{prop}'
    fcurves.add_vector_keys(bag, path, frames, values, group=bone, keyed=keyed)   # extrapolation: CONSTANT, the default


_PROPS = ("location", "rotation_quaternion", "scale")


def _wxyz(r):
    return np.concatenate((r[..., 3:], r[..., :3]), axis=-1)


def static_channels(built: Built, clips: list[Clip]) -> dict[int, set[str]]:
    """For ACTION clips: the channels a clip must key even where it does not
    animate them, so that switching actions never leaves another action's
    values behind: those whose default value is not the identity, and those
    another ACTION clip animates. {bone index: {property}}."""
    t, r, s = armature_build.default_channels(built)
    out: dict[int, set[str]] = {}
    for bi in range(len(built.bones)):
        props = set()
        if np.abs(t[bi]).max() > 1e-9:
            props.add("location")
        if min(abs(r[bi, 3]) - 1.0, 0.0) < -1e-9:
            props.add("rotation_quaternion")
        if np.abs(s[bi] - 1.0).max() > 1e-9:
            props.add("scale")
        out[bi] = props
    for c in clips:
        if c.playback != "ACTION":
            continue
        for prop, ch in zip(_PROPS, (c.translation, c.rotation, c.scale)):
            for j in ch.targets.tolist():
                hit = np.nonzero(built.bones == j)[0]
                if len(hit):
                    out[int(hit[0])].add(prop)
    return out


def keyed_channels(clip: Clip, joints: np.ndarray) -> np.ndarray:
    """(len(joints), 3) bool: whether ``clip`` animates each joint's
    location, rotation, scale (the order of ``_PROPS``)."""
    out = np.zeros((len(joints), 3), dtype=bool)
    for k, ch in enumerate((clip.translation, clip.rotation, clip.scale)):
        on = np.zeros(len(clip.animated), dtype=bool)
        on[ch.targets] = True
        out[:, k] = on[joints] & clip.animated[joints]
    return out


def animator_loop(clip: Clip, fps: float) -> bool:
    """True when ``clip`` loops as the RiTE Animator does: its first frame
    once, then from the next frame to its last for ever (cycle = (start + 1,
    end + 1) in frames). Such an action is keyed on its range only and
    loops with a Cycles modifier on each F-curve: the modifier repeats the
    keys' span, so the frames after the last play first + 1, first + 2, ...
    (at the period's multiples Blender takes the last key), as the Animator
    goes from N-1 to 1."""
    if clip.cycle is None:
        return False
    f0, f1 = clip.frame_range(fps)
    c0, c1 = (float(x) for x in clip.to_frames(clip.cycle, fps))
    return f1 - f0 >= 1.0 and abs(c0 - (f0 + 1.0)) < 1e-6 and abs(c1 - (f1 + 1.0)) < 1e-6


def linear_mask(built: Built, clip: Clip, fps: float, key_every_frame: bool, exact: bool) -> np.ndarray | None:
    """Key Every Frame off, for a clip whose sampler knows which frames its
    keys need (``linear_keys``, e.g. RiTE's), on a rig whose rotation
    channels map linearly (``exact``, :func:`channel_mode_exact`): (K, J)
    bool, the frames of ``bone_keys.key_frames`` each joint's rotation is keyed on
    (the file's keys and every frame of the spans Blender's interpolation
    could not play, reported). None: key every frame."""
    sampler = clip.sampler
    if key_every_frame or not exact or sampler is None or not hasattr(sampler, "linear_keys"):
        return None
    _, times = bone_keys.key_frames(clip, fps)
    mask, note = sampler.linear_keys(times)
    if note:
        built.warnings.append(f"{clip.name}: {note}")
    out = np.ones((len(times), len(clip.animated)), dtype=bool)
    out[:, clip.rotation.targets] = mask
    return out


def resting_channels(built: Built, clips: list[Clip], baked: list, size: float) -> frozenset:
    """(bone index, property) pairs that every clip animating them holds at
    the default pose throughout (within 1e-9, of the model size for
    locations; at every baked frame, which includes the frames next to each
    of the clip's keys): no action need key them, the pose bones keep their
    default (tiny_4anim: 224 of its 1520 F-curves). For ACTION clips all
    baked (``baked``: their ``bone_keys.bake_clip``), since nothing else
    then sets those channels."""
    dt, dr, ds = armature_build.default_channels(built)
    still = np.ones((len(built.bones), 3), dtype=bool)
    for clip, (_, t, r, s) in zip(clips, baked):
        keyed = keyed_channels(clip, built.bones)
        if not keyed.any():
            continue
        off = np.stack((np.abs(t - dt[None]).max(axis=(0, 2)) / max(size, 1e-30),
                        np.minimum(np.abs(r - dr[None]), np.abs(r + dr[None])).max(axis=(0, 2)),
                        np.abs(s - ds[None]).max(axis=(0, 2)) / np.maximum(np.abs(ds).max(axis=1), 1e-30)), axis=1)
        still &= ~keyed | (off <= 1e-9)
    return frozenset((int(bi), _PROPS[int(k)]) for bi, k in zip(*np.nonzero(still)))


def build_action(built: Built, clip: Clip, fps: float, baked: bool, static: dict[int, set[str]],
                 channels=None, resting: frozenset = frozenset(), mask: np.ndarray | None = None,
                 size: float | None = None, room: bone_keys.Budget | None = None):
    """One action for ``clip``: baked (the clip's own playback, evaluated by
    ``bone_keys.bake_clip`` and keyed where ``bone_keys.baked_keys`` needs a
    key, its rotations on the frames ``mask`` (:func:`linear_mask`) keeps
    when given; ``channels``: the bake when already made; ``size``: the
    model's, ``evaluate.size``; ``room``: its ``bone_keys.budget``) or the
    file's keys mapped channel by channel. ``resting`` channels are not
    keyed. A clip that loops as the Animator does loops with Cycles modifiers."""
    action, slot, bag = fcurves.new_action_for(built.armature, clip.name)
    keyed: dict = {}            # the arrays of the keys set, for the fingerprint (add_vector_keys)
    sk = built.scene.skeleton
    assert sk is not None
    # joints without a bone move nothing shown (bones are made of every joint that does): no action needed
    for j in np.flatnonzero(clip.animated):
        if int(j) not in built.bone_names:
            group(built.warnings, "animated joints that move nothing shown have no bone, their keys are not "
                                  "imported", sk.names[j], fix="All Joints as Bones imports them", note=True)
    dt, dr, ds = armature_build.default_channels(built)
    f0 = clip.frame_range(fps)[0]
    modes = bone_modes(built)
    if baked:
        room = room or bone_keys.budget(built, size)
        # bones in Euler or axis-angle mode interpolate otherwise: keyed on every frame
        other_modes = any(modes[built.bone_names[int(j)]] != rotation_modes.QUATERNION
                          for j in clip.rotation.targets.tolist() if int(j) in built.bone_names)
        frames, t, r, s = (channels if channels is not None
                           else bone_keys.bake_clip(built, clip, fps, room,
                                                    every_frame=mask is not None or other_modes))
        animates = keyed_channels(clip, built.bones)
        wanted = {prop: [bi for bi in np.flatnonzero(animates[:, k]).tolist() if (bi, prop) not in resting]
                  for k, prop in enumerate(_PROPS)}
        keep = bone_keys.baked_keys(built, frames, (t, r, s), wanted, room, blended=clip.playback != "ACTION")
        for bi, j in enumerate(built.bones.tolist()):
            bone = built.bone_names[j]
            for k, (prop, vals) in enumerate(zip(_PROPS, (t[:, bi], _wxyz(r[:, bi]), s[:, bi]))):
                if (bi, prop) in resting:
                    continue
                if animates[bi, k]:
                    rows = (mask[:, j] if mask is not None and prop == "rotation_quaternion"
                            else slice(None) if prop == "rotation_quaternion"
                            and modes[bone] != rotation_modes.QUATERNION
                            else keep[prop][bi])
                    _key(bag, bone, prop, frames[rows], vals[rows], modes[bone], keyed)
                elif clip.playback == "ACTION" and prop in static.get(bi, ()):
                    _key(bag, bone, prop, [f0], {"location": dt, "rotation_quaternion": _wxyz(dr),
                                                 "scale": ds}[prop][bi][None], modes[bone], keyed)
    else:
        _key_channels(built, clip, fps, bag, static, (dt, dr, ds), f0, modes, keyed)
    lo, hi = clip.frame_range(fps)
    cycle = None
    if clip.cycle is not None:
        cycle = [float(x) for x in clip.to_frames(clip.cycle, fps)]
    loops = animator_loop(clip, fps)
    if loops:
        fcurves.add_cycles(bag)
    # an action plays from frame 0 as a DirectX set does; a range cut from a timeline plays its own frames
    action.frame_range = (min(lo, 0.0) if clip.playback == "ACTION" and TIMELINE not in clip.extras else lo,
                          max(hi, lo + 1.0))
    action.use_frame_range = True
    action.use_cyclic = loops
    metadata.store(action, metadata.CLIP_KEY, {
        "playback": clip.playback, "weight": clip.weight, "mix": clip.mix, "start": clip.start, "end": clip.end,
        "cycle": clip.cycle, "cycle_frames": cycle, "loops": loops, "ticks_per_second": clip.ticks_per_second,
        "baked": bool(baked), "extras": clip.extras})
    source_keys.record(action, clip, built.armature, keyed, loops)    # an export writes an untouched set key for key
    return action, slot


def bone_modes(built: Built) -> dict[str, str]:
    """Bone name -> its pose bone's rotation mode."""
    return {pb.name: pb.rotation_mode for pb in built.armature.pose.bones}


def _key_channels(built: Built, clip: Clip, fps: float, bag, static, default, f0, modes, keyed: dict) -> None:
    """The file's keys, channel by channel (exact when ``channel_mode_exact``)."""
    rs = built.rest
    t0, r0, s0 = bone_keys.local_channels(built)
    dt, dr, ds = default
    chans = {"location": clip.translation, "rotation_quaternion": clip.rotation, "scale": clip.scale}
    track_of = {prop: {int(j): k for k, j in enumerate(ch.targets)} for prop, ch in chans.items()}
    rest_of = {"location": t0, "rotation_quaternion": r0, "scale": s0}
    pending: dict[str, list] = {prop: [] for prop in chans}
    for bi, j in enumerate(built.bones.tolist()):
        bone = built.bone_names[j]
        if not clip.animated[j]:
            for prop, val in (("location", dt[bi]), ("rotation_quaternion", _wxyz(dr[bi])), ("scale", ds[bi])):
                if prop in static.get(bi, ()):
                    _key(bag, bone, prop, [f0], val[None], modes[bone], keyed)
            continue
        for prop, ch in chans.items():
            k = track_of[prop].get(j)
            if k is None:
                times, vals = np.array([clip.start]), rest_of[prop][j][None]
            else:
                lo, hi = ch.starts[k], ch.starts[k + 1]
                times, vals = ch.times[lo:hi], ch.values[lo:hi]
            pending[prop].append((bone, bi, j, times, vals))
    for prop, jobs in pending.items():
        if not jobs:
            continue
        counts = [len(job[3]) for job in jobs]
        vals = np.concatenate([job[4] for job in jobs])
        b = np.repeat([job[1] for job in jobs], counts)
        js = np.repeat([job[2] for job in jobs], counts)
        if prop == "location":
            out = rs.channels(vals, r0[js], s0[js], b)[0]
        elif prop == "rotation_quaternion":
            if clip.sampler is not None:
                # keys carry the sign of Clip.baked_rotations, as baked actions do
                ref_f, ref = clip.baked_rotations(r0, fps)
                at = np.concatenate([clip.to_frames(job[3], fps) for job in jobs])
                k = np.clip(np.searchsorted(ref_f, at - 1e-6), 0, len(ref_f) - 1)
                vals = vals * np.where(np.sum(vals * ref[k, js], axis=-1, keepdims=True) < 0, -1.0, 1.0)
            out = _wxyz(rs.channels(t0[js], vals, s0[js], b)[1])
        else:
            out = rs.channels(t0[js], r0[js], vals, b)[2]
        for job, part in zip(jobs, np.split(out, np.cumsum(counts)[:-1])):
            _key(bag, job[0], prop, clip.to_frames(job[3], fps), part, modes[job[0]], keyed)


def must_bake(built: Built, clip: Clip, fps: float, key_every_frame: bool, exact: bool) -> bool:
    """Key every frame: on request, for a clip with its own sampler, when the
    file's keys do not map channel by channel, or when they are too dense
    for F-curves (reported)."""
    if key_every_frame or clip.sampler is not None or not exact:
        return True
    modes = bone_modes(built)
    turned = [built.bone_names[int(j)] for j in clip.rotation.targets.tolist() if int(j) in built.bone_names
              and modes[built.bone_names[int(j)]] != rotation_modes.QUATERNION]
    if turned:
        built.warnings.append(f"{clip.name}: {len(turned)} bone(s) use Euler or axis-angle rotation, which "
                              f"interpolates otherwise between keys: every frame keyed in their mode "
                              f"({', '.join(turned[:8])}{' ...' if len(turned) > 8 else ''})")
        return True
    if dense_keys(clip, fps):
        built.warnings.append(f"{clip.name}: keys closer than {MIN_KEY_GAP} frame (Blender would merge "
                              f"them): every frame baked")
        return True
    return False


def build_clips(built: Built, fps: float, key_every_frame: bool, size: float) -> None:
    """Every clip of the built scene as an action on its armature, keyed
    channel by channel where that is exact and baked otherwise (reported),
    in ``built.actions`` (``anim_place.place_actions`` places them)."""
    clips = built.scene.clips
    exact = channel_mode_exact(built, size)
    built.baked = bool(key_every_frame or not exact)
    if not key_every_frame and not exact:
        built.warnings.append("the rest pose cannot hold the bind pose exactly (non-uniform scale or rest "
                              "from the default pose): animation baked on every frame")
    static = static_channels(built, clips)
    for clip in clips:
        short_clip_warning(built, clip, fps)
    modes = [must_bake(built, clip, fps, built.baked, exact) for clip in clips]
    masks = [linear_mask(built, clip, fps, key_every_frame, exact) if baked else None
             for clip, baked in zip(clips, modes)]
    pre: list = [None] * len(clips)
    room = bone_keys.budget(built, size)
    resting: frozenset = frozenset()
    if all(modes) and all(c.playback == "ACTION" for c in clips):
        pre = [bone_keys.bake_clip(built, clip, fps, room, every_frame=mask is not None)
               for clip, mask in zip(clips, masks)]
        resting = resting_channels(built, clips, pre, size)
    for clip, baked, channels, mask in zip(clips, modes, pre, masks):
        action, slot = build_action(built, clip, fps, baked, static, channels, resting, mask, size, room)
        built.actions.append((action, slot, clip))
