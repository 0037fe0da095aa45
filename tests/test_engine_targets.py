# SPDX-License-Identifier: GPL-3.0-or-later
"""Exports that the engines play (the .X export's Target option) and engine
timelines both ways (the Frame Ranges import option), without Blender.

Judged by the Irrlicht engine itself (tests/irrlicht_reading.py: the
system's Irrlicht 1.8.5 playing the written file) against the source's own
playback evaluated by the core (RiTE: the Animator's; .X: D3DX's), and, for
the structure of the DarkBASIC target, against what its own character files
hold (FPS Creator's: one AnimationSet ``Anim-1`` of matrix keys on every
frame from 0, ``Anim-<frame>`` Animations with AnimationOptions {0; 0}, the
templates declared in the file).
"""
from __future__ import annotations

import numpy as np
import pytest
from conftest import DATA, SAMPLES
from engine_checks import ranges_of, source_vertices, split_vertices, take, worst

from legacy_skin_io.io.convert import convert
from legacy_skin_io.io.errors import Warnings
from legacy_skin_io.io.formats import by_id
from legacy_skin_io.io.ranges import read_ranges
from legacy_skin_io.io.xfile.conventions import default_axes
from legacy_skin_io.io.xfile.reader import read_xfile
from legacy_skin_io.scene import evaluate as ev
from legacy_skin_io.scene.timeline import TIMELINE, Range, layout, split

RITE = [SAMPLES / "rite" / n for n in ("humanoid.ram", "walk.raa", "wave.raa")]
CHARACTER = DATA / "x" / "real" / "minetest__minetest_game" / "character.x"
PLAYER_API = DATA / "ranges" / "minetest__minetest_game" / "player_api_init.lua"
EXTRAANIM = DATA / "x" / "real" / "TheGameCreators__Dark-Basic-Pro" / "extraanim.X"
PLAYER_RANGES = {"stand": (0, 79), "sit": (81, 160), "lay": (162, 166), "walk": (168, 187), "mine": (189, 198),
                 "walk_mine": (200, 219)}
BOUND = 1e-5        # what Irrlicht shows against the source, fraction of the model size (the requirement is 1e-3)
FPS = 24.0


def _in_irrlicht(irrlicht, xpath, src, back) -> dict:
    """Every frame of every range of ``xpath`` in Irrlicht against the
    source scene's own playback (evaluated by the core, taken to the file's
    space by ``back``) at the clip's frames: {clip: worst}."""
    fps, clips = ranges_of(xpath)
    assert sorted(r["name"] for r in clips) == sorted(c.name for c in src.clips)
    mesh, vertex = source_vertices(irrlicht.irrlicht_vertex_order(xpath))
    size = float(np.linalg.norm(np.ptp(back.points(ev.default_points(src)), axis=0)))
    counts = np.cumsum([len(m.positions) for m in src.meshes])[:-1]
    out = {}
    for r in clips:
        clip = next(c for c in src.clips if c.name == r["name"])
        frames, _ = clip.bake_frames(fps)            # the clip's whole frames and its wrap
        timeline = np.arange(r["start"], r["end"] + 1, dtype=np.float64)
        assert len(timeline) == len(frames), (r, len(frames))
        played = irrlicht.play(xpath, timeline)
        assert not [w for w in played.warnings if "Duplicated vertex" in w], played.warnings
        want = np.stack([take(np.split(back.points(p), counts), mesh, vertex)
                         for p in ev.evaluate(src, clip, frames, fps)])
        err, f, v = worst(played.positions, want, size)
        print(f"{xpath.name} {r['name']} (frames {r['start']}-{r['end']}): worst {err:.3g} of the model size at "
              f"timeline frame {timeline[f]:g}, Irrlicht vertex {v}")
        out[r["name"]] = err
    return out


