# SPDX-License-Identifier: GPL-3.0-or-later
"""A scene's clips -> the AnimationSets of a .X file, for :mod:`.from_scene`:
one set per clip, a clip read from .X key for key (its ticks rescaled to
the file's), any other baked at its whole frames; or, for a one-timeline
target (:mod:`.targets`), every clip on one frame-numbered timeline."""
from __future__ import annotations

import numpy as np

from ...core import quat, sampling
from ...scene import AxisConversion, Clip, Scene
from ...scene.timeline import TIMELINE, Placement, layout, timeline_fps
from ...scene.validate import MAX_FRAME, check_frame_count
from ..errors import FormatError
from .conventions import DEFAULT_TICKS_PER_SECOND, col, key_from_rotation
from .key_tables import MAX_KEY_TIME
from .model import XAnimation, XAnimationKey, XAnimationSet, XFile
from .names import file_names, report
from .targets import DARKBASIC, MATRIX_KEYS, ONE_TIMELINE, timeline_set

#: AnimTicksPerSecond is a DWORD
MAX_TICKS_PER_SECOND = 2 ** 32 - 1


def check_ticks(ticks: np.ndarray, what: str) -> None:
    """Key times the file can hold: a DWORD below 2^31 (what D3DX and our
    reader take); past that, FormatError saying which settings to change."""
    if len(ticks) and not (np.isfinite(ticks).all() and np.abs(ticks).max() < MAX_KEY_TIME):
        peak = float(np.nanmax(np.abs(np.where(np.isfinite(ticks), ticks, np.inf))))
        raise FormatError(f"{what}: key times reach {peak:.4g} ticks, past the .X limit of {MAX_KEY_TIME - 1}: "
                          f"set a lower Ticks per Second (--ticks-per-second), a higher frame rate (the scene's, "
                          f"or convert's --fps), or shorten the animation")


def _whole_ticks(times: np.ndarray, what: str, warnings: list[str]) -> np.ndarray:
    """Key times as whole ticks (a DWORD in the file)."""
    ticks = np.round(np.asarray(times, dtype=np.float64))
    check_ticks(ticks, what)
    notes = []
    if len(ticks) and np.abs(ticks - times).max() > 1e-6:
        notes.append(f"{what}: key times rounded to whole ticks (a higher ticks per second keeps them)")
    if len(ticks) and ticks.min() < 0:
        notes.append(f"{what}: keys before time 0 moved to 0")
        ticks = np.maximum(ticks, 0.0)
    warnings.extend(n for n in notes if n not in warnings)     # once per animation
    return ticks


