# SPDX-License-Identifier: GPL-3.0-or-later
"""Blender data from a parsed DirectX .X file (io.xfile.playback.XRig):
armature, meshes, materials, vertex groups and one action per AnimationSet.

Spaces: everything is built in Blender space = file space mapped by a
``Handedness`` (default (x, y, z) -> (x, z, y), a reflection). The armature
object sits at the origin, so armature space is world space.

Pose maths (Blender space, column vectors). ``B_j`` is a frame's bind world
matrix, ``R_j`` its bone's rest matrix (read back from Blender, rigid) and
``K_j = R_j^-1 B_j`` what the rest cannot hold (scale, or the whole bind when
the rest comes from the frame hierarchy). For frame world matrices ``W`` the
armature-space pose of bone j is ``P_j = W_j K_j^-1`` (so that Blender's skin
matrix ``P_j R_j^-1 = W_j B_j^-1``), and the pose-bone basis is

    basis_j = (R_p^-1 R_j)^-1 P_p^-1 P_j = R_j^-1 R_p K_p local_j K_j^-1.

When every ``K`` is a uniform scale times (nearly) the identity rotation the
basis is ``A_j local_j K_j^-1`` with ``A_j`` a similarity, so location,
rotation and scale keys map one by one, linearly: the file's keys can be
keyed as they are (Blender's per-component quaternion interpolation is then
the core's ``nlerp`` of the same keys). Otherwise (or on request) every frame
is baked from the core's sampling.
"""
from __future__ import annotations

import os
from pathlib import Path

import bpy
import numpy as np

from ..core import quat, sampling
from ..io.xfile.playback import Handedness, XRig, orthonormal
from . import anim_build
from . import bones as bone_tools

MIN_BONE_FRACTION = 2e-3    # bone length floor, as a fraction of the model size
MIN_BONE_LENGTH = 1e-3      # absolute floor (Blender units)


# ---------------------------------------------------------------------------
# armature

class RigBuild:
    """The armature and the matrices needed to pose it."""

    def __init__(self, obj, bones: np.ndarray, bone_names: dict[int, str], rest: np.ndarray,
                 bind: np.ndarray, parent: np.ndarray, conv: Handedness, size: float):
        self.obj = obj
        self.bones = bones              # frame indices that are bones, parents first
        self.bone_names = bone_names    # frame index -> bone name
        self.rest = rest                # (B, 4, 4) actual rest matrices (Blender space)
        self.bind = bind                # (B, 4, 4) bind world (Blender space)
        self.parent = parent            # (B,) index into bones, -1 for roots
        self.conv = conv
        self.size = size
        self.K = np.linalg.inv(rest) @ bind
        self.K_inv = np.linalg.inv(self.K)
        rp = np.where(parent[:, None, None] >= 0, rest[np.maximum(parent, 0)], np.eye(4))
        kp = np.where(parent[:, None, None] >= 0, self.K[np.maximum(parent, 0)], np.eye(4))
        self.A = np.linalg.inv(rest) @ rp @ kp
        self.rel_rest = np.linalg.inv(rp) @ rest
        # per-bone similarity parts of A and K, for the channel mapping
        self.ka = np.cbrt(np.linalg.det(self.A[:, :3, :3]))
        self.Ra = self.A[:, :3, :3] / self.ka[:, None, None]
        self.qa = quat.from_mat3(self.Ra)
        self.k = np.cbrt(np.linalg.det(self.K[:, :3, :3]))
        self.qk = quat.from_mat3(self.K[:, :3, :3] / np.where(self.k > 0, self.k, 1.0)[:, None, None])

    def channel_mode_exact(self, rig: XRig | None = None) -> bool:
        """True when every K is a uniform scale times a rotation (and no
        translation), and bones whose K rotates have only uniform scale keys:
        then the file's keys map channel by channel (see the module doc)."""
        if not len(self.bones):
            return True
        lin = self.K[:, :3, :3]
        k = np.cbrt(np.linalg.det(lin))
        if np.any(k <= 0):
            return False
        rk = lin / k[:, None, None]
        if np.abs(np.swapaxes(rk, 1, 2) @ rk - np.eye(3)).max() > 1e-4:
            return False
        if np.abs(self.K[:, :3, 3]).max() > 1e-6 * max(self.size, 1e-9):
            return False
        turned = np.abs(rk - np.eye(3)).max(axis=(1, 2)) > 1e-4
        if rig is not None and turned.any():
            frames = set(int(j) for j in self.bones[turned])
            s0 = rig.rest_components()[2]
            vals = [s0[j] for j in frames]
            for clip in rig.clips:
                for t, j in enumerate(clip.scale.targets):
                    if int(j) in frames:
                        vals.append(clip.scale.values[clip.scale.starts[t]:clip.scale.starts[t + 1]])
            v = np.concatenate([np.reshape(x, (-1, 3)) for x in vals])
            if np.abs(v - v.mean(axis=1, keepdims=True)).max() > 1e-6 * np.abs(v).max():
                return False
        return True

    def pose_basis(self, world_bl: np.ndarray) -> np.ndarray:
        """Pose-bone basis matrices (F, B, 4, 4) for Blender-space frame world
        matrices (F, J, 4, 4)."""
        W = world_bl[:, self.bones]
        P = W @ self.K_inv
        Pp = np.where((self.parent >= 0)[None, :, None, None], P[:, np.maximum(self.parent, 0)], np.eye(4))
        return np.linalg.inv(self.rel_rest) @ np.linalg.inv(Pp) @ P

    def channels(self, t_file, r_file, s_file, b: np.ndarray):
        """Basis location/rotation/scale for local channels of bones ``b``
        (arrays broadcast: (..., 3), (..., 4), (..., 3) in file space)."""
        ka, Ra, qa, k, qk = self.ka[b], self.Ra[b], self.qa[b], self.k[b], self.qk[b]
        t = self.conv.translations(t_file)
        loc = self.A[b][..., :3, 3] + ka[..., None] * np.einsum("...ij,...j->...i", Ra, t)
        rot = quat.mul(quat.mul(qa, self.conv.quats(r_file)), quat.conj(qk))
        scl = self.conv.scales(s_file) * (ka / k)[..., None]
        return loc, rot, scl


