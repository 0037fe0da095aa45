# SPDX-License-Identifier: GPL-3.0-or-later
"""The one Blender builder: a scene (``scene.Scene``, already in Blender
space) -> armature, bones, meshes, materials, vertex groups, actions and
NLA tracks. Every format's importer ends here.

Passes, each small and named for the Blender-vs-file difference it handles:

* :func:`bone_joints` — which joints become bones (Blender has no frames
  without bones: the joints that skin or hold meshes, the animated ones and
  their ancestors, or every joint);
* :func:`rest_matrices` — Blender bones are rigid and rebuilt from a
  direction and a roll: the rest is the orthonormal part of the bind, the
  rest of it is ``K`` (``core.rig.RestSplit``);
* :func:`build_armature`, :func:`build_mesh`, :func:`make_material`;
* :func:`build_action` — clips become actions: the file's keys mapped
  channel by channel when that is exact, else every frame baked from the
  clip's own sampler;
* :func:`place_layers` — RiTE-style layers become NLA tracks (weighted
  Replace strips; a cycling clip loops with a second, repeated strip).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import bpy
import numpy as np
from mathutils import Matrix

from ..core import quat, rig, sampling
from ..core.blend import mergeable_influences
from ..scene import Clip, Material, Mesh, Scene
from ..scene import evaluate as oracle
from . import anim_build, attribute_nodes, mesh_arrays, metadata, textures

MIN_BONE_FRACTION = 2e-3    # bone length floor, as a fraction of the model size
MIN_BONE_LENGTH = 1e-3      # absolute floor (Blender units)
#: Bone directions (degrees from the parent's -Y) where Blender's float32
#: bone matrices are imprecise (measured: up to 4e-5 between 2 and 15
#: degrees, below 1e-6 outside): [PRECISE_CONE, BAD_CONE) is avoided.
PRECISE_CONE, BAD_CONE = 2.0, 16.0
#: Blender's material creation slows down quadratically: beyond this many
#: materials, materials that look the same share one Blender material (each
#: face keeps its own in the MATERIAL_ATTR face attribute).
MATERIAL_LIMIT = 256


@dataclass
class Options:
    every_joint_bone: bool = False
    rest_from: str = "BIND"          # or "DEFAULT": rest from the default pose
    bone_direction: str = "CHILDREN"  # or "FILE": bones keep the joints' axes
    bake: bool = False
    import_animations: bool = True
    set_frame_range: bool = True
    pack_images: bool = False


@dataclass
class Built:
    """What an import made: the armature (or None) and, per scene mesh, its object."""

    scene: Scene
    armature: Any = None                                        # the armature object, or None
    rest: rig.RestSplit | None = None
    bones: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))  # joint of each bone
    bone_names: dict[int, str] = field(default_factory=dict)   # joint -> bone name
    meshes: dict[int, Any] = field(default_factory=dict)       # scene mesh index -> object
    empties: dict[int, Any] = field(default_factory=dict)      # joint -> empty (scenes without armature)
    actions: list = field(default_factory=list)                # (action, slot, clip)
    baked: bool = False
    warnings: list[str] = field(default_factory=list)


# ---------------------------------------------------------------------------
# armature

def bone_joints(scene: Scene, every_joint: bool = False) -> np.ndarray:
    """(J,) bool: joints that become bones: every joint, or the joints that
    skin meshes, hold rigid meshes (when anything is skinned or animated) or
    are animated, plus their ancestors. A frame that only holds a skinned
    mesh is no bone: skinning ignores its animation (D3DX's and the oracle's)."""
    sk = scene.skeleton
    assert sk is not None
    J = len(sk)
    if every_joint:
        return np.ones(J, dtype=bool)
    need = np.zeros(J, dtype=bool)
    skinned = False
    for m in scene.meshes:
        if m.skin is not None and len(m.skin.joints):
            need[m.skin.joints] = True
            skinned = True
    animated = any(c.animated.any() for c in scene.clips)
    if skinned or animated:
        for m in scene.meshes:
            if m.parent >= 0 and m.skin is None:
                need[m.parent] = True
    if animated and not skinned and not need.any():
        for c in scene.clips:
            need |= c.animated
    for j in sk.order[::-1]:
        if need[j] and sk.parents[j] >= 0:
            need[sk.parents[j]] = True
    return need


def rest_matrices(scene: Scene, bones: np.ndarray, parent: np.ndarray, rest_from: str,
                  direction: str = "FILE", size: float = 1.0):
    """(rigid rest matrices (B, 4, 4), bind matrices (B, 4, 4)) for the
    bones' joints. ``direction`` "FILE" keeps the joints' axes; "CHILDREN"
    turns each bone about its head to point at its child; with several
    children, at the one that leads the largest sub-hierarchy (the chain:
    hips -> spine rather than a thigh), several equal ones at their mean
    head; a leaf continues its parent's direction. The turn keeps as much of
    the joint's twist as possible (``core.rig.aim_y``) and changes only how
    the bone looks and poses: ``K`` absorbs it, deformation and animation
    stay exact."""
    sk = scene.skeleton
    bind = sk.bind[bones].copy()
    # Joints that skin nothing have no true bind pose: keep only a rigid
    # transform and a uniform scale of the derived one, so that K stays a
    # uniform scale (their pose still shows the default pose exactly).
    free = ~sk.has_bind[bones]
    if free.any():
        k = np.cbrt(np.abs(np.linalg.det(bind[free, :3, :3])))
        fixed = rig.orthonormal(bind[free])
        fixed[:, :3, :3] *= np.where(k > 0, k, 1.0)[:, None, None]
        bind[free] = fixed
    src = bind if rest_from == "BIND" else sk.world()[bones]
    target = rig.orthonormal(src)
    if direction == "CHILDREN":
        heads = target[:, :3, 3]
        kids = rig.children(parent)
        min_len = max(size * MIN_BONE_FRACTION, MIN_BONE_LENGTH)
        leads = np.ones(len(bones), dtype=np.int64)        # bones in each sub-hierarchy
        for i in range(len(bones) - 1, -1, -1):            # parents come first
            if parent[i] >= 0:
                leads[parent[i]] += leads[i]
        for i in range(len(bones)):
            aim = None
            if kids[i]:
                far = [k for k in kids[i] if np.linalg.norm(heads[k] - heads[i]) > min_len] or kids[i]
                most = max(leads[k] for k in far)
                chain = [k for k in far if leads[k] == most]
                aim = np.mean(heads[chain], axis=0) - heads[i]
            elif parent[i] >= 0:
                aim = target[parent[i], :3, 1]
            if aim is not None and np.linalg.norm(aim) > (min_len if kids[i] else 0.0):
                target[i, :3, :3] = rig.aim_y(target[i, :3, :3], aim)
    # Blender rebuilds each bone's rotation in its parent's space (the
    # armature's for a root) from a direction and a roll, in float32
    # (vec_roll_to_mat3), and loses precision (to ~4e-5, passed on to every
    # descendant) when the direction is a few degrees from the parent's -Y
    # (exactly -Y is a special case, and exact). K absorbs any change made here.
    turn = np.array([[1.0, 0, 0, 0], [0, 0, -1, 0], [0, 1, 0, 0], [0, 0, 0, 1]])
    for i in range(len(bones)):
        p = parent[i]
        frame = target[p, :3, :3] if p >= 0 else np.eye(3)
        y = frame.T @ target[i, :3, 1]
        angle = np.degrees(np.arccos(np.clip(-y[1], -1.0, 1.0)))
        if direction == "CHILDREN":
            if PRECISE_CONE <= angle < BAD_CONE:   # tilt out of the band, towards the nearer edge
                goal = 0.0 if angle < 0.5 * (PRECISE_CONE + BAD_CONE) else BAD_CONE
                side = np.array([y[0], 0.0, y[2]])
                side /= max(np.linalg.norm(side), 1e-300)
                a = np.radians(goal)
                new_y = frame @ (np.sin(a) * side + np.array([0.0, -np.cos(a), 0.0]))
                target[i, :3, :3] = rig.aim_y(target[i, :3, :3], new_y)
        elif p >= 0 and angle < BAD_CONE:
            target[i] = target[i] @ turn       # keep the file's axes, swapped (Y -> Z)
    return target, bind


def bone_lengths(heads: np.ndarray, parents: np.ndarray, size: float, min_len: float) -> np.ndarray:
    """Mean distance to the children's heads; a leaf gets half its parent's
    length (parents come before children); never below ``min_len``."""
    kids = rig.children(parents)
    lengths = np.zeros(len(heads))
    for j in range(len(heads)):
        d = [float(np.linalg.norm(heads[k] - heads[j])) for k in kids[j]]
        d = [x for x in d if x > min_len]
        lengths[j] = float(np.mean(d)) if d else 0.0
    for j in range(len(heads)):
        if lengths[j] == 0.0:
            p = parents[j]
            lengths[j] = 0.5 * lengths[p] if p >= 0 and lengths[p] > 0 else size * 0.05
    return np.maximum(lengths, min_len)


def create_bones(context, obj, names: list[str], parents, matrices: np.ndarray, lengths) -> list[str]:
    """Edit bones with the given armature-space rest matrices, lengths and
    parents (not connected). Returns the names Blender gave them; edit bones
    die on leaving edit mode."""
    prev_active = context.view_layer.objects.active
    context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="EDIT")
    try:
        ebones = []
        for name, m, length in zip(names, matrices, lengths):
            eb = obj.data.edit_bones.new(name)
            eb.head = (0.0, 0.0, 0.0)
            eb.tail = (0.0, float(length), 0.0)
            eb.matrix = Matrix(np.asarray(m).tolist())
            eb.use_connect = False
            ebones.append(eb)
        for i, p in enumerate(parents):
            if p >= 0:
                ebones[i].parent = ebones[p]
        return [eb.name for eb in ebones]
    finally:
        bpy.ops.object.mode_set(mode="OBJECT")
        context.view_layer.objects.active = prev_active


def build_armature(context, built: Built, name: str, options: Options, size: float) -> None:
    scene = built.scene
    sk = scene.skeleton
    sel = bone_joints(scene, options.every_joint_bone)
    bones = np.array([j for j in sk.order if sel[j]], dtype=np.int64)
    pos = {int(j): i for i, j in enumerate(bones)}
    parent = np.array([pos.get(int(sk.parents[j]), -1) for j in bones], dtype=np.int64)
    target, bind = rest_matrices(scene, bones, parent, options.rest_from, options.bone_direction, size)
    min_len = max(size * MIN_BONE_FRACTION, MIN_BONE_LENGTH)
    lengths = bone_lengths(target[:, :3, 3], parent, size, min_len)
    arm = bpy.data.armatures.new(name)
    obj = bpy.data.objects.new(name, arm)
    context.collection.objects.link(obj)
    wanted = [sk.names[j] for j in bones]
    names = create_bones(context, obj, wanted, parent, target, lengths)
    for w, got in zip(wanted, names):
        if w != got:
            built.warnings.append(f"joint name {w!r} is a duplicate or too long: bone named {got!r}")
    rest = np.array([np.array(arm.bones[n].matrix_local, dtype=np.float64) for n in names]).reshape(-1, 4, 4)
    for n in names:
        obj.pose.bones[n].rotation_mode = "QUATERNION"
    built.armature = obj
    built.bones = bones
    built.bone_names = {int(j): n for j, n in zip(bones, names)}
    built.rest = rig.RestSplit(rest, bind, parent)
    set_pose(built, built.rest.pose_basis(sk.world()[bones][None])[0])
    metadata.store(obj, metadata.RIG_KEY, {
        "format": scene.source.format, "path": scene.source.path, "axes": scene.source.axes.to_json(),
        "names": list(sk.names), "parents": sk.parents, "local": sk.local.reshape(-1, 16),
        "bind": sk.bind.reshape(-1, 16), "has_bind": sk.has_bind.astype(int),
        "bones": {str(j): n for j, n in built.bone_names.items()}, "K": built.rest.K.reshape(-1, 16),
        "extras": sk.extras,
        "scene_extras": scene.extras})


def set_pose(built: Built, basis: np.ndarray) -> None:
    """Pose-bone location/rotation/scale from basis matrices (B, 4, 4)."""
    t, r, s = sampling.decompose_trs(basis)
    r = np.where(r[:, 3:4] < 0, -r, r)
    pb = built.armature.pose.bones
    idx = {built.bone_names[int(j)]: i for i, j in enumerate(built.bones)}
    perm = np.array([idx[b.name] for b in pb], dtype=np.int64)
    pb.foreach_set("location", t[perm].astype(np.float32).reshape(-1))
    pb.foreach_set("rotation_quaternion",
                   np.concatenate((r[:, 3:], r[:, :3]), axis=1)[perm].astype(np.float32).reshape(-1))
    pb.foreach_set("scale", s[perm].astype(np.float32).reshape(-1))


# ---------------------------------------------------------------------------
# meshes

def valid_faces(mesh: Mesh, warnings: list[str], label: str):
    """Faces Blender can hold (3+ corners, no vertex twice, not on the same
    vertices as an earlier face): (kept faces, their corners' indices into
    mesh.corners, sizes, loop starts). Faces are compared size by size, each
    as its row of vertices sorted."""
    sizes = np.asarray(mesh.face_sizes, dtype=np.int64)
    idx = np.asarray(mesh.corners, dtype=np.int64)
    starts = mesh.face_starts
    keep = sizes >= 3
    degenerate = dup_faces = 0
    for k in np.unique(sizes[keep]).tolist():
        faces = np.flatnonzero(sizes == k)
        rows = np.sort(idx[starts[faces][:, None] + np.arange(k)[None, :]], axis=1)
        twice = (rows[:, 1:] == rows[:, :-1]).any(axis=1)
        if twice.any():
            keep[faces[twice]] = False
            degenerate += int(twice.sum())
            faces, rows = faces[~twice], rows[~twice]
        again = _repeated_rows(rows, len(mesh.positions))
        if len(again):
            keep[faces[again]] = False
            dup_faces += len(again)
    degenerate += int((sizes < 3).sum())
    if degenerate:
        warnings.append(f"{label}: {degenerate} degenerate face(s) skipped")
    if dup_faces:
        warnings.append(f"{label}: {dup_faces} duplicate face(s) (the same vertices as another) skipped")
    kept = np.nonzero(keep)[0]
    ksizes = sizes[kept]
    kstart = np.zeros(len(kept), dtype=np.int64)
    if len(kept) > 1:
        np.cumsum(ksizes[:-1], out=kstart[1:])
    src = np.repeat(starts[kept], ksizes) + (np.arange(int(ksizes.sum())) - np.repeat(kstart, ksizes))
    return kept, src, ksizes, kstart


def _repeated_rows(rows: np.ndarray, n_values: int) -> np.ndarray:
    """Indices of the rows of ``rows`` ((n, k) ints in 0..n_values-1) equal
    to an earlier row."""
    n, k = rows.shape
    if n < 2:
        return np.zeros(0, dtype=np.int64)
    if n_values ** k < 2 ** 63:                  # one integer per row
        key = rows[:, 0].copy()
        for c in range(1, k):
            key *= n_values
            key += rows[:, c]
        order = np.argsort(key, kind="stable")
        sk = key[order]
        same = sk[1:] == sk[:-1]
    else:
        order = np.lexsort(rows.T[::-1])         # stable: equal rows keep their order
        sr = rows[order]
        same = (sr[1:] == sr[:-1]).all(axis=1)
    return np.sort(order[1:][same])


def _appearance(mat: Material) -> tuple:
    return (tuple(np.round(np.asarray(mat.color, dtype=np.float64), 9)), round(float(mat.specular_power), 9),
            tuple(np.round(mat.specular, 9)), tuple(np.round(mat.emissive, 9)), mat.texture)


def material_groups(scene: Scene) -> np.ndarray:
    """(M,) index of the Blender material each scene material becomes: its
    own, or (beyond MATERIAL_LIMIT) the first one that looks the same."""
    n = len(scene.materials)
    if n <= MATERIAL_LIMIT:
        return np.arange(n)
    first: dict[tuple, int] = {}
    return np.array([first.setdefault(_appearance(m), k) for k, m in enumerate(scene.materials)], dtype=np.int64)


def build_mesh(context, built: Built, mi: int, materials: dict[int, Any], groups: np.ndarray) -> Any:
    scene = built.scene
    m = scene.meshes[mi]
    label = f"mesh {m.name!r}"
    me = bpy.data.meshes.new(m.name)
    V = len(m.positions)
    kept, src, sizes, starts = valid_faces(m, built.warnings, label)
    loop_v = np.asarray(m.corners, dtype=np.int64)[src]
    me.vertices.add(V)
    mesh_arrays.write(me, "position", "FLOAT_VECTOR", "POINT", m.positions)
    me.loops.add(len(loop_v))
    me.polygons.add(len(sizes))
    mesh_arrays.write(me, ".corner_vert", "INT", "CORNER", loop_v)
    me.polygons.foreach_set("loop_start", starts.astype(np.int32))
    # faces are smooth: a new mesh has no sharp_face attribute
    scene_mats = np.asarray(m.materials, dtype=np.int64)
    slots = np.unique(groups[scene_mats]) if len(scene_mats) else scene_mats
    if m.face_materials is not None and len(m.materials):
        face_scene = scene_mats[np.asarray(m.face_materials)[kept]]
        mesh_arrays.write(me, "material_index", "INT", "FACE", np.searchsorted(slots, groups[face_scene]))
        if len(slots) < len(scene_mats):
            mesh_arrays.write(me, metadata.MATERIAL_ATTR, "INT", "FACE", face_scene)
    if m.uvs is not None and len(loop_v):
        mesh_arrays.set_uv_map(me, "UVMap", np.asarray(m.uvs, dtype=np.float32)[src])
    if m.colors is not None:
        colors: Any = me.color_attributes.new("Color", "FLOAT_COLOR", "POINT")
        colors.data.foreach_set("color", np.asarray(m.colors, dtype=np.float32).reshape(-1))
    me.update(calc_edges=True)
    if m.normals is not None and len(loop_v):
        n = np.asarray(m.normals, dtype=np.float32)[src]
        per_vertex = np.zeros((V, 3), dtype=np.float32)
        per_vertex[loop_v] = n
        if np.array_equal(per_vertex[loop_v], n):      # one normal per vertex: the 4x faster call
            me.normals_split_custom_set_from_vertices(per_vertex)
        else:
            me.normals_split_custom_set(n)
        # the exact normals, for a lossless export (custom normals are stored quantised)
        mesh_arrays.write(me, metadata.NORMAL_ATTR, "FLOAT_VECTOR", "CORNER", n)
    # no Mesh.validate(): valid_faces and the scene's validation leave it nothing
    # to fix (the tests run it on every imported mesh, hostile files included)
    for k in slots.tolist():
        me.materials.append(materials[k])
    obj = bpy.data.objects.new(m.name, me)
    context.collection.objects.link(obj)
    meta = {"index": mi, "extras": m.extras}
    if len(slots) < len(scene_mats):   # the scene materials the attribute refers to
        meta["materials"] = {str(k): {"name": scene.materials[k].name, "extras": scene.materials[k].extras}
                             for k in np.unique(face_scene).tolist()}
    metadata.store(obj, metadata.MESH_KEY, meta)
    return obj


def build_empties(context, built: Built, size: float) -> None:
    """A scene whose joints need no armature (nothing skinned or animated):
    the joint hierarchy as empties, as Blender's glTF importer makes nodes."""
    sk = built.scene.skeleton
    for j in sk.order.tolist():
        obj = bpy.data.objects.new(sk.names[j], None)
        obj.empty_display_type = "PLAIN_AXES"
        obj.empty_display_size = max(size * 0.02, 1e-3)
        context.collection.objects.link(obj)
        p = int(sk.parents[j])
        if p >= 0:
            obj.parent = built.empties[p]
        obj.matrix_basis = Matrix(sk.local[j].tolist())
        built.empties[j] = obj


