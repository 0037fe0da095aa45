# SPDX-License-Identifier: GPL-3.0-or-later
"""Finding a rig's joints by the names a file gives them.

A writer respells names its format cannot hold (``io/xfile/names.py``,
``io/rite/names.py``) and makes repeated ones unique, deterministically: an
animation written from a rig and read back onto it names its joints as the
writer spelt them, which the rig's own names do not find. A writer's report
lists its renames with :func:`shown`.
"""
from __future__ import annotations

from collections.abc import Iterable


def joint_index(names: list[str], written: list[str], wanted: Iterable[str]) -> dict[str, int]:
    """Name -> joint for finding the joints ``names`` (a rig's) by the names
    a file gives them (``wanted``), where ``written`` are the names the
    format's writer gives those joints: the rig's own names when they find
    all of ``wanted``; else the written names when they do (the file was
    written from this rig: a respelt name that equals another joint's own
    name means the respelt joint); else both, the rig's own names first."""
    own: dict[str, int] = {}
    for i, n in enumerate(names):
        own.setdefault(n, i)
    wanted = set(wanted)
    if wanted <= own.keys():
        return own
    spelt: dict[str, int] = {}
    for i, n in enumerate(written):
        spelt.setdefault(n, i)
    return spelt if wanted <= spelt.keys() else {**spelt, **own}


def shown(changed: list[tuple[str, str]]) -> str:
    """``old -> new`` for the first few of ``changed`` (a writer's renames)."""
    return ", ".join(f"{a!r} -> {b!r}" for a, b in changed[:8]) + (" ..." if len(changed) > 8 else "")