def test_rite_humanoid_exported_for_irrlicht_plays_there_as_the_runtime(irrlicht, tmp_path):
    """The RiTE humanoid (walk, wave) converted with the IRRLICHT target:
    both clips end to end on one timeline, and at every frame of each range
    Irrlicht shows what the RiTE Animator plays (before: 0.31-0.39 of the
    model size off, the wave inside the walk, 144 vertices frozen)."""
    out = tmp_path / "humanoid.x"
    w = Warnings()
    written = convert([str(p) for p in RITE], str(out), write_options={"target": "IRRLICHT"}, warnings=w)
    assert written == [str(out), str(tmp_path / "humanoid.ranges.json"), str(tmp_path / "humanoid.ranges.lua")]
    assert list(w) == []
    assert w.results == ["frame ranges at 24 fps: walk 0-33, wave 35-76"]
    assert out.read_bytes()[:16] == b"xof 0303txt 0032"
    xf = read_xfile(out)
    assert xf.anim_ticks_per_second == 24 and len(xf.animation_sets) == 1
    for a in xf.animation_sets[0].animations:      # rotation and position keys on every frame of both clips
        kinds = {k.key_type: k for k in a.keys}
        assert set(kinds) >= {0, 2}, a.frame_name
        assert np.array_equal(kinds[2].times, np.r_[0:34, 35:77]), a.frame_name
    src = by_id("rite").read_scene([str(p) for p in RITE], warnings=[])
    errs = _in_irrlicht(irrlicht, out, src, default_axes().inverse())
    assert sorted(errs) == ["walk", "wave"] and max(errs.values()) <= BOUND, errs
    lua = read_ranges(tmp_path / "humanoid.ranges.lua")
    assert [(c.name, c.start, c.end) for c in lua.clips] == [("walk", 0, 33), ("wave", 35, 76)] and lua.fps == 24


ANIMATED = [DATA / "x" / "real" / "blitz-research__blitz3d" / "pistol.x", DATA / "x" / "assimp" / "BCN_Epileptic.X",
            SAMPLES / "x" / "tiny_4anim.x", DATA / "x" / "assimp" / "Testwuson.X",
            DATA / "x" / "real" / "PilzAdam__mobs" / "mobs_stone_monster.x", EXTRAANIM, CHARACTER]


@pytest.mark.parametrize("path", ANIMATED, ids=lambda p: p.name)
def test_real_animated_files_exported_for_irrlicht_play_there_as_direct3d_plays_them(irrlicht, tmp_path, path):
    """Every animated real file of the corpus (several skinned meshes bound
    to one bone, matrix keys, 4800-tick sets, scale keys, 17 rigid meshes)
    written with the IRRLICHT target: at every frame of every range
    Irrlicht shows what the core plays of the original (Direct3D's reading)."""
    out = tmp_path / path.name
    convert([str(path)], str(out), write_options={"target": "IRRLICHT"}, warnings=Warnings())
    src = by_id("xfile").read_scene([str(path)], warnings=Warnings())
    errs = _in_irrlicht(irrlicht, out, src, src.source.axes.inverse())     # the writer writes the file's axes back
    assert max(errs.values()) <= BOUND, errs


def test_a_compressed_storage_is_written_plain_for_irrlicht(irrlicht, tmp_path):
    out = tmp_path / "humanoid.x"
    w = Warnings()
    convert([str(p) for p in RITE[:2]], str(out), write_options={"target": "IRRLICHT",
                                                                  "storage": "binary_compressed"}, warnings=w)
    assert list(w) == ["Irrlicht reads no compressed .X file: written as binary (Storage)"]
    assert out.read_bytes()[:16] == b"xof 0303bin 0032"
    assert irrlicht.play(out, [0.0]).frame_count == 33


def _character_with_ranges(w=None):
    return by_id("xfile").read_scene([str(CHARACTER)], warnings=w if w is not None else Warnings(),
                                     ranges=str(PLAYER_API))


