# SPDX-License-Identifier: GPL-3.0-or-later
"""Exact on real rigs with non-uniform scale and several bind poses, with the import's DEFAULT options:

* non-uniform scale under bones that point at their children: a static
  scaled frame holding rigid meshes (Maya's wall_with_pillars.x), a static
  scale on a skinning joint, scale keys, a root frame scaled and turned (what
  this add-on writes for a scaled armature object), sheared;
* meshes bound with different bind poses: per-mesh SkinWeights offsets for
  one joint (FPS Creator), a skinned mesh inside its own transformed frame
  (kW X-port);
* animation onto existing rigs: non-uniform scale keys onto a rig whose
  bones point elsewhere (an .X rig imported without animations, a RiTE rig),
  translation keys onto connected bones.

Every check is Blender's evaluated deformation against the core's evaluation
(``scene.evaluate``) of a FRESH PARSE of the file, at every frame, within
1e-5 of the model size (the add-on's ``verify``); the crafted files come from
``x_scale_and_binds`` and are read by assimp too."""
from __future__ import annotations

import assimp_reading as ar
import export_checks as rig
import numpy as np
import pytest
import x_scale_and_binds as hard
from blender_checks import ext, fps, imported, play, reference, verify
from conftest import SAMPLES

from legacy_skin_io.io.convert import convert
from legacy_skin_io.io.xfile import XAnimationKey, read_xfile, write_xfile

CASES = sorted(hard.ALL)


def _frames(clip) -> np.ndarray:
    return np.arange(0.0, np.ceil(clip.frame_range(24.0)[1] - 1e-6) + 1.0)


def _verify_every_clip(bpy, path, meshes=None, arm=None):
    """Each clip of ``path``'s fresh parse played by its action: within 1e-5
    of the model size at every frame. Returns the worst error / size."""
    ref = reference("xfile", [path])
    if meshes is None:
        arm, meshes = imported(bpy)
    assert sorted(meshes) == list(range(len(ref.meshes)))
    worst = 0.0
    for clip in ref.clips:
        play(arm, clip.name)
        rep = verify(bpy, meshes, ref, clip, _frames(clip))
        assert rep.ok, (path.name, clip.name, rep.table())
        worst = max(worst, rep.max_error / rep.size)
    assert rig.moved(ref) > 0.05            # the files do move
    return worst


def _assimp_reads(path) -> None:
    out = ar.run("info", path, timeout=120)
    assert out.returncode == 0 and "Meshes:" in out.stdout, out.stdout + out.stderr


@pytest.mark.parametrize("case", CASES)
def test_crafted_hard_rigs_are_exact_with_the_defaults(bpy, tmp_path, capfd, case):
    """Before this, the default (bones pointing at their children, one bind
    per joint from the first mesh) put these 0.34 (animated scale), 0.86
    (scaled wall), 1.15 (scaled root), 0.43 (scaled skinning joint), 1.9e-3
    (teeth), 1.5 (helmet in its own frame) of the model size off."""
    path = hard.ALL[case](tmp_path / f"{case}.x")
    _assimp_reads(path)
    assert bpy.ops.import_scene.xfile(filepath=str(path)) == {"FINISHED"}
    out = capfd.readouterr().out
    worst = _verify_every_clip(bpy, path)
    print(f"{case}: {worst:.2e} of the model size")
    kept = {"scaled_rigid": "Wall", "scaled_skinned": "Hips", "animated_scale": "Arm", "scaled_root": "Armature",
            "sheared_root": "Armature"}
    if case in kept:        # one note naming the bones that keep their axes
        line = next(x for x in out.splitlines() if "keep the file's joint axes" in x)
        assert kept[case] in line
    else:
        assert "keep the file's joint axes" not in out
    assert "the first mesh's is used" not in out


