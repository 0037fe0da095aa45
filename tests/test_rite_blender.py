# SPDX-License-Identifier: GPL-3.0-or-later
"""RiTE import through bpy.ops (import_scene.rite, import_anim.rite), verified
frame by frame: Blender's evaluated meshes against the oracle
(scene.evaluate) on a fresh parse of the files (the RiTE adapter's
read_scene), and Blender's static data against the files' own numbers."""
from __future__ import annotations

import numpy as np
import pytest
from blender_checks import ext, fps, imported, reference, snapshot, verify
from conftest import DATA, SAMPLES  # noqa: E402
from rite_random import random_raa, random_ram

from legacy_skin_io.core import quat
from legacy_skin_io.io.rite import read_raa, read_ram, write_raa, write_ram

REL = 1e-5   # tolerance: a fraction of the model size


def _axes(bpy, forward="-Z", up="Y", scale=1.0):
    """The conversion the importer should apply, from Blender's own
    definition of the Forward/Up options (bpy_extras.axis_conversion)."""
    from bpy_extras.io_utils import axis_conversion

    C = np.array(axis_conversion(from_forward=forward, from_up=up).to_3x3(), dtype=np.float64)
    return C, ext("scene").AxisConversion(C, scale)


def _file_bind_world(ram) -> np.ndarray:
    """World matrices of the joints in the file's pose, from the file's
    numbers: local = [R(orientation * rotation) | translation]."""
    J = len(ram.joints)
    local = [quat.to_mat4(quat.mul(quat.normalize(np.asarray(j.orientation)), np.asarray(j.rotation)),
                          np.asarray(j.translation)) for j in ram.joints]
    world: list = [None] * J

    def w(i):
        if world[i] is None:
            p = ram.joints[i].parent
            world[i] = local[i] if p < 0 else w(p) @ local[i]
        return world[i]

    return np.array([w(i) for i in range(J)])


def _mesh_arrays(me):
    V, L = len(me.vertices), len(me.loops)
    co = np.empty(3 * V, dtype=np.float32)
    me.vertices.foreach_get("co", co)
    lv = np.empty(L, dtype=np.int32)
    me.loops.foreach_get("vertex_index", lv)
    return co.reshape(-1, 3).astype(np.float64), lv


def _moved(ref, clip, frames, fps_):
    """Largest vertex displacement of the reference from its default pose."""
    ev = ext("scene.evaluate")
    rest = ev.evaluate(ref, None, [0.0], fps_)[0]
    return max(np.linalg.norm(p - rest, axis=1).max() for p in ev.evaluate(ref, clip, frames, fps_))


