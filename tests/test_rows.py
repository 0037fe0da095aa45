# SPDX-License-Identifier: GPL-3.0-or-later
"""io.rows.dedupe_rows: exact merging of equal rows, with and without group hints."""
from __future__ import annotations

import numpy as np
import pytest

from legacy_skin_io.io.rows import dedupe_rows


def _rows(seed: int):
    """Corner rows as an exporter sees them: most corners of a vertex share
    its row, some differ (seams, hard edges), some rows repeat across
    vertices, and -0.0 appears where 0.0 does."""
    rng = np.random.default_rng(seed)
    V = 500
    per_vertex = np.round(rng.normal(size=(V, 3)), 1)
    per_vertex[::7] = per_vertex[3]                       # shared between vertices
    per_vertex[5] = [0.0, -0.0, 1.0]
    corner_v = rng.integers(0, V, size=3000)
    rows = per_vertex[corner_v].copy()
    seam = rng.random(3000) < 0.1
    rows[seam] = np.round(rng.normal(size=(int(seam.sum()), 3)), 1)
    rows[-1] = [-0.0, 0.0, 1.0]
    return rows, corner_v


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("hinted", [False, True])
def test_dedupe_rows_merges_exactly_the_equal_rows(seed, hinted):
    rows, corner_v = _rows(seed)
    uniq, inv = dedupe_rows(rows, corner_v if hinted else None)
    assert np.array_equal(uniq[inv], rows + 0.0)          # every row comes back (-0.0 as 0.0)
    ref = np.unique(rows + 0.0, axis=0)                    # independent: numpy's row-wise unique
    assert len(uniq) == len(ref)
    assert np.array_equal(np.unique(uniq, axis=0), ref)


def test_hints_do_not_change_the_unique_rows():
    rows, corner_v = _rows(3)
    plain, _ = dedupe_rows(rows)
    hinted, _ = dedupe_rows(rows, corner_v)
    assert np.array_equal(np.unique(plain, axis=0), np.unique(hinted, axis=0))


def test_empty_rows():
    uniq, inv = dedupe_rows(np.zeros((0, 2)), np.zeros(0, dtype=np.int64))
    assert uniq.shape == (0, 2) and inv.shape == (0,)


def test_hash_collisions_fall_back_to_sorting_by_value(monkeypatch):
    """Every row hashing alike (a zero multiplier) must still merge exactly the equal rows."""
    from legacy_skin_io.io import rows as rows_mod
    monkeypatch.setattr(rows_mod, "_MUL", np.uint64(0))
    rows, corner_v = _rows(4)
    for groups in (None, corner_v):
        uniq, inv = dedupe_rows(rows, groups)
        assert np.array_equal(uniq[inv], rows + 0.0)
        assert len(uniq) == len(np.unique(rows + 0.0, axis=0))