def build_armature(context, rig: XRig, sel: np.ndarray, name: str, conv: Handedness,
                   rest_from: str, warnings: list[str]) -> RigBuild:
    """Armature with one bone per selected frame. ``rest_from`` "BIND" (rest =
    bind pose) or "FRAMES" (rest = FrameTransformMatrix hierarchy)."""
    bones = np.array([j for j in rig.skel.order if sel[j]], dtype=np.int64)
    pos = {int(j): i for i, j in enumerate(bones)}
    parent = np.array([pos.get(int(rig.skel.parents[j]), -1) for j in bones], dtype=np.int64)
    bind_bl = conv.matrices(rig.bind[bones])
    # Frames that skin nothing have no true bind pose: keep only a rigid
    # transform and a uniform scale of the derived one, so that K stays a
    # uniform scale (their pose still shows the frame matrices exactly).
    free = ~rig.has_offset[bones]
    if free.any():
        k = np.cbrt(np.abs(np.linalg.det(bind_bl[free, :3, :3])))
        fixed = orthonormal(bind_bl[free])
        fixed[:, :3, :3] *= np.where(k > 0, k, 1.0)[:, None, None]
        bind_bl[free] = fixed
    src = bind_bl if rest_from == "BIND" else conv.matrices(rig.world0[bones])
    target = orthonormal(src)
    # Blender rebuilds each bone's rotation in its parent's space from a
    # direction and a roll, in float32, and loses precision (to ~1e-4) when the
    # direction is close to the parent's -Y. Such bones are turned by 90
    # degrees about their X axis (Y -> Z); K absorbs the turn.
    turn = np.array([[1.0, 0, 0, 0], [0, 0, -1, 0], [0, 1, 0, 0], [0, 0, 0, 1]])
    for i in range(len(bones)):
        p = parent[i]
        if p >= 0:
            y = target[p, :3, :3].T @ target[i, :3, 1]
            if 1.0 + y[1] < 0.1:
                target[i] = target[i] @ turn
    size = rig.size() * conv.s
    min_len = max(size * MIN_BONE_FRACTION, MIN_BONE_LENGTH)
    heads = target[:, :3, 3]
    lengths = bone_tools.bone_lengths(heads, parent, range(len(bones)), size, min_len)  # parents first
    arm = bpy.data.armatures.new(name)
    obj = bpy.data.objects.new(name, arm)
    context.collection.objects.link(obj)
    names = bone_tools.create_bones(context, obj, [rig.names[j] for j in bones], parent, target, lengths)
    rest = np.array([np.array(arm.bones[n].matrix_local, dtype=np.float64) for n in names]).reshape(-1, 4, 4)
    for n in names:
        obj.pose.bones[n].rotation_mode = "QUATERNION"
    return RigBuild(obj, bones, {int(j): n for j, n in zip(bones, names)}, rest, bind_bl, parent, conv, size)


