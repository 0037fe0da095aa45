# SPDX-License-Identifier: GPL-3.0-or-later
"""RiTE playback and blending in Blender and in the core, against the RiTE
runtime transcribed from the RiTE skeletal animation system document's C#
(``tests/rite_seed.py``, no project code) and hand-computed poses:
weights above 1, mergeable layers near 180 degrees, the mix of layers that
animate different joints in either import order, the Animator's loop,
Key Every Frame off, tracks whose name and id disagree, the two mixes
(weighted, 2006 Animator) and the normals verify reports."""
from __future__ import annotations

import re

import numpy as np
import pytest
from blender_checks import ext, imported, reference
from conftest import SAMPLES
from rite_seed import SeedRuntime, animator_frame, blender_space

from legacy_skin_io.io.rite import RaaAnimation, RaaTrack, RamModel, RiteJoint, read_raa, read_ram, write_raa, write_ram

Q = [0.0, 0.0, 0.0, 1.0]
REL = 1e-5      # tolerance: a fraction of the model size


def about(axis, degrees) -> list[float]:
    """The file quaternion (x, y, z, w) of a turn about ``axis``, sign as written: w = cos(angle / 2)."""
    a = np.asarray(axis, dtype=np.float64)
    a = a / np.linalg.norm(a)
    h = np.radians(degrees) / 2.0
    return [*(np.sin(h) * a), float(np.cos(h))]


def chain_ram(weights=None) -> RamModel:
    """Hips (root, at y=1) -> Spine (+0.5) -> Head (+0.5), identity
    orientations and bind rotations; a tube of 6 rings of 4 vertices from
    y=0.9 to y=2.15, each ring weighted to the joint below it (rings 1 and 3
    half and half). ``weights``: (vertex, joint, weight) records instead."""
    joints = [RiteJoint("Hips", -1, Q, [0, 1, 0], Q), RiteJoint("Spine", 0, Q, [0, 0.5, 0], Q),
              RiteJoint("Head", 1, Q, [0, 0.5, 0], Q)]
    ys = [0.9, 1.2, 1.45, 1.7, 1.95, 2.15]
    ring = np.array([[0.12, 0, 0], [0, 0, 0.12], [-0.12, 0, 0], [0, 0, -0.12]])
    pos = np.concatenate([ring + [0, y, 0] for y in ys])
    normals = np.tile(ring / 0.12, (len(ys), 1))
    tris = []
    for r in range(len(ys) - 1):
        for k in range(4):
            a, b = 4 * r + k, 4 * r + (k + 1) % 4
            tris += [(a, b + 4, b), (a, a + 4, b + 4)]
    tris = np.array(tris)
    if weights is None:
        per_ring = [[(0, 1.0)], [(0, 0.5), (1, 0.5)], [(1, 1.0)], [(1, 0.5), (2, 0.5)], [(2, 1.0)], [(2, 1.0)]]
        weights = [(4 * r + k, j, w) for r, jw in enumerate(per_ring) for k in range(4) for j, w in jw]
    wv, wj, ww = (np.array(x) for x in zip(*weights))
    return RamModel(mesh_name="Tube", joints=joints, positions=pos, normals=normals, uvs=np.zeros((1, 2)),
                    tri_shader=np.zeros(len(tris), dtype=int), tri_vertices=tris, tri_normals=tris.copy(),
                    tri_uvs=np.zeros_like(tris), weight_vertex=wv, weight_joint=wj.astype(int),
                    weight_value=ww.astype(float))


def raa(name, frames, tracks) -> RaaAnimation:
    """``tracks``: (joint id, joint name, {frame: quaternion})."""
    return RaaAnimation(name, frames, True, [RaaTrack(i, n, sorted(k), [k[f] for f in sorted(k)])
                                             for i, n, k in tracks])


def size_of(ram: RamModel) -> float:
    p = ram.positions
    return float(np.linalg.norm(p.max(0) - p.min(0)))


