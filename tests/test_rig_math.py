# SPDX-License-Identifier: GPL-3.0-or-later
"""core.rig.solve_affine against numpy's LU solve."""
from __future__ import annotations

import numpy as np
import pytest

from legacy_skin_io.core import quat
from legacy_skin_io.core.rig import solve_affine
from legacy_skin_io.core.sampling import compose_trs


def _transforms(rng, shape):
    """Affine transforms as rigs have them: rotation, translation, positive scales."""
    q = quat.normalize(rng.normal(size=shape + (4,)))
    return compose_trs(rng.normal(size=shape + (3,)) * 5, q, rng.uniform(0.2, 3.0, size=shape + (3,)))


@pytest.mark.parametrize("shape", [(7,), (30, 12), (1, 1)])
def test_matches_numpy_solve_on_rig_transforms(shape):
    rng = np.random.default_rng(len(shape))
    a, b = _transforms(rng, shape), _transforms(rng, shape)
    got, want = solve_affine(a, b), np.linalg.solve(a, b)
    assert got.shape == want.shape
    assert np.abs(got - want).max() <= 1e-13 * max(1.0, np.abs(want).max())
    assert np.array_equal(got[..., 3, :], b[..., 3, :])


def test_broadcasts_like_solve():
    rng = np.random.default_rng(5)
    a, b = _transforms(rng, (4, 6)), _transforms(rng, (1, 6))
    assert np.allclose(solve_affine(a, b), np.linalg.solve(a, b), rtol=0, atol=1e-12)


def test_projective_and_singular_matrices_go_to_numpy():
    rng = np.random.default_rng(6)
    a, b = _transforms(rng, (5,)), _transforms(rng, (5,))
    a[2, 3, 0] = 0.5                                  # not affine: numpy's answer exactly
    assert np.array_equal(solve_affine(a, b), np.linalg.solve(a, b))
    a = _transforms(rng, (3,))
    a[1, :3, 2] = 0.0                                 # a singular 3x3 part: numpy's error
    with pytest.raises(np.linalg.LinAlgError):
        solve_affine(a, b[:3])
