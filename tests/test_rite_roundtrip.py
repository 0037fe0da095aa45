# SPDX-License-Identifier: GPL-3.0-or-later
"""RiTE round trips through Blender (bpy.ops only)."""
from __future__ import annotations

import numpy as np
import pytest
from rite_random import random_raa, random_ram

from legacy_skin_io.core import quat
from legacy_skin_io.io.rite import read_raa, read_ram, write_raa, write_ram


def _dense_weights(m):
    w = np.zeros((len(m.positions), len(m.joints)))
    np.add.at(w, (m.weight_vertex, m.weight_joint), m.weight_value)
    return w


def test_files_to_blender_to_files_reproduce_every_record(bpy, tmp_path):
    ram = random_ram(41)
    raa = random_raa(141, ram, "anim")
    write_ram(ram, tmp_path / "in.ram")
    write_raa(raa, tmp_path / "anim.raa")
    src, anim = read_ram(tmp_path / "in.ram"), read_raa(tmp_path / "anim.raa")
    assert bpy.ops.import_scene.rite(filepath=str(tmp_path / "in.ram")) == {"FINISHED"}
    assert bpy.ops.import_anim.rite(filepath=str(tmp_path / "anim.raa")) == {"FINISHED"}
    out = tmp_path / "out"
    out.mkdir()
    assert bpy.ops.export_scene.rite(filepath=str(out / "rig.ram"), export_animations=True) == {"FINISHED"}
    got = read_ram(out / "rig.ram")
    assert got.mesh_name == src.mesh_name
    assert [j.name for j in got.joints] == [j.name for j in src.joints]
    assert [j.parent for j in got.joints] == [j.parent for j in src.joints]
    for a, b in zip(got.joints, src.joints):
        assert np.abs(a.orientation - b.orientation).max() < 1e-6
        assert np.abs(a.rotation - b.rotation).max() < 1e-6
        assert np.abs(a.translation - b.translation).max() < 1e-6
    assert np.abs(got.positions - src.positions).max() < 1e-6
    assert np.array_equal(got.tri_vertices, src.tri_vertices)
    assert np.array_equal(got.tri_shader, src.tri_shader)
    assert np.abs(got.normals[got.tri_normals] - src.normals[src.tri_normals]).max() < 1e-6
    assert np.abs(got.uvs[got.tri_uvs] - src.uvs[src.tri_uvs]).max() < 1e-6
    assert np.abs(_dense_weights(got) - _dense_weights(src)).max() < 1e-6
    back = read_raa(out / "anim.raa")
    assert back.frame_count == anim.frame_count
    by_joint = {t.joint_name: t for t in back.tracks}
    assert set(by_joint) == {t.joint_name for t in anim.tracks}
    for t in anim.tracks:
        b = by_joint[t.joint_name]
        assert np.array_equal(b.frames, t.frames)
        assert np.abs(b.rotations - t.rotations).max() < 1e-6


def _blender_rig(bpy, ext_anim):
    import bmesh
    from mathutils import Matrix

    arm = bpy.data.armatures.new("Rig")
    ao = bpy.data.objects.new("Rig", arm)
    bpy.context.scene.collection.objects.link(ao)
    bpy.context.view_layer.objects.active = ao
    bpy.ops.object.mode_set(mode="EDIT")
    rng = np.random.default_rng(5)
    names = []
    for i in range(5):
        b = arm.edit_bones.new(f"Bone {i}")
        b.head = (0.1 * i, 0.0, 0.4 * i)
        b.tail = (0.1 * i + 0.05, 0.1, 0.4 * i + 0.35)
        b.roll = float(rng.uniform(-1, 1))
        if i:
            b.parent = arm.edit_bones[names[-1]]
        names.append(b.name)
    bpy.ops.object.mode_set(mode="OBJECT")
    me = bpy.data.meshes.new("Body")
    bm = bmesh.new()
    for i in range(5):
        bmesh.ops.create_cube(bm, size=0.3, matrix=Matrix.Translation((0.1 * i, 0, 0.4 * i + 0.2)))
    bm.to_mesh(me)
    bm.free()
    mo = bpy.data.objects.new("Body", me)
    bpy.context.scene.collection.objects.link(mo)
    mo.parent = ao
    co = np.array([v.co[2] for v in me.vertices])
    for i, n in enumerate(names):
        g = mo.vertex_groups.new(name=n)
        w = np.clip(1 - np.abs(co - (0.4 * i + 0.2)) / 0.4, 0, 1)
        for v in np.nonzero(w > 0)[0]:
            g.add([int(v)], float(w[v]), "REPLACE")
    mo.modifiers.new("Armature", "ARMATURE").object = ao
    action, slot, bag = ext_anim.new_action_for(ao, "Bend")
    for n in names:
        q = quat.normalize(rng.normal(size=(3, 4)) * [0.3, 0.3, 0.3, 1])
        ext_anim.add_vector_keys(bag, f'pose.bones["{n}"].rotation_quaternion', [0, 6, 12],
                                 np.concatenate((q[:, 3:], q[:, :3]), axis=1), group=n)
    ext_anim.add_vector_keys(bag, f'pose.bones["{names[2]}"].location', [0, 12], [[0, 0, 0], [0, 0.1, 0]])
    action.frame_range = (0, 12)
    ext_anim.assign_action(ao, action, slot)
    return ao, mo


