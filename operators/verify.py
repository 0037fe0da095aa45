# SPDX-License-Identifier: GPL-3.0-or-later
"""Blender's evaluated deformation versus the core's evaluation of the
original files, frame by frame."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..io.progress import counted
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
    #: (reference scene, clips) the oracle played for these frames (the report's overlay)
    played: Any = None

    @property
    def max_error(self) -> float:
        return max((f.max_error for f in self.frames), default=0.0)

    @property
    def ok(self) -> bool:
        return self.max_error <= self.tolerance

    @property
    def worst(self) -> FrameError | None:
        """The frame with the largest error (the first of equals)."""
        return max(self.frames, key=lambda f: f.max_error, default=None)

    def summary(self, title: str) -> str:
        """One line: ``title: N frames checked, worst frame F at E of the
        model size (tolerance T): PASS|FAIL``."""
        w = self.worst
        rel = (w.max_error / self.size if self.size else 0.0) if w else 0.0
        at = f"worst frame {w.frame:g} at {rel:.2e}" if w else "no frame"
        tol = self.tolerance / self.size if self.size else self.tolerance
        return (f"{title}: {len(self.frames)} frame{'s' if len(self.frames) != 1 else ''} checked, {at} of the "
                f"model size (tolerance {tol:.0e}): {'PASS' if self.ok else 'FAIL'}")

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


def _played(clips) -> str:
    if clips is None:
        return "default pose"
    if isinstance(clips, (list, tuple)):
        return "layer stack"
    return repr(clips.name)


def verify(context, objects: dict, reference: Scene, clips, frames, rel_tolerance: float = 1e-5) -> Report:
    """Blender's evaluated meshes ``objects`` ({reference mesh index: object},
    world space) against the oracle's evaluation of ``reference`` (a fresh
    parse of the file, never read back from Blender) playing ``clips`` (None,
    a clip, or a layer stack) at each scene frame. The caller sets Blender up
    to play the same (active action or NLA stack). A long run shows its
    progress on the command line (``io.progress``)."""
    scene = context.scene
    fps = scene.render.fps / scene.render.fps_base
    frames = [float(f) for f in frames]
    size = oracle.size(reference)
    want_all = oracle.evaluate(reference, clips, frames, fps)
    order = sorted(objects)
    counts = [len(reference.meshes[i].positions) for i in range(len(reference.meshes))]
    starts = np.concatenate(([0], np.cumsum(counts)))
    out = []
    for f, want in counted(f"verify {_played(clips)}", zip(frames, want_all), len(frames)):
        whole = int(np.floor(f))
        scene.frame_set(whole, subframe=float(f - whole))
        errs = [np.linalg.norm(evaluated_world(context, objects[i]) - want[starts[i]:starts[i + 1]], axis=1)
                for i in order]
        d = np.concatenate(errs) if errs else np.zeros(0)
        out.append(FrameError(f, float(d.max()) if len(d) else 0.0, float(d.mean()) if len(d) else 0.0))
    return Report(out, size, rel_tolerance * size, played=(reference, clips))
