# SPDX-License-Identifier: GPL-3.0-or-later
"""DirectX .X import through bpy.ops (import_scene.xfile), verified per
AnimationSet: Blender's evaluated meshes against the oracle (scene.evaluate)
on a fresh parse of the file (the .X adapter's read_scene); Blender's static
data (handedness, n-gons, UVs, colours, materials, rest pose) against the
file's own numbers. The bpy-free facts the reader relies on (key
conjugation, handedness) use io/xfile/adapter.py and scene/axes.py."""
from __future__ import annotations

import shutil
import struct
from pathlib import Path

import numpy as np
import pytest
from blender_checks import ext, fps, imported, play, reference, snapshot, verify
from conftest import DATA, SAMPLES  # noqa: E402
from xfile_compare import all_meshes

from legacy_skin_io.core import quat
from legacy_skin_io.io.formats import by_id
from legacy_skin_io.io.xfile import read_xfile
from legacy_skin_io.io.xfile.adapter import col, default_axes, read_scene, rotation_from_key
from legacy_skin_io.scene.axes import AXES, axis_matrix

X = DATA / "x"
ANIMATED = [X / "assimp" / "BCN_Epileptic.X", X / "assimp" / "Testwuson.X", X / "assimp" / "anim_test.x",
            X / "directx-sdk" / "bat.x", X / "directx-sdk" / "tiny_4anim.x"]
SKINNED_STATIC = [X / "assimp" / "test_cube_text.x", X / "assimp" / "test_cube_binary.x",
                  X / "assimp" / "test_cube_compressed.x"]
XZY = np.array([[1.0, 0, 0], [0, 0, 1], [0, 1, 0]])      # file (x, y, z) -> Blender (x, z, y)
TURN = np.array([[1.0, 0, 0], [0, 0, -1], [0, 1, 0]])   # a bone turned 90 degrees about its X


# ---------------------------------------------------------------------------
# the file's own numbers

def _ticks(xf) -> float:
    return float(xf.anim_ticks_per_second or 4800)


def _set_range(aset) -> tuple[float, float]:
    """(first, last) key time of an AnimationSet, in ticks."""
    t = np.concatenate([np.asarray(k.times, dtype=np.float64) for a in aset.animations for k in a.keys
                        if len(k.times)])
    return float(t.min()), float(t.max())


def _frame_world(xf) -> tuple[list, dict, np.ndarray]:
    """(frames, {id(frame): index}, column-vector world matrices (J, 4, 4))
    of the file's Frame hierarchy at its FrameTransformMatrix pose."""
    frames = list(xf.all_frames())
    index = {id(f): i for i, f in enumerate(frames)}
    world = np.zeros((len(frames), 4, 4))

    def walk(f, parent):
        world[index[id(f)]] = parent @ col(f.matrix)
        for c in f.children:
            walk(c, world[index[id(f)]])

    for root in xf.frames:
        walk(root, np.eye(4))
    return frames, index, world


def _file_binds(xf) -> dict[str, np.ndarray]:
    """{frame name: bind matrix} in file space: mesh frame world @
    inverse(matrixOffset), the first mesh (file order) that binds it."""
    frames, index, world = _frame_world(xf)
    placed = [(m, np.eye(4)) for m in xf.meshes] + [(m, world[index[id(f)]]) for f in frames for m in f.meshes]
    out: dict[str, np.ndarray] = {}
    for m, mw in placed:
        for sw in m.skin_weights:
            out.setdefault(sw.frame_name, mw @ np.linalg.inv(col(sw.matrix_offset)))
    return out


def _conj(C, a, scale=1.0):
    M = np.eye(4)
    M[:3, :3] = scale * np.asarray(C)
    return M @ np.asarray(a) @ np.linalg.inv(M)


def _frames(first_last: tuple[float, float], step=1.0, limit=None) -> np.ndarray:
    """Scene frames from 0 to the set's last (whole) frame."""
    end = float(np.ceil(first_last[1] - 1e-6))
    frames = np.arange(0.0, end + 1.0 + 1e-9, step)
    if limit and len(frames) > limit:
        frames = frames[np.linspace(0, len(frames) - 1, limit).round().astype(int)]
    return frames


