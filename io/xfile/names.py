# SPDX-License-Identifier: GPL-3.0-or-later
"""Names as a .X file can hold them.

A binary file stores a name as a counted run of bytes: any name, as it is.
A text file spells an object's name as one word (``Frame Name {``,
``{ Name }``): a word ends at whitespace and at the separators both this
project's reader and assimp's stop at (``; , { } ( ) " <``), and ``#`` or
``//`` start a comment. Everything else, non-ASCII letters included
(``Rücken``, ``Шея``, ``骨頭``), is written as it is. A character a word cannot
hold becomes ``_``; a name that then equals another one gets ``.1``,
``.2`` ... (assimp refuses two bones of one name). Every change is
reported, so a re-import gives back the same names or the report says which
differ.
The respelling is deterministic: :func:`joint_index` finds a rig's bones
again by the names a text file gave them.
"""
from __future__ import annotations

from .. import name_match

#: characters a text .X word cannot hold (besides whitespace and control characters)
_BREAKS = set(';,{}()"<>#/')


def _word_safe(ch: str) -> bool:
    return not (ch in _BREAKS or ch.isspace() or ord(ch) < 0x20 or ord(ch) == 0x7F or not ch.isprintable())


def text_identifier(name: str) -> str:
    """``name`` as one word of a text .X file (characters it cannot hold -> ``_``)."""
    out = "".join(ch if _word_safe(ch) else "_" for ch in name)
    return out or "_"


def file_names(names: list[str], *, text: bool, fallback: str, taken: set[str] | None = None,
               keep_empty: set[int] | None = None) -> tuple[list[str], list[tuple[str, str]]]:
    """The names to write for ``names`` (unique among themselves and
    ``taken``, which is updated): as they are where the file can hold them.
    An empty name becomes ``fallback<i>`` unless its index is in
    ``keep_empty`` (an object nothing refers to by name stays unnamed, "").
    Returns (names, [(old, new)] for every name that changed, empty
    fallbacks left out)."""
    taken = taken if taken is not None else set()
    out, changed = [], []
    for i, n in enumerate(names):
        if not n and keep_empty is not None and i in keep_empty:
            out.append("")
            continue
        m = (text_identifier(n) if text else n) if n else f"{fallback}{i}"
        base, k = m, 1
        while m in taken:
            m = f"{base}.{k}"
            k += 1
        taken.add(m)
        out.append(m)
        if n and m != n:
            changed.append((n, m))
    return out, changed


def joint_index(names: list[str], wanted) -> dict[str, int]:
    """Name -> joint for finding the joints ``names`` (a rig's) by the names
    a file written from it gives them (``wanted``): their own, or as the
    text writer respells them (:func:`.name_match.joint_index`)."""
    return name_match.joint_index(names, file_names(list(names), text=True, fallback="frame")[0], wanted)


def report(what: str, changed: list[tuple[str, str]], text: bool) -> str:
    """One warning line listing the renamed ``what`` (old -> new)."""
    why = ("a text .X word cannot hold them or they repeat (binary storage keeps any name)" if text
           else "they repeat")
    return f"{len(changed)} {what} name(s) written differently, {why}: {name_match.shown(changed)}"
