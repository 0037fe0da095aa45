# SPDX-License-Identifier: GPL-3.0-or-later
"""How an AnimationSet's Animations become a clip's tracks: converted all
at once, yet as if one by one: a later Animation of a frame replaces an
earlier one whatever their key kinds, and each rotation track is
normalised and continuous along its own keys only."""
from __future__ import annotations

import numpy as np
import pytest
from x_rigs import chain_file

from legacy_skin_io.core import quat
from legacy_skin_io.io.xfile import XAnimation, XAnimationKey, read_xfile
from legacy_skin_io.io.xfile.adapter import scene_from_xfile
from legacy_skin_io.io.xfile.clips_in import _continuous_tracks


def test_tracks_made_continuous_together_as_each_alone():
    """Tracks of 1..6 keys with random signs (and scales): the same numbers,
    bit for bit, as ``make_continuous(normalize(track))`` on each."""
    rng = np.random.default_rng(7)
    for _ in range(200):
        tracks = [rng.normal(size=(int(rng.integers(1, 7)), 4)) * rng.choice([-2.0, 0.5, 1.0], size=(1, 1))
                  for _ in range(int(rng.integers(1, 6)))]
        want = [quat.make_continuous(quat.normalize(t), axis=0) for t in tracks]
        got = _continuous_tracks(tracks)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert np.array_equal(g, w)


def _matrix_keys(times, seed: int) -> XAnimationKey:
    """Matrix keys (type 4, Direct3D row-vector matrices): turns about a random axis."""
    rng = np.random.default_rng(seed)
    axis = rng.normal(size=3)
    q = quat.from_axis_angle(np.broadcast_to(axis / np.linalg.norm(axis), (len(times), 3)),
                             np.linspace(0.2, 1.4, len(times)))
    m = quat.to_mat4(q, np.tile([0.0, 1.0, 0.0], (len(times), 1)))
    return XAnimationKey(4, np.asarray(times, dtype=np.float64), np.swapaxes(m, 1, 2).reshape(-1, 16))


def _track(ch, j: int):
    """(times, values) of joint ``j``'s track, or None."""
    hit = np.flatnonzero(ch.targets == j)
    if not len(hit):
        return None
    k = int(hit[0])
    return ch.times[ch.starts[k]:ch.starts[k + 1]], ch.values[ch.starts[k]:ch.starts[k + 1]]


@pytest.mark.parametrize("matrix_last", [True, False])
def test_a_later_animation_of_a_frame_replaces_the_kinds_it_keys(tmp_path, matrix_last):
    """joint1 animated twice in one set, by matrix keys (rotation,
    translation, scale) and by rotation keys, in either order: each kind of
    track is the last Animation's that keys it, as read from a set holding
    that Animation alone; every rotation track continuous."""
    ticks = np.arange(0.0, 50.0, 10.0)
    xf = read_xfile(chain_file(tmp_path / "chain.x", ticks, tps=30))
    aset = xf.animation_sets[0]
    rot = next(a for a in aset.animations if a.frame_name == "joint1")
    rot.keys[0].values[1::2] *= -1.0          # every other key stored with the other sign
    mat = XAnimation(None, "joint1", [_matrix_keys(ticks, 3)])
    at = aset.animations.index(rot)
    aset.animations[at:at + 1] = [rot, mat] if matrix_last else [mat, rot]
    both = scene_from_xfile(xf, path="both.x").clips[0]
    alone = {}
    for name, anim in (("matrix", mat), ("rotation", rot)):
        aset.animations[at:at + 2] = [anim]
        alone[name] = scene_from_xfile(xf, path=f"{name}.x").clips[0]
        aset.animations[at:at + 1] = [rot, mat] if matrix_last else [mat, rot]
    want = {"rotation": alone["matrix" if matrix_last else "rotation"], "translation": alone["matrix"],
            "scale": alone["matrix"]}
    for kind, source in want.items():
        for j in range(3):
            got, expect = _track(getattr(both, kind), j), _track(getattr(source, kind), j)
            assert (got is None) == (expect is None), (kind, j)
            assert got is None or (np.array_equal(got[0], expect[0]) and np.array_equal(got[1], expect[1])), (kind, j)
    assert _track(both.translation, 1) is not None
    r = both.rotation
    same_track = r.track_of_key[1:] == r.track_of_key[:-1]
    assert (np.sum(r.values[1:] * r.values[:-1], axis=1)[same_track] >= 0).all()
    assert (both.start, both.end) == (0.0, 40.0)
