# SPDX-License-Identifier: GPL-3.0-or-later
"""Quaternions stored x, y, z, w (arrays of shape (..., 4)), Hamilton product.

Every function broadcasts over leading axes so that a whole animation
(frames x joints) is handled in one call.
"""
from __future__ import annotations

import numpy as np

IDENTITY = np.array([0.0, 0.0, 0.0, 1.0])


def _float64(a) -> np.ndarray:
    return np.asarray(a, dtype=np.float64)


def mul(a, b) -> np.ndarray:
    """Hamilton product a * b (apply b first, then a)."""
    a, b = _float64(a), _float64(b)
    ax, ay, az, aw = a[..., 0], a[..., 1], a[..., 2], a[..., 3]
    bx, by, bz, bw = b[..., 0], b[..., 1], b[..., 2], b[..., 3]
    return np.stack(
        (
            ay * bz - az * by + aw * bx + ax * bw,
            az * bx - ax * bz + aw * by + ay * bw,
            ax * by - ay * bx + aw * bz + az * bw,
            aw * bw - ax * bx - ay * by - az * bz,
        ),
        axis=-1,
    )


def conj(q) -> np.ndarray:
    q = _float64(q)
    return q * np.array([-1.0, -1.0, -1.0, 1.0])


def dot(a, b) -> np.ndarray:
    return np.sum(_float64(a) * _float64(b), axis=-1)


def normalize(q) -> np.ndarray:
    """Unit quaternion; a zero quaternion becomes the identity."""
    q = _float64(q)
    n = np.sqrt(np.sum(q * q, axis=-1, keepdims=True))
    out = np.where(n > 0.0, q / np.where(n > 0.0, n, 1.0), IDENTITY)
    return out


def from_axis_angle(axis, angle) -> np.ndarray:
    axis = _float64(axis)
    angle = _float64(angle)
    axis = axis / np.linalg.norm(axis, axis=-1, keepdims=True)
    half = 0.5 * angle[..., None]
    return np.concatenate((axis * np.sin(half), np.cos(half)), axis=-1)


def to_mat3(q) -> np.ndarray:
    """Rotation matrix of q (normalised first), for column vectors."""
    q = normalize(q)
    x, y, z, w = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    xx, yy, zz = x * x, y * y, z * z
    xy, xz, yz = x * y, x * z, y * z
    wx, wy, wz = w * x, w * y, w * z
    m = np.empty(q.shape[:-1] + (3, 3))
    m[..., 0, 0] = 1.0 - 2.0 * (yy + zz)
    m[..., 0, 1] = 2.0 * (xy - wz)
    m[..., 0, 2] = 2.0 * (xz + wy)
    m[..., 1, 0] = 2.0 * (xy + wz)
    m[..., 1, 1] = 1.0 - 2.0 * (xx + zz)
    m[..., 1, 2] = 2.0 * (yz - wx)
    m[..., 2, 0] = 2.0 * (xz - wy)
    m[..., 2, 1] = 2.0 * (yz + wx)
    m[..., 2, 2] = 1.0 - 2.0 * (xx + yy)
    return m


def to_mat4(q, translation=None) -> np.ndarray:
    r = to_mat3(q)
    m = np.zeros(r.shape[:-2] + (4, 4))
    m[..., :3, :3] = r
    m[..., 3, 3] = 1.0
    if translation is not None:
        m[..., :3, 3] = translation
    return m


def from_mat3(m) -> np.ndarray:
    """Quaternion (w >= 0 not guaranteed) of a rotation matrix (..., 3, 3).

    Uses the numerically stable branch on the largest diagonal term; the
    upper-left 3x3 of a 4x4 may be passed. Scale is not removed: normalise
    the columns first for scaled matrices.
    """
    m = _float64(m)[..., :3, :3]
    shape = m.shape[:-2]
    m = m.reshape(-1, 3, 3)
    q = np.empty((m.shape[0], 4))
    m00, m11, m22 = m[:, 0, 0], m[:, 1, 1], m[:, 2, 2]
    tr = m00 + m11 + m22
    c0 = tr > 0.0
    c1 = ~c0 & (m00 >= m11) & (m00 >= m22)
    c2 = ~c0 & ~c1 & (m11 >= m22)
    c3 = ~c0 & ~c1 & ~c2
    with np.errstate(invalid="ignore", divide="ignore"):
        # each branch on its own matrices only (c0, a positive trace, is the common one)
        for cond, branch in ((c0, _from_mat3_trace), (c1, _from_mat3_x), (c2, _from_mat3_y), (c3, _from_mat3_z)):
            if cond.all():
                q = branch(m)
            elif cond.any():
                q[cond] = branch(m[cond])
    return normalize(q.reshape(shape + (4,)))


def _from_mat3_trace(m):
    s = np.sqrt(np.maximum(m[:, 0, 0] + m[:, 1, 1] + m[:, 2, 2] + 1.0, 0.0)) * 2.0
    return np.stack(((m[:, 2, 1] - m[:, 1, 2]) / s, (m[:, 0, 2] - m[:, 2, 0]) / s,
                     (m[:, 1, 0] - m[:, 0, 1]) / s, 0.25 * s), axis=-1)


