# SPDX-License-Identifier: GPL-3.0-or-later
"""Rigs that pose well and animations onto rigs built in Blender:

* import_anim.rite / import_anim.xfile onto pose bones in Euler (any order)
  or axis-angle rotation key the bone's own mode and play exactly (before:
  FINISHED, nothing moved, the keys went to rotation_quaternion);
* the bundled humanoid: Paste Pose Flipped (bpy.ops.pose.copy / paste with
  flipped=True) mirrors a pose within 1e-4 of the model size (before: 0.36);
  tiny's left/right bones, whose ``Bip01_L_`` names Blender's own name
  flipping does not pair, have rests that mirror each other all the same;
* bones are connected where a child's head sits on its parent's tail, no
  bone is longer than the model, and every rig still verifies within 1e-5.

References are the files' fresh parses (the oracle) or Blender's own pose
before the flip, never what the importer keyed."""
from __future__ import annotations

import numpy as np
import pytest
from blender_checks import ext, imported, play, reference, verify
from conftest import DATA, SAMPLES
from x_rigs import chain_file

from legacy_skin_io.core import mirror

RITE = SAMPLES / "rite"
HUMANOID = RITE / "humanoid.ram"
TINY = DATA / "x" / "directx-sdk" / "tiny_4anim.x"
BCN = DATA / "x" / "assimp" / "BCN_Epileptic.X"
MODES = ["XYZ", "ZXY", "YZX", "XZY", "YXZ", "ZYX", "AXIS_ANGLE"]


def _frames(clip) -> np.ndarray:
    return np.arange(0.0, np.ceil(clip.frame_range(24.0)[1] - 1e-6) + 1.0)


def _set_modes(arm, seed: int) -> dict[str, str]:
    """Every pose bone in one of the Euler orders or axis-angle (by turns)."""
    out = {}
    for k, pb in enumerate(arm.pose.bones):
        pb.rotation_mode = MODES[(k + seed) % len(MODES)]
        out[pb.name] = pb.rotation_mode
    return out


def _channels(arm) -> set[str]:
    action = arm.animation_data.action
    return {fc.data_path.rsplit(".", 1)[1] for layer in action.layers for st in layer.strips
            for bag in st.channelbags for fc in bag.fcurves}


@pytest.mark.parametrize("bake", [True, False], ids=["every-frame", "file-keys"])
def test_x_animation_onto_euler_and_axis_angle_bones(bpy, tmp_path, capfd, bake):
    """Keys in each bone's own mode; with the file's keys asked for, every
    frame is keyed all the same (those modes interpolate otherwise between
    keys) and the import says so."""
    path = chain_file(tmp_path / "chain.x", np.arange(0, 4801, 480), n_joints=7)
    assert bpy.ops.import_scene.xfile(filepath=str(path), import_animations=False) == {"FINISHED"}
    arm, meshes = imported(bpy)
    modes = _set_modes(arm, 0)
    assert set(modes.values()) == set(MODES)
    assert bpy.ops.import_anim.xfile(filepath=str(path), key_every_frame=bake) == {"FINISHED"}
    out = capfd.readouterr().out
    assert ("every frame keyed in their mode" in out) == (not bake)
    assert "rotation_quaternion" not in _channels(arm)
    assert {"rotation_euler", "rotation_axis_angle"} <= _channels(arm)
    assert {pb.name: pb.rotation_mode for pb in arm.pose.bones} == modes     # the rig is left as it was
    ref = reference("xfile", [path])
    clip = ref.clips[0]      # keyed on every frame either way: the file's exact playback (slerp)
    rep = verify(bpy, meshes, ref, clip, _frames(clip))
    assert rep.ok, rep.table()
    moved = ext("scene.evaluate").evaluate(ref, clip, [0.0, 12.0])
    assert np.abs(moved[1] - moved[0]).max() > 0.05 * rep.size        # it does move


def test_rite_animation_onto_euler_and_axis_angle_bones(bpy):
    """The humanoid with its bones in every rotation mode: walk.raa plays as
    its file (RiTE's Animator, every frame)."""
    assert bpy.ops.import_scene.rite(filepath=str(HUMANOID)) == {"FINISHED"}
    arm, meshes = imported(bpy)
    _set_modes(arm, 0)
    assert bpy.ops.import_anim.rite(filepath=str(RITE / "walk.raa")) == {"FINISHED"}
    assert "rotation_quaternion" not in _channels(arm)
    ref = reference("rite", [HUMANOID, RITE / "walk.raa"])
    rep = verify(bpy, meshes, ref, ref.clips[0], _frames(ref.clips[0]))
    assert rep.ok, rep.table()
    moved = ext("scene.evaluate").evaluate(ref, ref.clips[0], [0.0, 10.0])
    assert np.abs(moved[1] - moved[0]).max() > 0.05 * rep.size        # it does move


