# SPDX-License-Identifier: GPL-3.0-or-later
"""128-bit products of uint64 arrays (numpy has no wider integer type): the one
piece of arithmetic the decimal reader (:mod:`.numparse`) and the shortest-digits
writer (:mod:`.numtext`) share."""
from __future__ import annotations

import numpy as np

_M32 = np.uint64(0xFFFFFFFF)
_S32 = np.uint64(32)


def mul128(a: np.ndarray, b_lo, b_hi):
    """(low, high) 64-bit halves of ``a * b`` for uint64 arrays ``a`` and
    ``b = b_hi * 2**32 + b_lo`` (``b`` given as its 32-bit limbs)."""
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
