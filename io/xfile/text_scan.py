# SPDX-License-Identifier: GPL-3.0-or-later
"""Token boundaries of text .X data, found with numpy (no Python step per token):
:func:`scan` is the one entry point.

What it buys: with a regular expression, one Python step per token, the
import of the corpus's largest text file (tiny_4anim.x, 290,000 tokens) would
no longer be faster than assimp plus Blender's glTF importer
(``bench/bench_xfile_import.py``'s target): the tokenizing alone would take
most of what that baseline takes.

The data is translated once into byte codes: ``numparse.CODES`` for the bytes
of words (so that the numbers are converted from these codes; the bytes a
number starts with, digits, '.', '+', '-', have codes below OTHER), SEP for
whitespace, ';' and ','; OPEN, CLOSE, STRING ('"'), GUID ('<'), and MAYBE for
'#' and '/'. Strings, GUIDs and comments are then found from their first
bytes (few, in real files) and blanked out; a word is a run of word bytes,
every brace is a token of its own. As a regular expression tokenizer would:

- a string runs to the next '"' (or the end of the data), a GUID to the next
  '>' (stopping before '<', '{', '}' or '"');
- '#' and '//' start a comment to the end of the line, except a '#' right
  after '.' (MSVC's "1.#QNAN0" spellings of NaN / infinity) or a single '/':
  those belong to a word;
- words are split on what ``str.split()`` splits Latin-1 text on, ';' and ','.
"""
from __future__ import annotations

import re

import numpy as np

from ..numparse import CODES, PAD

#: Codes below SEP are bytes of words; below OTHER, the bytes a number starts with.
OTHER = 0x80
SEP, OPEN, CLOSE, STRING, GUID, MAYBE = 0xC0, 0xC1, 0xC2, 0xC3, 0xC4, 0xC5
_CODES = bytearray(CODES)
for _c in range(256):
    if chr(_c).isspace() or chr(_c) in ";,":  # what str.split() splits on, and the separators
        _CODES[_c] = SEP
_CODES[ord("{")], _CODES[ord("}")] = OPEN, CLOSE
_CODES[ord('"')], _CODES[ord("<")] = STRING, GUID
_CODES[ord("#")] = _CODES[ord("/")] = MAYBE
_CODES = bytes(_CODES)

_BLOCK = 1 << 18  # bytes per step of the passes over the whole data
_SPECIAL = re.compile(rb'"[^"]*"?|<[^<>{}"]*>?|//[^\n]*|#[^\n]*')


def scan(data: bytes, start: int):
    """Tokens of ``data[start:]``: (starts, ends) arrays of data offsets (int32;
    int64 from 2 GiB), and the translated codes (PAD separators, the data, PAD
    separators: the code of data offset i is ``codes[i + PAD]``).

    The passes over the whole data go block by block: their temporaries stay
    small (fresh pages are slow to fill on some machines)."""
    size = len(data)
    codes = np.empty(PAD + size + PAD, dtype=np.uint8)
    codes[:PAD + start] = SEP
    codes[PAD + size:] = SEP
    found = []
    for a in range(start, size, _BLOCK):
        block = codes[PAD + a:PAD + min(a + _BLOCK, size)]
        block[:] = np.frombuffer(data[a:a + _BLOCK].translate(_CODES), np.uint8)
        hits = np.flatnonzero(block > SEP)  # braces, strings, GUIDs, comments
        if len(hits):
            found.append(hits + (PAD + a))
    candidates = np.concatenate(found) if found else np.zeros(0, dtype=np.intp)
    spans = _specials(data, codes, candidates)
    # Braces, strings and GUIDs: one token each, from its first byte to `other_ends`.
    others = candidates[codes[candidates] > SEP] - PAD
    other_ends = others + 1
    if spans:
        span_starts, span_ends = np.array(spans, dtype=np.int64).reshape(-1, 2).T
        other_ends[np.searchsorted(others, span_starts)] = span_ends
    # Words: runs of word bytes. Tokens never overlap, so the sorted starts and
    # the sorted ends pair up: each is merged with the others' block by block.
    dtype = np.int32 if size < 2 ** 31 - PAD else np.int64
    blocks = range(0, PAD + size, _BLOCK)
    lows = [a + 1 - PAD for a in blocks] + [PAD + size + 1]  # offsets found per block
    other_starts = np.searchsorted(others, lows).tolist()
    other_stops = np.searchsorted(other_ends, lows).tolist()
    starts, ends = [], []
    edges = 0  # word edges so far: starts and ends alternate
    for k, a in enumerate(blocks):
        is_word = codes[a:a + _BLOCK + 1] < SEP
        at = np.flatnonzero(is_word[1:] != is_word[:-1])
        at += a + 1 - PAD
        first, edges = edges & 1, edges + len(at)
        starts.append(_merge(at[first::2], others[other_starts[k]:other_starts[k + 1]], dtype))
        ends.append(_merge(at[1 - first::2], other_ends[other_stops[k]:other_stops[k + 1]], dtype))
    return np.concatenate(starts), np.concatenate(ends), codes


def _merge(words: np.ndarray, others: np.ndarray, dtype) -> np.ndarray:
    """Two sorted arrays as one (a linear merge: the stable sort, timsort for
    these types, finds the two sorted runs)."""
    if not len(others):
        return words.astype(dtype)
    return np.sort(np.concatenate((words, others)).astype(dtype), kind="stable")


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
