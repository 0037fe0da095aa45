# SPDX-License-Identifier: GPL-3.0-or-later
"""io/weld.py: which vertices of a mesh as read are one (no Blender), and
the .X reader's ``weld`` option."""
from __future__ import annotations

import numpy as np
from conftest import DATA

from legacy_skin_io.io.formats import by_id
from legacy_skin_io.io.weld import classes_of, groups
from legacy_skin_io.scene import Skin


def _skin(rows) -> Skin:
    v, j, w = (np.array(c) for c in zip(*rows))
    return Skin(np.unique(j), np.tile(np.eye(4), (len(np.unique(j)), 1, 1)), v.astype(np.int64), j.astype(np.int64),
                w.astype(np.float64))


def test_classes_follow_chains_and_refuse_what_does_not_fit():
    assert classes_of(None, 3).tolist() == [0, 0, 0]
    assert classes_of(np.array([0, 0, 1, 3]), 4).tolist() == [0, 0, 0, 3]       # 2 -> 1 -> 0
    assert classes_of(np.array([0, 5]), 2).tolist() == [0, 1]                   # out of range: none is another
    assert classes_of(np.array([0]), 2).tolist() == [0, 1]                      # the wrong length: the same
    cyc = classes_of(np.array([1, 0, 2]), 3)                                     # a cycle: no hang
    assert cyc[2] == 2 and cyc[0] != 2


def test_groups_need_the_same_place_weights_colour_and_class():
    pos = np.array([[0.0, 0, 0], [0, 0, 0], [-0.0, 0, 0], [0, 0, 0], [1, 0, 0], [0, 0, 0], [0, 0, 0]])
    skin = _skin([(0, 2, 0.5), (0, 3, 0.5), (1, 3, 0.5), (1, 2, 0.25), (1, 2, 0.25),   # 1: the same, in two parts
                  (2, 2, 0.5), (2, 3, 0.5), (3, 2, 0.5), (3, 3, np.nextafter(0.5, 1.0)),  # 3: one ulp off
                  (4, 2, 0.5), (4, 3, 0.5), (5, 2, 0.5), (5, 3, 0.5), (6, 2, 0.5), (6, 3, 0.5)])
    colors = np.ones((7, 4))
    colors[5, 0] = 0.5
    cls = np.array([0, 0, 0, 0, 0, 0, 1])
    assert groups(pos, cls, skin, colors).tolist() == [0, 0, 0, 3, 4, 5, 6]
    assert groups(pos, np.zeros(7), None, None).tolist() == [0, 0, 0, 0, 4, 0, 0]


def test_groups_never_merge_on_a_hash_alone(monkeypatch):
    """Two vertices whose weights differ but whose hashes are made equal
    stay apart (the exact comparison after the hash)."""
    from legacy_skin_io.io import weld

    real = weld._influences

    def colliding(skin, V):
        v, j, w, count, h = real(skin, V)
        return v, j, w, count, np.zeros_like(h)

    monkeypatch.setattr(weld, "_influences", colliding)
    pos = np.zeros((3, 3))
    skin = _skin([(0, 1, 1.0), (1, 2, 1.0), (2, 1, 1.0)])
    assert groups(pos, np.zeros(3), skin).tolist() == [0, 1, 0]


def test_reader_marks_the_vertices_to_weld():
    """``read_scene(weld=...)``: each mesh's ``weld`` (default on) follows the
    file's VertexDuplicationIndices, or positions and weights without them;
    off: none."""
    fmt = by_id("xfile")
    anim = DATA / "x" / "assimp" / "anim_test.x"                # VertexDuplicationIndices: 1720 -> 422
    m = fmt.read_scene([str(anim)]).meshes[0]
    assert m.weld is not None and len(np.unique(m.weld)) == 422
    assert (m.weld <= np.arange(len(m.weld))).all() and (m.weld[m.weld] == m.weld).all()
    assert fmt.read_scene([str(anim)], weld=False).meshes[0].weld is None
    rat = DATA / "x" / "real" / "PilzAdam__mobs" / "mobs_rat.x"    # no template: the same places (no skin)
    m = fmt.read_scene([str(rat)]).meshes[0]
    assert m.weld is not None and len(np.unique(m.weld)) == len(np.unique(m.positions, axis=0))
