# SPDX-License-Identifier: GPL-3.0-or-later
"""Helpers for the checks of the engine targets (IRRLICHT, DARKBASIC):
what a written file's frame ranges say, and which source vertex each of
Irrlicht's vertices is.

The written file's vertices are its source's, split at UV seams, material
borders and (for the game targets) normals, the copies appended; its
VertexDuplicationIndices name the source vertex of each. Irrlicht's buffer
order of the file's vertices comes from ``irrlicht_reading``.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np


def ranges_of(xpath) -> tuple[float, list[dict]]:
    """(fps, clips) of the ``STEM.ranges.json`` written beside ``xpath``."""
    p = Path(xpath)
    data = json.loads(p.with_name(p.stem + ".ranges.json").read_text(encoding="utf-8"))
    return float(data["fps"]), list(data["clips"])


def reader_meshes(xf) -> list:
    """A parsed file's meshes in the order the reader makes scene meshes of
    them: the top-level ones, then each frame's (frames in the reader's order)."""
    return list(xf.meshes) + [m for f in xf.all_frames() for m in f.meshes]


def split_vertices(xf) -> list[np.ndarray]:
    """Per mesh (reader order), the source vertex of each of its vertices."""
    return [m.duplicates if m.duplicates is not None else np.arange(len(m.positions)) for m in reader_meshes(xf)]


def source_vertices(order) -> tuple[np.ndarray, np.ndarray]:
    """(reader mesh, source vertex) of each of Irrlicht's vertices
    (``order``: ``irrlicht_reading.irrlicht_vertex_order``): the file
    vertex's VertexDuplicationIndices entry, or itself."""
    src = np.array([int(order.meshes[m].duplicates[v]) if order.meshes[m].duplicates is not None else int(v)
                    for m, v in zip(order.mesh.tolist(), order.vertex.tolist())], dtype=np.int64)
    return order.reader_mesh.copy(), src


def take(per_mesh: list[np.ndarray], mesh: np.ndarray, vertex: np.ndarray) -> np.ndarray:
    """Rows of per-mesh arrays (the source's meshes, in order) for (mesh, vertex) pairs."""
    starts = np.concatenate(([0], np.cumsum([len(a) for a in per_mesh])))
    return np.concatenate(per_mesh)[starts[mesh] + vertex]


def worst(got: np.ndarray, want: np.ndarray, size: float) -> tuple[float, int, int]:
    """(largest distance / size, frame index, vertex index) between (F, V, 3) arrays."""
    err = np.linalg.norm(got - want, axis=-1) / size
    f, v = np.unravel_index(int(np.argmax(err)), err.shape)
    return float(err.max()), int(f), int(v)
