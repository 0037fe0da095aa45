# SPDX-License-Identifier: GPL-3.0-or-later
"""Inputs and targets that are not regular files, bad option values and bad
output paths, through the operators (as a user or a script drives them) and
the command line's Blender commands (``import``, ``verify``, ``export``):
one line each, never a traceback, a hang or a replaced device node. FIFOs
and device nodes are made inside a temporary folder, never the machine's
own /dev."""
from __future__ import annotations

import importlib
import os
import re
import stat

import assimp_reading as ar
import pytest
from bad_input import cli_error, make_char_device
from blender_checks import snapshot
from conftest import SAMPLES, run_cli

RITE = SAMPLES / "rite"
X = SAMPLES / "x" / "tiny_4anim.x"


def _one_line_error(call) -> str:
    with pytest.raises(RuntimeError) as info:
        call()
    text = str(info.value)
    assert "Traceback" not in text and len(text.strip().splitlines()) <= 2, text
    assert "internal error" not in text, text
    return text


# ---------------------------------------------------------------------------
# the operators

def test_import_operators_refuse_a_fifo_and_a_folder(bpy, tmp_path):
    fifo = tmp_path / "model.ram"
    os.mkfifo(fifo)
    folder = tmp_path / "folder.x"
    folder.mkdir()
    before = snapshot(bpy)
    assert "FIFO" in _one_line_error(lambda: bpy.ops.import_scene.rite(filepath=str(fifo)))
    assert "folder" in _one_line_error(lambda: bpy.ops.import_scene.xfile(filepath=str(folder)))
    # drag-and-drop gives files and directory
    assert "FIFO" in _one_line_error(lambda: bpy.ops.import_scene.rite(
        directory=str(tmp_path), files=[{"name": "model.ram"}]))
    assert snapshot(bpy) == before
    bpy.ops.import_scene.rite(filepath=str(RITE / "humanoid.ram"))
    anim = tmp_path / "anim.raa"
    os.mkfifo(anim)
    acts = len(bpy.data.actions)
    assert "FIFO" in _one_line_error(lambda: bpy.ops.import_anim.rite(filepath=str(anim)))
    assert len(bpy.data.actions) == acts


def test_import_operator_refuses_a_device_node(bpy, tmp_path):
    dev = make_char_device(tmp_path, "zero.x")
    assert "character device" in _one_line_error(lambda: bpy.ops.import_scene.xfile(filepath=str(dev)))


@pytest.mark.parametrize("kind", ["fifo", "device", "folder"])
def test_export_operators_never_replace_what_is_not_a_regular_file(bpy, tmp_path, kind):
    bpy.ops.import_scene.rite(filepath=str(RITE / "humanoid.ram"))
    bpy.ops.import_anim.rite(filepath=str(RITE / "walk.raa"))
    for op, name in ((bpy.ops.export_scene.xfile, "o.x"), (bpy.ops.export_scene.rite, "o.ram"),
                     (bpy.ops.export_anim.rite, "o.raa")):
        target = tmp_path / name
        if kind == "fifo":
            os.mkfifo(target)
        elif kind == "device":
            make_char_device(tmp_path, name)
        else:
            target.mkdir()
        before = os.lstat(target)
        assert "will not replace" in _one_line_error(lambda op=op, target=target: op(filepath=str(target)))
        after = os.lstat(target)
        assert (after.st_mode, after.st_ino, after.st_rdev) == (before.st_mode, before.st_ino, before.st_rdev)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_nan_scale_is_one_line(bpy):
    assert "scale" in _one_line_error(lambda: bpy.ops.import_scene.rite(filepath=str(RITE / "humanoid.ram"),
                                                                        global_scale=float("nan")))
    bpy.ops.import_scene.rite(filepath=str(RITE / "humanoid.ram"))
    assert "scale" in _one_line_error(lambda: bpy.ops.export_scene.xfile(
        filepath="/nonexistent/never.x", use_stored_axes=False, global_scale=float("nan")))


def test_a_nan_error_never_passes(ext):
    verify = importlib.import_module(ext.__name__ + ".operators.verify")
    frames = [verify.FrameError(0.0, 1e-9, 1e-9), verify.FrameError(1.0, float("nan"), 0.0),
              verify.FrameError(2.0, 1e-9, 1e-9)]
    rep = verify.Report(frames, 1.0, 1e-5)
    assert rep.max_error != rep.max_error and not rep.ok and rep.verdict().startswith("FAIL")
    assert not verify.Report(frames[:1], float("nan"), float("nan")).ok
    assert not verify.Report(frames[:1], float("inf"), float("inf")).ok
    assert verify.Report(frames[:1], 1.0, 1e-5).ok


