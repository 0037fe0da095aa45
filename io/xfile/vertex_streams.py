# SPDX-License-Identifier: GPL-3.0-or-later
"""Vertex streams of ``DeclData`` and ``FVFData`` (decode) and ``DeclData`` (encode).

Decoded streams are float64 arrays (V, k) keyed ``USAGE`` + usage index,
e.g. ``NORMAL0``, ``TEXCOORD0``, ``TANGENT0``. Normalised integer types are
scaled to [0, 1] / [-1, 1]; D3DCOLOR becomes RGBA in [0, 1].
"""
from __future__ import annotations

import re

import numpy as np

from ..errors import FormatError

USAGES = ["POSITION", "BLENDWEIGHT", "BLENDINDICES", "NORMAL", "PSIZE", "TEXCOORD",
          "TANGENT", "BINORMAL", "TESSFACTOR", "POSITIONT", "COLOR", "FOG", "DEPTH",
          "SAMPLE"]
USAGE_INDEX = {name: i for i, name in enumerate(USAGES)}
# D3DDECLTYPE -> size in bytes
TYPE_SIZES = {0: 4, 1: 8, 2: 12, 3: 16, 4: 4, 5: 4, 6: 4, 7: 8, 8: 4, 9: 4, 10: 8,
              11: 4, 12: 8, 13: 4, 14: 4, 15: 4, 16: 8, 17: 0}
_KEY = re.compile(r"^(USAGE\d+_|[A-Z]+)(\d+)$")


def _decode_type(raw: np.ndarray, decl_type: int) -> np.ndarray | None:
    """raw: (V, size) uint8 -> float64 (V, k)."""
    v = raw.shape[0]
    raw = np.ascontiguousarray(raw)
    if decl_type <= 3:
        return raw.view("<f4").reshape(v, decl_type + 1).astype(np.float64)
    if decl_type == 4:  # D3DCOLOR: bytes B, G, R, A
        return raw[:, [2, 1, 0, 3]].astype(np.float64) / 255.0
    if decl_type == 5:
        return raw.astype(np.float64)
    if decl_type == 8:
        return raw.astype(np.float64) / 255.0
    if decl_type in (6, 7):
        return raw.view("<i2").reshape(v, -1).astype(np.float64)
    if decl_type in (9, 10):
        return np.maximum(raw.view("<i2").reshape(v, -1).astype(np.float64) / 32767.0, -1.0)
    if decl_type in (11, 12):
        return raw.view("<u2").reshape(v, -1).astype(np.float64) / 65535.0
    if decl_type in (13, 14):
        word = raw.view("<u4").reshape(v).astype(np.int64)
        comps = np.stack([(word >> s) & 0x3FF for s in (0, 10, 20)], axis=1)
        if decl_type == 13:
            return comps.astype(np.float64)
        comps = np.where(comps >= 512, comps - 1024, comps)
        return np.maximum(comps.astype(np.float64) / 511.0, -1.0)
    if decl_type in (15, 16):
        return raw.view("<f2").reshape(v, -1).astype(np.float64)
    return None


def dwords_to_bytes(dwords: np.ndarray) -> bytes | None:
    if dwords.size and (dwords.min() < 0 or dwords.max() > 0xFFFFFFFF):
        return None
    return dwords.astype("<u4").tobytes()


