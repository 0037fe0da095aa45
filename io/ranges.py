# SPDX-License-Identifier: GPL-3.0-or-later
"""Ranges files: a character's animations kept as ONE long frame-numbered
timeline, each clip named by a range of frames, as game modders keep them.

Two forms are read:

* the JSON form the exporter writes beside a model (``walk.x`` ->
  ``walk.ranges.json``, :func:`ranges_path`)::

      {"fps": 24.0, "clips": [{"name": "walk", "start": 0, "end": 40}, ...]}

  whole frames, both ends inclusive; read strictly (a clear error, with the
  line, for anything else);
* a Minetest/Luanti mod's Lua file (a player model registration, a mob
  definition, an entity calling ``set_animation``), read by :mod:`.lua_scan`
  on the tokens of :mod:`.lua_tokens`: ``stand = {x = 0, y = 79}`` tables,
  mobs-style ``stand_start``/``stand_end`` fields and
  ``obj:set_animation({x = 0, y = 79}, 30)`` calls. What the file holds
  beyond plain number literals is skipped with a warning naming the line.

:func:`read_ranges` chooses by suffix (``.json``, ``.lua``) and sniffs any
other file (JSON if it parses as the JSON form, else Lua). :func:`ranges_json`
and :func:`ranges_lua` write the two forms (the Lua one is a table ready to
paste into a mod) and read back exactly; :func:`write_ranges` writes them
beside a model, atomically. No bpy here.
"""
from __future__ import annotations

import codecs
import json
import math
import numbers
import re
from dataclasses import dataclass, field
from pathlib import Path

from .atomic import Batch, write_atomic
from .clip_range import MAX_RANGES, ClipRange, check_name, listed, quoted, whole_frame
from .errors import FormatError, Warnings, group, note
from .lua_scan import scan_lua
from .lua_tokens import LUA_KEYWORDS
from .paths import check_input

#: largest ranges file read (bytes): a mod's Lua file is a few kB, reading 2 MB of tables takes seconds
MAX_BYTES = 2 << 20

LOOKED_FOR_JSON = 'a JSON object {"fps": ..., "clips": [{"name": ..., "start": ..., "end": ...}, ...]}'
_CLIP_KEYS = ("name", "start", "end")


@dataclass
class RangeFile:
    path: str
    clips: list[ClipRange]
    #: JSON "fps"; for Lua the animation speed when one is found, else None
    fps: float | None
    #: what was read, one short phrase each (for the import's report)
    found: list[str] = field(default_factory=list)


# reading

def read_ranges(path, *, warnings=None) -> RangeFile:
    """The clips a ranges file names: the JSON form (``.json``), a mod's Lua
    file (``.lua``), or either, sniffed, for any other suffix. FormatError
    (naming the file and line) for a file that cannot be read or names no
    range; warnings for what was skipped."""
    w = warnings if warnings is not None else Warnings()
    size = check_input(path, None)
    if size > MAX_BYTES:
        raise FormatError(f"file too large for a ranges file ({size:,} bytes; at most {MAX_BYTES:,})", path=path)
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_BYTES + 1)
    except OSError as exc:
        raise FormatError(f"cannot read file: {exc.strerror or exc}", path=path) from None
    if len(data) > MAX_BYTES:
        raise FormatError(f"file too large for a ranges file (more than {MAX_BYTES:,} bytes)", path=path)
    nul = data.find(b"\0")
    if nul >= 0:
        raise FormatError("binary data, not a text file (a NUL byte)", path=path, offset=nul)
    bom = len(codecs.BOM_UTF8) if data.startswith(codecs.BOM_UTF8) else 0
    suffix = Path(path).suffix.lower()
    try:
        text = data[bom:].decode("utf-8")
    except UnicodeDecodeError as exc:
        if suffix == ".json":
            raise FormatError("not UTF-8 text, as JSON must be", path=path, offset=bom + exc.start) from None
        text = data[bom:].decode("latin-1")
        note(w, f"{Path(path).name}: not UTF-8; read as Latin-1")
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if suffix == ".json":
        return _read_json(path, text, w)
    if suffix == ".lua":
        return _read_lua(path, text, w, "")
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError as exc:
        tried = f"not JSON: {exc.msg} at line {exc.lineno}"
    except RecursionError:
        tried = "not JSON: nested too deeply"
    else:
        if isinstance(parsed, dict) and "clips" in parsed:
            return _json_form(path, text, parsed, w)
        tried = 'JSON, but not the ranges form (no "clips")'
    return _read_lua(path, text, w, tried)


def _read_lua(path, text: str, w, tried: str) -> RangeFile:
    clips, fps, found = scan_lua(text, path, w, tried)
    return RangeFile(str(path), clips, fps, found)


