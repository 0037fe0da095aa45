# SPDX-License-Identifier: GPL-3.0-or-later
"""Counted sections of one-line records (vertices, triangles, weights, keys).

A section is a header line with a count followed by that many record lines.
Two readers produce the same result:

* a vectorised one for the usual, tidy case. The section is cut into blocks
  of whole lines (about ``_BLOCK_BYTES`` each), each parsed with numpy: one
  scan finds the blanks (token boundaries, line ends) and quotes, the tokens
  are checked to sit ``k`` to a line, and their numbers are converted by
  :func:`..numparse.parse_decimals` (``float()``'s result bit for bit; the
  few tokens it leaves, such as ``1_0``, with ``float()`` itself). Anything
  structurally unusual in a block (comments, blank lines, keywords, odd
  quotes, a bad number, a value out of range) hands that block and the rest
  of the section to the second reader;
* a line-by-line one that handles everything the grammar allows and produces
  the precise error (with the line) for anything it does not.

Line numbers are not stored per record on the vectorised path: a tidy block
has one record per line, so record ``r`` is on line ``first_line + r``.
Neither path allocates from the declared count alone (the readers first check
that the rest of the file could hold it, see ``lexer.check_count_fits``, and the
result arrays hold the records actually read).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..numparse import CODES, PAD, parse_decimals
from .lexer import (
    FLOAT_LIMIT,
    MAX_NAME_LENGTH,
    LineBuffer,
    Sink,
    check_quotes,
    float_or_none,
    is_keyword,
    parse_float,
    parse_id,
    parse_int,
    parse_name,
    tokens,
)


@dataclass(frozen=True)
class RecordSpec:
    """Layout of one record line.

    ``kinds``: one letter per field: 'i' an id (0 .. 2**53-1), 'd' any integer,
    'f' a finite float, 'n' a quoted name. Integers come first.
    ``layout`` is the human-readable layout for messages (``"ID X Y Z"``).
    """

    section: str
    kinds: str
    layout: str

    @property
    def min_bytes(self) -> int:
        """Fewest bytes one record line can take: a character and a blank per field (a name: two)."""
        return 2 * len(self.kinds) + self.kinds.count("n")


@dataclass
class Records:
    """Parsed records of one section, in file order.

    ``ints`` holds the integer fields (``kinds`` 'i' and 'd'), one row per
    field (read them with :meth:`col` and :meth:`cols`), ``floats`` the 'f'
    fields, one row per record. A name field (one at most) is kept as byte
    spans into ``data`` (the file): use :meth:`name` and :meth:`names_differ`.
    ``end_line``/``end_off`` address the first line after the section.
    """

    ints: np.ndarray                  # (integer fields, n)
    floats: np.ndarray                # (n, float fields)
    end_line: int
    end_off: int
    first_line: int = 1               # record r is on line first_line + r ...
    line_numbers: np.ndarray | None = None   # ... unless this is given
    data: bytes = b""
    name_start: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    name_len: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    def __len__(self) -> int:
        return len(self.floats)

    def col(self, j: int) -> np.ndarray:
        """Integer field j of every record."""
        return self.ints[j].copy()

    def cols(self, a: int, b: int) -> np.ndarray:
        """Integer fields a..b-1 as an (n, b - a) array."""
        return np.ascontiguousarray(self.ints[a:b].T)

    def line(self, r: int) -> int:
        if self.line_numbers is None:
            return int(self.first_line + r)
        return int(self.line_numbers[r])

    def name(self, r: int) -> str:
        a = int(self.name_start[r])
        return self.data[a:a + int(self.name_len[r])].decode("utf-8")

    def names_differ(self, group: np.ndarray, expected: list) -> np.ndarray:
        """Boolean per record: is its name not ``expected[group[record]]``?"""
        if not len(expected):
            return np.ones(len(self), dtype=bool)
        return _spans_differ(np.frombuffer(self.data, dtype=np.uint8), self.name_start, self.name_len,
                             group, expected)


def _spans_differ(data: np.ndarray, start: np.ndarray, length: np.ndarray, group: np.ndarray,
                  expected: list) -> np.ndarray:
    """Compare names given as byte spans of ``data`` with ``expected[group]``,
    eight bytes at a time (the 64-bit words that start at every byte of ``data``)."""
    want = [e.encode("utf-8") for e in expected]
    want_len = np.array([len(b) for b in want], dtype=np.int64)
    n_words = max(1, (int(want_len.max()) + 7) // 8)
    table = np.frombuffer(b"".join(b.ljust(8 * n_words, b"\0") for b in want), dtype="<u8")
    table = table.reshape(len(want), n_words)
    size = len(data)
    words = np.ndarray((max(size - 7, 0),), dtype="<u8", buffer=data, strides=(1,))
    differ = length != want_len[group]
    step = 1 << 16
    for a in range(0, len(start), step):
        s, n, g = start[a:a + step], length[a:a + step], group[a:a + step]
        for j in range(n_words):
            w = words[np.minimum(s + 8 * j, size - 8)]        # (clipped in the last 8 bytes: see below)
            w &= _FIRST_BYTES[np.clip(n - 8 * j, 0, 8)]
            differ[a:a + step] |= w != table[g, j]
    for r in np.flatnonzero(start + length > size - 8).tolist():    # names in the data's last 8 bytes
        differ[r] = data[start[r]:start[r] + length[r]].tobytes() != want[int(group[r])]
    return differ


# _FIRST_BYTES[n]: the first n characters of a word
_FIRST_BYTES = np.array([(1 << (8 * n)) - 1 for n in range(9)], dtype=np.uint64)


# -- reading a section ------------------------------------------------------------

_BLOCK_BYTES = 1 << 20     # bytes per vectorised block (whole lines)
_FAST_MIN_RECORDS = 48     # below this the line-by-line reader is cheaper


def read_records(src: LineBuffer, line: int, off: int, count: int | None, spec: RecordSpec,
                 sink: Sink, keywords: frozenset) -> Records:
    """Read the records starting at line ``line`` (1-based), byte ``off``.

    With ``count`` None the section runs to the next known keyword or the end
    of the file; otherwise exactly ``count`` records must follow.
    """
    layout = _layout(spec)
    first_line = line
    parts: list[_Part] = []
    done = 0
    if count is not None and count >= _FAST_MIN_RECORDS and layout is not None:
        for a, b in _ranges(src.data, off):
            part = _block(src.data, a, b, layout, count - done)
            if part is None:
                break
            parts.append(part)
            done += part.m
            line += part.m
            off = part.end
            if done == count:
                break
    line_numbers = None
    if count is None or done < count:
        rest, line, off = _slow(src, line, off, count, done, spec, sink, keywords)
        if rest.m:
            line_numbers = np.concatenate([np.arange(first_line, first_line + done, dtype=np.int64),
                                           rest.lines])
            parts.append(rest)
    n_int = sum(k in "id" for k in spec.kinds)
    return Records(ints=_joined([p.ints for p in parts], (n_int, 0), np.int64, axis=1),
                   floats=_joined([p.floats for p in parts], (0, spec.kinds.count("f")), np.float64),
                   end_line=line, end_off=off, first_line=first_line, line_numbers=line_numbers,
                   data=src.data, name_start=_joined([p.name_start for p in parts], (0,), np.int64),
                   name_len=_joined([p.name_len for p in parts], (0,), np.int64))


def _ranges(data: bytes, off: int):
    """Byte ranges of whole lines, about ``_BLOCK_BYTES`` each, from ``off`` to the end of ``data``."""
    size = len(data)
    while off < size:
        end = min(off + _BLOCK_BYTES, size)
        if end < size:
            j = data.rfind(b"\n", off, end)
            if j < 0:                          # a line longer than a block
                j = data.find(b"\n", end)
            end = size if j < 0 else j + 1
        yield off, end
        off = end


def _joined(arrays: list, empty: tuple, dtype, axis: int = 0) -> np.ndarray:
    """``arrays`` joined along ``axis`` into one C-contiguous array (of shape ``empty`` for none)."""
    if not arrays:
        return np.zeros(empty, dtype=dtype)
    return np.ascontiguousarray(np.concatenate(arrays, axis=axis), dtype=dtype)


# -- vectorised path ------------------------------------------------------------

@dataclass
class _Layout:
    n_int: int
    n_float: int
    named: bool
    nonneg: np.ndarray    # per integer column: must be >= 0 ('i')


@dataclass
class _Part:
    """Records of a block (or of the line-by-line rest)."""

    m: int                # records
    end: int              # offset after them
    ints: np.ndarray      # (n_int, m)
    floats: np.ndarray    # (m, n_float)
    name_start: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    name_len: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    lines: np.ndarray | None = None       # (the rest's: line of each record)


def _layout(spec: RecordSpec) -> _Layout | None:
    kinds = spec.kinds
    n_int = len(kinds) - len(kinds.lstrip("id"))
    rest = kinds[n_int:]
    named = rest.startswith("n")
    if named:
        rest = rest[1:]
    if rest.strip("f") or (named and len(rest) != 1) or not n_int:
        return None
    return _Layout(n_int, len(rest), named, np.array([k == "i" for k in kinds[:n_int]]))


# A block is read as numparse's codes, with the bytes the block structure is
# made of given their own: blanks, newlines, control characters, quotes.
_BLANK, _NEWLINE, _CONTROL, _QUOTE = 0xFE, 0xFF, 0xFD, 0xFC
_SEPARATOR = _CONTROL                 # codes from here on separate tokens
_BLOCK_CODES = bytearray(CODES)
for _c in range(32):
    _BLOCK_CODES[_c] = _CONTROL
for _c in b" \t\r\x0b\x0c":
    _BLOCK_CODES[_c] = _BLANK
_BLOCK_CODES[10], _BLOCK_CODES[34] = _NEWLINE, _QUOTE
_BLOCK_CODES = bytes(_BLOCK_CODES)


def _block(data: bytes, off: int, end: int, lay: _Layout, need: int) -> _Part | None:
    """The records on the whole lines of ``data[off:end]`` (at most ``need``), or None if any is unusual."""
    n = end - off
    # the block's codes with a blank before them and a newline after them, padded with
    # digits (the pads hold no separators, and the number parser reads beyond its tokens)
    buf = np.zeros(n + 2 * PAD, dtype=np.uint8)
    buf[PAD - 1] = _BLANK
    buf[PAD:PAD + n] = np.frombuffer(data[off:end].translate(_BLOCK_CODES), dtype=np.uint8)
    if buf[PAD + n - 1] != _NEWLINE:
        buf[PAD + n] = _NEWLINE               # the file's last line has no newline
    sep = np.flatnonzero(buf >= _SEPARATOR)
    sep_ch = buf[sep]
    if sep_ch.min() == _CONTROL:
        return None                           # control characters
    newline = sep_ch == _NEWLINE
    nl_at = sep[newline]
    m = len(nl_at)
    if m > need:                              # the section ends inside this block
        cut = int(nl_at[need - 1])
        k = int(np.searchsorted(sep, cut, side="right"))
        sep, newline = sep[:k], newline[:k]
        nl_at = nl_at[:need]
        m = need
        end = off + cut - PAD + 1
    else:
        cut = len(buf)
    d = np.diff(sep)
    if (d > 1).all():                         # single blanks only: a token between any two
        gaps = None
        t_start = sep[:-1] + 1
        t_end = sep[1:]
    else:
        gaps = np.flatnonzero(d > 1)
        t_start = sep[gaps] + 1
        t_end = sep[gaps + 1]
    n_int, n_float = lay.n_int, lay.n_float
    if lay.named:
        if gaps is None:
            # token i lies between separators i and i + 1: a line's tokens run
            # from the one after the previous newline to the one before its own
            nl_idx = np.flatnonzero(newline)
            firsts = np.empty(m, dtype=np.int64)
            firsts[:1] = 0
            firsts[1:] = nl_idx[:-1]
            lasts = nl_idx - 1
        else:
            rows = np.arange(m)
            t_line = np.cumsum(newline)[gaps]     # 0-based line of each token
            firsts = np.flatnonzero(np.diff(t_line, prepend=-1))
            if len(firsts) != m or not np.array_equal(t_line[firsts], rows):
                return None                       # a blank line
            lasts = np.empty(m, dtype=np.int64)
            lasts[:-1] = firsts[1:] - 1
            lasts[-1] = len(t_start) - 1
        opens = firsts + n_int
        closes = lasts - 1
        if (closes < opens).any():
            return None
        o_at, c_at = t_start[opens], t_end[closes] - 1
        if not ((buf[o_at] == _QUOTE) & (buf[c_at] == _QUOTE) & (c_at > o_at)).all():
            return None
        if np.count_nonzero(buf[:cut] == _QUOTE) != 2 * m:
            return None                       # a quote inside a name, or elsewhere
        name_len = c_at - o_at - 1
        if name_len.max() > MAX_NAME_LENGTH:
            return None                       # the line-by-line reader measures in characters
        int_tok = (firsts[None, :] + np.arange(n_int)[:, None]).ravel()
        int_s, int_e = t_start[int_tok], t_end[int_tok]
        float_s, float_e = t_start[lasts], t_end[lasts]
    else:
        # k tokens per line: with the tokens in order, it suffices that each group of k
        # starts after the previous line's newline and ends at or before its own
        k = n_int + n_float
        if len(t_start) != m * k:
            return None
        if not ((t_start[k::k] > nl_at[:-1]).all() and (t_end[k - 1::k] <= nl_at).all()):
            return None
        grid_s, grid_e = t_start.reshape(m, k), t_end.reshape(m, k)
        int_s, int_e = grid_s[:, :n_int].T.ravel(), grid_e[:, :n_int].T.ravel()    # column by column
        float_s, float_e = grid_s[:, n_int:].ravel(), grid_e[:, n_int:].ravel()     # file order
    ints = _ints(buf, int_s, int_e, lay.nonneg, m)
    if ints is None:
        return None
    part = _Part(m=m, end=end, ints=ints, floats=np.zeros((m, 0)))
    if n_float:
        floats = _floats(buf, float_s, float_e, data, off - PAD)
        if floats is None:
            return None
        part.floats = floats.reshape(m, n_float)
    if lay.named:
        part.name_start = o_at + (off - PAD + 1)
        part.name_len = name_len
    return part


def _ints(buf, s, e, nonneg, m) -> np.ndarray | None:
    """Integer tokens (column after column) -> (n_int, m) int64, or None if one is not
    ``[+-]digits`` below 2**53 or an id is negative."""
    values, done = parse_decimals(buf, s, e, integers=True)
    if not done.all():
        return None
    cols = values.reshape(-1, m)
    if len(values) and values.min() < 0 and (cols[nonneg] < 0).any():
        return None                           # negative id: the line-by-line reader says so
    return cols


def _floats(buf, s, e, data: bytes, shift: int) -> np.ndarray | None:
    """Number tokens -> float64 (Python's ``float()`` bit for bit), or None if one is
    not a finite number of float32's range. (``data[shift + i]`` is the text of ``buf[i]``.)"""
    values, done = parse_decimals(buf, s, e)
    for k in np.flatnonzero(~done).tolist():      # spellings parse_decimals leaves to float()
        value = float_or_none(data[shift + s[k]:shift + e[k]].decode("utf-8"))
        if value is None:
            return None
        values[k] = value
    if not (np.abs(values) <= FLOAT_LIMIT).all():
        return None
    return values


# -- line-by-line path ------------------------------------------------------------

_CHUNK_BYTES = 1 << 16


def _slow(src: LineBuffer, line: int, off: int, count: int | None, done: int, spec: RecordSpec,
          sink: Sink, keywords: frozenset) -> tuple[_Part, int, int]:
    """(records, next line, its offset) from line ``line`` / byte ``off``; ``done``
    records of ``count`` were read before."""
    kinds = spec.kinds
    nfields = len(kinds)
    what = f"{spec.section} record"
    ints: list = []
    floats: list = []
    name_start: list = []
    name_len: list = []
    lines: list = []
    n_found = done
    data, size = src.data, src.size
    finished = False
    chunk = 256                               # grows: short sections must not split far ahead
    while not finished:
        if count is not None and n_found == count:
            break
        if off > size:
            if count is not None:
                raise src.error(src.last_line(),
                                f"{spec.section}: expected {count} records, found {n_found} at end of file")
            break
        stop = data.find(b"\n", min(off + chunk, size))
        chunk = min(2 * chunk, _CHUNK_BYTES)
        stop = size if stop < 0 else stop
        for raw in data[off:stop].split(b"\n"):
            text = raw.decode("utf-8")
            toks = tokens(text)
            if toks is not None:
                if is_keyword(toks[0]):
                    check_quotes(src, line, toks)
                    if toks[0].lower() in keywords:
                        if count is not None:
                            raise src.error(line, f"{spec.section}: expected {count} records, "
                                                  f"found {n_found} before line {line}")
                        finished = True
                        break
                    sink.warn(line, f"unknown keyword {toks[0]!r}: line ignored")
                else:
                    check_quotes(src, line, toks)
                    if len(toks) != nfields:
                        raise src.error(line, f"{what}: expected {nfields} fields ({spec.layout}), "
                                              f"found {len(toks)}")
                    row_i = []
                    row_f = []
                    for kind, tok in zip(kinds, toks):
                        if kind == "i":
                            row_i.append(parse_id(src, line, tok, what))
                        elif kind == "d":
                            row_i.append(parse_int(src, line, tok, what))
                        elif kind == "f":
                            row_f.append(parse_float(src, line, tok, what))
                        else:     # (the integers before it hold no quote: its own is the first)
                            name_len.append(len(parse_name(src, line, tok, what).encode("utf-8")))
                            name_start.append(off + raw.index(b'"') + 1)
                    ints.append(row_i)
                    floats.append(row_f)
                    lines.append(line)
                    n_found += 1
            line += 1
            off += len(raw) + 1
            if count is not None and n_found == count:
                finished = True
                break
    n = n_found - done
    n_int = sum(k in "id" for k in kinds)
    part = _Part(m=n, end=off, ints=np.array(ints, dtype=np.int64).reshape(n, n_int).T,
                 floats=np.array(floats, dtype=np.float64).reshape(n, kinds.count("f")),
                 name_start=np.array(name_start, dtype=np.int64), name_len=np.array(name_len, dtype=np.int64),
                 lines=np.array(lines, dtype=np.int64))
    return part, line, off
