# SPDX-License-Identifier: GPL-3.0-or-later
"""Writer: round trips through every format, MSZIP layout, models built by hand."""
from __future__ import annotations

import struct
import zlib
from pathlib import Path

import numpy as np
import pytest
from xfile_compare import diff_xfiles

from legacy_skin_io.io.errors import FormatError
from legacy_skin_io.io.xfile import (
    XAnimation,
    XAnimationKey,
    XAnimationSet,
    XFile,
    XFrame,
    XMaterial,
    XMesh,
    XSkinWeights,
    read_xfile,
    read_xfile_bytes,
    write_xfile,
    write_xfile_bytes,
)

X = Path(__file__).resolve().parent / "data" / "x"
CORPUS = sorted(str(p.relative_to(X)) for p in X.rglob("*")
                if p.is_file() and p.suffix.lower() not in (".txt", ".md", ".png")
                and p.name not in ("malformed_skinweights_oob.x", "OV_GetNextToken"))
FLOAT32 = dict(rtol=2e-7, atol=1e-12)  # float32 rounding of the written values
STORAGE = ["text", "binary", "text_compressed", "binary_compressed"]
HEADER_CODES = {"text": b"txt ", "binary": b"bin ", "text_compressed": b"tzip",
                "binary_compressed": b"bzip"}


@pytest.fixture(scope="module", params=CORPUS)
def original(request):
    return read_xfile(X / request.param)


@pytest.mark.parametrize("storage", STORAGE)
def test_round_trip_32(original, storage):
    data = write_xfile_bytes(original, storage, 32)
    assert data[8:12] == HEADER_CODES[storage] and data[12:16] == b"0032"
    back = read_xfile_bytes(data)
    assert diff_xfiles(original, back, **FLOAT32) == []


def test_round_trip_64_is_exact(original):
    for storage in ("text", "binary_compressed"):
        back = read_xfile_bytes(write_xfile_bytes(original, storage, 64))
        assert back.float_size == 64
        assert diff_xfiles(original, back) == [], storage


def test_32bit_output_really_rounds_to_float32():
    xf = read_xfile_bytes(b"xof 0303txt 0064\nMesh { 1; 0.1;0.2;0.30000000000000004;; 0; }")
    for storage in STORAGE:
        back = read_xfile_bytes(write_xfile_bytes(xf, storage, 32))
        pos = back.meshes[0].positions[0]
        assert np.array_equal(pos.astype(np.float32), np.float32([0.1, 0.2, 0.3])), storage
        assert diff_xfiles(xf, back) != []  # not exact ...
        assert diff_xfiles(xf, back, **FLOAT32) == []  # ... but float32-close


def _blocks(data: bytes):
    """(uncompressed size, compressed payload) of each MSZIP block."""
    p, out = 20, []
    while p < len(data):
        usize, csize = struct.unpack_from("<HH", data, p)
        assert data[p + 4:p + 6] == b"CK"
        out.append((usize, data[p + 6:p + 4 + csize]))
        p += 4 + csize
    assert p == len(data)
    return out


def test_mszip_layout_and_shared_history():
    bat = read_xfile(X / "directx-sdk/bat.x")
    data = write_xfile_bytes(bat, "binary_compressed")
    blocks = _blocks(data)
    assert len(blocks) > 50
    assert all(usize <= 32768 for usize, _ in blocks)
    assert all(usize == 32768 for usize, _ in blocks[:-1])
    total = struct.unpack_from("<I", data, 16)[0]
    assert total == 16 + sum(usize for usize, _ in blocks)
    # Later blocks refer back into earlier ones: inflating them alone fails or differs.
    history = zlib.decompressobj(-15).decompress(blocks[0][1])
    second = zlib.decompressobj(-15, zdict=history).decompress(blocks[1][1])
    try:
        alone = zlib.decompressobj(-15).decompress(blocks[1][1])
    except zlib.error:
        alone = None
    assert alone != second


def test_reader_needs_shared_history_on_corpus_file():
    data = (X / "directx-sdk/bat.x").read_bytes()
    blocks = _blocks(data)
    assert len(blocks) == 106
    independent_failures = 0
    for _usize, payload in blocks[1:]:
        try:
            zlib.decompressobj(-15).decompress(payload)
        except zlib.error:
            independent_failures += 1
    assert independent_failures > 0
    assert read_xfile(X / "directx-sdk/bat.x").frames[0].name == "cube1"


