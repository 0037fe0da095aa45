# SPDX-License-Identifier: GPL-3.0-or-later
"""Short decimals in one step: ``[+-]digits[.digits]`` of at most 16 bytes and
15 digits, the usual spelling of text .X files (``-0.123456``).

The 16 bytes that end a token are two words; their marks (the point, signs,
anything else) are counted and the point located with a few multiplications,
and the digits, the point read as a 0, are one integer ``a = i * 10**(f + 1)
+ r`` (``i`` the digits before the point, ``r`` the ``f`` after). The
mantissa ``i * 10**f + r = a - 9 * i * 10**f`` and everything before it are
integers below 2**53, exact in float64 (``i`` is the floor of ``a / 10**(f +
1)``, whose quotient never rounds up to the next integer), so the one
rounding is the final division by ``10**f``: the result is ``float()``'s.
"""
from __future__ import annotations

import numpy as np

from .swar import LANES, MINUS, PLUS, U, eight_digits

_ALL = (1 << 64) - 1
# the last max(L - 8, 0) bytes of the first word and the last min(L, 8) of the
# second (L: the token's length)
_MASK1 = np.array([_ALL ^ ((1 << (8 * (8 - max(n - 8, 0)))) - 1) for n in range(17)], dtype=np.uint64)
_MASK2 = np.array([_ALL ^ ((1 << (8 * (8 - min(n, 8)))) - 1) for n in range(17)], dtype=np.uint64)
_MARKS = U(0xB0B0B0B0B0B0B0B0)  # >> 4, per byte: point 1, sign 2, other 8 or more (0 for digits)
_LOW = U(0x0F0F0F0F0F0F0F0F)
# a point in byte k of a word -> top byte: digits after it + 1
_AFTER1 = U(int.from_bytes(bytes(range(9, 17)), "little"))   # first word: 16 - k
_AFTER2 = U(int.from_bytes(bytes(range(1, 9)), "little"))    # second word: 8 - k
# by digits after the point + 1 (0: no point; up to 255 with several points, which
# makes the token no number anyway): 10**(f + 1) (10**17 > every 16-digit value: no
# integer part to move), 10**f, and the divisor (negated from 256 on: -(m / 10**f)
# == m / -10**f)
_ABOVE = np.array([1e17] + [10.0 ** min(k, 17) for k in range(1, 256)])
_BELOW = np.array([0.0] + [10.0 ** min(k - 1, 16) for k in range(1, 256)])
_DIVISORS = np.array([1.0] + [10.0 ** (k - 1) for k in range(1, 256)])
_DIVISORS = np.concatenate([_DIVISORS, -_DIVISORS])
_NEGATIVE = 256
_EXACT = U(1 << 53)


def short_decimals(codes: np.ndarray, starts: np.ndarray, ends: np.ndarray, first: np.ndarray):
    """``(values, done, point)`` for the tokens ``codes[starts:ends]`` (``first``:
    their first codes; 16 codes before each end readable). ``done`` marks the
    tokens of the form above, ``point`` the ones with a point."""
    windows = np.ndarray((len(codes) - 15,), "V16", codes, 0, (1,))
    length = ends - starts
    clipped = np.minimum(length, 16)
    both = windows[ends - 16].view("<u8").reshape(-1, 2)
    w1 = both[:, 0] & _MASK1[clipped]           # codes end-16 .. end-9
    w2 = both[:, 1] & _MASK2[clipped]           # codes end-8 .. end-1
    signed = (first == PLUS) | (first == MINUS)
    marks1 = w1 & _MARKS
    marks1 >>= U(4)
    marks2 = w2 & _MARKS
    marks2 >>= U(4)
    # points + 2 * signs + 8 * others, less the leading sign: 0 (no point) or 1
    # (one point) if valid (lanes stay below 256: no carries)
    count = marks1 + marks2
    count *= LANES
    count >>= U(56)
    count -= signed.astype(np.uint64) << U(1)
    # digits after the point + 1 (0 without a point): the lane of the point, weighted
    marks1 &= LANES
    marks1 *= _AFTER1
    marks1 >>= U(56)
    marks2 &= LANES
    marks2 *= _AFTER2
    marks2 >>= U(56)
    marks1 += marks2
    after = marks1.astype(np.intp)
    w1 &= _LOW                                   # (a point or sign reads as 0)
    w2 &= _LOW
    value = eight_digits(w1)
    value *= U(100_000_000)
    value += eight_digits(w2)
    a = value.astype(np.float64)
    i = a / _ABOVE[after]
    np.floor(i, out=i)
    i *= _BELOW[after]
    i *= 9.0
    a -= i
    after += (first == MINUS) * _NEGATIVE
    a /= _DIVISORS[after]
    # all of the token in the window, at least one digit and at most 15 (below
    # 2**53), nothing else but one point and a leading sign
    digits = length - signed
    point = marks1 != U(0)
    digits -= point
    done = digits >= 1
    done &= digits <= 15
    done &= length <= 16
    done &= count <= U(1)
    done &= value < _EXACT
    return a, done, point
