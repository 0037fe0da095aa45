# SPDX-License-Identifier: GPL-3.0-or-later
"""Ranges files: what real Minetest/Luanti mod files name (tests/data/ranges,
each asserted from a reading of the file), the JSON form's strictness, the
Lua reader's rules, round trips of both writers, and hostile input."""
from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from conftest import DATA

from legacy_skin_io.io import ranges as rg
from legacy_skin_io.io.errors import FormatError, Warnings
from legacy_skin_io.io.lua_tokens import tokens
from legacy_skin_io.io.ranges import ClipRange, RangeFile, ranges_json, ranges_lua, ranges_path, read_ranges

REAL = DATA / "ranges"
C = ClipRange

#: the ranges of minetest_game's character.x, in the order its Lua files name them
CHARACTER = [C("stand", 0, 79), C("lay", 162, 166), C("walk", 168, 187), C("mine", 189, 198),
             C("walk_mine", 200, 219), C("sit", 81, 160)]


def read(path, **kw) -> tuple[RangeFile, Warnings]:
    w = Warnings()
    return read_ranges(path, warnings=w, **kw), w


def write(tmp_path, name: str, text: str | bytes) -> Path:
    p = tmp_path / name
    if isinstance(text, str):
        p.write_text(text, encoding="utf-8")
    else:
        p.write_bytes(text)
    return p


def fails(path, *parts, line=None) -> FormatError:
    with pytest.raises(FormatError) as info:
        read_ranges(path, warnings=Warnings())
    err = info.value
    for part in parts:
        assert part in str(err), str(err)
    assert Path(err.path).name == Path(path).name
    if line is not None:
        assert err.line == line, str(err)
    return err


# real files

def test_minetest_game_2015_registers_character_x():
    r, w = read(REAL / "minetest__minetest_game/default_player.lua")
    assert r.clips == CHARACTER
    assert r.fps == 30.0
    assert r.found == ["animations table (6 ranges: stand, lay, walk, mine, walk_mine, sit)",
                       "animation_speed = 30 (line 19)"]
    assert list(w) == [] and w.notes == []


def test_player_api_today_ranges_with_more_fields():
    r, w = read(REAL / "minetest__minetest_game/player_api_init.lua")
    assert r.clips == CHARACTER
    assert r.fps == 30.0
    assert r.found == ["animations table (6 ranges: stand, lay, walk, mine, walk_mine, sit)",
                       "animation_speed = 30 (line 5)"]
    assert list(w) == []


def test_minetest_game_2013_upper_case_fields_and_calls_with_variables():
    r, w = read(REAL / "minetest__minetest_game/default_player_2013.lua")
    assert r.clips == [C("stand", 0, 79), C("sit", 81, 160), C("lay", 162, 166), C("walk", 168, 187),
                       C("mine", 189, 198), C("walk_mine", 200, 219)]
    assert r.fps == 30.0
    assert r.found == ["mobs animation fields (6 ranges: stand, sit, lay, walk, mine, walk_mine)",
                       "animation_speed = 30 (line 9)"]
    assert list(w) == ["default_player_2013.lua: ranges skipped (5): "
                       + ", ".join(f"set_animation (line {n}: frames are not number literals)"
                                   for n in (106, 111, 116, 121, 125))]
    assert w.notes == ["default_player_2013.lua: tables read as engine properties, not frame ranges (1): "
                       "visual_size (line 65)"]


def test_pilzadam_mobs_seven_mobs_first_kept():
    r, w = read(REAL / "PilzAdam__mobs/init.lua")
    assert r.clips == [C("stand", 0, 14), C("walk", 15, 38), C("run", 40, 63), C("punch", 40, 63)]
    assert r.fps == 15.0
    assert r.found == ["mobs animation fields of 7 tables (4 ranges: stand, walk, run, punch)",
                       "speed_normal = 15 (line 30)"]
    assert len(w) == 1
    assert w[0].startswith("init.lua: ranges named again with other frames (the first kept) (17): "
                           "stand (line 114: 0-39; line 32: 0-14), walk (line 116: 41-72; line 34: 15-38), ")
    assert "visual_size (line 10)" in w.notes[0]


