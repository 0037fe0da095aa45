# SPDX-License-Identifier: GPL-3.0-or-later
"""What must not get into Blender (or into a written file), checked once for
every format before anything is built: non-finite numbers, numbers beyond
float32 (Blender stores float32 and would get inf), indices out of range,
singular transforms, and animations beyond Blender's frame range or too
large to bake. Each problem is a :class:`~.model.SceneError` naming what and
where; harmless oddities are warnings."""
from __future__ import annotations

import numpy as np

from .model import Scene, SceneError

FLOAT32_MAX = float(np.finfo(np.float32).max)
#: Blender's last frame (MAXFRAME): scene and key frames must lie within it.
MAX_FRAME = 1_048_574
#: The most (frames x bones) an import may bake: about 1.5 GB of keys.
MAX_BAKED_KEYS = 20_000_000


def _finite(name: str, a, limit: float = FLOAT32_MAX) -> None:
    arr = np.asarray(a, dtype=np.float64)
    if not arr.size:
        return
    top = np.abs(arr).max()             # NaN if any is NaN
    if top <= limit and top != np.inf:  # (the usual case, in one pass)
        return
    bad = ~np.isfinite(arr) | (np.abs(arr) > limit)
    if bad.any():
        i = np.unravel_index(int(np.argmax(bad)), arr.shape)
        v = arr[i]
        why = "not a finite number" if not np.isfinite(v) else "beyond the float32 range Blender stores"
        raise SceneError(f"{name}: value {v!r} at {tuple(int(x) for x in i)} is {why}")


def _index(name: str, a, n: int) -> None:
    arr = np.asarray(a)
    if arr.size and (arr.min() < 0 or arr.max() >= n):
        bad = arr[(arr < 0) | (arr >= n)][0]
        raise SceneError(f"{name}: index {int(bad)} out of range (0..{n - 1})")


def singular(m: np.ndarray) -> np.ndarray:
    """(J,) bool: the 4x4 transforms (J, 4, 4) whose 3x3 part flattens space
    (|det| at most 1e-12 of the cube of its largest entry)."""
    m = np.asarray(m, dtype=np.float64)
    if not len(m):
        return np.zeros(0, dtype=bool)
    det = np.abs(np.linalg.det(m[:, :3, :3]))
    scale = np.maximum(np.abs(m[:, :3, :3]).max(axis=(1, 2)), 1e-300)
    return det <= 1e-12 * scale ** 3


def validate(scene: Scene, fps: float = 24.0, bones: int | None = None) -> list[str]:
    """Raise SceneError for what cannot be imported; return warnings."""
    warnings: list[str] = []
    sk = scene.skeleton
    J = 0 if sk is None else len(sk)
    if sk is not None:
        _finite("joint transforms", sk.local)
        _finite("bind matrices", sk.bind)
        for what, m in (("transform", sk.local), ("bind matrix", sk.bind)):
            bad = np.nonzero(singular(m))[0]
            if len(bad):
                raise SceneError(f"joint {sk.names[int(bad[0])]!r}: singular {what} (it flattens space: "
                                 f"nothing can be posed or skinned with it)")
    for m in scene.meshes:
        label = f"mesh {m.name!r}"
        V = len(m.positions)
        _finite(f"{label}: vertex positions", m.positions)
        _index(f"{label}: face corners", m.corners, V)
        if int(np.sum(m.face_sizes)) != len(m.corners):
            raise SceneError(f"{label}: face sizes add up to {int(np.sum(m.face_sizes))}, "
                             f"not the {len(m.corners)} corners")
        for what, arr in (("normals", m.normals), ("UVs", m.uvs), ("colours", m.colors),
                          *((f"UV map {k!r}", uv) for k, uv in m.uv_sets.items())):
            if arr is not None:
                _finite(f"{label}: {what}", arr)
        for k, uv in m.uv_sets.items():
            if np.shape(uv) != (len(m.corners), 2):
                raise SceneError(f"{label}: UV map {k!r} has shape {np.shape(uv)}, not ({len(m.corners)}, 2)")
        if m.face_materials is not None and len(m.materials):
            _index(f"{label}: face materials", m.face_materials, len(m.materials))
        _index(f"{label}: materials", m.materials, len(scene.materials))
        if m.parent >= J and m.parent >= 0:
            raise SceneError(f"{label}: parent joint {m.parent} out of range")
        _finite(f"{label}: placement", m.matrix)
        if m.skin is not None:
            s = m.skin
            _index(f"{label}: weights' vertices", s.vertex, V)
            _index(f"{label}: weights' joints", s.joint, J)
            _index(f"{label}: skin joints", s.joints, J)
            _finite(f"{label}: weights", s.weight)
            _finite(f"{label}: inverse bind matrices", s.inverse_bind)
            if len(s.weight) and s.weight.min() < 0:
                raise SceneError(f"{label}: negative weight {float(s.weight.min())!r}")
    for c in scene.clips:
        label = f"animation {c.name!r}"
        for what, ch in (("rotation", c.rotation), ("translation", c.translation), ("scale", c.scale)):
            _finite(f"{label}: {what} key times", ch.times, limit=np.inf)
            _finite(f"{label}: {what} keys", ch.values)
            _index(f"{label}: {what} joints", ch.targets, J)
        if not (np.isfinite(c.start) and np.isfinite(c.end)):
            raise SceneError(f"{label}: key times are not finite")
        with np.errstate(all="ignore"):
            f0, f1 = c.frame_range(fps)
        if not (abs(f0) <= MAX_FRAME and abs(f1) <= MAX_FRAME):
            raise SceneError(f"{label}: keys reach frame {max(abs(f0), abs(f1)):.6g} at {fps:g} fps, beyond "
                             f"Blender's {MAX_FRAME} (check the time base: ticks per second)")
        n_bones = J if bones is None else bones
        if (f1 - f0 + 2) * max(n_bones, 1) > MAX_BAKED_KEYS:
            raise SceneError(f"{label}: {f1 - f0 + 1:.0f} frames x {n_bones} bones is too much to key "
                             f"(at most {MAX_BAKED_KEYS} bone-frames)")
    return warnings


