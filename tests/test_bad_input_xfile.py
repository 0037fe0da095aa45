# SPDX-License-Identifier: GPL-3.0-or-later
"""Inputs built on purpose to hurt the .X reader (reference diamonds, deep
reference chains, huge counts and indices, MSZIP bombs, non-finite numbers,
megabyte names): each is refused quickly with a FormatError naming the file
and the line / byte offset, and nothing else ever escapes. Blemishes a real
file may hold (UVs, normals or colours that are not finite, a key time no
tick can be) cost a warning naming the line instead (more in
``test_bad_input_xfile_blemishes.py``)."""
from __future__ import annotations

import struct
import tracemalloc
import zlib

import pytest
from bad_input import BIN, IDENTITY, TRI, TXT, binary_xfile, chain, diamond, mszip_bomb, structural_attacks
from work_bounds import bounded
from xfile_compare import all_meshes

from legacy_skin_io.io.errors import FormatError
from legacy_skin_io.io.xfile import key_tables, limits, mszip, read_xfile_bytes


def _budget(data: bytes) -> float:
    """Calls a parse of ``data`` may make: linear in its size (the structural
    attacks take up to 16 per byte, a compressed chain of references), so
    that work quadratic in the size of a large input fails."""
    return 20 * len(data) + 200_000


def _error(data: bytes, name: str = "h.x") -> FormatError:
    with bounded(calls=_budget(data)), pytest.raises(FormatError) as info:
        read_xfile_bytes(data, name)
    err = info.value
    assert "\n" not in str(err) and str(err).startswith(name)
    return err


def _small(data: bytes, megabytes: float = 32.0) -> FormatError:
    """The memory a refusal takes: a few MB at most (such files once took gigabytes)."""
    tracemalloc.start()
    try:
        with pytest.raises(FormatError) as info:
            read_xfile_bytes(data, "h.x")
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < megabytes * 1e6, f"peak {peak} bytes"
    return info.value


def _at_line(data: bytes, line: int, expect: str) -> FormatError:
    err = _error(data)
    assert expect in str(err), str(err)
    assert err.line == line and f"h.x:{line}:" in str(err), str(err)
    return err


def _at_offset(data: bytes, offset: int, expect: str) -> FormatError:
    err = _error(data)
    assert expect in str(err), str(err)
    assert err.offset == offset and f"(byte offset {offset})" in str(err), str(err)
    return err


def _offset_of(data: bytes, needle: bytes, nth: int = 0) -> int:
    at = -1
    for _ in range(nth + 1):
        at = data.index(needle, at + 1)
    return at


# -- 1. frame references: diamonds, chains, cycles -----------------------------
def test_reference_diamond_is_refused_at_the_second_reference():
    # 41 lines that would expand to 2^40 frames.
    _at_line(diamond(40), 3, "frame 'F0' is already a child of Frame 'F1'")
    assert _small(diamond(40), 1).line == 3
    # The second reference on its own line is the one named.
    data = TXT + b"Frame A {}\nFrame B {\n{ A }\n}\nFrame C {\n{ A }\n}\n"
    _at_line(data, 7, "Frame 'C': reference { 'A' }: frame 'A' is already a child of Frame 'B'")
    # A nested frame is already a child: referencing it elsewhere is a second parent.
    _at_line(TXT + b"Frame A {\nFrame B {}\n}\nFrame C {\n{ B }\n}\n", 6, "already a child of Frame 'A'")


def test_reference_diamond_binary():
    data = binary_xfile(b"Frame", b"F0", "{", "}",
                b"Frame", b"F1", "{", "{", b"F0", "}", "{", b"F0", "}", "}")
    second = _offset_of(data, struct.pack("<H", 10) + struct.pack("<HI", 1, 2) + b"F0", 1)
    _at_offset(data, second, "already a child of Frame 'F1'")


def test_a_single_reference_still_moves_a_top_level_frame():
    xf = read_xfile_bytes(TXT + b"Frame B {}\nFrame A { { B } }\n")
    assert [f.name for f in xf.frames] == ["A"]
    assert [f.name for f in xf.all_frames()] == ["A", "B"]


