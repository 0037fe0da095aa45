# SPDX-License-Identifier: GPL-3.0-or-later
"""TEMPORARY: replaced by the ranges module on merge (write_beside kept)."""
from __future__ import annotations

import json
from pathlib import Path

from .atomic import write_atomic


def ranges_path(model_path) -> Path:
    p = Path(model_path)
    return p.with_name(p.stem + ".ranges.json")


def write_beside(model_path, ranges, fps: float, *, lua: bool = False) -> list[str]:
    """The frame ranges of a timeline beside the model: ``STEM.ranges.json``
    and, with ``lua``, ``STEM.ranges.lua``. Returns the paths written."""
    p = ranges_path(model_path)
    text = json.dumps({"fps": fps, "clips": [{"name": r.name, "start": r.start, "end": r.end} for r in ranges]},
                      indent=1)
    write_atomic(p, (text.encode("utf-8"),))
    out = [str(p)]
    if lua:
        q = Path(model_path).with_name(Path(model_path).stem + ".ranges.lua")
        body = "".join(f'\t["{r.name}"] = {{x = {r.start}, y = {r.end}}},\n' for r in ranges)
        write_atomic(q, (f"local animations = {{\n{body}}}\n".encode("utf-8"),))
        out.append(str(q))
    return out


class _RF:
    def __init__(self, clips, fps, found):
        self.clips, self.fps, self.found = clips, fps, found


def read_ranges(path, *, warnings=None):
    from types import SimpleNamespace

    data = json.loads(Path(path).read_text())
    clips = [SimpleNamespace(name=c["name"], start=int(c["start"]), end=int(c["end"])) for c in data["clips"]]
    return _RF(clips, data.get("fps"), [f"JSON ({len(clips)} ranges)"])
