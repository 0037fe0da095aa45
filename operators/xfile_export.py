# SPDX-License-Identifier: GPL-3.0-or-later
"""Blender scene -> DirectX .X: ``save_x`` does the work (the operator is thin).

What is written (the inverse of ``xfile_import``):

* the armature (the selected, active or only one) as a ``Frame`` hierarchy,
  one frame per bone, named after it; ``FrameTransformMatrix`` = the bone's
  rest matrix relative to its parent (the armature object's matrix folded
  into the root bones);
* skinned meshes (Armature modifier on that armature) under the frame of the
  bone whose rest sits where the mesh object is (else the first root bone),
  with ``SkinWeights`` per deforming bone: ``matrixOffset`` = inverse of the
  bone's rest (bind) matrix in the mesh's space; meshes parented to a bone
  under that bone's frame (rigid); other meshes under a frame of their own
  (named after the object, its world matrix);
* n-gons as n-gons, ``MeshNormals`` from Blender's corner normals,
  ``MeshTextureCoords`` (v flipped back; vertices whose corners carry
  different UVs are split, weights copied), ``MeshVertexColors`` from a point
  colour attribute, ``MeshMaterialList`` with a ``Material`` per slot
  (Principled BSDF base colour / alpha, power from roughness, specular,
  emission, ``TextureFilename`` from an image texture node);
* ``AnimTicksPerSecond`` (default 4800: D3DX's and 3ds Max's rate, an integer
  number of ticks per frame at 24, 25, 30, 48, 50 and 60 fps) and one
  ``AnimationSet`` per action animating the armature, named after it. Keys
  are each bone's local frame matrix (file space) as rotation, scale and
  position keys (or matrix keys). ``AUTO`` sampling keys a bone at its own
  keyed frames when that is exact (every F-curve linear, quaternion
  rotation, no F-curve modifiers: the importer keys linearly, so the curves
  come back identical), otherwise at every frame of the action's range.

Space: the inverse of the importer's ``Handedness`` (the axes and scale the
armature was imported with, stored on it; else the Forward/Up/Scale options,
default -Z forward, Y up, the importer's default), so that importing the
export reproduces the scene. Winding is reversed when the mapping mirrors.

The scene is not modified (poses are computed from the F-curves; bones use
standard inheritance, a warning names bones with constraints or other
inheritance). The file is serialised in memory, written to a temporary file
beside the target and renamed over it: a failed export leaves any existing
file untouched.
"""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import bpy
import numpy as np

from ..core import quat, sampling
from ..io.errors import FormatError
from ..io.xfile import (XAnimation, XAnimationKey, XAnimationSet, XFile, XFrame, XMaterial, XMesh,
                        XSkinWeights, write_xfile_bytes)
from ..io.xfile.playback import Handedness, col, key_from_rotation
from ..io.xfile.text_emit import text_name
from .rite_export import _dedupe, _mesh_data, action_bones
from .rite_import import find_armature
from .xfile_import import META_KEY, handedness

DEFAULT_TICKS_PER_SECOND = 4800
SMOOTH_NORMAL_TOLERANCE = 2e-3   # ~0.1 degree
FORMATS = ("text", "binary", "text_compressed", "binary_compressed")


class ExportFailed(Exception):
    """A user-facing export failure."""


# ---------------------------------------------------------------------------
# helpers

def _m(x) -> np.ndarray:
    return np.array(x, dtype=np.float64).reshape(4, 4)


def conversion(arm_obj, axis_conversion=None, global_scale: float = 1.0,
               use_stored_axes: bool = True) -> Handedness:
    """File -> Blender mapping to invert: the axes and scale the armature was
    imported with (when ``use_stored_axes``), else the given Forward/Up
    rotation and scale, else the importer's default."""
    if use_stored_axes and arm_obj is not None and META_KEY in arm_obj:
        try:
            d = json.loads(arm_obj[META_KEY])
            return Handedness(np.array(d["C"], dtype=np.float64), float(d["scale"]))
        except (ValueError, KeyError, TypeError):
            pass
    return handedness(axis_conversion, global_scale)


def _row(conv: Handedness, a_bl: np.ndarray) -> np.ndarray:
    """Blender-space column-vector matrix -> file-space row-vector matrix."""
    return col(conv.matrices_back(a_bl))