def blender_positions(bpy, meshes, frame) -> np.ndarray:
    bpy.context.scene.frame_set(int(frame))
    verify = ext("operators.verify")
    return np.concatenate([verify.evaluated_world(bpy.context, meshes[i]) for i in sorted(meshes)])


def seed_positions(bpy, rt: SeedRuntime, frame, mergeable=(), dominant=(), **kw) -> np.ndarray:
    return blender_space(rt.transform(rt.pose(frame, mergeable, dominant, **kw))[0], bpy)


def core_positions(ref, clips, frames, **kw) -> list[np.ndarray]:
    return ext("scene.evaluate").evaluate(ref, clips, frames, 24.0, **kw)


def worst(a_frames, b_frames) -> float:
    return max(float(np.linalg.norm(a - b, axis=1).max()) for a, b in zip(a_frames, b_frames))


def write(tmp_path, ram, *anims):
    write_ram(ram, tmp_path / "rig.ram")
    for a in anims:
        write_raa(a, tmp_path / f"{a.name}.raa")
    return tmp_path / "rig.ram", [tmp_path / f"{a.name}.raa" for a in anims]


# ---------------------------------------------------------------------------
# 1. weights above 1

def test_weights_above_one_follow_one_policy_in_blender_and_the_core(bpy, tmp_path, capfd):
    """A weight of 1.5, and repeated weights summing past 1: Blender and the
    core both divide a vertex's weights by their sum (Blender cannot hold a
    weight above 1); the import says how far that is from the runtime,
    which uses weights as given."""
    base = chain_ram()
    w = [(v, j, x) for v, j, x in zip(base.weight_vertex, base.weight_joint, base.weight_value) if v not in (4, 13)]
    w += [(4, 0, 1.5), (4, 1, 0.5),                   # ring 1: 1.5 + 0.5
          (13, 1, 0.7), (13, 1, 0.6), (13, 2, 0.3)]   # ring 3: 0.7 + 0.6 (repeated) + 0.3
    ram = chain_ram(w)
    bend = raa("bend", 9, [(1, "Spine", {0: Q, 8: about([0, 0, 1], 80)}),
                           (2, "Head", {0: Q, 8: about([1, 0, 0], -60)})])
    ram_path, (raa_path,) = write(tmp_path, ram, bend)
    assert bpy.ops.import_scene.rite(directory=str(tmp_path), files=[{"name": "rig.ram"}, {"name": "bend.raa"}]) \
        == {"FINISHED"}
    out = capfd.readouterr().out
    _, meshes = imported(bpy)
    # the policy, by hand: the file's weights divided by each vertex's sum, played by the seed's runtime
    total = np.bincount(ram.weight_vertex, weights=ram.weight_value)
    shared = chain_ram(list(zip(ram.weight_vertex, ram.weight_joint, ram.weight_value / total[ram.weight_vertex])))
    rt = SeedRuntime(shared)
    anim = read_raa(raa_path)
    frames = list(range(9))
    want = [seed_positions(bpy, rt, f, [(anim, 1.0)]) for f in frames]
    size = size_of(ram)
    got = [blender_positions(bpy, meshes, f) for f in frames]
    core = core_positions(reference("rite", [ram_path, raa_path]), reference("rite", [ram_path, raa_path]).clips[0],
                          frames)
    err_blender, err_core = worst(got, want) / size, worst(core, want) / size
    print(f"weights above 1: Blender {err_blender:.2e}, core {err_core:.2e} of the size from the policy")
    assert err_blender < REL and err_core < REL
    # the warning gives the deviation from the runtime (weights as given), here at the bind pose
    runtime = SeedRuntime(ram)
    as_given = blender_space(runtime.transform([j.rotation for j in ram.joints])[0], bpy)
    dev = float(np.linalg.norm(as_given - want[0], axis=1).max()) / size
    m = re.search(r"2 vertices .*weights.*sum.* (\S+) of the model size", out)
    assert m, out
    assert float(m.group(1)) == pytest.approx(dev, rel=0.01)