class ClipWriter:
    """The clips of ``scene`` as AnimationSets (:meth:`write`), converted
    back to file space by ``back``; each set named for its clip (respelt
    for a text file, reported)."""

    def __init__(self, scene: Scene, back: AxisConversion, warnings: list[str], *, fps: float, ticks_per_second,
                 key_type: str, text: bool, target: str):
        self.scene = scene
        self.back = back
        self.warnings = warnings
        self.fps = float(fps)
        self.tps_option = ticks_per_second
        self.key_type = key_type
        self.target = target
        self.names: list[str] = []                  # the joints' frame names (write)
        self.placements: list[Placement] = []       # a one-timeline target's clips on the timeline
        self.timeline_fps = self.fps                  # the speed that timeline plays at
        clips = [c.name for c in scene.clips]
        self.set_names, changed = file_names(clips, text=text, fallback="set", keep_empty=set(range(len(clips))))
        if changed:
            warnings.append(report("animation", changed, text))

    def write(self, xf: XFile, names: list[str]) -> None:
        """Every clip into ``xf``, animating the frames ``names`` (one per joint)."""
        self.names = names
        if self.target in ONE_TIMELINE:
            self.timeline(xf)
            return
        tps = self.file_ticks()
        itps = int(round(tps))
        if itps < 1 or abs(itps - tps) > 1e-9:
            self.warnings.append(f"ticks per second {tps:g} is not a whole number: {max(itps, 1)} used")
            itps = max(itps, 1)
        if itps > MAX_TICKS_PER_SECOND:
            raise FormatError(f"ticks per second {itps} is past the .X limit of {MAX_TICKS_PER_SECOND} (a DWORD): "
                              f"set a lower Ticks per Second (--ticks-per-second)")
        rates = {r for r in (self.own_rate(c) for c in self.scene.clips if self.keyed(c)) if r is not None}
        if rates - {float(itps)}:
            self.warnings.append(f"key times rescaled from {', '.join(f'{r:g}' for r in sorted(rates))} "
                                 f"to {itps} ticks per second")
        xf.anim_ticks_per_second = itps
        xf.animation_sets = [self.animation_set(c, float(itps)) for c in self.scene.clips]

    @staticmethod
    def keyed(clip: Clip) -> bool:
        """A clip written key for key: no sampler, slerp between keys (as .X
        readers interpolate): a set read from .X, or one sampled where each
        key is what it shows (Blender's export)."""
        return clip.sampler is None and clip.rotation_mode == "slerp"

    def own_rate(self, clip: Clip) -> float | None:
        """The ticks per second of a clip read from .X (read at one tick per
        frame: the frame rate), else None."""
        if clip.ticks_per_second is not None:
            return float(clip.ticks_per_second)
        if (clip.extras.get("xfile") or {}).get("time_base") == "FRAMES":
            return float(self.fps)
        return None

    def clip_rate(self, clip: Clip) -> float:
        """A keyed clip's clip units per second (a clip without a tick rate counts scene frames)."""
        rate = self.own_rate(clip)
        return self.fps if rate is None else rate

    def file_ticks(self) -> float:
        """The option's ticks per second, else the time base the first clip
        read from .X was read with (keyed, or imported and baked: its ticks
        come back as they were, one per frame for a file read at one tick per
        frame), else 4800."""
        if self.tps_option:
            return float(self.tps_option)
        for c in self.scene.clips:
            rate = self.own_rate(c)
            if rate is not None:
                return rate
        return float(DEFAULT_TICKS_PER_SECOND)

    def _keys(self, local_file: np.ndarray, ticks: np.ndarray) -> list:
        """Keys of one joint from its file-space local matrices (K, 4, 4)."""
        if self.key_type == "MATRIX":
            return [XAnimationKey(4, ticks, col(local_file).reshape(-1, 16))]
        t, r, s = sampling.decompose_trs(local_file)
        r = quat.make_continuous(quat.normalize(r), axis=0)
        return [XAnimationKey(0, ticks, key_from_rotation(r)), XAnimationKey(1, ticks, s),
                XAnimationKey(2, ticks, t)]

    def animation_set(self, clip: Clip, tps: float) -> XAnimationSet:
        sk = self.scene.skeleton
        back = self.back
        aset = XAnimationSet(name=self.set_names[self.scene.clips.index(clip)] or None)
        joints = np.flatnonzero(clip.animated).tolist()
        if self.keyed(clip):
            rate = tps / self.clip_rate(clip)
            first = min((float(ch.times.min()) for ch in (clip.rotation, clip.translation, clip.scale)
                         if len(ch.times)), default=0.0)
            shift = -first if first < 0 else 0.0     # ticks are unsigned: a set starting before 0 moves
            if TIMELINE in (clip.extras or {}):       # a range of a timeline: a set of its own starts at 0
                shift = -first
            elif shift:
                self.warnings.append(f"{clip.name}: starts {shift * rate / tps * self.fps:g} frame(s) before 0; "
                                     f"written from tick 0 (every key that much later)")
            chans = {"r": clip.rotation, "s": clip.scale, "t": clip.translation}
            tracks = {c: {int(j): k for k, j in enumerate(ch.targets.tolist())} for c, ch in chans.items()}

            def track(c, j):
                k = tracks[c].get(j)
                if k is None:
                    return None
                ch = chans[c]
                lo, hi = ch.starts[k], ch.starts[k + 1]
                return ch.times[lo:hi], ch.values[lo:hi]

            if self.key_type == "MATRIX":
                all_t = [track(c, j)[0] for j in joints for c in "rst" if track(c, j) is not None]
                union = np.unique(np.concatenate(all_t)) if all_t else np.zeros(0)
                local = back.matrices(clip.sample_local(sk.local, union)) if len(union) else None
            for j in joints:
                anim = XAnimation(name=None, frame_name=self.names[j])
                what = clip.name
                if self.key_type == "MATRIX":
                    own = [track(c, j)[0] for c in "rst" if track(c, j) is not None]
                    if not own:
                        continue
                    times = np.unique(np.concatenate(own))
                    rows = np.searchsorted(union, times)
                    anim.keys.append(XAnimationKey(4, _whole_ticks((times + shift) * rate, what, self.warnings),
                                                   col(local[rows, j]).reshape(-1, 16)))
                else:
                    for kt, c in ((0, "r"), (1, "s"), (2, "t")):
                        tr = track(c, j)
                        if tr is None:
                            continue
                        times, v = tr
                        if c == "r":
                            v = key_from_rotation(back.quats(v))     # as read: a non-unit key is the file's own
                        elif c == "s":
                            v = back.scales(v)
                        else:
                            v = back.translations(v)
                        anim.keys.append(XAnimationKey(kt, _whole_ticks((times + shift) * rate, what, self.warnings),
                                                       v))
                if anim.keys:
                    aset.animations.append(anim)
            return aset
        # any other clip: baked at every whole frame of the clip
        check_frame_count(clip, self.fps, MAX_FRAME)     # before baking them (Blender's range)
        frames, times = clip.bake_frames(self.fps)
        if clip.cycle is not None and clip.cycle[1] - clip.cycle[0] > 0 and len(frames) > 1:
            frames, times = frames[:-1], times[:-1]      # not the cycle's wrap key
        f0, f1 = clip.frame_range(self.fps)
        outside = (frames < f0) | (frames > f1)
        if outside.any():     # the clip's own first and last times, not whole frames beyond them
            frames = np.clip(frames, f0, f1)             # (keeps the set's length)
            times = np.where(outside, clip.to_times(frames, self.fps), times)
        ticks = _whole_ticks(frames * tps / self.fps, clip.name, self.warnings)
        ticks, keep = np.unique(ticks, return_index=True)
        if not joints:
            return aset
        local = back.matrices(clip.sample_local(sk.local, times[keep])[:, joints])
        for a, j in enumerate(joints):
            anim = XAnimation(name=None, frame_name=self.names[j])
            anim.keys.extend(self._keys(local[:, a], ticks))
            aset.animations.append(anim)
        return aset

    def timeline(self, xf: XFile) -> None:
        """Every clip on one frame-numbered timeline (a one-timeline target:
        :mod:`.targets`), ``AnimTicksPerSecond`` the frame rate it plays at."""
        for clip in self.scene.clips:
            check_frame_count(clip, self.fps, MAX_FRAME)     # before sampling every frame
        self.placements = layout(self.scene.clips, self.fps, self.warnings)
        self.timeline_fps = timeline_fps(self.scene.clips, self.fps)
        check_ticks(np.array([p.end for p in self.placements], dtype=np.float64), "the timeline")
        if self.target == DARKBASIC:
            # as its character files: no AnimTicksPerSecond (its reader knows no such template; it plays key
            # times as frames), matrix keys on every frame
            xf.anim_ticks_per_second = None
            key_type = "MATRIX"
        else:
            rate = float(self.tps_option or self.timeline_fps)
            itps = max(int(round(rate)), 1)
            if abs(itps - rate) > 1e-9:
                self.warnings.append(f"AnimTicksPerSecond is a whole number: {itps} written for {rate:g} frames "
                                     f"per second (key times are frame numbers either way)")
            xf.anim_ticks_per_second = itps
            key_type = self.key_type
        if key_type == "MATRIX" and self.target not in MATRIX_KEYS:
            self.warnings.append(f"{self.target.title()} reads no scale from matrix keys: written as rotation, "
                                 f"scale and position keys")
            key_type = "TRS"
        xf.animation_sets = [timeline_set(self.target, self.placements, self.scene.skeleton.local, self.back,
                                          self.names, key_type=key_type)]