def test_character_x_with_player_api_ranges_imports_as_six_named_clips():
    w = Warnings()
    scene = _character_with_ranges(w)
    got = {c.name: (c.start, c.end) for c in scene.clips}
    assert got == PLAYER_RANGES
    assert all(c.ticks_per_second is None for c in scene.clips)        # frame-numbered: one tick per frame
    assert list(w) == [w_ for w_ in w if "texture" in w_]               # nothing about the ranges
    assert len(w.results) == 1 and w.results[0].startswith(
        "frame ranges from player_api_init.lua: animations table (6 ranges: stand, lay, walk, mine, walk_mine, sit)")
    whole = by_id("xfile").read_scene([str(CHARACTER)], warnings=Warnings())
    # each clip plays what the file's skeleton animation plays on its frames (the other set animates the
    # frame of the skinned mesh, which moves nothing shown)
    assert whole.clips[0].name == "ArmatureAction"
    for c in scene.clips:
        frames = np.arange(c.start, c.end + 1)
        want = ev.evaluate(whole, whole.clips[0], frames, FPS)
        got_ = ev.evaluate(scene, c, frames, FPS)
        assert max(np.abs(a - b).max() for a, b in zip(got_, want)) <= 1e-6 * ev.size(whole), c.name


def test_character_x_reexported_for_irrlicht_plays_the_original_frame_for_frame(irrlicht, tmp_path):
    """character.x cut at player_api's ranges and written with the IRRLICHT
    target: the same ranges at the same frame numbers, and at each of their
    frames Irrlicht shows what it shows of the original file. Read back
    (its .ranges.json beside it) and written again: the same timeline."""
    out = tmp_path / "character.x"
    w = Warnings()
    convert([str(CHARACTER)], str(out), read_options={"ranges": str(PLAYER_API)},
            write_options={"target": "IRRLICHT"}, warnings=w)
    fps, clips = ranges_of(out)
    assert fps == 30.0                  # player_api's animation_speed, the game's speed, kept
    assert {c["name"]: (c["start"], c["end"]) for c in clips} == PLAYER_RANGES
    frames = np.concatenate([np.arange(c["start"], c["end"] + 1) for c in clips]).astype(np.float64)
    original, written = irrlicht.play(CHARACTER, frames), irrlicht.play(out, frames)
    o_order, w_order = irrlicht.irrlicht_vertex_order(CHARACTER, original), irrlicht.irrlicht_vertex_order(out,
                                                                                                         written)
    index = {(int(m), int(v)): i for i, (m, v) in enumerate(zip(o_order.reader_mesh, o_order.vertex))}
    mesh, vertex = source_vertices(w_order)
    pick = np.array([index[(int(m), int(v))] for m, v in zip(mesh, vertex)])
    err, f, v = worst(written.positions, original.positions[:, pick], irrlicht.size(original.static))
    print(f"character.x -> IRRLICHT: {len(frames)} frames of 6 ranges, worst {err:.3g} of the model size at "
          f"frame {frames[f]:g}")
    assert err <= BOUND
    again = tmp_path / "again" / "character.x"
    again.parent.mkdir()
    w2 = Warnings()
    convert([str(out)], str(again), write_options={"target": "IRRLICHT"}, warnings=w2)
    assert any("character.ranges.json" in r for r in w2.results)
    assert ranges_of(again) == ranges_of(out)
    a, b = read_xfile(out).animation_sets[0], read_xfile(again).animation_sets[0]
    assert [(x.frame_name, [k.times.tolist() for k in x.keys]) for x in a.animations] == \
        [(x.frame_name, [k.times.tolist() for k in x.keys]) for x in b.animations]


