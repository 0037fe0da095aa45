# SPDX-License-Identifier: GPL-3.0-or-later
"""The RiTE runtime of the RiTE skeletal animation system document (a
report on a small skeletal animation system: the RAM/RAA formats, the
joints' maths, skinning and the Animator's playback, with C# listings; the
document the project was seeded with, hence the ``seed_`` names),
transcribed from its C# listings for tests: an evaluation that is not the
project's own (no ``legacy_skin_io`` code), to check Blender and the core
against.

* ``seed_mul``, ``seed_lerp``, ``seed_slerp_no_invert``, ``seed_to_matrix``:
  the Quaternion class, one value at a time;
* ``seed_update_track``: ``Animator.updateAnimation`` for one track at one
  frame (``isKeyFrame``, ``getNextKeyFrame``, ``getPrevKeyFrame``);
* :func:`animator_frame`: the frame an animation is on after some updates
  (1, 2, ..., N-1, then 1 again; the scene's frame 0 is the entry frame 0);
* :class:`SeedRuntime`: ``Joint.updateAbsolutes``, ``getAbsoluteTransformation``,
  ``JointData.getAbsoluteTransformationInverse`` and ``Mesh.transformVertices``
  (weights as given, normals skinned and not renormalised), with the
  Animator's two loops: mergeable animations then dominant ones, each track
  overwriting its joint (the 2006 code, ``mix="ANIMATOR_2006"``), or the
  mergeable ones averaged by weight per joint (the document's stated next
  step, ``mix="WEIGHTED"``: a weighted sum of the rotations of the
  animations that animate the joint, each taken in the sign nearer to the
  sum so far, normalised). Tracks bind by joint id, as the runtime does
  (``bind="id"``), or by joint name (``bind="name"``).
"""
from __future__ import annotations

import math

import numpy as np


def seed_mul(l, r):
    return [
        l[1] * r[2] - l[2] * r[1] + l[3] * r[0] + l[0] * r[3],
        l[2] * r[0] - l[0] * r[2] + l[3] * r[1] + l[1] * r[3],
        l[0] * r[1] - l[1] * r[0] + l[3] * r[2] + l[2] * r[3],
        l[3] * r[3] - l[0] * r[0] - l[1] * r[1] - l[2] * r[2],
    ]


def seed_lerp(a, b, t):
    r = [a[i] * (1 - t) + b[i] * t for i in range(4)]
    n = math.sqrt(sum(x * x for x in r))
    return [x / n for x in r]


def seed_slerp_no_invert(a, b, t):
    cos = sum(a[i] * b[i] for i in range(4))
    if -0.95 < cos < 0.95:
        angle = math.acos(cos)
        inv = 1 / math.sin(angle)
        fa = math.sin(angle * (1 - t)) * inv
        fb = math.sin(angle * t) * inv
        return [a[i] * fa + b[i] * fb for i in range(4)]
    return seed_lerp(a, b, t)


def seed_update_track(keys, num_frames, current):
    """Animator.updateAnimation for one track at one frame (keys sorted)."""
    for k in keys:  # isKeyFrame / getKeyFrame
        if current < k[0]:
            break
        if current == k[0]:
            return list(k[1])
    nxt = keys[0]
    for k in keys:
        if current < k[0]:
            nxt = k
            break
    prev = keys[-1]
    for i, k in enumerate(keys):
        if current < k[0]:
            if i != 0:
                prev = keys[i - 1]
            break
    if nxt[0] < prev[0]:
        span = num_frames - prev[0] + nxt[0]
    else:
        span = nxt[0] - prev[0]
    if current < prev[0]:
        off = num_frames - prev[0] + current
    else:
        off = current - prev[0]
    if span == 0:       # a single key (the 2006 code divides by zero): held
        return list(prev[1])
    return seed_slerp_no_invert(prev[1], nxt[1], off / span)


def seed_to_matrix(q):
    x, y, z, w = q
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (w * y + x * z)],
        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
    ])


def seed_rotate(v, q):
    """Vector.rotate: q * (v, 0) * conj(q)."""
    p = [v[0], v[1], v[2], 0.0]
    r = seed_mul(seed_mul(q, p), [-q[0], -q[1], -q[2], q[3]])
    return np.array(r[:3])


def animator_frame(updates: int, num_frames: int) -> int:
    """The current frame of an animation after ``updates`` calls of
    updateAnimation from frame 0 (the scene's frame 0 shows frame 0)."""
    cur = 0
    for _ in range(updates):
        cur = 1 if cur == num_frames - 1 else cur + 1
    return cur


def _normalise(q):
    n = math.sqrt(sum(x * x for x in q))
    return [x / n for x in q]


