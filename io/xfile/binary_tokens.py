# SPDX-License-Identifier: GPL-3.0-or-later
"""Tokenizer for binary .X data: little-endian WORD token ids.

The whole body is tokenized up front (one Python step per token; the large
INTEGER_LIST / FLOAT_LIST payloads are never touched per number: they are
read with ``np.frombuffer`` when the parser asks for numbers). Every length
and count is checked against the bytes left before it is used.
"""
from __future__ import annotations

import struct

import numpy as np

from ..errors import FormatError
from .tokens import CLOSE, EOF, GUID, NAME, NUM, OPEN, OTHER, STRING, TokenStream, decode_name

TOKEN_NAME = 1
TOKEN_STRING = 2
TOKEN_INTEGER = 3
TOKEN_GUID = 5
TOKEN_INTEGER_LIST = 6
TOKEN_FLOAT_LIST = 7
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
        self.kinds: list[str] = []
        self.values: list = []
        self.offsets: list[int] = []
        self._tokenize(start)
        self.n = len(self.kinds)
        counts = np.zeros(self.n + 1, dtype=np.int64)
        for k, (kind, value) in enumerate(zip(self.kinds, self.values)):
            if kind == NUM:
                counts[k] = value[1]
        self.num_suffix = np.cumsum(counts[::-1])[::-1]
        self.i = 0
        self.cursor = 0  # numbers already consumed from the current list token

    # -- tokenizing ------------------------------------------------------
    def _fail(self, message: str, offset: int):
        return self.error(message, offset)

    def _tokenize(self, p: int) -> None:
        data, end, fsize = self.data, len(self.data), self.fsize
        kinds, values, offsets = self.kinds, self.values, self.offsets
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
                    run = self._record_run(p, count)
                    if run is not None:
                        p = run
                        continue
                if count:
                    kinds.append(NUM)
                    is_float = tok == TOKEN_FLOAT_LIST
                    # Short lists (animation keys, counts) are decoded right away:
                    # one numpy call per tiny list would dominate the read time.
                    small = None
                    if count <= _SMALL:
                        fmt = ("d" if size == 8 else "f") if is_float else "I"
                        small = struct.unpack_from(f"<{count}{fmt}", data, q)
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

    def _record_run(self, p: int, c1: int) -> int | None:
        """Vectorised tokenizing of repeated ``[INTEGER_LIST c1][FLOAT_LIST c2]``
        records (animation keys: time, n / n values; vertex colors), which D3DX
        writes as two tiny lists per record. Appends one NUM token holding all the
        numbers (as float64) and returns the offset after the run, or None when
        fewer than 8 such records follow."""
        data, end, fsize = self.data, len(self.data), self.fsize
        q = p + 6 + 4 * c1
        if end - q < 6 or _U16.unpack_from(data, q)[0] != TOKEN_FLOAT_LIST:
            return None
        c2 = _U32.unpack_from(data, q + 2)[0]
        if not 0 < c2 <= 16:
            return None
        length = 12 + 4 * c1 + fsize * c2
        head1 = np.frombuffer(struct.pack("<HI", TOKEN_INTEGER_LIST, c1), dtype=np.uint8)
        head2 = np.frombuffer(struct.pack("<HI", TOKEN_FLOAT_LIST, c2), dtype=np.uint8)
        o2 = 6 + 4 * c1
        rows = 0
        chunk = 64
        while True:
            avail = (end - p) // length - rows
            take = min(chunk, avail)
            if take <= 0:
                break
            table = np.frombuffer(data, dtype=np.uint8, count=take * length,
                                  offset=p + rows * length).reshape(take, length)
            ok = (table[:, :6] == head1).all(axis=1) & (table[:, o2:o2 + 6] == head2).all(axis=1)
            good = take if ok.all() else int(np.argmin(ok))
            rows += good
            if good < take:
                break
            chunk *= 4
        if rows < 8:
            return None
        table = np.frombuffer(data, dtype=np.uint8, count=rows * length,
                              offset=p).reshape(rows, length)
        ints = np.ascontiguousarray(table[:, 6:o2]).view("<u4").astype(np.float64)
        floats = np.ascontiguousarray(table[:, o2 + 6:]).view(
            "<f8" if fsize == 8 else "<f4").astype(np.float64)
        numbers = np.concatenate([ints, floats], axis=1).reshape(-1)
        self.kinds.append(NUM)
        self.values.append((p, len(numbers), True, numbers, (c1, c2, length)))
        self.offsets.append(p)
        return p + rows * length

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
