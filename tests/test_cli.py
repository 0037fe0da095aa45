# SPDX-License-Identifier: GPL-3.0-or-later
"""The command line, run as a user runs it (``python -m legacy_skin_io``,
subprocesses): ``verify`` and ``import`` for every format (exit 0 pass, 1
over the tolerance, 2 unreadable input with a one-line error naming the
file and where, never a traceback), argument errors, and ``export`` of a
.blend to each format. Each run costs a Blender start: they are few."""
from __future__ import annotations

import re

import numpy as np
import pytest
from bad_input import cli_error
from blender_checks import ext, fps, imported, play, reference, verify
from conftest import DATA, SAMPLES, run_cli  # noqa: E402

from legacy_skin_io.io.formats import by_id
from legacy_skin_io.io.rite import read_ram
from legacy_skin_io.io.xfile import read_xfile
from legacy_skin_io.scene import evaluate

X = DATA / "x"
RITE = SAMPLES / "rite"
FPS = 24.0  # Blender's default scene rate (the CLI imports into a new empty scene)


def _verdict(stdout: str):
    """(word, max error, relative error) of verify's one verdict line."""
    lines = [ln for ln in stdout.splitlines() if ln.startswith(("PASS", "FAIL"))]
    assert len(lines) == 1, stdout[-2000:]
    m = re.match(r"(PASS|FAIL): max error (\S+) over \d+ frames \((\S+) of model size", lines[0])
    assert m, lines[0]
    return m.group(1), float(m.group(2)), float(m.group(3))


def _rows(stdout: str) -> list[list[float]]:
    return [[float(v) for v in ln.split()] for ln in stdout.splitlines()
            if ln.strip() and re.match(r"^\s*-?\d", ln) and len(ln.split()) == 3]


def _tables(stdout: str) -> dict[str, tuple[float, float, list[list[float]]]]:
    """{set name: (first frame, last frame, rows)} from verify's output for a .X file."""
    out, current = {}, None
    for line in stdout.splitlines():
        m = re.match(r"^'(.*)': frames (\S+)-(\S+)$", line)
        if m:
            current = m.group(1)
            out[current] = (float(m.group(2)), float(m.group(3)), [])
        elif current and re.match(r"^\s*-?\d", line):
            out[current][2].append([float(v) for v in line.split()])
    return out


# ---------------------------------------------------------------------------
# RiTE

def _summaries(stdout: str) -> dict[str, tuple[int, float, float, float, str]]:
    """{title: (frames checked, worst frame, its error / model size, tolerance, PASS|FAIL)}
    from verify's summary lines (one per animation)."""
    out = {}
    for line in stdout.splitlines():
        m = re.match(r"^(.*): (\d+) frames? checked, worst frame (\S+) at (\S+) of the model size "
                     r"\(tolerance (\S+)\): (PASS|FAIL)$", line)
        if m:
            out[m.group(1)] = (int(m.group(2)), float(m.group(3)), float(m.group(4)), float(m.group(5)),
                               m.group(6))
    return out


def test_rite_verify_exit_codes(tmp_path):
    ok = run_cli("verify", RITE / "humanoid.ram", RITE / "walk.raa", "--blend", tmp_path / "h.blend")
    assert ok.returncode == 0, ok.stderr[-2000:]
    assert _verdict(ok.stdout)[0] == "PASS" and (tmp_path / "h.blend").exists()
    # by default one line per animation, no per-frame table
    assert _rows(ok.stdout) == []
    (title, (n, worst, rel, tol, word)), = _summaries(ok.stdout).items()
    assert title == "'walk': frames 0-64" and n == 65 and word == "PASS" and tol == 1e-5
    assert 0.0 < rel <= 1e-5
    assert "normals (information, not checked)" not in ok.stdout
    # --frames (-v): the table as well, walk.raa's 33 frames, then its loop 1..32 again; the summary
    # names its worst row
    strict = run_cli("verify", RITE / "humanoid.ram", RITE / "walk.raa", "--tolerance", "1e-12", "--frames")
    assert strict.returncode == 1 and _verdict(strict.stdout)[0] == "FAIL"
    assert "Traceback" not in strict.stderr
    rows = _rows(strict.stdout)
    assert [r[0] for r in rows] == list(range(65))
    assert all(0.0 <= r[2] <= r[1] for r in rows)
    assert "normals (information, not checked)" in strict.stdout      # with the table, the normals' line
    _, max_error, verdict_rel = _verdict(strict.stdout)
    size = max_error / verdict_rel
    (n, worst, rel, tol, word), = _summaries(strict.stdout).values()
    top = max(r[1] for r in rows)          # the table rounds: the worst frame is one of its largest
    assert (n, word, tol) == (65, "FAIL", 1e-12) and {r[0]: r[1] for r in rows}[worst] == top
    assert rel == pytest.approx(top / size, rel=0.01)
    # --keys-only: the file's keys (Blender interpolates each of the walk's spans as the runtime does):
    # the runtime's poses to float32 rounding; over the tolerance it fails too
    keys = run_cli("verify", RITE / "humanoid.ram", RITE / "walk.raa", "--keys-only", "--tolerance", "1e-12", "-v")
    word, _, rel = _verdict(keys.stdout)
    assert keys.returncode == 1 and word == "FAIL", keys.stderr[-2000:]
    assert 0.0 < rel < 1e-5            # well within the default tolerance
    assert len(_rows(keys.stdout)) == 65


