# SPDX-License-Identifier: GPL-3.0-or-later
"""One text field per row as 64-bit words, vectorised with numpy.

Lane ``i`` of a field is row ``i``; the field is a list of uint64 arrays, word
``w`` holding its characters ``8w .. 8w + 7`` (the first in the lowest byte):
the text, left-aligned, then the byte ``end`` (the separator), then NULs up
to the same number of words in every lane. The callers lay fields out row by
row and delete the NULs.

* :func:`int_words`: ``%d``. Eight decimal digits per word with a few
  multiplications and shifts (SWAR), the leading zeros shifted out; a table
  below 100; a column holding 10**8 or more (no id or count the writers
  write) through ``%d`` itself;
* :func:`float_words`: ``repr``. The digits come from
  :func:`.shortest.shortest`; the point, the sign, ``0.``-prefixes, the
  ``.0`` of whole numbers and the ``e±XX`` of the exponent form are placed
  with per-lane shifts and masks taken from tables indexed by the position
  of the decimal point (positional from ``1e-4`` to below ``1e16``, as
  ``repr``). Subnormals, infinities, nan and digit ties are formatted by
  ``repr`` itself;
* :func:`string_words`: strings picked from a small table.

Shifts of 64 bits or more give 0 in numpy, also for counts that wrapped
around below 0 in uint64: several helpers rely on it to stay branch-free.
"""
from __future__ import annotations

import numpy as np

from .shortest import shortest

_U = np.uint64
_ZEROS = _U(0x3030303030303030)     # "00000000"
_ONE = _U(1)


# -- word helpers -------------------------------------------------------------------

def _shifted(word, pos8, n_words: int) -> list:
    """``word`` (up to 8 bytes) placed at byte ``pos8 // 8`` of an ``n_words``-word string.

    ``pos8`` is a bit position (uint64): shifts of 64 or more give 0, and so
    do the wrapped-around negative ones, which keeps this branch-free.
    """
    out = []
    for w in range(n_words):
        at = pos8 - _U(64 * w)
        part = word << at
        part |= word >> (_U(0) - at)
        out.append(part)
    return out


def _byte_at(char: int, pos8, n_words: int) -> list:
    """The byte ``char`` at bit position ``pos8`` of an ``n_words``-word string (zero elsewhere)."""
    c = _U(char)
    return [c << pos8 if w == 0 else c << (pos8 - _U(64 * w)) for w in range(n_words)]


def _funnel(words: list, s8, n_words: int) -> list:
    """The string ``words`` moved up by ``s8 // 8`` bytes (0..7 per lane), as ``n_words`` words."""
    back = _U(64) - s8
    out = []
    for w in range(n_words):
        part = words[w] << s8 if w < len(words) else None
        if 0 < w <= len(words):
            carry = words[w - 1] >> back
            part = carry if part is None else part | carry
        out.append(part if part is not None else np.zeros_like(s8))
    return out


def _itoa8(v):
    """Eight ASCII digits of each ``v`` < 10**8, zero-padded, first digit in the lowest byte.

    Lanes split in halves: ``v`` into two 4-digit lanes of 32 bits, each of
    those into two 2-digit lanes of 16 bits, then into bytes; each step as
    ``x * 2**b + q * (1 - n * 2**b)`` (the quotient ``q`` by ``n`` goes low, the
    remainder high), the quotients by multiplying and shifting.
    """
    hi = v // _U(10000)
    x = v << _U(32)
    hi *= _U((1 - (10000 << 32)) % (1 << 64))
    x += hi                                              # 32-bit lanes: v // 10**4, v % 10**4
    q = x * _U(10486)
    q >>= _U(20)
    q &= _U(0x0000007F0000007F)                          # lane // 100
    x <<= _U(16)
    q *= _U((1 - (100 << 16)) % (1 << 64))
    x += q                                               # 16-bit lanes: two digits each
    q = x * _U(103)
    q >>= _U(10)
    q &= _U(0x000F000F000F000F)                          # lane // 10
    x <<= _U(8)
    q *= _U((1 - (10 << 8)) % (1 << 64))
    x += q
    x |= _ZEROS
    return x


# -- integers ---------------------------------------------------------------------

def _small_tables():
    """Per 0..99: its ASCII (left-aligned) and 8 * its length."""
    text = [str(i).encode() for i in range(100)]
    return (np.array([int.from_bytes(t, "little") for t in text], dtype=np.uint64),
            np.array([8 * len(t) for t in text], dtype=np.uint64))


_T2, _T2_BITS = _small_tables()


