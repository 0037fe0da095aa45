# SPDX-License-Identifier: GPL-3.0-or-later
"""Classes of real .X files that other readers show right, read
without Blender: faceColor alpha 0, faces wound against their normals,
Materials declared inside frames, one '}' too many, a singular frame that
places nothing. Real files from tests/data/x/real, crafted ones from
tests/data/x/crafted (tools/make_xfile_crafted.py). Expectations come from
the files' own data (positions, stored normals, materials), evaluated here."""
from __future__ import annotations

import re
import struct

import numpy as np
import pytest
from conftest import DATA
from xfile_compare import all_meshes

from legacy_skin_io.io.errors import FormatError
from legacy_skin_io.io.xfile import facing, read_xfile, read_xfile_bytes
from legacy_skin_io.io.xfile.adapter import read_scene, write_scene
from legacy_skin_io.io.xfile.writer import write_xfile
from legacy_skin_io.scene import SceneError
from legacy_skin_io.scene.validate import validate

X = DATA / "x"
REAL = X / "real"
CRAFTED = X / "crafted"
MIRRORED = [REAL / "PilzAdam__mobs" / "mobs_rat.x", REAL / "PilzAdam__mobs" / "mobs_stone_monster.x",
            REAL / "minetest__minetest_game" / "character.x",
            REAL / "walbourn__directx-sdk-legacy-samples" / "Dwarf.x"]
EXTRAANIM = REAL / "TheGameCreators__Dark-Basic-Pro" / "extraanim.X"
SCENE_X = REAL / "walbourn__directx-sdk-legacy-samples" / "scene.x"
TXT = b"xof 0303txt 0032\n"


def _face_normals(positions, sizes, corners):
    """Newell normals, written out here (not the importer's)."""
    p = np.asarray(positions, dtype=np.float64)
    out = []
    start = 0
    for n in np.asarray(sizes).tolist():
        ring = p[corners[start:start + n]]
        out.append(np.cross(ring, np.roll(ring, -1, axis=0)).sum(axis=0))
        start += n
    return np.array(out)


def _file_agreement(m) -> np.ndarray:
    """Per face of a parsed mesh: +1 where its stored winding agrees with the
    sum of its stored corner normals, -1 where not, 0 if degenerate."""
    g = _face_normals(m.positions, m.face_sizes, m.face_indices)
    n = m.normals[m.normal_face_indices]
    face = np.repeat(np.arange(len(m.face_sizes)), m.face_sizes)
    s = np.zeros_like(g)
    np.add.at(s, face, n)
    return np.sign(np.einsum("ij,ij->i", g, s))


def _scene_agreement(mesh) -> np.ndarray:
    """The same in the imported scene (Blender space, the importer's winding)."""
    g = _face_normals(mesh.positions, mesh.face_sizes, mesh.corners)
    face = np.repeat(np.arange(len(mesh.face_sizes)), mesh.face_sizes)
    s = np.zeros_like(g)
    np.add.at(s, face, mesh.normals)
    return np.sign(np.einsum("ij,ij->i", g, s))


def _placement_signs(xf) -> dict:
    """Per parsed mesh (by id): -1 where Direct3D places it through a mirror
    at the default pose, else +1: the determinant of its frames' product
    (row vectors, child first), or for a skinned mesh of its joints'
    ``matrixOffset @ frame`` matrices, weighted by their weights."""
    world: dict = {}
    out: dict = {}

    def walk(frame, parent):
        w = np.asarray(frame.matrix, dtype=np.float64) @ parent
        world[frame.name] = w
        for m in frame.meshes:
            out[id(m)] = w
        for c in frame.children:
            walk(c, w)

    for root in xf.frames:
        walk(root, np.eye(4))
    signs = {}
    for m in all_meshes(xf):
        vote = 0.0
        for sw in m.skin_weights:
            d = np.linalg.det((np.asarray(sw.matrix_offset) @ world[sw.frame_name])[:3, :3])
            vote += float(np.sum(sw.weights)) * np.sign(d)
        if not vote:
            vote = np.linalg.det(out.get(id(m), np.eye(4))[:3, :3])
        signs[id(m)] = -1.0 if vote < 0 else 1.0
    return signs


