# SPDX-License-Identifier: GPL-3.0-or-later
"""RiTE playback in the core, without Blender, against the RiTE runtime
transcribed from the RiTE document's C# (``tests/rite_seed.py``) and
hand-computed values: the two mixes of mergeable animations, how far the
weighted one is from slerp, the keys Key Every Frame off needs, tracks
whose name and id disagree, and weights that do not sum to 1."""
from __future__ import annotations

import math
import re

import numpy as np
import pytest
from rite_seed import SeedRuntime, seed_lerp, seed_update_track

from legacy_skin_io.core import blend, quat
from legacy_skin_io.io.rite import RaaAnimation, RaaTrack, RamModel, RiteJoint, write_raa, write_ram
from legacy_skin_io.io.rite.adapter import read_scene
from legacy_skin_io.io.rite.runtime import RiteClip

Q = [0.0, 0.0, 0.0, 1.0]


def about(axis, degrees) -> np.ndarray:
    a = np.asarray(axis, dtype=np.float64)
    h = math.radians(degrees) / 2.0
    return np.array([*(math.sin(h) * a / np.linalg.norm(a)), math.cos(h)])


def angle_about_z(q) -> float:
    """The turn (degrees, in (-180, 180]) of a rotation about z."""
    q = np.asarray(q, dtype=np.float64)
    return math.degrees(2.0 * math.atan2(q[2], q[3])) % 360.0


# --- the weighted mix ----------------------------------------------------------------

def test_two_layers_at_170_and_190_degrees_mix_to_180():
    z = [0, 0, 1]
    a, b = about(z, 170)[None, None], about(z, 190)[None, None]
    act = np.array([True])
    out = blend.animator(np.array([Q]), [(a, act, 0.5), (b, act, 0.5)], [])
    assert angle_about_z(out[0, 0]) == pytest.approx(180.0, abs=1e-9)
    # and against each layer's sign as written (w < 0 for the second): the same
    out = blend.animator(np.array([Q]), [(a, act, 0.5), (-b, act, 0.5)], [])
    assert angle_about_z(out[0, 0]) == pytest.approx(180.0, abs=1e-9)


@pytest.mark.parametrize("order", [(0, 1), (1, 0)])
def test_the_weighted_mix_averages_over_the_animations_of_each_joint_in_any_order(order):
    """a: joint 0 at 90 degrees, joint 1 at 0; b: joint 2 at 90, joint 1 at 90;
    0.5 each: joints 0 and 2 at 90 (their only animation), joint 1 at 45."""
    z = [0, 0, 1]
    base = np.tile(Q, (3, 1))
    a = (np.array([[about(z, 90), Q, Q]]), np.array([True, True, False]), 0.5)
    b = (np.array([[Q, about(z, 90), about(z, 90)]]), np.array([False, True, True]), 0.5)
    layers = [(a, b)[k] for k in order]
    out = blend.animator(base, layers, [])
    assert [angle_about_z(q) for q in out[0]] == pytest.approx([90.0, 45.0, 90.0], abs=1e-9)


def test_the_2006_animator_lets_later_layers_overwrite():
    z = [0, 0, 1]
    base = np.tile(Q, (2, 1))
    a = (np.array([[about(z, 30), about(z, 60)]]), np.array([True, True]), 0.9)
    b = (np.array([[about(z, -20), Q]]), np.array([True, False]), 0.1)
    out = blend.animator(base, [a, b], [], mix="ANIMATOR_2006")
    assert [angle_about_z(q) for q in out[0]] == pytest.approx([340.0, 60.0], abs=1e-9)
    with pytest.raises(ValueError, match="unknown mix"):
        blend.animator(base, [a], [], mix="AVERAGE")


def _slerp(a, b, t):
    """Slerp along the shorter arc, from its definition (the seed's formula, after a sign flip)."""
    if np.dot(a, b) < 0:
        b = -b
    ang = math.acos(min(1.0, float(np.dot(a, b))))
    if ang < 1e-12:
        return a
    return (math.sin((1 - t) * ang) * a + math.sin(t * ang) * b) / math.sin(ang)


@pytest.mark.parametrize("apart,documented", [(30, 0.03), (60, 0.27), (90, 0.92), (120, 2.2), (180, 8.1)])
def test_how_far_the_weighted_mix_is_from_slerp(apart, documented):
    """The figures in docs/formats/rite.md: the largest angle, over the weights, between
    the weighted mix of two rotations ``apart`` degrees apart and slerp."""
    z = [0, 0, 1]
    a, b = about(z, 0), about(z, apart)
    act = np.array([True])
    worst = 0.0
    for w in np.linspace(0.0, 1.0, 2001):
        mixed = blend.animator(np.array([Q]), [(a[None, None], act, 1 - w), (b[None, None], act, w)], [])[0, 0]
        s = _slerp(a, b, w)
        s = s if np.dot(s, mixed) >= 0 else -s
        off = math.degrees(4 * math.atan2(np.linalg.norm(mixed - s), np.linalg.norm(mixed + s)))   # as a rotation
        worst = max(worst, off)
        assert math.degrees(blend.mix_angle_from_slerp(math.radians(apart), w)) == pytest.approx(off, abs=1e-6)
    assert worst == pytest.approx(documented, rel=0.03, abs=0.005)
    # equal weights: exactly halfway
    assert blend.mix_angle_from_slerp(math.radians(apart), 0.5) == pytest.approx(0.0, abs=1e-12)


