# SPDX-License-Identifier: GPL-3.0-or-later
"""Decimal tokens to numbers with numpy's own text parser (``np.fromstring``),
bit for bit as Python's ``float()`` reads them: :func:`parse_decimals`.

The tokens are given as byte codes (``swar.CODES``: a digit is its value, the
point and the signs have codes of their own, every other byte of a word is
``OTHER`` or above) with their offsets. Tokens of the form ``[+-]digits[.digits]``
are checked with a few passes of numpy over the codes, written back as text
with everything else blanked out, and converted by one ``np.fromstring`` call
(which rounds correctly, as ``float()`` does). Other tokens (with an
exponent, ``1_0``, ``1.#QNAN0``, names) are reported as not converted: the
caller reads those with ``float()`` itself, or reports them.
"""
from __future__ import annotations

import numpy as np

from .swar import MINUS, OTHER, PLUS, POINT

__all__ = ["parse_decimals"]

# code -> the character back (a blank for anything else), and its count in a token,
# packed in 16-bit fields: digits, points, signs, anything else (_END: past the token)
_END = 0xFF
_TEXT = np.full(256, ord(" "), dtype=np.uint8)
_COUNT = np.full(256, 1 << 48, dtype=np.uint64)
_COUNT[_END] = 0
for _d in range(10):
    _TEXT[_d], _COUNT[_d] = 48 + _d, 1
for _code, _char, _field in ((POINT, ".", 16), (PLUS, "+", 32), (MINUS, "-", 32)):
    _TEXT[_code], _COUNT[_code] = ord(_char), 1 << _field
_FIELD = np.uint64(0xFFFF)
_LONGEST = 64                   # longer tokens are left to the caller (no number is written so long)
_STEP = 16384                   # tokens at a time: the temporaries stay small
_EXACT_INT = 2 ** 53


def parse_decimals(codes: np.ndarray, starts: np.ndarray, ends: np.ndarray, integers: bool = False):
    """``(values, done)`` for the tokens ``codes[starts[i]:ends[i]]`` (non-empty).

    ``codes`` is the text translated with ``swar.CODES`` (a uint8 array).
    ``done[i]``: ``values[i]`` is ``float()`` of token ``i``, bit for bit
    (float64) and finite; elsewhere ``values[i]`` is undefined. With
    ``integers``, only ``[+-]digits`` below 2**53 are converted, to int64.
    """
    n = len(starts)
    values = np.zeros(n, dtype=np.int64 if integers else np.float64)
    done = np.zeros(n, dtype=bool)
    numbers = np.flatnonzero(codes[starts] < OTHER)       # (a number starts with a digit, '.' or a sign)
    for a in range(0, len(numbers), _STEP):
        at = numbers[a:a + _STEP]
        values[at], done[at] = _tokens(codes, starts[at], ends[at], integers)
    return values, done


def _tokens(codes, starts, ends, integers: bool):
    """``parse_decimals`` of some tokens, as a table of their codes, one row each."""
    length = ends - starts
    width = min(int(length.max()), _LONGEST)
    table = codes[np.minimum(starts[:, None] + np.arange(width), len(codes) - 1)]
    table[np.arange(width) >= length[:, None]] = _END
    counts = _COUNT[table].sum(axis=1, dtype=np.uint64)  # (fields never borrow: each is at most the length)
    digits = counts & _FIELD
    counts >>= np.uint64(16)
    points = counts & _FIELD
    counts >>= np.uint64(16)
    signs = counts & _FIELD
    counts >>= np.uint64(16)
    done = (digits >= 1) & (counts == 0) & (points <= (0 if integers else 1)) & (length <= width)
    done &= (signs == 0) | ((signs == 1) & (table[:, 0] >= PLUS))     # a sign, first only
    if integers:
        done &= digits <= 16
    text = np.full((len(table), width + 1), ord(" "), dtype=np.uint8)
    text[:, :width] = _TEXT[table]
    text[~done] = ord(" ")
    values = np.zeros(len(table), dtype=np.int64 if integers else np.float64)
    if done.any():
        got = np.fromstring(text.tobytes(), dtype=values.dtype, sep=" ")   # noqa: NPY201
        if len(got) != np.count_nonzero(done):     # (cannot happen: every row left is a number)
            raise AssertionError(f"np.fromstring read {len(got)} numbers of {np.count_nonzero(done)}")
        values[done] = got
        done[done] = np.abs(got) < _EXACT_INT if integers else np.isfinite(got)   # (no overflow to inf)
    return values, done
