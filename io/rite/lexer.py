# SPDX-License-Identifier: GPL-3.0-or-later
"""Lines and tokens of a RiTE text file (shared by the RAM and RAA readers).

The file is kept as bytes with an index of its line starts, so the big numeric
sections can be handed to numpy as one slice (see :mod:`.records`) while the
few structural lines are tokenised one by one here.

Lexical rules (the contract): tokens are separated by spaces or tabs (a
carriage return, vertical tab or form feed counts as blank too, so CRLF files
read as they are); a name is ``"..."`` and may contain spaces; a line whose
first token starts with ``#`` or ``//`` is a comment; keywords are
case-insensitive. A line whose first token starts with an ASCII letter is a
keyword line, any other non-blank, non-comment line is a record line.
"""
from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np

from ..errors import FormatError

BLANKS = " \t\r\x0b\x0c"
_TOKEN_RE = re.compile(r'"[^"]*"?|[^ \t\r\x0b\x0c"]+')
_INT_RE = re.compile(r"[+-]?[0-9]+\Z")
# Ids and integer fields must be exactly representable in float64 (the fast
# numeric path parses through float64).
INT_LIMIT = 2 ** 53


class Sink:
    """Collects warning strings into a list (or an ``errors.Warnings``)."""

    def __init__(self, target, where: str):
        self.target = target
        self.where = where

    def warn(self, line: int | None, message: str) -> None:
        if self.target is None:
            return
        text = f"{self.where}:{line}: {message}" if line is not None else f"{self.where}: {message}"
        if hasattr(self.target, "append"):
            self.target.append(text)
        else:
            self.target.add(text)


def where_name(path) -> str:
    return Path(path).name if path is not None else "<data>"


class Source:
    """A decoded-checked byte buffer with a line index (lines are 0-based here)."""

    def __init__(self, data: bytes, path=None):
        self.path = str(path) if path is not None else None
        if data.startswith(b"\xef\xbb\xbf"):  # a UTF-8 byte order mark is not content
            data = b"   " + data[3:]
        self.data = data
        nl = _newlines(data)
        self.starts = np.empty(len(nl) + 1, dtype=np.int64)
        self.starts[0] = 0
        self.starts[1:] = nl + 1
        self.ends = np.empty(len(nl) + 1, dtype=np.int64)
        self.ends[:-1] = nl
        self.ends[-1] = len(data)
        self.count = len(self.starts)
        if not data.isascii():
            try:
                data.decode("utf-8")
            except UnicodeDecodeError as exc:
                line = int(np.searchsorted(nl, exc.start, side="left")) + 1
                raise self.error(line, f"not UTF-8 text ({exc.reason})") from None

    # -- errors ---------------------------------------------------------
    def error(self, line: int | None, message: str) -> FormatError:
        """A FormatError for 1-based ``line``."""
        return FormatError(message, path=self.path, line=line)

    # -- lines ----------------------------------------------------------
    def text(self, i: int) -> str:
        """Line ``i`` (0-based) as text, without its newline."""
        return self.data[int(self.starts[i]):int(self.ends[i])].decode("utf-8")

    def block(self, i: int, j: int) -> list[str]:
        """Lines ``i .. j-1`` as a list of strings."""
        if j <= i:
            return []
        return self.data[int(self.starts[i]):int(self.ends[j - 1])].decode("utf-8").split("\n")

    def last_line(self) -> int:
        """1-based number of the last line (for errors at end of file)."""
        return self.count


def _newlines(data: bytes) -> np.ndarray:
    """Offsets of every ``\\n`` (scanned in slices to keep temporaries small)."""
    raw = np.frombuffer(data, dtype=np.uint8)
    step = 1 << 22
    if len(raw) <= step:
        return np.flatnonzero(raw == 10)
    found = [np.flatnonzero(raw[a:a + step] == 10) + a for a in range(0, len(raw), step)]
    return np.concatenate(found)


def tokens(text: str) -> list[str] | None:
    """Tokens of a line, or None for a blank or comment line.

    Quoted names are returned with their quotes (``'"Hips"'``); an unterminated
    quote yields a token that starts but does not end with ``"``.
    """
    stripped = text.lstrip(BLANKS)
    if not stripped or stripped[0] == "#" or stripped.startswith("//"):
        return None
    return _TOKEN_RE.findall(stripped)


def line_tokens(src: "Source", i: int) -> list[str] | None:
    """Tokens of line ``i`` (0-based); a quote left open is an error."""
    toks = tokens(src.text(i))
    if toks is not None:
        check_quotes(src, i + 1, toks)
    return toks


def check_quotes(src: "Source", line: int, toks: list[str]) -> None:
    for tok in toks:
        if tok[0] == '"' and (len(tok) < 2 or tok[-1] != '"'):
            raise src.error(line, f"unterminated quoted name {_show(tok)}")


def is_keyword(tok: str) -> bool:
    c = tok[0]
    return ("a" <= c <= "z") or ("A" <= c <= "Z")


def parse_int(src: Source, line: int, tok: str, what: str) -> int:
    if not _INT_RE.match(tok):
        raise src.error(line, f"{what}: expected an integer, found {_show(tok)}")
    return int(tok)


def parse_id(src: Source, line: int, tok: str, what: str) -> int:
    """A non-negative id (ids are 0 .. 2**53-1)."""
    value = parse_int(src, line, tok, what)
    if value < 0:
        raise src.error(line, f"{what}: ids must not be negative, found {value}")
    if value >= INT_LIMIT:
        raise src.error(line, f"{what}: id {value} is out of range")
    return value


def parse_count(src: Source, line: int, tok: str, what: str) -> int:
    value = parse_int(src, line, tok, what)
    if value < 0:
        raise src.error(line, f"{what}: count must not be negative, found {value}")
    return value


def parse_float(src: Source, line: int, tok: str, what: str) -> float:
    low = tok.lower()
    if "nan" in low or "inf" in low:
        raise src.error(line, f"{what}: nan and inf are not allowed, found {_show(tok)}")
    if tok.startswith('"'):
        raise src.error(line, f"{what}: expected a number, found {_show(tok)}")
    try:
        value = float(tok)
    except ValueError:
        raise src.error(line, f"{what}: expected a number, found {_show(tok)}") from None
    if not math.isfinite(value):
        raise src.error(line, f"{what}: number out of range: {_show(tok)}")
    return value


def parse_name(src: Source, line: int, tok: str, what: str) -> str:
    if not tok.startswith('"'):
        raise src.error(line, f"{what}: expected a quoted name, found {_show(tok)}")
    if len(tok) < 2 or not tok.endswith('"'):
        raise src.error(line, f"{what}: unterminated quoted name {_show(tok)}")
    return tok[1:-1]


def _show(tok: str) -> str:
    if len(tok) > 40:
        tok = tok[:37] + "..."
    return repr(tok)
