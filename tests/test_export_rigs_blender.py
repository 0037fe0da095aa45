# SPDX-License-Identifier: GPL-3.0-or-later
"""What Blender shows is what is written: rigs whose pose is not
their quaternion F-curves alone, exported with no option touched, and the
written files evaluated by readers that are not the exporter: assimp for
.X (tests/assimp_reading.py), the core's evaluation of a fresh parse for
RiTE. Expected values are Blender's own evaluated meshes.
"""
from __future__ import annotations

import assimp_reading as ar
import export_checks as rig
import numpy as np
import pytest
from blender_checks import ext

from legacy_skin_io.core import quat

REL = 1e-4
FRAMES = np.arange(1, 14)


def _ik(bpy, ao, mo):
    """A 2-bone IK on Bone.3 towards an empty that moves."""
    target = bpy.data.objects.new("Target", None)
    bpy.context.scene.collection.objects.link(target)
    for f, loc in ((1, (0.6, 0.3, 1.0)), (13, (-0.2, -0.4, 0.6))):
        target.location = loc
        target.keyframe_insert("location", frame=f)
    c = ao.pose.bones["Bone.3"].constraints.new("IK")
    c.target = target
    c.chain_count = 2


def _driver(bpy, ao, mo):
    """Bone.2's rotation driven by the frame number."""
    pb = ao.pose.bones["Bone.2"]
    fc = pb.driver_add("rotation_quaternion", 1)
    fc.driver.expression = "0.04 * frame"


def _euler_linear(bpy, ao, mo):
    """Linear ZXY Euler keys (whose linear interpolation is no rotation's slerp)."""
    pb = ao.pose.bones["Bone.1"]
    pb.rotation_mode = "ZXY"
    for f, e in ((1, (0.2, -0.5, 1.2)), (13, (-1.4, 0.9, -0.3))):
        pb.rotation_euler = e
        pb.keyframe_insert("rotation_euler", frame=f)
    _linear(ao.animation_data.action)


def _linear(action):
    sk = ext("operators.source_keys")
    for fc in sk.fcurves(action):
        for kp in fc.keyframe_points:
            kp.interpolation = "LINEAR"
        fc.update()


def _axis_angle(bpy, ao, mo):
    pb = ao.pose.bones["Arm"]
    pb.rotation_mode = "AXIS_ANGLE"
    for f, aa in ((1, (0.3, 0.0, 1.0, 0.2)), (7, (2.0, 0.6, 0.1, 0.8)), (13, (-1.0, 0.2, 0.9, 0.1))):
        pb.rotation_axis_angle = aa
        pb.keyframe_insert("rotation_axis_angle", frame=f)


def _single_key(bpy, ao, mo):
    """An action with one key: the pose it holds."""
    ab = ext("operators.fcurves")
    action, slot, bag = ab.new_action_for(ao, "Hold")
    ab.assign_action(ao, action, slot)
    q = quat.normalize(np.array([0.3, -0.2, 0.4, 0.8]))
    ab.add_vector_keys(bag, 'pose.bones["Bone.1"].rotation_quaternion', [5], [[q[3], q[0], q[1], q[2]]])
    for pb in ao.pose.bones:          # what the other action left in the unkeyed bones: the rest pose
        pb.matrix_basis.identity()


def _inheritance(bpy, ao, mo):
    """A bone that inherits no rotation from its parent."""
    ao.data.bones["Bone.2"].use_inherit_rotation = False


def _mirror(bpy, ao, mo):
    """A Mirror modifier before the Armature modifier (vertex groups mirrored too)."""
    m = mo.modifiers.new("Mirror", "MIRROR")
    m.use_axis = (True, False, False)
    m.use_mirror_merge = False
    mo.modifiers.move(len(mo.modifiers) - 1, 0)
    assert [x.type for x in mo.modifiers] == ["MIRROR", "ARMATURE"]


CASES = {"ik": _ik, "driver": _driver, "euler_linear": _euler_linear, "axis_angle": _axis_angle,
         "single_key": _single_key, "no_inherit_rotation": _inheritance, "mirror_before_armature": _mirror,
         "weights_not_summing_to_1": lambda *a: None}


def _blender_points(bpy, mo, frames) -> np.ndarray:
    return rig.positions(bpy, mo, frames)


def _x_points(path, tmp, frames, fps=24.0, first=None) -> list[np.ndarray]:
    sc = ar.assimp_scene(path, tmp)
    a = sc.animations[0]
    f0 = frames[0] if first is None else first
    out = []
    for f in frames:
        pts = sc.points(a, (f - f0) * a.ticks_per_second / fps if first is not None else f * a.ticks_per_second / fps)
        out.append(np.concatenate(pts))
    return out, sc


def _blender_to_x_space(points: np.ndarray) -> np.ndarray:
    """Blender space -> the space assimp reads a .X written with the default
    axes in: Blender (x, y, z) is the file's (x, z, y), which assimp reads
    with z negated."""
    return np.stack((points[..., 0], points[..., 2], -points[..., 1]), axis=-1)


@pytest.mark.parametrize("case", list(CASES))
def test_x_export_writes_what_blender_shows(bpy, tmp_path, case):
    ao, mo, action = rig.build(bpy)
    CASES[case](bpy, ao, mo)
    bpy.context.view_layer.update()
    want = _blender_points(bpy, mo, FRAMES)
    size = rig.size(want[0])
    out = tmp_path / "rig.x"
    assert bpy.ops.export_scene.xfile(filepath=str(out)) == {"FINISHED"}
    got, _ = _x_points(out, tmp_path, FRAMES)
    worst = max(rig.nn_distance(_blender_to_x_space(w), g) for w, g in zip(want, got)) / size
    print(f"{case}: .X written {worst:.2e} of the model size from what Blender shows")
    assert worst <= REL


