# SPDX-License-Identifier: GPL-3.0-or-later
"""The RiTE runtime's playback of a RAM + RAA files, evaluated with core/.

This is the reference every Blender import is verified against: bind pose,
track binding (joint name first, then joint id), the seed's sampling, the
Animator's stacking of mergeable and dominant animations, and skinning.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...core import blend, quat, sampling, skeleton, skinning
from .model import RaaAnimation, RamModel


@dataclass
class BoundClip:
    """An RAA bound to a rig: the sampled clip and the joint of each track."""

    animation: RaaAnimation
    clip: sampling.RiteClip
    joints: np.ndarray                 # (T,) joint index per bound track
    skipped: list[str] = field(default_factory=list)  # tracks whose joint is missing
    frame_count: int = 0
    _baked: np.ndarray | None = field(default=None, repr=False)

    def baked(self) -> np.ndarray:
        """Track rotations keyed by the importer, (N + 1, T, 4): every frame
        0..N-1, then at index N the value of frame 1 again (the loop's
        wrap), quaternion signs continuous along frames (first w >= 0).
        The importer keys exactly these values, so blending sees them too."""
        if self._baked is None:
            n = max(self.frame_count, 1)
            frames = np.arange(n + 1) if n >= 2 else np.zeros(2)
            if n >= 2:
                frames[n] = 1
            self._baked = normalize_quat_signs(self.clip.sample(frames))
        return self._baked


@dataclass
class RiteRig:
    ram: RamModel
    skel: skeleton.Skeleton
    orientation: np.ndarray   # (J, 4)
    translation: np.ndarray   # (J, 3)
    bind_rotation: np.ndarray  # (J, 4)
    bind_world: np.ndarray    # (J, 4, 4)
    names: list[str]

    @classmethod
    def from_ram(cls, ram: RamModel) -> "RiteRig":
        names = [j.name for j in ram.joints]
        skel = skeleton.Skeleton(np.array([j.parent for j in ram.joints], dtype=np.int64), names)
        ori = np.array([j.orientation for j in ram.joints]).reshape(-1, 4)
        tr = np.array([j.translation for j in ram.joints]).reshape(-1, 3)
        rot = np.array([j.rotation for j in ram.joints]).reshape(-1, 4)
        bind = skel.world(skeleton.rite_local(ori, tr, rot))
        return cls(ram, skel, ori, tr, rot, bind, names)

    @property
    def n_joints(self) -> int:
        return len(self.names)

    def size(self) -> float:
        """Diagonal of the bind-pose bounding box (mesh and joints)."""
        pts = np.concatenate((self.ram.positions.reshape(-1, 3), self.bind_world[:, :3, 3]))
        if len(pts) == 0:
            return 1.0
        d = float(np.linalg.norm(pts.max(0) - pts.min(0)))
        return d if d > 0 else 1.0

    def influences(self, dtype=np.float64) -> skinning.Influences:
        r = self.ram
        return skinning.Influences.from_sparse(len(r.positions), r.weight_vertex, r.weight_joint,
                                               r.weight_value, dtype=dtype)

    def bind(self, anim: RaaAnimation, warnings: list | None = None) -> BoundClip:
        """Bind tracks by joint name first, then joint id; report the rest."""
        by_name: dict[str, int] = {}
        for i, n in enumerate(self.names):
            by_name.setdefault(n, i)
        joints, frames, rots, skipped = [], [], [], []
        for tr in anim.tracks:
            j = by_name.get(tr.joint_name)
            if j is None and 0 <= tr.joint_id < self.n_joints and tr.joint_name not in by_name:
                # name unknown: fall back to the id only if that joint's name is not claimed
                j = int(tr.joint_id)
            if j is None:
                skipped.append(tr.joint_name)
                continue
            joints.append(j)
            frames.append(np.asarray(tr.frames))
            rots.append(np.asarray(tr.rotations))
        if skipped and warnings is not None:
            warnings.append(f"{anim.name}: {len(skipped)} track(s) name joints missing from the model, "
                            f"skipped: {', '.join(skipped[:10])}{' ...' if len(skipped) > 10 else ''}")
        joints_arr = np.array(joints, dtype=np.int64)
        if len(np.unique(joints_arr)) != len(joints_arr) and warnings is not None:
            warnings.append(f"{anim.name}: several tracks animate the same joint; the last one wins")
        clip = sampling.RiteClip.from_tracks(anim.frame_count, frames, rots)
        return BoundClip(anim, clip, joints_arr, skipped, int(anim.frame_count))

    def sample(self, bound: BoundClip, frames) -> tuple[np.ndarray, np.ndarray]:
        """Joint rotations (F, J, 4) at animation frames, and the (J,) mask of
        animated joints. Joints without a track keep their bind rotation."""
        frames = np.asarray(frames, dtype=np.float64).reshape(-1)
        rot = np.broadcast_to(self.bind_rotation, (len(frames), self.n_joints, 4)).copy()
        if len(bound.joints):
            rot[:, bound.joints] = bound.clip.sample(frames)
        active = np.zeros(self.n_joints, dtype=bool)
        active[bound.joints] = True
        return rot, active

    def world(self, rotations: np.ndarray) -> np.ndarray:
        return self.skel.world(skeleton.rite_local(self.orientation, self.translation, rotations))

    def skin_matrices(self, rotations: np.ndarray) -> np.ndarray:
        return skeleton.skin_matrices(self.world(rotations), self.bind_world)


def strip_frame(scene_frame, frame_count: int) -> np.ndarray:
    """Action frame shown at ``scene_frame`` by the RiTE loop: 0, then 1, 2,
    ..., N-1, 1, 2, ... (the Animator wraps to 1). The importer's NLA tracks
    evaluate the same: a strip over action frames [0, 1], then a repeated
    strip over [1, N] (key N repeats frame 1)."""
    f = np.asarray(scene_frame, dtype=np.float64)
    if frame_count <= 1:
        return np.zeros_like(f)
    period = frame_count - 1
    return np.where(f < 1.0, np.maximum(f, 0.0), 1.0 + np.mod(f - 1.0, period))


@dataclass
class StackEntry:
    bound: BoundClip
    mode: str = "MERGEABLE"   # or "DOMINANT"
    weight: float = 1.0


def layer_rotations(rig: RiteRig, bound: BoundClip, scene_frames) -> tuple[np.ndarray, np.ndarray]:
    """What a baked action (keys on every frame 0..N-1, linear, looping as
    the RiTE Animator does) evaluates at scene frames: (F, J, 4), (J,) mask.
    Integer frames are the runtime's exact values; between frames the keys
    are interpolated per component, as Blender's F-curves do."""
    a = strip_frame(scene_frames, bound.frame_count)
    baked = bound.baked()
    last = len(baked) - 1
    a0 = np.clip(np.floor(a).astype(np.int64), 0, last)
    a1 = np.clip(a0 + 1, 0, last)
    t = (a - a0)[:, None, None]
    rot = np.broadcast_to(quat.normalize(rig.bind_rotation), (len(a), rig.n_joints, 4)).copy()
    if len(bound.joints):
        rot[:, bound.joints] = baked[a0] + (baked[a1] - baked[a0]) * t
    active = np.zeros(rig.n_joints, dtype=bool)
    active[bound.joints] = True
    return rot, active


def evaluate_stack(rig: RiteRig, entries: list[StackEntry], scene_frames) -> np.ndarray:
    """Joint rotations (F, J, 4) of the seed's Animator at scene frames:
    mergeable animations (weighted average, applied first, in the order
    given) then dominant ones (override), each looping on its own; blended
    the way Blender's NLA blends Replace strips (see core.blend)."""
    merge, dom = [], []
    for e in entries:
        rot, act = layer_rotations(rig, e.bound, scene_frames)
        if e.mode == "DOMINANT":
            dom.append((rot, act))
        else:
            merge.append((rot, act, e.weight))
    layers = blend.stack_from_animations(merge, dom)
    return blend.evaluate_stack(quat.normalize(rig.bind_rotation), layers)


def normalize_quat_signs(q: np.ndarray) -> np.ndarray:
    """Quaternion keys made continuous along frames (first key w >= 0)."""
    q = np.array(q, dtype=np.float64, copy=True)
    first = q[:1]
    q[:1] = np.where(first[..., 3:4] < 0, -first, first)
    return quat.make_continuous(q, axis=0)
