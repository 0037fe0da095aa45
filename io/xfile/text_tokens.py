# SPDX-License-Identifier: GPL-3.0-or-later
"""Tokenizer for text .X data: boundaries and numbers found with numpy.

``text_scan`` finds every token's offsets and ``numparse.parse_decimals``
converts the decimal ones, both without a Python step per token; Python only
looks at the tokens the parser reads one by one (names, braces, counts). Runs
of numbers are sliced out of the converted values; a run holding a token
``parse_decimals`` leaves to Python ("1.#QNAN0", "1_0", ...) is converted from
its text, with the same result and the same errors as a token-by-token reader.
"""
from __future__ import annotations

import re
from functools import cached_property

import numpy as np

from ..numparse import PAD, parse_decimals
from . import text_scan
from .tokens import CLOSE, EOF, GUID, NAME, NUM, OPEN, STRING, TokenStream, decode_name

# Token kinds, one byte per token, from the code of its first character
# (text_scan): the bytes of the characters, so that braces can be found with
# bytes.find.
_KIND_TABLE = bytearray(b"a" * 256)
for _c in range(text_scan.OTHER):  # digits, '.', '+', '-'
    _KIND_TABLE[_c] = ord("0")
for _c, _k in ((text_scan.OPEN, "{"), (text_scan.CLOSE, "}"), (text_scan.STRING, '"'),
               (text_scan.GUID, "<")):
    _KIND_TABLE[_c] = ord(_k)
