# SPDX-License-Identifier: GPL-3.0-or-later
"""RiTE export through bpy.ops (export_scene.rite, export_anim.rite).

* RAM/RAA -> Blender -> RAM/RAA gives back every record of the original
  files (joints, vertices, corner normals and UVs, triangles, shader ids,
  weights; RAA keys at their own frames with their own signs) within 1e-6,
  for random rigs and for the bundled samples, whichever way bones point;
* a rig made in Blender -> RAM/RAA -> Blender deforms as Blender deformed
  the original at every frame (within 1e-5 of the model size);
* export_anim.rite writes the active action, and names the bones whose
  translation keys RAA cannot carry;
* a failed export leaves an existing file byte for byte as it was and no
  temporary file behind;
* the scope options choose what is written.

Expected values are the original files' own numbers (read back with the
numpy reader) or what Blender played before the export.
"""
from __future__ import annotations

import export_checks as rig
import numpy as np
import pytest
from blender_checks import imported
from conftest import DATA, SAMPLES  # noqa: E402
from rite_random import random_raa, random_ram

from legacy_skin_io.io.rite import read_raa, read_ram, write_raa, write_ram

TOL = 1e-6      # records: absolute (the files' numbers are of order 1)
REL = 1e-5      # deformation: a fraction of the model size


# ---------------------------------------------------------------------------
# RAM/RAA -> Blender -> RAM/RAA

def _weights(m) -> np.ndarray:
    """Weight records as rows (vertex, joint, value), sorted."""
    rows = np.column_stack((m.weight_vertex, m.weight_joint, m.weight_value))
    return rows[np.lexsort((rows[:, 1], rows[:, 0]))]


def _assert_same_ram(got, src) -> None:
    assert got.mesh_name == src.mesh_name
    assert [j.name for j in got.joints] == [j.name for j in src.joints]
    assert [j.parent for j in got.joints] == [j.parent for j in src.joints]
    for a, b in zip(got.joints, src.joints):
        assert np.abs(a.orientation - b.orientation).max() < TOL, a.name    # same sign too
        assert np.abs(a.rotation - b.rotation).max() < TOL, a.name
        assert np.abs(a.translation - b.translation).max() < TOL, a.name
    assert got.positions.shape == src.positions.shape
    assert np.abs(got.positions - src.positions).max() < TOL
    assert np.array_equal(got.tri_vertices, src.tri_vertices)
    assert np.array_equal(got.tri_shader, src.tri_shader)
    assert np.abs(got.normals[got.tri_normals] - src.normals[src.tri_normals]).max() < TOL
    assert np.abs(got.uvs[got.tri_uvs] - src.uvs[src.tri_uvs]).max() < TOL
    gw, sw = _weights(got), _weights(src)
    assert gw.shape == sw.shape
    assert np.array_equal(gw[:, :2], sw[:, :2])
    assert np.abs(gw[:, 2] - sw[:, 2]).max() < TOL
    worst = max(np.abs(got.positions - src.positions).max(), np.abs(gw - sw).max())
    print(f"RAM records: largest deviation {worst:.2g}")


def _assert_same_raa(got, src) -> None:
    assert got.frame_count == src.frame_count
    by_joint = {t.joint_name: t for t in got.tracks}
    assert sorted(by_joint) == sorted(t.joint_name for t in src.tracks)
    for t in src.tracks:
        b = by_joint[t.joint_name]
        assert b.joint_id == t.joint_id
        assert np.array_equal(b.frames, t.frames), t.joint_name
        assert np.abs(b.rotations - t.rotations).max() < TOL, t.joint_name     # signs included
    print(f"RAA keys: largest deviation "
          f"{max(np.abs(by_joint[t.joint_name].rotations - t.rotations).max() for t in src.tracks):.2g}")


def _random_files(folder, seed):
    write_ram(random_ram(seed), folder / "rig in.ram")
    write_raa(random_raa(seed + 100, read_ram(folder / "rig in.ram"), "anim"), folder / "anim.raa")
    return folder / "rig in.ram", [(folder / "anim.raa", "ACTION")]


def _humanoid(folder):
    return SAMPLES / "rite" / "humanoid.ram", [(SAMPLES / "rite" / "walk.raa", "ACTION"),
                                              (SAMPLES / "rite" / "wave.raa", "DOMINANT")]


def _contract(folder):
    return DATA / "rite" / "contract_example.ram", [(DATA / "rite" / "contract_example.raa", "ACTION")]


