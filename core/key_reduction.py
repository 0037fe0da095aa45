# SPDX-License-Identifier: GPL-3.0-or-later
"""Which samples of a curve to key so that linear interpolation between the
keys reproduces every sample within a tolerance (numpy only).

A baked animation has a value at every frame; Blender interpolates an
F-curve's LINEAR keys linearly, so a sample that its neighbouring keys'
interpolation reproduces need not be a key. :func:`linear_keys` chooses the
keys of many curves at once:

1. a sample that its two neighbours' interpolation does not reproduce is a
   key (where a curve bends one way, a wider interval misses it by more);
2. Douglas-Peucker refinement between those: an interval whose worst
   sample is off by more than the tolerance is split at that sample (kept
   within the middle half of the interval, so that the number of rounds
   stays logarithmic in the number of samples), every open interval of
   every curve evaluated in one numpy pass per round.

Every sample is checked against the keys finally kept: the result holds at
every sample by construction, not by a bound.
"""
from __future__ import annotations

import numpy as np


def _error(f, fa, fb, va, vb, v, unit: bool) -> np.ndarray:
    """Largest component difference between samples ``v`` (N, C) at ``f``
    and the linear interpolation of ``va`` at ``fa`` and ``vb`` at ``fb``
    (normalised when ``unit``). ``vb`` is overwritten."""
    u = f - fa
    u /= fb - fa
    guess = vb
    guess -= va
    guess *= u[:, None]
    guess += va
    if unit:
        n = np.sqrt(np.einsum("ij,ij->i", guess, guess))
        guess /= np.where(n > 0, n, 1.0)[:, None]
    guess -= v
    np.abs(guess, out=guess)
    err = guess[:, 0].copy()
    for c in range(1, guess.shape[1]):
        np.maximum(err, guess[:, c], out=err)
    return err


def linear_keys(frames, values, tol, *, unit: bool = False) -> np.ndarray:
    """(F, G) bool: the samples to key of G curves sampled at ``frames``
    (F,), increasing; ``values`` (F, G, C) (or (F, G)): C components per
    curve, keyed at the same frames. Linear interpolation between
    consecutive kept samples reproduces every sample within ``tol`` (scalar
    or (G,)), the largest absolute difference of a component; ``unit``: the
    interpolated vectors are normalised first (Blender normalises a
    quaternion's interpolated components; the samples are unit vectors).
    The first and last samples are always kept."""
    f = np.asarray(frames, dtype=np.float64).reshape(-1)
    v = np.asarray(values, dtype=np.float64)
    if v.ndim == 2:
        v = v[:, :, None]
    F, G, C = v.shape
    tol = np.broadcast_to(np.asarray(tol, dtype=np.float64), (G,))
    keep = np.zeros((F, G), dtype=bool)
    if F == 0 or G == 0:
        return keep
    keep[0] = keep[-1] = True
    if F > 2:
        fm = np.repeat(f[1:-1], G)
        err = _error(fm, np.repeat(f[:-2], G), np.repeat(f[2:], G), v[:-2].reshape(-1, C),
                     v[2:].reshape(-1, C).copy(), v[1:-1].reshape(-1, C), unit)
        keep[1:-1] = err.reshape(F - 2, G) > tol
    # open intervals between consecutive kept samples of a curve; samples
    # are gathered from the curves laid out one after the other
    flat = np.ascontiguousarray(np.swapaxes(v, 0, 1)).reshape(G * F, C)
    kg, ki = np.nonzero(keep.T)
    same = kg[1:] == kg[:-1]
    curve, a, b = kg[:-1][same], ki[:-1][same], ki[1:][same]
    while True:
        inner = b - a - 1
        open_ = inner > 0
        curve, a, b, inner = curve[open_], a[open_], b[open_], inner[open_]
        if not len(curve):
            return keep
        starts = np.cumsum(inner) - inner
        owner = np.repeat(np.arange(len(curve)), inner)
        idx = np.arange(int(inner.sum())) - starts[owner] + a[owner] + 1
        ao, bo = a[owner], b[owner]
        base = curve[owner] * F
        err = _error(f[idx], f[ao], f[bo], flat.take(base + ao, axis=0), flat.take(base + bo, axis=0),
                     flat.take(base + idx, axis=0), unit)
        worst = np.maximum.reduceat(err, starts)
        bad = worst > tol[curve]
        if not bad.any():
            return keep
        # the first worst sample of each interval, kept within its middle half
        at = np.where(err == worst[owner], np.arange(len(err)), len(err))
        split = idx[np.minimum.reduceat(at, starts)]
        margin = np.maximum((b - a) // 4, 1)
        split = np.clip(split, a + margin, b - margin)
        curve, a, b, split = curve[bad], a[bad], b[bad], split[bad]
        keep[split, curve] = True
        curve = np.concatenate((curve, curve))
        a, b = np.concatenate((a, split)), np.concatenate((split, b))