def test_darkbasic_target_writes_a_timeline_as_its_character_files(tmp_path):
    """The RiTE humanoid for DarkBASIC / FPS Creator: one AnimationSet
    ``Anim-1``, an ``Anim-<frame>`` Animation per animated frame with
    AnimationOptions {0; 0}, matrix keys on every frame from 0, no
    AnimTicksPerSecond, the skinning templates declared (its reader knows
    only the basic ones), in every storage; each frame plays the runtime's
    pose."""
    src = by_id("rite").read_scene([str(p) for p in RITE], warnings=[])
    size = ev.size(src)
    for storage in ("text", "binary_compressed"):
        out = tmp_path / storage / "humanoid.x"
        out.parent.mkdir()
        w = Warnings()
        written = convert([str(p) for p in RITE], str(out), write_options={"target": "DARKBASIC",
                                                                            "storage": storage}, warnings=w)
        assert written == [str(out), str(out.with_name("humanoid.ranges.json"))] and list(w) == []
        data = out.read_bytes()
        if storage == "text":
            text = data.decode("ascii")
            for t in ("XSkinMeshHeader", "SkinWeights", "VertexDuplicationIndices"):
                assert f"template {t} {{" in text
            assert "AnimTicksPerSecond" not in text
        xf = read_xfile(out)
        assert xf.anim_ticks_per_second is None and [s.name for s in xf.animation_sets] == ["Anim-1"]
        for a in xf.animation_sets[0].animations:
            assert a.name == f"Anim-{a.frame_name}" and (a.open_closed, a.position_quality) == (0, 0)
            assert [k.key_type for k in a.keys] == [4]
            assert np.array_equal(a.keys[0].times, np.r_[0:34, 35:77])
        got = by_id("xfile").read_scene([str(out)], warnings=Warnings(), time_base="FRAMES")
        assert [c.name for c in got.clips] == ["walk", "wave"]          # its .ranges.json beside it
        for c in src.clips:
            frames, _ = c.bake_frames(FPS)
            g = next(k for k in got.clips if k.name == c.name)
            times = np.arange(g.start, g.end + 1)
            dup = split_vertices(xf)[0]
            for a, b in zip(ev.evaluate(src, c, frames, FPS), ev.evaluate(got, g, times, FPS)):
                assert np.abs(a[dup] - b).max() <= 1e-5 * size, (storage, c.name)


def test_darkbasic_keeps_a_dark_basic_timeline_frame_for_frame(tmp_path):
    """extraanim.X, DarkBASIC Pro's own example ninja (one frame-numbered
    timeline, sparse keys 0..25, a scale key), re-exported with DARKBASIC:
    keys on every frame 0..25, and every frame the pose of the original."""
    out = tmp_path / "ninja.x"
    convert([str(EXTRAANIM)], str(out), write_options={"target": "DARKBASIC"}, warnings=Warnings())
    xf = read_xfile(out)
    assert len(xf.animation_sets) == 1
    assert {tuple(k.times.tolist()) for a in xf.animation_sets[0].animations for k in a.keys} == \
        {tuple(range(26))}
    src = by_id("xfile").read_scene([str(EXTRAANIM)], warnings=Warnings())
    got = by_id("xfile").read_scene([str(out)], warnings=Warnings())
    frames = np.arange(26.0)
    size = ev.size(src)
    # the written meshes (split by normals: one normal per vertex) back onto the source's, by name
    by_name = {m.name: i for i, m in enumerate(src.meshes)}
    dups = split_vertices(xf)
    mesh = np.concatenate([np.full(len(d), by_name[m.name]) for d, m in zip(dups, got.meshes)])
    vertex = np.concatenate(dups)
    counts = np.cumsum([len(m.positions) for m in src.meshes])[:-1]
    pairs = list(zip(ev.evaluate(src, src.clips, frames, FPS), ev.evaluate(got, got.clips, frames, FPS)))
    err = max(float(np.abs(take(np.split(a, counts), mesh, vertex) - b).max()) for a, b in pairs) / size
    print(f"extraanim.X -> DARKBASIC: 26 frames, worst {err:.3g} of the model size")
    assert err <= 1e-5


# ---------------------------------------------------------------------------
# the timeline's layout and cut, on their own

def _clip(name, start, end, extras=None):
    from legacy_skin_io.core import sampling
    from legacy_skin_io.scene import Clip

    t = np.array([float(start), float(end)])
    rot = sampling.Channels.from_tracks([0], [t], [np.array([[0, 0, 0, 1.0], [0, 0, np.sin(0.5), np.cos(0.5)]])], 4)
    return Clip(name, rot, sampling.Channels.empty(3), sampling.Channels.empty(3), np.array([True]),
                start=float(start), end=float(end), extras=extras or {})


