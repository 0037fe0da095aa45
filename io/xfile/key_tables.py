# SPDX-License-Identifier: GPL-3.0-or-later
"""AnimationKey bodies read in bulk.

Most AnimationKey bodies are plain tables of numbers (key type, key count, then
per key: time, value count, values). Such a body (``TokenStream.number_block``)
is taken on trust while parsing (``KeyTables.take``: a few Python steps, no
numpy call); once the file is read, ``settle`` checks every taken table at once
(value counts, finite 32-bit values) and gives the keys their arrays, one copy
per key width. A key whose time cannot be placed (outside [0, MAX_KEY_TIME):
a DWORD 0xFFFFFFFF written signed as -1, or unsigned) is left out and counted
(``skipped``), as the parser does when it reads a body number by number. A body
that is not such a table is read number by number by the parser; a taken key
that fails the checks is read again that way, which raises the error reading it
at once would have raised.
"""
from __future__ import annotations

import numpy as np

from .model import XAnimationKey

KEY_SIZES = {0: 4, 1: 3, 2: 3, 3: 16, 4: 16}  # key type -> values per key
MAX_KEY_TIME = 2 ** 31      # ticks; key times lie in [0, MAX_KEY_TIME)
FLOAT32_MAX = float(np.finfo(np.float32).max)
_UNSET = np.zeros(0)


class KeyTables:
    def __init__(self) -> None:
        self.keys: list[XAnimationKey] = []
        self.tables: list[np.ndarray] = []  # each key's numbers after the key count
        self.widths: list[int] = []
        self.marks: list = []               # where each body starts, and its label
        self.labels: list[str] = []
        # keys left out because their time cannot be placed: how many, and the
        # first in file order as (marker of its time, label, key index, time)
        self.skipped = 0
        self.first_skipped: tuple | None = None

    def skip(self, count: int, mark, what: str, index: int, time: float) -> None:
        """Count ``count`` keys left out for their times; ``mark``: where the
        first one's time lies (kept if it is the first in file order)."""
        self.skipped += count
        if self.first_skipped is None or mark < self.first_skipped[0]:
            self.first_skipped = (mark, what, index, time)

    def take(self, block: np.ndarray | None, mark, what: str) -> XAnimationKey | None:
        """The key of a body of plain numbers (arrays set by ``settle``), or
        None if ``block`` is not a well-formed key table."""
        if block is None or len(block) < 2:
            return None
        key_type, nk = block[:2].tolist()
        expected = KEY_SIZES.get(int(key_type)) if key_type.is_integer() else None
        if expected is None or not nk.is_integer() or nk < 1:
            return None
        width = 2 + expected
        if len(block) != 2 + int(nk) * width:
            return None
        key = XAnimationKey(int(key_type), _UNSET, _UNSET)
        self.keys.append(key)
        self.tables.append(block[2:])
        self.widths.append(width)
        self.marks.append(mark)
        self.labels.append(what)
        return key

    def settle(self, mark_plus) -> tuple[object, str] | None:
        """Check every table taken; all good: set the keys' arrays (without
        the keys whose times cannot be placed, counted by :meth:`skip`;
        ``mark_plus(mark, k)``: the marker k numbers after ``mark``) and
        return None, else (mark, label) of the first bad key in file order."""
        groups: dict[int, list[int]] = {}
        for k, width in enumerate(self.widths):
            groups.setdefault(width, []).append(k)
        first_bad = len(self.keys)
        done = []
        tables, self.tables = self.tables, []  # (released as soon as copied)
        for width, members in groups.items():
            table = np.concatenate([tables[k] for k in members]).reshape(-1, width)
            rows = np.cumsum([len(tables[k]) // width for k in members])
            for k in members:
                tables[k] = None
            times = table[:, 0]
            placed = (times >= 0) & (times < MAX_KEY_TIME)      # (NaN fails)
            ok = (table[:, 1] == width - 2) & ((np.abs(table[:, 2:]) <= FLOAT32_MAX).all(axis=1) | ~placed)
            if not ok.all():
                row = int(np.argmin(ok))
                first_bad = min(first_bad, members[int(np.searchsorted(rows, row, "right"))])
            done.append((members, rows, table, placed))
        if first_bad < len(self.keys):
            return self.marks[first_bad], self.labels[first_bad]
        while done:
            members, rows, table, placed = done.pop()
            ends = rows.tolist()
            if not placed.all():    # the group's first such key is its first in file order
                width = table.shape[1]
                row = int(np.argmin(placed))
                k = int(np.searchsorted(rows, row, "right"))
                index = row - (ends[k - 1] if k else 0)
                self.skip(int((~placed).sum()), mark_plus(self.marks[members[k]], 2 + index * width),
                          self.labels[members[k]], index, float(table[row, 0]))
                ends = np.cumsum(placed)[rows - 1].tolist()
                table = table[placed]
            times = table[:, 0].copy()
            values = table[:, 2:].copy()
            del table
            start = 0
            for k, end in zip(members, ends):
                key = self.keys[k]
                key.times, key.values = times[start:end], values[start:end]
                start = end
        return None
