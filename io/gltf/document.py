# SPDX-License-Identifier: GPL-3.0-or-later
"""A glTF 2.0 document being built: the JSON object and its one binary
buffer, and its two containers (``.glb``; ``.gltf`` with a ``.bin`` beside).

Every block of the buffer starts on a 4-byte boundary and has a buffer view
of its own (no byteStride: tightly packed, as the validator wants for
animation, skin and index data alike); an accessor's ``min``/``max`` are
the values stored (float32 where the data is float32), so that they match
exactly what a reader computes.
"""
from __future__ import annotations

import json
import struct
from urllib.parse import quote

import numpy as np

#: component types (glTF's GL constants)
UBYTE, USHORT, UINT, FLOAT = 5121, 5123, 5125, 5126
_DTYPE = {UBYTE: np.uint8, USHORT: np.uint16, UINT: np.uint32, FLOAT: np.float32}
_WIDTH = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT4": 16}
#: buffer view targets
ARRAY_BUFFER, ELEMENT_ARRAY_BUFFER = 34962, 34963

GLB_MAGIC, GLB_JSON, GLB_BIN = 0x46546C67, 0x4E4F534A, 0x004E4942


class Document:
    """The JSON object (``self.json``) and the binary data of one asset."""

    def __init__(self, generator: str):
        self.json: dict = {"asset": {"version": "2.0", "generator": generator}}
        self._chunks: list[bytes] = []
        self._length = 0

    def add(self, key: str, item: dict) -> int:
        """Append ``item`` to the top-level array ``key``; its index."""
        items = self.json.setdefault(key, [])
        items.append(item)
        return len(items) - 1

    def view(self, data: bytes, target: int | None = None) -> int:
        """A buffer view of ``data`` (4-byte aligned); its index."""
        pad = (-self._length) % 4
        if pad:
            self._chunks.append(b"\0" * pad)
            self._length += pad
        view = {"buffer": 0, "byteOffset": self._length, "byteLength": len(data)}
        if target is not None:
            view["target"] = target
        self._chunks.append(bytes(data))
        self._length += len(data)
        return self.add("bufferViews", view)

    def accessor(self, values, kind: str, component: int = FLOAT, *, target: int | None = None,
                 bounds: bool = False, normalized: bool = False) -> int:
        """An accessor of ``values`` ((N,) or (N, width)) stored as
        ``component``; ``bounds``: with ``min``/``max`` (positions,
        animation times). Its index."""
        width = _WIDTH[kind]
        data = np.ascontiguousarray(np.asarray(values).reshape(-1, width), dtype=_DTYPE[component])
        acc = {"bufferView": self.view(data.tobytes(), target), "componentType": component,
               "count": len(data), "type": kind}
        if normalized:
            acc["normalized"] = True
        if bounds and len(data):
            acc["min"] = [_number(x) for x in data.min(axis=0)]
            acc["max"] = [_number(x) for x in data.max(axis=0)]
        return self.add("accessors", acc)

    @property
    def binary(self) -> bytes:
        return b"".join(self._chunks)

    def _json_bytes(self, bin_uri: str | None) -> bytes:
        doc = dict(self.json)
        if self._length:
            buffer = {"byteLength": self._length}
            if bin_uri is not None:
                buffer["uri"] = quote(bin_uri)
            doc["buffers"] = [buffer]
        else:
            doc.pop("bufferViews", None)
        return json.dumps(doc, separators=(",", ":"), allow_nan=False, ensure_ascii=False).encode("utf-8")

    def glb(self) -> list[bytes]:
        """The binary container (chunks to write one after the other)."""
        text = self._json_bytes(None)
        text += b" " * ((-len(text)) % 4)
        chunks = [struct.pack("<II", len(text), GLB_JSON), text]
        if self._length:
            data = self.binary
            data += b"\0" * ((-len(data)) % 4)
            chunks += [struct.pack("<II", len(data), GLB_BIN), data]
        total = 12 + sum(len(c) for c in chunks)
        return [struct.pack("<III", GLB_MAGIC, 2, total), *chunks]

    def gltf(self, bin_name: str) -> tuple[bytes, bytes | None]:
        """(the JSON file, the binary file or None when there is no data)."""
        return self._json_bytes(bin_name), (self.binary if self._length else None)


def _number(x) -> float | int:
    """A stored value as JSON gives it back exactly (a float32 as the double it is)."""
    return int(x) if np.issubdtype(type(x), np.integer) else float(x)