def set_pose(rb: RigBuild, basis: np.ndarray) -> None:
    """Pose-bone location/rotation/scale from basis matrices (B, 4, 4)."""
    t, r, s = sampling.decompose_trs(basis)
    r = np.where(r[:, 3:4] < 0, -r, r)
    pb = rb.obj.pose.bones
    order = [rb.bone_names[int(j)] for j in rb.bones]
    idx = {n: i for i, n in enumerate(order)}
    perm = np.array([idx[b.name] for b in pb], dtype=np.int64)
    pb.foreach_set("location", t[perm].astype(np.float32).reshape(-1))
    pb.foreach_set("rotation_quaternion", np.concatenate((r[:, 3:], r[:, :3]), axis=1)[perm].astype(np.float32).reshape(-1))
    pb.foreach_set("scale", s[perm].astype(np.float32).reshape(-1))


# ---------------------------------------------------------------------------
# meshes

def face_arrays(mesh, mirror: bool, warnings: list[str], label: str):
    """Kept faces and the corner order: (face_keep (F,), corner_src (L,)
    indices into the file's corners, sizes (F',), loop_start (F',))."""
    sizes = np.asarray(mesh.face_sizes, dtype=np.int64)
    idx = np.asarray(mesh.face_indices, dtype=np.int64)
    F = len(sizes)
    offsets = np.zeros(F, dtype=np.int64)
    if F > 1:
        np.cumsum(sizes[:-1], out=offsets[1:])
    face_of = np.repeat(np.arange(F), sizes)
    # faces with fewer than 3 corners or a vertex used twice are skipped
    keep = sizes >= 3
    if len(idx):
        order = np.lexsort((idx, face_of))
        fo, vo = face_of[order], idx[order]
        dup = (fo[1:] == fo[:-1]) & (vo[1:] == vo[:-1])
        keep[np.unique(fo[1:][dup])] = False
    if not keep.all():
        warnings.append(f"{label}: {int((~keep).sum())} degenerate face(s) skipped")
    kept = np.nonzero(keep)[0]
    ksizes = sizes[kept]
    corner_face = np.repeat(kept, ksizes)
    kstart = np.zeros(len(kept), dtype=np.int64)
    if len(kept) > 1:
        np.cumsum(ksizes[:-1], out=kstart[1:])
    local = np.arange(int(ksizes.sum())) - np.repeat(kstart, ksizes)
    if mirror:
        local = np.repeat(ksizes, ksizes) - 1 - local
    src = offsets[corner_face] + local
    return kept, src, ksizes, kstart


