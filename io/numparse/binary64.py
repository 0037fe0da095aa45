# SPDX-License-Identifier: GPL-3.0-or-later
"""``w * 10**q`` (uint64 ``w``, int ``q``) to the correctly rounded float64.

Exact when ``w`` and ``10**|q|`` are both exact doubles (``w < 2**53``,
``|q| <= 22``): one multiplication or division, correctly rounded by IEEE.
Otherwise the Eisel-Lemire algorithm (Lemire, "Number Parsing at a Gigabyte
per Second", 2021, as in fast_float and Rust's core library) on 128-bit
products: it is proven to round correctly or to say that it cannot decide
(and an overflow to infinity is reported too): those lanes are left to the
caller.
"""
from __future__ import annotations

import numpy as np

from ..uint128 import mul128

_U = np.uint64
_ONE = _U(1)
_M32 = _U(0xFFFFFFFF)
_S32 = _U(32)


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


def to_float64(w: np.ndarray, q: np.ndarray, neg: np.ndarray):
    """``(values, decided)``: ``(-1)**neg * w * 10**q`` correctly rounded;
    ``decided`` is None when every lane is, else False where a lane is not."""
    exact = (w >> _U(53)) == _U(0)
    exact &= (q >= -22) & (q <= 22)
    exact |= w == _U(0)
    decided = None
    if exact.all():
        out = _exact(w, q)
    else:
        out = np.empty(len(w), dtype=np.float64)
        i = np.flatnonzero(exact)
        if len(i):
            out[i] = _exact(w[i], q[i])
        i = np.flatnonzero(~exact)
        wi, qi = w[i], q[i]
        live = (qi >= -342) & (qi <= 308)
        bits = np.zeros(len(i), dtype=np.uint64)      # below 10**-342: 0.0
        good = qi <= 308                              # above 10**308: overflow
        b, g = _eisel_lemire(wi[live], qi[live])
        bits[live] = b
        if g is not None:
            good[live] &= g
        out[i] = bits.view(np.float64)
        if not good.all():
            decided = np.ones(len(w), dtype=bool)
            decided[i] = good
    sign = out.view(np.uint64)
    sign |= neg.astype(np.uint64) << _U(63)       # -0.0 for a negative zero
    return out, decided


def _exact(w, q):
    k = np.clip(q, -22, 22) + 22
    out = w.astype(np.float64)
    out *= _MULT[k]
    out /= _DIV[k]
    return out


def _eisel_lemire(w: np.ndarray, q: np.ndarray):
    """IEEE binary64 bits of w * 10**q (w > 0, -342 <= q <= 308); second value: decided (None: all)."""
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
