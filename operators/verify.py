# SPDX-License-Identifier: GPL-3.0-or-later
"""Blender's evaluated deformation versus the core's evaluation of the
original files, frame by frame; and, as information (never a failure), how
far Blender's normals are from the ones the runtime skins."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core import faces
from ..scene import Scene, evaluate
from . import mesh_arrays, metadata


@dataclass
class FrameError:
    frame: float
    max_error: float
    mean_error: float


@dataclass
class NormalDeviation:
    """Angles (degrees) between Blender's evaluated corner normals and the
    file's normals skinned as the RiTE runtime skins them (``sum w R n``):
    Blender derives normals from the deformed mesh (custom normals kept
    relative to its faces) and cannot skin them. Percentiles to 0.001
    degree."""

    median: float
    p95: float
    max: float
    corners: int

    def line(self) -> str:
        return (f"normals (information, not checked): {self.median:.3g} degrees median, {self.p95:.3g} at the "
                f"95th percentile, {self.max:.3g} at most from the file's normals turned by their joints "
                f"(sum of w R n, as the RiTE runtime skins them; Blender derives normals from the deformed mesh)")


class _Angles:
    """A histogram of angles in 0.001 degree bins (percentiles without keeping every angle)."""

    BINS = 180000

    def __init__(self):
        self.counts = np.zeros(self.BINS + 1, dtype=np.int64)
        self.max = 0.0

    def add(self, degrees: np.ndarray) -> None:
        if len(degrees):
            k = np.clip(np.round(degrees * (self.BINS / 180.0)).astype(np.int64), 0, self.BINS)
            self.counts += np.bincount(k, minlength=self.BINS + 1)
            self.max = max(self.max, float(degrees.max()))

    def result(self) -> NormalDeviation | None:
        n = int(self.counts.sum())
        if not n:
            return None
        cum = np.cumsum(self.counts)
        at = [int(np.searchsorted(cum, q * n)) * 180.0 / self.BINS for q in (0.5, 0.95)]
        return NormalDeviation(at[0], at[1], self.max, n)


@dataclass
class Report:
    frames: list[FrameError]
    size: float
    tolerance: float
    normal_deviation: NormalDeviation | None = None
    #: (reference scene, clips) ``scene.evaluate`` played for these frames (the report's overlay)
    played: Any = None

    @property
    def max_error(self) -> float:
        """The largest error over the frames; NaN when any frame's is not a
        number (a NaN must not hide behind the others)."""
        errors = np.array([f.max_error for f in self.frames], dtype=np.float64)
        return float(errors.max()) if len(errors) else 0.0

    @property
    def ok(self) -> bool:
        """Within the tolerance, and every figure a finite number (a non-finite
        error, model size or tolerance is a failure, never a pass)."""
        figures = (self.max_error, self.size, self.tolerance)
        return bool(np.isfinite(figures).all() and self.max_error <= self.tolerance)

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


def evaluated_vertices(context, obj, vertex: np.ndarray | None) -> np.ndarray:
    """:func:`evaluated_world` of each vertex of the scene mesh ``obj`` was
    built from: through ``vertex``, the Blender vertex of each where the
    import welded them (``metadata.load_weld(obj.data)``, loaded once by the
    caller), else (None) Blender's vertices as they are."""
    co = evaluated_world(context, obj)
    return co if vertex is None else co[vertex]


def _played(clips) -> str:
    if clips is None:
        return "default pose"
    if isinstance(clips, (list, tuple)):
        return "layer stack"
    return repr(clips.name)


def evaluated_normals(context, obj) -> np.ndarray:
    """Evaluated corner normals (L, 3) of mesh ``obj`` in world space, unit."""
    ev = obj.evaluated_get(context.evaluated_depsgraph_get())
    me = ev.data
    n = np.empty(3 * len(me.loops), dtype=np.float32)
    me.corner_normals.foreach_get("vector", n)
    m = np.linalg.inv(np.array(ev.matrix_world, dtype=np.float64)[:3, :3]).T
    out = n.reshape(-1, 3).astype(np.float64) @ m.T
    length = np.linalg.norm(out, axis=1, keepdims=True)
    return out / np.where(length > 0, length, 1.0)


