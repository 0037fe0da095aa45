# SPDX-License-Identifier: GPL-3.0-or-later
"""File > Import and the command line's import are one set of options
(io/import_options.py): every option the import operators show (model and
animation, every format) is a flag of ``import``, and an import with every
option at a value other than its default gives the same scene through
both. The Blender side of test_import_options.py."""
from __future__ import annotations

import shutil

import numpy as np
import pytest
from blender_checks import ext
from conftest import DATA, SAMPLES

RITE = SAMPLES / "rite"
X = DATA / "x" / "directx-sdk"
#: File > Import's machinery, not options the user sets
NOT_OPTIONS = {"rna_type", "filepath", "files", "directory", "filter_glob", "check_existing"}


def _visible(bpy, idname: str) -> dict:
    mod, name = idname.split(".")
    props = getattr(getattr(bpy.ops, mod), name).get_rna_type().properties
    return {p.identifier: p for p in props if not p.is_hidden and p.identifier not in NOT_OPTIONS}


def test_every_import_operator_option_is_a_flag(bpy):
    """Walk the registered operators' properties: each is a spec with a
    flag of ``import`` (the shared ones from io/import_options.py, the
    format's own from its options.py), at the same default."""
    import_options, formats, cli = ext("io.import_options"), ext("io.formats"), ext("cli")
    sub = next(a for a in cli.build_parser()._actions if a.dest == "cmd").choices["import"]
    flags = {s for a in sub._actions for s in a.option_strings}
    help_text = " ".join(sub.format_help().split())
    seen = 0
    for f in formats.FORMATS:
        if f.writes_only:
            continue
        ops = [(f"import_scene.{f.id}", import_options.MODEL, f.import_options)]
        if f.animation_files:
            ops.append((f"import_anim.{f.id}", import_options.ANIM, f.anim_import_options))
        for idname, shared, own in ops:
            specs = {s.id: s for s in import_options.for_format(shared, f) + tuple(own)}
            props = _visible(bpy, idname)
            assert set(props) == set(specs), idname
            for pid, prop in props.items():
                spec = specs[pid]
                assert spec.cli_flags[0] in flags and spec.cli_flags[0] in help_text, (idname, pid)
                default = prop.default if prop.type != "FLOAT" else pytest.approx(prop.default)
                assert default == spec.default, (idname, pid)
                seen += 1
    assert seen >= 30


#: every shared option at a value other than its default (the RiTE import operators' defaults:
#: Manual Orientation is on, so Forward/Up apply)
MODEL = {"global_scale": 2.0, "axis_forward": "X", "axis_up": "Z", "bone_direction": "FILE",
         "every_joint_bone": True, "rest_from": "DEFAULT", "import_animations": False, "key_every_frame": False,
         "set_frame_range": False, "pack_images": True}
ANIM = {"playback": "MERGEABLE", "weight": 0.25, "key_every_frame": False, "set_frame_range": False}
FLAGS = ["--scale", "2", "--forward", "X", "--up", "Z", "--bone-direction", "FILE", "--every-joint-bone",
         "--rest-from", "DEFAULT", "--no-animations", "--no-key-every-frame", "--no-set-frame-range",
         "--pack-images", "--playback", "MERGEABLE", "--weight", "0.25"]