def _hand_model() -> XFile:
    positions = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0], [0.5, 1.5, 0.25]])
    mesh = XMesh(
        name="Body Mesh",  # a space: the text writer must spell it as a name
        positions=positions,
        face_sizes=np.array([4, 3]), face_indices=np.array([0, 1, 2, 3, 3, 2, 4]),
        normals=np.array([[0, 0, -1.0], [0, 0, 1.0]]),
        normal_face_sizes=np.array([4, 3]), normal_face_indices=np.array([0, 0, 0, 0, 1, 1, 1]),
        uvs=np.array([[0, 0], [1, 0], [1, 1], [0, 1], [0.5, 0.75]]),
        vertex_colors=np.tile([1.0, 0.5, 0.25, 1.0], (5, 1)),
        material_indices=np.array([1, 0]),
        materials=[XMaterial("red", np.array([1, 0, 0, 1.0]), 10.0, np.ones(3), np.zeros(3),
                             "C:\\tex\\red.png"),
                   XMaterial(None, np.array([0, 1, 0, 0.5]), 0.0, np.zeros(3), np.zeros(3), None)],
        skin_weights=[XSkinWeights("Bone 1", np.array([0, 1, 4]), np.array([1, 0.5, 0.25]),
                                   np.diag([1.0, 2.0, 3.0, 1.0])),
                      XSkinWeights("Root", np.array([1, 4]), np.array([0.5, 0.75]), np.eye(4))],
        extra_streams={"TANGENT0": np.arange(15, dtype=np.float64).reshape(5, 3),
                       "TEXCOORD1": np.linspace(0, 1, 10).reshape(5, 2)},
    )
    bone = XFrame("Bone 1", np.diag([1.0, 1.0, 1.0, 1.0]))
    root = XFrame("Root", np.eye(4), children=[bone], meshes=[mesh])
    root.matrix[3, :3] = [1, 2, 3]
    keys = [XAnimationKey(0, np.array([0.0, 4800.0]), np.array([[1, 0, 0, 0], [0, 1, 0, 0.0]])),
            XAnimationKey(2, np.array([0.0]), np.array([[1, 2, 3.0]]))]
    anim = XAnimation("a", "Bone 1", keys, open_closed=1, position_quality=0)
    loose = XMesh(None, np.zeros((3, 3)), np.array([3]), np.array([0, 1, 2]))
    return XFile(frames=[root], meshes=[loose], anim_ticks_per_second=4800,
                 animation_sets=[XAnimationSet("Walk", [anim])])


@pytest.mark.parametrize("storage", STORAGE)
def test_hand_built_model(storage, tmp_path):
    xf = _hand_model()
    path = tmp_path / f"hand_{storage}.x"
    write_xfile(xf, path, storage=storage)
    back = read_xfile(path)
    mesh = back.frames[0].meshes[0]
    # The skin header was missing: the writer computed it (3 bones? no: 2 blocks;
    # vertices 1 and 4 carry 2 weights; both faces touch both bones).
    assert mesh.skin_header == (2, 2, 2)
    xf.frames[0].meshes[0].skin_header = (2, 2, 2)
    if storage.startswith("text"):
        # Names that cannot be text names are spelled consistently.
        assert mesh.name == "Body_Mesh"
        assert back.frames[0].children[0].name == "Bone_1"
        assert mesh.skin_weights[0].frame_name == "Bone_1"
        assert back.animation_sets[0].animations[0].frame_name == "Bone_1"
        for obj in (xf.frames[0].meshes[0], xf.frames[0].children[0]):
            obj.name = obj.name.replace(" ", "_")
        xf.frames[0].meshes[0].skin_weights[0].frame_name = "Bone_1"
        xf.animation_sets[0].animations[0].frame_name = "Bone_1"
    assert diff_xfiles(xf, back, **FLOAT32) == []
    assert mesh.materials[0].texture == "C:\\tex\\red.png"
    assert mesh.materials[1].name is None


def test_writer_rejects_inconsistent_models():
    xf = _hand_model()
    xf.frames[0].meshes[0].face_indices[0] = 99
    with pytest.raises(FormatError, match="face index out of range"):
        write_xfile_bytes(xf)
    xf = _hand_model()
    xf.frames[0].meshes[0].positions[0, 0] = np.nan
    with pytest.raises(FormatError, match="not finite"):
        write_xfile_bytes(xf, "binary")
    xf = _hand_model()
    xf.frames[0].meshes[0].material_indices[0] = 2
    with pytest.raises(FormatError, match="material index"):
        write_xfile_bytes(xf, "text")
    with pytest.raises(ValueError):
        write_xfile_bytes(_hand_model(), "obj")
    with pytest.raises(ValueError):
        write_xfile_bytes(_hand_model(), "text", 16)


def test_text_output_is_conventional():
    cube = read_xfile(X / "assimp/test_cube_text.x")
    text = write_xfile_bytes(cube, "text").decode()
    assert text.startswith("xof 0303txt 0032\n")
    assert "  -1.000000;-1.000000;1.000000;,\n" in text  # vector arrays
    assert "  3;0,2,1;,\n" in text  # faces
    assert "AnimTicksPerSecond {\n 24;\n}" in text


def test_joint_index_follows_the_text_writers_respelling():
    """A rig's bones found by the names a text file written from it
    gives them, collisions included ("a b" -> "a_b" takes the name of the
    bone "a_b", which becomes "a_b.1"), and by their own names otherwise."""
    from legacy_skin_io.io.xfile.names import file_names, joint_index

    rig = ["root", "a b", "a_b", 'q"x']
    written = file_names(rig, text=True, fallback="frame")[0]
    assert written == ["root", "a_b", "a_b.1", "q_x"]
    index = joint_index(rig, written)
    assert [index[n] for n in written] == [0, 1, 2, 3]
    assert joint_index(rig, ["a_b", "root"]) == {"root": 0, "a b": 1, "a_b": 2, 'q"x': 3}   # the rig's own names
    binary = joint_index(rig, ['q"x', "a_b.1"])        # some own, some respelt: both found
    assert binary['q"x'] == 3 and binary["a_b.1"] == 2