# ---------------------------------------------------------------------------
# the command line

def test_cli_refuses_a_fifo_input_at_once(tmp_path):
    fifo = tmp_path / "m.ram"
    os.mkfifo(fifo)
    cli_error(run_cli("import", fifo, "-o", tmp_path / "o.blend", timeout=120), "FIFO")
    anim = tmp_path / "w.raa"
    os.mkfifo(anim)
    cli_error(run_cli("verify", RITE / "humanoid.ram", anim, timeout=120), "FIFO")
    cli_error(run_cli("export", fifo, "-o", tmp_path / "o.x", timeout=120), "FIFO")
    assert not (tmp_path / "o.blend").exists() and not (tmp_path / "o.x").exists()


def test_cli_bad_output_paths_are_one_line(tmp_path):
    a_file = tmp_path / "file"
    a_file.write_text("a regular file")
    folder = tmp_path / "folder"
    folder.mkdir()
    cli_error(run_cli("import", RITE / "humanoid.ram", "-o", folder), "will not replace a folder")
    cli_error(run_cli("import", RITE / "humanoid.ram", "-o", a_file / "x.blend"), "x.blend")
    cli_error(run_cli("verify", RITE / "humanoid.ram", "--blend", a_file / "x.blend"), "x.blend")
    fifo = tmp_path / "o.blend"
    os.mkfifo(fifo)
    cli_error(run_cli("import", RITE / "humanoid.ram", "-o", fifo), "will not replace a FIFO")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and a_file.read_text() == "a regular file"


@pytest.mark.parametrize("flag", [("--scale", "nan"), ("--tolerance", "nan"), ("--weights", "nan"),
                                  ("--scale", "inf"), ("--weights", "-1")])
def test_cli_bad_numbers_exit_2(flag):
    r = run_cli("verify", RITE / "humanoid.ram", RITE / "walk.raa", *flag)
    cli_error(r, pattern=re.escape(flag[0]) + "|weight")


def test_export_leaves_out_a_prop_scaled_to_zero_and_a_mesh_without_faces(bpy, tmp_path):
    """A prop scaled to zero on a bone (a singular transform every reader
    refuses) and a mesh of loose vertices and edges: the export finishes,
    leaving both out with a warning each, and the files read back."""
    from legacy_skin_io.io import formats

    bpy.ops.import_scene.rite(filepath=str(RITE / "humanoid.ram"))
    arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    me = bpy.data.meshes.new("prop")
    me.from_pydata([(0, 0, 0), (1, 0, 0), (0, 1, 0), (0, 0, 1)], [], [(0, 1, 2), (0, 1, 3)])
    prop = bpy.data.objects.new("prop", me)
    bpy.context.scene.collection.objects.link(prop)
    prop.parent, prop.parent_type, prop.parent_bone = arm, "BONE", arm.data.bones[0].name
    prop.scale = (0.0, 0.0, 0.0)
    pts = bpy.data.meshes.new("points")
    pts.from_pydata([(0, 0, 0), (1, 0, 0), (0, 1, 0)], [(0, 1)], [])
    obj = bpy.data.objects.new("points", pts)
    bpy.context.scene.collection.objects.link(obj)
    obj.parent = arm
    for op, name in ((bpy.ops.export_scene.xfile, "o.x"), (bpy.ops.export_scene.rite, "o.ram")):
        assert op(filepath=str(tmp_path / name)) == {"FINISHED"}
        back = formats.for_path(tmp_path / name).read_scene([str(tmp_path / name)], warnings=[])
        assert [len(m.face_sizes) for m in back.meshes] == [4224]
    r = ar.run("info", tmp_path / "o.x", timeout=120)
    assert r.returncode == 0, (r.stdout + r.stderr)[-1000:]


def _wide_ram(n: int, path) -> None:
    """n root joints, each skinning its own triangle with its own weight."""
    import numpy as np

    from legacy_skin_io.io.rite import RamModel, RiteJoint, write_ram

    k = np.arange(n) * 0.01
    pos = np.zeros((3 * n, 3))
    pos[0::3, 0], pos[1::3, 0], pos[2::3, 0], pos[2::3, 1] = k, k + 0.005, k, 0.01
    joints = [RiteJoint(f"j{i}", -1, [0, 0, 0, 1.0], [i * 0.01, 0, 0], [0, 0, 0, 1.0]) for i in range(n)]
    write_ram(RamModel(mesh_name="wide", joints=joints, positions=pos, tri_shader=np.zeros(n, dtype=np.int64),
                       tri_vertices=np.arange(3 * n).reshape(n, 3), weight_vertex=np.arange(3 * n),
                       weight_joint=np.repeat(np.arange(n), 3), weight_value=np.linspace(0.5, 1.0, 3 * n)), path)


