# SPDX-License-Identifier: GPL-3.0-or-later
"""Helpers shared by the export tests (test_rite_export_blender.py,
test_xfile_export_blender.py, test_cross_format_blender.py).

* :func:`build` — a rig made in Blender the way a user makes one: bones
  added in edit mode (rolls, a branch), an armature object that is moved and
  turned, a skinned mesh parented to it with a parent inverse, and an action
  with linear quaternion keys on most bones and Bezier Euler keys on one.
  Expected values for it are what Blender itself plays (:func:`positions`),
  never what the extension computes;
* :func:`match_meshes`, :func:`verify_clips` — a re-import against the
  oracle (scene.evaluate) of a fresh parse of the ORIGINAL file;
* :func:`nn_distance` — how far apart two point sets are, whatever their order.
"""
from __future__ import annotations

import numpy as np
from blender_checks import ext, fps, imported, play, verify

from legacy_skin_io.core import quat

CHAIN = ["Bone.0", "Bone.1", "Bone.2", "Bone.3"]
BRANCH = "Arm"            # child of Bone.1
NAMES = CHAIN + [BRANCH]
EULER_BONE = "Bone.3"     # keyed with Bezier Euler rotations (sampled every frame on export)
FRAMES = np.arange(1, 14)  # the action's range


def build(bpy, *, name: str = "Rig", translation_keys: bool = False, seed: int = 5):
    """(armature object, mesh object, action). ``translation_keys``: Bone.2
    also gets location keys (what RAA cannot carry)."""
    import bmesh
    from mathutils import Euler, Matrix

    ab = ext("operators.fcurves")
    rng = np.random.default_rng(seed)
    arm = bpy.data.armatures.new(name)
    ao = bpy.data.objects.new(name, arm)
    ao.location = (0.3, -0.2, 0.1)
    ao.rotation_euler = (0.0, 0.0, 0.4)
    bpy.context.scene.collection.objects.link(ao)
    bpy.context.view_layer.objects.active = ao
    bpy.ops.object.mode_set(mode="EDIT")
    for i, n in enumerate(CHAIN):
        b = arm.edit_bones.new(n)
        b.head = (0.1 * i, 0.0, 0.4 * i)
        b.tail = (0.1 * i + 0.05, 0.1, 0.4 * i + 0.35)
        b.roll = float(rng.uniform(-1, 1))
        if i:
            b.parent = arm.edit_bones[CHAIN[i - 1]]
    b = arm.edit_bones.new(BRANCH)
    b.head = (0.15, 0.05, 0.55)
    b.tail = (0.55, 0.1, 0.6)
    b.roll = 0.3
    b.parent = arm.edit_bones["Bone.1"]
    bpy.ops.object.mode_set(mode="OBJECT")

    me = bpy.data.meshes.new("Body")
    bm = bmesh.new()
    for i in range(4):
        bmesh.ops.create_cube(bm, size=0.3, matrix=Matrix.Translation((0.1 * i, 0.0, 0.4 * i + 0.2)))
    bmesh.ops.create_cube(bm, size=0.2, matrix=Matrix.Translation((0.4, 0.08, 0.58)))
    bm.to_mesh(me)
    bm.free()
    mo = bpy.data.objects.new("Body", me)
    mo.location = (0.05, 0.0, -0.05)
    bpy.context.scene.collection.objects.link(mo)
    co = np.empty(3 * len(me.vertices), dtype=np.float32)
    me.vertices.foreach_get("co", co)
    co = co.reshape(-1, 3)
    arm_part = co[:, 0] > 0.25
    for i, n in enumerate(CHAIN):
        g = mo.vertex_groups.new(name=n)
        w = np.clip(1 - np.abs(co[:, 2] - (0.4 * i + 0.2)) / 0.4, 0, 1)
        w[arm_part] *= 0.3
        for v in np.nonzero(w > 0)[0]:
            g.add([int(v)], float(w[v]), "REPLACE")
    g = mo.vertex_groups.new(name=BRANCH)
    for v in np.nonzero(arm_part)[0]:
        g.add([int(v)], 0.7, "REPLACE")
    mo.modifiers.new("Armature", "ARMATURE").object = ao
    mo.parent = ao
    mo.matrix_parent_inverse = ao.matrix_world.inverted()

    action, slot, bag = ab.new_action_for(ao, "Bend")
    ab.assign_action(ao, action, slot)
    for n in NAMES:
        if n == EULER_BONE:
            continue
        q = quat.normalize(rng.normal(size=(3, 4)) * [0.3, 0.3, 0.3, 1])
        ab.add_vector_keys(bag, f'pose.bones["{n}"].rotation_quaternion', [1, 7, 13],
                           np.concatenate((q[:, 3:], q[:, :3]), axis=1), group=n)
    pb = ao.pose.bones[EULER_BONE]
    pb.rotation_mode = "XYZ"
    for f in (1, 5, 13):
        pb.rotation_euler = Euler(tuple(rng.uniform(-0.6, 0.6, size=3)), "XYZ")
        pb.keyframe_insert("rotation_euler", frame=f)
    if translation_keys:
        ab.add_vector_keys(bag, 'pose.bones["Bone.2"].location', [1, 13], [[0, 0, 0], [0, 0.1, 0]])
    action.frame_range = (1, 13)
    bpy.context.scene.frame_start, bpy.context.scene.frame_end = 1, 13
    return ao, mo, action