def test_layout_keeps_a_timeline_and_puts_other_clips_after_it():
    cut = [_clip("walk", 168, 187, {TIMELINE: {"start": 168, "end": 187}}),
           _clip("stand", 0, 79, {TIMELINE: {"start": 0, "end": 79}})]
    made = [_clip("dance", 1, 10), _clip("dance", 1, 5)]
    w: list[str] = []
    got = [(p.name, p.start, p.end) for p in layout(cut + made, FPS, w)]
    assert got == [("stand", 0, 79), ("walk", 168, 187), ("dance", 189, 198), ("dance.002", 200, 204)]
    assert w == []
    clash = _clip("sit", 70, 90, {TIMELINE: {"start": 70, "end": 90}})
    got = [(p.name, p.start, p.end) for p in layout([cut[1], clash], FPS, w)]
    assert got == [("stand", 0, 79), ("sit", 81, 101)] and "sit: frames 70..90 overlap" in w[0]
    assert [(p.name, p.start, p.end) for p in layout([_clip("a", 5, 9), _clip("b", 0, 3)], FPS)] == \
        [("a", 0, 4), ("b", 6, 9)]


def test_split_cuts_a_timeline_where_the_ranges_say_and_reports_the_rest():
    tl = _clip("timeline", 0, 100)
    w: list[str] = []
    clips = split(tl, [Range("a", 10, 20), Range("b", 15, 30), Range("far", 90, 120)], w)
    assert [(c.name, c.start, c.end) for c in clips] == [("a", 10, 20), ("b", 15, 30)]
    assert w[0].startswith("1 frame range(s) outside the timeline (0..100) of 'timeline', skipped: far 90-120")
    assert w[1] == "overlapping frame ranges (each becomes its own clip): a and b"
    q = np.array([12.0, 17.5, 20.0])
    assert np.allclose(clips[0].rotation.sample(q, "slerp"), tl.rotation.sample(q, "slerp"))
    with pytest.raises(Exception, match="no frame range inside the timeline"):
        split(tl, [Range("late", 200, 210)])


def test_ranges_that_cannot_be_used_cost_a_warning_not_the_timeline(tmp_path):
    fmt = by_id("xfile")
    cases = {"missing.lua": None, "empty.json": '{"fps": 30, "clips": []}',
             "late.json": '{"fps": 30, "clips": [{"name": "x", "start": 500, "end": 600}]}'}
    for name, text in cases.items():
        p = tmp_path / name
        if text is not None:
            p.write_text(text)
        w = Warnings()
        scene = fmt.read_scene([str(CHARACTER)], warnings=w, ranges=str(p))
        assert [c.name for c in scene.clips] == ["ArmatureAction", "Default_Action"], name
        line = next(x for x in w if name in x)
        assert "imported whole" in line, line


# ---------------------------------------------------------------------------
# every target: Max Influences, Triangulate Faces

def test_max_influences_keeps_each_vertexs_strongest_weights(tmp_path):
    """The humanoid (up to 4 bones per vertex) written with Max
    Influences 2: the vertices with more lose their weakest, the rest add
    up to what they did, one line counts them."""
    src = by_id("rite").read_scene([str(RITE[0])], warnings=[])
    sk = src.meshes[0].skin
    per = np.bincount(sk.vertex, minlength=len(src.meshes[0].positions))
    out = tmp_path / "h.x"
    w = Warnings()
    convert([str(RITE[0])], str(out), write_options={"max_influences": 2}, warnings=w)
    assert list(w) == [f"Max Influences 2: {int((per > 2).sum())} vertices kept their 2 strongest bone weights, "
                       f"renormalised ('Male' {int((per > 2).sum())})"]
    m = read_xfile(out).frames[-1].meshes[0]
    dup = m.duplicates
    vert = np.concatenate([s.vertex_indices for s in m.skin_weights])
    weight = np.concatenate([s.weights for s in m.skin_weights])
    joint = np.concatenate([[s.frame_name] * len(s.weights) for s in m.skin_weights])
    assert np.bincount(vert, minlength=len(dup)).max() == 2
    src_total = np.bincount(sk.vertex, weights=sk.weight, minlength=len(per))
    total = np.bincount(vert, weights=weight, minlength=len(dup))      # each file vertex, its source's sum
    assert np.allclose(total, src_total[dup], atol=1e-6)
    names = src.skeleton.names
    for v in np.flatnonzero(per > 2)[:50].tolist():         # the two strongest, scaled to the old sum
        own = sorted(zip(sk.weight[sk.vertex == v], sk.joint[sk.vertex == v]), reverse=True)[:2]
        k = np.flatnonzero(vert == v)
        got = sorted(zip(weight[k], joint[k]), reverse=True)
        scale = src_total[v] / sum(x for x, _ in own)
        assert [names[j] for _, j in own] == [j for _, j in got]
        assert np.allclose([x * scale for x, _ in own], [x for x, _ in got], atol=1e-6)


