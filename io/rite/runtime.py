# SPDX-License-Identifier: GPL-3.0-or-later
"""The RiTE runtime's arithmetic (the RiTE skeletal animation system
document, seed 000), with core/: a joint's local transform (orientation *
rotation, translation in the parent's frame) and the Animator's keyframe
sampling.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...core import quat, sampling
from ...scene import SceneError


def rite_local(orientation, translation, rotation) -> np.ndarray:
    """RiTE local transform: rotation ``orientation * rotation``, translation
    ``translation`` (in the parent's frame). Broadcasts: rotation may be
    (F, J, 4) against orientation/translation (J, 4)/(J, 3)."""
    r = quat.mul(orientation, rotation)
    t = np.broadcast_to(np.asarray(translation, dtype=np.float64), r.shape[:-1] + (3,))
    return quat.to_mat4(r, t)



@dataclass
class RiteClip:
    """A RiTE animation: rotation tracks on integer frames, ``frame_count``.

    Sampled as the RiTE runtime does (``Animator.updateAnimation`` of the
    RiTE document, seed 000):
    integer frames, cyclic previous/next key search, span and offset
    measured through the wrap with the frame count, ``slerpNoInvert``."""

    frame_count: int
    times: np.ndarray          # (M,) key frames, grouped by track, ascending
    rotations: np.ndarray      # (M, 4) x y z w, as given (not normalised)
    starts: np.ndarray         # (T + 1,) offsets of each track's keys
    track_of_key: np.ndarray   # (M,)

    @classmethod
    def from_tracks(cls, frame_count: int, frames: list, rotations: list) -> "RiteClip":
        t, v, s, tk = sampling.pack(frames, rotations, 4)
        for i in range(len(s) - 1):
            f = t[s[i]:s[i + 1]]
            if np.any(np.diff(f) == 0):
                raise SceneError(f"track {i}: two keys on one frame")
        return cls(int(frame_count), t, v, s, tk)

    @property
    def n_tracks(self) -> int:
        return len(self.starts) - 1

    def sample(self, frames) -> np.ndarray:
        """Rotations (F, T, 4) of every track at every frame in ``frames``.

        Exactly the RiTE document's ``updateAnimation`` for one frame: the key on the
        frame if there is one, else ``slerpNoInvert(prev, next, off/span)``
        with prev/next searched cyclically and span/off through the wrap.
        One documented difference: a track whose previous and next key are
        the same key (a single-key track) holds that key, where the 2006 code
        divides by a zero span and produces NaN.
        """
        q = np.asarray(frames, dtype=np.float64).reshape(-1)
        T = self.n_tracks
        pos = sampling.locate(self.times, self.starts, self.track_of_key, q)           # (F, T)
        start = self.starts[:-1][None, :]
        end = self.starts[1:][None, :]
        has_le = pos > start
        exact = has_le & (self.times[np.maximum(pos - 1, 0)] == q[:, None])
        prev = np.where(has_le, pos - 1, end - 1)
        nxt = np.where(pos < end, pos, start)
        pf = self.times[prev]
        nf = self.times[nxt]
        n = float(self.frame_count)
        span = np.where(nf < pf, n - pf + nf, nf - pf)
        qq = np.broadcast_to(q[:, None], pos.shape)
        off = np.where(qq < pf, n - pf + qq, qq - pf)
        same = prev == nxt
        direct = exact | same | (span == 0)
        out = self.rotations[np.where(exact, pos - 1, prev)]       # keys (and held single keys)
        interp = ~direct
        if interp.any():
            t = off[interp] / span[interp]
            out[interp] = quat.slerp_no_invert(self.rotations[prev[interp]], self.rotations[nxt[interp]], t)
        return out.reshape(len(q), T, 4)

    def sample_rotations(self, frames) -> np.ndarray:
        """The scene sampler protocol (``scene.Sampler``): :meth:`sample`."""
        return self.sample(frames)
