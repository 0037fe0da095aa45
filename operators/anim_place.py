# SPDX-License-Identifier: GPL-3.0-or-later
"""Where an import's actions play (:func:`place_actions`, for a model's
clips and for animation files added onto an armature alike): each ACTION
clip on a muted NLA track (so none is lost), the first one the active
action; layered clips as the layer stack on the armature's NLA
(:func:`place_layers`): the RiTE Animator's mergeable and dominant
animations (``core.blend``), exact at every whole frame.

Each layer action plays on its own track from frame 0 (a looping one loops
by its Cycles modifiers, ``anim_build.animator_loop``), the mergeable ones
below the dominant ones, which are Replace strips of influence 1. The
mergeable ones by the stack's mix:

* ``ANIMATOR_2006``: Replace strips of influence 1 in order: each overwrites
  the channels it animates, as the 2006 Animator's loop does;
* ``WEIGHTED``: a "mix base" track at the bottom, a Replace strip keying
  (0, 0, 0, 0) on every bone a mergeable layer rotates (and 0 on the
  locations and scales they animate), then each layer as an Add strip of
  influence ``w_i / sum(w)``. A bone's rotation channel is then
  ``sum_i w_i s_i q_i / sum(w)`` over the layers that rotate it: a positive
  multiple of the weighted sum over exactly those layers, whatever their
  order, and Blender normalises a quaternion before it poses a bone, so the
  bone takes ``core.blend.weighted_mix``. (A bone whose rotating layers all
  weigh 0 gets its default rotation from the base instead of the zero
  quaternion, which Blender would turn into a half turn about X.) The
  signs ``s_i`` (``core.blend.mix_signs``) are each layer's at each frame:
  a layer whose keys need a sign flip plays a copy of its action with the
  signs in its keys ("signed"); if its sign at one of its frames differs
  from one of its loops to the next (layers of different lengths more than
  90 degrees apart), the copy is keyed over the stack's whole loop instead
  (reported).

The actions the stack makes for itself (the base, signed copies) carry
``metadata.MIX_KEY`` and no clip metadata: they are rebuilt with the stack,
and exporters leave them out.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import bpy
import numpy as np

from ..core import blend
from ..scene import Clip
from ..scene.timeline import TIMELINE
from . import anim_build, anim_extract, armature_build, fcurves, metadata

if TYPE_CHECKING:
    from .built import Built

#: the longest stack loop keyed frame by frame (a signed copy over the whole loop, the scene range)
LOOP_LIMIT = 10000
#: a looping strip plays this many times the longest layer (then holds)
STRIP_LOOPS = 10
_ROT = "rotation_quaternion"


@dataclass
class _Layer:
    action: Any
    slot: Any
    playback: str
    weight: float
    meta: dict = field(default_factory=dict)

    @property
    def span(self) -> tuple[float, float]:
        lo, hi = (float(x) for x in self.action.frame_range)
        return lo, hi

    @property
    def loops(self) -> bool:
        lo, hi = self.span
        return bool(self.meta.get("loops")) and hi - lo >= 1.0

    @property
    def period(self) -> int:
        lo, hi = self.span
        return int(round(hi - lo))

    def clock(self, frames: np.ndarray) -> np.ndarray:
        """The action frame this layer plays at each scene frame (its strip starts at its first frame)."""
        lo, hi = self.span
        if not self.loops:
            return np.clip(frames, lo, hi)
        return np.where(frames <= hi, np.maximum(frames, lo), lo + 1.0 + np.mod(frames - lo - 1.0, hi - lo))


def _stack(ad, remove: bool) -> tuple[list[_Layer], str | None, list]:
    """The layers of the stack on ``ad`` (bottom first), its mix and the
    stack's own actions; with ``remove``, the stack's tracks are removed
    (the caller removes those actions once the new stack is in place)."""
    out, mix, own_actions = [], None, []
    for tr in list(ad.nla_tracks):
        if not len(tr.strips) or tr.strips[0].action is None:
            continue
        strip = tr.strips[0]
        act = strip.action
        own = metadata.load(act, metadata.MIX_KEY)
        slot = strip.action_slot
        if own is not None:
            if own.get("role") == "signed":
                src = bpy.data.actions.get(own.get("source", ""))
                meta = metadata.load(src, metadata.CLIP_KEY) if src is not None else None
                if meta is not None:
                    ident = slot.identifier if slot is not None else None
                    slot = next((s for s in src.slots if s.identifier == ident), src.slots[0] if len(src.slots)
                                else None)
                    out.append(_Layer(src, slot, metadata.playback(meta, "MERGEABLE"), float(meta.get("weight", 1.0)),
                                      meta))
            own_actions.append(act)
            if remove:
                ad.nla_tracks.remove(tr)
            continue
        meta = metadata.load(act, metadata.CLIP_KEY)
        if meta and metadata.playback(meta) in ("MERGEABLE", "DOMINANT"):
            out.append(_Layer(act, slot, metadata.playback(meta), float(meta.get("weight", 1.0)), meta))
            if remove:
                ad.nla_tracks.remove(tr)
    for e in out:
        if e.playback == "MERGEABLE" and e.meta.get("mix") in blend.MIXES:
            mix = e.meta["mix"]
    return out, mix, own_actions


def place_actions(built: Built, fps: float) -> tuple[float, float] | None:
    """ACTION clips: each on a muted NLA track (so none is lost), the first
    active. Layered clips: the layer stack (:func:`place_layers`).
    Returns the scene frame range to play: the active clip's loop when it
    loops as the Animator does, else the span of the clips."""
    arm = built.armature
    ad = arm.animation_data or arm.animation_data_create()
    acts = [(a, s, c) for a, s, c in built.actions if c.playback == "ACTION"]
    layers = [(a, s, c) for a, s, c in built.actions if c.playback != "ACTION"]
    for action, slot, clip in acts:
        track = ad.nla_tracks.new()
        track.name = clip.name
        strip = track.strips.new(action.name, int(np.floor(action.frame_range[0])), action)
        strip.action_slot = slot
        track.mute = True
    if acts:
        fcurves.assign_action(arm, acts[0][0], acts[0][1])
    stack = None
    if layers:
        mix = next((c.mix for _, _, c in reversed(layers) if c.playback != "DOMINANT"), None)
        stack = place_layers(built, [(a, s, c.playback, c.weight) for a, s, c in layers], fps, mix=mix)
    for a, _, _ in built.actions:      # nothing imported is lost on save and reload
        a.use_fake_user = True
    if not built.actions:
        return None
    if acts and (loop := loop_range(acts[0][2], fps)) is not None:
        return loop
    if stack is not None and not acts:
        return stack
    if acts and TIMELINE in acts[0][2].extras:       # a range of a timeline: its own frames
        return acts[0][2].frame_range(fps)
    ranges = [c.frame_range(fps) for _, _, c in built.actions]
    return min(min(r[0] for r in ranges), 0.0), max(r[1] for r in ranges)


def loop_range(clip: Clip, fps: float) -> tuple[float, float] | None:
    """The scene frames that loop cleanly for a clip that loops as the
    Animator does (1..N-1: the scene's end -> start is the Animator's
    N-1 -> 1), else None."""
    if not anim_build.animator_loop(clip, fps):
        return None
    f0, f1 = clip.frame_range(fps)
    return f0 + 1.0, f1


def place_layers(built: Built, new: list, fps: float = 24.0, mix: str | None = None) -> tuple[float, float]:
    """(Re)build the layer stack on ``built.armature``: the layers already
    there plus ``new`` (action, slot, playback, weight), mergeable ones (in
    order) below dominant ones, the mergeable ones mixed by ``mix`` (None:
    the stack's mix so far, else "WEIGHTED"). Returns the scene frames to
    play: 1 to the stack's loop (the least common multiple of the layers'
    loops) when every layer loops and that is at most LOOP_LIMIT frames, else
    0 to the end of the longest layer."""
    arm_obj = built.armature
    ad = arm_obj.animation_data or arm_obj.animation_data_create()
    layers, old_mix, stale = _stack(ad, remove=True)
    for action, slot, playback, weight in new:
        layers.append(_Layer(action, slot, playback, float(weight), metadata.load(action, metadata.CLIP_KEY) or {}))
    mix = mix or old_mix or "WEIGHTED"
    merge = [e for e in layers if e.playback != "DOMINANT"]
    dom = [e for e in layers if e.playback == "DOMINANT"]
    for e in layers:
        e.meta.update(playback=e.playback, weight=e.weight, mix=mix)
        metadata.store(e.action, metadata.CLIP_KEY, e.meta)
    others = list(ad.nla_tracks)
    prev = others[-1] if others else None
    longest = max([e.span[1] for e in layers] + [1.0])
    plays = [(e, e.action, e.slot, "REPLACE", 1.0) for e in merge]
    base = None
    if mix == "WEIGHTED" and merge:
        base, plays = _weighted(built, merge)
        prev = _track(ad, prev, "mix base", base[0], base[1], "REPLACE", 1.0, None, longest)
    for e, action, slot, blend_type, influence in plays + [(e, e.action, e.slot, "REPLACE", 1.0) for e in dom]:
        prev = _track(ad, prev, e.action.name, action, slot, blend_type, influence, e, longest)
    ad.action = None
    for act in stale:
        bpy.data.actions.remove(act)
    for e, action, *_ in plays:           # the names the old stack's actions held
        if action is not e.action:
            action.name = f"{e.action.name} (mix signs)"
    if base is not None:
        base[0].name = f"{arm_obj.name} mix base"
    loop = _loop(layers)
    if loop is not None and loop <= LOOP_LIMIT:
        return 1.0, float(loop)
    return 0.0, longest


def _loop(layers: list[_Layer]) -> int | None:
    """The stack's loop in frames (every layer looping), else None."""
    if not layers or not all(e.loops for e in layers):
        return None
    return math.lcm(*[max(e.period, 1) for e in layers])


