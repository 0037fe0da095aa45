# SPDX-License-Identifier: GPL-3.0-or-later
"""RAA tracks bind to a rig by joint name first, then by the RAM's own joint
id (the RiTE document; tests/rite_seed.py): never by a position in the list, never onto a joint another
track claims by name, always with a warning; the rest are reported."""
from __future__ import annotations

import numpy as np

from legacy_skin_io.io.rite import RaaAnimation, RaaTrack, RamModel, RiteJoint, read_ram, write_raa, write_ram
from legacy_skin_io.io.rite.adapter import read_scene

Q = [0.0, 0.0, 0.0, 1.0]


def _ram(tmp_path):
    """Three joints whose file ids are 7, 3 and 5 (not 0, 1, 2)."""
    joints = [RiteJoint("root", -1, Q, [0, 0, 0], Q), RiteJoint("mid", 0, Q, [0, 1, 0], Q),
              RiteJoint("tip", 1, Q, [0, 1, 0], Q)]
    ram = RamModel(mesh_name="m", joints=joints, joint_ids=[7, 3, 5], positions=np.eye(3),
                   tri_shader=[0], tri_vertices=[[0, 1, 2]], weight_vertex=[0, 1, 2], weight_joint=[0, 1, 2],
                   weight_value=[1.0, 1.0, 1.0])
    write_ram(ram, tmp_path / "r.ram")
    return tmp_path / "r.ram"


def _raa(tmp_path, tracks):
    a = RaaAnimation("a", 5, True, [RaaTrack(i, n, [0, 4], [[0, 0, 0.38268343, 0.92387953]] * 2)
                                    for i, n in tracks])
    write_raa(a, tmp_path / "a.raa")
    return tmp_path / "a.raa"


def test_the_file_ids_survive_reading_and_writing(tmp_path):
    path = _ram(tmp_path)
    text = path.read_text()
    assert '7 "root"' in text and '3 "mid"\nparent 7' in text and '5 "tip"\nparent 3' in text
    again = read_ram(path)
    assert again.joint_ids.tolist() == [7, 3, 5]
    assert [j.parent for j in again.joints] == [-1, 0, 1]


def test_a_track_binds_by_its_ram_joint_id_with_a_warning(tmp_path):
    ram = _ram(tmp_path)
    warnings = []
    scene = read_scene([ram, _raa(tmp_path, [(5, "renamed tip")])], warnings=warnings)
    clip = scene.clips[0]
    assert clip.rotation.targets.tolist() == [2]           # id 5 is "tip" (index 2), not index 5
    assert any("bound by joint id" in w and "tip" in w for w in warnings)


def test_an_id_never_takes_a_joint_claimed_by_name(tmp_path):
    ram = _ram(tmp_path)
    warnings = []
    scene = read_scene([ram, _raa(tmp_path, [(3, "mid"), (3, "unknown")])], warnings=warnings)
    assert scene.clips[0].rotation.targets.tolist() == [1]  # only the track named "mid"
    assert any("match no joint" in w and "unknown" in w for w in warnings)


def test_a_position_in_the_list_is_not_an_id(tmp_path):
    ram = _ram(tmp_path)
    warnings = []
    scene = read_scene([ram, _raa(tmp_path, [(7, "root"), (1, "nobody")])], warnings=warnings)  # no id 1
    assert scene.clips[0].rotation.targets.tolist() == [0]
    assert any("nobody" in w for w in warnings)
