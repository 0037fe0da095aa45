# SPDX-License-Identifier: GPL-3.0-or-later
"""Blender's evaluated deformation versus the core's evaluation of the
original files, frame by frame."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..scene import Scene
from ..scene import evaluate as oracle
from . import mesh_arrays


@dataclass
class FrameError:
    frame: float
    max_error: float
    mean_error: float


@dataclass
class Report:
    frames: list[FrameError]
    size: float
    tolerance: float

    @property
    def max_error(self) -> float:
        return max((f.max_error for f in self.frames), default=0.0)

    @property
    def ok(self) -> bool:
        return self.max_error <= self.tolerance

    def table(self) -> str:
        lines = [f"{'frame':>8} {'max error':>12} {'mean error':>12}"]
        lines += [f"{f.frame:>8g} {f.max_error:>12.3e} {f.mean_error:>12.3e}" for f in self.frames]
        return "\n".join(lines)

    def verdict(self) -> str:
        rel = self.max_error / self.size if self.size else 0.0
        word = "PASS" if self.ok else "FAIL"
        return (f"{word}: max error {self.max_error:.3e} over {len(self.frames)} frames "
                f"({rel:.2e} of model size {self.size:.4g}; tolerance {self.tolerance:.3e})")


def evaluated_world(context, obj) -> np.ndarray:
    """Evaluated (deformed) vertex positions of mesh ``obj`` in world space."""
    dg = context.evaluated_depsgraph_get()
    ev = obj.evaluated_get(dg)
    me = ev.data
    co = mesh_arrays.positions(me)
    m = np.array(ev.matrix_world, dtype=np.float64)
    return co.astype(np.float64) @ m[:3, :3].T + m[:3, 3]


def verify(context, objects: dict, reference: Scene, clips, frames, rel_tolerance: float = 1e-5) -> Report:
    """Blender's evaluated meshes ``objects`` ({reference mesh index: object},
    world space) against the oracle's evaluation of ``reference`` (a fresh
    parse of the file, never read back from Blender) playing ``clips`` (None,
    a clip, or a layer stack) at each scene frame. The caller sets Blender up
    to play the same (active action or NLA stack)."""
    scene = context.scene
    fps = scene.render.fps / scene.render.fps_base
    frames = [float(f) for f in frames]
    size = oracle.size(reference)
    want_all = oracle.evaluate(reference, clips, frames, fps)
    order = sorted(objects)
    counts = [len(reference.meshes[i].positions) for i in range(len(reference.meshes))]
    starts = np.concatenate(([0], np.cumsum(counts)))
    out = []
    for f, want in zip(frames, want_all):
        whole = int(np.floor(f))
        scene.frame_set(whole, subframe=float(f - whole))
        errs = [np.linalg.norm(evaluated_world(context, objects[i]) - want[starts[i]:starts[i + 1]], axis=1)
                for i in order]
        d = np.concatenate(errs) if errs else np.zeros(0)
        out.append(FrameError(f, float(d.max()) if len(d) else 0.0, float(d.mean()) if len(d) else 0.0))
    return Report(out, size, rel_tolerance * size)
