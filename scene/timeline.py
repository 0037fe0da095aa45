# SPDX-License-Identifier: GPL-3.0-or-later
"""One timeline <-> named clips.

Game engines that load .X characters (Irrlicht and the games on it:
Minetest/Luanti; DarkBASIC Pro, FPS Creator, GameGuru Classic) play a
character's animations as frame ranges of ONE frame-numbered timeline; the
ranges live in the game's scripts (``set_animation({x = 168, y = 187})``).

* :func:`layout` lays clips out on one timeline for such an engine: a clip
  cut from a timeline (:func:`split`) keeps its own frame numbers, any other
  goes end to end after them, one gap frame between clips so that no key is
  shared;
* :func:`split` cuts one clip (a timeline) into named clips at frame ranges.

Timeline frames are whole scene frames; a clip cut from a timeline keeps the
timeline's frame numbers as its own times (a file's key times, which these
engines take as frames).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..core import sampling
from .model import Clip, SceneError

#: ``Clip.extras`` key of a clip cut from a timeline: {"start": first frame, "end": last frame}
TIMELINE = "timeline"


@dataclass(frozen=True)
class Range:
    """A named frame range of a timeline (whole frames, both ends included)."""

    name: str
    start: int
    end: int


@dataclass(frozen=True)
class Placement:
    """Where a clip goes on the timeline: the clip times it is sampled at,
    one a timeline frame (whole frames; a cycling clip ends on the frame of
    its wrap, which shows the cycle's start), and the timeline frame of the
    first."""

    clip: Clip
    name: str
    times: np.ndarray
    start: int

    @property
    def end(self) -> int:
        return self.start + len(self.times) - 1

    @property
    def range(self) -> Range:
        return Range(self.name, self.start, self.end)


def _samples(clip: Clip, fps: float) -> np.ndarray:
    """The clip times the clip is sampled at: for a clip cut from a
    timeline, each of its timeline's frames (its own time units: the file's
    key times, which the engines take as frames, whatever the scene's frame
    rate); else every whole scene frame covering it, as
    :meth:`Clip.bake_frames` gives them (the cycle's wrap included), the
    times of frames beyond the clip's own range held at its ends."""
    if TIMELINE in (clip.extras or {}):
        times = np.arange(np.floor(clip.start + 1e-9), np.ceil(clip.end - 1e-9) + 1.0)
        return np.clip(times, clip.start, clip.end) if len(times) else np.array([clip.start])
    frames, times = clip.bake_frames(fps)
    f0, f1 = clip.frame_range(fps)
    plain = clip.cycle is None or clip.cycle[1] - clip.cycle[0] <= 0
    outside = (frames < f0 - 1e-9) | (frames > f1 + 1e-9) if plain else (frames < f0 - 1e-9)
    if outside.any():
        times = np.where(outside, clip.to_times(np.clip(frames, f0, f1), fps), times)
    return times


def _unique_names(names: list[str]) -> list[str]:
    out: list[str] = []
    taken: set[str] = set()
    for n in names:
        name, k = n or "clip", 2
        while name in taken:
            name, k = f"{n or 'clip'}.{k:03d}", k + 1
        taken.add(name)
        out.append(name)
    return out


def layout(clips: list[Clip], fps: float, warnings: list[str] | None = None) -> list[Placement]:
    """The clips on one timeline, in timeline order. A clip cut from a
    timeline (:data:`TIMELINE` in its extras) keeps its own frames while
    they start at 0 or later and overlap no clip kept before it; every other
    clip follows the last frame used, in the order given, after one gap
    frame (the first at frame 0 when none keeps its frames). Clips that had
    to move are reported."""
    warnings = warnings if warnings is not None else []
    names = _unique_names([c.name for c in clips])
    times = [_samples(c, fps) for c in clips]
    cut = [i for i, c in enumerate(clips) if TIMELINE in (c.extras or {})]
    kept: list[Placement] = []
    moved = [i for i in range(len(clips)) if i not in cut]
    for i in sorted(cut, key=lambda i: times[i][0]):
        p = Placement(clips[i], names[i], times[i], int(np.floor(times[i][0] + 1e-9)))
        if p.start < 0 or any(not (p.end < k.start or p.start > k.end) for k in kept):
            warnings.append(f"{p.name}: frames {p.start}..{p.end} overlap another clip's (or start before 0): "
                            f"moved to the end of the timeline")
            moved.append(i)
            continue
        kept.append(p)
    cursor = max((k.end for k in kept), default=-2) + 2
    out = list(kept)
    for i in sorted(moved):
        p = Placement(clips[i], names[i], times[i], cursor)
        out.append(p)
        cursor = p.end + 2
    return sorted(out, key=lambda p: p.start)


def timeline_fps(clips: list[Clip], fps: float) -> float:
    """The speed a timeline of ``clips`` plays at: the one their timeline's
    ranges file gave when every clip was cut from a timeline of that speed,
    else ``fps`` (the scene's)."""
    speeds = {(c.extras or {}).get(TIMELINE, {}).get("fps") for c in clips}
    if len(speeds) == 1 and None not in speeds:
        return float(speeds.pop())
    return float(fps)


def describe(placements: list[Placement], fps: float) -> str:
    """One line: "frame ranges at 24 fps: walk 0-40, wave 42-66"."""
    parts = [f"{p.name} {p.start}-{p.end}" for p in placements]
    return f"frame ranges at {fps:g} fps: {', '.join(parts)}"


# ---------------------------------------------------------------------------
# a timeline cut into clips

def _cut(ch: sampling.Channels, start: float, end: float, mode: str | None) -> sampling.Channels:
    """``ch``'s keys inside [start, end], with a key on each end (the
    value the channel interpolates there) where there is none."""
    if not len(ch.targets):
        return ch
    ends = ch.sample(np.array([start, end]), mode)          # (2, T, width)
    times, values = [], []
    for k in range(len(ch.targets)):
        lo, hi = ch.starts[k], ch.starts[k + 1]
        t, v = ch.times[lo:hi], ch.values[lo:hi]
        inside = (t > start) & (t < end)
        times.append(np.concatenate(([start], t[inside], [end])))
        values.append(np.concatenate((ends[:1, k], v[inside], ends[1:, k])))
    return sampling.Channels.from_tracks(ch.targets, times, values, ch.values.shape[1])


def split(clip: Clip, ranges: list[Range], warnings: list[str] | None = None, fps: float | None = None) -> list[Clip]:
    """``clip`` (a timeline) cut into one clip per range, named after it.
    A range's frames are the clip's own times (a file's key times, which
    the engines these timelines are for take as frames). Each clip plays
    exactly what the timeline plays in its range and keeps the timeline's
    frame numbers (:data:`TIMELINE`), so that an export for such an engine
    puts it back where it was. A range that is not inside the timeline is
    reported and skipped; overlapping ranges are reported (each clip has
    its frames). ``fps``: the speed the engine plays the timeline at (a
    ranges file's), kept with each clip for an export to write back.
    SceneError when no range is left."""
    warnings = warnings if warnings is not None else []
    if clip.sampler is not None:
        raise SceneError(f"{clip.name!r} plays by its own sampler: it cannot be cut into frame ranges")
    lo, hi = float(clip.start), float(clip.end)
    out: list[Clip] = []
    outside = []
    for r in ranges:
        if r.start < lo - 1e-9 or r.end > hi + 1e-9 or r.end < r.start:
            outside.append(f"{r.name} {r.start}-{r.end}")
            continue
        s, e = float(r.start), float(r.end)
        extras = dict(clip.extras or {})
        extras[TIMELINE] = {"start": r.start, "end": r.end, **({"fps": float(fps)} if fps else {})}
        out.append(replace(clip, name=r.name, rotation=_cut(clip.rotation, s, e, clip.rotation_mode),
                           translation=_cut(clip.translation, s, e, None), scale=_cut(clip.scale, s, e, None),
                           start=s, end=e, cycle=None, extras=extras))
    if outside:
        warnings.append(f"{len(outside)} frame range(s) outside the timeline ({lo:g}..{hi:g}) of {clip.name!r}, "
                        f"skipped: {', '.join(outside[:8])}{' ...' if len(outside) > 8 else ''}")
    spans = sorted(((c.start, c.end, c.name) for c in out))
    over = [f"{a[2]} and {b[2]}" for a, b in zip(spans, spans[1:]) if b[0] <= a[1]]
    if over:
        warnings.append(f"overlapping frame ranges (each becomes its own clip): {', '.join(over[:8])}")
    if not out:
        raise SceneError(f"no frame range inside the timeline {lo:g}..{hi:g} of {clip.name!r}")
    return out
