# SPDX-License-Identifier: GPL-3.0-or-later
"""Bad input: only FormatError (with a position) ever escapes, quickly, and
counts are checked before anything is allocated."""
from __future__ import annotations

import random
import struct
from pathlib import Path

import pytest
from work_bounds import bounded

from legacy_skin_io.io.errors import FormatError
from legacy_skin_io.io.xfile import read_xfile, read_xfile_bytes, write_xfile_bytes

X = Path(__file__).resolve().parent / "data" / "x"
#: calls per parse of a few-KB file (the samples take 800 to 1,400; a corrupt
#: one that fails early fewer): far below what work quadratic in the file takes
MAX_CALLS = 50_000


def _samples():
    cube = read_xfile(X / "assimp/test_cube_text.x")
    return {
        "text": (X / "assimp/test_cube_text.x").read_bytes(),
        "binary": (X / "assimp/test_cube_binary.x").read_bytes(),
        "bzip": (X / "assimp/test_cube_compressed.x").read_bytes(),
        "tzip": write_xfile_bytes(cube, "text_compressed"),
        "colors": (X / "assimp/kwxport_test_cubewithvcolors.x").read_bytes(),
    }


SAMPLES = _samples()


def _parse_or_format_error(data: bytes) -> str:
    try:
        with bounded(calls=MAX_CALLS):
            read_xfile_bytes(data, "fuzz.x")
        outcome = "ok"
    except FormatError as err:
        assert err.line is not None or err.offset is not None, str(err)
        outcome = "error"
    return outcome