def _mesh_world(obj) -> np.ndarray:
    me = obj.data
    co = np.empty(3 * len(me.vertices), dtype=np.float32)
    me.vertices.foreach_get("co", co)
    m = np.array(obj.matrix_world)
    return co.reshape(-1, 3).astype(np.float64) @ m[:3, :3].T + m[:3, 3]


# ---------------------------------------------------------------------------
# bpy-free facts the reader relies on

@pytest.mark.parametrize("name,set_name,min_joints", [
    ("assimp/BCN_Epileptic.X", "Epileptisch", 50),
    ("assimp/Testwuson.X", "Wuson_Bind", 35),
    ("directx-sdk/tiny_4anim.x", "Walk", 40),
    ("assimp/anim_test.x", "cylinder_test", 2),
])
def test_rotation_keys_are_conjugates_of_the_frame_matrix_rotation(name, set_name, min_joints):
    """Where a key and the FrameTransformMatrix describe the same pose, the
    stored (w, x, y, z) key is the conjugate of the rotation the row-vector
    matrix applies (assimp negates w); the literal reading is wrong."""
    xf = read_xfile(X / name)
    frames = {f.name: f for f in xf.all_frames()}
    aset = next(s for s in xf.animation_sets if s.name == set_name)
    conj_ok = literal_ok = 0
    for a in aset.animations:
        f = frames[a.frame_name]
        lin = col(f.matrix)[:3, :3]
        r = lin / np.linalg.norm(lin, axis=0)
        for k in a.keys:
            if k.key_type != 0:
                continue
            stored = np.asarray(k.values)[:, [1, 2, 3, 0]]
            best_conj = np.abs(quat.to_mat3(rotation_from_key(k.values)) - r).max(axis=(1, 2)).min()
            best_lit = np.abs(quat.to_mat3(stored) - r).max(axis=(1, 2)).min()
            conj_ok += best_conj < 1e-3
            literal_ok += best_lit < 1e-3 and best_conj >= 1e-3
    assert conj_ok >= min_joints
    assert literal_ok == 0


def test_default_handedness_is_x_z_y():
    h = default_axes()
    assert np.array_equal(h.C, XZY) and h.mirrors
    assert h == by_id("xfile").axes("-Z", "Y")      # the importer's default Forward/Up
    p = np.array([[1.0, 2.0, 3.0]])
    assert np.allclose(h.points(p), [[1.0, 3.0, 2.0]])
    assert np.allclose(default_axes(2.5).points(p), [[2.5, 7.5, 5.0]])
    # matrices are conjugated: a file transform applied then mapped = mapped then transformed
    rng = np.random.default_rng(3)
    q = quat.normalize(rng.normal(size=4))
    a = quat.to_mat4(q, rng.normal(size=3))
    pts = rng.normal(size=(5, 3))
    moved = pts @ a[:3, :3].T + a[:3, 3]
    for s in (1.0, 0.1):
        hs = default_axes(s)
        b = hs.matrices(a)
        assert np.allclose(hs.points(pts) @ b[:3, :3].T + b[:3, 3], hs.points(moved))
        assert np.linalg.det(b[:3, :3]) > 0
        assert np.allclose(quat.to_mat3(hs.quats(q)), b[:3, :3])
    # the Forward/Up options describe the file once its z is flipped
    assert np.array_equal(by_id("xfile").axes("Y", "Z").C, np.diag([1.0, 1.0, -1.0]))


def test_reader_maps_points_winding_and_uvs_from_the_file():
    """The reader half alone: a fresh parse, compared with the file's numbers."""
    path = X / "assimp" / "test_cube_text.x"
    xf = read_xfile(path)
    xm = next(iter(all_meshes(xf)))
    sc = read_scene([path], warnings=[])
    m = sc.meshes[0]
    assert np.allclose(m.positions, xm.positions @ XZY.T)
    starts = np.concatenate(([0], np.cumsum(xm.face_sizes)[:-1]))
    for f in range(len(xm.face_sizes)):
        n = int(xm.face_sizes[f])
        file_face = list(xm.face_indices[starts[f]:starts[f] + n])
        assert list(m.corners[starts[f]:starts[f] + n]) == file_face[::-1]
    if xm.uvs is not None:
        assert np.allclose(m.uvs[:, 1], 1.0 - xm.uvs[m.corners, 1])


