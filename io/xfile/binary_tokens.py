# SPDX-License-Identifier: GPL-3.0-or-later
"""Tokenizer for binary .X data: little-endian WORD token ids.

The whole body is tokenized up front (one Python step per token; the large
INTEGER_LIST / FLOAT_LIST payloads are never touched per number: they are
read with ``np.frombuffer`` when the parser asks for numbers; runs of tiny
two-list records are one token each, see ``binary_records``). Every length
and count is checked against the bytes left before it is used.
"""
from __future__ import annotations

import struct

import numpy as np

from ..errors import FormatError
from . import binary_records
from .binary_records import TOKEN_FLOAT_LIST, TOKEN_INTEGER_LIST
from .tokens import CLOSE, EOF, GUID, NAME, NUM, OPEN, OTHER, STRING, TokenStream, decode_name

TOKEN_NAME = 1
TOKEN_STRING = 2
TOKEN_INTEGER = 3
TOKEN_GUID = 5
TOKEN_OBRACE = 10
TOKEN_CBRACE = 11
TOKEN_COMMA = 19
TOKEN_SEMICOLON = 20
TOKEN_TEMPLATE = 31

_OTHER_IDS = frozenset(range(12, 19)) | frozenset(range(40, 53))
_SMALL = 64
_U16 = struct.Struct("<H")
_U32 = struct.Struct("<I")