def _corner_points(xf):
    return [m.positions[m.face_indices] for m in all_meshes(xf)]


# ---------------------------------------------------------------- alpha
def test_alpha_zero_reads_opaque_and_is_written_back(tmp_path):
    path = CRAFTED / "alpha_zero_half_one.x"
    stored = {m.name: float(m.face_color[3]) for mesh in all_meshes(read_xfile(path)) for m in mesh.materials}
    assert stored == {"AlphaZero": 0.0, "AlphaHalf": 0.5, "AlphaOne": 1.0}
    sc = read_scene([path], warnings=[])
    shown = {m.name: float(m.color[3]) for m in sc.materials}
    assert shown == {"AlphaZero": 1.0, "AlphaHalf": 0.5, "AlphaOne": 1.0}
    out = tmp_path / "back.x"
    write_scene(sc, out)
    back = {m.name: float(m.face_color[3]) for mesh in all_meshes(read_xfile(out)) for m in mesh.materials}
    assert back == stored
    # an alpha changed after the import is written as it is now
    sc.materials[[m.name for m in sc.materials].index("AlphaZero")].color[3] = 0.25
    write_scene(sc, out)
    back = {m.name: float(m.face_color[3]) for mesh in all_meshes(read_xfile(out)) for m in mesh.materials}
    assert back["AlphaZero"] == 0.25


def test_dwarf_materials_are_opaque_and_keep_alpha_zero(tmp_path):
    path = REAL / "walbourn__directx-sdk-legacy-samples" / "Dwarf.x"
    used = [m for mesh in all_meshes(read_xfile(path)) for m in mesh.materials]
    assert used and all(m.face_color[3] == 0.0 for m in used)
    sc = read_scene([path], warnings=[])
    assert all(m.color[3] == 1.0 for m in sc.materials)
    write_scene(sc, tmp_path / "d.x", storage="binary_compressed")
    assert all(m.face_color[3] == 0.0 for mesh in all_meshes(read_xfile(tmp_path / "d.x")) for m in mesh.materials)


# ---------------------------------------------------------------- faces
@pytest.mark.parametrize("path", MIRRORED, ids=lambda p: p.name)
def test_faces_wound_against_their_normals_under_a_mirror_are_kept(path):
    """Blender's and DXCC's exporters put a mirror above the mesh and store
    the winding it turns back: inside out in the mesh's own space, out where
    Direct3D shows it (after the mirror). The scene keeps that winding (its
    faces are counter-clockwise as placed); the builder bakes the mirror
    into the Blender data (test_corpus_defaults_blender.py looks)."""
    xf = read_xfile(path)
    signs = _placement_signs(xf)
    before = [_file_agreement(m) for m in all_meshes(xf)]
    assert all((v > 0).mean() < 0.01 for v in before)           # inside out as stored (0: degenerate faces)
    assert all(signs[id(m)] < 0 for m in all_meshes(xf))         # ... and placed through a mirror
    warnings: list[str] = []
    sc = read_scene([path], warnings=warnings)
    for mesh, m in zip(sc.meshes, all_meshes(xf)):
        shown = _scene_agreement(mesh) * signs[id(m)]
        assert (shown < 0).mean() < 0.01 and (shown > 0).mean() > 0.9, mesh.name
        assert "xfile" not in mesh.extras, mesh.name            # nothing turned
        # positions untouched: the same points, in the default axes (x, z, y)
        assert np.array_equal(mesh.positions, m.positions[:, [0, 2, 1]])
    assert not [w for w in warnings if "wound against their own normals" in w]


@pytest.mark.parametrize("name", ["test_cube_text.x", "test_cube_binary.x", "test_cube_compressed.x"])
def test_a_skin_that_takes_the_mirror_back_out_keeps_the_winding(name):
    """The cube's frame mirrors, its skin's matrixOffset @ frame does not:
    Direct3D skins it without the mirror, so its own-space winding (8 of 12
    faces agree with the stored normals) is what it shows: kept."""
    xf = read_xfile(X / "assimp" / name)
    (m,) = all_meshes(xf)
    frames = {f.name: f for f in xf.all_frames()}
    placed = frames["Cube"].matrix @ frames["Root"].matrix
    assert np.linalg.det(placed[:3, :3]) < 0 and _placement_signs(xf)[id(m)] > 0
    stored = _file_agreement(m)
    assert (stored > 0).sum() == 8 and (stored < 0).sum() == 4
    warnings: list[str] = []
    (mesh,) = read_scene([X / "assimp" / name], warnings=warnings).meshes
    assert "xfile" not in mesh.extras and not [w for w in warnings if "wound" in w]
    assert np.array_equal(_scene_agreement(mesh), stored)


