# SPDX-License-Identifier: GPL-3.0-or-later
"""Format variants and the syntax quirks of real exporters."""
from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest
from xfile_compare import diff_xfiles

from legacy_skin_io.io.errors import FormatError
from legacy_skin_io.io.xfile import read_xfile, read_xfile_bytes, write_xfile_bytes

X = Path(__file__).resolve().parent / "data" / "x"


def test_cube_text_binary_compressed_are_equal():
    text = read_xfile(X / "assimp/test_cube_text.x")
    binary = read_xfile(X / "assimp/test_cube_binary.x")
    compressed = read_xfile(X / "assimp/test_cube_compressed.x")
    assert (text.storage, binary.storage, compressed.storage) == ("txt", "bin", "bzip")
    # The text file prints 6 decimals; the binary ones hold the float32 values.
    assert diff_xfiles(text, binary, rtol=0, atol=5e-7) == []
    assert diff_xfiles(binary, compressed) == []  # same data, bit for bit


QUIRKY = b"""xof 0302txt 0032
// a comment { with a brace
# another comment
template Mesh {
 <3D82AB44-62DA-11cf-AB39-0020AF71E433>
 DWORD nVertices;
 array Vector vertices[nVertices];
 [...]
}
Header { 1; 0; 1; }
Material Shiny {1.0;0.5;0.25;1.0;; 8.0; 1;1;1;; 0;0;0;;
 TextureFileName { "tex\\\\skin.png"; }
}
Mesh loose { <00000000-0000-0000-0000-000000000000>
 5;
 0;0;0;, 1;0;0;, 1;1;0;, 0;1;0; ,0.5;1.5;0;;
 2;
 4;0,1,2,3;,
 3;2,4,3;;
 MeshMaterialList { 1; 1; 0;; { Shiny } }
 MeshTextureCoords { 5; 0;0;,1;0;,1;1;,0;1;,0.5;0.5;; }
 VertexDuplicationIndices { 5; 5; 0,1,2,3,4; }
 Unknown1 { 1; Nested { 2; { ref } } }
}
Frame Root {FrameTransformMatrix{1,0,0,0,0,1,0,0,0,0,1,0,10,20,30,1;;}
 Frame Child { { loose } }
 { Other }
 Unknown1 { }
}
Frame Other { Unknown2 {} }
AnimTicksPerSecond { 30; }
AnimationSet Walk {
 Animation A1 { {Child}
  AnimationOptions { 1; 0; }
  AnimationKey { 2; 2; 0; 3; 1.0, 2.0, 3.0;;, 10;3;4,5,6;;; }
 }
}
"""


def test_quirky_text():
    xf = read_xfile_bytes(QUIRKY, "quirky.x")
    assert xf.version == "0302" and xf.anim_ticks_per_second == 30
    # "Other" is referenced from Root, so it is Root's child and no longer a root.
    assert [f.name for f in xf.frames] == ["Root"]
    root = xf.frames[0]
    assert [c.name for c in root.children] == ["Child", "Other"]
    assert np.array_equal(root.matrix[3], [10, 20, 30, 1])  # row-major, as stored
    # The top-level mesh is referenced from Child: it moves there.
    assert xf.meshes == []
    mesh = root.children[0].meshes[0]
    assert mesh.name == "loose"
    assert mesh.face_sizes.tolist() == [4, 3]
    assert mesh.face_indices.tolist() == [0, 1, 2, 3, 2, 4, 3]
    assert mesh.positions[4].tolist() == [0.5, 1.5, 0.0]
    # One material index for two faces: replicated.
    assert mesh.material_indices.tolist() == [0, 0]
    mat = mesh.materials[0]
    assert mat.name == "Shiny" and mat.texture == "tex\\skin.png"
    assert mat.face_color.tolist() == [1.0, 0.5, 0.25, 1.0] and mat.power == 8.0
    assert mesh.uvs[4].tolist() == [0.5, 0.5]
    anim = xf.animation_sets[0].animations[0]
    assert (anim.name, anim.frame_name, anim.open_closed) == ("A1", "Child", 1)
    key = anim.keys[0]
    assert key.key_type == 2
    assert key.times.tolist() == [0, 10]
    assert key.values.tolist() == [[1, 2, 3], [4, 5, 6]]
    assert "skipped 3 unknown 'Unknown1' object(s)" not in xf.warnings
    assert "skipped 2 unknown 'Unknown1' object(s)" in xf.warnings
    assert "skipped 1 unknown 'Unknown2' object(s)" in xf.warnings


