# SPDX-License-Identifier: GPL-3.0-or-later
"""Generic rig maths: orthonormalising, bind resolution, the rest/bind split
of a bone and its pose basis. No file format and no bpy here.

Spaces: column-vector 4x4 matrices, one common space (the armature's).

A joint has a *bind* world matrix ``B_j`` (the pose its skin was bound in,
possibly with scale) and a bone *rest* matrix ``R_j`` (rigid, what an
armature can hold; it may also point the bone somewhere else). ``K_j =
R_j^-1 B_j`` (``RestSplit.rest_to_bind``) is what the rest does not hold. For joint world matrices ``W``
the armature-space pose of the bone is ``P_j = W_j K_j^-1`` (so the skinning
matrix ``P_j R_j^-1 = W_j B_j^-1`` is unchanged) and the pose basis, relative
to the parent bone, is

    basis_j = (R_p^-1 R_j)^-1 P_p^-1 P_j = R_j^-1 R_p K_p local_j K_j^-1.

When every ``K`` is a uniform scale times a rotation without translation,
``basis_j = A_j local_j K_j^-1`` with ``A_j = R_j^-1 R_p K_p``
(``RestSplit.parent_bind_in_rest``) a similarity:
location, rotation and scale channels then map one by one, linearly
(:meth:`RestSplit.channels`), so file keys can be keyed as they are.
"""
from __future__ import annotations

import math
from functools import cached_property

import numpy as np

from . import quat
from .sampling import decompose_trs


def orthonormal(m: np.ndarray) -> np.ndarray:
    """The closest rigid transform(s) (rotation by polar decomposition, same
    translation) of (..., 4, 4) matrices."""
    m = np.asarray(m, dtype=np.float64)
    u, _, vt = np.linalg.svd(m[..., :3, :3])
    r = u @ vt
    det = np.linalg.det(r)
    u = u.copy()
    u[..., :, 2] *= np.where(det < 0, -1.0, 1.0)[..., None]
    out = np.zeros_like(m)
    out[..., :3, :3] = u @ vt
    out[..., :3, 3] = m[..., :3, 3]
    out[..., 3, 3] = 1.0
    return out


def children(parents) -> list[list[int]]:
    kids: list[list[int]] = [[] for _ in parents]
    for j, p in enumerate(parents):
        if p >= 0:
            kids[int(p)].append(j)
    return kids


def resolve_binds(parents: np.ndarray, order: np.ndarray, local: np.ndarray, world: np.ndarray,
                  bind: np.ndarray) -> None:
    """Fill the bind world of joints without one (NaN rows) in place: from a
    child's bind and the child's local transform (deepest first; not through
    a singular one), then from the parent's bind, else the joint's own world
    matrix. ``order`` lists parents before children."""
    kids = children(parents)

    def missing(j):
        return np.isnan(bind[j, 0, 0])

    for j in order[::-1]:
        if missing(j):
            for c in kids[j]:
                if not missing(c):
                    try:
                        bind[j] = bind[c] @ np.linalg.inv(local[c])
                    except np.linalg.LinAlgError:      # a singular local (validation names it): next way
                        continue
                    break
    for j in order:
        if missing(j):
            p = parents[j]
            bind[j] = bind[p] @ local[j] if p >= 0 and not missing(p) else world[j]


def uniform_scale(m: np.ndarray) -> np.ndarray:
    """Signed cube root of the determinant of the 3x3 part: (...,)."""
    return np.cbrt(np.linalg.det(np.asarray(m, dtype=np.float64)[..., :3, :3]))


def similarity_part(m: np.ndarray, tol: float = 1e-5) -> tuple[np.ndarray, np.ndarray]:
    """(similarity, uniform) of affine matrices (..., 4, 4): ``m = T Q P``
    (polar decomposition, ``Q`` a proper rotation, ``P`` symmetric) becomes
    ``T Q c`` with ``c = |det P|^(1/3)``; ``uniform`` (...,) where ``P``'s
    scales are one value in magnitude (within ``tol``, relatively): ``m`` is
    a uniform scale, possibly mirrored, times a rotation."""
    m = np.asarray(m, dtype=np.float64)
    u, s, vt = np.linalg.svd(m[..., :3, :3])
    d = np.sign(np.linalg.det(u @ vt))
    u = u.copy()
    u[..., :, 2] *= d[..., None]
    c = np.cbrt(np.prod(s, axis=-1))
    out = np.zeros_like(m)
    out[..., :3, :3] = (u @ vt) * c[..., None, None]     # proper: a mirror stays out
    out[..., :3, 3] = m[..., :3, 3]
    out[..., 3, 3] = 1.0
    uniform = s[..., 0] - s[..., 2] <= tol * np.where(s[..., 0] > 0, s[..., 0], 1.0)
    return out, uniform