@pytest.mark.parametrize("seed,kw", [
    (11, {"global_scale": 0.5, "bone_direction": "FILE"}),
    (12, {"global_scale": 0.5, "bone_direction": "CHILDREN"}),
    (11, {"rest_from": "DEFAULT", "axis_forward": "Y", "axis_up": "Z"}),
    (12, {"axis_forward": "X", "axis_up": "-Y", "global_scale": 2.0, "every_joint_bone": True,
          "bone_direction": "FILE"}),
], ids=["file-half", "children-half", "defaults-rest-default-identity-axes", "file-x-negy-double-all"])
def test_random_rig_import_matches_rite_playback_every_frame(bpy, tmp_path, seed, kw):
    write_ram(random_ram(seed), tmp_path / "rig one.ram")
    ram = read_ram(tmp_path / "rig one.ram")
    write_raa(random_raa(seed + 100, ram, "anim one"), tmp_path / "anim one.raa")
    raa = read_raa(tmp_path / "anim one.raa")
    assert bpy.ops.import_scene.rite(filepath=str(tmp_path / "rig one.ram"), **kw) == {"FINISHED"}
    arm, meshes = imported(bpy)
    assert arm is not None and list(meshes) == [0]
    mesh = meshes[0]
    me = mesh.data
    C, axes = _axes(bpy, kw.get("axis_forward", "-Z"), kw.get("axis_up", "Y"), kw.get("global_scale", 1.0))
    s = kw.get("global_scale", 1.0)

    # skeleton: one bone per joint, named and parented as in the file
    bones = arm.data.bones
    assert sorted(b.name for b in bones) == sorted(j.name for j in ram.joints)
    for j in ram.joints:
        parent = bones[j.name].parent
        assert (parent.name if parent else None) == (ram.joints[j.parent].name if j.parent >= 0 else None)
    assert min(b.length for b in bones) > 1e-4
    if kw.get("bone_direction") == "FILE":
        # the rest matrices are the file's bind pose, converted: M @ bind @ M^-1
        M = np.eye(4)
        M[:3, :3] = s * C
        want = M @ _file_bind_world(ram) @ np.linalg.inv(M)
        aw = np.array(arm.matrix_world)
        got = np.array([aw @ np.array(bones[j.name].matrix_local) for j in ram.joints])
        assert np.abs(got[:, :3, :3] - want[:, :3, :3]).max() < 1e-5
        assert np.abs(got[:, :3, 3] - want[:, :3, 3]).max() < 1e-5 * s

    # mesh: the file's vertices at s * C p, its triangles, corner UVs and normals
    co, lv = _mesh_arrays(me)
    mw = np.array(mesh.matrix_world)
    world = co @ mw[:3, :3].T + mw[:3, 3]
    assert len(co) == len(ram.positions)
    assert np.abs(world - s * ram.positions @ C.T).max() < 1e-5 * max(s, 1.0) * np.abs(ram.positions).max()
    assert len(me.polygons) == len(ram.tri_vertices)
    assert np.array_equal(lv, ram.tri_vertices.reshape(-1))        # C is a rotation: winding kept
    uv = np.empty(2 * len(me.loops), dtype=np.float32)
    me.uv_layers[0].data.foreach_get("uv", uv)
    assert np.allclose(uv.reshape(-1, 2), ram.uvs[ram.tri_uvs.reshape(-1)], atol=1e-6)
    cn = np.empty(3 * len(me.loops), dtype=np.float32)
    me.corner_normals.foreach_get("vector", cn)
    want_n = ram.normals[ram.tri_normals.reshape(-1)] @ C.T
    want_n /= np.linalg.norm(want_n, axis=1, keepdims=True)
    # shading: the file's normal, reflected across its triangle where it points behind it (random normals
    # of random triangles: about half); corners within 5 degrees of their triangle's plane are tilted out
    tri = (s * ram.positions @ C.T)[ram.tri_vertices]
    face_n = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    face_n = np.repeat(face_n / np.linalg.norm(face_n, axis=1, keepdims=True), 3, axis=0)
    along = np.einsum("ij,ij->i", want_n, face_n)
    shaded = want_n - 2.0 * np.minimum(along, 0.0)[:, None] * face_n
    clear = np.abs(along) > np.sin(np.radians(6.0))
    assert (along < 0).mean() > 0.2 and clear.mean() > 0.8
    err = np.abs(cn.reshape(-1, 3) - shaded)[clear]
    assert err.max() < 2e-2 and np.median(err) < 1e-4       # Blender stores custom normals quantised
    lean = np.einsum("ij,ij->i", cn.reshape(-1, 3), face_n)
    assert (lean[~clear] > np.sin(np.radians(5.0)) - 2e-2).all()
    md = ext("operators.metadata")
    exact = np.empty(3 * len(me.loops), dtype=np.float32)   # kept exactly for export
    me.attributes[md.NORMAL_ATTR].data.foreach_get("vector", exact)
    assert np.abs(exact.reshape(-1, 3) - want_n).max() < 1e-6
    # a material per SHADER id, each face on its shader's
    assert len(me.materials) == len(np.unique(ram.tri_shader))
    fm = np.empty(len(me.polygons), dtype=np.int32)
    me.polygons.foreach_get("material_index", fm)
    shader_of = np.array([md.load(m, md.MESH_KEY)["extras"]["rite_shader"] for m in me.materials])
    assert np.array_equal(shader_of[fm], ram.tri_shader)
    # vertex groups hold the file's weights
    assert sorted(g.name for g in mesh.vertex_groups) == sorted(ram.joints[j].name
                                                                for j in np.unique(ram.weight_joint))
    gname = {g.index: g.name for g in mesh.vertex_groups}
    got_w = {(v.index, gname[g.group]): g.weight for v in me.vertices for g in v.groups}
    want_w = {(int(v), ram.joints[int(j)].name): float(w)
              for v, j, w in zip(ram.weight_vertex, ram.weight_joint, ram.weight_value)}
    assert got_w.keys() == want_w.keys()
    assert max(abs(got_w[k] - want_w[k]) for k in want_w) < 1e-6
    assert [m.type for m in mesh.modifiers] == ["ARMATURE"] and mesh.modifiers[0].object == arm

    # the default pose, then the animation at every frame
    ref0 = reference("rite", [tmp_path / "rig one.ram"], axes)
    rep0 = verify(bpy, meshes, ref0, None, [0])
    assert rep0.ok, rep0.table()
    assert bpy.ops.import_anim.rite(filepath=str(tmp_path / "anim one.raa")) == {"FINISHED"}
    assert arm.animation_data.action.name == "anim one"
    # the Animator's loop: frames 1..N-1 again and again (frame 0 is the entry pose)
    assert (bpy.context.scene.frame_start, bpy.context.scene.frame_end) == (1, raa.frame_count - 1)
    ref = reference("rite", [tmp_path / "rig one.ram", tmp_path / "anim one.raa"], axes)
    frames = range(2 * raa.frame_count)
    rep = verify(bpy, meshes, ref, ref.clips[0], frames)
    assert rep.ok, rep.table()
    assert rep.max_error <= REL * rep.size
    assert len(rep.frames) == 2 * raa.frame_count
    # the animation really moves the mesh (in the reference and in Blender)
    assert _moved(ref, ref.clips[0], list(frames), fps(bpy)) > 1e-2 * rep.size
    still = verify(bpy, meshes, ref, None, [5])
    assert still.max_error > 1e3 * rep.max_error + 1e-6