def test_rite_verify_takes_the_mergeable_mix():
    """--mix reaches the import and the reference: walk and wave as two
    mergeable layers verify under either mix, which differ (wave overwrites
    the walk's arm in the 2006 Animator's, is averaged with it in the
    weighted one)."""
    tables = {}
    for mix in ("weighted", "animator_2006"):
        r = run_cli("verify", RITE / "humanoid.ram", RITE / "walk.raa", RITE / "wave.raa", "--weights", "0.5", "0.5",
                 "--mix", mix, "--frames")
        assert r.returncode == 0, (mix, r.stdout[-2000:], r.stderr[-2000:])
        assert _verdict(r.stdout)[0] == "PASS"
        tables[mix] = _rows(r.stdout)
    assert [r[0] for r in tables["weighted"]] == list(range(0, 81))     # 0..40, then wave's loop once more
    ram = read_ram(RITE / "humanoid.ram")
    ref = by_id("rite").adapter.read_scene([RITE / "humanoid.ram"], warnings=[])
    clips = {mix: [c for p in ("walk.raa", "wave.raa")
                   for c in by_id("rite").adapter.read_clips(ref.skeleton, ref.source.axes, [RITE / p],
                                                             playback="MERGEABLE", weight=0.5, mix=mix.upper())]
             for mix in tables}
    ev = {mix: evaluate.evaluate(ref, clips[mix], [20.0], FPS)[0] for mix in clips}
    assert np.abs(ev["weighted"] - ev["animator_2006"]).max() > 1e-2 * np.ptp(ram.positions)


def test_rite_broken_input_exits_2_naming_the_line(tmp_path):
    bad = tmp_path / "bad.ram"
    bad.write_text("joints 1\n0 \"a\"\nparent 7\n")
    cli_error(run_cli("import", bad, "-o", tmp_path / "out.blend"), pattern=r"bad\.ram:\d+")
    assert not (tmp_path / "out.blend").exists()
    raa = tmp_path / "walk.raa"
    raa.write_text((RITE / "walk.raa").read_text().replace("frames 33", "frames -3", 1))
    cli_error(run_cli("verify", RITE / "humanoid.ram", raa), pattern=r"walk\.raa:\d+")


# ---------------------------------------------------------------------------
# DirectX

def test_x_verify_every_set_every_frame(tmp_path):
    path = X / "directx-sdk" / "tiny_4anim.x"   # 4 sets, no AnimTicksPerSecond
    r = run_cli("verify", path, "--blend", tmp_path / "tiny.blend", "--frames")
    assert r.returncode == 0, r.stderr[-2000:]
    assert "Traceback" not in r.stderr
    xf = read_xfile(path)
    tables = _tables(r.stdout)
    summaries = _summaries(r.stdout)
    assert list(tables) == [s.name for s in xf.animation_sets]
    size = evaluate.size(by_id("xfile").adapter.read_scene([path], warnings=[]))
    for aset in xf.animation_sets:
        first, last, rows = tables[aset.name]
        last_tick = max(float(np.max(k.times)) for a in aset.animations for k in a.keys if len(k.times))
        assert (first, last) == (0.0, float(np.ceil(last_tick / (xf.anim_ticks_per_second or 4800) * FPS - 1e-6)))
        assert [row[0] for row in rows] == list(np.arange(first, last + 1.0))   # every frame, in order
        assert all(len(row) == 3 and 0.0 <= row[2] <= row[1] <= 1e-5 * size for row in rows)
        n, worst, rel, _, word = summaries[f"'{aset.name}': frames {first:g}-{last:g}"]
        top = max(row[1] for row in rows)          # the table rounds: the worst frame is one of its largest
        assert (n, word) == (len(rows), "PASS") and {row[0]: row[1] for row in rows}[worst] == top
        assert rel == pytest.approx(top / size, rel=0.01, abs=1e-12)
    verdicts = [ln for ln in r.stdout.splitlines() if ln.startswith(("PASS", "FAIL"))]
    assert len(verdicts) == 1 and verdicts[0].startswith("PASS: max error")
    assert f"over {sum(len(t[2]) for t in tables.values())} frames" in verdicts[0]
    assert (tmp_path / "tiny.blend").exists()


