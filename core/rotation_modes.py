# SPDX-License-Identifier: GPL-3.0-or-later
"""Rotation keys in the rotation mode a pose bone uses: Blender reads only
the channel of the bone's mode (``rotation_quaternion``, ``rotation_euler``
in any of the six orders, ``rotation_axis_angle``), so keys meant for a
bone go to its own. Exact at every key; between keys an Euler or
axis-angle channel interpolates otherwise than a quaternion one, so such
bones are keyed on every frame (``operators.anim_build.must_bake``)."""
from __future__ import annotations

import numpy as np

from . import quat

QUATERNION = "QUATERNION"
AXIS_ANGLE = "AXIS_ANGLE"


def channel(mode: str) -> str:
    """The pose bone property that holds rotations in ``mode``."""
    if mode == QUATERNION:
        return "rotation_quaternion"
    return "rotation_axis_angle" if mode == AXIS_ANGLE else "rotation_euler"


def keys(mode: str, wxyz: np.ndarray) -> tuple[str, np.ndarray]:
    """(property, values (K, 3 or 4)) for quaternion keys (K, 4) w, x, y, z,
    each the same rotation; consecutive keys chosen close to each other (an
    Euler angle never jumps by a turn, an axis never flips), so that
    interpolation between them takes the short way."""
    q = np.asarray(wxyz, dtype=np.float64).reshape(-1, 4)
    if mode == QUATERNION:
        return channel(mode), q
    if mode == AXIS_ANGLE:          # in float64 (mathutils' float32 acos loses small angles)
        n = np.linalg.norm(q[:, 1:], axis=1)
        valid = np.flatnonzero(n > 1e-12)
        # a key without turn takes the axis of the nearest key that turns (the first one's before it)
        at = valid[np.clip(np.searchsorted(valid, np.arange(len(q)), side="right") - 1, 0, None)] \
            if len(valid) else np.zeros(len(q), dtype=np.int64)
        if len(valid):
            at[: valid[0]] = valid[0]
        axes = q[at, 1:] / np.where(n[at] > 1e-12, n[at], 1.0)[:, None] if len(valid) else \
            np.tile([0.0, 1.0, 0.0], (len(q), 1))
        out = np.empty((len(q), 4))
        prev_axis, prev_angle = axes[0], 0.0
        for k, x in enumerate(q):
            a = axes[k]
            angle = 2.0 * np.arctan2(float(x[1:] @ a), x[0])
            if a @ prev_axis < 0:        # the same rotation about the opposite axis
                a, angle = -a, -angle
            angle += 2 * np.pi * np.round((prev_angle - angle) / (2 * np.pi))
            out[k] = (angle, *a)
            prev_axis, prev_angle = a, angle
        return channel(mode), out
    return channel(mode), _euler(mode, q)


def quaternions(mode: str, values: np.ndarray) -> np.ndarray:
    """Inverse of :func:`keys`: rotations (K, 4) w, x, y, z of values in ``mode``."""
    v = np.asarray(values, dtype=np.float64)
    if mode == QUATERNION:
        return v.reshape(-1, 4)
    if mode == AXIS_ANGLE:
        v = v.reshape(-1, 4)
        axis = v[:, 1:] / np.maximum(np.linalg.norm(v[:, 1:], axis=1, keepdims=True), 1e-300)
        q = quat.from_axis_angle(axis, v[:, 0])
    else:
        v = v.reshape(-1, 3)
        q = np.array([0.0, 0.0, 0.0, 1.0])
        for c in mode:                   # the first letter's axis turns first
            k = "XYZ".index(c)
            q = quat.mul(quat.from_axis_angle(np.eye(3)[k][None], v[:, k]), q)
    return np.asarray(q)[:, [3, 0, 1, 2]]


def _euler(order: str, wxyz: np.ndarray) -> np.ndarray:
    """Euler angles (K, 3) in Blender's ``order`` (the first letter's axis
    turns first: "XYZ" is ``Rz Ry Rx``), in float64, each key of the two
    solutions the one nearer the previous key (each angle within half a
    turn of it), as Blender's compatible Euler conversion does."""
    i, j, k = ("XYZ".index(c) for c in order)
    odd = (j - i) % 3 != 1
    sign = -1.0 if odd else 1.0
    q = wxyz / np.linalg.norm(wxyz, axis=1, keepdims=True)
    w, x, y, z = q.T
    m = np.empty((len(q), 3, 3))
    m[:, 0, 0] = 1 - 2 * (y * y + z * z)
    m[:, 0, 1] = 2 * (x * y - w * z)
    m[:, 0, 2] = 2 * (x * z + w * y)
    m[:, 1, 0] = 2 * (x * y + w * z)
    m[:, 1, 1] = 1 - 2 * (x * x + z * z)
    m[:, 1, 2] = 2 * (y * z - w * x)
    m[:, 2, 0] = 2 * (x * z - w * y)
    m[:, 2, 1] = 2 * (y * z + w * x)
    m[:, 2, 2] = 1 - 2 * (x * x + y * y)
    # R = R_k(c) R_j(b) R_i(a)
    cb = np.hypot(m[:, i, i], m[:, j, i])
    a = np.arctan2(sign * m[:, k, j], m[:, k, k])
    b = np.arctan2(-sign * m[:, k, i], cb)
    c = np.arctan2(sign * m[:, j, i], m[:, i, i])
    flat = cb < 1e-12        # gimbal lock: the first and last axes coincide, put it all in the first
    if flat.any():
        a[flat] = np.arctan2(-sign * m[flat, j, k], m[flat, j, j])
        c[flat] = 0.0
    first = np.stack((a, b, c), axis=1)
    second = np.stack((a + np.pi, np.pi - b, c + np.pi), axis=1)
    out = np.empty_like(first)
    prev = np.zeros(3)
    for n in range(len(q)):
        near = [e + 2 * np.pi * np.round((prev - e) / (2 * np.pi)) for e in (first[n], second[n])]
        prev = min(near, key=lambda e: float(np.abs(e - prev).sum()))
        out[n] = prev
    out_order = np.empty_like(out)
    out_order[:, i], out_order[:, j], out_order[:, k] = out[:, 0], out[:, 1], out[:, 2]
    return out_order
