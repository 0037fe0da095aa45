# SPDX-License-Identifier: GPL-3.0-or-later
"""Joint hierarchies and world transforms, vectorised over joints and frames."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

#: The deepest joint hierarchy accepted (roots have depth 0): deeper chains
#: are refused with an error instead of exhausting Blender's stack.
MAX_DEPTH = 10_000


class SkeletonError(ValueError):
    """A joint hierarchy that cannot be evaluated (missing parent, cycle, too deep)."""


def _depths(parents: np.ndarray, names: list[str]) -> np.ndarray:
    """Depth of every joint, in time linear in the number of joints."""
    n = len(parents)
    depth = np.full(n, -1, dtype=np.int64)
    par = parents.tolist()
    state = [0] * n                     # 0 unseen, 1 on the current path, 2 done
    for start in range(n):
        if state[start] == 2:
            continue
        path = []
        j = start
        while j >= 0 and state[j] == 0:
            state[j] = 1
            path.append(j)
            j = par[j]
        if j >= 0 and state[j] == 1:
            raise SkeletonError(f"joint {names[j]!r} is part of a parent cycle")
        d = -1 if j < 0 else int(depth[j])
        for k in reversed(path):
            d += 1
            depth[k] = d
            state[k] = 2
        if d > MAX_DEPTH:
            raise SkeletonError(f"the joint hierarchy is more than {MAX_DEPTH} levels deep "
                                f"(joint {names[path[0]]!r} is at depth {d})")
    return depth


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
        depth = _depths(self.parents, self.names)
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