def place_mesh(built: Built, mi: int, obj, default_world: np.ndarray | None) -> None:
    """Skinned meshes: parented to the armature at their default-pose
    placement, vertex groups, Armature modifier. Rigid meshes under a bone:
    parented to it. Anything else: at its default-pose placement. The exact
    placement is kept in the mesh's metadata (Blender stores float32)."""
    scene = built.scene
    m = scene.meshes[mi]
    arm = built.armature
    mw = (oracle.placement(scene, m, default_world) if default_world is not None
          else np.asarray(m.matrix, dtype=np.float64))
    meta = metadata.load(obj, metadata.MESH_KEY) or {}
    meta.update(world=np.asarray(mw).reshape(-1), parent=int(m.parent),
                matrix=np.asarray(m.matrix, dtype=np.float64).reshape(-1))
    metadata.store(obj, metadata.MESH_KEY, meta)
    if m.skin is not None and arm is not None:
        obj.parent = arm
        obj.matrix_parent_inverse = Matrix.Identity(4)
        obj.matrix_basis = Matrix(mw.tolist())
        add_vertex_groups(obj, m, built)
        mod = obj.modifiers.new("Armature", "ARMATURE")
        mod.object = arm
        return
    if arm is not None and m.parent in built.bone_names:
        bi = int(np.nonzero(built.bones == m.parent)[0][0])
        bone = arm.data.bones[built.bone_names[m.parent]]
        obj.parent = arm
        obj.parent_type = "BONE"
        obj.parent_bone = bone.name
        obj.matrix_parent_inverse = Matrix.Identity(4)
        tail = np.eye(4)
        tail[1, 3] = -bone.length
        obj.matrix_basis = Matrix((tail @ built.rest.K[bi] @ np.asarray(m.matrix)).tolist())
        return
    if m.parent in built.empties:
        obj.parent = built.empties[m.parent]
        obj.matrix_basis = Matrix(np.asarray(m.matrix).tolist())
        return
    obj.matrix_basis = Matrix(mw.tolist())


