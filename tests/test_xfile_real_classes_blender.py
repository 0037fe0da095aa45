# SPDX-License-Identifier: GPL-3.0-or-later
"""Classes of real .X files that must look right with the defaults,
imported through bpy.ops with the installed extension and looked at as
a user would: visible (Workbench renders), faces out, materials coloured,
textures relinkable, files other readers accept imported. Expected values
come from the files (a fresh parse) and from geometry, never from what the
import built."""
from __future__ import annotations

from pathlib import Path

import assimp_reading as ar
import numpy as np
import pytest
from blender_checks import ext, imported, play, reference, render_pixels, save_png, verify
from conftest import DATA
from xfile_compare import all_meshes

from legacy_skin_io.io.xfile import read_xfile

X = DATA / "x"
REAL = X / "real"
CRAFTED = X / "crafted"
DWARF = REAL / "walbourn__directx-sdk-legacy-samples" / "Dwarf.x"
MIRRORED = [REAL / "PilzAdam__mobs" / "mobs_rat.x", REAL / "PilzAdam__mobs" / "mobs_stone_monster.x",
            REAL / "minetest__minetest_game" / "character.x", DWARF, CRAFTED / "inside_out_mirror_root.x"]
CLOSED = {"mobs_rat.x", "mobs_stone_monster.x", "character.x", "inside_out_mirror_root.x"}


def _arr(coll, attr, width, dtype=np.float32):
    a = np.empty(len(coll) * width, dtype=dtype)
    coll.foreach_get(attr, a)
    return a.reshape(-1, width) if width > 1 else a


def _agreement(me, attribute: str | None = None, flat: bool = True) -> float:
    """Fraction of corners whose normal (what Blender shades with, or the
    corner vectors of ``attribute``) points to the side its face's winding
    makes the front (``flat=False``: of the faces with an area)."""
    cn = _arr(me.corner_normals if attribute is None else me.attributes[attribute].data, "vector", 3)
    pn = _arr(me.polygons, "normal", 3)
    sizes = _arr(me.polygons, "loop_total", 1, np.int32)
    keep = np.repeat(flat | (_arr(me.polygons, "area", 1) > 0), sizes)
    return float((np.einsum("ij,ij->i", cn, np.repeat(pn, sizes, axis=0)) > 0)[keep].mean())


def _front_volume(bpy, obj) -> float:
    """Signed volume of the evaluated mesh as Blender shows it (its winding's
    front side; Blender turns a mirrored object's faces back): positive when
    a closed mesh's faces point out."""
    dg = bpy.context.evaluated_depsgraph_get()
    ev = obj.evaluated_get(dg)
    me = ev.to_mesh()
    try:
        p = _arr(me.vertices, "co", 3).astype(np.float64)
        cv = _arr(me.loops, "vertex_index", 1, np.int32)
        starts = _arr(me.polygons, "loop_start", 1, np.int32)
        sizes = _arr(me.polygons, "loop_total", 1, np.int32)
    finally:
        ev.to_mesh_clear()
    vol = 0.0
    for s, n in zip(starts.tolist(), sizes.tolist()):
        ring = p[cv[s:s + n]]
        vol += sum(np.dot(ring[0], np.cross(ring[k], ring[k + 1])) for k in range(1, n - 1)) / 6.0
    return vol


def _render_alpha(bpy, size=(96, 64)) -> np.ndarray:
    """The scene rendered by Workbench over a transparent film, looking down
    -Y at every mesh, orthographic: (h, w) alpha."""
    scene = bpy.context.scene
    pts = np.concatenate([np.array([o.matrix_world @ v.co for v in o.data.vertices]) for o in scene.objects
                          if o.type == "MESH"])
    lo, hi = pts.min(0), pts.max(0)
    cam = bpy.data.objects.new("cam", bpy.data.cameras.new("cam"))
    scene.collection.objects.link(cam)
    cam.data.type = "ORTHO"
    cam.data.ortho_scale = float(max(hi[0] - lo[0], (hi[2] - lo[2]) * size[0] / size[1])) * 1.1
    cam.location = ((lo[0] + hi[0]) / 2, lo[1] - 10.0 * (hi - lo).max() - 1.0, (lo[2] + hi[2]) / 2)
    cam.rotation_euler = (np.pi / 2, 0, 0)
    cam.data.clip_end = 1e6
    scene.camera = cam
    scene.render.engine = "BLENDER_WORKBENCH"
    scene.display.shading.color_type = "MATERIAL"
    scene.render.film_transparent = True
    px = render_pixels(bpy, size, "alpha_check")
    bpy.data.objects.remove(cam)
    return px[:, :, 3]


