# SPDX-License-Identifier: GPL-3.0-or-later
"""The generic object machinery of the .X parser (the same code for text and
binary tokens): object headers and bodies, child objects and ``{ Name }``
references, names and strings within ``limits``, unknown objects and
templates skipped, float checks, warnings. The templates the parser knows
are read by :mod:`.mesh_templates`, :mod:`.anim_templates` and
:mod:`.parser` (frames, the whole file)."""
from __future__ import annotations

import math
from collections import Counter

import numpy as np

from . import limits
from .key_tables import FLOAT32_MAX
from .model import XFile
from .tokens import CLOSE, EOF, GUID, NAME, NUM, OPEN, TokenStream


class _Ref:
    """A ``{ Name }`` reference waiting to be resolved after the whole file is read."""

    __slots__ = ("name", "mark")

    def __init__(self, name, mark):
        self.name = name
        self.mark = mark


def _label(kind: str, name: str | None) -> str:
    return f"{kind} {name!r}" if name else kind


class _Item:
    """``what: <detail with index>`` for error messages, built only when a message
    needs it: per-face / per-key loops set ``index`` instead of copying the
    owner's label (up to MAX_NAME_LENGTH characters) for every item."""

    __slots__ = ("what", "detail", "index")

    def __init__(self, what: str, detail: str, index: int = 0):
        self.what = what
        self.detail = detail  # with "{}" where the index goes
        self.index = index

    def __str__(self) -> str:
        return f"{self.what}: {self.detail.format(self.index)}"

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)



class ObjectReader:
    """Reads objects from a token stream into an XFile: the parts every
    template shares."""

    def __init__(self, tokens: TokenStream, xfile: XFile, is_text: bool):
        self.t = tokens
        self.xf = xfile
        self.is_text = is_text
        self.unknown: Counter[str] = Counter()   # unknown object name -> count (one warning each)
        self.declared: set[str] = set()          # the templates the file declares
        self.strays: Counter[str] = Counter()    # object -> value tokens found where objects go
        self.depth = 0
        self.objects = 0

    def warn(self, message: str) -> None:
        self.xf.warnings.append(message)      # the channel keeps MAX_WARNINGS and counts the rest

    def count(self, what: str, mark, n: int = 1) -> None:
        """Account for ``n`` more objects built from the file (limits.MAX_OBJECTS)."""
        self.objects += n
        if self.objects > limits.MAX_OBJECTS:
            raise self.t.error(f"{what}: the file holds more than {limits.MAX_OBJECTS} objects", mark)

    def word(self) -> str:
        """The current NAME (or NUM, in text) as a name, at most limits.MAX_NAME_LENGTH long."""
        mark = self.t.here()
        word = self.t.word()
        if len(word) > limits.MAX_NAME_LENGTH:
            self.long_name(word, mark)
        return word

    def long_name(self, word: str, mark):
        raise self.t.error(f"name of {len(word)} characters (the limit is "
                           f"{limits.MAX_NAME_LENGTH}): {word[:40]!r}...", mark)

    def string(self, what: str) -> str:
        mark = self.t.here()
        value = self.t.string(what)
        if len(value) > limits.MAX_NAME_LENGTH:
            raise self.t.error(f"{what}: string of {len(value)} characters (the limit is "
                               f"{limits.MAX_NAME_LENGTH}): {value[:40]!r}...", mark)
        return value

    def begin(self, ident: str) -> str | None:
        """After the identifier: optional name, '{', optional GUID. Returns the name."""
        t = self.t
        name = None
        k = t.kind()
        if k == NAME or (k == NUM and self.is_text):
            name = self.word() or None
        if t.kind() != OPEN:  # (t.expect, without building the label every time)
            raise t.error(f"{_label(ident, name)}: expected {OPEN!r}, found {t.describe()}")
        t.advance()
        if t.kind() == GUID:
            t.advance()
        return name

    def children(self, what: str):
        """Yield (identifier, marker) for each child object, or (None, _Ref) for a
        reference, until the closing brace (consumed)."""
        t = self.t
        while True:
            k = t.kind()
            if k == CLOSE:
                t.advance()
                return
            if k == NAME:
                mark = t.here()
                ident = t.word()
                if len(ident) > limits.MAX_NAME_LENGTH:
                    self.long_name(ident, mark)
                if ident == "template":
                    self.skip_template()
                    continue
                yield ident, mark
            elif k == OPEN:
                yield None, self.reference()
            elif k == EOF:
                raise t.error(f"{what}: unexpected end of file (missing '}}')")
            else:
                self.strays[what] += 1
                t.advance()

    def end(self, what: str) -> None:
        """Skip whatever children remain in the current object."""
        if self.t.kind() == CLOSE:  # (the usual case, without the generator)
            self.t.advance()
            return
        for ident, _ref in self.children(what):
            if ident is not None:
                self.unknown_object(ident)

    def reference(self) -> _Ref:
        t = self.t
        mark = t.here()
        t.advance()  # '{'
        name = None
        k = t.kind()
        if k == NAME or (k == NUM and self.is_text):
            name = self.word()
        if t.kind() == GUID:
            t.advance()
        if t.kind() != CLOSE:
            raise t.error(f"reference: expected '}}', found {t.describe()}")
        t.advance()
        return _Ref(name, mark)

    def unknown_object(self, ident: str) -> None:
        t = self.t
        k = t.kind()
        if k == NAME or (k == NUM and self.is_text):
            t.advance()
        t.expect(OPEN, f"object {ident!r}")
        t.skip_block()
        if ident not in limits.IGNORED:
            self.unknown[ident] += 1

    def skip_template(self) -> None:
        t = self.t
        if t.kind() == NAME:
            self.declared.add(t.word())
        t.expect(OPEN, "template")
        t.skip_block()

    def enter(self, what: str, mark) -> None:
        self.depth += 1
        if self.depth > limits.MAX_DEPTH:
            raise self.t.error(f"{what}: objects nested deeper than {limits.MAX_DEPTH} levels", mark)

    def check_floats(self, values: np.ndarray, start, what: str, item: str | None = None,
                     width: int = 1) -> None:
        """Raise at the first of ``values`` (read from marker ``start``, in file
        order) that is NaN, infinite or beyond the 32-bit float range: Blender
        stores float32, such a value would become inf / NaN there."""
        flat = values.reshape(-1)
        ok = np.abs(flat) <= FLOAT32_MAX  # False for NaN too
        if ok.all():
            return
        k = int(np.flatnonzero(~ok)[0])
        v = float(flat[k])
        problem = "is beyond the 32-bit float range" if math.isfinite(v) else "is not finite"
        if item is None:
            message = f"{what}: value {k} {problem} ({v!r})"
        else:
            i = k // width
            row = [float(x) for x in flat[i * width:(i + 1) * width]]
            message = f"{what}: {item} {i} {problem} ({row[0] if width == 1 else row})"
        raise self.t.error(message, self.t.mark_plus(start, k))

    def read_matrix(self, what: str) -> np.ndarray:
        start = self.t.here()
        values = self.t.read_floats(16, what)
        self.check_floats(values, start, what)
        return values.reshape(4, 4)
