# SPDX-License-Identifier: GPL-3.0-or-later
"""The format registry (io/formats.py) is the one place that knows the
formats: no code outside io/ names one, every adapter takes exactly its
format's option specs and rejects others, the command line and ``convert``
offer every option of every registered format (one added at run time too:
the toy format of tests/toy_rig), and warnings go through one capped
channel. Without Blender (the Blender side: test_toy_format_blender.py)."""
from __future__ import annotations

import argparse
import inspect
import json
import re
import tomllib
from pathlib import Path

import numpy as np
import pytest
import toy_rig
from conftest import DATA, ROOT, SAMPLES

from legacy_skin_io import cli
from legacy_skin_io.io import formats
from legacy_skin_io.io.errors import Warnings
from legacy_skin_io.io.options import MANUAL_ORIENTATION, Option, OptionError, add_flags, given
from legacy_skin_io.io.xfile import read_xfile
from legacy_skin_io.scene import evaluate as ev

RITE = [SAMPLES / "rite" / "humanoid.ram", SAMPLES / "rite" / "walk.raa"]
ANIM_X = DATA / "x" / "assimp" / "anim_test.x"


@pytest.fixture
def toy():
    """The toy format, registered at run time (and removed after the test)."""
    fmt = formats.register(toy_rig.format_line(formats), package=toy_rig.mount("legacy_skin_io"))
    yield fmt
    formats.unregister(fmt.id)


def _production_files() -> list[Path]:
    """The extension's code outside io/ (what ships in the zip)."""
    out = [p for p in ROOT.glob("*.py")]
    for sub in ("operators", "scene", "core"):
        out += sorted((ROOT / sub).rglob("*.py"))
    return out


# ---------------------------------------------------------------------------
# the registry is the only place that knows a format

def test_no_code_outside_io_names_a_format():
    """No comparison of a format's id, no hard-coded format id in an operator
    name or a registry lookup, anywhere outside io/."""
    ids = "|".join(re.escape(f.id) for f in formats.FORMATS)
    patterns = [
        re.compile(r"\.id\s*(==|!=)|(==|!=)\s*[\w.]+\.id\b"),                        # fmt.id == ...
        re.compile(rf"(==|!=)\s*[\"']({ids})[\"']|[\"']({ids})[\"']\s*(==|!=)"),       # ... == "xfile"
        re.compile(rf"(_OT_|_FH_|_scene\.|_anim\.)({ids})\b"),                        # IMPORT_SCENE_OT_rite
        re.compile(rf"by_id\(\s*[\"']({ids})[\"']"),                                   # by_id("xfile")
    ]
    found = []
    for path in _production_files():
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if "policy" in line:        # core/skinning's weight policies ("rite": weights as given) are no format
                continue
            if any(p.search(line) for p in patterns):
                found.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert found == []
    assert len(_production_files()) > 20          # the scan sees the code


def test_the_manifest_names_no_format():
    manifest = tomllib.loads((ROOT / "blender_manifest.toml").read_text())
    texts = [manifest["tagline"], *manifest.get("permissions", {}).values()]
    for f in formats.FORMATS:
        words = [f.label.split()[0], *f.suffixes]
        for text in texts:
            assert not any(re.search(rf"(?<![a-z]){re.escape(w.lower())}(?![a-z])", text.lower()) for w in words), \
                (text, f.label)


