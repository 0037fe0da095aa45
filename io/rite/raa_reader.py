# SPDX-License-Identifier: GPL-3.0-or-later
"""Read a RiTE Ascii Animation (.raa) into a :class:`RaaAnimation`."""
from __future__ import annotations

import numpy as np

from .ids import IdTable
from .lexer import (
    MAX_FRAMES,
    MAX_TRACKS,
    MIN_QUATERNION_LENGTH,
    LineBuffer,
    Sink,
    check_count_fits,
    is_keyword,
    line_tokens,
    parse_count,
    parse_id,
    parse_name,
    where_name,
)
from .model import RaaAnimation, RaaTrack
from .records import RecordSpec, read_records
from .source_io import load_bytes, stem_of, text_bytes

KEY_SPEC = RecordSpec("keyframes", "idffff", "ID FRAME X Y Z W")
KEYWORDS = frozenset(("frames", "track", "keyframes"))


def read_raa(path, warnings=None) -> RaaAnimation:
    """Read a .raa file. ``warnings``: optional list receiving warning strings."""
    return _parse(LineBuffer(load_bytes(path), path), stem_of(path), warnings)


def read_raa_text(text, path=None, warnings=None) -> RaaAnimation:
    """Read RAA text (``str`` or ``bytes``); ``path`` only names it in messages."""
    return _parse(LineBuffer(text_bytes(text, path), path), stem_of(path), warnings)


def _next_content(src: LineBuffer, line: int, off: int):
    """(line, offset, tokens) of the first non-blank, non-comment line at or after ``line``/``off``."""
    while off <= src.size:
        text, nxt = src.line(off)
        toks = line_tokens(src, line, text)
        if toks is not None:
            return line, off, nxt, toks
        line, off = line + 1, nxt
    return line, off, off, None


def _parse(src: LineBuffer, name: str, warnings) -> RaaAnimation:
    sink = Sink(warnings, where_name(src.path))
    frames = None
    frames_line = None
    raw_tracks = []
    track_lines: dict[int, int] = {}
    last_counted = None  # (count) of a 'keyframes' section that ended just before
    saw_data = False
    line, off = 1, 0
    while off <= src.size:
        text, nxt = src.line(off)
        toks = line_tokens(src, line, text)
        if toks is None:
            line, off = line + 1, nxt
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
            if frames > MAX_FRAMES:
                raise src.error(line, f"frames: {toks[1] if len(toks[1]) <= 40 else toks[1][:37] + '...'} "
                                      f"is more than the limit of {MAX_FRAMES} frames")
            frames_line = line
            line, off = line + 1, nxt
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
            if len(track_lines) == MAX_TRACKS:
                raise src.error(line, f"track {tid}: more than the limit of {MAX_TRACKS} tracks")
            track_lines[tid] = line
            k_line, _, k_nxt, nxt_toks = _next_content(src, line + 1, nxt)
            count = None
            start_line, start_off = line + 1, nxt
            if nxt_toks is not None and is_keyword(nxt_toks[0]) and nxt_toks[0].lower() == "keyframes":
                if len(nxt_toks) != 2:
                    raise src.error(k_line, f"'keyframes' takes one count, found {len(nxt_toks) - 1} values")
                count = parse_count(src, k_line, nxt_toks[1], "keyframes")
                check_count_fits(src, k_line, k_nxt, count, KEY_SPEC.min_bytes, "keyframes")
                start_line, start_off = k_line + 1, k_nxt
            recs = read_records(src, start_line, start_off, count, KEY_SPEC, sink, KEYWORDS)
            if len(recs) == 0:
                raise src.error(line, f"track {tid} (joint {jid} {jname!r}) has no keys")
            raw_tracks.append((tid, jid, jname, line, recs))
            line, off = recs.end_line, recs.end_off
            last_counted = count
        elif kw == "keyframes":
            raise src.error(line, "'keyframes' must directly follow its 'track' line")
        else:
            sink.warn(line, f"unknown keyword {toks[0]!r}: line ignored")
            line, off = line + 1, nxt
    if not saw_data:
        raise src.error(None, "no RiTE animation data (no 'frames' or 'track' lines)")

    tracks = []
    joints_seen: dict[int, int] = {}
    largest = -1
    for tid, jid, jname, line, recs in raw_tracks:
        IdTable(src, recs.col(0), recs.line, f"track {tid} key")
        fr = recs.col(1)
        top = frames if frames is not None else MAX_FRAMES
        bad = np.flatnonzero((fr < 0) | (fr >= top))
        if bad.size:
            r = int(bad[0])
            limit = f"0..{top - 1}" if top else "none (frames 0)"
            rng = (f" (frames {frames}: valid {limit})" if frames is not None
                   else f" (valid {limit}: at most {MAX_FRAMES} frames)")
            raise src.error(recs.line(r), f"track {tid}: key frame {int(fr[r])} is out of range{rng}")
        lengths = np.sqrt(np.einsum("ij,ij->i", recs.floats, recs.floats))
        short = np.flatnonzero(~(lengths >= MIN_QUATERNION_LENGTH))
        if short.size:
            r = int(short[0])
            raise src.error(recs.line(r), f"track {tid}: key rotation quaternion of length {lengths[r]:.3g} "
                                          f"cannot be normalised (all zero or shorter than "
                                          f"{MIN_QUATERNION_LENGTH:g})")
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
        norms = lengths[order]
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
