# SPDX-License-Identifier: GPL-3.0-or-later
"""The glTF writer (io/gltf/) on a rig made to be hard, and its options.

The hard rig has two root joints (one mirrored), a bind pose that is not
its default pose, a vertex without weight, a vertex half weighted to a
joint its skin has no inverse bind for, a five-cornered face, two
materials (one textured, also used by a mesh without UVs), vertex colours,
a rigid mesh under the mirrored joint placed by a sheared matrix, a clip of
ticks with a rotation of 170 degrees between keys, animated translation and
non-uniform scale, and a clip interpolated per component (which glTF's
slerp does not play). Checked with the Khronos glTF Validator and three.js
under Node (``tests/gltf_reading.py``) against the core, and in the file
itself (``gltf_checks.Gltf``)."""
from __future__ import annotations

import dataclasses
import shutil
import struct
import zlib
from pathlib import Path

import gltf_checks as gc
import numpy as np
import pytest
from conftest import DATA, SAMPLES, run_cli

from legacy_skin_io.core import sampling
from legacy_skin_io.io import convert
from legacy_skin_io.io.errors import Deviation, FormatError, Warnings, largest_deviation
from legacy_skin_io.io.formats import by_id, for_path
from legacy_skin_io.io.gltf import from_scene
from legacy_skin_io.scene import Material, Mesh, Scene, Source

GLTF = by_id("gltf")
RITE = [SAMPLES / "rite" / "humanoid.ram", SAMPLES / "rite" / "walk.raa", SAMPLES / "rite" / "wave.raa"]
TOLERANCE = 1e-5


def _case(scene: Scene, path: Path, **options) -> gc.Case:
    """``scene`` written at ``path`` through the registry, as a checked case."""
    warnings = Warnings()
    GLTF.write_scene(scene, path, warnings=warnings, fps=gc.FPS, **options)
    case = gc.Case(scene.name, [], path, warnings=[str(w) for w in warnings], scene=scene)
    worst = largest_deviation(warnings)
    case.loss = worst.figure if worst is not None else None
    case.layout = from_scene.build(scene, path, warnings=[], fps=gc.FPS, **options)
    return case


def _played(readers, case: gc.Case):
    """(what three.js shows against the core: the largest vertex deviation,
    the largest joint deviation; the validator's read)."""
    runs = gc.runs(case)
    read = readers.read([(case.output, [readers.Run(a, list(s)) for a, _, _, s in runs])])[0]
    assert not read.error, read.error
    dev = joints = 0.0
    for k, (_, clip, frames, _) in enumerate(runs):
        want, worlds = gc.expected(case, clip, frames)
        dev = max(dev, gc.worst(case, read.positions[k], want)[0])
        joints = max(joints, gc.joint_error(case, read.worlds[k], worlds) if worlds is not None else 0.0)
    return dev, joints, read


def test_a_hard_rig_plays_in_three_js_as_the_core_evaluates_it(gltf_readers, tmp_path):
    case = _case(gc.hard_scene(), tmp_path / "hard.glb")
    assert case.loss is None, case.warnings
    dev, joints, read = _played(gltf_readers, case)
    assert read.errors == 0 and read.warnings == 0, read.messages
    assert dev <= TOLERANCE and joints <= TOLERANCE, (dev, joints)
    doc = gc.Gltf(case.output)
    # two roots under one node (a skin's joints share a root), which is also the static joint
    wrapper = doc.json["nodes"][6]
    assert wrapper["children"] == [0, 3] and doc.json["scenes"][0]["nodes"][0] == 6
    skin = doc.json["skins"][0]
    assert skin["joints"] == [0, 1, 2, 3, 5, 6]
    # the per-component clip gained keys where slerp differs; the keyed clip kept its own keys
    anims = {a["name"]: a for a in doc.json["animations"]}
    times = [doc.accessor(s["input"]) for s in anims["nod"]["samplers"]]
    assert len(times[0]) == 11                   # every frame between its two keys 100 degrees apart
    swing = [doc.accessor(s["input"]) for s in anims["swing"]["samplers"]]
    assert [len(t) for t in swing] == [3, 2, 2]
    np.testing.assert_allclose(swing[2], [0.25, 0.75])      # ticks at 4800 per second, in seconds