def _mirror_of(arm):
    """(partner index of each bone by Blender's own name flipping, the
    mirror (4, 4) of the armature's left/right pairs, the rest size)."""
    names = [b.name for b in arm.data.bones]
    heads = np.array([b.head_local for b in arm.data.bones], dtype=np.float64)
    size = float(np.linalg.norm(heads.max(0) - heads.min(0)))
    index = {n: i for i, n in enumerate(names)}
    import bpy

    partner = [index.get(bpy.utils.flip_name(n), i) for i, n in enumerate(names)]
    n, offset = mirror.mirror_plane(heads, mirror.side_pairs(names), 1e-3 * size)
    m = np.eye(4)
    m[:3, :3] -= 2.0 * np.outer(n, n)
    m[:3, 3] = 2.0 * offset * n
    return partner, m, size


def _ends(arm) -> np.ndarray:
    return np.array([(tuple(arm.pose.bones[b.name].head), tuple(arm.pose.bones[b.name].tail))
                     for b in arm.data.bones], dtype=np.float64)


@pytest.mark.parametrize("centre", [False, True], ids=["one-side", "one-side-and-centre"])
def test_paste_pose_flipped_mirrors_the_humanoid(bpy, centre):
    """Pose the left side (and the centre bones), copy, paste flipped: every
    bone's head and tail land where the mirror image of its partner's were
    (Blender's pose, before and after), within 1e-4 of the model size."""
    assert bpy.ops.import_scene.rite(filepath=str(HUMANOID)) == {"FINISHED"}
    arm, _ = imported(bpy)
    partner, m, size = _mirror_of(arm)
    names = [b.name for b in arm.data.bones]
    assert sum(p != i for i, p in enumerate(partner)) == 20          # 10 pairs Blender flips by name
    from mathutils import Quaternion

    bpy.context.view_layer.objects.active = arm
    bpy.ops.object.mode_set(mode="POSE")
    rng = np.random.default_rng(7)
    for i, n in enumerate(names):
        if n.startswith("Left") or (centre and partner[i] == i):
            axis = rng.normal(size=3)
            pb = arm.pose.bones[n]
            pb.rotation_quaternion = pb.rotation_quaternion @ Quaternion(axis / np.linalg.norm(axis),
                                                                         rng.uniform(0.3, 0.9))
    bpy.context.view_layer.update()
    before = _ends(arm)
    bpy.ops.pose.select_all(action="SELECT")
    with bpy.context.temp_override(object=arm, active_object=arm, selected_pose_bones=list(arm.pose.bones)):
        assert bpy.ops.pose.copy() == {"FINISHED"}
        assert bpy.ops.pose.paste(flipped=True) == {"FINISHED"}
    bpy.context.view_layer.update()
    after = _ends(arm)
    want = before[partner] @ m[:3, :3].T + m[:3, 3]
    err = np.linalg.norm(after - want, axis=2).max() / size
    assert np.abs(before - _ends_rest(arm)).max() > 0.05 * size     # the pose is not the rest
    assert err <= 1e-4, err
    bpy.ops.object.mode_set(mode="OBJECT")


def _ends_rest(arm) -> np.ndarray:
    return np.array([(tuple(b.head_local), tuple(b.tail_local)) for b in arm.data.bones], dtype=np.float64)


def test_tiny_left_and_right_rests_mirror_each_other(bpy):
    """tiny's Bip01_L_/Bip01_R_ pairs: each right bone's rest is its left
    partner's mirrored (R_right = M R_left F), each centre bone is its own
    mirror, so conjugating every pose by F (what Paste Pose Flipped does
    with a pair) mirrors it; emulated here with the pairs by name, since
    Blender's name flipping does not pair ``Bip01_L_`` names."""
    assert bpy.ops.import_scene.xfile(filepath=str(TINY), import_animations=False) == {"FINISHED"}
    arm, _ = imported(bpy)
    names = [b.name for b in arm.data.bones]
    rest = np.array([np.array(b.matrix_local) for b in arm.data.bones], dtype=np.float64)
    heads = rest[:, :3, 3]
    size = float(ext("scene.evaluate").size(reference("xfile", [TINY])))
    pairs = mirror.side_pairs(names)
    assert len(pairs) == 14                      # clavicle to fingers, thigh to toe
    n, offset = mirror.mirror_plane(heads, pairs, 1e-3 * size)
    mm = np.eye(3) - 2.0 * np.outer(n, n)
    f = np.diag([-1.0, 1.0, 1.0])
    for a, b in pairs:
        assert np.abs(mm @ rest[a, :3, :3] @ f - rest[b, :3, :3]).max() < 1e-4, (names[a], names[b])
    centre = [i for i, nm in enumerate(names) if "_L_" not in nm and "_R_" not in nm
              and abs(heads[i] @ n - offset) < 1e-3 * size and abs(rest[i, :3, 1] @ n) < 1e-6]
    assert len(centre) >= 6                                    # the spine, neck and head
    for i in centre:
        assert np.abs(mm @ rest[i, :3, :3] @ f - rest[i, :3, :3]).max() < 1e-5, names[i]