def armature_binds(parents: np.ndarray, order: np.ndarray, bind: np.ndarray,
                   tol: float = 1e-5) -> tuple[np.ndarray, np.ndarray]:
    """The binds a Blender armature can hold (rigid rest times a uniform
    scale ``K``) without shearing what hangs below: (binds (J, 4, 4),
    scaled (J,) bool).

    Down the hierarchy (``order``: parents first), a joint's bind relative
    to its parent's, ``bind_p^-1 bind_j``, is kept where it is a uniform
    scale (a mirror too) times a rotation; where it is not (non-uniform
    scale: ``scaled``), only its :func:`similarity_part` is kept and the
    rest of it becomes the pose's (the bone must then keep the joint's axes,
    whose scale its pose holds). What differs from ``bind`` is, for every
    joint below such a joint, one matrix on the left (``armature bind @
    bind^-1``), which the meshes' placement takes."""
    bind = np.asarray(bind, dtype=np.float64)
    parents = np.asarray(parents, dtype=np.int64)
    out = np.empty_like(bind)
    root = parents < 0
    rel = bind.copy()                                   # each joint's bind relative to its parent's
    if (~root).any():
        rel[~root] = np.linalg.solve(bind[parents[~root]], bind[~root])
    sim, uniform = similarity_part(rel, tol)
    keep = np.where(uniform[:, None, None], rel, sim)
    for j in np.asarray(order).tolist():
        p = int(parents[j])
        out[j] = keep[j] if p < 0 else out[p] @ keep[j]
    return out, ~uniform


def scale_axes(m: np.ndarray, tol: float = 1e-9) -> np.ndarray:
    """Rotations (..., 3, 3) to the axes of the scale of matrices (..., 4, 4):
    ``V`` with ``m = T Q V S V^T`` (``S`` diagonal; the identity where
    ``m``'s scale is already along its own axes, ``m = T Q S``). A bone on
    these axes holds ``S`` in its pose."""
    m = np.asarray(m, dtype=np.float64)
    lin = m[..., :3, :3]
    p = np.swapaxes(lin, -1, -2) @ lin                    # V S^2 V^T
    off = np.abs(p - p * np.eye(3)).max(axis=(-2, -1))
    _, _, vt = np.linalg.svd(lin)
    v = np.swapaxes(vt, -1, -2).copy()
    v[..., :, 2] *= np.sign(np.linalg.det(v))[..., None]
    big = np.abs(p).max(axis=(-2, -1))
    return np.where((off <= tol * np.where(big > 0, big, 1.0))[..., None, None], np.eye(3), v)


def nonuniform(s: np.ndarray, tol: float = 1e-5) -> np.ndarray:
    """(...,) bool: scale vectors (..., 3) whose magnitudes differ (a
    mirror, a negative component, is a uniform scale times a rotation)."""
    a = np.abs(np.asarray(s, dtype=np.float64))
    big = a.max(axis=-1)
    return a.max(axis=-1) - a.min(axis=-1) > tol * np.where(big > 0, big, 1.0)


