# SPDX-License-Identifier: GPL-3.0-or-later
"""Rigs animators can use: bones along the limbs, time bases that
lose no key, broken animation data handled, nothing lost on save and reload.
References are the files' own oracle (a fresh parse) or an equivalent file
written another way, never what the importer keyed."""
from __future__ import annotations

import numpy as np
import pytest
from blender_checks import ext, imported, reference
from conftest import DATA, SAMPLES
from rite_random import random_raa, random_ram
from x_rigs import chain_file

from legacy_skin_io.io.rite import RaaTrack, write_raa, write_ram

X = DATA / "x"
TINY = X / "directx-sdk" / "tiny_4anim.x"
BCN = X / "assimp" / "BCN_Epileptic.X"
HUMANOID = SAMPLES / "rite" / "humanoid.ram"


def _child_angles(arm) -> np.ndarray:
    """Degrees between each single-child bone's Y axis and the way to its child."""
    out = []
    for bone in arm.data.bones:
        if len(bone.children) == 1:
            v = np.array(bone.children[0].head_local) - np.array(bone.head_local)
            if np.linalg.norm(v) > 1e-6:
                y = np.array(bone.matrix_local)[:3, 1]
                out.append(np.degrees(np.arccos(np.clip(y @ v / np.linalg.norm(v), -1, 1))))
    return np.array(out)


def _verify_action(bpy, meshes, ref, clip, frames, action=None):
    verify = ext("operators.verify")
    rep = verify.verify(bpy.context, meshes, ref, clip, frames)
    assert rep.ok, (clip.name, rep.table())
    return rep


@pytest.mark.parametrize("op,path", [("xfile", TINY), ("xfile", BCN), ("rite", HUMANOID)],
                         ids=["tiny", "bcn", "humanoid"])
def test_bones_point_along_the_limbs_by_default(bpy, op, path):
    """FBX's Automatic Bone Orientation and glTF's Bone Dir give a median of
    0 degrees between a bone and its child on these skeletons; the file's
    own joint axes give 90 (tiny: 30 of 31 bones off by more than 30)."""
    getattr(bpy.ops.import_scene, op)(filepath=str(path), import_animations=False)
    arm, _ = imported(bpy)
    angles = _child_angles(arm)
    assert len(angles) >= 10
    assert np.median(angles) < 0.5
    assert angles.max() < 10.0          # a few degrees where Blender's float32 bones need it
    bpy.ops.wm.read_homefile(use_empty=True)
    getattr(bpy.ops.import_scene, op)(filepath=str(path), import_animations=False, bone_direction="FILE")
    arm, _ = imported(bpy)
    assert np.median(_child_angles(arm)) > 30.0   # the option keeps the file's axes


def test_dense_keys_are_never_merged(bpy, tmp_path):
    """Keys at ticks 0, 1, ... 55 and no AnimTicksPerSecond (D3DX assumes
    4800): 0.0002 frame apart, which Blender's F-curves would merge (15% of
    the model off at frame 0). Even keying file keys, every whole frame is
    exact, and the report names the time base option."""
    path = chain_file(tmp_path / "dense.x", np.arange(56))
    res = bpy.ops.import_scene.xfile(filepath=str(path), key_every_frame=False)
    assert res == {"FINISHED"}
    arm, meshes = imported(bpy)
    ref = reference("xfile", [path])
    _verify_action(bpy, meshes, ref, ref.clips[0], [0.0, 1.0])
    # the same file on a time base of one frame per tick: 55 frames, every one exact
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.import_scene.xfile(filepath=str(path), key_every_frame=False, ticks_per_second=24.0) == {"FINISHED"}
    arm, meshes = imported(bpy)
    assert bpy.context.scene.frame_end == 55
    ref = reference("xfile", [path])
    ref.clips[0].rotation_mode = "nlerp"     # keys 1 frame apart: Blender's own interpolation
    ref2 = ext("io.xfile.adapter").read_scene([str(path)], ticks_per_second=24.0)
    ref2.clips[0].rotation_mode = "nlerp"
    _verify_action(bpy, meshes, ref2, ref2.clips[0], np.arange(0.0, 56.0))


