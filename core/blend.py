# SPDX-License-Identifier: GPL-3.0-or-later
"""Animation stacks: the RiTE Animator's mergeable and dominant animations
(the RiTE skeletal animation system document; its C# in tests/rite_seed.py).

Every animation of a stack plays on its own clock; at each frame each gives
its joints' rotations (unit quaternions) and the stack combines them:

* the mergeable animations first, by one of two mixes:

  - ``WEIGHTED`` (the document's design, its stated next step): per joint, the
    weighted average of the rotations of the mergeable animations that
    animate it (weights normalised over those animations only, so a joint
    one animation alone animates takes that animation's rotation whatever
    its weight). The "SLERP like" average is the normalised weighted sum of
    the quaternions, each taken in the sign nearer to the sum of those
    before it (:func:`mix_signs`): for two rotations this is nlerp, equal to
    slerp at equal weights (:func:`mix_angle_from_slerp` measures the rest);
  - ``ANIMATOR_2006`` (the document's 2006 code): each mergeable animation
    in order overwrites the joints it animates, weights unused;

* then the dominant ones, in order, each overwriting the joints it animates.

Joints no animation sets keep their default rotation; so does a joint whose
mergeable animations all have weight 0.

Blender reproduces both mixes exactly at whole frames with NLA strips (see
``operators/anim_build.py``): ``ANIMATOR_2006`` as Replace strips in order;
``WEIGHTED`` as a Replace strip holding (0, 0, 0, 0) under Add strips of
influence ``w_i / sum(w)`` whose keys carry :func:`mix_signs`' signs, so a
channel is ``sum_i w_i s_i q_i / sum(w)`` over the strips that animate it, a
positive multiple of the weighted sum, which Blender normalises when it
builds the pose.
"""
from __future__ import annotations

import numpy as np

MIXES = ("WEIGHTED", "ANIMATOR_2006")


def _unit(q: np.ndarray) -> np.ndarray:
    n = np.linalg.norm(q, axis=-1, keepdims=True)
    return q / np.where(n > 0, n, 1.0)


def mix_signs(rotations: list[np.ndarray], active: list[np.ndarray], weights) -> list[np.ndarray]:
    """The sign (+1 or -1) each mergeable animation's rotation takes in the
    weighted mix: against the weighted sum of the animations before it in
    the list that animate the joint (+1 where that sum is zero, e.g. for
    the first). ``rotations``: (F, J, 4) each; ``active``: (J,) bool each.
    Returns (F, J) arrays."""
    if not rotations:
        return []
    acc = np.zeros(np.shape(rotations[0]), dtype=np.float64)
    out = []
    for rot, act, w in zip(rotations, active, weights):
        q = _unit(np.asarray(rot, dtype=np.float64))
        s = np.where(np.sum(q * acc, axis=-1) < 0, -1.0, 1.0)
        out.append(s)
        on = np.broadcast_to(np.asarray(act, dtype=bool), s.shape)
        acc = acc + np.where(on[..., None], float(w) * s[..., None] * q, 0.0)
    return out


def weighted_mix(default: np.ndarray, rotations: list[np.ndarray], active: list[np.ndarray],
                 weights) -> np.ndarray:
    """The ``WEIGHTED`` mix: (F, J, 4) unit rotations over ``default`` (J, 4)
    or (F, J, 4). Joints no animation animates, or only animations of
    weight 0, keep the default."""
    w = np.asarray(list(weights), dtype=np.float64)
    if np.any(w < 0):
        raise ValueError("animation weights must be >= 0")
    shape = np.shape(rotations[0]) if rotations else np.shape(default)
    out = np.broadcast_to(np.asarray(default, dtype=np.float64), shape).copy()
    if not rotations:
        return out
    acc = np.zeros(shape, dtype=np.float64)
    total = np.zeros(shape[-2], dtype=np.float64)
    for rot, act, s, wi in zip(rotations, active, mix_signs(rotations, active, w), w):
        on = np.asarray(act, dtype=bool)
        acc += np.where(on[..., None], wi * s[..., None] * _unit(np.asarray(rot, dtype=np.float64)), 0.0)
        total += np.where(on, wi, 0.0)
    mixed = total > 0
    out[..., mixed, :] = _unit(acc[..., mixed, :])
    return out


def overwrite(default: np.ndarray, rotations: list[np.ndarray], active: list[np.ndarray]) -> np.ndarray:
    """Each animation in order overwrites the joints it animates (the 2006
    Animator's loops): (F, J, 4) unit rotations over ``default``."""
    shape = np.shape(rotations[0]) if rotations else np.shape(default)
    out = np.broadcast_to(np.asarray(default, dtype=np.float64), shape).copy()
    for rot, act in zip(rotations, active):
        on = np.asarray(act, dtype=bool)
        out[..., on, :] = _unit(np.asarray(rot, dtype=np.float64)[..., on, :])
    return out


def animator(default: np.ndarray, mergeable: list[tuple[np.ndarray, np.ndarray, float]],
             dominant: list[tuple[np.ndarray, np.ndarray]], mix: str = "WEIGHTED") -> np.ndarray:
    """The Animator: ``mergeable`` (rotations (F, J, 4), active (J,), weight)
    mixed by ``mix`` ("WEIGHTED" or "ANIMATOR_2006"), then ``dominant``
    (rotations, active) overwriting. Returns (F, J, 4) unit rotations."""
    if mix not in MIXES:
        raise ValueError(f"unknown mix {mix!r} (one of {', '.join(MIXES)})")
    rots = [m[0] for m in mergeable]
    acts = [m[1] for m in mergeable]
    if mix == "WEIGHTED":
        out = weighted_mix(default, rots, acts, [m[2] for m in mergeable])
    else:
        out = overwrite(default, rots, acts)
    if dominant:
        out = overwrite(out, [d[0] for d in dominant], [d[1] for d in dominant])
    return out


def mix_angle_from_slerp(angle: float, weight: float) -> float:
    """How far (radians, as a rotation) the weighted mix of two rotations
    ``angle`` radians apart, the second with ``weight`` (the first with
    ``1 - weight``), is from slerp at ``weight``: both turn about the same
    axis; nlerp reaches ``atan2(w sin a, (1 - w) + w cos a)`` of the half
    angle ``a`` where slerp reaches ``w a``."""
    half = angle / 2.0
    reached = np.arctan2(weight * np.sin(half), (1.0 - weight) + weight * np.cos(half))
    return float(2.0 * abs(reached - weight * half))
