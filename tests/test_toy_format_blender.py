# SPDX-License-Identifier: GPL-3.0-or-later
"""A third format is one package and one registration line: the toy JSON
rig format (tests/toy_rig), registered at run time in the installed
extension, reaches everything a user reaches: the File menu operators
(import, animation import, export, animation export) with its own options,
FileHandlers, the command line (import, verify, export) and convert (toy ->
.x, .x -> toy). Nothing outside tests/ knows it. Expected values come from
the files read by the format's reader and evaluated by the oracle."""
from __future__ import annotations

import json
import types

import numpy as np
import pytest
import toy_rig
from blender_checks import ext, imported, verify
from conftest import DATA, EXT_MODULE, SAMPLES  # noqa: E402

RITE = [SAMPLES / "rite" / "humanoid.ram", SAMPLES / "rite" / "walk.raa"]
FPS = 24.0


@pytest.fixture
def ev(bpy_ext):
    """The installed extension's oracle (its Clip class is the one the toy format's clips are)."""
    return ext("scene.evaluate")


@pytest.fixture
def toy(bpy):
    formats = ext("io.formats")
    fmt = formats.register(toy_rig.format_line(formats), package=toy_rig.mount(EXT_MODULE))
    try:
        yield fmt
    finally:
        formats.unregister(fmt.id)


@pytest.fixture
def toy_files(toy, tmp_path):
    """humanoid.ram and walk.raa as a toy rig and a toy animation, written by
    ``convert`` (RiTE -> toy)."""
    assert ext("cli").main(["convert", *map(str, RITE), "-o", str(tmp_path / "h.toyrig")]) == 0
    return tmp_path / "h.toyrig", tmp_path / "h_0.toyanim"


def _menu_ops(bpy, menu: str) -> list[str]:
    out: list[str] = []
    layout = types.SimpleNamespace(operator=lambda idname, **_: out.append(idname))
    for f in getattr(bpy.types, menu)._dyn_ui_initialize():
        if f.__module__.startswith(EXT_MODULE + "."):
            f(types.SimpleNamespace(layout=layout), bpy.context)
    return out


def _props(bpy, idname: str) -> dict:
    mod, name = idname.split(".")
    return {p.identifier: p for p in getattr(getattr(bpy.ops, mod), name).get_rna_type().properties}


def test_operators_menus_and_handlers_follow_the_registry(bpy, toy):
    ops = ["import_scene.toy", "import_anim.toy", "export_scene.toy", "export_anim.toy"]
    for idname in ops:
        mod, name = idname.split(".")
        assert hasattr(bpy.types, f"{mod.upper()}_OT_{name}"), idname
    assert bpy.types.IO_FH_toy.bl_file_extensions.split(";") == [".toyrig", ".TOYRIG"]
    assert bpy.types.IO_FH_toy_anim.bl_import_operator == "import_anim.toy"
    assert {"import_scene.toy", "import_anim.toy"} <= set(_menu_ops(bpy, "TOPBAR_MT_file_import"))
    assert {"export_scene.toy", "export_anim.toy"} <= set(_menu_ops(bpy, "TOPBAR_MT_file_export"))
    # the format's own options, from its options.py
    assert _props(bpy, "import_scene.toy")["speed"].default == 1.0
    assert _props(bpy, "import_anim.toy")["speed"].default == 1.0
    layout = _props(bpy, "export_scene.toy")["layout"]
    assert layout.default == "AUTO" and [i.identifier for i in layout.enum_items] == ["AUTO", "COMPACT", "INDENTED"]
    assert "ticks_per_second" not in _props(bpy, "import_scene.toy")       # another format's option
    # unregistered: gone from Blender as well
    ext("io.formats").unregister("toy")
    assert not any(hasattr(bpy.types, n) for n in ("IMPORT_SCENE_OT_toy", "EXPORT_ANIM_OT_toy", "IO_FH_toy"))
    assert "import_scene.toy" not in _menu_ops(bpy, "TOPBAR_MT_file_import")
    assert hasattr(bpy.types, "IMPORT_SCENE_OT_rite")


def test_file_menu_operators(bpy, toy, toy_files, tmp_path, ev):
    rig, anim = toy_files
    assert bpy.ops.import_scene.toy(filepath=str(rig)) == {"FINISHED"}
    arm, meshes = imported(bpy)
    ref = toy.read_scene([rig])
    assert arm is not None and len(meshes) == len(ref.meshes) == 1
    assert verify(bpy, meshes, ref, None, [0.0]).ok
    # the animation at twice the speed: the option reaches the animation reader
    assert bpy.ops.import_anim.toy(filepath=str(anim), speed=2.0) == {"FINISHED"}
    fast = toy.read_scene([rig, anim], speed=2.0)
    clip = fast.clips[0]
    assert clip.frame_range(FPS) == (0.0, 16.5)
    assert arm.animation_data.action.frame_range[1] <= 17.0
    rep = verify(bpy, meshes, fast, clip, np.arange(0.0, 17.0))
    assert rep.ok, rep.table()
    # export: the model and its animation beside it, with the format's layout option
    out = tmp_path / "out" / "rig.toyrig"
    out.parent.mkdir()
    assert bpy.ops.export_scene.toy(filepath=str(out), layout="INDENTED") == {"FINISHED"}
    anims = sorted(out.parent.glob("rig_*.toyanim"))
    assert len(anims) == 1 and out.read_text().count("\n") > 100
    back = toy.read_scene([out, *anims])
    frames = np.arange(0.0, 17.0)
    diff = np.array(ev.evaluate(back, back.clips[0], frames, FPS)) - np.array(ev.evaluate(fast, clip, frames, FPS))
    assert np.abs(diff).max() < 1e-5 * ev.size(fast)
    # the active action alone
    single = tmp_path / "out" / "walk.toyanim"
    assert bpy.ops.export_anim.toy(filepath=str(single)) == {"FINISHED"}
    again = toy.read_clips(back.skeleton, back.source.axes, [single])[0]
    diff = np.array(ev.evaluate(back, again, frames, FPS)) - np.array(ev.evaluate(fast, clip, frames, FPS))
    assert np.abs(diff).max() < 1e-5 * ev.size(fast)


