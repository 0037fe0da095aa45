# SPDX-License-Identifier: GPL-3.0-or-later
"""Joint hierarchies and world transforms, vectorised over joints and frames."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import quat


class SkeletonError(ValueError):
    """A joint hierarchy that cannot be evaluated (missing parent, cycle)."""


@dataclass
class Skeleton:
    """Joints with parent indices in any order (-1 for a root).

    ``levels`` groups joint indices by depth so world transforms are computed
    one depth at a time, each step vectorised over all joints at that depth
    and all frames.
    """

    parents: np.ndarray
    names: list[str] = field(default_factory=list)
    levels: list[np.ndarray] = field(init=False, repr=False)
    order: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.parents = np.asarray(self.parents, dtype=np.int64).reshape(-1)
        n = len(self.parents)
        if not self.names:
            self.names = [f"joint{i}" for i in range(n)]
        if len(self.names) != n:
            raise SkeletonError(f"{len(self.names)} names for {n} joints")
        bad = np.nonzero((self.parents < -1) | (self.parents >= n))[0]
        if len(bad):
            j = int(bad[0])
            raise SkeletonError(f"joint {self.names[j]!r} has a missing parent (index {int(self.parents[j])})")
        depth = np.full(n, -1, dtype=np.int64)
        depth[self.parents == -1] = 0
        # Propagate depths; at most n rounds, each vectorised.
        for _ in range(n + 1):
            unknown = depth < 0
            if not unknown.any():
                break
            par = self.parents[unknown]
            known_parent = depth[par] >= 0
            if not known_parent.any():
                j = int(np.nonzero(unknown)[0][0])
                raise SkeletonError(f"joint {self.names[j]!r} is part of a parent cycle")
            idx = np.nonzero(unknown)[0][known_parent]
            depth[idx] = depth[self.parents[idx]] + 1
        self.levels = [np.nonzero(depth == d)[0] for d in range(int(depth.max()) + 1 if n else 0)]
        self.order = np.concatenate(self.levels) if self.levels else np.zeros(0, dtype=np.int64)

    def __len__(self) -> int:
        return len(self.parents)

    def world(self, local: np.ndarray) -> np.ndarray:
        """World matrices from local ones: local (..., J, 4, 4) -> (..., J, 4, 4)."""
        local = np.asarray(local, dtype=np.float64)
        out = np.empty_like(local)
        for d, idx in enumerate(self.levels):
            if d == 0:
                out[..., idx, :, :] = local[..., idx, :, :]
            else:
                out[..., idx, :, :] = out[..., self.parents[idx], :, :] @ local[..., idx, :, :]
        return out


def rite_local(orientation, translation, rotation) -> np.ndarray:
    """RiTE local transform: rotation ``orientation * rotation``, translation
    ``translation`` (in the parent's frame). Broadcasts: rotation may be
    (F, J, 4) against orientation/translation (J, 4)/(J, 3)."""
    r = quat.mul(orientation, rotation)
    t = np.broadcast_to(np.asarray(translation, dtype=np.float64), r.shape[:-1] + (3,))
    return quat.to_mat4(r, t)


def rite_world_quat(skel: Skeleton, orientation, translation, rotation):
    """The seed's ``updateAbsolutes`` literally, with quaternions.

    Returns (absolute rotations (..., J, 4), absolute translations (..., J, 3)).
    Used to cross-check the matrix path against the runtime's own arithmetic.
    """
    local_r = quat.mul(orientation, rotation)
    local_t = np.broadcast_to(np.asarray(translation, dtype=np.float64), local_r.shape[:-1] + (3,))
    abs_r = np.empty_like(local_r)
    abs_t = np.empty(local_r.shape[:-1] + (3,))
    for d, idx in enumerate(skel.levels):
        if d == 0:
            abs_r[..., idx, :] = local_r[..., idx, :]
            abs_t[..., idx, :] = local_t[..., idx, :]
        else:
            p = skel.parents[idx]
            abs_r[..., idx, :] = quat.mul(abs_r[..., p, :], local_r[..., idx, :])
            abs_t[..., idx, :] = abs_t[..., p, :] + quat.rotate(abs_r[..., p, :], local_t[..., idx, :])
    return abs_r, abs_t


def skin_matrices(world: np.ndarray, bind_world: np.ndarray) -> np.ndarray:
    """Per-joint skinning matrices ``world @ inverse(bind_world)``.

    ``bind_world`` (J, 4, 4) may contain scale (general inverse used)."""
    return world @ np.linalg.inv(bind_world)
