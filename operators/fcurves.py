# SPDX-License-Identifier: GPL-3.0-or-later
"""Slotted actions and their F-curves (Blender 4.4+ / 5.0 API), the one
place that makes and walks them: an action with a slot for an ID and its
channelbag (:func:`new_action_for`, :func:`ensure_channelbag`), the action
assigned with its slot (:func:`assign_action`), keys in bulk
(:func:`add_vector_keys`), Cycles modifiers (:func:`add_cycles`), every
F-curve of an action whatever its layers and slots (:func:`fcurves`), and
an F-curve's values at many frames (:func:`fcurve_values`).
"""
from __future__ import annotations

import bpy
import numpy as np
from bpy_extras import anim_utils

_INTERP = {"CONSTANT": 0, "LINEAR": 1, "BEZIER": 2}


def ensure_channelbag(action, slot):
    """The slot's channelbag (created if needed): Blender 5.0's helper, or the
    same steps on 4.5 LTS, which lacks it."""
    helper = getattr(anim_utils, "action_ensure_channelbag_for_slot", None)
    if helper is not None:
        return helper(action, slot)
    layer = action.layers[0] if len(action.layers) else action.layers.new("Layer")
    strip = layer.strips[0] if len(layer.strips) else layer.strips.new(type="KEYFRAME")
    return strip.channelbag(slot, ensure=True)


def new_action_for(id_data, name: str):
    """A new action with one slot for ``id_data``; returns (action, slot, channelbag)."""
    action = bpy.data.actions.new(name)
    slot = action.slots.new(id_type=id_data.id_type, name=id_data.name)
    return action, slot, ensure_channelbag(action, slot)


def assign_action(id_data, action, slot) -> None:
    """``id_data`` plays ``action`` through ``slot`` (Blender 5.0 wants the slot beside every action)."""
    ad = id_data.animation_data or id_data.animation_data_create()
    ad.action = action
    ad.action_slot = slot


#: Blender 5.0's ``fcurves.new`` puts the curve in a group by name (made if need
#: be) itself: no group lookup in Python, no assignment (4.5 has no such argument).
_NEW_IN_GROUP = bpy.app.version >= (5, 0, 0)


def add_vector_keys(channelbag, data_path: str, frames, values, *, group=None,
                    interpolation: str = "LINEAR", keyed: dict | None = None) -> list:
    """One F-curve per component of ``values`` (K, C), each with K keys set
    through foreach_set, in ``group`` (an action group, or its name);
    ``keyed``: gets the arrays set, for ``source_keys.fingerprint``."""
    frames = np.asarray(frames, dtype=np.float32).reshape(-1)
    values = np.asarray(values, dtype=np.float32).reshape(len(frames), -1)
    co = np.empty((values.shape[1], len(frames), 2), dtype=np.float32)   # per curve: frame, value, ...
    co[:, :, 0] = frames
    co[:, :, 1] = values.T
    interp = np.full(len(frames), _INTERP[interpolation], dtype=np.int32)
    by_name = group if isinstance(group, str) and group and _NEW_IN_GROUP else None
    group = None if by_name is not None else _group(channelbag, group)   # looked up once for every component
    plain = keyed if keyed is not None and keyed_plainly(interpolation) else None
    out = []
    for c in range(values.shape[1]):
        if by_name is not None:
            fc = channelbag.fcurves.new(data_path, index=c, group_name=by_name)
        else:
            fc = channelbag.fcurves.new(data_path, index=c)
        if group is not None:
            fc.group = group
        kp = fc.keyframe_points
        kp.add(len(frames))
        kp.foreach_set("co", co[c].reshape(-1))
        kp.foreach_set("interpolation", interp)
        fc.update()
        if plain is not None:
            plain[(data_path, c)] = (co[c].reshape(-1), interp)
        out.append(fc)
    return out


def _group(channelbag, group):
    """The action group ``group`` names (made if need be), the group itself, or None."""
    if isinstance(group, str):
        return (channelbag.groups.get(group) or channelbag.groups.new(group)) if group else None
    return group


def add_cycles(bag) -> None:
    """A Cycles modifier (nothing before the first key, repeat after the
    last) on each F-curve of ``bag`` with two keys or more."""
    for fc in bag.fcurves:
        if len(fc.keyframe_points) > 1 and not any(m.type == "CYCLES" for m in fc.modifiers):
            mod = fc.modifiers.new("CYCLES")
            mod.mode_before = "NONE"
            mod.mode_after = "REPEAT"


def channelbags(action):
    """Every channelbag of an action (any layer, strip and slot)."""
    for layer in action.layers:
        for strip in layer.strips:
            yield from strip.channelbags


def fcurves(action) -> list:
    """Every F-curve of an action (any layer, strip and slot)."""
    return [fc for bag in channelbags(action) for fc in bag.fcurves]


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


def keyed_plainly(interpolation: str) -> bool:
    """Whether keys of this interpolation play by their frames and values
    alone (no handles, no easing): their arrays can stand for them in
    :func:`.source_keys.fingerprint`'s ``keyed``."""
    return interpolation in ("CONSTANT", "LINEAR")