def test_pilzadam_mobs_api_names_no_range():
    w = Warnings()
    with pytest.raises(FormatError) as info:
        read_ranges(REAL / "PilzAdam__mobs/api.lua", warnings=w)
    assert str(info.value) == (
        "api.lua: names no animation range (looked for tables {x = first, y = last} assigned to a name, "
        "mobs-style NAME_start/NAME_end fields, set_animation({x = first, y = last}, speed) calls; "
        "4 skipped, the first: set_animation (line 70: frames are not number literals))")
    assert list(w) == ["api.lua: ranges skipped (4): " + ", ".join(
        f"set_animation (line {n}: frames are not number literals)" for n in (70, 82, 94, 106))]


def test_luanti_devtest_set_animation_calls():
    r, w = read(REAL / "minetest__minetest/testentities_visuals.lua")
    assert r.clips == [C("frames_0_219", 0, 219), C("frames_0_28", 0, 28)]
    assert r.fps == 30.0
    assert r.found == ["set_animation calls (2 ranges: frames_0_219, frames_0_28)",
                       "set_animation frame speed 30 (line 87)"]
    assert list(w) == ["testentities_visuals.lua: animation speeds differ: 30 (line 87) taken; also 15 (line 101)"]
    assert w.notes == ["testentities_visuals.lua: tables read as engine properties, not frame ranges (4): "
                       "visual_size (line 112), spritediv (line 114), initial_sprite_basepos (line 115), "
                       "spritediv (line 127)"]


@pytest.mark.parametrize("lua, model", [
    ("minetest__minetest_game/default_player.lua", "minetest__minetest_game/character.x"),
    ("minetest__minetest_game/default_player_2013.lua", "minetest__minetest_game/character.x"),
    ("PilzAdam__mobs/init.lua", "PilzAdam__mobs/mobs_stone_monster.x"),
])
def test_real_ranges_lie_on_their_models_timeline(lua, model):
    """The ranges a mod names for a model lie within that model's keyed
    frames (both files real, of the same commit where the table says so)."""
    from legacy_skin_io.io.xfile import read_xfile

    xf = read_xfile(DATA / "x/real" / model)
    last = max(float(k.times.max()) for s in xf.animation_sets for a in s.animations for k in a.keys)
    clips = read_ranges(REAL / lua, warnings=Warnings()).clips
    assert clips and all(0 <= c.start <= c.end <= last for c in clips)


def test_every_real_file_is_documented():
    text = (REAL / "PROVENANCE.md").read_text(encoding="utf-8")
    files = sorted(p.relative_to(REAL).as_posix() for p in REAL.glob("*/*.lua"))
    assert len(files) == 6
    for f in files:
        assert f"`{f}`" in text
    for folder in {p.parent for p in REAL.glob("*/*.lua")}:
        assert (folder / "LICENSE.source.txt").stat().st_size > 500


# the Lua reader's rules

def lua(tmp_path, text: str, name: str = "mod.lua"):
    return read(write(tmp_path, name, text))


def test_lua_forms_and_order(tmp_path):
    r, w = lua(tmp_path, """
local anim_walk = {x = 168, y = 187}
local def = {
    animations = {
        ["walk mine"] = {x=1,y=2},   -- a key that is not a name
        lay = {x = 162, y = 166, eye_height = 0.3, collisionbox = {-0.6, 0.0, -0.6, 0.6, 0.3, 0.6}},
        hex = {x = 0x10, y = 0x20}, float = {x = 79.0, y = 8e1},
    },
}
mobs:register_mob("m:m", {animation = {speed_normal = 15, stand_start = 0, stand_end = 14, walk_end = 38,
                                       walk_start = 15}})
obj.object:set_animation({x = 300, y = 310}, 24, 0)
obj.object.set_animation({y = 320, x = 311}, 2.5)
""")
    assert r.clips == [C("anim_walk", 168, 187), C("walk mine", 1, 2), C("lay", 162, 166), C("hex", 16, 32),
                       C("float", 79, 80), C("stand", 0, 14), C("walk", 15, 38), C("frames_300_310", 300, 310),
                       C("frames_311_320", 311, 320)]
    assert r.fps == 15.0
    assert r.found == ["x/y tables assigned to names (1 range: anim_walk)",
                       "animations table (4 ranges: walk mine, lay, hex, float)",
                       "mobs animation fields (2 ranges: stand, walk)",
                       "set_animation calls (2 ranges: frames_300_310, frames_311_320)",
                       "speed_normal = 15 (line 10)"]
    assert list(w) == ["mod.lua: animation speeds differ: 15 (line 10) taken; also 24 (line 12), 2.5 (line 13)"]


