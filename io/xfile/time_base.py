# SPDX-License-Identifier: GPL-3.0-or-later
"""The time base of a .X file's animation keys: what one tick of a key time
is (the *Time Base* import option).

D3DX reads key times as ticks of ``AnimTicksPerSecond``, 4800 when a file
has none. Files written for other runtimes (Blitz3D, DarkBASIC, Irrlicht,
Minetest) have no ``AnimTicksPerSecond`` either, but number their keys in
frames (0, 1, 2 ... a few hundred): read at 4800 ticks per second they
last a blink. The choices:

* ``FILE``: the file's ``AnimTicksPerSecond``, 4800 when it has none (D3DX);
* ``FRAMES``: one tick per frame at the scene's frame rate (the clip's times
  are scene frames: ``Clip.ticks_per_second`` None);
* ``CUSTOM``: a given number of ticks per second;
* ``AUTO`` (the default), decided from the file (:func:`automatic`):

  1. a file with ``AnimTicksPerSecond`` says its time base: ``FILE``;
  2. a file with no key time above 0 has nothing to time: ``FILE``;
  3. otherwise the keys are frame numbers (``FRAMES``) when the median gap
     between consecutive keys of a key track (over all the file's tracks)
     is under :data:`MIN_TICK_GAP` ticks (4800 / 60: D3DX exporters key at
     most every frame at 60 fps, 80 ticks apart; frame-numbered files key
     every frame or every few frames), or when the last key time is under
     :data:`MIN_TICK_LENGTH` ticks (at 4800 ticks per second the longest
     animation would last under 1/12 s, 2 frames at 24 fps); else ``FILE``.

On the corpus: Minetest ``character.x`` (keys 0..220, gap 1), PilzAdam
``mobs_stone_monster.x`` (0..65, gap 1), DarkBASIC ``extraanim.X`` (0..25,
sparse) are frames; SDK ``tiny_4anim.x`` (0..63520, gap 160), ``bat.x``
(0..4800, gap 160), Blitz3D ``pistol.x`` (0..9440, gaps 2080..2560) are
D3DX ticks; ``anim_test.x``, ``BCN_Epileptic.X``, ``Testwuson.X`` have
``AnimTicksPerSecond``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import FormatError
from .conventions import DEFAULT_TICKS_PER_SECOND
from .model import XFile

AUTO, FILE, FRAMES, CUSTOM = "AUTO", "FILE", "FRAMES", "CUSTOM"

#: Below this median gap (ticks) between the keys of a track, keys are frame numbers (4800 / 60).
MIN_TICK_GAP = 80
#: Below this last key time (ticks), keys are frame numbers (1/12 s at 4800: 2 frames at 24 fps).
MIN_TICK_LENGTH = 400


@dataclass(frozen=True)
class TimeBase:
    """The time base a file's keys are read with."""

    choice: str                       # FILE, FRAMES or CUSTOM (what was applied)
    ticks_per_second: float | None    # None: one tick per scene frame
    option: str                       # the option as given (AUTO, FILE, FRAMES, CUSTOM)
    why: str                          # what decided it, for the import summary
    file_ticks_per_second: int | None  # the file's AnimTicksPerSecond (None: it has none)

    def describe(self) -> str:
        """One phrase for the import summary: what one tick is, and why."""
        what = ("one tick per frame" if self.ticks_per_second is None
                else f"{self.ticks_per_second:g} ticks per second")
        return f"{what} ({'Automatic: ' if self.option == AUTO else ''}{self.why})"

    def extras(self) -> dict:
        """What a clip records of it (``Clip.extras["xfile"]``): enough for a
        writer to give the file's own ticks back."""
        return {"time_base": self.choice, "time_base_option": self.option,
                "anim_ticks_per_second": self.file_ticks_per_second}


def key_gaps(xf: XFile) -> tuple[float, float, np.ndarray] | None:
    """(first key time, last key time, the gaps between consecutive distinct
    times of each key track) of the file's keys, every track at once; None
    without keys."""
    times = [np.asarray(k.times, dtype=np.float64).reshape(-1)
             for s in xf.animation_sets for a in s.animations for k in a.keys if len(k.times)]
    if not times:
        return None
    t = np.concatenate(times)
    track = np.repeat(np.arange(len(times)), [len(x) for x in times])
    gaps = np.diff(t)[track[1:] == track[:-1]]
    if not (gaps > 0).all():        # a track not in increasing order: sort each, drop repeated times
        order = np.lexsort((t, track))
        t, track = t[order], track[order]
        distinct = np.concatenate(([True], (t[1:] != t[:-1]) | (track[1:] != track[:-1])))
        t, track = t[distinct], track[distinct]
        gaps = np.diff(t)[track[1:] == track[:-1]]
    return float(t.min()), float(t.max()), gaps


def automatic(xf: XFile) -> tuple[str, str]:
    """(FILE or FRAMES, why) by the rule of the module doc."""
    if xf.anim_ticks_per_second:
        return FILE, "the file's AnimTicksPerSecond"
    first, last, gaps = key_gaps(xf) or (0.0, 0.0, np.zeros(0))
    if last <= 0:
        return FILE, "no AnimTicksPerSecond, no key after time 0"
    gap = float(np.median(gaps)) if len(gaps) else None
    keys = f"keys {first:g}..{last:g}" + (f" typically {gap:g} apart" if gap is not None else "")
    if gap is not None and gap < MIN_TICK_GAP:
        return FRAMES, f"no AnimTicksPerSecond, {keys}"
    if last < MIN_TICK_LENGTH:
        return FRAMES, (f"no AnimTicksPerSecond, {keys}: {last / DEFAULT_TICKS_PER_SECOND:.3g} s at "
                        f"{DEFAULT_TICKS_PER_SECOND} per second")
    return FILE, f"no AnimTicksPerSecond, {keys}"


def choose(xf: XFile, time_base: str = AUTO, ticks_per_second: float = 0.0, *, path: str = "") -> TimeBase:
    """The time base for ``xf`` under the import options: ``time_base``
    (AUTO, FILE, FRAMES, CUSTOM) and ``ticks_per_second`` (CUSTOM's number;
    a number > 0 with AUTO also means CUSTOM, as ``--ticks-per-second N``
    always did)."""
    if time_base not in (AUTO, FILE, FRAMES, CUSTOM):
        raise FormatError(f"time base {time_base!r} is not one of {AUTO}, {FILE}, {FRAMES}, {CUSTOM}", path=path)
    tps = float(ticks_per_second)
    if not (np.isfinite(tps) and tps >= 0):
        raise FormatError(f"ticks per second must be 0 (unset) or positive, not {ticks_per_second!r}", path=path)
    own = xf.anim_ticks_per_second or None
    if time_base == CUSTOM or (time_base == AUTO and tps > 0):
        if tps <= 0:
            raise FormatError("time base Custom needs Ticks per Second above 0", path=path)
        return TimeBase(CUSTOM, tps, time_base, "Ticks per Second", own)
    if time_base == FRAMES:
        return TimeBase(FRAMES, None, time_base, "One Tick per Frame", own)
    if time_base == FILE:
        why = "the file's AnimTicksPerSecond" if own else "no AnimTicksPerSecond: D3DX's default"
        return TimeBase(FILE, float(own or DEFAULT_TICKS_PER_SECOND), time_base, why, own)
    choice, why = automatic(xf)
    tb = float(own or DEFAULT_TICKS_PER_SECOND) if choice == FILE else None
    return TimeBase(choice, tb, time_base, why, own)
