# SPDX-License-Identifier: GPL-3.0-or-later
"""Binary .X output: NAME / STRING / brace tokens, numbers merged into
INTEGER_LIST and FLOAT_LIST runs (the layout D3DX writes and assimp reads)."""
from __future__ import annotations

import struct

import numpy as np

from ..errors import FormatError
from .binary_tokens import (
    TOKEN_CBRACE,
    TOKEN_FLOAT_LIST,
    TOKEN_INTEGER_LIST,
    TOKEN_NAME,
    TOKEN_OBRACE,
    TOKEN_SEMICOLON,
    TOKEN_STRING,
)

_W = struct.Struct("<H")
_WD = struct.Struct("<HI")


class BinaryEmitter:
    def __init__(self, float_size: int):
        self.fdtype = "<f8" if float_size == 64 else "<f4"
        self.out: list[bytes] = []
        self.pending: list[np.ndarray] = []
        self.pending_float = False

    def getvalue(self) -> bytes:
        self._flush()
        return b"".join(self.out)

    # -- numbers -----------------------------------------------------------
    def _flush(self) -> None:
        if not self.pending:
            return
        data = np.concatenate(self.pending)
        token = TOKEN_FLOAT_LIST if self.pending_float else TOKEN_INTEGER_LIST
        self.out.append(_WD.pack(token, len(data)))
        self.out.append(data.tobytes())
        self.pending = []

    def _numbers(self, values, is_float: bool) -> None:
        arr = np.asarray(values).reshape(-1)
        if arr.size == 0:
            return
        if self.pending and self.pending_float != is_float:
            self._flush()
        self.pending_float = is_float
        if is_float:
            self.pending.append(arr.astype(np.float64).astype(self.fdtype))
        else:
            ints = np.asarray(arr, dtype=np.int64)
            if ints.min() < 0 or ints.max() > 0xFFFFFFFF:
                raise FormatError("DWORD value out of range")
            self.pending.append(ints.astype("<u4"))

    def _token(self, data: bytes) -> None:
        self._flush()
        self.out.append(data)

    # -- structure ---------------------------------------------------------
    def _name(self, name: str) -> bytes:
        raw = name.encode("utf-8")
        return _WD.pack(TOKEN_NAME, len(raw)) + raw

    def templates(self, names) -> None:
        from .templates import binary

        self._token(binary(names))

    def begin(self, ident: str, name: str | None = None) -> None:
        self._token(self._name(ident) + (self._name(name) if name else b"") +
                    _W.pack(TOKEN_OBRACE))

    def end(self) -> None:
        self._token(_W.pack(TOKEN_CBRACE))

    def blank(self) -> None:
        pass

    def reference(self, name: str) -> None:
        self._token(_W.pack(TOKEN_OBRACE) + self._name(name) + _W.pack(TOKEN_CBRACE))

    def string(self, value: str) -> None:
        raw = value.encode("utf-8")
        self._token(_WD.pack(TOKEN_STRING, len(raw)) + raw + _W.pack(TOKEN_SEMICOLON))

    def dwords(self, values) -> None:
        self._numbers(values, False)

    dword_array = dwords

    def floats(self, values) -> None:
        self._numbers(values, True)

    float_array = floats
    matrix = floats

    def float_member(self, value: float) -> None:
        self._numbers([value], True)

    def struct_array(self, table, int_columns: int = 0) -> None:
        table = np.asarray(table)
        if table.size == 0:
            return
        if not int_columns:
            self._numbers(table, True)
            return
        for row_ints, row_floats in zip(table[:, :int_columns].astype(np.int64),
                                        table[:, int_columns:]):
            self._numbers(row_ints, False)
            self._numbers(row_floats, True)

    def faces(self, sizes, indices) -> None:
        sizes = np.asarray(sizes, dtype=np.int64)
        if len(sizes) == 0:
            return
        indices = np.asarray(indices, dtype=np.int64)
        if np.all(sizes == sizes[0]) and sizes[0] > 0:
            k = int(sizes[0])
            table = np.empty((len(sizes), k + 1), dtype=np.int64)
            table[:, 0] = k
            table[:, 1:] = indices.reshape(-1, k)
            self._numbers(table, False)
            return
        # Variable sizes: interleave each face's count before its indices.
        flat = np.empty(len(sizes) + len(indices), dtype=np.int64)
        count_pos = np.zeros(len(sizes), dtype=np.int64)
        if len(sizes) > 1:
            count_pos[1:] = np.cumsum(sizes[:-1] + 1)
        mask = np.ones(len(flat), dtype=bool)
        mask[count_pos] = False
        flat[count_pos] = sizes
        flat[mask] = indices
        self._numbers(flat, False)

    def timed_keys(self, times, values) -> None:
        """Per key: INTEGER_LIST [time, n] then FLOAT_LIST [n values], built in one go."""
        times = np.asarray(times, dtype=np.float64)
        values = np.asarray(values, dtype=np.float64)
        if len(times) == 0:
            return
        n = values.shape[1]
        record = np.dtype([("tok_i", "<u2"), ("count_i", "<u4"), ("time", "<u4"), ("n", "<u4"),
                           ("tok_f", "<u2"), ("count_f", "<u4"), ("values", self.fdtype, (n,))])
        rows = np.zeros(len(times), dtype=record)
        rows["tok_i"] = TOKEN_INTEGER_LIST
        rows["count_i"] = 2
        ticks = np.round(times)
        if ticks.min() < 0 or ticks.max() > 0xFFFFFFFF:
            raise FormatError("animation key time out of DWORD range")
        rows["time"] = ticks.astype(np.int64)
        rows["n"] = n
        rows["tok_f"] = TOKEN_FLOAT_LIST
        rows["count_f"] = n
        rows["values"] = values
        self._token(rows.tobytes())
