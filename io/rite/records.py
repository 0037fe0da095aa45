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

from .lexer import INT_LIMIT, Sink, Source, check_quotes, is_keyword, parse_float, parse_id, parse_int, parse_name, tokens

_INT_SENTINEL = np.iinfo(np.int64).max
_INT_SENTINEL_TEXT = b" %d" % _INT_SENTINEL
_POW10 = 10 ** np.arange(1, 17, dtype=np.int64)
_IS_SEPARATOR = np.zeros(256, dtype=bool)
_IS_SEPARATOR[[9, 11, 12, 13, 32]] = True
_IS_DIGIT = np.zeros(256, dtype=bool)
_IS_DIGIT[48:58] = True


@dataclass
class Records:
    """Parsed records of one section, in file order.

    ``ints`` holds the integer fields (``kinds`` 'i' and 'd'), ``floats`` the
    'f' fields. A name field (one at most) is kept either as codes into
    ``names`` (line-by-line path) or as byte spans into ``name_bytes``
    (vectorised path); use :meth:`name` and :meth:`names_differ`.
    ``end`` is the 0-based index of the first line after the section.
    """

    ints: np.ndarray
    floats: np.ndarray
    end: int
    first_line: int | None = None     # record r is on 1-based line first_line + r
    line_numbers: np.ndarray | None = None
    names: list | None = None
    name_codes: np.ndarray | None = None
    name_bytes: np.ndarray | None = None
    name_start: np.ndarray | None = None
    name_len: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.ints)

    def line(self, r: int) -> int:
        if self.line_numbers is None:
            return int(self.first_line + r)
        return int(self.line_numbers[r])

    def name(self, r: int) -> str:
        if self.name_codes is not None:
            return self.names[int(self.name_codes[r])]
        a = int(self.name_start[r])
        return self.name_bytes[a:a + int(self.name_len[r])].tobytes().decode("utf-8")

    def names_differ(self, group: np.ndarray, expected: list) -> np.ndarray:
        """Boolean per record: is its name not ``expected[group[record]]``?"""
        if self.name_codes is not None:
            code = {name: k for k, name in enumerate(self.names)}
            want = np.array([code.get(e, -1) for e in expected], dtype=np.int64)
            return self.name_codes != want[group] if len(want) else np.ones(len(self), dtype=bool)
        differ = np.ones(len(self), dtype=bool)
        if not len(expected):
            return differ
        small = np.int16 if len(expected) < 2 ** 15 else np.int64
        order = np.argsort(group.astype(small), kind="stable")
        bounds = np.searchsorted(group[order], np.arange(len(expected) + 1))
        for g, text in enumerate(expected):
            rows = order[bounds[g]:bounds[g + 1]]
            if not rows.size:
                continue
            want = np.frombuffer(text.encode("utf-8"), dtype=np.uint8)
            rows = rows[self.name_len[rows] == len(want)]
            step = max(1, (1 << 20) // max(1, len(want)))
            for a in range(0, len(rows), step):
                part = rows[a:a + step]
                if len(want):
                    got = self.name_bytes[self.name_start[part, None] + np.arange(len(want))]
                    part = part[(got == want).all(axis=1)]
                differ[part] = False
        return differ


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

_BLOCK_LINES = 16384  # lines per numpy pass: keeps temporaries small and in cache


def _fromstring(data: bytes, dtype):
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        try:
            return np.fromstring(data, dtype=dtype, sep=" ")
        except (DeprecationWarning, ValueError):
            return None


def _fast(src: Source, start: int, n: int, spec: RecordSpec) -> Records | None:
    """All ``n`` records from line ``start`` if every line is tidy, else None."""
    kinds = spec.kinds
    n_int = len(kinds) - len(kinds.lstrip("id"))
    rest = kinds[n_int:]
    if rest and rest.strip("f"):
        if rest != "nf" or kinds[:n_int] != "i" * n_int:
            return None
        block_fn = _block_named
    elif rest:
        block_fn = _block_floats
    else:
        block_fn = _block_ints
    n_float = kinds.count("f")
    ints = np.empty((n, n_int), dtype=np.int64)
    floats = np.empty((n, n_float), dtype=np.float64)
    named = block_fn is _block_named
    if named:
        name_start = np.empty(n, dtype=np.int64)
        name_len = np.empty(n, dtype=np.int64)
    data = src.data
    for b0 in range(0, n, _BLOCK_LINES):
        m = min(_BLOCK_LINES, n - b0)
        first = start + b0
        s = int(src.starts[first])
        e = int(src.ends[first + m - 1])
        ls = src.starts[first:first + m] - s
        got = block_fn(data[s:e], ls, src.ends[first:first + m] - s, n_int, len(kinds))
        if got is None:
            return None
        ints[b0:b0 + m] = got[0]
        floats[b0:b0 + m] = got[1]
        if named:
            name_start[b0:b0 + m] = got[2] + (s + 1)
            name_len[b0:b0 + m] = got[3] - got[2] - 1
    for j, kind in enumerate(kinds[:n_int]):
        if kind == "i" and (ints[:, j] < 0).any():
            return None  # the slow path names the line
    if named:
        return Records(ints=ints, floats=floats, end=start + n, first_line=start + 1,
                       name_bytes=np.frombuffer(data, dtype=np.uint8), name_start=name_start,
                       name_len=name_len)
    return Records(ints=ints, floats=floats, end=start + n, first_line=start + 1)


def _block_ints(chunk: bytes, ls, le, n_int: int, k: int):
    """Lines of ``k`` integers. The integer parser is strict, a sentinel per line checks the count."""
    m = len(ls)
    stream = chunk.replace(b"\n", _INT_SENTINEL_TEXT + b"\n") + _INT_SENTINEL_TEXT
    arr = _fromstring(stream, np.int64)
    if arr is None or arr.size != m * (k + 1):
        return None
    arr = arr.reshape(m, k + 1)
    if not (arr[:, -1] == _INT_SENTINEL).all():
        return None
    ints = arr[:, :-1]
    if ((ints >= INT_LIMIT) | (ints <= -INT_LIMIT)).any():
        return None
    return ints, _NO_FLOATS


_NO_FLOATS = np.zeros((0,), dtype=np.float64)


def _block_floats(chunk: bytes, ls, le, n_int: int, k: int):
    """Lines of ``n_int`` plain integers then floats; a ``nan`` sentinel per line checks the count."""
    m = len(ls)
    stream = chunk.replace(b"\n", b" nan\n") + b" nan"
    arr = _fromstring(stream, np.float64)
    if arr is None or arr.size != m * (k + 1):
        return None
    arr = arr.reshape(m, k + 1)
    if not np.isnan(arr[:, -1]).all() or not np.isfinite(arr[:, :-1]).all():
        return None
    ivals = arr[:, :n_int]
    if ((ivals != np.trunc(ivals)) | (np.abs(ivals) >= INT_LIMIT)).any():
        return None
    ints = ivals.astype(np.int64)
    if n_int and _plain_integers(chunk, ls, ints) is None:
        return None
    return ints, arr[:, n_int:-1]


def _block_named(chunk: bytes, ls, le, n_int: int, k: int):
    """Lines ``ID.. "NAME" FLOAT`` (weights) without one Python object per line.

    Exactly two quotes per line (checked against the line index) give each
    name's span; the names are blanked out of a copy of the chunk, which is
    then parsed like a numeric section. The integers must be plain and end
    one separator before the opening quote. Returns the quote positions too.
    """
    m = len(ls)
    raw = np.frombuffer(chunk, dtype=np.uint8)
    q = np.flatnonzero(raw == 34)
    if len(q) != 2 * m:
        return None
    qo, qc = q[0::2], q[1::2]
    if not ((qo >= ls) & (qc < le)).all():
        return None
    lens = qc - qo + 1
    ends = np.cumsum(lens)
    buf = raw.copy()
    buf[np.repeat(qo - ends + lens, lens) + np.arange(int(ends[-1]))] = 32
    stream = buf.tobytes().replace(b"\n", b" nan\n") + b" nan"
    width = n_int + 2
    arr = _fromstring(stream, np.float64)
    if arr is None or arr.size != m * width:
        return None
    arr = arr.reshape(m, width)
    if not np.isnan(arr[:, -1]).all() or not np.isfinite(arr[:, :-1]).all():
        return None
    ivals = arr[:, :n_int]
    if ((ivals != np.trunc(ivals)) | (np.abs(ivals) >= INT_LIMIT)).any():
        return None
    ints = ivals.astype(np.int64)
    end = _plain_integers(chunk, ls, ints)
    if end is None or not (end == qo).all():
        return None
    return ints, arr[:, n_int:n_int + 1], qo, qc


def _plain_integers(chunk: bytes, line_starts: np.ndarray, ints: np.ndarray) -> np.ndarray | None:
    """Where each line's integer fields end (plus one separator), or None.

    None unless each line starts with the integers ``ints`` written plainly.

    The float parser accepts ``1e2``, ``+5``, ``05`` or ``5.0`` as integral
    values; the grammar wants ``-?[0-9]+``. For each integer field this checks
    that the token starts with a digit (``-`` when negative) right where the
    previous one ended plus one separator, and that a separator follows after
    exactly as many characters as the value's plain spelling has. Every
    other spelling of the same value is longer, unless it uses an exponent,
    so finally no ``e``/``E`` may occur within the integer fields.
    """
    raw = np.frombuffer(chunk, dtype=np.uint8)
    last = len(raw) - 1
    pos = line_starts.astype(np.int64)
    for j in range(ints.shape[1]):
        v = ints[:, j]
        neg = v < 0
        length = np.searchsorted(_POW10, np.abs(v), side="right") + 1 + neg
        c = raw[np.minimum(pos, last)]
        if not np.where(neg, c == 45, _IS_DIGIT[c]).all():
            return None
        after = pos + length
        if after.max() > last:
            return None
        if not _IS_SEPARATOR[raw[after]].all():
            return None
        pos = after + 1
    if b"e" in chunk or b"E" in chunk:
        epos = np.flatnonzero((raw == 101) | (raw == 69))
        rows = np.searchsorted(line_starts, epos, side="right") - 1
        if (epos < pos[rows]).any():
            return None
    return pos


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
                check_quotes(src, line, toks)
                if toks[0].lower() in keywords:
                    if count is not None:
                        raise src.error(line, f"{spec.section}: expected {count} records, "
                                              f"found {n_found} before line {line}")
                    i = i + off
                    done = True
                    break
                sink.warn(line, f"unknown keyword {toks[0]!r}: line ignored")
                continue
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