def test_known_templates_are_notes_and_unknown_ones_warnings():
    """Objects of a template the file declares, or of one DirectX defines
    that holds nothing to import (KeyValuePair, EffectInstance, the Content
    Tools' FrameCamera...), are skipped with a note (the console); objects
    of a template nobody declared are a warning."""
    data = (b"xof 0303txt 0032\n"
            b"template Custom { <11111111-2222-3333-4444-555555555555> DWORD n; }\n"
            b"Custom c1 { 1; }\nCustom c2 { 2; }\n"
            b"KeyValuePair { \"key\"; \"value\"; }\n"
            b"Stranger { 3; }\n"
            b"Frame f { FrameCamera { 1; } }\n")
    xf = read_xfile_bytes(data, "templates.x")
    assert list(xf.warnings) == ["skipped 1 unknown 'Stranger' object(s)"]
    notes = xf.warnings.notes
    for ident, count in (("Custom", 2), ("KeyValuePair", 1), ("FrameCamera", 1)):
        assert f"skipped {count} '{ident}' object(s) (nothing in them is imported)" in notes, notes


def test_quirky_text_survives_all_formats():
    xf = read_xfile_bytes(QUIRKY)
    for storage in ("text", "binary", "text_compressed", "binary_compressed"):
        for size in (32, 64):
            back = read_xfile_bytes(write_xfile_bytes(xf, storage, size))
            assert diff_xfiles(xf, back) == [], (storage, size)


def _w(tok):
    return struct.pack("<H", tok)


def _name(s, tok=1):
    raw = s.encode()
    return struct.pack("<HI", tok, len(raw)) + raw


def _ints(*vals):
    return struct.pack(f"<HI{len(vals)}I", 6, len(vals), *vals)


def _floats(*vals, size=4):
    code = "f" if size == 4 else "d"
    return struct.pack(f"<HI{len(vals)}{code}", 7, len(vals), *vals)


def _binary_triangle(size=4):
    """A hand-built binary file: template, GUID, a lone INTEGER token, vertex and
    face lists split at odd places, a STRING ended by ',', a reference."""
    body = b"".join([
        _name("template") + _name("Foo") + _w(10) + _w(5) + b"\x11" * 16 + _name("DWORD", 1)
        + _w(41) + _name("x") + _w(20) + _w(11),
        _name("Frame") + _name("F") + _w(10),
        _name("Mesh") + _name("tri") + _w(10) + _w(5) + b"\x22" * 16,
        struct.pack("<HI", 3, 3),                          # INTEGER token: 3 vertices
        _floats(0, 0, 0, 1, size=size) + _w(20) + _floats(0, 0, 0, 1, 0, size=size),
        _ints(1, 3) + _ints(0, 1) + _w(19) + _ints(2),     # 1 face split over 3 lists
        _name("MeshMaterialList") + _w(10) + _ints(1, 1, 0),
        _name("Material") + _name("m") + _w(10) + _floats(*([0.5] * 11), size=size),
        _name("TextureFilename") + _w(10) + _name("a.png", 2) + _w(19) + _w(11),
        _w(11) + _w(11),
        _name("SkinWeights") + _w(10) + _name("F", 2) + _w(20) + _ints(2, 0, 2)
        + _floats(0.25, 0.75, *np.eye(4).ravel().tolist(), size=size) + _w(11),
        _w(11),  # Mesh
        _w(11),  # Frame
        _name("AnimationSet") + _w(10) + _name("Animation") + _w(10)
        + _w(10) + _name("F") + _w(11)
        + _name("AnimationKey") + _w(10) + _ints(0, 1) + _ints(0, 4)
        + _floats(1, 0, 0, 0, size=size) + _w(11) + _w(11) + _w(11),
    ])
    header = b"xof 0303bin " + (b"0032" if size == 4 else b"0064")
    return header + body


@pytest.mark.parametrize("size", [4, 8])
def test_handmade_binary(size):
    xf = read_xfile_bytes(_binary_triangle(size))
    assert xf.storage == "bin" and xf.float_size == size * 8
    frame = xf.frames[0]
    mesh = frame.meshes[0]
    assert mesh.name == "tri"
    assert mesh.positions.tolist() == [[0, 0, 0], [1, 0, 0], [0, 1, 0]]
    assert mesh.face_sizes.tolist() == [3] and mesh.face_indices.tolist() == [0, 1, 2]
    assert mesh.materials[0].texture == "a.png"
    assert mesh.skin_weights[0].frame_name == "F"
    assert mesh.skin_weights[0].weights.tolist() == [0.25, 0.75]
    anim = xf.animation_sets[0].animations[0]
    assert anim.frame_name == "F" and anim.keys[0].values.tolist() == [[1, 0, 0, 0]]


