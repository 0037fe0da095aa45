# SPDX-License-Identifier: GPL-3.0-or-later
"""Exports keep every key, through bpy.ops with the
installed extension.

Expected values never come from the exporter: the original files are read
by the format's reader and evaluated by the oracle (``scene.evaluate``), or
read by assimp (tests/assimp_reading.py); the written files are read back
the same way.
"""
from __future__ import annotations

import re
from pathlib import Path

import assimp_reading as ar
import numpy as np
import pytest
from blender_checks import ext
from conftest import SAMPLES

REL = 1e-5


def _rite_deviation(ram, original_raa, written_raa) -> float:
    """Largest vertex distance / model size between the RiTE Animator
    playing ``original_raa`` and ``written_raa`` on ``ram`` (fresh parses,
    the oracle), at every frame of the original."""
    rite = ext("io.rite.adapter")
    ev = ext("scene.evaluate")
    a = rite.read_scene([str(ram), str(original_raa)], warnings=[])
    b = rite.read_scene([str(ram), str(written_raa)], warnings=[])
    frames = np.arange(0.0, a.clips[0].frame_range(24.0)[1] * 2 + 1)     # two loops
    worst = 0.0
    for p, q in zip(ev.evaluate(a, a.clips[0], frames, 24.0), ev.evaluate(b, b.clips[0], frames, 24.0)):
        worst = max(worst, float(np.linalg.norm(p - q, axis=1).max()))
    return worst / ev.size(a)


@pytest.mark.parametrize("mode", ["ACTION", "MERGEABLE", "DOMINANT"])
def test_rite_layer_export_keeps_each_track_in_one_hemisphere(bpy, tmp_path, mode):
    """walk.raa imported as an NLA layer and exported again plays as the
    original (before: some keys written as -q, the legs spun the long way
    round, 1.05 of the model size at frame 14)."""
    bpy.ops.import_scene.rite(filepath=str(SAMPLES / "rite" / "humanoid.ram"), import_animations=False)
    assert bpy.ops.import_anim.rite(filepath=str(SAMPLES / "rite" / "walk.raa"), playback=mode) == {"FINISHED"}
    out = tmp_path / "walk_again.raa"
    assert bpy.ops.export_anim.rite(filepath=str(out)) == {"FINISHED"}
    raa = ext("io.rite.raa_reader").read_raa(str(out))
    for tr in raa.tracks:
        r = np.asarray(tr.rotations)
        assert (np.sum(r[:-1] * r[1:], axis=1) > 0).all(), tr.joint_name
    assert _rite_deviation(SAMPLES / "rite" / "humanoid.ram", SAMPLES / "rite" / "walk.raa", out) <= REL


# ---------------------------------------------------------------------------
# real animated .X files: import, export in every storage kind, assimp's reading

X = Path(__file__).resolve().parent / "data" / "x"
BROKEN = {"malformed_skinweights_oob.x", "OV_GetNextToken"}
STORAGES = ("text", "binary", "text_compressed", "binary_compressed")
_KEY0 = re.compile(rb"^(\s*\d+\s*;\s*4\s*;)([^;]*)(;;[,;]?\s*)$")


def _animated_x() -> list[Path]:
    from legacy_skin_io.io.xfile import read_xfile

    out = []
    for p in sorted(X.rglob("*")):
        if p.suffix.lower() != ".x" or p.name in BROKEN:
            continue
        try:
            xf = read_xfile(p)
        except Exception:     # a file the reader refuses is another test's business
            continue
        frames = {f.name for f in xf.all_frames()}          # (an animation of a frame the file lacks plays nothing)
        if any(a.keys for s in xf.animation_sets for a in s.animations if a.frame_name in frames) and (
                xf.meshes or any(f.meshes for f in xf.all_frames())):
            out.append(p)
    return out


ANIMATED_X = _animated_x()