def test_triangulate_keeps_every_face_its_area_and_its_side(irrlicht, tmp_path):
    """character.x's quads written as triangles: twice the faces, each
    quad's two triangles covering it with its winding, and Irrlicht plays
    the same vertices as before."""
    out = tmp_path / "c.x"
    convert([str(CHARACTER)], str(out), write_options={"triangulate": True}, warnings=Warnings())
    a = next(m for f in read_xfile(CHARACTER).all_frames() for m in f.meshes)
    b = next(m for f in read_xfile(out).all_frames() for m in f.meshes)
    assert set(a.face_sizes.tolist()) == {4} and set(b.face_sizes.tolist()) == {3}
    assert len(b.face_sizes) == 2 * len(a.face_sizes)
    from legacy_skin_io.core.faces import face_normals

    na = face_normals(a.positions, a.face_sizes, a.face_indices)
    nb = face_normals(b.positions, b.face_sizes, b.face_indices).reshape(-1, 2, 3).sum(axis=1)
    assert np.allclose(na, nb, atol=1e-5 * np.abs(na).max())      # the same vector area, face by face
    frames = np.arange(0.0, 221.0, 20.0)
    pa, pb = irrlicht.play(CHARACTER, frames), irrlicht.play(out, frames)
    assert np.allclose(np.sort(pa.positions.reshape(len(frames), -1), axis=1),
                       np.sort(pb.positions.reshape(len(frames), -1), axis=1), atol=1e-5)


def test_triangulation_of_concave_and_convex_faces():
    from legacy_skin_io.core.faces import face_normals, triangulate

    # an L (concave hexagon), a convex pentagon, a quad whose shorter diagonal is 1-3, a triangle
    pts = np.array([[0, 0, 0], [2, 0, 0], [2, 1, 0], [1, 1, 0], [1, 2, 0], [0, 2, 0],
                    [3, 0, 0], [4, 0, 0], [4.5, 1, 0], [3.5, 2, 0], [2.5, 1, 0],
                    [5, 0, 0], [8, 1, 0], [5, 2, 0], [4.8, 1, 0]], dtype=float)
    sizes = np.array([6, 5, 4, 3])
    corners = np.concatenate([np.arange(6), np.arange(6, 11), np.arange(11, 15), [0, 1, 5]])
    pick, face = triangulate(pts, sizes, corners)
    tri = corners[pick].reshape(-1, 3)
    assert face.tolist() == [0] * 4 + [1] * 3 + [2] * 2 + [3]
    n = face_normals(pts, np.full(len(tri), 3), tri.reshape(-1))
    assert (n[:, 2] > 0).all()                                   # every triangle keeps its face's side
    whole = face_normals(pts, sizes, corners)[:, 2]
    assert np.allclose(np.bincount(face, weights=n[:, 2]), whole)     # and the face's area, no more
    assert sorted(map(sorted, tri[7:9].tolist())) == [[11, 12, 13], [11, 13, 14]]   # quad: the shorter diagonal


def test_limit_influences_on_its_own():
    from legacy_skin_io.core.skinning import limit_influences

    v = np.array([0, 0, 0, 1, 1, 2, 0])
    j = np.array([0, 1, 2, 0, 1, 3, 0])
    w = np.array([0.2, 0.5, 0.1, 0.6, 0.4, 1.0, 0.2])          # vertex 0 names joint 0 twice: 0.4 in all
    nv, nj, nw, lost = limit_influences(v, j, w, 2)
    got = sorted(zip(nv.tolist(), nj.tolist(), np.round(nw, 9).tolist()))
    assert got == [(0, 0, round(0.4 / 0.9, 9)), (0, 1, round(0.5 / 0.9, 9)), (1, 0, 0.6), (1, 1, 0.4), (2, 3, 1.0)]
    assert lost.tolist() == [0]
    assert limit_influences(v, j, w, 0)[3].size == 0


