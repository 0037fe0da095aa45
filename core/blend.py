# SPDX-License-Identifier: GPL-3.0-or-later
"""Animation stacks: mergeable animations mixed by weight, dominant ones
overriding the joints they animate (the Animator of the RiTE skeletal
animation system document, seed 000), defined exactly the way Blender's NLA
evaluates a stack of Replace strips with influence, so an import into NLA
tracks can be checked frame by frame.

NLA Replace with influence ``w`` on a channel: ``value = lower + (strip - lower) * w``
per component (quaternion components included; Blender normalises the
quaternion only when it builds the pose matrix). Channels a strip does not
animate pass the lower value through.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class Layer:
    """One animation in the stack.

    rotations: (F, J, 4) joint rotations the animation sets at each frame
    active:    (F, J) or (J,) bool, where the animation animates the joint
    influence: Blender strip influence in [0, 1]
    """

    rotations: np.ndarray
    active: np.ndarray
    influence: float = 1.0


def mergeable_influences(weights) -> np.ndarray:
    """Influences that turn a bottom-up stack of Replace strips into the
    weighted average of mergeable animations: ``w_i / (w_1 + ... + w_i)``.
    Weights need not sum to 1; zero weights give influence 0."""
    w = np.asarray(weights, dtype=np.float64)
    if np.any(w < 0):
        raise ValueError("animation weights must be >= 0")
    c = np.cumsum(w)
    return np.where(c > 0, w / np.where(c > 0, c, 1.0), 0.0)


def evaluate_stack(base: np.ndarray, layers: list[Layer]) -> np.ndarray:
    """Blend ``layers`` (bottom first) over ``base`` rotations (J, 4) or
    (F, J, 4). Returns (F, J, 4), not normalised (as Blender's channels)."""
    if not layers:
        return np.asarray(base, dtype=np.float64)[None] if np.ndim(base) == 2 else np.asarray(base, dtype=np.float64)
    F = layers[0].rotations.shape[0]
    cur = np.broadcast_to(np.asarray(base, dtype=np.float64), layers[0].rotations.shape).copy()
    for layer in layers:
        rot = np.asarray(layer.rotations, dtype=np.float64)
        if rot.shape[0] != F:
            raise ValueError("all layers must be sampled at the same frames")
        act = np.broadcast_to(np.asarray(layer.active, dtype=bool), rot.shape[:-1])
        w = float(layer.influence)
        mixed = cur + (rot - cur) * w
        cur = np.where(act[..., None], mixed, cur)
    return cur


def stack_from_animations(mergeable: list[tuple[np.ndarray, np.ndarray, float]],
                          dominant: list[tuple[np.ndarray, np.ndarray]]) -> list[Layer]:
    """The RiTE document's Animator (seed 000) as layers: mergeable (rotations, active, weight)
    first with weighted-average influences, then dominant (rotations, active)
    at influence 1."""
    infl = mergeable_influences([m[2] for m in mergeable]) if mergeable else []
    layers = [Layer(r, a, float(i)) for (r, a, _), i in zip(mergeable, infl)]
    layers += [Layer(r, a, 1.0) for r, a in dominant]
    return layers
