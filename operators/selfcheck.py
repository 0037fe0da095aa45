# SPDX-License-Identifier: GPL-3.0-or-later
"""The self-check every import runs: Blender's evaluated meshes at the
default pose (the depsgraph, as the user sees them) against ``scene.evaluate``'s
evaluation of the scene (``scene.evaluate``), on a sample of vertices.

The builder runs it once the armature and meshes stand in their default
pose and before any action is assigned; the pipeline reports a difference
over 1e-5 of the model size as one warning with the figure.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..scene import Scene, evaluate
from . import mesh_arrays, metadata

#: vertices compared per import, at most (spread evenly over the meshes)
SAMPLE = 4096


@dataclass
class SelfCheck:
    error: float          # the largest distance found (scene units)
    size: float           # the model size it is relative to
    mesh: str = ""        # the mesh where it is largest
    vertices: int = 0     # how many vertices were compared


def sample(n: int, budget: int) -> np.ndarray:
    """Up to ``budget`` indices of ``n``, evenly spaced, first and last included."""
    if n <= budget:
        return np.arange(n)
    return np.unique(np.linspace(0, n - 1, max(budget, 2)).astype(np.int64))


def run(context, scene: Scene, objects: dict, size: float, points: np.ndarray | None = None) -> SelfCheck:
    """Compare ``objects`` ({scene mesh index: Blender object}) with the
    default pose ``scene.evaluate`` gives ``scene``: ``points``, every mesh's vertices
    one after the other (``evaluate.default_points``, evaluated here when not
    given)."""
    context.view_layer.update()
    dg = context.evaluated_depsgraph_get()
    points = evaluate.default_points(scene) if points is None else points
    starts = np.concatenate(([0], np.cumsum([len(m.positions) for m in scene.meshes])))
    total = sum(len(scene.meshes[i].positions) for i in objects) or 1
    out = SelfCheck(0.0, size)
    for i, obj in objects.items():
        mesh = scene.meshes[i]
        V = len(mesh.positions)
        if not V:
            continue
        idx = sample(V, max(16, SAMPLE * V // total))
        ev = obj.evaluated_get(dg)
        co = mesh_arrays.positions(ev.data)
        vertex = metadata.load_weld(obj.data, V)       # welded: the Blender vertex of each of the file's
        if vertex is not None and len(co) == len(obj.data.vertices):
            co = co[vertex]
        if len(co) != V:        # the evaluated mesh is not the file's: as far off as it gets
            out.error, out.mesh = float("inf"), mesh.name
            return out
        m = np.array(ev.matrix_world, dtype=np.float64)
        got = co[idx].astype(np.float64) @ m[:3, :3].T + m[:3, 3]
        err = float(np.linalg.norm(got - points[starts[i] + idx], axis=1).max())
        out.vertices += len(idx)
        if not err <= out.error:
            out.error, out.mesh = err, mesh.name
    return out