def positions(bpy, obj, frames) -> np.ndarray:
    """Blender's evaluated world positions (F, V, 3) of mesh ``obj`` at whole ``frames``."""
    ev = ext("operators.verify")
    out = []
    for f in frames:
        bpy.context.scene.frame_set(int(f))
        out.append(ev.evaluated_world(bpy.context, obj))
    return np.array(out)


def size(points: np.ndarray) -> float:
    return float(np.linalg.norm(points.max(0) - points.min(0)))


def split_maps(written) -> list:
    """The VertexDuplicationIndices of each mesh of a written .X file (in
    the reader's mesh order; None where it has none): for each vertex the
    source vertex it was split from (an exporter splits vertices at UV seams
    and material borders; the source's own vertex keeps its index)."""
    from engine_checks import reader_meshes

    from legacy_skin_io.io.xfile.reader import read_xfile

    return [m.duplicates for m in reader_meshes(read_xfile(written))]


def nn_distance(a: np.ndarray, b: np.ndarray) -> float:
    """Symmetric nearest-neighbour distance between two point sets (a reader
    or an exporter may reorder and split vertices)."""
    d = np.linalg.norm(a[:, None, :] - b[None, :, :], axis=2)
    return float(max(d.min(axis=1).max(), d.min(axis=0).max()))


def welded_sources(bpy) -> dict:
    """{scene mesh index: the file vertex of each Blender vertex (the first of
    its group)} for the current import's welded meshes (the Weld Vertices
    option), taken before an export: what the written file's vertices (or
    their sources) are in the original file (:func:`match_meshes`)."""
    md = ext("operators.metadata")
    out = {}
    for i, o in imported(bpy)[1].items():
        vertex = md.load_weld(o.data)
        if vertex is not None:
            first = np.zeros(len(o.data.vertices), dtype=np.int64)
            first[vertex[::-1]] = np.arange(len(vertex))[::-1]
            out[i] = first
    return out


def _compared(o) -> int:
    """How many vertices ``verify`` compares of mesh object ``o``: the file's
    it was built from (welded or not)."""
    vertex = ext("operators.metadata").load_weld(o.data)
    return len(o.data.vertices) if vertex is None else len(vertex)