# ---------------------------------------------------------------------------
# Blender

def test_axis_options_are_blenders_axis_conversion(bpy):
    from bpy_extras.io_utils import axis_conversion

    for f in AXES:
        for u in AXES:
            if f[-1] == u[-1]:
                with pytest.raises(ValueError):
                    axis_matrix(f, u)
                continue
            want = np.array(axis_conversion(from_forward=f, from_up=u).to_3x3())
            assert np.allclose(axis_matrix(f, u), want), (f, u)


@pytest.mark.parametrize("kw", [{}, {"manual_orientation": True, "axis_forward": "Y", "axis_up": "Z",
                                     "global_scale": 2.0},
                                {"manual_orientation": True, "axis_forward": "X", "axis_up": "-Z",
                                 "global_scale": 0.25}],
                         ids=["default", "y-z-double", "x-negz-quarter"])
def test_operator_axes_map_file_points(bpy, kw):
    """Default (a cube: nothing says up but the convention): a file point
    (x, y, z) lands at (x, z, y); with Manual Orientation, the Forward/Up
    options: Blender's axis_conversion applied after the file's z is
    flipped."""
    from bpy_extras.io_utils import axis_conversion

    path = X / "assimp" / "test_cube_text.x"
    assert bpy.ops.import_scene.xfile(filepath=str(path), **kw) == {"FINISHED"}
    _, meshes = imported(bpy)
    C = np.array(axis_conversion(from_forward=kw.get("axis_forward", "-Z"),
                                 from_up=kw.get("axis_up", "Y")).to_3x3()) @ np.diag([1.0, 1.0, -1.0])
    if not kw:
        assert np.array_equal(C, XZY)
    s = kw.get("global_scale", 1.0)
    xf = read_xfile(path)
    frames, index, world = _frame_world(xf)
    owner = next(f for f in frames if f.meshes)
    xm = owner.meshes[0]
    mw = world[index[id(owner)]]
    want = (xm.positions @ mw[:3, :3].T + mw[:3, 3]) @ C.T * s
    assert np.abs(_mesh_world(meshes[0]) - want).max() < 1e-5 * s * np.abs(want / s).max()


@pytest.mark.parametrize("path,kw,baked", [pytest.param(p, {}, False, id=p.name) for p in ANIMATED] + [
    pytest.param(X / "directx-sdk" / "tiny_4anim.x", {"every_joint_bone": True}, True, id="tiny-all-joints")])
def test_file_keys_match_core_every_set(bpy, capfd, path, kw, baked):
    """key_every_frame=False keeps the file's keys: Blender interpolates quaternions
    per component, i.e. the oracle's nlerp of the same keys, on and between
    keys, for every AnimationSet; except where bones pointing at their
    children (the default) cannot take the keys channel by channel: with
    every joint a bone, tiny_4anim.x's Dummy frames (mirrored, non-uniform
    scale) become such bones, so it is keyed every frame (the oracle's
    slerp, whole frames), and says so."""
    assert bpy.ops.import_scene.xfile(filepath=str(path), key_every_frame=False, **kw) == {"FINISHED"}
    assert ("baked on every frame" in capfd.readouterr().out) == baked
    _check_every_set(bpy, path, baked)


@pytest.mark.parametrize("path", [X / "assimp" / "BCN_Epileptic.X", X / "assimp" / "Testwuson.X"],
                         ids=lambda p: p.name)
def test_default_options_match_core_every_set(bpy, path):
    """The operator's defaults: keyed as the format's declared default says
    (io/xfile/options.py), and the deformation is the file's either way."""
    assert bpy.ops.import_scene.xfile(filepath=str(path)) == {"FINISHED"}
    _check_every_set(bpy, path, bool(ext("io.formats").by_id("xfile").options.IMPORT_DEFAULTS.get("key_every_frame")))