def test_lua_comments_and_strings_hide_ranges(tmp_path):
    r, w = lua(tmp_path, """
-- stand = {x = 1, y = 2}
--[[ walk = {x = 3, y = 4}
]] --[==[ run = {x = 5, y = 6} ]] still comment ]==]
local s = "jump = {x = 7, y = 8}" .. 'fly = {x = 9, y = 10}' .. [[swim = {x = 11, y = 12}]]
local t = [=[ sit = {x = 13, y = 14} ]] ]=] ; local esc = "\\"; dig = {x = 15, y = 16} --"
real = {x = 17, y = 18}
""")
    assert r.clips == [C("real", 17, 18)]
    assert r.fps is None and r.found == ["x/y tables assigned to names (1 range: real)"]


def test_lua_function_bodies_do_not_leak_fields(tmp_path):
    """Statements inside a function that is a table's value (``local a, y =
    1, 2``) are not fields of that table; tables assigned there still count."""
    r, w = lua(tmp_path, """
minetest.register_entity("m:e", {
    x = 1,
    on_step = function(self)
        local a, y = 1, 2
        for i, v in pairs(self) do if v then local stand = {x = 0, y = 10} end end
        repeat local b, y = 3, 4 until true
    end,
    visual_size = {x = 1, y = 1},
})
""")
    assert r.clips == [C("stand", 0, 10)]
    assert list(w) == []


def test_lua_skipped_ranges_warn_with_lines(tmp_path):
    r, w = lua(tmp_path, """
ok = {x = 0, y = 9}
var = {x = first, y = 9}
expr = {x = 1 + 1, y = 9}
half = {x = 0.5, y = 9}
neg = {x = -1, y = 9}
back = {x = 9, y = 1}
pos = {x = 1, y = 2, z = 3}
anim = {walk_start = 1, walk_end = 2, run_start = 3}
""")
    assert r.clips == [C("ok", 0, 9), C("walk", 1, 2)]
    assert list(w) == [
        "mod.lua: ranges skipped (5): var (line 3: frames are not number literals), expr (line 4: frames are not "
        "number literals), half (line 5: not a whole frame (0.5)), neg (line 6: negative frame (-1)), back (line 7: "
        "last frame 1 before the first 9)",
        "mod.lua: mobs animation fields without their pair, skipped (1): run_start (line 9)"]


def test_lua_same_name_twice(tmp_path):
    r, w = lua(tmp_path, "a = {x = 1, y = 2}\nb = {x = 5, y = 6}\na = {x = 1, y = 2}\na = {x = 3, y = 4}\n"
                         "o:set_animation({x = 5, y = 6}, 30)\no:set_animation({x = 7, y = 8})\n")
    assert r.clips == [C("a", 1, 2), C("b", 5, 6), C("frames_7_8", 7, 8)]
    assert list(w) == ["mod.lua: ranges named again with other frames (the first kept) (1): a (line 4: 3-4; "
                       "line 1: 1-2)"]
    assert r.fps == 30.0


def test_lua_engine_properties_inside_an_animations_table_are_ranges(tmp_path):
    r, _ = lua(tmp_path, "animations = {size = {x = 1, y = 2}}\nvisual_size = {x = 1, y = 2}\n")
    assert r.clips == [C("size", 1, 2)]