def _rows(out: str) -> int:
    return sum(1 for ln in out.splitlines() if ln.strip() and ln.split()[0].lstrip("-").isdigit()
               and len(ln.split()) == 3)


def test_command_line_and_convert(bpy, toy, toy_files, tmp_path, capsys, ev):
    cli = ext("cli")
    rig, anim = toy_files
    # verify: Blender's import (model, then the animation onto it) against the oracle, at twice the speed
    capsys.readouterr()
    assert cli.main(["verify", str(rig), str(anim), "--speed", "2", "--frames"]) == 0
    out = capsys.readouterr().out
    assert "PASS" in out and _rows(out) == 18, out[-2000:]          # frames 0-17, not 0-33
    assert "'walk': frames 0-17: 18 frames checked, worst frame " in out
    # import to a .blend, export it back with the format's option
    blend = tmp_path / "h.blend"
    assert cli.main(["import", str(rig), str(anim), "-o", str(blend)]) == 0
    assert cli.main(["export", str(blend), "-o", str(tmp_path / "e.toyrig"), "--animations",
                     "--layout", "compact"]) == 0
    assert (tmp_path / "e.toyrig").read_text().count("\n") == 1
    exported = ext("io.formats").by_id("toy").read_scene([tmp_path / "e.toyrig", tmp_path / "e_0.toyanim"])
    ref = toy.read_scene([rig, anim])
    frames = np.arange(0.0, 33.0)
    diff = np.array(ev.evaluate(exported, exported.clips[0], frames, FPS)) - \
        np.array(ev.evaluate(ref, ref.clips[0], frames, FPS))
    assert np.abs(diff).max() < 1e-5 * ev.size(ref)
    # convert toy -> .x (the toy's import option on the way), then Blender plays that .x as the oracle says
    x = tmp_path / "h.x"
    assert cli.main(["convert", str(rig), str(anim), "-o", str(x), "--input-speed", "2",
                     "--ticks-per-second", "4800"]) == 0
    capsys.readouterr()
    assert cli.main(["verify", str(x), "-v"]) == 0
    out = capsys.readouterr().out
    assert "PASS" in out and _rows(out) == 18, out[-2000:]
    # convert .x -> toy, and Blender plays that toy rig as the oracle says
    assert cli.main(["convert", str(DATA / "x" / "assimp" / "anim_test.x"), "-o", str(tmp_path / "a.toyrig")]) == 0
    assert json.loads((tmp_path / "a.toyrig").read_text())["format"] == "toy-rig"
    capsys.readouterr()
    assert cli.main(["verify", str(tmp_path / "a.toyrig"), str(tmp_path / "a_0.toyanim")]) == 0
    assert "PASS" in capsys.readouterr().out


def _stands(bpy, arm) -> None:
    """The head above the feet in Blender's world (Z up), by more than half
    the rig's height: the figure stands, not lies or hangs."""
    bpy.context.view_layer.update()
    world = {b.name: np.array(arm.matrix_world @ b.head) for b in arm.pose.bones}
    head, feet = world["Head"], [world["LeftFoot"], world["RightFoot"]]
    height = max(p[2] for p in world.values()) - min(p[2] for p in world.values())
    span = np.ptp(np.array(list(world.values())), axis=0)
    assert all(head[2] - f[2] > 0.5 * span.max() for f in feet), (head, feet, span)
    assert height == pytest.approx(span[2])


def test_a_z_up_format_stands_with_its_defaults(bpy, toy, toy_files, tmp_path):
    """The toy format's files are Z-up (its adapter's default_axes(), the
    one declaration): the file keeps the figure's height along its z, and
    imported with every option at its default through File > Import and
    through the command line, Blender shows it standing (read with the
    operators' former fixed -Z/Y, it lay on its back)."""
    rig, _ = toy_files
    doc = json.loads(rig.read_text())
    by_name = {j["name"]: j for j in doc["joints"]}
    assert toy.default_forward_up == ("X", "Z")
    assert by_name["Hips"]["translation"][2] > abs(by_name["Hips"]["translation"][1])     # the hips: up is z
    assert bpy.ops.import_scene.toy(filepath=str(rig)) == {"FINISHED"}
    arm, _ = imported(bpy)
    _stands(bpy, arm)
    blend = tmp_path / "z.blend"
    assert ext("cli").main(["import", str(rig), "-o", str(blend)]) == 0
    bpy.ops.wm.open_mainfile(filepath=str(blend))
    arm, _ = imported(bpy)
    _stands(bpy, arm)
