# SPDX-License-Identifier: GPL-3.0-or-later
"""Counted sections of one-line records (vertices, triangles, weights, keys).

A section is a header line with a count followed by that many record lines.
Two readers produce the same result:

* a vectorised one for the usual, tidy case. The section is cut into blocks of
  whole lines that are parsed straight from the file's bytes with numpy: one
  scan finds the blanks (token boundaries, line ends), quotes and decimal
  points; tokens are checked to sit ``k`` to a line; integers and the digit
  runs of decimal numbers are read eight bytes at a time (SWAR: one uint64
  word per eight ASCII digits, validated and converted with a few integer
  operations); the decimal mantissa and exponent are turned into the correctly
  rounded float64 (exact multiply/divide when both are exact, else the
  Eisel-Lemire algorithm on 128-bit products, which is proven correct or says
  it cannot decide). The result is bit for bit Python's ``float()`` of the
  token; the few tokens this does not cover (an undecidable case, unusual
  spellings such as ``1_0``, over 19 significant digits) are converted with
  ``float()`` itself. Anything structurally unusual in a block (comments,
  blank lines, keywords, odd quotes, a bad number, a value out of range)
  hands that block and the rest of the section to the second reader;
* a line-by-line one that handles everything the grammar allows and produces
  the precise error (with the line) for anything it does not.

Blocks are independent: a big section is parsed by a few threads when the
machine has CPUs to spare (numpy releases the GIL inside its loops), and the
blocks are still taken in file order, so the result and the error are the same.

Line numbers are not stored per record on the vectorised path: a tidy block
has one record per line, so record ``r`` is on line ``first_line + r``.
Neither path allocates from the declared count alone (the readers first check
that the rest of the file could hold it, see ``lexer.check_count_fits``, and the
result arrays hold at most the lines the file has).
"""
from __future__ import annotations

