# SPDX-License-Identifier: GPL-3.0-or-later
"""Clips baked into bone channels for the Blender builder's animation pass
(``operators.anim_build``; numpy only): the pose-basis location, rotation and scale of every bone at the
whole frames an action needs keyed, so that Blender's linear interpolation
of the keys plays the clip's own playback within ``KEY_TOLERANCE`` of the
model size at every frame.

* Where to evaluate (:func:`bake_clip`): every whole frame next to a key of
  the clip (where its playback bends), and between two evaluated frames the
  frames at the quarters of the interval, round after round, until the
  interpolation between evaluated frames reproduces every probe within half
  the tolerance. Between a clip's keys its playback is smooth (a slerp or
  lerp of two keys, through fixed matrices), so a long timeline with few
  keys costs a few evaluations per key, not one per frame; a clip keyed on
  every frame is evaluated on every frame.
* What to key (:func:`baked_keys`): per curve, the evaluated frames that
  ``core.key_reduction.linear_keys`` needs within the other half.

A bone's pose basis is ``A_j local_j K_j^-1`` (``core.rig``'s module doc):
computed from its own joint's local matrix when its parent bone's joint is
its joint's parent (the builder makes every ancestor of a bone a bone),
else from the joints' world matrices.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from ..core import key_reduction, quat, rig, sampling
from . import evaluate
from .model import Clip, Scene


class Rigged(Protocol):
    """What the bake reads of an import (``operators.built.Built``): the
    scene, the joint of each bone (parents first) and the bones' rest split."""

    scene: Scene
    rest: rig.RestSplit | None
    bones: np.ndarray
    default_points: np.ndarray | None        # evaluate.default_points of the scene, when made
    local_channels: tuple | None             # local_channels(), once made


def local_channels(built: Rigged) -> tuple:
    """(translation, rotation, scale) of every joint's local matrix at the
    default pose (``sampling.decompose_trs``; made once per import)."""
    if built.local_channels is None:
        assert built.scene.skeleton is not None
        built.local_channels = sampling.decompose_trs(built.scene.skeleton.local)
    return built.local_channels


#: Blender's linear interpolation of the keys misses the clip's playback by
#: at most this fraction of the model size, at any vertex and any whole frame
#: (a hundredth of what a verification allows, so that the misses of a whole
#: chain of bones stay far inside it).
KEY_TOLERANCE = 1e-7
#: Frames evaluated per pass (bounds the memory of a long timeline's matrices).
BAKE_CHUNK = 2048
#: A clip of at most this many frames is evaluated on every frame in one
#: pass (cheaper than the rounds of probes between its keys).
EVERY_FRAME_UP_TO = 256
_PROPS = ("location", "rotation_quaternion", "scale")