def build_mesh(context, rig: XRig, mi: int, name: str, conv: Handedness, filepath: str,
               materials_cache: dict, warnings: list[str]):
    m = rig.meshes[mi]
    label = f"mesh {name!r}"
    me = bpy.data.meshes.new(name)
    V = len(m.positions)
    kept, src, sizes, starts = face_arrays(m, conv.mirrors, warnings, label)
    loop_v = np.asarray(m.face_indices, dtype=np.int64)[src]
    me.vertices.add(V)
    me.vertices.foreach_set("co", conv.points(m.positions).astype(np.float32).reshape(-1))
    me.loops.add(len(loop_v))
    me.polygons.add(len(sizes))
    me.loops.foreach_set("vertex_index", loop_v.astype(np.int32))
    me.polygons.foreach_set("loop_start", starts.astype(np.int32))
    if len(sizes):
        me.polygons.foreach_set("use_smooth", np.ones(len(sizes), dtype=bool))
    if m.material_indices is not None and len(m.material_indices) == len(m.face_sizes) and m.materials:
        mat_idx = np.clip(np.asarray(m.material_indices, dtype=np.int64)[kept], 0, len(m.materials) - 1)
        me.polygons.foreach_set("material_index", mat_idx.astype(np.int32))
    if m.uvs is not None and len(m.uvs) == V and len(loop_v):
        uv = np.asarray(m.uvs, dtype=np.float64)[loop_v, :2].copy()
        uv[:, 1] = 1.0 - uv[:, 1]
        layer = me.uv_layers.new(name="UVMap")
        layer.data.foreach_set("uv", uv.astype(np.float32).reshape(-1))
    if m.vertex_colors is not None and len(m.vertex_colors) == V:
        vc = np.ones((V, 4))
        c = np.asarray(m.vertex_colors, dtype=np.float64)
        vc[:, :c.shape[1]] = c[:, :4]
        attr = me.color_attributes.new("Color", "FLOAT_COLOR", "POINT")
        attr.data.foreach_set("color", vc.astype(np.float32).reshape(-1))
    me.update(calc_edges=True)
    n = _loop_normals(m, src, conv, warnings, label)
    if n is not None and len(n):
        me.normals_split_custom_set(n.astype(np.float32))
    for mat in m.materials:
        me.materials.append(make_material(mat, name, filepath, materials_cache, warnings))
    obj = bpy.data.objects.new(name, me)
    context.collection.objects.link(obj)
    return obj


def _loop_normals(m, src, conv: Handedness, warnings, label):
    if m.normals is None or not len(m.normals):
        return None
    normals = np.asarray(m.normals, dtype=np.float64)
    if m.normal_face_indices is not None:
        ok = (m.normal_face_sizes is not None and len(m.normal_face_sizes) == len(m.face_sizes)
              and np.array_equal(m.normal_face_sizes, m.face_sizes))
        if not ok:
            warnings.append(f"{label}: MeshNormals faces do not match the mesh faces; normals ignored")
            return None
        ni = np.asarray(m.normal_face_indices, dtype=np.int64)[src]
    elif len(normals) == len(m.positions):
        ni = np.asarray(m.face_indices, dtype=np.int64)[src]
    else:
        warnings.append(f"{label}: {len(normals)} normals for {len(m.positions)} vertices; normals ignored")
        return None
    if len(ni) and (ni.min() < 0 or ni.max() >= len(normals)):
        warnings.append(f"{label}: normal index out of range; normals ignored")
        return None
    n = conv.directions(normals[ni])
    length = np.linalg.norm(n, axis=1, keepdims=True)
    return n / np.where(length > 0, length, 1.0)


def find_texture(name: str, filepath: str) -> str | None:
    """A texture named in the file, looked for beside it (Windows paths,
    relative folders, any letter case)."""
    base = Path(filepath).resolve().parent
    parts = [p for p in name.replace("\\", "/").split("/") if p and p != "."]
    if not parts:
        return None
    candidates = [base.joinpath(*parts[i:]) for i in range(len(parts))]
    if os.path.isabs(name) or (len(name) > 1 and name[1] == ":"):
        candidates.insert(0, Path(name))
    for c in candidates:
        if c.is_file():
            return str(c)
    for c in candidates:  # case-insensitive match on the last component
        d = c.parent
        if d.is_dir():
            low = c.name.lower()
            for entry in os.listdir(d):
                if entry.lower() == low and (d / entry).is_file():
                    return str(d / entry)
    return None