def test_faces_front_where_the_scene_shows_them(tmp_path):
    """A rigid mesh under a mirrored joint: glTF's front is counter-clockwise
    in the node's space where its world transform keeps handedness, and
    clockwise where it mirrors; the scene's front is counter-clockwise as
    shown. Each written triangle's front faces out of the tetrahedron."""
    scene = gc.hard_scene()
    case = _case(scene, tmp_path / "hard.glb")
    doc = gc.Gltf(case.output)
    w = case.layout.meshes[1]
    prim = doc.json["meshes"][w.index]["primitives"][0]
    p = doc.accessor(prim["attributes"]["POSITION"]).astype(np.float64)
    tri = doc.accessor(prim["indices"]).reshape(-1, 3)
    node = next(n for n in doc.json["nodes"] if n.get("mesh") == w.index)
    assert "rotation" not in node and "scale" not in node      # the sheared placement is in the vertices
    parent = case.layout.back.matrices(scene.skeleton.world()[4])
    world = p @ parent[:3, :3].T + parent[:3, 3]
    n = np.cross(world[tri[:, 1]] - world[tri[:, 0]], world[tri[:, 2]] - world[tri[:, 0]])
    front = n * np.sign(np.linalg.det(parent[:3, :3]))
    out = world[tri].mean(axis=1) - world.mean(axis=0)
    assert np.linalg.det(parent[:3, :3]) < 0 and (np.einsum("ij,ij->i", front, out) > 0).all()


def test_more_than_four_weights(gltf_readers, tmp_path):
    """The strongest 4, renormalised, reported with the figure three.js
    shows; with --max-influences 0 (or 8) every weight, as JOINTS_1/WEIGHTS_1."""
    scene = gc.hard_scene(influences=5)
    case = _case(scene, tmp_path / "capped.glb")
    assert case.loss is not None and case.loss > TOLERANCE
    assert any("more than 4 weights per vertex" in w and "'body' 3" in w for w in case.warnings), case.warnings
    dev, joints, read = _played(gltf_readers, case)
    assert read.errors == 0, read.messages
    assert abs(dev - case.loss) <= TOLERANCE and joints <= TOLERANCE
    for cap in (0, 8):
        case = _case(scene, tmp_path / f"all{cap}.glb", max_influences=cap)
        assert case.loss is None, case.warnings
        doc = gc.Gltf(case.output)
        attrs = doc.json["meshes"][0]["primitives"][0]["attributes"]
        assert {"JOINTS_0", "WEIGHTS_0", "JOINTS_1", "WEIGHTS_1"} <= set(attrs) and "JOINTS_2" not in attrs
        total = doc.accessor(attrs["WEIGHTS_0"]).sum(axis=1) + doc.accessor(attrs["WEIGHTS_1"]).sum(axis=1)
        np.testing.assert_allclose(total, 1.0, atol=2e-7)
        assert gltf_readers.read([(case.output, [])])[0].errors == 0


def test_a_sheared_default_pose_is_reported_with_what_it_costs(gltf_readers, tmp_path):
    case = _case(gc.hard_scene(shear=True), tmp_path / "sheared.glb")
    assert case.loss is not None and any("shear in the default pose" in w and "(head)" in w for w in case.warnings)
    dev, _, read = _played(gltf_readers, case)
    assert read.errors == 0, read.messages
    assert abs(dev - case.loss) <= TOLERANCE


