# SPDX-License-Identifier: GPL-3.0-or-later
"""Slotted actions and F-curves in bulk (Blender 4.4+ / 5.0 API)."""
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
    ad = id_data.animation_data or id_data.animation_data_create()
    ad.action = action
    ad.action_slot = slot


def add_keys(channelbag, data_path: str, frames, values, *, index: int = 0,
             group: str | None = None, interpolation: str = "LINEAR"):
    """One F-curve with len(frames) keys set through foreach_set."""
    frames = np.asarray(frames, dtype=np.float32).reshape(-1)
    values = np.asarray(values, dtype=np.float32).reshape(-1)
    fc = channelbag.fcurves.new(data_path, index=index)
    if group:
        grp = channelbag.groups.get(group) or channelbag.groups.new(group)
        fc.group = grp
    kp = fc.keyframe_points
    kp.add(len(frames))
    co = np.empty(2 * len(frames), dtype=np.float32)
    co[0::2] = frames
    co[1::2] = values
    kp.foreach_set("co", co)
    kp.foreach_set("interpolation", np.full(len(frames), _INTERP[interpolation], dtype=np.int32))
    fc.update()
    return fc


def add_vector_keys(channelbag, data_path: str, frames, values, *, group: str | None = None,
                    interpolation: str = "LINEAR") -> list:
    """One F-curve per component of ``values`` (K, C)."""
    values = np.asarray(values)
    return [add_keys(channelbag, data_path, frames, values[:, c], index=c, group=group,
                     interpolation=interpolation) for c in range(values.shape[1])]
