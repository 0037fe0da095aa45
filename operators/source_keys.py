# SPDX-License-Identifier: GPL-3.0-or-later
"""What an import records on the actions it makes, so that an export can
write them back as they were read:

* the clip's own keys (times and values of every channel, scene space, as
  ID property arrays on the action: compact in the .blend), for clips that
  interpolate their keys themselves (no sampler: .X sets; a RiTE clip's
  keys are whole frames, which the F-curves hold exactly);
* a fingerprint of the action's F-curves right after the import
  (:func:`fingerprint`): an export compares it with the F-curves it finds,
  and writes the recorded keys only while they are the same (the set was
  not touched since);
* the rig the action was made for (:func:`rig_token`), so that an export
  writes only the actions of the rig it exports.
"""
from __future__ import annotations

import hashlib
import uuid

import numpy as np

from ..core import sampling
from ..scene import Clip
from . import metadata
from .fcurves import channelbags, fcurves

KEYS = "legacy_skin_io_keys"          # ID property group on an action
TOKEN = "legacy_skin_io_token"        # on an armature object: the rig's identity
_CHANNELS = (("r", 4), ("t", 3), ("s", 3))


def rig_token(arm_obj, create: bool = False) -> str:
    """The armature object's identity (made on first use when ``create``)."""
    tok = arm_obj.get(TOKEN) if arm_obj is not None else None
    if not tok and create and arm_obj is not None:
        tok = uuid.uuid4().hex
        arm_obj[TOKEN] = tok
    return str(tok or "")


#: Interpolation codes (``Keyframe.interpolation`` through ``foreach_get``).
_BEZIER = 2
_EASING_FROM = 3                     # SINE and after: easing, and BACK's and ELASTIC's parameters
FINGERPRINT_VERSION = "2:"


def _hash_keys(h, co: np.ndarray, interpolation: np.ndarray, points) -> None:
    """Feed one F-curve's keys to ``h``: ``co`` (2 K,) float32 frames and
    values interleaved and ``interpolation`` (K,) int32, as ``foreach_get``
    gives them; the handles where a key is BEZIER and the easing parameters
    where a key eases, read from the curve's ``points`` (its keyframe points)."""
    h.update(co)
    h.update(interpolation)
    n = len(interpolation)
    top = int(interpolation.max(initial=0))
    if top < _BEZIER:
        return
    if top == _BEZIER or (interpolation == _BEZIER).any():
        for attr in ("handle_left", "handle_right"):
            buf = np.empty(2 * n, dtype=np.float32)
            points.foreach_get(attr, buf)
            h.update(buf)
    if top >= _EASING_FROM:
        for attr, dtype in (("easing", np.int32), ("back", np.float32), ("amplitude", np.float32),
                            ("period", np.float32)):
            buf = np.empty(n, dtype=dtype)
            points.foreach_get(attr, buf)
            h.update(buf)


def _header(h, path: str, index: int, n: int, extrapolation: str, mute: bool, mods: str) -> None:
    h.update(f"{path}\0{index}\0{n}\0{extrapolation}\0{mute}\0{mods}\0".encode("utf-8", "surrogatepass"))


def fingerprint(action, keyed: dict | None = None, cycles: bool | None = None) -> str:
    """A digest of everything of the action's F-curves that changes what
    they play: paths, indices, keys (frames, values, interpolation; handles
    where a key is BEZIER; easing and its parameters where a key eases),
    extrapolation, modifiers, mute. ``keyed``: {(data_path, index): (co
    (2 K,) float32, interpolation (K,) int32)}, the arrays just set on
    curves whose keys are CONSTANT or LINEAR (the import), so that they
    need not be read back. With ``cycles`` given as well, ``keyed`` holds
    every curve of the action as the import left it (extrapolation
    constant, not muted, a Cycles modifier on each curve of two keys or
    more when ``cycles``): the digest is made of them without reading the
    curves (the same digest as reading them: tested)."""
    h = hashlib.sha1()
    if keyed is not None and cycles is not None and len(keyed) == sum(len(bag.fcurves) for bag in channelbags(action)):
        for path, index in sorted(keyed):
            co, interpolation = keyed[(path, index)]
            n = len(interpolation)
            _header(h, path, index, n, "CONSTANT", False, "CYCLES" if cycles and n > 1 else "")
            h.update(co)
            h.update(interpolation)
        return FINGERPRINT_VERSION + h.hexdigest()
    for path, index, fc in sorted(((f.data_path, f.array_index, f) for f in fcurves(action)),
                                  key=lambda c: (c[0], c[1])):
        points = fc.keyframe_points
        n = len(points)
        _header(h, path, index, n, fc.extrapolation, fc.mute, ",".join(m.type for m in fc.modifiers))
        known = keyed.get((path, index)) if keyed else None
        if known is not None and len(known[1]) == n:
            h.update(known[0])
            h.update(known[1])
            continue
        co = np.empty(2 * n, dtype=np.float32)
        points.foreach_get("co", co)
        interpolation = np.empty(n, dtype=np.int32)
        points.foreach_get("interpolation", interpolation)
        _hash_keys(h, co, interpolation, points)
    return FINGERPRINT_VERSION + h.hexdigest()