# --- Key Every Frame off -------------------------------------------------------------

def test_the_keys_linear_interpolation_needs_play_the_runtime_at_every_frame():
    """Per track, the frames ``linear_keys`` keeps, interpolated per
    component between them and normalised (Blender's F-curves), are the
    seed's Animator at every frame; the frames it leaves out lie between
    two file keys the seed lerps."""
    rng = np.random.default_rng(5)
    n = 23
    frames, rots = [], []
    for k in (2, 3, 4, 6):
        f = np.sort(rng.choice(n, size=k, replace=False))
        q = quat.normalize(rng.normal(size=(k, 4)) * [0.05, 0.05, 0.05, 1])    # close: many lerp spans
        q[1] = quat.normalize(rng.normal(size=4))                              # and one far
        frames.append(f.astype(float))
        rots.append(q)
    frames.append(np.array([0.0, 7.0, 22.0]))                                  # keys on the first and last frame
    rots.append(quat.normalize(np.array([Q, [0.05, 0, 0, 1], [0.1, 0, 0, 1]])))
    clip = RiteClip.from_tracks(n, frames, rots)
    mask, note = clip.linear_keys(np.arange(n, dtype=float))
    assert re.match(r"\d+ of \d+ spans between keys keyed on every frame", note)
    for t, (f, q) in enumerate(zip(frames, rots)):
        kept = np.flatnonzero(mask[:, t])
        assert set(f.astype(int)) <= set(kept.tolist())
        keys = list(zip(f.astype(int).tolist(), q.tolist()))
        seed = np.array([seed_update_track(keys, n, c) for c in range(n)])
        seed /= np.linalg.norm(seed, axis=1, keepdims=True)
        blender = np.stack([np.interp(np.arange(n), kept, seed[kept][:, c]) for c in range(4)], axis=1)
        blender /= np.linalg.norm(blender, axis=1, keepdims=True)
        assert np.allclose(blender, seed, atol=1e-9), t
        # frames left out lie between two file keys the seed lerps (its lerp: Blender's interpolation)
        for c in sorted(set(range(n)) - set(kept.tolist())):
            a, b = kept[kept < c].max(), kept[kept > c].min()
            assert {a, b} <= set(f.astype(int).tolist())
            assert np.allclose(seed_lerp(seed[a], seed[b], (c - a) / (b - a)), seed[c], atol=1e-9)
    assert np.flatnonzero(mask[:, 4]).tolist() == [0, 7, 22]


# --- binding and weights -------------------------------------------------------------

def _ram(weights=None) -> RamModel:
    joints = [RiteJoint("Hips", -1, Q, [0, 1, 0], Q), RiteJoint("Spine", 0, Q, [0, 0.5, 0], Q),
              RiteJoint("Head", 1, Q, [0, 0.5, 0], Q)]
    pos = np.array([[0.1, 1.0, 0], [-0.1, 1.5, 0], [0, 2.0, 0.1], [0, 1.2, -0.1]])
    w = weights or [(0, 0, 1.0), (1, 1, 1.0), (2, 2, 1.0), (3, 0, 0.5), (3, 1, 0.5)]
    wv, wj, ww = zip(*w)
    return RamModel(mesh_name="m", joints=joints, positions=pos, tri_shader=[0, 0],
                    tri_vertices=[[0, 1, 2], [0, 2, 3]], weight_vertex=wv, weight_joint=wj, weight_value=ww)


def test_a_track_whose_name_and_id_disagree_is_reported_naming_both(tmp_path):
    write_ram(_ram(), tmp_path / "r.ram")
    write_raa(RaaAnimation("clash", 5, True, [RaaTrack(2, "Spine", [0, 4], [Q, list(about([0, 0, 1], 90))])]),
              tmp_path / "clash.raa")
    warnings: list[str] = []
    scene = read_scene([tmp_path / "r.ram", tmp_path / "clash.raa"], warnings=warnings)
    assert scene.clips[0].rotation.targets.tolist() == [1]          # by name: Spine
    assert any(re.search(r"clash: 1 track.*name and joint id name different joints.*"
                         r"'Spine' \(joint id 2 is 'Head'\)", w) for w in warnings), warnings


def test_weights_not_summing_to_1_report_the_runtimes_deviation(tmp_path):
    """The runtime uses weights as given (at the bind pose a vertex lands at
    sum(w) * p); the import says how far that is, in model sizes."""
    ram = _ram([(0, 0, 1.0), (1, 1, 1.5), (1, 2, 0.5), (2, 2, 0.7), (2, 2, 0.6), (3, 0, 0.5), (3, 1, 0.5)])
    write_ram(ram, tmp_path / "r.ram")
    warnings: list[str] = []
    read_scene([tmp_path / "r.ram"], warnings=warnings)
    rt = SeedRuntime(ram)
    as_given = rt.transform([j.rotation for j in ram.joints])[0]
    size = float(np.linalg.norm(ram.positions.max(0) - ram.positions.min(0)))
    dev = float(np.linalg.norm(as_given - ram.positions, axis=1).max()) / size
    m = [re.search(r"2 vertices have weights that do not sum to 1 \(sums 1.3 to 2\).*up to (\S+) of the model size",
                   w) for w in warnings]
    m = [x for x in m if x]
    assert m, warnings
    assert float(m[0].group(1)) == pytest.approx(dev, rel=1e-2)