def _check_every_set(bpy, path, baked):
    arm, meshes = imported(bpy)
    xf = read_xfile(path)
    ref = reference("xfile", [path])
    assert sorted(meshes) == list(range(len(ref.meshes))) == list(range(len(list(all_meshes(xf)))))
    assert min(b.length for b in arm.data.bones) > 1e-4
    scene = bpy.context.scene
    rate = fps(bpy) / _ticks(xf)
    # one action per set, named after it, NLA tracks kept, the first active
    names = [s.name for s in xf.animation_sets]
    assert [t.name for t in arm.animation_data.nla_tracks] == names
    assert arm.animation_data.action.name == names[0]
    md = ext("operators.metadata")
    assert {md.load(t.strips[0].action, md.CLIP_KEY)["baked"] for t in arm.animation_data.nla_tracks} == {baked}
    ranges = [tuple(r * rate for r in _set_range(s)) for s in xf.animation_sets]
    end = max(r[1] for r in ranges)
    assert (scene.frame_start, scene.frame_end) == (0, max(int(np.ceil(end - 1e-6)), 1))
    ev = ext("scene.evaluate")
    for clip, aset, rng in zip(ref.clips, xf.animation_sets, ranges):
        assert clip.name == aset.name
        play(arm, clip.name)
        if baked:
            frames = _frames(rng)
        else:       # every frame of the set, and in-betweens at half frames
            clip.rotation_mode = "nlerp"
            frames = np.union1d(_frames(rng), _frames(rng, step=0.5, limit=40))
        rep = verify(bpy, meshes, ref, clip, frames)
        assert rep.ok, (clip.name, rep.table())
        assert rep.max_error <= 1e-5 * rep.size
        # the reference really animates (Wuson_Bind is a still pose)
        if clip.name != "Wuson_Bind":
            rest = ev.evaluate(ref, None, [0.0], fps(bpy))[0]
            moved = max(np.abs(p - rest).max() for p in ev.evaluate(ref, clip, frames[::5], fps(bpy)))
            assert moved > 1e-2 * rep.size


@pytest.mark.parametrize("path,kw,baked", [
    (X / "directx-sdk" / "tiny_4anim.x", {"key_every_frame": True}, True),
    (X / "assimp" / "Testwuson.X", {"rest_from": "DEFAULT", "global_scale": 0.1, "bone_direction": "FILE"}, True),
    (X / "assimp" / "BCN_Epileptic.X", {"every_joint_bone": True, "manual_orientation": True, "axis_forward": "Y",
                                        "axis_up": "Z", "key_every_frame": False}, False),
], ids=["tiny-baked", "wuson-default-rest", "bcn-every-joint-axes"])
def test_options_still_match_core(bpy, path, kw, baked):
    from bpy_extras.io_utils import axis_conversion

    assert bpy.ops.import_scene.xfile(filepath=str(path), **kw) == {"FINISHED"}
    arm, meshes = imported(bpy)
    if kw.get("manual_orientation"):
        C = np.array(axis_conversion(from_forward=kw["axis_forward"],
                                     from_up=kw["axis_up"]).to_3x3()) @ np.diag([1.0, 1.0, -1.0])
        axes = ext("scene").AxisConversion(C, kw.get("global_scale", 1.0))
    else:       # up decided from the file's data, as the reader decides it on a fresh parse
        axes = ext("scene.orientation").AutoAxes(scale=kw.get("global_scale", 1.0), mirror_z=True)
    ref = reference("xfile", [path], axes)
    xf = read_xfile(path)
    md = ext("operators.metadata")
    # key every frame when asked, or when the rest pose cannot hold the bind pose
    assert {md.load(t.strips[0].action, md.CLIP_KEY)["baked"] for t in arm.animation_data.nla_tracks} == {baked}
    if kw.get("every_joint_bone"):
        assert len(arm.data.bones) == len(list(xf.all_frames()))
    rate = fps(bpy) / _ticks(xf)
    for clip, aset in list(zip(ref.clips, xf.animation_sets))[:2]:
        rng = tuple(r * rate for r in _set_range(aset))
        if not baked:
            clip.rotation_mode = "nlerp"
        play(arm, clip.name)
        frames = _frames(rng, step=1.0 if baked else 0.5, limit=30)
        rep = verify(bpy, meshes, ref, clip, frames)
        assert rep.ok, (clip.name, rep.table())


@pytest.mark.parametrize("path", [X / "directx-sdk" / "tiny_4anim.x", X / "assimp" / "Testwuson.X"]
                         + SKINNED_STATIC, ids=lambda p: p.name)
