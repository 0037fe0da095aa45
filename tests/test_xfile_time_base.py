# SPDX-License-Identifier: GPL-3.0-or-later
"""The .X time base (animations that last a blink): the
automatic rule on every animated corpus file and on crafted edge cases, the
explicit choices, the option on the command line and in ``convert``, and the
key reduction the baked actions rely on (numpy only)."""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pytest

from legacy_skin_io.core import quat
from legacy_skin_io.core.key_reduction import linear_keys
from legacy_skin_io.io import formats, options
from legacy_skin_io.io.errors import FormatError
from legacy_skin_io.io.rite import read_raa
from legacy_skin_io.io.xfile import XAnimation, XAnimationKey, XAnimationSet, XFile, read_xfile
from legacy_skin_io.io.xfile import time_base as tb
from legacy_skin_io.io.xfile.adapter import read_scene, scene_from_xfile

X = Path(__file__).resolve().parent / "data" / "x"
CHARACTER = X / "real" / "minetest__minetest_game" / "character.x"

# every animated corpus file: the automatic choice and what in the file decides it
AUTOMATIC = {
    "assimp/BCN_Epileptic.X": ("FILE", 4800.0, "AnimTicksPerSecond 4800 (keys 0..15840, 160 apart)"),
    "assimp/Testwuson.X": ("FILE", 4800.0, "AnimTicksPerSecond 4800 (a set whose only time is 0)"),
    "assimp/anim_test.x": ("FILE", 24.0, "AnimTicksPerSecond 24 (keys 1..24, one apart: the file says)"),
    "directx-sdk/bat.x": ("FILE", 4800.0, "no AnimTicksPerSecond, keys 0..4800, 160 apart: D3DX ticks"),
    "directx-sdk/tiny_4anim.x": ("FILE", 4800.0, "no AnimTicksPerSecond, keys 0..63520, 160 apart"),
    "real/blitz-research__blitz3d/pistol.x": ("FILE", 4800.0,
                                              "no AnimTicksPerSecond, 5 keys 0..9440, 2080..2560 apart"),
    "real/PilzAdam__mobs/mobs_stone_monster.x": ("FRAMES", None, "no AnimTicksPerSecond, keys 0..65, 1 apart"),
    "real/TheGameCreators__Dark-Basic-Pro/extraanim.X": ("FRAMES", None,
                                                         "no AnimTicksPerSecond, sparse keys 0..25, 1..9 apart"),
    "real/minetest__minetest_game/character.x": ("FRAMES", None, "no AnimTicksPerSecond, keys 0..220, 1 apart"),
    "real/blitz-research__blitz3d/ship.x": ("FILE", 4800.0, "no AnimTicksPerSecond, every key at time 0"),
    "crafted/animation_on_missing_frame.x": ("FILE", 4800.0, "no AnimTicksPerSecond, keys 0 and 4800"),
    "crafted/key_time_minus_one.x": ("FILE", 4800.0, "AnimTicksPerSecond 4800 (its key at -1 skipped)"),
}


def _animated_corpus() -> list[str]:
    out = []
    for p in sorted(X.rglob("*")):
        if p.suffix.lower() != ".x" or p.name == "malformed_skinweights_oob.x":
            continue
        if read_xfile(p).animation_sets:
            out.append(p.relative_to(X).as_posix())
    return out


def test_every_animated_corpus_file_has_an_expected_time_base():
    assert sorted(AUTOMATIC) == _animated_corpus()


@pytest.mark.parametrize("name", sorted(AUTOMATIC))
def test_automatic_time_base_on_the_corpus(name):
    choice, tps, _why = AUTOMATIC[name]
    xf = read_xfile(X / name)
    got = tb.choose(xf)
    assert (got.choice, got.ticks_per_second, got.option) == (choice, tps, "AUTO")
    scene = scene_from_xfile(xf, path=str(X / name))
    for clip in scene.clips:
        assert clip.ticks_per_second == tps
        assert clip.extras["xfile"] == {"time_base": choice, "time_base_option": "AUTO",
                                        "anim_ticks_per_second": xf.anim_ticks_per_second}
        assert clip.extras["time_base"].startswith("one tick per frame (Automatic: " if tps is None
                                                   else f"{tps:g} ticks per second (Automatic: ")


def _file(tracks, tps=None) -> XFile:
    """One AnimationSet with one rotation key track per entry of ``tracks`` (key times)."""
    aset = XAnimationSet(name="set")
    for i, times in enumerate(tracks):
        times = np.asarray(times, dtype=np.float64)
        values = np.tile([1.0, 0.0, 0.0, 0.0], (len(times), 1))
        aset.animations.append(XAnimation(frame_name=f"f{i}", keys=[XAnimationKey(0, times, values)]))
    return XFile(anim_ticks_per_second=tps, animation_sets=[aset])


