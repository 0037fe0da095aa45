# SPDX-License-Identifier: GPL-3.0-or-later
"""RiTE import through bpy.ops, verified frame by frame against the core's
evaluation of the original files."""
from __future__ import annotations

import importlib

import numpy as np
import pytest
from rite_random import random_ram, random_raa

from legacy_skin_io.io.rite import read_raa, read_ram, write_raa, write_ram
from legacy_skin_io.io.rite.playback import RiteRig, StackEntry

from conftest import DATA, EXT_MODULE  # noqa: E402


def _mods():
    ri = importlib.import_module(EXT_MODULE + ".operators.rite_import")
    ver = importlib.import_module(EXT_MODULE + ".operators.verify")
    rb = importlib.import_module(EXT_MODULE + ".operators.rite_build")
    return ri, ver, rb


def _objects(bpy):
    arm = [o for o in bpy.context.scene.objects if o.type == "ARMATURE"]
    mesh = [o for o in bpy.context.scene.objects if o.type == "MESH"]
    assert len(arm) == 1 and len(mesh) == 1
    return arm[0], mesh[0]


def _conv(arm):
    import json

    ri, _, rb = _mods()
    d = json.loads(arm.data[ri.RIG_KEY])
    return rb.Conversion(np.array(d["C"]), d["scale"])


def _verify(bpy, ram_path, entries, frames):
    _, ver, _ = _mods()
    arm, mesh = _objects(bpy)
    rig = RiteRig.from_ram(read_ram(ram_path))
    return ver.verify_rite(bpy.context, arm, mesh, rig, _conv(arm), entries, frames)


@pytest.mark.parametrize("seed", [11, 12])
@pytest.mark.parametrize("bones_at_children", [False, True])
def test_random_rig_import_matches_rite_playback_every_frame(bpy, tmp_path, seed, bones_at_children):
    ram = random_ram(seed)
    raa = random_raa(seed + 100, ram, "anim one")
    write_ram(ram, tmp_path / "rig one.ram")
    write_raa(raa, tmp_path / "anim one.raa")
    res = bpy.ops.import_scene.rite(filepath=str(tmp_path / "rig one.ram"), global_scale=0.5,
                                    point_bones_at_children=bones_at_children)
    assert res == {"FINISHED"}
    arm, mesh = _objects(bpy)
    assert len(arm.data.bones) == len(ram.joints)
    assert [b.name for b in arm.data.bones] == [j.name for j in ram.joints] or \
        sorted(b.name for b in arm.data.bones) == sorted(j.name for j in ram.joints)
    assert len(mesh.data.vertices) == len(ram.positions)
    assert len(mesh.data.polygons) == len(ram.tri_vertices)
    assert len(mesh.vertex_groups) == len(ram.joints)
    assert mesh.data.uv_layers and len(mesh.data.materials) == len(np.unique(ram.tri_shader))
    assert min(b.length for b in arm.data.bones) > 1e-4
    if not bones_at_children:  # rest matrices are exactly the bind pose (Y-up -> Z-up, scaled)
        rig = RiteRig.from_ram(ram)
        conv = _conv(arm)
        want = conv.rigid(rig.bind_world)
        got = np.array([np.array(arm.data.bones[j.name].matrix_local) for j in ram.joints])
        assert np.abs(got - want).max() < 1e-5
    res = bpy.ops.import_anim.rite(filepath=str(tmp_path / "anim one.raa"))
    assert res == {"FINISHED"}
    assert arm.animation_data.action.name == "anim one"
    assert (bpy.context.scene.frame_start, bpy.context.scene.frame_end) == (0, raa.frame_count - 1)
    rig = RiteRig.from_ram(read_ram(tmp_path / "rig one.ram"))
    bound = rig.bind(read_raa(tmp_path / "anim one.raa"))
    report = _verify(bpy, tmp_path / "rig one.ram", [StackEntry(bound)], range(raa.frame_count))
    assert report.ok, report.table()
    assert report.max_error <= 1e-5 * report.size
    # the animation really moves the mesh
    moved = _verify(bpy, tmp_path / "rig one.ram", [], [5])
    assert moved.max_error > 1e3 * report.max_error + 1e-6