def test_x_verify_exit_codes_bake_and_tolerance():
    path = X / "assimp" / "BCN_Epileptic.X"
    baked = run_cli("verify", path, "--bake", "-v")
    assert baked.returncode == 0 and _verdict(baked.stdout)[0] == "PASS", baked.stderr[-2000:]
    assert len(_rows(baked.stdout)) == 81
    strict = run_cli("verify", path, "--tolerance", "1e-12")
    assert strict.returncode == 1 and _verdict(strict.stdout)[0] == "FAIL"
    assert "Traceback" not in strict.stderr


def test_x_verify_without_animation_checks_the_default_pose():
    r = run_cli("verify", X / "directx-sdk" / "mslogo.x", "-v")   # binary, one top-level mesh, no frames
    assert r.returncode == 0, r.stderr[-2000:]
    assert "default pose (no animation)" in r.stdout and _verdict(r.stdout)[0] == "PASS"
    assert [row[0] for row in _rows(r.stdout)] == [0.0]


@pytest.mark.parametrize("cmd,name,where", [
    ("verify", "assimp/malformed_skinweights_oob.x", r"malformed_skinweights_oob\.x:\d+"),
    ("verify", "assimp/OV_GetNextToken", r"OV_GetNextToken \(byte offset \d+\)"),  # no suffix: the xof header
    ("import", "assimp/no_such_file.x", r"no_such_file\.x: no such file"),
], ids=["line", "byte-offset", "missing"])
def test_x_unreadable_input_exits_2_with_the_message(tmp_path, cmd, name, where):
    args = [cmd, X / name] + (["-o", tmp_path / "out.blend"] if cmd == "import" else [])
    cli_error(run_cli(*args), pattern=where)
    assert not (tmp_path / "out.blend").exists()


def test_verify_takes_the_formats_options(tmp_path):
    """--ticks-per-second comes from the .X option spec and reaches both
    Blender's import and the reference: keys at ticks 0..55 without
    AnimTicksPerSecond play as frames 0-55. Given for another format, it is
    reported and ignored."""
    from x_rigs import chain_file

    path = chain_file(tmp_path / "dense.x", np.arange(56))
    r = run_cli("verify", path, "--ticks-per-second", "24", "--frames")
    assert r.returncode == 0, r.stderr[-2000:]
    (first, last, rows), = _tables(r.stdout).values()
    assert (first, last, len(rows)) == (0.0, 55.0, 56)
    r = run_cli("verify", RITE / "humanoid.ram", "--ticks-per-second", "24")
    assert r.returncode == 0, r.stderr[-2000:]
    assert "warning: --ticks-per-second: not an option of RiTE Model files, ignored" in r.stdout


def test_animation_files_of_another_format_are_refused_for_x():
    r = run_cli("verify", X / "assimp" / "test_cube_text.x", RITE / "walk.raa")
    cli_error(r, pattern=r"walk\.raa: a DirectX model takes animations from \.x files")


def test_import_x_writes_a_blend_that_plays_every_set(bpy, tmp_path):
    path = X / "assimp" / "Testwuson.X"
    out = tmp_path / "sub" / "wuson.blend"
    r = run_cli("import", path, "-o", out)
    assert r.returncode == 0, r.stderr[-2000:]
    assert out.exists() and f"wrote {out.resolve()}" in r.stdout
    # read it back here: armature, skinned mesh, the sets as NLA tracks, each
    # playing the file (the oracle on a fresh parse)
    bpy.ops.wm.open_mainfile(filepath=str(out))
    arm, meshes = imported(bpy)
    names = [s.name for s in read_xfile(path).animation_sets]
    assert [t.name for t in arm.animation_data.nla_tracks] == names
    assert arm.animation_data.action.name == names[0]
    assert [m.type for o in meshes.values() for m in o.modifiers] == ["ARMATURE"] * len(meshes)
    ref = reference("xfile", [path])
    md = ext("operators.metadata")
    for clip in ref.clips:
        play(arm, clip.name)
        meta = md.load(arm.animation_data.action, md.CLIP_KEY)
        if not meta["baked"]:
            clip.rotation_mode = "nlerp"
        end = np.ceil(clip.frame_range(fps(bpy))[1] - 1e-6)
        rep = verify(bpy, meshes, ref, clip, np.linspace(0.0, end, 12).round())
        assert rep.ok, (clip.name, rep.table())


