# SPDX-License-Identifier: GPL-3.0-or-later
"""The command line with DirectX .X files: ``python -m legacy_skin_io verify
FILE.x`` (a table per AnimationSet, one verdict, exit codes 0 / 1 / 2) and
``import FILE.x -o OUT.blend``, run as a user would (subprocesses)."""
from __future__ import annotations

import re
import subprocess
import sys

import numpy as np
import pytest

from legacy_skin_io.io.xfile import read_xfile
from legacy_skin_io.io.xfile.playback import XRig

from conftest import DATA, ROOT

X = DATA / "x"
FPS = 24.0  # Blender's default scene rate (the CLI imports into a new empty scene)


def _run(*args, timeout=300):
    return subprocess.run([sys.executable, "-m", "legacy_skin_io", *map(str, args)],
                          cwd=ROOT, capture_output=True, text=True, timeout=timeout)


def _tables(stdout: str) -> dict[str, tuple[float, float, list[list[float]]]]:
    """{set name: (first frame, last frame, rows)} from verify's output."""
    out, current = {}, None
    for line in stdout.splitlines():
        m = re.match(r"AnimationSet '(.*)': frames (\S+)-(\S+)$", line)
        if m:
            current = m.group(1)
            out[current] = (float(m.group(2)), float(m.group(3)), [])
        elif current and re.match(r"^\s*-?\d", line):
            out[current][2].append([float(v) for v in line.split()])
    return out


def test_verify_every_set_every_frame(tmp_path):
    path = X / "directx-sdk" / "tiny_4anim.x"   # 4 sets, no AnimTicksPerSecond
    r = _run("verify", path, "--blend", tmp_path / "tiny.blend")
    assert r.returncode == 0, r.stderr[-2000:]
    assert "Traceback" not in r.stderr
    rig = XRig.from_xfile(read_xfile(path))
    tables = _tables(r.stdout)
    assert list(tables) == [c.name for c in rig.clips]
    size = rig.size()
    for clip in rig.clips:
        first, last, rows = tables[clip.name]
        assert (first, last) == (0.0, float(np.ceil(rig.ticks_to_frames(clip.last_tick, FPS) - 1e-6)))
        assert [row[0] for row in rows] == list(np.arange(first, last + 1.0))   # every frame, in order
        assert all(len(row) == 3 and 0.0 <= row[2] <= row[1] <= 1e-5 * size for row in rows)
    verdicts = [ln for ln in r.stdout.splitlines() if ln.startswith(("PASS", "FAIL"))]
    assert len(verdicts) == 1 and verdicts[0].startswith("PASS: max error")
    assert f"over {sum(len(t[2]) for t in tables.values())} frames" in verdicts[0]
    assert (tmp_path / "tiny.blend").exists()


def test_verify_exit_codes_bake_and_tolerance():
    path = X / "assimp" / "BCN_Epileptic.X"
    baked = _run("verify", path, "--bake")
    assert baked.returncode == 0 and "PASS: max error" in baked.stdout, baked.stderr[-2000:]
    strict = _run("verify", path, "--tolerance", "1e-12")
    assert strict.returncode == 1
    assert strict.stdout.strip().splitlines()[-1].startswith("FAIL")


def test_verify_without_animation_checks_the_default_pose():
    r = _run("verify", X / "directx-sdk" / "mslogo.x")   # binary, one top-level mesh, no frames
    assert r.returncode == 0, r.stderr[-2000:]
    assert "default pose (no animation)" in r.stdout and "PASS: max error" in r.stdout


@pytest.mark.parametrize("name,where", [
    ("assimp/malformed_skinweights_oob.x", "malformed_skinweights_oob.x:"),
    ("assimp/OV_GetNextToken", "OV_GetNextToken (byte offset"),   # no suffix: the xof header says .X
    ("assimp/no_such_file.x", "no_such_file.x: no such file"),
])
def test_unreadable_input_exits_2_with_the_message(name, where):
    r = _run("verify", X / name)
    assert r.returncode == 2
    assert where in r.stderr and r.stderr.startswith("error: ")
    assert "Traceback" not in r.stderr


def test_rite_only_options_are_refused_for_x():
    r = _run("verify", X / "assimp" / "test_cube_text.x", "walk.raa")
    assert r.returncode == 2 and "not for .x files" in r.stderr and "Traceback" not in r.stderr
    r = _run("verify", ROOT / "samples" / "rite" / "humanoid.ram", "--bake")
    assert r.returncode == 2 and "--bake is for .x files" in r.stderr


def test_import_writes_a_blend_with_one_action_per_set(tmp_path):
    path = X / "assimp" / "Testwuson.X"
    out = tmp_path / "sub" / "wuson.blend"
    r = _run("import", path, "-o", out)
    assert r.returncode == 0, r.stderr[-2000:]
    assert out.exists() and f"wrote {out.resolve()}" in r.stdout
    # read it back in a fresh Blender: armature, skinned mesh, the sets as NLA tracks
    probe = ("import bpy, sys\n"
             "bpy.ops.wm.open_mainfile(filepath=sys.argv[1])\n"
             "arm = [o for o in bpy.data.objects if o.type == 'ARMATURE']\n"
             "mesh = [o for o in bpy.data.objects if o.type == 'MESH']\n"
             "print('ARM', len(arm), 'MESH', len(mesh), 'MOD', [m.type for m in mesh[0].modifiers])\n"
             "print('TRACKS', '|'.join(t.name for t in arm[0].animation_data.nla_tracks))\n"
             "print('ACTIVE', arm[0].animation_data.action.name)\n")
    r = subprocess.run([sys.executable, "-c", probe, str(out)], cwd=ROOT, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    sets = [c.name for c in XRig.from_xfile(read_xfile(path)).clips]
    assert "ARM 1 MESH 1 MOD ['ARMATURE']" in r.stdout
    assert f"TRACKS {'|'.join(sets)}" in r.stdout
    assert f"ACTIVE {sets[0]}" in r.stdout