def test_default_axes_are_the_importers_defaults(toy, tmp_path):
    """What an adapter assumes without axes (its default_axes(), the one
    declaration) is what the operators' and the command line's default
    Forward/Up give (handedness from the registry): -Z/Y for the built-in
    formats, X/Z for the Z-up toy format, whose file convert writes with its
    height along z and reads back standing."""
    for f in formats.FORMATS:
        assert f.adapter.default_axes() == f.axes(*f.default_forward_up) == f.axes(), f.id
        assert f.axes().mirrors == f.left_handed
    assert [f.default_forward_up for f in formats.FORMATS] == [("-Z", "Y")] * 3 + [("X", "Z")]
    assert _convert([*RITE, "-o", tmp_path / "h.toyrig"]) == 0
    joints = {j["name"]: j for j in json.loads((tmp_path / "h.toyrig").read_text())["joints"]}
    assert joints["Hips"]["parent"] is None and joints["Hips"]["translation"][2] > 0.5      # the file: z up
    scene = toy.read_scene([tmp_path / "h.toyrig"])
    world = dict(zip(scene.skeleton.names, scene.skeleton.world()[:, :3, 3]))
    assert world["Head"][2] - world["LeftFoot"][2] > 1.0                                    # Blender: standing


def _keywords(fn) -> set[str]:
    params = inspect.signature(fn).parameters.values()
    assert not any(p.kind is p.VAR_KEYWORD for p in params), f"{fn.__module__}.{fn.__name__} takes **kwargs"
    return {p.name for p in params if p.kind is p.KEYWORD_ONLY}


@pytest.mark.parametrize("fid", [f.id for f in formats.FORMATS])
def test_each_adapter_takes_exactly_its_options(fid):
    """The adapter's functions take the contract's keywords and the
    format's option specs, nothing hidden (no **kwargs that would swallow
    an unknown option)."""
    f = formats.by_id(fid)
    ad = f.adapter
    assert hasattr(ad, "read_scene") != f.writes_only          # a format written only has no reader
    if not f.writes_only:
        # the orientation switch is the registry's: it becomes the reader's ``axes``
        assert _keywords(ad.read_scene) == {"axes", "warnings"} | {s.id for s in f.import_options
                                                                   if s.id != MANUAL_ORIENTATION.id}
    assert _keywords(ad.write_scene) == {"warnings", "axes", "fps"} | {s.id for s in f.export_options}
    if f.animation_files:
        assert _keywords(ad.read_clips) == {"playback", "weight", "warnings"} | {s.id for s in f.anim_import_options}
    if f.anim_suffixes:
        assert _keywords(ad.write_animation) == {"warnings", "fps", "axes"}


@pytest.mark.parametrize("fid", [f.id for f in formats.FORMATS])
def test_every_format_rejects_an_unknown_option(tmp_path, fid):
    """The same clear error for every format, before any file is touched."""
    f = formats.by_id(fid)
    model = tmp_path / f"m{f.model_suffixes[0]}"
    calls = [lambda: f.read_scene([model], bogus=1),
             lambda: f.write_scene(None, model, bogus=1)]
    if f.animation_files:
        calls.append(lambda: f.read_clips(None, f.axes(), [model], bogus=1))
    for call in calls:
        with pytest.raises(OptionError, match=re.escape(f"m{f.model_suffixes[0]}: ") + ".* has no option 'bogus'"):
            call()
    assert not model.exists()


def test_option_values_are_checked():
    e = Option("kind", "Kind", "What kind", "AUTO", items=(("AUTO", "Automatic", "The file's"), ("A", "A", "a")),
               aliases=(("alpha", "A"),))
    assert [e.value(v) for v in ("auto", "A", "Alpha")] == ["AUTO", "A", "A"] and e.kind == "enum"
    with pytest.raises(OptionError, match=r"^--kind: 'b' is not one of AUTO, A, alpha$"):
        e.value("b", "--kind")
    n = Option("count", "Count", "How many", 4, min=1, max=8)
    assert n.kind == "int" and n.value("3") == 3 and n.cli_flags == ("--count",)
    for bad, why in (("0", "at least 1"), ("2.5", "whole number"), ("x", "not a number"), (9, "at most 8")):
        with pytest.raises(OptionError, match=why):
            n.value(bad)
    assert Option("s", "S", "s", 1.0).value("2") == 2.0
    with pytest.raises(OptionError, match="not a number"):
        Option("s", "S", "s", 1.0).value("nan")
    with pytest.raises(ValueError):
        Option("bad id", "B", "b", 1)
    with pytest.raises(ValueError):
        Option("e", "E", "e", "C", items=(("A", "A", "a"),))        # the default is no item


