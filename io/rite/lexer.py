# SPDX-License-Identifier: GPL-3.0-or-later
"""Lines and tokens of a RiTE text file (shared by the RAM and RAA readers).

The file is kept as one ``bytes`` object and read through byte offsets: the
readers walk the few structural lines one at a time with :meth:`LineBuffer.line`
and hand the big numeric sections to :mod:`.records`, which parses them in
blocks straight from the buffer. No index of all lines is built; a line
number is carried along with each offset (and computed from the offset only
when an error needs it).

Lexical rules (the contract): tokens are separated by spaces or tabs (a
carriage return, vertical tab or form feed counts as blank too, so CRLF files
read as they are); a name is ``"..."`` and may contain spaces; a line whose
first token starts with ``#`` or ``//`` is a comment; keywords are
case-insensitive. A line whose first token starts with an ASCII letter is a
keyword line, any other non-blank, non-comment line is a record line.

Limits for hostile input (each violation is a :class:`FormatError` naming the
line; see the constants below):

* integers (ids, counts, shader ids, frames) must be below ``INT_LIMIT`` in
  magnitude (exactly representable in float64);
* floats must be finite and representable in float32 (``FLOAT_LIMIT``):
  Blender stores them as float32, where larger values become inf;
* names are at most ``MAX_NAME_LENGTH`` characters;
* frame counts and key frames are bounded by ``MAX_FRAMES`` (:mod:`.raa_reader`),
  joints and tracks by ``MAX_JOINTS`` and ``MAX_TRACKS``;
* a quaternion must be at least ``MIN_QUATERNION_LENGTH`` long to be normalised;
* a record count may not exceed what the rest of the file could hold (at least
  two bytes per field and record), so nothing is allocated from a count alone.
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

#: Ids and integer fields must be below this in magnitude (exact in float64).
INT_LIMIT = 2 ** 53
#: Largest accepted float magnitude: float32's largest finite value.
FLOAT_LIMIT = float(np.finfo(np.float32).max)
#: Longest accepted name (mesh, joint, weight joint and track names), in characters.
MAX_NAME_LENGTH = 1024
#: Frame counts are at most this, key frames below it.
MAX_FRAMES = 1_000_000
#: Most joints in a RAM, and most tracks in a RAA (each costs Python objects:
#: millions of tiny records would take minutes and gigabytes).
MAX_JOINTS = 100_000
MAX_TRACKS = 100_000
#: Shortest quaternion (Euclidean length) accepted for joint orientations,
#: joint rotations and key rotations; all-zero ones cannot be normalised.
MIN_QUATERNION_LENGTH = 1e-12
# INT_LIMIT has 16 digits: an integer with more significant digits is out of
# range. Checked before int(), which refuses (and is slow on) huge digit strings.
_MAX_INT_DIGITS = len(str(INT_LIMIT))


class Sink:
    """One file's warnings, each prefixed with the file name and line, into
    the warnings channel (``target``: a list, normally an
    :class:`..errors.Warnings`, which caps them; None: not collected)."""

    def __init__(self, target, where: str):
        self.target = target
        self.where = where

    def warn(self, line: int | None, message: str) -> None:
        if self.target is not None:
            self.target.append(f"{self.where}:{line}: {message}" if line is not None else f"{self.where}: {message}")


def where_name(path) -> str:
    return Path(path).name if path is not None else "<data>"


class LineBuffer:
    """A UTF-8-checked byte buffer, read line by line through byte offsets.

    A line is addressed by the offset of its first byte; the line after the
    last one starts at ``size + 1`` (so ``off <= size`` means "a line is
    left": a file ending in ``\\n`` has an empty last line, as editors count).
    """

    def __init__(self, data: bytes, path=None):
        self.path = str(path) if path is not None else None
        if data.startswith(b"\xef\xbb\xbf"):  # a UTF-8 byte order mark is not content
            data = b"   " + data[3:]
        self.data = data
        self.size = len(data)
        self._last_line = None
        if not data.isascii():
            try:
                data.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise self.error(self.line_of(exc.start), f"not UTF-8 text ({exc.reason})") from None

    # -- errors ---------------------------------------------------------
    def error(self, line: int | None, message: str) -> FormatError:
        """A FormatError for 1-based ``line``."""
        return FormatError(message, path=self.path, line=line)

    # -- lines ----------------------------------------------------------
    def line(self, off: int) -> tuple[str, int]:
        """The line starting at byte ``off`` (without its newline) and the next line's offset."""
        end = self.data.find(b"\n", off)
        if end < 0:
            end = self.size
        return self.data[off:end].decode("utf-8"), end + 1

    def line_of(self, off: int) -> int:
        """1-based number of the line holding byte ``off`` (counts newlines: for errors only)."""
        return self.data.count(b"\n", 0, off) + 1

    def last_line(self) -> int:
        """1-based number of the last line (for errors at end of file)."""
        if self._last_line is None:
            self._last_line = self.data.count(b"\n") + 1
        return self._last_line


def tokens(text: str) -> list[str] | None:
    """Tokens of a line, or None for a blank or comment line.

    Quoted names are returned with their quotes (``'"Hips"'``); an unterminated
    quote yields a token that starts but does not end with ``"``.
    """
    stripped = text.lstrip(BLANKS)
    if not stripped or stripped[0] == "#" or stripped.startswith("//"):
        return None
    return _TOKEN_RE.findall(stripped)


def line_tokens(src: LineBuffer, line: int, text: str) -> list[str] | None:
    """Tokens of ``text`` (line ``line``, 1-based); a quote left open is an error."""
    toks = tokens(text)
    if toks is not None:
        check_quotes(src, line, toks)
    return toks


def check_quotes(src: LineBuffer, line: int, toks: list[str]) -> None:
    for tok in toks:
        if tok[0] == '"' and (len(tok) < 2 or tok[-1] != '"'):
            raise src.error(line, f"unterminated quoted name {_show(tok)}")


def is_keyword(tok: str) -> bool:
    c = tok[0]
    return ("a" <= c <= "z") or ("A" <= c <= "Z")


def parse_int(src: LineBuffer, line: int, tok: str, what: str) -> int:
    """An integer written ``[+-]?[0-9]+`` whose magnitude is below ``INT_LIMIT``."""
    if not _INT_RE.match(tok):
        raise src.error(line, f"{what}: expected an integer, found {_show(tok)}")
    value = _int_value(tok)
    if value is None or not -INT_LIMIT < value < INT_LIMIT:
        raise src.error(line, f"{what}: integer {_show(tok) if value is None else value} is out of range")
    return value


def _int_value(tok: str) -> int | None:
    """``int(tok)`` for a token matching ``[+-]?[0-9]+``; None when it has more than 16 significant digits."""
    if len(tok) > _MAX_INT_DIGITS + 1 and len(tok.lstrip("+-").lstrip("0")) > _MAX_INT_DIGITS:
        return None
    return int(tok)


def parse_id(src: LineBuffer, line: int, tok: str, what: str) -> int:
    """A non-negative id (ids are 0 .. 2**53-1)."""
    value = parse_int(src, line, tok, what)
    if value < 0:
        raise src.error(line, f"{what}: ids must not be negative, found {value}")
    return value


def parse_count(src: LineBuffer, line: int, tok: str, what: str) -> int:
    if not _INT_RE.match(tok):
        raise src.error(line, f"{what}: expected an integer, found {_show(tok)}")
    value = _int_value(tok)
    if tok[0] == "-" and (value is None or value < 0):
        raise src.error(line, f"{what}: count must not be negative, found {_show(tok) if value is None else value}")
    return INT_LIMIT if value is None else value     # huge: refused by the caller's bound


def parse_float(src: LineBuffer, line: int, tok: str, what: str) -> float:
    """A finite number of float32 range, in any form Python's ``float()`` reads (but nan/inf)."""
    value = float_or_none(tok)
    if value is not None:
        return value
    low = tok.lower()
    if "nan" in low or "inf" in low:
        raise src.error(line, f"{what}: nan and inf are not allowed, found {_show(tok)}")
    if tok.startswith('"'):
        raise src.error(line, f"{what}: expected a number, found {_show(tok)}")
    try:
        float(tok)
    except ValueError:
        raise src.error(line, f"{what}: expected a number, found {_show(tok)}") from None
    raise src.error(line, f"{what}: number out of range (beyond float32's "
                          f"{FLOAT_LIMIT:.7g}): {_show(tok)}")


def float_or_none(tok: str) -> float | None:
    """``float(tok)`` when it is a valid field value (finite, float32 range, no nan/inf), else None."""
    low = tok.lower()
    if "n" in low and ("nan" in low or "inf" in low):
        return None
    try:
        value = float(tok)
    except ValueError:
        return None
    if not math.isfinite(value) or abs(value) > FLOAT_LIMIT:
        return None
    return value


def parse_name(src: LineBuffer, line: int, tok: str, what: str) -> str:
    if not tok.startswith('"'):
        raise src.error(line, f"{what}: expected a quoted name, found {_show(tok)}")
    if len(tok) < 2 or not tok.endswith('"'):
        raise src.error(line, f"{what}: unterminated quoted name {_show(tok)}")
    if len(tok) - 2 > MAX_NAME_LENGTH:
        raise src.error(line, f"{what}: name of {len(tok) - 2} characters {_show(tok)} is longer "
                              f"than the limit of {MAX_NAME_LENGTH}")
    return tok[1:-1]


def check_quaternion(src: LineBuffer, line: int, q, what: str) -> float:
    """Length of the quaternion ``q`` (4 floats); too short to normalise is an error."""
    length = math.sqrt(sum(float(x) * float(x) for x in q))
    if not length >= MIN_QUATERNION_LENGTH:
        raise src.error(line, f"{what}: quaternion of length {length:.3g} cannot be normalised "
                              f"(all zero or shorter than {MIN_QUATERNION_LENGTH:g})")
    return length


def check_count_fits(src: LineBuffer, line: int, off: int, count: int, min_bytes: int, what: str) -> None:
    """Refuse a declared ``count`` of records that the rest of the file could not hold.

    ``off`` is where the first record line starts, ``min_bytes`` the fewest
    bytes one record (with its newline) can take. Raised at the count's
    ``line``, before anything is allocated from it.
    """
    if count <= 0:
        return
    room = max(0, src.size - off + 1)          # + 1: the last line needs no newline
    cap = room // min_bytes
    if count > cap:
        raise src.error(line, f"{what}: expected {count} records, but the rest of the file "
                              f"({room - 1 if room else 0} bytes) can hold at most {cap}")


def _show(tok: str) -> str:
    if len(tok) > 40:
        tok = tok[:37] + "..."
    return repr(tok)
