# SPDX-License-Identifier: GPL-3.0-or-later
""".X files built for tests of real rigs with non-uniform scale and several
bind poses: frames with non-uniform scale (static, keyed, at the root),
meshes bound with different bind poses (per-mesh SkinWeights offsets, a
skinned mesh inside its own transformed frame). Written with the project's
.X writer from matrices in the file's own space (column vectors here,
stored transposed as Direct3D's row vectors). Each builder returns the path
it wrote."""
from __future__ import annotations

import numpy as np

from legacy_skin_io.core import quat
from legacy_skin_io.io.xfile import (
    XAnimation,
    XAnimationKey,
    XAnimationSet,
    XFile,
    XFrame,
    XMesh,
    XSkinWeights,
    write_xfile,
)
from legacy_skin_io.io.xfile.conventions import key_from_rotation

BOX_FACES = np.array([[0, 1, 3, 2], [4, 6, 7, 5], [0, 4, 5, 1], [2, 3, 7, 6], [0, 2, 6, 4], [1, 5, 7, 3]])


def _row(m: np.ndarray) -> np.ndarray:
    return np.asarray(m, dtype=np.float64).T      # column-vector -> Direct3D row-vector


def trs(t=(0.0, 0.0, 0.0), axis=(0.0, 0.0, 1.0), angle: float = 0.0, s=(1.0, 1.0, 1.0)) -> np.ndarray:
    """Column-vector T @ R @ S (angle in degrees)."""
    a = np.asarray(axis, dtype=np.float64)
    m = quat.to_mat4(quat.from_axis_angle(a / np.linalg.norm(a), np.radians(angle)), np.asarray(t, dtype=float))
    m[:3, :3] = m[:3, :3] * np.asarray(s, dtype=np.float64)[None, :]
    return m


def box(lo, hi, segments: int = 1):
    """Corners of an axis-aligned box (segments along y: rings of 4), quads."""
    lo, hi = np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)
    ys = np.linspace(lo[1], hi[1], segments + 1)
    pos = np.array([[x, y, z] for y in ys for x in (lo[0], hi[0]) for z in (lo[2], hi[2])])
    ring = np.array([0, 1, 3, 2])          # (x0 z0) (x0 z1) (x1 z1) (x1 z0) around y
    faces = [ring[::-1], 4 * segments + ring]
    for k in range(segments):
        a, b = 4 * k + ring, 4 * (k + 1) + ring
        for i in range(4):
            faces.append([a[i], a[(i + 1) % 4], b[(i + 1) % 4], b[i]])
    return pos, np.array(faces)


def mesh(name, pos, faces) -> XMesh:
    faces = np.asarray(faces)
    return XMesh(name, np.asarray(pos, dtype=float), np.full(len(faces), faces.shape[1]), faces.reshape(-1))


def _frames(spec):
    """spec: [(name, parent name or None, column matrix)] -> (frames by name, roots)."""
    by = {}
    roots = []
    for name, parent, m in spec:
        f = XFrame(name, _row(m))
        by[name] = f
        if parent is None:
            roots.append(f)
        else:
            by[parent].children.append(f)
    return by, roots


def _world(spec) -> dict:
    out: dict = {}
    for name, parent, m in spec:
        out[name] = (out[parent] if parent is not None else np.eye(4)) @ m
    return out


def skin(m: XMesh, weights: dict, bind: dict) -> XMesh:
    """SkinWeights from {frame: (vertices, weights)} and {frame: bind world (column)}."""
    for name, (v, w) in weights.items():
        m.skin_weights.append(XSkinWeights(name, np.asarray(v, dtype=np.int64), np.asarray(w, dtype=float),
                                           _row(np.linalg.inv(bind[name]))))
    per_vertex = np.bincount(np.concatenate([np.asarray(v) for v, _ in weights.values()]),
                             minlength=len(m.positions))
    m.skin_header = (int(per_vertex.max()), int(per_vertex.max()), len(weights))
    return m


