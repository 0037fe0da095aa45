# SPDX-License-Identifier: GPL-3.0-or-later
"""Back into the game, from Blender: File > Export > DirectX with the
IRRLICHT target, played by the Irrlicht engine (tests/irrlicht_reading.py)
against what Blender shows of each action (its evaluated, deformed meshes,
the action playing alone), at every frame of every range the export wrote.

* the RiTE humanoid with walk and wave, imported and exported;
* a rig made in Blender: three actions (one moving an IK target that a
  constraint follows, nothing keyed on the chain), a mesh with two
  materials sharing vertices;
* Minetest's character.x imported with player_api's ranges: six named
  actions of the ranges' lengths, exported back onto its own frames.
"""
from __future__ import annotations

import numpy as np
import pytest
from blender_checks import ext, imported
from conftest import DATA, SAMPLES
from engine_checks import ranges_of, source_vertices, split_vertices, worst
from export_checks import welded_sources

from legacy_skin_io.io.xfile.conventions import default_axes
from legacy_skin_io.io.xfile.reader import read_xfile

RITE = [SAMPLES / "rite" / n for n in ("humanoid.ram", "walk.raa", "wave.raa")]
CHARACTER = DATA / "x" / "real" / "minetest__minetest_game" / "character.x"
PLAYER_API = DATA / "ranges" / "minetest__minetest_game" / "player_api_init.lua"
BOUND = 1e-5        # the requirement is 1e-3 of the model size


def _solo(arm, action) -> None:
    """``action`` alone on the armature (NLA off), every pose channel it
    does not key at rest: what a user sees playing that action."""
    ad = arm.animation_data
    ad.use_nla = False
    ad.action = action
    ad.action_slot = ext("operators.pose_sampling").action_slot(action, arm)
    for pb in arm.pose.bones:
        pb.location, pb.scale = (0, 0, 0), (1, 1, 1)
        pb.rotation_quaternion, pb.rotation_euler = (1, 0, 0, 0), (0, 0, 0)


def _shown(bpy, objs, frames) -> np.ndarray:
    """Blender's evaluated world positions of ``objs`` (concatenated) at
    whole ``frames``, in the .X file's space (the export's default axes)."""
    ev = ext("operators.verify")
    back = default_axes().inverse()
    out = []
    for f in frames:
        bpy.context.scene.frame_set(int(f))
        out.append(back.points(np.concatenate([ev.evaluated_world(bpy.context, o) for o in objs])))
    return np.array(out)


def _irrlicht_against_blender(bpy, irrlicht, xpath, arm, objs) -> dict:
    """Every range of the written file: Irrlicht's positions against what
    Blender shows of the action of that name (its first whole frame on the
    range's first frame). ``objs``: the mesh objects in the file's reader
    order (their vertices the written meshes' sources). {range: worst}."""
    fps, clips = ranges_of(xpath)
    order = irrlicht.irrlicht_vertex_order(xpath)
    mesh, vertex = source_vertices(order)
    starts = np.concatenate(([0], np.cumsum([len(o.data.vertices) for o in objs])))
    pick = starts[mesh] + vertex
    rest = _shown(bpy, objs, [bpy.context.scene.frame_current])[0]
    size = float(np.linalg.norm(np.ptp(rest, axis=0)))
    out = {}
    for r in clips:
        action = bpy.data.actions[r["name"]]
        _solo(arm, action)
        timeline = np.arange(r["start"], r["end"] + 1, dtype=np.float64)
        first = int(np.floor(action.frame_range[0] + 1e-9))
        played = irrlicht.play(xpath, timeline)
        assert not [w for w in played.warnings if "Duplicated vertex" in w], played.warnings
        want = _shown(bpy, objs, first + np.arange(len(timeline)))[:, pick]
        err, f, v = worst(played.positions, want, size)
        print(f"{xpath.name} {r['name']} (frames {r['start']}-{r['end']}): worst {err:.3g} of the model size at "
              f"timeline frame {timeline[f]:g}, Irrlicht vertex {v}")
        out[r["name"]] = err
    return out


