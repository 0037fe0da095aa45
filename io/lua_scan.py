# SPDX-License-Identifier: GPL-3.0-or-later
"""The frame ranges a Minetest/Luanti mod's Lua file names, recognised on
its tokens (:mod:`.lua_tokens`), not on the raw text, the nesting of
brackets and of ``function``/``do``/``if`` ... ``end`` blocks tracked;
no Lua is run.

Recognised, in the order they appear in the file:

1. a table with fields ``x = N, y = M`` at its own top level (and no ``z``),
   assigned to a name: ``stand = {x = 0, y = 79}``, ``["walk mine"] = {...}``,
   ``local anim_walk = {x = 168, y = 187}``: a clip named by the key or
   variable. The engine's own two-number properties (``visual_size``,
   ``spritediv``, ... :data:`NOT_RANGES`) are not ranges, unless they sit in
   a table whose name says animation;
2. mobs-style fields ``NAME_start``/``NAME_end`` of one table (the suffix in
   any case, ``stand_START`` too): a clip NAME; ``speed_normal`` there is a
   speed;
3. ``obj:set_animation({x = N, y = M}, speed, ...)`` (``:`` or ``.``): a clip
   ``frames_N_M`` unless a named clip has that range; the speed if it is a
   number.

The speed (the fps) is the first one found: ``animation_speed = N``, a
set_animation speed or a mobs ``speed_normal``.
"""
from __future__ import annotations

import math
from collections import deque
from pathlib import Path

from .clip_range import MAX_RANGES, ClipRange, check_name, listed, whole_frame
from .errors import FormatError, group, note
from .lua_tokens import LUA_KEYWORDS, NAME, NUM, OP, STR, tokens

#: deepest nesting of brackets and blocks read
MAX_DEPTH = 1000

#: keys of the engine's {x = ..., y = ...} properties, which are not frame ranges
NOT_RANGES = frozenset({"visual_size", "spritediv", "initial_sprite_basepos", "position", "offset", "scale", "size",
                        "alignment"})

LOOKED_FOR = ("tables {x = first, y = last} assigned to a name, mobs-style NAME_start/NAME_end fields, "
              "set_animation({x = first, y = last}, speed) calls")

_START, _MAYBE, _BKEY, _VALUE = range(4)
_OPENS = {"(": "(", "[": "[", "{": "{", "function": "F", "do": "F", "if": "F", "repeat": "R"}
_CLOSES = {")": "(", "]": "[", "}": "{", "end": "F", "until": "R"}
_STRUCTURE = frozenset(("function", "do", "if", "repeat", "end", "until"))
_ENDS_VALUE = frozenset({",", ";", "}", ")"})
_WORDS = {"(": "(", "[": "[", "{": "{", "F": "function/if/do block", "R": "repeat block"}


class _Table:
    """A table constructor being read: its name, its named fields so far
    (key -> (first tokens of the value, count of tokens, line, seq))."""

    __slots__ = ("name", "call", "parent", "line", "seq", "fields", "state", "key", "kline", "kseq", "vals", "nval")
    kind = "{"

    def __init__(self, name, call: bool, parent, line: int, seq: int):
        self.name, self.call, self.parent, self.line, self.seq = name, call, parent, line, seq
        self.fields: dict[str, tuple] = {}
        self.vals: list[tuple] = []
        self.state, self.key, self.kline, self.kseq, self.nval = _START, None, line, seq, 0

    def end_field(self) -> None:
        if self.state == _VALUE and self.key is not None:
            self.fields[self.key] = (self.vals, self.nval, self.kline, self.kseq)
        self.state, self.key, self.vals, self.nval = _START, None, [], 0


class _Key:
    """The ``[...]`` key of a table field being read."""

    __slots__ = ("line", "first", "count")
    kind = "["

    def __init__(self, line: int):
        self.line, self.count = line, 0
        self.first: tuple | None = None


class _Mark:
    __slots__ = ("kind", "line")

    def __init__(self, kind: str, line: int):
        self.kind, self.line = kind, line


def _is_table(fld) -> bool:
    return fld[1] == 1 and fld[0][0][:2] == (OP, "{")