def limb_mesh(name, world: dict, chain: list[str], axis: int = 1, half: float = 0.15, segments: int = 4):
    """One skinned tube along ``chain`` (joints' heads in ``world``), each
    segment's rings weighted to its joint, the ring at a joint shared half
    and half with the previous joint. Returns (XMesh, {joint: (v, w)})."""
    pos, faces, weights = [], [], {n: ([], []) for n in chain}
    heads = [world[n][:3, 3] for n in chain]
    tail = heads[-1] + (heads[-1] - heads[-2] if len(heads) > 1 else np.eye(3)[axis] * 0.5)
    heads = heads + [tail]
    n_rings = segments * len(chain) + 1
    for r in range(n_rings):
        k, frac = divmod(r, segments)
        k = min(k, len(chain) - 1) if r < n_rings - 1 else len(chain) - 1
        frac = frac / segments if r < n_rings - 1 else 1.0
        c = heads[k] + frac * (heads[k + 1] - heads[k])
        for dx, dz in ((-half, -half), (-half, half), (half, half), (half, -half)):
            off = np.zeros(3)
            off[(axis + 1) % 3], off[(axis + 2) % 3] = dx, dz
            v = len(pos)
            pos.append(c + off)
            if frac == 0.0 and k > 0:
                weights[chain[k - 1]][0].append(v)
                weights[chain[k - 1]][1].append(0.5)
                weights[chain[k]][0].append(v)
                weights[chain[k]][1].append(0.5)
            else:
                weights[chain[k]][0].append(v)
                weights[chain[k]][1].append(1.0)
    for r in range(n_rings - 1):
        a, b = 4 * r, 4 * (r + 1)
        for i in range(4):
            faces.append([a + i, a + (i + 1) % 4, b + (i + 1) % 4, b + i])
    faces.append([3, 2, 1, 0])
    e = 4 * (n_rings - 1)
    faces.append([e, e + 1, e + 2, e + 3])
    return mesh(name, np.array(pos), np.array(faces)), weights


def _rot_keys(frame: str, ticks, axis, degrees) -> XAnimation:
    a = np.asarray(axis, dtype=float)
    q = quat.from_axis_angle(np.broadcast_to(a / np.linalg.norm(a), (len(ticks), 3)), np.radians(degrees))
    return XAnimation(None, frame, [XAnimationKey(0, np.asarray(ticks, dtype=float), key_from_rotation(q))])


def _rot_keys_on(frame: str, base: np.ndarray, ticks, axis, degrees) -> XAnimation:
    """Rotation keys that turn ``base``'s rotation further by ``degrees`` about ``axis``."""
    a = np.asarray(axis, dtype=float)
    q = quat.from_axis_angle(np.broadcast_to(a / np.linalg.norm(a), (len(ticks), 3)), np.radians(degrees))
    q0 = quat.from_mat3(base[:3, :3] / np.cbrt(np.linalg.det(base[:3, :3])))
    return XAnimation(None, frame, [XAnimationKey(0, np.asarray(ticks, dtype=float),
                                                  key_from_rotation(quat.mul(q0[None], q)))])


def _pos_keys(ticks, values) -> XAnimationKey:
    return XAnimationKey(2, np.asarray(ticks, dtype=float), np.asarray(values, dtype=float))


def _scale_keys(ticks, values) -> XAnimationKey:
    return XAnimationKey(1, np.asarray(ticks, dtype=float), np.asarray(values, dtype=float))


TICKS = np.array([0.0, 10.0, 20.0, 30.0, 40.0])