def add_vertex_groups(obj, m: Mesh, built: Built) -> None:
    """One vertex group per skin joint that is a bone; several weights of one
    (vertex, joint) pair add up (as in the oracle's ``core.skinning.Influences``)
    and each weight is stored as ``VertexGroup.add`` stores it (clamped to
    [0, 1]).

    ``VertexGroup.add`` sets one weight per call: generated weights make a
    few batches of equal weight, a painted mesh about one per vertex and
    group. From ``bulk_from`` distinct weights on, the positive weights go
    in bulk instead: a float point attribute per group, stored into the
    groups by a temporary Geometry Nodes modifier (*Store Named Attribute*:
    the same float32 values, no entry for a zero), applied. Zero weights and
    groups whose name an attribute could shadow are still added with
    ``VertexGroup.add``; if Blender refuses the bulk path, everything is."""
    from typing import cast

    bulk_from = 2000            # one add call costs ~3 us, the bulk path ~20 ms + ~2 ns per vertex and group
    bulk_floats = 1 << 25       # temporary attributes at once (128 MB)
    sk = m.skin
    groups = {}          # joint -> (name, index): applying a modifier renews the groups' RNA
    for j in sk.joints.tolist():
        if j in built.bone_names:
            g = obj.vertex_groups.new(name=built.bone_names[j])
            groups[j] = (g.name, g.index)
    if not len(sk.vertex):
        return
    n_j = int(max(sk.joint.max(), 0)) + 1
    pair = sk.vertex * n_j + sk.joint
    uniq, inv = np.unique(pair, return_inverse=True)
    w = np.bincount(inv, weights=sk.weight, minlength=len(uniq)).astype(np.float32)
    if len(uniq) != len(pair):
        built.warnings.append(f"mesh {m.name!r}: {len(pair) - len(uniq)} repeated (vertex, joint) weights "
                              f"added up")
    v, j = uniq // n_j, uniq % n_j
    keep = np.isin(j, np.array(sorted(groups), dtype=np.int64))
    v, j, w = v[keep], j[keep], np.clip(w[keep], 0.0, 1.0)

    def store_bulk(sel: np.ndarray) -> bool:
        me = obj.data
        V = len(me.vertices)
        targets = np.unique(j[sel])
        per_batch = max(1, bulk_floats // max(V, 1))
        for b0 in range(0, len(targets), per_batch):
            batch = targets[b0:b0 + per_batch]
            part = sel & np.isin(j, batch) if len(batch) < len(targets) else sel
            dense = np.zeros((len(batch), V), dtype=np.float32)
            dense[np.searchsorted(batch, j[part]), v[part]] = w[part]
            attrs, ng, mod, ok = [], None, None, False
            try:
                for k in range(len(batch)):
                    a = me.attributes.new(f".lsio_vg{k}", "FLOAT", "POINT")
                    attrs.append(a.name)
                    a.data.foreach_set("value", dense[k])
                del dense
                ng = attribute_nodes.copy_group(".lsio_vertex_groups",
                                                [(name, groups[jj][0]) for name, jj in zip(attrs, batch.tolist())])
                mod = cast(bpy.types.NodesModifier, obj.modifiers.new(".lsio_vertex_groups", "NODES"))
                mod.node_group = ng
                mod.show_viewport = False    # applied all the same; the depsgraph need not evaluate it first
                with bpy.context.temp_override(object=obj, active_object=obj):
                    bpy.ops.object.modifier_apply(modifier=mod.name)
                ok = obj.modifiers.get(mod.name) is None
            except (RuntimeError, TypeError, KeyError, AttributeError):
                ok = False
            finally:
                if mod is not None and obj.modifiers.get(mod.name) is not None:
                    obj.modifiers.remove(mod)
                for name in attrs:
                    a = me.attributes.get(name)
                    if a is not None:
                        me.attributes.remove(a)
                if ng is not None:
                    bpy.data.node_groups.remove(ng)
            if not ok:
                return False
        return True

    if len(w) >= bulk_from and not len(obj.modifiers) and len(np.unique(w)) >= bulk_from:
        readable = attribute_nodes.group_readable(obj.data)
        usable = [jj for jj, (name, _) in groups.items() if readable(name)]
        sel = (w > 0.0) & np.isin(j, np.array(usable, dtype=np.int64))
        if sel.any() and store_bulk(sel):
            v, j, w = v[~sel], j[~sel], w[~sel]
    order = np.lexsort((v, w, j))
    v, j, w = v[order], j[order], w[order]
    brk = np.nonzero((np.diff(j) != 0) | (np.diff(w) != 0))[0] + 1
    vgroups = obj.vertex_groups
    for lo, hi in zip(np.r_[0, brk], np.r_[brk, len(v)]):
        if hi > lo:
            vgroups[groups[int(j[lo])][1]].add(v[lo:hi].tolist(), float(w[lo]), "REPLACE")


def make_material(mat: Material, filepath: str, images: textures.ImageCache, warnings: list[str]):
    """Principled BSDF from a scene material."""
    out = bpy.data.materials.new(mat.name)
    if out.node_tree is None:  # Blender 4.5; 5.0 materials come with nodes
        out.use_nodes = True
    nt = out.node_tree
    bsdf = next((n for n in nt.nodes if n.type == "BSDF_PRINCIPLED"), None)
    if bsdf is None:
        bsdf = nt.nodes.new("ShaderNodeBsdfPrincipled")
    rgba = tuple(float(x) for x in np.asarray(mat.color, dtype=np.float64)[:4])
    bsdf.inputs["Base Color"].default_value = rgba
    bsdf.inputs["Alpha"].default_value = rgba[3]
    out.diffuse_color = rgba
    power = max(float(mat.specular_power), 0.0)
    bsdf.inputs["Roughness"].default_value = float(np.sqrt(2.0 / (power + 2.0)))
    spec = np.asarray(mat.specular, dtype=np.float64).reshape(-1)[:3]
    level = float(np.clip(spec.max() if len(spec) else 0.0, 0.0, 1.0))
    for label in ("Specular IOR Level", "Specular"):
        if label in bsdf.inputs:
            bsdf.inputs[label].default_value = 0.5 * level
            break
    if "Specular Tint" in bsdf.inputs and level > 0:
        try:
            bsdf.inputs["Specular Tint"].default_value = (*[float(x) for x in spec / level], 1.0)
        except (TypeError, ValueError):
            pass
    em = np.asarray(mat.emissive, dtype=np.float64).reshape(-1)[:3]
    if em.any():
        key_in = "Emission Color" if "Emission Color" in bsdf.inputs else "Emission"
        bsdf.inputs[key_in].default_value = (*[float(x) for x in em], 1.0)
        if "Emission Strength" in bsdf.inputs:
            bsdf.inputs["Emission Strength"].default_value = 1.0
    if rgba[3] < 1.0:
        for attr, val in (("surface_render_method", "BLENDED"), ("blend_method", "BLEND")):
            try:
                setattr(out, attr, val)
                break
            except (AttributeError, TypeError):
                pass
    if mat.texture:
        img = images.get(mat.texture, filepath, warnings)
        if img is not None:
            tex = nt.nodes.new("ShaderNodeTexImage")
            tex.image = img
            tex.location = (bsdf.location.x - 350, bsdf.location.y)
            nt.links.new(tex.outputs["Color"], bsdf.inputs["Base Color"])
        else:
            out["texture_path"] = mat.texture    # kept for the user and for export
    metadata.store(out, metadata.MESH_KEY, {"extras": mat.extras, "texture": mat.texture})
    return out


# ---------------------------------------------------------------------------
# animation

def channel_mode_exact(built: Built, size: float) -> bool:
    """True when the file's keys map channel by channel (``RestSplit.channels``):
    every K a similarity without translation, and bones whose K rotates only
    uniform scales."""
    rs = built.rest
    if rs is None or not len(rs):
        return True
    if not rs.similarity_k(size).all():
        return False
    turned = rs.turned()
    if turned.any():
        joints = set(int(j) for j in built.bones[turned])
        s0 = sampling.decompose_trs(built.scene.skeleton.local)[2]
        vals = [s0[j] for j in joints]
        for clip in built.scene.clips:
            ch = clip.scale
            for t, j in enumerate(ch.targets):
                if int(j) in joints:
                    vals.append(ch.values[ch.starts[t]:ch.starts[t + 1]])
        v = np.concatenate([np.reshape(x, (-1, 3)) for x in vals])
        if np.abs(v - v.mean(axis=1, keepdims=True)).max() > 1e-6 * max(np.abs(v).max(), 1e-30):
            return False
    return True


#: F-curve keys closer than about 0.01 frame are merged by ``fcurve.update()``.
MIN_KEY_GAP = 0.02


def short_clip_warning(built: Built, clip: Clip, fps: float) -> None:
    f0, f1 = clip.frame_range(fps)
    if f1 - f0 < 2.0 and clip.end > clip.start:
        built.warnings.append(f"{clip.name}: the animation lasts {f1 - f0:.3g} frame(s) at {fps:g} fps: if it "
                              f"should be longer, set the importer's Ticks per Second")


def dense_keys(clip: Clip, fps: float) -> bool:
    """True when two keys of a channel are closer than MIN_KEY_GAP frames."""
    for ch in (clip.rotation, clip.translation, clip.scale):
        if len(ch.times) < 2:
            continue
        gaps = np.diff(clip.to_frames(ch.times, fps))
        same_track = ch.track_of_key[1:] == ch.track_of_key[:-1]
        if np.any(gaps[same_track] < MIN_KEY_GAP):
            return True
    return False


def _key(bag, bone: str, prop: str, frames, values) -> None:
    path = f'pose.bones["{bpy.utils.escape_identifier(bone)}"].{prop}'
    anim_build.add_vector_keys(bag, path, frames, values, group=bone)     # extrapolation: CONSTANT, the default


_PROPS = ("location", "rotation_quaternion", "scale")


def _wxyz(r):
    return np.concatenate((r[..., 3:], r[..., :3]), axis=-1)


def default_channels(built: Built):
    """(location, rotation (x, y, z, w with w >= 0), scale) of every bone's
    pose basis at the skeleton's default pose."""
    assert built.scene.skeleton is not None
    dt, dr, ds = sampling.decompose_trs(built.rest.pose_basis(built.scene.skeleton.world()[built.bones][None])[0])
    return dt, np.where(dr[:, 3:4] < 0, -dr, dr), ds


def static_channels(built: Built, clips: list[Clip]) -> dict[int, set[str]]:
    """For ACTION clips: the channels a clip must key even where it does not
    animate them, so that switching actions never leaves another action's
    values behind: those whose default value is not the identity, and those
    another ACTION clip animates. {bone index: {property}}."""
    t, r, s = default_channels(built)
    out: dict[int, set[str]] = {}
    for bi in range(len(built.bones)):
        props = set()
        if np.abs(t[bi]).max() > 1e-9:
            props.add("location")
        if min(abs(r[bi, 3]) - 1.0, 0.0) < -1e-9:
            props.add("rotation_quaternion")
        if np.abs(s[bi] - 1.0).max() > 1e-9:
            props.add("scale")
        out[bi] = props
    for c in clips:
        if c.layer != "ACTION":
            continue
        for prop, ch in zip(_PROPS, (c.translation, c.rotation, c.scale)):
            for j in ch.targets.tolist():
                hit = np.nonzero(built.bones == j)[0]
                if len(hit):
                    out[int(hit[0])].add(prop)
    return out


def animated_props(clip: Clip, j: int) -> set[str]:
    out = set()
    for prop, ch in zip(_PROPS, (clip.translation, clip.rotation, clip.scale)):
        if j in set(ch.targets.tolist()):
            out.add(prop)
    return out


def bake_clip(built: Built, clip: Clip, fps: float):
    """(frames, location, rotation, scale) of every bone at every frame of
    ``clip`` (rotations in the sign of ``Clip.baked_rotations``)."""
    sk = built.scene.skeleton
    assert sk is not None
    rs = built.rest
    frames, times = clip.bake_frames(fps)
    world = sk.world(clip.sample_local(sk.local, times))[:, built.bones]
    t, r, s = rig.basis_channels(rs.pose_basis(world))
    if len(clip.rotation.targets):
        # the sign of Clip.baked_rotations (a layer is blended with it, and
        # the extractor maps keys back to it linearly)
        _, ref = clip.baked_rotations(sampling.decompose_trs(sk.local)[1], fps)
        local_q = ref[:, built.bones]
        mapped = quat.mul(quat.mul(rs.qa[None], local_q), quat.conj(rs.qk)[None])
        r = np.where(np.sum(r * mapped, axis=-1, keepdims=True) < 0, -r, r)
    return frames, t, r, s


def resting_channels(built: Built, clips: list[Clip], baked: list, size: float) -> frozenset:
    """(bone index, property) pairs that every clip animating them holds at
    the default pose throughout (within 1e-9, of the model size for
    locations): no action need key them, the pose bones keep their default
    (tiny_4anim: 224 of its 1520 F-curves). For
    ACTION clips all baked (``baked``: their ``bake_clip``), since nothing
    else then sets those channels."""
    dt, dr, ds = default_channels(built)
    out = set()
    for bi, j in enumerate(built.bones.tolist()):
        for k, prop in enumerate(_PROPS):
            still = True
            for clip, (_, t, r, s) in zip(clips, baked):
                if not clip.animated[j] or prop not in animated_props(clip, j):
                    continue
                if k == 0:
                    off = np.abs(t[:, bi] - dt[bi]).max() / max(size, 1e-30)
                elif k == 1:
                    off = np.minimum(np.abs(r[:, bi] - dr[bi]), np.abs(r[:, bi] + dr[bi])).max()
                else:
                    off = np.abs(s[:, bi] - ds[bi]).max() / max(np.abs(ds[bi]).max(), 1e-30)
                if not off <= 1e-9:
                    still = False
                    break
            if still:
                out.add((bi, prop))
    return frozenset(out)


def build_action(built: Built, clip: Clip, fps: float, baked: bool, static: dict[int, set[str]],
                 channels=None, resting: frozenset = frozenset()):
    """One action for ``clip``: baked (every frame from the clip's own
    sampler; ``channels``: its ``bake_clip`` when already made) or the file's
    keys mapped channel by channel. ``resting`` channels are not keyed."""
    action, slot, bag = anim_build.new_action_for(built.armature, clip.name)
    sk = built.scene.skeleton
    assert sk is not None
    boneless = [sk.names[j] for j in np.flatnonzero(clip.animated) if int(j) not in built.bone_names]
    if boneless:
        built.warnings.append(f"{clip.name}: {len(boneless)} animated joint(s) have no bone, their keys are not "
                              f"imported: {', '.join(boneless[:8])}{' ...' if len(boneless) > 8 else ''} "
                              f"(All Joints as Bones imports them)")
    dt, dr, ds = default_channels(built)
    f0 = clip.frame_range(fps)[0]
    if baked:
        frames, t, r, s = channels if channels is not None else bake_clip(built, clip, fps)
        for bi, j in enumerate(built.bones.tolist()):
            bone = built.bone_names[j]
            keyed = animated_props(clip, j) if clip.animated[j] else set()
            for prop, vals in zip(_PROPS, (t[:, bi], _wxyz(r[:, bi]), s[:, bi])):
                if (bi, prop) in resting:
                    continue
                if prop in keyed:
                    _key(bag, bone, prop, frames, vals)
                elif clip.layer == "ACTION" and prop in static.get(bi, ()):
                    _key(bag, bone, prop, [f0], {"location": dt, "rotation_quaternion": _wxyz(dr),
                                                 "scale": ds}[prop][bi][None])
    else:
        _key_channels(built, clip, fps, bag, static, (dt, dr, ds), f0)
    lo, hi = clip.frame_range(fps)
    cycle = None
    if clip.cycle is not None:
        cycle = [float(x) for x in clip.to_frames(clip.cycle, fps)]
    action.frame_range = (min(lo, 0.0) if clip.layer == "ACTION" else lo,
                          max(cycle[1] if cycle and clip.layer != "ACTION" else hi, lo + 1.0))
    action.use_frame_range = True
    action.use_cyclic = clip.cycle is not None
    metadata.store(action, metadata.CLIP_KEY, {
        "layer": clip.layer, "weight": clip.weight, "start": clip.start, "end": clip.end,
        "cycle": clip.cycle, "cycle_frames": cycle, "ticks_per_second": clip.ticks_per_second,
        "baked": bool(baked), "extras": clip.extras})
    return action, slot


def _key_channels(built: Built, clip: Clip, fps: float, bag, static, default, f0) -> None:
    """The file's keys, channel by channel (exact when ``channel_mode_exact``)."""
    sk = built.scene.skeleton
    rs = built.rest
    t0, r0, s0 = sampling.decompose_trs(sk.local)
    dt, dr, ds = default
    chans = {"location": clip.translation, "rotation_quaternion": clip.rotation, "scale": clip.scale}
    track_of = {prop: {int(j): k for k, j in enumerate(ch.targets)} for prop, ch in chans.items()}
    rest_of = {"location": t0, "rotation_quaternion": r0, "scale": s0}
    pending: dict[str, list] = {prop: [] for prop in chans}
    for bi, j in enumerate(built.bones.tolist()):
        bone = built.bone_names[j]
        if not clip.animated[j]:
            for prop, val in (("location", dt[bi]), ("rotation_quaternion", _wxyz(dr[bi])), ("scale", ds[bi])):
                if prop in static.get(bi, ()):
                    _key(bag, bone, prop, [f0], val[None])
            continue
        for prop, ch in chans.items():
            k = track_of[prop].get(j)
            if k is None:
                times, vals = np.array([clip.start]), rest_of[prop][j][None]
            else:
                lo, hi = ch.starts[k], ch.starts[k + 1]
                times, vals = ch.times[lo:hi], ch.values[lo:hi]
            pending[prop].append((bone, bi, j, times, vals))
    for prop, jobs in pending.items():
        if not jobs:
            continue
        counts = [len(job[3]) for job in jobs]
        vals = np.concatenate([job[4] for job in jobs])
        b = np.repeat([job[1] for job in jobs], counts)
        js = np.repeat([job[2] for job in jobs], counts)
        if prop == "location":
            out = rs.channels(vals, r0[js], s0[js], b)[0]
        elif prop == "rotation_quaternion":
            if clip.sampler is not None:
                # keys carry the sign of Clip.baked_rotations, as baked actions do
                ref_f, ref = clip.baked_rotations(r0, fps)
                at = np.concatenate([clip.to_frames(job[3], fps) for job in jobs])
                k = np.clip(np.searchsorted(ref_f, at - 1e-6), 0, len(ref_f) - 1)
                vals = vals * np.where(np.sum(vals * ref[k, js], axis=-1, keepdims=True) < 0, -1.0, 1.0)
            out = _wxyz(rs.channels(t0[js], vals, s0[js], b)[1])
        else:
            out = rs.channels(t0[js], r0[js], vals, b)[2]
        for job, part in zip(jobs, np.split(out, np.cumsum(counts)[:-1])):
            _key(bag, job[0], prop, clip.to_frames(job[3], fps), part)


def place_actions(built: Built, fps: float) -> tuple[float, float] | None:
    """ACTION clips: each on a muted NLA track (so none is lost), the first
    active. Layered clips: the layer stack (:func:`place_layers`). Returns
    the scene frame range the clips span."""
    arm = built.armature
    ad = arm.animation_data or arm.animation_data_create()
    acts = [(a, s, c) for a, s, c in built.actions if c.layer == "ACTION"]
    layers = [(a, s, c) for a, s, c in built.actions if c.layer != "ACTION"]
    for action, slot, clip in acts:
        track = ad.nla_tracks.new()
        track.name = clip.name
        strip = track.strips.new(action.name, int(np.floor(action.frame_range[0])), action)
        strip.action_slot = slot
        track.mute = True
    if acts:
        anim_build.assign_action(arm, acts[0][0], acts[0][1])
    if layers:
        place_layers(arm, [(a, s, c.layer, c.weight) for a, s, c in layers], fps)
    for a, _, _ in built.actions:      # nothing imported is lost on save and reload
        a.use_fake_user = True
    if not built.actions:
        return None
    ranges = [c.frame_range(fps) for _, _, c in built.actions]
    return min(r[0] for r in ranges), max(r[1] for r in ranges)


def place_layers(arm_obj, new: list, fps: float = 24.0) -> float:
    """(Re)build the layer stack on ``arm_obj``: the layer tracks already
    there plus ``new`` (action, slot, layer, weight); MERGEABLE tracks first
    (weights turned into Replace influences w_i / (w_1 + ... + w_i)),
    DOMINANT ones on top. A cycling action plays its start once, then
    repeats [cycle start, cycle end] (Blender's repeat returns to the
    strip's start, hence two strips). Returns the scene frame where the
    longest clip of the whole stack ends."""
    ad = arm_obj.animation_data or arm_obj.animation_data_create()
    entries = []
    for tr in list(ad.nla_tracks):
        meta = _layer_meta(tr)
        if meta:
            st = tr.strips[0]
            entries.append((st.action, st.action_slot, meta["layer"], meta["weight"]))
            ad.nla_tracks.remove(tr)
    entries += new
    merge = [e for e in entries if e[2] != "DOMINANT"]
    dom = [e for e in entries if e[2] == "DOMINANT"]
    infl = list(mergeable_influences([e[3] for e in merge])) + [1.0] * len(dom)
    metas = [metadata.load(e[0], metadata.CLIP_KEY) or {} for e in merge + dom]
    ends = [float(e[0].frame_range[1]) for e in merge + dom]
    end = max(ends + [1.0])
    others = list(ad.nla_tracks)
    prev = others[-1] if others else None
    for (action, slot, layer, weight), inf, meta in zip(merge + dom, infl, metas):
        meta.update(layer=layer, weight=float(weight))
        metadata.store(action, metadata.CLIP_KEY, meta)
        tr = ad.nla_tracks.new(prev=prev)
        tr.name = action.name
        lo, hi = (float(x) for x in action.frame_range)
        cycle = meta.get("cycle_frames")
        strips = []
        if cycle and cycle[1] - cycle[0] > 0:
            c0, c1 = float(cycle[0]), float(cycle[1])
            first = tr.strips.new(action.name, int(lo), action)
            first.action_frame_start, first.action_frame_end = lo, c0
            first.frame_end = c0
            loop = tr.strips.new(action.name + " loop", int(c0), action)
            loop.action_frame_start, loop.action_frame_end = c0, c1
            loop.repeat = float(int(np.floor(10 * end / (c1 - c0))) + 2)
            strips = [first, loop]
        else:
            strips = [tr.strips.new(action.name, int(lo), action)]
        for st in strips:
            st.action_slot = slot
            st.blend_type = "REPLACE"
            st.extrapolation = "HOLD_FORWARD" if prev is not None else "HOLD"
            if inf < 1.0:
                st.use_animated_influence = True
                for fc in st.fcurves:
                    if fc.data_path == "influence":
                        for kp in fc.keyframe_points:
                            kp.co[1] = inf
                        fc.update()
                st.influence = inf
        prev = tr
    ad.action = None
    ends = [m["end"] if m.get("ticks_per_second") is None else m["end"] / m["ticks_per_second"] * fps
            for m in metas if "end" in m]
    return max(ends + [1.0])


def _layer_meta(track):
    """The layer metadata of an NLA track made by :func:`place_layers`, or None."""
    if not 1 <= len(track.strips) <= 2 or track.strips[0].action is None:
        return None
    meta = metadata.load(track.strips[0].action, metadata.CLIP_KEY)
    return meta if meta and meta.get("layer") in ("MERGEABLE", "DOMINANT") else None


# ---------------------------------------------------------------------------
# the whole scene

def build(context, scene: Scene, options: Options | None = None, progress=None) -> Built:
    """Build ``scene`` into the current Blender scene. The caller wraps this
    in a :class:`~.rollback.Rollback`."""
    options = options or Options()
    built = Built(scene)
    size = oracle.size(scene)
    sk = scene.skeleton
    default_world = sk.world() if sk is not None else None
    if sk is not None and len(sk) and bone_joints(scene, options.every_joint_bone).any():
        build_armature(context, built, f"{scene.name}_rig" if scene.meshes else scene.name, options, size)
    elif sk is not None and len(sk):
        build_empties(context, built, size)
    if progress:
        progress(1)
    images = textures.ImageCache(pack=options.pack_images)
    groups = material_groups(scene)
    mats = {int(k): make_material(scene.materials[k], scene.source.path, images, built.warnings)
            for k in np.unique(groups).tolist()}
    if len(mats) < len(scene.materials):
        built.warnings.append(f"{len(scene.materials)} materials: the {len(mats)} distinct looks were made "
                              f"(faces keep their own in the {metadata.MATERIAL_ATTR!r} attribute)")
    for mi in range(len(scene.meshes)):
        obj = build_mesh(context, built, mi, mats, groups)
        place_mesh(built, mi, obj, default_world)
        built.meshes[mi] = obj
    images.report(built.warnings)
    if progress:
        progress(2)
    fps = context.scene.render.fps / context.scene.render.fps_base
    if built.armature is not None and options.import_animations and scene.clips:
        exact = channel_mode_exact(built, size)
        built.baked = bool(options.bake or not exact)
        if not options.bake and not exact:
            built.warnings.append("the rest pose cannot hold the bind pose exactly (non-uniform scale or rest "
                                  "from the default pose): animation baked on every frame")
        static = static_channels(built, scene.clips)
        for clip in scene.clips:
            short_clip_warning(built, clip, fps)
        modes = [must_bake(built, clip, fps, built.baked, exact) for clip in scene.clips]
        pre: list = [None] * len(scene.clips)
        resting: frozenset = frozenset()
        if all(modes) and all(c.layer == "ACTION" for c in scene.clips):
            pre = [bake_clip(built, clip, fps) for clip in scene.clips]
            resting = resting_channels(built, scene.clips, pre, size)
        for clip, baked, channels in zip(scene.clips, modes, pre):
            action, slot = build_action(built, clip, fps, baked, static, channels, resting)
            built.actions.append((action, slot, clip))
        span = place_actions(built, fps)
        if options.set_frame_range and span is not None:
            sc = context.scene
            sc.frame_start = int(np.floor(min(span[0], 0.0)))
            sc.frame_end = max(int(np.ceil(span[1] - 1e-6)), sc.frame_start + 1)
    objs = list(built.meshes.values()) + ([built.armature] if built.armature else []) + list(built.empties.values())
    for o in context.view_layer.objects:
        o.select_set(False)
    for o in objs:
        o.select_set(True)
    context.view_layer.objects.active = built.armature or next(iter(built.meshes.values()), None)
    context.view_layer.update()
    return built


def must_bake(built: Built, clip: Clip, fps: float, bake: bool, exact: bool) -> bool:
    """Key every frame: on request, for a clip with its own sampler, when the
    file's keys do not map channel by channel, or when they are too dense
    for F-curves (reported)."""
    if bake or clip.sampler is not None or not exact:
        return True
    if dense_keys(clip, fps):
        built.warnings.append(f"{clip.name}: keys closer than {MIN_KEY_GAP} frame (Blender would merge "
                              f"them): every frame baked")
        return True
    return False


def add_clips(context, arm_obj, skeleton_scene: Scene, clips: list[Clip], *, bone_names: dict[int, str],
              rest: rig.RestSplit, bones: np.ndarray, bake: bool = True, set_frame_range: bool = True) -> Built:
    """Animation files onto an existing armature (built or extracted):
    actions for ``clips``, placed as the clips' layers say."""
    built = Built(skeleton_scene, arm_obj, rest, bones, bone_names)
    fps = context.scene.render.fps / context.scene.render.fps_base
    static = static_channels(built, clips)
    skeleton_scene.clips = clips          # channel_mode_exact looks at the clips' scale keys
    try:
        exact = channel_mode_exact(built, oracle.size(skeleton_scene))
    finally:
        skeleton_scene.clips = []
    for clip in clips:
        short_clip_warning(built, clip, fps)
        action, slot = build_action(built, clip, fps, must_bake(built, clip, fps, bake, exact), static)
        built.actions.append((action, slot, clip))
    acts = [(a, s, c) for a, s, c in built.actions if c.layer == "ACTION"]
    layers = [(a, s, c.layer, c.weight) for a, s, c in built.actions if c.layer != "ACTION"]
    if acts:
        anim_build.assign_action(arm_obj, acts[0][0], acts[0][1])
        for a, _, _ in acts[1:]:
            a.use_fake_user = True
        acts[0][0].use_fake_user = True
    end = max(c.frame_range(fps)[1] for _, _, c in built.actions) if built.actions else 1.0
    if layers:
        end = max(end, place_layers(arm_obj, layers, fps))    # the whole stack plays
    for a, _, _ in built.actions:
        a.use_fake_user = True
    if set_frame_range and built.actions:
        sc = context.scene
        sc.frame_start = 0
        sc.frame_end = max(int(np.ceil(end - 1e-6)), 1)
    return built