@pytest.mark.parametrize("path,kw", [(HUMANOID, {}), (TINY, {}), (TINY, {"every_joint_bone": True}),
                                     (BCN, {})], ids=["humanoid", "tiny", "tiny-all-joints", "bcn"])
def test_bones_connect_where_they_touch_and_stay_within_the_model(bpy, path, kw):
    """A child whose head sits on its parent's tail is connected unless an
    animation moves its head; no bone is longer than the model (tiny's
    Scene_Root and Box01 were 897 units on a 505-unit character); and the
    rig plays every clip exactly."""
    op = bpy.ops.import_scene.rite if path.suffix == ".ram" else bpy.ops.import_scene.xfile
    assert op(filepath=str(path), **kw) == {"FINISHED"}
    arm, meshes = imported(bpy)
    fid = "rite" if path.suffix == ".ram" else "xfile"
    ref = reference(fid, [path])
    size = ext("scene.evaluate").size(ref)
    bones = list(arm.data.bones)
    assert max(b.length for b in bones) <= 0.5 * size
    touching = [b for b in bones if b.parent is not None
                and np.linalg.norm(np.array(b.head_local) - np.array(b.parent.tail_local)) <= 1e-5 * size]
    connected = [b for b in bones if b.use_connect]
    assert set(connected) <= set(touching)
    assert len(connected) >= {"humanoid": 17}.get(path.stem, 10), [b.name for b in connected]
    r = ext("operators.armature_extract").rig_of(arm)
    loose = [b.name for b in touching if not b.use_connect]
    for name in loose:         # left loose only where a clip moves the head
        j = next(j for j, n in r.bone_names.items() if n == name)
        assert any(j in c.translation.targets for c in ref.clips), name
    for clip in ref.clips:
        play(arm, clip.name)
        rep = verify(bpy, meshes, ref, clip, _frames(clip)[::3])
        assert rep.ok, (clip.name, rep.table())


def test_rotation_keys_in_every_mode_are_the_same_rotations(bpy):
    """rotation_modes.keys: each value, read back by Blender's own mathutils,
    is the quaternion's rotation; along a smooth turn (through a gimbal
    lock and past half a turn) consecutive keys stay close, so that
    interpolation between them takes the short way."""
    from mathutils import Euler, Quaternion, Vector

    rm = ext("core.rotation_modes")
    axis = np.array([0.3, 0.2, 0.9]) / np.linalg.norm([0.3, 0.2, 0.9])
    turn = np.linspace(0.0, 2.5 * np.pi, 400)
    q = np.concatenate((np.cos(turn / 2)[:, None], np.sin(turn / 2)[:, None] * axis), axis=1)
    q[::7] *= -1.0                                   # either sign of a quaternion is the same rotation
    lock = Euler((0.4, np.pi / 2, -0.3), "XYZ").to_quaternion()
    q = np.concatenate([q, np.array([tuple(lock)])])
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    for mode in MODES:
        prop, vals = rm.keys(mode, q)
        assert prop == ("rotation_axis_angle" if mode == "AXIS_ANGLE" else "rotation_euler")
        for want, v in zip(q, vals):
            got = (Quaternion(Vector(v[1:]), v[0]) if mode == "AXIS_ANGLE"
                   else Euler(v.tolist(), mode).to_quaternion())
            assert abs(abs(np.dot(tuple(got), want)) - 1.0) < 1e-6, (mode, v)
        assert np.abs(np.diff(vals[:-1], axis=0)).max() < 0.2, mode
        back = rm.quaternions(mode, vals)
        assert np.minimum(np.abs(back - q).max(1), np.abs(back + q).max(1)).max() < 1e-9