def _unit_rotation_keys(path: Path, tmp: Path) -> Path:
    """A copy of a text .X whose rotation keys are normalised (done on the
    text, no writer involved): assimp turns each rotation key into a matrix
    and back, which distorts a non-unit key (character.x, |q| down to
    0.9997; mobs_stone_monster.x, 0.9978), while the importer, and any
    reader that interpolates rotations, uses the unit quaternion."""
    lines = path.read_bytes().splitlines(keepends=True)
    out, in_rot, expect_type = [], False, False
    for line in lines:
        s = line.strip()
        if s.startswith(b"AnimationKey"):
            expect_type, in_rot = True, False
        elif expect_type and s[:1].isdigit():
            in_rot, expect_type = s.split(b";")[0].strip() == b"0", False
        elif in_rot:
            m = _KEY0.match(line.rstrip(b"\r\n"))
            if m:
                q = np.array([float(x) for x in m.group(2).split(b",")])
                q = q / np.linalg.norm(q)
                end = line[len(line.rstrip(b"\r\n")):]
                line = m.group(1) + ",".join(f"{x:.9f}" for x in q).encode() + m.group(3) + end
            elif s.startswith(b"}"):
                in_rot = False
        out.append(line)
    copy = tmp / ("unit_" + path.name)
    copy.write_bytes(b"".join(out))
    return copy


def _binary(path: Path) -> bool:
    return path.read_bytes()[8:12] != b"txt "


def _reference(orig, o_tps: list[float], stride: int = 1) -> list:
    """assimp's reading of the original posed at rest and at every key time
    (every ``stride``-th, and the last) of each set: [(set index or None,
    seconds, points per mesh)]."""
    out = [(None, 0.0, orig.points())]
    for k, sa in enumerate(orig.animations):
        tps = sa.ticks_per_second or o_tps[k]
        keys = sa.key_times()
        assert len(keys)
        keys = np.unique(np.append(keys[::stride], keys[-1]))
        out += [(k, t / tps, orig.points(sa, t)) for t in keys]
    return out


def _deviation(ref: list, orig, exp, size: float) -> tuple[float, str]:
    """Largest vertex distance / size between the reference poses
    (:func:`_reference`) and assimp's reading of ``exp`` at the same times."""
    assert len(exp.animations) == len(orig.animations), ([x.name for x in orig.animations],
                                                         [x.name for x in exp.animations])
    for sa, sb in zip(orig.animations, exp.animations):
        assert sb.name == sa.name or not sa.name, (sa.name, sb.name)
    rest = exp.points()
    assert len(rest) == len(ref[0][2])
    pick = [_matching(x, y, size) for x, y in zip(ref[0][2], rest)]
    worst, where = 0.0, ""
    for k, sec, pts in ref:
        got = rest if k is None else exp.points(exp.animations[k], sec * exp.animations[k].ticks_per_second)
        d = max(float(np.linalg.norm(x[i] - y, axis=1).max()) for x, y, i in zip(pts, got, pick)) / size
        if d >= worst:
            worst, where = d, "rest" if k is None else f"{orig.animations[k].name} @ {sec:g} s"
    return worst, where


def _matching(a: np.ndarray, b: np.ndarray, size: float) -> np.ndarray:
    """For each vertex of ``b`` (assimp makes one per face corner, in face
    order), the vertex of ``a`` it stands for: the identity when the counts
    agree, else the same order with the corners ``b`` lacks skipped
    (tiny_4anim.x has 3 duplicate faces, which the importer leaves out)."""
    if len(a) == len(b):
        return np.arange(len(a))
    close = 1e-6 * size
    out = np.empty(len(b), dtype=np.int64)
    i = 0
    for j in range(len(b)):
        while i < len(a) and np.abs(a[i] - b[j]).max() > close:
            i += 1
        assert i < len(a), "the written corners are not the original's in order"
        out[j] = i
        i += 1
    return out