def test_teeth_bound_apart_get_binds_of_their_own(bpy, tmp_path, capfd):
    """FPS Creator: the teeth's Jaw offset is the jaw turned by 1 degree.
    Teeth vertices on Jaw alone or Head alone are re-expressed in the
    armature's bind pose (the mesh object has no other armature); a ring
    weighted half to each cannot be, so the teeth deform with binds of their
    own: an armature 'Teeth_binds' following the rig."""
    single = hard.differing_offsets_file(tmp_path / "single.x", blended_teeth=False)
    assert bpy.ops.import_scene.xfile(filepath=str(single)) == {"FINISHED"}
    assert "Teeth' (6 vertices)" in capfd.readouterr().out
    arm, meshes = imported(bpy)
    teeth = next(o for o in meshes.values() if o.name == "Teeth")
    assert teeth.modifiers["Armature"].object == arm
    _verify_every_clip(bpy, single)
    bpy.ops.wm.read_homefile(use_empty=True)
    blended = hard.differing_offsets_file(tmp_path / "blended.x")
    assert bpy.ops.import_scene.xfile(filepath=str(blended)) == {"FINISHED"}
    assert "binds of their own" in capfd.readouterr().out
    arm, meshes = imported(bpy)
    teeth = next(o for o in meshes.values() if o.name == "Teeth")
    own = teeth.modifiers["Armature"].object
    assert own is not arm and own.name == "Teeth_binds" and own.parent == arm
    assert sorted(b.name for b in own.data.bones) == ["Head", "Jaw"]
    _verify_every_clip(bpy, blended)
    # the armature the teeth follow plays whatever the rig plays: a pose set by hand
    arm.animation_data.action = None
    arm.pose.bones["Jaw"].rotation_quaternion = (0.9, 0.3, 0.1, 0.0)
    arm.pose.bones["Neck"].rotation_quaternion = (0.95, 0.0, 0.2, 0.1)
    bpy.context.view_layer.update()
    r = ext("operators.armature_extract").rig_of(arm)
    ref = reference("xfile", [blended])
    world = ref.skeleton.world().copy()
    for bi, j in enumerate(r.bones.tolist()):      # joint worlds of Blender's pose: P @ K
        world[j] = np.array(arm.matrix_world) @ np.array(arm.pose.bones[r.bone_names[j]].matrix) \
            @ r.rest.rest_to_bind[bi]
    ev = ext("scene.evaluate")
    i = next(k for k, m in enumerate(ref.meshes) if m.name == "Teeth")
    want = ev.mesh_positions(ref, ref.meshes[i], world)
    assert np.abs(ext("operators.verify").evaluated_world(bpy.context, teeth) - want).max() <= 1e-5 * ev.size(ref)


@pytest.mark.parametrize("case", ["differing_offsets", "mesh_in_frame", "scaled_skinned", "sheared_root"])
def test_hard_rigs_export_what_blender_shows(bpy, tmp_path, case):
    """.X -> Blender -> .X: the exported file plays as the original (its
    oracle against the original's, every frame), and assimp reads it; a
    mesh with binds of its own writes each joint's correction into its
    offsets, and only the rig is exported."""
    path = hard.ALL[case](tmp_path / f"{case}.x")
    assert bpy.ops.import_scene.xfile(filepath=str(path)) == {"FINISHED"}
    out = tmp_path / "out.x"
    assert bpy.ops.export_scene.xfile(filepath=str(out)) == {"FINISHED"}
    _assimp_reads(out)
    ev = ext("scene.evaluate")
    a, b = reference("xfile", [path]), reference("xfile", [out])
    assert [m.name for m in a.meshes] == [m.name for m in b.meshes]
    size = ev.size(a)
    for ca in a.clips:
        cb = next(c for c in b.clips if c.name == ca.name)
        for x, y in zip(ev.evaluate(a, ca, _frames(ca)), ev.evaluate(b, cb, _frames(ca))):
            assert np.abs(x - y).max() <= 1e-5 * size, case
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.import_scene.xfile(filepath=str(out)) == {"FINISHED"}
    _verify_every_clip(bpy, out)