_KIND_TABLE = bytes(_KIND_TABLE)
_KIND_OF: list = [None] * 256
_KIND_OF[ord("a")], _KIND_OF[ord("0")] = NAME, NUM
_KIND_OF[ord("{")], _KIND_OF[ord("}")] = OPEN, CLOSE
_KIND_OF[ord('"')], _KIND_OF[ord("<")] = STRING, GUID
_INT_RANGE = 2 ** 62  # integers as check_integral takes them
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
    """Tokens of a text .X body (``data`` is the whole byte string, the body
    starts at ``start``)."""

    def __init__(self, data: bytes, start: int = 0, path=None, where_note: str = ""):
        self.path = path
        self.where_note = where_note
        self.data = data
        starts, ends, codes = text_scan.scan(data, start)
        firsts = codes[PAD + starts]  # the code of each token's first character
        values, exact = parse_decimals(codes, starts + PAD, ends + PAD)
        del codes
        self.starts = starts
        self.ends = ends
        self.kinds = firsts.tobytes().translate(_KIND_TABLE)
        self.values = values
        self.exact = exact.tobytes()  # 1: values[i] is token i's number
        self.n = len(starts)
        self.i = 0

    @cached_property
    def text(self) -> str:
        return self.data.decode("latin-1")

    def _token(self, index: int) -> str:
        return self.data[self.starts[index]:self.ends[index]].decode("latin-1")

    def _tokens(self, index: int, n: int) -> list[str]:
        data = self.data
        return [data[a:b].decode("latin-1") for a, b in
                zip(self.starts[index:index + n].tolist(), self.ends[index:index + n].tolist())]

    # -- position --------------------------------------------------------
    def here(self):
        return self.i

    def reset(self, mark) -> None:
        self.i = mark

    def position(self, mark=None) -> dict:
        index = self.i if mark is None else mark
        if index >= self.n:
            offset = len(self.text.rstrip())
        else:
            offset = int(self.starts[index])
        return {"line": self.data.count(b"\n", 0, offset) + 1}

    # -- structure -------------------------------------------------------
    def kind(self) -> str:
        i = self.i
        if i >= self.n:
            return EOF
        return _KIND_OF[self.kinds[i]]

    def describe(self) -> str:
        if self.i >= self.n:
            return "end of file"
        t = self._token(self.i)
        return repr(t if len(t) <= 40 else t[:37] + "...")

    def advance(self) -> None:
        self.i += 1

    def word(self) -> str:
        """The current NAME or NUM token as a name (names may start with digits)."""
        i = self.i
        self.i = i + 1
        return decode_name(self.data[self.starts[i]:self.ends[i]])

    def string(self, what: str) -> str:
        if self.kind() != STRING:
            raise self.error(f"{what}: expected a string, found {self.describe()}")
        a, b = int(self.starts[self.i]), int(self.ends[self.i])
        if b - a < 2 or self.data[b - 1] != 34:  # '"'
            raise self.error(f"{what}: unterminated string")
        self.i += 1
        # Text files escape backslashes in paths ("C:\\dir\\a.png").
        return decode_name(self.data[a + 1:b - 1]).replace("\\\\", "\\")

    def skip_block(self) -> None:
        """Skip to the ``}`` matching an already consumed ``{`` (consumed too)."""
        kinds, i, depth = self.kinds, self.i, 1
        opening = kinds.find(b"{", i)
        while True:
            closing = kinds.find(b"}", i)
            if closing < 0:
                self.i = self.n
                raise self.error("unexpected end of file inside a block (missing '}')")
            while 0 <= opening < closing:
                depth += 1
                opening = kinds.find(b"{", opening + 1)
            depth -= 1
            i = closing + 1
            if depth == 0:
                self.i = i
                return

    # -- numbers ---------------------------------------------------------
    def numbers_left(self) -> int:
        return self.n - self.i

    def tokens_left(self) -> int:
        return self.n - self.i

    def _exact(self, n: int) -> bool:
        """Are the next n tokens all numbers converted by ``parse_decimals``?"""
        return self.exact.find(0, self.i, self.i + n) < 0

    def number_block(self) -> np.ndarray | None:
        i = self.i
        close = self.kinds.find(b"}", i)
        if close < 0 or self.exact.find(0, i, close) >= 0:
            return None
        self.i = close + 1
        return self.values[i:close]

    def _chunk(self, n: int, what: str) -> list[str]:
        if n > self.n - self.i:
            raise self.error(f"{what}: expected {n} numbers, but only "
                             f"{self.n - self.i} tokens are left in the file")
        return self._tokens(self.i, n)

    def _bad_token(self, chunk: list[str], what: str, n: int, integer: bool):
        for k, t in enumerate(chunk):
            v = _parse_float(t)
            if v is None or (integer and not float(v).is_integer()):
                kind = "integer" if integer else "number"
                raise self.error(f"{what}: expected {n} {kind}s, found {k} "
                                 f"then {t[:40]!r}", self.i + k)
        return None

    def read_float(self, what: str) -> float:
        i = self.i
        if i < self.n and self.exact[i]:
            self.i = i + 1
            return float(self.values[i])
        return float(self.read_floats(1, what)[0])

    def read_int(self, what: str) -> int:
        i = self.i
        if i < self.n and self.exact[i]:
            value = self.values[i]
            if value.is_integer() and abs(value) < _INT_RANGE:
                self.i = i + 1
                return int(value)
        return int(self.read_ints(1, what)[0])

    def read_floats(self, n: int, what: str) -> np.ndarray:
        if n == 0:
            return np.zeros(0, dtype=np.float64)
        if n <= self.n - self.i and self._exact(n):
            i = self.i
            self.i = i + n
            return self.values[i:i + n].copy()
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

    def _exact_ints(self, n: int) -> np.ndarray | None:
        """The next n tokens as integers if they are converted, integral numbers."""
        if n > self.n - self.i or not self._exact(n):
            return None
        values = self.values[self.i:self.i + n]
        if n <= 16:  # (a face, a header: cheaper in Python)
            floats = values.tolist()
            ints = [int(v) for v in floats]  # (converted numbers are finite)
            if ints != floats or max(ints) >= _INT_RANGE or min(ints) <= -_INT_RANGE:
                return None
            arr = np.array(ints, dtype=np.int64)
        else:
            arr = self.check_integral(values)
            if arr is None:
                return None
        self.i += n
        return arr

    def read_ints(self, n: int, what: str) -> np.ndarray:
        if n == 0:
            return np.zeros(0, dtype=np.int64)
        arr = self._exact_ints(n)
        if arr is not None:
            return arr
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
        if self._exact(n):
            i = self.i
            self.i = i + n
            return self.values[i:i + n].copy()
        chunk = self._tokens(self.i, n)
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
        arr = self._exact_ints(n)
        if arr is not None:
            return arr
        chunk = self._tokens(self.i, n)
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