def _set_rates(bpy, n: int) -> list[float]:
    """The time base the importer gave each set (the newest n actions, in
    file order): its ticks per second, the frame rate for a set read at one
    tick per frame."""
    md = ext("operators.metadata")
    render = bpy.context.scene.render
    fps = render.fps / render.fps_base
    arm = next(o for o in bpy.context.scene.objects if o.type == "ARMATURE")
    tracks = [t for t in arm.animation_data.nla_tracks]
    out = []
    for t in tracks[:n]:
        meta = md.load(t.strips[0].action, md.CLIP_KEY) or {}
        out.append(float(meta.get("ticks_per_second") or fps))
    return out


@pytest.mark.parametrize("path", ANIMATED_X, ids=lambda p: p.name)
def test_real_animated_x_round_trips_key_for_key(bpy, tmp_path, path):
    """Import with no option touched, export in every storage kind: assimp's
    reading of the written file matches its reading of the original at
    every original key time, the last included, within 1e-5 of the model
    size (before: up to 0.85 of it; sets written at whole frames only);
    three import/export cycles drift by no more than 1e-6."""
    src = path if _binary(path) else _unit_rotation_keys(path, tmp_path)
    orig = ar.assimp_scene(src, tmp_path)
    size = ar.size(orig.points())
    assert bpy.ops.import_scene.xfile(filepath=str(path)) == {"FINISHED"}
    rates = _set_rates(bpy, len(orig.animations))
    ref = _reference(orig, rates)
    # the other storage kinds hold the same numbers: on big meshes every 8th key (and the last) shows it
    stride = 8 if sum(len(p) for p in ref[0][2]) > 20000 else 1
    sparse = ref if stride == 1 else _reference(orig, rates, stride)
    for storage in STORAGES:
        out = tmp_path / f"{path.stem}_{storage}.x"
        assert bpy.ops.export_scene.xfile(filepath=str(out), storage=storage) == {"FINISHED"}
        dev, where = _deviation(ref if storage == "text" else sparse, orig, ar.assimp_scene(out, tmp_path), size)
        print(f"{path.name} ({storage}): {dev:.2e} of the model size ({where})")
        assert dev <= REL, (storage, where, dev)
    first = ar.assimp_scene(tmp_path / f"{path.stem}_text.x", tmp_path)
    again = tmp_path / f"{path.stem}_text.x"
    for cycle in range(2):
        bpy.ops.wm.read_homefile(use_empty=True)
        assert bpy.ops.import_scene.xfile(filepath=str(again)) == {"FINISHED"}
        again = tmp_path / f"{path.stem}_cycle{cycle + 2}.x"
        assert bpy.ops.export_scene.xfile(filepath=str(again)) == {"FINISHED"}
    drift, where = _deviation(_reference(first, [0.0] * len(first.animations), stride), first,
                              ar.assimp_scene(again, tmp_path), size)
    print(f"{path.name}: three cycles drift {drift:.2e} ({where})")
    assert drift <= 1e-6, (where, drift)


def test_an_edited_set_is_sampled_at_its_original_key_times_and_ends_at_its_own_end(bpy, tmp_path):
    """pistol.x ends at 47.2 frames (9440 ticks). Touched after the import
    (its first key eases in: its fingerprint no longer matches), the set is
    sampled: its keys include the original key times, and the last one is
    the end pose at 9440 ticks (before: written at whole frames, the end
    pose interpolated between frames 47 and 48)."""
    path = X / "real" / "blitz-research__blitz3d" / "pistol.x"
    orig = ar.assimp_scene(path, tmp_path)
    assert bpy.ops.import_scene.xfile(filepath=str(path)) == {"FINISHED"}
    sk = ext("operators.source_keys")
    action = next(a for a in bpy.data.actions if sk.fcurves(a))
    fc = sk.fcurves(action)[0]
    fc.keyframe_points[0].interpolation = "SINE"
    fc.keyframe_points[0].easing = "EASE_IN"
    fc.update()
    assert not sk.untouched(action)
    out = tmp_path / "edited.x"
    assert bpy.ops.export_scene.xfile(filepath=str(out)) == {"FINISHED"}
    got = ar.assimp_scene(out, tmp_path)
    a, b = orig.animations[0], got.animations[0]
    tps_o = a.ticks_per_second or 4800.0
    want = a.key_times() / tps_o
    have = b.key_times() / b.ticks_per_second
    assert all(np.abs(have - t).min() < 1e-9 for t in want), (want, have)
    assert abs(have.max() - want.max()) < 1e-9
    size = ar.size(orig.points())
    end_o = orig.points(a, a.key_times()[-1])
    end_e = got.points(b, have.max() * b.ticks_per_second)
    assert max(float(np.linalg.norm(x - y, axis=1).max()) for x, y in zip(end_o, end_e)) <= REL * size