def test_extraanim_normals_turned_against_positions_turn_nothing():
    """extraanim.X stores world-space normals, up to 92 degrees off its faces:
    a rule per face would turn a quarter of two meshes."""
    xf = read_xfile(EXTRAANIM)
    per_face = {m.name: (_file_agreement(m) > 0).mean() for m in all_meshes(xf)}
    assert per_face["R_arm_lowe"] == per_face["R_Hand"] == 0.75
    warnings: list[str] = []
    sc = read_scene([EXTRAANIM], warnings=warnings)
    for mesh, m in zip(sc.meshes, all_meshes(xf)):
        assert "xfile" not in mesh.extras
        assert np.array_equal(_scene_agreement(mesh), _file_agreement(m))
    assert not [w for w in warnings if "wound" in w]


def test_crafted_mirror_mixed_and_rotated_normals(tmp_path):
    path = CRAFTED / "inside_out_mirror_root.x"
    xf = read_xfile(path)
    stored = {m.name: _file_agreement(m) for m in all_meshes(xf)}
    assert (stored["InsideOut"] < 0).all()
    assert (stored["MixedBox"] < 0).sum() == 10 and (stored["MixedBox"] > 0).sum() == 2
    assert (stored["RotatedNormals"] < 0).sum() == 8       # normals turned 150 degrees: 8 of 12 faces disagree
    warnings: list[str] = []
    sc = read_scene([path], warnings=warnings)
    got = {m.name: m for m in sc.meshes}
    signs = _placement_signs(xf)
    sign = {m.name: signs[id(m)] for m in all_meshes(xf)}
    assert sign == {"InsideOut": -1.0, "MixedBox": -1.0, "RotatedNormals": 1.0}
    # as placed (through the mirror) InsideOut shows out: kept; MixedBox's odd side shows in: turned
    assert (_scene_agreement(got["InsideOut"]) * sign["InsideOut"] > 0).all()
    assert "xfile" not in got["InsideOut"].extras
    assert (_scene_agreement(got["MixedBox"]) * sign["MixedBox"] > 0).all()
    assert got["MixedBox"].extras["xfile"]["turned"] == np.flatnonzero(stored["MixedBox"] > 0).tolist()
    assert "xfile" not in got["RotatedNormals"].extras      # its winding is right; its normals are not in mesh space
    # ... they are in its frame's: read there, they agree with every face
    rotated = got["RotatedNormals"]
    assert rotated.normal_matrix is not None
    shaded = rotated.normals @ rotated.normal_matrix.T
    g = _face_normals(rotated.positions, rotated.face_sizes, rotated.corners)
    face = np.repeat(np.arange(len(rotated.face_sizes)), rotated.face_sizes)
    assert (np.einsum("ij,ij->i", g[face], shaded) > 0).all()
    assert [w for w in warnings if "wound" in w] == [
        "1 mesh(es) wound against their own normals as the file places them, faces turned to point the way the "
        "normals say: 'MixedBox' (2 of 12 faces) (export writes the file's winding back)"]
    out = tmp_path / "back.x"
    write_scene(sc, out)
    for a, b in zip(_corner_points(xf), _corner_points(read_xfile(out))):
        assert np.abs(a - b).max() < 1e-6                   # the file's own winding, corner by corner


@pytest.mark.parametrize("path", MIRRORED + [EXTRAANIM], ids=lambda p: p.name)
def test_export_writes_the_files_own_winding(tmp_path, path):
    xf = read_xfile(path)
    out = tmp_path / "back.x"
    write_scene(read_scene([path], warnings=[]), out)
    for a, b in zip(_corner_points(xf), _corner_points(read_xfile(out))):
        assert a.shape == b.shape and np.abs(a - b).max() <= 1e-6 * max(1.0, float(np.abs(a).max()))