def test_rite_humanoid_exported_from_blender_for_irrlicht(bpy, irrlicht, tmp_path):
    assert bpy.ops.import_scene.rite(directory=str(RITE[0].parent),
                                     files=[{"name": p.name} for p in RITE]) == {"FINISHED"}
    out = tmp_path / "humanoid.x"
    assert bpy.ops.export_scene.xfile(filepath=str(out), target="IRRLICHT") == {"FINISHED"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["humanoid.ranges.json", "humanoid.ranges.lua",
                                                          "humanoid.x"]
    fps, clips = ranges_of(out)
    assert fps == 24.0 and [c["name"] for c in clips] == ["walk", "wave"]
    arm, meshes = imported(bpy)
    errs = _irrlicht_against_blender(bpy, irrlicht, out, arm, [meshes[i] for i in sorted(meshes)])
    assert max(errs.values()) <= BOUND, errs


def _rig_made_in_blender(bpy):
    """An arm on a spine, an IK target bone the forearm follows (chain of
    2), a box mesh along it in two materials that share the vertices where
    they meet, weighted to the bones by distance; three actions on NLA
    tracks: idle (spine), wave (upper arm, spine location), reach (the IK
    target only)."""
    import bmesh
    from mathutils import Vector

    arm_data = bpy.data.armatures.new("Rig")
    arm = bpy.data.objects.new("Rig", arm_data)
    arm.location, arm.rotation_euler = (0.2, -0.1, 0.0), (0.0, 0.0, 0.3)
    bpy.context.scene.collection.objects.link(arm)
    bpy.context.view_layer.objects.active = arm
    bpy.ops.object.mode_set(mode="EDIT")
    eb = arm_data.edit_bones
    heads = {"Spine": ((0, 0, 0), (0, 0, 1.0)), "UpperArm": ((0, 0, 1.0), (0.8, 0, 1.0)),
             "ForeArm": ((0.8, 0, 1.0), (1.6, 0, 1.0)), "Target": ((1.6, 0, 1.0), (1.6, 0, 1.3))}
    for name, (h, t) in heads.items():
        b = eb.new(name)
        b.head, b.tail = h, t
    eb["UpperArm"].parent = eb["Spine"]
    eb["ForeArm"].parent = eb["UpperArm"]
    eb["ForeArm"].use_connect = True
    eb["Target"].use_deform = False
    bpy.ops.object.mode_set(mode="OBJECT")
    ik = arm.pose.bones["ForeArm"].constraints.new("IK")
    ik.target, ik.subtarget, ik.chain_count = arm, "Target", 2
    me = bpy.data.meshes.new("Body")
    bm = bmesh.new()
    bmesh.ops.create_cube(bm, size=1.0)
    bmesh.ops.subdivide_edges(bm, edges=bm.edges[:], cuts=5, use_grid_fill=True)
    for v in bm.verts:      # an L: the spine's column, then the arm along x
        x, y, z = v.co
        v.co = Vector((x * 0.3, y * 0.3, (z + 0.5) * 1.1)) if x < 0.2 else Vector((0.1 + (x + 0.5) * 1.6, y * 0.25,
                                                                                  1.0 + z * 0.25))
    bm.to_mesh(me)
    bm.free()
    for p in me.polygons:
        p.material_index = 0 if p.center.x < 0.7 else 1
    for name in ("Skin", "Sleeve"):
        me.materials.append(bpy.data.materials.new(name))
    obj = bpy.data.objects.new("Body", me)
    bpy.context.scene.collection.objects.link(obj)
    obj.parent = arm
    obj.matrix_parent_inverse = arm.matrix_world.inverted()
    obj.modifiers.new("Armature", "ARMATURE").object = arm
    co = np.array([v.co for v in me.vertices])
    segs = {n: (np.array(h, float), np.array(t, float)) for n, (h, t) in heads.items() if n != "Target"}
    dist = {}
    for n, (h, t) in segs.items():
        d = t - h
        s = np.clip(((co - h) @ d) / (d @ d), 0, 1)
        dist[n] = np.linalg.norm(co - (h + s[:, None] * d), axis=1)
    w = {n: np.exp(-(d / 0.25) ** 2) for n, d in dist.items()}
    total = sum(w.values())
    for n, ws in w.items():
        g = obj.vertex_groups.new(name=n)
        for i, x in enumerate((ws / total).tolist()):
            if x > 1e-3:
                g.add([i], x, "REPLACE")
    ad = arm.animation_data_create()
    keys = {"idle": [("Spine", "rotation_quaternion", f, (np.cos(a), 0, np.sin(a), 0))
                     for f, a in ((1, 0.0), (12, 0.15), (24, 0.0))],
            "wave": [("UpperArm", "rotation_quaternion", f, (np.cos(a), np.sin(a), 0, 0))
                     for f, a in ((1, 0.0), (10, 0.6), (20, -0.4), (30, 0.0))]
            + [("Spine", "location", f, (0, z, 0)) for f, z in ((1, 0.0), (30, 0.1))],
            "reach": [("Target", "location", f, loc) for f, loc in ((1, (0, 0, 0)), (10, (-0.5, 0.4, 0.3)),
                                                                   (20, (0.2, -0.3, -0.2)))]}
    for name, ks in keys.items():
        action = bpy.data.actions.new(name)
        ad.action = action
        for bone, prop, f, value in ks:
            pb = arm.pose.bones[bone]
            setattr(pb, prop, value)
            pb.keyframe_insert(prop, frame=f)
        ad.action = None
        track = ad.nla_tracks.new()
        track.name = name
        track.strips.new(name, 1, action)
    for pb in arm.pose.bones:
        pb.location, pb.rotation_quaternion = (0, 0, 0), (1, 0, 0, 0)
    return arm, obj


def test_a_rig_made_in_blender_exported_for_irrlicht(bpy, irrlicht, tmp_path):
    arm, obj = _rig_made_in_blender(bpy)
    shared = {v for p in obj.data.polygons if p.material_index == 0 for v in p.vertices} & \
        {v for p in obj.data.polygons if p.material_index == 1 for v in p.vertices}
    assert len(shared) > 10             # vertices of both materials, which Irrlicht would leave in the bind pose
    out = tmp_path / "rig.x"
    assert bpy.ops.export_scene.xfile(filepath=str(out), target="IRRLICHT") == {"FINISHED"}
    fps, clips = ranges_of(out)
    assert sorted(c["name"] for c in clips) == ["idle", "reach", "wave"]
    lengths = {c["name"]: c["end"] - c["start"] + 1 for c in clips}
    assert lengths == {"idle": 24, "wave": 30, "reach": 20}
    lua = (tmp_path / "rig.ranges.lua").read_text()
    assert all(f"{c['name']} = {{x = {c['start']}, y = {c['end']}}}" in lua for c in clips)
    assert len(split_vertices(read_xfile(out))) == 1
    errs = _irrlicht_against_blender(bpy, irrlicht, out, arm, [obj])
    moved = _shown(bpy, [obj], [10])[0] - _shown(bpy, [obj], [1])[0]
    assert np.abs(moved).max() > 0.05           # the actions move the mesh
    assert max(errs.values()) <= BOUND, errs


def test_character_x_with_player_api_ranges_in_blender_and_back(bpy, irrlicht, tmp_path):
    """Imported with player_api's ranges: six actions named and as long as
    its ranges; exported for Irrlicht: the same ranges, at every one of
    their frames what Irrlicht shows of the original."""
    assert bpy.ops.import_scene.xfile(filepath=str(CHARACTER), ranges=str(PLAYER_API)) == {"FINISHED"}
    arm, meshes = imported(bpy)
    ranges = {"stand": (0, 79), "sit": (81, 160), "lay": (162, 166), "walk": (168, 187), "mine": (189, 198),
              "walk_mine": (200, 219)}
    got = {t.name: tuple(int(round(x)) for x in t.strips[0].action.frame_range) for t in arm.animation_data.nla_tracks}
    assert got == ranges
    sources = welded_sources(bpy)       # the file vertex of each welded Blender vertex
    out = tmp_path / "character.x"
    assert bpy.ops.export_scene.xfile(filepath=str(out), target="IRRLICHT") == {"FINISHED"}
    fps, clips = ranges_of(out)
    assert fps == 30.0 and {c["name"]: (c["start"], c["end"]) for c in clips} == ranges
    frames = np.concatenate([np.arange(c["start"], c["end"] + 1) for c in clips]).astype(np.float64)
    original, written = irrlicht.play(CHARACTER, frames), irrlicht.play(out, frames)
    o_order = irrlicht.irrlicht_vertex_order(CHARACTER, original)
    index = {(int(m), int(v)): i for i, (m, v) in enumerate(zip(o_order.reader_mesh, o_order.vertex))}
    mesh, vertex = source_vertices(irrlicht.irrlicht_vertex_order(out, written))
    vertex = np.array([sources[int(m)][v] if int(m) in sources else v for m, v in zip(mesh, vertex)])
    pick = np.array([index[(int(m), int(v))] for m, v in zip(mesh, vertex)])
    err, f, v = worst(written.positions, original.positions[:, pick], irrlicht.size(original.static))
    print(f"character.x -> Blender -> IRRLICHT: {len(frames)} frames, worst {err:.3g} of the model size at frame "
          f"{frames[f]:g}")
    assert err <= BOUND


@pytest.mark.filterwarnings("error::RuntimeWarning")      # Blender's "does not support blend relative" included
def test_a_ranges_file_relative_to_the_blend_file(bpy, tmp_path):
    """The file browser gives a path under the saved .blend's folder as
    "//name": the import reads it there."""
    import shutil

    shutil.copy(PLAYER_API, tmp_path / "anims.lua")
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "scene.blend"))
    assert bpy.ops.import_scene.xfile(filepath=str(CHARACTER), ranges="//anims.lua") == {"FINISHED"}
    arm, _ = imported(bpy)
    assert sorted(t.name for t in arm.animation_data.nla_tracks) == ["lay", "mine", "sit", "stand", "walk",
                                                                     "walk_mine"]
