# SPDX-License-Identifier: GPL-3.0-or-later
"""The shared import options come from one spec list (io/import_options.py):
the builder's ImportOptions has exactly the model options' fields at the
specs' defaults, the command line's import and verify list a flag for each
(the renamed ones' old spellings still work, unlisted), a format's
defaults reach both, and a format's default axes are its adapter's. Without
Blender (the operators: test_import_options_blender.py)."""
from __future__ import annotations

import dataclasses

import pytest
import toy_rig

from legacy_skin_io import cli
from legacy_skin_io.io import formats, import_options
from legacy_skin_io.io.import_options import ImportOptions
from legacy_skin_io.io.options import OptionError


@pytest.fixture
def toy():
    fmt = formats.register(toy_rig.format_line(formats), package=toy_rig.mount("legacy_skin_io"))
    yield fmt
    formats.unregister(fmt.id)


def _sub(name: str):
    return next(a for a in cli.build_parser()._actions if a.dest == "cmd").choices[name]


def _flags(name: str) -> set[str]:
    return {s for a in _sub(name)._actions for s in a.option_strings}


def test_the_builders_options_are_the_model_specs():
    fields = {f.name: f.default for f in dataclasses.fields(ImportOptions)}
    assert set(fields) - {"self_check"} == {s.id for s in import_options.MODEL} - set(import_options.AXIS_IDS)
    for spec in import_options.MODEL:
        if spec.id in fields:
            assert fields[spec.id] == spec.default, spec.id


@pytest.mark.parametrize("command", ["import", "verify"])
def test_help_lists_a_flag_for_every_import_option(toy, command):
    """Every option of File > Import (the shared ones of the model and the
    animation operators, and every format's own) is a flag --help lists."""
    text = " ".join(_sub(command).format_help().split())
    specs = list(import_options.MODEL + import_options.ANIM)
    for f in formats.FORMATS:
        specs += f.import_options + f.anim_import_options
    assert len(specs) > 15
    for spec in specs:
        assert spec.cli_flags[0] in text, spec.id
        assert set(spec.cli_flags) <= _flags(command)
    # the renamed flags still parse, but --help lists them only in the new flag's text
    usage = text.split("positional arguments")[0]
    for old in ("--all-joints", "--bake", "--keys-only"):
        assert old in _flags(command) and old not in usage and text.count(old) == 1, old
    assert "formerly --all-joints" in text and "formerly --bake and --keys-only for --no-key-every-frame" in text


def _parse(*argv):
    return cli.build_parser().parse_args(["import", "m.ram", "-o", "o.blend", *argv])


def test_old_spellings_give_the_new_options():
    rite = formats.by_id("rite")
    assert import_options.chosen(rite, _parse("--all-joints"))[0].every_joint_bone is True
    assert import_options.chosen(rite, _parse("--keys-only"))[0].key_every_frame is False
    assert import_options.chosen(rite, _parse("--no-key-every-frame", "--bake"))[0].key_every_frame is True
    opts, given = import_options.chosen(rite, _parse())
    assert opts == ImportOptions() and given == {}
    opts, given = import_options.chosen(rite, _parse(
        "--scale", "2", "--forward", "x", "--up", "Z", "--bone-direction", "file", "--every-joint-bone",
        "--rest-from", "DEFAULT", "--no-animations", "--no-key-every-frame", "--no-set-frame-range",
        "--pack-images", "--playback", "mergeable", "--weight", "0.25"))
    assert opts == ImportOptions(bone_direction="FILE", every_joint_bone=True, rest_from="DEFAULT",
                                 import_animations=False, key_every_frame=False, set_frame_range=False,
                                 pack_images=True)
    assert given == {"global_scale": 2.0, "axis_forward": "X", "axis_up": "Z", "playback": "MERGEABLE",
                     "weight": 0.25}
    with pytest.raises(OptionError, match=r"^--forward: 'Q' is not one of X, Y, Z, -X, -Y, -Z$"):
        import_options.chosen(rite, _parse("--forward", "Q"))
    with pytest.raises(OptionError, match=r"^--weight must be at most 1, not 2$"):
        import_options.chosen(rite, _parse("--weight", "2"))