class _Basis:
    """The pose-basis channels of the bones of ``built`` in ``clip`` at any
    clip times: evaluated per time for the bones the clip moves; a bone it
    does not move keeps its channels at the default pose, evaluated once."""

    def __init__(self, built: Rigged, clip: Clip):
        sk = built.scene.skeleton
        assert sk is not None
        self.sk, self.rs, self.clip = sk, built.rest, clip
        self.bones = bones = built.bones
        self.t0, self.r0, self.s0 = local_channels(built)
        self.front = _bone_fronts(built, clip)
        self.moving = moving = clip.animated[bones]
        self.moving_cols = cols = np.flatnonzero(moving)
        self.tracks = {}
        for name, ch in (("t", clip.translation), ("s", clip.scale)):
            col = {int(j): k for k, j in enumerate(ch.targets.tolist())}
            hit = [(c, col[int(bones[bi])]) for c, bi in enumerate(cols.tolist()) if int(bones[bi]) in col]
            self.tracks[name] = ([c for c, _ in hit], [k for _, k in hit], ch)
        self.still = None           # (the still bones' columns, their channels at the default pose)
        if self.front is not None:
            still = np.flatnonzero(~moving)
            self.still = (still, sampling.decompose_trs(self.front[still] @ sk.local[bones[still]]
                                                        @ self.rs.bind_to_rest[still]))

    def local_rotations(self, times: np.ndarray) -> np.ndarray:
        """(N, B, 4): the rotations of the bones' joints (as sampled, any sign)."""
        clip = self.clip
        r = np.broadcast_to(self.r0, (len(times),) + self.r0.shape).copy()
        if len(clip.rotation.targets):
            r[:, clip.rotation.targets] = (clip.sampler.sample_rotations(times) if clip.sampler is not None
                                           else clip.rotation.sample(times, clip.rotation_mode))
        return r[:, self.bones]

    def __call__(self, times: np.ndarray):
        """(location, rotation (any sign), scale, joint rotations) (N, B, ...) at clip ``times``."""
        sk, rs, bones, cols = self.sk, self.rs, self.bones, self.moving_cols
        N, B = len(times), len(bones)
        t, r, s = np.empty((N, B, 3)), np.empty((N, B, 4)), np.empty((N, B, 3))
        q = self.local_rotations(times)
        if self.still is not None:
            still, values = self.still
            for out, v in zip((t, r, s), values):
                out[:, still] = v
        for lo in range(0, N, BAKE_CHUNK):
            hi = min(lo + BAKE_CHUNK, N)
            if self.front is None:
                world = sk.world(self.clip.sample_local(sk.local, times[lo:hi]))[:, bones]
                t[lo:hi], r[lo:hi], s[lo:hi] = sampling.decompose_trs(rs.pose_basis(world))
                continue
            if not len(cols):
                continue
            ct = np.broadcast_to(self.t0[bones[cols]], (hi - lo, len(cols), 3)).copy()
            cs = np.broadcast_to(self.s0[bones[cols]], (hi - lo, len(cols), 3)).copy()
            for name, out in (("t", ct), ("s", cs)):
                at, ks, ch = self.tracks[name]
                if at:
                    out[:, at] = ch.sample(times[lo:hi])[:, ks]
            local = sampling.compose_trs(ct, quat.normalize(q[lo:hi, cols]), cs)
            t[lo:hi, cols], r[lo:hi, cols], s[lo:hi, cols] = sampling.decompose_trs(
                self.front[cols][None] @ local @ rs.bind_to_rest[cols][None])
        return t, r, s, q

    def signed(self, r: np.ndarray, q: np.ndarray) -> np.ndarray:
        """Basis rotations ``r`` (F, B, 4) at consecutive evaluated frames in
        the sign a builder keys them with (``Clip.baked_rotations``'s): the
        joint rotations ``q`` continuous from w >= 0 at the first frame
        (a layer's sign in a weighted mix is chosen later, against the other
        layers); mapped to the basis (``RestSplit.channels``) they give each
        basis rotation its sign. Without rotation keys, ``r`` itself
        continuous from its first frame (``rig.basis_channels``)."""
        if not len(self.clip.rotation.targets):
            r = r.copy()
            r[:1] = quat.canonical(r[:1])
            return quat.make_continuous(r, axis=0)
        q = q.copy()
        q[:1] = quat.canonical(q[:1])
        q = quat.make_continuous(q, axis=0)
        rs = self.rs
        # q -> parent_bind_quat q conj(rest_to_bind_quat) is linear in q: one 4x4 matrix per bone
        images = quat.mul(quat.mul(rs.parent_bind_quat[None], np.eye(4)[:, None, :]),
                          quat.conj(rs.rest_to_bind_quat)[None])             # (4 basis quaternions, B, 4)
        mapped = (images.transpose(1, 2, 0)[None] @ q[..., None])[..., 0]
        return np.where(np.sum(r * mapped, axis=-1, keepdims=True) < 0, -r, r)


def _bone_fronts(built: Rigged, clip: Clip) -> np.ndarray | None:
    """(B, 4, 4): what each bone's joint-local matrix is multiplied by on the
    left to give its pose basis (``RestSplit.parent_bind_in_rest``, for a
    root bone also its joint's parents' default world); None when a bone's
    parent bone is not its joint's parent joint, or a root bone's parent
    joint moves in ``clip``."""
    sk = built.scene.skeleton
    assert sk is not None
    rs = built.rest
    front = rs.parent_bind_in_rest.copy()
    world = None
    for bi, j in enumerate(built.bones.tolist()):
        pj = int(sk.parents[j])
        pb = int(rs.parent[bi])
        if pb >= 0:
            if int(built.bones[pb]) != pj:
                return None
        elif pj >= 0:
            if clip.animated[pj]:
                return None
            world = sk.world() if world is None else world
            front[bi] = front[bi] @ world[pj]
    return front


def _bends(clip: Clip, frames: np.ndarray, fps: float) -> np.ndarray:
    """Indices into ``frames`` (:func:`key_frames`) of the whole
    frames next to a key of the clip, its cycle's start and end, and the
    first and last frame: between two of them its playback is smooth."""
    times = [ch.times for ch in (clip.rotation, clip.translation, clip.scale)]
    if clip.cycle is not None:
        times.append(np.asarray(clip.cycle, dtype=np.float64))
    at = clip.to_frames(np.concatenate(times), fps) if times else np.zeros(0)
    at = np.unique(np.concatenate((np.floor(at), np.ceil(at))))
    i = np.searchsorted(frames, at - 1e-9)
    near = np.concatenate((i - 1, i, i + 1))
    return np.unique(np.clip(np.r_[near, 0, len(frames) - 1], 0, len(frames) - 1))


