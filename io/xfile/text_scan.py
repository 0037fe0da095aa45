# SPDX-License-Identifier: GPL-3.0-or-later
"""Token boundaries of text .X data, found with numpy (no Python step per token).

The data is translated once into byte codes (``text_numbers`` codes for the
characters of words, ``SEP`` for whitespace, ';' and ',', ``BRACE``, ``QUOTE``
for '"' and '<', ``MAYBE`` for '#' and '/'). Strings, GUIDs and comments are
then found from their first characters (few, in real files) and blanked out;
a word is a run of word bytes, every brace is a token of its own.

- a string runs to the next '"' (or the end of the data), a GUID to the next
  '>' (stopping before '<', '{', '}' or '"');
- '#' and '//' start a comment to the end of the line, except a '#' right
  after '.' (MSVC's "1.#QNAN0" spellings of NaN / infinity) or a single '/':
  those belong to a word.
"""
from __future__ import annotations

import re

import numpy as np

from .text_numbers import OTHER, PAD, code_table

# Codes of the bytes that are not in words (all >= 0x80: not in a number).
SEP, OPEN, CLOSE, STRING, GUID, MAYBE = 0xC0, 0xC1, 0xC2, 0xC3, 0xC4, 0xC5
_CODES = code_table()
for _c in range(256):
    if chr(_c).isspace() or chr(_c) in ";,":  # what str.split() splits on, and the separators
        _CODES[_c] = SEP
_CODES[ord("{")], _CODES[ord("}")] = OPEN, CLOSE
_CODES[ord('"')], _CODES[ord("<")] = STRING, GUID
_CODES[ord("#")] = _CODES[ord("/")] = MAYBE
_CODES = bytes(_CODES)

_SPECIAL = re.compile(rb'"[^"]*"?|<[^<>{}"]*>?|//[^\n]*|#[^\n]*')


def scan(data: bytes, start: int):
    """Tokens of ``data[start:]``: (starts, ends) int64 arrays of data offsets,
    and the translated codes (PAD bytes, the data, one separator: the code of
    data offset i is ``codes[i + PAD]``) for ``text_numbers.parse_decimals``."""
    size = len(data)
    codes = np.empty(PAD + size + 1, dtype=np.uint8)
    codes[:PAD + start] = SEP
    codes[PAD + start:PAD + size] = np.frombuffer(data.translate(_CODES), np.uint8)[start:]
    codes[-1] = SEP
    candidates = np.flatnonzero(codes > SEP)  # braces, strings, GUIDs, comments
    spans = _specials(data, codes, candidates)
    others = candidates[codes[candidates] > SEP] - PAD  # braces, strings, GUIDs
    is_word = codes < SEP
    edges = np.flatnonzero(is_word[1:] != is_word[:-1]) + (1 - PAD)
    word_starts, word_ends = edges[0::2], edges[1::2]
    if not len(others):
        return word_starts, word_ends, codes
    other_ends = others + 1
    if spans:
        span_starts, span_ends = np.array(spans, dtype=np.int64).reshape(-1, 2).T
        other_ends[np.searchsorted(others, span_starts)] = span_ends
    where = np.searchsorted(word_starts, others)
    return np.insert(word_starts, where, others), np.insert(word_ends, where, other_ends), codes


def _specials(data: bytes, codes: np.ndarray, candidates: np.ndarray) -> list[int]:
    """Resolve the STRING / GUID / MAYBE bytes in ``codes`` (``candidates``: the
    positions in ``codes`` of every byte above SEP): comments become
    separators, strings and GUIDs keep their first byte and blank the rest.
    Returns the strings' and GUIDs' (start, end) data offsets, flattened."""
    candidates = candidates[codes[candidates] >= STRING] - PAD
    if not len(candidates):
        return []
    # A '#' right after '.' and a '/' not followed by '/' are word characters.
    raw = np.frombuffer(data, np.uint8)
    here = raw[candidates]
    before = raw[np.maximum(candidates - 1, 0)]
    after = raw[np.minimum(candidates + 1, len(raw) - 1)]
    word = (((here == ord("#")) & (before == ord(".")) & (candidates > 0))
            | ((here == ord("/")) & ((after != ord("/")) | (candidates + 1 >= len(raw)))))
    if word.any():
        codes[candidates[word] + PAD] = OTHER
        candidates = candidates[~word]
    spans: list[int] = []
    resume = 0
    match = _SPECIAL.match
    for pos in candidates.tolist():
        if pos < resume:  # inside an earlier string, GUID or comment
            continue
        end = match(data, pos).end()
        if data[pos] in b'"<':
            spans += (pos, end)
            codes[pos + PAD + 1:end + PAD] = SEP
        else:
            codes[pos + PAD:end + PAD] = SEP
        resume = end
    return spans
