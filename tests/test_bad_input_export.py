# SPDX-License-Identifier: GPL-3.0-or-later
"""Files the exporters would write and then could not read: key times past
the .X limit (a long action at a high ticks-per-second, a tiny frame rate),
a ticks-per-second past a DWORD, a mesh scaled to zero, a mesh with no
faces. Each is refused before anything is written (saying which setting to
change) or left out with a warning, and what is written reads back (our
reader and assimp)."""
from __future__ import annotations

from pathlib import Path

import assimp_reading as ar
import numpy as np
import pytest
from bad_input import cli_error
from conftest import run_cli

from legacy_skin_io.io import convert, formats
from legacy_skin_io.io.errors import FormatError
from legacy_skin_io.io.xfile import adapter as xfile
from legacy_skin_io.io.xfile.from_scene import xfile_from_scene
from legacy_skin_io.scene import Mesh

ROOT = Path(__file__).resolve().parents[1]
RITE = ROOT / "samples" / "rite"
LONG_X = b"""xof 0303txt 0032
AnimTicksPerSecond { 1; }
Frame root { FrameTransformMatrix { 1,0,0,0, 0,1,0,0, 0,0,1,0, 0,0,0,1;; }
  Mesh m { 3; 0;0;0;, 1;0;0;, 0;1;0;; 1; 3;0,1,2;; } }
AnimationSet long { Animation { { root } AnimationKey { 2; 2; 0;3;0,0,0;;, 1000000;3;1,0,0;;; } } }
"""


@pytest.mark.parametrize("fps", ["1e-6", "1e-300"])
def test_tiny_frame_rate_is_refused_before_writing(tmp_path, fps):
    """RiTE frame f is tick f * 4800 / fps: at a tiny --fps the ticks pass
    2^31 (or overflow): refused, naming the limit and the settings."""
    out = tmp_path / "o.x"
    cli_error(run_cli("convert", RITE / "humanoid.ram", RITE / "walk.raa", "-o", out, "--fps", fps),
             "2147483647", "--ticks-per-second", "--fps")
    assert not out.exists()


def test_long_action_at_a_high_time_base_iscli_error(tmp_path):
    """A key at 1,000,000 s written at 1,000,000 ticks per second: 1e12
    ticks, past what the file can hold."""
    src = tmp_path / "long.x"
    src.write_bytes(LONG_X)
    out = tmp_path / "o.x"
    cli_error(run_cli("convert", src, "-o", out, "--ticks-per-second", "1000000"), "2147483647", "--ticks-per-second")
    assert not out.exists()
    assert run_cli("convert", src, "-o", out).returncode == 0        # its own time base fits
    assert xfile.read_scene([str(out)], warnings=[]).clips


def test_time_base_past_a_dword_iscli_error():
    scene = xfile.read_scene([str(ROOT / "samples" / "x" / "tiny_4anim.x")], warnings=[])
    with pytest.raises(FormatError, match="ticks per second 5000000000 is past the .X limit"):
        xfile_from_scene(scene, ticks_per_second=5e9)


def _assimp_reads(path: Path) -> None:
    r = ar.run("info", path, timeout=120)
    assert r.returncode == 0 and "ERROR" not in r.stdout + r.stderr, (r.stdout + r.stderr)[-2000:]


@pytest.mark.parametrize("suffix", [".x", ".ram"])
def test_meshes_no_file_could_carry_are_left_out_with_a_warning(tmp_path, suffix):
    """A mesh with no faces and a mesh scaled to zero: each left out with a
    warning; the other meshes are written and read back (assimp too)."""
    scene = formats.by_id("rite").read_scene([str(RITE / "humanoid.ram")], warnings=[])
    kept = scene.meshes[0]
    points = Mesh("points", np.eye(3), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
    flat = Mesh("flat", np.eye(3), np.array([3]), np.array([0, 1, 2]), matrix=np.diag([0.0, 0.0, 0.0, 1.0]))
    scene.meshes += [points, flat]
    warnings: list[str] = []
    out = tmp_path / ("o" + suffix)
    formats.for_path(out).write_scene(scene, out, warnings=warnings)
    assert any("'points' has no faces" in w for w in warnings), warnings
    assert any("'flat' is scaled to zero" in w for w in warnings), warnings
    assert len(scene.meshes) == 3                  # the caller's scene is not changed
    back = formats.for_path(out).read_scene([str(out)], warnings=[])
    assert sum(len(m.face_sizes) for m in back.meshes) == len(kept.face_sizes)
    if suffix == ".x":
        _assimp_reads(out)


def test_convert_of_a_faceless_mesh_reads_back(tmp_path):
    """The .X written from a file whose only mesh has no faces: the skeleton
    alone, which reads back (assimp refuses any file without a mesh, so it
    is not asked here)."""
    src = tmp_path / "pts.ram"
    text = (RITE / "humanoid.ram").read_text()
    head, tail = text.split("\ntriangles ", 1)
    tail = tail.split("\n", 1)[1]
    count = int(text.split("\ntriangles ", 1)[1].split("\n", 1)[0])
    rest = "\n".join(tail.split("\n")[count:])
    src.write_text(head + "\ntriangles 0\n" + rest)
    warnings: list[str] = []
    try:
        convert.convert([src], str(tmp_path / "o.x"), warnings=warnings)
    except FormatError as err:
        pytest.skip(f"the RAM reader takes no faceless mesh: {err}")
    assert any("no faces" in w for w in warnings)
    back = xfile.read_scene([str(tmp_path / "o.x")], warnings=[])
    assert not back.meshes and back.skeleton is not None and len(back.skeleton) == 26


def test_float_options_refuse_infinity_and_nan():
    """A float option without a maximum took inf (and a flag NaN): every float
    spec refuses both, as every command-line number flag does."""
    import argparse

    from legacy_skin_io.io.options import Option, OptionError, finite

    spec = Option("s", "S", "s", 1.0)
    for bad, why in (("inf", "not a finite number"), ("-inf", "not a finite number"), ("nan", "not a number")):
        with pytest.raises(OptionError, match=why):
            spec.value(bad)
        with pytest.raises(argparse.ArgumentTypeError):
            finite(bad)
    assert finite("2.5") == 2.5


@pytest.mark.parametrize("tps", ["1e-320", "0.001"])
@pytest.mark.parametrize("out", ["o.ram", "o.x"])
def test_a_tiny_input_time_base_is_refused_before_sampling(tmp_path, tps, out):
    """.X input read at a tiny time base: its animations last billions of
    frames (or overflow to inf). Writing them is refused in one line before
    any frame is sampled (an OverflowError, or gigabytes of frames, before)."""
    r = run_cli("convert", ROOT / "samples" / "x" / "tiny_4anim.x", "-o", tmp_path / out,
             "--input-ticks-per-second", tps)
    if r.returncode == 0:                  # .X written key for key: its times fit once rescaled
        assert out == "o.x" and xfile.read_scene([str(tmp_path / out)], warnings=[]).clips
        return
    cli_error(r, "--input-ticks-per-second" if out == "o.ram" else "--ticks-per-second")
    assert list(tmp_path.iterdir()) == []
