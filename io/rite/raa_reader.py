# SPDX-License-Identifier: GPL-3.0-or-later
"""Read a RiTE Ascii Animation (.raa) into a :class:`RaaAnimation`."""
from __future__ import annotations

import numpy as np

from .ids import IdTable
from .lexer import Sink, Source, is_keyword, line_tokens, parse_count, parse_id, parse_name, where_name
from .model import RaaAnimation, RaaTrack
from .records import RecordSpec, read_records
from .source_io import load_bytes, stem_of, text_bytes

KEY_SPEC = RecordSpec("keyframes", "idffff", "ID FRAME X Y Z W")
KEYWORDS = frozenset(("frames", "track", "keyframes"))


def read_raa(path, warnings=None) -> RaaAnimation:
    """Read a .raa file. ``warnings``: optional list receiving warning strings."""
    return _parse(Source(load_bytes(path), path), stem_of(path), warnings)


def read_raa_text(text, path=None, warnings=None) -> RaaAnimation:
    """Read RAA text (``str`` or ``bytes``); ``path`` only names it in messages."""
    return _parse(Source(text_bytes(text, path), path), stem_of(path), warnings)


def _next_content(src: Source, i: int):
    """(index, tokens) of the first non-blank, non-comment line at or after ``i``."""
    while i < src.count:
        toks = line_tokens(src, i)
        if toks is not None:
            return i, toks
        i += 1
    return i, None


def _parse(src: Source, name: str, warnings) -> RaaAnimation:
    sink = Sink(warnings, where_name(src.path))
    frames = None
    frames_line = None
    raw_tracks = []
    track_lines: dict[int, int] = {}
    last_counted = None  # (count) of a 'keyframes' section that ended just before
    saw_data = False
    i = 0
    while i < src.count:
        line = i + 1
        toks = line_tokens(src, i)
        if toks is None:
            i += 1
            continue
        if not is_keyword(toks[0]):
            if last_counted is not None:
                raise src.error(line, f"keyframes: expected {last_counted} records, found more "
                                      f"(line {line} is one too many)")
            raise src.error(line, "key record outside a track")
        kw = toks[0].lower()
        last_counted = None
        if kw == "frames":
            saw_data = True
            if frames is not None:
                raise src.error(line, f"second 'frames' (the first is on line {frames_line})")
            if raw_tracks:
                raise src.error(line, "'frames' must come before the first track")
            if len(toks) != 2:
                raise src.error(line, f"'frames' takes one count, found {len(toks) - 1} values")
            frames = parse_count(src, line, toks[1], "frames")
            frames_line = line
            i += 1
        elif kw == "track":
            saw_data = True
            if len(toks) != 4:
                raise src.error(line, f'track: expected track ID JOINT_ID "JOINT_NAME", '
                                      f"found {len(toks) - 1} values")
            tid = parse_id(src, line, toks[1], "track")
            jid = parse_id(src, line, toks[2], "track joint")
            jname = parse_name(src, line, toks[3], "track")
            if tid in track_lines:
                raise src.error(line, f"duplicate track id {tid} (first defined on line {track_lines[tid]})")
            track_lines[tid] = line
            k, nxt = _next_content(src, i + 1)
            count = None
            start = i + 1
            if nxt is not None and is_keyword(nxt[0]) and nxt[0].lower() == "keyframes":
                if len(nxt) != 2:
                    raise src.error(k + 1, f"'keyframes' takes one count, found {len(nxt) - 1} values")
                count = parse_count(src, k + 1, nxt[1], "keyframes")
                start = k + 1
            recs = read_records(src, start, count, KEY_SPEC, sink, KEYWORDS)
            if len(recs) == 0:
                raise src.error(line, f"track {tid} (joint {jid} {jname!r}) has no keys")
            raw_tracks.append((tid, jid, jname, line, recs))
            i = recs.end
            last_counted = count
        elif kw == "keyframes":
            raise src.error(line, "'keyframes' must directly follow its 'track' line")
        else:
            sink.warn(line, f"unknown keyword {toks[0]!r}: line ignored")
            i += 1
    if not saw_data:
        raise src.error(None, "no RiTE animation data (no 'frames' or 'track' lines)")

    tracks = []
    joints_seen: dict[int, int] = {}
    largest = -1
    for tid, jid, jname, line, recs in raw_tracks:
        IdTable(src, recs.ints[:, 0], recs.line, f"track {tid} key")
        fr = recs.ints[:, 1]
        bad = np.flatnonzero((fr < 0) | (fr >= frames) if frames is not None else fr < 0)
        if bad.size:
            r = int(bad[0])
            limit = f"0..{frames - 1}" if frames else "none (frames 0)"
            rng = f" (frames {frames}: valid {limit})" if frames is not None else ""
            raise src.error(recs.line(r), f"track {tid}: key frame {int(fr[r])} is out of range{rng}")
        order = np.argsort(fr, kind="stable")
        sfr = fr[order]
        dup = np.flatnonzero(sfr[1:] == sfr[:-1])
        if dup.size:
            later = order[dup + 1]
            k = int(np.argmin(later))
            r, first = int(later[k]), int(order[dup[k]])
            raise src.error(recs.line(r), f"track {tid}: two keys on frame {int(fr[r])} "
                                          f"(the other is on line {recs.line(first)})")
        rot = recs.floats[order]
        norms = np.linalg.norm(rot, axis=1)
        off = np.flatnonzero(np.abs(norms - 1.0) > 1e-3)
        if off.size:
            r = int(order[off[0]])
            more = f" (and {off.size - 1} more keys)" if off.size > 1 else ""
            sink.warn(recs.line(r), f"track {tid}: key rotation is not a unit quaternion "
                                    f"(length {norms[off[0]]:.6g}){more}")
        if jid in joints_seen:
            sink.warn(line, f"track {tid}: joint {jid} {jname!r} already has a track "
                            f"(line {joints_seen[jid]}); both are kept")
        else:
            joints_seen[jid] = line
        largest = max(largest, int(sfr[-1]))
        tracks.append(RaaTrack(joint_id=jid, joint_name=jname, frames=sfr.copy(), rotations=rot))
    given = frames is not None
    return RaaAnimation(name=name, frame_count=frames if given else largest + 1,
                        frame_count_given=given, tracks=tracks)