class RestSplit:
    """Bones' rest matrices ``rest`` (B, 4, 4, rigid), bind matrices ``bind``
    (B, 4, 4) and parents (B,) (-1 for roots, parents first): the pose basis
    of any joint world matrices, and the channel mapping when it is exact.

    In the terms of the module doc: ``rest_to_bind`` is ``K``,
    ``parent_bind_in_rest`` is ``A`` (``R_j^-1 R_p K_p``, the parent's bind
    frame seen from the bone's rest), each also split into a uniform scale
    and a rotation (matrix and quaternion) for the channel mapping."""

    def __init__(self, rest: np.ndarray, bind: np.ndarray, parent: np.ndarray):
        self.rest = np.asarray(rest, dtype=np.float64)
        self.bind = np.asarray(bind, dtype=np.float64)
        self.parent = np.asarray(parent, dtype=np.int64)
        self.rest_to_bind = np.linalg.inv(self.rest) @ self.bind
        self.bind_to_rest = np.linalg.inv(self.rest_to_bind)
        has_parent = (self.parent >= 0)[:, None, None]
        parent = np.maximum(self.parent, 0)
        parent_rest = np.where(has_parent, self.rest[parent], np.eye(4))
        parent_rest_to_bind = np.where(has_parent, self.rest_to_bind[parent], np.eye(4))
        self.parent_bind_in_rest = np.linalg.inv(self.rest) @ parent_rest @ parent_rest_to_bind
        self.rel_rest = np.linalg.inv(parent_rest) @ self.rest

    # the splits for the channel mapping, made when first asked for

    @cached_property
    def parent_bind_scale(self) -> np.ndarray:
        return uniform_scale(self.parent_bind_in_rest)

    @cached_property
    def parent_bind_rotation(self) -> np.ndarray:
        k = self.parent_bind_scale
        return self.parent_bind_in_rest[:, :3, :3] / np.where(k != 0, k, 1.0)[:, None, None]

    @cached_property
    def parent_bind_quat(self) -> np.ndarray:
        return quat.from_mat3(self.parent_bind_rotation)

    @cached_property
    def rest_to_bind_scale(self) -> np.ndarray:
        return uniform_scale(self.rest_to_bind)

    @cached_property
    def rest_to_bind_quat(self) -> np.ndarray:
        return quat.from_mat3(self._rest_to_bind_rotation())

    def _rest_to_bind_rotation(self) -> np.ndarray:
        """(B, 3, 3): ``rest_to_bind``'s 3x3 part over its (positive) uniform scale."""
        k = self.rest_to_bind_scale
        return self.rest_to_bind[:, :3, :3] / np.where(k > 0, k, 1.0)[:, None, None]

    def __len__(self) -> int:
        return len(self.rest)

    def similarity_k(self, size: float) -> np.ndarray:
        """(B,) bool: ``rest_to_bind`` (K) is a positive uniform scale times a
        rotation, without translation."""
        ok = self.rest_to_bind_scale > 0
        rotation = self._rest_to_bind_rotation()
        ok &= np.abs(np.swapaxes(rotation, 1, 2) @ rotation - np.eye(3)).max(axis=(1, 2)) <= 1e-4
        ok &= np.abs(self.rest_to_bind[:, :3, 3]).max(axis=1) <= 1e-6 * max(size, 1e-9)
        return ok

    def turned(self) -> np.ndarray:
        """(B,) bool: K rotates (the bone does not keep the joint's axes)."""
        return np.abs(self._rest_to_bind_rotation() - np.eye(3)).max(axis=(1, 2)) > 1e-4

    def pose_basis(self, world: np.ndarray) -> np.ndarray:
        """Pose basis matrices (F, B, 4, 4) for bone-joint world matrices (F, B, 4, 4)."""
        pose = np.asarray(world, dtype=np.float64) @ self.bind_to_rest
        has_parent = (self.parent >= 0)[None, :, None, None]
        parent_pose = np.where(has_parent, pose[:, np.maximum(self.parent, 0)], np.eye(4))
        return np.linalg.inv(self.rel_rest) @ solve_affine(parent_pose, pose)

    def channels(self, t, r, s, b: np.ndarray):
        """Basis location/rotation/scale of bones ``b`` for local joint
        channels (translation (..., 3), rotation (..., 4), scale (..., 3)):
        exact where :meth:`similarity_k` holds and scale is uniform on
        turned bones."""
        a_scale, a_rotation = self.parent_bind_scale[b], self.parent_bind_rotation[b]
        loc = self.parent_bind_in_rest[b][..., :3, 3] + a_scale[..., None] * np.einsum("...ij,...j->...i",
                                                                                          a_rotation, t)
        rot = quat.mul(quat.mul(self.parent_bind_quat[b], r), quat.conj(self.rest_to_bind_quat[b]))
        scl = np.asarray(s, dtype=np.float64) * (a_scale / self.rest_to_bind_scale[b])[..., None]
        return loc, rot, scl


