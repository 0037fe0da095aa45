# SPDX-License-Identifier: GPL-3.0-or-later
"""Decimal numbers of text .X data, converted with numpy (no Python step per number).

A token of at most 16 characters of the form ``[+-]digits[.digits]`` (or
``[+-].digits``) with 1 to 15 digits is converted here: its bytes,
right-aligned in two little-endian 64-bit words, are turned into an integer
eight digits at a time (SWAR), the dot is taken out, and the value is that
integer divided by a power of ten. Everything before the division is exact in
float64 (all integers below 2**53; tokens whose digits, the dot read as a 0,
reach 2**53 are left out), so the division is the one correctly rounded step
and the result is bit for bit what ``float(token)`` gives. Anything else
(exponents, longer spellings, "1.#QNAN0", names) is marked inexact and left to
``float()`` by the caller.

The byte codes (``code_table``) are shared with the tokenizer, which translates
the data once: digits are 0-9, '.' 0x10, '+' 0x20, '-' 0x60, every other byte
has the 0x80 bit set (and none of 0x30).
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
# Indexed by digits after the dot + 1 (0: no dot; up to 255 with several dots,
# which makes the token invalid anyway): the power of ten above the integer
# part (10^17 > every 16-digit value: no integer part to move), the one below
# it, and the divisor (sign included at 256 +: -(m / 10^k) == m / -10^k).
_ABOVE = np.array([1e17] + [10.0 ** min(k, 17) for k in range(1, 256)])
_BELOW = np.array([0.0] + [10.0 ** min(k - 1, 16) for k in range(1, 256)])
_DIVISORS = np.array([1.0] + [10.0 ** (k - 1) for k in range(1, 256)])
_DIVISORS = np.concatenate([_DIVISORS, -_DIVISORS])
_NEGATIVE = 256
_LOW = U64(0x0F0F0F0F0F0F0F0F)
_MARKS = U64(0xB0B0B0B0B0B0B0B0)  # >> 4, per byte: dot 1, sign 2, other 8 (0 for digits)
_LANES = U64(0x0101010101010101)
# Byte k of a word holding a 1 (the dot) -> top byte = digits after the dot + 1.
_AFTER1 = U64(int.from_bytes(bytes(range(9, 17)), "little"))   # word 1: 16 - k
_AFTER2 = U64(int.from_bytes(bytes(range(1, 9)), "little"))    # word 2: 8 - k
_SHIFT4, _SHIFT56 = U64(4), U64(56)
_EXACT = U64(1 << 53)


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
    # windows[i]: the 16 bytes before data offset i (unaligned: any offset).
    windows = np.ndarray((len(codes) - 15,), "V16", codes.data, 0, (1,))
    n = len(starts)
    values = np.empty(n, dtype=np.float64)
    exact = np.empty(n, dtype=bool)
    for a in range(0, n, _STEP):
        b = min(a + _STEP, n)
        _chunk(windows, starts[a:b], ends[a:b], firsts[a:b], values[a:b], exact[a:b])
    return values, exact


def _chunk(windows, start, end, first, values, exact) -> None:
    end = end.astype(np.intp)
    length = end - start
    clipped = np.minimum(length, 16)
    both = windows[end].view("<u8").reshape(-1, 2)
    w1 = both[:, 0] & _MASK1[clipped]           # bytes end-16 .. end-9
    w2 = both[:, 1] & _MASK2[clipped]           # bytes end-8 .. end-1
    signed = (first >> 5) & 1                    # '+' or '-' (0x20 bit)
    marks1 = w1 & _MARKS
    marks1 >>= _SHIFT4
    marks2 = w2 & _MARKS
    marks2 >>= _SHIFT4
    # dots + 2 * signs + 8 * others, less the leading sign: 0 (no dot) or 1
    # (one dot) if valid (lanes stay below 256: no carries)
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
    after = marks1.astype(np.intp)
    # The digits with the dot read as a 0: a = ip * 10^(f+1) + fraction, and
    # the mantissa is ip * 10^f + fraction = a - 9 * ip * 10^f. In float64, all
    # exact below 2^53 (so is the floor of a / 10^(f+1): its quotient never
    # rounds up to the next integer).
    digits8 = _eight_digits(w1)
    digits8 *= U64(100_000_000)
    digits8 += _eight_digits(w2)
    a = digits8.astype(np.float64)
    ip = a / _ABOVE[after]
    np.floor(ip, out=ip)
    ip *= _BELOW[after]
    ip *= 9.0
    a -= ip
    after += (first == MINUS) * _NEGATIVE
    np.divide(a, _DIVISORS[after], out=values)
    # All of the token in the window, at least one digit and at most 15 (below
    # 2^53), nothing else but one dot and a leading sign.
    digits = length - signed
    digits -= marks1 != 0
    np.greater_equal(digits, 1, out=exact)
    exact &= digits <= 15
    exact &= length <= 16
    exact &= count <= U64(1)
    exact &= digits8 < _EXACT