def _corner_sources(reference: Scene, objects: dict) -> dict:
    """{mesh index: the reference corners of its Blender loops} for the
    meshes whose loops are the faces the builder kept (``core.faces.valid_faces``)."""
    out = {}
    for i, obj in objects.items():
        m = reference.meshes[i]
        if m.normals is None or not len(m.normals):
            continue
        src = faces.valid_faces(m.face_sizes, m.corners, len(m.positions))[1]
        if len(src) == len(obj.data.loops):
            out[i] = src
    return out


#: the normals' deviation is measured on at most this many frames, spread over those verified
NORMAL_FRAMES = 32


def verify(context, objects: dict, reference: Scene, clips, frames, rel_tolerance: float = 1e-5,
           normals: bool = False, maps: dict | None = None, counted=None) -> Report:
    """Blender's evaluated meshes ``objects`` ({reference mesh index: object},
    world space) against ``scene.evaluate``'s evaluation of ``reference`` (a fresh
    parse of the file, never read back from Blender) playing ``clips`` (None,
    a clip, or a layer stack) at each scene frame. The caller sets Blender up
    to play the same (active action or NLA stack). With ``normals``, the
    report also holds the normals' deviation from the runtime's skinned
    normals (information), on at most NORMAL_FRAMES of the frames. A long
    run shows its progress when given ``counted`` (``counted(label, items,
    total)`` yields ``items``, showing how far they are: the command line
    passes ``cli.progress.counted``; None shows nothing). ``maps``:
    {reference mesh index: (V,) the reference vertex of each of the object's
    vertices} for objects whose vertices are the reference's split (a file
    written with vertices split at seams and material borders). An object
    whose vertices the import welded is compared at every vertex of the
    file it was built from, through the Blender vertex of each
    (:func:`evaluated_vertices`)."""
    scene = context.scene
    fps = scene.render.fps / scene.render.fps_base
    frames = [float(f) for f in frames]
    size = evaluate.size(reference)
    want_all = evaluate.evaluate(reference, clips, frames, fps)
    order = sorted(objects)
    counts = [len(reference.meshes[i].positions) for i in range(len(reference.meshes))]
    starts = np.concatenate(([0], np.cumsum(counts)))
    corners = _corner_sources(reference, objects) if normals and reference.skeleton is not None else {}
    sampled = set(np.unique(np.linspace(0, len(frames) - 1, min(len(frames), NORMAL_FRAMES)).round()).astype(int)
                  .tolist()) if frames else set()
    worlds = evaluate.joint_world(reference, clips, frames, fps) if corners else np.zeros((len(frames), 0, 4, 4))
    default = reference.skeleton.world() if corners else None
    infl = {i: evaluate.skin_influences(reference.meshes[i]) for i in corners if reference.meshes[i].skin is not None}
    angles = _Angles()
    welds = {i: metadata.load_weld(objects[i].data) for i in order}      # (read once, not at every frame)
    out = []
    count = counted or (lambda label, items, total: items)
    for k, (f, want) in enumerate(count(f"verify {_played(clips)}", zip(frames, want_all), len(frames))):
        whole = int(np.floor(f))
        scene.frame_set(whole, subframe=float(f - whole))
        errs = [np.linalg.norm(evaluated_vertices(context, objects[i], welds[i])
                               - want[starts[i]:starts[i + 1]][(maps or {}).get(i, slice(None))], axis=1)
                for i in order]
        d = np.concatenate(errs) if errs else np.zeros(0)
        out.append(FrameError(f, float(d.max()) if len(d) else 0.0, float(d.mean()) if len(d) else 0.0))
        for i, src in (corners.items() if k in sampled else ()):
            runtime = evaluate.corner_normals(reference, reference.meshes[i], worlds[k], default, infl.get(i))
            assert runtime is not None        # _corner_sources keeps meshes with normals
            runtime = runtime[src]
            got = evaluated_normals(context, objects[i])
            angles.add(np.degrees(np.arccos(np.clip(np.sum(got * runtime, axis=1), -1.0, 1.0))))
    return Report(out, size, rel_tolerance * size, angles.result(), played=(reference, clips))
