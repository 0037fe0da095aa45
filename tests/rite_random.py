# SPDX-License-Identifier: GPL-3.0-or-later
"""Random RiTE rigs and animations for tests (deterministic per seed).

Joints are listed child-before-parent, names contain spaces, keys are not on
frame 0, keys sit in opposite quaternion hemispheres, some tracks have a
single key and one joint has no track.
"""
from __future__ import annotations

import numpy as np

from legacy_skin_io.core import quat
from legacy_skin_io.io.rite import RaaAnimation, RaaTrack, RamModel, RiteJoint


def random_ram(seed: int, n_joints: int = 9, n_per_joint: int = 40) -> RamModel:
    rng = np.random.default_rng(seed)
    parents = [-1] + [int(rng.integers(0, j)) for j in range(1, n_joints)]
    order = list(reversed(range(n_joints)))  # children before parents in the file
    new_index = {old: i for i, old in enumerate(order)}
    joints = []
    for old in order:
        p = parents[old]
        joints.append(RiteJoint(
            name=f"joint {old} of rig",
            parent=new_index[p] if p >= 0 else -1,
            orientation=quat.normalize(rng.normal(size=4) * [0.3, 0.3, 0.3, 1]),
            translation=rng.normal(size=3) * 0.5 + [0, 0.6, 0],
            rotation=quat.normalize(rng.normal(size=4) * [0.2, 0.2, 0.2, 1])))
    # bind world positions of the joints, to scatter vertices around them
    from legacy_skin_io.core.skeleton import Skeleton
    from legacy_skin_io.io.rite.runtime import rite_local

    local = rite_local(np.array([j.orientation for j in joints]), np.array([j.translation for j in joints]),
                       np.array([j.rotation for j in joints]))
    heads = Skeleton(np.array([j.parent for j in joints])).world(local)[:, :3, 3]
    V = n_joints * n_per_joint
    owner = np.repeat(np.arange(n_joints), n_per_joint)
    positions = heads[owner] + rng.normal(scale=0.15, size=(V, 3))
    # triangles: fans within each joint's cluster
    tris = []
    for j in range(n_joints):
        base = j * n_per_joint
        for k in range(1, n_per_joint - 1):
            tris.append((base, base + k, base + k + 1))
    tri_vertices = np.array(tris)
    T = len(tri_vertices)
    normals = quat.normalize(rng.normal(size=(V, 4)))[:, :3]
    normals /= np.linalg.norm(normals, axis=1, keepdims=True)
    uvs = rng.uniform(0, 1, size=(V, 2))
    wv, wj, ww = [], [], []
    for v in range(V):
        k = int(rng.integers(1, 5))
        js = rng.choice(n_joints, size=k, replace=False)
        w = rng.uniform(0.1, 1, size=k)
        w /= w.sum()
        wv += [v] * k
        wj += list(js)
        ww += list(w)
    return RamModel(
        mesh_name="Random Body", joints=joints, positions=positions, normals=normals, uvs=uvs,
        tri_shader=rng.integers(0, 3, size=T), tri_vertices=tri_vertices, tri_normals=tri_vertices.copy(),
        tri_uvs=tri_vertices.copy(), weight_vertex=np.array(wv), weight_joint=np.array(wj),
        weight_value=np.array(ww))


def random_raa(seed: int, ram: RamModel, name: str, frame_count: int = 24) -> RaaAnimation:
    rng = np.random.default_rng(seed)
    tracks = []
    n = len(ram.joints)
    untracked = int(rng.integers(0, n))
    for j in range(n):
        if j == untracked:
            continue  # a joint with no track
        k = 1 if j % 4 == 1 else int(rng.integers(2, 6))  # some single-key tracks
        frames = np.sort(rng.choice(np.arange(1, frame_count), size=k, replace=False))  # not on frame 0
        q = quat.normalize(ram.joints[j].rotation + rng.normal(scale=0.5, size=(k, 4)))
        flip = rng.random(k) < 0.4
        q[flip] *= -1.0  # opposite hemispheres
        tracks.append(RaaTrack(joint_id=j, joint_name=ram.joints[j].name, frames=frames, rotations=q))
    return RaaAnimation(name=name, frame_count=frame_count, frame_count_given=True, tracks=tracks)
