# SPDX-License-Identifier: GPL-3.0-or-later
"""Scene meshes -> Blender meshes (the builder's mesh pass): faces Blender
can hold, UVs, colours and exact normals (:func:`build_mesh`), placement,
parenting and vertex groups (:func:`place_mesh`, :func:`add_vertex_groups`);
the materials they use come from ``material_build``."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import bpy
import numpy as np
from mathutils import Matrix

from ..core import faces, rebind, sampling, skinning
from ..io.errors import note
from ..scene import Mesh, Scene, evaluate
from ..scene.weld import Weld, weld_note, welded
from . import attribute_nodes, material_build, mesh_arrays, mesh_weld, metadata, own_binds, textures

if TYPE_CHECKING:
    from .built import Built

#: the mirror baked into the data of a mesh object whose placement mirrors
#: (object space x -> -x): the object's matrix times it is free of mirrors
MIRROR = np.array([-1.0, 1.0, 1.0])
def valid_faces(mesh: Mesh, warnings: list[str], label: str):
    """The faces of ``mesh`` Blender can hold (``core.faces.valid_faces``:
    kept faces, their corners' indices into mesh.corners, sizes, loop
    starts); the ones skipped noted in ``warnings`` under ``label``."""
    kept, src, sizes, starts, degenerate, repeated = faces.valid_faces(mesh.face_sizes, mesh.corners,
                                                                       len(mesh.positions))
    if degenerate:          # nothing to see or do: the console says it
        note(warnings, f"{label}: {degenerate} degenerate face(s) skipped")
    if repeated:
        note(warnings, f"{label}: {repeated} duplicate face(s) (the same vertices as another) skipped")
    return kept, src, sizes, starts


def build_mesh(context, built: Built, mi: int, materials: dict[int, Any], groups: np.ndarray, kept_faces: tuple,
               placement: rebind.SkinPlacement | None = None, mirror: bool = False,
               weld: Weld | None = None) -> tuple[Any, dict]:
    """A mesh object for scene mesh ``mi`` and its metadata, for
    :func:`place_mesh` to complete and store; a skinned mesh's vertices as
    ``placement`` stores them (re-expressed vertices' normals turned with
    them), times :data:`MIRROR` with ``mirror`` (:func:`mirrored`). Shading
    uses the normals read in mesh space (``Mesh.normal_matrix``) and made to
    agree with their faces (``core.faces.agreeing_normals``); the
    :data:`metadata.NORMAL_ATTR` attribute keeps the file's own. With
    ``weld`` its welded mesh is built (seams and sharp edges marked:
    :func:`.mesh_weld.mark_edges`), the scene vertices' Blender vertices
    stored (:func:`.metadata.store_weld`). ``kept_faces``: the scene mesh's
    :func:`valid_faces` (the welded mesh's as well)."""
    scene = built.scene
    m = scene.meshes[mi] if weld is None else weld.mesh
    me = bpy.data.meshes.new(m.name)
    V = len(m.positions)
    kept, src, sizes, starts = kept_faces

    def corners_of(a, dtype):       # a per-corner array of the kept faces (as it is when all are kept)
        a = np.asarray(a, dtype=dtype)
        return a if len(kept) == len(m.face_sizes) else a[src]

    loop_v = corners_of(m.corners, np.int64)
    me.vertices.add(V)
    positions = np.asarray(m.positions if placement is None else placement.positions, dtype=np.float64)
    if mirror:
        positions = positions * MIRROR
    mesh_arrays.write(me, "position", "FLOAT_VECTOR", "POINT", positions)
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
    uvs = corners_of(m.uvs, np.float32) if m.uvs is not None and len(loop_v) else None
    if uvs is not None:
        mesh_arrays.set_uv_map(me, "UVMap", uvs)
        for name, uv in m.uv_sets.items():          # further UV sets after it (the first stays active)
            mesh_arrays.set_uv_map(me, name, corners_of(uv, np.float32))
    if m.colors is not None:
        colors: Any = me.color_attributes.new("Color", "FLOAT_COLOR", "POINT")
        colors.data.foreach_set("color", np.asarray(m.colors, dtype=np.float32).reshape(-1))
    me.update(calc_edges=True)
    shown = None
    if m.normals is not None and len(loop_v):
        n = corners_of(m.normals, np.float64)
        if placement is not None and placement.moved.any():
            turn = np.linalg.inv(placement.vertex_transform[loop_v]).swapaxes(1, 2)   # normals: inverse transpose
            n = np.einsum("nij,nj->ni", turn, n)
            n /= np.maximum(np.linalg.norm(n, axis=1, keepdims=True), 1e-30)
        shown = n
        if m.normal_matrix is not None:
            shown = n @ np.asarray(m.normal_matrix, dtype=np.float64).T
            shown /= np.maximum(np.linalg.norm(shown, axis=1, keepdims=True), 1e-30)
        if mirror:          # (a mirror turns the faces over, their normals stay out)
            n, shown = n * MIRROR, shown * MIRROR
        shown, _ = faces.agreeing_normals(shown, positions, sizes, loop_v)
        n, shown = n.astype(np.float32), shown.astype(np.float32)
    if weld is not None:
        metadata.store_weld(me, weld.vertex)
        if len(loop_v):     # (the welded mesh has the scene mesh's faces: corners_of picks the same corners)
            mesh_weld.mark_edges(me, sizes, uvs, shown, corners_of(scene.meshes[mi].corners, np.int64))
    if shown is not None:
        per_vertex = np.zeros((V, 3), dtype=np.float32)
        per_vertex[loop_v] = shown
        if np.array_equal(per_vertex[loop_v], shown):      # one normal per vertex: the cheaper per-vertex call
            me.normals_split_custom_set_from_vertices(per_vertex)
        else:
            me.normals_split_custom_set(shown)
        # the file's exact normals, for a lossless export (custom normals are stored quantised)
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
    return obj, meta


def set_local_matrices(objs: list, ms: np.ndarray) -> None:
    """Each object's matrix relative to its parent (``ms`` (N, 4, 4)): as
    location, rotation and scale when that holds it (within 1e-9), else
    (shear) in the parent inverse matrix, which Blender keeps whole. Decided
    for all at once (a file's frames are many small meshes')."""
    ms = np.asarray(ms, dtype=np.float64).reshape(-1, 4, 4)
    if not len(objs):
        return
    t, r, s = sampling.decompose_trs(ms)
    off = np.abs(sampling.compose_trs(t, r, s) - ms).max(axis=(1, 2))
    trs = off <= 1e-9 * np.maximum(1.0, np.abs(ms).max(axis=(1, 2)))
    for obj, m, plain in zip(objs, ms, trs.tolist()):
        if plain:
            obj.matrix_parent_inverse = Matrix.Identity(4)
            obj.matrix_basis = Matrix(m.tolist())
        else:
            obj.matrix_parent_inverse = Matrix(m.tolist())
            obj.matrix_basis = Matrix.Identity(4)


def skin_placement(built: Built, mi: int, default_world: np.ndarray, size: float,
                   mesh: Mesh | None = None) -> rebind.SkinPlacement | None:
    """Where a skinned mesh goes on the built armature (``core.rebind``), or
    None for a mesh that is not skinned to it; scene mesh ``mi`` or the
    ``mesh`` built for it (welded: ``scene.weld``)."""
    m = built.scene.meshes[mi] if mesh is None else mesh
    if m.skin is None or built.armature is None or built.rest is None:
        return None
    J = built.scene.n_joints
    arm_bind = np.tile(np.eye(4), (J, 1, 1))
    arm_bind[built.bones] = built.rest.bind
    sk = m.skin
    mw = evaluate.placement(built.scene, m, default_world)
    return rebind.place_skin(m.positions, sk.joints, sk.inverse_bind, sk.vertex, sk.joint, sk.weight, arm_bind, mw,
                             1e-6 * size)


def skin_binds(scene: Scene, default_world: np.ndarray) -> np.ndarray:
    """The skeleton's binds with one bind per joint that several meshes bind
    differently (``core.rebind.choose_binds``)."""
    sk = scene.skeleton
    assert sk is not None
    skins = []
    for m in scene.meshes:
        if m.skin is not None and len(m.skin.joints):
            counts = np.bincount(np.searchsorted(m.skin.joints, m.skin.joint), minlength=len(m.skin.joints))
            skins.append((m.skin.joints, m.skin.inverse_bind, evaluate.placement(scene, m, default_world), counts))
    return rebind.choose_binds(sk.bind, default_world, skins) if len(skins) > 1 else sk.bind


def _placed(built: Built, mi: int, default_world: np.ndarray | None,
            placement: rebind.SkinPlacement | None) -> np.ndarray:
    """Where mesh ``mi``'s object puts its data at the default pose."""
    m = built.scene.meshes[mi]
    if placement is not None:
        return placement.matrix
    if default_world is not None:
        return evaluate.placement(built.scene, m, default_world)
    return np.asarray(m.matrix, dtype=np.float64)


def mirrored(placed: np.ndarray) -> bool:
    """True when a mesh object placed at ``placed`` (its world matrix at the
    default pose, :func:`_placed`) would be placed through a mirror (a
    negative determinant; under a bone too, whose pose and rest split cancel
    out). Blender shows a mirrored object's faces as its own space winds
    them, Direct3D as the screen does: such a mesh gets :data:`MIRROR` in
    its data instead, so that Blender shows the side Direct3D shows
    (``io/xfile/facing.py``)."""
    return bool(np.linalg.det(placed[:3, :3]) < 0)


def place_mesh(built: Built, mi: int, obj, meta: dict, placed: np.ndarray,
               placement: rebind.SkinPlacement | None = None, mirror: bool = False,
               mesh: Mesh | None = None) -> np.ndarray | None:
    """Skinned meshes: parented to the armature where ``placement`` puts
    them, vertex groups, Armature modifier (of binds of their own when their
    joints disagree). Rigid meshes under a bone: parented to it. Anything
    else: at its default-pose placement ``placed`` (:func:`_placed`). With
    ``mirror`` the data holds :data:`MIRROR` and every matrix is taken
    times it (recorded as "mirror"
    in the mesh's metadata, for export). The exact placement is kept in the
    mesh's metadata (Blender stores float32), stored with what ``meta``
    (:func:`build_mesh`'s) holds. Returns the matrix relative to
    the parent the object still needs (:func:`set_local_matrices`), or None.
    ``mesh``: the mesh built for scene mesh ``mi`` when not that one (welded)."""
    scene = built.scene
    m = scene.meshes[mi] if mesh is None else mesh
    arm = built.armature
    flip = np.diag(np.append(MIRROR, 1.0)) if mirror else np.eye(4)
    mw = placed @ flip
    meta = dict(meta)
    meta.update(world=np.asarray(mw).reshape(-1), parent=int(m.parent),
                matrix=np.asarray(m.matrix, dtype=np.float64).reshape(-1))
    if mirror:
        meta["mirror"] = MIRROR
    metadata.store(obj, metadata.MESH_KEY, meta)
    if m.skin is not None and arm is not None:
        obj.parent = arm
        add_vertex_groups(obj, m, built)
        mod = obj.modifiers.new("Armature", "ARMATURE")
        mod.object = arm
        if placement is not None and not placement.exact:
            mod.object = own_binds.build(built, obj, m, placement)
        return mw
    if arm is not None and m.parent in built.bone_names:
        bi = int(np.nonzero(built.bones == m.parent)[0][0])
        bone = arm.data.bones[built.bone_names[m.parent]]
        obj.parent = arm
        obj.parent_type = "BONE"
        obj.parent_bone = bone.name
        tail = np.eye(4)
        tail[1, 3] = -bone.length
        return tail @ built.rest.rest_to_bind[bi] @ np.asarray(m.matrix) @ flip
    if m.parent in built.empties:
        obj.parent = built.empties[m.parent]
        return np.asarray(m.matrix) @ flip
    obj.matrix_basis = Matrix(mw.tolist())
    return None


def add_vertex_groups(obj, m: Mesh, built: Built) -> None:
    """One vertex group per skin joint that is a bone; several weights of one
    (vertex, joint) pair add up (as in ``scene.evaluate``'s ``core.skinning.Influences``).
    A vertex with a weight above 1, which a vertex group cannot hold, has
    its weights divided by its largest (reported): the Armature modifier
    divides a vertex's weights by their sum, as ``scene.evaluate`` does, so the
    deformation is the same; weights below 0 are stored as 0.

    ``VertexGroup.add`` sets one weight per call: generated weights make a
    few batches of equal weight, a painted mesh about one per vertex and
    group. From ``bulk_from`` distinct weights on, the positive weights go
    in bulk instead: a float point attribute per group, stored into the
    groups by a temporary Geometry Nodes modifier (*Store Named Attribute*:
    the same float32 values, no entry for a zero), applied. Zero weights and
    groups whose name an attribute could shadow are still added with
    ``VertexGroup.add``; if Blender refuses the bulk path, everything is."""
    # the bulk path costs a modifier applied, about as much as this many add calls
    # (bench_rite_blender profiles both), then little per vertex and group
    bulk_from = 2000
    bulk_floats = 1 << 25       # temporary attributes at once (128 MB)
    sk = m.skin
    groups = {}          # joint -> (name, index): applying a modifier renews the groups' RNA
    for j in sk.joints.tolist():
        if j in built.bone_names:
            g = obj.vertex_groups.new(name=built.bone_names[j])
            groups[j] = (g.name, g.index)
    if not len(sk.vertex):
        return
    v, j, w = skinning.sum_pairs(sk.vertex.astype(np.int64), sk.joint.astype(np.int64), sk.weight)
    w = w.astype(np.float32)
    if len(v) != len(sk.vertex):
        note(built.warnings, f"mesh {m.name!r}: {len(sk.vertex) - len(v)} repeated (vertex, joint) weights "
                             f"added up")
    top = np.zeros(int(v.max()) + 1 if len(v) else 0, dtype=np.float32)
    np.maximum.at(top, v, w)
    over = top > 1.0
    if over.any():
        w = np.where(over[v], w / top[v], w).astype(np.float32)
        built.warnings.append(f"mesh {m.name!r}: {int(over.sum())} vertices have a weight above 1 (up to "
                              f"{float(top.max()):.3g}): stored divided by their largest, as a vertex group holds "
                              f"at most 1 (the same deformation: Blender divides weights by their sum)")
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
            # the modifier by its name only: applying it frees it, and its Python object then
            # reads freed memory (Blender 4.5 raised UnicodeDecodeError on ``mod.name``)
            attrs, ng, mod_name, ok = [], None, None, False
            try:
                for k in range(len(batch)):
                    a = me.attributes.new(f".lsio_vg{k}", "FLOAT", "POINT")
                    attrs.append(a.name)
                    a.data.foreach_set("value", dense[k])
                del dense
                ng = attribute_nodes.copy_group(".lsio_vertex_groups",
                                                [(name, groups[jj][0]) for name, jj in zip(attrs, batch.tolist())])
                mod = cast(bpy.types.NodesModifier, obj.modifiers.new(".lsio_vertex_groups", "NODES"))
                mod_name = mod.name
                mod.node_group = ng
                mod.show_viewport = False    # applied all the same; the depsgraph need not evaluate it first
                del mod
                with bpy.context.temp_override(object=obj, active_object=obj):
                    bpy.ops.object.modifier_apply(modifier=mod_name)
                ok = obj.modifiers.get(mod_name) is None
            except (RuntimeError, TypeError, KeyError, AttributeError):
                ok = False
            finally:
                left = obj.modifiers.get(mod_name) if mod_name is not None else None
                if left is not None:
                    obj.modifiers.remove(left)
                for name in attrs:
                    a = me.attributes.get(name)
                    if a is not None:
                        me.attributes.remove(a)
                if ng is not None:
                    bpy.data.node_groups.remove(ng)
            if not ok:
                return False
        return True

    if len(w) >= bulk_from and not len(obj.modifiers) and _distinct_at_least(w, bulk_from):
        readable = attribute_nodes.group_readable(obj.data)
        usable = [jj for jj, (name, _) in groups.items() if readable(name)]
        sel = (w > 0.0) & np.isin(j, np.array(usable, dtype=np.int64))
        if sel.any() and store_bulk(sel):
            v, j, w = v[~sel], j[~sel], w[~sel]
    order = np.lexsort((v, w, j))
    v, j, w = v[order], j[order], w[order]
    brk = np.nonzero((np.diff(j) != 0) | (np.diff(w) != 0))[0] + 1
    vgroups = list(obj.vertex_groups)       # indexing the collection walks its list: walk it once
    for lo, hi in zip(np.r_[0, brk], np.r_[brk, len(v)]):
        if hi > lo:
            vgroups[groups[int(j[lo])][1]].add(v[lo:hi].tolist(), float(w[lo]), "REPLACE")


def _distinct_at_least(values: np.ndarray, n: int) -> bool:
    """Whether ``values`` hold at least ``n`` distinct values (a leading
    part usually tells, without sorting them all)."""
    return len(np.unique(values[:8 * n])) >= n or (len(values) > 8 * n and len(np.unique(values)) >= n)


def build_meshes(context, built: Built, pack_images: bool, default_world: np.ndarray | None,
                 size: float = 1.0) -> None:
    """The scene's materials (``material_build``) and meshes, each placed by :func:`place_mesh`; reports the skinned
    meshes whose vertices were re-expressed in the armature's bind pose or
    that got binds of their own."""
    scene = built.scene
    images = textures.ImageCache(pack=pack_images)
    groups, mats = material_build.build_materials(scene, images, built.warnings)
    moved, own, flipped, welds = [], [], [], []
    local: list[tuple[Any, np.ndarray]] = []       # objects still to place relative to their parents
    for mi in range(len(scene.meshes)):
        kept_faces = valid_faces(scene.meshes[mi], built.warnings, f"mesh {scene.meshes[mi].name!r}")
        weld = welded(scene.meshes[mi], kept_faces)
        mesh = None if weld is None else weld.mesh
        placement = skin_placement(built, mi, default_world, size, mesh) if default_world is not None else None
        placed = _placed(built, mi, default_world, placement)
        mirror = mirrored(placed)
        obj, meta = build_mesh(context, built, mi, mats, groups, kept_faces, placement, mirror, weld)
        m_local = place_mesh(built, mi, obj, meta, placed, placement, mirror, mesh)
        if weld is not None:
            welds.append(weld_note(obj.name, scene.meshes[mi], weld))
        if m_local is not None:
            local.append((obj, m_local))
        built.meshes[mi] = obj
        if mirror:
            flipped.append(repr(obj.name))
        if placement is not None and not placement.exact:
            own.append(f"{obj.name!r} ({int(placement.conflict.sum())} vertices)")
        elif placement is not None and placement.moved.any():
            moved.append(f"{obj.name!r} ({int(placement.moved.sum())} vertices)")
    set_local_matrices([o for o, _ in local], np.array([m for _, m in local]))
    if moved:
        built.warnings.append(f"{len(moved)} skinned mesh(es) bound in another pose than the armature's: their "
                              f"vertices re-expressed in its bind pose (exact): {', '.join(moved[:8])}")
    if flipped:
        note(built.warnings, f"{len(flipped)} mesh(es) placed through a mirror: the mirror is in their vertices, "
                             f"their objects' matrices are free of it, so their faces show the side Direct3D "
                             f"shows (export writes the file's own back): {', '.join(flipped[:8])}"
                             f"{' ...' if len(flipped) > 8 else ''}")
    if welds:       # nothing to do: the console says it
        note(built.warnings, f"vertices welded (the Weld Vertices option): {'; '.join(welds[:8])}"
                             f"{' ...' if len(welds) > 8 else ''}")
    if own:
        built.warnings.append(f"{len(own)} skinned mesh(es) whose joints' binds differ from the armature's in "
                              f"ways no vertex position can absorb deform with binds of their own (an armature "
                              f"'<mesh>_binds' that follows the rig; exact): {', '.join(own[:8])}")
    material_build.report_maps(scene, mats, built.warnings)
    images.report(built.warnings)
