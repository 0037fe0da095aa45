# SPDX-License-Identifier: GPL-3.0-or-later
"""Real .X files slightly off, through the installed extension
as a user meets them: File > Import > DirectX of a file of animations alone
says which import takes it and changes nothing; File > Import > DirectX
Animation plays that file (cut from tiny_4anim.x's own text) on tiny's rig
as tiny's own animations play; the command line does the same (``import
MODEL.x ANIM.x``, ``verify``); each crafted blemished file imports with
the defaults and one warning about its blemish."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from blender_checks import ext, imported, reference, snapshot, verify
from conftest import DATA, run_cli
from x_rigs import animation_only

X = DATA / "x"
TINY = X / "directx-sdk" / "tiny_4anim.x"
CRAFTED = X / "crafted"


@pytest.fixture(scope="module")
def tiny_animations(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("anim") / "tiny_animations.x"
    path.write_text(animation_only(TINY.read_text()))
    return path


def _warnings(out: str) -> list[str]:
    return [ln[len("Warning: "):] for ln in out.splitlines() if ln.startswith("Warning: ")]


def test_the_model_import_of_animations_alone_names_the_animation_import(bpy, tiny_animations):
    before = snapshot(bpy)
    with pytest.raises(RuntimeError) as info:
        bpy.ops.import_scene.xfile(filepath=str(tiny_animations))
    message = str(info.value)
    assert ("tiny_animations.x: the file holds only animations (4 AnimationSets keying 46 frames: 'Scene_Root', "
            "'Bip01', 'Bip01_Footsteps', 'Bip01_Pelvis' ...), no mesh and no skeleton: they play on the skeleton "
            "of a model with those frames; import MODEL.x first, then this file onto its armature with File > "
            "Import > DirectX Animation (.x); on the command line: import MODEL.x tiny_animations.x -o OUT.blend"
            in message), message
    assert snapshot(bpy) == before


def _pose(bpy, arm, action, frames) -> np.ndarray:
    """(frames, bones, 4, 4) the armature's pose bones in world space at
    ``frames`` with ``action`` active."""
    fcurves = ext("operators.fcurves")
    fcurves.assign_action(arm, action, action.slots[0])
    out = []
    w = np.array(arm.matrix_world)
    for f in frames:
        bpy.context.scene.frame_set(int(f))
        out.append([w @ np.array(pb.matrix) for pb in arm.pose.bones])
    return np.array(out)


def test_the_animation_import_plays_animations_alone_on_the_rig_their_tracks_name(bpy, tiny_animations):
    """Onto tiny imported without its animations: every set deforms tiny as
    the file's own set does in the core (verify), and poses every bone as
    the same set imported with the model does in Blender, within 1e-5 of
    the model size at 7 frames of each."""
    assert bpy.ops.import_scene.xfile(filepath=str(TINY)) == {"FINISHED"}
    arm, _meshes = imported(bpy)
    own = {a.name: a for a in bpy.data.actions}
    frames = {name: np.round(np.linspace(0, own[name].frame_range[1], 7)) for name in own}
    with_model = {name: _pose(bpy, arm, own[name], frames[name]) for name in own}
    bones = [b.name for b in arm.pose.bones]

    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.import_scene.xfile(filepath=str(TINY), import_animations=False) == {"FINISHED"}
    arm, meshes = imported(bpy)
    assert not bpy.data.actions
    bpy.context.view_layer.objects.active = arm
    assert bpy.ops.import_anim.xfile(filepath=str(tiny_animations)) == {"FINISHED"}
    acts = {a.name: a for a in bpy.data.actions}
    assert sorted(acts) == sorted(own) == ["Jog", "Loiter", "Walk", "Wave"]
    assert [b.name for b in arm.pose.bones] == bones
    ref = reference("xfile", [TINY])
    size = ext("scene.evaluate").size(ref)
    fcurves = ext("operators.fcurves")
    for clip in ref.clips:
        alone = _pose(bpy, arm, acts[clip.name], frames[clip.name])
        assert np.abs(alone - with_model[clip.name]).max() / size <= 1e-5, clip.name
        fcurves.assign_action(arm, acts[clip.name], acts[clip.name].slots[0])
        rep = verify(bpy, meshes, ref, clip, frames[clip.name])
        assert rep.ok and rep.max_error / rep.size <= 1e-5, (clip.name, rep.table())


def test_the_command_line_imports_animations_alone_onto_their_model(tiny_animations, tmp_path):
    alone = run_cli("import", tiny_animations, "-o", tmp_path / "a.blend")
    assert alone.returncode == 2 and "Traceback" not in alone.stderr
    assert "the file holds only animations" in alone.stderr and \
        "on the command line: import MODEL.x tiny_animations.x -o OUT.blend" in alone.stderr
    assert not (tmp_path / "a.blend").exists()
    both = run_cli("import", TINY, tiny_animations, "-o", tmp_path / "b.blend")
    assert both.returncode == 0, both.stderr[-2000:]
    assert "Imported tiny_4anim.x: 2 meshes, " in both.stdout and ", 8 actions (" in both.stdout
    assert (tmp_path / "b.blend").exists()


def test_verify_checks_a_model_and_animations_alone_cut_from_it(tmp_path):
    """``verify MODEL.x ANIM.x``: the animations read onto the model, as the
    import reads them, and Blender's deformation checked against them."""
    src = CRAFTED / "key_time_minus_one.x"
    cut = tmp_path / "swing_alone.x"
    cut.write_text(animation_only(src.read_text()))
    r = run_cli("verify", src, cut)
    assert r.returncode == 0, (r.stdout[-2000:], r.stderr[-2000:])
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("'Swing")]
    assert len(lines) == 2 and all(ln.endswith("PASS") for ln in lines), r.stdout[-2000:]


@pytest.mark.parametrize("name, expect", [
    ("decldata_nan_uvs.x", "Mesh 'Building': DeclData TEXCOORD0: 32 texture coordinate values were not finite "
                           "(16 vertices, the first at line "),
    ("key_time_minus_one.x", "1 animation key with a time outside [0, 2147483648) ticks skipped"),
    ("normals_without_brace.x", "Mesh 'Disc': MeshNormals has no closing '}': closed at line "),
    ("animation_on_missing_frame.x", "Animations name frames the file does not have, skipped (1): 'Crate' (Spin)"),
])
def test_a_blemished_file_imports_with_one_warning_about_it(bpy, capfd, name, expect):
    capfd.readouterr()
    assert bpy.ops.import_scene.xfile(filepath=str(CRAFTED / name)) == {"FINISHED"}
    warnings = _warnings(capfd.readouterr().out)
    assert [w for w in warnings if w.startswith(expect)] and len(warnings) == 1, warnings
    _arm, meshes = imported(bpy)
    for o in meshes.values():
        me = o.data
        for layer in me.uv_layers:
            uv = np.zeros(2 * len(me.loops))
            layer.uv.foreach_get("vector", uv)
            assert np.isfinite(uv).all()
    if name == "decldata_nan_uvs.x":
        assert len(meshes[0].data.polygons) == 72 and len(meshes[0].data.uv_layers) == 1
    elif name == "normals_without_brace.x":
        me = meshes[0].data
        assert len(me.polygons) == 16 and len(me.uv_layers) == 1 and me.materials[0].name == "Stone"
    elif name == "key_time_minus_one.x":
        assert [a.name for a in bpy.data.actions] == ["Swing"]
    else:
        assert not bpy.data.actions