def test_reference_chain_of_10000_parses_in_linear_work():
    n = limits.MAX_FRAME_DEPTH
    with bounded(calls=200 * n):             # ~80 per frame; resolving the chain per frame: ~n per frame
        xf = read_xfile_bytes(chain(n))
    assert [f.name for f in xf.frames] == [f"F{n - 1}"]
    with bounded(calls=20 * n):              # 5 per frame
        assert sum(1 for _ in xf.all_frames()) == n


def test_reference_chain_deeper_than_the_limit():
    # 10,001 levels: the frame at level 10,001 is F0, linked by "{ F0 }" on line 3.
    _at_line(chain(limits.MAX_FRAME_DEPTH + 1), 3, "Frame 'F0' lies 10001 levels deep")
    # 20,000 levels (past the 256-level nesting limit): refused at the reference that reaches
    # level 10,001, deep in the file (the root is the last frame), not at the first or the last.
    _at_line(chain(20_000), 10_002, "Frame 'F9999' lies 10001 levels deep")


def test_too_many_frames(monkeypatch):
    monkeypatch.setattr(limits, "MAX_FRAMES", 1000)
    data = TXT + b"Frame {}\n" * (limits.MAX_FRAMES + 1)
    _at_line(data, limits.MAX_FRAMES + 2, f"more than {limits.MAX_FRAMES} frames")


def test_reference_cycles():
    _at_line(TXT + b"Frame A {\n{ A }\n}\n", 3, "frame 'A' contains itself through a reference")
    _at_line(TXT + b"Frame A {\n{ B }\n}\nFrame B {\n{ A }\n}\n", 3, "contains itself")
    _at_line(TXT + b"Frame A {\nFrame B {\nFrame C {\n{ A }\n}\n}\n}\n", 5, "frame 'A' contains itself")


def test_mesh_instances_are_bounded(monkeypatch):
    monkeypatch.setattr(limits, "MAX_INSTANCED", 60)
    mesh = TXT + b"Mesh M {\n" + TRI + b"}\n"  # 3 vertices + 3 corners per instance
    ok = read_xfile_bytes(mesh + b"Frame A {\n" + b"{ M }\n" * 11 + b"}\n")
    assert len(list(all_meshes(ok))) == 11 and ok.meshes == []
    _at_line(mesh + b"Frame A {\n" + b"{ M }\n" * 12 + b"}\n", 20, "mesh instances add more than 60")


# -- 2. counts and indices -------------------------------------------------------
MATERIAL = b"Material {\n1;1;1;1;;\n0;\n0;0;0;;\n0;0;0;;\n}\n"


@pytest.mark.parametrize("count, index, expect", [
    (b"4294967296", b"4294967295", "material count 4294967296: more than 32767 materials"),
    (b"32768", b"0", "material count 32768: more than 32767 materials"),
    (b"100", b"99", "material count 100: only"),  # 300 tokens needed, far fewer left
])
def test_material_count_is_checked_before_padding(count, index, expect):
    data = (TXT + b"Mesh m {\n" + TRI + b"MeshMaterialList {\n" + count + b";\n1;\n"
            + index + b";;\n" + MATERIAL + b"}\n}\n")
    _at_line(data, 8, expect)
    assert _small(data, 1).line == 8


def test_material_index_past_the_list():
    data = (TXT + b"Mesh m {\n" + TRI + b"MeshMaterialList {\n1;\n1;\n4294967295;;\n"
            + MATERIAL + b"}\n}\n")
    _at_line(data, 10, "face 0 uses material 4294967295, but the list declares 1")


def test_material_padding_is_bounded_by_the_object_budget(monkeypatch):
    # Declared 20 materials, holds 1, a face uses the 20th: padded with defaults...
    filler = b"Filler {\n" + b"0 " * 100 + b"\n}\n"
    data = (TXT + b"Mesh m {\n" + TRI + b"MeshMaterialList {\n20;\n1;\n19;;\n" + MATERIAL
            + b"}\n}\n" + filler)
    xf = read_xfile_bytes(data)
    assert len(xf.meshes[0].materials) == 20
    assert "declares 20 materials, holds 1" in xf.warnings[0]
    # ... but padding counts against MAX_OBJECTS (repeated lists cannot pad millions).
    monkeypatch.setattr(limits, "MAX_OBJECTS", 10)
    _at_line(data, 8, "more than 10 objects")