def test_keys_only_plays_the_runtime_with_the_file_keys_where_blender_can(bpy, tmp_path):
    """key_every_frame=False keys the file's keys, and every frame of the spans
    Blender's per-component interpolation would play differently: the
    runtime's poses at every whole frame, and between frames where the keys
    are the file's own (the runtime lerps them as Blender does)."""
    write_ram(random_ram(41), tmp_path / "rig.ram")
    ram = read_ram(tmp_path / "rig.ram")
    anim = random_raa(141, ram, "keys")
    close = anim.tracks[0]       # a track whose keys are close together: the file's keys are enough
    close.frames = np.array([0, 5, 11, anim.frame_count - 1])
    close.rotations = quat.normalize(ram.joints[close.joint_id].rotation
                                     + np.array([[0, 0, 0, 0], [0.05, 0, 0, 0], [0.1, 0.02, 0, 0], [0, 0, 0, 0]]))
    write_raa(anim, tmp_path / "keys.raa")
    n = anim.frame_count
    assert bpy.ops.import_scene.rite(filepath=str(tmp_path / "rig.ram")) == {"FINISHED"}
    sc = bpy.context.scene
    sc.frame_start, sc.frame_end = 3, 77
    assert bpy.ops.import_anim.rite(filepath=str(tmp_path / "keys.raa"), key_every_frame=False,
                                    set_frame_range=False) == {"FINISHED"}
    assert (sc.frame_start, sc.frame_end) == (3, 77)
    arm, meshes = imported(bpy)
    ad = arm.animation_data
    bag = ad.action.layers[0].strips[0].channelbag(ad.action_slot)
    keyed = {fc.data_path: {round(k.co[0]) for k in fc.keyframe_points} for fc in bag.fcurves}
    ref = reference("rite", [tmp_path / "rig.ram", tmp_path / "keys.raa"])
    rep = verify(bpy, meshes, ref, ref.clips[0], np.arange(0.0, 2 * n))
    assert rep.ok, rep.table()
    assert _moved(ref, ref.clips[0], np.arange(0.0, n), fps(bpy)) > 1e-2 * rep.size
    # between frames too, within the keys of the close track (the rest of the rig is baked there)
    name = ram.joints[close.joint_id].name
    assert keyed[f'pose.bones["{name}"].rotation_quaternion'] == set(close.frames.tolist())
    for t in anim.tracks:
        path = f'pose.bones["{ram.joints[t.joint_id].name}"].rotation_quaternion'
        assert set(t.frames.tolist()) <= keyed[path]