# ---------------------------------------------------------------------------
# 2. mergeable layers near 180 degrees, 3. the mix does not depend on import order

def _import_layers(bpy, tmp_path, ram, layers, **kw):
    """The rig, then each (animation, weight) as a mergeable layer, in order."""
    ram_path, paths = write(tmp_path, ram, *[a for a, _ in layers])
    assert bpy.ops.import_scene.rite(filepath=str(ram_path)) == {"FINISHED"}
    for p, (_, weight) in zip(paths, layers):
        assert bpy.ops.import_anim.rite(filepath=str(p), playback="MERGEABLE", weight=weight, **kw) == {"FINISHED"}
    return ram_path, paths


def _layer_reference(ram_path, paths, layers, **kw):
    ref = reference("rite", [ram_path, *paths])
    for c, (_, weight) in zip(ref.clips, layers):
        c.playback, c.weight = "MERGEABLE", weight
        for k, v in kw.items():
            setattr(c, k, v)
    return ref


def test_mergeable_layers_near_180_degrees_mix_to_180(bpy, tmp_path):
    """Spine: one layer at +170 degrees, the other at +190 (then sweeping
    to 260), weight 0.5 each: the mix is the turn halfway between, 180
    degrees at frame 0, not the bind pose (each layer's sign chosen against
    the layers already mixed, at every frame)."""
    z = [0, 0, 1]
    a = raa("a", 9, [(1, "Spine", {0: about(z, 170), 8: about(z, 170)})])
    b = raa("b", 9, [(1, "Spine", {f: about(z, 190 + 70 * f / 8) for f in range(9)})])
    ram = chain_ram()
    layers = [(a, 0.5), (b, 0.5)]
    ram_path, paths = _import_layers(bpy, tmp_path, ram, layers)
    _, meshes = imported(bpy)
    rt = SeedRuntime(ram)
    anims = [(read_raa(p), w) for p, (_, w) in zip(paths, layers)]
    frames = list(range(20))
    want = [seed_positions(bpy, rt, f, anims, mix="WEIGHTED") for f in frames]
    # the seed's weighted mix is the hand-computed halfway turn: 180 degrees at frame 0
    mid = rt.pose(0, anims, mix="WEIGHTED")[1]
    assert np.allclose(np.abs(mid), np.abs(about(z, 180)), atol=1e-12)
    size = size_of(ram)
    got = [blender_positions(bpy, meshes, f) for f in frames]
    core = core_positions(_layer_reference(ram_path, paths, layers), _layer_reference(ram_path, paths, layers).clips,
                          frames)
    err_blender, err_core = worst(got, want) / size, worst(core, want) / size
    print(f"near 180 degrees: Blender {err_blender:.2e}, core {err_core:.2e} of the size from the seed's mix")
    assert err_blender < REL and err_core < REL