def writable(scene: Scene, warnings: list[str]) -> Scene:
    """``scene`` without the meshes a written file could not carry, each left
    out with a warning: a mesh with no faces (nothing to see; .X readers
    such as assimp refuse a mesh without faces) and a mesh whose placement
    flattens space (an object scaled to zero: nothing to see either, and a
    singular transform, which readers refuse). The scene itself is not
    changed: a shallow copy is returned when something is left out."""
    import dataclasses

    kept = []
    for m in scene.meshes:
        a = np.asarray(m.matrix, dtype=np.float64)[:3, :3]
        scale = max(float(np.abs(a).max()), 1e-300)
        if not len(m.face_sizes):
            warnings.append(f"mesh {m.name!r} has no faces: left out (a file's readers need faces; give it "
                            f"faces to export it)")
        elif abs(float(np.linalg.det(a))) <= 1e-12 * scale ** 3:
            warnings.append(f"mesh {m.name!r} is scaled to zero (its placement flattens space): left out, as it "
                            f"shows nothing (scale it up to export it)")
        else:
            kept.append(m)
    return scene if len(kept) == len(scene.meshes) else dataclasses.replace(scene, meshes=kept)


#: The most joints one import builds in Blender (bones, or empties). Blender
#: makes each bone and each vertex group in time proportional to those
#: already made (a name check over its list), so building grows with the
#: square of the joint count: about 1 ms per joint at 10,000 joints on a
#: 2-vCPU machine, 10 s in all (bench/bench_wide_skeleton.py); the readers
#: and ``convert`` take up to 100,000 joints in time proportional to them.
MAX_IMPORT_JOINTS = 10_000


def check_import_size(scene: Scene) -> None:
    """SceneError when the scene has more joints than an import builds
    (:data:`MAX_IMPORT_JOINTS`), before anything is built."""
    n = scene.n_joints
    if n > MAX_IMPORT_JOINTS:
        raise SceneError(f"{n:,} joints, more than the {MAX_IMPORT_JOINTS:,} an import builds (Blender's time to "
                         f"make bones and vertex groups grows with the square of their number); convert the file "
                         f"without Blender instead (python -m legacy_skin_io convert), which takes up to 100,000")


#: what to change when an animation has too many frames to write
FRAME_RATE_FIX = ("lower the frame rate (the scene's, or convert's --fps), or raise the time base of .X input "
                  "(Ticks per Second, --input-ticks-per-second)")


def check_frame_count(clip, fps: float, limit: int) -> None:
    """SceneError, before anything is sampled, when ``clip`` spans more
    than ``limit`` whole frames at ``fps`` (or an infinite range: a time
    base so small that its times overflow)."""
    with np.errstate(all="ignore"):
        f0, f1 = clip.frame_range(fps)
        n = f1 - f0
    if not (np.isfinite(n) and n < limit):
        raise SceneError(f"animation {clip.name!r}: {n:.4g} frames at {fps:g} fps, more than the {limit:,} a file "
                         f"takes: {FRAME_RATE_FIX}")