@pytest.mark.parametrize("body, line, expect", [
    (b"Mesh m {\n4000000000;\n0;0;0;;\n}\n", 3, "vertex count 4000000000 needs"),
    (b"Mesh m {\n3;\n0;0;0;,1;0;0;,0;1;0;;\n4294967295;\n3;0,1,2;;\n}\n", 5, "face count 4294967295 needs"),
    (b"Mesh m {\n3;\n0;0;0;,1;0;0;,0;1;0;;\n2;\n3;0,1,2;,\n4294967295;0,1,2;;\n}\n", 7,
     "face 1 claims 4294967295 indices"),
    (b"Mesh m {\n" + TRI + b"MeshNormals {\n4294967295;\n0;0;1;;\n}\n}\n", 8, "normal count 4294967295 needs"),
    (b"Mesh m {\n" + TRI + b"MeshTextureCoords {\n4294967295;\n0;0;;\n}\n}\n", 8,
     "count 4294967295 needs"),
    (b"Mesh m {\n" + TRI + b"MeshVertexColors {\n4294967295;\n0;1;1;1;1;;\n}\n}\n", 8,
     "count 4294967295 needs"),
    (b"Mesh m {\n" + TRI + b"MeshMaterialList {\n1;\n4294967295;\n0;;\n}\n}\n", 9,
     "face index count 4294967295 needs"),
    (b'Mesh m {\n' + TRI + b'SkinWeights {\n"b";\n4294967295;\n0;\n1;\n' + IDENTITY + b'\n}\n}\n', 9,
     "weight count 4294967295 needs"),
    (b"Mesh m {\n" + TRI + b"DeclData {\n4294967295;\n2;0;3;0;;\n0;\n}\n}\n", 8, "element count 4294967295 needs"),
    (b"Mesh m {\n" + TRI + b"DeclData {\n1;\n2;0;3;0;;\n4294967295;\n0;\n}\n}\n", 10, "DWORD count 4294967295 needs"),
    (b"Mesh m {\n" + TRI + b"FVFData {\n258;\n4294967295;\n0;\n}\n}\n", 9, "DWORD count 4294967295 needs"),
    (b"AnimationSet {\nAnimation {\nAnimationKey {\n0;\n4294967295;\n0;4;1,0,0,0;;;\n}\n}\n}\n", 6,
     "key count 4294967295 needs"),
    (b"AnimationSet {\nAnimation {\nAnimationKey {\n0;\n2;\n0;4;1,0,0,0;;,\n1;4294967295;1,0,0,0;;;\n}\n}\n}\n",
     8, "key 1 has 4294967295 values"),
    (b"AnimTicksPerSecond {\n-1;\n}\n", 3, "AnimTicksPerSecond -1 is not a DWORD"),
    (b"AnimTicksPerSecond {\n4294967296;\n}\n", 3, "AnimTicksPerSecond 4294967296 is not a DWORD"),
])
def test_huge_counts_are_refused_at_the_count(body, line, expect):
    _at_line(TXT + body, line, expect)


def test_huge_binary_counts():
    # A material count of 4e9 in a binary file: at the count's byte offset.
    data = binary_xfile(b"Mesh", "{", ("i", [3]), ("f", [0, 0, 0, 1, 0, 0, 0, 1, 0]), ("i", [1, 3, 0, 1, 2]),
                b"MeshMaterialList", "{", ("i", [4000000000, 1, 0]), "}", "}")
    count = _offset_of(data, struct.pack("<HI", 6, 3) + struct.pack("<I", 4000000000)) + 6
    _at_offset(data, count, "material count 4000000000: more than 32767")
    # A key time of 2^31 ticks in a binary file: that key is skipped, the warning names the time's offset.
    data = binary_xfile(b"AnimationSet", "{", b"Animation", "{", b"AnimationKey", "{",
                ("i", [2, 1, 2 ** 31, 3]), ("f", [0, 0, 0]), "}", "}", "}")
    time_at = _offset_of(data, struct.pack("<I", 2 ** 31))
    xf = read_xfile_bytes(data)
    assert len(xf.animation_sets[0].animations[0].keys[0].times) == 0
    assert xf.warnings == [f"1 animation key with a time outside [0, 2147483648) ticks skipped (no time of the "
                           f"timeline to place it at): the first at offset {time_at} (AnimationSet: Animation: "
                           f"AnimationKey, key 0, time 2147483648)"]


