# SPDX-License-Identifier: GPL-3.0-or-later
"""Scene clips -> glTF animations, the file's own keys where they play the
same.

glTF's LINEAR interpolation is slerp for rotations (the shortest way, as
Direct3D's D3DX and the core's ``slerp``) and lerp for translation and
scale, holding the first and last key: a clip that plays its keys that way
(one read from .X) is written key for key, in seconds (its time base as
the import decided it). A clip that plays otherwise (a RiTE clip: the
Animator's ``slerpNoInvert``, which lerps keys closer than 36 degrees and
interpolates through the loop's wrap; a clip interpolated per component)
keeps its own keys and gains a key on every whole frame of each span
between them where slerp would show something else at a frame: what the
clip shows at every whole frame is written exactly.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...core import quat, sampling
from ...scene import AxisConversion, Clip, Scene
from ...scene.timeline import TIMELINE
from ...scene.validate import MAX_FRAME, check_frame_count
from ..errors import note
from .document import Document

#: a frame where slerp between the kept keys and the clip differ by more than
#: this (quaternion components) is keyed
EXACT = 1e-7


@dataclass
class WrittenClip:
    """Where a clip went: its animation (-1: none, nothing animated) and
    ``offset``, the seconds its scene frame ``f`` plays at are ``f / fps -
    offset`` (a clip cut from a timeline starts at 0)."""

    index: int
    offset: float


def _seconds(clip: Clip, times: np.ndarray, shift: float, fps: float) -> np.ndarray:
    return clip.to_frames(np.asarray(times, dtype=np.float64) - shift, fps) / fps


def own_keys(own: np.ndarray, times: np.ndarray) -> np.ndarray:
    """(F,) bool: the clip ``times`` a track keeps in any case: the first,
    the last and those of its ``own`` keys."""
    keep = np.isin(times, own)
    keep[[0, -1]] = True
    return keep


def exact_keys(own: np.ndarray, times: np.ndarray, values: np.ndarray) -> np.ndarray:
    """(F,) bool: which of the clip ``times`` (ascending) to key so that
    slerp between them gives ``values`` (F, 4, unit) at every time:
    :func:`own_keys`, and every time of a span between two of those where
    slerp differs."""
    keep = own_keys(own, times)
    at = np.flatnonzero(keep)
    got = sampling.Channels.from_tracks([0], [times[at]], [values[at]], 4).sample(times, "slerp")[:, 0]
    off = np.minimum(np.abs(got - values).max(axis=1), np.abs(got + values).max(axis=1)) > EXACT
    if off.any():
        span = np.searchsorted(at, np.flatnonzero(off), side="right") - 1     # span of each frame that is off
        bad = np.zeros(len(at), dtype=bool)
        bad[span] = True
        inside = np.searchsorted(at, np.arange(len(times)), side="right") - 1
        keep |= bad[np.clip(inside, 0, len(at) - 1)]
    return keep


class AnimationWriter:
    """Clips of one scene as the document's animations."""

    def __init__(self, doc: Document, scene: Scene, nodes: list[int], back: AxisConversion, fps: float,
                 warnings: list[str]):
        self.doc = doc
        self.scene = scene
        self.nodes = nodes
        self.back = back
        self.fps = float(fps)
        self.warnings = warnings
        self._inputs: dict[bytes, int] = {}
        self.r0 = sampling.decompose_trs(scene.skeleton.local)[1] if scene.skeleton is not None else None

    def _input(self, seconds: np.ndarray) -> int:
        t = seconds.astype(np.float32)
        key = t.tobytes()
        if key not in self._inputs:
            self._inputs[key] = self.doc.accessor(t, "SCALAR", bounds=True)
        return self._inputs[key]

    @staticmethod
    def keyed(clip: Clip) -> bool:
        """A clip whose keys play as glTF plays them (slerp, no sampler of its own)."""
        return clip.sampler is None and clip.rotation_mode == "slerp"

    def shift(self, clip: Clip) -> float:
        """Clip time written as time 0: a timeline cut's first frame, else 0
        (the first key when it is before 0: glTF times are not negative)."""
        if TIMELINE in (clip.extras or {}):
            return float(clip.start)
        first = min((float(ch.times.min()) for ch in (clip.rotation, clip.translation, clip.scale)
                     if len(ch.times)), default=0.0)
        if first < 0:
            self.warnings.append(f"{clip.name}: starts {-clip.to_frames(first, self.fps):g} frame(s) before 0; "
                                 f"written from time 0 (every key that much later)")
            return first
        return 0.0

    def _tracks(self, clip: Clip, kind: str):
        """(joint, times, values in file space) of a channel's tracks on animated joints."""
        ch = getattr(clip, kind)
        convert = {"rotation": lambda v: quat.normalize(self.back.quats(v)), "translation": self.back.translations,
                   "scale": self.back.scales}[kind]
        for k, j in enumerate(ch.targets.tolist()):
            if clip.animated[j]:
                lo, hi = ch.starts[k], ch.starts[k + 1]
                yield j, ch.times[lo:hi], convert(ch.values[lo:hi])

    def _exact_rotations(self, clip: Clip):
        """(joint, times, values) of the rotation tracks of a clip that plays
        otherwise than slerp: its own keys and what :func:`exact_keys` adds."""
        check_frame_count(clip, self.fps, MAX_FRAME)
        ch = clip.rotation
        joints = [j for j in ch.targets.tolist() if clip.animated[j]]
        if not joints:
            return
        frames, times = clip.bake_frames(self.fps)
        if clip.cycle is not None and clip.cycle[1] - clip.cycle[0] > 0 and len(frames) > 1:
            frames, times = frames[:-1], times[:-1]          # not the wrap key: glTF plays the range once
        f0, f1 = clip.frame_range(self.fps)
        times = np.unique(clip.to_times(np.clip(frames, f0, f1), self.fps))
        q = quat.normalize(clip.rotations_at(self.r0, times)[:, joints])
        q = quat.make_continuous(q, axis=0)
        where = {int(j): k for k, j in enumerate(ch.targets.tolist())}
        added = 0
        for a, j in enumerate(joints):
            k = where[j]
            own = ch.times[ch.starts[k]:ch.starts[k + 1]]
            keep = exact_keys(own, times, q[:, a])
            added += int(keep.sum() > own_keys(own, times).sum())
            yield j, times[keep], quat.normalize(self.back.quats(q[keep, a]))
        if added:
            note(self.warnings, f"{clip.name}: {added} of {len(joints)} rotation tracks keyed on every frame of the "
                                f"spans where glTF's slerp would play otherwise than the animation does")

    def write(self, clip: Clip) -> WrittenClip:
        shift = self.shift(clip)
        offset = float(clip.to_frames(shift, self.fps)) / self.fps
        if self.scene.skeleton is None or not clip.animated.any():
            return WrittenClip(-1, offset)
        rotations = self._tracks(clip, "rotation") if self.keyed(clip) else self._exact_rotations(clip)
        samplers, channels = [], []
        for path, tracks in (("rotation", rotations), ("translation", self._tracks(clip, "translation")),
                             ("scale", self._tracks(clip, "scale"))):
            for j, times, values in tracks:
                seconds = _seconds(clip, times, shift, self.fps)
                t32 = seconds.astype(np.float32)
                keep = np.concatenate((t32[1:] > t32[:-1], [True]))       # float32 times must increase
                if not keep.all():
                    self.warnings.append(f"{clip.name}: {int((~keep).sum())} key(s) of {path} closer than float32 "
                                         f"seconds tell apart, left out")
                    seconds, values = seconds[keep], values[keep]
                kind = "VEC4" if path == "rotation" else "VEC3"
                samplers.append({"input": self._input(seconds), "output": self.doc.accessor(values, kind),
                                 "interpolation": "LINEAR"})
                channels.append({"sampler": len(samplers) - 1, "target": {"node": self.nodes[j], "path": path}})
        if not channels:
            return WrittenClip(-1, offset)
        anim: dict = {"channels": channels, "samplers": samplers}
        if clip.name:
            anim["name"] = clip.name
        return WrittenClip(self.doc.add("animations", anim), offset)