# ---------------------------------------------------------------- alpha
def test_alpha_zero_is_opaque_half_is_see_through(bpy):
    assert bpy.ops.import_scene.xfile(filepath=str(CRAFTED / "alpha_zero_half_one.x")) == {"FINISHED"}
    file_alpha = {m.name: float(m.face_color[3]) for mesh in all_meshes(read_xfile(CRAFTED / "alpha_zero_half_one.x"))
                  for m in mesh.materials}
    assert file_alpha == {"AlphaZero": 0.0, "AlphaHalf": 0.5, "AlphaOne": 1.0}
    for name, see_through in (("AlphaZero", False), ("AlphaHalf", True), ("AlphaOne", False)):
        mat = bpy.data.materials[name]
        bsdf = next(n for n in mat.node_tree.nodes if n.type == "BSDF_PRINCIPLED")
        alpha = bsdf.inputs["Alpha"].default_value
        assert (alpha, mat.diffuse_color[3]) == ((0.5, 0.5) if see_through else (1.0, 1.0)), name
        assert (mat.blend_method == "BLEND") == see_through, name
        if hasattr(mat, "surface_render_method"):
            assert (mat.surface_render_method == "BLENDED") == see_through, name
    # what Workbench shows: the three boxes left to right, the middle one see-through
    alpha = _render_alpha(bpy)
    h, w = alpha.shape
    cols = [int(w * f) for f in (0.17, 0.5, 0.83)]
    zero, half, one = (float(alpha[h // 2, c]) for c in cols)
    assert zero > 0.99 and one > 0.99, (zero, one)
    assert 0.3 < half < 0.95, half


def test_dwarf_is_visible_and_exports_its_alpha(bpy, tmp_path):
    assert bpy.ops.import_scene.xfile(filepath=str(DWARF)) == {"FINISHED"}
    _arm, meshes = imported(bpy)
    for obj in meshes.values():
        for mat in obj.data.materials:
            bsdf = next(n for n in mat.node_tree.nodes if n.type == "BSDF_PRINCIPLED")
            assert bsdf.inputs["Alpha"].default_value == 1.0 and mat.blend_method != "BLEND"
    alpha = _render_alpha(bpy)
    assert (alpha > 0.99).mean() > 0.1           # (alpha 0 blended: nothing at all)
    out = tmp_path / "dwarf.x"
    assert bpy.ops.export_scene.xfile(filepath=str(out)) == {"FINISHED"}
    written = [m for mesh in all_meshes(read_xfile(out)) for m in mesh.materials]
    assert written and all(m.face_color[3] == 0.0 for m in written)


def _warnings(out: str) -> str:
    """The warning lines of an import's printed reports (its summary, reported
    last, quotes the first warning again)."""
    return "\n".join(line for line in out.splitlines() if line.startswith("Warning:"))


# ---------------------------------------------------------------- faces out
@pytest.mark.parametrize("path", MIRRORED, ids=lambda p: p.name)
def test_faces_point_the_way_the_files_normals_say(bpy, path, capfd):
    assert bpy.ops.import_scene.xfile(filepath=str(path)) == {"FINISHED"}
    printed = capfd.readouterr().out
    out = _warnings(printed)      # the summary also quotes the first warning
    # the exporters' mirror is baked into the data (their winding, inside out in their own space, is what
    # Direct3D shows out); only the crafted MixedBox's odd side shows in and is turned
    assert [ln for ln in printed.splitlines() if "note:" in ln and "placed through a mirror" in ln]
    assert out.count("wound against their own normals") == (path.name == "inside_out_mirror_root.x")
    arm, meshes = imported(bpy)
    for obj in meshes.values():
        assert np.linalg.det(np.array(obj.matrix_world)[:3, :3]) > 0, obj.name     # no mirror left in a matrix
        # RotatedNormals: normals stored turned 150 degrees (4 of 12 faces agree as stored), read in the frame's space
        assert _agreement(obj.data) >= 0.99, obj.name
        if path.name in CLOSED:
            assert _front_volume(bpy, obj) > 0, obj.name
    # the positions stay exact (the first animation, as the import plays it)
    ref = reference("xfile", [path])
    clip = ref.clips[0] if ref.clips else None
    if clip is not None:
        play(arm, clip.name)
    sc = bpy.context.scene
    report = verify(bpy, meshes, ref, clip, [sc.frame_start, (sc.frame_start + sc.frame_end) // 2, sc.frame_end])
    assert report.ok, report


def test_extraanim_meshes_keep_their_winding(bpy, capfd):
    path = REAL / "TheGameCreators__Dark-Basic-Pro" / "extraanim.X"
    assert bpy.ops.import_scene.xfile(filepath=str(path)) == {"FINISHED"}
    assert "wound" not in capfd.readouterr().out
    _arm, meshes = imported(bpy)
    # the file's own normals (kept exactly for export), turned up to 92 degrees against its faces, agree
    # with 3 of 4 faces in two meshes: the winding is the file's
    got = {o.name: _agreement(o.data, "lsio_normal") for o in meshes.values()}
    assert got.pop("R_arm_lowe") == got.pop("R_Hand") == 0.75
    assert all(v == 1.0 for v in got.values()), got
    # what Blender shades with leans to each face's front (the stray corners reflected across their face;
    # Cylinder01's 8 faces without area have no front)
    shaded = {o.name: _agreement(o.data, flat=False) for o in meshes.values()}
    assert all(v == 1.0 for v in shaded.values()), {k: v for k, v in shaded.items() if v < 1}


def test_turned_faces_export_as_the_file_winds_them(bpy, tmp_path):
    path = REAL / "minetest__minetest_game" / "character.x"
    assert bpy.ops.import_scene.xfile(filepath=str(path)) == {"FINISHED"}
    out = tmp_path / "character.x"
    assert bpy.ops.export_scene.xfile(filepath=str(out)) == {"FINISHED"}
    src = next(iter(all_meshes(read_xfile(path))))
    got = next(iter(all_meshes(read_xfile(out))))
    a, b = src.positions[src.face_indices], got.positions[got.face_indices]
    assert a.shape == b.shape and np.abs(a - b).max() <= 1e-5 * np.abs(a).max()
    res = ar.run("info", out, timeout=120)
    assert res.returncode == 0 and "Meshes:             1" in res.stdout, res.stdout + res.stderr


def _assimp_faces(path: Path, tmp: Path) -> np.ndarray:
    """(F, 3, 3) the corner points of every face as assimp reads ``path``
    (``assimp export`` to OBJ: its frames applied, its winding as it shows it)."""
    tmp.mkdir(parents=True, exist_ok=True)
    out = tmp / (path.stem + ".obj")
    res = ar.run("export", path, out, timeout=120)
    assert res.returncode == 0 and out.exists(), res.stdout + res.stderr
    v, f = [], []
    for line in out.read_text().splitlines():
        t = line.split()
        if t and t[0] == "v":
            v.append([float(x) for x in t[1:4]])
        elif t and t[0] == "f":
            f.append([int(c.split("/")[0]) - 1 for c in t[1:]])
    return np.array(v)[np.array(f)]


CUBES = [X / "assimp" / n for n in ("test_cube_text.x", "test_cube_binary.x", "test_cube_compressed.x")]


@pytest.mark.parametrize("path", CUBES, ids=lambda p: p.name)
def test_a_mirrored_skinned_cube_faces_out_and_exports_its_own(bpy, path, tmp_path, capfd):
    """The cube's frame mirrors (its root swaps Y and Z), its skin does not
    (matrixOffset takes the mirror back out); its stored normals agree with
    its winding on 8 of 12 faces. Blender shows it out, its object free of
    mirrors, deforming exactly; exported and read back (by the reader and by
    assimp) it is the source file's, corner by corner; imported again it
    shows out again."""
    assert bpy.ops.import_scene.xfile(filepath=str(path)) == {"FINISHED"}
    printed = capfd.readouterr().out
    assert [ln for ln in printed.splitlines() if "note:" in ln and "placed through a mirror" in ln]
    arm, meshes = imported(bpy)
    (obj,) = meshes.values()
    assert np.linalg.det(np.array(obj.matrix_world)[:3, :3]) > 0
    assert _front_volume(bpy, obj) > 0                          # closed: its faces point out
    assert _agreement(obj.data) == 1.0
    ref = reference("xfile", [path])
    report = verify(bpy, meshes, ref, None, [bpy.context.scene.frame_current])
    assert report.ok and report.max_error <= 1e-6 * report.size, report
    out = tmp_path / "cube.x"
    assert bpy.ops.export_scene.xfile(filepath=str(out)) == {"FINISHED"}
    src, back = next(iter(all_meshes(read_xfile(path)))), next(iter(all_meshes(read_xfile(out))))
    a, b = src.positions[src.face_indices], back.positions[back.face_indices]
    assert a.shape == b.shape and np.abs(a - b).max() <= 1e-6      # the file's winding, corner by corner
    na, nb = src.normals[src.normal_face_indices], back.normals[back.normal_face_indices]
    assert na.shape == nb.shape and np.abs(na - nb).max() <= 1e-6  # and its own normals
    ma = [sw.matrix_offset for sw in src.skin_weights]
    mb = [sw.matrix_offset for sw in back.skin_weights]
    assert len(ma) == len(mb) and all(np.abs(x - y).max() <= 1e-6 for x, y in zip(ma, mb))
    fa, fb = _assimp_faces(path, tmp_path / "a"), _assimp_faces(out, tmp_path / "b")
    assert fa.shape == fb.shape and np.abs(fa - fb).max() <= 1e-5
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.import_scene.xfile(filepath=str(out)) == {"FINISHED"}
    _arm, meshes = imported(bpy)
    (obj,) = meshes.values()
    assert _front_volume(bpy, obj) > 0 and _agreement(obj.data) == 1.0


def _away(faces: np.ndarray) -> float:
    """Fraction of a convex solid's faces ((F, k, 3) corner points) wound
    away from its centre."""
    c = faces.mean(axis=1)
    g = np.cross(faces, np.roll(faces, -1, axis=1)).sum(axis=1)
    return float((np.einsum("ij,ij->i", c - c.mean(axis=0), g) > 0).mean())


@pytest.mark.parametrize("scale", [(-1.0, 1.0, 1.0), (1.0, 1.0, 1.0), (-2.0, -1.0, -0.5)],
                         ids=["mirrored", "plain", "three mirrors"])
def test_an_object_that_mirrors_exports_the_side_it_shows(bpy, tmp_path, scale):
    """A cube scaled through a mirror in Blender still shows out (Blender
    judges a mirrored object's faces by its data): the .X file shows it out
    too, to assimp and to the importer, whose object is then free of mirrors."""
    bpy.ops.mesh.primitive_cube_add()
    obj = bpy.context.active_object
    obj.scale = scale
    bpy.context.view_layer.update()
    assert _front_volume(bpy, obj) > 0
    out = tmp_path / "cube.x"
    assert bpy.ops.export_scene.xfile(filepath=str(out)) == {"FINISHED"}
    (m,) = all_meshes(read_xfile(out))
    normals = m.normals[m.normal_face_indices].reshape(-1, 4, 3).sum(axis=1)
    g = np.cross(m.positions[m.face_indices].reshape(-1, 4, 3),
                 np.roll(m.positions[m.face_indices].reshape(-1, 4, 3), -1, axis=1)).sum(axis=1)
    assert (np.einsum("ij,ij->i", g, normals) * np.sign(np.prod(scale)) > 0).all()
    assert _away(_assimp_faces(out, tmp_path / "assimp")) == 1.0
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.import_scene.xfile(filepath=str(out)) == {"FINISHED"}
    _arm, meshes = imported(bpy)
    (back,) = meshes.values()
    assert np.linalg.det(np.array(back.matrix_world)[:3, :3]) > 0
    assert _front_volume(bpy, back) > 0 and _agreement(back.data) == 1.0


# ---------------------------------------------------------------- materials by name
def test_materials_inside_frames_colour_their_meshes(bpy, capfd):
    assert bpy.ops.import_scene.xfile(filepath=str(CRAFTED / "materials_in_frames.x")) == {"FINISHED"}
    assert "unknown" not in capfd.readouterr().out
    _arm, meshes = imported(bpy)
    colours = {o.name: [tuple(round(c, 6) for c in m.diffuse_color) for m in o.data.materials]
               for o in meshes.values()}
    assert colours == {"BodyMesh": [(1, 0, 0, 1), (0, 0, 1, 1)], "HeadMesh": [(0, 0, 1, 1)],
                       "LegMesh": [(0, 1, 0, 1)]}


# ---------------------------------------------------------------- textures
def _textured_file(path: Path, names: list[str]) -> None:
    mats = "".join(f'Material m{i} {{ 1;1;1;1;; 0; 0;0;0;; 0;0;0;; TextureFilename {{ "{n}"; }} }}\n'
                   for i, n in enumerate(names)).replace("\\", "\\\\")
    faces = ",\n".join("3;0,1,2;" for _ in names)
    refs = "\n".join(f"{{m{i}}}" for i in range(len(names)))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"xof 0303txt 0032\n{mats}Mesh tri {{\n3;\n0;0;0;,1;0;0;,0;1;0;;\n{len(names)};\n{faces};\n"
                    f"MeshMaterialList {{\n{len(names)};\n{len(names)};\n"
                    + ",\n".join(str(i) for i in range(len(names))) + f";\n{refs}\n}}\n}}\n")


def test_a_missing_texture_keeps_an_image_to_relink(bpy, tmp_path, capfd):
    model = tmp_path / "a" / "b" / "m.x"
    _textured_file(model, ["skin.png", "maps\\face.tga", "C:\\art\\eyes.dds"])
    assert bpy.ops.import_scene.xfile(filepath=str(model)) == {"FINISHED"}
    out = capfd.readouterr().out
    warn = [line for line in _warnings(out).splitlines() if "not found" in line]
    assert len(warn) == 1 and warn[0].count("3 texture(s)") == 1
    assert all(n in warn[0] for n in ("skin.png", "face.tga", "eyes.dds"))
    here = model.parent.resolve()
    want = {"skin.png": here / "skin.png", "face.tga": here / "maps" / "face.tga", "eyes.dds": here / "eyes.dds"}
    images = {i.name: i for i in bpy.data.images}
    assert set(images) == set(want)
    for name, img in images.items():
        assert Path(bpy.path.abspath(img.filepath)) == want[name] and not img.has_data
    for mat in bpy.data.materials:
        tex = [n for n in mat.node_tree.nodes if n.type == "TEX_IMAGE"]
        assert len(tex) == 1 and "Missing" in tex[0].label and tex[0].image.name in tex[0].label
    # File > External Data > Find Missing Files, pointed at where the images are now
    found = tmp_path / "found"
    for name in want:
        save_png(bpy, found / "deep" / name)
    bpy.ops.file.find_missing_files(directory=str(found))
    for name, img in images.items():
        assert Path(bpy.path.abspath(img.filepath)) == (found / "deep" / name).resolve(), name
        img.reload()
        assert tuple(img.size) == (2, 2)


@pytest.mark.parametrize("name, image, found", [
    ("skin.png", "skin.png", True),                         # two folders up
    ("tiny\\Tiny_skin.dds", "Tiny/Tiny_skin.png", True),    # a relative name read from a folder above
    ("skin.png", "../skin.png", False),                     # three folders up: beyond the search
    ("walk.avi", "walk.avi", False),                        # not a still image
])
def test_texture_search_climbs_two_folders(bpy, tmp_path, name, image, found):
    root = tmp_path / "r"
    model = root / "a" / "b" / "m.x"
    _textured_file(model, [name])
    save_png(bpy, (root / image).resolve())
    assert bpy.ops.import_scene.xfile(filepath=str(model)) == {"FINISHED"}
    mat = bpy.data.materials["m0"]
    tex = [n for n in mat.node_tree.nodes if n.type == "TEX_IMAGE"]
    if found:
        assert len(tex) == 1 and tex[0].outputs["Color"].links
        assert Path(bpy.path.abspath(tex[0].image.filepath)) == (root / image).resolve()
    else:
        assert not [n for n in tex if n.outputs["Color"].links]
        assert all(not n.image.has_data for n in tex)


# ---------------------------------------------------------------- files other readers accept
def test_scene_x_with_a_singular_camera_frame_imports(bpy, capfd):
    path = REAL / "walbourn__directx-sdk-legacy-samples" / "scene.x"
    assert bpy.ops.import_scene.xfile(filepath=str(path)) == {"FINISHED"}
    out = _warnings(capfd.readouterr().out)
    assert out.count("flattens space") == 1 and "'Camera'" in out
    cam = bpy.data.objects["Camera"]
    frames = {f.name: f for f in read_xfile(path).all_frames()}
    chain, f = [], frames["Camera"]
    parent = {id(c): p for p in frames.values() for c in p.children}
    while f is not None:
        chain.append(f.matrix)
        f = parent.get(id(f))
    world = np.eye(4)
    for m in chain:                                # row vectors: child @ parent @ ...
        world = world @ m
    c = np.array([[1.0, 0, 0], [0, 0, 1], [0, 1, 0]])
    got = np.array(cam.matrix_world)
    want_lin = c @ world[:3, :3].T @ c.T
    assert np.abs(got[:3, 3] - c @ world[3, :3]).max() <= 1e-5 * np.abs(world[3, :3]).max()
    assert np.abs(got[:3, :3] - want_lin).max() <= 1e-4    # the flattened axis kept at 1e-5, not 0


def test_a_singular_frame_holding_a_mesh_is_refused(bpy, tmp_path):
    path = tmp_path / "flat.x"
    path.write_bytes(b"xof 0303txt 0032\nFrame Flat {\nFrameTransformMatrix {\n1,0,0,0,0,0,0,0,0,0,1,0,0,0,0,1;;\n}"
                     b"\nMesh m {\n3;\n0;0;0;,1;0;0;,0;1;0;;\n1;\n3;0,1,2;;\n}\n}\n")
    with pytest.raises(RuntimeError, match="'Flat': singular transform"):
        bpy.ops.import_scene.xfile(filepath=str(path))
    assert not bpy.data.objects and not bpy.data.meshes


def test_one_brace_too_many_imports_with_a_warning(bpy, capfd):
    path = CRAFTED / "extra_brace.x"
    assert bpy.ops.import_scene.xfile(filepath=str(path)) == {"FINISHED"}
    lines = path.read_text().splitlines()
    assert f"line {len(lines)}: a '}}' that closes nothing" in capfd.readouterr().out
    _arm, meshes = imported(bpy)
    assert [o.name for o in meshes.values()] == ["BoxMesh"]


def test_render_engines_are_selectable(bpy, tmp_path):
    """operators.render renders with Workbench (quick) as with Cycles."""
    assert bpy.ops.import_scene.xfile(filepath=str(CRAFTED / "alpha_zero_half_one.x")) == {"FINISHED"}
    out = ext("operators.render").render_poses(bpy.context, tmp_path / "p.png", None, [1], n_poses=1,
                                               size=(32, 24), engine="BLENDER_WORKBENCH")
    assert out.exists() and bpy.context.scene.render.engine == "BLENDER_WORKBENCH"
