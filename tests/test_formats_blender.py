# SPDX-License-Identifier: GPL-3.0-or-later
"""What every registered format (io.formats.FORMATS) shares in Blender:
operators, FileHandlers (drag and drop onto the 3D viewport and the
Outliner), File > Import / Export menu entries drawn by this extension, and
imports that fail cleanly: a broken file raises an error naming the file and
where, and leaves bpy.data and the scene's frames exactly as they were; a
broken file among several is reported while the others are imported. Every
case is derived from the registry: each format's files are written by its
own writer, its broken file is one of them cut in half."""
from __future__ import annotations

import re
import shutil
import types
from pathlib import Path

import pytest
from blender_checks import imported, reference, snapshot, verify
from conftest import EXT_MODULE, SAMPLES  # noqa: E402

from legacy_skin_io.io.formats import FORMATS, by_id, for_path

#: the formats this extension has in Blender (one written only is left to Blender's own add-on)
IN_BLENDER = [f for f in FORMATS if not f.writes_only]
IDS = [f.id for f in IN_BLENDER]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """``files(fid)``: (a good model, its animation files) of a format: the
    bundled RiTE humanoid with walk.raa, written by the format's own writer
    (so every registered format has them, with nothing written per format)."""
    source = [SAMPLES / "rite" / "humanoid.ram", SAMPLES / "rite" / "walk.raa"]
    scene = for_path(source[0]).read_scene(source, warnings=[])
    cache: dict = {}

    def get(fid: str):
        if fid not in cache:
            f = by_id(fid)
            model = tmp_path_factory.mktemp(fid) / f"good{f.model_suffixes[0]}"
            written = [Path(p) for p in f.write_scene(scene, model, warnings=[])]
            cache[fid] = (written[0], [p for p in written[1:] if p.suffix.lower() in f.anim_suffixes])
        return cache[fid]

    return get


