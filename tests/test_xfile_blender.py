# SPDX-License-Identifier: GPL-3.0-or-later
"""DirectX .X import through bpy.ops, verified frame by frame against the
core's evaluation of the parsed file (io.xfile.playback, file space, mapped
to Blender space), plus handedness, meshes, materials and bad input."""
from __future__ import annotations

import importlib

import numpy as np
import pytest

from legacy_skin_io.core import quat
from legacy_skin_io.io.xfile import read_xfile
from legacy_skin_io.io.xfile.playback import (DEFAULT_AXES, Handedness, XRig, col,
                                              rotation_from_key)

from conftest import DATA, EXT_MODULE  # noqa: E402

X = DATA / "x"
ANIMATED = [X / "assimp" / "BCN_Epileptic.X", X / "assimp" / "Testwuson.X", X / "assimp" / "anim_test.x",
            X / "directx-sdk" / "bat.x", X / "directx-sdk" / "tiny_4anim.x"]
SKINNED_STATIC = [X / "assimp" / "test_cube_text.x", X / "assimp" / "test_cube_binary.x",
                  X / "assimp" / "test_cube_compressed.x"]
BROKEN = [X / "assimp" / "malformed_skinweights_oob.x", X / "assimp" / "OV_GetNextToken"]


def _xi():
    return importlib.import_module(EXT_MODULE + ".operators.xfile_import")


def _last_import(bpy):
    """Rebuild the XImport handle from the scene (objects made by the operator)."""
    xi = _xi()
    import json

    arm = [o for o in bpy.context.scene.objects if o.type == "ARMATURE"]
    meshes = {int(o[xi.MESH_KEY]): o for o in bpy.context.scene.objects if o.type == "MESH"}
    assert len(arm) <= 1
    arm = arm[0] if arm else None
    meta = json.loads(arm[xi.META_KEY]) if arm else None
    return arm, meshes, meta


def _handle(bpy, path, rig, conv, bake_expected=None):
    """An XImport for verify_x built from the scene; the reference rig is a
    fresh parse of the file (never read back from Blender)."""
    xi = _xi()
    arm, meshes, meta = _last_import(bpy)
    actions = []
    if arm is not None and arm.animation_data is not None:
        by_name = {t.name: t for t in arm.animation_data.nla_tracks}
        for clip in rig.clips:
            st = by_name[clip.name].strips[0]
            actions.append((st.action, st.action_slot, clip))
    rb = None
    if arm is not None:
        rb = type("RB", (), {"obj": arm})()
    imp = xi.XImport(rig, conv, arm, rb, meshes, actions, bool(meta and meta["baked"]))
    if bake_expected is not None:
        assert imp.baked == bake_expected
    return imp


def _frames(rig, clip, fps, step=1.0, limit=None):
    end = float(np.ceil(rig.ticks_to_frames(clip.last_tick, fps)))
    frames = np.arange(0.0, end + 1.0 + 1e-9, step)
    if limit and len(frames) > limit:
        frames = frames[np.linspace(0, len(frames) - 1, limit).round().astype(int)]
    return frames


# ---------------------------------------------------------------------------
# bpy-free facts the importer relies on

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
    h = Handedness()
    assert np.array_equal(h.C, DEFAULT_AXES) and h.mirrors
    p = np.array([[1.0, 2.0, 3.0]])
    assert np.allclose(h.points(p), [[1.0, 3.0, 2.0]])
    # matrices are conjugated: a file transform applied then mapped = mapped then transformed
    rng = np.random.default_rng(3)
    q = quat.normalize(rng.normal(size=4))
    a = quat.to_mat4(q, rng.normal(size=3))
    pts = rng.normal(size=(5, 3))
    moved = pts @ a[:3, :3].T + a[:3, 3]
    b = h.matrices(a)
    assert np.allclose(h.points(pts) @ b[:3, :3].T + b[:3, 3], h.points(moved))
    assert np.linalg.det(b[:3, :3]) > 0
    assert np.allclose(quat.to_mat3(h.quats(q)), b[:3, :3])


# ---------------------------------------------------------------------------
# Blender

def test_operator_axes_default_matches_the_documented_mapping(bpy, ext):
    from bpy_extras.io_utils import axis_conversion

    xi = _xi()
    rot = axis_conversion(from_forward="-Z", from_up="Y").to_3x3()
    h = xi.handedness([list(r) for r in rot])
    assert np.allclose(h.C, DEFAULT_AXES)


