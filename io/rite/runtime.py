# SPDX-License-Identifier: GPL-3.0-or-later
"""The RiTE runtime's arithmetic (the RiTE skeletal animation system
document; its C# in tests/rite_seed.py), with core/: a joint's local transform (orientation *
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
    RiTE document, transcribed in tests/rite_seed.py):
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

    def _where(self, frames):
        """(frames (F,), index of each track's first key after each frame
        (F, T), each track's first and end key index (1, T), whether a key
        is at or before the frame, whether one is on it)."""
        q = np.asarray(frames, dtype=np.float64).reshape(-1)
        pos = sampling.locate(self.times, self.starts, self.track_of_key, q)           # (F, T)
        start = self.starts[:-1][None, :]
        end = self.starts[1:][None, :]
        has_le = pos > start
        exact = has_le & (self.times[np.maximum(pos - 1, 0)] == q[:, None])
        return q, pos, start, end, has_le, exact

    def sample(self, frames) -> np.ndarray:
        """Rotations (F, T, 4) of every track at every frame in ``frames``.

        Exactly the RiTE document's ``updateAnimation`` for one frame: the key on the
        frame if there is one, else ``slerpNoInvert(prev, next, off/span)``
        with prev/next searched cyclically and span/off through the wrap.
        One documented difference: a track whose previous and next key are
        the same key (a single-key track) holds that key, where the 2006 code
        divides by a zero span and produces NaN.
        """
        q, pos, start, end, has_le, exact = self._where(frames)
        T = self.n_tracks
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

    #: slerpNoInvert lerps (then normalises) keys whose dot product is at least this
    LERP_DOT = 0.95

    def linear_keys(self, frames) -> tuple[np.ndarray, str]:
        """Which of the whole ``frames`` (0..N-1, ascending) each track must
        be keyed on for a per-component linear interpolation of the keys,
        normalised (Blender's quaternion F-curves), to play what the runtime
        plays at every whole frame: (mask (F, T) bool, a one-line note of
        the spans that needed every frame, or "").

        The file's keys always. Between two keys whose dot product is at
        least 0.95 (and whose lengths agree within 1e-6) the runtime's
        ``slerpNoInvert`` lerps and normalises, exactly what the F-curve
        does, so nothing more; between keys further apart it slerps, and
        before the first key and after the last it interpolates through the
        loop's wrap (which an F-curve cannot): there, every frame."""
        _, pos, start, end, has_le, exact = self._where(frames)
        T = self.n_tracks
        inside = has_le & (pos < end) & ~exact          # between two keys, not through the wrap
        prev = np.maximum(pos - 1, 0)
        nxt = np.minimum(pos, len(self.times) - 1)
        a, b = self.rotations[prev], self.rotations[nxt]
        la, lb = np.linalg.norm(a, axis=-1), np.linalg.norm(b, axis=-1)
        lerp = (np.sum(a * b, axis=-1) >= self.LERP_DOT) & (np.abs(la - lb) <= 1e-6 * np.maximum(la, lb))
        single = (end - start) == 1
        mask = exact | ~(single | (inside & lerp))
        spans = baked = 0
        for t in range(T):
            k = int(self.starts[t + 1] - self.starts[t])
            if k < 2:
                continue
            keyed = mask[:, t] & ~exact[:, t]
            span_of = np.where(inside[:, t], pos[:, t], -1)          # interior spans by their next key
            spans += k - 1
            baked += len(np.unique(span_of[keyed & inside[:, t]]))
            wrap = ~inside[:, t] & ~exact[:, t]
            if wrap.any():
                spans += 1
                baked += 1
        note = ""
        if baked:
            note = (f"{baked} of {spans} spans between keys keyed on every frame: Blender would interpolate "
                    f"those keys differently from the runtime, which slerps keys more than "
                    f"{np.degrees(2 * np.arccos(self.LERP_DOT)):.1f} degrees apart (signs as written) and "
                    f"interpolates the first and last keys through the loop's wrap")
        return mask, note
