# SPDX-License-Identifier: GPL-3.0-or-later
"""Binds of its own for a skinned mesh whose joints are bound differently
from the armature's bind pose in a way no vertex position can absorb
(``core.rebind``: a vertex weighted to two joints whose binds differ from
the armature's differently).

The mesh's Armature modifier deforms it with a second armature,
``<mesh>_binds``, a child of the rig: one bone per joint of the mesh, named
as the rig's (the vertex groups still name the rig's bones), each following
its rig bone's deformation (an Armature constraint: ``W_j B_j^-1``) and then
the mesh's own correction ``F_j = E_mj E^-1`` (a constant pose of the bone:
``R' Y R'^-1 = F_j``, ``R'`` its rest, ``Y`` location, rotation and scale).
The mesh deforms by ``W_j B_j^-1 F_j``, which on its vertices is Direct3D's
``W_j O_mj``, at every pose of the rig, whatever animates it.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import bpy
import numpy as np

from ..core import rebind, sampling
from ..scene import Mesh
from . import metadata

if TYPE_CHECKING:
    from .built import Built

KEY = "legacy_skin_io_binds"


def correction_frame(f: np.ndarray, head: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(rigid rest ``R'`` at ``head``, pose basis ``Y = R'^-1 F R'``) for an
    affine correction ``F``: ``R'`` turns to the right singular vectors of
    ``F``'s linear part, where ``Y`` is a rotation times a scale along the
    bone's axes (location, rotation and scale hold it)."""
    _, _, vt = np.linalg.svd(f[:3, :3])
    v = vt.T.copy()
    if np.linalg.det(v) < 0:
        v[:, 2] *= -1.0
    rest = np.eye(4)
    rest[:3, :3] = v
    rest[:3, 3] = head
    return rest, np.linalg.inv(rest) @ f @ rest


def build(built: Built, obj, mesh: Mesh, placement: rebind.SkinPlacement):
    """The ``<mesh>_binds`` armature of mesh object ``obj`` (see the module
    doc); returns it for the mesh's Armature modifier."""
    from .armature_build import create_bones

    main = built.armature
    assert mesh.skin is not None and built.rest is not None
    name = f"{obj.name}_binds"
    helper = bpy.data.objects.new(name, bpy.data.armatures.new(name))
    for coll in main.users_collection:
        coll.objects.link(helper)
    helper.parent = main
    slots = [k for k, j in enumerate(mesh.skin.joints.tolist()) if j in built.bone_names]
    joints = [int(mesh.skin.joints[k]) for k in slots]
    bone_names = [built.bone_names[j] for j in joints]
    frames = []
    for k, j in zip(slots, joints):
        bi = int(np.nonzero(built.bones == j)[0][0])
        frames.append(correction_frame(placement.corrections[k], built.rest.rest[bi, :3, 3])[0])
    lengths = [main.data.bones[n].length for n in bone_names]
    got = create_bones(bpy.context, helper, bone_names, [-1] * len(joints), np.array(frames).reshape(-1, 4, 4),
                       lengths)
    corrections = {}
    for k, n in zip(slots, got):
        rest = np.array(helper.data.bones[n].matrix_local, dtype=np.float64)
        f = placement.corrections[k]
        t, r, s = sampling.decompose_trs(np.linalg.inv(rest) @ f @ rest)
        pb = helper.pose.bones[n]
        pb.rotation_mode = "QUATERNION"
        pb.location = t.tolist()
        pb.rotation_quaternion = (float(r[3]), float(r[0]), float(r[1]), float(r[2]))
        pb.scale = s.tolist()
        con = pb.constraints.new("ARMATURE")
        target = con.targets.new()
        target.target = main
        target.subtarget = n
        target.weight = 1.0
        corrections[n] = f.reshape(-1)
    metadata.store(helper, KEY, {"armature": main.name, "mesh": obj.name, "corrections": corrections})
    helper.hide_set(True)
    return helper


def follows(obj, armature) -> bool:
    """True when ``obj`` is a ``<mesh>_binds`` armature of ``armature``."""
    return obj is not None and obj.parent == armature and metadata.load(obj, KEY) is not None


def corrections(obj) -> dict[str, np.ndarray]:
    """Bone name -> correction ``F`` (4, 4, armature space) of a ``<mesh>_binds`` armature."""
    meta = metadata.load(obj, KEY) or {}
    return {n: np.array(f, dtype=np.float64).reshape(4, 4) for n, f in (meta.get("corrections") or {}).items()}
