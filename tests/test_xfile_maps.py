# SPDX-License-Identifier: GPL-3.0-or-later
"""Every UV set and every texture map of a .X file, read and written back
without Blender: DeclData TEXCOORD1, a second MeshTextureCoords and FVFData
become the scene's further UV sets and come back as DeclData; several
TextureFilename, EffectInstance parameters and their texture roles come
back as read. Expected values come from the files' own text (decoded here
with numpy) and from assimp."""
from __future__ import annotations

import re
from pathlib import Path

import assimp_reading as ar
import numpy as np
import pytest
from xfile_compare import all_meshes

from legacy_skin_io.io.xfile import read_xfile, read_xfile_bytes
from legacy_skin_io.io.xfile.effects import role_of
from legacy_skin_io.io.xfile.from_scene import write_scene
from legacy_skin_io.io.xfile.mesh_templates import MeshTemplates
from legacy_skin_io.io.xfile.model import XMesh
from legacy_skin_io.io.xfile.to_scene import read_scene
from legacy_skin_io.io.xfile.vertex_streams import decode_fvf

X = Path(__file__).resolve().parent / "data" / "x"
UV_SETS = X / "crafted" / "uv_sets.x"
EFFECTS = X / "crafted" / "effect_maps.x"
ROCK = X / "real" / "walbourn__directx-sdk-legacy-samples" / "rock.x"
STORAGE = ["text", "binary", "text_compressed", "binary_compressed"]


def _second_sets_from_text() -> dict[str, np.ndarray]:
    """Each box's second UV set as the file's text holds it, decoded here:
    the DWORDs of DeclData (FLOAT3 TANGENT0 then FLOAT2 TEXCOORD1) and of
    FVFData (normal, set 0, set 1), and the second MeshTextureCoords."""
    text = UV_SETS.read_text()
    out = {}
    for name in ("DeclBox", "CoordsBox", "FvfBox"):
        body = text[text.index(f"Mesh {name} {{"):]
        body = body[:body.index("\n }\n")]
        if "DeclData" in body:
            part = body[body.index("1;0;5;1;;") + len("1;0;5;1;;"):]      # after the elements: count, DWORDs
            dwords = np.array([int(w) for w in re.findall(r"\d+", part)][1:], dtype="<u4")
            out[name] = dwords.view("<f4").reshape(-1, 5)[:, 3:5].astype(np.float64)
        elif "FVFData" in body:          # flags, DWORD count, the second set's DWORDs
            part = body[body.index("FVFData"):]
            numbers = [int(w) for w in re.findall(r"\d+", part)]
            out[name] = np.array(numbers[2:], dtype="<u4").view("<f4").reshape(-1, 2).astype(np.float64)
        else:
            second = body.split("MeshTextureCoords")[2]
            values = [float(v) for v in re.findall(r"-?\d+\.\d+", second)]
            out[name] = np.array(values).reshape(-1, 2)
    return out


def test_every_second_uv_set_is_read():
    expected = _second_sets_from_text()
    # the three encodings of one atlas hold the same coordinates
    assert np.allclose(expected["DeclBox"], expected["CoordsBox"], atol=1e-6)
    assert np.allclose(expected["FvfBox"], expected["CoordsBox"], atol=1e-6)
    meshes = {m.name: m for m in all_meshes(read_xfile(UV_SETS))}
    for name, uv in expected.items():
        assert np.allclose(second_set(meshes[name]), uv, atol=1e-6), name
        assert meshes[name].uvs is not None and not np.allclose(meshes[name].uvs, uv)
    scene = read_scene([UV_SETS])
    for m in scene.meshes:
        corners_uv = expected[m.name][_file_corners(m)]
        assert list(m.uv_sets) == ["UVMap.001"]
        assert np.allclose(m.uv_sets["UVMap.001"][:, 0], corners_uv[:, 0], atol=1e-6)
        assert np.allclose(m.uv_sets["UVMap.001"][:, 1], 1.0 - corners_uv[:, 1], atol=1e-6)


def second_set(xm) -> np.ndarray:
    """An XMesh's second UV set: DeclData / FVFData TEXCOORD1, else its second MeshTextureCoords."""
    return xm.extra_streams["TEXCOORD1"] if "TEXCOORD1" in xm.extra_streams else xm.more_uvs[0]


def _file_corners(m) -> np.ndarray:
    """The file vertex of each scene corner (the scene keeps the file's vertices)."""
    return np.asarray(m.corners, dtype=np.int64)


