# SPDX-License-Identifier: GPL-3.0-or-later
"""Decimals of up to 19 significant digits: ``[+-]digits[.digits]``, and integers.

The point is found eight bytes at a time; each run of digits is validated and
turned into an integer eight digits per word; the decimal ``w * 10**q``
becomes the correctly rounded double in :mod:`.binary64`. Not converted:
other forms (an exponent, for one: those few are ``float()``'s), more than 19
significant digits, an undecidable rounding.
"""
from __future__ import annotations

import numpy as np

from .binary64 import to_float64
from .swar import FIRST, HIGH_BITS, KEEP, LANES, MINUS, PLUS, POINT, U, eight_digits

_DIGIT_ADD = U(0x7676767676767676)        # code + 0x76 >= 0x80 <=> not a digit
_POW10 = np.array([10 ** k for k in range(20)], dtype=np.uint64)
_EXACT_INT = U(1 << 53)


def general_decimals(codes: np.ndarray, words: np.ndarray, starts: np.ndarray, ends: np.ndarray,
                     first: np.ndarray):
    """``(values, done)`` for the tokens ``codes[starts:ends]`` (``first``: their
    first codes, ``words``: the uint64 at every code)."""
    neg = first == MINUS
    body = starts + (neg | (first == PLUS))
    dot = _find(words, body, ends)
    w, q, bad = _mantissa(codes, words, body, dot, ends)
    return to_float64(w, q, neg), ~bad


def general_integers(words: np.ndarray, starts: np.ndarray, ends: np.ndarray, first: np.ndarray):
    """``(values, done)``: the tokens ``[+-]digits`` below 2**53 as int64."""
    neg = first == MINUS
    n = ends - starts - (neg | (first == PLUS))
    lo, hi = int(n.min(initial=1)), int(n.max(initial=0))
    run = n if lo >= 1 and hi <= 19 else np.clip(n, 0, 19)
    value, bad = _digits(words, ends, run, min(hi, 19), max(lo, 0))
    done = ~bad
    if lo < 1 or hi > 15:                               # (16 digits and more may reach 2**53)
        done &= (n >= 1) & (n <= 19) & (value < _EXACT_INT)
    value = value.view(np.int64)
    if neg.any():
        np.negative(value, out=value, where=neg)
    return value, done


def _find(words, start, end):
    """Position of the first point in each token ``[start, end)``, looked for in
    its first 32 bytes (a point beyond is after too many digits); ``end`` where
    there is none."""
    pattern = U(POINT * 0x0101010101010101)
    out = end.copy()
    todo = None                                         # None: every token
    for k in range(4):
        p = start + 8 * k if todo is None else start[todo] + 8 * k
        left = end - p if todo is None else end[todo] - p
        w = words[p]
        w ^= pattern                                    # a match -> a zero byte
        w |= ~FIRST[np.minimum(left, 8)]              # bytes past the token never match
        z = w - LANES
        z &= ~w
        z &= HIGH_BITS                                 # the lowest flagged byte is a true zero
        hit = z != 0
        if todo is None and hit.all():                 # (the usual case: all found in the first word)
            z &= ~z + U(1)
            return p + (((z.astype(np.float64).view(np.int64) >> 52) - (1023 + 7)) >> 3)
        if hit.any():
            z = z[hit]
            z &= ~z + U(1)                             # lowest set bit: 8 * byte + 7
            at = p[hit] + (((z.astype(np.float64).view(np.int64) >> 52) - (1023 + 7)) >> 3)
            out[np.flatnonzero(hit) if todo is None else todo[hit]] = at
        more = ~hit & (left > 8)
        todo = np.flatnonzero(more) if todo is None else todo[more]
        if not len(todo):
            break
    return out


def _mantissa(codes, words, body, dot, end):
    """``(w, q, bad)``: tokens ``digits[.digits]`` (the point at ``dot``, none
    where ``dot >= end``) as ``w * 10**q``; ``bad`` where that is not their form
    or they have more than 19 significant digits."""
    has_dot = dot < end
    if has_dot.all():
        n_int = dot - body
        n_frac = end - dot - 1
    else:
        n_int = np.minimum(dot, end) - body
        n_frac = np.where(has_dot, end - dot - 1, 0)
    bad = (n_int + n_frac < 1) | (n_frac > 24) | (n_int > 19)
    n_int = np.minimum(n_int, 19)
    n_frac = np.minimum(n_frac, 24)
    if int(n_int.max(initial=0)) <= 1:                     # (the usual '0.123', '-4.5')
        vi = codes[body]
        bad |= (n_int == 1) & (vi > 9)
        vi = np.where(n_int == 1, vi, 0).astype(np.uint64)
    else:
        vi, bad_i = _digits(words, np.minimum(dot, end), n_int, int(n_int.max()))
        bad |= bad_i
    vf, bad_f = _digits(words, end, n_frac, int(n_frac.max(initial=0)))
    bad |= bad_f
    bad |= (n_int + n_frac > 19) & (vi != U(0))         # more than 19 significant digits
    w = vi * _POW10[np.minimum(n_frac, 19)] + vf
    return w, -n_frac, bad


def _digits(words, end, n, max_n: int, n_min: int | None = None):
    """Value of the ``n`` (0..24) characters before ``end`` read as decimal digits
    (uint64), and where they are not all digits. Runs of 17 to 24 digits must
    have a value below 10**19 (else flagged): it is kept in a uint64."""
    value = acc = None
    if n_min is None:
        n_min = int(n.min(initial=0))
    for k in range(max(1, (max_n + 7) // 8)):
        t = words[end - 8 * (k + 1)]
        if n_min < 8 * (k + 1):               # some runs do not fill this word: zero what precedes them
            if k == 0:
                valid = n if max_n <= 8 else np.minimum(n, 8)
            else:
                valid = np.minimum(np.maximum(n - 8 * k, 0), 8)
            t &= KEEP[valid]
        a = t + _DIGIT_ADD                    # byte >= 10 -> high bit set
        a |= t
        acc = a if acc is None else acc | a
        eight_digits(t)
        if k == 0:
            value = t
        else:
            if k == 2:
                acc |= (t >= U(1000)).view(np.uint8).astype(np.uint64) << U(7)   # keep below 10**19
            t *= _POW10[8 * k]
            value += t
    return value, (acc & HIGH_BITS) != U(0)