def test_file_of_a_scaled_turned_armature_object_imports_exactly(bpy, tmp_path):
    """The issue's own file: a rig made in Blender whose armature object is
    scaled (1, 2, 0.5) and turned, exported by this add-on (its root frames
    carry that scale and rotation), imported with the defaults: it verifies
    against its file (before: FINISHED, and verify failed at 0.83 of the
    model size)."""
    ao, mo, action = rig.build(bpy)
    ao.scale = (1.0, 2.0, 0.5)
    ao.rotation_euler = (0.3, 0.5, 0.7)
    out = tmp_path / "scaled.x"
    assert bpy.ops.export_scene.xfile(filepath=str(out)) == {"FINISHED"}
    _assimp_reads(out)
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.import_scene.xfile(filepath=str(out)) == {"FINISHED"}
    _verify_every_clip(bpy, out)


def _rite_rig(bpy, tmp_path, path, sets=()):
    """``path`` converted to a RiTE model (+ the .raa of ``sets``), imported."""
    ram = tmp_path / "rig.ram"
    written = convert([str(path)], str(ram), warnings=[])
    assert bpy.ops.import_scene.rite(filepath=str(ram)) == {"FINISHED"}
    for s in sets:
        raa = next(p for p in written if p.endswith(f"_{s}.raa"))
        assert bpy.ops.import_anim.rite(filepath=raa) == {"FINISHED"}
    return ram, written


def _play_sets_of(bpy, path, arm, meshes) -> float:
    """The .X file's sets, imported onto ``arm`` (actions named as the
    sets), each made the active action, against the file's oracle (a RiTE
    mesh is the .X meshes in one, vertex for vertex). Returns the worst
    error / size."""
    ref = reference("xfile", [path])
    ev = ext("scene.evaluate")
    size = ev.size(ref)
    # the file's vertices are the RiTE mesh's, split at material borders (the copies appended)
    split = [d for d in rig.split_maps(path) if d is not None]
    assert not split or len(ref.meshes) == len(meshes) == 1
    worst = 0.0
    for clip in ref.clips:
        action = bpy.data.actions[clip.name]
        ext("operators.fcurves").assign_action(arm, action, action.slots[0])
        for f, w in zip(_frames(clip), ev.evaluate(ref, clip, _frames(clip), fps(bpy))):
            bpy.context.scene.frame_set(int(f))
            got = np.concatenate([ext("operators.verify").evaluated_world(bpy.context, meshes[i])
                                  for i in sorted(meshes)])
            if split:
                got = got[split[0]]
            worst = max(worst, float(np.abs(got - w).max() / size))
    return worst


def test_scale_keys_onto_rigs_whose_bones_point_elsewhere(bpy, tmp_path, capfd):
    """import_anim.xfile with non-uniform scale keys onto a RiTE rig (RAM
    has no scale: its Arm bone points at Forearm): Arm turns to its joint's
    axes first, says so, and the set plays exactly; the action the rig
    already had (its .raa) still plays as its file (before: 0.20 and 0.32 of
    the model size off, no warning)."""
    path = hard.animated_scale_file(tmp_path / "stretch.x")
    ram, written = _rite_rig(bpy, tmp_path, path, sets=["Stretch"])
    arm, meshes = imported(bpy)
    raa = next(p for p in written if p.endswith("_Stretch.raa"))
    assert bpy.ops.import_anim.xfile(filepath=str(path)) == {"FINISHED"}
    line = next(x for x in capfd.readouterr().out.splitlines() if "turned to their joints' axes" in x)
    assert "Arm" in line
    assert _play_sets_of(bpy, path, arm, meshes) <= 1e-5
    rite_ref = reference("rite", [ram, raa])
    act = next(a for a in bpy.data.actions if a.name == rite_ref.clips[0].name)
    ext("operators.fcurves").assign_action(arm, act, act.slots[0])
    rep = verify(bpy, meshes, rite_ref, rite_ref.clips[0], _frames(rite_ref.clips[0]))
    assert rep.ok, rep.table()


def test_scale_keys_onto_the_x_rig_imported_without_animations(bpy, tmp_path):
    path = hard.animated_scale_file(tmp_path / "stretch.x")
    assert bpy.ops.import_scene.xfile(filepath=str(path), import_animations=False) == {"FINISHED"}
    arm, meshes = imported(bpy)
    assert bpy.ops.import_anim.xfile(filepath=str(path)) == {"FINISHED"}
    assert _play_sets_of(bpy, path, arm, meshes) <= 1e-5


