# SPDX-License-Identifier: GPL-3.0-or-later
"""Exports keep every key (issue 18, Keys), through bpy.ops with the
installed extension.

Expected values never come from the exporter: the original files are read
by the format's reader and evaluated by the oracle (``scene.evaluate``), or
read by assimp (tests/assimp_reading.py); the written files are read back
the same way.
"""
from __future__ import annotations

import numpy as np
import pytest
from blender_checks import ext
from conftest import SAMPLES

REL = 1e-5


def _rite_deviation(ram, original_raa, written_raa) -> float:
    """Largest vertex distance / model size between the RiTE Animator
    playing ``original_raa`` and ``written_raa`` on ``ram`` (fresh parses,
    the oracle), at every frame of the original."""
    rite = ext("io.rite.adapter")
    ev = ext("scene.evaluate")
    a = rite.read_scene([str(ram), str(original_raa)], warnings=[])
    b = rite.read_scene([str(ram), str(written_raa)], warnings=[])
    frames = np.arange(0.0, a.clips[0].frame_range(24.0)[1] * 2 + 1)     # two loops
    worst = 0.0
    for p, q in zip(ev.evaluate(a, a.clips[0], frames, 24.0), ev.evaluate(b, b.clips[0], frames, 24.0)):
        worst = max(worst, float(np.linalg.norm(p - q, axis=1).max()))
    return worst / ev.size(a)


@pytest.mark.parametrize("mode", ["ACTION", "MERGEABLE", "DOMINANT"])
def test_rite_layer_export_keeps_each_track_in_one_hemisphere(bpy, tmp_path, mode):
    """walk.raa imported as an NLA layer and exported again plays as the
    original (before: some keys written as -q, the legs spun the long way
    round, 1.05 of the model size at frame 14)."""
    bpy.ops.import_scene.rite(filepath=str(SAMPLES / "rite" / "humanoid.ram"), import_animations=False)
    assert bpy.ops.import_anim.rite(filepath=str(SAMPLES / "rite" / "walk.raa"), mode=mode) == {"FINISHED"}
    out = tmp_path / "walk_again.raa"
    assert bpy.ops.export_anim.rite(filepath=str(out)) == {"FINISHED"}
    raa = ext("io.rite.raa_reader").read_raa(str(out))
    for tr in raa.tracks:
        r = np.asarray(tr.rotations)
        assert (np.sum(r[:-1] * r[1:], axis=1) > 0).all(), tr.joint_name
    assert _rite_deviation(SAMPLES / "rite" / "humanoid.ram", SAMPLES / "rite" / "walk.raa", out) <= REL
