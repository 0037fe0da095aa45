# SPDX-License-Identifier: GPL-3.0-or-later
"""Shortest decimal digits of float64 arrays, vectorised with numpy.

:func:`shortest` gives, for each positive normal double ``v``, the decimal
``d * 10**k`` that Python's ``repr`` writes: the shortest one that reads back
as ``v`` and, of those, the nearest to ``v``. ``d`` keeps 16 or 17 digits
(trailing zeros are not removed: the shortest digits are ``d`` without them).

The decision is Giulietti's Schubfach ("The Schubfach way to render doubles",
2020, as in Java's ``DoubleToDecimal``): with ``k`` such that ``V = v *
10**-k`` has 16 or 17 digits before the point, and the interval of reals that
round to ``v`` scaled the same way, the result is the multiple of 10 next to
``V`` that is in the interval if exactly one of the two is, else ``s =
floor(V)`` or ``s + 1`` if exactly one is in, else the nearer of the two.
It has two implementations:

* :func:`_near`, in double-double arithmetic (Dekker's exact product of ``v``
  and the leading double of ``10**-k``, plus the rest): its errors are
  bounded (below 2**-45), and a lane is decided only where no test is that
  close to its threshold. Lanes whose ``V`` has few fractional bits (small
  integers, halves, float32 values: ties between candidates are possible
  there) are done again on that grid (:func:`_dyadic`), which is exact;
* :func:`_exact`, Java's ``toDecimal``: ``10**-k`` as a 126-bit
  over-approximation, 64 x 128-bit products rounded to odd, emulated with
  32-bit limbs in uint64 lanes (the value and the interval's ends share their
  limb products, differing by the exact ``g * 2**h`` or ``g * 2**(h + 1)``),
  for what is left: magnitudes beyond 2**±900 and lanes :func:`_near` could
  not decide.

A lane exactly halfway between ``s`` and ``s + 1`` is flagged (``d`` is then
the even one, as ``repr``'s; the caller may ask Python). Zeros, subnormals,
infinities and nan are not handled here.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

_U = np.uint64
_K_MIN, _K_MAX = -324, 292              # the decimal scales of all doubles
_M32 = _U(0xFFFFFFFF)
_M63 = _U((1 << 63) - 1)
_S32 = _U(32)


def _flog10pow2(q):
    """floor(q * log10(2))."""
    return (q * 661971961083) >> 41


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


def _pow10_table():
    """10**-k as a double-double ``hi + lo``, for the k of the fast path; else 1."""
    rows = []
    for k in range(_K_MIN, _K_MAX + 1):
        if _NEAR_K[0] <= k <= _NEAR_K[1]:
            exact = Fraction(10) ** -k
            hi = float(exact)
            rows.append((hi, float(exact - Fraction(hi))))
        else:
            rows.append((1.0, 0.0))
    return np.array(rows, dtype=np.float64).T.copy()


# the fast path takes 2**-900 <= v < 2**900 (biased exponents 123..1922): no overflow nor
# underflow in its products and splits, and 10**-k is a normal double
_NEAR_BQ = (123, 1922)
_NEAR_K = (_flog10pow2(_NEAR_BQ[0] - 1075 - 1), _flog10pow2(_NEAR_BQ[1] - 1075))
_P10_H, _P10_L = _pow10_table()
_MARGIN = 2.0 ** -40                    # the fast path's errors stay below 2**-45


def mul128(a, b_lo, b_hi):
    """(low, high) 64-bit halves of a * b for uint64 arrays ``a`` and
    b = b_hi * 2**32 + b_lo (32-bit limbs; shared with the RAM reader's
    decimal -> binary conversion)."""
    a_lo = a & _M32
    a_hi = a >> _S32
    ll = a_lo * b_lo
    lh = a_lo * b_hi
    hl = a_hi * b_lo
    hh = a_hi * b_hi
    mid = ll >> _S32
    mid += lh & _M32
    mid += hl & _M32
    ll &= _M32
    lo = ll | (mid << _S32)
    lh >>= _S32
    hl >>= _S32
    mid >>= _S32
    hh += lh
    hh += hl
    hh += mid
    return lo, hh


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
    low, high = (int(bq.min()), int(bq.max())) if len(bq) else (1023, 1023)
    if low == 1:
        irr[bq == 1] = 0                           # (but 2**-1022: its lower neighbour is as near)
    k = bq - 1075
    k *= 661971961083
    k -= irr * 274743187321
    k >>= 41
    if low < _NEAR_BQ[0] or high > _NEAR_BQ[1]:
        far = (bq < _NEAR_BQ[0]) | (bq > _NEAR_BQ[1])
        near_x = np.where(far, 1.0, x)             # stand-ins: no overflow, no nan
        d, sure, tie = _near(near_x, np.where(far, 1023, bq), np.where(far, 0, irr), np.where(far, 0, k))
        sure &= ~far
    else:
        d, sure, tie = _near(x, bq, irr, k)
    redo = np.flatnonzero(~sure)
    if len(redo):
        again, scale = _dyadic(x[redo], bq[redo], k[redo])
        again = redo[again]
        if len(again):
            d[again], sure[again], tie[again] = _near(x[again], bq[again], irr[again], k[again], scale)
            redo = np.flatnonzero(~sure)
    if len(redo):
        d[redo], tie[redo] = _exact(x[redo], bq[redo], irr[redo], k[redo])
    return d, k, tie


def _near(x, bq, irr, k, scale=None):
    """(d, sure, tie): the digits from double-double arithmetic; ``sure`` where they are certain.

    ``V = x * 10**-k`` (between 2**52 and 10 * 2**53) is ``p + r``: ``p`` the
    rounded product with ``hi`` (an integer), ``r`` Dekker's exact error of it
    plus ``x * lo``; ``|V - p - r| <= 2**-104 V < 2**-47``. With ``s`` its
    integer part and ``f`` its fraction, and ``u`` = half the spacing of
    doubles at ``x`` scaled the same way (``ul`` = ``u / 2`` below a power
    of two), Schubfach's tests read: ``s`` is in the rounding interval when
    ``f < ul``, ``s + 1`` when ``1 - f < u``, ``sp10 = s - m`` (``m = s mod
    10``) when ``m + f < ul``, ``sp10 + 10`` when ``10 - m - f < u``; the
    nearer of ``s``, ``s + 1`` is ``s`` when ``f < 1/2``. A lane is sure when
    every such difference, and ``f`` and ``1 - f`` (for ``s`` itself), are
    more than ``_MARGIN`` from 0: then the errors cannot change a test, and
    whether an end of the interval belongs to it does not matter.

    With ``scale`` the lanes are known to have ``V * scale`` whole (see
    :func:`_dyadic`: small integers, halves, most float32 values above a
    few hundred): ``V`` is ``p + r`` rounded to that, so ``f`` is exact, and
    a lane with ``f`` = 1/2 between two candidates is a tie.
    """
    i = k - _K_MIN
    h, lo = _P10_H[i], _P10_L[i]
    c = h * 134217729.0                           # Veltkamp's splits of h and x
    hh = c - (c - h)
    hl = h - hh
    c = x * 134217729.0
    xh = c - (c - x)
    xl = x - xh
    p = x * h
    r = xh * hh - p                               # Dekker: p + r = x * h exactly
    r += xh * hl
    r += xl * hh
    r += xl * hl
    r += x * lo
    if scale is not None:
        r *= scale
        np.rint(r, out=r)
        r /= scale
    f = np.floor(r)
    s = p.astype(np.int64) + f.astype(np.int64)
    f = r - f
    low = np.ones_like(r) if scale is not None else np.minimum(f, 1.0 - f)
    half = (bq - 53) << 52
    u = half.view(np.float64) * h                 # 2**(q-1) * 10**-k
    half -= irr << 52
    ul = half.view(np.float64) * h                # the same, halved below a power of two
    m = s - (s // 10) * 10
    fm = m.astype(np.float64)
    fm += f
    d_u = f - ul                                  # < 0: s is in
    d_w = (1.0 - f) - u                           # < 0: s + 1 is in
    d_up = fm - ul                                # < 0: sp10 is in
    d_wp = (10.0 - fm) - u                        # < 0: sp10 + 10 is in
    d_h = f - 0.5                                 # > 0: s + 1 is nearer
    for t in (d_u, d_w, d_up, d_wp) if scale is not None else (d_u, d_w, d_up, d_wp, d_h):
        np.minimum(low, np.abs(t), out=low)
    sure = low > _MARGIN
    sure &= p >= 2.0 ** 52
    win = d_w < 0
    wpin = d_wp < 0
    one = (d_u < 0) != win
    ten = (d_up < 0) != wpin
    tie = d_h == 0
    up = (d_h > 0) | (tie & (s & 1).astype(bool))
    up &= ~one
    up |= one & win                               # s + 1 (else s) ...
    up &= ~ten
    tie &= ~(one | ten)
    d = s + up.astype(np.int64)
    m *= ten.astype(np.int64)
    d -= m                                        # ... or sp10, sp10 + 10
    d += (ten & wpin).astype(np.int64) * 10
    return d.view(np.uint64), sure, tie


def _dyadic(x, bq, k):
    """(lanes, scale): where ``V = x * 10**-k`` times ``scale`` (a power of two up to 2**30) is whole.

    ``V = c * 5**-k * 2**(q - k)`` for ``k <= 0``: a multiple of ``2**-j``
    when ``c`` has at least ``k - q - j`` trailing zero bits.
    """
    low_bit = x.view(np.uint64) | _U(1 << 52)
    low_bit &= _U(0) - low_bit
    zeros = (low_bit.astype(np.float64).view(np.int64) >> 52) - 1023    # trailing zero bits of c
    j = np.maximum(k - (bq - 1075) - zeros, 0)
    lanes = np.flatnonzero((k <= 0) & (j <= 30) & (bq >= _NEAR_BQ[0]) & (bq <= _NEAR_BQ[1]))
    return lanes, ((j[lanes] + 1023) << 52).view(np.float64)


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