def test_a_mesh_without_uvs_gets_its_material_without_the_texture(tmp_path):
    scene = gc.hard_scene()
    case = _case(scene, tmp_path / "hard.glb")
    doc = gc.Gltf(case.output)
    mats = doc.json["materials"]
    body = doc.json["meshes"][case.layout.meshes[0].index]["primitives"]
    gem = doc.json["meshes"][case.layout.meshes[1].index]["primitives"]
    glass_body, glass_gem = mats[body[1]["material"]], mats[gem[0]["material"]]
    assert glass_body["name"] == glass_gem["name"] == "glass"
    assert glass_body["pbrMetallicRoughness"]["baseColorTexture"] == {"index": 0}
    assert "baseColorTexture" not in glass_gem["pbrMetallicRoughness"]
    # the alpha rule (below 1: blended), the colour (white under a texture), dielectric, the roughness
    assert glass_body["alphaMode"] == "BLEND" and "alphaMode" not in mats[body[0]["material"]]
    assert glass_body["pbrMetallicRoughness"]["baseColorFactor"] == [1.0, 1.0, 1.0, 0.5]
    assert glass_gem["pbrMetallicRoughness"]["baseColorFactor"] == pytest.approx([0.2, 0.4, 0.9, 0.5])
    skin = mats[body[0]["material"]]["pbrMetallicRoughness"]
    assert skin["metallicFactor"] == 0.0 and skin["roughnessFactor"] == pytest.approx(np.sqrt(2 / 22))
    assert glass_body["emissiveFactor"] == [0.1, 0.0, 0.0]
    assert doc.json["images"] == [{"name": "glass.png", "uri": "textures/glass.png"}]