def test_mergeable_and_dominant_nla_match_core_blending(bpy, tmp_path):
    ram = random_ram(21)
    walk = random_raa(121, ram, "walk", frame_count=17)
    run = random_raa(122, ram, "run", frame_count=11)
    wave = random_raa(123, ram, "wave", frame_count=23)
    wave.tracks = wave.tracks[:3]  # dominant animation on a few joints only
    for a in (walk, run, wave):
        write_raa(a, tmp_path / f"{a.name}.raa")
    write_ram(ram, tmp_path / "rig.ram")
    assert bpy.ops.import_scene.rite(filepath=str(tmp_path / "rig.ram")) == {"FINISHED"}
    assert bpy.ops.import_anim.rite(filepath=str(tmp_path / "wave.raa"), mode="DOMINANT") == {"FINISHED"}
    assert bpy.ops.import_anim.rite(directory=str(tmp_path), files=[{"name": "walk.raa"}],
                                    mode="MERGEABLE", weight=1.0) == {"FINISHED"}
    assert bpy.ops.import_anim.rite(filepath=str(tmp_path / "run.raa"), mode="MERGEABLE",
                                    weight=0.5) == {"FINISHED"}
    arm, _ = _objects(bpy)
    tracks = [t.name for t in arm.animation_data.nla_tracks]
    assert tracks == ["walk", "run", "wave"]  # mergeable below dominant
    rig = RiteRig.from_ram(read_ram(tmp_path / "rig.ram"))
    entries = [StackEntry(rig.bind(read_raa(tmp_path / "walk.raa")), "MERGEABLE", 1.0),
               StackEntry(rig.bind(read_raa(tmp_path / "run.raa")), "MERGEABLE", 0.5),
               StackEntry(rig.bind(read_raa(tmp_path / "wave.raa")), "DOMINANT", 1.0)]
    frames = list(range(0, 45)) + [3.5, 10.25]  # beyond each clip's end: looping
    report = _verify(bpy, tmp_path / "rig.ram", entries, frames)
    assert report.ok, report.table()


def test_several_raa_files_in_one_go_and_missing_joints(bpy, tmp_path):
    ram = random_ram(31)
    a = random_raa(131, ram, "first")
    b = random_raa(132, ram, "second")
    b.tracks[0].joint_name = "no such joint"
    b.tracks[0].joint_id = 999
    write_ram(ram, tmp_path / "rig.ram")
    write_raa(a, tmp_path / "first.raa")
    write_raa(b, tmp_path / "second.raa")
    assert bpy.ops.import_scene.rite(filepath=str(tmp_path / "rig.ram")) == {"FINISHED"}
    res = bpy.ops.import_anim.rite(directory=str(tmp_path), files=[{"name": "first.raa"}, {"name": "second.raa"}])
    assert res == {"FINISHED"}
    assert {"first", "second"} <= {x.name for x in bpy.data.actions}
    arm, _ = _objects(bpy)
    assert arm.animation_data.action.name == "first"
    assert bpy.data.actions["second"].use_fake_user