# ---------------------------------------------------------------------------
# the command line

def test_convert_and_verify_take_a_target_and_ranges_on_the_command_line(tmp_path):
    from conftest import run_cli

    out = tmp_path / "character.x"
    r = run_cli("convert", CHARACTER, "-o", out, "--target", "irrlicht", "--ranges", PLAYER_API)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[:3] == [f"wrote {out}", f"wrote {tmp_path / 'character.ranges.json'}",
                         f"wrote {tmp_path / 'character.ranges.lua'}"]
    assert "frame ranges at 30 fps: stand 0-79, sit 81-160, lay 162-166, walk 168-187, mine 189-198, " \
           "walk_mine 200-219" in lines
    assert any(x.startswith("frame ranges from player_api_init.lua: animations table (6 ranges") for x in lines)
    r = run_cli("convert", CHARACTER, "-o", tmp_path / "b.x", "--target", "unreal")
    assert r.returncode == 2 and r.stderr.strip().splitlines()[-1].startswith("error: --target: 'unreal' is not one of")
    r = run_cli("verify", out)          # its .ranges.json beside it: the six ranges, each verified
    assert r.returncode == 0, r.stderr + r.stdout
    checked = [x.split(":")[0] for x in r.stdout.splitlines() if x.startswith("'")]
    assert checked == ["'stand'", "'sit'", "'lay'", "'walk'", "'mine'", "'walk_mine'"]
    assert r.stdout.splitlines()[-1].startswith("PASS")


def test_assimp_plays_the_game_targets_alike(tmp_path):
    """assimp (a reader we did not write) reads the DarkBASIC file in text
    and compressed binary (the templates declared in both encodings) and
    the Irrlicht file: one animation, a channel per animated bone, and at
    every frame of the timeline the same skinned points from matrix keys
    (DarkBASIC) as from rotation and position keys (Irrlicht)."""
    import assimp_reading as ar

    files = {}
    for target, storage in (("DARKBASIC", "text"), ("DARKBASIC", "binary_compressed"), ("IRRLICHT", "binary")):
        out = tmp_path / f"{target}_{storage}" / "humanoid.x"
        out.parent.mkdir()
        convert([str(p) for p in RITE], str(out), write_options={"target": target, "storage": storage},
                warnings=Warnings())
        files[(target, storage)] = ar.assimp_scene(out, tmp_path)
    animated = {a.frame_name for a in read_xfile(tmp_path / "IRRLICHT_binary" / "humanoid.x").animation_sets[0]
                .animations}
    for key, scene in files.items():
        assert len(scene.animations) == 1 and set(scene.animations[0].channels) == animated, key
    ref = files[("IRRLICHT", "binary")]
    size = ar.size(ref.points())
    worst = 0.0
    for tick in range(0, 77, 3):
        want = np.concatenate(ref.points(ref.animations[0], float(tick)))
        for scene in files.values():
            got = np.concatenate(scene.points(scene.animations[0], float(tick)))
            worst = max(worst, float(np.abs(got - want).max()) / size)
    print(f"assimp: DarkBASIC (text, compressed binary) against Irrlicht, frames 0-76: {worst:.3g} of the model size")
    assert worst <= 1e-5


def test_a_frame_that_only_holds_a_skinned_mesh_is_no_rite_joint(tmp_path):
    """RiTE -> .X puts the skinned mesh in a frame of its own (Panda3D skips
    a top-level mesh); .X -> RiTE leaves such frames out (RiTE has no mesh
    frames): the round trip keeps the humanoid's 26 joints, as character.x's
    'Player' frame (animated, moving nothing shown) is no joint either."""
    from legacy_skin_io.io.rite.ram_reader import read_ram
    from legacy_skin_io.scene.holders import mesh_holders

    x = tmp_path / "h.x"
    convert([str(p) for p in RITE[:2]], str(x), warnings=Warnings())
    scene = by_id("xfile").read_scene([str(x)], warnings=Warnings())
    assert [scene.skeleton.names[j] for j in np.flatnonzero(mesh_holders(scene))] == ["Male"]
    convert([str(x)], str(tmp_path / "h.ram"), warnings=Warnings())
    assert [j.name for j in read_ram(tmp_path / "h.ram").joints] == [j.name for j in read_ram(RITE[0]).joints]
    character = by_id("xfile").read_scene([str(CHARACTER)], warnings=Warnings())
    assert [character.skeleton.names[j] for j in np.flatnonzero(mesh_holders(character))] == ["Player"]
    convert([str(CHARACTER)], str(tmp_path / "c.ram"), warnings=Warnings(), )
    assert "Player" not in [j.name for j in read_ram(tmp_path / "c.ram").joints]