# ---------------------------------------------------------------------------
# arguments

def test_bad_axes_are_clean_errors(tmp_path):
    r = run_cli("verify", RITE / "humanoid.ram", "--forward", "Q")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "--forward: 'Q' is not one of X, Y, Z, -X, -Y, -Z" in r.stderr
    r = run_cli("import", RITE / "humanoid.ram", "--forward", "Y", "--up", "Y", "-o", tmp_path / "o.blend")
    cli_error(r, pattern=r"forward.*up.*different")
    assert not (tmp_path / "o.blend").exists()


# ---------------------------------------------------------------------------
# export

@pytest.fixture(scope="module")
def rig_blend(tmp_path_factory):
    """humanoid.ram with walk.raa, imported by the command line."""
    out = tmp_path_factory.mktemp("rig") / "rig.blend"
    r = run_cli("import", RITE / "humanoid.ram", RITE / "walk.raa", "-o", out)
    assert r.returncode == 0, r.stderr[-2000:]
    assert out.exists()
    return out


def _default_pose(path):
    sc = by_id("rite" if path.suffix == ".ram" else "xfile").adapter.read_scene([path], warnings=[])
    return evaluate.evaluate(sc, None, [0.0])[0], evaluate.size(sc)


def test_export_blend_to_x_and_ram(rig_blend, tmp_path):
    want, size = _default_pose(RITE / "humanoid.ram")
    joints = [j.name for j in read_ram(RITE / "humanoid.ram").joints]
    r = run_cli("export", rig_blend, "-o", tmp_path / "out.x")
    assert r.returncode == 0, r.stderr[-2000:]
    assert (tmp_path / "out.x").read_bytes()[:4] == b"xof "
    xf = read_xfile(tmp_path / "out.x")
    assert set(joints) <= {f.name for f in xf.all_frames()}
    got, _ = _default_pose(tmp_path / "out.x")         # vertices split by UV seams: compare the bounds
    assert np.abs(got.min(0) - want.min(0)).max() < 1e-5 * size
    assert np.abs(got.max(0) - want.max(0)).max() < 1e-5 * size
    r = run_cli("export", rig_blend, "-o", tmp_path / "out.ram")
    assert r.returncode == 0, r.stderr[-2000:]
    ram = read_ram(tmp_path / "out.ram")
    assert [j.name for j in ram.joints] == joints
    got, _ = _default_pose(tmp_path / "out.ram")
    assert got.shape == want.shape and np.abs(got - want).max() < 1e-5 * size


def test_export_of_a_missing_or_broken_blend_exits_2(tmp_path):
    cli_error(run_cli("export", tmp_path / "nothing.blend", "-o", tmp_path / "out.x"), pattern=r"nothing\.blend")
    garbage = tmp_path / "garbage.blend"
    garbage.write_bytes(b"this is not a blend file\n" * 10)
    cli_error(run_cli("export", garbage, "-o", tmp_path / "out.ram"), pattern=r"garbage\.blend")
    assert not (tmp_path / "out.x").exists() and not (tmp_path / "out.ram").exists()


def test_export_writes_animations_by_default_as_the_gui_does(rig_blend, tmp_path):
    """No flag: the rig's actions are written (as the export operator's
    default); --no-animations leaves them out."""
    r = run_cli("export", rig_blend, "-o", tmp_path / "anim.x")
    assert r.returncode == 0, r.stderr[-2000:]
    assert [s.name for s in read_xfile(tmp_path / "anim.x").animation_sets] == ["walk"]
    r = run_cli("export", rig_blend, "-o", tmp_path / "still.x", "--no-animations")
    assert r.returncode == 0, r.stderr[-2000:]
    assert read_xfile(tmp_path / "still.x").animation_sets == []