@dataclass
class Budget:
    """What a bone's channels may miss: ``size`` (the model's, ``evaluate.size``)
    and each bone's ``reach`` (B,), how far from its joint a point it moves
    can be in any pose its bones can turn to: the farthest vertex weighted
    to it (or point of a mesh on its joint), or a child joint's distance
    plus the child's reach, at the default pose; the whole model's extent
    (its meshes' and joints' diagonals together) for a bone that moves no
    vertex (another object may be parented to it)."""

    size: float
    reach: np.ndarray

    def tolerances(self, built: Rigged, s: np.ndarray) -> dict[str, np.ndarray]:
        """Per property, (B,): how far a key's component may be from the
        playback so that no vertex moves by more than ``KEY_TOLERANCE`` of
        the model size: a rotation error of angle a moves a point by at most
        a times its distance from the joint, a scale error likewise, and the
        scales ``s`` (F, B, 3) of a bone and the bones above it (``grow``)
        multiply all three."""
        grow = _chain_scale(built.rest.parent, np.abs(s).max(axis=(0, 2)) if s.size else np.ones(len(built.bones)))
        budget = KEY_TOLERANCE * self.size / grow
        # a quaternion component off by e turns by at most 4 e (radians)
        return {"location": budget, "rotation_quaternion": budget / (4.0 * self.reach),
                "scale": budget / self.reach}


def budget(built: Rigged, size: float | None = None) -> Budget:
    """The :class:`Budget` of ``built``'s bones (``size``: ``evaluate.size``
    when already known)."""
    scene = built.scene
    sk = scene.skeleton
    assert sk is not None
    if size is None:
        size = evaluate.size(scene)
    joints = sk.world()[:, :3, 3]
    J = len(sk)
    reach = np.zeros(J)
    moved = np.zeros(J, dtype=bool)
    points = built.default_points if built.default_points is not None else evaluate.default_points(scene)
    start = 0
    for m in scene.meshes:
        p = points[start:start + len(m.positions)]
        start += len(m.positions)
        if m.skin is not None and len(m.skin.vertex):
            on = m.skin.weight != 0
            j, v = m.skin.joint[on], m.skin.vertex[on]
        elif m.parent >= 0:
            j, v = np.full(len(p), m.parent), np.arange(len(p))
        else:
            continue
        np.maximum.at(reach, j, np.linalg.norm(p[v] - joints[j], axis=1))
        moved[j] = True
    for j in sk.order[::-1]:                     # children first: a chain can straighten
        pj = int(sk.parents[j])
        if pj >= 0:
            reach[pj] = max(reach[pj], float(np.linalg.norm(joints[j] - joints[pj])) + reach[j])
            moved[pj] |= moved[j]
    whole = size + (float(np.linalg.norm(joints.max(0) - joints.min(0))) if J else 0.0)
    reach = reach[built.bones]
    return Budget(float(size), np.where(moved[built.bones] & (reach > 0), reach, whole))