def _read_json(path, text: str, w) -> RangeFile:
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError as exc:
        raise FormatError(f"not JSON: {exc.msg} (column {exc.colno})", path=path, line=exc.lineno) from None
    except RecursionError:
        raise FormatError("not JSON that can be read: nested too deeply", path=path) from None
    return _json_form(path, text, parsed, w)


def _json_form(path, text: str, data, w) -> RangeFile:
    def fail(message: str, line: int | None = None):
        return FormatError(message, path=path, line=line)

    if not isinstance(data, dict):
        raise fail(f"not a ranges file: expected {LOOKED_FOR_JSON}", 1)
    keys, twice, lines = _json_layout(text)
    if twice:
        raise fail(f'"{twice[0][0]}" given twice', twice[0][1])
    for key in ("fps", "clips"):
        if key not in data:
            raise fail(f'missing key "{key}" (expected {LOOKED_FOR_JSON})')
    fname = Path(path).name
    for key in data:
        if key not in ("fps", "clips"):
            group(w, f"{fname}: unknown keys ignored", key)
    fps = data["fps"]
    if isinstance(fps, bool) or not isinstance(fps, (int, float)) or not math.isfinite(fps) or fps <= 0:
        raise fail(f'"fps" must be a positive number, not {quoted(fps)}', keys.get("fps"))
    items = data["clips"]
    if not isinstance(items, list):
        raise fail(f'"clips" must be a list of {{"name": ..., "start": ..., "end": ...}}, not {quoted(items)}',
                   keys.get("clips"))
    if len(items) > MAX_RANGES:
        raise fail(f"more than {MAX_RANGES} clips ({len(items)})", keys.get("clips"))
    seen: dict[str, tuple[ClipRange, int | None]] = {}
    clips: list[ClipRange] = []
    for k, item in enumerate(items):
        line = lines[k] if k < len(lines) else None
        where = f"clip {k + 1}"
        if not isinstance(item, dict):
            raise fail(f'{where}: expected an object {{"name": ..., "start": ..., "end": ...}}, not {quoted(item)}',
                       line)
        for key in _CLIP_KEYS:
            if key not in item:
                raise fail(f'{where}: missing key "{key}"', line)
        try:
            name = check_name(item["name"])
        except ValueError as exc:
            raise fail(f"{where}: {exc}", line) from None
        where = f"clip {quoted(name)}"
        frames = []
        for key in ("start", "end"):
            try:
                frames.append(whole_frame(item[key]))
            except ValueError as exc:
                raise fail(f'{where}: "{key}": {exc}', line) from None
        start, end = frames
        if end < start:
            raise fail(f'{where}: "end" {end} is before "start" {start}', line)
        for key in item:
            if key not in _CLIP_KEYS:
                group(w, f"{fname}: unknown keys of clips ignored", key)
        clip = ClipRange(name, start, end)
        if name in seen:
            first, first_line = seen[name]
            if (first.start, first.end) != (start, end):
                raise fail(f"{where} is named twice with different ranges: {first.start}-{first.end} "
                           f"(line {first_line}) and {start}-{end} (line {line})", line)
            note(w, f"{fname}:{line}: clip {name!r} given twice with the same range")
            continue
        seen[name] = (clip, line)
        clips.append(clip)
    if not clips:
        raise fail(f'names no animation range (looked for {LOOKED_FOR_JSON}; "clips" is empty)', keys.get("clips"))
    return RangeFile(str(path), clips, float(fps), [f"ranges JSON ({listed(c.name for c in clips)})",
                                                    f"fps {float(fps):g}"])


_WS = re.compile(r"[ \t\n\r]*")


def _json_layout(text: str):
    """Lines of the top-level keys of a JSON object (text that parses), the
    keys given twice, and the line where each element of "clips" starts."""
    decoder = json.JSONDecoder()
    keys: dict[str, int] = {}
    twice: list[tuple[str, int]] = []
    lines: list[int] = []
    at = [0, 1]                                 # (index, its line): indices only grow

    def line_of(i: int) -> int:
        at[1] += text.count("\n", at[0], i)
        at[0] = i
        return at[1]

    def skip(i: int) -> int:
        return _WS.match(text, i).end()

    i = skip(0)
    if not text.startswith("{", i):
        return keys, twice, lines
    i = skip(i + 1)
    while text.startswith('"', i):
        key_line = line_of(i)
        key, i = decoder.raw_decode(text, i)
        i = skip(skip(i) + 1)                   # the ":"
        if key == "clips" and key not in keys and text.startswith("[", i):
            i = skip(i + 1)
            while i < len(text) and not text.startswith("]", i):
                lines.append(line_of(i))
                _, i = decoder.raw_decode(text, i)
                i = skip(i)
                if text.startswith(",", i):
                    i = skip(i + 1)
            i += 1
        else:
            _, i = decoder.raw_decode(text, i)
        if key in keys:
            twice.append((key, key_line))
        else:
            keys[key] = key_line
        i = skip(i)
        if text.startswith(",", i):
            i = skip(i + 1)
    return keys, twice, lines


