# SPDX-License-Identifier: GPL-3.0-or-later
"""A clip named by a range of frames, and the checks every reader and
writer of ranges files (:mod:`.ranges`, :mod:`.lua_scan`) applies to one:
whole, bounded frame numbers, a usable name. No bpy here.
"""
from __future__ import annotations

import json
import math
import numbers
from dataclasses import dataclass

#: most clips a file may name
MAX_RANGES = 10_000
#: largest frame number
MAX_FRAME = 2 ** 31 - 1
#: longest clip name (characters)
MAX_NAME = 1024
#: names listed in a "found" phrase
SHOWN = 8


@dataclass(frozen=True)
class ClipRange:
    name: str
    start: int      # first frame, inclusive (whole frames)
    end: int        # last frame, inclusive, >= start


def whole_frame(value) -> int:
    """``value`` as a frame number: a whole, non-negative number (40 or
    40.0, not 40.5, not True); ValueError saying why not."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"not a number ({quoted(value)})")
    if isinstance(value, numbers.Integral):
        frame = int(value)
    else:
        v = float(value)
        if not math.isfinite(v) or not v.is_integer():
            raise ValueError(f"not a whole frame ({quoted(value)})")
        frame = int(v)
    if frame < 0:
        raise ValueError(f"negative frame ({frame})")
    if frame > MAX_FRAME:
        raise ValueError(f"frame too large ({frame})")
    return frame


def check_name(name) -> str:
    """``name`` if it can name a clip; ValueError saying why not."""
    if not isinstance(name, str):
        raise ValueError(f"the name is not a string ({quoted(name)})")
    if not name.strip():
        raise ValueError("empty name")
    if len(name) > MAX_NAME:
        raise ValueError(f"name longer than {MAX_NAME} characters")
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"the name is not valid Unicode ({name[:40]!r})") from None
    return name


def listed(names) -> str:
    """``n ranges: a, b, ...`` for a "found" phrase."""
    names = list(names)
    more = " ..." if len(names) > SHOWN else ""
    return f"{len(names)} range{'s' if len(names) != 1 else ''}: {', '.join(names[:SHOWN])}{more}"


def quoted(value) -> str:
    """``value`` as JSON (else its repr), cut to 40 characters: for a message."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
