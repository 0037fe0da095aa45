# SPDX-License-Identifier: GPL-3.0-or-later
"""Which samples of a curve to key so that linear interpolation between the
keys reproduces every sample within a tolerance (numpy only).

A baked animation has a value at every frame; Blender interpolates an
F-curve's LINEAR keys linearly, so a sample that its neighbouring keys'
interpolation reproduces need not be a key. :func:`linear_keys` chooses the
keys of each curve:

1. a sample that its two neighbours' interpolation does not reproduce is a
   key (where a curve bends one way, a wider interval misses it by more);
2. Douglas-Peucker refinement between those: an interval whose worst
   sample is off by more than the tolerance is split at that sample (kept
   within the middle half of the interval, so that the number of rounds
   stays logarithmic in the number of samples), every open interval of the
   curve evaluated in one numpy pass per round.

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


#: Samples per batch of curves (64 KB of float64 per component: in cache):
#: curves are reduced together, in batches of about this many samples.
BATCH_SAMPLES = 1 << 13


def linear_keys(frames, values, tol, *, unit: bool = False) -> np.ndarray:
    """(F, G) bool: the samples to key of G curves sampled at ``frames``
    (F,), increasing; ``values`` (F, G, C) (or (F, G)): C components per
    curve, keyed at the same frames. Linear interpolation between
    consecutive kept samples reproduces every sample within ``tol`` (scalar
    or (G,)), the largest absolute difference of a component; ``unit``: the
    interpolated vectors are normalised first (Blender normalises a
    quaternion's interpolated components; the samples are unit vectors).
    The first and last samples are always kept. Curves are reduced
    together (one numpy pass per round over every open interval of a batch
    of curves), each by the same rule as if alone."""
    f = np.asarray(frames, dtype=np.float64).reshape(-1)
    v = np.asarray(values, dtype=np.float64)
    if v.ndim == 2:
        v = v[:, :, None]
    F, G, _ = v.shape
    tol = np.broadcast_to(np.asarray(tol, dtype=np.float64), (G,))
    keep = np.zeros((F, G), dtype=bool)
    if F == 0 or G == 0:
        return keep
    per = max(1, BATCH_SAMPLES // F)
    for g0 in range(0, G, per):
        g1 = min(G, g0 + per)
        keep[:, g0:g1] = _batch_keys(f, v[:, g0:g1], tol[g0:g1], unit).reshape(g1 - g0, F).T
    return keep


def _batch_keys(f: np.ndarray, v: np.ndarray, tol: np.ndarray, unit: bool) -> np.ndarray:
    """:func:`linear_keys` of the curves ``v`` (F, B, C), as one (B * F,)
    mask, curve after curve."""
    F, B, C = v.shape
    vs = np.ascontiguousarray(v.transpose(1, 0, 2)).reshape(B * F, C)    # curve after curve
    fs = np.tile(f, B)
    tols = np.repeat(tol, F)
    keep = np.zeros(B * F, dtype=bool)
    first = np.arange(B) * F
    keep[first] = keep[first + F - 1] = True
    if F > 2:
        bent = _error(fs[1:-1], fs[:-2], fs[2:], vs[:-2], vs[2:].copy(), vs[1:-1], unit) > tols[1:-1]
        bent[first[1:] - 1] = bent[first[1:] - 2] = False      # across two curves
        keep[1:-1] |= bent
    k = np.flatnonzero(keep)
    a, b = k[:-1], k[1:]
    same = a // F == b // F                     # intervals within one curve
    a, b = a[same], b[same]
    while True:
        inner = b - a - 1
        a, b, inner = a[inner > 0], b[inner > 0], inner[inner > 0]
        if not len(a):
            return keep
        starts = np.cumsum(inner) - inner
        owner = np.repeat(np.arange(len(a)), inner)
        ao, bo = a[owner], b[owner]
        idx = np.arange(int(inner.sum())) - starts[owner] + ao + 1
        err = _error(fs[idx], fs[ao], fs[bo], vs[ao], vs[bo], vs[idx], unit)
        worst = np.maximum.reduceat(err, starts)
        bad = worst > tols[a]
        if not bad.any():
            return keep
        # the first worst sample of each interval, kept within its middle half
        at = np.where(err == worst[owner], np.arange(len(err)), len(err))
        split = idx[np.minimum.reduceat(at, starts)]
        margin = np.maximum((b - a) // 4, 1)
        split = np.clip(split, a + margin, b - margin)
        a, b, split = a[bad], b[bad], split[bad]
        keep[split] = True
        a, b = np.concatenate((a, split)), np.concatenate((split, b))
