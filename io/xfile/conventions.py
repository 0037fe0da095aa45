# SPDX-License-Identifier: GPL-3.0-or-later
"""The .X conventions both halves of the adapter share.

What is DirectX's and stays here:

* Direct3D matrices are row-vector: a stored ``M`` is used as ``M.T``
  (:func:`col`); the file is left-handed: the default conversion flips z,
  then turns Y-up into Z-up, so a file point (x, y, z) lands at (x, z, y);
* rotation keys are stored (w, x, y, z) and are the *conjugate* of the
  rotation the row-vector matrix applies (assimp negates w): a key at time 0
  reproduces the FrameTransformMatrix only with this convention (checked on
  tiny_4anim.x, BCN_Epileptic.X, anim_test.x, Testwuson.X).
  :func:`rotation_from_key` / :func:`key_from_rotation` are the one place
  that knows it;
* matrix keys are decomposed into translation, rotation and scale (as assimp
  does); a frame's unkeyed components keep its FrameTransformMatrix's;
* every frame is a joint; a joint's bind matrix is ``mesh frame world @
  inverse(matrixOffset)`` (:func:`core.rig.resolve_binds` fills the rest);
* key times are ticks: ``AnimTicksPerSecond``, 4800 when absent (D3DX);
  files that number their keys in frames are read by the time base
  :mod:`.time_base` chooses;
* texture coordinates have v down;
* a Material's faceColor alpha of 0 is opaque (:func:`shown_alpha`), the
  file's value kept in the material's ``extras["xfile"]["alpha"]``.
"""
from __future__ import annotations

import numpy as np

from ...scene import AxisConversion

FORMAT = "xfile"
DEFAULT_TICKS_PER_SECOND = 4800


def default_axes(scale: float = 1.0) -> AxisConversion:
    """File (x, y, z) -> Blender (x, z, y): Direct3D's z -> -z (handedness),
    then Y-up to Z-up."""
    return AxisConversion.from_axes("-Z", "Y", scale, mirror_z=True)


def rotation_from_key(wxyz: np.ndarray) -> np.ndarray:
    """Stored rotation keys (..., 4) w, x, y, z -> rotations (x, y, z, w) for
    column vectors in file space: the conjugate of the stored quaternion."""
    wxyz = np.asarray(wxyz, dtype=np.float64)
    return np.stack((-wxyz[..., 1], -wxyz[..., 2], -wxyz[..., 3], wxyz[..., 0]), axis=-1)


def key_from_rotation(xyzw: np.ndarray) -> np.ndarray:
    """Inverse of :func:`rotation_from_key` (for writers)."""
    xyzw = np.asarray(xyzw, dtype=np.float64)
    return np.stack((xyzw[..., 3], -xyzw[..., 0], -xyzw[..., 1], -xyzw[..., 2]), axis=-1)


def col(m: np.ndarray) -> np.ndarray:
    """Direct3D row-vector matrices (..., 4, 4) <-> column-vector matrices."""
    return np.swapaxes(np.asarray(m, dtype=np.float64), -1, -2)


def shown_alpha(alpha: float) -> float:
    """The opacity a Material's faceColor alpha shows: Direct3D's fixed-function
    pipeline ignores material alpha unless the application turns blending on,
    and many exporters leave it at 0, so 0 (or less) is opaque; 0 < alpha < 1
    is see-through; 1 (or more) is opaque."""
    return alpha if 0.0 < alpha < 1.0 else 1.0