def test_lua_broken_files_read_as_far_as_they_go(tmp_path):
    """A stray ``]]`` (as minetest_game's player.lua of October 2012 has), a
    stray ``end`` and ``)``, an unfinished string, a file ending inside a
    table: read on, not an error."""
    r, w = lua(tmp_path, 'minetest.after(15.0, attachments)]]\nend ) }\nlocal s = "open\n'
                         'o:set_animation({x=1, y=50}, 35, 0)\nlast = {x = 2, y = 3, more = {')
    assert r.clips == [C("frames_1_50", 1, 50), C("last", 2, 3)]
    assert r.fps == 35.0
    assert list(w) == ["mod.lua: the file ends inside brackets or blocks never closed (read as far as it goes) "
                       "(1): { at line 5"]


def test_lua_tokens():
    toks = list(tokens('a.b["k"] = 0x1F + .5 - 1e2 .. "\\65\\x41\\u{263A}\\z\n  x" --c\n[==[\nlong]]]==] ~= ...'))
    assert [(k, v) for k, v, _ in toks] == [
        ("name", "a"), ("op", "."), ("name", "b"), ("op", "["), ("str", "k"), ("op", "]"), ("op", "="), ("num", 31),
        ("op", "+"), ("num", 0.5), ("op", "-"), ("num", 100.0), ("op", ".."), ("str", "AA\u263ax"), ("str", "long]]"),
        ("op", "~="), ("op", "...")]
    assert [line for _, _, line in toks][-3:] == [3, 4, 4]


@pytest.mark.parametrize("text, looked", [
    ("print('hello')\n", "looked for tables {x = first, y = last}"),
    ("", "names no animation range"),
    ("v = {x = a, y = b}\n", "1 skipped, the first: v (line 1: frames are not number literals)"),
])
def test_lua_naming_nothing(tmp_path, text, looked):
    fails(write(tmp_path, "m.lua", text), "names no animation range", looked)


# the JSON form

def test_json_reads(tmp_path):
    p = write(tmp_path, "walk.ranges.json",
              '{"fps": 24, "clips": [{"name": "walk", "start": 0, "end": 40.0},\n'
              '{"name": "run", "start": 41, "end": 41},\n{"name": "walk", "start": 0, "end": 40}]}')
    r, w = read(p)
    assert r == RangeFile(str(p), [C("walk", 0, 40), C("run", 41, 41)], 24.0,
                          ["ranges JSON (2 ranges: walk, run)", "fps 24"])
    assert isinstance(r.fps, float)


@pytest.mark.parametrize("text, message, line", [
    ("not json", "not JSON: Expecting value", 1),
    ('{"fps": 24,\n "clips": [}', "not JSON", 2),
    ("[1, 2]", "not a ranges file: expected a JSON object", 1),
    ('{"clips": []}', 'missing key "fps"', None),
    ('{"fps": 24}', 'missing key "clips"', None),
    ('{"fps": 0, "clips": []}', '"fps" must be a positive number, not 0', 1),
    ('{"fps": true, "clips": []}', '"fps" must be a positive number, not true', 1),
    ('{"fps": NaN, "clips": []}', '"fps" must be a positive number, not NaN', 1),
    ('{"fps": 24, "clips": {}}', '"clips" must be a list', 1),
    ('{"fps": 24,\n"clips": []}', 'names no animation range (looked for a JSON object', 2),
    ('{"fps": 24, "clips": [\n["walk", 0, 4]]}', "clip 1: expected an object", 2),
    ('{"fps": 24, "clips": [\n{"name": "a", "start": 0, "end": 1},\n{"name": "b", "end": 4}]}',
     'clip 2: missing key "start"', 3),
    ('{"fps": 24, "clips": [{"name": "", "start": 0, "end": 1}]}', "clip 1: empty name", 1),
    ('{"fps": 24, "clips": [{"name": " \\t", "start": 0, "end": 1}]}', "clip 1: empty name", 1),
    ('{"fps": 24, "clips": [{"name": 7, "start": 0, "end": 1}]}', "clip 1: the name is not a string (7)", 1),
    ('{"fps": 24, "clips": [{"name": "\\ud800", "start": 0, "end": 1}]}', "not valid Unicode", 1),
    ('{"fps": 24, "clips": [{"name": "w", "start": 0, "end": 40.5}]}', 'clip "w": "end": not a whole frame (40.5)',
     1),
    ('{"fps": 24, "clips": [{"name": "w", "start": "0", "end": 4}]}', 'clip "w": "start": not a number ("0")', 1),
    ('{"fps": 24, "clips": [{"name": "w", "start": true, "end": 4}]}', '"start": not a number (true)', 1),
    ('{"fps": 24, "clips": [{"name": "w", "start": -1, "end": 4}]}', '"start": negative frame (-1)', 1),
    ('{"fps": 24, "clips": [{"name": "w", "start": 0, "end": 1e300}]}', '"end": frame too large', 1),
    ('{"fps": 24, "clips": [{"name": "w", "start": 0, "end": Infinity}]}', '"end": not a whole frame', 1),
    ('{"fps": 24, "clips": [{"name": "w", "start": 5, "end": 4}]}', 'clip "w": "end" 4 is before "start" 5', 1),
    ('{"fps": 24, "clips": [\n{"name": "w", "start": 0, "end": 4},\n\n{"name": "w", "start": 0, "end": 5}]}',
     'clip "w" is named twice with different ranges: 0-4 (line 2) and 0-5 (line 4)', 4),
    ('{"fps": 24,\n"fps": 25, "clips": []}', '"fps" given twice', 2),
])
def test_json_errors(tmp_path, text, message, line):
    fails(write(tmp_path, "r.json", text), message, line=line)