def test_binary_error_offsets_are_file_offsets():
    data = bytearray(_binary_triangle())
    # Corrupt the face's second index list: vertex 7 does not exist.
    marker = _ints(0, 1)
    at = data.index(marker)
    data[at + 6:at + 10] = struct.pack("<I", 7)
    with pytest.raises(FormatError) as info:
        read_xfile_bytes(bytes(data), "tri.x")
    err = info.value
    assert "face 0 uses vertex 7" in str(err)
    assert err.offset == at + 6  # exactly where the bad index is stored


def test_64bit_text_written_exactly():
    tiger = read_xfile(X / "directx-sdk/tiger.x")
    data = write_xfile_bytes(tiger, "text", 64)
    assert data.startswith(b"xof 0302txt 0064")
    back = read_xfile_bytes(data)
    assert diff_xfiles(tiger, back) == []  # exact
    mesh = back.meshes[0]
    mesh.positions[0, 0] = 0.1 + 0.2  # not representable with 6 decimals
    again = read_xfile_bytes(write_xfile_bytes(back, "text", 64))
    assert again.meshes[0].positions[0, 0] == 0.1 + 0.2


def _dwords(*floats):
    return ",".join(str(v) for v in np.array(floats, dtype="<f4").view("<u4").tolist())


def test_decldata_streams_become_normals_uvs_and_extras():
    # Elements (type, method, usage, index): FLOAT3 NORMAL0, FLOAT2 TEXCOORD0, D3DCOLOR COLOR0.
    color = 0x80FF4000  # ARGB: a=0x80 r=0xFF g=0x40 b=0x00
    data = ",".join([_dwords(0, 0, 1, 0.25, 0.75), str(color),
                     _dwords(0, 1, 0, 0.5, 0.5), str(color),
                     _dwords(1, 0, 0, 1, 1), str(color)])
    text = (b"xof 0303txt 0032\nMesh { 3; 0;0;0;,1;0;0;,0;1;0;; 1; 3;0,1,2;;\n"
            b" DeclData { 3; 2;0;3;0;, 1;0;5;0;, 4;0;10;0;; 18; " + data.encode() + b"; }\n}")
    mesh = read_xfile_bytes(text).meshes[0]
    assert mesh.normals.tolist() == [[0, 0, 1], [0, 1, 0], [1, 0, 0]]
    assert np.array_equal(mesh.normal_face_indices, mesh.face_indices)
    assert mesh.uvs.tolist() == [[0.25, 0.75], [0.5, 0.5], [1, 1]]
    assert list(mesh.extra_streams) == ["COLOR0"]
    assert np.allclose(mesh.extra_streams["COLOR0"][0], [1.0, 64 / 255, 0.0, 128 / 255])


def test_fvfdata_normal_and_texcoord():
    # D3DFVF_NORMAL | D3DFVF_TEX1: per vertex 3 + 2 floats (no position in the data).
    data = ",".join([_dwords(0, 0, 1, 0.1, 0.2), _dwords(0, 0, 1, 0.3, 0.4),
                     _dwords(0, 0, 1, 0.5, 0.6)])
    text = (b"xof 0303txt 0032\nMesh { 3; 0;0;0;,1;0;0;,0;1;0;; 1; 3;0,1,2;;\n"
            b" FVFData { 272; 15; " + data.encode() + b"; }\n}")
    mesh = read_xfile_bytes(text).meshes[0]
    assert np.allclose(mesh.normals, [[0, 0, 1]] * 3)
    assert np.allclose(mesh.uvs, [[0.1, 0.2], [0.3, 0.4], [0.5, 0.6]])
    assert mesh.extra_streams == {}


def test_compressed_text_errors_give_decompressed_line():
    cube = read_xfile(X / "assimp/test_cube_text.x")
    text = write_xfile_bytes(cube, "text").replace(b"3;0,2,1;", b"3;0,2,99;")
    from legacy_skin_io.io.xfile import mszip
    data = mszip.compress(b"xof 0303tzip0032", text[16:])
    with pytest.raises(FormatError) as info:
        read_xfile_bytes(data, "c.x")
    line = text[:text.index(b"3;0,2,99;")].count(b"\n") + 1
    assert info.value.line == line  # the header is line 1 of the text either way
    assert "face 0 uses vertex 99" in str(info.value)
    assert "decompressed" in str(info.value)