def _track(ad, prev, name: str, action, slot, blend_type: str, influence: float, layer: _Layer | None,
           longest: float):
    """One NLA track above ``prev`` with one strip of ``action`` from its
    first frame (a looping action to STRIP_LOOPS times the longest layer)."""
    tr = ad.nla_tracks.new(prev=prev)
    tr.name = name
    lo, hi = (float(x) for x in action.frame_range)
    st = tr.strips.new(name, int(np.floor(lo)), action)
    st.action_slot = slot
    if layer is not None and layer.loops:
        st.action_frame_start, st.action_frame_end = lo, max(hi, lo + STRIP_LOOPS * longest)
    st.blend_type = blend_type
    st.extrapolation = "HOLD_FORWARD" if prev is not None else "HOLD"
    if influence < 1.0:
        st.use_animated_influence = True
        for fc in st.fcurves:
            if fc.data_path == "influence":
                for kp in fc.keyframe_points:
                    kp.co[1] = influence
                fc.update()
        st.influence = influence
    return tr


# ---------------------------------------------------------------------------
# the weighted mix

def _channels(action, arm, bones) -> dict:
    """{bone: {property: {index: fcurve}}} of ``action`` for the bones named ``bones`` of ``arm``."""
    return anim_extract.action_channels(action, arm.pose.bones, bones)