# writing

def _clips_to_write(clips) -> list[ClipRange]:
    out: list[ClipRange] = []
    seen: dict[str, ClipRange] = {}
    for clip in clips:
        try:
            name = check_name(clip.name)
            start, end = whole_frame(clip.start), whole_frame(clip.end)
        except ValueError as exc:
            raise FormatError(f"clip {quoted(getattr(clip, 'name', clip))}: {exc}") from None
        if end < start:
            raise FormatError(f"clip {quoted(name)}: end {end} is before start {start}")
        first = seen.get(name)
        if first is not None:
            if (first.start, first.end) != (start, end):
                raise FormatError(f"clip {quoted(name)} given twice with different ranges: "
                                  f"{first.start}-{first.end} and {start}-{end}")
            continue
        seen[name] = ClipRange(name, start, end)
        out.append(seen[name])
    if not out:
        raise FormatError("no clip to write")
    if len(out) > MAX_RANGES:
        raise FormatError(f"more than {MAX_RANGES} clips ({len(out)})")
    return out


def _fps_to_write(fps) -> float:
    if isinstance(fps, bool) or not isinstance(fps, numbers.Real) or not math.isfinite(fps) or fps <= 0:
        raise FormatError(f"fps must be a positive number, not {quoted(fps)}")
    return float(fps)


def ranges_json(clips, fps: float) -> str:
    """The JSON form: fps and one clip a line, names as they are (UTF-8)."""
    clips, fps = _clips_to_write(clips), _fps_to_write(fps)
    rows = ",\n".join(f'    {{"name": {json.dumps(c.name, ensure_ascii=False)}, "start": {c.start}, "end": {c.end}}}'
                      for c in clips)
    return f'{{\n  "fps": {json.dumps(fps)},\n  "clips": [\n{rows}\n  ]\n}}\n'


def is_lua_name(name: str) -> bool:
    return (name.isascii() and (name[:1].isalpha() or name[:1] == "_")
            and all(c.isalnum() or c == "_" for c in name) and name not in LUA_KEYWORDS)


def lua_string(text: str) -> str:
    """``text`` as a double-quoted Lua string (UTF-8 as it is; control
    characters as three-digit decimal escapes)."""
    out = []
    for ch in text:
        o = ord(ch)
        if ch in '\\"':
            out.append("\\" + ch)
        elif o < 32 or o == 127:
            out.append(f"\\{o:03d}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _lua_number(value: float) -> str:
    return str(int(value)) if value.is_integer() and abs(value) < 2 ** 53 else repr(value)


def ranges_lua(clips, fps: float, model: str) -> str:
    """A Lua table of the ranges, ready to paste into a mod, with the
    timeline's speed as ``animation_speed`` (which :func:`read_ranges` reads
    back as the fps)."""
    clips, fps = _clips_to_write(clips), _fps_to_write(fps)
    speed = _lua_number(fps)
    model_name = "".join("?" if ord(c) < 32 or ord(c) == 127 else c for c in Path(str(model)).name)

    def key(name: str) -> str:
        return name if is_lua_name(name) else f"[{lua_string(name)}]"

    first = clips[0].name
    use = f"animations.{first}" if is_lua_name(first) else f"animations{key(first)}"
    lines = [f"-- Frame ranges of {model_name} (one timeline at {speed} frames per second), for",
             f"-- object:set_animation({use}, animation_speed)",
             f"local animation_speed = {speed}",
             "local animations = {"]
    lines += [f"\t{key(c.name)} = {{x = {c.start}, y = {c.end}}}," for c in clips]
    lines.append("}")
    return "\n".join(lines) + "\n"


def ranges_path(model_path, suffix: str = ".json") -> Path:
    """The ranges file beside a model: ``walk.x`` -> ``walk.ranges.json``
    (``suffix=".lua"``: ``walk.ranges.lua``)."""
    p = Path(model_path)
    return p.with_name(f"{p.stem}.ranges{suffix}")


def write_ranges(model_path, clips, fps: float, *, lua: bool = False, batch: Batch | None = None) -> list[str]:
    """Write the JSON form (and with ``lua`` the Lua table too) beside
    ``model_path``, each atomically; with ``batch`` as files of that batch
    (renamed when it commits, all or nothing with the model). Returns the
    paths written (or to be written when the batch commits)."""
    target = ranges_path(model_path)
    try:
        files = [(target, ranges_json(clips, fps))]
        if lua:
            files.append((ranges_path(model_path, ".lua"), ranges_lua(clips, fps, Path(model_path).name)))
    except FormatError as exc:
        raise FormatError(exc.message, path=target) from None
    own = Batch() if batch is None else batch
    for path, text in files:
        write_atomic(path, text.encode("utf-8"), batch=own)
    if batch is None:
        own.commit()
    return [str(path) for path, _ in files]
