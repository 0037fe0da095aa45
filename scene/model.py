# SPDX-License-Identifier: GPL-3.0-or-later
"""The format-neutral scene every format is read into and written from.

Conventions (Blender's, so that the Blender side only copies):

* one space for everything: right-handed, Z up, column-vector 4x4 matrices
  (``p' = M @ p``), in the units the user asked for. Readers convert from
  their file's space with one :class:`~.axes.AxisConversion`; writers
  convert back with its inverse.
* faces wind counter-clockwise seen from outside (a reader whose file is
  left-handed reverses them); corner data (normals, UVs) follows the corners.
* UV ``v`` points up (0 at the bottom of the image).
* quaternions are (x, y, z, w).
* a clip's channels animate joints' *local* transforms (relative to the
  parent joint): translation, rotation, scale with ``T @ R @ S``.

Format-specific data that must survive a round trip through Blender but has
no place here lives in ``extras`` dictionaries (JSON-able values only), as
glTF's extras do; the Blender builder stores them on the objects it makes
and the extractor hands them back.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from ..core import quat, sampling, skeleton
from .axes import AxisConversion


class SceneError(ValueError):
    """A scene that cannot be built or evaluated (message is user-facing)."""


# ---------------------------------------------------------------------------
# skeleton

@dataclass(eq=False)
class Skeleton:
    """Joints: names, parents, default local transforms and bind matrices.

    ``local`` is the pose shown without animation (a .X FrameTransformMatrix,
    a RiTE joint's orientation * bind rotation). ``bind`` is each joint's
    world matrix when the skin was bound (where ``has_bind`` is False it was
    derived: see :func:`core.rig.resolve_binds`)."""

    names: list[str]
    parents: np.ndarray            # (J,) int64, -1 for roots
    local: np.ndarray              # (J, 4, 4)
    bind: np.ndarray               # (J, 4, 4)
    has_bind: np.ndarray           # (J,) bool
    extras: dict = field(default_factory=dict)
    topology: skeleton.Skeleton = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.parents = np.asarray(self.parents, dtype=np.int64).reshape(-1)
        self.local = np.asarray(self.local, dtype=np.float64).reshape(-1, 4, 4)
        self.bind = np.asarray(self.bind, dtype=np.float64).reshape(-1, 4, 4)
        self.has_bind = np.asarray(self.has_bind, dtype=bool).reshape(-1)
        try:
            self.topology = skeleton.Skeleton(self.parents, list(self.names))
        except skeleton.SkeletonError as err:
            raise SceneError(str(err)) from None

    def __len__(self) -> int:
        return len(self.names)

    @property
    def order(self) -> np.ndarray:
        """Joint indices, parents before children."""
        return self.topology.order

    def world(self, local: np.ndarray | None = None) -> np.ndarray:
        """World matrices of local transforms (..., J, 4, 4) (default: the default pose)."""
        return self.topology.world(self.local if local is None else local)

    def index(self) -> dict[str, int]:
        """Name -> joint (the first joint of a name)."""
        out: dict[str, int] = {}
        for i, n in enumerate(self.names):
            out.setdefault(n, i)
        return out


# ---------------------------------------------------------------------------
# meshes and materials

@dataclass(eq=False)
class Material:
    name: str
    color: np.ndarray = field(default_factory=lambda: np.array([0.8, 0.8, 0.8, 1.0]))
    specular_power: float = 0.0
    specular: np.ndarray = field(default_factory=lambda: np.zeros(3))
    emissive: np.ndarray = field(default_factory=lambda: np.zeros(3))
    texture: str | None = None       # as written in the file (resolved by the Blender side)
    extras: dict = field(default_factory=dict)
    #: further texture maps by role (:data:`MAP_ROLES`), names as ``texture``
    maps: dict[str, str] = field(default_factory=dict)
    #: texture names the material holds that no input shows (a second diffuse texture, an
    #: effect's environment map...), kept for the user and for export
    more_textures: list[str] = field(default_factory=list)

    @property
    def roughness(self) -> float:
        """The roughness shown for the specular power (Blinn-Phong's
        exponent to a microfacet roughness: sqrt(2 / (power + 2)))."""
        return float(np.sqrt(2.0 / (max(float(self.specular_power), 0.0) + 2.0)))


#: the roles of :attr:`Material.maps`: a normal map (tangent space), a bump (height) map,
#: a specular (level) map, an emission (self-illumination) map
MAP_ROLES = ("normal", "bump", "specular", "emission")


@dataclass(eq=False)
class Skin:
    """Influences of a mesh's vertices on joints.

    ``inverse_bind[k]`` maps mesh space to joint ``joints[k]``'s space at bind
    time (a .X matrixOffset); a skinned vertex is ``sum_k w_k world_k @
    inverse_bind_k @ p``. ``vertex``/``joint``/``weight`` are sparse triples;
    ``joint`` indexes the skeleton (not ``joints``); several triples of one
    (vertex, joint) pair add up."""

    joints: np.ndarray             # (B,) skeleton joint indices, ascending
    inverse_bind: np.ndarray       # (B, 4, 4)
    vertex: np.ndarray             # (W,)
    joint: np.ndarray              # (W,)
    weight: np.ndarray             # (W,)


@dataclass(eq=False)
class Mesh:
    """A polygon mesh. ``parent`` is the joint it hangs from (-1: the scene
    root) and ``matrix`` maps mesh space to that joint's space (the scene's
    for -1). A skinned mesh is placed the same way at the default pose."""

    name: str
    positions: np.ndarray          # (V, 3)
    face_sizes: np.ndarray         # (F,)
    # (L,) vertex of each corner, faces counter-clockwise as shown where the mesh is
    # placed (a placement that mirrors shows the other side of its own space's winding)
    corners: np.ndarray
    normals: np.ndarray | None = None        # (L, 3) per corner, unit
    uvs: np.ndarray | None = None            # (L, 2) per corner, v up
    #: the UV sets after the first (``uvs``), by name, in order: (L, 2) per corner, v up
    uv_sets: dict[str, np.ndarray] = field(default_factory=dict)
    colors: np.ndarray | None = None         # (V, 4) per vertex, RGBA
    face_materials: np.ndarray | None = None  # (F,) index into ``materials``
    materials: list[int] = field(default_factory=list)   # indices into Scene.materials
    parent: int = -1
    matrix: np.ndarray = field(default_factory=lambda: np.eye(4))
    skin: Skin | None = None
    extras: dict = field(default_factory=dict)
    #: (3, 3) takes ``normals`` into mesh space where the file stores them in
    #: another space (its frame's): shading uses that, export writes them as stored
    normal_matrix: np.ndarray | None = None
    #: (V,) the vertex each vertex is one with (the first of its group, itself for most):
    #: vertices a file splits at UV seams, hard edges and material borders that are one point
    #: of the surface (``io.weld``), for the builder to weld (the ``weld`` import option);
    #: None: every vertex as the file stores it
    weld: np.ndarray | None = None

    @property
    def face_starts(self) -> np.ndarray:
        out = np.zeros(len(self.face_sizes), dtype=np.int64)
        if len(self.face_sizes) > 1:
            np.cumsum(self.face_sizes[:-1], out=out[1:])
        return out


# ---------------------------------------------------------------------------
# clips

class Sampler(Protocol):
    """A clip's own interpolation of its rotation channel (e.g. RiTE's
    legacy playback): rotations (F, T, 4) of the T rotation tracks at clip
    times (F,)."""

    def sample_rotations(self, times: np.ndarray) -> np.ndarray: ...


@dataclass(eq=False)
class Clip:
    """One animation: channels of joints' local transforms on a time axis.

    Times are clip units: ``ticks_per_second`` of them per second (a .X
    file's AnimTicksPerSecond), or scene frames when it is None (RiTE frames).
    Joints in ``animated`` take their channels' values, their unkeyed
    components from the default pose; other joints keep their default local
    transform. Rotations interpolate by ``rotation_mode`` ("slerp", or
    "nlerp": per component, as Blender's F-curves) unless ``sampler`` is set.

    ``cycle`` (start, end), in clip units: from ``start`` on, the clip repeats
    ``[start, end)`` (the RiTE Animator's loop is (1, N)). ``playback`` says how
    the clip is played with others: the armature's action, or an NLA layer
    mixed by ``weight`` (MERGEABLE) or overriding the joints it animates
    (DOMINANT). ``mix`` is how a stack's MERGEABLE layers combine
    (``core.blend``: "WEIGHTED", the weighted average per joint, or
    "ANIMATOR_2006", each overwriting the joints it animates in order); the
    last MERGEABLE layer's ``mix`` is the stack's."""

    name: str
    rotation: sampling.Channels
    translation: sampling.Channels
    scale: sampling.Channels
    animated: np.ndarray                    # (J,) bool
    start: float = 0.0                      # first and last time of the clip
    end: float = 0.0
    ticks_per_second: float | None = None
    rotation_mode: str = "slerp"
    sampler: Sampler | None = None
    cycle: tuple[float, float] | None = None
    playback: str = "ACTION"
    weight: float = 1.0
    mix: str = "WEIGHTED"
    extras: dict = field(default_factory=dict)

    def to_frames(self, times, fps: float) -> np.ndarray:
        t = np.asarray(times, dtype=np.float64)
        return t if self.ticks_per_second is None else t / self.ticks_per_second * fps

    def to_times(self, frames, fps: float) -> np.ndarray:
        f = np.asarray(frames, dtype=np.float64)
        return f if self.ticks_per_second is None else f / fps * self.ticks_per_second

    def frame_range(self, fps: float) -> tuple[float, float]:
        f0, f1 = self.to_frames([self.start, self.end], fps)
        return float(f0), float(f1)

    def wrap(self, times) -> np.ndarray:
        """Clip times played at ``times`` (the cycle applied)."""
        t = np.asarray(times, dtype=np.float64)
        if self.cycle is None:
            return t
        a, b = self.cycle
        if b - a <= 0:
            return np.where(t < a, np.maximum(t, self.start), a)
        return np.where(t < a, np.maximum(t, self.start), a + np.mod(t - a, b - a))

    def sample_local(self, default_local: np.ndarray, times) -> np.ndarray:
        """Local matrices (F, J, 4, 4) at clip ``times`` (not wrapped)."""
        q = np.asarray(times, dtype=np.float64).reshape(-1)
        t0, r0, s0 = sampling.decompose_trs(default_local)
        F = len(q)
        r = self.rotations_at(r0, q)
        t = np.broadcast_to(t0, (F,) + t0.shape).copy()
        s = np.broadcast_to(s0, (F,) + s0.shape).copy()
        if len(self.translation.targets):
            t[:, self.translation.targets] = self.translation.sample(q)
        if len(self.scale.targets):
            s[:, self.scale.targets] = self.scale.sample(q)
        local = sampling.compose_trs(t, quat.normalize(r), s)
        still = ~self.animated
        local[:, still] = default_local[still]
        return local

    def bake_frames(self, fps: float) -> tuple[np.ndarray, np.ndarray]:
        """(scene frames, clip times) of every whole scene frame of the
        clip's range and, for a cycling clip, one more frame at the cycle's
        end whose time is the cycle's start (the wrap key: for formats that
        interpolate towards the wrap; a Blender action loops with Cycles
        modifiers instead and leaves it out)."""
        f0, f1 = self.frame_range(fps)
        frames = np.arange(np.floor(f0 + 1e-9), np.ceil(f1 - 1e-9) + 1.0)
        if not len(frames):
            frames = np.array([np.floor(f0)])
        times = self.to_times(frames, fps)
        if self.cycle is not None and self.cycle[1] - self.cycle[0] > 0:
            end = float(self.to_frames(self.cycle[1], fps))
            keep = frames < end - 1e-9
            frames = np.append(frames[keep], end)
            times = np.append(times[keep], self.cycle[0])
        return frames, times

    def rotations_at(self, default_rotation: np.ndarray, times) -> np.ndarray:
        """Joint rotations (F, J, 4) at clip ``times`` (not wrapped), as the
        clip's sampler or rotation channel gives them (not normalised);
        joints it does not rotate keep ``default_rotation`` (J, 4)."""
        q = np.asarray(times, dtype=np.float64).reshape(-1)
        r = np.broadcast_to(default_rotation, (len(q),) + np.shape(default_rotation)).copy()
        if len(self.rotation.targets):
            r[:, self.rotation.targets] = (self.sampler.sample_rotations(q) if self.sampler is not None
                                           else self.rotation.sample(q, self.rotation_mode))
        return r

    def baked_rotations(self, default_rotation: np.ndarray, fps: float) -> tuple[np.ndarray, np.ndarray]:
        """(scene frames, rotations (K, J, 4)) at :meth:`bake_frames` with the
        sign a builder keys them with: each track continuous along the
        frames from w >= 0 at the first (smooth between frames). A layer's
        sign in a weighted mix is chosen later, against the other layers
        (``core.blend.mix_signs``)."""
        frames, times = self.bake_frames(fps)
        r = self.rotations_at(default_rotation, times)
        r[:1] = quat.canonical(r[:1])
        return frames, quat.make_continuous(r, axis=0)


# ---------------------------------------------------------------------------
# the scene

@dataclass(frozen=True)
class Orientation:
    """The Forward/Up a scene was read with, and why (for the import summary):
    given, or decided from the file's data by :mod:`.orientation`."""

    forward: str
    up: str
    file_up: str | None          # the file's own axis that points up ("Z" for a Z-up file)
    automatic: bool
    evidence: str = ""

    def phrase(self) -> str:
        """For the summary: "Z up" (the file's axis)."""
        return f"{self.file_up} up" if self.file_up else f"Up {self.up}"

    def note(self) -> str:
        """How an automatic choice was made, and the manual axes that give
        the same (a note for the console)."""
        return (f"up is the file's {self.file_up} axis, {self.evidence} (Manual Orientation with Forward "
                f"{self.forward}, Up {self.up} gives the same)")


@dataclass(eq=False)
class Source:
    """Where a scene came from: the format's id, the file, and the axis
    conversion the reader applied (stored on imported rigs so that an
    exporter of the same format can invert it), with how it was chosen
    (automatically or given: :mod:`.orientation`)."""

    format: str
    path: str = ""
    axes: AxisConversion = field(default_factory=AxisConversion)
    orientation: Orientation | None = None


@dataclass(eq=False)
class Scene:
    name: str
    skeleton: Skeleton | None = None
    meshes: list[Mesh] = field(default_factory=list)
    materials: list[Material] = field(default_factory=list)
    clips: list[Clip] = field(default_factory=list)
    source: Source = field(default_factory=lambda: Source("none"))
    extras: dict[str, Any] = field(default_factory=dict)

    @property
    def n_joints(self) -> int:
        return 0 if self.skeleton is None else len(self.skeleton)

    def writer_axes(self, format_id: str, default: AxisConversion,
                    axes: AxisConversion | None = None) -> AxisConversion:
        """The file -> scene conversion a writer of ``format_id`` inverts:
        ``axes`` when given, else the one the scene was read with when it
        came from that format (a round trip writes the file's own space),
        else the format's ``default``."""
        if axes is not None:
            return axes
        return self.source.axes if self.source.format == format_id else default