CASES = {"random41": lambda f: _random_files(f, 41), "random42": lambda f: _random_files(f, 42),
         "random43": lambda f: _random_files(f, 43),
         "humanoid": _humanoid, "contract": _contract}


@pytest.mark.parametrize("case,direction,kw", [
    ("random41", "FILE", {}), ("random41", "CHILDREN", {}), ("random42", "FILE", {}), ("random42", "CHILDREN", {}),
    ("random43", "FILE", {"global_scale": 0.5, "axis_forward": "X", "axis_up": "-Y"}),
    ("random43", "CHILDREN", {"global_scale": 2.0, "axis_forward": "Y", "axis_up": "Z", "rest_from": "DEFAULT"}),
    ("humanoid", "FILE", {}), ("humanoid", "CHILDREN", {}), ("contract", "FILE", {}), ("contract", "CHILDREN", {})],
    ids=lambda v: v if isinstance(v, str) else "-".join(f"{k}={x}" for k, x in v.items()) or "defaults")
def test_rite_to_blender_to_rite_reproduces_every_record(bpy, tmp_path, case, direction, kw):
    """Any import options: the export writes back with the axes and scale
    the rig was imported with (use_stored_axes, the default)."""
    src_dir = tmp_path / "in"
    src_dir.mkdir()
    ram_path, anims = CASES[case](src_dir)
    src = read_ram(ram_path)
    src_anims = {p.stem: read_raa(p) for p, _ in anims}
    # the model with its first animation in one import, the others onto the armature
    first, _ = anims[0]
    assert bpy.ops.import_scene.rite(directory=str(ram_path.parent), bone_direction=direction,
                                     files=[{"name": ram_path.name}], **kw) == {"FINISHED"}
    assert bpy.ops.import_anim.rite(filepath=str(first)) == {"FINISHED"}
    for p, mode in anims[1:]:
        assert bpy.ops.import_anim.rite(filepath=str(p), mode=mode) == {"FINISHED"}
    arm, meshes = imported(bpy)
    assert arm is not None and list(meshes) == [0]
    out = tmp_path / "out"
    out.mkdir()
    assert bpy.ops.export_scene.rite(filepath=str(out / "rig.ram"), export_animations=True) == {"FINISHED"}
    assert sorted(p.name for p in out.iterdir()) == sorted(["rig.ram"] + [f"rig_{n}.raa" for n in src_anims])
    _assert_same_ram(read_ram(out / "rig.ram"), src)
    for name, anim in src_anims.items():
        _assert_same_raa(read_raa(out / f"rig_{name}.raa"), anim)
    # export_anim.rite writes the active action alone: the same records
    ad = arm.animation_data
    for name, anim in src_anims.items():
        action = next(a for a in bpy.data.actions if a.name == name)
        ad.action, ad.action_slot = action, action.slots[0]
        assert bpy.ops.export_anim.rite(filepath=str(out / f"active {name}.raa")) == {"FINISHED"}
        _assert_same_raa(read_raa(out / f"active {name}.raa"), anim)


# ---------------------------------------------------------------------------
# a rig made in Blender

def _warnings(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith("Warning:")]


def test_blender_rig_to_rite_and_back_deforms_identically(bpy, tmp_path, capfd):
    """A rotation-only rig: RAM/RAA carry it exactly, and the export says
    nothing about what they cannot carry (only that the rig's weights, which
    do not sum to 1, are written as Blender deforms with them)."""
    ao, mo, action = rig.build(bpy)
    frames = rig.FRAMES
    want = rig.positions(bpy, mo, frames)
    size = rig.size(want[0])
    assert np.abs(want - want[0]).max() > 0.05 * size       # it does move
    out = tmp_path / "rig.ram"
    capfd.readouterr()
    assert bpy.ops.export_scene.rite(filepath=str(out), export_animations=True) == {"FINISHED"}
    said = _warnings(capfd.readouterr().out)
    assert len(said) == 1 and "do not sum to 1" in said[0], said
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rig.ram", "rig_Bend.raa"]
    # the scene was not modified by the export
    assert ao.animation_data.action == action and bpy.context.scene.frame_current == frames[-1]
    ram = read_ram(out)
    assert sorted(j.name for j in ram.joints) == sorted(rig.NAMES)
    assert len(ram.positions) == len(mo.data.vertices)
    assert len(ram.tri_vertices) == 2 * len(mo.data.polygons)        # quads -> two triangles
    raa = read_raa(tmp_path / "rig_Bend.raa")
    assert sorted(t.joint_name for t in raa.tracks) == sorted(rig.NAMES)
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.import_scene.rite(filepath=str(out)) == {"FINISHED"}
    assert bpy.ops.import_anim.rite(filepath=str(tmp_path / "rig_Bend.raa")) == {"FINISHED"}
    _, meshes = imported(bpy)
    got = rig.positions(bpy, meshes[0], frames)
    err = np.linalg.norm(got - want, axis=2).max(axis=1)
    print(f"Blender rig -> RiTE -> Blender: max error {err.max():.3g} ({err.max() / size:.3g} of size {size:.3g})")
    assert err.max() <= REL * size, err