def test_mergeable_and_dominant_nla_match_core_blending(bpy, tmp_path):
    ram = random_ram(21)
    walk = random_raa(121, ram, "walk", frame_count=17)
    run = random_raa(122, ram, "run", frame_count=11)
    wave = random_raa(123, ram, "wave", frame_count=23)
    wave.tracks = wave.tracks[:3]  # dominant animation on a few joints only
    for a in (walk, run, wave):
        write_raa(a, tmp_path / f"{a.name}.raa")
    write_ram(ram, tmp_path / "rig.ram")
    assert bpy.ops.import_scene.rite(filepath=str(tmp_path / "rig.ram")) == {"FINISHED"}
    assert bpy.ops.import_anim.rite(filepath=str(tmp_path / "wave.raa"), playback="DOMINANT") == {"FINISHED"}
    assert bpy.ops.import_anim.rite(directory=str(tmp_path), files=[{"name": "walk.raa"}],
                                    playback="MERGEABLE", weight=1.0) == {"FINISHED"}
    assert bpy.ops.import_anim.rite(filepath=str(tmp_path / "run.raa"), playback="MERGEABLE",
                                    weight=0.5) == {"FINISHED"}
    arm, meshes = imported(bpy)
    # the weighted mix's base, the mergeable layers, the dominant one on top
    assert [t.name for t in arm.animation_data.nla_tracks] == ["mix base", "walk", "run", "wave"]
    assert arm.animation_data.action is None
    ref = reference("rite", [tmp_path / "rig.ram"] + [tmp_path / f"{n}.raa" for n in ("walk", "run", "wave")])
    for clip, layer, weight in zip(ref.clips, ("MERGEABLE", "MERGEABLE", "DOMINANT"), (1.0, 0.5, 1.0)):
        clip.playback, clip.weight = layer, weight
    frames = range(0, 45)  # beyond each clip's end: looping
    report = verify(bpy, meshes, ref, ref.clips, frames)
    assert report.ok, report.table()
    # the blend matters: the stack is neither walk alone nor walk + wave
    ev = ext("scene.evaluate")
    stack = ev.evaluate(ref, ref.clips, frames, fps(bpy))
    for other in (ref.clips[0], [ref.clips[0], ref.clips[2]]):
        alone = ev.evaluate(ref, other, frames, fps(bpy))
        assert max(np.abs(a - b).max() for a, b in zip(stack, alone)) > 1e2 * report.tolerance
    # the scene's range is the stack's loop: every layer back where it started (lcm(16, 10, 22) frames)
    assert (bpy.context.scene.frame_start, bpy.context.scene.frame_end) == (1, 880)


def test_several_raa_files_in_one_go_and_missing_joints(bpy, tmp_path, capfd):
    ram = random_ram(31)
    a = random_raa(131, ram, "first")
    b = random_raa(132, ram, "second", frame_count=30)
    lost = b.tracks[0].joint_id
    b.tracks[0].joint_name = "no such joint"
    b.tracks[0].joint_id = 999
    write_ram(ram, tmp_path / "rig.ram")
    write_raa(a, tmp_path / "first.raa")
    write_raa(b, tmp_path / "second.raa")
    assert bpy.ops.import_scene.rite(filepath=str(tmp_path / "rig.ram")) == {"FINISHED"}
    res = bpy.ops.import_anim.rite(directory=str(tmp_path), files=[{"name": "first.raa"}, {"name": "second.raa"}])
    assert res == {"FINISHED"}
    assert {"first", "second"} <= {x.name for x in bpy.data.actions}
    arm, meshes = imported(bpy)
    assert arm.animation_data.action.name == "first"
    assert bpy.data.actions["second"].use_fake_user
    assert bpy.context.scene.frame_end >= 23
    # each action plays its file; the track naming a missing joint is left out
    ref = reference("rite", [tmp_path / "rig.ram", tmp_path / "first.raa", tmp_path / "second.raa"])
    assert "no such joint" in capfd.readouterr().out      # reported
    assert not ref.clips[1].animated[lost]
    rep = verify(bpy, meshes, ref, ref.clips[0], range(24))
    assert rep.ok, rep.table()
    arm.animation_data.action = bpy.data.actions["second"]
    arm.animation_data.action_slot = bpy.data.actions["second"].slots[0]
    rep = verify(bpy, meshes, ref, ref.clips[1], range(30))
    assert rep.ok, rep.table()
    assert _moved(ref, ref.clips[1], list(range(30)), fps(bpy)) > 1e-2 * rep.size


