# SPDX-License-Identifier: GPL-3.0-or-later
"""The animation templates of .X files: AnimationSet, Animation (with its
frame reference or inline Frame, AnimationOptions) and AnimationKey, whose
tables are taken on trust in bulk (:mod:`.key_tables`) and checked at the
end, or read number by number."""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

from .key_tables import FLOAT32_MAX, KEY_SIZES, MAX_KEY_TIME, KeyTables
from .model import XAnimation, XAnimationKey, XAnimationSet, XFrame
from .objects import ObjectReader, _Item, _label


def _keys_ok(table: np.ndarray, expected: int) -> bool:
    """Every key (row) has ``expected`` values, a time in [0, MAX_KEY_TIME) and
    finite 32-bit float values: tested on the extremes of each column."""
    if len(table) == 1:
        low = high = table[0].tolist()
    else:
        low, high = table.min(axis=0).tolist(), table.max(axis=0).tolist()
    values = low[2:] + high[2:]
    total = sum(values)  # NaN if one is (numpy's min / max keep it, Python's may not)
    return (low[1] == high[1] == expected and low[0] >= 0 and high[0] < MAX_KEY_TIME
            and total == total and min(values) >= -FLOAT32_MAX and max(values) <= FLOAT32_MAX)


class AnimationTemplates(ObjectReader):
    """Animation objects (mixed into :class:`~.parser.Parser`)."""

    key_tables: KeyTables
    in_animation: int               # > 0 while parsing a Frame object inside an Animation
    frame: Callable[[], XFrame]     # the parser's Frame template

    def animation_set(self) -> XAnimationSet:
        mark = self.t.here()
        name = self.begin("AnimationSet")
        what = _label("AnimationSet", name)
        self.count(what, mark)
        aset = XAnimationSet(name)
        for ident, mark in self.children(what, "AnimationSet"):
            if ident == "Animation":
                aset.animations.append(self.animation(what, mark))
            elif ident is None:
                self.warn(f"{what}: reference {{ {mark.name} }} ignored")
            else:
                self.unknown_object(ident)
        return aset

    def animation(self, owner: str, mark) -> XAnimation:
        t = self.t
        name = self.begin("Animation")
        what = f"{owner}: {_label('Animation', name)}"
        self.count(what, mark)
        anim = XAnimation(name)
        for ident, mark in self.children(what, "Animation"):
            if ident is None:
                if anim.frame_name is not None and mark.name != anim.frame_name:
                    self.warn(f"{what}: second frame reference {{ {mark.name} }} ignored")
                elif mark.name is not None:
                    anim.frame_name = mark.name
            elif ident == "AnimationKey":
                self.count(what, mark)
                anim.keys.append(self.animation_key(what))
            elif ident == "AnimationOptions":
                self.begin(ident)
                anim.open_closed = t.read_int(f"{what}: AnimationOptions")
                anim.position_quality = t.read_int(f"{what}: AnimationOptions")
                self.end(ident)
            elif ident == "Frame" and anim.frame_name is None:
                # Some exporters put the animated frame's name in an inline object.
                self.in_animation += 1
                sub = self.frame()
                self.in_animation -= 1
                anim.frame_name = sub.name
            else:
                self.unknown_object(ident)
        return anim

    def animation_key(self, owner: str) -> XAnimationKey:
        t = self.t
        self.begin("AnimationKey")
        what = f"{owner}: AnimationKey"
        tmark = t.here()
        key = self.key_tables.take(t.number_block(), tmark, what)
        if key is not None:  # (checked by check_keys)
            return key
        t.reset(tmark)
        return self.read_key(what, tmark)

    def check_keys(self) -> None:
        """Check the keys taken on trust (key_tables); the first bad one is read
        again number by number, which raises its error."""
        bad = self.key_tables.settle(self.t.mark_plus)
        if bad is not None:
            mark, what = bad
            self.t.reset(mark)
            self.read_key(what, mark)
            raise self.t.error(f"{what}: inconsistent key checks (internal error)", mark)

    def skipped_keys(self) -> None:
        """One warning for the keys left out because their times cannot be
        placed (key_tables.skip), naming the first and the count."""
        kt = self.key_tables
        if kt.first_skipped is None:
            return
        mark, what, k, time = kt.first_skipped
        shown = f"{int(time)}" if math.isfinite(time) and time.is_integer() else repr(time)
        self.warn(f"{kt.skipped} animation key{'s' if kt.skipped != 1 else ''} with a time outside "
                  f"[0, {MAX_KEY_TIME}) ticks skipped (no time of the timeline to place "
                  f"{'them' if kt.skipped != 1 else 'it'} at): the first at {self.at(mark)} ({what}, key {k}, "
                  f"time {shown})")

    def read_key(self, what: str, tmark) -> XAnimationKey:
        """An AnimationKey body (after its '{'), number by number."""
        t = self.t
        key_type = t.read_int(f"{what}: key type")
        expected = KEY_SIZES.get(key_type)
        if expected is None:
            raise t.error(f"{what}: unknown key type {key_type}", tmark)
        nk = t.read_count(f"{what}: key count", 2 + expected)
        start = t.here()
        width = 2 + expected
        table = None
        if nk:
            # Probed without raising (an error costs a scan of a text file).
            table = t.try_read_floats(nk * width)
            if table is not None:
                table = table.reshape(nk, width)
                if not np.all(table[:, 1] == expected):
                    table = None
                    t.reset(start)
        if table is None:
            table = np.empty((nk, width))
            time_label = _Item(what, "key {} time")
            count_label = _Item(what, "key {} value count")
            values_label = _Item(what, "key {}")
            for k in range(nk):
                time_label.index = count_label.index = values_label.index = k
                table[k, 0] = t.read_float(time_label)
                vmark = t.here()
                n = t.read_int(count_label)
                if n != expected:
                    raise t.error(f"{what}: key {k} has {n} values, key type {key_type} "
                                  f"needs {expected}", vmark)
                table[k, 2:] = t.read_floats(n, values_label)
        if nk and not _keys_ok(table, expected):
            table = self.bad_keys(table, start, what)
        self.end(what)
        return XAnimationKey(key_type, table[:, 0].copy(), table[:, 2:].copy())

    def bad_keys(self, table: np.ndarray, start, what: str) -> np.ndarray:
        """``table`` without the keys whose times cannot be placed (counted
        by ``key_tables.skip``, for one warning); raise at the first value of
        the others that is not a finite 32-bit float (the table is the key
        tokens in file order: flat index = numbers after ``start``)."""
        width = table.shape[1]
        times = table[:, 0]
        placed = (times >= 0) & (times < MAX_KEY_TIME)      # NaN fails too
        values = table[:, 2:]
        bad = ~(np.abs(values) <= FLOAT32_MAX) & placed[:, None]
        if not bad.any():
            if placed.all():        # (nothing wrong: not reached)
                return table
            k = int(np.argmin(placed))
            self.key_tables.skip(int((~placed).sum()), self.t.mark_plus(start, k * width), what, k,
                                 float(times[k]))
            return table[placed]
        k, c = (int(x) for x in np.argwhere(bad)[0])
        v = float(values[k, c])
        problem = "is beyond the 32-bit float range" if math.isfinite(v) else "is not finite"
        raise self.t.error(f"{what}: key {k} value {c} {problem} ({v!r})",
                           self.t.mark_plus(start, k * width + 2 + c))
