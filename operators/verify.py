# SPDX-License-Identifier: GPL-3.0-or-later
"""Blender's evaluated deformation versus the core's evaluation of the
original files, frame by frame."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..io.rite.playback import RiteRig, StackEntry, evaluate_stack
from ..core import skinning


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
    co = np.empty(len(me.vertices) * 3, dtype=np.float32)
    me.vertices.foreach_get("co", co)
    m = np.array(ev.matrix_world, dtype=np.float64)
    return co.reshape(-1, 3).astype(np.float64) @ m[:3, :3].T + m[:3, 3]


def evaluated_positions(context, mesh_obj, relative_to) -> np.ndarray:
    """Evaluated vertex positions of ``mesh_obj`` in ``relative_to``'s space."""
    inv = np.linalg.inv(np.array(relative_to.matrix_world))
    return evaluated_world(context, mesh_obj) @ inv[:3, :3].T + inv[:3, 3]


def verify_rite(context, armature, mesh_obj, rig: RiteRig, conv, entries: list[StackEntry], frames,
                rel_tolerance: float = 1e-5) -> Report:
    """Compare Blender's Armature-modifier result with the core's skinning
    (Blender's weight policy) of the RiTE Animator at each scene frame."""
    scene = context.scene
    infl = rig.influences()
    job = skinning.SkinJob(rig.ram.positions, infl, "blender")
    size = rig.size() * conv.s
    frames = list(frames)
    rotations = (evaluate_stack(rig, entries, frames) if entries
                 else np.broadcast_to(rig.bind_rotation, (len(frames),) + rig.bind_rotation.shape))
    skin = rig.skin_matrices(rotations)
    out = []
    for f, mats in zip(frames, skin):
        whole = int(np.floor(f))
        scene.frame_set(whole, subframe=float(f - whole))
        got = evaluated_positions(context, mesh_obj, armature)
        pos, _ = job.run(mats)
        want = conv.points(pos)
        d = np.linalg.norm(got - want, axis=1)
        out.append(FrameError(float(f), float(d.max()) if len(d) else 0.0, float(d.mean()) if len(d) else 0.0))
    return Report(out, size, rel_tolerance * size)