def test_default_pose_shows_the_frame_matrices(bpy, path):
    """Without actions the rest is the bind pose and the default pose is the
    FrameTransformMatrix hierarchy; rigid meshes follow their frames."""
    assert bpy.ops.import_scene.xfile(filepath=str(path), import_animations=False,
                                      bone_direction="FILE") == {"FINISHED"}
    arm, meshes = imported(bpy)
    assert not bpy.data.actions
    ref = reference("xfile", [path])
    rep = verify(bpy, meshes, ref, None, [0])
    assert rep.ok, rep.table()
    # rest = bind pose: the bones' rest matrices hold the inverse matrixOffsets
    xf = read_xfile(path)
    binds = _file_binds(xf)
    assert binds
    aw = np.array(arm.matrix_world)
    for name, b in binds.items():
        got = aw @ np.array(arm.data.bones[name].matrix_local)
        want = _conj(ref.source.axes.C, b)      # the axes decided from the file (tiny: Z up)
        scale = np.cbrt(np.linalg.det(want[:3, :3]))
        # the rest is the bind rotation, or it turned 90 degrees about X
        # (bones pointing back along their parent: Blender's roll precision)
        assert min(np.abs(got[:3, :3] * scale - w).max() for w in (want[:3, :3], want[:3, :3] @ TURN)) < 1e-4
        assert np.abs(got[:3, 3] - want[:3, 3]).max() < 1e-4 * rep.size
    # posed away from the rest exactly where the frame matrices differ from the bind pose
    frames, index, world = _frame_world(xf)
    differs = max(np.abs(world[next(i for i, f in enumerate(frames) if f.name == n)] - b).max()
                  for n, b in binds.items()) > 1e-3
    posed = max(np.abs(np.array(pb.matrix_basis) - np.eye(4)).max() for pb in arm.pose.bones)
    assert (posed > 1e-3) == differs


def test_static_meshes_handedness_ngons_uvs_colours_materials(bpy, capfd):
    path = X / "directx-sdk" / "tiger.x"  # 64-bit floats, quads, a texture that is not there
    assert bpy.ops.import_scene.xfile(filepath=str(path)) == {"FINISHED"}
    assert "tiger.bmp" in capfd.readouterr().out       # the missing texture is reported
    xf = read_xfile(path)
    m = xf.meshes[0]
    _, meshes = imported(bpy)
    obj = meshes[0]
    me = obj.data
    assert len(me.polygons) == len(m.face_sizes)
    sizes = np.empty(len(me.polygons), dtype=np.int32)
    me.polygons.foreach_get("loop_total", sizes)
    assert np.array_equal(sizes, m.face_sizes) and sizes.max() == 4
    assert np.allclose(_mesh_world(obj), m.positions @ XZY.T, atol=1e-5)
    # winding reversed: every face's corners are the file's in reverse order
    lv = np.empty(len(me.loops), dtype=np.int32)
    me.loops.foreach_get("vertex_index", lv)
    starts = np.concatenate(([0], np.cumsum(m.face_sizes)[:-1]))
    rev = np.concatenate([m.face_indices[s:s + n][::-1] for s, n in zip(starts, m.face_sizes)])
    assert np.array_equal(lv, rev)
    uv = np.empty(2 * len(me.loops), dtype=np.float32)
    me.uv_layers[0].data.foreach_get("uv", uv)
    uv = uv.reshape(-1, 2)
    assert np.allclose(uv[:, 0], m.uvs[lv, 0], atol=1e-6)
    assert np.allclose(uv[:, 1], 1.0 - m.uvs[lv, 1], atol=1e-6)
    mat = me.materials[0]
    assert mat["texture_path"] == "tiger.bmp"             # missing image: path kept, an image without data
    tex = [n for n in mat.node_tree.nodes if n.type == "TEX_IMAGE"]
    assert len(tex) == 1 and tex[0].image.name == "tiger.bmp" and not tex[0].image.has_data
    assert not tex[0].outputs["Color"].links and "tiger.bmp" in tex[0].label
    assert Path(bpy.path.abspath(tex[0].image.filepath)) == path.parent.resolve() / "tiger.bmp"

    bpy.ops.wm.read_homefile(use_empty=True)
    path = X / "assimp" / "kwxport_test_cubewithvcolors.x"
    assert bpy.ops.import_scene.xfile(filepath=str(path)) == {"FINISHED"}
    xf = read_xfile(path)
    m = next(iter(all_meshes(xf)))
    _, meshes = imported(bpy)
    me = meshes[0].data
    attr = me.color_attributes["Color"]
    c = np.empty(4 * len(me.vertices), dtype=np.float32)
    attr.data.foreach_get("color", c)
    vertex = ext("operators.metadata").load_weld(me, len(m.positions))     # welded: 24 -> 8
    assert vertex is not None and len(me.vertices) == 8
    assert np.allclose(c.reshape(-1, 4)[vertex, :m.vertex_colors.shape[1]], m.vertex_colors, atol=1e-6)
    assert [mat.name.split(".")[0] for mat in me.materials] == [x.name for x in m.materials]
    for mat, xm in zip(me.materials, m.materials):
        if xm.texture:
            assert mat.get("texture_path") == xm.texture
        assert np.allclose(mat.diffuse_color[:3], xm.face_color[:3], atol=1e-6)
    # geometric normals (after the winding reversal) agree with the file's normals, mapped
    pn = np.empty(3 * len(me.polygons), dtype=np.float32)
    me.polygons.foreach_get("normal", pn)
    cn = np.empty(3 * len(me.corner_normals), dtype=np.float32)
    me.corner_normals.foreach_get("vector", cn)
    start = np.empty(len(me.polygons), dtype=np.int32)
    me.polygons.foreach_get("loop_start", start)
    dots = np.sum(pn.reshape(-1, 3) * cn.reshape(-1, 3)[start], axis=1)
    assert np.all(dots > 0.5)


