# SPDX-License-Identifier: GPL-3.0-or-later
"""Dual-quaternion skinning as Blender's Armature modifier does it with
"Preserve Volume" (test-only: the extension's rigs skin linearly, and the
extractor reports Preserve Volume as not exported). The Blender-side tests
check that Blender's evaluated meshes match it, as they check the core's
linear blend skinning."""
from __future__ import annotations

import numpy as np

from legacy_skin_io.core import quat
from legacy_skin_io.core.skinning import BLENDER_MIN_CONTRIB, Influences

# Quaternions here follow Blender's DualQuat layout internally
# (w, x, y, z) to mirror math_rotation_c.cc line by line.

def _blender_mat3_to_quat_wxyz(m: np.ndarray) -> np.ndarray:
    """Blender's ``mat4_to_quat``: normalise the columns, negate a mirrored
    basis, then ``mat3_normalized_to_quat_fast`` (result has w >= 0).

    ``m`` is (..., 3, 3) for column vectors (m[..., row, col])."""
    m = np.asarray(m, dtype=np.float64)
    m = m / np.linalg.norm(m, axis=-2, keepdims=True)
    det = np.linalg.det(m)
    m = np.where((det < 0.0)[..., None, None], -m, m)
    # Blender indexes mat[col][row]; b[c][r] == m[r, c]
    b = np.swapaxes(m, -1, -2)
    q = np.empty(m.shape[:-2] + (4,))
    b00, b11, b22 = b[..., 0, 0], b[..., 1, 1], b[..., 2, 2]
    c_a = (b22 < 0.0) & (b00 > b11)
    c_b = (b22 < 0.0) & ~(b00 > b11)
    c_c = ~(b22 < 0.0) & (b00 < -b11)
    with np.errstate(invalid="ignore", divide="ignore"):
        tr = 1.0 + b00 - b11 - b22
        s = 2.0 * np.sqrt(np.maximum(tr, 0.0))
        s = np.where(b[..., 1, 2] < b[..., 2, 1], -s, s)
        qa = np.stack(((b[..., 1, 2] - b[..., 2, 1]) / s, 0.25 * s,
                       (b[..., 0, 1] + b[..., 1, 0]) / s, (b[..., 2, 0] + b[..., 0, 2]) / s), axis=-1)
        tr = 1.0 - b00 + b11 - b22
        s = 2.0 * np.sqrt(np.maximum(tr, 0.0))
        s = np.where(b[..., 2, 0] < b[..., 0, 2], -s, s)
        qb = np.stack(((b[..., 2, 0] - b[..., 0, 2]) / s, (b[..., 0, 1] + b[..., 1, 0]) / s,
                       0.25 * s, (b[..., 1, 2] + b[..., 2, 1]) / s), axis=-1)
        tr = 1.0 - b00 - b11 + b22
        s = 2.0 * np.sqrt(np.maximum(tr, 0.0))
        s = np.where(b[..., 0, 1] < b[..., 1, 0], -s, s)
        qc = np.stack(((b[..., 0, 1] - b[..., 1, 0]) / s, (b[..., 2, 0] + b[..., 0, 2]) / s,
                       (b[..., 1, 2] + b[..., 2, 1]) / s, 0.25 * s), axis=-1)
        tr = 1.0 + b00 + b11 + b22
        s = 2.0 * np.sqrt(np.maximum(tr, 0.0))
        qd = np.stack((0.25 * s, (b[..., 1, 2] - b[..., 2, 1]) / s,
                       (b[..., 2, 0] - b[..., 0, 2]) / s, (b[..., 0, 1] - b[..., 1, 0]) / s), axis=-1)
    q = np.where(c_a[..., None], qa, np.where(c_b[..., None], qb, np.where(c_c[..., None], qc, qd)))
    n = np.linalg.norm(q, axis=-1, keepdims=True)
    return np.where(np.abs(n * n - 1.0) >= 0.0006, q / n, q)