def test_wide_skeleton_imports_each_weight_into_its_group(bpy, tmp_path):
    """300 root joints, one triangle each: every vertex lands in its own
    joint's group with the file's weight (the groups are looked up by a list
    fetched once)."""
    import numpy as np

    _wide_ram(300, tmp_path / "wide.ram")
    bpy.ops.import_scene.rite(filepath=str(tmp_path / "wide.ram"))
    mesh = next(o for o in bpy.data.objects if o.type == "MESH")
    names = [g.name for g in mesh.vertex_groups]
    got = [(v.index, names[g.group], g.weight) for v in mesh.data.vertices for g in v.groups]
    assert len(got) == 900
    want = np.linspace(0.5, 1.0, 900)
    for v, name, w in got:
        assert name == f"j{v // 3}" and abs(w - want[v]) < 1e-6


def test_an_import_over_the_joint_limit_is_refused_before_building(bpy, ext, tmp_path, monkeypatch):
    """More joints than an import builds (MAX_IMPORT_JOINTS, made small here):
    one line naming the limit and convert, the scene untouched."""
    validate = importlib.import_module(ext.__name__ + ".scene.validate")
    monkeypatch.setattr(validate, "MAX_IMPORT_JOINTS", 100)
    _wide_ram(101, tmp_path / "wide.ram")
    before = snapshot(bpy)
    text = _one_line_error(lambda: bpy.ops.import_scene.rite(filepath=str(tmp_path / "wide.ram")))
    assert "101 joints" in text and "100" in text and "convert" in text
    assert snapshot(bpy) == before
    _wide_ram(100, tmp_path / "ok.ram")
    assert bpy.ops.import_scene.rite(filepath=str(tmp_path / "ok.ram")) == {"FINISHED"}


def test_export_operators_long_names_are_one_line(bpy, tmp_path):
    """A 256-byte name, and a 252-byte RAM name whose RAA name would pass
    the 255-byte limit: one line each, nothing written; a 255-byte name is
    written."""
    bpy.ops.import_scene.rite(filepath=str(RITE / "humanoid.ram"))
    bpy.ops.import_anim.rite(filepath=str(RITE / "walk.raa"))
    assert "too long" in _one_line_error(lambda: bpy.ops.export_scene.xfile(
        filepath=str(tmp_path / ("a" * 254 + ".x"))))
    assert "too long" in _one_line_error(lambda: bpy.ops.export_scene.rite(
        filepath=str(tmp_path / ("b" * 248 + ".ram"))))
    assert list(tmp_path.iterdir()) == []
    assert bpy.ops.export_scene.xfile(filepath=str(tmp_path / ("c" * 253 + ".x"))) == {"FINISHED"}
    assert [len(p.name.encode()) for p in tmp_path.iterdir()] == [255]


def test_cli_failed_import_makes_no_folders(tmp_path):
    """A failed import makes none of its output's missing folders; a
    successful one makes them."""
    r = run_cli("import", tmp_path / "missing.ram", "-o", tmp_path / "new" / "deeper" / "o.blend")
    cli_error(r, "missing.ram")
    assert list(tmp_path.iterdir()) == []
    r = run_cli("import", RITE / "humanoid.ram", "-o", tmp_path / "new" / "o.blend")
    assert r.returncode == 0 and (tmp_path / "new" / "o.blend").is_file()


def test_export_of_a_pose_past_blenders_floats_is_one_line(bpy, tmp_path):
    """An armature scaled by 1e30: its sampled pose overflows float32; every
    export says so in one line (a LinAlgError "internal error" before)."""
    bpy.ops.import_scene.rite(filepath=str(RITE / "humanoid.ram"))
    bpy.ops.import_anim.rite(filepath=str(RITE / "walk.raa"))
    next(o for o in bpy.data.objects if o.type == "ARMATURE").scale = (1e30, 1e30, 1e30)
    for op, name in ((bpy.ops.export_scene.xfile, "o.x"), (bpy.ops.export_scene.rite, "o.ram"),
                     (bpy.ops.export_anim.rite, "o.raa")):
        text = _one_line_error(lambda op=op, name=name: op(filepath=str(tmp_path / name)))
        assert "overflows space" in text
    assert list(tmp_path.iterdir()) == []
