# SPDX-License-Identifier: GPL-3.0-or-later
"""The one axis conversion: file space -> scene (Blender) space.

``p' = s * C p`` with ``C`` a 3x3 rotation or reflection (det -1 when the
file is left-handed, as DirectX is) and ``s`` a uniform scale. Matrices are
conjugated (``A' = M A M^-1``), quaternions and scale vectors mapped channel
by channel; every map is linear, so interpolating before or after the
conversion gives the same result.
"""
from __future__ import annotations

import numpy as np

AXES = ("X", "Y", "Z", "-X", "-Y", "-Z")
_UNIT = {"X": (0, 1.0), "Y": (1, 1.0), "Z": (2, 1.0), "-X": (0, -1.0), "-Y": (1, -1.0), "-Z": (2, -1.0)}


def axis_matrix(forward: str, up: str) -> np.ndarray:
    """Rotation taking a file whose forward/up axes are ``forward``/``up`` to
    Blender's: the same matrix as
    ``bpy_extras.io_utils.axis_conversion(from_forward=forward, from_up=up)``.
    Raises ValueError for unknown or parallel axes."""
    forward, up = str(forward).upper(), str(up).upper()
    for name, value in (("forward", forward), ("up", up)):
        if value not in _UNIT:
            raise ValueError(f"{name} axis must be one of {', '.join(AXES)}, not {value!r}")
    if _UNIT[forward][0] == _UNIT[up][0]:
        raise ValueError(f"forward ({forward}) and up ({up}) must be different axes")

    def vec(name):
        i, sign = _UNIT[name]
        v = np.zeros(3)
        v[i] = sign
        return v

    f, u = vec(forward), vec(up)
    # Blender's axis_conversion maps the file's forward to +Y, its up to +Z
    # and forward x up to +X: C [f x u, f, u] = I.
    return np.stack((np.cross(f, u), f, u), axis=0)


class AxisConversion:
    """File space -> scene space: ``p' = s * C p``; matrices ``A' = M A M^-1``."""

    def __init__(self, C=None, scale: float = 1.0):
        self.C = np.eye(3) if C is None else np.array(C, dtype=np.float64).reshape(3, 3)
        self.s = float(scale)
        if not np.isfinite(self.s) or self.s <= 0:
            raise ValueError(f"scale must be a positive number, not {scale!r}")
        if np.abs(self.C @ self.C.T - np.eye(3)).max() > 1e-6:
            raise ValueError("axis conversion must be a rotation or a reflection")
        self.det = float(np.sign(np.linalg.det(self.C)))
        self.M = np.eye(4)
        self.M[:3, :3] = self.C * self.s
        self.Minv = np.linalg.inv(self.M)

    @classmethod
    def from_axes(cls, forward: str = "-Z", up: str = "Y", scale: float = 1.0,
                  mirror_z: bool = False) -> "AxisConversion":
        """The Forward/Up options of Blender's importers. ``mirror_z`` first
        flips the file's z (a left-handed file such as DirectX)."""
        c = axis_matrix(forward, up)
        if mirror_z:
            c = c @ np.diag([1.0, 1.0, -1.0])
        return cls(c, scale)

    def to_json(self) -> dict:
        return {"C": self.C.tolist(), "scale": self.s}

    @classmethod
    def from_json(cls, d: dict) -> "AxisConversion":
        return cls(np.array(d["C"], dtype=np.float64), float(d["scale"]))

    def __eq__(self, other) -> bool:
        return (isinstance(other, AxisConversion) and np.allclose(self.C, other.C, atol=1e-12)
                and abs(self.s - other.s) <= 1e-12 * max(self.s, other.s))

    def __repr__(self) -> str:
        return f"AxisConversion(C={self.C.tolist()}, scale={self.s})"

    @property
    def mirrors(self) -> bool:
        return self.det < 0

    def inverse(self) -> "AxisConversion":
        return AxisConversion(self.C.T, 1.0 / self.s)

    def points(self, p) -> np.ndarray:
        return (np.asarray(p, dtype=np.float64) @ self.C.T) * self.s

    def directions(self, n) -> np.ndarray:
        return np.asarray(n, dtype=np.float64) @ self.C.T

    translations = points

    def matrices(self, a) -> np.ndarray:
        return self.M @ np.asarray(a, dtype=np.float64) @ self.Minv

    def quats(self, q) -> np.ndarray:
        """Rotations (..., 4) x, y, z, w: q' with R(q') = C R(q) C^T (the axis
        is a pseudo-vector)."""
        q = np.asarray(q, dtype=np.float64)
        return np.concatenate((self.det * (q[..., :3] @ self.C.T), q[..., 3:]), axis=-1)

    def scales(self, s) -> np.ndarray:
        """Scale vectors: exact when C is a signed permutation (axis choices)."""
        return np.asarray(s, dtype=np.float64) @ np.abs(self.C).T