def _frames_positions(bpy, mo, frames):
    out = []
    for f in frames:
        bpy.context.scene.frame_set(f)
        dg = bpy.context.evaluated_depsgraph_get()
        ev = mo.evaluated_get(dg)
        co = np.empty(len(ev.data.vertices) * 3, dtype=np.float32)
        ev.data.vertices.foreach_get("co", co)
        out.append(co.reshape(-1, 3))
    return np.array(out, dtype=np.float64)


def test_blender_rig_to_rite_and_back_deforms_identically(bpy, ext, tmp_path):
    import importlib

    anim = importlib.import_module(ext.__name__ + ".operators.anim_build")
    ao, mo = _blender_rig(bpy, anim)
    # only rotations are animated in the comparison: remove the location keys after
    # checking the export warns about them
    frames = list(range(0, 13))
    out = tmp_path / "rig.ram"
    assert bpy.ops.export_scene.rite(filepath=str(out), export_animations=True) == {"FINISHED"}
    assert (tmp_path / "Bend.raa").exists()
    bag = ao.animation_data.action.layers[0].strips[0].channelbags[0]
    for fc in [fc for fc in bag.fcurves if fc.data_path.endswith("location")]:
        bag.fcurves.remove(fc)
    for pb in ao.pose.bones:  # the removed curves leave their last value behind
        pb.location = (0.0, 0.0, 0.0)
    assert bpy.ops.export_scene.rite(filepath=str(out), export_animations=True) == {"FINISHED"}
    want = _frames_positions(bpy, mo, frames)
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.import_scene.rite(filepath=str(out)) == {"FINISHED"}
    assert bpy.ops.import_anim.rite(filepath=str(tmp_path / "Bend.raa")) == {"FINISHED"}
    mesh = [o for o in bpy.context.scene.objects if o.type == "MESH"][0]
    got = _frames_positions(bpy, mesh, frames)
    size = np.linalg.norm(want[0].max(0) - want[0].min(0))
    err = np.abs(got - want).max(axis=(1, 2))
    assert err.max() <= 1e-5 * size, err
    assert np.abs(want[6] - want[0]).max() > 0.01  # it does move


def test_export_warns_about_translation_keys_and_never_half_writes(bpy, ext, tmp_path):
    import importlib

    anim = importlib.import_module(ext.__name__ + ".operators.anim_build")
    _blender_rig(bpy, anim)
    target = tmp_path / "keep.ram"
    target.write_text("previous content")
    # exporting into a directory that does not exist fails cleanly, nothing written
    with pytest.raises(RuntimeError):
        bpy.ops.export_scene.rite(filepath=str(tmp_path / "missing" / "x.ram"))
    assert target.read_text() == "previous content"
    exporter = importlib.import_module(ext.__name__ + ".operators.rite_export")
    warnings = exporter.save_raa(bpy.context, str(tmp_path / "bend.raa"))
    assert any("rotations only" in w and "Bone 2" in w for w in warnings), warnings
    assert bpy.ops.export_anim.rite(filepath=str(tmp_path / "bend.raa")) == {"FINISHED"}
    assert read_raa(tmp_path / "bend.raa").frame_count == 13
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".") or p.suffix == ".tmp"] == []