def test_export_anim_writes_the_active_action_and_names_translated_bones(bpy, tmp_path, capfd):
    """RAA holds rotations only: exporting an action with location keys on
    Bone.2 warns naming that bone (and no other) and writes the rotations,
    which play as Blender plays the action without its translation."""
    ao, mo, action = rig.build(bpy, translation_keys=True)
    capfd.readouterr()
    assert bpy.ops.export_anim.rite(filepath=str(tmp_path / "bend.raa")) == {"FINISHED"}
    warned = _warnings(capfd.readouterr().out)
    assert len(warned) == 1 and "Bone.2" in warned[0] and "translation" in warned[0], warned
    assert not any(n in warned[0] for n in rig.NAMES if n != "Bone.2"), warned
    raa = read_raa(tmp_path / "bend.raa")
    assert raa.frame_count == 14                  # frames 0..13 for the action's range 1..13
    assert sorted(t.joint_name for t in raa.tracks) == sorted(rig.NAMES)
    assert all(np.array_equal(t.frames, np.arange(14)) for t in raa.tracks)
    # without the location curves: no warning, the same rotations
    bag = action.layers[0].strips[0].channelbags[0]
    for fc in [fc for fc in bag.fcurves if fc.data_path.endswith(".location")]:
        bag.fcurves.remove(fc)
    for pb in ao.pose.bones:                      # the removed curves leave their last value behind
        pb.location = (0.0, 0.0, 0.0)
    assert bpy.ops.export_anim.rite(filepath=str(tmp_path / "bend2.raa")) == {"FINISHED"}
    assert _warnings(capfd.readouterr().out) == []
    again = {t.joint_name: t for t in read_raa(tmp_path / "bend2.raa").tracks}
    for t in raa.tracks:
        assert np.array_equal(again[t.joint_name].frames, t.frames)
        assert np.abs(again[t.joint_name].rotations - t.rotations).max() < TOL
    # the .raa plays on the exported model as Blender plays the action
    frames = rig.FRAMES
    want = rig.positions(bpy, mo, frames)
    size = rig.size(want[0])
    assert bpy.ops.export_scene.rite(filepath=str(tmp_path / "rig.ram"), export_animations=False) == {"FINISHED"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bend.raa", "bend2.raa", "rig.ram"]
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.import_scene.rite(filepath=str(tmp_path / "rig.ram")) == {"FINISHED"}
    assert bpy.ops.import_anim.rite(filepath=str(tmp_path / "bend.raa")) == {"FINISHED"}
    _, meshes = imported(bpy)
    err = np.linalg.norm(rig.positions(bpy, meshes[0], frames) - want, axis=2).max()
    print(f"export_anim.rite: max error {err:.3g} ({err / size:.3g} of size {size:.3g})")
    assert err <= REL * size


# ---------------------------------------------------------------------------
# what is exported

def _select_only(bpy, *objs):
    for o in bpy.context.view_layer.objects:
        o.select_set(o in objs)
    bpy.context.view_layer.objects.active = objs[0] if objs else None


def test_export_scope(bpy, tmp_path):
    """RiTE holds one mesh: what was exported shows in its vertex count."""
    ao, mo, _ = rig.build(bpy)
    crate = rig.crate(bpy)
    body, box = len(mo.data.vertices), len(crate.data.vertices)
    assert box == 8

    def count(**kw):
        out = tmp_path / "scope.ram"
        assert bpy.ops.export_scene.rite(filepath=str(out), export_animations=False, **kw) == {"FINISHED"}
        return len(read_ram(out).positions)

    _select_only(bpy, ao)
    assert count(use_selection=True) == body           # the armature brings its mesh, not the crate
    assert count(use_selection=False) == body + box
    _select_only(bpy, crate)
    assert count(use_selection=True) == box
    _select_only(bpy, ao)
    crate.hide_set(True)
    assert count(use_visible=True) == body
    crate.hide_set(False)
    props = bpy.data.collections.new("Props")
    bpy.context.scene.collection.children.link(props)
    bpy.context.scene.collection.objects.unlink(crate)
    props.objects.link(crate)
    assert count(collection="Props") == box
    ram = read_ram(tmp_path / "scope.ram")
    assert not any(j.name in rig.NAMES for j in ram.joints)      # no armature in that collection
    vl = bpy.context.view_layer
    vl.active_layer_collection = vl.layer_collection.children["Props"]
    assert count(use_active_collection=True) == box
    vl.active_layer_collection = vl.layer_collection
    assert count(use_active_collection=True) == body + box
    before = (tmp_path / "scope.ram").read_bytes()
    with pytest.raises(RuntimeError, match="No Such Collection"):
        bpy.ops.export_scene.rite(filepath=str(tmp_path / "scope.ram"), collection="No Such Collection")
    assert (tmp_path / "scope.ram").read_bytes() == before


# ---------------------------------------------------------------------------
# failed exports

PREVIOUS = b"previous content\n"


def _leftovers(folder, keep):
    return sorted(p.name for p in folder.iterdir() if p.name not in keep)


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")     # the nan coordinate
def test_failed_export_leaves_the_existing_file_untouched(bpy, tmp_path):
    target = tmp_path / "keep.ram"
    target.write_bytes(PREVIOUS)
    # nothing to export (an empty scene), onto the existing file
    with pytest.raises(RuntimeError, match="nothing to export"):
        bpy.ops.export_scene.rite(filepath=str(target))
    assert target.read_bytes() == PREVIOUS
    # into a directory that does not exist
    ao, mo, _ = rig.build(bpy)
    with pytest.raises(RuntimeError, match="cannot write file: No such file or directory"):
        bpy.ops.export_scene.rite(filepath=str(tmp_path / "missing" / "keep.ram"))
    assert not (tmp_path / "missing").exists()
    # a mesh the writer refuses (a coordinate that is not finite), onto the existing file
    me = mo.data
    co = np.empty(3 * len(me.vertices), dtype=np.float32)
    me.vertices.foreach_get("co", co)
    good = co.copy()
    co[4] = np.nan
    me.vertices.foreach_set("co", co)
    with pytest.raises(RuntimeError, match="nan"):
        bpy.ops.export_scene.rite(filepath=str(target), export_animations=True)
    assert target.read_bytes() == PREVIOUS
    assert _leftovers(tmp_path, {"keep.ram"}) == []          # no temporary file, no .raa
    me.vertices.foreach_set("co", good)
    me.update()
    # an animation file that cannot be written (its name is taken by a folder): the
    # model beside it must not be replaced either
    (tmp_path / "keep_Bend.raa").mkdir()
    with pytest.raises(RuntimeError, match="keep_Bend.raa"):
        bpy.ops.export_scene.rite(filepath=str(target), export_animations=True)
    assert target.read_bytes() == PREVIOUS
    assert _leftovers(tmp_path, {"keep.ram", "keep_Bend.raa"}) == []
    assert list((tmp_path / "keep_Bend.raa").iterdir()) == []
    # the same export, possible again, replaces the file
    (tmp_path / "keep_Bend.raa").rmdir()
    assert bpy.ops.export_scene.rite(filepath=str(target), export_animations=True) == {"FINISHED"}
    assert len(read_ram(target).positions) == len(me.vertices)
    assert _leftovers(tmp_path, {"keep.ram", "keep_Bend.raa"}) == []


def test_failed_export_anim_leaves_the_existing_file_untouched(bpy, tmp_path):
    target = tmp_path / "keep.raa"
    target.write_bytes(PREVIOUS)
    # no armature
    with pytest.raises(RuntimeError, match="armature"):
        bpy.ops.export_anim.rite(filepath=str(target))
    ao, _, _ = rig.build(bpy)
    ao.animation_data.action = None          # an armature without an active action
    with pytest.raises(RuntimeError, match="has no action and no NLA track"):
        bpy.ops.export_anim.rite(filepath=str(target))
    assert target.read_bytes() == PREVIOUS
    assert _leftovers(tmp_path, {"keep.raa"}) == []
