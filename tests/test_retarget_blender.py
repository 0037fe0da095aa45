# SPDX-License-Identifier: GPL-3.0-or-later
"""Animation onto another rig, matched by bone name (the rebinding by name
that readers of a Russian article on a first 2D skeletal animation system
advise): ``import_anim.xfile`` puts a file's AnimationSets on the active
armature, whatever made it (the same .X file, a RiTE model, Blender). The
reference is always the .X file's own oracle (a fresh parse), never
Blender."""
from __future__ import annotations

import numpy as np
import pytest
from blender_checks import ext, imported, reference
from conftest import DATA

X = DATA / "x"
TINY = X / "directx-sdk" / "tiny_4anim.x"
WUSON = X / "assimp" / "Testwuson.X"


def _verify_sets(bpy, path, arm, meshes, ref, names=None):
    verify = ext("operators.verify")
    fcurves = ext("operators.fcurves")
    acts = {a.name: a for a in bpy.data.actions}
    worst = 0.0
    for clip in ref.clips:
        if names is not None and clip.name not in names:
            continue
        action = acts[clip.name]
        fcurves.assign_action(arm, action, action.slots[0])
        f1 = clip.frame_range(24.0)[1]
        frames = np.arange(0.0, np.ceil(f1 - 1e-6) + 1.0)
        rep = verify.verify(bpy.context, meshes, ref, clip, frames)
        assert rep.ok, (clip.name, rep.table())
        worst = max(worst, rep.max_error / rep.size)
    return worst


def test_x_animation_onto_its_own_rig_by_name(bpy):
    assert bpy.ops.import_scene.xfile(filepath=str(TINY), import_animations=False) == {"FINISHED"}
    arm, meshes = imported(bpy)
    assert arm.animation_data is None or arm.animation_data.action is None
    assert bpy.ops.import_anim.xfile(filepath=str(TINY)) == {"FINISHED"}
    ref = reference("xfile", [TINY])
    assert {c.name for c in ref.clips} <= {a.name for a in bpy.data.actions}
    worst = _verify_sets(bpy, TINY, arm, meshes, ref)
    assert worst <= 1e-5
    # saved with the file: every action survives save and reload
    assert all(bpy.data.actions[c.name].use_fake_user for c in ref.clips)


def test_x_animation_onto_a_rite_rig_by_name(bpy, tmp_path):
    """Testwuson.X converted to a RiTE model without Blender, imported, then the
    .X file's sets imported onto that rig by name: every set, Wuson_Run's
    animated root translation included (RAA could not carry it), plays as
    the .X file does."""
    convert = ext("io.convert")
    ram = tmp_path / "wuson.ram"
    convert.convert([str(WUSON)], str(ram), warnings=[])
    assert bpy.ops.import_scene.rite(filepath=str(ram)) == {"FINISHED"}
    arm, meshes = imported(bpy)
    assert bpy.ops.import_anim.xfile(filepath=str(WUSON)) == {"FINISHED"}
    ref = reference("xfile", [WUSON])
    rite_ref = reference("rite", [ram])
    # the RiTE mesh is the .X mesh re-skinned to the default pose: compare
    # the .X oracle's vertices with Blender's RiTE mesh vertex for vertex
    assert len(rite_ref.meshes) == 1 and sum(len(m.positions) for m in ref.meshes) == \
        len(rite_ref.meshes[0].positions)
    verify = ext("operators.verify")
    fcurves = ext("operators.fcurves")
    for clip in ref.clips:
        action = bpy.data.actions[clip.name]
        fcurves.assign_action(arm, action, action.slots[0])
        f1 = clip.frame_range(24.0)[1]
        frames = np.arange(0.0, np.ceil(f1 - 1e-6) + 1.0, 2.0)
        want = ext("scene.evaluate").evaluate(ref, clip, frames, 24.0)
        size = ext("scene.evaluate").size(ref)
        for f, w in zip(frames, want):
            bpy.context.scene.frame_set(int(f))
            got = verify.evaluated_world(bpy.context, meshes[0])
            err = np.abs(got - w).max() / size
            assert err <= 1e-5, (clip.name, f, err)


def test_unmatched_frames_are_reported_and_the_rest_plays(bpy):
    """A rig that lacks some of the file's frames: those are reported, the
    others still animate."""
    assert bpy.ops.import_scene.xfile(filepath=str(TINY), import_animations=False) == {"FINISHED"}
    arm, _ = imported(bpy)
    bpy.context.view_layer.objects.active = arm
    bpy.ops.object.mode_set(mode="EDIT")
    gone = [b.name for b in arm.data.edit_bones if "Finger" in b.name]
    assert gone
    for name in gone:
        arm.data.edit_bones.remove(arm.data.edit_bones[name])
    bpy.ops.object.mode_set(mode="OBJECT")
    res = bpy.ops.import_anim.xfile(filepath=str(TINY))
    assert res == {"FINISHED"}
    action = arm.animation_data.action
    assert action is not None
    paths = {fc.data_path for layer in action.layers for st in layer.strips for bag in st.channelbags
             for fc in bag.fcurves}
    assert not any("Finger" in p for p in paths)
    assert any("Bip01_Spine" in p for p in paths)


def test_animation_import_needs_an_armature_and_matching_names(bpy, tmp_path):
    with pytest.raises(RuntimeError, match="armature"):
        bpy.ops.import_anim.xfile(filepath=str(TINY))
    # a rig with no bone of the file's names: a clear error, nothing created
    bpy.ops.object.armature_add()
    n_actions = len(bpy.data.actions)
    with pytest.raises(RuntimeError, match="matches"):
        bpy.ops.import_anim.xfile(filepath=str(TINY))
    assert len(bpy.data.actions) == n_actions


def test_the_animation_import_takes_the_formats_import_options(bpy, tmp_path):
    """import_anim.xfile offers the .X time base and passes it to the
    reader: keys at ticks 0..55 without AnimTicksPerSecond, read at 24 per
    second (one frame per tick), play 55 frames as the file read that way
    does (D3DX's 4800 would make them a quarter of a frame)."""
    from x_rigs import chain_file

    path = chain_file(tmp_path / "dense.x", np.arange(56))
    assert bpy.ops.import_scene.xfile(filepath=str(path), import_animations=False) == {"FINISHED"}
    arm, meshes = imported(bpy)
    assert bpy.ops.import_anim.xfile(filepath=str(path), ticks_per_second=24.0) == {"FINISHED"}
    assert bpy.context.scene.frame_end == 55
    ref = ext("io.formats").by_id("xfile").read_scene([path], ticks_per_second=24.0)
    rep = ext("operators.verify").verify(bpy.context, meshes, ref, ref.clips[0], np.arange(0.0, 56.0, 5.0))
    assert rep.ok, rep.table()