def _png(path: Path) -> bytes:
    """A 2x2 RGB PNG (zlib only)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    raw = b"".join(b"\0" + bytes([255, 0, 0, 0, 255, 0]) for _ in range(2))
    data = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 2, 2, 8, 2, 0, 0, 0)) + \
        chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")
    path.write_bytes(data)
    return data


def test_images_by_name_packed_or_as_the_path_mode_says(gltf_readers, tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(DATA / "x" / "real" / "PilzAdam__mobs" / "mobs_rat.x", src / "rat.x")
    png = _png(src / "UV_rat.png")
    out = tmp_path / "out"
    out.mkdir()
    # by name, relative to the written file (as read; --path-mode strip, copy)
    convert.convert([str(src / "rat.x")], str(out / "rat.glb"), warnings=[])
    assert gc.Gltf(out / "rat.glb").json["images"] == [{"name": "UV_rat.png", "uri": "UV_rat.png"}]
    assert not (out / "UV_rat.png").exists()
    convert.convert([str(src / "rat.x")], str(out / "copied.glb"), warnings=[], path_mode="COPY")
    assert (out / "UV_rat.png").read_bytes() == png
    assert gc.Gltf(out / "copied.glb").json["images"][0]["uri"] == "UV_rat.png"
    convert.convert([str(src / "rat.x")], str(out / "rel.gltf"), warnings=[], path_mode="RELATIVE")
    assert gc.Gltf(out / "rel.gltf").json["images"][0]["uri"] == "../src/UV_rat.png"
    # packed: in the .glb's binary chunk, as a .gltf's data URI; the validator reads them as PNG
    convert.convert([str(src / "rat.x")], str(out / "packed.glb"), warnings=[], write_options={"embed_images": True})
    doc = gc.Gltf(out / "packed.glb")
    image = doc.json["images"][0]
    assert "uri" not in image and image["mimeType"] == "image/png"
    view = doc.json["bufferViews"][image["bufferView"]]
    assert doc.bin[view["byteOffset"]:view["byteOffset"] + view["byteLength"]] == png
    convert.convert([str(src / "rat.x")], str(out / "packed.gltf"), warnings=[],
                    write_options={"embed_images": True})
    assert gc.Gltf(out / "packed.gltf").json["images"][0]["uri"].startswith("data:image/png;base64,")
    names = ("rat.glb", "copied.glb", "rel.gltf", "packed.glb", "packed.gltf")
    for read in gltf_readers.read([(out / n, []) for n in names]):
        assert read.errors == 0 and read.stand_ins == 0, (read.path.name, read.messages)
    (out / "UV_rat.png").unlink()
    (src / "UV_rat.png").unlink()
    for read in gltf_readers.read([(out / n, []) for n in names]):      # packed: no file needed
        assert read.errors == 0 and read.stand_ins == int("packed" not in read.path.name), read.path.name
    # an image that is not PNG or JPEG, packed or not: referenced as it is, said once
    warnings = Warnings()
    convert.convert([str(DATA / "x" / "directx-sdk" / "tiger.x")], str(out / "tiger.glb"), warnings=warnings,
                    write_options={"embed_images": True})
    assert gc.Gltf(out / "tiger.glb").json["images"] == [{"name": "tiger.bmp", "uri": "tiger.bmp"}]
    assert [w for w in warnings if "tiger.bmp" in w] == [
        "images not found, so not packed (referenced by name) (1): tiger.bmp; put them beside the model or the "
        "written file",
        "images in a format glTF does not take (PNG and JPEG), referenced as they are (1): tiger.bmp; convert them "
        "to PNG for glTF viewers"]


def test_gltf_with_its_bin_and_a_scale(gltf_readers, tmp_path):
    """.gltf + .bin plays as the .glb does; --scale multiplies every
    coordinate; RiTE's Y-up file space is glTF's: the vertices are the
    RAM's."""
    scene = for_path(RITE[0]).read_scene([str(p) for p in RITE], warnings=[])
    glb = _case(scene, tmp_path / "h.glb")
    gltf = _case(scene, tmp_path / "h.gltf")
    small = _case(scene, tmp_path / "small.glb", scale=0.01)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["h.bin", "h.glb", "h.gltf", "small.glb"]
    for case in (glb, gltf, small):
        assert case.loss is None
        dev, joints, read = _played(gltf_readers, case)
        assert read.errors == 0 and dev <= TOLERANCE and joints <= TOLERANCE, (case.output.name, dev, joints)
    a, b = gc.Gltf(tmp_path / "h.glb"), gc.Gltf(tmp_path / "small.glb")
    assert a.json == gc.Gltf(tmp_path / "h.gltf").json | {"buffers": a.json["buffers"]}
    pa = np.concatenate([a.accessor(p["attributes"]["POSITION"]) for p in a.json["meshes"][0]["primitives"]])
    pb = np.concatenate([b.accessor(p["attributes"]["POSITION"]) for p in b.json["meshes"][0]["primitives"]])
    np.testing.assert_allclose(pb, pa * 0.01, rtol=1e-6)
    from legacy_skin_io.io.rite.ram_reader import read_ram

    ram = read_ram(RITE[0])
    src = np.concatenate(glb.layout.meshes[0].sources)
    np.testing.assert_allclose(pa, ram.positions[src], atol=1e-6 * np.abs(ram.positions).max())


def test_a_sheared_matrix_key_is_reported_by_the_reader(tmp_path):
    """.X matrix keys are decomposed into translation, rotation and scale:
    one with shear is one deviation naming where, which convert reports as
    its loss whatever it writes."""
    shear = np.eye(4)
    shear[1, 0] = 0.25                         # (row vectors: y picks up x)
    keys = ";\n".join(f"{t}; 16; {', '.join(f'{x:g}' for x in (np.eye(4) if t == 0 else shear).reshape(-1))};;"
                      for t in (0, 100))
    text = ("xof 0303txt 0032\nFrame Root {\n FrameTransformMatrix { 1,0,0,0, 0,1,0,0, 0,0,1,0, 0,0,0,1;; }\n"
            " Frame Arm {\n  FrameTransformMatrix { 1,0,0,0, 0,1,0,0, 0,0,1,0, 0,1,0,1;; }\n }\n}\n"
            "AnimationSet Bend {\n Animation {\n  { Arm }\n  AnimationKey {\n   4;\n   2;\n   " + keys + ";\n  }\n"
            " }\n}\n")
    src = tmp_path / "sheared.x"
    src.write_text(text)
    warnings = Warnings()
    for_path(src).read_scene([str(src)], warnings=warnings)
    found = [w for w in warnings if isinstance(w, Deviation)]
    assert len(found) == 1 and "matrix keys with shear" in found[0] and "'Arm' in Bend, tick 100" in found[0]
    assert 0.1 < found[0].figure < 0.3
    out = convert.convert_files([str(src)], str(tmp_path / "sheared.glb"))
    assert not out.error and out.loss == found[0].figure


