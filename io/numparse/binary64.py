# SPDX-License-Identifier: GPL-3.0-or-later
"""``w * 10**q`` (uint64 ``w`` below 10**19, ``-24 <= q <= 0``, the decimals of
:mod:`.general`) to the correctly rounded float64.

Exact when ``w`` and ``10**-q`` are both exact doubles (``w < 2**53``, ``q >=
-22``): one division, correctly rounded by IEEE. Otherwise the Eisel-Lemire
algorithm (Lemire, "Number Parsing at a Gigabyte per Second", 2021, as in
fast_float and Rust's core library) on 128-bit products, which for ``-27 <= q
<= 55`` always decides the rounding (and no result is subnormal or infinite).
"""
from __future__ import annotations

import numpy as np

from ..uint128 import mul128

_U = np.uint64
_ONE = _U(1)
_M32 = _U(0xFFFFFFFF)
_S32 = _U(32)
_Q_MIN = -24


def _power5_table():
    """5**q normalised to 128 bits (rounded up for q < 0), q = -24..0, as Eisel-Lemire uses them."""
    hi_lo, hi_hi, lo = [], [], []
    for q in range(_Q_MIN, 1):
        p5 = 5 ** -q
        c = (1 << (p5.bit_length() + 127)) // p5 + 1 if q else 1 << 127
        hi_lo.append((c >> 64) & 0xFFFFFFFF)
        hi_hi.append(c >> 96)
        lo.append(c & ((1 << 64) - 1))
    return (np.array(hi_lo, dtype=np.uint64), np.array(hi_hi, dtype=np.uint64),
            np.array(lo, dtype=np.uint64))


_P5_HI_LO, _P5_HI_HI, _P5_LO = _power5_table()
# binary exponent base per q: floor(log2(10**q)) + 63 + 1023
_POW2_BASE = np.array([(((152170 + 65536) * q) >> 16) + 63 + 1023 for q in range(_Q_MIN, 1)], dtype=np.int64)
_POW10 = np.array([10.0 ** -q for q in range(_Q_MIN, 1)])     # exact from q = -22 on


def to_float64(w: np.ndarray, q: np.ndarray, neg: np.ndarray) -> np.ndarray:
    """``(-1)**neg * w * 10**q``, correctly rounded."""
    exact = (w >> _U(53)) == _U(0)
    exact &= q >= -22
    exact |= w == _U(0)
    if exact.all():
        out = w.astype(np.float64)
        out /= _POW10[q - _Q_MIN]
    else:
        out = np.empty(len(w), dtype=np.float64)
        i = np.flatnonzero(exact)
        out[i] = w[i].astype(np.float64) / _POW10[q[i] - _Q_MIN]
        i = np.flatnonzero(~exact)
        out[i] = _eisel_lemire(w[i], q[i]).view(np.float64)
    sign = out.view(np.uint64)
    sign |= neg.astype(np.uint64) << _U(63)       # -0.0 for a negative zero
    return out


def _eisel_lemire(w: np.ndarray, q: np.ndarray) -> np.ndarray:
    """IEEE binary64 bits of ``w * 10**q`` (0 < w < 10**19)."""
    lz = 1086 - (w.astype(np.float64).view(np.int64) >> 52)   # leading zeros (float may round up)
    wn = w << lz.view(np.uint64)
    short = (wn >> _U(63)) == _U(0)
    if short.any():
        lz += short
        wn <<= short.astype(np.uint64)
    idx = q - _Q_MIN
    lo, hi = mul128(wn, _P5_HI_LO[idx], _P5_HI_HI[idx])
    need = np.flatnonzero((hi & _U(0x1FF)) == _U(0x1FF))
    if len(need):
        b = _P5_LO[idx[need]]
        _, hi2 = mul128(wn[need], b & _M32, b >> _S32)
        low = lo[need] + hi2
        lo[need] = low
        hi[need] += (hi2 > low).astype(np.uint64)
    upper = hi >> _U(63)
    shift = upper + _U(9)
    mant = hi >> shift
    power2 = _POW2_BASE[idx] + upper.view(np.int64) - lz
    tie = np.flatnonzero(lo <= _ONE)
    if len(tie):
        qt, mt = q[tie], mant[tie]
        even = (qt >= -4) & ((mt & _U(3)) == _ONE) & ((mt << shift[tie]) == hi[tie])
        mant[tie[even]] &= ~_ONE
    mant += mant & _ONE
    mant >>= _ONE
    carry = mant >= _U(2 << 52)
    if carry.any():
        mant[carry] = _U(1 << 52)
        power2 += carry
    bits = (power2 - 1).view(np.uint64) << _U(52)
    bits += mant                                   # mant carries the implicit bit: + 1 on the exponent
    return bits
