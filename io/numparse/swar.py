# SPDX-License-Identifier: GPL-3.0-or-later
"""Eight bytes as one little-endian uint64 (SWAR: the first in the lowest
byte), and the codes, masks and steps the two decimal paths share.

The paths read byte *codes* (see ``CODES``): a digit is its value 0..9, so a
run of digits is a run of bytes below 10, and the marks of the point, the
signs and everything else are bits no digit has.
"""
from __future__ import annotations

import numpy as np

U = np.uint64
POINT, PLUS, MINUS, OTHER = 0x10, 0x20, 0x60, 0x80


def _codes() -> bytes:
    table = bytearray([OTHER] * 256)
    for d in range(10):
        table[48 + d] = d
    table[ord(".")], table[ord("+")], table[ord("-")] = POINT, PLUS, MINUS
    return bytes(table)


#: ``bytes.translate`` table from text to the codes (callers may give the
#: bytes that are never in a number, OTHER here, their own codes of 0x80 or
#: more).
CODES = _codes()
LANES = U(0x0101010101010101)
HIGH_BITS = U(0x8080808080808080)
# KEEP[n]: the last n bytes of a word (its n highest); FIRST[n]: the first n
KEEP = np.array([0] + [((1 << 64) - 1) ^ ((1 << (8 * (8 - n))) - 1) for n in range(1, 9)], dtype=np.uint64)
FIRST = np.array([(1 << (8 * n)) - 1 for n in range(9)], dtype=np.uint64)


def words_of(codes: np.ndarray) -> np.ndarray:
    """The little-endian uint64 that starts at every byte of ``codes`` (a read-only view)."""
    return np.ndarray((len(codes) - 7,), dtype="<u8", buffer=codes, strides=(1,))


def eight_digits(t: np.ndarray) -> np.ndarray:
    """The value of eight digits 0..9, one per byte (the most significant in the
    lowest), in place: pairs, then quads, then all eight."""
    t *= U(10 * 256 + 1)
    t >>= U(8)
    t &= U(0x00FF00FF00FF00FF)
    t *= U(100 * 65536 + 1)
    t >>= U(16)
    t &= U(0x0000FFFF0000FFFF)
    t *= U(10000 * (1 << 32) + 1)
    t >>= U(32)
    return t