def test_convert_writes_glb_from_the_command_line_and_a_folder(tmp_path):
    r = run_cli("convert", *RITE, "-o", tmp_path / "h.glb", "--max-influences", "8", "--scale", "2",
                "--embed-images")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == f"wrote {tmp_path / 'h.glb'}"
    tree = tmp_path / "tree"
    (tree / "chars").mkdir(parents=True)
    for p in RITE:
        shutil.copy(p, tree / "chars" / p.name)
    shutil.copy(DATA / "x" / "assimp" / "anim_test.x", tree / "cyl.x")
    shutil.copy(tmp_path / "h.glb", tree / "old.glb")          # a glTF file below DIR is no input
    r = run_cli("convert", tree, "-o", tmp_path / "out", "--to", "glb")
    assert r.returncode == 0, r.stdout + r.stderr
    assert sorted(p.relative_to(tmp_path / "out").as_posix() for p in (tmp_path / "out").rglob("*.glb")) == \
        ["chars/humanoid.glb", "cyl.glb"]


def test_a_gltf_file_is_no_input(tmp_path):
    out = tmp_path / "h.glb"
    convert.convert([str(p) for p in RITE], str(out), warnings=[])
    with pytest.raises(FormatError, match=r"h.glb: glTF 2.0 files are written here, not read"):
        convert.convert([str(out)], str(tmp_path / "h.x"), warnings=[])


def test_nothing_is_half_written(tmp_path):
    """A .gltf whose .bin cannot be written leaves neither file."""
    (tmp_path / "h.bin").mkdir()
    scene = for_path(RITE[0]).read_scene([str(RITE[0])], warnings=[])
    with pytest.raises(FormatError, match="h.bin"):
        GLTF.write_scene(scene, tmp_path / "h.gltf", warnings=[])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["h.bin"]
    with pytest.raises(FormatError, match="named .glb or .gltf"):
        from_scene.write_scene(scene, tmp_path / "h.txt")


def test_a_scene_without_skeleton_or_faces(gltf_readers, tmp_path):
    """Meshes only (placed by their matrices); a mesh of lines only is left
    out with a warning; an empty scene is a valid file of one empty scene
    (without nodes: an empty list is an error)."""
    scene = gc.hard_scene()
    body = dataclasses.replace(scene.meshes[0], skin=None, matrix=gc.at(1, 2, 3))
    lines = Mesh("lines", np.eye(3), np.array([2]), np.array([0, 1]))
    flat = Scene("flat", None, [body, lines], scene.materials, [], Source("none"))
    case = _case(flat, tmp_path / "flat.glb")
    assert "mesh 'lines' has no face with 3 corners or more: left out" in case.warnings
    dev, _, read = _played(gltf_readers, case)
    assert read.errors == 0 and dev <= TOLERANCE
    GLTF.write_scene(Scene("empty"), tmp_path / "empty.glb", warnings=[])
    read = gltf_readers.read([(tmp_path / "empty.glb", [])])[0]
    assert read.errors == 0 and gc.Gltf(tmp_path / "empty.glb").json["scenes"] == [{}]


