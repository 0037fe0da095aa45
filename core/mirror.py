# SPDX-License-Identifier: GPL-3.0-or-later
"""Left/right symmetry of a rig: pairs of joints by name, the mirror plane
their heads share, and bone rolls that are mirror images of each other.

Blender's *Paste Pose Flipped* (and its X-mirror posing) negates a pose
bone's location x and its rotation's y and z, i.e. conjugates the pose by
``F = diag(-1, 1, 1)`` in the bone's own axes. That mirrors the whole pose
through the plane ``M`` exactly when each bone's rest is the mirror image of
its partner's, ``R_right = M R_left F``, and a bone on the plane is its own
(its X axis along the plane's normal): then ``P_right = M P_left F`` follows
down the hierarchy. The roll (the turn about the bone's own Y axis) is free
(``K`` absorbs it), so the right bone of each pair takes the roll that
mirrors its left partner's and a centre bone the roll that puts its X axis
on the normal."""
from __future__ import annotations

import re

import numpy as np

from .vectors import cross

_WORD = re.compile(r"(?<![A-Za-z])(left|right)(?![a-z])|(Left|Right)(?![a-z])|(?<![A-Z])(LEFT|RIGHT)(?![A-Z])")
_LETTER = re.compile(r"(?:(?<=^)|(?<=[._\- ]))([LRlr])(?=$|[._\- ])")
_SWAP = {"left": "right", "Left": "Right", "LEFT": "RIGHT", "L": "R", "l": "r"}
_SWAP.update({v: k for k, v in list(_SWAP.items())})


def _flips(name: str) -> list[tuple[str, bool]]:
    """(the other side's name, this one is the left) for each side word or
    letter in ``name`` (one replaced at a time)."""
    out = []
    for rx in (_WORD, _LETTER):
        for m in rx.finditer(name):
            g = next(k for k in range(1, (rx.groups or 0) + 1) if m.group(k) is not None)
            s = m.group(g)
            out.append((name[:m.start(g)] + _SWAP[s] + name[m.end(g):], s.lower().startswith("l")))
    return out


def side_pairs(names: list[str]) -> list[tuple[int, int]]:
    """(left, right) indices of names that differ only by their side word or
    letter: L/R, l/r, Left/Right (any case) as a word or a separated letter
    (``LeftArm``, ``Arm_Left``, ``thigh.L``, ``Bip01 L Thigh``,
    ``Bip01_R_Calf``, ``l_hand``)."""
    index = {n: i for i, n in enumerate(names)}
    pairs: dict[int, int] = {}
    for i, n in enumerate(names):
        for other, left in _flips(n):
            k = index.get(other)
            if left and k is not None and k != i and i not in pairs and k not in pairs.values():
                pairs[i] = k
                break
    return sorted(pairs.items())


def mirror_plane(heads: np.ndarray, pairs: list[tuple[int, int]], tol: float):
    """(unit normal, offset) of the plane ``n . x = offset`` the paired
    heads mirror through (within ``tol``), or None when there is no pair or
    they do not share one."""
    if not pairs:
        return None
    left = heads[[a for a, _ in pairs]]
    right = heads[[b for _, b in pairs]]
    d = left - right
    far = np.linalg.norm(d, axis=1) > tol
    if not far.any():
        return None
    n = np.sum(d[far] / np.linalg.norm(d[far], axis=1, keepdims=True), axis=0)
    n /= np.linalg.norm(n)
    offset = float(np.mean((left + right) @ n) / 2.0)
    m = np.eye(3) - 2.0 * np.outer(n, n)
    mirrored = (left - n * offset) @ m.T + n * offset
    if np.linalg.norm(mirrored - right, axis=1).max() > tol:
        return None
    return n, offset


def mirrored_rolls(rot: np.ndarray, heads: np.ndarray, pairs: list[tuple[int, int]], plane,
                   tol: float) -> tuple[np.ndarray, list[int]]:
    """Bone rotations (B, 3, 3) with the same Y axes (directions) and the
    rolls that mirror the pose through ``plane``: each right bone's X axis
    the mirror image of its left partner's (``-M x_left``, as near as its own
    direction allows), and each unpaired bone whose head and direction lie on
    the plane its X axis along the normal (the sign nearer its own). Returns
    (rotations, the bones changed)."""
    n, offset = plane
    m = np.eye(3) - 2.0 * np.outer(n, n)
    out = np.array(rot, dtype=np.float64)
    changed = []

    def roll_to(i: int, x: np.ndarray) -> None:
        y = out[i, :, 1]
        x = x - (x @ y) * y
        if np.linalg.norm(x) < 1e-6:
            return
        x /= np.linalg.norm(x)
        new = np.stack((x, y, cross(x, y)), axis=1)
        if np.abs(new - out[i]).max() > 1e-12:
            out[i] = new
            changed.append(i)

    paired = set()
    for a, b in pairs:
        paired.update((a, b))
        roll_to(b, -(m @ out[a, :, 0]))
    for i in range(len(out)):
        if i in paired:
            continue
        if abs(heads[i] @ n - offset) <= tol and abs(out[i, :, 1] @ n) <= 1e-6:
            roll_to(i, n if out[i, :, 0] @ n >= 0 else -n)
    return out, changed