def _weighted(built: Built, merge: list[_Layer]):
    """The base action and the (layer, action, slot, "ADD", influence) each
    mergeable layer plays in the WEIGHTED mix (see the module doc)."""
    arm = built.armature
    names = {b.name for b in arm.data.bones}
    chans = [_channels(e.action, arm, names) for e in merge]
    bones = sorted({b for ch in chans for b, props in ch.items() if _ROT in props})
    index = {b: k for k, b in enumerate(bones)}
    weights = np.array([e.weight for e in merge], dtype=np.float64)
    total = float(weights.sum())
    # the frames the signs are checked over: the mergeable layers' loop (plus the end of any that holds)
    loop = _loop(merge)
    holds = max([e.span[1] for e in merge if not e.loops] + [1.0])
    horizon = loop if loop is not None else int(np.ceil(holds)) + math.lcm(*[max(e.period, 1) for e in merge
                                                                                 if e.loops] or [1])
    horizon = min(horizon, LOOP_LIMIT)
    scene = np.arange(horizon + 1, dtype=np.float64)
    rots, acts, times, at_scene = [], [], [], []
    for e, ch in zip(merge, chans):
        t = e.clock(scene)
        uniq, idx = np.unique(t, return_inverse=True)
        r = np.zeros((len(uniq), len(bones), 4))
        r[..., 0] = 1.0
        act = np.zeros(len(bones), dtype=bool)
        for b, props in ch.items():
            if _ROT not in props:
                continue
            k = index[b]
            act[k] = True
            for i, fc in props[_ROT].items():
                r[:, k, i] = fcurves.fcurve_values(fc, uniq)
        rots.append(r)
        acts.append(act)
        times.append(uniq)
        at_scene.append(idx)
    signs = blend.mix_signs([r[i] for r, i in zip(rots, at_scene)], acts, weights)
    plays = []
    for e, ch, r, act, uniq, idx, s in zip(merge, chans, rots, acts, times, at_scene, signs):
        want = np.ones((len(uniq), len(bones)))
        want[idx] = s
        steady = bool(np.all((want[idx] == s) | ~act[None]))
        unit = np.abs(np.linalg.norm(r[:, act], axis=-1) - 1.0).max(initial=0.0) <= 1e-6
        whole = _keyed_on(ch, uniq)
        infl = e.weight / total if total > 0 else 0.0
        if steady and unit and whole and np.all(want[:, act] > 0):
            plays.append((e, e.action, e.slot, "ADD", infl))
            continue
        if steady:
            frames, vals, loops = uniq, r * want[..., None], e.loops
        else:
            frames, vals, loops = scene, r[idx] * s[..., None], loop is not None
            built.warnings.append(
                f"layer {e.action.name!r}: its sign in the weighted mix changes from one of its loops to the next "
                f"(layers of different lengths more than 90 degrees apart): keyed over the stack's whole loop "
                f"({horizon} frames)" + ("" if loop is not None else f", exact to frame {horizon}"))
        action, slot = _signed_copy(e, bones, act, frames, vals, loops)
        plays.append((e, action, slot, "ADD", infl))
    _partial_warning(built, merge, chans, weights)
    return _base(built, bones, acts, weights, chans), plays