def test_the_import_fingerprint_is_the_one_read_back_from_the_curves(bpy):
    """The fingerprint an import records comes from the arrays it keyed (not
    read back from Blender); an export reads the F-curves. For every action
    of real animated files and the RiTE sample they must be the same digest,
    or an untouched set would be sampled instead of written key for key."""
    sk = ext("operators.source_keys")
    seen = cycled = 0
    rite = SAMPLES / "rite"
    for path in [X / "real" / "blitz-research__blitz3d" / "pistol.x",
                 X / "real" / "minetest__minetest_game" / "character.x",
                 X / "directx-sdk" / "tiny_4anim.x", rite / "humanoid.ram", rite / "walk.raa"]:
        bpy.ops.wm.read_homefile(use_empty=True)
        if path.suffix == ".raa":       # the model with a clip that loops (Cycles modifiers)
            assert bpy.ops.import_scene.rite(directory=str(rite), files=[{"name": "humanoid.ram"},
                                                                         {"name": path.name}]) == {"FINISHED"}
        else:
            op = bpy.ops.import_scene.rite if path.suffix == ".ram" else bpy.ops.import_scene.xfile
            assert op(filepath=str(path)) == {"FINISHED"}
        for action in bpy.data.actions:
            stored = action.get(sk.KEYS + "_fingerprint")
            if stored is None:
                continue
            assert stored == sk.fingerprint(action), (path.name, action.name)
            assert sk.untouched(action)
            seen += 1
            cycled += any(m.type == "CYCLES" for fc in sk.fcurves(action) for m in fc.modifiers)
    assert seen >= 7 and cycled >= 1