def solve_affine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``np.linalg.solve(a, b)`` for stacks of 4x4 matrices; where every ``a``
    is affine (last row 0 0 0 1), through the closed-form inverse of the 3x3
    part (cofactors over the determinant), evaluated for the whole stack at
    once instead of one LAPACK call per matrix. Falls back to
    ``np.linalg.solve`` otherwise, and where a 3x3 part is singular or too
    ill-conditioned for the closed form (|det| below 1e-6 of the product of
    its row lengths)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.size == 0 or not (a[..., 3, :3] == 0.0).all() or not (a[..., 3, 3] == 1.0).all():
        return np.linalg.solve(a, b)
    m = [[a[..., i, j] for j in range(3)] for i in range(3)]
    # cofactor matrix transposed (the adjugate), entry by entry
    adj = [[m[1][1] * m[2][2] - m[1][2] * m[2][1], m[0][2] * m[2][1] - m[0][1] * m[2][2],
            m[0][1] * m[1][2] - m[0][2] * m[1][1]],
           [m[1][2] * m[2][0] - m[1][0] * m[2][2], m[0][0] * m[2][2] - m[0][2] * m[2][0],
            m[0][2] * m[1][0] - m[0][0] * m[1][2]],
           [m[1][0] * m[2][1] - m[1][1] * m[2][0], m[0][1] * m[2][0] - m[0][0] * m[2][1],
            m[0][0] * m[1][1] - m[0][1] * m[1][0]]]
    det = m[0][0] * adj[0][0] + m[0][1] * adj[1][0] + m[0][2] * adj[2][0]
    rows = np.sqrt((a[..., :3, :3] ** 2).sum(axis=-1))
    if not (np.abs(det) > 1e-6 * rows.prod(axis=-1)).all():
        return np.linalg.solve(a, b)
    shape = np.broadcast_shapes(a.shape, b.shape)
    b = np.broadcast_to(b, shape)
    out = np.empty(shape)
    rhs = [b[..., i, :] - a[..., i, 3, None] * b[..., 3, :] for i in range(3)]
    inv_det = (1.0 / det)[..., None]
    for i in range(3):
        out[..., i, :] = (adj[i][0][..., None] * rhs[0] + adj[i][1][..., None] * rhs[1]
                          + adj[i][2][..., None] * rhs[2]) * inv_det
    out[..., 3, :] = b[..., 3, :]
    return out


def basis_channels(basis: np.ndarray):
    """(location, rotation (x, y, z, w) canonical (``quat.canonical``) on
    the first frame and continuous along axis 0, scale) of pose basis
    matrices (F, B, 4, 4)."""
    t, r, s = decompose_trs(basis)
    r = np.array(r)
    r[:1] = quat.canonical(r[:1])
    return t, quat.make_continuous(r, axis=0), s


def aim_y(rot: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Rotation matrix whose Y axis points along ``target``, closest to ``rot``
    (the twist about Y is kept from ``rot``). (One bone at a time, in plain
    floats: numpy's per-call overhead on 3-vectors is several times the arithmetic.)"""
    r = np.asarray(rot, dtype=np.float64).tolist()
    ty = [float(v) for v in np.asarray(target, dtype=np.float64).reshape(3)]
    n = math.sqrt(ty[0] * ty[0] + ty[1] * ty[1] + ty[2] * ty[2])
    y = [v / n for v in ty]

    def off_y(c: int) -> list[float]:
        col = [r[0][c], r[1][c], r[2][c]]
        d = col[0] * y[0] + col[1] * y[1] + col[2] * y[2]
        return [col[k] - y[k] * d for k in range(3)]

    x = off_y(0)
    if math.sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]) < 1e-6:
        x = _cross(y, off_y(2))
    nx = math.sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2])
    x = [v / nx for v in x]
    z = _cross(x, y)
    return np.array([[x[0], y[0], z[0]], [x[1], y[1], z[1]], [x[2], y[2], z[2]]])


def _cross(a: list[float], b: list[float]) -> list[float]:
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