def test_json_unknown_keys_warn(tmp_path):
    r, w = read(write(tmp_path, "r.json", '{"fps": 24, "model": "a.x", "clips": [{"name": "w", "start": 0, '
                                          '"end": 4, "loop": true}]}'))
    assert r.clips == [C("w", 0, 4)]
    assert list(w) == ["r.json: unknown keys ignored (1): model", "r.json: unknown keys of clips ignored (1): loop"]


def test_json_clips_limit(tmp_path):
    clips = [{"name": f"c{i}", "start": i, "end": i} for i in range(rg.MAX_RANGES + 1)]
    fails(write(tmp_path, "r.json", json.dumps({"fps": 24, "clips": clips})), "more than 10000 clips")


# choosing the form

def test_sniffing_other_suffixes(tmp_path):
    r, _ = read(write(tmp_path, "ranges.txt", ranges_json([C("w", 0, 4)], 30)))
    assert r.found[0].startswith("ranges JSON")
    r, _ = read(write(tmp_path, "mob.conf", "anim = {walk_start = 1, walk_end = 5}"))
    assert r.clips == [C("walk", 1, 5)] and r.found[0].startswith("mobs animation fields")
    # the JSON form sniffed is read strictly
    fails(write(tmp_path, "bad.txt", '{"fps": 24, "clips": [{"name": "w", "start": 0, "end": 4.5}]}'),
          "not a whole frame")
    fails(write(tmp_path, "other.txt", '{"frames": [1, 2]}'),
          'read as Lua (JSON, but not the ranges form (no "clips"))')
    fails(write(tmp_path, "prose.txt", "hello world"), "read as Lua (not JSON: Expecting value at line 1)")
    # a .lua file is never read as JSON, nor a .json one as Lua
    fails(write(tmp_path, "x.lua", ranges_json([C("w", 0, 4)], 30)), "names no animation range")
    fails(write(tmp_path, "x.json", "w = {x = 0, y = 4}"), "not JSON")


def test_suffix_case(tmp_path):
    r, _ = read(write(tmp_path, "R.JSON", ranges_json([C("w", 0, 4)], 30)))
    assert r.clips == [C("w", 0, 4)]
    r, _ = read(write(tmp_path, "M.LUA", "w = {x = 0, y = 4}"))
    assert r.clips == [C("w", 0, 4)]


# round trips

AWKWARD = [C("stand", 0, 79), C("walk mine", 200, 219), C("end", 1, 2), C("function", 3, 4), C('say "hi"', 5, 6),
           C("back\\slash", 7, 8), C("naïve ✓ 🎉 ходьба", 9, 10), C("x", 11, 12), C("y", 13, 14), C("2nd", 15, 15),
           C("line\nbreak\ttab\x00nul\r\x7f", 16, 17), C(" spaced ", 18, 19), C("]]--[[", 20, 21),
           C("walk_start", 22, 23), C("animation_speed", 24, 25), C("a\u2028b", 26, 27), C("_", 0, 0),
           C("frames_1_2", 1, 2), C("Z", 3, 5)]