def _literal(fld):
    """The number a field's value is, when it is a number literal (or minus one)."""
    vals, nval = fld[0], fld[1]
    if nval == 1 and vals[0][0] == NUM:
        return vals[0][1]
    if nval == 2 and vals[0][:2] == (OP, "-") and vals[1][0] == NUM and vals[1][1] is not None:
        return -vals[1][1]
    return None


class _Scan:
    """One pass over the tokens: the stack of open brackets and blocks, the
    candidate clips and speeds; :meth:`result` decides."""

    def __init__(self, path, warnings):
        self.path, self.w, self.fname = path, warnings, Path(path).name
        self.stack: list = []
        self.open = {"(": 0, "[": 0, "{": 0, "F": 0, "R": 0}
        self.recent: deque = deque(maxlen=4)
        self.seq = 0
        self.cands: list[tuple] = []        # (seq, name, start, end, line, form, group)
        self.speeds: list[tuple] = []       # (line, seq, value, what)
        self.skipped: tuple[int, str] = (0, "")    # how many, the first
        self.pending: list | None = None    # a set_animation call's speed argument being read

    def run(self, text: str) -> None:
        stack, remember = self.stack, self.recent.append
        field_token, structure = self.field_token, self.structure
        prev_kind = None
        for tok in tokens(text):
            self.seq += 1
            if prev_kind == NUM or self.pending is not None:
                self.watch(tok)
            top = stack[-1] if stack else None
            if type(top) is _Table:
                if not field_token(top, tok):
                    structure(tok, top)
            elif tok[0] == OP or tok[1] in _STRUCTURE or type(top) is _Key:
                structure(tok, top)
            remember(tok)
            prev_kind = tok[0]
        self.watch(None)
        if self.stack:
            first = self.stack[0]
            group(self.w, f"{self.fname}: the file ends inside brackets or blocks never closed (read as far as it "
                  "goes)", f"{_WORDS[first.kind]} at line {first.line}")
            while self.stack:
                self.pop()

    # structure

    def structure(self, tok, top) -> None:
        """Brackets and blocks opening and closing; the tokens of a ``[key]``."""
        kind, val, line = tok
        if kind == OP or kind == NAME:
            if val in _OPENS:
                self.push(_OPENS[val], line, top)
                return
            if val in _CLOSES:
                self.close(_CLOSES[val])
                return
        if type(top) is _Key:
            top.count += 1
            top.first = top.first or tok

    def field_token(self, t: _Table, tok) -> bool:
        """Follow the fields of table ``t`` (at the top); True when ``tok``
        was only structure (a separator, a key, ``=``, the closing brace)."""
        kind, val, line = tok
        if t.state in (_MAYBE, _BKEY):
            if (kind, val) == (OP, "="):
                t.state = _VALUE
                return True
            if t.state == _MAYBE:           # a positional value that starts with a name
                t.vals, t.nval = [(NAME, t.key, t.kline)], 1
            t.state, t.key = _VALUE, None
        if kind == OP and val in (",", ";", "}"):
            t.end_field()
            if val == "}":
                self.close("{")
            return True
        if t.state == _START:
            t.kline, t.kseq = line, self.seq
            if kind == NAME and val not in LUA_KEYWORDS:
                t.state, t.key = _MAYBE, val
                return True
            if (kind, val) == (OP, "["):
                t.state, t.key = _BKEY, None
                self.push("K", line, t)
                return True
            t.state, t.key = _VALUE, None
        t.nval += 1
        if len(t.vals) < 3:
            t.vals.append(tok)
        return False

    def push(self, kind: str, line: int, top) -> None:
        if len(self.stack) >= MAX_DEPTH:
            raise FormatError(f"brackets and blocks nested deeper than {MAX_DEPTH}", path=self.path, line=line)
        item: _Table | _Key | _Mark
        if kind == "{":
            item = self.new_table(line, top)
        elif kind == "K":
            item = _Key(line)
        else:
            item = _Mark(kind, line)
        self.open[item.kind] += 1
        self.stack.append(item)

    def new_table(self, line: int, top) -> _Table:
        r = [(k, v) for k, v, _ in self.recent]
        r = [(None, None)] * (4 - len(r)) + r
        name, call = None, False
        if r[-1] == (OP, "="):
            if r[-2][0] == NAME and r[-2][1] not in LUA_KEYWORDS:
                name = r[-2][1]
            elif r[-2] == (OP, "]") and r[-3][0] == STR and r[-4] == (OP, "["):
                name = r[-3][1]
        elif r[-1] == (OP, "(") and r[-2] == (NAME, "set_animation") and r[-3] in ((OP, ":"), (OP, ".")):
            call = True
        elif r[-1] == (NAME, "set_animation") and r[-2] in ((OP, ":"), (OP, ".")):
            call = True
        parent = top if isinstance(top, _Table) and top.nval == 1 else None
        return _Table(name, call, parent, line, self.seq)

    def close(self, kind: str) -> None:
        if self.open[kind]:                 # else a stray closer: ignored
            while self.pop() != kind:
                pass

    def pop(self) -> str:
        item = self.stack.pop()
        self.open[item.kind] -= 1
        top = self.stack[-1] if self.stack else None
        if isinstance(item, _Table):
            item.end_field()
            self.finish(item)
        elif isinstance(item, _Key) and isinstance(top, _Table) and top.state == _BKEY:
            if item.count == 1 and item.first is not None and item.first[0] == STR:
                top.key = item.first[1]
        return item.kind

    # what the tokens say

    def watch(self, tok) -> None:
        """The speed argument after a set_animation call's range, and
        ``animation_speed = N``."""
        p = self.pending
        if p is not None:
            stage = p[0]
            if tok is not None and stage == 0 and tok[:2] == (OP, ","):
                p[0] = 1
            elif tok is not None and stage == 1 and tok[0] == NUM:
                p[0:1] = [2, tok]
            elif stage == 2 and (tok is None or (tok[0] == OP and tok[1] in (",", ")"))):
                self.speed(p[1][1], "set_animation frame speed", p[1][2])
                self.pending = None
            else:
                self.pending = None
        r = self.recent
        if len(r) >= 3 and r[-3][:2] == (NAME, "animation_speed") and r[-2][:2] == (OP, "=") and r[-1][0] == NUM:
            if tok is None or (tok[0] == OP and tok[1] in _ENDS_VALUE) or \
                    (tok[0] == NAME and tok[1] not in ("and", "or")):
                self.speed(r[-1][1], "animation_speed =", r[-1][2])

    def speed(self, value, what: str, line: int) -> None:
        try:
            v = float(value)
        except (TypeError, OverflowError):
            v = math.nan
        if math.isfinite(v) and v > 0:
            self.speeds.append((line, self.seq, v, what))
        else:
            note(self.w, f"{self.fname}:{line}: {what} {value} is not a speed; ignored")

    def skip(self, name: str, line: int, why: str) -> None:
        item = f"{name} (line {line}: {why})"
        self.skipped = (self.skipped[0] + 1, self.skipped[1] or item)
        group(self.w, f"{self.fname}: ranges skipped", item)

    def frames(self, a, b, name: str, line: int):
        if _is_table(a) or _is_table(b):    # a table of ranges named x and y, not a range
            return None
        va, vb = _literal(a), _literal(b)
        if va is None or vb is None:
            self.skip(name, line, "frames are not number literals")
            return None
        try:
            start, end = whole_frame(va), whole_frame(vb)
        except ValueError as exc:
            self.skip(name, line, str(exc))
            return None
        if end < start:
            self.skip(name, line, f"last frame {end} before the first {start}")
            return None
        return start, end

    def add(self, seq: int, name: str, rng, line: int, form: str, grp) -> None:
        try:
            check_name(name)
        except ValueError as exc:
            self.skip(repr(name[:40]), line, str(exc))
            return
        self.cands.append((seq, name, rng[0], rng[1], line, form, grp))

    def finish(self, t: _Table) -> None:
        f = t.fields
        if t.call:
            if "x" in f and "y" in f:
                rng = self.frames(f["x"], f["y"], "set_animation", t.line)
                if rng:
                    self.add(t.seq, f"frames_{rng[0]}_{rng[1]}", rng, t.line, "call", None)
                    self.pending = [0]
            return
        if t.name is not None and "x" in f and "y" in f and "z" not in f:
            parent = t.parent.name if t.parent is not None else None
            if t.name in NOT_RANGES and "anim" not in (parent or "").lower():
                group(self.w, f"{self.fname}: tables read as engine properties, not frame ranges",
                      f"{t.name} (line {t.line})", note=True)
            else:
                rng = self.frames(f["x"], f["y"], t.name, t.line)
                if rng:
                    self.add(t.seq, t.name, rng, t.line, "table", parent)
        self.fields_form(t)

    def fields_form(self, t: _Table) -> None:
        pairs: dict[str, list] = {}
        for key, fld in t.fields.items():
            if _is_table(fld):              # a range named like a field (walk_start = {x = ..., y = ...})
                continue
            low = key.lower()
            if low.endswith("_start") and len(key) > 6:
                pairs.setdefault(key[:-6], [None, None])[0] = fld
            elif low.endswith("_end") and len(key) > 4:
                pairs.setdefault(key[:-4], [None, None])[1] = fld
        if not any(a and b for a, b in pairs.values()) and "anim" not in (t.name or "").lower():
            return
        for prefix, (a, b) in pairs.items():
            if a is None or b is None:
                group(self.w, f"{self.fname}: mobs animation fields without their pair, skipped",
                      f"{prefix}{'_start' if a else '_end'} (line {(a or b)[2]})")
                continue
            rng = self.frames(a, b, prefix, a[2])
            if rng:
                self.add(min(a[3], b[3]), prefix, rng, a[2], "fields", t.seq)
        if "speed_normal" in t.fields and pairs:
            fld = t.fields["speed_normal"]
            value = _literal(fld)
            if value is not None:
                self.speed(value, "speed_normal =", fld[2])

    # the result

    def result(self, tried: str):
        kept: dict[str, tuple] = {}
        for c in sorted(self.cands, key=lambda c: c[0]):
            first = kept.get(c[1])
            if first is None:
                if len(kept) >= MAX_RANGES:
                    raise FormatError(f"more than {MAX_RANGES} animation ranges", path=self.path, line=c[4])
                kept[c[1]] = c
            elif first[2:4] != c[2:4]:
                group(self.w, f"{self.fname}: ranges named again with other frames (the first kept)",
                      f"{c[1]} (line {c[4]}: {c[2]}-{c[3]}; line {first[4]}: {first[2]}-{first[3]})")
        named = {c[2:4] for c in kept.values() if c[5] != "call"}
        clips: list[ClipRange] = []
        labels: dict[str, list[str]] = {}
        tables = {c[6] for c in self.cands if c[5] == "fields"}
        for c in kept.values():
            if c[5] == "call" and c[2:4] in named:
                note(self.w, f"{self.fname}:{c[4]}: set_animation range {c[2]}-{c[3]} already has a name")
                continue
            clips.append(ClipRange(c[1], c[2], c[3]))
            if c[5] == "table":
                label = f"{c[6]} table" if c[6] else "x/y tables assigned to names"
            elif c[5] == "fields":
                label = "mobs animation fields" + (f" of {len(tables)} tables" if len(tables) > 1 else "")
            else:
                label = "set_animation calls"
            labels.setdefault(label, []).append(c[1])
        if not clips:
            count, first_skipped = self.skipped
            why = f"; {count} skipped, the first: {first_skipped}" if count else ""
            read = f"; read as Lua ({tried})" if tried else ""
            raise FormatError(f"names no animation range (looked for {LOOKED_FOR}{why}{read})", path=self.path)
        found = [f"{label} ({listed(names)})" for label, names in labels.items()]
        fps = None
        if self.speeds:
            speeds = sorted(self.speeds)
            line, _, fps, what = speeds[0]
            found.append(f"{what} {fps:g} (line {line})")
            others = [f"{v:g} (line {ln})" for ln, _, v, _ in speeds[1:] if v != fps]
            if others:
                self.w.append(f"{self.fname}: animation speeds differ: {fps:g} (line {line}) taken; also "
                              f"{', '.join(others[:8])}{' ...' if len(others) > 8 else ''}")
        return clips, fps, found


def scan_lua(text: str, path, warnings, tried: str = ""):
    """(clips, fps or None, found phrases) of Lua source ``text``;
    FormatError when it names no range (``tried``: why it was read as Lua,
    for the message)."""
    scan = _Scan(path, warnings)
    scan.run(text)
    return scan.result(tried)