import mmap
import os
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from ..float_digits import mul128
from .lexer import (
    FLOAT_LIMIT,
    INT_LIMIT,
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
    groups: tuple = ()      # integer columns stored together, e.g. ((2, 5),): columns 2..4 as one (n, 3) array

    @property
    def int_groups(self) -> list:
        """(first, end) column ranges covering all integer fields: ``groups``, the rest one by one."""
        n_int = sum(k in "id" for k in self.kinds)
        taken = {j for a, b in self.groups for j in range(a, b)}
        return sorted(list(self.groups) + [(j, j + 1) for j in range(n_int) if j not in taken])

    @property
    def min_bytes(self) -> int:
        """Fewest bytes one record line can take: a character and a blank per field (a name: two)."""
        return 2 * len(self.kinds) + self.kinds.count("n")


@dataclass
class Records:
    """Parsed records of one section, in file order.

    The integer fields (``kinds`` 'i' and 'd') are kept in column groups (see
    ``RecordSpec.groups``), each a C-contiguous ``(n, width)`` array: read them
    with :meth:`col` and :meth:`cols`. ``floats`` holds the 'f' fields. A name
    field (one at most) is kept for the first ``len(name_start)`` records as
    byte spans into ``name_bytes`` (vectorised path) and for the rest as codes
    into ``names`` (line-by-line path); use :meth:`name` and :meth:`names_differ`.
    ``end_line``/``end_off`` address the first line after the section.
    """

    groups: list                      # [((first, end), (n, end - first) int64 array), ...]
    floats: np.ndarray
    end_line: int
    end_off: int
    first_line: int = 1               # record r is on line first_line + r ...
    line_numbers: np.ndarray | None = None   # ... unless this is given
    name_bytes: np.ndarray | None = None
    name_start: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    name_len: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    names: list = field(default_factory=list)
    name_codes: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    def __len__(self) -> int:
        return len(self.floats)

    def cols(self, a: int, b: int) -> np.ndarray:
        """Integer columns a..b-1 as an (n, b - a) array (no copy when they form one group)."""
        for (ga, gb), arr in self.groups:
            if ga <= a and b <= gb:
                part = arr[:, a - ga:b - ga]
                return part if (ga, gb) == (a, b) else np.ascontiguousarray(part)
        return np.stack([self.col(j) for j in range(a, b)], axis=1)

    def col(self, j: int) -> np.ndarray:
        """Integer column j (contiguous when it is a group of its own)."""
        for (ga, gb), arr in self.groups:
            if ga <= j < gb:
                return arr[:, 0] if gb - ga == 1 else arr[:, j - ga]
        raise IndexError(j)

    def line(self, r: int) -> int:
        if self.line_numbers is None:
            return int(self.first_line + r)
        return int(self.line_numbers[r])

    def name(self, r: int) -> str:
        n_span = len(self.name_start)
        if r >= n_span:
            return self.names[int(self.name_codes[r - n_span])]
        a = int(self.name_start[r])
        return self.name_bytes[a:a + int(self.name_len[r])].tobytes().decode("utf-8")

    def names_differ(self, group: np.ndarray, expected: list) -> np.ndarray:
        """Boolean per record: is its name not ``expected[group[record]]``?"""
        n_span = len(self.name_start)
        if not len(expected):
            return np.ones(len(self), dtype=bool)
        parts = []
        if n_span:
            parts.append(_spans_differ(self.name_bytes, self.name_start, self.name_len,
                                       group[:n_span], expected))
        if len(self) > n_span:
            code = {name: k for k, name in enumerate(self.names)}
            want = np.array([code.get(e, -1) for e in expected], dtype=np.int64)
            parts.append(self.name_codes != want[group[n_span:]])
        return parts[0] if len(parts) == 1 else np.concatenate(parts)


def _spans_differ(data: np.ndarray, start: np.ndarray, length: np.ndarray, group: np.ndarray,
                  expected: list) -> np.ndarray:
    """Compare names given as byte spans of ``data`` with ``expected[group]``, eight bytes at a time."""
    want = [e.encode("utf-8") for e in expected]
    want_len = np.array([len(b) for b in want], dtype=np.int64)
    n_words = max(1, (int(want_len.max()) + 7) // 8)
    table = np.frombuffer(b"".join(b.ljust(8 * n_words, b"\0") for b in want), dtype="<u8")
    table = table.reshape(len(want), n_words)
    size = len(data)
    words = _words(data)
    differ = np.empty(len(start), dtype=bool)
    step = 1 << 16
    for a in range(0, len(start), step):
        s, n, g = start[a:a + step], length[a:a + step], group[a:a + step]
        same = n == want_len[g]
        near = np.zeros(len(s), dtype=bool)
        for j in range(n_words):
            pos = s + 8 * j
            near |= pos > size - 8
            w = words[np.minimum(pos, max(size - 8, 0))] & _LOW_BYTES[np.clip(n - 8 * j, 0, 8)]
            same &= w == table[g, j]
        for k in np.flatnonzero(near & (n == want_len[g])).tolist():      # names in the file's last bytes
            r = a + k
            same[k] = data[start[r]:start[r] + length[r]].tobytes() == want[int(group[r])]
        differ[a:a + step] = ~same
    return differ


# -- reading a section ------------------------------------------------------------

_BLOCK_BYTES = 1 << 20     # bytes per vectorised block (whole lines)
_FAST_MIN_RECORDS = 48     # below this the line-by-line reader is cheaper
_MAX_WORKERS = 4           # threads parsing the blocks of a big section


def read_records(src: LineBuffer, line: int, off: int, count: int | None, spec: RecordSpec,
                 sink: Sink, keywords: frozenset) -> Records:
    """Read the records starting at line ``line`` (1-based), byte ``off``.

    With ``count`` None the section runs to the next known keyword or the end
    of the file; otherwise exactly ``count`` records must follow.
    """
    layout = _layout(spec)
    out = _Output(spec)
    first_line = line
    if count is not None and count >= _FAST_MIN_RECORDS and layout is not None:
        if count > 4 * _FAST_MIN_RECORDS:
            _prime_allocator()
        plan = _plan(src.data, off, count)
        out.allocate(min(count, plan[-1][2] + plan[-1][3]) if plan else 0)
        for m, end in _fast_parts(src.data, plan, count, layout, out):
            line += m
            off = end
            out.n += m
    rest = None
    if count is None or out.n < count:
        rest = _slow(src, line, off, count, out.n, spec, sink, keywords)
        line, off = rest.end_line, rest.end_off
    return out.records(src, rest, first_line, line, off)


_primed = False
_SMALL_PAGES_FROM = 4 << 20     # numpy asks for transparent huge pages from 4 MiB on


def small_pages(shape: tuple, dtype) -> np.ndarray:
    """An uninitialised array in ordinary 4 KiB pages.

    numpy asks the kernel for transparent huge pages for arrays of 4 MiB or
    more (madvise). Where the kernel has to assemble or zero 2 MiB pages on
    first touch (memory compaction; virtual machines whose host backs guest
    memory lazily), filling a fresh array then takes 2-6 times as long as
    with ordinary pages: 352 MB took 0.9-1.5 s against 0.25-0.4 s on the
    2-vCPU machine the benchmarks run on. The result arrays of big sections
    are written once, in file order, so they are mapped here with huge pages
    declined (where the platform lets us say so)."""
    dt = np.dtype(dtype)
    n = int(np.prod(shape, dtype=np.int64)) * dt.itemsize
    advise = getattr(mmap, "MADV_NOHUGEPAGE", None)
    if n < max(_SMALL_PAGES_FROM, 1) or advise is None:
        return np.empty(shape, dtype=dt)
    buf = mmap.mmap(-1, n)
    buf.madvise(advise)
    return np.frombuffer(buf, dtype=dt).reshape(shape)



def _prime_allocator() -> None:
    """Allocate and free one 16 MiB array, once per process.

    glibc maps big allocations and unmaps them when freed; freeing one raises its
    mmap threshold to that size (and its heap trim threshold to twice it, see
    mallopt(3)). After that the block-sized temporaries of the vectorised path are
    recycled from the heap instead of being mapped and faulted in afresh for every
    block (a third of the page faults of reading a big file). Other allocators
    are unaffected.
    """
    global _primed
    if not _primed:
        _primed = True
        np.empty(16 << 20, dtype=np.uint8)


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


def _plan(data: bytes, off: int, count: int) -> list:
    """The blocks that may hold the ``count`` records from ``off``: (start,
    end, first row, lines) each. A tidy block holds one record per line, so
    its first row is the lines before it: counted here, so that every block
    can be parsed and stored in its place at once."""
    plan, row, size = [], 0, len(data)
    view = np.frombuffer(data, dtype=np.uint8)
    for a, b in _ranges(data, off):
        # (numpy counts 3x faster than bytes.count)
        lines = int(np.count_nonzero(view[a:b] == 10)) + (1 if b == size and data[b - 1] != 10 else 0)
        plan.append((a, b, row, lines))
        row += lines
        if row >= count:
            break
    return plan


def _fill(data: bytes, a: int, b: int, layout: "_Layout", need: int, out: "_Output", row: int):
    """Parse one block and store its records from ``row`` on: (records, end), or None if it is unusual."""
    part = _block(data, a, b, layout, need)
    if part is None or row + part.m > out.capacity:
        return None
    out.put(part, row)
    return part.m, part.end


def _fast_parts(data: bytes, plan: list, count: int, layout: "_Layout", out: "_Output"):
    """(records, end) of the planned blocks, in file order, each stored in
    ``out`` at its row; stops at the first unusual block (or one whose
    records are not where the plan put them, which a tidy block never does).

    Big sections are parsed by a few threads (numpy releases the GIL in its
    loops), each storing its block's records itself; the blocks are still
    confirmed in file order, so the result is the same as block after block.
    """
    workers = _workers() if len(plan) > 4 else 1
    if workers == 1:
        for a, b, row, lines in plan:
            got = _fill(data, a, b, layout, count - row, out, row)
            if got is None:
                return
            yield got
            if row + got[0] >= count or got[0] != lines:
                return
        return
    with ThreadPoolExecutor(max_workers=workers) as pool:
        pending: deque = deque()
        todo = iter(plan)
        try:
            while True:
                while len(pending) < 2 * workers:
                    step = next(todo, None)
                    if step is None:
                        break
                    a, b, row, _ = step
                    pending.append((step, pool.submit(_fill, data, a, b, layout, count - row, out, row)))
                if not pending:
                    return
                (a, b, row, lines), future = pending.popleft()
                got = future.result()
                if got is None:
                    return
                yield got
                if row + got[0] >= count or got[0] != lines:
                    return
        finally:
            for _, future in pending:
                future.cancel()                   # (leaving the pool waits for the running ones)


def _workers() -> int:
    """Threads for a big section: the CPUs this process may use, at most ``_MAX_WORKERS``.

    The calling thread only gathers the parsed blocks into the result (and
    Blender's interface waits for the import anyway), so every CPU can parse.
    """
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return max(1, min(_MAX_WORKERS, cpus))


class _Output:
    """Result arrays of the vectorised path: sized once from the plan (never
    from the declared count alone: at most the lines the file has) and filled
    in place, block by block, by the threads that parse them."""

    def __init__(self, spec: RecordSpec):
        self.bounds = spec.int_groups
        self.n_int = sum(k in "id" for k in spec.kinds)
        self.n_float = spec.kinds.count("f")
        self.named = "n" in spec.kinds
        self.n = 0
        self.capacity = 0
        self.groups = self.floats = self.name_start = self.name_len = None

    def allocate(self, capacity: int) -> None:
        self.groups = [small_pages((capacity, b - a), np.int64) for a, b in self.bounds]
        self.floats = small_pages((capacity, self.n_float), np.float64)
        if self.named:
            self.name_start = small_pages((capacity,), np.int64)
            self.name_len = small_pages((capacity,), np.int64)
        self.capacity = capacity

    def put(self, part: "_Part", row: int) -> None:
        """Store a parsed block's records at rows ``row`` .. (called from the parsing threads:
        blocks write disjoint rows)."""
        a, b = row, row + part.m
        for (ga, gb), arr in zip(self.bounds, self.groups):
            arr[a:b] = part.ints[:, ga:gb]
        self.floats[a:b] = part.floats
        if self.named:
            self.name_start[a:b] = part.name_start
            self.name_len[a:b] = part.name_len

    def records(self, src: LineBuffer, rest, first_line: int, end_line: int, end_off: int) -> Records:
        n = self.n
        if self.groups is None:
            groups = [np.zeros((0, b - a), dtype=np.int64) for a, b in self.bounds]
            floats = np.zeros((0, self.n_float), dtype=np.float64)
        else:
            groups, floats = [arr[:n] for arr in self.groups], self.floats[:n]
        line_numbers = None
        if rest is not None and len(rest):
            groups = [np.concatenate([arr, rest.ints[:, a:b]]) for arr, (a, b) in zip(groups, self.bounds)]
            floats = np.concatenate([floats, rest.floats])
            line_numbers = np.concatenate([np.arange(first_line, first_line + n, dtype=np.int64),
                                           rest.line_numbers])
        out = Records(groups=list(zip(self.bounds, groups)), floats=floats, end_line=end_line, end_off=end_off,
                      first_line=first_line, line_numbers=line_numbers)
        if self.named:
            if n:
                out.name_bytes = np.frombuffer(src.data, dtype=np.uint8)
                out.name_start = self.name_start[:n]
                out.name_len = self.name_len[:n]
            if rest is not None:
                out.names = rest.names
                out.name_codes = rest.name_codes
        return out


# -- vectorised path ------------------------------------------------------------

@dataclass
class _Layout:
    n_int: int
    n_float: int
    named: bool
    nonneg: np.ndarray    # per integer column: must be >= 0 ('i')


@dataclass
class _Part:
    m: int
    end: int
    ints: np.ndarray      # (m, n_int)
    floats: np.ndarray    # (m, n_float)
    name_start: np.ndarray | None = None
    name_len: np.ndarray | None = None


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


_PAD = 32                                     # blanks around a block's copy (digit windows reach back 24)
_BLANK = np.zeros(256, dtype=bool)
_BLANK[[9, 10, 11, 12, 13, 32]] = True


def _words(buf: np.ndarray) -> np.ndarray:
    """Little-endian uint64 view starting at every byte of ``buf`` (unaligned, read-only)."""
    n = max(len(buf) - 7, 0)
    return np.ndarray((n,), dtype="<u8", buffer=buf, strides=(1,)) if n else np.zeros(0, dtype="<u8")


def _block(data: bytes, off: int, end: int, lay: _Layout, need: int) -> _Part | None:
    """The records on the whole lines of ``data[off:end]`` (at most ``need``), or None if any is unusual."""
    n = end - off
    # the block with a blank before it and a newline after it, padded with '0's: digit
    # windows may read up to 32 bytes beyond a token, and the pads hold no blanks
    buf = np.empty(n + 2 * _PAD, dtype=np.uint8)
    buf[:_PAD - 1] = 48
    buf[_PAD - 1] = 32
    buf[_PAD:_PAD + n] = np.frombuffer(data, dtype=np.uint8, count=n, offset=off)
    buf[_PAD + n:] = 48
    if buf[_PAD + n - 1] != 10:
        buf[_PAD + n] = 10                    # the file's last line has no newline
    sep = np.flatnonzero(buf <= 32)           # blanks (and control characters, refused below)
    sep_ch = buf[sep]
    newline = sep_ch == 10
    if (np.count_nonzero(newline) + np.count_nonzero(sep_ch == 32) != len(sep_ch)   # (the usual blanks: cheap)
            and not _BLANK[sep_ch].all()):
        return None                           # control characters
    nl_at = sep[newline]
    m = len(nl_at)
    if m > need:                              # the section ends inside this block
        cut = int(nl_at[need - 1])
        k = int(np.searchsorted(sep, cut, side="right"))
        sep, newline = sep[:k], newline[:k]
        nl_at = nl_at[:need]
        m = need
        end = off + cut - _PAD + 1
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
        if not ((buf[o_at] == 34) & (buf[c_at] == 34) & (c_at > o_at)).all():
            return None
        if np.count_nonzero(buf[:cut] == 34) != 2 * m:
            return None                       # a quote inside a name, or elsewhere
        name_len = c_at - o_at - 1
        if name_len.max() > MAX_NAME_LENGTH:
            return None                       # the line-by-line reader measures in characters
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
    if lay.named:
        int_tok = (firsts[None, :] + np.arange(n_int)[:, None]).ravel()
        int_s, int_e = t_start[int_tok], t_end[int_tok]
        float_s, float_e = t_start[lasts], t_end[lasts]
    words = _words(buf)
    ints = _ints(buf, words, int_s, int_e, lay.nonneg, m)
    if ints is None:
        return None
    if not n_float:
        return _Part(m=m, end=end, ints=ints, floats=np.zeros((m, 0)))
    floats = _floats(buf, words, float_s, float_e, lambda: np.flatnonzero(buf[:cut] == 46), data, off)
    if floats is None:
        return None
    part = _Part(m=m, end=end, ints=ints, floats=floats.reshape(m, n_float))
    if lay.named:
        part.name_start = o_at + (off - _PAD + 1)
        part.name_len = name_len
    return part


# SWAR constants: a uint64 word holds 8 ASCII characters, the first in the lowest byte.
_U = np.uint64
_ZEROS = _U(0x3030303030303030)
_DIGIT_ADD = _U(0x7676767676767676)        # (byte ^ '0') + 0x76 >= 0x80 <=> not a digit
_HIGH_BITS = _U(0x8080808080808080)
_MUL_PAIRS = _U(10 * 256 + 1)                 # byte lanes d0 d1 -> d0 * 10 + d1
_PAIR_LANES = _U(0x00FF00FF00FF00FF)
_MUL_QUADS = _U(100 * 65536 + 1)              # 16-bit lanes -> 4-digit values
_QUAD_LANES = _U(0x0000FFFF0000FFFF)
_MUL_EIGHT = _U(10000 * (1 << 32) + 1)        # 32-bit lanes -> the 8-digit value
# _KEEP[n]: keep the last n characters of a word (its n highest bytes)
_KEEP = np.array([0] + [((1 << 64) - 1) ^ ((1 << (8 * (8 - n))) - 1) for n in range(1, 9)], dtype=np.uint64)
# _LOW_BYTES[n]: the first n characters of a word
_LOW_BYTES = np.array([(1 << (8 * n)) - 1 for n in range(9)], dtype=np.uint64)
_POW10 = np.array([10 ** k for k in range(20)], dtype=np.uint64)


def _digits(words: np.ndarray, end: np.ndarray, n: np.ndarray, max_n: int, n_min: int | None = None):
    """Value of the ``n`` (0..24) decimal digits ending before ``end``, and where they are not all digits.

    Digit runs of 17 to 24 characters must have a value below 10**19 (else
    flagged bad): the value is a uint64.
    """
    value = None
    acc = None
    if n_min is None:
        n_min = int(n.min()) if len(n) else 0
    for k in range(0, max(1, (max_n + 7) // 8)):
        t = words[end - 8 * (k + 1)]
        t ^= _ZEROS                           # '0'..'9' -> 0..9 (anything else -> >= 10)
        if n_min < 8 * (k + 1):               # some runs do not fill this word: zero what precedes them
            if k == 0:
                valid = n if max_n <= 8 else np.minimum(n, 8)
            else:
                valid = np.minimum(np.maximum(n - 8 * k, 0), 8)
            t &= _KEEP[valid]
        a = t + _DIGIT_ADD                    # byte >= 10 -> high bit set
        a |= t
        if acc is None:
            acc = a
        else:
            acc |= a
        # eight digits (first in the lowest byte) -> integer: pairs, quads, then all eight
        t *= _MUL_PAIRS
        t >>= _U(8)
        t &= _PAIR_LANES
        t *= _MUL_QUADS
        t >>= _U(16)
        t &= _QUAD_LANES
        t *= _MUL_EIGHT
        t >>= _U(32)
        if k == 0:
            value = t
        else:
            if k == 2:
                acc |= (t >= _U(1000)).view(np.uint8).astype(np.uint64) << _U(7)   # keep below 10**19
            t *= _POW10[8 * k]
            value += t
    return value, (acc & _HIGH_BITS) != 0


def _ints(buf, words, s, e, nonneg, m) -> np.ndarray | None:
    """Integer tokens ``-?[0-9]{1,16}`` (column after column) -> (m, n_int) int64, or None."""
    neg = buf[s] == 45
    nd = e - s - neg
    if not len(nd):
        return np.zeros((m, 0), dtype=np.int64)
    lo, hi = int(nd.min()), int(nd.max())
    if lo < 1 or hi > 16:
        return None
    value, bad = _digits(words, e, nd, hi, lo)
    if bad.any():
        return None
    if hi == 16 and (value >= _U(INT_LIMIT)).any():
        return None
    value = value.view(np.int64)
    if neg.any():
        cols = neg.reshape(-1, m)
        if cols[nonneg].any():
            return None                       # negative id: the line-by-line reader says so
        np.negative(value, out=value, where=neg)
    return value.reshape(-1, m).T


def _floats(buf, words, s, e, find_dots, data: bytes, off: int) -> np.ndarray | None:
    """Decimal tokens -> float64 (Python's ``float()`` bit for bit), or None if one is unusual.

    ``find_dots()`` gives the positions of all '.' in the block (needed only when
    some token has no point among its first eight characters).
    """
    n = len(s)
    c0 = buf[s]
    neg = c0 == 45
    body = s + (neg | (c0 == 43))
    # the decimal point of each token (position, or the token's end if it has none)
    dot = _first_point(words, body, e)
    if dot is not None:
        has_dot = None
    else:
        dots = find_dots()
        tok = np.searchsorted(s, dots, side="right") - 1
        inside = (tok >= 0) & (dots < e[np.maximum(tok, 0)])
        tok, at = tok[inside], dots[inside]
        if len(tok) > 1 and not (np.diff(tok) > 0).all():
            return None                       # two points in one token
        dot = e.copy()
        dot[tok] = at
        has_dot = np.zeros(n, dtype=bool)
        has_dot[tok] = True
    w, q, hard = _mantissas(buf, words, body, dot, has_dot, e)
    idx = np.flatnonzero(hard)
    if len(idx) > 16:                         # a few go to float() below, many are worth vectorising
        w2, q2, still = _exponent_tokens(buf, words, body[idx], dot[idx],
                                         None if has_dot is None else has_dot[idx], e[idx])
        w[idx], q[idx] = w2, q2
        hard[idx] = still
    values, ok = _to_float64(w, q, neg)
    if ok is not None:
        hard |= ~ok
    if hard.any():
        for k in np.flatnonzero(hard).tolist():      # spellings the vectorised code does not cover
            a, b = off + int(s[k]) - _PAD, off + int(e[k]) - _PAD
            value = float_or_none(data[a:b].decode("utf-8"))
            if value is None:
                return None
            values[k] = value
    if not (np.abs(values) <= FLOAT_LIMIT).all():
        return None
    return values


def _first_point(words, body, end):
    """Position of the first '.' in each token when every token has one in its first 8 bytes, else None."""
    w = words[body] ^ _U(0x2E2E2E2E2E2E2E2E)               # '.' -> 0
    w |= ~_LOW_BYTES[np.minimum(end - body, 8)]            # bytes past the token never match
    z = w - _U(0x0101010101010101)
    z &= ~w
    z &= _HIGH_BITS                                        # the lowest flagged byte is a true '.'
    if not z.all():
        return None
    z &= ~z + _ONE                                         # lowest set bit: 8 * byte + 7
    byte = ((z.astype(np.float64).view(np.int64) >> 52) - (1023 + 7)) >> 3
    return body + byte


def _mantissas(buf, words, body, dot, has_dot, end):
    """(w, q, hard): tokens ``D*[.D*]`` -> w * 10**q; ``hard`` where that form or 19 digits do not fit."""
    if has_dot is None:
        n_int = dot - body
        n_frac = end - dot - 1
    else:
        n_int = np.where(has_dot, dot, end) - body
        n_frac = np.where(has_dot, end - dot - 1, 0)
    # both are >= 0: a point is never before the digits (a sign is not a point)
    hard = (n_int + n_frac < 1) | (n_frac > 24) | (n_int > 19)
    n_int = np.minimum(n_int, 19)
    n_frac = np.minimum(n_frac, 24)
    hi_int = int(n_int.max()) if len(n_int) else 0
    if hi_int <= 1:
        vi = buf[body] - np.uint8(48)
        hard |= (n_int == 1) & (vi > 9)
        vi = np.where(n_int == 1, vi, 0).astype(np.uint64)
    else:
        int_end = dot if has_dot is None else np.where(has_dot, dot, end)
        vi, bad = _digits(words, int_end, n_int, hi_int)
        hard |= bad
    vf, bad = _digits(words, end, n_frac, int(n_frac.max()) if len(n_frac) else 0)
    hard |= bad
    hard |= (n_int + n_frac > 19) & (vi != 0)       # more than 19 significant digits
    w = vi * _POW10[np.minimum(n_frac, 19)] + vf
    q = -n_frac
    return w, q, hard


def _exponent_tokens(buf, words, body, dot, has_dot, end):
    """(w, q, hard) for tokens ``D*[.D*][eE][+-]D{1,8}`` (the ones :func:`_mantissas` could not read)."""
    n = len(body)
    e_at = _find_e(words, body, end)
    has_e = e_at < end
    if has_dot is None:
        has_dot = np.ones(n, dtype=bool)
    mark = e_at + 1
    c = buf[np.minimum(mark, len(buf) - 1)]
    eneg = c == 45
    e_digits = mark + (eneg | (c == 43))
    n_exp = end - e_digits
    late_dot = has_dot & (dot > e_at)             # '1e5.5': not a number
    hard = ~has_e | (n_exp < 1) | (n_exp > 8) | late_dot
    has_dot = has_dot & ~late_dot
    w, q, bad = _mantissas(buf, words, body, np.where(has_dot, dot, e_at), has_dot, e_at)
    hard |= bad
    ev, bad = _digits(words, end, np.clip(n_exp, 0, 8), 8)
    hard |= bad
    ev = ev.view(np.int64)
    q = q + np.where(eneg, -ev, ev)
    return w, q, hard


def _find_e(words, start, end):
    """Position of the first 'e' or 'E' in each token [start, end) of at most 32 bytes, else ``end``."""
    out = end.copy()
    found = np.zeros(len(start), dtype=bool)
    for k in range(4):
        p = start + 8 * k
        w = (words[p] | _U(0x2020202020202020)) ^ _U(0x6565656565656565)
        w |= ~_LOW_BYTES[np.clip(end - p, 0, 8)]              # bytes past the token never match
        z = (w - _U(0x0101010101010101)) & ~w & _HIGH_BITS   # lowest flagged byte is a true match
        hit = (z != 0) & ~found
        if hit.any():
            low = z[hit] & (~z[hit] + _U(1))
            bit = (low.astype(np.float64).view(np.int64) >> 52) - 1023
            out[hit] = p[hit] + (bit >> 3)
            found |= hit
    return out


# -- decimal -> binary64 --------------------------------------------------------------

def _power5_table():
    """128-bit truncated 5**q (normalised), q = -342..308, as fast_float/Eisel-Lemire use them."""
    hi_lo, hi_hi, lo = [], [], []
    for q in range(-342, 309):
        if q < 0:
            p5 = 5 ** -q
            z = p5.bit_length()
            if q >= -27:
                c = (1 << (z + 127)) // p5 + 1
            else:
                c = (1 << (2 * z + 128)) // p5 + 1
                while c >= 1 << 128:
                    c >>= 1
        else:
            c = 5 ** q
            while c < 1 << 127:
                c <<= 1
            while c >= 1 << 128:
                c >>= 1
        hi_lo.append((c >> 64) & 0xFFFFFFFF)
        hi_hi.append(c >> 96)
        lo.append(c & ((1 << 64) - 1))
    return (np.array(hi_lo, dtype=np.uint64), np.array(hi_hi, dtype=np.uint64),
            np.array(lo, dtype=np.uint64))


_P5_HI_LO, _P5_HI_HI, _P5_LO = _power5_table()
# binary exponent base per q: floor(log2(10**q)) + 63 + 1023
_POW2_BASE = np.array([(((152170 + 65536) * q) >> 16) + 63 + 1023 for q in range(-342, 309)], dtype=np.int64)
# exact path: q in -22..22 -> w * _MULT[q + 22] / _DIV[q + 22], one of them 1
_MULT = np.array([1.0] * 22 + [10.0 ** k for k in range(0, 23)])
_DIV = np.array([10.0 ** k for k in range(22, 0, -1)] + [1.0] * 23)
_SIGN = np.array([1.0, -1.0])
_M32 = _U(0xFFFFFFFF)
_S32 = _U(32)
_ONE = _U(1)


def _to_float64(w: np.ndarray, q: np.ndarray, neg: np.ndarray):
    """(values, ok): ``(-1)**neg * w * 10**q`` correctly rounded; ``ok`` None when all are decided."""
    exact = (w >> _U(53)) == _U(0)
    exact &= (q >= -22) & (q <= 22)
    exact |= w == _U(0)
    ok = None
    if exact.all():
        k = np.clip(q, -22, 22) + 22
        out = w.astype(np.float64)
        out *= _MULT[k]
        out /= _DIV[k]
    else:
        out = np.empty(len(w), dtype=np.float64)
        i = np.flatnonzero(exact)
        if len(i):
            k = np.clip(q[i], -22, 22) + 22
            v = w[i].astype(np.float64)
            v *= _MULT[k]
            v /= _DIV[k]
            out[i] = v
        i = np.flatnonzero(~exact)
        wi, qi = w[i], q[i]
        under = qi < -342
        over = qi > 308
        if under.any() or over.any():
            live = ~(under | over)
            bits = np.zeros(len(i), dtype=np.uint64)
            good = ~over
            if live.any():
                b, g = _eisel_lemire(wi[live], qi[live])
                bits[live] = b
                if g is not None:
                    good[live] &= g
        else:
            bits, good = _eisel_lemire(wi, qi)
        out[i] = bits.view(np.float64)
        if good is not None and not good.all():
            ok = np.ones(len(w), dtype=bool)
            ok[i] = good
    out *= _SIGN[neg.view(np.uint8)]              # exact, and -0.0 for a negative zero
    return out, ok


def _eisel_lemire(w: np.ndarray, q: np.ndarray):
    """IEEE binary64 bits of w * 10**q (w > 0, -342 <= q <= 308); second value: decided (None: all).

    Lemire, "Number Parsing at a Gigabyte per Second" (2021), as in fast_float
    and Rust's core library: an undecidable rounding or an overflow to inf is
    reported instead of guessed.
    """
    lz = 1086 - (w.astype(np.float64).view(np.int64) >> 52)   # leading zeros (float may round up)
    wn = w << lz.view(np.uint64)
    short = (wn >> _U(63)) == _U(0)
    if short.any():
        lz += short
        wn <<= short.astype(np.uint64)
    idx = q + 342
    lo, hi = mul128(wn, _P5_HI_LO[idx], _P5_HI_HI[idx])
    need = np.flatnonzero((hi & _U(0x1FF)) == _U(0x1FF))
    if len(need):
        b = _P5_LO[idx[need]]
        _, hi2 = mul128(wn[need], b & _M32, b >> _S32)
        low = lo[need] + hi2
        lo[need] = low
        hi[need] += (hi2 > low).astype(np.uint64)
    ok = None
    unsure = lo == _U(0xFFFFFFFFFFFFFFFF)
    if unsure.any():
        ok = ~(unsure & ((q < -27) | (q > 55)))
    upper = hi >> _U(63)
    shift = upper + _U(9)
    mant = hi >> shift
    power2 = _POW2_BASE[idx] + upper.view(np.int64) - lz
    tie = np.flatnonzero(lo <= _ONE)
    if len(tie):
        qt, mt = q[tie], mant[tie]
        even = (qt >= -4) & (qt <= 23) & ((mt & _U(3)) == _ONE) & ((mt << shift[tie]) == hi[tie])
        mant[tie[even]] &= ~_ONE
    sub = np.flatnonzero(power2 <= 0)
    if len(sub):
        sub_mant = hi[sub] >> shift[sub]
        sub_shift = 1 - power2[sub]
    mant += mant & _ONE
    mant >>= _ONE
    carry = mant >= _U(2 << 52)
    if carry.any():
        mant[carry] = _U(1 << 52)
        power2 += carry
    bits = (power2 - 1).view(np.uint64) << _U(52)
    bits += mant                                   # mant carries the implicit bit: + 1 on the exponent
    if len(sub):
        m = np.where(sub_shift >= 64, _U(0), sub_mant >> np.minimum(sub_shift, 63).astype(np.uint64))
        m += m & _ONE
        m >>= _ONE
        bits[sub] = m                              # 2**52 after rounding is the smallest normal
    inf = power2 >= 0x7FF
    if inf.any():
        ok = ~inf if ok is None else ok & ~inf
    return bits, ok


# -- line-by-line path ------------------------------------------------------------

_CHUNK_BYTES = 1 << 16


@dataclass
class _Slow:
    ints: np.ndarray
    floats: np.ndarray
    line_numbers: np.ndarray
    names: list
    name_codes: np.ndarray
    end_line: int
    end_off: int

    def __len__(self) -> int:
        return len(self.ints)


def _slow(src: LineBuffer, line: int, off: int, count: int | None, done: int, spec: RecordSpec,
          sink: Sink, keywords: frozenset) -> _Slow:
    """Records from line ``line`` / byte ``off``; ``done`` records of ``count`` were read before."""
    kinds = spec.kinds
    nfields = len(kinds)
    what = f"{spec.section} record"
    ints: list = []
    floats: list = []
    names: dict = {}
    codes: list = []
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
                        else:
                            name = parse_name(src, line, tok, what)
                            codes.append(names.setdefault(name, len(names)))
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
    return _Slow(ints=np.array(ints, dtype=np.int64).reshape(n, n_int),
                 floats=np.array(floats, dtype=np.float64).reshape(n, kinds.count("f")),
                 line_numbers=np.array(lines, dtype=np.int64), names=list(names),
                 name_codes=np.array(codes, dtype=np.int64), end_line=line, end_off=off)