# -- 3. MSZIP bombs ----------------------------------------------------------------
def test_mszip_bomb_is_refused_before_inflating():
    # 4 GB from a ~4 MB file (such a file took 4 GB once): refused at the block whose
    # running total passes MAX_RATIO x the file size, before anything is inflated.
    data, head, block = mszip_bomb(131071)
    limit = mszip.allowance(len(data))
    assert limit == mszip.MAX_RATIO * len(data)
    k = limit // mszip.BLOCK_SIZE  # the first block past the limit
    _at_offset(data, 20 + head + (k - 1) * block, f"MSZIP block {k}: the blocks announce more than")
    assert _small(data, 1).offset == 20 + head + (k - 1) * block


def test_mszip_ceiling(monkeypatch):
    monkeypatch.setattr(mszip, "MAX_INFLATED", 2 * mszip.BLOCK_SIZE)
    monkeypatch.setattr(mszip, "MIN_ALLOWANCE", 0)
    monkeypatch.setattr(mszip, "MAX_RATIO", 10 ** 6)
    data, head, block = mszip_bomb(3, b"bzip")
    _at_offset(data, 20 + head + block, "MSZIP block 2: the blocks announce more than 65536")


def test_mszip_block_larger_than_32k():
    body = b"Frame {}\n" * 4000  # 36000 bytes in one block
    packed = zlib.compressobj(6, zlib.DEFLATED, -15)
    packed = packed.compress(body) + packed.flush()
    data = (b"xof 0303tzip0032" + struct.pack("<I", len(body) + 16)
            + struct.pack("<HH", len(body), len(packed) + 2) + b"CK" + packed)
    _at_offset(data, 20, "MSZIP block 0: announces 36000 bytes uncompressed, a block holds at most 32768")


def test_mszip_small_files_still_read():
    data, _head, _block = mszip_bomb(8)  # 256 KiB of spaces: an empty file, within MIN_ALLOWANCE
    assert read_xfile_bytes(data).frames == []


# -- 4. non-finite numbers -----------------------------------------------------------
MATRIX_ROWS = b"1,0,0,0,\n0,1,0,0,\n0,0,1,0,\n0,0,%s,1;;\n"


@pytest.mark.parametrize("value, problem", [
    (b"nan", "is not finite"), (b"inf", "is not finite"), (b"-1.#INF00", "is not finite"),
    (b"1.#QNAN0", "is not finite"), (b"1e39", "is beyond the 32-bit float range"),
    (b"-4e38", "is beyond the 32-bit float range"),
])
def test_non_finite_values_are_refused_where_they_are(value, problem):
    v = value
    cases = [
        # (file body, line of the bad value, expected text)
        (b"Frame f {\nFrameTransformMatrix {\n" + MATRIX_ROWS % v + b"}\n}\n", 7,
         "FrameTransformMatrix: value 14 " + problem),
        (b"Mesh m {\n3;\n0;0;0;,\n1;0;0;,\n0;" + v + b";0;;\n1;\n3;0,1,2;;\n}\n", 6, "vertex 2 " + problem),
        (b"Mesh m {\n" + TRI + b"MeshMaterialList {\n1;\n1;\n0;;\nMaterial {\n1;1;1;1;;\n" + v
         + b";\n0;0;0;;\n0;0;0;;\n}\n}\n}\n", 13, "Material: value 4 " + problem),
        (b'Mesh m {\n' + TRI + b'SkinWeights {\n"b";\n2;\n0,1;\n1.0,\n' + v + b';\n' + IDENTITY
         + b'\n}\n}\n', 12, "SkinWeights 'b': weight 1 " + problem),
        (b'Mesh m {\n' + TRI + b'SkinWeights {\n"b";\n1;\n0;\n1.0;\n' + MATRIX_ROWS % v + b'}\n}\n', 15,
         "matrixOffset: value 14 " + problem),
        (b"AnimationSet {\nAnimation {\nAnimationKey {\n2;\n2;\n0;3;0,0,0;;,\n10;3;0,\n" + v
         + b",0;;;\n}\n}\n}\n", 9, "key 1 value 1 " + problem),
        (b"AnimationSet {\nAnimation {\nAnimationKey {\n4;\n1;\n0;16;" + MATRIX_ROWS % v + b";\n}\n}\n}\n",
         10, "key 0 value 14 " + problem),
    ]
    for body, line, expect in cases:
        _at_line(TXT + body, line, expect)


