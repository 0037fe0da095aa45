# SPDX-License-Identifier: GPL-3.0-or-later
"""The .X time base and long timelines through bpy.ops (animations that
last a blink): frame-numbered real files import with their length in
frames, D3DX-tick files keep 4800 ticks per second, the import summary names
the choice, import_anim.xfile takes the option, a default export gives the
file's own key times back, and the baked keys Blender is left with (only
those its interpolation needs) verify at every frame against a fresh parse
of the file evaluated by the oracle."""
from __future__ import annotations

import numpy as np
import pytest
from blender_checks import ext, imported, play, reference, verify
from conftest import DATA
from x_rigs import chain_file

from legacy_skin_io.io.xfile import XAnimationKey, read_xfile, write_xfile

X = DATA / "x"
REAL = X / "real"
CHARACTER = REAL / "minetest__minetest_game" / "character.x"
FRAME_FILES = [(CHARACTER, 220), (REAL / "PilzAdam__mobs" / "mobs_stone_monster.x", 65),
               (REAL / "TheGameCreators__Dark-Basic-Pro" / "extraanim.X", 25)]
TINY = X / "directx-sdk" / "tiny_4anim.x"
PISTOL = REAL / "blitz-research__blitz3d" / "pistol.x"


def _verify_every_frame(bpy, meshes, ref, arm, clips=None) -> float:
    """Every clip of ``ref`` (or those named) played from its NLA track,
    verified at every whole frame of its range; returns the worst error
    relative to the model size."""
    worst = 0.0
    for clip in ref.clips:
        if clips is not None and clip.name not in clips:
            continue
        play(arm, clip.name)
        f0, f1 = clip.frame_range(24.0)
        rep = verify(bpy, meshes, ref, clip, np.arange(np.floor(f0), np.ceil(f1) + 1.0))
        assert rep.ok, (clip.name, rep.verdict())
        worst = max(worst, rep.max_error / rep.size)
    return worst


def _keys(action) -> int:
    return sum(len(fc.keyframe_points) for layer in action.layers for st in layer.strips
               for bag in st.channelbags for fc in bag.fcurves)


@pytest.mark.parametrize("path,length", FRAME_FILES, ids=[p.name for p, _ in FRAME_FILES])
def test_frame_numbered_real_files_play_their_frames(bpy, capfd, path, length):
    """No AnimTicksPerSecond, keys numbered in frames: with the defaults each
    set lasts its frames (not 0.1-1.1 frames at D3DX's 4800 ticks per
    second), the summary says which time base and how long, and Blender
    plays the file within 1e-5 of the model size at every frame."""
    assert bpy.ops.import_scene.xfile(filepath=str(path)) == {"FINISHED"}
    out = capfd.readouterr().out
    assert "time base one tick per frame (Automatic: no AnimTicksPerSecond, keys 0.." in out
    assert f": {length} frames at 24 fps" in out and "set Time Base to change it" in out
    assert "lasts" not in out
    assert bpy.context.scene.frame_end == length
    arm, meshes = imported(bpy)
    ref = reference("xfile", [path])
    assert all(c.frame_range(24.0)[1] <= length for c in ref.clips)
    _verify_every_frame(bpy, meshes, ref, arm)


@pytest.mark.parametrize("path,end", [(TINY, 317.6), (PISTOL, 47.2)], ids=["tiny_4anim", "pistol"])
def test_d3dx_tick_files_keep_4800(bpy, capfd, path, end):
    """Keys in D3DX ticks (steps of 160, ends of 4800 and more) stay at 4800
    ticks per second: tiny's Loiter lasts 317.6 frames at 24 fps, not
    63,520."""
    assert bpy.ops.import_scene.xfile(filepath=str(path)) == {"FINISHED"}
    out = capfd.readouterr().out
    assert "time base 4800 ticks per second (Automatic: no AnimTicksPerSecond, keys 0.." in out
    assert f": {end:g} frames at 24 fps" in out
    arm, _ = imported(bpy)
    longest = max(float(t.strips[0].action.frame_range[1]) for t in arm.animation_data.nla_tracks)
    assert longest == pytest.approx(end, abs=1e-3)
    assert bpy.context.scene.frame_end == int(np.ceil(end))


def test_pistol_plays_within_tolerance(bpy):
    assert bpy.ops.import_scene.xfile(filepath=str(PISTOL)) == {"FINISHED"}
    arm, meshes = imported(bpy)
    _verify_every_frame(bpy, meshes, reference("xfile", [PISTOL]), arm)


def test_anim_import_takes_the_time_base(bpy, capfd):
    """import_anim.xfile has the same Time Base option as the model import."""
    assert bpy.ops.import_scene.xfile(filepath=str(CHARACTER), import_animations=False) == {"FINISHED"}
    arm, _ = imported(bpy)
    capfd.readouterr()

    def imported_length(**options) -> float:
        before = set(bpy.data.actions)
        assert bpy.ops.import_anim.xfile(filepath=str(CHARACTER), **options) == {"FINISHED"}
        new = [a for a in bpy.data.actions if a not in before]
        assert new
        return max(float(a.frame_range[1]) for a in new)

    assert imported_length() == 220.0
    assert "time base one tick per frame (Automatic: " in capfd.readouterr().out
    assert imported_length(time_base="FILE") == pytest.approx(1.1)
    assert "time base 4800 ticks per second (no AnimTicksPerSecond: D3DX's default)" in capfd.readouterr().out
    assert imported_length(ticks_per_second=48.0) == 110.0
    assert imported_length(time_base="FRAMES") == 220.0
    assert imported_length(time_base="CUSTOM", ticks_per_second=12.0) == 440.0