def int_words(v: np.ndarray, end: int) -> list:
    """Words of ``%d`` of each int64 (or uint64) followed by ``end``."""
    u = v.view(np.uint64)
    has_neg = v.dtype != np.uint64 and len(v) and int(v.min()) < 0
    if has_neg:
        neg = v < 0
        u = np.where(neg, _U(0) - u, u)                  # |v| (2**63 for the minimum)
    top = int(u.max()) if len(u) else 0
    if top >= 10 ** 8:                                  # (ids and counts stay below; the rest: %d)
        return string_words([b"%d" % x for x in v.tolist()], np.arange(len(v)), end)
    if top < 100:
        s = [_T2[u]]
        bits = _T2_BITS[u]
    else:
        s = [_itoa8(u)]
        x = s[0] ^ _ZEROS
        x |= _U(1 << 56)                                   # a zero keeps its last digit
        x &= _U(0) - x
        lead = (((x.astype(np.float64).view(np.int64) >> 52) - 1023) & ~7).view(np.uint64)
        s[0] >>= lead                                      # leading zeros out
        bits = _U(64) - lead
    if has_neg:
        sign = neg.view(np.uint8).astype(np.uint64) << _U(3)
        s = _funnel(s, sign, len(s) + 1)
        s[0] |= (sign >> _U(3)) * _U(45)              # "-" where negative
        bits += sign
    n_words = int(bits.max()) // 64 + 1
    while len(s) < n_words:
        s.append(np.zeros_like(u))
    s = s[:n_words]
    for w, part in enumerate(_byte_at(end, bits, n_words)):
        s[w] |= part
    return s


# -- floats -----------------------------------------------------------------------

def _exponent_table():
    """Per decimal exponent -324..308: the word of 'e-05' ... 'e+308' and 8 * its length."""
    words, bits = [], []
    for e in range(-324, 309):
        s = f"e{'-' if e < 0 else '+'}{abs(e):02d}".encode()
        words.append(int.from_bytes(s, "little"))
        bits.append(8 * len(s))
    return np.array(words, dtype=np.uint64), np.array(bits, dtype=np.uint64)


def _form_tables():
    """How repr lays out 17 digits, per decimal point position ``e`` (``x = 0.ddd * 10**e``).

    Index ``e + _E0`` for every ``e`` of a double: -3..0 stand for
    ``0.000ddd``, 1..16 for ``ddd.ddd``, the others for the exponent form.
    Per index: the mask of the digits before the cut (where a byte is
    inserted: the point, or for ``0.0ddd`` the last zero of the prefix),
    that byte in place, how far the digits then move beyond the sign, the
    length as ``max(n_sig + plus, least)`` (without the sign and the
    exponent; right for ``n_sig`` 1 even when it is given as less), and the
    text before the digits (without, then with a sign).
    """
    cut, gap, move, plus, least, prefix = [], [], [], [], [], []
    for e in range(-_E0, _E0):
        if 1 <= e <= 16:
            row = (e, ".", 0, 1, e + 2, "")
        elif -3 <= e <= 0:
            row = (0, "." if e == 0 else "0", 1 - e, 2 - e, 3 - e, "0." + "0" * -e)
        else:
            row = (1, ".", 0, 1, 2, "")
        for lst, val in zip((cut, gap, move, plus, least, prefix), row):
            lst.append(val)
    words = lambda f: np.array([[f(i) >> (64 * w) & ((1 << 64) - 1) for i in range(len(cut))] for w in range(3)],  # noqa: E731
                               dtype=np.uint64)
    masks = words(lambda i: (1 << (8 * cut[i])) - 1)
    gaps = words(lambda i: ord(gap[i]) << (8 * cut[i]))
    pre = np.array([int.from_bytes((sign + p).encode(), "little") for sign in ("", "-") for p in prefix],
                   dtype=np.uint64)
    return masks, gaps, np.array(move, dtype=np.uint64) << _U(3), np.array(plus), np.array(least), pre


_E0 = 330                                            # decimal point positions of doubles: -323..309
_EXP_WORD, _EXP_BITS = _exponent_table()
_CUT_MASK, _GAP, _MOVE8, _PLUS, _LEAST, _PREFIX = _form_tables()
_TRUNC = np.array([[(1 << (8 * min(8, max(0, n - 8 * w)))) - 1 for n in range(40)] for w in range(3)],
                  dtype=np.uint64)
_ONE_BITS = _U(0x3FF0000000000000)                   # 1.0, standing in for lanes formatted elsewhere


