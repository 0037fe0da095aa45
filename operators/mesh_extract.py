# SPDX-License-Identifier: GPL-3.0-or-later
"""Blender mesh objects -> scene meshes (the extractor's mesh pass):
evaluated without the Armature modifier, n-gons kept, the exact corner
normals the builder stored (else Blender's), UVs, point colours, materials
(the builder's mapping, inverted), and weights from the vertex groups that
name bones."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import bpy
import numpy as np

from ..core import faces
from ..scene import Material, Mesh, Skin
from . import attribute_nodes, material_maps, mesh_arrays, metadata, own_binds
from .armature_extract import matrix

if TYPE_CHECKING:
    from .armature_extract import Rig


def _mesh_data(context, obj, apply_modifiers: bool, warnings: list[str]):
    """(mesh, a temporary copy to remove afterwards or None): the mesh
    without armature deformation, with the other modifiers applied on
    request (only when the object has any: otherwise its own mesh). The
    copy is a mesh datablock of its own (``new_from_object``): an evaluated
    mesh would be freed by the view layer update that restores the Armature
    modifiers."""
    others = [m for m in obj.modifiers if m.type != "ARMATURE" and m.show_viewport]
    if not others:
        return obj.data, None
    if not apply_modifiers:
        warnings.append(f"{obj.name}: modifiers not applied ({', '.join(m.name for m in others[:6])}): the mesh "
                        f"is written without them (Apply Modifiers writes it as Blender shows it)")
        return obj.data, None
    shown = [m for m in obj.modifiers if m.show_viewport]
    arm_at = next((i for i, m in enumerate(shown) if m.type == "ARMATURE"), len(shown))
    after = [m.name for m in shown[arm_at:] if m.type != "ARMATURE"]
    if after:
        warnings.append(f"{obj.name}: modifiers after the Armature modifier ({', '.join(after[:6])}) are applied "
                        f"to the mesh before it deforms (a file holds no modifier stack)")
    saved = [(m, m.show_viewport) for m in obj.modifiers if m.type == "ARMATURE"]
    try:
        for m, _ in saved:
            m.show_viewport = False
        dg = context.evaluated_depsgraph_get()
        ev = obj.evaluated_get(dg)
        me = bpy.data.meshes.new_from_object(ev, preserve_all_data_layers=True, depsgraph=dg)
    finally:
        for m, v in saved:
            m.show_viewport = v
        context.view_layer.update()
    return me, me


def vertex_weights(me, obj, bone_joint: dict[str, int]) -> tuple[np.ndarray, np.ndarray, np.ndarray, list]:
    """(vertex, joint, weight) of the vertex groups that name bones (weights
    > 0; by vertex, then group index), and the names of groups that name no
    bone.

    Blender has no bulk read of vertex groups. For an object's own mesh of
    ``bulk_from`` vertices or more the weights are read through a temporary
    object holding a copy of the mesh (arrays shared, not copied), whose
    Geometry Nodes modifier stores each group into a float attribute of the
    evaluated mesh (the same float32 values; the object and its data are
    not touched, so nothing of theirs is evaluated again); otherwise (a
    smaller or evaluated mesh, shape keys, which a copy would duplicate, an
    attribute that could shadow a group's name), vertex by vertex."""
    # vertices: below this, the vertex loop costs less than the bulk path's
    # temporary object and evaluation (bench_rite_blender profiles both)
    bulk_from = 2000
    bulk_floats = 1 << 25       # evaluated attributes at once (128 MB)
    gmap = {g.index: bone_joint.get(g.name) for g in obj.vertex_groups}
    skipped = [g.name for g in obj.vertex_groups if bone_joint.get(g.name) is None]
    V = len(me.vertices)
    named = [(g.name, gmap[g.index]) for g in obj.vertex_groups if gmap[g.index] is not None]

    def read_bulk():
        per_batch = max(1, bulk_floats // max(V, 1))
        tmp = ng = copy = None
        vs, js, ws = [], [], []
        buf = np.empty(V, dtype=np.float32)
        try:
            copy = me.copy()
            tmp = bpy.data.objects.new(".lsio_weights", copy)
            bpy.context.scene.collection.objects.link(tmp)
            mod = cast(bpy.types.NodesModifier, tmp.modifiers.new(".lsio_weights", "NODES"))
            for b0 in range(0, len(named), per_batch):
                batch = named[b0:b0 + per_batch]
                if ng is not None:
                    mod.node_group = None
                    bpy.data.node_groups.remove(ng)
                ng = attribute_nodes.copy_group(".lsio_weights",
                                                [(name, f".lsio_w{k}") for k, (name, _) in enumerate(batch)])
                mod.node_group = ng
                em = tmp.evaluated_get(bpy.context.evaluated_depsgraph_get()).data
                if len(em.vertices) != V:
                    return None
                for k, (_, j) in enumerate(batch):
                    a = em.attributes.get(f".lsio_w{k}")
                    if a is None or a.domain != "POINT" or a.data_type != "FLOAT":
                        return None
                    a.data.foreach_get("value", buf)
                    idx = np.flatnonzero(buf > 0.0)
                    vs.append(idx)
                    js.append(np.full(len(idx), j, dtype=np.int64))
                    ws.append(buf[idx].astype(np.float64))
        except (RuntimeError, TypeError, KeyError, AttributeError):
            return None
        finally:
            if tmp is not None:
                bpy.data.objects.remove(tmp)
            if copy is not None:
                bpy.data.meshes.remove(copy)
            if ng is not None:
                bpy.data.node_groups.remove(ng)
        vv = np.concatenate(vs)
        order = np.argsort(vv, kind="stable")         # by vertex, then group index
        return vv[order], np.concatenate(js)[order], np.concatenate(ws)[order]

    readable = attribute_nodes.group_readable(me)
    if (V >= bulk_from and named and me == obj.data and not me.is_evaluated and me.shape_keys is None
            and all(readable(name) for name, _ in named)):
        got = read_bulk()
        if got is not None:
            return got + (skipped,)
    vv, jj, ww = [], [], []
    for vert in me.vertices:
        for g in vert.groups:
            j = gmap.get(g.group)
            if j is not None and g.weight > 0.0:
                vv.append(vert.index)
                jj.append(j)
                ww.append(g.weight)
    return (np.array(vv, dtype=np.int64), np.array(jj, dtype=np.int64), np.array(ww, dtype=np.float64),
            skipped)


def _normalised(name: str, wv: np.ndarray, ww: np.ndarray, points: np.ndarray, imported: bool,
                warnings: list[str]) -> np.ndarray:
    """Weights whose sum per vertex is not 1. Blender's Armature modifier
    divides them by their sum; RiTE and Direct3D play them as given. A
    mesh made in Blender is written as Blender deforms it (divided by the
    sum); a mesh an import made keeps its weights as they are (the file's:
    a round trip gives the file back). Either way reported, with the count and how
    far the two readings put the vertices apart in the bind pose."""
    V = len(points)
    total = np.bincount(wv, weights=ww, minlength=V)
    off = np.abs(total - 1.0)
    bad = (total > 0) & (off > 1e-6)
    if not bad.any():
        return ww
    centre = points.mean(axis=0) if V else np.zeros(3)
    size = max(float(np.ptp(points, axis=0).max()) if V else 0.0, 1e-30)
    dev = float((off[bad] * np.linalg.norm(points[bad] - centre, axis=1)).max()) / size
    what = f"{name}: the weights of {int(bad.sum())} vertices do not sum to 1 (by up to {float(off[bad].max()):.3g})"
    if imported:
        warnings.append(f"{what}: written as the file had them; Blender divides them by their sum, which "
                        f"moves those vertices by about {dev:.2e} of the model size")
        return ww
    warnings.append(f"{what}: written divided by their sum, as Blender deforms them")
    return ww / np.where(total > 0, total, 1.0)[wv]


def material_of(mat) -> Material:
    """A scene material from a Blender one (the builder's mapping, inverted)."""
    if mat is None:
        return Material("default")
    meta = metadata.load(mat, metadata.MESH_KEY) or {}
    out = Material(mat.name, extras=meta.get("extras") or {})
    bsdf = None
    if mat.node_tree is not None:
        bsdf = next((nd for nd in mat.node_tree.nodes if nd.type == "BSDF_PRINCIPLED"), None)
    if bsdf is None:
        out.color = np.array(tuple(mat.diffuse_color), dtype=np.float64)
    else:
        inp = bsdf.inputs
        rgba = np.array(tuple(inp["Base Color"].default_value), dtype=np.float64)
        rgba[3] = float(inp["Alpha"].default_value)
        out.color = rgba
        rough = float(inp["Roughness"].default_value)
        out.specular_power = float(2.0 / max(rough, 1e-3) ** 2 - 2.0) if rough < 1.0 else 0.0
        level = 0.0
        for label in ("Specular IOR Level", "Specular"):
            if label in inp:
                level = float(np.clip(2.0 * inp[label].default_value, 0.0, 1.0))
                break
        tint = np.ones(3)
        if "Specular Tint" in inp:
            try:
                tint = np.array(tuple(inp["Specular Tint"].default_value)[:3], dtype=np.float64)
            except TypeError:
                pass
        out.specular = tint * level
        key = "Emission Color" if "Emission Color" in inp else "Emission"
        if key in inp:
            em = np.array(tuple(inp[key].default_value)[:3], dtype=np.float64)
            strength = float(inp["Emission Strength"].default_value) if "Emission Strength" in inp else 1.0
            out.emissive = em * strength
    path = _texture_path(mat)
    # the file's own texture name while the image still has the path the import gave it
    out.texture = meta.get("texture") if path is None or path == meta.get("image") else path
    out.maps, out.more_textures = material_maps.maps_of(mat, meta)
    return out


def _texture_path(mat) -> str | None:
    if mat is None or mat.node_tree is None:
        return None
    others = {*material_maps.NODE_NAMES.values()}
    nodes = [nd for nd in mat.node_tree.nodes if nd.type == "TEX_IMAGE" and nd.image is not None
             and nd.name not in others and not nd.name.startswith(material_maps.MORE_NODE.format(""))]
    if not nodes:
        return mat.get("texture_path")
    linked = [nd for nd in nodes if any(lk.to_socket.name == "Base Color" for o in nd.outputs for lk in o.links)]
    return material_maps.image_path((linked or nodes)[0].image)


def _mirror(meta: dict) -> np.ndarray | None:
    """The mirror the builder put into a mesh object's data (x -> -x; the
    object's matrices are free of it), or None."""
    d = meta.get("mirror")
    if isinstance(d, list) and len(d) == 3 and all(abs(abs(float(x)) - 1.0) == 0 for x in d):
        return np.array(d, dtype=np.float64)
    return None


def mesh_of(context, obj, skeleton_rig: Rig | None, materials: dict, scene_materials: list,
            apply_modifiers: bool, warnings: list[str]) -> Mesh:
    """A scene mesh from a mesh object: skinned (vertex groups naming the
    rig's bones, with an Armature modifier on it), rigid under a bone, or
    free (placed by its world matrix)."""
    me, temporary = _mesh_data(context, obj, apply_modifiers, warnings)
    try:
        V, L, F = len(me.vertices), len(me.loops), len(me.polygons)
        co = mesh_arrays.positions(me)
        corners = mesh_arrays.corner_vertices(me)
        starts = np.empty(F, dtype=np.int32)
        me.polygons.foreach_get("loop_start", starts)
        # a face's corners are contiguous, from its loop_start (faces in loop order unless edited)
        order: Any = slice(None)                  # corners already face after face
        if F and np.all(starts[1:] > starts[:-1]) and starts[0] == 0:
            sizes = np.diff(starts, append=np.int32(L))
        else:
            sizes = np.empty(F, dtype=np.int32)
            me.polygons.foreach_get("loop_total", sizes)
            order = np.repeat(starts.astype(np.int64), sizes) + (
                np.arange(int(sizes.sum())) - np.repeat(np.cumsum(sizes) - sizes, sizes))
        if np.linalg.det(matrix(obj.matrix_world)[:3, :3]) < 0:
            # Blender shows an object whose matrix mirrors by its data's winding, a .X reader by the
            # winding after the mirror: the scene's faces are wound as shown where placed, so turned over
            order = np.arange(L)[order][faces.corner_order(sizes, True)]
        mat_idx = mesh_arrays.face_materials(me)
        out = Mesh(obj.name, co.astype(np.float64), sizes.astype(np.int64), corners.astype(np.int64)[order])
        attr = me.attributes.get(metadata.NORMAL_ATTR)
        n = np.empty(3 * L, dtype=np.float32)
        if attr is not None and attr.domain == "CORNER" and len(attr.data) == L and attr.data_type == "FLOAT_VECTOR":
            attr.data.foreach_get("vector", n)
        else:
            me.corner_normals.foreach_get("vector", n)
        corner_n = n.reshape(-1, 3).astype(np.float64)[order]
        length = np.linalg.norm(corner_n, axis=1, keepdims=True)
        out.normals = corner_n / np.where(length > 0, length, 1.0)
        meta = metadata.load(obj, metadata.MESH_KEY) or {}
        mirror = _mirror(meta)
        if mirror is not None:      # the builder's mirror back out of the data (into the matrices below)
            out.positions = out.positions * mirror
            out.normals = out.normals * mirror
        if me.uv_layers.active is not None and L:
            out.uvs = mesh_arrays.uv_map(me, me.uv_layers.active).astype(np.float64)[order]
            out.uv_sets = {layer.name: mesh_arrays.uv_map(me, layer).astype(np.float64)[order]
                           for layer in me.uv_layers if layer.name != me.uv_layers.active.name}
        ca = me.color_attributes.active_color if hasattr(me.color_attributes, "active_color") else None
        if ca is not None and ca.domain == "POINT":
            c = np.empty(4 * V, dtype=np.float32)
            ca.data.foreach_get("color", c)
            out.colors = c.reshape(-1, 4).astype(np.float64)
        elif ca is not None:
            warnings.append(f"{obj.name}: colour attribute {ca.name!r} on {ca.domain} not exported")
        slots = [s.material for s in obj.material_slots]
        own = me.attributes.get(metadata.MATERIAL_ATTR)
        if slots and own is not None and own.domain == "FACE" and meta.get("materials"):
            # several scene materials shared a Blender material: restore each face's own
            fm = np.empty(F, dtype=np.int32)
            own.data.foreach_get("value", fm)
            slot_mat = [material_of(m) for m in slots]
            names = meta["materials"]
            keys = np.unique(fm).tolist()
            for k in keys:
                info = names.get(str(k), {})
                look = slot_mat[int(np.clip(mat_idx[np.nonzero(fm == k)[0][0]], 0, len(slots) - 1))]
                mat = Material(info.get("name", look.name), look.color, look.specular_power, look.specular,
                               look.emissive, look.texture, info.get("extras") or {}, dict(look.maps),
                               list(look.more_textures))
                materials[("own", obj.name, k)] = len(scene_materials)
                scene_materials.append(mat)
            out.materials = [materials[("own", obj.name, k)] for k in keys]
            out.face_materials = np.searchsorted(np.array(keys), fm).astype(np.int64)
            slots = []
        if slots:
            for m in slots:
                key = m.name if m is not None else None
                if key not in materials:
                    materials[key] = len(scene_materials)
                    scene_materials.append(material_of(m))
            out.materials = [materials[m.name if m is not None else None] for m in slots]
            out.face_materials = np.clip(mat_idx.astype(np.int64), 0, len(slots) - 1)
        out.extras = meta.get("extras") or {}
        world = matrix(obj.matrix_world)
        stored = meta.get("world")
        unmoved = False
        if stored is not None and len(stored) == 16:
            exact = np.array(stored, dtype=np.float64).reshape(4, 4)
            if np.abs(exact - world).max() <= 1e-6 * max(1.0, float(np.abs(exact).max())):
                world = exact            # not moved since the import: the file's own numbers
                unmoved = True
        flip = np.diag(np.append(mirror, 1.0)) if mirror is not None else np.eye(4)
        world = world @ flip
        out.matrix = world
        if skeleton_rig is not None:
            arm = skeleton_rig.obj
            mod = next((m for m in obj.modifiers if m.type == "ARMATURE"
                        and (m.object == arm or own_binds.follows(m.object, arm))), None)
            bone_joint = {n: j for j, n in skeleton_rig.bone_names.items()}
            if mod is not None:
                if mod.use_deform_preserve_volume or mod.use_bone_envelopes or not mod.use_vertex_groups:
                    warnings.append(f"{obj.name}: Armature modifier options other than vertex groups with "
                                    f"linear blending are not exported")
                wv, wj, ww, skipped = vertex_weights(me, obj, bone_joint)
                if skipped:
                    warnings.append(f"{obj.name}: vertex groups without a bone ignored: {', '.join(skipped[:8])}")
                ww = _normalised(obj.name, wv, ww, co.astype(np.float64), bool(meta), warnings)
                joints = np.unique(wj)
                sk = skeleton_rig.skeleton
                ib = np.linalg.inv(sk.bind[joints]) @ world if len(joints) else np.zeros((0, 4, 4))
                if mod.object != arm:       # binds of its own: each joint's correction, in world space
                    fix = own_binds.corrections(mod.object)
                    aw = matrix(arm.matrix_world)
                    names = {j: n for n, j in bone_joint.items()}
                    for k, j in enumerate(joints.tolist()):
                        if names.get(j) in fix:
                            ib[k] = np.linalg.inv(sk.bind[j]) @ aw @ fix[names[j]] @ np.linalg.inv(aw) @ world
                out.skin = Skin(joints, ib, wv, wj, ww)
                parent = int(meta.get("parent", -1))
                if unmoved and 0 <= parent < len(sk) and len(meta.get("matrix", ())) == 16:
                    # the frame it hung from in the file, so a round trip adds none
                    out.parent = parent
                    out.matrix = np.array(meta["matrix"], dtype=np.float64).reshape(4, 4)
            elif obj.parent == arm and obj.parent_type == "BONE" and obj.parent_bone in bone_joint:
                j = bone_joint[obj.parent_bone]
                bi = int(np.nonzero(skeleton_rig.bones == j)[0][0])
                bone = arm.data.bones[obj.parent_bone]
                tail = np.eye(4)
                tail[1, 3] = bone.length
                out.parent = j
                out.matrix = (np.linalg.inv(skeleton_rig.rest.rest_to_bind[bi]) @ tail
                              @ matrix(obj.matrix_parent_inverse) @ matrix(obj.matrix_basis) @ flip)
        if me.shape_keys is not None and len(me.shape_keys.key_blocks) > 1:
            warnings.append(f"{obj.name}: shape keys are not exported (the basis shape is)")
        return out
    finally:
        if temporary is not None:
            bpy.data.meshes.remove(temporary)