def make_material(xmat, mesh_name: str, filepath: str, cache: dict, warnings: list[str]):
    """Principled BSDF from an .X Material (shared between meshes of a file)."""
    key = id(xmat)
    if key in cache:
        return cache[key]
    name = xmat.name or f"{mesh_name}_material"
    mat = bpy.data.materials.new(name)
    cache[key] = mat
    if mat.node_tree is None:  # Blender 4.5; 5.0 materials come with nodes
        mat.use_nodes = True
    nt = mat.node_tree
    bsdf = next((n for n in nt.nodes if n.type == "BSDF_PRINCIPLED"), None)
    if bsdf is None:
        bsdf = nt.nodes.new("ShaderNodeBsdfPrincipled")
    fc = np.asarray(xmat.face_color, dtype=np.float64).reshape(-1)
    rgba = np.ones(4)
    rgba[:min(4, len(fc))] = fc[:4]
    bsdf.inputs["Base Color"].default_value = tuple(float(x) for x in rgba)
    bsdf.inputs["Alpha"].default_value = float(rgba[3])
    mat.diffuse_color = tuple(float(x) for x in rgba)
    power = max(float(xmat.power), 0.0)
    bsdf.inputs["Roughness"].default_value = float(np.sqrt(2.0 / (power + 2.0)))
    spec = np.asarray(xmat.specular, dtype=np.float64).reshape(-1)[:3]
    level = float(np.clip(spec.max() if len(spec) else 0.0, 0.0, 1.0))
    for label in ("Specular IOR Level", "Specular"):
        if label in bsdf.inputs:
            bsdf.inputs[label].default_value = 0.5 * level
            break
    if "Specular Tint" in bsdf.inputs and level > 0:
        tint = spec / level
        try:
            bsdf.inputs["Specular Tint"].default_value = (*[float(x) for x in tint], 1.0)
        except (TypeError, ValueError):
            pass
    em = np.asarray(xmat.emissive, dtype=np.float64).reshape(-1)[:3]
    if em.any():
        key_in = "Emission Color" if "Emission Color" in bsdf.inputs else "Emission"
        bsdf.inputs[key_in].default_value = (*[float(x) for x in em], 1.0)
        if "Emission Strength" in bsdf.inputs:
            bsdf.inputs["Emission Strength"].default_value = 1.0
    if rgba[3] < 1.0:
        for attr, val in (("surface_render_method", "BLENDED"), ("blend_method", "BLEND")):
            try:
                setattr(mat, attr, val)
                break
            except (AttributeError, TypeError):
                pass
    if xmat.texture:
        found = find_texture(xmat.texture, filepath)
        if found:
            img = bpy.data.images.load(found, check_existing=True)
        else:
            warnings.append(f"material {name!r}: texture {xmat.texture!r} not found beside the file "
                            f"(path kept)")
            img = bpy.data.images.new(Path(xmat.texture.replace("\\", "/")).name or "texture", 1, 1)
            img.source = "FILE"
            img.filepath = xmat.texture
        tex = nt.nodes.new("ShaderNodeTexImage")
        tex.image = img
        tex.location = (bsdf.location.x - 350, bsdf.location.y)
        nt.links.new(tex.outputs["Color"], bsdf.inputs["Base Color"])
    return mat


def add_vertex_groups(obj, rig: XRig, mi: int, bone_names: dict[int, str]) -> None:
    """One vertex group per bone of the mesh's SkinWeights, filled in batches
    of equal weight (duplicate (vertex, bone) pairs summed)."""
    sk = rig.skins[mi]
    joints = sorted(sk.offsets)
    groups = {j: obj.vertex_groups.new(name=bone_names[j]) for j in joints}
    if not len(sk.vertex):
        return
    n_j = rig.n_frames
    pair = sk.vertex * n_j + sk.joint
    uniq, inv = np.unique(pair, return_inverse=True)
    w = np.bincount(inv, weights=sk.weight, minlength=len(uniq)).astype(np.float32)
    v, j = uniq // n_j, uniq % n_j
    order = np.lexsort((v, w, j))
    v, j, w = v[order], j[order], w[order]
    brk = np.nonzero((np.diff(j) != 0) | (np.diff(w) != 0))[0] + 1
    for lo, hi in zip(np.r_[0, brk], np.r_[brk, len(v)]):
        groups[int(j[lo])].add(v[lo:hi].tolist(), float(w[lo]), "REPLACE")


# ---------------------------------------------------------------------------
# animation