def _chain_scale(parent: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """(B,): the product of ``scale`` (B,), at least 1 each, along each
    bone's chain up to its root (parents listed first)."""
    prod = np.ones(len(parent))
    for b, p in enumerate(parent.tolist()):
        prod[b] = max(float(scale[b]), 1.0) * (prod[p] if p >= 0 else 1.0)
    return prod


def _miss(va, vb, vp, u, unit: bool) -> np.ndarray:
    """Largest component difference (..., ) between ``vp`` and the linear
    interpolation of ``va``, ``vb`` at ``u`` (normalised when ``unit``)."""
    guess = va + (vb - va) * u[..., None]
    if unit:
        n = np.linalg.norm(guess, axis=-1, keepdims=True)
        guess = guess / np.where(n > 0, n, 1.0)
    return np.abs(guess - vp).max(axis=-1)


def key_frames(clip: Clip, fps: float) -> tuple[np.ndarray, np.ndarray]:
    """(scene frames, clip times) a baked action may be keyed at: every
    whole frame of the clip's range (``Clip.bake_frames`` without its wrap
    key, which a cycling action does not need: Cycles modifiers loop it)."""
    frames, times = clip.bake_frames(fps)
    if clip.cycle is not None and clip.cycle[1] - clip.cycle[0] > 0 and len(frames) > 1:
        frames, times = frames[:-1], times[:-1]
    return frames, times


def bake_clip(built: Rigged, clip: Clip, fps: float, room: Budget | None = None, every_frame: bool = False):
    """(frames, location (F, B, 3), rotation (F, B, 4), scale (F, B, 3)) of
    every bone at the frames of :func:`key_frames` that need evaluating (the
    module doc; all of them with ``every_frame``), rotations in the sign of
    ``Clip.baked_rotations``; ``room``: :func:`budget`'s, when already made."""
    room = room or budget(built)
    basis = _Basis(built, clip)
    frames, times = key_frames(clip, fps)
    F = len(frames)
    done = np.arange(F) if every_frame or F <= EVERY_FRAME_UP_TO else _bends(clip, frames, fps)
    t, r, s, q = basis(times[done])
    moving = basis.moving
    half = {k: v[moving] / 2 for k, v in room.tolerances(built, s).items()}
    rows = np.full(F, -1, dtype=np.int64)
    rows[done] = np.arange(len(done))
    blended = clip.playback != "ACTION"
    # open intervals between consecutive evaluated frames with frames between them
    a, b = (done[:-1], done[1:]) if moving.any() else (done[:0], done[:0])
    while True:
        a, b = a[b - a > 1], b[b - a > 1]
        if not len(a):
            break
        probes = np.stack([a + (k * (b - a)) // 4 for k in (1, 2, 3)], axis=1)      # (I, 3)
        new = np.setdiff1d(np.unique(probes), np.flatnonzero(rows >= 0))
        if len(new):
            nt, nr, ns, nq = basis(times[new])
            rows[new] = len(t) + np.arange(len(new))
            t, r, s, q = (np.concatenate(x) for x in ((t, nt), (r, nr), (s, ns), (q, nq)))
        ra, rb, rp = rows[a][:, None], rows[b][:, None], rows[probes]
        u = (frames[probes] - frames[a][:, None]) / (frames[b] - frames[a])[:, None]
        worst = np.zeros(len(a))
        for prop, v in zip(_PROPS, (t, r, s)):
            va, vb, vp = v[ra][..., moving, :], v[rb][..., moving, :], v[rp][..., moving, :]
            rotation = prop == "rotation_quaternion"
            if rotation:                            # one hemisphere, as the keys will be
                vb = np.where(np.sum(va * vb, axis=-1, keepdims=True) < 0, -vb, vb)
                vp = np.where(np.sum(va * vp, axis=-1, keepdims=True) < 0, -vp, vp)
            miss = _miss(va, vb, vp, np.broadcast_to(u[..., None], vp.shape[:-1]), rotation and not blended)
            worst = np.maximum(worst, (miss / half[prop]).max(axis=(1, 2)))
        bad = worst > 1.0
        a, b, probes = a[bad], b[bad], probes[bad]
        cuts = np.concatenate((a[:, None], probes, b[:, None]), axis=1)
        a, b = cuts[:, :-1].reshape(-1), cuts[:, 1:].reshape(-1)
    at = np.flatnonzero(rows >= 0)
    order = rows[at]
    return frames[at], t[order], basis.signed(r[order], q[order]), s[order]


def baked_keys(built: Rigged, frames: np.ndarray, channels, wanted: dict[str, list[int]],
               room: Budget | None = None, blended: bool = False) -> dict[str, dict[int, np.ndarray]]:
    """{property: {bone index: (F,) bool}}: which of the baked ``frames``
    (:func:`bake_clip`'s, with its location, rotation, scale ``channels``)
    to key for the bones ``wanted`` for each property: those
    ``core.key_reduction.linear_keys`` needs within half the tolerances
    (``room``'s, :class:`Budget`; the other half is the baked frames' own,
    towards the playback between them). Rotations are compared as Blender
    uses them, normalised, unless ``blended`` (a layer: the NLA mixes the
    components before normalising)."""
    t, r, s = channels
    tol = (room or budget(built)).tolerances(built, s)
    out: dict[str, dict[int, np.ndarray]] = {}
    for prop, vals in zip(_PROPS, (t, r, s)):
        cols = wanted.get(prop, [])
        if not cols:
            out[prop] = {}
            continue
        unit = prop == "rotation_quaternion" and not blended
        keep = key_reduction.linear_keys(frames, vals[:, cols], tol[prop][cols] / 2, unit=unit)
        out[prop] = {bi: keep[:, c] for c, bi in enumerate(cols)}
    return out
