# SPDX-License-Identifier: GPL-3.0-or-later
"""Blender armature -> scene skeleton (the extractor's armature pass): a rig
made by the builder gives back the file's joints (names, default pose, bind
matrices, extras and the axis conversion, from :mod:`.metadata`), so that
exporting to the format it came from writes the file's own numbers; any
other armature gives one joint per bone."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..core import rig
from ..scene import AxisConversion, Scene, SceneError, Skeleton, Source
from . import metadata


def matrix(x) -> np.ndarray:
    """A Blender 4x4 matrix as float64 numpy."""
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


def rig_of(arm_obj, *, placement: bool = False) -> Rig:
    """The skeleton of an armature: the builder's stored joints when the rig
    came from a file (and its bones still exist), else one joint per bone
    (bind = rest, default pose = rest; an export then gives it the pose no
    action keys: ``anim_extract.hold_unkeyed_pose``).

    ``placement`` (exports): where the armature object's world matrix does
    not fold into the root joints, it is a joint of its own, named for the
    object, above them (see :func:`_placed`)."""
    arm_world = matrix(arm_obj.matrix_world)
    if placement:
        _check_invertible(arm_obj.name, arm_world)
    bones_bl = _bones_parents_first(arm_obj.data)
    rest_arm = {b.name: matrix(b.matrix_local) for b in bones_bl}
    meta = metadata.load(arm_obj, metadata.RIG_KEY)
    if meta and all(n in rest_arm for n in meta.get("bones", {}).values()):
        names = list(meta["names"])
        J = len(names)
        local = np.array(meta["local"], dtype=np.float64).reshape(J, 4, 4)
        bind = np.array(meta["bind"], dtype=np.float64).reshape(J, 4, 4)
        # the file's joints are in the armature's space: moved, scaled or turned, the object is a joint above them
        placed = placement and not _is_identity(arm_world)
        if placed:
            bind = arm_world @ bind
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
        r = Rig(arm_obj, scene, bones, bone_names, rig.RestSplit(rest, sk.bind[bones], parent))
        return _placed(r, arm_world) if placed else r
    names = [b.name for b in bones_bl]
    index = {n: i for i, n in enumerate(names)}
    parents = np.array([index[b.parent.name] if b.parent else -1 for b in bones_bl], dtype=np.int64)
    rest = np.array([arm_world @ rest_arm[n] for n in names]).reshape(-1, 4, 4)
    # a scale that is not uniform would shear the roots' local matrices, which keys cannot hold
    placed = placement and not bool(rig.similarity_part(arm_world, SIMILAR)[1])
    armature_space = np.array([rest_arm[n] for n in names]).reshape(-1, 4, 4) if placed else rest
    has_p = (parents >= 0)[:, None, None]
    local = np.linalg.inv(np.where(has_p, armature_space[np.maximum(parents, 0)], np.eye(4))) @ armature_space
    sk = Skeleton(names, parents, local, rest.copy(), np.ones(len(names), dtype=bool))
    scene = Scene(arm_obj.name, sk, source=Source("blender", "", AxisConversion()))
    bones = np.arange(len(names), dtype=np.int64)
    r = Rig(arm_obj, scene, bones, dict(enumerate(names)), rig.RestSplit(rest, rest, parents))
    return _placed(r, arm_world) if placed else r


#: relative spread of an armature object's scales below which it is uniform
#: (float32 noise of a rotation is ~1e-7; the shear left in the root joints
#: moves vertices by about this fraction of the model size)
SIMILAR = 1e-6


def _check_invertible(name: str, m: np.ndarray) -> None:
    """SceneError (one line) for an object matrix whose float32 determinant
    overflows or vanishes (a uniform scale past ~7e12 or below ~1e-15, or a
    zero scale): Blender cannot invert it, its own deformation of the rig's
    meshes overflows (an armature scaled by 1e30 shows vertices near 1e60),
    and nothing written could match what it shows."""
    with np.errstate(all="ignore"):
        det = float(np.linalg.det(m[:3, :3].astype(np.float32)))
    if not np.isfinite(det) or det == 0.0:
        raise SceneError(f"{name}: the object's matrix flattens or overflows space (scaled to zero, or beyond "
                         f"Blender's float range): it cannot be written")


def _is_identity(m: np.ndarray) -> bool:
    return bool(np.abs(m - np.eye(4)).max() <= 1e-9 * max(1.0, float(np.abs(m).max())))


def _placed(r: Rig, arm_world: np.ndarray) -> Rig:
    """``r`` with the armature object's world matrix as one more joint
    (the last, unanimated, named for the object) above its roots, whose
    local matrices are then in the armature's space: a file's frame holds
    any matrix (a non-uniform scale under a rotation too), where keys hold
    only translation, rotation and scale. Binds stay world matrices. The
    skeleton's ``extras["placement"]`` names that joint (``joint``, ``object``)
    for a writer that cannot carry it to say so."""
    sk = r.skeleton
    J = len(sk)
    name = r.obj.name
    while name in sk.names:
        name += "_object"
    parents = np.append(np.where(sk.parents < 0, J, sk.parents), -1)
    local = np.concatenate((sk.local, arm_world[None]))
    bind = np.concatenate((sk.bind, arm_world[None]))
    extras = dict(sk.extras, placement={"joint": J, "object": r.obj.name})
    r.scene.skeleton = Skeleton(list(sk.names) + [name], parents, local, bind, np.append(sk.has_bind, True),
                                extras=extras)
    return r