def test_fvf_data_holds_no_positions():
    """FVFData XYZ | TEX1 with 1D coordinates and 4 bytes a vertex (as the
    SDK's skullocc.x): one float per vertex, not a refusal."""
    data = np.array([0.25, 0.5, 0.75], dtype="<f4").tobytes()
    warnings: list[str] = []
    streams = decode_fvf(0x30102, data, 3, warnings, "mesh")
    assert warnings == [] and np.allclose(streams["TEXCOORD0"][:, 0], [0.25, 0.5, 0.75])
    # FVFData whose first set repeats MeshTextureCoords keeps its numbering; otherwise its sets follow
    mesh = XMesh("m", np.zeros((3, 3)), np.array([3]), np.arange(3), uvs=np.array([[0, 0], [1, 0], [0, 1.0]]))
    again = {"TEXCOORD0": mesh.uvs.copy(), "TEXCOORD1": np.full((3, 2), 0.5)}
    assert sorted(MeshTemplates.fvf_sets(mesh, again, {})) == ["TEXCOORD0", "TEXCOORD1"]
    assert sorted(MeshTemplates.fvf_sets(mesh, {"TEXCOORD0": np.full((3, 2), 0.5)}, {})) == ["TEXCOORD1"]
    # data that holds the position as well is still read
    with_pos = np.array([[1, 2, 3, 0.5]] * 3, dtype="<f4").tobytes()
    streams = decode_fvf(0x30102, with_pos, 3, warnings, "mesh")
    assert warnings == [] and np.allclose(streams["TEXCOORD0"][:, 0], 0.5)


@pytest.mark.parametrize("storage", STORAGE)
def test_uv_sets_written_back_as_decl_data(tmp_path, storage):
    scene = read_scene([UV_SETS])
    out = tmp_path / f"uv_sets_{storage}.x"
    write_scene(scene, out, storage=storage)
    back = read_scene([out])
    for a, b in zip(scene.meshes, back.meshes):
        assert list(b.uv_sets) == ["UVMap.001"]
        # per corner, in the corners' order (the writer keeps faces and corners)
        assert np.abs(b.uv_sets["UVMap.001"] - a.uv_sets["UVMap.001"]).max() < 1e-6
        assert np.abs(b.uvs - a.uvs).max() < 1e-6
    for xm in all_meshes(read_xfile(out)):
        assert sorted(xm.extra_streams) == ["TEXCOORD1"]


def test_assimp_reads_both_sets_of_the_file_and_the_first_of_the_export(tmp_path):
    """assimp reads a second MeshTextureCoords as its second channel, the
    same coordinates the import makes its second UV map; it does not read
    DeclData, so of the written file it sees the first set, unchanged."""
    got = ar.assimp_scene(UV_SETS, tmp_path)
    coords = next(m for m in got.meshes if len(m.uvs) == 2)
    expected = _second_sets_from_text()["CoordsBox"]
    source = next(m for m in all_meshes(read_xfile(UV_SETS)) if m.name == "CoordsBox")
    # assimp turns the file right-handed (z negated), flips v (1 - v) and makes a vertex per corner:
    # compare the distinct (position, set 0, set 1)
    key_a = np.round(np.concatenate([coords.positions, coords.uvs[0][:, :2], coords.uvs[1][:, :2]], 1), 5)
    flip = np.array([0.0, 1.0]), np.array([1.0, -1.0])
    key_b = np.round(np.concatenate([source.positions * [1, 1, -1], flip[0] + source.uvs * flip[1],
                                     flip[0] + expected * flip[1]], 1), 5)
    assert sorted(set(map(tuple, key_a))) == sorted(set(map(tuple, key_b)))
    scene = read_scene([UV_SETS])
    out = tmp_path / "written.x"
    write_scene(scene, out)
    back = ar.assimp_scene(out, tmp_path)
    assert all(len(m.uvs) == 1 for m in back.meshes)


def test_roles_of_real_parameter_names():
    assert [role_of(n) for n in ("g_NormalTexture", "normalMap", "g_tNormal", "NormalMap")] == ["normal"] * 4
    assert [role_of(n) for n in ("BumpMap", "bumpMap", "g_HeightMap")] == ["bump"] * 3
    assert [role_of(n) for n in ("SpecularMap", "g_tSpecular", "glossMap")] == ["specular"] * 3
    assert [role_of(n) for n in ("EmissiveMap", "IllumMap", "g_GlowTexture")] == ["emission"] * 3
    assert [role_of(n) for n in ("g_txScene", "Texture0@Name", "diffuseMap", "g_tDiffuse", "g_MeshTexture")] == \
        ["diffuse"] * 5
    assert [role_of(n) for n in ("g_txEnvMap", "Texture1@Name", "g_tOpacity", "DisplacementMap")] == [None] * 4


def test_texture_maps_read():
    mats = {m.name: m for m in read_scene([EFFECTS]).materials}
    assert mats["Bricks"].texture == "bricks_diffuse.png"
    assert mats["Bricks"].maps == {"normal": "bricks_normal.png", "specular": "bricks_specular.png"}
    assert mats["Wall"].texture == "wall.png" and mats["Wall"].maps == {"bump": "wall_height.png"}
    assert mats["Decal"].texture == "first.png" and mats["Decal"].more_textures == ["second.png"]
    assert mats["Crate"].texture == "crate_D.png" and mats["Crate"].maps == {}    # beside: found by Blender's side
    effect = mats["Bricks"].extras["xfile"]["effect"]
    assert effect["file"] == "NormalMap.fx"
    assert effect["params"][3:] == [["dword", "technique", 1], ["floats", "Diffuse", [1.0, 1.0, 1.0, 1.0]]]