def match_meshes(ref, meshes: dict, written=None, maps: dict | None = None, sources: dict | None = None) -> dict:
    """{reference mesh index: object} for the mesh objects of a re-import
    (``meshes``: any keys): by name, else by a vertex count no other
    remaining reference mesh has (an exporter may reorder meshes). With
    ``written`` (the .X file re-imported), an object with more vertices than
    its reference mesh matches it through the file's duplication indices,
    stored in ``maps`` ({reference mesh index: reference vertex of each of
    the object's vertices}, for :func:`verify`). ``sources``
    (:func:`welded_sources` of the import that was exported): the reference
    vertex of each vertex the export started from, where it was welded."""
    out: dict = {}
    left = dict(enumerate(ref.meshes))
    objs = list(meshes.values())
    splits = [d for d in (split_maps(written) if written is not None else []) if d is not None]

    def fits(m, o) -> bool:
        n = _compared(o)
        i = next(k for k, r in enumerate(ref.meshes) if r is m)
        src = (sources or {}).get(i)
        base = len(m.positions) if src is None else len(src)
        if n == base:
            if maps is not None and src is not None:
                maps[i] = src
            return True
        hit = [d for d in splits if len(d) == n and int(d.max()) + 1 == base]
        if maps is not None and hit:
            maps[i] = hit[0] if src is None else src[hit[0]]
        return bool(hit)

    for o in list(objs):
        hit = [i for i, m in left.items() if m.name == o.name]
        if len(hit) == 1 and fits(ref.meshes[hit[0]], o):
            out[hit[0]] = o
            del left[hit[0]]
            objs.remove(o)
    for o in objs:
        hit = [i for i, m in left.items() if fits(m, o)]
        assert len(hit) == 1, (o.name, len(o.data.vertices), [(m.name, len(m.positions)) for m in left.values()])
        out[hit[0]] = o
        del left[hit[0]]
    assert not left, [m.name for m in left.values()]
    return out


def whole_frames(clip, fps_: float) -> np.ndarray:
    """Every whole scene frame in a clip's range."""
    f0, f1 = clip.frame_range(fps_)
    return np.arange(np.ceil(f0 - 1e-9), np.floor(f1 + 1e-9) + 1)


def verify_clips(bpy, ref, label: str, clips=None, frames_of=whole_frames, rel: float = 1e-5,
                 track: str | None = None, written=None, sources: dict | None = None) -> dict:
    """The current scene's armature playing each of ``ref``'s clips (the
    action of its NLA track, named as the clip or ``track``, made the active
    action), against ``ref``'s oracle at ``frames_of(clip, fps)``: asserts
    each within ``rel`` of the model size and returns {clip name: Report}.
    ``written``: the .X file re-imported (its vertices may be the
    reference's split, :func:`match_meshes`); ``sources``: the reference
    vertices of the vertices the export started from (:func:`welded_sources`)."""
    arm, meshes = imported(bpy)
    maps: dict = {}
    objs = match_meshes(ref, meshes, written, maps, sources)
    out = {}
    for clip in (ref.clips if clips is None else clips):
        play(arm, track or clip.name)
        frames = frames_of(clip, fps(bpy))
        assert len(frames)
        rep = verify(bpy, objs, ref, clip, frames, rel, maps=maps)
        print(f"{label} {clip.name}: {rep.verdict()}")
        assert rep.ok, (label, clip.name, rep.table())
        out[clip.name] = rep
    return out


def moved(ref, frames_of=whole_frames, fps_: float = 24.0) -> float:
    """Largest distance of a vertex from the default pose over ``ref``'s
    clips, as a fraction of the model size (a test that the reference moves)."""
    ev = ext("scene.evaluate")
    rest = ev.evaluate(ref, None, [0.0], fps_)[0]
    worst = max(np.linalg.norm(p - rest, axis=1).max() for c in ref.clips
                for p in ev.evaluate(ref, c, frames_of(c, fps_), fps_))
    return float(worst / ev.size(ref))


def crate(bpy, name="Crate"):
    """A cube that belongs to no rig (not parented, not skinned)."""
    import bmesh

    me = bpy.data.meshes.new(name)
    bm = bmesh.new()
    bmesh.ops.create_cube(bm, size=0.5)
    bm.to_mesh(me)
    bm.free()
    obj = bpy.data.objects.new(name, me)
    obj.location = (2.0, 0.0, 0.0)
    bpy.context.scene.collection.objects.link(obj)
    return obj