def test_layers_of_different_lengths_whose_signs_change_from_loop_to_loop(bpy, tmp_path, capfd):
    """Layer a turns Spine through 0..320 degrees over 9 frames, layer b
    holds 90 degrees over 13: the sign b takes against a changes from one
    of b's loops to the next, which b's own keys cannot hold. The importer
    keys b over the stack's whole loop (lcm(8, 12) = 24 frames) and says so."""
    z = [0, 0, 1]
    a = raa("a", 9, [(1, "Spine", {f: about(z, 40 * f) for f in range(9)})])
    b = raa("b", 13, [(1, "Spine", {0: about(z, 90), 12: about(z, 90)})])
    ram = chain_ram()
    layers = [(a, 0.5), (b, 0.5)]
    ram_path, paths = _import_layers(bpy, tmp_path, ram, layers)
    out = capfd.readouterr().out
    assert re.search(r"'b'.*keyed over the stack's whole loop \(24 frames\)", out), out
    assert (bpy.context.scene.frame_start, bpy.context.scene.frame_end) == (1, 24)
    _, meshes = imported(bpy)
    rt = SeedRuntime(ram)
    anims = [(read_raa(p), w) for p, (_, w) in zip(paths, layers)]
    frames = list(range(60))
    want = [seed_positions(bpy, rt, f, anims, mix="WEIGHTED") for f in frames]
    for f in frames:     # the hand-computed mix: halfway between the two turns, the short way
        angle_a = 40 * animator_frame(f, 9)
        half = 90 + ((angle_a - 90 + 180) % 360 - 180) / 2
        assert np.allclose(np.abs(rt.pose(f, anims, mix="WEIGHTED")[1]), np.abs(about(z, half)), atol=1e-9), f
    size = size_of(ram)
    got = [blender_positions(bpy, meshes, f) for f in frames]
    ref = _layer_reference(ram_path, paths, layers)
    err_blender, err_core = worst(got, want) / size, worst(core_positions(ref, ref.clips, frames), want) / size
    print(f"sign changing loop to loop: Blender {err_blender:.2e}, core {err_core:.2e} of the size")
    assert err_blender < REL and err_core < REL
    # the stack's own actions (its base, the signed copy) are not animations: an export leaves them out
    assert {"Tube_rig mix base", "b (mix signs)"} <= {a.name for a in bpy.data.actions}
    out = tmp_path / "out"
    out.mkdir()
    assert bpy.ops.export_scene.rite(filepath=str(out / "rig.ram"), export_animations=True) == {"FINISHED"}
    assert sorted(p.name for p in out.iterdir()) == ["rig.ram", "rig_a.raa", "rig_b.raa"]


@pytest.mark.parametrize("order", ["ab", "ba"])
def test_the_weighted_mix_does_not_depend_on_import_order(bpy, tmp_path, order):
    """a turns Hips 90 degrees and Spine 0, b turns Head 90 and Spine 90,
    weight 0.5 each: whatever the order, Hips 90, Head 90 (each the only
    animation of its joint) and Spine 45 (their average)."""
    z = [0, 0, 1]
    a = raa("a", 5, [(0, "Hips", {0: about(z, 90), 4: about(z, 90)}), (1, "Spine", {0: Q, 4: Q})])
    b = raa("b", 5, [(2, "Head", {0: about(z, 90), 4: about(z, 90)}), (1, "Spine", {0: about(z, 90), 4: about(z, 90)})])
    ram = chain_ram()
    layers = [(a, 0.5), (b, 0.5)] if order == "ab" else [(b, 0.5), (a, 0.5)]
    ram_path, paths = _import_layers(bpy, tmp_path, ram, layers)
    _, meshes = imported(bpy)
    rt = SeedRuntime(ram)
    # by hand: Hips 90, Spine 45, Head 90 degrees about the file's z
    want = blender_space(rt.transform([about(z, 90), about(z, 45), about(z, 90)])[0], bpy)
    size = size_of(ram)
    got = blender_positions(bpy, meshes, 2)
    ref = _layer_reference(ram_path, paths, layers)
    core = core_positions(ref, ref.clips, [2])[0]
    err_blender = float(np.linalg.norm(got - want, axis=1).max()) / size
    err_core = float(np.linalg.norm(core - want, axis=1).max()) / size
    print(f"import order {order}: Blender {err_blender:.2e}, core {err_core:.2e} of the size from the hand pose")
    assert err_blender < REL and err_core < REL


# ---------------------------------------------------------------------------
# 4. the Animator's loop