def _from_mat3_x(m):
    s = np.sqrt(np.maximum(1.0 + m[:, 0, 0] - m[:, 1, 1] - m[:, 2, 2], 0.0)) * 2.0
    return np.stack((0.25 * s, (m[:, 0, 1] + m[:, 1, 0]) / s, (m[:, 0, 2] + m[:, 2, 0]) / s,
                     (m[:, 2, 1] - m[:, 1, 2]) / s), axis=-1)


def _from_mat3_y(m):
    s = np.sqrt(np.maximum(1.0 + m[:, 1, 1] - m[:, 0, 0] - m[:, 2, 2], 0.0)) * 2.0
    return np.stack(((m[:, 0, 1] + m[:, 1, 0]) / s, 0.25 * s, (m[:, 1, 2] + m[:, 2, 1]) / s,
                     (m[:, 0, 2] - m[:, 2, 0]) / s), axis=-1)


def _from_mat3_z(m):
    s = np.sqrt(np.maximum(1.0 + m[:, 2, 2] - m[:, 0, 0] - m[:, 1, 1], 0.0)) * 2.0
    return np.stack(((m[:, 0, 2] + m[:, 2, 0]) / s, (m[:, 1, 2] + m[:, 2, 1]) / s, 0.25 * s,
                     (m[:, 1, 0] - m[:, 0, 1]) / s), axis=-1)


# --- interpolation -----------------------------------------------------------

def lerp_normalized(a, b, t) -> np.ndarray:
    """``Quaternion.lerp`` of the RiTE skeletal animation system document
    (tests/rite_seed.py): (1 - t) a + t b, normalised."""
    a, b = _float64(a), _float64(b)
    t = _float64(t)[..., None]
    return normalize(a * (1.0 - t) + b * t)


def slerp_no_invert(a, b, t) -> np.ndarray:
    """``Quaternion.slerpNoInvert`` of the RiTE skeletal animation system
    document (tests/rite_seed.py), vectorised and exact.

    slerp when -0.95 < dot < 0.95, else normalised lerp; no hemisphere flip,
    so keys in opposite hemispheres take the long way round, as in the
    RiTE runtime. Each branch is computed only where it applies.
    """
    a, b = _float64(a), _float64(b)
    shape = np.broadcast_shapes(a.shape[:-1], b.shape[:-1], np.shape(t))
    a = np.broadcast_to(a, shape + (4,))
    b = np.broadcast_to(b, shape + (4,))
    t = np.broadcast_to(_float64(t), shape)
    cos = np.einsum("...i,...i->...", a, b)
    use = (cos < 0.95) & (cos > -0.95)
    out = np.empty(shape + (4,))
    if use.all():
        sa, sb, st, sc = a, b, t, cos
    else:
        sa, sb, st, sc = a[use], b[use], t[use], cos[use]
        rest = ~use
        out[rest] = lerp_normalized(a[rest], b[rest], t[rest])
    if sc.size:
        angle = np.arccos(sc)
        inv = 1.0 / np.sin(angle)
        res = sa * (np.sin(angle * (1.0 - st)) * inv)[..., None] + sb * (np.sin(angle * st) * inv)[..., None]
        if use.all():
            out = res
        else:
            out[use] = res
    return out


def slerp_shortest(a, b, t) -> np.ndarray:
    """Shortest-path slerp (flips b into a's hemisphere), normalised result."""
    a, b = _float64(a), _float64(b)
    t = np.broadcast_to(_float64(t), np.broadcast_shapes(a.shape[:-1], b.shape[:-1], np.shape(t)))
    cos = dot(a, b)
    b = np.where((cos < 0.0)[..., None], -b, b)
    cos = np.abs(cos)
    near = cos > 0.9995
    angle = np.arccos(np.clip(cos, -1.0, 1.0))
    s = np.sin(angle)
    s = np.where(near, 1.0, s)
    fa = np.where(near, 1.0 - t, np.sin(angle * (1.0 - t)) / s)[..., None]
    fb = np.where(near, t, np.sin(angle * t) / s)[..., None]
    return normalize(a * fa + b * fb)


def nlerp_blender(a, b, t) -> np.ndarray:
    """What Blender shows for linear quaternion F-curves: per-component lerp
    of the stored values (no hemisphere flip), normalised when the pose matrix
    is built."""
    a, b = _float64(a), _float64(b)
    t = _float64(t)[..., None]
    return normalize(a + (b - a) * t)


def canonical(q, tol: float = 1e-6) -> np.ndarray:
    """q or -q, chosen robustly: w > 0 where |w| > tol, else the vector
    component of largest magnitude positive (a rotation by about 180
    degrees has w near 0, where "w >= 0" would be decided by rounding)."""
    q = _float64(q)
    v = q[..., :3]
    big = np.take_along_axis(v, np.argmax(np.abs(v), axis=-1)[..., None], axis=-1)[..., 0]
    key = np.where(np.abs(q[..., 3]) > tol, q[..., 3], big)
    return np.where((key < 0)[..., None], -q, q)


def make_continuous(q, axis: int = 0) -> np.ndarray:
    """Flip signs along ``axis`` so consecutive quaternions have dot >= 0."""
    q = np.array(q, dtype=np.float64, copy=True)
    q = np.moveaxis(q, axis, 0)
    if q.shape[0] > 1:
        d = np.sum(q[1:] * q[:-1], axis=-1)
        flips = np.cumprod(np.where(d < 0.0, -1.0, 1.0), axis=0)
        q[1:] *= flips[..., None]
    return np.moveaxis(q, 0, axis)