def _bmp(path, w=2, h=2):
    """A tiny 24-bit BMP."""
    row = bytes([0, 128, 255] * w) + b"\0" * ((4 - 3 * w % 4) % 4)
    pixels = row * h
    header = b"BM" + struct.pack("<IHHI", 54 + len(pixels), 0, 0, 54)
    info = struct.pack("<IiiHHIIiiII", 40, w, h, 1, 24, 0, len(pixels), 2835, 2835, 0, 0)
    path.write_bytes(header + info + pixels)


@pytest.mark.parametrize("pack", [False, True])
def test_texture_found_beside_the_file(bpy, tmp_path, pack):
    shutil.copy(X / "directx-sdk" / "tiger.x", tmp_path / "tiger.x")
    _bmp(tmp_path / "tiger.bmp")
    assert bpy.ops.import_scene.xfile(filepath=str(tmp_path / "tiger.x"), pack_images=pack) == {"FINISHED"}
    _, meshes = imported(bpy)
    mat = meshes[0].data.materials[0]
    tex = [n for n in mat.node_tree.nodes if n.type == "TEX_IMAGE"]
    assert len(tex) == 1 and tex[0].image is not None
    assert bpy.path.abspath(tex[0].image.filepath) == str((tmp_path / "tiger.bmp").resolve())
    bsdf = next(n for n in mat.node_tree.nodes if n.type == "BSDF_PRINCIPLED")
    assert bsdf.inputs["Base Color"].links and bsdf.inputs["Base Color"].links[0].from_node == tex[0]
    assert (tex[0].image.packed_file is not None) == pack


def test_materials_from_face_colour_and_power(bpy):
    assert bpy.ops.import_scene.xfile(filepath=str(X / "assimp" / "test_cube_text.x")) == {"FINISHED"}
    xm = next(iter(all_meshes(read_xfile(X / "assimp" / "test_cube_text.x")))).materials[0]
    mat = bpy.data.materials[xm.name]
    bsdf = next(n for n in mat.node_tree.nodes if n.type == "BSDF_PRINCIPLED")
    assert np.allclose(bsdf.inputs["Base Color"].default_value, xm.face_color, atol=1e-6)
    assert abs(bsdf.inputs["Alpha"].default_value - xm.face_color[3]) < 1e-6
    assert abs(bsdf.inputs["Roughness"].default_value - np.sqrt(2 / (xm.power + 2))) < 1e-6