def test_formats_sharing_a_flag_share_one_argument():
    p = argparse.ArgumentParser()
    a = Option("level", "Level", "a's level", 1, min=0)
    b = Option("level", "Level", "b's level", "LOW", items=(("LOW", "Low", "low"), ("HIGH", "High", "high")))
    add_flags(p, [("A", (a,)), ("B", (b,))])
    args = p.parse_args(["--level", "high"])
    assert given(args, (b,)) == {"level": "HIGH"}
    with pytest.raises(OptionError, match="--level: 'high' is not a number"):
        given(args, (a,))
    with pytest.raises(ValueError, match="switch"):
        add_flags(argparse.ArgumentParser(), [("A", (a,)), ("C", (Option("level", "L", "l", True),))])


# ---------------------------------------------------------------------------
# the command line and convert follow the registry

def _subparser(name: str) -> argparse.ArgumentParser:
    ap = cli.build_parser()
    sub = next(a for a in ap._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices[name]


def _flags(name: str) -> set[str]:
    return {s for a in _subparser(name)._actions for s in a.option_strings}


def test_every_option_has_its_flags(toy):
    """import/verify: every format's import and animation import options;
    export and convert: every export option; convert: the import options
    as --input-... (the toy format's too, registered at run time)."""
    for f in formats.FORMATS:
        for s in f.import_options + f.anim_import_options:
            assert set(s.cli_flags) <= _flags("import") and set(s.cli_flags) <= _flags("verify")
        for s in f.import_options:
            assert {"--input-" + x[2:] for x in s.cli_flags} <= _flags("convert")
        for s in f.export_options:
            assert set(s.cli_flags) <= _flags("export") and set(s.cli_flags) <= _flags("convert")
    assert {"--speed"} <= _flags("verify") and {"--layout", "--input-speed"} <= _flags("convert")
    # the existing flags stay
    assert {"--ticks-per-second"} <= _flags("verify")
    assert {"--format", "--storage", "--float", "--ticks-per-second", "--input-ticks-per-second"} <= _flags("convert")


def _convert(argv) -> int:
    return cli.main(["convert", *map(str, argv)])


def test_convert_offers_every_storage_kind(tmp_path, capsys):
    """Every storage kind the export operator offers (from the same spec),
    by its name and by the older --format spellings."""
    kinds = formats.by_id("xfile").options.STORAGE.values
    assert len(kinds) == 4
    codes = {"text": b"txt ", "binary": b"bin ", "text_compressed": b"tzip", "binary_compressed": b"bzip"}
    for kind in kinds:
        out = tmp_path / f"{kind}.x"
        assert _convert([ANIM_X, "-o", out, "--storage", kind]) == 0
        assert out.read_bytes()[8:12] == codes[kind]
    assert _convert([ANIM_X, "-o", tmp_path / "c.x", "--format", "compressed", "--float", "64"]) == 0
    assert (tmp_path / "c.x").read_bytes()[8:16] == b"tzip0064"
    capsys.readouterr()
    assert _convert([ANIM_X, "-o", tmp_path / "bad.x", "--storage", "zip"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["error: --storage: 'zip' is not one of text, binary, text_compressed, binary_compressed, "
                   "compressed"]
    assert not (tmp_path / "bad.x").exists()


def test_convert_passes_the_input_formats_import_options(tmp_path, capsys):
    """--input-ticks-per-second reaches the .X reader: the keys keep their
    ticks, read at 2400 per second instead of the file's."""
    src = read_xfile(ANIM_X)
    out = tmp_path / "out.x"
    assert _convert([ANIM_X, "-o", out, "--input-ticks-per-second", "2400"]) == 0
    back = read_xfile(out)
    assert back.anim_ticks_per_second == 2400 and src.anim_ticks_per_second != 2400
    keys = [k.times.tolist() for s in src.animation_sets for a in s.animations for k in a.keys]
    assert keys == [k.times.tolist() for s in back.animation_sets for a in s.animations for k in a.keys]
    # an option of another format is reported and ignored, never silently dropped
    capsys.readouterr()
    assert _convert([*RITE, "-o", tmp_path / "h.x", "--input-ticks-per-second", "24"]) == 0
    assert "warning: --input-ticks-per-second: not an option of RiTE Model input, ignored" in capsys.readouterr().err


def test_a_format_registered_at_run_time_converts_both_ways(tmp_path, toy, capsys):
    """The toy format through convert: RiTE -> toy -> .X and .X -> toy,
    with its own options (--layout, --input-speed), checked against the
    source files evaluated by the oracle."""
    fps = 24.0
    rite = formats.by_id("rite").read_scene(RITE)
    assert _convert([*RITE, "-o", tmp_path / "h.toyrig", "--layout", "indented"]) == 0
    written = [ln[len("wrote "):] for ln in capsys.readouterr().out.splitlines()]
    assert [Path(p).name for p in written] == ["h.toyrig", "h_0.toyanim"]
    assert json.loads(Path(written[0]).read_text())["format"] == "toy-rig"
    assert Path(written[0]).read_text().count("\n") > 100            # indented
    frames = np.arange(0.0, 33.0)
    want = np.array(ev.evaluate(rite, rite.clips[0], frames, fps))
    got = toy.read_scene(written)
    assert np.abs(np.array(ev.evaluate(got, got.clips[0], frames, fps)) - want).max() < 1e-9 * ev.size(rite)
    # toy -> .X at half speed
    assert _convert([*written, "-o", tmp_path / "h.x", "--input-speed", "2", "--ticks-per-second", "4800"]) == 0
    x = formats.by_id("xfile").read_scene([tmp_path / "h.x"])
    assert x.clips[0].frame_range(fps) == (0.0, 16.5)
    half = np.array(ev.evaluate(x, x.clips[0], frames / 2, fps))
    assert np.abs(half - want).max() < 1e-5 * ev.size(rite)
    # .X -> toy, compact
    assert _convert([ANIM_X, "-o", tmp_path / "a.toyrig", "--layout", "compact"]) == 0
    assert (tmp_path / "a.toyrig").read_text().count("\n") == 1
    src = formats.by_id("xfile").read_scene([ANIM_X])
    back = toy.read_scene([tmp_path / "a.toyrig", tmp_path / "a_0.toyanim"])
    f0, f1 = src.clips[0].frame_range(fps)
    frames = np.arange(np.ceil(f0), np.floor(f1) + 1.0)
    diff = np.array(ev.evaluate(back, back.clips[0], frames, fps)) - np.array(ev.evaluate(src, src.clips[0], frames,
                                                                                         fps))
    assert np.abs(diff).max() < 1e-9 * ev.size(src)
    # its options are its own: another output format reports them
    capsys.readouterr()
    assert _convert([ANIM_X, "-o", tmp_path / "a.ram", "--layout", "compact"]) == 0
    assert "warning: --layout: not an option of RiTE Model output, ignored" in capsys.readouterr().err


def test_registering_checks_ids_and_suffixes(toy):
    with pytest.raises(ValueError, match="already registered"):
        formats.register(toy)
    with pytest.raises(ValueError, match="already claimed"):
        formats.register(formats.Format("other", "Other", (".toyrig",)), package=toy.package)
    assert formats.for_path("x.TOYANIM") is toy


# ---------------------------------------------------------------------------
# one warnings channel

def test_the_warnings_channel_caps_what_it_keeps():
    w = Warnings(limit=3)
    w.extend(f"w{i}" for i in range(2))
    w += ["w2", "w3"]
    w.append("w4")
    assert list(w) == ["w0", "w1", "w2", "... and 2 more warning(s)"] and w.dropped == 2
    assert isinstance(w, list)