def scaled_rigid_file(path):
    """Maya style: ``Wall`` is scaled 10.2 x 1.5 x 10.2 (and turned) and holds
    a rigid box; its children ``Pillar1`` (rotating under the scale, so its
    box shears as Direct3D draws it) and ``Pillar2`` hold boxes too; ``Door``
    swings on rotation keys. Nothing is skinned."""
    spec = [("Scene_Root", None, np.eye(4)),
            ("Wall", "Scene_Root", trs((0.5, 0.0, 0.2), (0, 1, 0), 30.0, (10.2, 1.5, 10.2))),
            ("Pillar1", "Wall", trs((0.3, 1.0, 0.0), (1, 0, 1), 20.0)),
            ("Pillar2", "Wall", trs((-0.3, 1.0, 0.1), (0, 0, 1), -10.0)),
            ("Cap", "Pillar1", trs((0.0, 1.0, 0.0))),
            ("Door", "Scene_Root", trs((0.0, 0.0, -3.0)))]
    by, roots = _frames(spec)
    for name, lo, hi in (("Wall", (-0.4, 0, -0.05), (0.4, 1, 0.05)), ("Pillar1", (-0.05, 0, -0.05), (0.05, 1, 0.05)),
                         ("Pillar2", (-0.05, 0, -0.05), (0.05, 1, 0.05)), ("Cap", (-0.1, 0, -0.1), (0.1, 0.1, 0.1)),
                         ("Door", (0, 0, -0.1), (2, 4, 0.1))):
        by[name].meshes.append(mesh(f"{name}Shape", *box(lo, hi)))
    xf = XFile(frames=roots)
    aset = XAnimationSet("Swing")
    aset.animations.append(_rot_keys("Door", TICKS * 480, (0, 1, 0), [0, 30, 60, 30, 0]))
    aset.animations.append(_rot_keys_on("Pillar1", spec[2][2], TICKS * 480, (0, 0, 1), [0, 20, 40, 20, 0]))
    xf.animation_sets.append(aset)
    write_xfile(xf, path)
    return path


def scaled_skinned_file(path):
    """A static non-uniform scale on a skinning joint: ``Hips`` (scaled
    1.5 x 0.6 x 1.2, turned) > ``Spine`` > ``Neck`` > ``Head`` hold one
    skinned tube; Spine, Neck and Head turn on rotation keys, so Direct3D
    shears the tube (the scale is applied after their rotation); a rigid box
    hangs from Neck."""
    spec = [("Root", None, np.eye(4)),
            ("Hips", "Root", trs((0.0, 1.0, 0.0), (0, 1, 1), 25.0, (1.5, 0.6, 1.2))),
            ("Spine", "Hips", trs((0.0, 0.8, 0.0), (1, 0, 0), 10.0)),
            ("Neck", "Spine", trs((0.0, 0.8, 0.0), (0, 0, 1), -15.0)),
            ("Head", "Neck", trs((0.0, 0.6, 0.0)))]
    by, roots = _frames(spec)
    world = _world(spec)
    tube, weights = limb_mesh("Body", world, ["Hips", "Spine", "Neck", "Head"])
    by["Root"].meshes.append(skin(tube, weights, world))
    by["Neck"].meshes.append(mesh("Collar", *box((-0.2, 0.0, -0.2), (0.2, 0.1, 0.2))))
    xf = XFile(frames=roots)
    aset = XAnimationSet("Bend")
    for name, axis, deg in (("Spine", (1, 0, 0), [0, 25, 40, 10, 0]), ("Neck", (0, 0, 1), [0, -20, 30, 35, 0]),
                            ("Head", (0, 1, 0), [0, 45, 90, 45, 0])):
        base = dict((n, m) for n, _, m in spec)[name]
        aset.animations.append(_rot_keys_on(name, base, TICKS * 480, axis, deg))
    xf.animation_sets.append(aset)
    write_xfile(xf, path)
    return path


