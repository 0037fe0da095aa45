# SPDX-License-Identifier: GPL-3.0-or-later
"""Every UV set and every texture map through Blender, with the installed
extension through bpy.ops: the file's second UV set is a second UV map and
is written back; an EffectInstance normal map is a Normal Map node on the
Principled BSDF's Normal with the file's image, and a render shows it;
bump, specular, emission maps, GameGuru's _N/_S/_I beside a _D texture,
several TextureFilename, missing files kept to relink. Expected values come
from the files (a fresh parse), never from the import."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from blender_checks import render_pixels
from test_xfile_maps import second_set
from xfile_compare import all_meshes

from legacy_skin_io.io.xfile import read_xfile

CRAFTED = Path(__file__).resolve().parent / "data" / "x" / "crafted"
UV_SETS = CRAFTED / "uv_sets.x"
EFFECTS = CRAFTED / "effect_maps.x"
STORAGE = ["text", "binary", "binary_compressed"]


def _loops(me) -> np.ndarray:
    v = np.empty(len(me.loops), dtype=np.int32)
    me.loops.foreach_get("vertex_index", v)
    return v


def _uv(me, name: str) -> np.ndarray:
    uv = np.empty(2 * len(me.loops), dtype=np.float32)
    me.uv_layers[name].uv.foreach_get("vector", uv)
    return uv.reshape(-1, 2).astype(np.float64)


def test_two_uv_sets_import_as_two_uv_maps_and_export_both(bpy, tmp_path):
    source = {m.name: m for m in all_meshes(read_xfile(UV_SETS))}
    # Weld Vertices off: Blender keeps the file's vertices, so each loop's UVs are its file vertex's
    assert bpy.ops.import_scene.xfile(filepath=str(UV_SETS), weld=False) == {"FINISHED"}
    for name, xm in source.items():
        me = bpy.data.objects[name].data
        lv = _loops(me)
        for layer, values in (("UVMap", xm.uvs), ("UVMap.001", second_set(xm))):
            got = _uv(me, layer)
            assert np.allclose(got[:, 0], values[lv, 0], atol=1e-6) and \
                np.allclose(got[:, 1], 1.0 - values[lv, 1], atol=1e-6), (name, layer)
    # the defaults (welded): two UV maps, written back corner by corner below
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.import_scene.xfile(filepath=str(UV_SETS)) == {"FINISHED"}
    for name in source:
        me = bpy.data.objects[name].data
        assert [layer.name for layer in me.uv_layers] == ["UVMap", "UVMap.001"], name
        assert me.uv_layers.active.name == "UVMap"
    for storage in STORAGE:
        out = tmp_path / f"uv_sets_{storage}.x"
        assert bpy.ops.export_scene.xfile(filepath=str(out), storage=storage) == {"FINISHED"}
        # the boxes by their sizes (1, 0.9, 0.8): written meshes are named after their objects' frames
        written = {round(float(np.ptp(m.positions)), 3): m for m in all_meshes(read_xfile(out))}
        for name, xm in source.items():
            w = written[round(float(np.ptp(xm.positions)), 3)]
            assert sorted(w.extra_streams) == ["TEXCOORD1"], (storage, name)
            # corner by corner: the file's face corners against the written ones
            for a, b in ((xm.uvs, w.uvs), (second_set(xm), w.extra_streams["TEXCOORD1"])):
                assert np.abs(a[xm.face_indices] - b[w.face_indices]).max() < 1e-6, (storage, name)
    # written back, read back: two UV maps again
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.import_scene.xfile(filepath=str(tmp_path / "uv_sets_binary_compressed.x")) == {"FINISHED"}
    assert all([layer.name for layer in o.data.uv_layers] == ["UVMap", "UVMap.001"]
               for o in bpy.data.objects if o.type == "MESH")


def _bsdf(mat):
    return next(n for n in mat.node_tree.nodes if n.type == "BSDF_PRINCIPLED")


def _from(socket):
    return socket.links[0].from_node if socket.is_linked else None


def _file(img) -> str:
    return Path(img.filepath).name


def test_effect_instance_normal_map_shows_in_the_material(bpy):
    assert bpy.ops.import_scene.xfile(filepath=str(EFFECTS)) == {"FINISHED"}
    files = {m.name: m for mesh in all_meshes(read_xfile(EFFECTS)) for m in mesh.materials}
    params = {n: v for _k, n, v in files["Bricks"].effect.params}
    bricks = bpy.data.materials["Bricks"]
    bsdf = _bsdf(bricks)
    nm = _from(bsdf.inputs["Normal"])
    assert nm is not None and nm.type == "NORMAL_MAP"
    tex = _from(nm.inputs["Color"])
    assert tex.type == "TEX_IMAGE" and _file(tex.image) == params["g_NormalTexture"]
    assert tuple(tex.image.size) == (32, 32) and tex.image.colorspace_settings.name == "Non-Color"
    assert _file(_from(bsdf.inputs["Base Color"]).image) == files["Bricks"].texture
    # the specular map's file is not there: an image with its path, a node not connected
    spec = next(n for n in bricks.node_tree.nodes if n.type == "TEX_IMAGE" and n.image
                and _file(n.image) == params["SpecularMap"])
    assert not any(o.is_linked for o in spec.outputs) and spec.label.startswith("Missing")
    assert Path(bpy.path.abspath(spec.image.filepath)).parent == EFFECTS.parent
    # the Wall: its base colour named by Texture0@Name, its bump map missing (kept, not connected)
    wall = bpy.data.materials["Wall"]
    wall_params = {n: v for _k, n, v in files["Wall"].effect.params}
    assert _file(_from(_bsdf(wall).inputs["Base Color"]).image) == wall_params["Texture0@Name"]
    assert not _bsdf(wall).inputs["Normal"].is_linked
    assert any(n.type == "TEX_IMAGE" and n.image and _file(n.image) == wall_params["BumpMap"]
               for n in wall.node_tree.nodes)
    # two TextureFilename: the first is the base colour, the second an image node not connected
    decal = bpy.data.materials["Decal"]
    textures = [files["Decal"].texture, *files["Decal"].more_textures]
    assert _file(_from(_bsdf(decal).inputs["Base Color"]).image) == textures[0]
    second = [n for n in decal.node_tree.nodes if n.type == "TEX_IMAGE" and _file(n.image) == textures[1]]
    assert len(second) == 1 and not any(o.is_linked for o in second[0].outputs)
    # GameGuru: crate_N / crate_S / crate_I beside crate_D
    crate = _bsdf(bpy.data.materials["Crate"])
    assert _file(_from(_from(crate.inputs["Normal"]).inputs["Color"]).image) == "crate_N.png"
    assert _file(_from(crate.inputs["Specular IOR Level"]).image) == "crate_S.png"
    assert _file(_from(crate.inputs["Emission Color"]).image) == "crate_I.png"


def _render(bpy, size=(64, 64)) -> np.ndarray:
    """The Bricks box, seen along -Y under a sun, by Cycles on the CPU: (h, w, 3)."""
    scene = bpy.context.scene
    for o in list(scene.objects):
        if o.type == "MESH" and o.name != "BricksBox":
            o.hide_render = True
    box = bpy.data.objects["BricksBox"]
    centre = np.array(box.matrix_world.translation)
    cam = bpy.data.objects.new("cam", bpy.data.cameras.new("cam"))
    scene.collection.objects.link(cam)
    cam.data.type = "ORTHO"
    cam.data.ortho_scale = 1.6
    cam.location = tuple(centre + [0.0, -10.0, 0.0])
    cam.rotation_euler = (np.pi / 2, 0, 0)
    scene.camera = cam
    sun = bpy.data.objects.new("sun", bpy.data.lights.new("sun", "SUN"))
    sun.data.energy = 4.0
    sun.rotation_euler = (np.pi / 2 - 0.2, 0.0, -1.0)       # grazing from the side: ridges shade
    scene.collection.objects.link(sun)
    scene.render.engine = "CYCLES"
    scene.cycles.device = "CPU"
    scene.cycles.samples = 4
    px = render_pixels(bpy, size, "maps_render")
    for o in (cam, sun):
        bpy.data.objects.remove(o)
    return px[:, :, :3]


def test_normal_map_shows_in_a_render(bpy):
    """The same view with the normal map linked and unlinked: the ridges of
    the map shade the face (columns vary far more than without it)."""
    assert bpy.ops.import_scene.xfile(filepath=str(EFFECTS)) == {"FINISHED"}
    with_map = _render(bpy)
    mat = bpy.data.materials["Bricks"]
    bsdf = _bsdf(mat)
    mat.node_tree.links.remove(bsdf.inputs["Normal"].links[0])
    without = _render(bpy)
    face = (slice(16, 48), slice(16, 48))
    diff = np.abs(with_map[face] - without[face]).mean()
    assert diff > 0.02, diff
    # the map's 4 ridges across u: brightness varies along the face's columns with it
    lum_with = with_map[face].mean(axis=(0, 2))
    lum_without = without[face].mean(axis=(0, 2))
    assert np.ptp(lum_with) > 2 * np.ptp(lum_without) + 0.02, (np.ptp(lum_with), np.ptp(lum_without))


@pytest.mark.parametrize("storage", STORAGE)
def test_texture_maps_export_back(bpy, tmp_path, storage):
    assert bpy.ops.import_scene.xfile(filepath=str(EFFECTS)) == {"FINISHED"}
    out = tmp_path / f"maps_{storage}.x"
    assert bpy.ops.export_scene.xfile(filepath=str(out), storage=storage) == {"FINISHED"}
    source = {m.name: m for mesh in all_meshes(read_xfile(EFFECTS)) for m in mesh.materials}
    written = {m.name: m for mesh in all_meshes(read_xfile(out)) for m in mesh.materials}
    for name, a in source.items():
        b = written[name]
        assert (b.texture, b.more_textures) == (a.texture, a.more_textures), name
        if a.effect is None:
            assert b.effect is None, name
        else:
            assert b.effect.filename == a.effect.filename
            assert [p[:2] for p in b.effect.params] == [p[:2] for p in a.effect.params]
            for (kind, _n, va), (_k, _m, vb) in zip(a.effect.params, b.effect.params):
                assert np.allclose(va, vb, rtol=1e-7) if kind == "floats" else va == vb, (name, _n)