@pytest.mark.parametrize("value", [b"nan", b"1.#QNAN0", b"-1.#INF00", b"1e39", b"-4e38"])
def test_non_finite_per_vertex_data_is_set_to_0_with_a_warning_naming_its_line(value):
    """UVs, normals and colours that are not finite 32-bit floats (a blemish
    Direct3D draws through): set to 0, one warning each naming the mesh, the
    count and the line of the first."""
    v = value
    for body, expect in [
        (b"Mesh m {\n" + TRI + b"MeshNormals {\n1;\n0;0;" + v + b";;\n1;\n3;0,0,0;;\n}\n}\n",
         "Mesh 'm': MeshNormals: 1 normal value was not finite (1 normal, the first at line 9), set to 0"),
        (b"Mesh m {\n" + TRI + b"MeshTextureCoords {\n3;\n0;0;,\n1;0;,\n" + v + b";1;;\n}\n}\n",
         "Mesh 'm': MeshTextureCoords: 1 texture coordinate value was not finite (1 vertex, the first at line 11), "
         "set to 0"),
        (b"Mesh m {\n" + TRI + b"MeshVertexColors {\n1;\n0;1;" + v + b";1;1;;\n}\n}\n",
         "Mesh 'm': MeshVertexColors: 1 colour value was not finite (1 vertex, the first at line 9), set to 0"),
    ]:
        with bounded(calls=_budget(TXT + body)):
            xf = read_xfile_bytes(TXT + body)
        assert xf.warnings == [expect]
        m = xf.meshes[0]
        data = [a for a in (m.normals, m.uvs, m.vertex_colors) if a is not None]
        assert len(data) == 1 and 0.0 in data[0] and (abs(data[0]) <= 1.0).all()


@pytest.mark.parametrize("time_value", [b"-1", b"4294967295", b"2147483648", b"1e300", b"nan", b"inf", b"-0.5"])
def test_keys_whose_times_cannot_be_placed_are_skipped_naming_the_line(time_value):
    """A key time outside [0, 2^31) ticks (-1: a DWORD 0xFFFFFFFF printed
    signed; its unsigned spelling; anything else no tick can be): that key is
    skipped, the others kept, one warning names the line and the count."""
    body = (b"AnimationSet {\nAnimation {\n{ A }\nAnimationKey {\n0;\n3;\n0;4;1,0,0,0;;,\n" + time_value
            + b";4;1,0,0,0;;,\n20;4;0,1,0,0;;;\n}\n}\n}\n")
    xf = read_xfile_bytes(TXT + body)
    assert xf.animation_sets[0].animations[0].keys[0].times.tolist() == [0.0, 20.0]
    assert len(xf.warnings) == 1 and "1 animation key with a time outside [0, 2147483648) ticks skipped" in \
        xf.warnings[0] and "the first at line 9 (AnimationSet: Animation: AnimationKey, key 1, time " in xf.warnings[0]
    # The slow path (a key with the wrong value count first) does the same.
    body = (b"AnimationSet {\nAnimation {\n{ A }\nAnimationKey {\n2;\n2;\n" + time_value
            + b";3;1,0,0;;,\n5;3;1,0,0;;;\n}\n}\n}\n")
    xf = read_xfile_bytes(TXT + body)
    assert xf.animation_sets[0].animations[0].keys[0].times.tolist() == [5.0]
    assert len(xf.warnings) == 1 and "the first at line 8 (AnimationSet: Animation: AnimationKey, key 0" in \
        xf.warnings[0]


