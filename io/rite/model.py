# SPDX-License-Identifier: GPL-3.0-or-later
"""In-memory RiTE model (RAM) and animation (RAA): plain dataclasses of numpy arrays.

Float arrays are float64, index arrays int64; quaternions are ``(x, y, z, w)``.
Every array is ordered by ascending file id, and every reference is an index into
the corresponding array (``joints`` keeps file order). The dataclasses only
coerce dtypes; :mod:`.writer` validates shapes and ranges before writing.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


def _f64(a, cols: int) -> np.ndarray:
    arr = np.asarray(a, dtype=np.float64)
    if arr.size == 0 and arr.ndim < 2:
        arr = arr.reshape(0, cols)
    return arr


def _i64(a, cols: int | None) -> np.ndarray:
    arr = np.asarray(a, dtype=np.int64)
    if arr.size == 0 and cols is not None and arr.ndim < 2:
        arr = arr.reshape(0, cols)
    return arr


def _empty_f(cols: int):
    return lambda: np.zeros((0, cols), dtype=np.float64)


def _empty_i(cols: int | None):
    return lambda: np.zeros((0,) if cols is None else (0, cols), dtype=np.int64)


@dataclass(eq=False)
class RiteJoint:
    """One skeleton joint; ``parent`` indexes ``RamModel.joints`` (-1 for a root)."""

    name: str
    parent: int
    orientation: np.ndarray  # (4,) x y z w
    translation: np.ndarray  # (3,)
    rotation: np.ndarray     # (4,) x y z w (the bind rotation)

    def __post_init__(self):
        self.parent = int(self.parent)
        self.orientation = np.asarray(self.orientation, dtype=np.float64)
        self.translation = np.asarray(self.translation, dtype=np.float64)
        self.rotation = np.asarray(self.rotation, dtype=np.float64)


@dataclass(eq=False)
class RamModel:
    """A RiTE Ascii Model: skeleton plus one skinned triangle mesh."""

    mesh_name: str = ""
    joints: list = field(default_factory=list)          # list[RiteJoint], file order
    positions: np.ndarray = field(default_factory=_empty_f(3))   # (V,3)
    normals: np.ndarray = field(default_factory=_empty_f(3))     # (N,3)
    uvs: np.ndarray = field(default_factory=_empty_f(2))         # (U,2)
    tri_shader: np.ndarray = field(default_factory=_empty_i(None))   # (T,) shader ids as given
    tri_vertices: np.ndarray = field(default_factory=_empty_i(3))    # (T,3) indices into positions
    tri_normals: np.ndarray | None = None                         # (T,3) indices into normals, or None
    tri_uvs: np.ndarray | None = None                             # (T,3) indices into uvs, or None
    weight_vertex: np.ndarray = field(default_factory=_empty_i(None))  # (W,) indices into positions
    weight_joint: np.ndarray = field(default_factory=_empty_i(None))   # (W,) indices into joints
    weight_value: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.float64))  # (W,)
    joint_ids: np.ndarray | None = None   # (J,) the file's joint ids (RAA tracks may name them), or None

    def __post_init__(self):
        self.joints = list(self.joints)
        if self.joint_ids is not None:
            self.joint_ids = _i64(self.joint_ids, None)
        self.positions = _f64(self.positions, 3)
        self.normals = _f64(self.normals, 3)
        self.uvs = _f64(self.uvs, 2)
        self.tri_shader = _i64(self.tri_shader, None)
        self.tri_vertices = _i64(self.tri_vertices, 3)
        if self.tri_normals is not None:
            self.tri_normals = _i64(self.tri_normals, 3)
        if self.tri_uvs is not None:
            self.tri_uvs = _i64(self.tri_uvs, 3)
        self.weight_vertex = _i64(self.weight_vertex, None)
        self.weight_joint = _i64(self.weight_joint, None)
        self.weight_value = np.asarray(self.weight_value, dtype=np.float64)


@dataclass(eq=False)
class RaaTrack:
    """Rotation keys of one joint; bound to a skeleton by name first, id second."""

    joint_id: int
    joint_name: str
    frames: np.ndarray     # (K,) int64, ascending
    rotations: np.ndarray  # (K,4) x y z w

    def __post_init__(self):
        self.joint_id = int(self.joint_id)
        self.frames = _i64(self.frames, None)
        self.rotations = _f64(self.rotations, 4)


@dataclass(eq=False)
class RaaAnimation:
    """A RiTE Ascii Animation. ``name`` is the file stem.

    ``frame_count_given`` records whether the file had a ``frames`` line; when it
    is False, ``frame_count`` is the largest key frame + 1 (0 without tracks).
    """

    name: str
    frame_count: int
    frame_count_given: bool = True
    tracks: list = field(default_factory=list)  # list[RaaTrack]

    def __post_init__(self):
        self.frame_count = int(self.frame_count)
        self.frame_count_given = bool(self.frame_count_given)
        self.tracks = list(self.tracks)