def test_the_fingerprint_sees_what_plays_and_only_that(bpy):
    """Edits that change what an action plays make it touched (a value; an
    interpolation; a BEZIER key's handle; an easing key's easing and its
    BACK amount; a modifier; a mute); edits Blender plays the same (a LINEAR
    key's easing or handles) leave it untouched. A fingerprint recorded
    before the current version (no prefix) is still read."""
    sk = ext("operators.source_keys")
    path = X / "real" / "blitz-research__blitz3d" / "pistol.x"
    assert bpy.ops.import_scene.xfile(filepath=str(path)) == {"FINISHED"}
    action = next(a for a in bpy.data.actions if sk.fcurves(a))
    fc = max(sk.fcurves(action), key=lambda f: len(f.keyframe_points))
    kp = fc.keyframe_points
    assert len(kp) >= 3 and all(k.interpolation == "LINEAR" for k in kp)
    stored = action[sk.KEYS + "_fingerprint"]

    def same_after(edit) -> bool:
        edit()
        fc.update()
        return sk.fingerprint(action) == stored

    assert same_after(lambda: setattr(kp[1], "easing", "EASE_IN_OUT"))
    assert same_after(lambda: setattr(kp[1], "handle_right", (kp[1].co[0] + 1.0, kp[1].co[1] + 5.0)))
    assert sk.untouched(action)

    def restored(edit, undo) -> bool:
        before = sk.fingerprint(action)
        edit()
        fc.update()
        changed = sk.fingerprint(action) != before
        undo()
        fc.update()
        assert sk.fingerprint(action) == before
        return changed

    value = float(kp[1].co[1])
    assert restored(lambda: setattr(kp[1], "co", (kp[1].co[0], value + 1e-3)),
                    lambda: setattr(kp[1], "co", (kp[1].co[0], value)))
    assert restored(lambda: setattr(kp[1], "interpolation", "CONSTANT"),
                    lambda: setattr(kp[1], "interpolation", "LINEAR"))
    assert restored(lambda: setattr(fc, "mute", True), lambda: setattr(fc, "mute", False))
    assert restored(lambda: fc.modifiers.new("NOISE"), lambda: fc.modifiers.remove(fc.modifiers[0]))
    kp[1].interpolation = "BEZIER"
    kp[1].handle_right_type = "FREE"
    fc.update()
    hr = tuple(kp[1].handle_right)
    assert restored(lambda: setattr(kp[1], "handle_right", (hr[0], hr[1] + 0.5)),
                    lambda: setattr(kp[1], "handle_right", hr))
    kp[1].interpolation = "BACK"
    fc.update()
    back = float(kp[1].back)
    assert restored(lambda: setattr(kp[1], "back", back + 0.5), lambda: setattr(kp[1], "back", back))
    easing = kp[1].easing
    assert restored(lambda: setattr(kp[1], "easing", "EASE_OUT" if easing != "EASE_OUT" else "EASE_IN"),
                    lambda: setattr(kp[1], "easing", easing))
    assert not sk.untouched(action)           # BACK now: it plays otherwise than imported

    # a .blend saved by an earlier version holds a fingerprint without the version prefix
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.import_scene.xfile(filepath=str(path)) == {"FINISHED"}
    action = next(a for a in bpy.data.actions if sk.fcurves(a))
    action[sk.KEYS + "_fingerprint"] = sk._fingerprint_v1(action)
    assert sk.untouched(action)
    fc = sk.fcurves(action)[0]
    fc.keyframe_points[0].co = (fc.keyframe_points[0].co[0], fc.keyframe_points[0].co[1] + 1e-3)
    fc.update()
    assert not sk.untouched(action)


@pytest.mark.parametrize("float_size", ["32", "64"])
@pytest.mark.parametrize("storage", ["text_compressed", "binary_compressed"])
def test_matrix_keys_in_a_compressed_file_play_in_our_import_and_in_assimp(bpy, tmp_path, storage, float_size):
    """A rig made in Blender exported with matrix keys to a
    compressed file: its AnimationSet is read by our import (one action,
    playing what Blender showed) and by assimp, the same poses."""
    import export_checks as rig
    from blender_checks import play

    ao, mo, action = rig.build(bpy)
    frames = np.arange(1, 14, 3)
    want = rig.positions(bpy, mo, frames)
    size = rig.size(want[0])
    out = tmp_path / "rig.x"
    assert bpy.ops.export_scene.xfile(filepath=str(out), storage=storage, key_type="MATRIX",
                                      float_size=float_size) == {"FINISHED"}
    sc = ar.assimp_scene(out, tmp_path)
    assert [a.name for a in sc.animations] == ["Bend"]
    a = sc.animations[0]
    axes = ext("io.formats").by_id("xfile").adapter.default_axes()
    by_assimp = max(rig.nn_distance(w, axes.points(np.concatenate(sc.points(a, f * a.ticks_per_second / 24.0))
                                                   * [1.0, 1.0, -1.0]))
                    for w, f in zip(want, frames)) / size
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.import_scene.xfile(filepath=str(out)) == {"FINISHED"}
    assert [x.name for x in bpy.data.actions] == ["Bend"]
    arm = next(o for o in bpy.context.scene.objects if o.type == "ARMATURE")
    body = next(o for o in bpy.context.scene.objects if o.type == "MESH")
    play(arm, "Bend")
    got = rig.positions(bpy, body, frames)
    by_import = max(rig.nn_distance(w, g) for w, g in zip(want, got)) / size
    print(f"{storage} {float_size}: assimp {by_assimp:.2e}, our import {by_import:.2e} of the model size off")
    assert by_assimp <= REL and by_import <= REL