def test_a_formats_defaults_reach_the_builder_and_the_help(toy):
    """The toy format keys its files' keys by default (its IMPORT_DEFAULTS)
    and is Z-up (its adapter's default_axes()): the command line's options
    for a toy file say so, and --help names both formats' defaults."""
    assert import_options.chosen(toy, _parse())[0].key_every_frame is False
    assert import_options.chosen(formats.by_id("rite"), _parse())[0].key_every_frame is True
    assert ImportOptions.of({}, toy).key_every_frame is False
    text = " ".join(_sub("import").format_help().split())
    assert "default RiTE Model -Z, DirectX -Z, Toy Rig X)" in text           # --forward
    assert "default RiTE Model Y, DirectX Y, Toy Rig Z)" in text             # --up


def test_default_axes_come_from_the_adapter(toy):
    """One declaration, the adapter's default_axes(): the registry's
    Forward/Up and axes() without arguments give it back, for a left-handed
    format too."""
    assert toy.default_forward_up == ("X", "Z")
    for f in formats.FORMATS:
        assert f.axes() == f.default_axes() == f.adapter.default_axes(), f.id
        assert f.axes(*f.default_forward_up, 2.0) == f.adapter.default_axes(2.0), f.id
        assert f.axes().mirrors == f.left_handed
        if not f.writes_only:
            import_options.check_defaults(f)
    assert formats.by_id("xfile").default_forward_up == ("-Z", "Y")


def test_import_defaults_are_checked_with_a_clear_error(toy, monkeypatch):
    """Axes declared in IMPORT_DEFAULTS, an unknown option or a bad value:
    registering the format is a ValueError naming it and the key (axes in
    IMPORT_DEFAULTS were a StopIteration in the operators' registration)."""
    defaults = toy.options.IMPORT_DEFAULTS

    def register():
        return formats.register(formats.Format("toy2", "Toy 2", (".toy2",)), package=toy.package)

    for key, value, message in (("axis_up", "Z", r"'toy2'.*IMPORT_DEFAULTS\['axis_up'\].*default_axes\(\)"),
                                ("bake", True, r"'toy2'.*IMPORT_DEFAULTS names 'bake'"),
                                ("bone_direction", "UP", r"'toy2'.*IMPORT_DEFAULTS\['bone_direction'\].*'UP'")):
        monkeypatch.setitem(defaults, key, value)
        with pytest.raises(ValueError, match=message):
            register()
        monkeypatch.undo()
        assert "toy2" not in {f.id for f in formats.FORMATS}
    assert register().default_forward_up == ("X", "Z")
    formats.unregister("toy2")


def test_export_bake_pose_keeps_its_old_spellings():
    """Export's Bake Pose is --bake-pose/--no-bake-pose; --bake/--no-bake
    still work, unlisted, and .X's --format still names the storage."""
    from legacy_skin_io.io import export_options
    from legacy_skin_io.io.options import given

    def parse(*argv):
        return given(cli.build_parser().parse_args(["export", "a.blend", "-o", "b.x", *argv]), export_options.OPTIONS)

    assert parse("--no-bake") == {"bake_pose": False} == parse("--no-bake-pose")
    assert parse("--bake") == {"bake_pose": True} == parse("--bake-pose")
    usage = " ".join(_sub("export").format_help().split()).split("positional arguments")[0]
    assert "--bake-pose" in usage and "--bake " not in usage and "--no-bake " not in usage and "--format" not in usage
    storage = formats.by_id("xfile").options.STORAGE
    args = cli.build_parser().parse_args(["export", "a.blend", "-o", "b.x", "--format", "binary"])
    assert given(args, (storage,)) == {"storage": "binary"}


@pytest.mark.parametrize("forward", ["-Z", "X", "Y", "-X"])
def test_forward_and_up_tooltips_name_where_the_axes_go(forward):
    """The file's Forward axis becomes the Blender axis Forward's description
    names, and Up the one Up's names (the Forward tooltip once said -Y,
    where the conversion puts it at +Y)."""
    import numpy as np

    from legacy_skin_io.scene import AxisConversion

    up = "Z" if forward.lstrip("-") != "Z" else "Y"
    conv = AxisConversion.from_axes(forward, up, 1.0)
    unit = {"X": [1.0, 0, 0], "Y": [0, 1.0, 0], "Z": [0, 0, 1.0]}

    def blender_axis(axis: str) -> str:
        v = np.asarray(conv.C) @ (np.array(unit[axis.lstrip("-")]) * (-1 if axis.startswith("-") else 1))
        i = int(np.argmax(np.abs(v)))
        return ("+" if v[i] > 0 else "-") + "XYZ"[i]

    assert blender_axis(forward) == "+Y"
    assert blender_axis(up) == "+Z"
    assert "Blender's forward, +Y" in import_options.FORWARD.description
    assert "Blender's Z" in import_options.UP.description