def decode_decl(elements: np.ndarray, data: bytes, n_vertices: int, warnings: list[str],
                what: str, layout: dict | None = None) -> dict[str, np.ndarray]:
    """elements: (E, 4) ints (type, method, usage, usage index).

    ``layout``, when given, receives (byte offset in a vertex, vertex stride,
    bytes per component) per decoded stream (to point at the bytes of a bad value)."""
    sizes = []
    for decl_type, _method, _usage, _index in elements.tolist():
        if decl_type not in TYPE_SIZES:
            warnings.append(f"{what}: DeclData element type {decl_type} unknown; stream ignored")
            return {}
        sizes.append(TYPE_SIZES[decl_type])
    stride = sum(sizes)
    if n_vertices == 0 or stride == 0:
        return {}
    if stride * n_vertices != len(data):
        warnings.append(f"{what}: DeclData holds {len(data)} bytes, expected "
                        f"{stride * n_vertices} ({n_vertices} vertices x {stride}); ignored")
        return {}
    table = np.frombuffer(data, dtype=np.uint8).reshape(n_vertices, stride)
    streams: dict[str, np.ndarray] = {}
    offset = 0
    for (decl_type, _method, usage, index), size in zip(elements.tolist(), sizes):
        values = _decode_type(table[:, offset:offset + size], decl_type)
        offset += size
        if values is None:
            continue
        name = USAGES[usage] if 0 <= usage < len(USAGES) else f"USAGE{usage}_"
        streams[f"{name}{index}"] = values
        if layout is not None:
            layout[f"{name}{index}"] = (offset - size, stride, size // values.shape[1])
    return streams


def decode_fvf(fvf: int, data: bytes, n_vertices: int, warnings: list[str],
               what: str, layout_out: dict | None = None) -> dict[str, np.ndarray]:
    """FVFData: layout from the D3DFVF flags (normal, psize, colors, texcoords:
    D3DFVF_TEXn sets, each D3DFVF_TEXCOORDSIZEn(k) wide, in bits 16 + 2k).
    The data is "the mesh data minus the position data" (Microsoft's FVFData
    page; the SDK's skullocc.x: flags XYZ | TEX1, 4 bytes a vertex); data
    that holds the position the flags name too is read as well.

    ``layout_out`` as ``layout`` of decode_decl."""
    layout: list[tuple[str | None, int]] = []  # (stream name or None to drop, decl type)
    pos = fvf & 0x400E
    position: list[tuple[str | None, int]] = []
    if pos:
        floats = {0x2: 3, 0x4: 4, 0x4002: 4, 0x6: 4, 0x8: 5, 0xA: 6, 0xC: 7, 0xE: 8}.get(pos)
        if floats is None:
            warnings.append(f"{what}: FVFData flags {fvf:#x} not understood; ignored")
            return {}
        position = [(None, 0)] * floats
    if fvf & 0x10:
        layout.append(("NORMAL0", 2))
    if fvf & 0x20:
        layout.append(("PSIZE0", 0))
    if fvf & 0x40:
        layout.append(("COLOR0", 4))
    if fvf & 0x80:
        layout.append(("COLOR1", 4))
    for t in range((fvf >> 8) & 0xF):
        size_code = (fvf >> (16 + 2 * t)) & 3
        layout.append((f"TEXCOORD{t}", {0: 1, 1: 2, 2: 3, 3: 0}[size_code]))
    stride = sum(TYPE_SIZES[t] for _n, t in layout)
    if position and (stride + 4 * len(position)) * n_vertices == len(data) and stride * n_vertices != len(data):
        layout, stride = position + layout, stride + 4 * len(position)
    if n_vertices == 0 or stride == 0:
        return {}
    if stride * n_vertices != len(data):
        warnings.append(f"{what}: FVFData holds {len(data)} bytes, flags {fvf:#x} need "
                        f"{stride * n_vertices}; ignored")
        return {}
    table = np.frombuffer(data, dtype=np.uint8).reshape(n_vertices, stride)
    streams: dict[str, np.ndarray] = {}
    offset = 0
    for name, decl_type in layout:
        size = TYPE_SIZES[decl_type]
        if name is not None:
            streams[name] = _decode_type(table[:, offset:offset + size], decl_type)
            if layout_out is not None:
                layout_out[name] = (offset, stride, size // streams[name].shape[1])
        offset += size
    return streams


def encode_decl(streams: dict[str, np.ndarray], n_vertices: int):
    """(elements (E, 4) int64, dwords (n,) int64) of a DeclData holding FLOATk streams."""
    elements = []
    columns = []
    for key, values in streams.items():
        m = _KEY.match(key)
        usage = USAGE_INDEX.get(m.group(1)) if m else None
        if usage is None:
            if m and m.group(1).startswith("USAGE") and m.group(1).endswith("_"):
                usage = int(m.group(1)[5:-1])
            else:
                raise FormatError(f"vertex stream name {key!r} is not USAGE + index")
        values = np.asarray(values, dtype=np.float64)
        if values.ndim == 1:
            values = values[:, None]
        if values.shape[0] != n_vertices or not 1 <= values.shape[1] <= 4:
            raise FormatError(f"vertex stream {key!r} has shape {values.shape}, "
                             f"expected ({n_vertices}, 1..4)")
        elements.append((values.shape[1] - 1, 0, usage, int(m.group(2))))
        columns.append(values.astype("<f4"))
    table = np.concatenate(columns, axis=1) if columns else np.zeros((n_vertices, 0), "<f4")
    dwords = np.ascontiguousarray(table).view("<u4").reshape(-1).astype(np.int64)
    return np.array(elements, dtype=np.int64).reshape(-1, 4), dwords
