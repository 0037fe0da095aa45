# SPDX-License-Identifier: GPL-3.0-or-later
"""DirectX .X export through bpy.ops: .X -> Blender -> .X -> Blender deforms
identically at every frame of every AnimationSet (text, binary, compressed),
the exported file keeps frame names, vertex counts and set durations, a rig
made in Blender survives the round trip, and a failed export leaves an
existing file untouched."""
from __future__ import annotations

import importlib
import os

import numpy as np
import pytest

from legacy_skin_io.io.xfile import read_xfile
from legacy_skin_io.io.xfile.playback import XRig, bone_selection

from conftest import DATA, EXT_MODULE  # noqa: E402

X = DATA / "x"
TINY = X / "directx-sdk" / "tiny_4anim.x"
BCN = X / "assimp" / "BCN_Epileptic.X"


def _mod(name):
    return importlib.import_module(EXT_MODULE + ".operators." + name)


def _fps(bpy):
    r = bpy.context.scene.render
    return r.fps / r.fps_base


def _armature(bpy):
    arms = [o for o in bpy.context.scene.objects if o.type == "ARMATURE"]
    assert len(arms) == 1
    return arms[0]


def _meshes(bpy):
    return {o.name: o for o in bpy.context.scene.objects if o.type == "MESH"}


def _positions(bpy):
    xi = _mod("xfile_import")
    return {n: xi.evaluated_world(bpy.context, o) for n, o in sorted(_meshes(bpy).items())}


def _play_sets(bpy, frames_of: dict | None = None):
    """Evaluated world positions of every mesh at every frame of every action
    (NLA track order): {action: [per frame {mesh: (V, 3)}]}, and the frames."""
    ab = _mod("anim_build")
    arm = _armature(bpy)
    scene = bpy.context.scene
    out, frames_out = {}, {}
    for track in arm.animation_data.nla_tracks:
        st = track.strips[0]
        ab.assign_action(arm, st.action, st.action_slot)
        if frames_of is None:
            f0, f1 = st.action.frame_range
            frames = np.arange(np.floor(f0), np.ceil(f1) + 1)
        else:
            frames = frames_of[track.name]
        seq = []
        for f in frames:
            scene.frame_set(int(f))
            seq.append(_positions(bpy))
        out[track.name] = seq
        frames_out[track.name] = frames
    return out, frames_out


def _max_diff(a: dict, b: dict) -> float:
    worst = 0.0
    assert a.keys() == b.keys()
    for name in a:
        assert len(a[name]) == len(b[name])
        for pa, pb in zip(a[name], b[name]):
            assert pa.keys() == pb.keys()
            for m in pa:
                assert pa[m].shape == pb[m].shape, m
                worst = max(worst, float(np.abs(pa[m] - pb[m]).max()) if len(pa[m]) else 0.0)
    return worst


def _size(seq: dict) -> float:
    pts = np.concatenate([p for frames in seq.values() for p in frames[0].values()])
    return float(np.linalg.norm(pts.max(0) - pts.min(0)))


# ---------------------------------------------------------------------------
# (1) + (2): corpus files

@pytest.mark.parametrize("path", [TINY, BCN], ids=lambda p: p.name)
def test_x_blender_x_blender_deforms_identically(bpy, tmp_path, path):
    assert bpy.ops.import_scene.xfile(filepath=str(path)) == {"FINISHED"}
    first, frames = _play_sets(bpy)
    size = _size(first)
    src = read_xfile(path)
    rig = XRig.from_xfile(src)
    # the reference really moves
    moved = max(float(np.abs(seq[k][m] - seq[0][m]).max()) for seq in first.values()
                for k in range(0, len(seq), 7) for m in seq[0])
    assert moved > 1e-2 * size
    exported = {}
    for fmt in ("text", "binary", "text_compressed"):
        out = tmp_path / f"out_{fmt}.x"
        assert bpy.ops.export_scene.xfile(filepath=str(out), file_format=fmt) == {"FINISHED"}
        exported[fmt] = out
    for fmt, out in exported.items():
        bpy.ops.wm.read_homefile(use_empty=True)
        assert bpy.ops.import_scene.xfile(filepath=str(out)) == {"FINISHED"}
        second, _ = _play_sets(bpy, frames)
        err = _max_diff(first, second)
        print(f"{path.name} {fmt}: max deviation {err:.3g} ({err / size:.3g} of the model size)")
        assert err <= 1e-5 * size, (fmt, err, size)
        # (2) our reader's view of the exported file
        xf = read_xfile(out)
        back = XRig.from_xfile(xf)
        sel = bone_selection(rig)
        assert sorted(back.names) == sorted(rig.names[j] for j in range(rig.n_frames) if sel[j])
        src_counts = sorted(len(m.positions) for m in rig.meshes)
        assert sorted(len(m.positions) for m in back.meshes) == src_counts
        tps_src, tps_out = rig.ticks_per_second, back.ticks_per_second
        want = {c.name: c.last_tick / tps_src for c in rig.clips}
        got = {c.name: c.last_tick / tps_out for c in back.clips}
        assert want.keys() == got.keys()
        for k in want:
            assert abs(want[k] - got[k]) < 1e-6, (k, want[k], got[k])
        assert all(c.first_tick == 0 for c in back.clips)