def test_a_mesh_without_normals_keeps_its_winding():
    path = X / "directx-sdk" / "tiger.x"
    m = next(iter(all_meshes(read_xfile(path))))
    assert m.normals is None
    mesh = read_scene([path], warnings=[]).meshes[0]
    starts = np.concatenate(([0], np.cumsum(m.face_sizes)[:-1]))
    reversed_file = np.concatenate([m.face_indices[s:s + n][::-1] for s, n in zip(starts, m.face_sizes)])
    assert np.array_equal(mesh.corners, reversed_file) and not mesh.extras


def _plate(n: int = 6):
    """A closed thin wedge, wound outward, with smoothed normals that point up
    at every vertex (as jet.x's wings): the bottom's faces disagree with them."""
    ang = np.linspace(0, 2 * np.pi, n, endpoint=False)
    ring = np.c_[np.cos(ang), np.sin(ang), np.zeros(n)]
    pos = np.vstack([ring, [[0, 0, 0.2]], [[0, 0, -0.01]]])
    top, bottom = n, n + 1
    faces = [[i, (i + 1) % n, top] for i in range(n)] + [[(i + 1) % n, i, bottom] for i in range(n)]
    return pos, np.full(2 * n, 3), np.array(faces).reshape(-1)


def test_consistent_winding_is_never_split_by_face_votes():
    pos, sizes, corners = _plate()
    up = np.tile([0.0, 0.0, 1.0], (len(corners), 1))
    votes, _space = facing.votes(pos, sizes, corners, up)
    assert (votes > 0).sum() == (votes < 0).sum() == 6       # half the faces disagree
    turned, _ = facing.turned_faces(pos, sizes, corners, up)
    assert not turned.any()                                  # a tie keeps the file's winding; no face alone
    # a patch of mixed winding (the bottom faces wound inward) is made consistent by its own votes
    mixed = corners.reshape(-1, 3).copy()
    mixed[6:] = mixed[6:, ::-1]
    outward = np.array([_face_normals(pos, [3], f)[0] for f in corners.reshape(-1, 3)])
    normals = np.repeat(outward / np.linalg.norm(outward, axis=1, keepdims=True), 3, axis=0)
    turned, _ = facing.turned_faces(pos, sizes, mixed.reshape(-1), normals)
    assert turned.tolist() == [False] * 6 + [True] * 6


# ---------------------------------------------------------------- materials by name
def test_materials_declared_inside_frames_are_found_by_name():
    path = CRAFTED / "materials_in_frames.x"
    text = path.read_text()
    assert re.search(r"Frame Body \{[^}]*\}\s*Material Red", text)     # declared inside frames
    warnings: list[str] = []
    sc = read_scene([path], warnings=warnings)
    assert warnings == []
    colours = {m.name: [(sc.materials[k].name, tuple(sc.materials[k].color)) for k in m.materials] for m in sc.meshes}
    assert colours == {"BodyMesh": [("Red", (1.0, 0, 0, 1.0)), ("Blue", (0, 0, 1.0, 1.0))],
                       "HeadMesh": [("Blue", (0, 0, 1.0, 1.0))], "LegMesh": [("Green", (0, 1.0, 0, 1.0))]}
    assert sc.meshes[0].face_materials.tolist() == [0] * 6 + [1] * 6


def test_an_unnamed_material_outside_a_list_is_one_warning():
    data = TXT + b"Frame F {\nMaterial {\n1;1;1;1;;\n0;\n0;0;0;;\n0;0;0;;\n}\n}\n"
    xf = read_xfile_bytes(data)
    assert len(xf.warnings) == 1 and "unnamed Material" in xf.warnings[0] and "Frame 'F'" in xf.warnings[0]


# ---------------------------------------------------------------- one '}' too many
def test_one_brace_too_many_is_a_warning_naming_its_line():
    path = CRAFTED / "extra_brace.x"
    lines = path.read_text().splitlines()
    assert lines[-1] == lines[-2] == "}"
    xf = read_xfile(path)
    assert xf.warnings == [f"line {len(lines)}: a '}}' that closes nothing, ignored"]
    assert [m.name for m in all_meshes(xf)] == ["BoxMesh"]