def test_the_active_action_loops_as_the_animator_does(bpy):
    """The bundled walk as the active action: frame 0, then 1..32 for ever
    (the Animator's loop), and a scene range that loops without replaying
    frame 0."""
    rite = SAMPLES / "rite"
    assert bpy.ops.import_scene.rite(directory=str(rite), files=[{"name": "humanoid.ram"}, {"name": "walk.raa"}]) \
        == {"FINISHED"}
    assert (bpy.context.scene.frame_start, bpy.context.scene.frame_end) == (1, 32)
    _, meshes = imported(bpy)
    ram = read_ram(rite / "humanoid.ram")
    walk = read_raa(rite / "walk.raa")
    rt = SeedRuntime(ram)
    size = size_of(ram)
    frames = [0, 1, 16, 32, 33, 40, 56, 64, 65, 97, 130]
    want = [seed_positions(bpy, rt, f, [(walk, 1.0)]) for f in frames]
    got = [blender_positions(bpy, meshes, f) for f in frames]
    errs = [float(np.linalg.norm(g - w, axis=1).max()) / size for g, w in zip(got, want)]
    print("active action loop, error / size at", dict(zip(frames, [f"{e:.1e}" for e in errs])))
    assert max(errs) < REL
    ref = reference("rite", [rite / "humanoid.ram", rite / "walk.raa"])
    assert worst(core_positions(ref, ref.clips[0], frames), want) / size < REL


def test_animations_added_onto_an_armature_are_placed_as_a_models_own(bpy, tmp_path):
    """Animation files imported onto an armature (File > Import > RiTE
    Animation) are placed as the clips of a model import are, by the same
    code: each on a muted NLA track named for it, the first the active
    action, the scene range its Animator loop."""
    z = [0, 0, 1]
    bend = raa("bend", 9, [(1, "Spine", {0: Q, 8: about(z, 80)})])
    nod = raa("nod", 13, [(2, "Head", {0: Q, 12: about(z, 40)})])
    write(tmp_path, chain_ram(), bend, nod)
    files = [{"name": "bend.raa"}, {"name": "nod.raa"}]

    def placed():
        arm, _ = imported(bpy)
        ad = arm.animation_data
        tracks = [(t.name, t.mute, [s.action.name for s in t.strips]) for t in ad.nla_tracks]
        return tracks, ad.action.name, ad.action_slot is not None, (bpy.context.scene.frame_start,
                                                                    bpy.context.scene.frame_end)

    assert bpy.ops.import_scene.rite(directory=str(tmp_path), files=[{"name": "rig.ram"}] + files) == {"FINISHED"}
    with_model = placed()
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.import_scene.rite(directory=str(tmp_path), files=[{"name": "rig.ram"}]) == {"FINISHED"}
    assert bpy.ops.import_anim.rite(directory=str(tmp_path), files=files) == {"FINISHED"}
    added = placed()
    assert with_model == ([("bend", True, ["bend"]), ("nod", True, ["nod"])], "bend", True, (1, 8)), with_model
    assert added == with_model


# ---------------------------------------------------------------------------
# 5. Key Every Frame off

def _keyed_frames(arm, bone) -> set[int]:
    ad = arm.animation_data
    bag = ad.action.layers[0].strips[0].channelbag(ad.action_slot)
    return {round(k.co[0]) for fc in bag.fcurves if f'"{bone}"' in fc.data_path for k in fc.keyframe_points}


@pytest.mark.parametrize("operator", ["import_scene", "import_anim"])
def test_key_every_frame_off_keys_the_file_and_bakes_what_keys_cannot_play(bpy, tmp_path, capfd, operator):
    """Keys at 2 and 6 of 10 frames, 100 degrees apart (the runtime slerps,
    and interpolates 6 -> 2 through the loop's wrap), keys 10 degrees
    apart on frames 0, 4, 9 (Blender's interpolation is the runtime's
    lerp): both import operators key Head at the file's keys only, bake
    Spine's spans, say so, and play the runtime's poses at every frame."""
    z, x = [0, 0, 1], [1, 0, 0]
    anim = raa("sparse", 10, [(1, "Spine", {2: Q, 6: about(z, 100)}),
                              (2, "Head", {0: Q, 4: about(x, 10), 9: about(x, 20)})])
    ram = chain_ram()
    ram_path, (raa_path,) = write(tmp_path, ram, anim)
    if operator == "import_scene":
        assert bpy.ops.import_scene.rite(directory=str(tmp_path), files=[{"name": "rig.ram"}, {"name": "sparse.raa"}],
                                         key_every_frame=False) == {"FINISHED"}
    else:
        assert bpy.ops.import_scene.rite(filepath=str(ram_path)) == {"FINISHED"}
        assert bpy.ops.import_anim.rite(filepath=str(raa_path), key_every_frame=False) == {"FINISHED"}
    out = capfd.readouterr().out
    arm, meshes = imported(bpy)
    assert _keyed_frames(arm, "Head") == {0, 4, 9}
    assert _keyed_frames(arm, "Spine") == set(range(10))
    assert re.search(r"sparse: 2 of 4 spans between keys keyed on every frame", out), out
    rt = SeedRuntime(ram)
    frames = list(range(30))
    want = [seed_positions(bpy, rt, f, [(read_raa(raa_path), 1.0)]) for f in frames]
    got = [blender_positions(bpy, meshes, f) for f in frames]
    err = worst(got, want) / size_of(ram)
    print(f"keys only ({operator}): {err:.2e} of the size from the runtime")
    assert err < REL