def animated_scale_file(path):
    """Non-uniform scale keys: ``Arm`` stretches (scale keys, rotation keys)
    above ``Forearm`` (rotation keys) > ``Hand``; one skinned tube over the
    three, a rigid box on Forearm. Set ``Stretch`` keys scale and rotation;
    set ``ScaleOnly`` keys only Arm's scale."""
    spec = [("Root", None, np.eye(4)),
            ("Arm", "Root", trs((0.2, 1.0, 0.1), (0, 0, 1), -60.0)),
            ("Forearm", "Arm", trs((0.3, 1.0, 0.2), (1, 0, 0), 20.0)),
            ("Hand", "Forearm", trs((-0.2, 0.8, 0.1)))]
    by, roots = _frames(spec)
    world = _world(spec)
    tube, weights = limb_mesh("Limb", world, ["Arm", "Forearm", "Hand"])
    by["Root"].meshes.append(skin(tube, weights, world))
    by["Forearm"].meshes.append(mesh("Bracelet", *box((-0.25, 0.3, -0.25), (0.25, 0.4, 0.25))))
    xf = XFile(frames=roots)
    base = dict((n, m) for n, _, m in spec)
    stretch = XAnimationSet("Stretch")
    arm = _rot_keys_on("Arm", base["Arm"], TICKS * 480, (1, 0, 0), [0, 20, 40, 20, 0])
    arm.keys.append(_scale_keys(TICKS * 480, [[1, 1, 1], [1.6, 0.7, 1.1], [0.8, 1.9, 1.4], [2.2, 1.0, 0.6],
                                              [1, 1, 1]]))
    stretch.animations.append(arm)
    stretch.animations.append(_rot_keys_on("Forearm", base["Forearm"], TICKS * 480, (0, 0, 1), [0, 40, 80, 40, 0]))
    xf.animation_sets.append(stretch)
    only = XAnimationSet("ScaleOnly")
    only.animations.append(XAnimation(None, "Arm", [_scale_keys(TICKS[:3] * 480, [[1, 1, 1], [1.8, 0.6, 1.0],
                                                                                   [1, 1, 1]])]))
    xf.animation_sets.append(only)
    write_xfile(xf, path)
    return path


def scaled_root_file(path, sheared: bool = False):
    """What this add-on writes for an armature object scaled (1, 2, 0.5) and
    turned: a root frame with that non-uniform scale and a rotation, an
    animated chain under it skinning one tube. ``sheared``: the root frame
    also turns before the scale (``T R S R2``: its scale is not along its
    own axes)."""
    root = trs((0.3, 0.0, -0.2), (1, 2, 0.5), 35.0, (1.0, 2.0, 0.5))
    if sheared:
        root = root @ trs(axis=(0, 1, 1), angle=40.0)
    spec = [("Armature", None, root),
            ("Bone", "Armature", trs((0.0, 0.0, 0.0), (1, 0, 0), -90.0)),
            ("Bone.001", "Bone", trs((0.0, 1.0, 0.0), (0, 0, 1), 30.0)),
            ("Bone.002", "Bone.001", trs((0.0, 1.0, 0.0), (1, 0, 0), -20.0))]
    by, roots = _frames(spec)
    world = _world(spec)
    tube, weights = limb_mesh("Tube", world, ["Bone", "Bone.001", "Bone.002"])
    # skinned vertices are stored in the space of the frame holding the mesh
    tube.positions = tube.positions @ np.linalg.inv(root)[:3, :3].T + np.linalg.inv(root)[:3, 3]
    by["Armature"].meshes.append(skin(tube, weights, {k: np.linalg.inv(root) @ v for k, v in world.items()}))
    xf = XFile(frames=roots)
    base = dict((n, m) for n, _, m in spec)
    aset = XAnimationSet("ArmatureAction")
    for name, axis, deg in (("Bone", (0, 0, 1), [0, 30, 60, 30, 0]), ("Bone.001", (1, 0, 0), [0, 45, -30, 20, 0]),
                            ("Bone.002", (0, 1, 1), [0, 60, 90, 30, 0])):
        aset.animations.append(_rot_keys_on(name, base[name], TICKS * 480, axis, deg))
    xf.animation_sets.append(aset)
    write_xfile(xf, path)
    return path


def _head_rig():
    return [("Root", None, np.eye(4)),
            ("Spine", "Root", trs((0.0, 1.0, 0.0))),
            ("Neck", "Spine", trs((0.0, 0.6, 0.0), (1, 0, 0), 5.0)),
            ("Head", "Neck", trs((0.0, 0.3, 0.0))),
            ("Jaw", "Head", trs((0.0, 0.05, 0.08), (1, 0, 0), 10.0))]