def test_one_brace_too_many_in_a_binary_file_names_its_offset(tmp_path):
    xf = read_xfile(CRAFTED / "extra_brace.x")
    write_xfile(xf, tmp_path / "b.x", storage="binary")
    data = (tmp_path / "b.x").read_bytes() + struct.pack("<H", 11)     # TOKEN_CBRACE
    got = read_xfile_bytes(data)
    assert got.warnings == [f"offset {len(data) - 2}: a '}}' that closes nothing, ignored"]
    assert len(list(all_meshes(got))) == 1


@pytest.mark.parametrize("tail, expect", [
    (b"}\nMesh m {\n3;\n0;0;0;,1;0;0;,0;1;0;;\n1;\n3;0,1,", "face 0 claims 3 indices"),
    (b"}\n}\nFrame G {\n", "missing '}'"),
])
def test_broken_data_after_an_extra_brace_is_still_refused(tail, expect):
    with pytest.raises(FormatError, match=expect):
        read_xfile_bytes(TXT + b"Frame F {\n}\n" + tail)


# ---------------------------------------------------------------- singular frames
def test_scene_x_singular_camera_frame_imports_with_one_warning():
    xf = read_xfile(SCENE_X)
    stored = next(f for f in xf.all_frames() if f.name == "Camera").matrix
    assert np.linalg.matrix_rank(stored[:3, :3]) == 2
    warnings: list[str] = []
    sc = read_scene([SCENE_X], warnings=warnings)
    validate(sc)                                   # nothing singular is left
    flat = [w for w in warnings if "flattens space" in w]
    assert len(flat) == 1 and "'Camera'" in flat[0]
    j = sc.skeleton.names.index("Camera")
    got = sc.skeleton.local[j]
    want = np.eye(4)
    c = np.array([[1.0, 0, 0], [0, 0, 1], [0, 1, 0]])           # file (x, y, z) -> (x, z, y)
    want[:3, :3] = c @ stored[:3, :3].T @ c.T
    want[:3, 3] = c @ stored[3, :3]
    assert np.abs(got - want).max() <= 1e-5 * np.abs(want).max()
    assert abs(np.linalg.det(got[:3, :3])) > 0
    # every other frame as stored
    assert not [w for w in warnings if "singular" in w]


SINGULAR = b"FrameTransformMatrix {\n1,0,0,0,\n0,0,0,0,\n0,0,1,0,\n0,0,0,1;;\n}\n"
TRI = b"Mesh m {\n3;\n0;0;0;,1;0;0;,0;1;0;;\n1;\n3;0,1,2;;\n"


@pytest.mark.parametrize("body", [
    b"Frame Flat {\n" + SINGULAR + TRI + b"}\n}\n",                                    # holds a mesh
    b"Frame Flat {\n" + SINGULAR + b"Frame Below {\n" + TRI + b"}\n}\n}\n",             # a mesh below it
    b"Frame Root {\nFrame Flat {\n" + SINGULAR + b"}\n" + TRI
    + b"SkinWeights {\n\"Flat\";\n1;\n0;\n1.0;\n1,0,0,0,0,1,0,0,0,0,1,0,0,0,0,1;;\n}\n}\n}\n",  # skinned to it
])
def test_a_singular_frame_that_matters_is_still_refused(tmp_path, body):
    (tmp_path / "s.x").write_bytes(TXT + body)
    sc = read_scene([tmp_path / "s.x"], warnings=[])
    with pytest.raises(SceneError, match="'Flat': singular transform"):
        validate(sc)


def test_a_singular_leaf_frame_is_loosened():
    data = TXT + b"Frame Root {\n" + TRI + b"}\nFrame Flat {\n" + SINGULAR + b"}\n}\n"
    warnings: list[str] = []
    from legacy_skin_io.io.xfile.adapter import scene_from_xfile

    sc = scene_from_xfile(read_xfile_bytes(data), warnings=warnings)
    validate(sc)
    assert [w for w in warnings if "flattens" in w] == [
        "1 frame(s) with a matrix that flattens space, placing no mesh: 'Flat'; imported with the flattened "
        "axis scaled by 1e-05 instead of 0"]