@pytest.mark.parametrize("later", [
    b"}\n",                                                         # stray brace at top level
    b"AnimationSet {\nAnimation {\nAnimationKey {\n7;\n1;\n0;1;0;;;\n}\n}\n}\n",  # unknown key type
    b"AnimationSet {\nAnimation {\nAnimationKey {\n2;\n1;\n0;3;1e5,0,0;;;\n}\n}\n}\n"
    b"Frame A {\n{ A }\n}\n",                                       # a reference cycle
    b"Frame F {\nFrameTransformMatrix {\n1,0;;\n}\n}\n",            # too few numbers
])
def test_a_bad_key_is_reported_before_later_errors(later):
    # Plain key tables are checked in bulk after the whole file is read; the
    # first bad key must still be the error, as if it had been checked at once.
    body = (b"AnimationSet {\nAnimation {\nAnimationKey {\n0;\n2;\n0;4;1,0,0,0;;,\n5"
            b";4;nan,0,0,0;;;\n}\n}\n}\n")
    _at_line(TXT + body + later, 8, "key 1 value 0 is not finite")


def test_a_bad_binary_key_is_reported_before_later_errors():
    import struct as st

    def name(s):
        return st.pack("<HI", 1, len(s)) + s

    def ints(*v):
        return st.pack(f"<HI{len(v)}I", 6, len(v), *v)

    def floats(*v):
        return st.pack(f"<HI{len(v)}f", 7, len(v), *v)
    brace, close = st.pack("<H", 10), st.pack("<H", 11)
    key = (name(b"AnimationKey") + brace + ints(2, 1) + ints(0, 3)
           + floats(1, float("nan"), 0) + close)
    data = (BIN + name(b"AnimationSet") + brace + name(b"Animation") + brace + key + close + close
            + close)  # a stray '}' at top level
    err = _error(data)
    assert "key 0 value 1 is not finite" in str(err)


def test_key_time_limit_is_exclusive():
    body = (b"AnimationSet {\nAnimation {\n{ A }\nAnimationKey {\n2;\n2;\n0;3;0,0,0;;,\n"
            b"2147483647;3;0,0,0;;;\n}\n}\n}\n")
    xf = read_xfile_bytes(TXT + body)
    assert xf.animation_sets[0].animations[0].keys[0].times[-1] == key_tables.MAX_KEY_TIME - 1


def _decl_mesh(dwords: list[int]) -> bytes:
    """A one-triangle mesh whose DeclData holds a FLOAT3 NORMAL0 stream."""
    data = b",\n".join(str(d).encode() for d in dwords)
    return (TXT + b"Mesh m {\n" + TRI + b"DeclData {\n1;\n2;0;3;0;;\n" + str(len(dwords)).encode()
            + b";\n" + data + b";;\n}\n}\n")


def test_decldata_normals_that_are_not_finite_are_set_to_0():
    one = struct.unpack("<I", struct.pack("<f", 1.0))[0]
    good = [0, 0, one] * 3
    assert read_xfile_bytes(_decl_mesh(good)).meshes[0].normals.shape == (3, 3)
    bad = list(good)
    bad[7] = 0x7FC00000  # vertex 2, y: NaN
    xf = read_xfile_bytes(_decl_mesh(bad))
    assert xf.warnings == ["Mesh 'm': DeclData NORMAL0: 1 normal value was not finite (1 vertex, the first at "
                           "line 18), set to 0"]
    assert xf.meshes[0].normals.tolist() == [[0, 0, 1]] * 3


