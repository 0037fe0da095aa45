# SPDX-License-Identifier: GPL-3.0-or-later
"""Every real .X file in tests/data/x parses, with facts checked against the file
text and against assimp (``assimp info``) during development."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from xfile_compare import all_meshes

from legacy_skin_io.io.errors import FormatError
from legacy_skin_io.io.xfile import read_xfile, read_xfile_bytes

X = Path(__file__).resolve().parent / "data" / "x"

# file -> expected facts.
#   meshes: (name, vertices, faces, skin weight blocks) in all_meshes() order
#   frames: number of Frame objects; roots: names of the root frames
#   sets: (name, animations, keys) per AnimationSet; tps: AnimTicksPerSecond
# Face counts, bone counts (sum of skin weight blocks) and animation channel
# counts agree with assimp; vertex counts are the file's (assimp re-indexes).
FACTS = {
    "assimp/BCN_Epileptic.X": dict(
        storage="txt", float_size=32,
        meshes=[("mesh_Torso", 1170, 1966, 24), ("mesh_Head", 1196, 2036, 20),
                ("mesh_Legs", 648, 1124, 10)],
        frames=57, roots=["Torso", "B_Root_Pelvis_L", "Head", "Legs"],
        sets=[("Epileptisch", 57, 171)], tps=4800),
    "assimp/Testwuson.X": dict(
        storage="txt", float_size=32, meshes=[("mesh_Wuson", 3205, 3732, 37)],
        frames=39, roots=["Wuson", "Root"],
        sets=[("Wuson_Run", 39, 117), ("Wuson_Walk", 39, 117), ("Wuson_Bind", 39, 117)],
        tps=4800),
    "assimp/anim_test.x": dict(
        storage="txt", float_size=32, meshes=[("pCylinderShape1", 1720, 840, 4)],
        frames=4, roots=["pCylinder1", "joint1", "ikHandle1"],
        sets=[("cylinder_test", 4, 12)], tps=24),
    "assimp/fromtruespace_bin32.x": dict(
        storage="bin", float_size=32, meshes=[("FeedTheDinoGPUMesh", 4132, 6656, 0)],
        frames=1, roots=["FeedTheDinoGPU-0"], sets=[], tps=None),
    "assimp/kwxport_test_cubewithvcolors.x": dict(
        storage="txt", float_size=32, meshes=[("mesh_Box01", 24, 12, 0)],
        frames=1, roots=["Box01"], sets=[], tps=None),
    "assimp/test.x": dict(
        storage="txt", float_size=32, meshes=[("pCubeShape1", 24, 12, 0)],
        frames=1, roots=["pCube1"], sets=[], tps=None),
    "assimp/test_cube_text.x": dict(
        storage="txt", float_size=32, meshes=[("Cube", 24, 12, 1)],
        frames=2, roots=["Root"], sets=[], tps=24),
    "assimp/test_cube_binary.x": dict(
        storage="bin", float_size=32, meshes=[("Cube", 24, 12, 1)],
        frames=2, roots=["Root"], sets=[], tps=24),
    "assimp/test_cube_compressed.x": dict(
        storage="bzip", float_size=32, meshes=[("Cube", 24, 12, 1)],
        frames=2, roots=["Root"], sets=[], tps=24),
    "directx-sdk/bat.x": dict(
        storage="bzip", float_size=32, meshes=[(None, 35313, 52256, 34)],
        frames=91, roots=["cube1", "Bone01"], sets=[("Anim-1", 45, 45)], tps=None),
    "directx-sdk/mslogo.x": dict(
        storage="bin", float_size=32, meshes=[(None, 1334, 2668, 0)],
        frames=0, roots=[], sets=[], tps=None),
    "directx-sdk/tiger.x": dict(
        storage="txt", float_size=64, meshes=[("Body1", 303, 599, 0)],
        frames=0, roots=[], sets=[], tps=None),
    "directx-sdk/tiny_4anim.x": dict(
        storage="txt", float_size=32, meshes=[(None, 9, 8, 0), (None, 4884, 6841, 35)],
        frames=48, roots=["Scene_Root"],
        sets=[("Loiter", 46, 138), ("Walk", 46, 138), ("Jog", 46, 138), ("Wave", 12, 12)],
        tps=None),
    "real/PilzAdam__mobs/mobs_rat.x": dict(
        storage="txt", float_size=32, meshes=[(None, 176, 44, 0)],
        frames=2, roots=['Root'], sets=[], tps=None),
    "real/PilzAdam__mobs/mobs_stone_monster.x": dict(
        storage="txt", float_size=32, meshes=[(None, 192, 48, 5)],
        frames=8, roots=['Root'], sets=[(None, 7, 21)], tps=None),
    "real/TheGameCreators__Dark-Basic-Pro/extraanim.X": dict(
        storage="txt", float_size=64, meshes=[
            ('Waist', 34, 50, 0), ('R_Thigh', 39, 48, 0), ('R_Leg_lowe', 44, 56, 0), ('R_Foot', 38, 28, 0),
            ('L_Thigh', 39, 48, 0), ('L_Leg_lowe', 44, 56, 0), ('L_Foot', 38, 28, 0), ('Chest', 53, 58, 0),
            ('R_Arm_uppe', 48, 46, 0), ('R_arm_lowe', 24, 28, 0), ('R_Hand', 23, 24, 0),
            ('Cylinder01', 63, 52, 0), ('L_Arm_uppe', 48, 46, 0), ('L_arm_lowe', 24, 28, 0),
            ('L_Hand', 23, 24, 0), ('Neck', 17, 20, 0), ('Head', 69, 84, 0)
        ],
        frames=17, roots=['x3ds_Waist'], sets=[('x3ds_animset_0', 17, 35)], tps=None),
    "real/blitz-research__blitz3d/pistol.x": dict(
        storage="txt", float_size=32, meshes=[(None, 134, 223, 1), (None, 16, 16, 1), (None, 50, 48, 1)],
        frames=5, roots=['Scene_Root'], sets=[('AnimationSet0', 2, 2)], tps=None),
    "real/minetest__minetest_game/character.x": dict(
        storage="txt", float_size=32, meshes=[(None, 192, 48, 7)],
        frames=10, roots=['Root'], sets=[('ArmatureAction', 8, 24), ('Default_Action', 1, 3)], tps=None),
    "real/walbourn__directx-sdk-legacy-samples/Dwarf.x": dict(
        storage="bzip", float_size=32, meshes=[
            ('Sword_newShape', 1116, 372, 0), ('backpack_newShape', 318, 106, 0),
            ('Body1Shape', 5946, 1982, 0), ('Armor_newShape', 4992, 1664, 0),
            ('Face_gear_newShape', 884, 296, 0), ('Head_newShape', 2550, 850, 0)
        ],
        frames=13, roots=['DXCC_ROOT'], sets=[], tps=None),
    "real/walbourn__directx-sdk-legacy-samples/scene.x": dict(
        storage="txt", float_size=32, meshes=[],
        frames=214, roots=['Scene_Root'], sets=[], tps=None),
    "real/blitz-research__blitz3d/camel.x": dict(
        storage="txt", float_size=64, meshes=[('mesh-quads1', 275, 304, 0)],
        frames=2, roots=['Root'], sets=[], tps=None),
    "real/blitz-research__blitz3d/mother.x": dict(
        storage="txt", float_size=64, meshes=[
            ('mesh-windshield', 8, 6, 0), ('mesh-fin', 8, 12, 0), ('mesh-tail', 12, 20, 0),
            ('mesh-thruster', 36, 60, 0), ('mesh-engine01', 50, 92, 0), ('mesh-body', 101, 184, 0)
        ],
        frames=7, roots=['Root'], sets=[], tps=None),
    "real/blitz-research__blitz3d/jet.x": dict(
        storage="txt", float_size=64, meshes=[
            ('F15', 1, 1, 0), ('inlet', 8, 4, 0), ('exh', 12, 8, 0), ('stabs', 16, 24, 0),
            ('wings', 12, 16, 0), ('tail', 12, 16, 0), ('body', 67, 112, 0), ('gf15', 14, 18, 0)
        ],
        frames=8, roots=['frm-F15'], sets=[], tps=None),
    "real/SimonDarksideJ__XNAGameStudio/Cylinder.x": dict(
        storage="txt", float_size=64, meshes=[(None, 192, 34, 0)],
        frames=1, roots=['cylinder1'], sets=[], tps=None),
    "real/SimonDarksideJ__XNAGameStudio/Window.x": dict(
        storage="txt", float_size=32, meshes=[(None, 4, 4, 0)],
        frames=1, roots=['Plane01'], sets=[], tps=None),
    "real/SimonDarksideJ__XNAGameStudio/pea_proj.x": dict(
        storage="txt", float_size=32, meshes=[('single_mesh_object', 23, 24, 0)],
        frames=0, roots=[], sets=[], tps=None),
    "real/TheGameCreators__Dark-Basic-Pro/block1.x": dict(
        storage="txt", float_size=64, meshes=[('NoName_1Mesh', 48, 24, 0)],
        frames=0, roots=[], sets=[], tps=None),
    "real/blitz-research__blitz3d/ship.x": dict(
        storage="txt", float_size=32, meshes=[('x3dc_2', 231, 156, 0)],
        frames=7, roots=['x3dc_1'], sets=[('x3dc_0', 6, 12)], tps=None),
    "real/walbourn__directx-sdk-legacy-samples/quadlow.x": dict(
        storage="txt", float_size=32, meshes=[("pSphereShape1", 4, 2, 0)],
        frames=4, roots=["DXCC_ROOT"], sets=[], tps=None),
    "real/walbourn__directx-sdk-legacy-samples/rock.x": dict(
        storage="txt", float_size=32, meshes=[(None, 285, 445, 0)],
        frames=2, roots=["Scene_Root"], sets=[], tps=None),
    "crafted/alpha_zero_half_one.x": dict(
        storage="txt", float_size=32, meshes=[("ZeroBox", 8, 12, 0), ("HalfBox", 8, 12, 0), ("OneBox", 8, 12, 0)],
        frames=3, roots=["Zero", "Half", "One"], sets=[], tps=None),
    "crafted/extra_brace.x": dict(
        storage="txt", float_size=32, meshes=[("BoxMesh", 8, 12, 0)],
        frames=1, roots=["Box"], sets=[], tps=None),
    "crafted/inside_out_mirror_root.x": dict(
        storage="txt", float_size=32,
        meshes=[("InsideOut", 8, 12, 0), ("MixedBox", 8, 12, 0), ("RotatedNormals", 8, 12, 0)],
        frames=4, roots=["Root", "Rotated"], sets=[], tps=None),
    "crafted/materials_in_frames.x": dict(
        storage="txt", float_size=32, meshes=[("BodyMesh", 8, 12, 0), ("HeadMesh", 8, 12, 0), ("LegMesh", 8, 12, 0)],
        frames=4, roots=["Scene_Root"], sets=[], tps=None),
    "crafted/uv_sets.x": dict(
        storage="txt", float_size=32, meshes=[("DeclBox", 24, 12, 0), ("CoordsBox", 24, 12, 0), ("FvfBox", 24, 12, 0)],
        frames=3, roots=["Decl", "Coords", "Fvf"], sets=[], tps=None),
    "crafted/effect_maps.x": dict(
        storage="txt", float_size=32,
        meshes=[("BricksBox", 24, 12, 0), ("WallBox", 24, 12, 0), ("DecalBox", 24, 12, 0), ("CrateBox", 24, 12, 0)],
        frames=4, roots=["BricksFrame", "WallFrame", "DecalFrame", "CrateFrame"], sets=[], tps=None),
    "crafted/animation_on_missing_frame.x": dict(
        storage="txt", float_size=32, meshes=[("Crate", 8, 12, 0)],
        frames=0, roots=[], sets=[("Spin", 1, 1)], tps=None),
    "crafted/decldata_nan_uvs.x": dict(
        storage="txt", float_size=32, meshes=[("Building", 48, 72, 0)],
        frames=1, roots=["Building"], sets=[], tps=None),
    "crafted/key_time_minus_one.x": dict(
        storage="txt", float_size=32, meshes=[("ArmBox", 8, 12, 0)],
        frames=2, roots=["Root"], sets=[("Swing", 2, 2)], tps=4800),
    "crafted/normals_without_brace.x": dict(
        storage="txt", float_size=32, meshes=[("Disc", 17, 16, 0)],
        frames=1, roots=["Disc"], sets=[], tps=None),
}

BROKEN = ["assimp/malformed_skinweights_oob.x", "assimp/OV_GetNextToken"]


def _all_files():
    return sorted(str(p.relative_to(X)) for p in X.rglob("*")
                  if p.is_file() and p.suffix.lower() not in (".txt", ".md", ".png"))


def test_fact_table_covers_every_file():
    assert sorted(list(FACTS) + BROKEN) == _all_files()


@pytest.fixture(scope="module")
def parsed():
    return {name: read_xfile(X / name) for name in FACTS}


@pytest.mark.parametrize("name", sorted(FACTS))
def test_corpus_facts(parsed, name):
    facts = FACTS[name]
    xf = parsed[name]
    assert xf.storage == facts["storage"]
    assert xf.float_size == facts["float_size"]
    got = [(m.name, len(m.positions), len(m.face_sizes), len(m.skin_weights))
           for m in all_meshes(xf)]
    assert got == facts["meshes"]
    assert sum(1 for _ in xf.all_frames()) == facts["frames"]
    assert [f.name for f in xf.frames] == facts["roots"]
    sets = [(s.name, len(s.animations), sum(len(a.keys) for a in s.animations))
            for s in xf.animation_sets]
    assert sets == facts["sets"]
    assert xf.anim_ticks_per_second == facts["tps"]
    for mesh in all_meshes(xf):
        nv = len(mesh.positions)
        assert mesh.positions.dtype == np.float64 and mesh.positions.shape == (nv, 3)
        assert int(mesh.face_sizes.sum()) == len(mesh.face_indices)
        assert mesh.face_indices.max() < nv
        if mesh.uvs is not None:
            assert mesh.uvs.shape == (nv, 2)
        if mesh.normals is not None:
            assert np.array_equal(mesh.normal_face_sizes, mesh.face_sizes)
            assert mesh.normal_face_indices.max() < len(mesh.normals)
        if mesh.material_indices is not None:
            assert len(mesh.material_indices) == len(mesh.face_sizes)
            assert mesh.material_indices.max() < len(mesh.materials)
        for sw in mesh.skin_weights:
            assert len(sw.vertex_indices) == len(sw.weights)
            assert sw.matrix_offset.shape == (4, 4)
    for aset in xf.animation_sets:
        for anim in aset.animations:
            assert anim.frame_name is not None
            for key in anim.keys:
                assert key.values.shape == (len(key.times), {0: 4, 1: 3, 2: 3, 4: 16}[key.key_type])


@pytest.mark.parametrize("name", BROKEN)
def test_broken_files_raise_with_position(name):
    with pytest.raises(FormatError) as info:
        read_xfile(X / name)
    err = info.value
    assert err.line is not None or err.offset is not None
    assert Path(name).name in str(err)


def test_malformed_skinweights_message_names_object_and_line():
    with pytest.raises(FormatError) as info:
        read_xfile(X / "assimp/malformed_skinweights_oob.x")
    err = info.value
    # The bad index (1000000) is the 24th of the SkinWeights block on line 244.
    assert err.line == 244
    assert "SkinWeights" in str(err) and "1000000" in str(err)
    assert str(err).startswith("malformed_skinweights_oob.x:244: ")


def test_corrupt_mszip_reports_block_offset():
    with pytest.raises(FormatError) as info:
        read_xfile(X / "assimp/OV_GetNextToken")
    assert info.value.offset == 20  # the first block header, right after the size DWORD
    assert "MSZIP" in str(info.value)


def test_cube_details(parsed):
    xf = parsed["assimp/test_cube_text.x"]
    root = xf.frames[0]
    # Root's matrix swaps y and z (Blender exporter); stored row-major, untouched.
    assert np.array_equal(root.matrix[1], [0, 0, 1, 0]) and np.array_equal(root.matrix[2], [0, 1, 0, 0])
    cube = root.children[0]
    assert cube.name == "Cube" and np.array_equal(cube.matrix, np.eye(4))
    mesh = cube.meshes[0]
    assert mesh.skin_header == (1, 1, 1)
    assert np.array_equal(mesh.positions[0], [-1, -1, 1])
    assert np.array_equal(mesh.face_indices[:6], [0, 2, 1, 0, 1, 3])
    # The top-level "Material" is referenced from the MeshMaterialList.
    assert len(mesh.materials) == 1 and mesh.materials[0].name == "Material"
    assert np.allclose(mesh.materials[0].face_color, [0.639216, 0.639216, 0.639216, 1.0])
    assert mesh.materials[0].power == pytest.approx(96.07843)
    sw = mesh.skin_weights[0]
    assert sw.frame_name == "Cube" and len(sw.vertex_indices) == 24
    assert np.allclose(sw.weights, 1.0)


def test_anim_test_keys_and_streams(parsed):
    xf = parsed["assimp/anim_test.x"]
    anim = xf.animation_sets[0].animations[0]
    assert anim.frame_name == "pCylinder1"
    rot = anim.keys[0]
    assert rot.key_type == 0 and len(rot.times) == 24
    assert np.array_equal(rot.times[:3], [1, 2, 3])
    assert np.array_equal(rot.values[0], [-1, 0, 0, 0])  # stored w, x, y, z
    mesh = next(all_meshes(xf))
    assert sorted(mesh.extra_streams) == ["BINORMAL0", "TANGENT0"]
    assert mesh.extra_streams["TANGENT0"].shape == (1720, 3)
    assert mesh.materials[0].texture == ""  # an empty TextureFileName string
    assert [len(sw.vertex_indices) for sw in mesh.skin_weights] == [1700, 1680, 1700, 1700]


def test_kwxport_vertex_colors_materials_and_decl(parsed):
    mesh = next(all_meshes(parsed["assimp/kwxport_test_cubewithvcolors.x"]))
    assert mesh.vertex_colors.shape == (24, 4)
    assert np.array_equal(mesh.vertex_colors[0], [1, 0, 0, 1])
    assert np.array_equal(mesh.vertex_colors[6], [0, 1, 0, 1])
    assert [m.name for m in mesh.materials] == ["bottom", "top", "side"]
    assert mesh.materials[1].texture.endswith("\\test\\data\\top.tga")
    assert "\\\\" not in mesh.materials[1].texture  # text escapes undone
    assert sorted(np.unique(mesh.material_indices).tolist()) == [0, 1, 2]
    # DeclData of the file: binormal then tangent (FLOAT3 each); first DWORD 3031830834
    # is the float32 bit pattern of a tiny negative number.
    binormal = mesh.extra_streams["BINORMAL0"]
    assert binormal.shape == (24, 3)
    assert binormal[0, 0] == pytest.approx(np.uint32(3031830834).view(np.float32))
    assert binormal[0, 2] == -1.0


def test_tiger_64bit_and_ngons(parsed):
    xf = parsed["directx-sdk/tiger.x"]
    mesh = xf.meshes[0]
    assert mesh.name == "Body1" and mesh.normals is None
    # assimp triangulates 602 triangles out of these 599 faces.
    assert int((mesh.face_sizes - 2).sum()) == 602
    assert set(mesh.face_sizes.tolist()) == {3, 4}
    assert mesh.materials[0].texture == "tiger.bmp"
    # 64-bit text: numbers as written.
    assert mesh.positions[1].tolist() == [-0.049693, 0.200773, 0.692165]


def test_tiny_has_no_ticks_and_matrix_keys_elsewhere(parsed):
    tiny = parsed["directx-sdk/tiny_4anim.x"]
    assert tiny.anim_ticks_per_second is None  # D3DX's 4800 is the importer's default
    types = {s.name: {k.key_type for a in s.animations for k in a.keys}
             for s in tiny.animation_sets}
    assert types == {"Loiter": {0, 1, 2}, "Walk": {0, 1, 2}, "Jog": {0, 1, 2}, "Wave": {4}}
    bat = parsed["directx-sdk/bat.x"]
    types = {k.key_type for s in bat.animation_sets for a in s.animations for k in a.keys}
    assert types == {4}


def test_testwuson_names_and_duplicate_ticks(parsed):
    xf = parsed["assimp/Testwuson.X"]
    anim = xf.animation_sets[0].animations[0]
    assert anim.name == "Anim-Wuson_Run-Wuson" and anim.frame_name == "Wuson"
    assert anim.open_closed == 1 and anim.position_quality == 0
    assert np.allclose(anim.keys[0].values[0], [0.707107, -0.707107, 0, 0])
    # a template D3DX knows and the file declares, holding nothing to import: a note, not a warning
    assert any("KeyValuePair" in w for w in xf.warnings.notes)
    assert not any("KeyValuePair" in w for w in xf.warnings)


def test_bytes_reader_names_given_path():
    data = (X / "assimp/malformed_skinweights_oob.x").read_bytes()
    with pytest.raises(FormatError) as info:
        read_xfile_bytes(data, path="some/dir/thing.x")
    assert str(info.value).startswith("thing.x:244:")
    with pytest.raises(FormatError) as info:
        read_xfile_bytes(data)
    assert str(info.value).startswith("<data>:244:")
