# SPDX-License-Identifier: GPL-3.0-or-later
"""Tokenizer for text .X data: one regex pass, numbers converted in runs."""
from __future__ import annotations

import re

import numpy as np

from .tokens import (CLOSE, EOF, GUID, NAME, NUM, OPEN, STRING, TokenStream,
                     decode_name)

# Separators (; ,) and whitespace are never matched, so findall skips them.
# A word may contain "/" (but not "//", a comment) and "#" right after "."
# (MSVC's "1.#QNAN0" spellings of NaN / infinity).
_WORD = r'(?:[^\s;,{}"<>#/]|/(?!/)|(?<=\.)#)+'
_PATTERN = re.compile(r'//[^\n]*|#[^\n]*|("[^"]*"?|<[^<>{}"]*>?|[{}]|' + _WORD + ")")
_NUM_START = frozenset("0123456789+-.")
_KIND = {"{": OPEN, "}": CLOSE, '"': STRING, "<": GUID}
_MSVC_SPECIAL = re.compile(r"^([-+]?)1\.#(QNAN|SNAN|IND|INF)", re.IGNORECASE)


def _parse_float(token: str) -> float | None:
    try:
        return float(token)
    except ValueError:
        m = _MSVC_SPECIAL.match(token)
        if m is None:
            return None
        if m.group(2).upper() == "INF":
            return float("-inf") if m.group(1) == "-" else float("inf")
        return float("nan")


class TextTokens(TokenStream):
    """Tokens of a text .X body (``data`` is the whole decoded byte string)."""

    def __init__(self, data: bytes, start: int = 0, path=None, where_note: str = ""):
        self.path = path
        self.where_note = where_note
        self.text = data.decode("latin-1")
        self.start = start
        self.toks = [t for t in _PATTERN.findall(self.text, start) if t]
        self.n = len(self.toks)
        self.i = 0
        self._offsets = None

    # -- position --------------------------------------------------------
    def here(self):
        return self.i

    def reset(self, mark) -> None:
        self.i = mark

    def position(self, mark=None) -> dict:
        index = self.i if mark is None else mark
        if self._offsets is None:
            self._offsets = [m.start(1) for m in _PATTERN.finditer(self.text, self.start)
                             if m.group(1)]
        if index < len(self._offsets):
            offset = self._offsets[index]
        else:
            offset = len(self.text.rstrip())
        return {"line": self.text.count("\n", 0, offset) + 1}

    # -- structure -------------------------------------------------------
    def kind(self) -> str:
        if self.i >= self.n:
            return EOF
        t = self.toks[self.i]
        c = t[0]
        k = _KIND.get(c)
        if k is not None:
            return k
        return NUM if c in _NUM_START else NAME

    def describe(self) -> str:
        if self.i >= self.n:
            return "end of file"
        t = self.toks[self.i]
        return repr(t if len(t) <= 40 else t[:37] + "...")

    def advance(self) -> None:
        self.i += 1

    def word(self) -> str:
        """The current NAME or NUM token as a name (names may start with digits)."""
        t = self.toks[self.i]
        self.i += 1
        return decode_name(t.encode("latin-1"))

    def string(self, what: str) -> str:
        if self.kind() != STRING:
            raise self.error(f"{what}: expected a string, found {self.describe()}")
        t = self.toks[self.i]
        if len(t) < 2 or not t.endswith('"'):
            raise self.error(f"{what}: unterminated string")
        self.i += 1
        # Text files escape backslashes in paths ("C:\\dir\\a.png").
        return decode_name(t[1:-1].encode("latin-1")).replace("\\\\", "\\")

    def skip_block(self) -> None:
        """Skip to the ``}`` matching an already consumed ``{`` (consumed too)."""
        toks, i, n, depth = self.toks, self.i, self.n, 1
        while i < n:
            t = toks[i]
            i += 1
            if t == "{":
                depth += 1
            elif t == "}":
                depth -= 1
                if depth == 0:
                    self.i = i
                    return
        self.i = n
        raise self.error("unexpected end of file inside a block (missing '}')")

    # -- numbers ---------------------------------------------------------
    def numbers_left(self) -> int:
        return self.n - self.i

    def _chunk(self, n: int, what: str) -> list[str]:
        if n > self.n - self.i:
            raise self.error(f"{what}: expected {n} numbers, but only "
                             f"{self.n - self.i} tokens are left in the file")
        return self.toks[self.i:self.i + n]

    def _bad_token(self, chunk: list[str], what: str, n: int, integer: bool):
        for k, t in enumerate(chunk):
            v = _parse_float(t)
            if v is None or (integer and not float(v).is_integer()):
                kind = "integer" if integer else "number"
                raise self.error(f"{what}: expected {n} {kind}s, found {k} "
                                 f"then {t[:40]!r}", self.i + k)
        return None

    def read_floats(self, n: int, what: str) -> np.ndarray:
        if n == 0:
            return np.zeros(0, dtype=np.float64)
        chunk = self._chunk(n, what)
        try:
            arr = np.array(chunk, dtype=np.float64)
        except (ValueError, OverflowError):
            self._bad_token(chunk, what, n, integer=False)
            arr = np.array([_parse_float(t) for t in chunk], dtype=np.float64)
        if arr.shape != (n,):
            self._bad_token(chunk, what, n, integer=False)
            raise self.error(f"{what}: malformed numbers")
        self.i += n
        return arr

    def read_ints(self, n: int, what: str) -> np.ndarray:
        if n == 0:
            return np.zeros(0, dtype=np.int64)
        chunk = self._chunk(n, what)
        try:
            arr = np.array(chunk, dtype=np.int64)
        except (ValueError, OverflowError):
            try:
                values = np.array(chunk, dtype=np.float64)
            except (ValueError, OverflowError):
                values = None
            arr = None if values is None else self.check_integral(values)
            if arr is None:
                self._bad_token(chunk, what, n, integer=True)
                raise self.error(f"{what}: integer out of range")
        if arr.shape != (n,):
            raise self.error(f"{what}: malformed numbers")
        self.i += n
        return arr

    def mark_plus(self, mark, k: int):
        """The marker k numbers after ``mark`` (for pinpointing a bad value)."""
        return mark + k