def test_meshes_bound_otherwise_are_moved_onto_irrlichts_one_bind_per_bone(irrlicht, tmp_path):
    """Irrlicht keeps one offset per bone for all meshes. A second copy of
    the humanoid whose head was bound elsewhere (its offset for Head moved
    by 2% of the model): the vertices only the head moves are re-expressed
    and play exactly; those the head shares with another bone cannot, and
    one line counts them."""
    from dataclasses import replace as dc_replace

    src = by_id("rite").read_scene([str(p) for p in RITE[:2]], warnings=[])
    m = src.meshes[0]
    head = src.skeleton.names.index("Head")
    k = int(np.flatnonzero(m.skin.joints == head)[0])
    ib = m.skin.inverse_bind.copy()
    shift = np.eye(4)
    shift[:3, 3] = [0.0, 0.02 * ev.size(src), 0.0]
    ib[k] = ib[k] @ shift
    copy = dc_replace(m, name="Copy", skin=dc_replace(m.skin, inverse_bind=ib))
    scene = dc_replace(src, meshes=[m, copy])
    out = tmp_path / "two.x"
    w = Warnings()
    by_id("xfile").write_scene(scene, str(out), warnings=w, target="IRRLICHT")
    on_head = np.isin(np.arange(len(m.positions)), m.skin.vertex[m.skin.joint == head])
    shared = on_head & (np.bincount(m.skin.vertex, minlength=len(m.positions)) > 1)
    assert [x for x in w if "one bind per bone" in x] == [
        f"Irrlicht keeps one bind per bone: {int(shared.sum())} vertices of meshes bound differently cannot "
        f"follow their bones exactly ('Copy' {int(shared.sum())})"]
    back = default_axes().inverse()
    order = irrlicht.irrlicht_vertex_order(out)
    mesh, vertex = source_vertices(order)
    fps, clips = ranges_of(out)
    clip = src.clips[0]
    frames, _ = clip.bake_frames(fps)
    played = irrlicht.play(out, np.arange(clips[0]["start"], clips[0]["end"] + 1, dtype=np.float64))
    n = len(m.positions)
    want = np.stack([take([back.points(q[:n]), back.points(q[n:])], mesh, vertex)
                     for q in ev.evaluate(scene, clip, frames, fps)])
    err = np.linalg.norm(played.positions - want, axis=-1) / ev.size(src)
    exact = ~((mesh == 1) & shared[vertex])
    print(f"two meshes, one bound otherwise: {int(on_head.sum())} head vertices, {int(shared.sum())} shared; worst "
          f"{err[:, exact].max():.3g} of the model size elsewhere, {err[:, ~exact].max():.3g} on the shared ones")
    assert err[:, exact].max() <= BOUND and on_head.sum() > shared.sum() > 0


def test_irrlicht_target_writes_scale_keys_only_where_a_bone_scales(tmp_path):
    """The RiTE humanoid (rotations only: no bone scales) written with the
    IRRLICHT target holds rotation and position keys for every animated
    frame and no scale key, as the Key Type option's description says (it
    once said the target always writes scale keys)."""
    out = tmp_path / "humanoid.x"
    convert([str(p) for p in RITE], str(out), write_options={"target": "IRRLICHT"}, warnings=Warnings())
    (aset,) = read_xfile(out).animation_sets
    kinds = [{k.key_type for k in a.keys} for a in aset.animations]
    assert kinds and all({0, 2} <= k for k in kinds), kinds
    assert not any(1 in k for k in kinds), kinds
    spec = next(o for o in by_id("xfile").export_options if o.id == "key_type")
    assert "scale keys where a bone scales" in spec.description