class SeedRuntime:
    """A RAM (``io.rite.RamModel``, the file's numbers) played as the seed's runtime plays it."""

    def __init__(self, ram):
        self.ram = ram
        J = len(ram.joints)
        self.ids = [int(i) for i in (ram.joint_ids if ram.joint_ids is not None else range(J))]
        self.by_name = {}
        for i, j in enumerate(ram.joints):
            self.by_name.setdefault(j.name, i)
        self.order = []
        seen = set()

        def visit(i):
            if i in seen:
                return
            p = ram.joints[i].parent
            if p >= 0:
                visit(p)
            seen.add(i)
            self.order.append(i)

        for i in range(J):
            visit(i)
        self.bind_r, self.bind_t = self.absolutes([list(j.rotation) for j in ram.joints])

    def absolutes(self, relative):
        """Joint.updateAbsolutes for every joint, parents first: (absolute
        rotations, absolute translations) per joint index."""
        J = len(self.ram.joints)
        ar: list = [None] * J
        at: list = [None] * J
        for i in self.order:
            j = self.ram.joints[i]
            if j.parent != -1:
                ar[i] = seed_mul(seed_mul(ar[j.parent], list(j.orientation)), list(relative[i]))
                at[i] = at[j.parent] + seed_rotate(j.translation, ar[j.parent])
            else:
                ar[i] = seed_mul(list(j.orientation), list(relative[i]))
                at[i] = np.array(j.translation, dtype=np.float64)
        return ar, at

    @staticmethod
    def _transformation(r, t):
        """Joint.getAbsoluteTransformation: trans * rot (4x4)."""
        m = np.eye(4)
        m[:3, :3] = seed_to_matrix(r)
        m[:3, 3] = t
        return m

    def transform(self, relative):
        """Mesh.transformVertices: (vertices (V, 3), normals per triangle
        corner (3T, 3)), file space, weights as given, normals not
        renormalised."""
        ar, at = self.absolutes(relative)
        J = len(self.ram.joints)
        trans = np.empty((J, 4, 4))
        rots = np.empty((J, 3, 3))
        for i in range(J):
            bind = self._transformation(self.bind_r[i], self.bind_t[i])
            rot = seed_to_matrix(self.bind_r[i]).T                       # getAbsoluteTransformationInverse
            inv = np.eye(4)
            inv[:3, :3] = rot
            inv[:3, 3] = -(rot @ self.bind_t[i])
            assert np.allclose(inv @ bind, np.eye(4), atol=1e-9)
            trans[i] = self._transformation(ar[i], at[i]) @ inv
            rots[i] = seed_to_matrix(ar[i]) @ seed_to_matrix(self.bind_r[i]).T
        ram = self.ram
        V = len(ram.positions)
        total = np.zeros((V, 4, 4))
        total_r = np.zeros((V, 3, 3))
        np.add.at(total, ram.weight_vertex, trans[ram.weight_joint] * ram.weight_value[:, None, None])
        np.add.at(total_r, ram.weight_vertex, rots[ram.weight_joint] * ram.weight_value[:, None, None])
        p = np.concatenate((ram.positions, np.ones((V, 1))), axis=1)
        verts = np.einsum("vij,vj->vi", total, p)[:, :3]
        corner_v = ram.tri_vertices.reshape(-1)
        normals = None
        if ram.tri_normals is not None and len(ram.normals):
            n = ram.normals[ram.tri_normals.reshape(-1)]
            normals = np.einsum("cij,cj->ci", total_r[corner_v], n)
        return verts, normals

    # --- the Animator ---------------------------------------------------------------

    def _joint(self, track, bind: str):
        if bind == "name" and track.joint_name in self.by_name:
            return self.by_name[track.joint_name]
        return self.ids.index(int(track.joint_id))

    def _track_value(self, anim, track, frame):
        keys = sorted(zip(track.frames.tolist(), track.rotations.tolist()))
        return seed_update_track(keys, anim.frame_count, frame)

    def pose(self, scene_frame: int, mergeable=(), dominant=(), *, mix: str = "ANIMATOR_2006",
             bind: str = "id"):
        """Relative rotations of every joint after ``scene_frame`` updates:
        ``mergeable`` (RaaAnimation, weight) pairs, then ``dominant``
        RaaAnimations."""
        rel = [list(j.rotation) for j in self.ram.joints]
        sums: dict[int, list] = {}
        weight_of: dict[int, float] = {}
        for anim, weight in mergeable:
            frame = animator_frame(scene_frame, anim.frame_count)
            for track in anim.tracks:
                j = self._joint(track, bind)
                q = self._track_value(anim, track, frame)
                if mix == "ANIMATOR_2006":
                    rel[j] = q
                    continue
                q = _normalise(q)
                acc = sums.get(j, [0.0, 0.0, 0.0, 0.0])
                if sum(a * b for a, b in zip(acc, q)) < 0:
                    q = [-x for x in q]
                sums[j] = [a + weight * b for a, b in zip(acc, q)]
                weight_of[j] = weight_of.get(j, 0.0) + weight
        for j, acc in sums.items():
            if weight_of[j] > 0:
                rel[j] = _normalise(acc)
        for anim in dominant:
            frame = animator_frame(scene_frame, anim.frame_count)
            for track in anim.tracks:
                rel[self._joint(track, bind)] = self._track_value(anim, track, frame)
        return rel


def blender_space(points, bpy, forward: str = "-Z", up: str = "Y", scale: float = 1.0) -> np.ndarray:
    """File-space points or directions as the importer's Forward/Up/Scale
    options place them, from Blender's own definition of those options."""
    from bpy_extras.io_utils import axis_conversion

    C = np.array(axis_conversion(from_forward=forward, from_up=up).to_3x3(), dtype=np.float64)
    return scale * np.asarray(points, dtype=np.float64) @ C.T