@pytest.mark.parametrize("fps", [30.0, 24.0, 23.976, 1e-05, 0.5, 1000.0])
@pytest.mark.parametrize("form", ["json", "lua"])
def test_round_trip(tmp_path, form, fps):
    text = ranges_json(AWKWARD, fps) if form == "json" else ranges_lua(AWKWARD, fps, "character.x")
    for name in (f"r.{form}", "r.txt"):
        r, w = read(write(tmp_path, name, text))
        assert r.clips == AWKWARD
        assert r.fps == fps
        assert list(w) == []


def test_round_trip_a_clip_named_z_and_x_y(tmp_path):
    clips = [C("x", 1, 2), C("y", 3, 4), C("z", 5, 6), C("walk_end", 7, 8)]
    r, w = read(write(tmp_path, "r.lua", ranges_lua(clips, 30, "m.x")))
    assert r.clips == clips and list(w) == []


def test_lua_writer_text():
    assert ranges_lua([C("stand", 0, 79), C("walk mine", 200, 219)], 30, "/models/character.x") == (
        "-- Frame ranges of character.x (one timeline at 30 frames per second), for\n"
        "-- object:set_animation(animations.stand, animation_speed)\n"
        "local animation_speed = 30\n"
        "local animations = {\n"
        "\tstand = {x = 0, y = 79},\n"
        '\t["walk mine"] = {x = 200, y = 219},\n'
        "}\n")
    text = ranges_lua([C("end", 0, 1)], 24.5, "evil\n]]\nos.exit().x")
    assert text.splitlines()[:3] == [
        "-- Frame ranges of evil?]]?os.exit().x (one timeline at 24.5 frames per second), for",
        '-- object:set_animation(animations["end"], animation_speed)', "local animation_speed = 24.5"]


def test_json_writer_text():
    assert ranges_json([C("walk", 0, 40), C("naïve", 41, 50)], 24) == (
        '{\n  "fps": 24.0,\n  "clips": [\n    {"name": "walk", "start": 0, "end": 40},\n'
        '    {"name": "naïve", "start": 41, "end": 50}\n  ]\n}\n')


@pytest.mark.parametrize("clips, fps, message", [
    ([], 24, "no clip to write"),
    ([C("", 0, 1)], 24, "empty name"),
    ([C("w", 3, 1)], 24, "end 1 is before start 3"),
    ([C("w", 0.5, 1)], 24, "not a whole frame"),
    ([C("w", -1, 1)], 24, "negative frame"),
    ([C("w", 0, 1), C("w", 0, 2)], 24, "given twice with different ranges"),
    ([C("w", 0, 1)], 0, "fps must be a positive number"),
    ([C("w", 0, 1)], float("inf"), "fps must be a positive number"),
    ([C("w\ud800", 0, 1)], 24, "not valid Unicode"),
])
def test_writers_refuse(clips, fps, message):
    for writer in (lambda: ranges_json(clips, fps), lambda: ranges_lua(clips, fps, "m.x")):
        with pytest.raises(FormatError, match=message):
            writer()


def test_writers_keep_one_of_a_repeated_clip():
    assert ranges_json([C("w", 0, 1), C("w", 0, 1)], 24) == ranges_json([C("w", 0, 1)], 24)


def test_ranges_path():
    assert ranges_path("walk.x") == Path("walk.ranges.json")
    assert ranges_path("/a/b/Hero.RAM") == Path("/a/b/Hero.ranges.json")
    assert ranges_path("/a/b/hero.x", ".lua") == Path("/a/b/hero.ranges.lua")