def _sphere(rings: int = 12, segments: int = 24):
    """A closed UV sphere of quads (triangles at the poles), wound outward,
    with its outward unit normals per corner."""
    theta = np.linspace(0, np.pi, rings + 1)[1:-1]
    phi = np.linspace(0, 2 * np.pi, segments, endpoint=False)
    pos = np.vstack([[0, 0, 1.0]] + [[np.sin(t) * np.cos(p), np.sin(t) * np.sin(p), np.cos(t)]
                                     for t in theta for p in phi] + [[0, 0, -1.0]])
    south = len(pos) - 1

    def v(r, s):
        return 1 + r * segments + s % segments

    faces = [[0, v(0, s), v(0, s + 1)] for s in range(segments)]
    faces += [[v(r, s), v(r + 1, s), v(r + 1, s + 1), v(r, s + 1)] for r in range(rings - 2) for s in range(segments)]
    faces += [[v(rings - 2, s + 1), v(rings - 2, s), south] for s in range(segments)]
    sizes = np.array([len(f) for f in faces])
    corners = np.concatenate(faces)
    return pos, sizes, corners, pos[corners]


def test_a_reversed_patch_of_a_sphere_is_turned_back_alone():
    pos, sizes, corners, normals = _sphere()
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    assert (np.einsum("ij,ij->i", _face_normals(pos, sizes, corners), pos[corners[starts]]) > 0).all()
    turned, space = facing.turned_faces(pos, sizes, corners, normals)
    assert space == "mesh" and not turned.any()
    # a band of faces wound the other way (normals still out): only the band is turned back
    band = np.zeros(len(sizes), dtype=bool)
    band[60:120] = True
    wound = np.concatenate([corners[s:s + n][::-1] if b else corners[s:s + n]
                            for s, n, b in zip(starts, sizes, band)])
    turned, _ = facing.turned_faces(pos, sizes, wound, pos[wound])      # (a unit sphere's normal: its point)
    assert np.array_equal(turned, band)
    # the whole sphere wound inward, with the band outward: everything but the band is turned
    inward = np.concatenate([corners[s:s + n] if b else corners[s:s + n][::-1]
                             for s, n, b in zip(starts, sizes, band)])
    turned, _ = facing.turned_faces(pos, sizes, inward, pos[inward])
    assert np.array_equal(turned, ~band)


def test_two_surfaces_meeting_at_a_ring_both_right_are_left_alone():
    """A tube and a narrower sleeve hanging inside it from its top ring (the
    ring's vertices shared, both running its edges the same way, as the
    bundled RiTE humanoid's limbs meet), each facing the way its normals
    say, two faces with a wrong normal: nothing is turned."""
    n = 16
    ang = np.linspace(0, 2 * np.pi, n, endpoint=False)
    ring = lambda r, z: np.c_[r * np.cos(ang), r * np.sin(ang), np.full(n, z)]  # noqa: E731
    pos = np.vstack([ring(1.0, 0.0), ring(1.0, 1.0), ring(0.5, 0.2)])
    bottom, top, inner = 0, n, 2 * n
    faces, normals = [], []
    for lo in (bottom, inner):
        for i in range(n):
            quad = [lo + i, lo + (i + 1) % n, top + (i + 1) % n, top + i]
            radial = pos[quad].mean(0) * [1, 1, 0]
            if np.dot(_face_normals(pos, [4], np.array(quad))[0], radial) < 0:
                quad = quad[::-1]
            faces.append(quad)
            normals += [radial / np.linalg.norm(radial)] * 4
    sizes, corners, normals = np.full(2 * n, 4), np.concatenate(faces), np.array(normals)
    _fa, _fb, parity = facing._links(sizes, corners)
    assert parity.sum() == n                  # the shared ring: run the same way by both surfaces
    normals[:8] *= -1                          # two faces of the tube with a normal inward
    votes, _ = facing.votes(pos, sizes, corners, normals)
    assert (votes < 0).sum() == 2
    turned, _ = facing.turned_faces(pos, sizes, corners, normals)
    assert not turned.any()