@pytest.mark.parametrize("tracks,tps,want", [
    ([[0]], None, "FILE"),                                    # a set whose only time is 0: nothing to time
    ([[0], [0]], None, "FILE"),
    ([[10]], None, "FRAMES"),                                 # a single key at 10: frame 10, not 0.002 s
    ([np.arange(1, 25)], None, "FRAMES"),                     # keys 1..24, one apart
    ([[0, 6, 9, 18, 25], [0], [0, 25]], None, "FRAMES"),      # sparse frame keys 0..25 (extraanim's pattern)
    ([[0, 100, 200, 300]], None, "FRAMES"),                   # 100 apart but over within 1/16 s at 4800
    ([[0, 4800]], None, "FILE"),                              # a D3DX file with few keys
    ([[0, 2400, 4800], [0, 4800]], None, "FILE"),
    ([[0, 2080, 4640, 7040, 9440]], None, "FILE"),            # pistol.x's keys
    ([np.arange(0, 4801, 160)], None, "FILE"),                # keys a frame apart at 30 fps
    ([np.arange(0, 4801, 80)], None, "FILE"),                 # ... at 60 fps
    ([np.arange(0, 481, 40)], None, "FRAMES"),                # denser than any D3DX exporter keys
    ([np.arange(0, 221)], 4800, "FILE"),                      # the file says 4800: kept
    ([np.arange(1, 25)], 24, "FILE"),
])
def test_automatic_time_base_on_crafted_key_times(tracks, tps, want):
    xf = _file(tracks, tps)
    got = tb.choose(xf)
    assert got.choice == want
    assert got.ticks_per_second == (None if want == "FRAMES" else float(tps or 4800))


def test_key_gaps_are_each_tracks_own_in_any_order():
    """The gaps between a track's distinct times, whatever order its keys
    are stored in, never across two tracks; first and last over all."""
    rng = np.random.default_rng(5)
    for _ in range(100):
        tracks = [rng.integers(0, 40, size=int(rng.integers(1, 8))).astype(float)
                  for _ in range(int(rng.integers(1, 5)))]
        want = np.concatenate([np.diff(np.unique(t)) for t in tracks])
        first, last, gaps = tb.key_gaps(_file(tracks))
        assert np.array_equal(np.sort(gaps), np.sort(want))
        assert (first, last) == (min(t.min() for t in tracks), max(t.max() for t in tracks))
    assert tb.key_gaps(XFile()) is None


def test_explicit_choices():
    frames_file = _file([np.arange(221)])
    ticks_file = _file([np.arange(0, 4801, 160)])
    assert tb.choose(frames_file, "FILE").ticks_per_second == 4800.0        # D3DX's default when absent
    assert tb.choose(_file([np.arange(25)], 30), "FILE").ticks_per_second == 30.0
    assert tb.choose(ticks_file, "FRAMES").ticks_per_second is None
    assert tb.choose(ticks_file, "CUSTOM", 2400).ticks_per_second == 2400.0
    custom = tb.choose(frames_file, "AUTO", 30)          # --ticks-per-second N alone: Custom N
    assert (custom.choice, custom.ticks_per_second) == ("CUSTOM", 30.0)
    assert tb.choose(frames_file, "FILE", 30).ticks_per_second == 4800.0    # an explicit choice wins
    with pytest.raises(FormatError, match="Custom needs Ticks per Second above 0"):
        tb.choose(frames_file, "CUSTOM", 0)


def test_frame_numbered_file_keeps_its_length_in_frames():
    """character.x (keys 0..220, no AnimTicksPerSecond): 220 frames at any
    frame rate by default, 1.1 frames at 24 fps read as D3DX ticks."""
    scene = read_scene([CHARACTER])
    for clip in scene.clips:
        assert clip.ticks_per_second is None
        assert clip.frame_range(24.0) == (0.0, 220.0) == clip.frame_range(30.0)
    as_ticks = read_scene([CHARACTER], time_base="FILE")
    assert as_ticks.clips[0].frame_range(24.0) == pytest.approx((0.0, 1.1))
    assert read_scene([CHARACTER], ticks_per_second=30.0).clips[0].frame_range(30.0) == (0.0, 220.0)


def test_time_base_options_on_the_command_line():
    """--time-base and --ticks-per-second come from the option specs; N > 0
    alone still means a custom time base."""
    fmt = formats.by_id("xfile")
    p = argparse.ArgumentParser()
    options.add_flags(p, [(fmt.label, fmt.import_options)])
    args = p.parse_args(["--ticks-per-second", "30"])
    got = options.given(args, fmt.import_options)
    assert got == {"ticks_per_second": 30.0}
    assert fmt.read_scene([CHARACTER], **got).clips[0].ticks_per_second == 30.0
    args = p.parse_args(["--time-base", "frames"])
    assert options.given(args, fmt.import_options) == {"time_base": "FRAMES"}
    with pytest.raises(options.OptionError, match="--time-base: 'ticks' is not one of AUTO, FILE, FRAMES, CUSTOM"):
        options.given(p.parse_args(["--time-base", "ticks"]), fmt.import_options)
    assert {s.id for s in fmt.anim_import_options} == {"time_base", "ticks_per_second", "ranges"}


