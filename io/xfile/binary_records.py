# SPDX-License-Identifier: GPL-3.0-or-later
"""Runs of ``[INTEGER_LIST c1][FLOAT_LIST c2]`` records in binary .X data.

D3DX writes animation keys (time, n / n values) and vertex colors as two tiny
lists per record. The tokenizer turns a run of at least MIN_ROWS such records
(same c1, same c2) into one token holding all their numbers: ``guess`` sizes a
run from the first byte of each record's two token ids (strided bytes slices,
no numpy call), and ``decode`` checks the complete headers of every guessed run
at once and converts them all. A guess can only be too long (a record whose
other header bytes differ, never seen in real files); ``decode`` then returns
None and the tokenizer starts over with ``measure``, which checks the headers
before sizing each run.
"""
from __future__ import annotations

import struct

import numpy as np

TOKEN_INTEGER_LIST = 6
TOKEN_FLOAT_LIST = 7
MIN_ROWS = 8
_STEP = 8192  # records decoded per step
_HEAD = struct.Struct("<HI")
_MASK48 = np.uint64((1 << 48) - 1)


def _layout(data: bytes, p: int, c1: int, fsize: int) -> tuple[int, int] | None:
    """(c2, record length) if a FLOAT_LIST of 1..16 values follows the
    INTEGER_LIST of c1 values at ``p``."""
    q = p + 6 + 4 * c1
    if len(data) - q < 6:
        return None
    tok, c2 = _HEAD.unpack_from(data, q)
    if tok != TOKEN_FLOAT_LIST or not 0 < c2 <= 16:
        return None
    return c2, q - p + 6 + fsize * c2


def guess(data: bytes, p: int, c1: int, fsize: int) -> tuple[int, int, int] | None:
    """(rows, c2, length) of the run starting at ``p``, sized from the first
    byte of both token ids of each record; None if shorter than MIN_ROWS."""
    layout = _layout(data, p, c1, fsize)
    if layout is None:
        return None
    c2, length = layout
    o2 = 6 + 4 * c1
    id1, id2 = data[p:p + 1], data[p + o2:p + o2 + 1]
    rows, chunk, end = 0, 64, len(data)
    while True:  # (in growing chunks: the work stays proportional to the run)
        take = min(chunk, (end - p) // length - rows)
        if take <= 0:
            break
        at = p + rows * length
        good = min(take - len(data[at:at + take * length:length].lstrip(id1)),
                   take - len(data[at + o2:at + o2 + take * length:length].lstrip(id2)))
        rows += good
        if good < take:
            break
        chunk *= 4
    return (rows, c2, length) if rows >= MIN_ROWS else None


def measure(data: bytes, p: int, c1: int, fsize: int) -> tuple[int, int, int] | None:
    """As ``guess``, with both complete headers of every record checked."""
    layout = _layout(data, p, c1, fsize)
    if layout is None:
        return None
    c2, length = layout
    o2 = 6 + 4 * c1
    want1 = int.from_bytes(data[p:p + 6], "little")
    want2 = int.from_bytes(data[p + o2:p + o2 + 6], "little")
    rows, chunk, end = 0, 64, len(data)
    while True:
        take = min(chunk, (end - p) // length - rows)
        if take <= 0:
            break
        at = p + rows * length
        # Both headers of each record as 48-bit integers (8 bytes read, 6 kept).
        ok = (((np.ndarray((take,), "<u8", data, at, (length,)) & _MASK48) == want1)
              & ((np.ndarray((take,), "<u8", data, at + o2, (length,)) & _MASK48) == want2))
        good = take if ok.all() else int(ok.argmin())
        rows += good
        if good < take:
            break
        chunk *= 4
    return (rows, c2, length) if rows >= MIN_ROWS else None


def decode(data: bytes, fsize: int, runs: list[tuple[int, int, int, int, int]]):
    """The numbers (float64, row by row) of each run ``(p, rows, c1, c2, length)``,
    or None if a record of a run does not carry the run's two headers."""
    out: list = [None] * len(runs)
    groups: dict[tuple[int, int], list[int]] = {}
    for k, (_p, _rows, c1, c2, _length) in enumerate(runs):
        groups.setdefault((c1, c2), []).append(k)
    size = len(data)
    words = np.ndarray((size - 7,), "<u8", data, 0, (1,))
    ints = np.ndarray((size - 3,), "<u4", data, 0, (1,))
    floats = np.ndarray((size - fsize + 1,), "<f8" if fsize == 8 else "<f4", data, 0, (1,))
    for (c1, c2), members in groups.items():
        starts = np.array([runs[k][0] for k in members], dtype=np.int64)
        rows = np.array([runs[k][1] for k in members], dtype=np.int64)
        length = runs[members[0]][4]
        o2 = 6 + 4 * c1
        first = np.cumsum(rows) - rows
        which = np.repeat(np.arange(len(members)), rows)
        offsets = starts[which] + (np.arange(len(which)) - first[which]) * length
        head1 = int.from_bytes(_HEAD.pack(TOKEN_INTEGER_LIST, c1), "little")
        head2 = int.from_bytes(_HEAD.pack(TOKEN_FLOAT_LIST, c2), "little")
        width = c1 + c2
        numbers = np.empty((len(offsets), width), dtype=np.float64)
        int_at, float_at = np.arange(6, o2, 4), np.arange(o2 + 6, length, fsize)
        for a in range(0, len(offsets), _STEP):  # (bounded temporaries)
            at = offsets[a:a + _STEP]
            if not (((words[at] & _MASK48) == head1).all()
                    and ((words[at + o2] & _MASK48) == head2).all()):
                return None
            numbers[a:a + _STEP, :c1] = ints[at[:, None] + int_at]
            numbers[a:a + _STEP, c1:] = floats[at[:, None] + float_at]
        flat = numbers.reshape(-1)
        for k, a, n in zip(members, (first * width).tolist(), (rows * width).tolist()):
            out[k] = flat[a:a + n]
    return out