def _keys_before_frame_0(bpy):
    """The rig with its action moved 11 frames earlier: -10 .. 2."""
    ao, mo, action = rig.build(bpy)
    sk = ext("operators.source_keys")
    for fc in sk.fcurves(action):
        for kp in fc.keyframe_points:
            kp.co[0] -= 11
            kp.handle_left[0] -= 11
            kp.handle_right[0] -= 11
        fc.update()
    action.frame_range = (-10, 2)
    return ao, mo, action


def test_x_export_of_keys_at_negative_frames_moves_them_to_tick_0_and_says_so(bpy, tmp_path, capfd):
    ao, mo, action = _keys_before_frame_0(bpy)
    frames = FRAMES - 11
    want = _blender_points(bpy, mo, frames)
    size = rig.size(want[0])
    out = tmp_path / "rig.x"
    capfd.readouterr()
    assert bpy.ops.export_scene.xfile(filepath=str(out)) == {"FINISHED"}
    assert "written from tick 0" in capfd.readouterr().out
    got, _ = _x_points(out, tmp_path, frames, first=-10)
    worst = max(rig.nn_distance(_blender_to_x_space(w), g) for w, g in zip(want, got)) / size
    assert worst <= REL


@pytest.mark.parametrize("span", [(-10, 2), (-12, -4)], ids=["across_0", "all_before_0"])
@pytest.mark.parametrize("how", ["model", "animation"])
def test_rite_export_of_keys_at_negative_frames_moves_them_to_frame_0_and_says_so(bpy, tmp_path, capfd, span, how):
    """An action keyed before frame 0 (RAA frames are >= 0) is
    written from frame 0, every key as much later, as the .X export does,
    with one warning (before: frames 0.. only, without a word: the part
    before 0 was lost, an action wholly before 0 kept one frame)."""
    ao, mo, action = _keys_before_frame_0(bpy)
    if span[0] != -10:
        for fc in ext("operators.fcurves").fcurves(action):
            for kp in fc.keyframe_points:
                for at in (kp.co, kp.handle_left, kp.handle_right):
                    at[0] += span[0] + 10
            fc.update()
        action.frame_range = span
    frames = np.arange(span[0], span[1] + 1)
    want = _blender_points(bpy, mo, frames)
    size = rig.size(want[0])
    capfd.readouterr()
    if how == "model":
        assert bpy.ops.export_scene.rite(filepath=str(tmp_path / "rig.ram")) == {"FINISHED"}
        model, raa = tmp_path / "rig.ram", tmp_path / "rig_Bend.raa"
    else:
        bpy.context.view_layer.objects.active = ao
        raa = tmp_path / "bend.raa"
        assert bpy.ops.export_anim.rite(filepath=str(raa)) == {"FINISHED"}
        assert bpy.ops.export_scene.rite(filepath=str(tmp_path / "rig.ram"), export_animations=False) == {"FINISHED"}
        model = tmp_path / "rig.ram"
    said = [ln for ln in capfd.readouterr().out.splitlines()
            if ln.startswith("Warning:") and "before 0" in ln]
    assert len(said) == 1 and f"Bend: starts {-span[0]} frame(s) before 0; written from frame 0" in said[0], said
    rite = ext("io.rite.adapter")
    ev = ext("scene.evaluate")
    sc = rite.read_scene([str(model), str(raa)], warnings=[])
    assert sc.clips[0].frame_range(24.0) == (0.0, float(span[1] - span[0]))
    got = ev.evaluate(sc, sc.clips[0], (frames - span[0]).astype(float), 24.0)
    worst = max(rig.nn_distance(w, np.concatenate(g) if isinstance(g, list) else g) for w, g in zip(want, got)) / size
    print(f"{span} ({how}): RiTE written {worst:.2e} of the model size from what Blender shows")
    assert worst <= REL


@pytest.mark.parametrize("case", [c for c in CASES if c != "mirror_before_armature"])
def test_rite_export_writes_what_blender_shows(bpy, tmp_path, case):
    """The same rigs through RAM/RAA (rotations only: these cases move no
    bone's translation), evaluated by the core on a fresh parse."""
    ao, mo, action = rig.build(bpy)
    CASES[case](bpy, ao, mo)
    bpy.context.view_layer.update()
    want = _blender_points(bpy, mo, FRAMES)
    size = rig.size(want[0])
    out = tmp_path / "rig.ram"
    assert bpy.ops.export_scene.rite(filepath=str(out)) == {"FINISHED"}
    raa = sorted(tmp_path.glob("rig_*.raa"))
    assert len(raa) == 1
    rite = ext("io.rite.adapter")
    ev = ext("scene.evaluate")
    sc = rite.read_scene([str(out), str(raa[0])], warnings=[])
    got = ev.evaluate(sc, sc.clips[0], FRAMES.astype(float), 24.0)
    worst = max(rig.nn_distance(w, np.concatenate(g) if isinstance(g, list) else g) for w, g in zip(want, got)) / size
    print(f"{case}: RiTE written {worst:.2e} of the model size from what Blender shows")
    assert worst <= REL


def test_fcurves_only_export_says_what_it_leaves_out(bpy, tmp_path, capfd):
    """Bake Pose off writes the F-curves alone and names the bones whose
    constraints or drivers it leaves out."""
    ao, mo, action = rig.build(bpy)
    _ik(bpy, ao, mo)
    capfd.readouterr()
    assert bpy.ops.export_scene.xfile(filepath=str(tmp_path / "rig.x"), bake_pose=False) == {"FINISHED"}
    out = capfd.readouterr().out
    assert "constraints or drivers on 1 bone(s) are not exported (Bone.3)" in out, out