def test_fvfdata_uvs_that_are_not_finite_are_set_to_0():
    # FVF 0x100: one TEXCOORD0 pair per vertex.
    inf = 0x7F800000
    body = (b"Mesh m {\n" + TRI + b"FVFData {\n256;\n6;\n0,0,\n0,0,\n0,\n" + str(inf).encode()
            + b";;\n}\n}\n")
    xf = read_xfile_bytes(TXT + body)
    assert xf.warnings == ["Mesh 'm': FVFData TEXCOORD0: 1 texture coordinate value was not finite (1 vertex, the "
                           "first at line 13), set to 0"]
    assert xf.meshes[0].uvs.tolist() == [[0, 0], [0, 0], [0, 0]]


# -- 5. hostile strings ----------------------------------------------------------------
BIG = b"x" * 3_000_000


@pytest.mark.parametrize("body, line", [
    (b"Frame " + BIG + b" {\n}\n", 2),
    (b"\nMesh " + BIG + b" {\n" + TRI + b"}\n", 3),
    (b"Material " + BIG + b" {\n1;1;1;1;;0;0;0;0;;0;0;0;;\n}\n", 2),
    (b'Material m {\n1;1;1;1;;0;0;0;0;;0;0;0;;\nTextureFilename {\n"' + BIG + b'";\n}\n}\n', 5),
    (b'Mesh m {\n' + TRI + b'SkinWeights {\n"' + BIG + b'";\n0;\n' + IDENTITY + b'\n}\n}\n', 8),
    (b"Frame f {\n{ " + BIG + b" }\n}\n", 3),
    (b"AnimationSet " + BIG + b" {\n}\n", 2),
    (b"\n\n" + BIG + b" {\n}\n", 4),  # an identifier
])
def test_megabyte_names_are_refused(body, line):
    err = _at_line(TXT + body, line, f"(the limit is {limits.MAX_NAME_LENGTH})")
    assert len(str(err)) < 300


def test_megabyte_binary_name():
    data = binary_xfile(b"Frame", b"y" * 3_000_000, "{", "}")
    _at_offset(data, 16 + 2 + 5 + 4, "name of 3000000 characters")


def test_names_up_to_the_limit_are_kept():
    name = b"n" * limits.MAX_NAME_LENGTH
    xf = read_xfile_bytes(TXT + b"Frame " + name + b" {}\n")
    assert xf.frames[0].name == name.decode()


def test_warnings_are_capped():
    data = TXT + b"Mesh m {\n" + TRI + b"{ x }\n" * 5000 + b"}\n"
    xf = read_xfile_bytes(data)
    assert len(xf.warnings) == limits.MAX_WARNINGS + 1
    assert xf.warnings[-1] == f"... and {5000 - limits.MAX_WARNINGS} more warning(s)"


def test_ngon_meshes_stay_linear():
    # A quad then a triangle: the all-same-size fast path fails on every mesh.
    # Were a FormatError built (and dropped) each time, its line number would
    # cost a scan of the text per mesh: quadratic in the file.
    mesh = b"Mesh {\n4;\n0;0;0;,1;0;0;,0;1;0;,1;1;0;;\n2;\n4;0,1,3,2;,\n3;0,1,2;;\n}\n"
    # ~115 calls per mesh, and no position (a line number: a scan of the text) is ever computed
    with bounded(calls=400 * 4000, watch=("position",)) as work:
        xf = read_xfile_bytes(TXT + mesh * 4000)
    assert work.named["position"] == 0
    assert len(xf.meshes) == 4000 and xf.meshes[-1].face_sizes.tolist() == [4, 3]


def test_object_budget(monkeypatch):
    monkeypatch.setattr(limits, "MAX_OBJECTS", 100)
    data = TXT + b"AnimationSet {\n" + b"Animation {\n}\n" * 100 + b"}\n"
    _at_line(data, 2 + 2 * 99 + 1, "more than 100 objects")


def test_structural_attacks_only_raise_format_errors():
    for name, data in structural_attacks():
        try:
            with bounded(calls=_budget(data)):
                read_xfile_bytes(data, "attack.x")
        except FormatError as err:
            assert err.line is not None or err.offset is not None, (name, str(err))
            assert "\n" not in str(err) and len(str(err)) < 1000, name

