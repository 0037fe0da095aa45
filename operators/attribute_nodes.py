# SPDX-License-Identifier: GPL-3.0-or-later
"""Vertex groups in bulk through Geometry Nodes: inside a node tree a vertex
group is a float point attribute, so a group that copies named attributes
moves many weights at once (Blender has no bulk API for deform weights).
Used by the builder (float attributes -> vertex groups) and the extractor
(vertex groups -> float attributes)."""
from __future__ import annotations

from typing import Any

import bpy

#: names Geometry Nodes reads as built-in data, not as a vertex group
BUILTIN = frozenset({"position", "id", "material_index", "sharp_face", "sharp_edge", "custom_normal", "normal",
                     "radius", "velocity", "crease_vert", "crease_edge", "uv_seam", "bevel_weight_vert",
                     "bevel_weight_edge"})


def group_readable(me) -> Any:
    """A test of vertex group names: does a node tree on ``me`` reach the
    group by its name (no attribute of the mesh, built-in or hidden ``.``
    name takes it)?"""
    taken = {a.name for a in me.attributes} | BUILTIN
    return lambda name: name not in taken and not name.startswith(".")


def copy_group(name: str, pairs: list[tuple[str, str]]) -> Any:
    """A temporary Geometry Nodes group that stores each float point
    attribute ``source`` as ``target`` (pairs of names); the caller removes it."""
    ng: Any = bpy.data.node_groups.new(name, "GeometryNodeTree")
    ng.interface.new_socket("Geometry", in_out="INPUT", socket_type="NodeSocketGeometry")
    ng.interface.new_socket("Geometry", in_out="OUTPUT", socket_type="NodeSocketGeometry")
    sock = ng.nodes.new("NodeGroupInput").outputs[0]
    for source, target in pairs:
        # float and point are the nodes' defaults; every property set updates the tree: set only what differs
        read: Any = ng.nodes.new("GeometryNodeInputNamedAttribute")
        _ensure(read, "data_type", "FLOAT")
        read.inputs["Name"].default_value = source
        store: Any = ng.nodes.new("GeometryNodeStoreNamedAttribute")
        _ensure(store, "data_type", "FLOAT")
        _ensure(store, "domain", "POINT")
        store.inputs["Name"].default_value = target
        ng.links.new(sock, store.inputs["Geometry"])
        ng.links.new(read.outputs["Attribute"], store.inputs["Value"])
        sock = store.outputs["Geometry"]
    ng.links.new(sock, ng.nodes.new("NodeGroupOutput").inputs[0])
    return ng


def _ensure(node, prop: str, value: str) -> None:
    if getattr(node, prop) != value:
        setattr(node, prop, value)