def float_words(x: np.ndarray, end: int) -> list:
    """Words of ``repr`` of each float64 followed by ``end``."""
    bits = x.view(np.uint64)
    sign = bits >> _U(63)
    mag = bits & _U((1 << 63) - 1)
    zero = odd = None
    low, high = (int(v) >> 52 for v in (mag.min(), mag.max())) if len(mag) else (1, 1)
    if low == 0:                                        # zeros (or subnormals)
        zero = mag == _U(0)
        mag |= zero.astype(np.uint64) * _ONE_BITS
    if low == 0 or high == 0x7FF:                       # subnormals, inf, nan: formatted by repr
        expo = mag >> _U(52)
        odd = (expo == _U(0)) | (expo == _U(0x7FF))
        mag[odd] = _ONE_BITS
    d, k, tie = shortest(mag.view(np.float64))
    if tie.any():
        odd = tie if odd is None else odd | tie

    # 17 digits (a 16-digit d gets a 0 appended), zero for 0.0; e: position of the point
    small = (d < _U(10 ** 16)).astype(np.uint64)
    d *= small * _U(9) + _ONE
    if zero is not None:
        d[zero] = 0
    e = k + 17
    e -= small.view(np.int64)
    p0 = d // _U(10 ** 16)
    d -= p0 * _U(10 ** 16)
    hi = d // _U(10 ** 8)
    w1 = _itoa8(hi)
    w2 = _itoa8(d - hi * _U(10 ** 8))
    z = [w1 << _U(8), w2 << _U(8), w2 >> _U(56)]
    z[0] |= p0 + _U(48)
    z[1] |= w1 >> _U(56)
    # significant digits: up to the highest non-zero digit (byte) of w1 w2, at least 1
    top = (w2 ^ _ZEROS).astype(np.float64).view(np.int64) >> 52
    top += 64
    np.maximum(top, (w1 ^ _ZEROS).astype(np.float64).view(np.int64) >> 52, out=top)
    top -= 1023
    top >>= 3
    top += 2
    n_sig = top                                         # (less than 1 for a lone first digit)

    form = e + _E0
    length = np.maximum(n_sig + _PLUS[form], _LEAST[form])
    sci = None
    e_low, e_high = int(e.min()), int(e.max())
    if e_low < -3 or e_high > 16:
        sci = np.flatnonzero((e < -3) | (e > 16))
        length[sci] -= length[sci] == 2                  # 'de+XX': no point
    length += sign.view(np.int64)
    # the digits, a byte apart at the cut for the point, moved past the sign and the prefix
    if e_high <= 7:                                      # the cut is in the first word
        low_part = z[0] & _CUT_MASK[0][form]
        high_part = z[0] ^ low_part
        spread = [(high_part << _U(8)) | low_part, (z[1] << _U(8)) | (z[0] >> _U(56)),
                  (z[2] << _U(8)) | (z[1] >> _U(56))]
        spread[0] |= _GAP[0][form]
    else:
        spread = []
        carry = None
        for w in range(3):
            low_part = z[w] & _CUT_MASK[w][form]
            high_part = z[w] ^ low_part
            word = high_part << _U(8)
            word |= low_part
            word |= _GAP[w][form]
            if carry is not None:
                word |= carry
            carry = high_part >> _U(56)
            spread.append(word)
    s = _funnel(spread, (sign << _U(3)) + _MOVE8[form], 3)
    s[0] |= _PREFIX[(sign * _U(2 * _E0)).view(np.int64) + form]
    for w in range(3):
        s[w] &= _TRUNC[w][length]
    bits8 = length.view(np.uint64) << _U(3)
    if sci is not None:
        i = e[sci] + 323
        at = bits8[sci]
        bits8[sci] += _EXP_BITS[i]
    if odd is not None:
        odd = np.flatnonzero(odd)
        texts = [repr(v).encode() for v in x[odd].tolist()]
        bits8[odd] = [8 * len(t) for t in texts]
    n_words = int(bits8.max()) // 64 + 1 if len(bits8) else 1
    while len(s) < n_words:
        s.append(np.zeros_like(d))
    s = s[:n_words]
    if sci is not None:
        for w, part in enumerate(_shifted(_EXP_WORD[i], at, n_words)):
            s[w][sci] |= part
    for w, part in enumerate(_byte_at(end, bits8, n_words)):
        s[w] |= part
    if odd is not None:
        for i, t in zip(odd.tolist(), texts):
            row = np.frombuffer((t + bytes([end])).ljust(8 * n_words, b"\0"), dtype="<u8")
            for w in range(n_words):
                s[w][i] = row[w]
    return s


# -- strings ----------------------------------------------------------------------

def string_words(table: list, index: np.ndarray, end: int) -> list:
    """Words of ``table[index]`` (bytes) followed by ``end``."""
    width = (max((len(s) for s in table), default=0) + 1 + 7) // 8
    packed = b"".join((s + bytes([end])).ljust(8 * width, b"\0") for s in table) or b"\0" * 8 * width
    words = np.frombuffer(packed, dtype="<u8").reshape(-1, width)
    return [words[:, w][index] for w in range(width)]