def _materials(xf):
    return {m.name: m for mesh in all_meshes(xf) for m in mesh.materials}


@pytest.mark.parametrize("storage", STORAGE)
def test_texture_maps_written_back(tmp_path, storage):
    source = _materials(read_xfile(EFFECTS))
    scene = read_scene([EFFECTS])
    out = tmp_path / f"maps_{storage}.x"
    write_scene(scene, out, storage=storage)
    written = _materials(read_xfile(out))
    for name in ("Bricks", "Wall", "Decal", "Crate"):
        a, b = source[name], written[name]
        assert (b.texture, b.more_textures) == (a.texture, a.more_textures), name
        assert (a.effect is None) == (b.effect is None), name
        if a.effect is not None:
            assert b.effect.filename == a.effect.filename
            assert b.effect.params == a.effect.params, name
    # a normal map changed in the scene is written under the effect's own parameter name
    scene.materials[[m.name for m in scene.materials].index("Bricks")].maps["normal"] = "other_normal.png"
    write_scene(scene, out, storage=storage)
    params = dict((n, v) for _k, n, v in _materials(read_xfile(out))["Bricks"].effect.params)
    assert params["g_NormalTexture"] == "other_normal.png" and params["g_DiffuseTexture"] == "bricks_diffuse.png"


def test_real_effect_instance_written_back(tmp_path):
    """The SDK's rock.x: both EffectInstances (one beside a TextureFilename,
    one alone) come back with every parameter; the second material's base
    colour is its effect's Texture0@Name."""
    scene = read_scene([ROCK])
    assert [m.texture for m in scene.materials] == ["Rock01.jpg", "ripples.dds"]
    for storage in STORAGE:
        out = tmp_path / f"rock_{storage}.x"
        write_scene(scene, out, storage=storage)
        a = [m for mesh in all_meshes(read_xfile(ROCK)) for m in mesh.materials]
        b = [m for mesh in all_meshes(read_xfile(out)) for m in mesh.materials]
        assert [(m.texture, m.effect.filename, [p[:2] for p in m.effect.params]) for m in b] == \
            [(m.texture, m.effect.filename, [p[:2] for p in m.effect.params]) for m in a]
        for x, y in zip(a, b):      # values as written (floats to float32)
            for (kind, _n, va), (_k, _m, vb) in zip(x.effect.params, y.effect.params):
                assert np.allclose(va, vb, rtol=1e-7) if kind == "floats" else va == vb


def test_darkbasic_target_declares_the_effect_templates(tmp_path):
    """Readers on the retained-mode file API know only the templates a file
    declares: the effect templates (EffectInstance an open one, "[...]") are
    declared, in text and binary, and every reader here still reads the file."""
    scene = read_scene([EFFECTS])
    for storage in ("text", "binary"):
        out = tmp_path / f"db_{storage}.x"
        write_scene(scene, out, storage=storage, target="DARKBASIC")
        raw = out.read_bytes()
        data = read_xfile_bytes(raw)
        assert _materials(data)["Bricks"].effect.params == _materials(read_xfile(EFFECTS))["Bricks"].effect.params
        first = raw.index(b"BricksFrame")
        assert all(0 < raw.find(t) < first for t in (b"EffectInstance", b"EffectParamString", b"EffectParamDWord",
                                                      b"EffectParamFloats"))
        if storage == "text":
            assert b"template EffectInstance {" in raw and b" [...]" in raw
        assert ar.assimp_scene(out, tmp_path).meshes


def test_path_modes_apply_to_every_map(tmp_path):
    """Path Mode COPY copies the maps and further textures beside the
    written file too, and names them by their file names; STRIP names them
    so (a missing one is reported and keeps its name)."""
    from legacy_skin_io.io.export_options import copy_textures, texture_paths

    scene = read_scene([EFFECTS])
    warnings: list[str] = []
    copies = texture_paths(scene, "COPY", tmp_path / "out.x", base_dir=str(EFFECTS.parent), warnings=warnings)
    copy_textures(copies, warnings)
    copied = sorted(p.name for p in tmp_path.iterdir())
    assert {"bricks_normal.png", "second.png", "bricks_diffuse.png"} <= set(copied)
    assert any("bricks_specular.png" in w for w in warnings)
    mats = {m.name: m for m in scene.materials}
    assert mats["Bricks"].maps == {"normal": "bricks_normal.png", "specular": "bricks_specular.png"}
    scene = read_scene([EFFECTS])
    for m in scene.materials:
        m.maps = {r: str(EFFECTS.parent / "sub" / t) for r, t in m.maps.items()}
    texture_paths(scene, "STRIP", tmp_path / "out.x")
    assert {m.name: m.maps for m in scene.materials}["Wall"] == {"bump": "wall_height.png"}