@pytest.mark.parametrize("kind", sorted(SAMPLES))
def test_truncations(kind):
    data = SAMPLES[kind]
    lengths = sorted({len(data) * k // 200 for k in range(200)})
    outcomes = [_parse_or_format_error(data[:n]) for n in lengths]
    assert outcomes.count("error") >= len(lengths) * 0.9


@pytest.mark.parametrize("kind", sorted(SAMPLES))
def test_random_corruptions(kind):
    data = SAMPLES[kind]
    rng = random.Random(20240611)
    for _ in range(300):
        buf = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            buf[rng.randrange(16, len(buf))] = rng.randrange(256)
        _parse_or_format_error(bytes(buf))


def _fast_and_small(data: bytes, expect: str) -> FormatError:
    with bounded(calls=MAX_CALLS, memory=4 * 1024 * 1024), pytest.raises(FormatError) as info:
        read_xfile_bytes(data, "absurd.x")
    assert expect in str(info.value)
    return info.value


def test_absurd_text_counts():
    err = _fast_and_small(b"xof 0303txt 0032\nMesh m {\n 4000000000;\n 0;0;0;;\n}\n",
                          "vertex count 4000000000 needs")
    assert err.line == 3
    _fast_and_small(b"xof 0303txt 0032\nMesh { 1; 0;0;0;; 4000000000; 3;0,0,0;; }",
                    "face count 4000000000 needs")
    _fast_and_small(b"xof 0303txt 0032\nMesh { 1; 0;0;0;; 1; 3000000000;0,0,0;; }",
                    "face 0")
    _fast_and_small(b'xof 0303txt 0032\nMesh { 1; 0;0;0;; 1; 3;0,0,0;; '
                    b'SkinWeights { "b"; 4000000000; 0; 1.0; } }', "weight count 4000000000 needs")
    _fast_and_small(b"xof 0303txt 0032\nAnimationSet { Animation { AnimationKey { 0; "
                    b"4000000000; 0;4;1,0,0,0;;; } } }", "key count 4000000000 needs")


def test_absurd_binary_counts():
    header = b"xof 0303bin 0032"
    # A FLOAT_LIST claiming 4e9 floats: rejected while tokenizing.
    err = _fast_and_small(header + struct.pack("<HI", 7, 4000000000) + b"\0" * 16,
                          "FLOAT_LIST of 4000000000 values")
    assert err.offset == 16
    # A Mesh whose vertex count (an INTEGER_LIST value) is 4e9.
    mesh = (struct.pack("<HI", 1, 4) + b"Mesh" + struct.pack("<H", 10)
            + struct.pack("<HII", 6, 1, 4000000000) + struct.pack("<HIfff", 7, 3, 0, 0, 0)
            + struct.pack("<H", 11))
    _fast_and_small(header + mesh, "vertex count 4000000000 needs")
    # A NAME whose length runs past the end.
    _fast_and_small(header + struct.pack("<HI", 1, 0xFFFFFFF0) + b"abc", "length")


def test_absurd_mszip_sizes():
    good = SAMPLES["bzip"]
    bad_total = good[:16] + struct.pack("<I", 0xFFFFFFFF) + good[20:]
    _fast_and_small(bad_total, "header says")
    # A block header announcing more output than the file header: caught before inflating.
    bad_block = good[:20] + struct.pack("<HH", 0xFFFF, 0xFFFF) + good[24:]
    _fast_and_small(bad_block, "block headers add up to 65551")
    # A block whose compressed size runs past the end of the file.
    usize = struct.unpack_from("<H", good, 20)[0]
    _fast_and_small(good[:20] + struct.pack("<HH", usize, 0xFFFF) + good[24:],
                    "compressed size 65535 runs past")


def test_deep_nesting_is_an_error_not_a_crash():
    data = b"xof 0303txt 0032\n" + b"Frame {\n" * 100000 + b"}\n" * 100000
    with pytest.raises(FormatError) as info:
        read_xfile_bytes(data)
    assert "nested deeper" in str(info.value) and info.value.line == 258


def test_unknown_objects_nest_deeply_without_recursion():
    data = b"xof 0303txt 0032\nThing {\n" + b"Sub {\n" * 50000 + b"}\n" * 50001
    xf = read_xfile_bytes(data)
    assert xf.warnings == ["skipped 1 unknown 'Thing' object(s)"]


def test_reference_cycle():
    data = b"xof 0303txt 0032\n\nFrame A { Frame B { { A } } }\n"
    with pytest.raises(FormatError, match="contains itself") as info:
        read_xfile_bytes(data)
    assert info.value.line == 3


@pytest.mark.parametrize("body, expect, line", [
    (b"Mesh m {\n3;\n0;0;0;,1;0;0;,\nnan;1;0;;\n1;\n3;0,1,2;;\n}", "vertex 2 is not finite", 5),
    (b"Mesh m {\n3;\n0;0;0;,1;0;0;,\n1.#QNAN0;1;0;;\n1;\n3;0,1,2;;\n}", "vertex 2 is not finite", 5),
    (b"Mesh m {\n3;\n0;0;0;,1;0;0;,0;1;0;;\n2;\n3;0,1,2;,\n3;0,2,3;;\n}", "face 1 uses vertex 3", 7),
    (b"Mesh m {\n3;\n0;0;0;,1;0;0;,0;1;0;;\n1;\n3;0,1,2;;\nMeshNormals {\n1;\n0;0;1;;\n1;\n"
     b"3;0,0,1;;\n}\n}", "MeshNormals: faces: face 0 uses normal 1", 11),
    (b"Mesh m {\n3;\n0;0;0;,1;0;0;,0;1;0;;\n1;\n3;0,1,2;;\nMeshMaterialList {\n1;\n1;\n"
     b"1;;\n}\n}", "face 0 uses material 1", 10),
    (b"Mesh m {\n3;\n0;0;0;,1;0;0;,0;1;0;;\n1;\n3;0,1,2;;\nMeshTextureCoords {\n2;\n0;0;,1;1;;\n}\n}",
     "2 texture coordinates for 3 vertices", 8),
    (b"Mesh m {\n3;\n0;0;0;,1;0;0;,0;1;0;;\n1;\n3;0,1,2;;\nMeshVertexColors {\n1;\n5;1;1;1;1;;\n}\n}",
     "names vertex 5", 9),
    (b"Mesh m {\n3;\n0;0;0;,1;0;0;,0;1;0;;\n1;\n3;0,1,2;;\n", "missing '}'", 6),
    (b"Frame {\nFrameTransformMatrix {\n1,0,0,0,\n0,1,0,0,0,0,1,0,0,0,0;;\n}\n}", "found 15 then '}'", 6),
    (b"Frame f { 12 }\n7;", "unexpected '7' at top level", 3),   # (a '}' closing nothing is a warning)
    (b"AnimationSet {\nAnimation {\nAnimationKey {\n0;\n2;\n0;4;1,0,0,0;;,\n5;3;1,0,0;;;\n}\n}\n}",
     "key 1 has 3 values, key type 0 needs 4", 8),
])
def test_bad_content_names_object_and_line(body, expect, line):
    with pytest.raises(FormatError) as info:
        read_xfile_bytes(b"xof 0303txt 0032\n" + body, "bad.x")
    assert expect in str(info.value)
    assert info.value.line == line, str(info.value)


@pytest.mark.parametrize("data, expect", [
    (b"", "no 'xof ' signature"),
    (b"PK\x03\x04 not an x file at all", "no 'xof ' signature"),
    (b"xof 0303abc 0032 ", "unsupported .X header"),
    (b"xof 0303txt 0016 ", "unsupported .X header"),
    (b"xof 0303bzip0032", "uncompressed-size"),
])
def test_bad_headers(data, expect):
    with pytest.raises(FormatError, match=expect):
        read_xfile_bytes(data)


def test_header_only_file_is_empty():
    xf = read_xfile_bytes(b"xof 0303txt 0032\n")
    assert xf.frames == [] and xf.meshes == [] and xf.animation_sets == []


def test_missing_file(tmp_path):
    with pytest.raises(FormatError, match="cannot read"):
        read_xfile(tmp_path / "nope.x")
