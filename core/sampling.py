# SPDX-License-Identifier: GPL-3.0-or-later
"""Keyframe sampling, many tracks and many frames per call.

``Channels`` holds time-based keys (as in DirectX .X): linear for vectors,
slerp (shortest path) or Blender's per-component nlerp for rotations, hold
before the first and after the last key. Format-specific samplers (RiTE's
cyclic ``slerpNoInvert``, ``io/rite/runtime.py``) reuse ``pack`` and
``locate``.

All tracks of a clip are packed into flat arrays (keys sorted by track, then
time) and sampled with a single ``searchsorted`` over (track, time) pairs, so
the cost is a handful of numpy passes whatever the number of tracks.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import quat
from .vectors import cross


def pack(times_per_track: list[np.ndarray], values_per_track: list[np.ndarray], width: int):
    counts = np.array([len(t) for t in times_per_track], dtype=np.int64)
    if np.any(counts == 0):
        raise ValueError("every track needs at least one key")
    starts = np.concatenate(([0], np.cumsum(counts)))
    times = np.concatenate([np.asarray(t, dtype=np.float64) for t in times_per_track]) if len(counts) else np.zeros(0)
    values = (np.concatenate([np.asarray(v, dtype=np.float64).reshape(-1, width) for v in values_per_track])
              if len(counts) else np.zeros((0, width)))
    track_of_key = np.repeat(np.arange(len(counts)), counts)
    # sort keys by (track, time) in case a track was given out of order
    order = np.lexsort((times, track_of_key))
    return times[order], values[order], starts, track_of_key[order]


def locate(times, starts, track_of_key, query):
    """For every (track, query time): index of the first key later than the
    query (global, may equal the track's end), as a (F, T) array."""
    n_tracks = len(starts) - 1
    if len(times) == 0:
        return np.zeros((len(query), 0), dtype=np.int64)
    # Map (track, time) to one sortable number: rank the distinct times
    # jointly so the encoding is exact for any float times.
    all_t = np.concatenate((times, query))
    uniq = np.unique(all_t)
    key_rank = np.searchsorted(uniq, times)
    q_rank = np.searchsorted(uniq, query)
    stride = len(uniq) + 1
    key_code = track_of_key * stride + key_rank
    q_code = np.arange(n_tracks)[None, :] * stride + q_rank[:, None]
    return np.searchsorted(key_code, q_code, side="right")


def sample_linear(times, values, starts, track_of_key, query, rot_mode: str | None = None) -> np.ndarray:
    """Time-based sampling of packed channels: (F, T, width).

    Holds the first value before the first key and the last after the last
    key. ``rot_mode`` None for vectors (linear), ``"slerp"`` (shortest path)
    or ``"nlerp"`` (Blender: per-component lerp, normalised) for quaternions.
    """
    q = np.asarray(query, dtype=np.float64).reshape(-1)
    pos = locate(times, starts, track_of_key, q)
    start = starts[:-1][None, :]
    end = starts[1:][None, :]
    before = pos <= start
    after = pos >= end
    i0 = np.where(before, start, np.where(after, end - 1, pos - 1))
    i1 = np.where(before | after, i0, pos)
    t0, t1 = times[i0], times[i1]
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(i0 == i1, 0.0, (q[:, None] - t0) / np.where(t1 == t0, 1.0, t1 - t0))
    if rot_mode == "slerp":
        return _slerp_keys(values, i0, t)
    a, b = values[i0], values[i1]
    if rot_mode is None:
        return a + (b - a) * t[..., None]
    if rot_mode == "nlerp":
        return quat.nlerp_blender(a, b, t)
    raise ValueError(f"unknown rotation interpolation {rot_mode!r}")


def _slerp_keys(values, i0, t) -> np.ndarray:
    """``quat.slerp_shortest(values[i0], values[i0 + 1], t)`` (where ``t`` is
    0 the key itself: the sampler's holds and a track's last key), with the
    terms that depend only on the two keys computed once per key instead of
    once per sample (the same expressions, so the same numbers)."""
    a = values
    b = values[np.minimum(np.arange(1, len(values) + 1), len(values) - 1)]
    cos = quat.dot(a, b)
    b = np.where((cos < 0.0)[..., None], -b, b)
    cos = np.abs(cos)
    near = cos > 0.9995
    angle = np.arccos(np.clip(cos, -1.0, 1.0))
    s = np.where(near, 1.0, np.sin(angle))
    near, angle, s = near[i0], angle[i0], s[i0]
    fa = np.where(near, 1.0 - t, np.sin(angle * (1.0 - t)) / s)[..., None]
    fb = np.where(near, t, np.sin(angle * t) / s)[..., None]
    return quat.normalize(a[i0] * fa + b[i0] * fb)


@dataclass
class Channels:
    """Packed time-based channels of one kind (rotation, translation or scale)."""

    times: np.ndarray
    values: np.ndarray
    starts: np.ndarray
    track_of_key: np.ndarray
    targets: np.ndarray  # (T,) joint index of each track

    @classmethod
    def from_tracks(cls, targets, times: list, values: list, width: int) -> "Channels":
        t, v, s, tk = pack(times, values, width)
        return cls(t, v, s, tk, np.asarray(targets, dtype=np.int64))

    @classmethod
    def empty(cls, width: int) -> "Channels":
        return cls(np.zeros(0), np.zeros((0, width)), np.zeros(1, dtype=np.int64),
                   np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))

    def sample(self, query, rot_mode: str | None = None) -> np.ndarray:
        return sample_linear(self.times, self.values, self.starts, self.track_of_key, query, rot_mode)


def compose_trs(t, r, s) -> np.ndarray:
    """T @ R @ S for column vectors: (..., 3), (..., 4), (..., 3) -> (..., 4, 4)."""
    m = quat.to_mat4(r, t)
    m[..., :3, :3] *= np.asarray(s)[..., None, :]
    return m


def decompose_trs(m):
    """Inverse of ``compose_trs`` for matrices without shear.

    A negative determinant is folded into the x scale, so that R is a proper
    rotation. Returns (t (..., 3), r (..., 4), s (..., 3)).
    """
    m = np.asarray(m, dtype=np.float64)
    t = m[..., :3, 3].copy()
    basis = m[..., :3, :3]
    s = np.sqrt(np.einsum("...ij,...ij->...j", basis, basis))
    c0, c1, c2 = basis[..., 0], basis[..., 1], basis[..., 2]
    det = np.einsum("...i,...i->...", c0, cross(c1, c2))
    s[..., 0] = np.where(det < 0.0, -s[..., 0], s[..., 0])
    safe = np.where(s == 0.0, 1.0, s)
    rot = basis / safe[..., None, :]
    r = quat.from_mat3(rot)
    return t, r, s
