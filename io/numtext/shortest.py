# SPDX-License-Identifier: GPL-3.0-or-later
"""Shortest decimal digits of float64 arrays, vectorised with numpy.

:func:`shortest` gives, for each positive normal double ``v``, the decimal
``d * 10**k`` that Python's ``repr`` writes: the shortest one that reads back
as ``v`` and, of those, the nearest to ``v``. ``d`` keeps 16 or 17 digits
(trailing zeros are not removed: the shortest digits are ``d`` without them).

The decision is Giulietti's Schubfach ("The Schubfach way to render doubles",
2020), as Java's ``DoubleToDecimal.toDecimal`` computes it: with ``k`` such
that ``V = v * 10**-k`` has 16 or 17 digits before the point, and the
interval of reals that round to ``v`` scaled the same way, the result is the
multiple of 10 next to ``V`` that is in the interval if exactly one of the two
is, else ``s = floor(V)`` or ``s + 1`` if exactly one is in, else the nearer
of the two. ``10**-k`` is a 126-bit over-approximation; the products are 64 x
128-bit, rounded to odd, in 32-bit limbs of uint64 lanes (the value and the
interval's ends share their limb products, differing by the exact ``g *
2**h`` or ``g * 2**(h + 1)``).

A lane exactly halfway between ``s`` and ``s + 1`` is flagged (``d`` is then
the even one, as ``repr``'s; the caller may ask Python). Zeros, subnormals,
infinities and nan are not handled here.
"""
from __future__ import annotations

import numpy as np

from ..uint128 import mul128

_U = np.uint64
_K_MIN, _K_MAX = -324, 292              # the decimal scales of all doubles
_M32 = _U(0xFFFFFFFF)
_M63 = _U((1 << 63) - 1)
_S32 = _U(32)


def _flog2pow10(e):
    """floor(e * log2(10))."""
    return (e * 913124641741) >> 38


def _g_table():
    """g = floor(10**-k * 2**(125 - flog2pow10(-k))) + 1 as (g1, g0) = (g >> 63, g mod 2**63), per k."""
    g1, g0 = [], []
    for k in range(_K_MIN, _K_MAX + 1):
        r = 125 - _flog2pow10(-k)
        if k <= 0:
            beta = 10 ** -k << r if r >= 0 else 10 ** -k >> -r
        else:
            beta = (1 << r) // 10 ** k
        assert 1 << 125 <= beta < 1 << 126
        g = beta + 1
        g1.append(g >> 63)
        g0.append(g & ((1 << 63) - 1))
    return np.array(g1, dtype=np.uint64), np.array(g0, dtype=np.uint64)


_G1, _G0 = _g_table()


def _mul128(a, b):
    """(low, high) 64-bit halves of the product of uint64 arrays a and b."""
    return mul128(a, b & _M32, b >> _S32)


def _minus_shifted(lo, hi, g, sh):
    """(low, high) of the 128-bit ``hi * 2**64 + lo - g * 2**sh`` (0 < sh < 64, no underflow)."""
    s_lo = g << sh
    s_hi = g >> (_U(64) - sh)
    new_lo = lo - s_lo
    return new_lo, hi - s_hi - (new_lo > lo)


def _plus_shifted(lo, hi, g, sh):
    """(low, high) of the 128-bit ``hi * 2**64 + lo + g * 2**sh`` (0 < sh < 64)."""
    s_lo = g << sh
    s_hi = g >> (_U(64) - sh)
    new_lo = lo + s_lo
    return new_lo, hi + s_hi + (new_lo < lo)


def _rop(x1, y0, y1):
    """Java's ``rop`` from the limbs of g0 * cp (high ``x1``) and g1 * cp (``y1 * 2**64 + y0``)."""
    z = (y0 >> _U(1)) + x1
    vbp = y1 + (z >> _U(63))
    return vbp | (((z & _M63) + _M63) >> _U(63))


def shortest(x: np.ndarray):
    """(d, k, tie) for positive normal float64 ``x``: ``repr``'s digits ``d * 10**k``.

    ``d`` (uint64) has 16 or 17 digits; ``k`` is int64; ``tie`` marks lanes
    exactly halfway between two candidates (``d`` is then the even one).
    """
    bits = x.view(np.uint64)
    bq = (bits >> _U(52)).view(np.int64)
    irr = ((bits << _U(12)) == _U(0)).view(np.uint8).astype(np.int64)   # a power of two
    if len(bq) and int(bq.min()) == 1:
        irr[bq == 1] = 0                           # (but 2**-1022: its lower neighbour is as near)
    k = bq - 1075
    k *= 661971961083
    k -= irr * 274743187321
    k >>= 41
    d, tie = _exact(x, bq, irr, k)
    return d, k, tie


def _exact(x, bq, irr, k):
    """(d, tie) with 128-bit integer products (Java's ``toDecimal``), for any positive normal ``x``."""
    bits = x.view(np.uint64)
    t = bits & _U((1 << 52) - 1)
    c = t | _U(1 << 52)
    q = bq - 1075
    h = (q + _flog2pow10(-k) + 2).view(np.uint64)
    idx = k - _K_MIN
    g1 = _G1[idx]
    g0 = _G0[idx]
    cp = c << (h + _U(2))
    # value: cb = 4c; ends: cb - 2 (or - 1 for a power of two) and cb + 2, all shifted by h
    a_lo, a_hi = _mul128(g0, cp)
    b_lo, b_hi = _mul128(g1, cp)
    vb = _rop(a_hi, b_lo, b_hi)
    sh = h + _U(1)
    r_alo, r_ahi = _plus_shifted(a_lo, a_hi, g0, sh)
    r_blo, r_bhi = _plus_shifted(b_lo, b_hi, g1, sh)
    vbr = _rop(r_ahi, r_blo, r_bhi)
    shl = sh - irr.view(np.uint64)
    l_alo, l_ahi = _minus_shifted(a_lo, a_hi, g0, shl)
    l_blo, l_bhi = _minus_shifted(b_lo, b_hi, g1, shl)
    vbl = _rop(l_ahi, l_blo, l_bhi)

    out = c & _U(1)
    vbl += out                                     # the ends are in the interval when c is even
    vbr -= out
    s = vb >> _U(2)
    sp10 = (s // _U(10)) * _U(10)
    upin = vbl <= sp10 << _U(2)
    wpin = (sp10 + _U(10)) << _U(2) <= vbr
    uin = vbl <= s << _U(2)
    win = (s + _U(1)) << _U(2) <= vbr
    vb -= s << _U(2)                               # 4 * the fraction of the scaled value: 2 is halfway
    tie = vb == _U(2)
    take_t = (vb > _U(2)) | (tie & (s & _U(1)).astype(bool))
    one = uin != win
    ten = upin != wpin
    # d = sp10 or sp10 + 10 when exactly one of them is in; else s or s + 1 (t)
    step = np.where(one, win, take_t).view(np.uint8).astype(np.uint64)
    d = s + step
    d += ten.view(np.uint8).astype(np.uint64) * (sp10 + wpin.view(np.uint8).astype(np.uint64) * _U(10) - d)
    tie &= ~(one | ten)
    return d, tie
