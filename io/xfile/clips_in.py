# SPDX-License-Identifier: GPL-3.0-or-later
""".X AnimationSets -> scene clips, for :mod:`.to_scene`: a set's
Animations found by frame name (the file's own frames, or another
skeleton's joints), matrix keys decomposed into translation, rotation and
scale (the shear they cannot hold reported once), every key converted to
scene space at once, the keys' time base recorded on the clip."""
from __future__ import annotations

import numpy as np

from ...core import quat, sampling
from ...scene import AxisConversion, Clip
from ..errors import Deviation, group
from .conventions import col, rotation_from_key
from .model import XAnimation, XAnimationKey, XAnimationSet
from .time_base import TimeBase

#: matrix keys decomposed into translation, rotation and scale are reported
#: when that moves a unit vector by more than this (exporters' float32
#: matrices are orthogonal to about 1e-6)
SHEARED_KEY = 1e-4


class ClipReader:
    """The AnimationSets of one .X file read one by one, with keys in
    ``time_base``; the warnings of them all go to ``warnings``."""

    def __init__(self, axes: AxisConversion, warnings: list[str], time_base: TimeBase):
        self.axes = axes
        self.warnings = warnings
        self.time_base = time_base
        self._sheared: tuple[float, str] = (0.0, "")      # the most sheared matrix key (_shear)

    def _shear(self, keys: np.ndarray, again: np.ndarray, times: np.ndarray, where: str) -> None:
        """Note how far matrix ``keys`` (K, 4, 4) are from their translation,
        rotation and scale ``again``: the largest change of a unit vector
        they move (relative to the key's own scale), with where."""
        scale = np.maximum(np.abs(keys[:, :3, :3]).max(axis=(1, 2)), 1e-300)
        err = np.linalg.norm(again[:, :3, :3] - keys[:, :3, :3], ord=2, axis=(1, 2)) / scale
        k = int(np.argmax(err)) if len(err) else 0
        if len(err) and err[k] > self._sheared[0]:
            self._sheared = (float(err[k]), f"{where}, tick {times[k]:g}")

    def report_shear(self) -> None:
        """One deviation for the matrix keys read that translation, rotation
        and scale could not hold (:meth:`_shear`), when over :data:`SHEARED_KEY`."""
        fig, where = self._sheared
        if fig > SHEARED_KEY:
            self.warnings.append(Deviation(
                f"matrix keys with shear or a scale along other than the frame's own axes, which translation, "
                f"rotation and scale cannot hold: decomposed into the nearest, moving what hangs below by up to "
                f"about {fig:.2e} of the model size ({where})", fig, where))

    def unplaced(self, clip: str, frames: list[str]) -> None:
        """The frames a set's Animations name and the file lacks: one warning line for the file."""
        for frame in frames:
            group(self.warnings, "Animations name frames the file does not have, skipped", f"{frame!r} ({clip})")

    def clip(self, aset: XAnimationSet, i: int, n_joints: int, by_name: dict[str, int],
             onto: bool = False) -> Clip:
        """The set as a clip on ``n_joints`` joints, its Animations' frames
        found by ``by_name``: the file's own frames, or (``onto``) the joints
        of another skeleton, where the frames keyed and not found are named
        in one warning instead."""
        name = aset.name or f"AnimationSet{i}"
        animated = np.zeros(n_joints, dtype=bool)
        claimed: set[int] = set()
        missing = []
        axes = self.axes
        # (kind, joint, times, values, values as stored: converted below, every kind at once), in file order
        found: list[tuple[str, int, np.ndarray, np.ndarray, bool]] = []
        for a in aset.animations:
            j = by_name.get(a.frame_name) if a.frame_name is not None else None
            if j is None:
                if not onto or any(len(k.times) for k in a.keys):
                    missing.append(str(a.frame_name))
                continue
            if j in claimed:
                group(self.warnings, "frames animated by several Animations of one set, the last wins",
                      f"{a.frame_name!r} ({name})")
            claimed.add(j)
            keys = {k.key_type: k for k in a.keys if len(k.times)}
            if not keys:
                continue
            animated[j] = True
            mat = keys.get(4) or keys.get(3)
            if mat is not None:
                if any(t in keys for t in (0, 1, 2)):
                    group(self.warnings, "frames with both matrix and separate keys, the matrix keys are used",
                          f"{a.frame_name!r} ({name})")
                m = col(np.asarray(mat.values, dtype=np.float64).reshape(-1, 4, 4))
                t, r, s = sampling.decompose_trs(m)
                times = np.asarray(mat.times, dtype=np.float64)
                self._shear(m, sampling.compose_trs(t, quat.normalize(r), s), times, f"{a.frame_name!r} in {name}")
                comps = {"r": axes.quats(r), "t": axes.translations(t), "s": axes.scales(s)}
                found += [(c, j, times, comps[c], False) for c in "rts"]
                continue
            for kt, c in ((0, "r"), (2, "t"), (1, "s")):
                k = keys.get(kt)
                if k is not None:
                    found.append((c, j, np.asarray(k.times, dtype=np.float64),
                                  np.asarray(k.values, dtype=np.float64), True))
        if onto and missing:
            self.warnings.append(f"{name}: {len(missing)} animated frame(s) match no bone, skipped: "
                                 f"{', '.join(missing[:8])}{' ...' if len(missing) > 8 else ''}")
        elif missing:
            self.unplaced(name, missing)
        convert = {"r": lambda x: axes.quats(rotation_from_key(x)), "t": axes.translations, "s": axes.scales}
        values = [v for _, _, _, v, _ in found]
        for c in "rts":
            stored = [k for k, e in enumerate(found) if e[0] == c and e[4]]
            if stored:
                parts = convert[c](np.concatenate([values[k] for k in stored]))
                for k, part in zip(stored, np.split(parts, np.cumsum([len(values[k]) for k in stored])[:-1])):
                    values[k] = part
        tracks: dict[str, tuple[list, list, list]] = {"r": ([], [], []), "t": ([], [], []), "s": ([], [], [])}
        for (c, j, times, _, _), v in zip(found, values):
            _put(tracks[c], j, times, v)

        def channels(c, width):
            targets, times, vals = tracks[c]
            if not targets:
                return sampling.Channels.empty(width)
            if c == "r":
                vals = _continuous_tracks(vals)
            return sampling.Channels.from_tracks(targets, times, vals, width)

        lo, hi = np.inf, -np.inf
        for _, _, times, _, _ in found:
            lo, hi = min(lo, times.min()), max(hi, times.max())
        if not np.isfinite(lo):
            lo = hi = 0.0
        tb = self.time_base
        return Clip(name, channels("r", 4), channels("t", 3), channels("s", 3), animated,
                    start=float(lo), end=float(hi), ticks_per_second=tb.ticks_per_second, rotation_mode="slerp",
                    extras={"xfile": tb.extras(), "time_base": tb.describe()})


