# SPDX-License-Identifier: GPL-3.0-or-later
"""The programs a .X file is written for (the export's *Target* option).

* ``DIRECTX``: Direct3D and D3DX semantics: one AnimationSet per clip, key
  times in ticks of ``AnimTicksPerSecond``.
* ``IRRLICHT``: Irrlicht 1.8's .X loader (Minetest/Luanti and the other
  Irrlicht games). It takes a key's time as its frame and ignores
  ``AnimTicksPerSecond``; appends the keys of every AnimationSet to one
  timeline per joint, dropping keys not later than the one before; reads no
  MSZIP; puts a keyed joint without position keys at its parent's origin;
  reads no scale from matrix keys; and between rotation keys less than about
  36 degrees apart blends the quaternions linearly without normalising them.
  So: every clip end to end on ONE frame-numbered timeline in one
  AnimationSet, rotation, position (and, where a joint scales, scale) keys
  on every frame of every clip for every joint any clip moves (a joint a
  clip does not move holds its rest pose in that clip's range): at every
  frame Irrlicht shows the key, exactly what Blender shows; uncompressed.
* ``DARKBASIC``: DarkBASIC Pro, FPS Creator, GameGuru Classic: one
  frame-numbered timeline likewise, written the way those engines' own
  character files are (see :data:`DARKBASIC_STYLE`).

A one-timeline target lays the clips out with
:func:`...scene.timeline.layout`: a clip cut from a timeline keeps its frame
numbers, others follow end to end.
"""
from __future__ import annotations

import numpy as np

from ...core import quat, sampling
from ...scene.timeline import Placement
from .conventions import col, key_from_rotation
from .model import XAnimation, XAnimationKey, XAnimationSet

DIRECTX, IRRLICHT, DARKBASIC = "DIRECTX", "IRRLICHT", "DARKBASIC"
TARGETS = (DIRECTX, IRRLICHT, DARKBASIC)
#: targets that play one frame-numbered timeline
ONE_TIMELINE = (IRRLICHT, DARKBASIC)
#: targets whose reader takes no MSZIP-compressed file
UNCOMPRESSED = (IRRLICHT,)
#: targets whose reader takes the scale of matrix keys
MATRIX_KEYS = (DIRECTX, DARKBASIC)

#: samples per block when a timeline is sampled (bounds the memory of long timelines)
_BLOCK = 2048
#: a joint gets scale keys where its scale leaves 1 by more than this anywhere
_SCALED = 1e-6


def timeline_set(target: str, placements: list[Placement], default_local: np.ndarray, back, names: list[str],
                 *, key_type: str = "TRS") -> XAnimationSet:
    """One AnimationSet holding every placement on its frames (key time =
    timeline frame), keys on every frame for every joint any clip animates.
    ``back`` converts scene space to file space (an inverse
    :class:`~...scene.AxisConversion`); ``names`` are the frames' names in
    the file."""
    joints = np.flatnonzero(np.any([p.clip.animated for p in placements], axis=0)) if placements else []
    aset = XAnimationSet(name="Anim-1" if target == DARKBASIC else "Timeline")
    if not len(joints):
        return aset
    ticks, local = [], []
    for p in placements:
        for lo in range(0, len(p.times), _BLOCK):
            t = p.times[lo:lo + _BLOCK]
            local.append(back.matrices(p.clip.sample_local(default_local, t)[:, joints]))
            ticks.append(p.start + lo + np.arange(len(t), dtype=np.float64))
    m = np.concatenate(local)                 # (K, J, 4, 4) file-space local matrices
    times = np.concatenate(ticks)
    if target == DARKBASIC and times[0] > 0:  # it extrapolates before a track's first key: start every one at 0
        m, times = np.concatenate((m[:1], m)), np.concatenate(([0.0], times))
    matrix = key_type == "MATRIX"           # (the writer asks it only of MATRIX_KEYS targets)
    if not matrix:
        t, r, s = sampling.decompose_trs(m)
        r = quat.make_continuous(quat.normalize(r), axis=0)
        scaled = np.abs(s - 1.0).max(axis=(0, 2)) > _SCALED
    for a, j in enumerate(np.asarray(joints).tolist()):
        anim = XAnimation(name=f"Anim-{names[j]}" if target == DARKBASIC else None, frame_name=names[j])
        if target == DARKBASIC:
            anim.open_closed, anim.position_quality = 0, 0
        if matrix:
            anim.keys.append(XAnimationKey(4, times, col(m[:, a]).reshape(-1, 16)))
        else:
            anim.keys.append(XAnimationKey(0, times, key_from_rotation(r[:, a])))
            if scaled[a]:
                anim.keys.append(XAnimationKey(1, times, s[:, a]))
            anim.keys.append(XAnimationKey(2, times, t[:, a]))
        aset.animations.append(anim)
    return aset
