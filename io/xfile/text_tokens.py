# SPDX-License-Identifier: GPL-3.0-or-later
"""Tokenizer for text .X data: one regex pass, numbers converted in runs."""
from __future__ import annotations

import bisect
import re

import numpy as np

from .tokens import CLOSE, EOF, GUID, NAME, NUM, OPEN, STRING, TokenStream, decode_name

# Strings, GUIDs and comments are found by one regex; the plain text between
# them is split with str.replace / str.split (fast). "#" right after "."
# belongs to a word (MSVC's "1.#QNAN0" spellings of NaN / infinity).
# (Written as a character class + lookbehinds: scanning is 8x faster that way.)
_SPECIAL = re.compile(r'[\"<#/](?:(?<=")[^"]*"?|(?<=<)[^<>{}"]*>?|(?<=/)/[^\n]*'
                      r'|(?<=#)(?<!\.#)[^\n]*)')


def _plain(segment: str) -> list[str]:
    return (segment.replace(";", " ").replace(",", " ").replace("{", " { ")
            .replace("}", " } ").split())


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
        toks: list[str] = []
        # (first token index, start offset, end offset, special?) per segment
        segments: list[tuple[int, int, int, bool]] = []
        pos = start
        text = self.text
        for m in _SPECIAL.finditer(text, start):
            a = m.start()
            if a > pos:
                segments.append((len(toks), pos, a, False))
                toks.extend(_plain(text[pos:a]))
            c = text[a]
            if c == '"' or c == "<":
                segments.append((len(toks), a, m.end(), True))
                toks.append(m.group())
            pos = m.end()
        if pos < len(text):
            segments.append((len(toks), pos, len(text), False))
            toks.extend(_plain(text[pos:]))
        self.toks = toks
        self.segments = segments
        self.n = len(toks)
        self.i = 0

    # -- position --------------------------------------------------------
    def here(self):
        return self.i

    def reset(self, mark) -> None:
        self.i = mark

    def position(self, mark=None) -> dict:
        index = self.i if mark is None else mark
        offset = self._offset(index)
        return {"line": self.text.count("\n", 0, offset) + 1}

    def _offset(self, index: int) -> int:
        """Character offset of token ``index`` (only computed for error messages)."""
        if index >= self.n or not self.segments:
            return len(self.text.rstrip())
        firsts = [seg[0] for seg in self.segments]
        k = bisect.bisect_right(firsts, index) - 1
        # Several segments may start at the same token index (empty ones).
        while k + 1 < len(self.segments) and self.segments[k + 1][0] <= index:
            k += 1
        first, a, b, special = self.segments[k]
        if special:
            return a
        # Newlines never split a token, so count tokens line by line.
        seen = first
        line_start = a
        for line in self.text[a:b].split("\n"):
            seen += len(_plain(line))
            if seen > index:
                return line_start + len(line) - len(line.lstrip())
            line_start += len(line) + 1
        return b

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

    def tokens_left(self) -> int:
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
                raise self.error(f"{what}: integer out of range") from None
        if arr.shape != (n,):
            raise self.error(f"{what}: malformed numbers")
        self.i += n
        return arr

    # Probes for the parser's fast paths: None instead of an error (building a
    # FormatError computes a line number, a scan of the text: done once per file
    # it is cheap, done once per object it would make parsing quadratic).
    def try_read_floats(self, n: int) -> np.ndarray | None:
        if n > self.n - self.i:
            return None
        chunk = self.toks[self.i:self.i + n]
        try:
            arr = np.array(chunk, dtype=np.float64)
        except (ValueError, OverflowError):
            values = [_parse_float(t) for t in chunk]
            if any(v is None for v in values):
                return None
            arr = np.array(values, dtype=np.float64)
        if arr.shape != (n,):
            return None
        self.i += n
        return arr

    def try_read_ints(self, n: int) -> np.ndarray | None:
        if n > self.n - self.i:
            return None
        chunk = self.toks[self.i:self.i + n]
        try:
            arr = np.array(chunk, dtype=np.int64)
        except (ValueError, OverflowError):
            try:
                arr = self.check_integral(np.array(chunk, dtype=np.float64))
            except (ValueError, OverflowError):
                return None
        if arr is None or arr.shape != (n,):
            return None
        self.i += n
        return arr

    def mark_plus(self, mark, k: int):
        """The marker k numbers after ``mark`` (for pinpointing a bad value)."""
        return mark + k
