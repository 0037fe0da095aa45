# SPDX-License-Identifier: GPL-3.0-or-later
"""What the parser needs from a token stream (text and binary implement it).

Token kinds: NAME, STRING, GUID, OPEN ``{``, CLOSE ``}``, NUM (numbers:
a text word that looks numeric, or a binary INTEGER / INTEGER_LIST /
FLOAT_LIST), OTHER (template-only tokens) and EOF. Separators ``;`` and ``,``
never reach the parser: every data member is read by count, which is what
makes inconsistent separators harmless.
"""
from __future__ import annotations

import numpy as np

from ..errors import FormatError

NAME, STRING, GUID, OPEN, CLOSE, NUM, OTHER, EOF = (
    "name", "string", "guid", "{", "}", "number", "other", "end of file")


def decode_name(raw: bytes) -> str:
    """Names and strings: UTF-8 when valid, else Windows-1252 / Latin-1."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        try:
            return raw.decode("cp1252")
        except UnicodeDecodeError:
            return raw.decode("latin-1")


class TokenStream:
    """Base class: error construction and helpers shared by both formats."""

    path = None
    #: Appended to messages whose position refers to decompressed data.
    where_note = ""

    # -- implemented by subclasses -------------------------------------
    def kind(self) -> str:  # pragma: no cover - interface
        raise NotImplementedError

    def here(self):  # pragma: no cover - interface
        """An opaque, cheap marker of the current position (for reset / errors)."""
        raise NotImplementedError

    def position(self, mark=None) -> dict:  # pragma: no cover - interface
        """FormatError keyword arguments (line= or offset=) of a marker."""
        raise NotImplementedError

    # -- shared ---------------------------------------------------------
    def error(self, message: str, at=None) -> FormatError:
        return FormatError(message + self.where_note, path=self.path, **self.position(at))

    def read_int(self, what: str) -> int:
        return int(self.read_ints(1, what)[0])

    def read_float(self, what: str) -> float:
        return float(self.read_floats(1, what)[0])

    def read_count(self, what: str, per_item: int = 1) -> int:
        """A DWORD count, checked against the numbers that could still follow."""
        pos = self.here()
        n = self.read_int(what)
        if n < 0:
            raise self.error(f"{what} {n} is negative", pos)
        if per_item and n * per_item > self.numbers_left():
            raise self.error(
                f"{what} {n} needs {n * per_item} numbers, but at most "
                f"{self.numbers_left()} are left", pos)
        return n

    def number_block(self) -> np.ndarray | None:
        """If only numbers (all of them plain, in text) lie between here and the
        next ``}``: consume them and the ``}`` and return them as float64 (do not
        modify); else None, nothing consumed. (For objects the parser then need
        not read token by token.)"""
        return None

    def expect(self, kind: str, what: str) -> None:
        k = self.kind()
        if k != kind:
            raise self.error(f"{what}: expected {kind!r}, found {self.describe()}")
        self.advance()

    @staticmethod
    def check_integral(values: np.ndarray) -> np.ndarray | None:
        if values.size and not np.all(np.abs(values) < 2.0 ** 62):  # also rejects NaN / inf
            return None
        as_int = values.astype(np.int64)
        if not np.array_equal(as_int, values):
            return None
        return as_int