def test_write_ranges(tmp_path):
    model = tmp_path / "character.x"
    clips = [C("stand", 0, 79), C("walk", 168, 187)]
    written = rg.write_ranges(model, clips, 30, lua=True)
    assert written == [str(tmp_path / "character.ranges.json"), str(tmp_path / "character.ranges.lua")]
    for p in written:
        r, _ = read(p)
        assert r.clips == clips and r.fps == 30.0
    assert not list(tmp_path.glob(".*"))                    # no temporary file left
    with pytest.raises(FormatError, match="character.ranges.json: no clip to write"):
        rg.write_ranges(model, [], 30)


def test_write_ranges_in_a_batch(tmp_path):
    from legacy_skin_io.io.atomic import Batch

    batch = Batch()
    written = rg.write_ranges(tmp_path / "m.x", [C("a", 0, 1)], 24, batch=batch)
    assert not Path(written[0]).exists()                    # only when the batch commits
    batch.commit()
    assert read(written[0])[0].clips == [C("a", 0, 1)]


# hostile and odd files

def test_files_that_are_not_ranges_files(tmp_path):
    fails(tmp_path / "missing.lua", "no such file")
    fails(tmp_path, "cannot read a folder")
    fails(write(tmp_path, "bin.lua", b"w = {x = 0, y = 4}\0"), "binary data")
    fails(write(tmp_path, "big.lua", b"-" * (rg.MAX_BYTES + 1)), "file too large")
    fails(write(tmp_path, "latin.json", b'{"fps": 24, "clips": [{"name": "\xe9", "start": 0, "end": 1}]}'),
          "not UTF-8")
    fails(write(tmp_path, "deep.lua", "{" * 5000), "nested deeper than 1000", line=1)
    fails(write(tmp_path, "deep.json", "[" * 100000), "not JSON")


def test_latin1_lua_and_bom(tmp_path):
    r, w = read(write(tmp_path, "l.lua", b'["\xe9t\xe9"] = {x = 0, y = 1} -- caf\xe9'))
    assert r.clips == [C("\xe9t\xe9", 0, 1)] and "read as Latin-1" in w.notes[0]
    r, _ = read(write(tmp_path, "b.json", b"\xef\xbb\xbf" + ranges_json([C("w", 0, 4)], 30).encode()))
    assert r.clips == [C("w", 0, 4)]
    r, _ = read(write(tmp_path, "crlf.lua", b"a = {x = 0,\r\n y = 1}\r\nb = {\rx = 2, y = 3}\r\n"))
    assert r.clips == [C("a", 0, 1), C("b", 2, 3)]


def test_too_many_lua_ranges(tmp_path):
    text = "".join(f"a{i} = {{x = {i}, y = {i}}}\n" for i in range(rg.MAX_RANGES + 1))
    fails(write(tmp_path, "many.lua", text), "more than 10000 animation ranges", line=rg.MAX_RANGES + 1)


@pytest.mark.parametrize("unit", ["a={x=1,y=2}\n", "{x=1,y=2},", 'o:set_animation({x=1,y=2},30)\n', "(", "end ) ] }",
                                  '"\\u{', "--[[", "[=", "x = 1, ", "function f() if a then do end end end\n"])
def test_hostile_lua_is_bounded(tmp_path, unit):
    """A file of a quarter of the largest size repeating one unit: an answer (clips or
    one FormatError) within seconds, never a traceback."""
    text = (unit * (rg.MAX_BYTES // len(unit) // 4 + 1))[: rg.MAX_BYTES // 4]
    p = write(tmp_path, "h.lua", text)
    t = time.process_time()
    try:
        read_ranges(p, warnings=Warnings())
    except FormatError:
        pass
    assert time.process_time() - t < 10


def test_a_model_name_too_long_for_a_ranges_file_beside_it_has_none(tmp_path):
    """Regression (found by tools/fuzz_campaign.py): a model named with 255 bytes has no room
    for ``STEM.ranges.json`` beside it; looking for one raised ENAMETOOLONG,
    so an .X export to such a name could not be imported back."""
    from legacy_skin_io.io.xfile.timeline_ranges import range_file

    model = tmp_path / ("n" * 253 + ".x")
    model.write_text("xof 0303txt 0032\n")
    warnings = Warnings()
    assert range_file(str(model), "", warnings) is None and not warnings