def _spellings(seed: int, n: int) -> list[str]:
    """Number spellings float() accepts: exporters' "%f", shortest repr, integers,
    signs, bare dots, 15+ digits, exponents (the last two left to float())."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        x = float(rng.uniform(-1, 1) * 10.0 ** int(rng.integers(-8, 9)))
        kind = int(rng.integers(8))
        if kind == 0:
            t = "%.6f" % x
        elif kind == 1:
            t = repr(x)
        elif kind == 2:
            t = str(int(rng.integers(-10**6, 10**6)))
        elif kind == 3:
            t = "%+.*f" % (int(rng.integers(0, 17)), x)
        elif kind == 4:
            t = ("%.*f" % (int(rng.integers(1, 9)), abs(x))).lstrip("0") or "0"
        elif kind == 5:
            t = str(int(rng.integers(0, 10))) * int(rng.integers(1, 19)) + "."
        elif kind == 6:
            t = "%.*e" % (int(rng.integers(0, 9)), x)
        else:
            t = "-0" + "." + "0" * int(rng.integers(0, 6))
        out.append(t)
    return out


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_text_numbers_are_read_as_float_reads_them(seed):
    # The tokenizer converts decimals with numpy (numparse); the
    # result must be float()'s, bit for bit (-0.0 included), in any layout.
    from legacy_skin_io.io.xfile.text_tokens import TextTokens
    words = _spellings(seed, 3000)
    separators = [" ", ",", ";", ";;", "\n", ",\n ", "\t"]
    text = "".join(w + separators[k % len(separators)] for k, w in enumerate(words))
    tokens = TextTokens(b"xof 0303txt 0032\n" + text.encode(), 16)
    got = tokens.read_floats(len(words), "numbers")
    want = np.array([float(w) for w in words])
    assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize("token", ["-1.00003.0.000000", "1..2", "1-2", "+-1", "1.2.", "-.", "."])
def test_malformed_numbers_are_named(token):
    data = TXT_FRAME.replace(b"0,0,0,1;;", b"0,0," + token.encode() + b",1;;")
    with pytest.raises(FormatError) as info:
        read_xfile_bytes(data, "m.x")
    assert str(info.value) == (f"m.x:3: Frame 'F': FrameTransformMatrix: expected 16 numbers, "
                               f"found 14 then {token!r}")


TXT_FRAME = (b"xof 0303txt 0032\nFrame F {\n FrameTransformMatrix { 1,0,0,0,0,1,0,0,0,0,1,0,"
             b"0,0,0,1;; }\n}\n")


def _key_records(times_counts_values, size=4):
    """Binary AnimationKey records as D3DX writes them: [INTEGER_LIST time, n]
    [FLOAT_LIST n values] per key."""
    return b"".join(_ints(*tc) + _floats(*v, size=size) for tc, v in times_counts_values)


def _binary_key(records, nk, size=4):
    header = b"xof 0303bin " + (b"0032" if size == 4 else b"0064")
    return header + b"".join([
        _name("Frame") + _name("F") + _w(10) + _w(11),
        _name("AnimationSet") + _w(10) + _name("Animation") + _w(10) + _w(10) + _name("F") + _w(11)
        + _name("AnimationKey") + _w(10) + _ints(2, nk) + records + _w(11) + _w(11) + _w(11)])


def _same_as_measured(data, monkeypatch):
    """The reader's result (or error) equals the one it gives when every record
    run is measured exactly (binary_records.measure instead of guess)."""
    from legacy_skin_io.io.xfile import binary_records

    def outcome():
        try:
            xf = read_xfile_bytes(data, "k.x")
        except FormatError as exc:
            return str(exc)
        key = xf.animation_sets[0].animations[0].keys[0]
        return key.times.tolist(), key.values.tolist()

    fast = outcome()
    with monkeypatch.context() as m:
        m.setattr(binary_records, "guess", binary_records.measure)
        exact = outcome()
    assert fast == exact
    return fast


@pytest.mark.parametrize("size", [4, 8])
def test_binary_key_runs(size, monkeypatch):
    rows = [((10 * k, 3), (k, k + 0.5, -k)) for k in range(12)]
    times, values = _same_as_measured(_binary_key(_key_records(rows, size), 12, size), monkeypatch)
    assert times == [10 * k for k in range(12)]
    assert values == [[k, k + 0.5, -k] for k in range(12)]


def test_binary_key_run_with_an_odd_record(monkeypatch):
    # Record 5's first header starts like the others' (0x06) but its token id is
    # 0x0106: a run sized from the first bytes is too long, found so when the
    # run is decoded; the reader starts over and reports the bad token.
    rows = [((10 * k, 3), (k, k, k)) for k in range(12)]
    records = bytearray(_key_records(rows))
    length = len(records) // 12
    records[5 * length + 1] = 1
    data = _binary_key(bytes(records), 12)
    error = _same_as_measured(data, monkeypatch)
    offset = data.index(bytes(records)) + 5 * length
    assert error == f"k.x (byte offset {offset}): unknown binary token id 262"