def test_translation_keys_onto_connected_bones_disconnect_them(bpy, tmp_path, capfd):
    """The humanoid's connected arm bones ignore pose locations: an .X set
    that moves LeftForeArm's head disconnects it first (reported), and
    plays exactly."""
    humanoid = SAMPLES / "rite" / "humanoid.ram"
    xpath = tmp_path / "humanoid.x"
    convert([str(humanoid), str(SAMPLES / "rite" / "walk.raa")], str(xpath), warnings=[])
    xf = read_xfile(xpath)
    anim = next(a for a in xf.animation_sets[0].animations if a.frame_name == "LeftForeArm")
    pos = next((k for k in anim.keys if k.key_type == 2), None)
    times = anim.keys[0].times
    base = pos.values[0] if pos is not None else \
        np.asarray(next(f for f in xf.all_frames() if f.name == "LeftForeArm").matrix)[3, :3]
    anim.keys = [k for k in anim.keys if k.key_type != 2]
    lift = np.outer(np.sin(np.linspace(0, np.pi, len(times))), [0.0, 0.05, 0.03])
    anim.keys.append(XAnimationKey(2, times, base[None] + lift))
    write_xfile(xf, xpath)
    assert bpy.ops.import_scene.rite(filepath=str(humanoid)) == {"FINISHED"}
    arm, meshes = imported(bpy)
    assert arm.data.bones["LeftForeArm"].use_connect
    assert bpy.ops.import_anim.xfile(filepath=str(xpath)) == {"FINISHED"}
    line = next(x for x in capfd.readouterr().out.splitlines() if "disconnected" in x)
    assert "LeftForeArm" in line and not arm.data.bones["LeftForeArm"].use_connect
    assert arm.data.bones["RightForeArm"].use_connect         # the others stay connected
    assert _play_sets_of(bpy, xpath, arm, meshes) <= 1e-5


def test_mesh_frames_are_placed_together_as_each_alone(bpy):
    """``set_local_matrices`` decides for all of a file's mesh frames at
    once: a frame that location, rotation and scale hold (any scale,
    mirrors) goes to the object's own transform, a sheared one (down to
    1e-6) to its parent inverse; in a batch each is placed as it is alone,
    and the object's matrix is the frame either way."""
    mb = ext("operators.mesh_build")
    rng = np.random.default_rng(21)
    frames, kinds = [], []
    for _ in range(40):
        q = rng.normal(size=4)
        q /= np.linalg.norm(q)
        w, x, y, z = q
        r = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                      [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                      [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])
        m = np.eye(4)
        m[:3, :3] = r * rng.choice([-1.0, 1.0], 3) * rng.uniform(1e-2, 1e2, 3)
        m[:3, 3] = rng.normal(size=3) * 10
        sheared = rng.random() < 0.5
        if sheared:
            shear = np.eye(4)
            shear[0, 1] = rng.choice([1e-6, 1e-3, 0.5])
            m = m @ shear
        frames.append(m)
        kinds.append(sheared)
    objs = [bpy.data.objects.new(f"o{i}", None) for i in range(len(frames))]
    alone = [bpy.data.objects.new(f"a{i}", None) for i in range(len(frames))]
    root = bpy.data.objects.new("root", None)           # (a parent inverse applies under a parent)
    bpy.context.collection.objects.link(root)
    for o in objs + alone:
        bpy.context.collection.objects.link(o)
        o.parent = root
    mb.set_local_matrices(objs, np.array(frames))
    for a, m in zip(alone, frames):
        mb.set_local_matrices([a], m[None])
    bpy.context.view_layer.update()
    for o, a, m, sheared in zip(objs, alone, frames, kinds):
        inverse = np.array(o.matrix_parent_inverse)
        assert np.allclose(inverse, np.eye(4)) != sheared
        assert np.allclose(inverse, np.array(a.matrix_parent_inverse))
        assert np.allclose(np.array(o.matrix_basis), np.array(a.matrix_basis))
        assert np.allclose(np.array(o.matrix_world), m, rtol=1e-5, atol=1e-4)
    mb.set_local_matrices([], np.zeros((0, 4, 4)))