def clip_frames(rig: XRig, clip, fps: float) -> tuple[float, float]:
    return (float(rig.ticks_to_frames(clip.first_tick, fps)), float(rig.ticks_to_frames(clip.last_tick, fps)))


def _key(bag, bone: str, prop: str, frames, values) -> None:
    path = f'pose.bones["{bpy.utils.escape_identifier(bone)}"].{prop}'
    for fc in anim_build.add_vector_keys(bag, path, frames, values, group=bone):
        fc.extrapolation = "CONSTANT"


def build_action_keys(rb: RigBuild, rig: XRig, clip, fps: float, name: str):
    """The file's keys, channel by channel (exact when ``channel_mode_exact``)."""
    action, slot, bag = anim_build.new_action_for(rb.obj, name)
    t0, r0, s0 = rig.rest_components()
    r0 = quat.normalize(r0)
    static = rb.pose_basis(rb.conv.matrices(rig.world0)[None])[0]
    st, sr, ss = sampling.decompose_trs(static)
    chans = {"location": (clip.translation, t0, 3), "rotation_quaternion": (clip.rotation, r0, 4),
             "scale": (clip.scale, s0, 3)}
    track_of = {}
    for prop, (ch, _, _) in chans.items():
        track_of[prop] = {int(j): k for k, j in enumerate(ch.targets)}
    pending: dict[str, list] = {prop: [] for prop in chans}
    for bi, j in enumerate(rb.bones):
        j = int(j)
        bone = rb.bone_names[j]
        if not clip.animated[j]:
            for prop, val in (("location", st[bi]), ("rotation_quaternion", np.r_[sr[bi, 3], sr[bi, :3]]),
                              ("scale", ss[bi])):
                _key(bag, bone, prop, [0.0], val[None])
            continue
        for prop, (ch, rest, width) in chans.items():
            k = track_of[prop].get(j)
            if k is None:
                times = np.zeros(1)
                vals = rest[j][None]
            else:
                lo, hi = ch.starts[k], ch.starts[k + 1]
                times, vals = ch.times[lo:hi], ch.values[lo:hi]
            pending[prop].append((bone, bi, j, times, vals))
    # one vectorised conversion per channel kind for all bones of the set
    for prop, jobs in pending.items():
        if not jobs:
            continue
        counts = [len(t) for _, _, _, t, _ in jobs]
        vals = np.concatenate([v for *_, v in jobs])
        b = np.repeat([bi for _, bi, _, _, _ in jobs], counts)
        js = np.repeat([j for _, _, j, _, _ in jobs], counts)
        if prop == "location":
            out = rb.channels(vals, r0[js], s0[js], b)[0]
        elif prop == "rotation_quaternion":
            out = rb.channels(t0[js], vals, s0[js], b)[1]
            out = np.concatenate((out[:, 3:], out[:, :3]), axis=1)
        else:
            out = rb.channels(t0[js], r0[js], vals, b)[2]
        for (bone, _, _, times, _), part in zip(jobs, np.split(out, np.cumsum(counts)[:-1])):
            _key(bag, bone, prop, rig.ticks_to_frames(times, fps), part)
    return action, slot


def build_action_baked(rb: RigBuild, rig: XRig, clip, fps: float, name: str):
    """Every integer frame from the core's sampling (slerp), exact at those frames."""
    action, slot, bag = anim_build.new_action_for(rb.obj, name)
    f0, f1 = clip_frames(rig, clip, fps)
    frames = np.arange(np.floor(f0), np.ceil(f1) + 1.0)
    world = rb.conv.matrices(rig.sample_world(clip, rig.frames_to_ticks(frames, fps)))
    basis = rb.pose_basis(world)
    t, r, s = sampling.decompose_trs(basis)
    r[:1] = np.where(r[:1, :, 3:4] < 0, -r[:1], r[:1])
    r = quat.make_continuous(r, axis=0)
    for bi, j in enumerate(rb.bones):
        bone = rb.bone_names[int(j)]
        _key(bag, bone, "location", frames, t[:, bi])
        _key(bag, bone, "rotation_quaternion", frames, np.concatenate((r[:, bi, 3:], r[:, bi, :3]), axis=1))
        _key(bag, bone, "scale", frames, s[:, bi])
    return action, slot