@pytest.mark.parametrize("path", ANIMATED, ids=lambda p: p.name)
def test_animated_import_matches_core_every_set(bpy, path):
    """Un-baked file keys: Blender (per-component quaternion interpolation)
    equals the core's nlerp sampling of the same keys, on and between keys."""
    assert bpy.ops.import_scene.xfile(filepath=str(path)) == {"FINISHED"}
    rig = XRig.from_xfile(read_xfile(path))
    conv = Handedness()
    imp = _handle(bpy, path, rig, conv, bake_expected=False)
    arm = imp.armature
    assert min(b.length for b in arm.data.bones) > 1e-4
    scene = bpy.context.scene
    fps = scene.render.fps / scene.render.fps_base
    # one action per set, named after it, NLA tracks kept, the first active
    assert [t.name for t in arm.animation_data.nla_tracks] == [c.name for c in rig.clips]
    assert arm.animation_data.action.name == rig.clips[0].name
    end = max(rig.ticks_to_frames(c.last_tick, fps) for c in rig.clips)
    assert (scene.frame_start, scene.frame_end) == (0, max(int(np.ceil(end - 1e-6)), 1))
    for ci, clip in enumerate(rig.clips):
        # every frame of the set, and keys' in-betweens at half frames
        frames = np.union1d(_frames(rig, clip, fps), _frames(rig, clip, fps, step=0.5, limit=40))
        rep = _xi().verify_x(bpy.context, imp, rig, ci, frames, "nlerp")
        assert rep.ok, (clip.name, rep.table())
        assert rep.max_error <= 1e-5 * rep.size
        # the reference really animates (Wuson_Bind is a still pose)
        if clip.name != "Wuson_Bind":
            moved = max(np.abs(rig.positions(mi, w) - rig.positions(mi, rig.world0)).max()
                        for mi in imp.meshes
                        for w in rig.sample_world(clip, rig.frames_to_ticks(frames, fps))[::5])
            assert moved > 1e-2 * rig.size()


@pytest.mark.parametrize("path,kw", [
    (X / "directx-sdk" / "tiny_4anim.x", {"bake": True}),
    (X / "assimp" / "Testwuson.X", {"rest_from": "FRAMES", "global_scale": 0.1}),
    (X / "assimp" / "BCN_Epileptic.X", {"every_frame_bone": True, "axis_forward": "Y", "axis_up": "Z"}),
], ids=["tiny-baked", "wuson-frames-rest", "bcn-every-frame-axes"])
def test_options_still_match_core(bpy, path, kw):
    assert bpy.ops.import_scene.xfile(filepath=str(path), **kw) == {"FINISHED"}
    from bpy_extras.io_utils import axis_conversion

    xi = _xi()
    rot = axis_conversion(from_forward=kw.get("axis_forward", "-Z"), from_up=kw.get("axis_up", "Y")).to_3x3()
    conv = xi.handedness([list(r) for r in rot], kw.get("global_scale", 1.0))
    rig = XRig.from_xfile(read_xfile(path))
    imp = _handle(bpy, path, rig, conv)
    assert imp.baked == (kw.get("bake", False) or kw.get("rest_from") == "FRAMES")
    if kw.get("every_frame_bone"):
        assert len(imp.armature.data.bones) == rig.n_frames
    scene = bpy.context.scene
    fps = scene.render.fps / scene.render.fps_base
    for ci, clip in enumerate(rig.clips[:2]):
        frames = _frames(rig, clip, fps, step=1.0 if imp.baked else 0.5, limit=30)
        rep = xi.verify_x(bpy.context, imp, rig, ci, frames, "slerp" if imp.baked else "nlerp")
        assert rep.ok, (clip.name, rep.table())


@pytest.mark.parametrize("path", [X / "directx-sdk" / "tiny_4anim.x", X / "assimp" / "Testwuson.X"]
                         + SKINNED_STATIC, ids=lambda p: p.name)
def test_default_pose_shows_the_frame_matrices(bpy, path):
    """Without actions the rest is the bind pose and the default pose is the
    FrameTransformMatrix hierarchy; rigid meshes follow their frames."""
    assert bpy.ops.import_scene.xfile(filepath=str(path), import_animations=False) == {"FINISHED"}
    rig = XRig.from_xfile(read_xfile(path))
    imp = _handle(bpy, path, rig, Handedness())
    rep = _xi().verify_x(bpy.context, imp, rig, None, [0], "slerp")
    assert rep.ok, rep.table()
    # rest = bind pose: the bones' rest matrices hold the inverse matrixOffsets
    rb_bones = imp.armature.data.bones
    for mi, sk in enumerate(rig.skins):
        if sk is None:
            continue
        for j in sk.offsets:
            got = np.array(rb_bones[rig.names[j]].matrix_local)
            want = Handedness().matrices(rig.bind[j])
            scale = np.cbrt(np.linalg.det(want[:3, :3]))
            # the rest is the bind rotation, or it turned 90 degrees about X
            # (bones pointing back along their parent: Blender's roll precision)
            turned = want[:3, :3] @ np.array([[1.0, 0, 0], [0, 0, -1], [0, 1, 0]])
            assert min(np.abs(got[:3, :3] * scale - w).max() for w in (want[:3, :3], turned)) < 1e-4
            assert np.abs(got[:3, 3] - want[:3, 3]).max() < 1e-4 * rig.size()
    differs = np.abs(rig.world0[rig.has_offset] - rig.bind[rig.has_offset]).max() > 1e-3
    posed = max(np.abs(np.array(pb.matrix_basis) - np.eye(4)).max() for pb in imp.armature.pose.bones)
    assert (posed > 1e-3) == differs