# ---------------------------------------------------------------------------
# 6. a track whose name and id name different joints

def test_a_track_whose_name_and_id_disagree_binds_by_name_with_a_warning(bpy, tmp_path, capfd):
    anim = raa("clash", 5, [(2, "Spine", {0: Q, 4: about([0, 0, 1], 90)})])    # id 2 is Head
    ram = chain_ram()
    ram_path, (raa_path,) = write(tmp_path, ram, anim)
    assert bpy.ops.import_scene.rite(filepath=str(ram_path)) == {"FINISHED"}
    assert bpy.ops.import_anim.rite(filepath=str(raa_path)) == {"FINISHED"}
    out = capfd.readouterr().out
    assert re.search(r"clash: 1 track.* name and joint id name different joints.*runtime binds by id.*"
                     r"'Spine' \(joint id 2 is 'Head'\)", out), out
    _, meshes = imported(bpy)
    rt = SeedRuntime(ram)
    size = size_of(ram)
    by_name = seed_positions(bpy, rt, 4, [(read_raa(raa_path), 1.0)], bind="name")
    by_id = seed_positions(bpy, rt, 4, [(read_raa(raa_path), 1.0)], bind="id")
    assert float(np.linalg.norm(blender_positions(bpy, meshes, 4) - by_name, axis=1).max()) / size < REL
    apart = float(np.linalg.norm(by_name - by_id, axis=1).max()) / size
    print(f"name and id disagree: the runtime (by id) is {apart:.3g} of the size from the import (by name)")
    assert apart > 0.1
    ref = reference("rite", [ram_path, raa_path])
    assert ref.clips[0].rotation.targets.tolist() == [1]          # the core binds by name too


# ---------------------------------------------------------------------------
# 7. the two mixes