class BinaryTokens(TokenStream):
    """Tokens of a binary .X body ``data[start:]``.

    ``base_offset`` is added to reported byte offsets (16 for an uncompressed
    file, so offsets are file offsets; 0 for decompressed data).
    """

    def __init__(self, data: bytes, start: int, float_size: int, path=None,
                 base_offset: int = 0, where_note: str = ""):
        self.path = path
        self.where_note = where_note
        self.data = data
        self.base = base_offset - start
        self.fsize = 8 if float_size == 64 else 4
        # A FormatError or a wrong guess (see binary_records): start over, exactly.
        try:
            done = self._tokenize(start, binary_records.guess)
        except FormatError:
            done = False
        if not done:
            self._tokenize(start, binary_records.measure)
        self.n = len(self.kinds)
        counts = np.zeros(self.n + 1, dtype=np.int64)
        counts[:self.n] = [value[1] if kind == NUM else 0
                           for kind, value in zip(self.kinds, self.values)]
        self.num_suffix = np.cumsum(counts[::-1])[::-1]
        self.i = 0
        self.cursor = 0  # numbers already consumed from the current list token

    # -- tokenizing ------------------------------------------------------
    def _fail(self, message: str, offset: int):
        return self.error(message, offset)

    def _tokenize(self, p: int, size_run) -> bool:
        """Fill kinds / values / offsets; False if a record run was sized wrong."""
        self.kinds, self.values, self.offsets = kinds, values, offsets = [], [], []
        runs: list[tuple[int, int, int, int, int]] = []  # (p, rows, c1, c2, length)
        run_tokens: list[int] = []
        data, end, fsize = self.data, len(self.data), self.fsize
        u16, u32 = _U16.unpack_from, _U32.unpack_from
        while p < end:
            if end - p < 2:
                raise self._fail("truncated token id", p)
            tok = u16(data, p)[0]
            q = p + 2
            if tok == TOKEN_SEMICOLON or tok == TOKEN_COMMA:
                p = q
                continue
            if tok == TOKEN_OBRACE or tok == TOKEN_CBRACE:
                kinds.append(OPEN if tok == TOKEN_OBRACE else CLOSE)
                values.append(None)
            elif tok == TOKEN_NAME or tok == TOKEN_STRING:
                if end - q < 4:
                    raise self._fail("truncated NAME/STRING length", p)
                length = u32(data, q)[0]
                q += 4
                if length > end - q:
                    raise self._fail(f"NAME/STRING length {length} runs past the end of the data", p)
                kinds.append(NAME if tok == TOKEN_NAME else STRING)
                values.append(bytes(data[q:q + length]))
                q += length
            elif tok == TOKEN_INTEGER:
                if end - q < 4:
                    raise self._fail("truncated INTEGER token", p)
                kinds.append(NUM)
                values.append((q, 1, False, (u32(data, q)[0],), None))
                q += 4
            elif tok == TOKEN_INTEGER_LIST or tok == TOKEN_FLOAT_LIST:
                if end - q < 4:
                    raise self._fail("truncated list count", p)
                count = u32(data, q)[0]
                q += 4
                size = 4 if tok == TOKEN_INTEGER_LIST else fsize
                if count * size > end - q:
                    kind = "INTEGER_LIST" if tok == TOKEN_INTEGER_LIST else "FLOAT_LIST"
                    raise self._fail(f"{kind} of {count} values runs past the end of the data "
                                     f"({end - q} bytes left)", p)
                if tok == TOKEN_INTEGER_LIST and 0 < count <= 4:
                    run = size_run(data, p, count, fsize)
                    if run is not None:  # one NUM token, its numbers decoded below
                        rows, c2, length = run
                        runs.append((p, rows, count, c2, length))
                        run_tokens.append(len(values))
                        kinds.append(NUM)
                        values.append((p, rows * (count + c2), True, None, (count, c2, length)))
                        offsets.append(p)
                        p += rows * length
                        continue
                if count:
                    kinds.append(NUM)
                    is_float = tok == TOKEN_FLOAT_LIST
                    # Short lists (animation keys, counts) are decoded right away:
                    # one numpy call per tiny list would dominate the read time.
                    small = None
                    if count <= _SMALL:
                        code = ("d" if size == 8 else "f") if is_float else "I"
                        small = struct.unpack_from(f"<{count}{code}", data, q)
                    values.append((q, count, is_float, small, None))
                else:
                    p = q
                    continue
                q += count * size
            elif tok == TOKEN_GUID:
                if end - q < 16:
                    raise self._fail("truncated GUID token", p)
                kinds.append(GUID)
                values.append(bytes(data[q:q + 16]))
                q += 16
            elif tok == TOKEN_TEMPLATE:
                kinds.append(NAME)
                values.append(b"template")
            elif tok in _OTHER_IDS:
                kinds.append(OTHER)
                values.append(tok)
            else:
                raise self._fail(f"unknown binary token id {tok}", p)
            offsets.append(p)
            p = q
        if not runs:
            return True
        numbers = binary_records.decode(data, fsize, runs)
        if numbers is None:
            return False
        for i, array in zip(run_tokens, numbers):
            start, count, is_float, _none, run = values[i]
            values[i] = (start, count, is_float, array, run)
        return True

    # -- position --------------------------------------------------------
    def here(self):
        return (self.i, self.cursor)

    def reset(self, mark) -> None:
        self.i, self.cursor = mark

    def position(self, mark=None) -> dict:
        if isinstance(mark, int):  # raw byte offset (tokenizer errors)
            return {"offset": mark + self.base}
        i, cursor = (self.i, self.cursor) if mark is None else mark
        if i >= len(self.offsets):
            return {"offset": len(self.data) + self.base}
        offset = self.offsets[i]
        if self.kinds[i] == NUM:  # the number itself, not its list's token id
            start, _count, is_float, _small, run = self.values[i]
            if run is None:
                offset = start + cursor * (self.fsize if is_float else 4)
            else:  # inside a run of [INTEGER_LIST c1][FLOAT_LIST c2] records
                c1, c2, length = run
                row, col = divmod(cursor, c1 + c2)
                offset = start + row * length + (6 + 4 * col if col < c1 else
                                                 12 + 4 * c1 + self.fsize * (col - c1))
        return {"offset": offset + self.base}

    # -- structure -------------------------------------------------------
    def kind(self) -> str:
        return self.kinds[self.i] if self.i < self.n else EOF

    def describe(self) -> str:
        k = self.kind()
        if k in (NAME, STRING):
            return f"{k} {decode_name(self.values[self.i][:40])!r}"
        return k if k in (EOF, NUM, GUID, OTHER) else repr(k)

    def advance(self) -> None:
        self.i += 1
        self.cursor = 0

    def word(self) -> str:
        v = self.values[self.i]
        self.advance()
        return decode_name(v)

    def string(self, what: str) -> str:
        if self.kind() != STRING:
            raise self.error(f"{what}: expected a string, found {self.describe()}")
        return self.word()

    def skip_block(self) -> None:
        kinds, i, n, depth = self.kinds, self.i, self.n, 1
        while i < n:
            k = kinds[i]
            i += 1
            if k == OPEN:
                depth += 1
            elif k == CLOSE:
                depth -= 1
                if depth == 0:
                    self.i, self.cursor = i, 0
                    return
        self.i, self.cursor = n, 0
        raise self.error("unexpected end of data inside a block (missing '}')")

    # -- numbers ---------------------------------------------------------
    def numbers_left(self) -> int:
        return int(self.num_suffix[self.i]) - self.cursor if self.i < self.n else 0

    def tokens_left(self) -> int:
        return self.n - self.i

    def _collect(self, n: int, what: str, kind_word: str):
        """n numbers -> (list of arrays, any floats?) ; raises if fewer follow."""
        parts: list[np.ndarray] = []
        small: list = []
        small_float = False
        any_float = False
        need = n
        while need:
            if self.i >= self.n or self.kinds[self.i] != NUM:
                raise self.error(f"{what}: expected {n} {kind_word}s, found {n - need} "
                                 f"then {self.describe()}")
            start, count, is_float, tup, run = self.values[self.i]
            cursor = self.cursor
            take = min(count - cursor, need)
            any_float = any_float or is_float
            if run is not None:
                if small:
                    parts.append(np.array(small, dtype=np.float64 if small_float else np.int64))
                    small = []
                    small_float = False
                parts.append(tup[cursor:cursor + take])
            elif tup is not None:
                small.extend(tup[cursor:cursor + take])
                small_float = small_float or is_float
            else:
                if small:
                    parts.append(np.array(small, dtype=np.float64 if small_float else np.int64))
                    small = []
                    small_float = False
                if is_float:
                    dtype = "<f8" if self.fsize == 8 else "<f4"
                    size = self.fsize
                else:
                    dtype, size = "<u4", 4
                parts.append(np.frombuffer(self.data, dtype=dtype, count=take,
                                           offset=start + cursor * size))
            need -= take
            self.cursor = cursor + take
            if self.cursor == count:
                self.i += 1
                self.cursor = 0
        if small:
            parts.append(np.array(small, dtype=np.float64 if small_float else np.int64))
        return parts, any_float

    def _scalar(self, integer: bool):
        """The next number straight from a decoded list (or None: use _collect)."""
        i = self.i
        if i >= self.n or self.kinds[i] != NUM:
            return None
        _start, count, is_float, tup, run = self.values[i]
        if tup is None or (integer and is_float):
            return None
        cursor = self.cursor
        value = tup[cursor]
        if cursor + 1 == count:
            self.i, self.cursor = i + 1, 0
        else:
            self.cursor = cursor + 1
        return value

    def read_int(self, what: str) -> int:
        value = self._scalar(True)
        return int(self.read_ints(1, what)[0]) if value is None else value

    def read_float(self, what: str) -> float:
        value = self._scalar(False)
        return float(self.read_floats(1, what)[0]) if value is None else float(value)

    def read_floats(self, n: int, what: str) -> np.ndarray:
        if n == 0:
            return np.zeros(0, dtype=np.float64)
        if n > self.numbers_left():
            raise self.error(f"{what}: expected {n} numbers, but only "
                             f"{self.numbers_left()} are left in the data")
        parts, _ = self._collect(n, what, "number")
        if len(parts) == 1:
            return parts[0].astype(np.float64)
        return np.concatenate(parts).astype(np.float64)

    def read_ints(self, n: int, what: str) -> np.ndarray:
        if n == 0:
            return np.zeros(0, dtype=np.int64)
        if n > self.numbers_left():
            raise self.error(f"{what}: expected {n} integers, but only "
                             f"{self.numbers_left()} are left in the data")
        mark = self.here()
        parts, any_float = self._collect(n, what, "integer")
        if not any_float:
            out = parts[0] if len(parts) == 1 else np.concatenate(parts)
            return out.astype(np.int64)
        values = np.concatenate([p.astype(np.float64) for p in parts])
        as_int = self.check_integral(values)
        if as_int is None:
            raise self.error(f"{what}: expected integers, found non-integral floats", mark)
        return as_int

    def number_block(self) -> np.ndarray | None:
        i, kinds = self.i, self.kinds
        if self.cursor:
            return None
        try:
            close = kinds.index(CLOSE, i, i + 256)  # (bounded: a probe stays cheap)
        except ValueError:
            return None
        if kinds[i:close].count(NUM) != close - i:
            return None
        tokens = self.values[i:close]
        out = np.empty(sum(token[1] for token in tokens), dtype=np.float64)
        at = 0
        for start, count, is_float, numbers, _run in tokens:
            if numbers is None:  # a long list, converted straight from the data
                dtype = ("<f8" if self.fsize == 8 else "<f4") if is_float else "<u4"
                numbers = np.frombuffer(self.data, dtype=dtype, count=count, offset=start)
            out[at:at + count] = numbers
            at += count
        self.i = close + 1
        return out

    # Probes for the parser's fast paths: None instead of an error.
    def try_read_floats(self, n: int) -> np.ndarray | None:
        mark = self.here()
        try:
            return self.read_floats(n, "numbers")
        except FormatError:
            self.reset(mark)
            return None

    def try_read_ints(self, n: int) -> np.ndarray | None:
        mark = self.here()
        try:
            return self.read_ints(n, "integers")
        except FormatError:
            self.reset(mark)
            return None

    def mark_plus(self, mark, k: int):
        """The marker k numbers after ``mark`` (for pinpointing a bad value)."""
        i, cursor = mark
        k += cursor
        while i < self.n and self.kinds[i] == NUM and k >= self.values[i][1]:
            k -= self.values[i][1]
            i += 1
        return (i, k)
