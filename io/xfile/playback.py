# SPDX-License-Identifier: GPL-3.0-or-later
"""Reference playback of a DirectX .X file with core/ (no bpy).

Everything here is in the file's own space (Direct3D, left-handed), but with
column-vector matrices: a stored row-vector matrix ``M`` is used as ``M.T``.

* frames -> a ``Skeleton`` (every frame a joint, parents first);
* the bind pose of each skinned joint: ``mesh frame world @ inverse(matrixOffset)``;
* one ``XClip`` per AnimationSet (rotation / position / scale channels; matrix
  keys decomposed into the three, as assimp does), sampled with the core;
* skinned and rigid vertex positions at any time (Blender's weight policy).

Rotation keys are stored (w, x, y, z) and are the *conjugate* of the rotation
the row-vector matrix applies (assimp negates w): a key at time 0 reproduces
the FrameTransformMatrix only with this convention (checked on tiny_4anim.x,
BCN_Epileptic.X, anim_test.x, Testwuson.X). ``rotation_from_key`` is the one
place that knows it.

``Handedness`` maps file space to Blender space: a reflection/rotation ``C``
(3x3, det -1 for a handedness change) and a uniform scale; matrices are
conjugated, quaternions and scale vectors mapped channel by channel (the maps
are linear, so interpolating before or after the conversion is the same).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...core import quat, sampling, skeleton, skinning
from .model import XFile, XFrame, XMesh

DEFAULT_TICKS_PER_SECOND = 4800
# File (x, y, z) -> Blender (x, z, y): assimp's z -> -z, then glTF's Y-up -> Z-up.
DEFAULT_AXES = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 1.0, 0.0]])


def rotation_from_key(wxyz: np.ndarray) -> np.ndarray:
    """Stored rotation keys (..., 4) w, x, y, z -> rotations (x, y, z, w) for
    column vectors in file space: the conjugate of the stored quaternion."""
    wxyz = np.asarray(wxyz, dtype=np.float64)
    return np.stack((-wxyz[..., 1], -wxyz[..., 2], -wxyz[..., 3], wxyz[..., 0]), axis=-1)


def key_from_rotation(xyzw: np.ndarray) -> np.ndarray:
    """Inverse of ``rotation_from_key`` (for writers)."""
    xyzw = np.asarray(xyzw, dtype=np.float64)
    return np.stack((xyzw[..., 3], -xyzw[..., 0], -xyzw[..., 1], -xyzw[..., 2]), axis=-1)


def col(m: np.ndarray) -> np.ndarray:
    """Direct3D row-vector matrices (..., 4, 4) <-> column-vector matrices."""
    return np.swapaxes(np.asarray(m, dtype=np.float64), -1, -2)


class Handedness:
    """File space -> Blender space: ``p' = s * C p``; matrices ``A' = M A M^-1``."""

    def __init__(self, axes=None, scale: float = 1.0):
        self.C = np.array(DEFAULT_AXES if axes is None else axes, dtype=np.float64)[:3, :3]
        self.s = float(scale)
        self.det = float(np.sign(np.linalg.det(self.C)))
        self.M = np.eye(4)
        self.M[:3, :3] = self.C * self.s
        self.Minv = np.linalg.inv(self.M)

    @property
    def mirrors(self) -> bool:
        return self.det < 0

    def points(self, p) -> np.ndarray:
        return (np.asarray(p, dtype=np.float64) @ self.C.T) * self.s

    def directions(self, n) -> np.ndarray:
        return np.asarray(n, dtype=np.float64) @ self.C.T

    def matrices(self, a) -> np.ndarray:
        return self.M @ np.asarray(a, dtype=np.float64) @ self.Minv

    def matrices_back(self, a) -> np.ndarray:
        return self.Minv @ np.asarray(a, dtype=np.float64) @ self.M

    def quats(self, q) -> np.ndarray:
        """Rotation quaternions (..., 4) x, y, z, w: q' such that
        R(q') = C R(q) C^T (the axis is a pseudo-vector)."""
        q = np.asarray(q, dtype=np.float64)
        return np.concatenate((self.det * (q[..., :3] @ self.C.T), q[..., 3:]), axis=-1)

    def translations(self, t) -> np.ndarray:
        return self.points(t)

    def scales(self, s) -> np.ndarray:
        """Scale vectors: exact when C is a signed permutation (axis choices)."""
        return np.asarray(s, dtype=np.float64) @ np.abs(self.C).T


@dataclass
class XClip:
    """One AnimationSet's channels (file space, column vectors)."""

    name: str
    rotation: sampling.Channels       # x y z w, normalised, sign-continuous per track
    translation: sampling.Channels
    scale: sampling.Channels
    animated: np.ndarray              # (J,) bool: frames with any key
    first_tick: float = 0.0
    last_tick: float = 0.0

    def time_clip(self) -> sampling.TimeClip:
        return sampling.TimeClip(self.rotation, self.translation, self.scale)


@dataclass
class SkinnedMesh:
    """Influences of one mesh on joints (joint indices are frame indices)."""

    vertex: np.ndarray
    joint: np.ndarray
    weight: np.ndarray
    offsets: dict[int, np.ndarray]   # joint -> matrixOffset as a column-vector matrix


@dataclass
class XRig:
    xfile: XFile
    frames: list[XFrame]
    names: list[str]
    skel: skeleton.Skeleton
    local0: np.ndarray                 # (J, 4, 4) FrameTransformMatrix, column vectors
    world0: np.ndarray                 # (J, 4, 4)
    meshes: list[XMesh]
    mesh_frame: np.ndarray             # (N,) frame index of each mesh, -1 for top-level meshes
    skins: list[SkinnedMesh | None]
    bind: np.ndarray                   # (J, 4, 4) bind world of each frame (see resolve_binds)
    has_offset: np.ndarray             # (J,) bool: bind from a matrixOffset
    bind_spread: np.ndarray            # (J,) largest disagreement between meshes' binds
    clips: list[XClip]
    ticks_per_second: float
    warnings: list[str] = field(default_factory=list)

    # ------------------------------------------------------------------
    @classmethod
    def from_xfile(cls, xf: XFile) -> "XRig":
        warnings: list[str] = []
        frames = list(xf.all_frames())
        index = {id(f): i for i, f in enumerate(frames)}
        parents = np.full(len(frames), -1, dtype=np.int64)
        for f in frames:
            for c in f.children:
                parents[index[id(c)]] = index[id(f)]
        names, seen = [], set()
        for i, f in enumerate(frames):
            n = f.name or f"frame{i}"
            if n in seen:
                n = f"{n}.{i}"
                warnings.append(f"duplicate frame name {f.name!r}: renamed {n!r}")
            seen.add(n)
            names.append(n)
        skel = skeleton.Skeleton(parents, names)
        local0 = col(np.array([f.matrix for f in frames]).reshape(-1, 4, 4))
        world0 = skel.world(local0)
        by_name: dict[str, int] = {}
        for i, f in enumerate(frames):
            if f.name is not None:
                by_name.setdefault(f.name, i)
        meshes, mesh_frame = list(xf.meshes), [-1] * len(xf.meshes)
        for i, f in enumerate(frames):
            for m in f.meshes:
                meshes.append(m)
                mesh_frame.append(i)
        mesh_frame = np.array(mesh_frame, dtype=np.int64)
        J = len(frames)
        bind = np.full((J, 4, 4), np.nan)
        spread = np.zeros(J)
        skins: list[SkinnedMesh | None] = []
        for m, f in zip(meshes, mesh_frame):
            if not m.skin_weights:
                skins.append(None)
                continue
            mw = world0[f] if f >= 0 else np.eye(4)
            vs, js, ws, offs = [], [], [], {}
            for sw in m.skin_weights:
                j = by_name.get(sw.frame_name)
                if j is None:
                    warnings.append(f"mesh {m.name!r}: SkinWeights name a missing frame "
                                    f"{sw.frame_name!r}; its weights are ignored")
                    continue
                off = col(sw.matrix_offset)
                b = mw @ np.linalg.inv(off)
                if np.isnan(bind[j, 0, 0]):
                    bind[j] = b
                else:
                    spread[j] = max(spread[j], float(np.abs(bind[j] - b).max()))
                offs[j] = off
                vs.append(np.asarray(sw.vertex_indices, dtype=np.int64))
                js.append(np.full(len(sw.vertex_indices), j, dtype=np.int64))
                ws.append(np.asarray(sw.weights, dtype=np.float64))
            cat = (lambda a, dt: np.concatenate(a) if a else np.zeros(0, dtype=dt))
            skins.append(SkinnedMesh(cat(vs, np.int64), cat(js, np.int64), cat(ws, np.float64), offs))
        has_offset = ~np.isnan(bind[:, 0, 0])
        resolve_binds(skel, local0, world0, bind)
        tps = float(xf.anim_ticks_per_second or DEFAULT_TICKS_PER_SECOND)
        rig = cls(xf, frames, names, skel, local0, world0, meshes, mesh_frame, skins, bind, has_offset,
                  spread, [], tps, warnings)
        rig.clips = [rig._clip(s, i, by_name) for i, s in enumerate(xf.animation_sets)]
        return rig

    def _clip(self, aset, i: int, by_name: dict[str, int]) -> XClip:
        name = aset.name or f"AnimationSet{i}"
        tracks = {"r": ([], [], []), "t": ([], [], []), "s": ([], [], [])}
        animated = np.zeros(len(self.frames), dtype=bool)
        claimed: set[int] = set()
        missing = []
        lo, hi = np.inf, -np.inf
        for a in aset.animations:
            j = by_name.get(a.frame_name) if a.frame_name is not None else None
            if j is None:
                missing.append(str(a.frame_name))
                continue
            if j in claimed:
                self.warnings.append(f"{name}: several Animations target frame {a.frame_name!r}; the last wins")
            claimed.add(j)
            keys = {k.key_type: k for k in a.keys if len(k.times)}
            if not keys:
                continue
            animated[j] = True
            mat = keys.get(4) or keys.get(3)
            if mat is not None:
                if any(t in keys for t in (0, 1, 2)):
                    self.warnings.append(f"{name}: frame {a.frame_name!r} has matrix and separate keys; "
                                         f"the matrix keys are used")
                m = col(np.asarray(mat.values, dtype=np.float64).reshape(-1, 4, 4))
                t, r, s = sampling.decompose_trs(m)
                times = np.asarray(mat.times, dtype=np.float64)
                comps = {"r": r, "t": t, "s": s}
                for c in "rts":
                    _put(tracks[c], j, times, comps[c])
                lo, hi = min(lo, times.min()), max(hi, times.max())
                continue
            for kt, c in ((0, "r"), (2, "t"), (1, "s")):
                k = keys.get(kt)
                if k is None:
                    continue
                v = np.asarray(k.values, dtype=np.float64)
                if c == "r":
                    v = rotation_from_key(v)
                times = np.asarray(k.times, dtype=np.float64)
                _put(tracks[c], j, times, v)
                lo, hi = min(lo, times.min()), max(hi, times.max())
        if missing:
            self.warnings.append(f"{name}: {len(missing)} Animation(s) name missing frames, skipped: "
                                 f"{', '.join(missing[:8])}")

        def channels(c, width):
            targets, times, values = tracks[c]
            if not targets:
                return sampling.Channels.empty(width)
            if c == "r":
                values = [quat.make_continuous(quat.normalize(v), axis=0) for v in values]
            return sampling.Channels.from_tracks(targets, times, values, width)

        if not np.isfinite(lo):
            lo = hi = 0.0
        return XClip(name, channels("r", 4), channels("t", 3), channels("s", 3), animated, float(lo), float(hi))

    # ------------------------------------------------------------------
    @property
    def n_frames(self) -> int:
        return len(self.frames)

    def rest_components(self):
        """Decomposed FrameTransformMatrix (t, r, s) of every frame: the value
        of channels an Animation does not key."""
        return sampling.decompose_trs(self.local0)

    def sample_local(self, clip: XClip, ticks, rot_mode: str = "slerp") -> np.ndarray:
        """Local matrices (F, J, 4, 4) at ticks; frames without keys keep their
        FrameTransformMatrix exactly."""
        t0, r0, s0 = self.rest_components()
        local = clip.time_clip().sample_local(ticks, r0, t0, s0, rot_mode=rot_mode)
        local[:, ~clip.animated] = self.local0[~clip.animated]
        return local

    def sample_world(self, clip: XClip | None, ticks, rot_mode: str = "slerp") -> np.ndarray:
        ticks = np.asarray(ticks, dtype=np.float64).reshape(-1)
        if clip is None:
            return np.broadcast_to(self.world0, (len(ticks),) + self.world0.shape).copy()
        return self.skel.world(self.sample_local(clip, ticks, rot_mode))

    def mesh_world0(self, mi: int) -> np.ndarray:
        f = self.mesh_frame[mi]
        return self.world0[f] if f >= 0 else np.eye(4)

    def influences(self, mi: int) -> skinning.Influences:
        sk = self.skins[mi]
        return skinning.Influences.from_sparse(len(self.meshes[mi].positions), sk.vertex, sk.joint, sk.weight)

    def positions(self, mi: int, world: np.ndarray, influences: skinning.Influences | None = None) -> np.ndarray:
        """World positions (V, 3) of mesh ``mi`` for frame world matrices (J, 4, 4).

        Skinned: sum_j w_j world_j @ offset_j @ v (weights divided by their sum;
        vertices without weight stay at their rest place, as in Blender).
        Rigid: the mesh frame's world matrix (identity for top-level meshes)."""
        m = self.meshes[mi]
        p = np.asarray(m.positions, dtype=np.float64)
        sk = self.skins[mi]
        if sk is None:
            f = self.mesh_frame[mi]
            w = world[f] if f >= 0 else np.eye(4)
            return p @ w[:3, :3].T + w[:3, 3]
        mw = self.mesh_world0(mi)
        rest = p @ mw[:3, :3].T + mw[:3, 3]
        mats = np.tile(np.eye(4), (self.n_frames, 1, 1))
        inv_mw = np.linalg.inv(mw)
        for j, off in sk.offsets.items():
            mats[j] = world[j] @ off @ inv_mw
        infl = influences or self.influences(mi)
        out, _ = skinning.linear_blend(rest, mats, infl, "blender")
        return out.copy()

    def size(self) -> float:
        """Diagonal of the bounding box of all meshes at rest (file units)."""
        cached = getattr(self, "_size", None)
        if cached is None:
            cached = self._size = self._compute_size()
        return cached

    def _compute_size(self) -> float:
        pts = [self.positions(i, self.world0) for i in range(len(self.meshes)) if len(self.meshes[i].positions)]
        if not pts:
            pts = [self.world0[:, :3, 3]] if self.n_frames else []
        if not pts:
            return 1.0
        pts = np.concatenate(pts)
        d = float(np.linalg.norm(pts.max(0) - pts.min(0)))
        return d if d > 0 else 1.0

    def ticks_to_frames(self, ticks, fps: float) -> np.ndarray:
        return np.asarray(ticks, dtype=np.float64) / self.ticks_per_second * fps

    def frames_to_ticks(self, frames, fps: float) -> np.ndarray:
        return np.asarray(frames, dtype=np.float64) / fps * self.ticks_per_second


def _put(track, j: int, times: np.ndarray, values: np.ndarray) -> None:
    targets, ts, vs = track
    if j in targets:  # a later Animation on the same frame replaces the earlier
        k = targets.index(j)
        ts[k], vs[k] = times, values
        return
    targets.append(j)
    ts.append(times)
    vs.append(values)


def resolve_binds(skel: skeleton.Skeleton, local0: np.ndarray, world0: np.ndarray, bind: np.ndarray) -> None:
    """Fill the bind world of frames without a matrixOffset (NaN rows) in place:
    from a child's bind and the child's FrameTransformMatrix (deepest first),
    then from the parent's bind, else the frame's own world matrix."""
    parents = skel.parents
    kids: list[list[int]] = [[] for _ in parents]
    for j, p in enumerate(parents):
        if p >= 0:
            kids[p].append(j)
    missing = lambda j: np.isnan(bind[j, 0, 0])  # noqa: E731
    for j in skel.order[::-1]:
        if missing(j):
            for c in kids[j]:
                if not missing(c):
                    bind[j] = bind[c] @ np.linalg.inv(local0[c])
                    break
    for j in skel.order:
        if missing(j):
            p = parents[j]
            bind[j] = bind[p] @ local0[j] if p >= 0 and not missing(p) else world0[j]


def orthonormal(m: np.ndarray) -> np.ndarray:
    """The closest rigid transform(s) (rotation by polar decomposition, same
    translation) of (..., 4, 4) matrices."""
    m = np.asarray(m, dtype=np.float64)
    u, _, vt = np.linalg.svd(m[..., :3, :3])
    r = u @ vt
    det = np.linalg.det(r)
    u = u.copy()
    u[..., :, 2] *= np.where(det < 0, -1.0, 1.0)[..., None]
    out = np.zeros_like(m)
    out[..., :3, :3] = u @ vt
    out[..., :3, 3] = m[..., :3, 3]
    out[..., 3, 3] = 1.0
    return out


def bone_selection(rig: XRig, every_frame: bool = False) -> np.ndarray:
    """Frames that become bones: every frame, or the frames that skin meshes
    or hold meshes (when there are bones or animations), plus their ancestors."""
    J = rig.n_frames
    if every_frame:
        return np.ones(J, dtype=bool)
    need = np.zeros(J, dtype=bool)
    skinned = False
    for sk in rig.skins:
        if sk is not None:
            need[list(sk.offsets)] = True
            skinned = True
    animated = any(c.animated.any() for c in rig.clips)
    if skinned or animated:
        mf = rig.mesh_frame[rig.mesh_frame >= 0]
        need[mf] = True
    if animated and not skinned and not need.any():
        for c in rig.clips:
            need |= c.animated
    for j in rig.skel.order[::-1]:
        if need[j] and rig.skel.parents[j] >= 0:
            need[rig.skel.parents[j]] = True
    return need