def _head_anim(spec) -> XAnimationSet:
    base = dict((n, m) for n, _, m in spec)
    aset = XAnimationSet("Talk")
    for name, axis, deg in (("Spine", (0, 1, 0), [0, 20, -20, 10, 0]), ("Neck", (1, 0, 0), [0, 15, 30, -10, 0]),
                            ("Jaw", (1, 0, 0), [0, 25, 5, 30, 0])):
        aset.animations.append(_rot_keys_on(name, base[name], TICKS * 480, axis, deg))
    return aset


def differing_offsets_file(path, blended_teeth: bool = True):
    """FPS Creator style: the body tube (Spine, Neck, Head, Jaw) and a
    ``Teeth`` mesh bound with the same offsets for Head but the Jaw offset
    of a jaw turned by 1 degree. Teeth vertices are weighted to Jaw or to
    Head alone, and (``blended_teeth``) a ring half and half to both."""
    spec = _head_rig()
    by, roots = _frames(spec)
    world = _world(spec)
    body, weights = limb_mesh("Body", world, ["Spine", "Neck", "Head", "Jaw"])
    by["Root"].meshes.append(skin(body, weights, world))
    jaw_bind = world["Jaw"] @ trs(axis=(1, 0, 0), angle=1.0)
    pos, faces = box((-0.12, 1.85, 0.05), (0.12, 2.05, 0.2), segments=2)
    tw = {"Head": ([8, 9, 10, 11], [1.0] * 4), "Jaw": ([0, 1, 2, 3], [1.0] * 4)}
    if blended_teeth:
        tw = {"Head": ([8, 9, 10, 11, 4, 5, 6, 7], [1.0] * 4 + [0.5] * 4),
              "Jaw": ([0, 1, 2, 3, 4, 5, 6, 7], [1.0] * 4 + [0.5] * 4)}
    else:
        tw = {"Head": ([8, 9, 10, 11, 4, 5], [1.0] * 6), "Jaw": ([0, 1, 2, 3, 6, 7], [1.0] * 6)}
    teeth = skin(mesh("Teeth", pos, faces), tw, {"Head": world["Head"], "Jaw": jaw_bind})
    by["Root"].meshes.append(teeth)
    xf = XFile(frames=roots)
    xf.animation_sets.append(_head_anim(spec))
    write_xfile(xf, path)
    return path


def mesh_in_frame_file(path):
    """kW X-port style: the body tube in frame ``BodyMesh`` and a ``Helmet``
    mesh inside frame ``HelmetMesh``, scaled and translated, with the same
    offsets as the body (Direct3D ignores the frame holding a skinned mesh,
    so the helmet sits where the offsets put it)."""
    spec = _head_rig() + [("BodyMesh", None, np.eye(4)),
                          ("HelmetMesh", None, trs((0.0, 140.0 / 100.0, 0.3), (0, 1, 0), 0.0, (1.3, 1.3, 1.3)))]
    by, roots = _frames(spec)
    world = _world(spec)
    body, weights = limb_mesh("Body", world, ["Spine", "Neck", "Head", "Jaw"])
    by["BodyMesh"].meshes.append(skin(body, weights, world))
    pos, faces = box((-0.2, 1.9, -0.2), (0.2, 2.2, 0.2), segments=2)
    helmet = skin(mesh("Helmet", pos, faces), {"Head": (np.arange(12), np.ones(12))}, world)
    by["HelmetMesh"].meshes.append(helmet)
    xf = XFile(frames=roots)
    xf.animation_sets.append(_head_anim(spec))
    write_xfile(xf, path)
    return path


ALL = {"scaled_rigid": scaled_rigid_file, "scaled_skinned": scaled_skinned_file,
       "animated_scale": animated_scale_file, "scaled_root": scaled_root_file,
       "sheared_root": lambda path: scaled_root_file(path, sheared=True),
       "differing_offsets": differing_offsets_file, "mesh_in_frame": mesh_in_frame_file}