def _keyed_on(ch: dict, frames: np.ndarray) -> bool:
    """Whether every rotation curve of a layer is keyed exactly on ``frames``."""
    for props in ch.values():
        for fc in props.get(_ROT, {}).values():
            n = len(fc.keyframe_points)
            co = np.empty(2 * n, dtype=np.float32)
            fc.keyframe_points.foreach_get("co", co)
            if n != len(frames) or np.abs(co[0::2] - frames).max(initial=0.0) > 1e-4:
                return False
    return True


def _signed_copy(e: _Layer, bones: list[str], act: np.ndarray, frames: np.ndarray, vals: np.ndarray, loops: bool):
    """A copy of ``e``'s action whose rotation curves are ``vals`` (F, B, 4)
    (w, x, y, z) normalised, keyed at ``frames``; Cycles modifiers if ``loops``."""
    src = e.action
    copy = src.copy()
    copy.name = f"{src.name} (mix signs)"
    copy.use_fake_user = False
    if metadata.CLIP_KEY in copy:
        del copy[metadata.CLIP_KEY]
    metadata.store(copy, metadata.MIX_KEY, {"role": "signed", "source": src.name})
    ident = e.slot.identifier if e.slot is not None else None
    slot = next((s for s in copy.slots if s.identifier == ident), copy.slots[0])
    bag = fcurves.ensure_channelbag(copy, slot)
    unit = vals / np.where(np.linalg.norm(vals, axis=-1, keepdims=True) > 0,
                           np.linalg.norm(vals, axis=-1, keepdims=True), 1.0)
    for k in np.flatnonzero(act).tolist():
        path = f'pose.bones["{bpy.utils.escape_identifier(bones[k])}"].{_ROT}'
        for fc in [fc for fc in bag.fcurves if fc.data_path == path]:
            bag.fcurves.remove(fc)
        fcurves.add_vector_keys(bag, path, frames, unit[:, k], group=bones[k])
    if loops:
        fcurves.add_cycles(bag)
    copy.frame_range = (float(frames[0]), max(float(frames[-1]), float(frames[0]) + 1.0))
    copy.use_frame_range = True
    copy.use_cyclic = loops
    return copy, slot