def test_thinned_keys_verify_at_every_frame(bpy):
    """tiny_4anim.x read at 480 ticks per second: keys every 8 frames,
    slerped by DirectX, which Blender's linear quaternion keys only follow
    with keys between them. Far fewer keys than frames x channels, and every
    frame within 1e-5 of the model size."""
    assert bpy.ops.import_scene.xfile(filepath=str(TINY), ticks_per_second=480.0) == {"FINISHED"}
    arm, meshes = imported(bpy)
    ref = ext("io.formats").by_id("xfile").read_scene([TINY], ticks_per_second=480.0)
    for track in arm.animation_data.nla_tracks:
        action = track.strips[0].action
        frames = float(action.frame_range[1]) + 1.0
        curves = sum(len(bag.fcurves) for layer in action.layers for st in layer.strips for bag in st.channelbags)
        assert _keys(action) < 0.35 * frames * curves, track.name
    worst = _verify_every_frame(bpy, meshes, ref, arm, clips={"Walk", "Jog"})
    assert worst < 5e-6


def test_long_timeline_keys_stay_few(bpy):
    """tiny_4anim.x at one tick per frame: 97,444 frames in all; each action
    keeps a small fraction of its frames as keys."""
    assert bpy.ops.import_scene.xfile(filepath=str(TINY), time_base="FRAMES") == {"FINISHED"}
    arm, _ = imported(bpy)
    assert bpy.context.scene.frame_end == 63520
    total_frames = total_keys = 0
    for track in arm.animation_data.nla_tracks:
        action = track.strips[0].action
        curves = sum(len(bag.fcurves) for layer in action.layers for st in layer.strips for bag in st.channelbags)
        total_frames += (float(action.frame_range[1]) + 1.0) * curves
        total_keys += _keys(action)
    assert total_frames > 3e6 and total_keys < 0.05 * total_frames


def test_location_only_keys_verify(bpy, tmp_path):
    """A set with position keys only (no rotation keys: the baked rotations
    keep their own continuity), frame-numbered."""
    path = chain_file(tmp_path / "chain.x", np.arange(0, 121, 10))
    xf = read_xfile(path)
    rng = np.random.default_rng(3)
    for a in xf.animation_sets[0].animations:
        times = a.keys[0].times
        a.keys = [XAnimationKey(2, times, np.cumsum(rng.normal(scale=0.2, size=(len(times), 3)), axis=0))]
    write_xfile(xf, path)
    assert bpy.ops.import_scene.xfile(filepath=str(path)) == {"FINISHED"}
    assert bpy.context.scene.frame_end == 120
    arm, meshes = imported(bpy)
    _verify_every_frame(bpy, meshes, reference("xfile", [path]), arm)


def test_bone_bases_match_the_world_matrices(bpy):
    """A bone's pose basis from its own joint's local matrix (A local K^-1)
    is the one from the joints' world matrices, at every evaluated frame of
    every set of the animated corpus, with all joints as bones or not; the
    bones a set does not move (kept at their default channels, evaluated
    once) included."""
    bake = ext("scene.bone_keys")
    import_options, pipeline = ext("io.import_options"), ext("operators.pipeline")
    fmt = ext("io.formats").by_id("xfile")
    files = [X / "assimp" / "BCN_Epileptic.X", X / "assimp" / "Testwuson.X", X / "assimp" / "anim_test.x",
             X / "directx-sdk" / "bat.x", TINY, PISTOL, CHARACTER] + [p for p, _ in FRAME_FILES]
    still = 0
    for path in files:
        for every in (False, True):
            bpy.ops.wm.read_homefile(use_empty=True)
            built = pipeline.load(bpy.context, fmt, [str(path)],
                                  options=import_options.ImportOptions(every_joint_bone=every, import_animations=False))
            for clip in built.scene.clips:
                fast = bake._Basis(built, clip)
                assert fast.front is not None
                slow = bake._Basis(built, clip)
                slow.front = None
                still += int((~fast.moving).sum())
                times = clip.bake_frames(24.0)[1]
                for a, b, what in zip(fast(times)[:3], slow(times)[:3], ("location", "rotation", "scale")):
                    if what == "rotation":
                        a = np.where(np.sum(a * b, axis=-1, keepdims=True) < 0, -a, a)
                    assert np.abs(a - b).max() < 1e-9 * max(1.0, np.abs(b).max()), (path.name, clip.name, what)
    assert still > 0


def test_default_export_gives_the_files_key_times_back(bpy, tmp_path):
    """character.x imported and exported with the defaults: the keys are at
    the file's own times 0..220 (AnimTicksPerSecond = the frame rate, one
    tick per frame), not 200 times later; read back, 220 frames."""
    assert bpy.ops.import_scene.xfile(filepath=str(CHARACTER)) == {"FINISHED"}
    out = tmp_path / "character.x"
    assert bpy.ops.export_scene.xfile(filepath=str(out)) == {"FINISHED"}
    src, back = read_xfile(CHARACTER), read_xfile(out)
    assert back.anim_ticks_per_second == 24
    assert [s.name for s in back.animation_sets] == [s.name for s in src.animation_sets]
    for a, b in zip(src.animation_sets, back.animation_sets):
        want = np.unique(np.concatenate([k.times for x in a.animations for k in x.keys]))
        got = np.unique(np.concatenate([k.times for x in b.animations for k in x.keys]))
        assert np.array_equal(got, want), a.name
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.import_scene.xfile(filepath=str(out)) == {"FINISHED"}
    assert bpy.context.scene.frame_end == 220
