# SPDX-License-Identifier: GPL-3.0-or-later
"""One timeline in, named clips out (the import's *Frame Ranges* option).

Engines that play .X characters as frame ranges of one timeline (Irrlicht
and Minetest/Luanti, DarkBASIC Pro and FPS Creator) read every
AnimationSet of a file into that one timeline: Irrlicht appends each set's
keys to each joint's keys, keeping only keys later than the ones it has
(:func:`merged` does the same). A ranges file (:mod:`..ranges`) names the
clips as frame ranges of it; :func:`apply` cuts the timeline into one clip
per range (:func:`...scene.timeline.split`). The frames of a range are the
file's key times, which those engines take as frames.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ...core import quat, sampling
from ...scene import Clip, SceneError
from ...scene.timeline import Range, split
from ..errors import FormatError, note, result
from ..paths import is_regular


def _merge_channels(clips: list[Clip], kind: str, width: int) -> sampling.Channels:
    tracks: dict[int, tuple[list, list]] = {}
    for clip in clips:
        ch = getattr(clip, kind)
        for k, j in enumerate(ch.targets.tolist()):
            lo, hi = ch.starts[k], ch.starts[k + 1]
            t, v = ch.times[lo:hi], ch.values[lo:hi]
            have = tracks.get(j)
            if have is None:
                tracks[j] = ([t], [v])
                continue
            later = t > have[0][-1][-1]
            if later.any():
                have[0].append(t[later])
                have[1].append(v[later])
    if not tracks:
        return sampling.Channels.empty(width)
    times = [np.concatenate(ts) for ts, _ in tracks.values()]
    values = [np.concatenate(vs) for _, vs in tracks.values()]
    if kind == "rotation":
        values = [quat.make_continuous(v, axis=0) for v in values]
    return sampling.Channels.from_tracks(list(tracks), times, values, width)


def merged(clips: list[Clip], name: str) -> Clip:
    """The clips (a file's AnimationSets, in file order) as the one timeline
    Irrlicht plays: per joint and kind, the keys of the first set that keys
    it, then those of later sets that come after them."""
    first = clips[0]
    if len(clips) == 1:
        return first
    animated = np.any([c.animated for c in clips], axis=0)
    return Clip(name, _merge_channels(clips, "rotation", 4), _merge_channels(clips, "translation", 3),
                _merge_channels(clips, "scale", 3), animated, start=min(c.start for c in clips),
                end=max(c.end for c in clips), ticks_per_second=first.ticks_per_second,
                rotation_mode=first.rotation_mode, extras=dict(first.extras or {}))


def range_file(model: str, option: str, warnings) -> tuple[str, list[Range], str, float | None] | None:
    """(path, ranges, what was found, its speed) of the ranges file the option names,
    else of ``STEM.ranges.json`` beside ``model`` when there is one; None
    without one. A file that cannot be used is one warning (the timeline is
    then imported whole: nothing is lost)."""
    from ..ranges import ranges_path, read_ranges

    path = option or ""
    if not path:
        beside = ranges_path(model)
        if not is_regular(beside):      # (False for a name the system refuses: too long)
            return None
        path = str(beside)
        note(warnings, f"frame ranges read from {beside.name}, beside {Path(model).name}")
    try:
        rf = read_ranges(path, warnings=warnings)
    except (FormatError, OSError) as err:
        why = str(err) if isinstance(err, FormatError) else f"{Path(path).name}: {err.strerror or err}"
        warnings.append(f"frame ranges not used ({why}): the timeline is imported whole")
        return None
    return path, [Range(c.name, int(c.start), int(c.end)) for c in rf.clips], "; ".join(rf.found), rf.fps


def apply(clips: list[Clip], model: str, option: str, warnings) -> list[Clip]:
    """``clips`` (a file's AnimationSets) cut at the frame ranges of the
    ranges file (:func:`range_file`), one clip per range; unchanged without
    one, or when none of its ranges is inside the timeline (reported)."""
    found = range_file(model, option, warnings)
    if found is None:
        return clips
    path, ranges, what, fps = found
    if not clips:
        warnings.append(f"{Path(path).name}: {Path(model).name} has no animation to cut into frame ranges")
        return clips
    timeline = merged(clips, Path(model).stem)
    try:
        out = split(timeline, ranges, warnings, fps)
    except SceneError as err:
        warnings.append(f"{Path(path).name}: {err}: the timeline is imported whole")
        return clips
    if len(clips) > 1:
        note(warnings, f"the {len(clips)} AnimationSets of {Path(model).name} are one timeline (as Irrlicht plays "
                       f"them) for the frame ranges")
    result(warnings, f"frame ranges from {Path(path).name}: {what}")
    return out
