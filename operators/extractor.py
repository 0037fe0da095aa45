# SPDX-License-Identifier: GPL-3.0-or-later
"""The one extractor: Blender data -> a scene (``scene.Scene``) that any
format's writer takes. The inverse of ``builder``.

* the armature's bones become the skeleton; a rig made by the builder gives
  back the file's joints (names, default pose, bind matrices, extras and the
  axis conversion, from :mod:`.metadata`), so that exporting to the format
  it came from writes the file's own numbers;
* meshes: evaluated without the Armature modifier, n-gons kept, the exact
  corner normals the builder stored (else Blender's), UVs, point colours,
  materials, and weights from the vertex groups that name bones;
* actions become clips: each animated bone's channels at its keyed frames
  when Blender's interpolation of them is linear (exact), else at every
  frame of the action's range.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import bpy
import numpy as np

from ..core import quat, rig, sampling
from ..scene import AxisConversion, Clip, Material, Mesh, Scene, Skeleton, Skin, Source
from . import attribute_nodes, mesh_arrays, metadata


class ExtractError(ValueError):
    """Nothing (or something impossible) to export: the message is user-facing."""


def _m(x) -> np.ndarray:
    return np.array(x, dtype=np.float64).reshape(4, 4)


@dataclass
class Rig:
    """An armature as a skeleton: joint of each bone, the rest split, and the
    scene holding the skeleton (its source says which format made it)."""

    obj: Any                                 # the armature object
    scene: Scene
    bones: np.ndarray                        # joint index of each bone, parents first
    bone_names: dict[int, str]               # joint -> bone name
    rest: rig.RestSplit
    warnings: list[str] = field(default_factory=list)

    @property
    def skeleton(self) -> Skeleton:
        assert self.scene.skeleton is not None     # a Rig is made from an armature
        return self.scene.skeleton


def _bones_parents_first(arm):
    order = []
    stack = [b for b in arm.bones if b.parent is None][::-1]
    while stack:
        b = stack.pop()
        order.append(b)
        stack.extend(list(b.children)[::-1])
    return order


def rig_of(arm_obj) -> Rig:
    """The skeleton of an armature: the builder's stored joints when the rig
    came from a file (and its bones still exist), else one joint per bone
    (bind = rest, default pose = rest)."""
    arm_world = _m(arm_obj.matrix_world)
    bones_bl = _bones_parents_first(arm_obj.data)
    rest_arm = {b.name: _m(b.matrix_local) for b in bones_bl}
    meta = metadata.load(arm_obj, metadata.RIG_KEY)
    if meta and all(n in rest_arm for n in meta.get("bones", {}).values()):
        names = list(meta["names"])
        J = len(names)
        local = np.array(meta["local"], dtype=np.float64).reshape(J, 4, 4)
        bind = np.array(meta["bind"], dtype=np.float64).reshape(J, 4, 4)
        sk = Skeleton(names, np.array(meta["parents"]), local, bind, np.array(meta["has_bind"], dtype=bool),
                      extras=meta.get("extras") or {})
        bone_names = {int(j): n for j, n in meta["bones"].items()}
        order = {int(j): i for i, j in enumerate(sk.order)}
        bones = np.array(sorted(bone_names, key=lambda j: order[j]), dtype=np.int64)
        axes = AxisConversion.from_json(meta["axes"])
        scene = Scene(arm_obj.name, sk, source=Source(meta.get("format", "blender"), meta.get("path", ""), axes),
                      extras=meta.get("scene_extras") or {})
        K = np.array(meta["K"], dtype=np.float64).reshape(-1, 4, 4) if "K" in meta else None
        rest = np.array([arm_world @ rest_arm[bone_names[int(j)]] for j in bones]).reshape(-1, 4, 4)
        if K is not None and len(K) == len(bones):
            sk.bind[bones] = rest @ K      # the bones may have been edited since: follow them
        pos = {int(j): i for i, j in enumerate(bones)}
        parent = np.array([pos.get(int(sk.parents[j]), -1) for j in bones], dtype=np.int64)
        return Rig(arm_obj, scene, bones, bone_names, rig.RestSplit(rest, sk.bind[bones], parent))
    names = [b.name for b in bones_bl]
    index = {n: i for i, n in enumerate(names)}
    parents = np.array([index[b.parent.name] if b.parent else -1 for b in bones_bl], dtype=np.int64)
    rest = np.array([arm_world @ rest_arm[n] for n in names]).reshape(-1, 4, 4)
    has_p = (parents >= 0)[:, None, None]
    local = np.linalg.inv(np.where(has_p, rest[np.maximum(parents, 0)], np.eye(4))) @ rest
    sk = Skeleton(names, parents, local, rest.copy(), np.ones(len(names), dtype=bool))
    scene = Scene(arm_obj.name, sk, source=Source("blender", "", AxisConversion()))
    bones = np.arange(len(names), dtype=np.int64)
    return Rig(arm_obj, scene, bones, dict(enumerate(names)), rig.RestSplit(rest, rest, parents))


# ---------------------------------------------------------------------------
# meshes

def _mesh_data(context, obj, apply_modifiers: bool):
    """The mesh without armature deformation (other modifiers applied on request)."""
    if not apply_modifiers:
        return obj.data, None
    saved = [(m, m.show_viewport) for m in obj.modifiers if m.type == "ARMATURE"]
    try:
        for m, _ in saved:
            m.show_viewport = False
        dg = context.evaluated_depsgraph_get()
        ev = obj.evaluated_get(dg)
        return ev.to_mesh(preserve_all_data_layers=True, depsgraph=dg), ev
    finally:
        for m, v in saved:
            m.show_viewport = v
        context.view_layer.update()


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
    from typing import cast

    bulk_from = 2000            # vertices (the loop costs ~1 us per vertex and group entry)
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
    out.texture = _texture_path(mat) or meta.get("texture")
    return out


def _texture_path(mat) -> str | None:
    if mat is None or mat.node_tree is None:
        return None
    nodes = [nd for nd in mat.node_tree.nodes if nd.type == "TEX_IMAGE" and nd.image is not None]
    if not nodes:
        return mat.get("texture_path")
    linked = [nd for nd in nodes if any(lk.to_socket.name == "Base Color" for o in nd.outputs for lk in o.links)]
    img = (linked or nodes)[0].image
    raw = img.filepath or img.name
    return bpy.path.abspath(raw, library=img.library) if raw.startswith("//") else raw


def mesh_of(context, obj, skeleton_rig: Rig | None, materials: dict, scene_materials: list,
            apply_modifiers: bool, warnings: list[str]) -> Mesh:
    """A scene mesh from a mesh object: skinned (vertex groups naming the
    rig's bones, with an Armature modifier on it), rigid under a bone, or
    free (placed by its world matrix)."""
    me, ev = _mesh_data(context, obj, apply_modifiers)
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
        if me.uv_layers.active is not None and L:
            out.uvs = mesh_arrays.uv_map(me, me.uv_layers.active).astype(np.float64)[order]
        ca = me.color_attributes.active_color if hasattr(me.color_attributes, "active_color") else None
        if ca is not None and ca.domain == "POINT":
            c = np.empty(4 * V, dtype=np.float32)
            ca.data.foreach_get("color", c)
            out.colors = c.reshape(-1, 4).astype(np.float64)
        elif ca is not None:
            warnings.append(f"{obj.name}: colour attribute {ca.name!r} on {ca.domain} not exported")
        slots = [s.material for s in obj.material_slots]
        meta = metadata.load(obj, metadata.MESH_KEY) or {}
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
                               look.emissive, look.texture, info.get("extras") or {})
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
        world = _m(obj.matrix_world)
        stored = meta.get("world")
        unmoved = False
        if stored is not None and len(stored) == 16:
            exact = np.array(stored, dtype=np.float64).reshape(4, 4)
            if np.abs(exact - world).max() <= 1e-6 * max(1.0, float(np.abs(exact).max())):
                world = exact            # not moved since the import: the file's own numbers
                unmoved = True
        out.matrix = world
        if skeleton_rig is not None:
            arm = skeleton_rig.obj
            mod = next((m for m in obj.modifiers if m.type == "ARMATURE" and m.object == arm), None)
            bone_joint = {n: j for j, n in skeleton_rig.bone_names.items()}
            if mod is not None:
                if mod.use_deform_preserve_volume or mod.use_bone_envelopes or not mod.use_vertex_groups:
                    warnings.append(f"{obj.name}: Armature modifier options other than vertex groups with "
                                    f"linear blending are not exported")
                wv, wj, ww, skipped = vertex_weights(me, obj, bone_joint)
                if skipped:
                    warnings.append(f"{obj.name}: vertex groups without a bone ignored: {', '.join(skipped[:8])}")
                joints = np.unique(wj)
                sk = skeleton_rig.skeleton
                ib = np.linalg.inv(sk.bind[joints]) @ world if len(joints) else np.zeros((0, 4, 4))
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
                out.matrix = (np.linalg.inv(skeleton_rig.rest.K[bi]) @ tail @ _m(obj.matrix_parent_inverse)
                              @ _m(obj.matrix_basis))
        if me.shape_keys is not None and len(me.shape_keys.key_blocks) > 1:
            warnings.append(f"{obj.name}: shape keys are not exported (the basis shape is)")
        return out
    finally:
        if ev is not None:
            ev.to_mesh_clear()


# ---------------------------------------------------------------------------
# actions

def action_channels(action, bone_names) -> dict:
    """{bone: {property: {index: fcurve}}} of an action's pose-bone F-curves (any slot)."""
    out: dict = {}
    for layer in action.layers:
        for strip in layer.strips:
            for bag in strip.channelbags:
                for fc in bag.fcurves:
                    path = fc.data_path
                    if not path.startswith('pose.bones["'):
                        continue
                    bone = path[len('pose.bones["'):].split('"]', 1)[0]
                    bone = bone.replace('\\"', '"').replace("\\\\", "\\")
                    prop = path.rsplit(".", 1)[-1]
                    if bone in bone_names:
                        out.setdefault(bone, {}).setdefault(prop, {})[fc.array_index] = fc
    return out


def rig_actions(arm_obj, bone_names) -> list:
    """Actions animating the armature's bones: its NLA tracks' first (track
    order), then the active action, then the others (name order)."""
    names = set(bone_names)
    out = []
    ad = arm_obj.animation_data
    if ad is not None:
        for track in ad.nla_tracks:
            for st in track.strips:
                if st.action is not None and st.action not in out:
                    out.append(st.action)
        if ad.action is not None and ad.action not in out:
            out.append(ad.action)
    for a in bpy.data.actions:
        if a not in out:
            out.append(a)
    return [a for a in out if action_channels(a, names)]


def fcurve_values(fc, frames: np.ndarray) -> np.ndarray:
    """An F-curve at ``frames``: numpy for linear curves without modifiers
    (the same values Blender computes), ``fc.evaluate`` otherwise."""
    n = len(fc.keyframe_points)
    if n and not len(fc.modifiers):
        interp = np.empty(n, dtype=np.int32)
        fc.keyframe_points.foreach_get("interpolation", interp)
        if n == 1 or np.all(interp[:-1] == 1) and fc.extrapolation == "CONSTANT":
            co = np.empty(2 * n, dtype=np.float32)
            fc.keyframe_points.foreach_get("co", co)
            return np.interp(frames, co[0::2].astype(np.float64), co[1::2].astype(np.float64))
    return np.array([fc.evaluate(float(f)) for f in frames], dtype=np.float64)


def _linear_keys(ch: dict) -> np.ndarray | None:
    """The keyed frames of a bone's curves when all of them are linear
    without modifiers (sampling only them is exact), else None."""
    frames = []
    for chan in ch.values():
        for fc in chan.values():
            if len(fc.modifiers):
                return None
            n = len(fc.keyframe_points)
            if n == 0:
                continue
            co = np.empty(2 * n, dtype=np.float32)
            fc.keyframe_points.foreach_get("co", co)
            if n > 1:
                interp = np.empty(n, dtype=np.int32)
                fc.keyframe_points.foreach_get("interpolation", interp)
                if np.any(interp[:-1] != 1):
                    return None
            frames.append(co[0::2].astype(np.float64))
    return np.unique(np.concatenate(frames)) if frames else None


def _channel(chan: dict | None, n: int, frames: np.ndarray, current) -> np.ndarray:
    out = np.empty((len(frames), n))
    for i in range(n):
        fc = chan.get(i) if chan else None
        out[:, i] = current[i] if fc is None else fcurve_values(fc, frames)
    return out


def _basis_rotation(pb, ch: dict, frames) -> np.ndarray:
    mode = pb.rotation_mode
    if mode == "QUATERNION":
        wxyz = _channel(ch.get("rotation_quaternion"), 4, frames, tuple(pb.rotation_quaternion))
        return np.concatenate((wxyz[:, 1:], wxyz[:, :1]), axis=1)
    if mode == "AXIS_ANGLE":
        aa = _channel(ch.get("rotation_axis_angle"), 4, frames, tuple(pb.rotation_axis_angle))
        axis = aa[:, 1:]
        norm = np.linalg.norm(axis, axis=1, keepdims=True)
        axis = np.where(norm > 0, axis / np.where(norm > 0, norm, 1.0), [[0.0, 1.0, 0.0]])
        return quat.from_axis_angle(axis, aa[:, 0])
    from mathutils import Euler

    eul = _channel(ch.get("rotation_euler"), 3, frames, tuple(pb.rotation_euler))
    q = [Euler(tuple(v), mode).to_quaternion() for v in eul]
    return np.array([(e.x, e.y, e.z, e.w) for e in q], dtype=np.float64).reshape(-1, 4)


def clip_of(action, r: Rig, fps: float, warnings: list[str]) -> Clip | None:
    """A clip from an action: the local channels of the joints whose bones it
    animates, at each bone's keyed frames when that is exact, else at every
    frame of the action's range (quaternion rotation keys interpolate per
    component in Blender: the clip's rotation mode is "nlerp")."""
    chans = action_channels(action, set(r.bone_names.values()))
    if not chans:
        return None
    meta = metadata.load(action, metadata.CLIP_KEY) or {}
    f0, f1 = (float(x) for x in action.frame_range)
    every = np.arange(np.floor(f0), np.ceil(f1) + 0.5)
    sk = r.skeleton
    rs = r.rest
    pbs = r.obj.pose.bones
    joint_of = {n: j for j, n in r.bone_names.items()}
    heads = rs.rest[:, :3, 3]
    extent = float(np.linalg.norm(heads.max(0) - heads.min(0))) if len(heads) else 1.0
    # where K is a similarity the builder's channel map is linear: invert it
    similar = rs.similarity_k(max(extent, 1e-6))
    turned = rs.turned()
    tracks: dict[str, tuple[list, list, list]] = {"r": ([], [], []), "t": ([], [], []), "s": ([], [], [])}
    animated = np.zeros(len(sk), dtype=bool)
    bone_index = {int(j): i for i, j in enumerate(r.bones)}
    for bone, ch in chans.items():
        j = joint_of[bone]
        bi = bone_index[j]
        pb = pbs[bone]
        frames = _linear_keys(ch)
        if frames is None:
            frames = every
        if pb.bone.use_connect:
            loc = np.zeros((len(frames), 3))
        else:
            loc = _channel(ch.get("location"), 3, frames, tuple(pb.location))
        rot = _basis_rotation(pb, ch, frames)
        scl = _channel(ch.get("scale"), 3, frames, tuple(pb.scale))
        uniform = np.ptp(scl, axis=1).max() <= 1e-6 * max(float(np.abs(scl).max()), 1e-30)
        if similar[bi] and (uniform or not turned[bi]):
            # the builder's channel map, inverted linearly (keeps quaternion signs)
            lt = np.einsum("ij,fj->fi", np.linalg.inv(rs.Ra[bi]), loc - rs.A[bi, :3, 3]) / rs.ka[bi]
            lr = quat.mul(quat.mul(quat.conj(rs.qa[bi]), rot), rs.qk[bi])
            ls = scl * (rs.k[bi] / rs.ka[bi])
        else:
            basis = sampling.compose_trs(loc, quat.normalize(rot), scl)
            world = _world_of_bone(r, bi, basis, frames, chans, fps)
            p = sk.parents[j]
            pw = _world_of_joint(r, p, frames, chans, fps) if p >= 0 else np.eye(4)[None]
            lt, lr, ls = sampling.decompose_trs(np.linalg.solve(pw, world))
        times = frames if meta.get("ticks_per_second") is None else frames / fps * meta["ticks_per_second"]
        animated[j] = True
        r_keyed = any(p in ch for p in ("rotation_quaternion", "rotation_euler", "rotation_axis_angle"))
        for c, keyed, vals in (("r", r_keyed, lr), ("t", "location" in ch, lt), ("s", "scale" in ch, ls)):
            if keyed:
                tracks[c][0].append(j)
                tracks[c][1].append(times)
                tracks[c][2].append(vals)

    def channels(c, width):
        targets, ts, vs = tracks[c]
        if not targets:
            return sampling.Channels.empty(width)
        return sampling.Channels.from_tracks(targets, ts, vs, width)

    tps = meta.get("ticks_per_second")
    to_t = (lambda f: f) if tps is None else (lambda f: f / fps * tps)
    cycle = meta.get("cycle")
    clip = Clip(action.name, channels("r", 4), channels("t", 3), channels("s", 3), animated,
                start=float(meta.get("start", to_t(f0))), end=float(meta.get("end", to_t(f1))),
                ticks_per_second=tps, rotation_mode="nlerp",
                cycle=tuple(cycle) if cycle else None, layer=meta.get("layer", "ACTION"),
                weight=float(meta.get("weight", 1.0)), extras=meta.get("extras") or {})
    return clip


def _world_of_joint(r: Rig, j: int, frames, chans, fps) -> np.ndarray:
    bi = np.nonzero(r.bones == j)[0]
    if not len(bi):
        return np.broadcast_to(r.skeleton.world()[j], (len(frames), 4, 4))
    return _world_of_bone(r, int(bi[0]), None, frames, chans, fps)


def _world_of_bone(r: Rig, bi: int, basis, frames, chans, fps) -> np.ndarray:
    """World matrices (F, 4, 4) of bone ``bi``'s joint at frames, from the
    action's curves of the bone and its ancestors."""
    rs = r.rest
    chain = [bi]
    while rs.parent[chain[-1]] >= 0:
        chain.append(int(rs.parent[chain[-1]]))
    P = np.broadcast_to(np.eye(4), (len(frames), 4, 4)).copy()
    for b in reversed(chain):
        if b == bi and basis is not None:
            bb = basis
        else:
            name = r.bone_names[int(r.bones[b])]
            ch = chans.get(name, {})
            pb = r.obj.pose.bones[name]
            loc = _channel(ch.get("location"), 3, frames, tuple(pb.location))
            scl = _channel(ch.get("scale"), 3, frames, tuple(pb.scale))
            bb = sampling.compose_trs(loc, quat.normalize(_basis_rotation(pb, ch, frames)), scl)
        P = P @ rs.rel_rest[b] @ bb
    return P @ rs.K[bi]


# ---------------------------------------------------------------------------
# the whole export

def scene_of(context, *, armature=None, objects=None, apply_modifiers: bool = False,
             animations: bool = True, warnings: list[str] | None = None) -> Scene:
    """A scene from Blender data: ``armature`` (or None) and the mesh
    ``objects`` to export (skinned to the armature, parented to its bones,
    or free)."""
    warnings = warnings if warnings is not None else []
    context.view_layer.update()          # world matrices are stale until the depsgraph is evaluated
    r = rig_of(armature) if armature is not None else None
    scene = r.scene if r is not None else Scene(objects[0].name if objects else "scene",
                                                source=Source("blender", "", AxisConversion()))
    if r is not None:
        odd = [b.name for b in armature.data.bones
               if (len(armature.pose.bones[b.name].constraints) or not b.use_inherit_rotation
                   or b.inherit_scale != "FULL" or not b.use_local_location)]
        if odd:
            warnings.append(f"{armature.name}: bones with constraints or non-standard inheritance are exported "
                            f"with standard inheritance: {', '.join(odd[:8])}")
    materials: dict = {}
    for obj in objects or []:
        if obj.type != "MESH":
            continue
        scene.meshes.append(mesh_of(context, obj, r, materials, scene.materials, apply_modifiers, warnings))
        if obj.animation_data is not None and obj.animation_data.action is not None:
            warnings.append(f"{obj.name}: object animation is not exported")
    if r is not None and animations:
        fps = context.scene.render.fps / context.scene.render.fps_base
        for action in rig_actions(armature, r.bone_names.values()):
            clip = clip_of(action, r, fps, warnings)
            if clip is not None:
                scene.clips.append(clip)
    if not scene.meshes and r is None:
        raise ExtractError("nothing to export: no armature and no mesh")
    return scene