def test_short_animations_are_reported_with_the_option(bpy, tmp_path, capfd):
    """221 keys 1 tick apart (ticks 0..220, no AnimTicksPerSecond): the
    automatic time base reads them as frames (220 frames, named in the
    summary); read as D3DX's 4800 ticks per second (Time Base File) they last
    0.05 s, and the import says so and names the option."""
    path = chain_file(tmp_path / "ticks.x", np.arange(221))
    assert bpy.ops.import_scene.xfile(filepath=str(path), time_base="FILE") == {"FINISHED"}
    out = capfd.readouterr()
    assert "lasts 1.1 frame(s) at 24 fps: if it should be longer, set the importer's Time Base" in out.out + out.err
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.import_scene.xfile(filepath=str(path)) == {"FINISHED"}
    out = capfd.readouterr()
    assert "time base one tick per frame (Automatic: " in out.out and ": 220 frames at 24 fps" in out.out
    assert "lasts" not in out.out + out.err
    assert bpy.context.scene.frame_end == 220
    arm, meshes = imported(bpy)
    ref = ext("io.xfile.adapter").read_scene([str(path)])
    assert ref.clips[0].ticks_per_second is None          # times are frames
    _verify_action(bpy, meshes, ref, ref.clips[0], np.arange(0.0, 221.0))


def _positions_over(bpy, meshes, frames):
    verify = ext("operators.verify")
    out = []
    for f in frames:
        bpy.context.scene.frame_set(int(f))
        out.append(np.concatenate([verify.evaluated_world(bpy.context, meshes[i]) for i in sorted(meshes)]))
    return np.array(out)


def test_two_tracks_on_one_joint_last_wins(bpy, tmp_path, capfd):
    ram = random_ram(41)
    raa = random_raa(141, ram, "twice")
    first = raa.tracks[0]
    decoy = RaaTrack(first.joint_id, first.joint_name, np.array([2, 9]), np.tile([0.0, 0.6, 0.0, 0.8], (2, 1)))
    raa.tracks.insert(0, decoy)                     # the earlier of two tracks on one joint
    write_ram(ram, tmp_path / "rig.ram")
    write_raa(raa, tmp_path / "twice.raa")
    raa.tracks.pop(0)
    write_raa(raa, tmp_path / "once.raa")
    frames = range(0, 24, 3)
    got = []
    for name in ("twice", "once"):
        bpy.ops.wm.read_homefile(use_empty=True)
        assert bpy.ops.import_scene.rite(filepath=str(tmp_path / "rig.ram")) == {"FINISHED"}
        assert bpy.ops.import_anim.rite(filepath=str(tmp_path / f"{name}.raa")) == {"FINISHED"}
        _, meshes = imported(bpy)
        got.append(_positions_over(bpy, meshes, frames))
    assert "last one wins" in capfd.readouterr().out
    assert np.abs(got[0] - got[1]).max() < 1e-6


def test_two_animations_on_one_frame_last_wins(bpy, tmp_path, capfd):
    from legacy_skin_io.io.xfile import XAnimation, XAnimationKey, read_xfile, write_xfile

    path = chain_file(tmp_path / "once.x", np.arange(0, 4801, 400), tps=4800)
    xf = read_xfile(path)
    decoy = XAnimation(None, "joint1", [XAnimationKey(0, np.array([0.0, 4800.0]),
                                                      np.array([[0.8, 0.6, 0.0, 0.0]] * 2))])
    xf.animation_sets[0].animations.insert(0, decoy)
    write_xfile(xf, tmp_path / "twice.x")
    got = []
    for name in ("twice", "once"):
        bpy.ops.wm.read_homefile(use_empty=True)
        assert bpy.ops.import_scene.xfile(filepath=str(tmp_path / f"{name}.x")) == {"FINISHED"}
        _, meshes = imported(bpy)
        got.append(_positions_over(bpy, meshes, range(0, 25, 4)))
    assert "last wins" in capfd.readouterr().out
    assert np.abs(got[0] - got[1]).max() < 1e-6


def test_repeated_weights_add_up_in_core_and_blender(bpy, tmp_path, capfd):
    """Two weights for one (vertex, joint) pair: Blender's vertex group holds
    their sum, as the core does, and the import says so (7.5e-3 of the model
    apart before, silently)."""
    ram = random_ram(51)
    ram.weight_vertex = np.concatenate([ram.weight_vertex, ram.weight_vertex[:30]])
    ram.weight_joint = np.concatenate([ram.weight_joint, ram.weight_joint[:30]])
    ram.weight_value = np.concatenate([ram.weight_value, ram.weight_value[:30] * 0.5])
    write_ram(ram, tmp_path / "dup.ram")
    summed = random_ram(51)
    summed.weight_value = summed.weight_value.copy()
    summed.weight_value[:30] *= 1.5
    write_ram(summed, tmp_path / "sum.ram")
    raa = random_raa(151, ram, "anim")
    write_raa(raa, tmp_path / "anim.raa")
    got = []
    for name in ("dup", "sum"):
        bpy.ops.wm.read_homefile(use_empty=True)
        assert bpy.ops.import_scene.rite(filepath=str(tmp_path / f"{name}.ram")) == {"FINISHED"}
        assert bpy.ops.import_anim.rite(filepath=str(tmp_path / "anim.raa")) == {"FINISHED"}
        _, meshes = imported(bpy)
        got.append(_positions_over(bpy, meshes, range(0, 24, 4)))
        if name == "dup":
            ref = reference("rite", [tmp_path / "dup.ram", tmp_path / "anim.raa"])
            _verify_action(bpy, meshes, ref, ref.clips[0], range(0, 24, 4))
    assert "added up" in capfd.readouterr().out
    assert np.abs(got[0] - got[1]).max() < 1e-6