def _base(built: Built, bones: list[str], acts: list[np.ndarray], weights: np.ndarray, chans: list[dict]):
    """The mix base: (0, 0, 0, 0) on each rotated bone (its default
    rotation where every layer rotating it weighs 0), 0 on the locations
    and scales the layers animate."""
    arm = built.armature
    action, slot, bag = fcurves.new_action_for(arm, f"{arm.name} mix base")
    metadata.store(action, metadata.MIX_KEY, {"role": "base"})
    rest_rot = {}
    if built.rest is not None and built.scene.skeleton is not None:
        _, dr, _ = armature_build.default_channels(built)
        rest_rot = {built.bone_names[int(j)]: dr[bi] for bi, j in enumerate(built.bones.tolist())}
    held = np.zeros(len(bones))
    for w, act in zip(weights, acts):
        held += np.where(act, w, 0.0)
    for k, b in enumerate(bones):
        q = np.zeros(4)
        if held[k] <= 0:
            d = rest_rot.get(b, np.array([0.0, 0.0, 0.0, 1.0]))
            q = np.array([d[3], d[0], d[1], d[2]])
        path = f'pose.bones["{bpy.utils.escape_identifier(b)}"].{_ROT}'
        fcurves.add_vector_keys(bag, path, [0.0], q[None], group=b)
    others = sorted({(b, p) for ch in chans for b, props in ch.items() for p in props if p in ("location", "scale")})
    for b, p in others:
        path = f'pose.bones["{bpy.utils.escape_identifier(b)}"].{p}'
        fcurves.add_vector_keys(bag, path, [0.0], np.zeros((1, 3)), group=b)
    action.frame_range = (0.0, 1.0)
    return action, slot


def _partial_warning(built: Built, merge: list[_Layer], chans: list[dict], weights: np.ndarray) -> None:
    """Locations and scales only some mergeable layers animate are added
    weighted by w / sum(w) of all of them (a rotation is normalised, a
    location is not): reported."""
    total = float(weights.sum())
    by: dict = {}
    for w, ch in zip(weights, chans):
        for b, props in ch.items():
            for p in props:
                if p in ("location", "scale"):
                    by[(b, p)] = by.get((b, p), 0.0) + float(w)
    partial = sorted(k for k, w in by.items() if abs(w - total) > 1e-9 * max(total, 1.0))
    if partial:
        built.warnings.append(f"{len(partial)} location/scale channel(s) are animated by only some mergeable "
                              f"layers: mixed as w / (sum of all weights) of each, not averaged over those layers: "
                              f"{', '.join(f'{b}.{p}' for b, p in partial[:6])}{' ...' if len(partial) > 6 else ''}")
