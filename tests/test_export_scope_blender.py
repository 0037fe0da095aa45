# SPDX-License-Identifier: GPL-3.0-or-later
"""What an export covers (its scope), through bpy.ops: only the
actions of the rig exported, texture paths by the path mode, Scale as
FBX's, the same storage kinds in the operator and ``convert``, animation
operators with option sections, RAA file names that do not stack."""
from __future__ import annotations

import argparse
import os
from pathlib import Path

import export_checks as rig
import numpy as np
import pytest
from conftest import SAMPLES

from legacy_skin_io.io.rite import read_raa
from legacy_skin_io.io.xfile import read_xfile

RITE = SAMPLES / "rite"


def _import_humanoid(bpy):
    assert bpy.ops.import_scene.rite(files=[{"name": "humanoid.ram"}, {"name": "walk.raa"}],
                                     directory=str(RITE)) == {"FINISHED"}
    return bpy.context.view_layer.objects.active


def test_an_export_carries_only_the_rig_s_own_actions(bpy, tmp_path):
    first = _import_humanoid(bpy)
    first_actions = {a.name for a in bpy.data.actions}
    second = _import_humanoid(bpy)            # a second copy: the same bone names
    assert second != first
    ad = second.animation_data
    mine = {st.action.name for tr in ad.nla_tracks for st in tr.strips}
    assert mine and not mine & first_actions
    for o in bpy.context.view_layer.objects:
        o.select_set(o == second or o.parent == second)
    bpy.context.view_layer.objects.active = second
    out = tmp_path / "second.x"
    assert bpy.ops.export_scene.xfile(filepath=str(out), use_selection=True) == {"FINISHED"}
    assert {s.name for s in read_xfile(out).animation_sets} == mine       # before: the first copy's too
    out = tmp_path / "all.x"
    assert bpy.ops.export_scene.xfile(filepath=str(out), use_selection=True, actions="ALL") == {"FINISHED"}
    assert {s.name for s in read_xfile(out).animation_sets} == mine | first_actions


def _textured(bpy, image_path: Path):
    ao, mo, _ = rig.build(bpy)
    image_path.parent.mkdir(parents=True, exist_ok=True)
    image_path.write_bytes(b"not really a png: the exporter only names it")
    mat = bpy.data.materials.new("Skin")
    mat.use_nodes = True
    nodes = mat.node_tree.nodes
    tex = nodes.new("ShaderNodeTexImage")
    img = bpy.data.images.new("skin", 4, 4)
    img.filepath = str(image_path)
    img.source = "FILE"
    tex.image = img
    bsdf = next(n for n in nodes if n.type == "BSDF_PRINCIPLED")
    mat.node_tree.links.new(tex.outputs["Color"], bsdf.inputs["Base Color"])
    mo.data.materials.append(mat)
    return ao, mo


def _texture(path: Path) -> set[str]:
    xf = read_xfile(path)
    out = set()
    for f in xf.all_frames():
        for m in f.meshes:
            out |= {mat.texture for mat in m.materials if mat.texture}
    for m in xf.meshes:
        out |= {mat.texture for mat in m.materials if mat.texture}
    return out


@pytest.mark.parametrize("mode,where,want", [
    ("AUTO", "out/tex/skin.png", "tex/skin.png"),         # inside the written file's folder: relative
    ("AUTO", "elsewhere/skin.png", "ABS"),                # outside: absolute
    ("RELATIVE", "elsewhere/skin.png", "../elsewhere/skin.png"),
    ("ABSOLUTE", "out/tex/skin.png", "ABS"),
    ("STRIP", "out/tex/skin.png", "skin.png"),
    ("COPY", "elsewhere/skin.png", "skin.png"),
])
def test_texture_paths_follow_the_path_mode(bpy, tmp_path, mode, where, want):
    image = tmp_path / where
    _textured(bpy, image)
    out = tmp_path / "out" / "rig.x"
    out.parent.mkdir(exist_ok=True)
    assert bpy.ops.export_scene.xfile(filepath=str(out), path_mode=mode) == {"FINISHED"}
    expected = str(image.resolve()) if want == "ABS" else want
    assert _texture(out) == {expected}
    if mode == "COPY":
        assert (out.parent / "skin.png").read_bytes() == image.read_bytes()


def test_scale_multiplies_as_fbx_and_only_without_the_imported_axes(bpy, tmp_path):
    rig.build(bpy)
    a, b, c = tmp_path / "a.x", tmp_path / "b.x", tmp_path / "c.x"
    assert bpy.ops.export_scene.xfile(filepath=str(a), use_stored_axes=False) == {"FINISHED"}
    assert bpy.ops.export_scene.xfile(filepath=str(b), use_stored_axes=False, global_scale=2.0) == {"FINISHED"}
    assert bpy.ops.export_scene.xfile(filepath=str(c), global_scale=2.0) == {"FINISHED"}
    pa, pb, pc = (np.concatenate([m.positions for f in read_xfile(p).all_frames() for m in f.meshes]
                                 + [m.positions for m in read_xfile(p).meshes]) for p in (a, b, c))
    assert np.allclose(pb, 2.0 * pa, atol=1e-6)
    assert np.allclose(pc, pa, atol=1e-6)                 # Axes as Imported: Scale has no effect
    sections = dict((t, (names, switch)) for t, names, switch, _ in bpy.types.EXPORT_SCENE_OT_xfile.SECTIONS)
    names, switch = sections["Transform"]
    assert "*global_scale" in names and switch == "!use_stored_axes"        # greyed out while it is on


def test_convert_and_the_operator_offer_the_same_storage_kinds(bpy):
    from legacy_skin_io.cli import convert

    p = argparse.ArgumentParser()
    convert.add_arguments(p)
    storage = next(a for a in p._actions if "--storage" in a.option_strings)
    op = bpy.ops.export_scene.xfile.get_rna_type().properties["storage"]
    kinds = [i.identifier for i in op.enum_items]
    assert kinds == ["text", "binary", "text_compressed", "binary_compressed"]
    # convert's --storage is the same option spec: every kind the operator offers, and nothing else
    from legacy_skin_io.io.xfile.options import STORAGE

    assert list(STORAGE.values) == kinds and storage.dest.endswith("--storage")
    for k in kinds:
        assert STORAGE.value(k) == k


def test_animation_operators_draw_sections_with_weight_only_for_mergeable(bpy):
    op = bpy.types.IMPORT_ANIM_OT_rite
    names = [n for _, ns, _, _ in op.SECTIONS for n in ns]
    assert "weight" in names and "mode" in names and callable(op.draw)
    assert callable(bpy.types.EXPORT_ANIM_OT_rite.draw)


def test_re_export_does_not_stack_file_names(bpy, tmp_path):
    _import_humanoid(bpy)
    out = tmp_path / "humanoid_exp.ram"
    assert bpy.ops.export_scene.rite(filepath=str(out)) == {"FINISHED"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["humanoid_exp.ram", "humanoid_exp_walk.raa"]
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.import_scene.rite(files=[{"name": "humanoid_exp.ram"}, {"name": "humanoid_exp_walk.raa"}],
                                     directory=str(tmp_path)) == {"FINISHED"}
    os.remove(tmp_path / "humanoid_exp_walk.raa")
    assert bpy.ops.export_scene.rite(filepath=str(out)) == {"FINISHED"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["humanoid_exp.ram", "humanoid_exp_walk.raa"]
    assert read_raa(tmp_path / "humanoid_exp_walk.raa").tracks