def test_failed_animation_imports_leave_the_scene_untouched(bpy, tmp_path):
    # an animation without an armature is a clear error
    with pytest.raises(RuntimeError, match="armature"):
        bpy.ops.import_anim.rite(filepath=str(DATA / "rite" / "contract_example.raa"))
    assert bpy.ops.import_scene.rite(filepath=str(DATA / "rite" / "contract_example.ram")) == {"FINISHED"}
    assert bpy.ops.import_anim.rite(filepath=str(DATA / "rite" / "contract_example.raa")) == {"FINISHED"}
    arm, _ = imported(bpy)
    sc = bpy.context.scene
    sc.frame_start, sc.frame_end, sc.frame_current = 3, 77, 11
    bad_raa = tmp_path / "broken.raa"
    bad_raa.write_text((DATA / "rite" / "contract_example.raa").read_text().replace("keyframes 3", "keyframes 5"))
    before = snapshot(bpy)
    action = arm.animation_data.action
    tracks = [t.name for t in arm.animation_data.nla_tracks]
    with pytest.raises(RuntimeError, match=r"broken\.raa:\d+"):
        bpy.ops.import_anim.rite(filepath=str(bad_raa), playback="MERGEABLE")
    assert snapshot(bpy) == before
    assert arm.animation_data.action == action
    assert [t.name for t in arm.animation_data.nla_tracks] == tracks
    # an animation none of whose tracks names a joint of the armature
    alien = tmp_path / "alien.raa"
    alien.write_text((DATA / "rite" / "contract_example.raa").read_text().replace('"Spine"', '"Tail"')
                     .replace("track 0 1", "track 0 7"))
    with pytest.raises(RuntimeError, match=r"alien\.raa"):
        bpy.ops.import_anim.rite(filepath=str(alien))
    assert snapshot(bpy) == before


def test_bundled_sample_walk_and_wave_verify_every_frame(bpy):
    rite = SAMPLES / "rite"
    assert bpy.ops.import_scene.rite(filepath=str(rite / "humanoid.ram")) == {"FINISHED"}
    assert bpy.ops.import_anim.rite(filepath=str(rite / "walk.raa"), playback="MERGEABLE") == {"FINISHED"}
    assert bpy.ops.import_anim.rite(filepath=str(rite / "wave.raa"), playback="DOMINANT") == {"FINISHED"}
    arm, meshes = imported(bpy)
    ref = reference("rite", [rite / "humanoid.ram", rite / "walk.raa", rite / "wave.raa"])
    assert len(meshes) == len(ref.meshes)
    ref.clips[0].playback, ref.clips[1].playback = "MERGEABLE", "DOMINANT"
    assert (bpy.context.scene.frame_start, bpy.context.scene.frame_end) == (1, 160)    # lcm(32, 40)
    report = verify(bpy, meshes, ref, ref.clips, range(0, 81))
    assert report.ok, report.table()
    assert len(report.frames) == 81
    assert _moved(ref, ref.clips, list(range(0, 81, 4)), fps(bpy)) > 1e-2 * report.size


def test_animation_files_given_to_the_model_import_are_a_clear_error(bpy):
    from conftest import SAMPLES

    before = snapshot(bpy)
    with pytest.raises(RuntimeError, match=r"no model file \(\.ram\).*RiTE Animation"):
        bpy.ops.import_scene.rite(filepath=str(SAMPLES / "rite" / "walk.raa"))
    assert snapshot(bpy) == before


@pytest.mark.parametrize("shadowed", [False, True], ids=["bulk", "name-taken"])
def test_weights_in_bulk_and_by_vertex_give_the_file_weights(bpy, tmp_path, shadowed):
    """Past 2,000 vertices the weights go in and out through Geometry Nodes
    (vertex by vertex for a group whose name a node tree might read as
    built-in data, such as "position"). Blender holds the file's weights
    (float32), an export writes them back, and the mesh is where it was."""
    ram = random_ram(11, n_joints=6, n_per_joint=400)
    assert len(ram.positions) > 2000
    if shadowed:
        ram.joints[2].name = "position"
    write_ram(ram, tmp_path / "w.ram")
    assert bpy.ops.import_scene.rite(filepath=str(tmp_path / "w.ram")) == {"FINISHED"}
    _, meshes = imported(bpy)
    obj = meshes[0]
    names = {g.index: g.name for g in obj.vertex_groups}
    got = {(v.index, names[g.group]): g.weight for v in obj.data.vertices for g in v.groups}
    want: dict = {}
    for v, j, w in zip(ram.weight_vertex, ram.weight_joint, ram.weight_value):
        key = (int(v), ram.joints[int(j)].name)
        want[key] = want.get(key, 0.0) + float(w)
    want = {k: float(np.float32(min(w, 1.0))) for k, w in want.items() if w > 0}
    assert got == want
    assert bpy.ops.export_scene.rite(filepath=str(tmp_path / "out.ram")) == {"FINISHED"}
    back = read_ram(tmp_path / "out.ram")
    again = {(int(v), back.joints[int(j)].name): float(np.float32(w))
             for v, j, w in zip(back.weight_vertex, back.weight_joint, back.weight_value)}
    assert again == want
    # and nothing else was touched on the way (a group read or stored as "position" would move vertices)
    assert np.abs(back.positions - ram.positions).max() <= 1e-6 * np.abs(ram.positions).max()