def _broken(good: Path, folder: Path) -> tuple[Path, str]:
    """(a broken model: the good one cut in half, the pattern of the file and
    where in it the error is: a line, or a byte offset in binary files)."""
    bad = folder / f"broken{good.suffix}"
    data = good.read_bytes()
    bad.write_bytes(data[:len(data) // 2])
    return bad, rf"{re.escape(bad.name)}(:\d+| \(byte offset \d+\))"


def _op(bpy, idname: str):
    mod, name = idname.split(".")
    return getattr(getattr(bpy.ops, mod), name)


def _registered(bpy, idname: str) -> bool:
    mod, name = idname.split(".")
    return hasattr(bpy.types, f"{mod.upper()}_OT_{name}")


class _Layout:
    """Records the operators a menu draw function puts in the layout."""

    def __init__(self):
        self.ops: list[str] = []

    def operator(self, idname, **_):
        self.ops.append(idname)
        return types.SimpleNamespace()

    def __getattr__(self, _name):
        return lambda *a, **k: self


def _drawn(bpy, menu: str) -> dict[str, list[str]]:
    """{module of each appended draw function: operators it draws} for a
    menu (Blender's own bl_ui draw is left out)."""
    out: dict[str, list[str]] = {}
    for f in getattr(bpy.types, menu)._dyn_ui_initialize():
        if f.__module__.startswith("bl_ui"):
            continue
        layout = _Layout()
        f(types.SimpleNamespace(layout=layout), bpy.context)
        out.setdefault(f.__module__, []).extend(layout.ops)
    return out


def _ours(drawn: dict[str, list[str]]) -> list[str]:
    return [op for mod, ops in drawn.items() if mod.startswith(EXT_MODULE + ".") for op in ops]


# ---------------------------------------------------------------------------
# registration

@pytest.mark.parametrize("fid", IDS)
def test_operators_and_file_handlers_exist(bpy, fid):
    fmt = next(f for f in FORMATS if f.id == fid)
    assert _registered(bpy, f"import_scene.{fid}") and _registered(bpy, f"export_scene.{fid}")
    assert _op(bpy, f"import_scene.{fid}").get_rna_type().name == f"Import {fmt.label}"
    assert _op(bpy, f"export_scene.{fid}").get_rna_type().name == f"Export {fmt.label}"
    fh = getattr(bpy.types, f"IO_FH_{fid}")
    assert fh.bl_import_operator == f"import_scene.{fid}"
    assert fh.bl_export_operator == f"export_scene.{fid}"
    exts = set(fh.bl_file_extensions.split(";"))
    assert {s for suffix in fmt.model_suffixes for s in (suffix, suffix.upper())} <= exts
    assert not exts & set(fmt.anim_suffixes)
    # animations onto an existing armature: from animation files, or from model files (.x by bone name)
    assert _registered(bpy, f"import_anim.{fid}") == bool(fmt.animation_files)
    if fmt.animation_files:
        assert _op(bpy, f"import_anim.{fid}").get_rna_type().name == f"Import {fmt.anim_label}"
    if fmt.anim_suffixes:
        assert _registered(bpy, f"export_anim.{fid}")
        assert _op(bpy, f"export_anim.{fid}").get_rna_type().name == f"Export {fmt.anim_label}"
        afh = getattr(bpy.types, f"IO_FH_{fid}_anim")
        assert afh.bl_import_operator == f"import_anim.{fid}"
        assert {s for suffix in fmt.anim_suffixes for s in (suffix, suffix.upper())} <= \
            set(afh.bl_file_extensions.split(";"))
    else:
        assert not _registered(bpy, f"export_anim.{fid}")
        assert not hasattr(bpy.types, f"IO_FH_{fid}_anim")
    # the import operator has the shared options
    props = {p.identifier for p in _op(bpy, f"import_scene.{fid}").get_rna_type().properties}
    assert {"global_scale", "axis_forward", "axis_up", "bone_direction", "every_joint_bone", "rest_from",
            "import_animations", "key_every_frame", "set_frame_range", "pack_images", "files", "directory"} <= props


@pytest.mark.parametrize("fid", IDS)
def test_file_handlers_accept_the_viewport_and_the_outliner(bpy, fid):
    fmt = next(f for f in FORMATS if f.id == fid)
    handlers = [getattr(bpy.types, f"IO_FH_{fid}")] + ([getattr(bpy.types, f"IO_FH_{fid}_anim")]
                                                        if fmt.anim_suffixes else [])
    window = bpy.context.window_manager.windows[0]
    areas = {a.type: a for a in window.screen.areas}
    assert {"VIEW_3D", "OUTLINER", "PROPERTIES"} <= set(areas)
    for fh in handlers:
        for kind, accepted in (("VIEW_3D", True), ("OUTLINER", True), ("PROPERTIES", False)):
            with bpy.context.temp_override(window=window, area=areas[kind]):
                assert bool(fh.poll_drop(bpy.context)) == accepted, (fh.__name__, kind)


@pytest.mark.parametrize("fid", IDS)
def test_file_menus_hold_each_format(bpy, fid):
    """This extension's own draw functions put the format's operators in
    File > Import and File > Export (another add-on's menu function, such
    as io_anim_bvh's menu_func_import, does not count)."""
    fmt = next(f for f in FORMATS if f.id == fid)
    imports = _ours(_drawn(bpy, "TOPBAR_MT_file_import"))
    exports = _ours(_drawn(bpy, "TOPBAR_MT_file_export"))
    assert f"import_scene.{fid}" in imports
    assert (f"import_anim.{fid}" in imports) == bool(fmt.animation_files)
    assert f"export_scene.{fid}" in exports
    assert (f"export_anim.{fid}" in exports) == bool(fmt.anim_suffixes)
    assert all(_registered(bpy, op) for op in imports + exports)    # every entry it draws exists


def test_disabling_the_extension_removes_its_menus_operators_and_handlers(bpy):
    """The checks above see the extension itself: disabled, its menu entries,
    operators and FileHandlers are gone (io_anim_bvh etc. still draw theirs)."""
    try:
        assert bpy.ops.preferences.addon_disable(module=EXT_MODULE) == {"FINISHED"}
        imports = _drawn(bpy, "TOPBAR_MT_file_import")
        assert any(imports.values())                      # other importers are still there
        every = [op for ops in imports.values() for op in ops] + \
            [op for ops in _drawn(bpy, "TOPBAR_MT_file_export").values() for op in ops]
        for f in IN_BLENDER:
            assert f"import_scene.{f.id}" not in every and f"export_scene.{f.id}" not in every
            assert not _registered(bpy, f"import_scene.{f.id}")
            assert not hasattr(bpy.types, f"IO_FH_{f.id}")
    finally:
        assert bpy.ops.preferences.addon_enable(module=EXT_MODULE) == {"FINISHED"}
    assert all(f"import_scene.{f.id}" in _ours(_drawn(bpy, "TOPBAR_MT_file_import")) for f in IN_BLENDER)
    assert all(hasattr(bpy.types, f"IO_FH_{f.id}") for f in IN_BLENDER)


@pytest.mark.parametrize("fid", [f.id for f in FORMATS if f.writes_only])
def test_a_format_written_only_is_left_to_blenders_own_add_on(bpy, fid):
    """glTF: no operator, FileHandler or menu entry of this extension;
    Blender's own glTF add-on keeps its operators (a name this extension
    would otherwise have taken)."""
    ours = _ours(_drawn(bpy, "TOPBAR_MT_file_import")) + _ours(_drawn(bpy, "TOPBAR_MT_file_export"))
    assert not any(op.endswith(f".{fid}") for op in ours)
    assert not hasattr(bpy.types, f"IO_FH_{fid}")
    for kind in ("IMPORT_SCENE", "EXPORT_SCENE"):
        cls = getattr(bpy.types, f"{kind}_OT_{fid}", None)
        assert cls is None or not cls.__module__.startswith(EXT_MODULE), cls.__module__


# ---------------------------------------------------------------------------
# failed imports

@pytest.mark.parametrize("fid", IDS)
def test_failed_import_leaves_the_scene_untouched(bpy, tmp_path, files, fid):
    good, anims = files(fid)
    # a scene with something in it: a model, actions, a frame range of its own
    assert _op(bpy, f"import_scene.{fid}")(filepath=str(good)) == {"FINISHED"}
    for a in anims:
        assert _op(bpy, f"import_anim.{fid}")(filepath=str(a)) == {"FINISHED"}
    assert bpy.data.actions and bpy.data.objects and bpy.data.materials
    sc = bpy.context.scene
    sc.frame_start, sc.frame_end, sc.frame_current = 7, 93, 42
    before = snapshot(bpy)
    bad, where = _broken(good, tmp_path)
    with pytest.raises(RuntimeError, match=where) as err:
        _op(bpy, f"import_scene.{fid}")(filepath=str(bad))
    assert "Traceback" not in str(err.value)
    assert snapshot(bpy) == before
    assert (sc.frame_start, sc.frame_end, sc.frame_current) == (7, 93, 42)


@pytest.mark.parametrize("fid", IDS)
def test_one_broken_file_among_several(bpy, tmp_path, capfd, files, fid):
    """The good files are imported (and deform as the oracle says), the
    operator finishes and reports the broken one."""
    good, _ = files(fid)
    shutil.copy(good, tmp_path / good.name)
    bad, where = _broken(good, tmp_path)
    res = _op(bpy, f"import_scene.{fid}")(directory=str(tmp_path), import_animations=False,
                                          files=[{"name": bad.name}, {"name": good.name}])
    assert res == {"FINISHED"}
    out = capfd.readouterr().out
    assert re.search(where, out), out[-2000:]
    arm, meshes = imported(bpy)
    ref = reference(fid, [good])
    assert sorted(meshes) == list(range(len(ref.meshes)))
    assert (arm is not None) == (ref.skeleton is not None)
    rep = verify(bpy, meshes, ref, None, [0])
    assert rep.ok, rep.table()