def _orthogonalize_y(m3: np.ndarray) -> np.ndarray:
    """Blender's ``orthogonalize_m4(m, 1)`` on the 3x3 part (columns are the
    axes; the result's scale is irrelevant here). Y is kept; which other axis
    is kept depends on dot products with the *unnormalised* axes, exactly as
    in Blender (long, sheared X axes take the second branch)."""
    x, y, z = m3[..., :, 0], m3[..., :, 1], m3[..., :, 2]
    y = y / np.linalg.norm(y, axis=-1, keepdims=True)

    def unit(v):
        return v / np.linalg.norm(v, axis=-1, keepdims=True)

    # branch 1: dot(Y, X) < 1 -> Z = X x Y, X = Y x Z
    z1 = unit(np.cross(x, y))
    x1 = np.cross(y, z1)
    # branch 2: dot(X, Z) < 1 -> X = Y x Z, Z = X x Y
    x2 = unit(np.cross(y, z))
    z2 = np.cross(x2, y)
    # branch 3: a vector from Y's permuted components
    vec = np.stack((y[..., 1], y[..., 2], y[..., 0]), axis=-1)
    x3 = unit(np.cross(y, vec))
    z3 = np.cross(x3, y)
    b1 = (np.sum(y * x, axis=-1) < 1.0)[..., None]
    b2 = (np.sum(x * z, axis=-1) < 1.0)[..., None]
    xo = np.where(b1, x1, np.where(b2, x2, x3))
    zo = np.where(b1, z1, np.where(b2, z2, z3))
    return np.stack((xo, y, zo), axis=-1)


def _quat_wxyz_to_mat3(q):
    return quat.to_mat3(np.concatenate((q[..., 1:], q[..., :1]), axis=-1))


def _qmul_wxyz(a, b):
    aw, ax, ay, az = a[..., 0], a[..., 1], a[..., 2], a[..., 3]
    bw, bx, by, bz = b[..., 0], b[..., 1], b[..., 2], b[..., 3]
    return np.stack((aw * bw - ax * bx - ay * by - az * bz,
                     aw * bx + ax * bw + ay * bz - az * by,
                     aw * by - ax * bz + ay * bw + az * bx,
                     aw * bz + ax * by - ay * bx + az * bw), axis=-1)


def blender_dual_quats(skin: np.ndarray, rest: np.ndarray):
    """Blender's ``mat4_to_dquat(rest, skin)`` for every bone.

    skin (J, 4, 4): deform matrices pose @ rest^-1; rest (J, 4, 4): bone
    rest matrices in armature space. Returns (quat (J,4) wxyz, trans (J,4),
    scale (J,4,4), has_scale (J,) bool)."""
    skin = np.asarray(skin, dtype=np.float64)
    rest = np.asarray(rest, dtype=np.float64)
    J = len(skin)
    base_rs = skin @ rest
    size = np.linalg.norm(base_rs[:, :3, :3], axis=-2)
    m3 = skin[:, :3, :3]
    orth_err = np.abs(m3 @ np.swapaxes(m3, -1, -2) - np.eye(3)).max(axis=(-1, -2))
    has_scale = (orth_err > 1e-5) | (np.linalg.det(skin) < 0.0) | (np.sum((size - 1.0) ** 2, axis=-1) > 1e-8)
    R = skin.copy()
    scale = np.tile(np.eye(4), (J, 1, 1))
    if has_scale.any():
        i = np.nonzero(has_scale)[0]
        basequat = _blender_mat3_to_quat_wxyz(_orthogonalize_y(base_rs[i, :3, :3]))
        base_r = np.tile(np.eye(4), (len(i), 1, 1))
        base_r[:, :3, :3] = _quat_wxyz_to_mat3(basequat)
        base_r[:, :3, 3] = base_rs[i, :3, 3]
        base_inv = np.linalg.inv(rest[i])
        R[i] = base_r @ base_inv
        S = np.linalg.inv(base_r) @ base_rs[i]
        scale[i] = rest[i] @ S @ base_inv
    q = _blender_mat3_to_quat_wxyz(R[:, :3, :3])
    t = R[:, :3, 3]
    tq = np.concatenate((np.zeros((J, 1)), t), axis=-1)
    trans = 0.5 * _qmul_wxyz(tq, q)
    return q, trans, scale, has_scale


