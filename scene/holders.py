# SPDX-License-Identifier: GPL-3.0-or-later
"""Joints that only hold skinned meshes.

A .X file places each mesh in a Frame, and a skinned mesh's frame moves
nothing (its SkinWeights offsets place it): exporters give it a frame of its
own beside the skeleton (FPS Creator's ``Body``; this project's .X writer
for a mesh that hangs from no joint, since Panda3D skips the top-level
meshes of a file with frames). Read back, that frame is a joint like any
other. A format without mesh frames (RiTE) has no use for it:
:func:`without_mesh_holders` drops such joints, the meshes keeping their
placement.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..core import sampling
from .model import Scene, Skeleton, Skin


def mesh_holders(scene: Scene) -> np.ndarray:
    """(J,) bool: leaf joints that hold meshes, all of them skinned, and that
    no skin binds (an animation of such a joint moves nothing shown)."""
    sk = scene.skeleton
    if sk is None:
        return np.zeros(0, dtype=bool)
    J = len(sk)
    held = np.zeros(J, dtype=bool)
    rigid = np.zeros(J, dtype=bool)
    used = np.zeros(J, dtype=bool)
    for m in scene.meshes:
        if 0 <= m.parent < J:
            (held if m.skin is not None else rigid)[m.parent] = True
        if m.skin is not None:
            used[np.asarray(m.skin.joints, dtype=np.int64)] = True
            used[np.asarray(m.skin.joint, dtype=np.int64)] = True
    parent = np.zeros(J, dtype=bool)
    parent[sk.parents[sk.parents >= 0]] = True
    return held & ~rigid & ~used & ~parent


def _channels(ch: sampling.Channels, new: np.ndarray) -> sampling.Channels:
    """``ch`` on the kept joints (``new``: each joint's new index, -1 when dropped)."""
    if not len(ch.targets):
        return ch
    kept = [k for k, j in enumerate(ch.targets.tolist()) if new[j] >= 0]
    if len(kept) == len(ch.targets):
        return replace(ch, targets=new[ch.targets])
    if not kept:
        return sampling.Channels.empty(ch.values.shape[1])
    return sampling.Channels.from_tracks(new[ch.targets[kept]],
                                         [ch.times[ch.starts[k]:ch.starts[k + 1]] for k in kept],
                                         [ch.values[ch.starts[k]:ch.starts[k + 1]] for k in kept],
                                         ch.values.shape[1])


def without_mesh_holders(scene: Scene) -> Scene:
    """``scene`` without its :func:`mesh_holders` (the same scene when it
    has none): the meshes they held placed where the joint put them."""
    drop = mesh_holders(scene)
    if not drop.any():
        return scene
    sk = scene.skeleton
    assert sk is not None
    keep = np.flatnonzero(~drop)
    new = np.full(len(sk), -1, dtype=np.int64)
    new[keep] = np.arange(len(keep))
    parents = np.where(sk.parents[keep] >= 0, new[np.maximum(sk.parents[keep], 0)], -1)
    extras = dict(sk.extras)
    unnamed = (extras.get("xfile") or {}).get("unnamed")
    if unnamed is not None:
        extras["xfile"] = {**extras["xfile"], "unnamed": [int(new[j]) for j in unnamed if new[j] >= 0]}
    skeleton = Skeleton([sk.names[j] for j in keep.tolist()], parents, sk.local[keep], sk.bind[keep],
                        sk.has_bind[keep], extras=extras)
    world = sk.world()
    meshes = []
    for m in scene.meshes:
        parent, matrix = m.parent, np.asarray(m.matrix, dtype=np.float64)
        if 0 <= parent < len(sk) and drop[parent]:
            parent, matrix = -1, world[parent] @ matrix
        elif parent >= 0:
            parent = int(new[parent])
        skin = m.skin
        if skin is not None:
            skin = Skin(new[np.asarray(skin.joints, dtype=np.int64)], skin.inverse_bind, skin.vertex,
                        new[np.asarray(skin.joint, dtype=np.int64)], skin.weight)
        meshes.append(replace(m, parent=parent, matrix=matrix, skin=skin))
    clips = [replace(c, rotation=_channels(c.rotation, new), translation=_channels(c.translation, new),
                     scale=_channels(c.scale, new), animated=np.asarray(c.animated, dtype=bool)[keep])
             for c in scene.clips]
    return Scene(scene.name, skeleton, meshes, scene.materials, clips, scene.source, scene.extras)