def test_failed_imports_leave_the_scene_untouched(bpy, tmp_path):
    bad = tmp_path / "broken.ram"
    text = (DATA / "rite" / "contract_example.ram").read_text().replace("vertices 3", "vertices 4")
    bad.write_text(text)
    before = (len(bpy.data.objects), len(bpy.data.meshes), len(bpy.data.armatures))
    with pytest.raises(RuntimeError, match=r"broken\.ram:\d+"):
        bpy.ops.import_scene.rite(filepath=str(bad))
    assert (len(bpy.data.objects), len(bpy.data.meshes), len(bpy.data.armatures)) == before
    # an animation without an armature, and a broken animation, are clear errors
    with pytest.raises(RuntimeError, match="armature"):
        bpy.ops.import_anim.rite(filepath=str(DATA / "rite" / "contract_example.raa"))
    assert bpy.ops.import_scene.rite(filepath=str(DATA / "rite" / "contract_example.ram")) == {"FINISHED"}
    bad_raa = tmp_path / "broken.raa"
    bad_raa.write_text((DATA / "rite" / "contract_example.raa").read_text().replace("keyframes 3", "keyframes 5"))
    n_actions = len(bpy.data.actions)
    with pytest.raises(RuntimeError, match=r"broken\.raa:\d+"):
        bpy.ops.import_anim.rite(filepath=str(bad_raa))
    assert len(bpy.data.actions) == n_actions


def test_menu_entries_and_file_handlers_registered(bpy):
    assert hasattr(bpy.types, "IO_FH_rite_ram") and hasattr(bpy.types, "IO_FH_rite_raa")
    assert bpy.types.IO_FH_rite_ram.bl_import_operator == "import_scene.rite"
    assert "RiTE" in bpy.ops.import_scene.rite.get_rna_type().name
    draw_funcs = [f.__name__ for f in bpy.types.TOPBAR_MT_file_import._dyn_ui_initialize()]
    assert any("import" in n for n in draw_funcs)


def test_bundled_sample_walk_and_wave_verify_every_frame(bpy):
    from conftest import SAMPLES

    rite = SAMPLES / "rite"
    assert bpy.ops.import_scene.rite(filepath=str(rite / "humanoid.ram")) == {"FINISHED"}
    assert bpy.ops.import_anim.rite(filepath=str(rite / "walk.raa"), mode="MERGEABLE") == {"FINISHED"}
    assert bpy.ops.import_anim.rite(filepath=str(rite / "wave.raa"), mode="DOMINANT") == {"FINISHED"}
    rig = RiteRig.from_ram(read_ram(rite / "humanoid.ram"))
    entries = [StackEntry(rig.bind(read_raa(rite / "walk.raa")), "MERGEABLE", 1.0),
               StackEntry(rig.bind(read_raa(rite / "wave.raa")), "DOMINANT", 1.0)]
    assert bpy.context.scene.frame_end == 40
    report = _verify(bpy, rite / "humanoid.ram", entries, range(0, 81))
    assert report.ok, report.table()
    assert len(report.frames) == 81


def test_command_line_verify_exit_codes(tmp_path):
    import subprocess
    import sys

    from conftest import ROOT, SAMPLES

    rite = SAMPLES / "rite"
    ok = subprocess.run([sys.executable, "-m", "legacy_skin_io", "verify", str(rite / "humanoid.ram"),
                         str(rite / "walk.raa"), "--blend", str(tmp_path / "h.blend")],
                        cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert ok.returncode == 0, ok.stderr[-2000:]
    assert "PASS: max error" in ok.stdout and (tmp_path / "h.blend").exists()
    lines = [ln for ln in ok.stdout.splitlines() if ln.strip() and ln.split()[0].isdigit()]
    assert len(lines) == 33  # one row per frame
    strict = subprocess.run([sys.executable, "-m", "legacy_skin_io", "verify", str(rite / "humanoid.ram"),
                             str(rite / "walk.raa"), "--tolerance", "1e-12"],
                            cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert strict.returncode == 1 and "FAIL" in strict.stdout
    bad = tmp_path / "bad.ram"
    bad.write_text("joints 1\n0 \"a\"\nparent 7\n")
    broken = subprocess.run([sys.executable, "-m", "legacy_skin_io", "verify", str(bad)],
                            cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert broken.returncode == 2 and "bad.ram:" in broken.stderr
    assert "Traceback" not in broken.stderr
