# SPDX-License-Identifier: GPL-3.0-or-later
"""Decimal tokens to numbers, bit for bit as Python's ``float()`` reads them,
vectorised with numpy: :func:`parse_decimals` is the one entry point.

Why by hand: the RAM reader and the text .X tokenizer convert every number
of a file here, in a few numpy passes. numpy's own text parser
(``np.fromstring``, one C call per number: ``plain.py``, the benchmarks'
``--numerics plain``) reads the same values bit for bit but takes 2 to 4
times as long, and the RiTE import and the .X parse then miss their targets
(``docs/benchmarks.md``, "Numerics": 2.00 and 2.67 against 0.98 and 0.73).

How: the text is translated to byte codes (``CODES``), read as the
little-endian 64-bit words that start at every byte (SWAR: eight bytes per
integer operation). Tokens of at most 16 bytes take :mod:`.short` (one exact
division); the others :mod:`.general` (runs of digits eight at a time, then
``w * 10**q`` correctly rounded, the Eisel-Lemire algorithm, in
:mod:`.binary64`). Tokens of any other form (with an exponent, for one) or of
more than 19 significant digits are reported as not converted: the caller
reads those with ``float()`` itself (or reports them), so the result is
always ``float()``'s.
"""
from __future__ import annotations

import os

import numpy as np

from .general import general_decimals, general_integers
from .short import short_decimals
from .swar import CODES, OTHER, words_of

__all__ = ["CODES", "PAD", "parse_decimals"]

#: Codes of any value a buffer must hold before its first token and after its last.
PAD = 40


def parse_decimals(codes: np.ndarray, starts: np.ndarray, ends: np.ndarray, integers: bool = False):
    """``(values, done)`` for the tokens ``codes[starts[i]:ends[i]]`` (non-empty).

    ``codes`` is the text translated with ``CODES`` (a uint8 array), with at
    least ``PAD`` codes before the first token and after the last.
    ``done[i]``: ``values[i]`` is ``float()`` of token ``i``, bit for bit
    (float64); elsewhere ``values[i]`` is undefined. With ``integers``, only
    ``[+-]digits`` below 2**53 are converted, to int64.
    """
    words = words_of(codes)
    n = len(starts)
    values = np.empty(n, dtype=np.int64 if integers else np.float64)
    done = np.empty(n, dtype=bool)
    for a in range(0, n, _STEP):
        s, e = starts[a:a + _STEP], ends[a:a + _STEP]
        first = codes[s]
        if integers:
            values[a:a + _STEP], done[a:a + _STEP] = general_integers(words, s, e, first)
        else:
            values[a:a + _STEP], done[a:a + _STEP] = _decimals(codes, words, s, e, first)
    return values, done


_STEP = 16384   # tokens at a time: the temporaries stay small (fresh memory is slow to fill)


def _decimals(codes, words, starts, ends, first):
    """The short path for every token when most are short (the others are left
    for the general path), else the general path for all."""
    if 2 * np.count_nonzero(ends - starts <= 16) < len(starts):
        return general_decimals(codes, words, starts, ends, first)
    values, done, _ = short_decimals(codes, starts, ends, first)
    rest = np.flatnonzero(~done & (first < OTHER))    # (a number starts with a digit, '.' or a sign)
    if len(rest):
        values[rest], done[rest] = general_decimals(codes, words, starts[rest], ends[rest], first[rest])
    return values, done


if os.environ.get("LSIO_PLAIN_NUMERICS"):      # bench/run_all.py --numerics plain: numpy's own parser
    from .plain import parse_decimals  # noqa: F811