# ---------------------------------------------------------------------------
# (3): a rig made in Blender

def _blender_rig(bpy):
    import bmesh
    from mathutils import Matrix, Quaternion

    arm = bpy.data.armatures.new("Rig")
    ao = bpy.data.objects.new("Rig", arm)
    ao.location = (0.3, -0.2, 0.1)
    bpy.context.scene.collection.objects.link(ao)
    bpy.context.view_layer.objects.active = ao
    bpy.ops.object.mode_set(mode="EDIT")
    rng = np.random.default_rng(7)
    names = []
    for i in range(4):
        b = arm.edit_bones.new(f"Bone.{i}")
        b.head = (0.1 * i, 0.0, 0.5 * i)
        b.tail = (0.1 * i + 0.05, 0.1, 0.5 * i + 0.45)
        b.roll = float(rng.uniform(-1, 1))
        if i:
            b.parent = arm.edit_bones[names[-1]]
        names.append(b.name)
    bpy.ops.object.mode_set(mode="OBJECT")
    me = bpy.data.meshes.new("Body")
    bm = bmesh.new()
    bmesh.ops.create_grid(bm, x_segments=3, y_segments=12, size=0.2,
                          matrix=Matrix.Translation((0.15, 0.0, 1.0)) @ Matrix.Rotation(1.5708, 4, "X")
                          @ Matrix.Diagonal((1.0, 5.0, 1.0, 1.0)))
    bm.to_mesh(me)
    bm.free()
    mo = bpy.data.objects.new("Body", me)
    mo.location = (0.05, 0.0, -0.05)
    bpy.context.scene.collection.objects.link(mo)
    co = np.empty(3 * len(me.vertices), dtype=np.float32)
    me.vertices.foreach_get("co", co)
    z = co.reshape(-1, 3)[:, 2]
    for i, n in enumerate(names):
        g = mo.vertex_groups.new(name=n)
        w = np.clip(1.0 - np.abs(z - 0.5 * i - 0.25) / 0.5, 0.0, 1.0)
        for v in np.nonzero(w > 0)[0]:
            g.add([int(v)], float(w[v]), "REPLACE")
    mo.modifiers.new("Armature", "ARMATURE").object = ao
    mo.parent = ao
    mo.matrix_parent_inverse = ao.matrix_world.inverted()
    act = bpy.data.actions.new("Bend")
    ao.animation_data_create().action = act
    for i, n in enumerate(names):
        pb = ao.pose.bones[n]
        pb.rotation_mode = "QUATERNION"
        for f in (1, 9, 20):
            ax = rng.normal(size=3)
            pb.rotation_quaternion = Quaternion(ax / np.linalg.norm(ax), float(rng.uniform(-0.8, 0.8)))
            pb.keyframe_insert("rotation_quaternion", frame=f)
    return ao, mo, act


@pytest.mark.parametrize("options", [
    {"file_format": "binary_compressed"},
    {"file_format": "text", "float_size": "64", "key_type": "MATRIX", "sampling": "FRAMES"},
], ids=["bzip-trs", "text64-matrix-every-frame"])
def test_rig_made_in_blender_round_trips(bpy, tmp_path, options):
    ao, mo, act = _blender_rig(bpy)
    n_quads = len(mo.data.polygons)
    scene = bpy.context.scene
    frames = np.arange(1, 21)
    want = []
    for f in frames:
        scene.frame_set(int(f))
        want.append(_positions(bpy)["Body"])
    rest = _positions(bpy)["Body"]
    out = tmp_path / "rig.x"
    assert bpy.ops.export_scene.xfile(filepath=str(out), **options) == {"FINISHED"}
    # the scene was not modified
    assert ao.animation_data.action == act and scene.frame_current == 20
    xf = read_xfile(out)
    m = next(iter(xf.all_meshes()))
    assert len(m.face_sizes) == n_quads and set(m.face_sizes.tolist()) == {4}
    assert len(m.positions) == len(mo.data.vertices)
    assert {sw.frame_name for sw in m.skin_weights} == {f"Bone.{i}" for i in range(4)}
    assert [s.name for s in xf.animation_sets] == ["Bend"]
    assert xf.float_size == int(options.get("float_size", "32"))
    kinds = {k.key_type for a in xf.animation_sets[0].animations for k in a.keys}
    assert kinds == ({4} if options.get("key_type") == "MATRIX" else {0, 1, 2})
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.import_scene.xfile(filepath=str(out)) == {"FINISHED"}
    arm = _armature(bpy)
    assert sorted(b.name for b in arm.data.bones) == [f"Bone.{i}" for i in range(4)]
    ab = _mod("anim_build")
    st = arm.animation_data.nla_tracks["Bend"].strips[0]
    ab.assign_action(arm, st.action, st.action_slot)
    size = float(np.linalg.norm(rest.max(0) - rest.min(0)))
    scene = bpy.context.scene
    worst = 0.0
    for f, w in zip(frames, want):
        scene.frame_set(int(f))
        worst = max(worst, float(np.abs(_positions(bpy)["Body"] - w).max()))
    print(f"Blender rig: max deviation {worst:.3g} ({worst / size:.3g} of the model size)")
    assert worst <= 1e-5 * size
    moved = max(float(np.abs(w - want[0]).max()) for w in want)
    assert moved > 0.05 * size


