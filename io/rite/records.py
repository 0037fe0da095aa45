# SPDX-License-Identifier: GPL-3.0-or-later
"""Counted sections of one-line records (vertices, triangles, weights, keys).

A section is a header line with a count followed by that many record lines.
Two readers produce the same result:

* a vectorised one for the usual, tidy case: the section's lines are sliced out
  of the file as one ``bytes`` object and parsed by ``numpy.fromstring`` with a
  sentinel appended to every line, so that the per-line field count is verified
  by a reshape instead of a Python loop. Names (``"..."``) are split out in bulk.
  Leading integer fields are additionally checked byte-wise to be written as
  plain decimal integers. Anything unusual (comments, blank lines, unknown
  keywords, odd spacing, bad numbers, a wrong count) makes it give up;
* a line-by-line one that handles everything the grammar allows and produces
  the precise error (with the line) for anything it does not.

Neither allocates from the declared count: the fast path only runs when the
count is not larger than the lines left, the slow one grows lists as it reads.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from .lexer import INT_LIMIT, Sink, Source, is_keyword, parse_float, parse_id, parse_int, parse_name, tokens

_INT_SENTINEL = np.iinfo(np.int64).max
_INT_SENTINEL_TEXT = b" %d" % _INT_SENTINEL
_POW10 = 10 ** np.arange(1, 17, dtype=np.int64)
_SEPARATORS = np.array([9, 11, 12, 13, 32], dtype=np.uint8)


@dataclass
class Records:
    """Parsed records of one section, in file order.

    ``ints`` holds the integer fields (``kinds`` 'i' and 'd'), ``floats`` the
    'f' fields, ``name_codes`` indexes ``names`` (one name field at most).
    ``end`` is the 0-based index of the first line after the section.
    """

    ints: np.ndarray
    floats: np.ndarray
    names: list
    name_codes: np.ndarray | None
    end: int
    first_line: int | None = None     # record r is on 1-based line first_line + r
    line_numbers: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.ints)

    def line(self, r: int) -> int:
        if self.line_numbers is None:
            return int(self.first_line + r)
        return int(self.line_numbers[r])


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


def read_records(src: Source, start: int, count: int | None, spec: RecordSpec,
                 sink: Sink, keywords: frozenset) -> Records:
    """Read the records after a header line; ``start`` is the first line (0-based).

    With ``count`` None the section runs to the next known keyword or the end
    of the file; otherwise exactly ``count`` records must follow.
    """
    if count is not None and 0 < count <= src.count - start:
        fast = _fast(src, start, count, spec)
        if fast is not None:
            return fast
    return _slow(src, start, count, spec, sink, keywords)


# -- vectorised path ------------------------------------------------------------

def _fromstring(data: bytes, dtype):
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        try:
            return np.fromstring(data, dtype=dtype, sep=" ")
        except (DeprecationWarning, ValueError):
            return None


def _fast(src: Source, start: int, n: int, spec: RecordSpec) -> Records | None:
    kinds = spec.kinds
    n_int = len(kinds) - len(kinds.lstrip("id"))
    has_name = "n" in kinds
    s = int(src.starts[start])
    e = int(src.ends[start + n - 1])
    chunk = src.data[s:e]
    raw_names = None
    if has_name:
        q = kinds.index("n")
        if q != n_int or kinds.count("n") != 1:
            return None
        parts = chunk.split(b'"')
        if len(parts) != 2 * n + 1:
            return None
        raw_names = parts[1::2]
        numeric = b" inf ".join(parts[0::2])
        del parts
    else:
        numeric = chunk
    width = len(kinds) + 1
    if n_int == len(kinds):
        stream = numeric.replace(b"\n", _INT_SENTINEL_TEXT + b"\n") + _INT_SENTINEL_TEXT
        del numeric
        arr = _fromstring(stream, np.int64)
        del stream
        if arr is None or arr.size != n * width:
            return None
        arr = arr.reshape(n, width)
        if not (arr[:, -1] == _INT_SENTINEL).all():
            return None
        ints = arr[:, :-1]
        if ((ints >= INT_LIMIT) | (ints <= -INT_LIMIT)).any():
            return None
        ints = np.ascontiguousarray(ints)
        floats = np.zeros((n, 0), dtype=np.float64)
    else:
        stream = numeric.replace(b"\n", b" nan\n") + b" nan"
        del numeric
        arr = _fromstring(stream, np.float64)
        del stream
        if arr is None or arr.size != n * width:
            return None
        arr = arr.reshape(n, width)
        if not np.isnan(arr[:, -1]).all():
            return None
        if has_name:
            if not np.isposinf(arr[:, n_int]).all():
                return None
            numbers = np.delete(arr[:, :-1], n_int, axis=1)
        else:
            numbers = arr[:, :-1]
        if not np.isfinite(numbers).all():
            return None
        ivals = numbers[:, :n_int]
        if ((ivals != np.floor(ivals)) | (np.abs(ivals) >= INT_LIMIT)).any():
            return None
        ints = ivals.astype(np.int64)
        floats = np.ascontiguousarray(numbers[:, n_int:])
        if n_int and not _plain_integers(chunk, src.starts[start:start + n] - s, ints):
            return None
    for j, kind in enumerate(kinds[:n_int]):
        if kind == "i" and (ints[:, j] < 0).any():
            return None  # the slow path names the line
    names: list = []
    codes = None
    if has_name:
        unique = list(dict.fromkeys(raw_names))
        index = {b: k for k, b in enumerate(unique)}
        codes = np.fromiter(map(index.__getitem__, raw_names), dtype=np.int64, count=n)
        names = [b.decode("utf-8") for b in unique]
    return Records(ints=ints, floats=floats, names=names, name_codes=codes,
                   end=start + n, first_line=start + 1)


def _plain_integers(chunk: bytes, line_starts: np.ndarray, ints: np.ndarray) -> bool:
    """True when each line starts with the integers ``ints`` written plainly.

    That is ``-?[0-9]+`` with no sign, leading zero, decimal point or exponent
    (which the float parser would have accepted), one separator between them.
    """
    raw = np.frombuffer(chunk, dtype=np.uint8)
    size = len(raw)
    pos = line_starts.astype(np.int64)
    for j in range(ints.shape[1]):
        v = ints[:, j]
        neg = v < 0
        mag = np.abs(v)
        ndig = np.searchsorted(_POW10, mag, side="right") + 1
        if neg.any():
            if not (raw[pos[neg]] == 45).all():
                return False
        first = pos + neg
        for d in range(int(ndig.max())):
            sel = ndig > d
            at = first[sel] + d
            if at.size and at.max() >= size:
                return False
            c = raw[at]
            if not ((c >= 48) & (c <= 57)).all():
                return False
        after = first + ndig
        if after.max() >= size:
            return False
        if not np.isin(raw[after], _SEPARATORS).all():
            return False
        pos = after + 1
    return True


# -- line-by-line path ------------------------------------------------------------

def _slow(src: Source, start: int, count: int | None, spec: RecordSpec,
          sink: Sink, keywords: frozenset) -> Records:
    kinds = spec.kinds
    nfields = len(kinds)
    what = f"{spec.section} record"
    ints: list = []
    floats: list = []
    names: dict = {}
    codes: list = []
    lines: list = []
    n_found = 0
    i = start
    step = 64
    done = False
    while not done:
        if count is not None and n_found == count:
            break
        if i >= src.count:
            if count is not None:
                raise src.error(src.last_line(),
                                f"{spec.section}: expected {count} records, found {n_found} at end of file")
            break
        j = min(src.count, i + step)
        step = min(step * 2, 65536)
        block = src.block(i, j)
        for off, text in enumerate(block):
            line = i + off + 1
            toks = tokens(text)
            if toks is None:
                continue
            if is_keyword(toks[0]):
                if toks[0].lower() in keywords:
                    if count is not None:
                        raise src.error(line, f"{spec.section}: expected {count} records, "
                                              f"found {n_found} before line {line}")
                    i = i + off
                    done = True
                    break
                sink.warn(line, f"unknown keyword {toks[0]!r}: line ignored")
                continue
            if len(toks) != nfields:
                raise src.error(line, f"{what}: expected {nfields} fields ({spec.layout}), "
                                      f"found {len(toks)}")
            row_i = []
            row_f = []
            for kind, tok in zip(kinds, toks):
                if kind == "i":
                    row_i.append(parse_id(src, line, tok, what))
                elif kind == "d":
                    value = parse_int(src, line, tok, what)
                    if not -INT_LIMIT < value < INT_LIMIT:
                        raise src.error(line, f"{what}: integer {value} is out of range")
                    row_i.append(value)
                elif kind == "f":
                    row_f.append(parse_float(src, line, tok, what))
                else:
                    name = parse_name(src, line, tok, what)
                    codes.append(names.setdefault(name, len(names)))
            ints.append(row_i)
            floats.append(row_f)
            lines.append(line)
            n_found += 1
            if count is not None and n_found == count:
                i = i + off + 1
                done = True
                break
        else:
            i = j
    n_int = sum(k in "id" for k in kinds)
    n_float = kinds.count("f")
    return Records(
        ints=np.array(ints, dtype=np.int64).reshape(n_found, n_int),
        floats=np.array(floats, dtype=np.float64).reshape(n_found, n_float),
        names=list(names),
        name_codes=np.array(codes, dtype=np.int64) if "n" in kinds else None,
        end=i,
        line_numbers=np.array(lines, dtype=np.int64),
    )