def first_keys(aset: XAnimationSet) -> XAnimationSet:
    """``aset`` with only the earliest key of each of its keys: its pose at
    its start (a track starting later holds its first key until then)."""
    out = XAnimationSet(aset.name)
    for a in aset.animations:
        keys = []
        for k in a.keys:
            if len(k.times):
                e = int(np.argmin(np.asarray(k.times, dtype=np.float64)))
                keys.append(XAnimationKey(k.key_type, np.asarray(k.times)[e:e + 1], np.asarray(k.values)[e:e + 1]))
        out.animations.append(XAnimation(a.name, a.frame_name, keys))
    return out


def _continuous_tracks(tracks: list[np.ndarray]) -> list[np.ndarray]:
    """Each track of rotations (K, 4) normalised and continuous along its
    keys (``quat.make_continuous``), every track at once."""
    counts = [len(v) for v in tracks]
    q = quat.normalize(np.concatenate(tracks))
    if len(q) > 1:
        # key k flips when an odd number of key pairs from its track's first to it point apart
        against = np.concatenate(([0], np.cumsum(np.sum(q[1:] * q[:-1], axis=-1) < 0.0)))
        first = np.repeat(np.concatenate(([0], np.cumsum(counts)[:-1])), counts)
        q[(against - against[first]) % 2 == 1] *= -1.0
    return np.split(q, np.cumsum(counts)[:-1])


def _put(track, j: int, times: np.ndarray, values: np.ndarray) -> None:
    targets, ts, vs = track
    if j in targets:  # a later Animation on the same frame replaces the earlier
        k = targets.index(j)
        ts[k], vs[k] = times, values
        return
    targets.append(j)
    ts.append(times)
    vs.append(values)
