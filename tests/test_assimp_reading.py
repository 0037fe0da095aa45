# SPDX-License-Identifier: GPL-3.0-or-later
"""tests/assimp_reading.py against the pinned assimp (cmeel-assimp 6.0.5): the
command is there (a missing one fails, never skips), its .assbin dump parses to
the scene the file describes, and a dump of another layout version is refused
instead of misread."""
from __future__ import annotations

import struct
from pathlib import Path

import assimp_reading as ar
import pytest

X = Path(__file__).resolve().parent / "data" / "x" / "assimp"


def test_the_pinned_assimp_is_found():
    r = ar.run("version")
    assert r.returncode == 0 and "Version 6.0" in r.stdout, r.stdout + r.stderr


def test_a_missing_assimp_fails_with_its_reason(monkeypatch):
    monkeypatch.setenv("PATH", "")
    with pytest.raises(pytest.fail.Exception, match="assimp not found on PATH.*cmeel-assimp"):
        ar.exe()


def test_assbin_dump_of_a_skinned_animated_file(tmp_path):
    """anim_test.x: 840 triangles (assimp splits vertices per corner: 2520),
    4 SkinWeights blocks, one AnimationSet of 4 animations at 24 ticks/s."""
    sc = ar.assimp_scene(X / "anim_test.x", tmp_path)
    assert {"pCylinder1", "joint1", "joint2", "ikHandle1"} <= {n.name for n in sc.nodes}
    (mesh,) = sc.meshes
    assert mesh.positions.shape == (2520, 3) and len(mesh.bones) == 4
    assert all(len(b.vertex) == len(b.weight) and (b.weight >= 0).all() and (b.weight <= 1).all() for b in mesh.bones)
    anim = sc.animation("cylinder_test")
    assert anim.ticks_per_second == 24 and len(anim.channels) == 4
    assert all(len(ts) == len(vs) for c in anim.channels.values() for ts, vs in (c.pos, c.rot, c.scl))


def test_assbin_of_another_layout_version_is_refused(tmp_path):
    sc = ar.assimp_scene(X / "test_cube_text.x", tmp_path)
    assert len(sc.meshes) == 1
    dump = tmp_path / "test_cube_text.x.assbin"
    data = bytearray(dump.read_bytes())
    assert struct.unpack_from("<II", data, 44) == ar.VERSION
    struct.pack_into("<I", data, 48, ar.VERSION[1] + 1)
    dump.write_bytes(bytes(data))
    with pytest.raises(AssertionError, match="format version"):
        ar.read(dump)