def _state(bpy) -> dict:
    """What an import made, as plain values: bones (rest matrices), meshes
    (evaluated positions at a few frames), actions (keys, and the playback,
    weight and keying the import recorded) and NLA tracks, the scene's
    frame range, the packed images."""
    arm = next(o for o in bpy.context.scene.objects if o.type == "ARMATURE")
    bones = {b.name: (np.array(b.matrix_local), b.use_connect, b.parent.name if b.parent else None)
             for b in arm.data.bones}
    tracks = [(t.name, [(s.name, s.blend_type, round(s.influence, 6), s.action.name if s.action else None)
                        for s in t.strips]) for t in arm.animation_data.nla_tracks] if arm.animation_data else []
    md = ext("operators.metadata")
    clip = {a.name: md.load(a, md.CLIP_KEY) or {} for a in bpy.data.actions}
    actions = {a.name: (sum(len(fc.keyframe_points) for bag in _bags(a) for fc in bag.fcurves),
                        clip[a.name].get("playback"), clip[a.name].get("weight"), clip[a.name].get("baked"))
               for a in bpy.data.actions}
    points = {}
    sc = bpy.context.scene
    for frame in (0, 7, 19):
        sc.frame_set(frame)
        dg = bpy.context.evaluated_depsgraph_get()
        for o in sc.objects:
            if o.type == "MESH":
                me = o.evaluated_get(dg).to_mesh()
                co = np.zeros(len(me.vertices) * 3)
                me.vertices.foreach_get("co", co)
                points[(o.name, frame)] = np.array(o.matrix_world) @ np.c_[co.reshape(-1, 3), np.ones(len(co) // 3)].T
                o.evaluated_get(dg).to_mesh_clear()
    return {"bones": bones, "tracks": tracks, "actions": actions, "points": points,
            "range": (sc.frame_start, sc.frame_end), "active": arm.animation_data.action.name
            if arm.animation_data and arm.animation_data.action else None,
            "packed": sorted(i.name for i in bpy.data.images if i.packed_file)}


def _bags(action):
    for layer in action.layers:
        for strip in layer.strips:
            yield from strip.channelbags


def _same(a: dict, b: dict) -> None:
    assert a["bones"].keys() == b["bones"].keys()
    for name, (m, connect, parent) in a["bones"].items():
        assert np.allclose(m, b["bones"][name][0], atol=1e-6) and (connect, parent) == b["bones"][name][1:], name
    for key in ("tracks", "actions", "range", "active", "packed"):
        assert a[key] == b[key], key
    assert a["points"].keys() == b["points"].keys() and a["points"]
    for key, p in a["points"].items():
        assert np.allclose(p, b["points"][key], atol=1e-6), key


@pytest.mark.parametrize("fid,model,anim,own", [
    ("rite", RITE / "humanoid.ram", RITE / "walk.raa", {}),
    # .X decides up from the data unless Manual Orientation is on (on the command line, --forward/--up say so)
    ("xfile", X / "tiny_4anim.x", X / "tiny_4anim.x", {"manual_orientation": True}),
], ids=["rite", "xfile"])
def test_every_option_changed_gives_the_same_scene_from_file_import_and_the_command_line(bpy, tmp_path, fid, model,
                                                                                          anim, own):
    import_options = ext("io.import_options")
    fmt = ext("io.formats").by_id(fid)
    if fid == "xfile":      # a texture that is there, for Pack Images
        text = model.read_text(encoding="latin-1").replace("tiny\\\\Tiny_skin.dds", "wall.png")
        model = anim = tmp_path / model.name
        model.write_text(text, encoding="latin-1")
        shutil.copyfile(DATA / "x" / "crafted" / "wall.png", tmp_path / "wall.png")
    # every shared option, each away from its default for the format (Forward/Up too)
    assert set(MODEL) == {s.id for s in import_options.MODEL}
    assert set(ANIM) == {s.id for s in import_options.ANIM}
    for values, specs in ((MODEL, import_options.MODEL), (ANIM, import_options.ANIM)):
        for spec in import_options.for_format(specs, fmt):
            assert values[spec.id] != spec.default, spec.id
    assert getattr(bpy.ops.import_scene, fid)(filepath=str(model), **MODEL, **own) == {"FINISHED"}
    assert getattr(bpy.ops.import_anim, fid)(filepath=str(anim), **ANIM) == {"FINISHED"}
    by_operators = _state(bpy)
    assert by_operators["tracks"] and by_operators["active"] is None           # a mergeable layer, not the action
    assert by_operators["range"] == (1, 250)                                    # the scene's own, not the clip's
    assert bool(by_operators["packed"]) == (fid == "xfile")                     # the texture, packed
    blend = tmp_path / "cli.blend"
    assert ext("cli").main(["import", str(model), str(anim), "-o", str(blend), *FLAGS]) == 0
    bpy.ops.wm.open_mainfile(filepath=str(blend))
    _same(by_operators, _state(bpy))
    # and the defaults differ: the options were not ignored on both sides
    bpy.ops.wm.read_homefile(use_empty=True)
    assert ext("cli").main(["import", str(model), str(anim), "-o", str(tmp_path / "d.blend")]) == 0
    bpy.ops.wm.open_mainfile(filepath=str(tmp_path / "d.blend"))
    defaults = _state(bpy)
    assert defaults["active"] is not None and defaults["range"] != (1, 250)
    with pytest.raises(AssertionError):
        _same(by_operators, defaults)