def test_several_files_at_once(bpy):
    d = X / "assimp"
    res = bpy.ops.import_scene.xfile(directory=str(d), files=[{"name": "test_cube_text.x"}, {"name": "test.x"}])
    assert res == {"FINISHED"}
    assert len([o for o in bpy.context.scene.objects if o.type == "MESH"]) == 2
    assert len([o for o in bpy.context.scene.objects if o.type == "ARMATURE"]) == 1
    counts = sorted(len(o.data.vertices) for o in bpy.context.scene.objects if o.type == "MESH")
    # welded: one vertex per VertexDuplicationIndices class (test.x's 24 are 8; test_cube_text.x keeps its 24)
    assert counts == sorted(len(np.unique(next(iter(all_meshes(read_xfile(d / n)))).duplicates))
                            for n in ("test_cube_text.x", "test.x"))


def test_compressed_file_with_a_bad_block_reports_the_offset(bpy):
    """A file without a suffix (recognised by its header) whose MSZIP block
    is short: a clean error naming the byte offset; the scene untouched."""
    assert bpy.ops.import_scene.xfile(filepath=str(X / "assimp" / "test.x")) == {"FINISHED"}
    before = snapshot(bpy)
    with pytest.raises(RuntimeError, match=r"OV_GetNextToken \(byte offset \d+\)"):
        bpy.ops.import_scene.xfile(filepath=str(X / "assimp" / "OV_GetNextToken"))
    assert snapshot(bpy) == before


def test_operator_and_file_handler_names(bpy):
    fh = bpy.types.IO_FH_xfile
    assert fh.bl_import_operator == "import_scene.xfile" and fh.bl_export_operator == "export_scene.xfile"
    assert {".x", ".X"} <= set(fh.bl_file_extensions.split(";"))
    assert bpy.ops.import_scene.xfile.get_rna_type().name == "Import DirectX"
    assert not hasattr(bpy.types, "IO_FH_xfile_anim")        # .X files carry their own animations


def test_every_imported_mesh_is_valid_without_mesh_validate(bpy):
    """The importer skips Mesh.validate (a third of building a big mesh):
    on every corpus file and sample Blender's own check finds nothing to fix."""
    files = sorted(p for p in X.rglob("*") if p.suffix.lower() == ".x")
    checked = 0
    for p in files:
        bpy.ops.wm.read_homefile(use_empty=True)
        try:
            bpy.ops.import_scene.xfile(filepath=str(p))
        except RuntimeError:
            continue                                   # files the reader refuses
        for o in bpy.data.objects:
            if o.type == "MESH":
                assert not o.data.validate(verbose=False, clean_customdata=False), (p.name, o.name)
                checked += 1
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.import_scene.rite(filepath=str(SAMPLES / "rite" / "humanoid.ram")) \
        == {"FINISHED"}
    me = next(o for o in bpy.data.objects if o.type == "MESH").data
    assert not me.validate(verbose=False, clean_customdata=False)
    assert checked >= 12


def test_channels_resting_in_every_set_are_left_unkeyed(bpy):
    """tiny_4anim keys some scales and locations at their rest values in all
    four sets: no action keys those channels (the pose bones hold the
    default), and every set still plays exactly, also when the sets are
    played in the reverse order."""
    path = X / "directx-sdk" / "tiny_4anim.x"
    assert bpy.ops.import_scene.xfile(filepath=str(path)) == {"FINISHED"}
    arm, meshes = imported(bpy)
    actions = [t.strips[0].action for t in arm.animation_data.nla_tracks]
    keyed = [(fc.data_path, fc.array_index) for a in actions for layer in a.layers for st in layer.strips
             for bag in st.channelbags for fc in bag.fcurves]
    ref = reference("xfile", [path])
    width = {"translation": 3, "rotation": 4, "scale": 3}
    in_file = sum(width[ch] * len(getattr(c, ch).targets) for c in ref.clips for ch in width)
    assert 0 < len(keyed) < 0.9 * in_file, (len(keyed), in_file)    # 1296 of 1500 (1520 before)
    xf = read_xfile(path)
    rate = fps(bpy) / _ticks(xf)
    for clip, aset in reversed(list(zip(ref.clips, xf.animation_sets))):
        play(arm, clip.name)
        rng = tuple(r * rate for r in _set_range(aset))
        rep = verify(bpy, meshes, ref, clip, _frames(rng)[::3])
        assert rep.ok, (clip.name, rep.table())