def test_static_meshes_handedness_ngons_uvs_colours_materials(bpy):
    path = X / "directx-sdk" / "tiger.x"  # 64-bit floats, quads, a texture that is not there
    assert bpy.ops.import_scene.xfile(filepath=str(path)) == {"FINISHED"}
    xf = read_xfile(path)
    m = xf.meshes[0]
    obj = next(o for o in bpy.context.scene.objects if o.type == "MESH")
    me = obj.data
    assert len(me.polygons) == len(m.face_sizes)
    sizes = np.empty(len(me.polygons), dtype=np.int32)
    me.polygons.foreach_get("loop_total", sizes)
    assert np.array_equal(sizes, m.face_sizes) and sizes.max() == 4
    co = np.empty(3 * len(me.vertices), dtype=np.float32)
    me.vertices.foreach_get("co", co)
    assert np.allclose(co.reshape(-1, 3), m.positions[:, [0, 2, 1]], atol=1e-5)
    # winding reversed: first face's corners are the file's in reverse order
    lv = np.empty(len(me.loops), dtype=np.int32)
    me.loops.foreach_get("vertex_index", lv)
    n0 = int(m.face_sizes[0])
    assert list(lv[:n0]) == list(m.face_indices[:n0][::-1])
    uv = np.empty(2 * len(me.loops), dtype=np.float32)
    me.uv_layers[0].data.foreach_get("uv", uv)
    uv = uv.reshape(-1, 2)
    assert np.allclose(uv[:, 1], 1.0 - m.uvs[lv, 1], atol=1e-6)
    img = [n for n in me.materials[0].node_tree.nodes if n.type == "TEX_IMAGE"][0].image
    assert img.filepath == "tiger.bmp"

    bpy.ops.wm.read_homefile(use_empty=True)
    path = X / "assimp" / "kwxport_test_cubewithvcolors.x"
    assert bpy.ops.import_scene.xfile(filepath=str(path)) == {"FINISHED"}
    xf = read_xfile(path)
    m = xf.meshes[0] if xf.meshes else next(iter(xf.all_meshes()))
    obj = next(o for o in bpy.context.scene.objects if o.type == "MESH")
    me = obj.data
    attr = me.color_attributes["Color"]
    c = np.empty(4 * len(me.vertices), dtype=np.float32)
    attr.data.foreach_get("color", c)
    assert np.allclose(c.reshape(-1, 4)[:, :m.vertex_colors.shape[1]], m.vertex_colors, atol=1e-6)
    assert [mat.name.split(".")[0] for mat in me.materials] == [x.name for x in m.materials]
    for mat, xm in zip(me.materials, m.materials):
        tex = [n for n in mat.node_tree.nodes if n.type == "TEX_IMAGE"]
        assert tex and tex[0].image.filepath == xm.texture  # missing image: path kept
        assert np.allclose(mat.diffuse_color[:3], xm.face_color[:3], atol=1e-6)
    # geometric normals (after the winding reversal) agree with the file's normals, mapped
    me.update()
    pn = np.empty(3 * len(me.polygons), dtype=np.float32)
    me.polygons.foreach_get("normal", pn)
    cn = np.empty(3 * len(me.corner_normals), dtype=np.float32)
    me.corner_normals.foreach_get("vector", cn)
    start = np.empty(len(me.polygons), dtype=np.int32)
    me.polygons.foreach_get("loop_start", start)
    dots = np.sum(pn.reshape(-1, 3) * cn.reshape(-1, 3)[start], axis=1)
    assert np.all(dots > 0.5)


def test_materials_from_face_colour_and_power(bpy):
    assert bpy.ops.import_scene.xfile(filepath=str(X / "assimp" / "test_cube_text.x")) == {"FINISHED"}
    xm = next(iter(read_xfile(X / "assimp" / "test_cube_text.x").all_meshes())).materials[0]
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


@pytest.mark.parametrize("path", BROKEN, ids=lambda p: p.name)
def test_broken_files_report_and_leave_the_scene_untouched(bpy, path):
    assert bpy.ops.import_scene.xfile(filepath=str(X / "assimp" / "test.x")) == {"FINISHED"}
    before = {k: len(getattr(bpy.data, k)) for k in ("objects", "meshes", "armatures", "materials", "actions",
                                                    "images")}
    with pytest.raises(RuntimeError, match=path.name.replace(".", r"\.") + r".*(:\d+|byte offset \d+)"):
        bpy.ops.import_scene.xfile(filepath=str(path))
    after = {k: len(getattr(bpy.data, k)) for k in before}
    assert after == before


def test_menu_and_file_handler_registered(bpy):
    assert hasattr(bpy.types, "IO_FH_xfile")
    assert bpy.types.IO_FH_xfile.bl_import_operator == "import_scene.xfile"
    assert ".x" in bpy.types.IO_FH_xfile.bl_file_extensions.lower()
    assert bpy.ops.import_scene.xfile.get_rna_type().name == "Import DirectX"