def test_mergeable_layers_with_opposite_signs_do_not_cancel(bpy, tmp_path):
    """Two mergeable animations holding the same pose at frame 10, one
    reaching it through a 260-degree turn (so its keys, continuous in time,
    end with the opposite sign), mix to that pose. Blended per component with
    opposite signs they cancelled out."""
    from legacy_skin_io.core import quat
    from legacy_skin_io.io.rite import RaaAnimation

    ram = random_ram(61)
    j = 2
    bind = quat.normalize(ram.joints[j].rotation)
    turn = lambda deg: quat.mul(bind, quat.from_axis_angle(np.array([0.0, 0.0, 1.0]), np.radians(deg)))  # noqa
    name = ram.joints[j].name
    a = RaaAnimation("a", 12, True, [RaaTrack(j, name, np.array([0, 10]), np.stack([turn(100), turn(260)]))])
    b = RaaAnimation("b", 12, True, [RaaTrack(j, name, np.array([0, 10]), np.stack([turn(260), -turn(260)]))])
    write_ram(ram, tmp_path / "rig.ram")
    write_raa(a, tmp_path / "a.raa")
    write_raa(b, tmp_path / "b.raa")
    assert bpy.ops.import_scene.rite(filepath=str(tmp_path / "rig.ram")) == {"FINISHED"}
    assert bpy.ops.import_anim.rite(filepath=str(tmp_path / "a.raa"), playback="MERGEABLE", weight=0.5) == {"FINISHED"}
    assert bpy.ops.import_anim.rite(filepath=str(tmp_path / "b.raa"), playback="MERGEABLE", weight=0.5) == {"FINISHED"}
    _, meshes = imported(bpy)
    mixed = _positions_over(bpy, meshes, [10])
    ref = reference("rite", [tmp_path / "rig.ram", tmp_path / "a.raa", tmp_path / "b.raa"])
    for c in ref.clips:
        c.playback, c.weight = "MERGEABLE", 0.5
    _verify_action(bpy, meshes, ref, ref.clips, [10.0])          # the oracle agrees with Blender
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.import_scene.rite(filepath=str(tmp_path / "rig.ram")) == {"FINISHED"}
    assert bpy.ops.import_anim.rite(filepath=str(tmp_path / "b.raa")) == {"FINISHED"}
    _, meshes = imported(bpy)
    alone = _positions_over(bpy, meshes, [10])                   # the pose both hold at frame 10
    assert np.abs(mixed - alone).max() < 1e-5


def test_every_imported_action_survives_save_and_reload(bpy, tmp_path):
    rite = SAMPLES / "rite"
    assert bpy.ops.import_scene.rite(filepath=str(HUMANOID)) == {"FINISHED"}
    assert bpy.ops.import_anim.rite(filepath=str(rite / "walk.raa")) == {"FINISHED"}            # active
    assert bpy.ops.import_anim.rite(filepath=str(rite / "wave.raa"), playback="DOMINANT") == {"FINISHED"}
    assert bpy.ops.import_scene.xfile(filepath=str(TINY)) == {"FINISHED"}
    blend = tmp_path / "saved.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    bpy.ops.wm.open_mainfile(filepath=str(blend))
    names = {a.name for a in bpy.data.actions}
    assert {"walk", "wave", "Loiter", "Walk", "Jog", "Wave"} <= names


def test_raa_onto_a_rig_built_in_blender(bpy, tmp_path):
    """A rig made in Blender with bones named like the RAA's joints: the
    animation plays (keys rotate bones relative to their rest), tracks with
    no bone are reported."""
    ram = random_ram(71)
    raa = random_raa(171, ram, "anim")
    write_raa(raa, tmp_path / "anim.raa")
    bpy.ops.object.armature_add()
    arm = bpy.context.active_object
    bpy.ops.object.mode_set(mode="EDIT")
    eb = arm.data.edit_bones[0]
    eb.name = ram.joints[raa.tracks[0].joint_id].name
    bpy.ops.object.mode_set(mode="OBJECT")
    assert bpy.ops.import_anim.rite(filepath=str(tmp_path / "anim.raa")) == {"FINISHED"}
    action = arm.animation_data.action
    paths = {fc.data_path for layer in action.layers for st in layer.strips for bag in st.channelbags
             for fc in bag.fcurves}
    assert any(eb_name in p for p in paths for eb_name in [arm.data.bones[0].name])