def dual_quaternion(positions: np.ndarray, skin: np.ndarray, rest: np.ndarray,
                    influences: Influences, policy: str = "blender"):
    """Dual-quaternion skinning exactly as Blender's Armature modifier with
    "Preserve Volume": per-bone dual quaternions from ``mat4_to_dquat``,
    the scale pivot fix at each vertex, accumulation in influence order with
    the running-sum hemisphere flip, division by the total weight, and
    ``mul_v3m3_dq``. Returns positions (V, 3) float64."""
    pos = np.asarray(positions, dtype=np.float64)
    q_b, t_b, s_b, has_s = blender_dual_quats(skin, rest)
    joints = influences.joints
    w_all = influences.weights.astype(np.float64)
    V, K = joints.shape
    sum_q = np.zeros((V, 4))
    sum_t = np.zeros((V, 4))
    total = np.zeros(V)
    for k in range(K):
        j = joints[:, k]
        w = w_all[:, k]
        used = w != 0.0
        qk = q_b[j]
        tk = t_b[j].copy()
        sk = has_s[j] & used
        if sk.any():
            sm = s_b[j[sk]]
            p = pos[sk]
            dst = np.einsum("nij,nj->ni", sm[:, :3, :3], p) + sm[:, :3, 3] - p
            dq = np.concatenate((np.zeros((len(p), 1)), dst), axis=-1)
            tk[sk] += 0.5 * _qmul_wxyz(qk[sk], dq)
        flip = np.sum(qk * sum_q, axis=-1) < 0.0
        we = np.where(flip, -w, w)
        we = np.where(used, we, 0.0)
        sum_q += we[:, None] * qk
        sum_t += we[:, None] * tk
        total += np.where(used, w, 0.0)
    if policy == "blender":
        moving = total > BLENDER_MIN_CONTRIB
        div = np.where(moving, total, 1.0)
    elif policy == "rite":
        moving = np.ones(V, dtype=bool)
        div = np.ones(V)
    else:
        raise ValueError(f"unknown weight policy {policy!r}")
    q = sum_q / div[:, None]
    t = sum_t / div[:, None]
    w_, x, y, z = q[:, 0], q[:, 1], q[:, 2], q[:, 3]
    t0, t1, t2, t3 = t[:, 0], t[:, 1], t[:, 2], t[:, 3]
    M = np.empty((V, 3, 3))
    M[:, 0, 0] = w_ * w_ + x * x - y * y - z * z
    M[:, 0, 1] = 2 * (x * y - w_ * z)
    M[:, 0, 2] = 2 * (x * z + w_ * y)
    M[:, 1, 0] = 2 * (x * y + w_ * z)
    M[:, 1, 1] = w_ * w_ + y * y - x * x - z * z
    M[:, 1, 2] = 2 * (y * z - w_ * x)
    M[:, 2, 0] = 2 * (x * z - w_ * y)
    M[:, 2, 1] = 2 * (y * z + w_ * x)
    M[:, 2, 2] = w_ * w_ + z * z - x * x - y * y
    len2 = np.sum(q * q, axis=-1)
    len2 = np.where(len2 > 0, 1.0 / np.where(len2 > 0, len2, 1.0), 0.0)
    tv = np.stack((2 * (-t0 * x + w_ * t1 - t2 * z + y * t3),
                   2 * (-t0 * y + t1 * z - x * t3 + w_ * t2),
                   2 * (-t0 * z + x * t2 + w_ * t3 - t1 * y)), axis=-1)
    out = (np.einsum("nij,nj->ni", M, pos) + tv) * len2[:, None]
    return np.where(moving[:, None], out, pos)