def test_clip_times_start_at_zero_for_a_timeline_cut(tmp_path):
    """A clip cut from a timeline (frame ranges) starts at 0; a clip keyed
    before 0 is moved to 0, said once."""
    from legacy_skin_io.scene.timeline import Range, split

    scene = gc.hard_scene()
    swing = scene.clips[0]
    cut = split(swing, [Range("second half", 2400, 4800)])[0]
    early = dataclasses.replace(swing, name="early", rotation=sampling.Channels.from_tracks(
        [1], [swing.rotation.times - 1200.0], [swing.rotation.values], 4), start=-1200.0)
    warnings = Warnings()
    GLTF.write_scene(dataclasses.replace(scene, clips=[cut, early]), tmp_path / "t.glb", warnings=warnings, fps=24.0)
    doc = gc.Gltf(tmp_path / "t.glb")
    starts = {a["name"]: min(float(doc.accessor(s["input"]).min()) for s in a["samplers"])
              for a in doc.json["animations"]}
    assert starts == {"second half": 0.0, "early": 0.0}
    assert "early: starts 6 frame(s) before 0; written from time 0 (every key that much later)" in warnings


def test_what_no_file_can_hold_is_refused_in_one_line(tmp_path):
    """A coordinate past float32 (glTF's) or not a number: one line naming
    it, nothing written; a skin of more joints than 16-bit JOINTS hold."""
    scene = gc.hard_scene()
    for bad in (np.inf, 1e39, np.nan):
        body = dataclasses.replace(scene.meshes[0], positions=scene.meshes[0].positions.copy())
        body.positions[3, 1] = bad
        with pytest.raises(FormatError, match=r"^h.glb: mesh 'body': vertex positions"):
            GLTF.write_scene(dataclasses.replace(scene, meshes=[body]), tmp_path / "h.glb", warnings=[])
    assert list(tmp_path.iterdir()) == []


def test_every_uv_set_and_the_maps_glTF_has(tmp_path):
    """Further UV sets as TEXCOORD_1...; a normal map as the normal texture,
    an emission map as the emissive texture (white, as Blender's import
    shows it); bump and specular maps, which glTF's core material has no
    place for, said once each."""
    crafted = DATA / "x" / "crafted"
    scene = for_path(crafted / "uv_sets.x").read_scene([str(crafted / "uv_sets.x")], warnings=[])
    case = _case(scene, tmp_path / "uv.glb")
    doc = gc.Gltf(case.output)
    for i, w in case.layout.meshes.items():
        m = scene.meshes[i]
        assert m.uv_sets
        for prim in doc.json["meshes"][w.index]["primitives"]:
            assert sorted(a for a in prim["attributes"] if a.startswith("TEXCOORD")) == \
                [f"TEXCOORD_{k}" for k in range(1 + len(m.uv_sets))]
            got = doc.accessor(prim["attributes"]["TEXCOORD_1"]).astype(np.float64)
            want = next(iter(m.uv_sets.values()))
            want = np.stack((want[:, 0], 1.0 - want[:, 1]), axis=1)
            assert {tuple(r) for r in np.round(got, 5)} <= {tuple(r) for r in np.round(want, 5)}
    warnings = Warnings()
    convert.convert([str(crafted / "effect_maps.x")], str(tmp_path / "maps.glb"), warnings=warnings)
    mats = {m["name"]: m for m in gc.Gltf(tmp_path / "maps.glb").json["materials"]}
    images = gc.Gltf(tmp_path / "maps.glb").json["images"]
    assert images[mats["Bricks"]["normalTexture"]["index"]]["uri"] == "bricks_normal.png"
    assert "normalTexture" not in mats["Wall"]
    assert "specular maps, which glTF's materials have no place for, not written (1): 'Bricks' " \
           "(bricks_specular.png)" in warnings
    assert "bump maps, which glTF's materials have no place for, not written (1): 'Wall' (wall_height.png)" \
        in warnings
    emissive = Material("glow", texture="glow_D.png", maps={"emission": "glow_I.png"})
    scene = gc.hard_scene()
    scene.materials[1] = emissive
    doc = gc.Gltf(_case(scene, tmp_path / "glow.glb").output)
    glow = next(m for m in doc.json["materials"] if m["name"] == "glow" and "emissiveTexture" in m)
    assert glow["emissiveFactor"] == [1.0, 1.0, 1.0]
    assert doc.json["images"][glow["emissiveTexture"]["index"]]["uri"] == "glow_I.png"