def _fingerprint_v1(action) -> str:
    """The fingerprint as recorded by imports before :data:`FINGERPRINT_VERSION`
    (every key's handles and easing, whatever its interpolation), so that
    sets imported into a saved .blend then still export key for key."""
    h = hashlib.sha1()
    for fc in sorted(fcurves(action), key=lambda f: (f.data_path, f.array_index)):
        kp = fc.keyframe_points
        n = len(kp)
        h.update(f"{fc.data_path}\0{fc.array_index}\0{n}\0{fc.extrapolation}\0{fc.mute}\0{len(fc.modifiers)}\0"
                 .encode("utf-8", "surrogatepass"))
        for attr, width, dtype in (("co", 2, np.float32), ("handle_left", 2, np.float32),
                                   ("handle_right", 2, np.float32), ("interpolation", 1, np.int32),
                                   ("easing", 1, np.int32)):
            buf = np.empty(width * n, dtype=dtype)
            kp.foreach_get(attr, buf)
            h.update(buf.tobytes())
    return h.hexdigest()


def record(action, clip: Clip, arm_obj, keyed: dict | None = None, cycles: bool | None = None) -> None:
    """Record ``clip``'s own keys (when it has no sampler), the fingerprint
    of the action's F-curves as keyed (``keyed``, ``cycles``: see
    :func:`fingerprint`), and the rig it was made for."""
    if clip.sampler is None:
        group = {"animated": np.flatnonzero(clip.animated).tolist(), "joints": int(len(clip.animated)),
                 "rotation_mode": clip.rotation_mode}
        for c, ch in zip("rts", (clip.rotation, clip.translation, clip.scale)):
            group[c + "_targets"] = np.asarray(ch.targets, dtype=np.int64).tolist()
            group[c + "_starts"] = np.asarray(ch.starts, dtype=np.int64).tolist()
            # float64 arrays go in as they are (their buffer: no list of Python floats)
            group[c + "_times"] = np.ascontiguousarray(ch.times, dtype=np.float64)
            group[c + "_values"] = np.ascontiguousarray(ch.values, dtype=np.float64).reshape(-1)
        action[KEYS] = group
    action[KEYS + "_fingerprint"] = fingerprint(action, keyed, cycles)
    action[KEYS + "_owner"] = rig_token(arm_obj, create=True)


def owner(action) -> str:
    return str(action.get(KEYS + "_owner") or "")


def untouched(action) -> bool:
    """The action's F-curves are as the import keyed them."""
    stored = str(action.get(KEYS + "_fingerprint") or "")
    if not stored:
        return False
    return stored == (fingerprint(action) if stored.startswith(FINGERPRINT_VERSION) else _fingerprint_v1(action))


def _ints(group, key) -> np.ndarray:
    return np.array(list(group.get(key, ())), dtype=np.int64)


def stored_clip(action, meta: dict, joints: int) -> Clip | None:
    """The clip as the import read it (its own keys), or None when none is
    recorded or it does not fit a skeleton of ``joints`` joints."""
    group = action.get(KEYS)
    if group is None or int(group.get("joints", -1)) != joints:
        return None
    chans = []
    for c, width in _CHANNELS:
        starts = _ints(group, c + "_starts")
        targets = _ints(group, c + "_targets")
        times = np.array(list(group.get(c + "_times", ())), dtype=np.float64)
        values = np.array(list(group.get(c + "_values", ())), dtype=np.float64).reshape(-1, width)
        if len(starts) != len(targets) + 1 or len(values) != len(times) or starts[-1] != len(times):
            return None
        track = np.repeat(np.arange(len(targets)), np.diff(starts)) if len(targets) else np.zeros(0, np.int64)
        chans.append(sampling.Channels(times, values, starts, track, targets))
    animated = np.zeros(joints, dtype=bool)
    animated[_ints(group, "animated")] = True
    cycle = meta.get("cycle")
    return Clip(action.name, chans[0], chans[1], chans[2], animated, start=float(meta.get("start", 0.0)),
                end=float(meta.get("end", 0.0)), ticks_per_second=meta.get("ticks_per_second"),
                rotation_mode=str(group.get("rotation_mode", "slerp")), cycle=tuple(cycle) if cycle else None,
                playback=metadata.playback(meta), weight=float(meta.get("weight", 1.0)),
                extras=meta.get("extras") or {})


def key_times(action, meta: dict) -> np.ndarray:
    """The times (clip units) of every key the import read, or an empty array."""
    group = action.get(KEYS)
    if group is None:
        return np.zeros(0)
    ts = [np.array(list(group.get(c + "_times", ())), dtype=np.float64) for c, _ in _CHANNELS]
    return np.unique(np.concatenate(ts))