@pytest.mark.parametrize("mix", ["", "ANIMATOR_2006"], ids=["weighted-by-default", "animator-2006"])
def test_the_two_mixes_with_unequal_weights_and_a_dominant_layer(bpy, tmp_path, mix):
    """Weights 0.3 and 0.7, a dominant layer on Head. By default the
    weighted mix (the RiTE document's design); mix="ANIMATOR_2006": the 2006
    Animator's loops as NLA Replace strips in order, b overwriting a on
    Spine whatever the weights."""
    z, x = [0, 0, 1], [1, 0, 0]
    a = raa("a", 7, [(1, "Spine", {0: Q, 6: about(z, 60)}), (0, "Hips", {0: Q, 3: about(x, 30), 6: Q})])
    b = raa("b", 5, [(1, "Spine", {0: about(z, -40), 4: about(z, 20)})])
    d = raa("d", 9, [(2, "Head", {0: Q, 8: about(x, 80)})])
    ram = chain_ram()
    ram_path, paths = write(tmp_path, ram, a, b, d)
    assert bpy.ops.import_scene.rite(filepath=str(ram_path)) == {"FINISHED"}
    for p, w in zip(paths[:2], (0.3, 0.7)):
        assert bpy.ops.import_anim.rite(filepath=str(p), playback="MERGEABLE", weight=w,
                                        **({"mix": mix} if mix else {})) == {"FINISHED"}
    assert bpy.ops.import_anim.rite(filepath=str(paths[2]), playback="DOMINANT") == {"FINISHED"}
    _, meshes = imported(bpy)
    rt = SeedRuntime(ram)
    anims = [(read_raa(paths[0]), 0.3), (read_raa(paths[1]), 0.7)]
    frames = list(range(40))
    want = {m: [seed_positions(bpy, rt, f, anims, [read_raa(paths[2])], mix=m) for f in frames]
            for m in ("WEIGHTED", "ANIMATOR_2006")}
    size = size_of(ram)
    assert worst(want["WEIGHTED"], want["ANIMATOR_2006"]) / size > 0.05            # the two mixes differ here
    got = [blender_positions(bpy, meshes, f) for f in frames]
    ref = reference("rite", [ram_path, *paths])
    for c, layer, weight in zip(ref.clips, ("MERGEABLE", "MERGEABLE", "DOMINANT"), (0.3, 0.7, 1.0)):
        c.playback, c.weight, c.mix = layer, weight, mix or "WEIGHTED"
    target = want[mix or "WEIGHTED"]
    err_blender, err_core = worst(got, target) / size, worst(core_positions(ref, ref.clips, frames), target) / size
    print(f"{mix or 'WEIGHTED'} mix: Blender {err_blender:.2e}, core {err_core:.2e} of the size from the seed")
    assert err_blender < REL and err_core < REL


# ---------------------------------------------------------------------------
# 8. normals

def test_verify_reports_the_normal_deviation_as_information(bpy):
    """The runtime skins the file's normals (sum of w R n); Blender derives
    them from the deformed mesh: verify reports the angle between the two
    (median, 95th percentile, largest) without failing on it."""
    rite = SAMPLES / "rite"
    assert bpy.ops.import_scene.rite(directory=str(rite), files=[{"name": "humanoid.ram"}, {"name": "walk.raa"}]) \
        == {"FINISHED"}
    _, meshes = imported(bpy)
    ref = reference("rite", [rite / "humanoid.ram", rite / "walk.raa"])
    frames = [0, 8, 20]
    rep = ext("operators.verify").verify(bpy.context, meshes, ref, ref.clips[0], frames, normals=True)
    assert ext("operators.verify").verify(bpy.context, meshes, ref, ref.clips[0], frames).normal_deviation is None
    assert rep.ok
    # the same angles, computed here: the seed's transformVertices normals against Blender's evaluated ones
    ram = read_ram(rite / "humanoid.ram")
    walk = read_raa(rite / "walk.raa")
    rt = SeedRuntime(ram)
    angles = []
    for f in frames:
        bpy.context.scene.frame_set(f)
        ev = meshes[0].evaluated_get(bpy.context.evaluated_depsgraph_get())
        n = np.empty(3 * len(ev.data.loops), dtype=np.float32)
        ev.data.corner_normals.foreach_get("vector", n)
        m = np.linalg.inv(np.array(ev.matrix_world, dtype=np.float64)[:3, :3]).T
        got = n.reshape(-1, 3).astype(np.float64) @ m.T
        want = blender_space(rt.transform(rt.pose(f, [(walk, 1.0)]))[1], bpy)
        cos = np.sum(got * want, axis=1) / np.linalg.norm(got, axis=1) / np.linalg.norm(want, axis=1)
        angles.append(np.degrees(np.arccos(np.clip(cos, -1.0, 1.0))))
    a = np.concatenate(angles)
    stats = rep.normal_deviation
    print(f"normals: median {stats.median:.3g}, 95th percentile {stats.p95:.3g}, max {stats.max:.3g} degrees")
    assert stats.median == pytest.approx(np.median(a), abs=2e-3)
    assert stats.p95 == pytest.approx(np.percentile(a, 95), abs=2e-3)
    assert stats.max == pytest.approx(a.max(), abs=2e-3)
    assert stats.max > 1.0                       # they do differ, and verify still passes
    assert "normals (information, not checked)" in stats.line()
