# SPDX-License-Identifier: GPL-3.0-or-later
"""Armature bones from rest matrices: lengths and edit-bone creation, shared
by the RiTE and DirectX importers."""
from __future__ import annotations

import bpy
import numpy as np
from mathutils import Matrix


def children(parents) -> list[list[int]]:
    kids: list[list[int]] = [[] for _ in parents]
    for j, p in enumerate(parents):
        if p >= 0:
            kids[p].append(j)
    return kids


def bone_lengths(heads: np.ndarray, parents: np.ndarray, order, size: float, min_len: float) -> np.ndarray:
    """Mean distance to the children's heads; a leaf gets half its parent's
    length (``order`` lists parents before children); never below ``min_len``
    (Blender rewrites bones shorter than about 1e-4)."""
    kids = children(parents)
    lengths = np.zeros(len(heads))
    for j in range(len(heads)):
        d = [float(np.linalg.norm(heads[k] - heads[j])) for k in kids[j]]
        d = [x for x in d if x > min_len]
        lengths[j] = float(np.mean(d)) if d else 0.0
    for j in order:
        if lengths[j] == 0.0:
            p = parents[j]
            lengths[j] = 0.5 * lengths[p] if p >= 0 and lengths[p] > 0 else size * 0.05
    return np.maximum(lengths, min_len)


def create_bones(context, obj, names: list[str], parents, matrices: np.ndarray, lengths) -> list[str]:
    """Edit bones with the given armature-space rest matrices, lengths and
    parents (not connected). Returns the names Blender gave them (duplicates
    and over-long names are renamed); edit bones die on leaving edit mode."""
    prev_active = context.view_layer.objects.active
    context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="EDIT")
    try:
        ebones = []
        for name, m, length in zip(names, matrices, lengths):
            eb = obj.data.edit_bones.new(name)
            eb.head = (0.0, 0.0, 0.0)
            eb.tail = (0.0, float(length), 0.0)
            eb.matrix = Matrix(np.asarray(m).tolist())
            eb.use_connect = False
            ebones.append(eb)
        for i, p in enumerate(parents):
            if p >= 0:
                ebones[i].parent = ebones[p]
        return [eb.name for eb in ebones]
    finally:
        bpy.ops.object.mode_set(mode="OBJECT")
        context.view_layer.objects.active = prev_active