# ---------------------------------------------------------------------------
# (4): failures

def test_failed_export_leaves_existing_file_untouched(bpy, tmp_path):
    out = tmp_path / "keep.x"
    out.write_bytes(b"precious")
    with pytest.raises(RuntimeError, match="nothing to export"):
        bpy.ops.export_scene.xfile(filepath=str(out))
    assert out.read_bytes() == b"precious"
    # a mesh the writer refuses (non-finite coordinates): fails after building
    assert bpy.ops.import_scene.xfile(filepath=str(X / "assimp" / "test_cube_text.x")) == {"FINISHED"}
    me = next(iter(_meshes(bpy).values())).data
    co = np.empty(3 * len(me.vertices), dtype=np.float32)
    me.vertices.foreach_get("co", co)
    co[0] = np.nan
    me.vertices.foreach_set("co", co)
    with pytest.raises(RuntimeError, match="not finite"):
        bpy.ops.export_scene.xfile(filepath=str(out))
    assert out.read_bytes() == b"precious"
    assert [p.name for p in tmp_path.iterdir()] == ["keep.x"]   # no temporary file left
    co[0] = 0.0
    me.vertices.foreach_set("co", co)
    assert bpy.ops.export_scene.xfile(filepath=str(out)) == {"FINISHED"}
    assert read_xfile(out).frames and os.path.getsize(out) > 100


def test_export_menu_and_file_handler(bpy):
    assert bpy.ops.export_scene.xfile.get_rna_type().name == "Export DirectX"
    assert bpy.types.IO_FH_xfile.bl_export_operator == "export_scene.xfile"


@pytest.mark.parametrize("path", [X / "directx-sdk" / "tiger.x", X / "assimp" / "kwxport_test_cubewithvcolors.x"],
                         ids=lambda p: p.name)
def test_static_mesh_comes_back_as_stored(bpy, tmp_path, path):
    """Winding, n-gons, UVs (v flipped back), normals, vertex colours and
    materials of a static mesh are what the source file stores."""
    assert bpy.ops.import_scene.xfile(filepath=str(path)) == {"FINISHED"}
    out = tmp_path / "out.x"
    assert bpy.ops.export_scene.xfile(filepath=str(out), float_size="64") == {"FINISHED"}
    src = next(iter(read_xfile(path).all_meshes()))
    got = next(iter(read_xfile(out).all_meshes()))
    assert np.array_equal(got.face_sizes, src.face_sizes)
    assert np.array_equal(got.face_indices, src.face_indices)
    assert np.abs(got.positions - src.positions).max() < 1e-5 * np.abs(src.positions).max()
    assert np.abs(got.uvs - src.uvs).max() < 1e-6
    if src.normals is not None:
        sn = src.normals[src.normal_face_indices] if src.normal_face_indices is not None else \
            src.normals[src.face_indices]
        sn = sn / np.linalg.norm(sn, axis=1, keepdims=True)
        gn = got.normals[got.normal_face_indices]
        assert np.abs(gn - sn).max() < 1e-3
    if src.vertex_colors is not None:
        assert np.abs(got.vertex_colors[:, :src.vertex_colors.shape[1]] - src.vertex_colors).max() < 1e-6
    assert np.array_equal(got.material_indices, src.material_indices)
    for a, b in zip(got.materials, src.materials):
        assert np.abs(a.face_color - b.face_color).max() < 1e-6
        assert abs(a.power - b.power) < 1e-3 * max(1.0, b.power)
        assert a.texture == b.texture
