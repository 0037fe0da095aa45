# SPDX-License-Identifier: GPL-3.0-or-later
"""Names as RiTE files can hold them.

A RAM/RAA name is quoted on its line (the contract): it holds anything but
``"`` (no escapes) and a line break. The writer spells ``"`` as ``'`` and a
line break as a space, makes joint names unique (tracks bind by name) with
``.1``, ``.2`` ..., and reports every change. The respelling is
deterministic: :func:`joint_index` finds a rig's joints again by the names
an animation written from it gives them.
"""
from __future__ import annotations

from .. import name_match


def spelt(name: str) -> str:
    """``name`` as a quoted RiTE name can hold it."""
    return name.replace('"', "'").replace("\n", " ").replace("\r", " ")


def joint_names(names: list[str]) -> tuple[list[str], list[tuple[str, str]]]:
    """The names to write for joints ``names`` (an empty one: ``joint<i>``),
    unique; and [(old, new)] for every one that changed."""
    out, seen, changed = [], set(), []
    for i, n in enumerate(names):
        m = spelt(n or f"joint{i}")
        base, k = m, 1
        while m in seen:
            m = f"{base}.{k}"
            k += 1
        if m != n:
            changed.append((n, m))
        seen.add(m)
        out.append(m)
    return out, changed


def joint_index(names: list[str], wanted) -> dict[str, int]:
    """Name -> joint for finding the joints ``names`` (a rig's) by the names
    a file written from it gives them (``wanted``): their own, or as the
    writer respells them (:func:`.name_match.joint_index`)."""
    return name_match.joint_index(names, joint_names(list(names))[0], wanted)
