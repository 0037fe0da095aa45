# SPDX-License-Identifier: GPL-3.0-or-later
"""Decimal numbers of text .X data, converted with numpy (no Python step per number).

A token of at most 16 characters of the form ``[+-]digits[.digits]`` (or
``[+-].digits``) with at most 2**53 as its digits is converted here: its bytes,
right-aligned in two little-endian 64-bit words, are turned into an integer
eight digits at a time (SWAR), and the value is that integer divided by a power
of ten. Both are exact in float64, so the division is the one correctly rounded
step and the result is bit for bit what ``float(token)`` gives. Anything else
(exponents, longer spellings, "1.#QNAN0", names) is marked inexact and left to
``float()`` by the caller.

The byte codes (``CODES``) are shared with the tokenizer, which translates the
data once: digits are 0-9, '.' 0x10, '+' 0x20, '-' 0x60, every other byte has
the 0x80 bit set.
"""
from __future__ import annotations

import numpy as np

U64 = np.uint64
DOT, PLUS, MINUS, OTHER = 0x10, 0x20, 0x60, 0x80
PAD = 16  # bytes before the data in the translated buffer (room for the windows)
_STEP = 16384  # tokens per step (small temporaries: fresh pages are slow to fill)


def code_table() -> bytearray:
    """256 byte codes for ``bytes.translate`` (the tokenizer adds its own >= 0x80)."""
    table = bytearray([OTHER] * 256)
    for d in range(10):
        table[48 + d] = d
    table[ord(".")], table[ord("+")], table[ord("-")] = DOT, PLUS, MINUS
    return table


_ALL = (1 << 64) - 1
# Masks keeping the last max(L - 8, 0) bytes of word 1 and the last min(L, 8)
# of word 2 (L: the token's length).
_MASK1 = np.array([_ALL ^ ((1 << (8 * (8 - max(n - 8, 0)))) - 1) for n in range(17)], dtype=U64)
_MASK2 = np.array([_ALL ^ ((1 << (8 * (8 - min(n, 8)))) - 1) for n in range(17)], dtype=U64)
# Indexed by digits after the dot + 1 (0: no dot): the power of ten above the
# integer part (10^17 > every 16-digit value: no integer part to move), the one
# below it, and the divisor (sign included at 18 +: -(m / 10^k) == m / -10^k).
_ABOVE = np.array([10 ** 17] + [10 ** k for k in range(1, 17)], dtype=U64)
_BELOW = np.array([0] + [10 ** (k - 1) for k in range(1, 17)], dtype=U64)
_DIVISORS = np.array([1.0] + [10.0 ** (k - 1) for k in range(1, 17)] + [0.0]
                     + [-1.0] + [-(10.0 ** (k - 1)) for k in range(1, 17)] + [0.0])
_LOW = U64(0x0F0F0F0F0F0F0F0F)
_BAD = U64(0x8080808080808080)
_MARKS = U64(0x3030303030303030)
_LANES = U64(0x0101010101010101)
# Byte k of a word holding a 1 (the dot) -> top byte = digits after the dot + 1.
_AFTER1 = U64(int.from_bytes(bytes(range(9, 17)), "little"))   # word 1: 16 - k
_AFTER2 = U64(int.from_bytes(bytes(range(1, 9)), "little"))    # word 2: 8 - k
_SHIFT4, _SHIFT56 = U64(4), U64(56)


def _eight_digits(v: np.ndarray) -> np.ndarray:
    """Eight digit bytes (first = most significant, low nibbles) -> their value
    (in place)."""
    v &= _LOW
    v *= U64(10 * 256 + 1)
    v >>= U64(8)
    v &= U64(0x00FF00FF00FF00FF)
    v *= U64(100 * 65536 + 1)
    v >>= U64(16)
    v &= U64(0x0000FFFF0000FFFF)
    v *= U64(10000 * (1 << 32) + 1)
    v >>= U64(32)
    return v


def parse_decimals(codes: np.ndarray, starts: np.ndarray, ends: np.ndarray,
                   firsts: np.ndarray):
    """(values float64, exact bool) of the tokens ``[starts, ends)`` of the data.

    ``codes`` is the data translated with ``code_table()`` and preceded by PAD
    bytes (positions are data offsets), ``firsts`` the codes of the tokens'
    first bytes. Values of inexact tokens are undefined.
    """
    # words[i]: the 8 bytes from data offset i - 16 (unaligned: any offset).
    words = np.ndarray((len(codes) - 7,), "<u8", codes.data, 0, (1,))
    n = len(starts)
    values = np.empty(n, dtype=np.float64)
    exact = np.empty(n, dtype=bool)

    for a in range(0, n, _STEP):
        b = min(a + _STEP, n)
        values[a:b], exact[a:b] = _chunk(words, starts[a:b], ends[a:b], firsts[a:b])
    return values, exact


def _chunk(words, start, end, first):
    length = end - start
    clipped = np.minimum(length, 16)
    w1 = words[end]                              # bytes end-16 .. end-9
    w1 &= _MASK1[clipped]
    w2 = words[end + 8]                          # bytes end-8 .. end-1
    w2 &= _MASK2[clipped]
    signed = (first >> 5) & 1                    # '+' or '-' (0x20 bit)
    good = ((w1 | w2) & _BAD) == 0
    marks1 = w1 & _MARKS                         # per byte: dot 1, sign 2 (<< 4)
    marks1 >>= _SHIFT4
    marks2 = w2 & _MARKS
    marks2 >>= _SHIFT4
    # dots + 2 * signs, less the leading sign: 0 (no dot) or 1 (one dot) if valid
    count = marks1 + marks2
    count *= _LANES
    count >>= _SHIFT56
    count -= signed << 1
    # digits after the dot + 1 (0 without a dot): the lane of the dot, weighted
    marks1 &= _LANES
    marks1 *= _AFTER1
    marks1 >>= _SHIFT56
    marks2 &= _LANES
    marks2 *= _AFTER2
    marks2 >>= _SHIFT56
    marks1 += marks2
    after = np.minimum(marks1, 16).astype(np.intp)  # (several dots: invalid anyway)
    # The digits with the dot read as a 0: ip * 10^(f+1) + fraction; the
    # mantissa is ip * 10^f + fraction.
    mantissa = _eight_digits(w1)
    mantissa *= U64(100_000_000)
    mantissa += _eight_digits(w2)
    ip = mantissa // _ABOVE[after]
    ip *= _BELOW[after]
    ip *= U64(9)
    mantissa -= ip
    after += (first == MINUS) * 18
    values = mantissa.astype(np.float64)
    values /= _DIVISORS[after]
    # All of the token in the window, at least one digit and at most 15 (below
    # 2^53), no other character.
    digits = length - signed
    digits -= marks1 != 0
    ok = digits >= 1
    ok &= digits <= 15
    ok &= length <= 16
    ok &= good
    ok &= count <= U64(1)
    return values, ok