def test_convert_keeps_the_frames_of_a_frame_numbered_file(tmp_path):
    """character.x converted with the defaults: RiTE keeps its 221 frames
    (0..220), and .X its ticks 0..220 (with AnimTicksPerSecond = the frame
    rate, so that every reader plays them at that speed)."""
    from legacy_skin_io.cli import main

    # RAA cannot carry its animated translation and scale (~31% of the model size): exit 3 unless accepted
    assert main(["convert", str(CHARACTER), "-o", str(tmp_path / "c.ram"), "--accept-loss"]) == 0
    raa = read_raa(tmp_path / "c_ArmatureAction.raa")
    assert raa.frame_count == 221
    assert main(["convert", str(CHARACTER), "-o", str(tmp_path / "c.x")]) == 0
    back, src = read_xfile(tmp_path / "c.x"), read_xfile(CHARACTER)
    assert back.anim_ticks_per_second == 24
    def times(aset):
        return {(a.frame_name, k.key_type): k.times.tolist() for a in aset.animations for k in a.keys}

    assert [s.name for s in back.animation_sets] == [s.name for s in src.animation_sets]
    for a, b in zip(src.animation_sets, back.animation_sets):
        assert times(a) == times(b)
    again = read_scene([tmp_path / "c.x"])
    assert again.clips[0].ticks_per_second == 24.0 and again.clips[0].frame_range(24.0) == (0.0, 220.0)


# ---------------------------------------------------------------------------
# the key reduction of baked actions

def _check(frames, values, keep, tol, unit):
    """Every sample of every curve within ``tol`` of the interpolation of its kept keys."""
    worst = 0.0
    for g in range(values.shape[1]):
        k = np.flatnonzero(keep[:, g])
        assert k[0] == 0 and k[-1] == len(frames) - 1
        guess = np.stack([np.interp(frames, frames[k], values[k, g, c]) for c in range(values.shape[2])], 1)
        if unit:
            guess /= np.linalg.norm(guess, axis=1, keepdims=True)
        worst = max(worst, float(np.abs(guess - values[:, g]).max()))
    assert worst <= tol
    return worst


def test_linear_keys_reproduce_every_sample():
    rng = np.random.default_rng(7)
    frames = np.arange(2000.0)
    # quaternions slerped between keys 40 frames apart, each turned up to 0.3 rad from the last
    kt = np.arange(0.0, 2001.0, 40.0)
    steps = quat.from_axis_angle(rng.normal(size=(len(kt), 5, 3)), rng.uniform(0, 0.3, size=(len(kt), 5)))
    q = np.broadcast_to(quat.IDENTITY, (len(kt), 5, 4)).copy()
    for i in range(1, len(kt)):
        q[i] = quat.mul(steps[i], q[i - 1])
    k = np.minimum(np.searchsorted(kt, frames, side="right") - 1, len(kt) - 2)
    u = np.broadcast_to(((frames - kt[k]) / 40.0)[:, None], (len(frames), 5))
    rot = quat.slerp_shortest(q[k], q[k + 1], u)
    keep = linear_keys(frames, rot, 1e-7, unit=True)
    _check(frames, rot, keep, 1e-7, True)
    assert keep.sum() < 0.5 * keep.size          # keys between the file's keys are left out
    raw = linear_keys(frames, rot, 1e-7)             # components as they are: more keys
    _check(frames, rot, raw, 1e-7, False)
    assert raw.sum() > keep.sum()
    # straight lines need their ends only; noise needs every sample
    line = np.stack([frames * 0.5, 3.0 - frames], axis=1)[:, :, None]
    assert linear_keys(frames, line, 1e-9).sum(axis=0).tolist() == [2, 2]
    noise = rng.normal(size=(2000, 1, 3))
    assert linear_keys(frames, noise, 1e-9).all()
    # one tolerance per curve
    both = np.concatenate((rot[:, :1], rot[:, :1]), axis=1)
    per = linear_keys(frames, both, np.array([1e-3, 1e-8]), unit=True)
    assert per[:, 0].sum() < per[:, 1].sum()
    _check(frames, both[:, 1:], per[:, 1:], 1e-8, True)


def test_linear_keys_edge_cases():
    assert linear_keys(np.zeros(0), np.zeros((0, 2, 3)), 1e-6).shape == (0, 2)
    assert linear_keys([5.0], np.ones((1, 1, 3)), 1e-6).tolist() == [[True]]
    assert linear_keys([5.0, 6.0], np.ones((2, 1)), 1e-6).tolist() == [[True], [True]]
    # uneven frames (a cycle's last key between two whole frames)
    f = np.array([0.0, 1.0, 2.0, 3.0, 3.5])
    v = (f ** 2)[:, None, None]
    keep = linear_keys(f, v, 1e-12)
    assert keep[:, 0].all()
