# SPDX-License-Identifier: GPL-3.0-or-later
"""Mesh data in bulk through the attribute API.

Since Blender 4 a mesh's positions, corner vertices, material indices and UV
maps are generic attributes (``position``, ``.corner_vert``,
``material_index``, a 2D float corner attribute). Their ``data.foreach_set``
and ``foreach_get`` copy the whole array at once, while the older
``MeshVertex`` / ``MeshLoop`` / ``MeshPolygon`` properties go through RNA
element by element, about a hundred times slower on a large mesh (Blender's
glTF importer writes them the same way).

Used by the builder (writes) and the extractor (reads). A read falls back to
the RNA property when the attribute is missing or not of the expected kind.
"""
from __future__ import annotations

from typing import Any

import numpy as np

#: by data type: the foreach property of an attribute's elements and its numpy type
_KINDS = {"FLOAT": ("value", np.float32), "INT": ("value", np.int32), "BOOLEAN": ("value", bool),
          "FLOAT_VECTOR": ("vector", np.float32), "FLOAT2": ("vector", np.float32),
          "FLOAT_COLOR": ("color", np.float32)}


def ensure(me, name: str, data_type: str, domain: str) -> Any:
    """The attribute ``name`` of that type and domain, created (or replaced) as needed."""
    attr = me.attributes.get(name)
    if attr is not None and (attr.data_type != data_type or attr.domain != domain):
        me.attributes.remove(attr)
        attr = None
    if attr is None:
        attr = me.attributes.new(name, data_type, domain)
    return attr


def write(me, name: str, data_type: str, domain: str, values: np.ndarray) -> Any:
    """Store ``values`` (any shape, flattened) into the attribute ``name``."""
    attr = ensure(me, name, data_type, domain)
    prop, dtype = _KINDS[data_type]
    attr.data.foreach_set(prop, np.ascontiguousarray(values, dtype=dtype).reshape(-1))
    return attr


def read(me, name: str, data_type: str, domain: str, count: int, width: int = 1) -> np.ndarray | None:
    """The attribute ``name`` as a flat array of ``count * width`` values, or
    None when the mesh has no such attribute of that type and domain."""
    attr = me.attributes.get(name)
    if attr is None or attr.data_type != data_type or attr.domain != domain or len(attr.data) != count:
        return None
    prop, dtype = _KINDS[data_type]
    out = np.empty(count * width, dtype=dtype)
    attr.data.foreach_get(prop, out)
    return out


def positions(me) -> np.ndarray:
    """(V, 3) float32 vertex positions."""
    V = len(me.vertices)
    co = read(me, "position", "FLOAT_VECTOR", "POINT", V, 3)
    if co is None:
        co = np.empty(3 * V, dtype=np.float32)
        me.vertices.foreach_get("co", co)
    return co.reshape(-1, 3)


def corner_vertices(me) -> np.ndarray:
    """(L,) int32 vertex index of every corner (loop)."""
    L = len(me.loops)
    v = read(me, ".corner_vert", "INT", "CORNER", L)
    if v is None:
        v = np.empty(L, dtype=np.int32)
        me.loops.foreach_get("vertex_index", v)
    return v


def face_materials(me) -> np.ndarray:
    """(F,) int32 material slot index of every face (0 where the mesh stores none)."""
    F = len(me.polygons)
    m = read(me, "material_index", "INT", "FACE", F)
    return np.zeros(F, dtype=np.int32) if m is None else m


def uv_map(me, layer) -> np.ndarray:
    """(L, 2) float32 coordinates of a UV map."""
    L = len(me.loops)
    uv = np.empty(2 * L, dtype=np.float32)
    layer.uv.foreach_get("vector", uv)
    return uv.reshape(-1, 2)


def set_uv_map(me, name: str, uv: np.ndarray) -> Any:
    """A new UV map ``name`` holding ``uv`` ((L, 2))."""
    layer = me.uv_layers.new(name=name)
    layer.uv.foreach_set("vector", np.ascontiguousarray(uv, dtype=np.float32).reshape(-1))
    return layer
