# SPDX-License-Identifier: GPL-3.0-or-later
"""scene.evaluate: the default pose of an imported scene without skinning
maths, and posed meshes through it, against core.skinning directly."""
from __future__ import annotations

import numpy as np
from conftest import SAMPLES

from legacy_skin_io.core import skinning
from legacy_skin_io.io.rite import adapter
from legacy_skin_io.scene import evaluate


def _direct(scene, world):
    """Linear blend skinning of the scene's one mesh, written out here."""
    m = scene.meshes[0]
    sk = m.skin
    mats = np.tile(np.eye(4), (len(scene.skeleton), 1, 1))
    mats[sk.joints] = world[sk.joints] @ sk.inverse_bind
    infl = skinning.Influences.from_sparse(len(m.positions), sk.vertex, sk.joint, sk.weight)
    w, _ = infl.policy_weights("blender")
    p = np.c_[np.asarray(m.positions, dtype=np.float64), np.ones(len(m.positions))]
    out = np.zeros((len(p), 3))
    for k in range(w.shape[1]):
        out += w[:, k, None] * np.einsum("vij,vj->vi", mats[infl.joints[:, k], :3, :], p)
    return out


def test_default_pose_and_a_posed_frame_match_direct_skinning():
    scene = adapter.read_scene([SAMPLES / "rite" / "humanoid.ram"])
    sk = scene.skeleton
    rest = evaluate.evaluate(scene, None, [0.0])[0]
    assert np.abs(rest - _direct(scene, sk.world())).max() <= 1e-12
    local = sk.local.copy()
    local[3, :3, 3] += [0.1, -0.2, 0.05]                   # move one joint: the skinning path
    posed = evaluate.mesh_positions(scene, scene.meshes[0], sk.world(local))
    assert np.abs(posed - _direct(scene, sk.world(local))).max() <= 1e-12
    assert np.abs(posed - rest).max() > 1e-3
    box = rest.max(0) - rest.min(0)
    assert evaluate.size(scene) == float(np.linalg.norm(box))