def write_atomic(data: bytes, path: str | os.PathLike) -> None:
    """Temporary file in the target's directory, then renamed over it."""
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=directory)
    except OSError as exc:
        raise ExportFailed(f"cannot write {path}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise ExportFailed(f"cannot write {path}: {exc.strerror or exc}") from None
        raise


# ---------------------------------------------------------------------------
# bones

class Bones:
    """The armature's bones parents first, rest / pose matrices (Blender world space)."""

    def __init__(self, arm_obj, warnings: list[str]):
        self.obj = arm_obj
        arm = arm_obj.data
        order = []
        stack = [b for b in arm.bones if b.parent is None][::-1]
        while stack:
            b = stack.pop()
            order.append(b)
            stack.extend(list(b.children)[::-1])
        self.bones = order
        self.names = [b.name for b in order]
        self.index = {n: i for i, n in enumerate(self.names)}
        self.parent = np.array([self.index[b.parent.name] if b.parent else -1 for b in order], dtype=np.int64)
        self.arm_world = _m(arm_obj.matrix_world)
        self.rest = np.array([_m(b.matrix_local) for b in order]).reshape(-1, 4, 4)   # armature space
        self.rest_world = self.arm_world @ self.rest
        parent_rest = np.where(self.parent[:, None, None] >= 0, self.rest[np.maximum(self.parent, 0)], np.eye(4))
        # local rest: relative to the parent's rest; roots carry the armature's matrix
        self.rel_rest = np.linalg.inv(parent_rest) @ self.rest
        roots = self.parent < 0
        self.rel_rest[roots] = self.arm_world @ self.rest[roots]
        self.connected = np.array([bool(b.use_connect) for b in order])
        odd = []
        for b in order:
            pb = arm_obj.pose.bones[b.name]
            if (len(pb.constraints) or not b.use_inherit_rotation or b.inherit_scale != "FULL"
                    or not b.use_local_location):
                odd.append(b.name)
        if odd:
            warnings.append(f"{arm_obj.name}: bones with constraints or non-standard inheritance are exported "
                            f"with standard inheritance: {', '.join(odd[:8])}")

    def pose_world(self) -> np.ndarray:
        """Current pose matrices (world space) as Blender last evaluated them."""
        pb = self.obj.pose.bones
        return self.arm_world @ np.array([_m(pb[n].matrix) for n in self.names]).reshape(-1, 4, 4)


# ---------------------------------------------------------------------------
# animation

_ROT_PATHS = {"QUATERNION": ("rotation_quaternion", 4), "AXIS_ANGLE": ("rotation_axis_angle", 4)}


def _curve_values(chan: dict, n: int, frames: np.ndarray, current) -> np.ndarray:
    out = np.empty((len(frames), n))
    for i in range(n):
        fc = chan.get(i) if chan else None
        if fc is None:
            out[:, i] = current[i]
        else:
            out[:, i] = [fc.evaluate(float(f)) for f in frames]
    return out


def _basis(pb, ch: dict, frames: np.ndarray, connected: bool) -> np.ndarray:
    """Pose-bone basis matrices (F, 4, 4) of one bone at frames, from its F-curves
    (channels the action does not key keep the pose bone's current values)."""
    loc = _curve_values(ch.get("location"), 3, frames, tuple(pb.location))
    if connected:
        loc[:] = 0.0
    scl = _curve_values(ch.get("scale"), 3, frames, tuple(pb.scale))
    mode = pb.rotation_mode
    if mode == "QUATERNION":
        wxyz = _curve_values(ch.get("rotation_quaternion"), 4, frames, tuple(pb.rotation_quaternion))
        q = quat.normalize(np.concatenate((wxyz[:, 1:], wxyz[:, :1]), axis=1))
    elif mode == "AXIS_ANGLE":
        aa = _curve_values(ch.get("rotation_axis_angle"), 4, frames, tuple(pb.rotation_axis_angle))
        axis = aa[:, 1:]
        norm = np.linalg.norm(axis, axis=1, keepdims=True)
        axis = np.where(norm > 0, axis / np.where(norm > 0, norm, 1.0), [[0.0, 1.0, 0.0]])
        q = quat.from_axis_angle(axis, aa[:, 0])
    else:
        from mathutils import Euler

        eul = _curve_values(ch.get("rotation_euler"), 3, frames, tuple(pb.rotation_euler))
        q = np.array([(lambda e: (e.x, e.y, e.z, e.w))(Euler(tuple(v), mode).to_quaternion()) for v in eul])
        q = np.asarray(q, dtype=np.float64).reshape(-1, 4)
    return sampling.compose_trs(loc, q, scl)


def _key_frames_exact(pb, ch: dict) -> np.ndarray | None:
    """The bone's keyed frames when keying only them is exact, else None."""
    if pb.rotation_mode != "QUATERNION" and any(ch.get(p) for p in ("rotation_euler", "rotation_axis_angle")):
        return None
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
                if np.any(interp[:-1] != 1):  # LINEAR
                    return None
            frames.append(co[0::2].astype(np.float64))
    if not frames:
        return None
    return np.unique(np.concatenate(frames))


def export_actions(arm_obj) -> list:
    """Actions that animate the armature's bones: its NLA tracks' first, in
    track order, then the active action, then the rest (name order)."""
    names = set(b.name for b in arm_obj.data.bones)
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
    return [a for a in out if action_bones(a, names)]


def animation_set(action, bones: Bones, conv: Handedness, fps: float, tps: int, sampling_mode: str,
                  key_type: str, warnings: list[str]) -> XAnimationSet:
    chans = action_bones(action, set(bones.names))
    f0, f1 = (float(x) for x in action.frame_range)
    every = np.arange(np.floor(f0), np.ceil(f1) + 0.5)
    pbs = bones.obj.pose.bones
    n = len(bones.names)
    # per bone: its frames and basis matrices
    frames_of, basis_of = [], []
    for i, name in enumerate(bones.names):
        pb = pbs[name]
        ch = chans.get(name)
        if not ch:
            frames = np.array([f0])
        else:
            frames = _key_frames_exact(pb, ch) if sampling_mode == "AUTO" else None
            if frames is None:
                frames = every
        frames_of.append(frames)
        basis_of.append(_basis(pb, ch or {}, frames, bool(bones.connected[i])))
    aset = XAnimationSet(name=action.name)
    for i, name in enumerate(bones.names):
        frames = frames_of[i]
        local_bl = bones.rel_rest[i] @ basis_of[i]
        if not chans.get(name) and np.abs(basis_of[i][0] - np.eye(4)).max() < 1e-7:
            continue  # not animated and at rest: the FrameTransformMatrix says it
        local = conv.matrices_back(local_bl)     # file space, column vectors
        ticks = np.round(frames / fps * tps)
        if len(ticks) and ticks.min() < 0:
            warnings.append(f"{action.name}: keys before time 0 on {name!r} clamped to 0")
            ticks = np.maximum(ticks, 0)
        ticks, first = np.unique(ticks, return_index=True)
        local = local[first]
        anim = XAnimation(name=None, frame_name=name)
        if key_type == "MATRIX":
            anim.keys.append(XAnimationKey(4, ticks, col(local).reshape(-1, 16)))
        else:
            t, r, s = sampling.decompose_trs(local)
            r = quat.make_continuous(quat.normalize(r), axis=0)
            anim.keys.append(XAnimationKey(0, ticks, key_from_rotation(r)))
            anim.keys.append(XAnimationKey(1, ticks, s))
            anim.keys.append(XAnimationKey(2, ticks, t))
        aset.animations.append(anim)
    if n and not aset.animations:
        warnings.append(f"{action.name}: no bone moves; empty AnimationSet")
    return aset


# ---------------------------------------------------------------------------
# meshes

def _principled(mat):
    if mat is None or mat.node_tree is None:
        return None
    return next((nd for nd in mat.node_tree.nodes if nd.type == "BSDF_PRINCIPLED"), None)


def _texture_path(mat, filepath: str) -> str | None:
    if mat is None or mat.node_tree is None:
        return None
    nodes = [nd for nd in mat.node_tree.nodes if nd.type == "TEX_IMAGE" and nd.image is not None]
    if not nodes:
        return None
    linked = [nd for nd in nodes if any(lk.to_socket.name == "Base Color" for o in nd.outputs for lk in o.links)]
    img = (linked or nodes)[0].image
    raw = img.filepath or img.name
    if not raw:
        return None
    if not raw.startswith("//") and not os.path.isabs(raw):
        return raw                     # already relative (e.g. kept from an import)
    absolute = bpy.path.abspath(raw, library=img.library)
    out_dir = os.path.dirname(os.path.abspath(filepath))
    try:
        rel = os.path.relpath(absolute, out_dir)
    except ValueError:                 # another drive
        rel = os.path.basename(absolute)
    if rel.startswith(".."):
        rel = os.path.basename(absolute)
    return rel


def material(mat, filepath: str) -> XMaterial:
    """An .X Material from a Blender material (the importer's mapping, inverted)."""
    if mat is None:
        return XMaterial(name=None, face_color=np.array([0.8, 0.8, 0.8, 1.0]))
    xm = XMaterial(name=mat.name)
    bsdf = _principled(mat)
    if bsdf is None:
        xm.face_color = np.array(tuple(mat.diffuse_color), dtype=np.float64)
        xm.power = 0.0
    else:
        inp = bsdf.inputs
        rgba = np.array(tuple(inp["Base Color"].default_value), dtype=np.float64)
        rgba[3] = float(inp["Alpha"].default_value)
        xm.face_color = rgba
        rough = float(inp["Roughness"].default_value)
        xm.power = float(2.0 / max(rough, 1e-3) ** 2 - 2.0) if rough < 1.0 else 0.0
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
        xm.specular = tint * level
        key = "Emission Color" if "Emission Color" in inp else "Emission"
        strength = float(inp["Emission Strength"].default_value) if "Emission Strength" in inp else 1.0
        xm.emissive = np.array(tuple(inp[key].default_value)[:3], dtype=np.float64) * strength
    xm.texture = _texture_path(mat, filepath)
    return xm


def _weights(me, obj, bone_index: dict, deform: np.ndarray, warnings: list[str]):
    """(vertex, bone, weight) of vertex groups naming deforming bones."""
    gmap = {}
    skipped = []
    for g in obj.vertex_groups:
        j = bone_index.get(g.name)
        if j is None:
            skipped.append(g.name)
        elif deform[j]:
            gmap[g.index] = j
    if skipped:
        warnings.append(f"{obj.name}: vertex groups without a bone ignored: {', '.join(skipped[:8])}")
    vv, jj, ww = [], [], []
    for vert in me.vertices:
        for g in vert.groups:
            j = gmap.get(g.group)
            if j is not None and g.weight > 0.0:
                vv.append(vert.index)
                jj.append(j)
                ww.append(g.weight)
    return np.array(vv, dtype=np.int64), np.array(jj, dtype=np.int64), np.array(ww, dtype=np.float64)


def build_mesh(context, obj, to_frame_bl: np.ndarray, conv: Handedness, filepath: str, *,
               bones: Bones | None, skin_frame_rest_world: np.ndarray | None, apply_modifiers: bool,
               mat_cache: dict, warnings: list[str]) -> XMesh:
    """An XMesh in the space of its frame. ``to_frame_bl`` maps the object's
    local coordinates to the frame's (Blender space); ``skin_frame_rest_world``
    is the frame's rest world matrix for skinned meshes (None: rigid)."""
    me, ev = _mesh_data(context, obj, apply_modifiers)
    try:
        G = conv.Minv @ to_frame_bl                    # Blender object-local -> file frame
        V, L, F = len(me.vertices), len(me.loops), len(me.polygons)
        co = np.empty(3 * V, dtype=np.float32)
        me.vertices.foreach_get("co", co)
        pos = co.reshape(-1, 3).astype(np.float64) @ G[:3, :3].T + G[:3, 3]
        loop_v = np.empty(L, dtype=np.int32)
        me.loops.foreach_get("vertex_index", loop_v)
        start = np.empty(F, dtype=np.int32)
        total = np.empty(F, dtype=np.int32)
        me.polygons.foreach_get("loop_start", start)
        me.polygons.foreach_get("loop_total", total)
        mat_idx = np.empty(F, dtype=np.int32)
        me.polygons.foreach_get("material_index", mat_idx)
        # corners in file order (reversed per face when the mapping mirrors)
        mirror = np.linalg.det(G[:3, :3]) < 0
        sizes = total.astype(np.int64)
        local = np.arange(L) - np.repeat(start.astype(np.int64), sizes)
        if mirror:
            local = np.repeat(sizes, sizes) - 1 - local
        corner = np.repeat(start.astype(np.int64), sizes) + local if L else np.zeros(0, dtype=np.int64)
        # per-corner data that forces vertex splits
        keys = [loop_v.astype(np.float64)[:, None]]
        uv = None
        if me.uv_layers.active is not None and L:
            uv = np.empty(2 * L, dtype=np.float32)
            me.uv_layers.active.data.foreach_get("uv", uv)
            uv = uv.reshape(-1, 2).astype(np.float64)
            keys.append(uv)
        vcol = None
        ca = me.color_attributes.active_color if hasattr(me.color_attributes, "active_color") else None
        if ca is not None and ca.domain in ("POINT", "CORNER"):
            c = np.empty(4 * len(ca.data), dtype=np.float32)
            ca.data.foreach_get("color", c)
            c = c.reshape(-1, 4).astype(np.float64)
            vcol = c[loop_v] if ca.domain == "POINT" else c
            if ca.domain == "CORNER":
                keys.append(vcol)
        elif ca is not None:
            warnings.append(f"{obj.name}: colour attribute {ca.name!r} on {ca.domain} not exported")
        if len(keys) > 1:
            uniq, inv = _dedupe(np.concatenate(keys, axis=1))
            uv_vertex = uniq[:, 0].astype(np.int64)
            first = np.full(len(uniq), L, dtype=np.int64)
            np.minimum.at(first, inv, np.arange(L))
            order = np.lexsort((first, uv_vertex))
            is_first = np.ones(len(order), dtype=bool)
            is_first[1:] = uv_vertex[order][1:] != uv_vertex[order][:-1]
            new_index = np.empty(len(uniq), dtype=np.int64)
            new_index[order[is_first]] = uv_vertex[order[is_first]]
            extra = order[~is_first]
            new_index[extra] = V + np.arange(len(extra))
            vmap = np.concatenate([np.arange(V), uv_vertex[extra]])
            corner_vertex = new_index[inv]
            # one representative corner per new vertex for its UV / colour
            rep = np.full(len(vmap), -1, dtype=np.int64)
            rep[corner_vertex] = np.arange(L)
            if len(extra):
                warnings.append(f"{obj.name}: {len(extra)} vertices split along UV/colour seams")
        else:
            vmap = np.arange(V)
            corner_vertex = loop_v.astype(np.int64)
            rep = np.full(V, -1, dtype=np.int64)
            rep[corner_vertex] = np.arange(L)
        NV = len(vmap)
        xm = XMesh(name=obj.name, positions=pos[vmap], face_sizes=sizes,
                   face_indices=corner_vertex[corner])
        # normals: Blender's corner normals, deduplicated
        if L:
            cn = np.empty(3 * L, dtype=np.float32)
            me.corner_normals.foreach_get("vector", cn)
            nmat = np.linalg.inv(G[:3, :3]).T
            n = cn.reshape(-1, 3).astype(np.float64) @ nmat.T
            length = np.linalg.norm(n, axis=1, keepdims=True)
            n = n / np.where(length > 0, length, 1.0)
            # Blender stores custom normals compressed: corners of a vertex that
            # agree to within SMOOTH_NORMAL_TOLERANCE share one (their mean)
            mean = np.zeros((NV, 3))
            np.add.at(mean, corner_vertex, n)
            length = np.linalg.norm(mean, axis=1, keepdims=True)
            mean = mean / np.where(length > 0, length, 1.0)
            dev = np.zeros(NV)
            np.maximum.at(dev, corner_vertex, np.linalg.norm(n - mean[corner_vertex], axis=1))
            smooth = (dev < SMOOTH_NORMAL_TOLERANCE)[corner_vertex]
            n[smooth] = mean[corner_vertex[smooth]]
            normals, n_idx = _dedupe(n)
            xm.normals = normals
            xm.normal_face_sizes = sizes
            xm.normal_face_indices = n_idx[corner]
        if uv is not None:
            u = np.zeros((NV, 2))
            has = rep >= 0
            u[has] = uv[rep[has]]
            u[:, 1] = 1.0 - u[:, 1]
            xm.uvs = u
        if vcol is not None:
            c = np.ones((NV, 4))
            has = rep >= 0
            c[has] = vcol[rep[has]]
            xm.vertex_colors = c
        slots = [s.material for s in obj.material_slots]
        if slots:
            xm.materials = []
            for m in slots:
                key = m.name if m is not None else None
                if key not in mat_cache:
                    mat_cache[key] = material(m, filepath)
                xm.materials.append(mat_cache[key])
            xm.material_indices = np.clip(mat_idx.astype(np.int64), 0, len(slots) - 1)
        if skin_frame_rest_world is not None and bones is not None:
            deform = np.array([bool(b.use_deform) for b in bones.bones])
            wv, wj, ww = _weights(me, obj, bones.index, deform, warnings)
            # duplicated vertices carry their source's weights
            src_of = {}
            for new, old in enumerate(vmap):
                if new >= V:
                    src_of.setdefault(int(old), []).append(new)
            if src_of:
                add_v, add_j, add_w = [], [], []
                for v, j, w in zip(wv.tolist(), wj.tolist(), ww.tolist()):
                    for new in src_of.get(v, ()):
                        add_v.append(new)
                        add_j.append(j)
                        add_w.append(w)
                wv = np.concatenate([wv, np.array(add_v, dtype=np.int64)])
                wj = np.concatenate([wj, np.array(add_j, dtype=np.int64)])
                ww = np.concatenate([ww, np.array(add_w, dtype=np.float64)])
            covered = np.zeros(NV, dtype=bool)
            covered[wv] = True
            if not covered.all():
                warnings.append(f"{obj.name}: {int((~covered).sum())} vertices without bone weights (Direct3D "
                                f"moves them with no bone; Blender keeps them at rest)")
            for j in np.unique(wj):
                sel = wj == j
                # matrixOffset: mesh frame -> bone, in the bind (rest) pose
                off_bl = np.linalg.inv(bones.rest_world[j]) @ skin_frame_rest_world
                xm.skin_weights.append(XSkinWeights(
                    frame_name=bones.names[j], vertex_indices=wv[sel], weights=ww[sel],
                    matrix_offset=_row(conv, off_bl)))
        if me.shape_keys is not None and len(me.shape_keys.key_blocks) > 1:
            warnings.append(f"{obj.name}: shape keys are not exported (the basis shape is)")
        return xm
    finally:
        if ev is not None:
            ev.to_mesh_clear()


def _armature_modifier(obj, arm_obj):
    return next((m for m in obj.modifiers if m.type == "ARMATURE" and m.object == arm_obj), None)


# ---------------------------------------------------------------------------
# the whole file

def build_xfile(context, filepath: str, *, armature=None, axis_conversion=None, global_scale: float = 1.0,
                use_stored_axes: bool = True,
                ticks_per_second: int = DEFAULT_TICKS_PER_SECOND, sampling_mode: str = "AUTO",
                key_type: str = "TRS", apply_modifiers: bool = False, other_meshes: bool = True,
                export_animations: bool = True, warnings: list[str] | None = None) -> XFile:
    warnings = warnings if warnings is not None else []
    scene = context.scene
    arm_obj = armature
    if arm_obj is None:
        arm_obj = find_armature(context, prefer_selected=True)
        if arm_obj is None and sum(o.type == "ARMATURE" for o in scene.objects) > 1:
            raise ExportFailed("several armatures: select the one to export")
    conv = conversion(arm_obj, axis_conversion, global_scale, use_stored_axes)
    xf = XFile(version="0303")
    mat_cache: dict = {}
    bones = None
    frames: list[XFrame] = []
    if arm_obj is not None and len(arm_obj.data.bones):
        bones = Bones(arm_obj, warnings)
        for i, name in enumerate(bones.names):
            fr = XFrame(name, _row(conv, bones.rel_rest[i]))
            frames.append(fr)
            p = bones.parent[i]
            if p >= 0:
                frames[p].children.append(fr)
            else:
                xf.frames.append(fr)
        if sum(1 for n in bones.names if text_name(n) != n) and len({text_name(n) for n in bones.names}) < len(
                bones.names):
            warnings.append("bone names collide once spelt for text files (only A-Z, 0-9, _ . -): "
                            "use the binary format")
    used_names = set(bones.names) if bones else set()
    done = set()
    if bones is not None:
        pose_world = bones.pose_world()
        roots = np.nonzero(bones.parent < 0)[0]
        for obj in scene.objects:
            if obj.type != "MESH":
                continue
            mod = _armature_modifier(obj, arm_obj)
            mw = _m(obj.matrix_world)
            if mod is not None:
                if mod.use_deform_preserve_volume or mod.use_bone_envelopes or not mod.use_vertex_groups:
                    warnings.append(f"{obj.name}: Armature modifier options other than vertex groups with "
                                    f"linear blending are not exported")
                if obj.parent == arm_obj and obj.parent_type == "BONE":
                    warnings.append(f"{obj.name}: skinned and parented to a bone: exported in its current "
                                    f"place")
                # the frame whose rest is where the mesh object is, else the first root
                near = np.abs(bones.rest_world - mw).max(axis=(1, 2))
                tol = 1e-6 * max(1.0, float(np.abs(mw[:3, 3]).max()))
                fi = int(np.argmin(near)) if near.min() <= tol else int(roots[0])
                to_frame = np.linalg.inv(bones.rest_world[fi]) @ mw
                xm = build_mesh(context, obj, to_frame, conv, filepath, bones=bones,
                                skin_frame_rest_world=bones.rest_world[fi], apply_modifiers=apply_modifiers,
                                mat_cache=mat_cache, warnings=warnings)
                frames[fi].meshes.append(xm)
                done.add(obj.name)
            elif obj.parent == arm_obj and obj.parent_type == "BONE" and obj.parent_bone in bones.index:
                fi = bones.index[obj.parent_bone]
                to_frame = np.linalg.inv(pose_world[fi]) @ mw
                xm = build_mesh(context, obj, to_frame, conv, filepath, bones=None, skin_frame_rest_world=None,
                                apply_modifiers=apply_modifiers, mat_cache=mat_cache, warnings=warnings)
                frames[fi].meshes.append(xm)
                done.add(obj.name)
    if other_meshes or bones is None:
        for obj in scene.objects:
            if obj.type != "MESH" or obj.name in done:
                continue
            if bones is not None and obj.parent == arm_obj and obj.parent_type != "BONE":
                warnings.append(f"{obj.name}: parented to the armature object without skin: exported "
                                f"in its current place")
            name = obj.name
            while name in used_names:
                name = name + "_mesh"
            used_names.add(name)
            xm = build_mesh(context, obj, np.eye(4), conv, filepath, bones=None, skin_frame_rest_world=None,
                            apply_modifiers=apply_modifiers, mat_cache=mat_cache, warnings=warnings)
            fr = XFrame(name, _row(conv, _m(obj.matrix_world)), meshes=[xm])
            xf.frames.append(fr)
            done.add(obj.name)
            if obj.animation_data is not None and obj.animation_data.action is not None:
                warnings.append(f"{obj.name}: object animation is not exported")
    if not done and bones is None:
        raise ExportFailed("nothing to export: no armature and no mesh")
    if bones is not None and export_animations:
        fps = scene.render.fps / scene.render.fps_base
        sets = [animation_set(a, bones, conv, fps, int(ticks_per_second), sampling_mode, key_type, warnings)
                for a in export_actions(arm_obj)]
        if sets:
            xf.anim_ticks_per_second = int(ticks_per_second)
            xf.animation_sets = sets
    return xf


def save_x(context, filepath: str, *, fmt: str = "text", float_size: int = 32, **options) -> list[str]:
    """Export to ``filepath``; returns warnings. Raises ExportFailed (the file,
    if it existed, is untouched)."""
    if fmt not in FORMATS:
        raise ExportFailed(f"format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    warnings: list[str] = []
    xf = build_xfile(context, filepath, warnings=warnings, **options)
    try:
        data = write_xfile_bytes(xf, fmt=fmt, float_size=int(float_size), path=filepath)
    except FormatError as err:
        raise ExportFailed(str(err)) from None
    except ValueError as err:
        raise ExportFailed(f"{Path(filepath).name}: {err}") from None
    write_atomic(data, filepath)
    return warnings
