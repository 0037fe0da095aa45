# SPDX-License-Identifier: GPL-3.0-or-later
"""Skinned meshes onto an armature's one bind pose.

Direct3D skins every mesh with its own offsets ``O_mj`` (mesh space to
joint ``j``'s space at bind time) and the joints' world matrices ``W_j``
only: a vertex ``p`` goes to ``sum_j w_j W_j O_mj p``. An armature has one
bind ``B_j`` per bone, and Blender moves a vertex stored at ``p'``
(armature space: the mesh object's matrix applied) by ``W_j B_j^-1 p'``.
Both agree, at every pose, when ``B_j^-1 p' = O_mj p`` for each joint that
moves the vertex, that is ``p' = E_mj p`` with ``E_mj = B_j O_mj``:

* every ``E_mj`` of a mesh the same ``E``: the mesh object's matrix is ``E``
  and no vertex changes (the usual case, and a skinned mesh inside a frame
  of its own, which Direct3D ignores);
* the ``E_mj p`` of each vertex agreeing (its joints' binds differ from the
  armature's rigidly, or however, in the same way for that vertex): the
  vertex is stored at that point (*re-expressed*);
* a vertex whose joints disagree cannot be stored anywhere: the mesh then
  needs binds of its own (``corrections``: ``F_j = E_mj E^-1``, what a
  bone's deformation must be followed by for this mesh).

Vertices without weight stay where the mesh is placed at the default pose
(``unweighted_at``), as Blender and ``scene.evaluate`` leave them.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class SkinPlacement:
    matrix: np.ndarray            # (4, 4) the mesh object's matrix in armature space (E)
    positions: np.ndarray         # (V, 3) positions to store (the mesh's own where none moved)
    moved: np.ndarray             # (V,) bool: re-expressed vertices
    vertex_transform: np.ndarray  # (V, 3, 3) linear part of the map each stored position went through
    conflict: np.ndarray          # (V,) bool: vertices no stored position can serve
    corrections: np.ndarray       # (B, 4, 4) F_j = E_mj E^-1 per skin joint (identity where it agrees)

    @property
    def exact(self) -> bool:
        return not self.conflict.any()


def place_skin(positions: np.ndarray, joints: np.ndarray, inverse_bind: np.ndarray, vertex: np.ndarray,
               joint: np.ndarray, weight: np.ndarray, armature_bind: np.ndarray, unweighted_at: np.ndarray,
               tol: float) -> SkinPlacement:
    """Where to put a skinned mesh (``positions`` (V, 3), skin joints
    ``joints`` (B,) with offsets ``inverse_bind`` (B, 4, 4), sparse weights
    ``vertex``/``joint`` (skeleton indices)/``weight``) on an armature whose
    bind of joint j is ``armature_bind[j]``: see the module doc. ``tol`` is
    a distance (a small fraction of the model size) under which two points
    are the same."""
    p = np.asarray(positions, dtype=np.float64).reshape(-1, 3)
    V = len(p)
    joints = np.asarray(joints, dtype=np.int64)
    e = np.asarray(armature_bind, dtype=np.float64)[joints] @ np.asarray(inverse_bind, dtype=np.float64)
    keep = np.asarray(weight, dtype=np.float64) > 0
    joint = np.asarray(joint, dtype=np.int64)[keep]
    # the reference: the E carrying the most weights (ties: the first joint)
    counts = (np.bincount(joint, minlength=int(joints.max()) + 1)[joints] if len(joint) and len(joints)
              else np.zeros(len(joints), dtype=np.int64))
    ref = int(np.argmax(counts)) if len(joints) else 0
    matrix = e[ref] if len(joints) else np.asarray(unweighted_at, dtype=np.float64)
    inv = np.linalg.inv(matrix)
    corrections = e @ inv if len(joints) else np.zeros((0, 4, 4))
    mw = np.asarray(unweighted_at, dtype=np.float64)
    longest = float(np.sqrt(np.einsum("ij,ij->i", p, p).max() + 1.0)) if V else 0.0    # of the (x, y, z, 1)
    if (_within(inv @ np.concatenate((e, mw[None])) - np.eye(4), longest, tol / 2)
            and _within(e - matrix, longest, tol / 2)):
        # every point as stored already (the usual case): nothing moves, no vertex conflicts
        return SkinPlacement(matrix, p, np.zeros(V, dtype=bool), np.broadcast_to(np.eye(3), (V, 3, 3)),
                             np.zeros(V, dtype=bool), corrections)
    v = np.asarray(vertex, dtype=np.int64)[keep]
    slot = np.searchsorted(joints, joint)
    at = np.einsum("nij,nj->ni", e[slot, :3, :3], p[v]) + e[slot, :3, 3]     # E_mj p per weight
    weighted = np.zeros(V, dtype=bool)
    weighted[v] = True
    # where each vertex must be, seen from its first weight; how far its other weights disagree
    first = np.full(V, -1, dtype=np.int64)
    order = np.argsort(v, kind="stable")
    uv, start = np.unique(v[order], return_index=True)
    first[uv] = order[start]
    want = np.empty((V, 3))
    want[uv] = at[first[uv]]
    loose = ~weighted
    want[loose] = p[loose] @ mw[:3, :3].T + mw[:3, 3]
    spread = np.zeros(V)
    np.maximum.at(spread, v, np.linalg.norm(at - want[v], axis=1))
    conflict = spread > tol
    stored = want @ inv[:3, :3].T + inv[:3, 3]
    moved = np.linalg.norm(stored - p, axis=1) > tol
    if conflict.any():          # weighted vertices keep their own: the mesh gets binds of its own
        moved &= loose
    out = p.copy()
    out[moved] = stored[moved]
    linear = np.broadcast_to(np.eye(3), (V, 3, 3)).copy()
    w_moved = moved & weighted
    linear[w_moved] = inv[None, :3, :3] @ e[slot[first[w_moved]], :3, :3]
    linear[moved & loose] = inv[:3, :3] @ mw[:3, :3]
    return SkinPlacement(matrix, out, moved, linear, conflict, corrections)


def _within(diff: np.ndarray, longest: float, limit: float) -> bool:
    """Whether every matrix of ``diff`` (K, 4, 4) maps every point, as
    (x, y, z, 1) no longer than ``longest`` (0: there are none), to a vector
    no longer than ``limit``, by a bound: the largest Frobenius norm of
    their upper three rows times ``longest``. With ``diff`` the stored
    points' maps less the identity, no stored point moves; with the joints'
    placements less the reference, no two of a vertex's points differ by
    twice ``limit``."""
    if not longest or not len(diff):
        return True
    top = diff[:, :3]
    return float(np.sqrt(np.einsum("kij,kij->k", top, top).max())) * longest <= limit


def choose_binds(bind: np.ndarray, default_world: np.ndarray, skins: list) -> np.ndarray:
    """One bind per joint when meshes bind a joint differently: of each
    mesh's ``placement @ offset^-1`` for the joint, the one nearest the
    joint's default-pose matrix (the frames Direct3D shows), on a tie the
    one of the mesh with the most weights on it. ``skins``: per skinned mesh
    (joints (B,), offsets (B, 4, 4), placement (4, 4), weights per joint
    (B,)). Joints no mesh binds keep ``bind``. Returns the binds (J, 4, 4)."""
    out = np.array(bind, dtype=np.float64)
    best: dict[int, tuple[float, float]] = {}
    scale = max(float(np.abs(np.asarray(default_world)[..., :3, 3]).max(initial=0.0)), 1.0)
    for joints, offsets, placement, counts in skins:
        cand = np.asarray(placement, dtype=np.float64) @ np.linalg.inv(np.asarray(offsets, dtype=np.float64))
        for k, j in enumerate(np.asarray(joints).tolist()):
            d = np.abs(cand[k] - default_world[j])
            off = float(d[:3, :3].max() + d[:3, 3].max() / scale)
            key = (round(off, 9), -float(counts[k]))
            if j not in best or key < best[j]:
                best[j] = key
                out[j] = cand[k]
    return out
