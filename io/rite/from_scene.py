# SPDX-License-Identifier: GPL-3.0-or-later
"""Scene -> RiTE RAM/RAA: the writing half of the adapter.


RAM has one skinned triangle mesh, no scale and no default pose apart from
the bind pose; RAA animates rotations only. A scene is written in its
default pose: each joint's RAM orientation/translation is its default local
rotation/translation (constant uniform scale folded into the descendants'
translations), the meshes are re-skinned to that pose and merged. A scene
read from RiTE whose joints still agree with the file's numbers is written
with those numbers, its mesh unchanged and its clips with their own key
frames and signs, so RiTE -> scene -> RiTE reproduces the records. What the
files cannot carry is reported in one warning with the deviation measured
on the written files.
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np

from ...core import quat, sampling
from ...scene import AxisConversion, Clip, Scene
from ...scene.evaluate import farthest
from ...scene.holders import without_mesh_holders
from ...scene.validate import check_frame_count
from ..atomic import Batch
from ..errors import Deviation, FormatError, Warnings
from .lexer import MAX_FRAMES
from .model import RaaAnimation, RaaTrack, RamModel
from .ram_from_scene import REPORT, RamBuild, nearest_rigid
from .to_scene import FORMAT, default_axes, read_scene
from .writer import _validate_raa, _validate_ram, write_raa, write_ram


def writer_axes(scene: Scene, axes: AxisConversion | None = None) -> AxisConversion:
    """The conversion this format's writer inverts (``Scene.writer_axes``)."""
    return scene.writer_axes(FORMAT, default_axes(), axes)


def file_safe(name: str) -> str:
    """A name usable in a file name on every system."""
    import re

    out = re.sub(r"[^A-Za-z0-9._-]+", "_", str(name)).strip("._")
    return out or "clip"


def _rigid_quats(m: np.ndarray) -> np.ndarray:
    return quat.from_mat3(nearest_rigid(m)[0])


def clip_shift(clip: Clip, fps: float) -> int:
    """Whole frames a clip's RAA frames are later than its own: RAA frames
    start at 0, so a clip starting before frame 0 moves by the frames it
    starts before it (as the .X writer moves a set starting before tick 0)."""
    start = clip.frame_range(fps)[0]
    return max(-int(np.floor(start + 1e-9)), 0) if np.isfinite(start) else 0


def _clip_frames(clip: Clip, fps: float) -> np.ndarray:
    """The clip's whole frames its RAA holds: from frame 0, or from its
    start when that is before 0 (:func:`clip_shift`), to ceil(end)."""
    check_frame_count(clip, fps, MAX_FRAMES)         # before sampling them (a RAA's limit)
    end = clip.frame_range(fps)[1]
    first = -clip_shift(clip, fps)
    last = max(int(np.ceil(end - 1e-9)), first)
    return np.arange(first, last + 1)


def raa_from_clip(scene: Scene, clip: Clip, ram: RamModel, *, axes: AxisConversion | None = None,
                  fps: float = 24.0, name: str | None = None, warnings: list[str] | None = None) -> RaaAnimation:
    """A clip as an RAA for ``ram`` (a :class:`RamBuild`'s, made with the
    same ``axes``): rotation keys ``conj(orientation_j) * local rotation`` of
    the joints the clip animates. A clip read from RiTE keeps its own key
    frames and signs (``extras["rite"]["keys"]``); any other clip is keyed
    at every whole frame 0..ceil(end) (``clip.to_frames`` at ``fps``)."""
    warnings = warnings if warnings is not None else Warnings()
    sk = scene.skeleton
    back = writer_axes(scene, axes).inverse()
    J = len(sk)
    ori = quat.normalize(np.array([j.orientation for j in ram.joints], dtype=np.float64).reshape(-1, 4))
    if len(ori) != J:
        raise FormatError(f"{clip.name}: the model has {len(ori)} joints, the scene {J}")
    d = clip.extras.get("rite") if isinstance(clip.extras.get("rite"), dict) else {}
    keys = d.get("keys") or {}
    index = sk.index()
    tracks: dict[int, RaaTrack] = {}
    frame_count = 0
    if keys:
        # the signs are relative to the continuous rotations (io.rite.to_scene.key_signs)
        times, baked = replace(clip, playback="ACTION").baked_rotations(np.tile(quat.IDENTITY, (J, 1)), fps)
        for jname, pairs in keys.items():
            j = index.get(jname)
            if j is None or not clip.animated[j] or not len(pairs):
                continue
            fr = np.array([f for f, _ in pairs], dtype=np.int64)
            sg = np.array([s for _, s in pairs], dtype=np.float64)
            k = np.clip(np.searchsorted(times, fr), 0, len(times) - 1)
            r = quat.mul(quat.conj(ori[j]), back.quats(baked[k, j])) * sg[:, None]
            tracks[j] = RaaTrack(j, ram.joints[j].name, fr, r)
            frame_count = max(frame_count, int(fr.max()) + 1)
        frame_count = max(frame_count, int(d.get("frames") or 0))
    # a RiTE clip's tracks in the file's order, then any other animated joint in joint order
    rest = [j for j in np.flatnonzero(clip.animated).tolist() if j not in tracks]
    if rest:
        frames = _clip_frames(clip, fps)
        shift = clip_shift(clip, fps)
        if shift:
            warnings.append(f"{clip.name}: starts {shift} frame(s) before 0; written from frame 0 (every key that "
                            f"much later)")
        local = clip.sample_local(sk.local, clip.to_times(frames, fps))[:, rest]
        r = quat.mul(quat.conj(ori[rest]), _rigid_quats(back.matrices(local)))
        r = quat.normalize(r)
        r[:1] = np.where(r[:1, :, 3:] < 0, -r[:1], r[:1])
        r = quat.make_continuous(r, axis=0)
        for a, j in enumerate(rest):
            tracks[j] = RaaTrack(j, ram.joints[j].name, frames + shift, r[:, a])
        frame_count = max(frame_count, len(frames))
    if not tracks:
        frame_count = max(frame_count, len(_clip_frames(clip, fps)))
    given = bool(d.get("frames_given", True)) if keys else True
    return RaaAnimation(name=name or file_safe(clip.name), frame_count=frame_count, frame_count_given=given,
                        tracks=list(tracks.values()))


def _clip_flags(build: RamBuild, clip: Clip) -> None:
    """Flag joints whose animated translation or scale RAA cannot carry
    (estimated effect: the translation's change; the scale's relative change
    times the model size)."""
    sk = build.scene.skeleton
    t0, _, s0 = sampling.decompose_trs(sk.local)
    for ch, ref, what in ((clip.translation, t0, "animated translation"), (clip.scale, s0, "animated scale")):
        for t, j in enumerate(ch.targets.tolist()):
            v = ch.values[ch.starts[t]:ch.starts[t + 1]]
            if not clip.animated[j] or not len(v):
                continue
            dev = float(np.abs(v - ref[j]).max())
            if what == "animated scale":
                dev = dev / max(float(np.abs(ref[j]).max()), 1e-300) * build.size
            if dev > 0:
                build.flag(j, what, dev)


def _measure(scene: Scene, axes: AxisConversion, ram_path: str, raa_paths: list[str], frames: list,
             fps: float, size: float, shifts: list[int]) -> tuple[float, str]:
    """Largest vertex distance / ``size`` between the scene and the written
    files read back (scene.evaluate of both), at the given frames of each
    written clip (the scene's clip ``shifts`` frames earlier), and where it
    happens."""
    again = read_scene([ram_path] + list(raa_paths), axes=axes, warnings=[])
    worst, where = 0.0, ""
    for a, b, fr, shift in zip(scene.clips, again.clips, frames, shifts):
        d, f = farthest(scene, a, again, b, fr, fps, shift)
        if d > worst:
            worst, where = d, f"{a.name}, frame {int(f)}"
    return worst / size, where


def _carry_warning(build: RamBuild, found: dict[int, dict[str, float]], figure: str) -> str:
    reasons: dict[str, float] = {}
    for d in found.values():
        for r, e in d.items():
            reasons[r] = max(reasons.get(r, 0.0), e)
    order = sorted(found, key=lambda j: -max(found[j].values()))
    sk = build.scene.skeleton
    placement = (sk.extras.get("placement") or {}) if sk is not None else {}
    # the joint an exporter made of an object's transform: its scale is in the mesh at rest, not in a joint
    bones = [f"the object {placement.get('object')!r}, whose scale RiTE joints cannot hold"
             if j == placement.get("joint") else build.names[j] for j in order]
    listed = ", ".join(bones[:12]) + (f" ... ({len(bones)} in all)" if len(bones) > 12 else "")
    what = "the largest effect first" if placement.get("joint") in found else "bones, the largest effect first"
    why = "; ".join(sorted(reasons, key=lambda r: -reasons[r]))
    return (f"RiTE cannot carry {why} ({what}: {listed}): the written files deviate "
            f"from the scene {figure}")


def write_scene(scene: Scene, path, *, warnings: list[str] | None = None, fps: float = 24.0,
                axes: AxisConversion | None = None) -> list[str]:
    """Write ``scene`` as ``path`` (.ram) and one ``<stem>_<clip>.raa`` per
    clip beside it. Returns the paths written.

    Converted back to file space with the inverse of ``axes``, else of the
    axes the scene was read with when it came from RiTE, else of
    :func:`default_axes`. What the files cannot carry (animated translation
    or scale, a default pose that does not fold into RiTE joints, a moving
    root under unskinned meshes) is one warning naming the bones and the
    largest deviation it causes, measured on the written files read back
    (when it exceeds :data:`REPORT` of the model size)."""
    warnings = warnings if warnings is not None else Warnings()
    if not (np.isfinite(fps) and fps > 0):
        raise FormatError(f"fps must be a positive number, not {fps!r}", path=path)
    path = Path(path)
    scene = without_mesh_holders(scene)       # a .X file's frames that only hold skinned meshes: not joints
    fwd = writer_axes(scene, axes)
    build = RamBuild(scene, fwd.inverse(), warnings)
    anims: list[tuple[RaaAnimation, Path]] = []
    clips = scene.clips if scene.skeleton is not None else []
    used: set[str] = set()
    for clip in clips:
        _clip_flags(build, clip)
        part = file_safe(clip.name)
        if "rite" in clip.extras and part.startswith(path.stem + "_") and len(part) > len(path.stem) + 1:
            part = part[len(path.stem) + 1:]        # read from <stem>_<name>.raa: not <stem>_<stem>_<name>
        stem = f"{path.stem}_{part}"
        name, k = stem, 2
        while name.lower() in used:
            name = f"{stem}_{k}"
            k += 1
        used.add(name.lower())
        anims.append((raa_from_clip(scene, clip, build.ram, axes=fwd, fps=fps, name=name, warnings=warnings),
                      path.with_name(name + ".raa")))
    # Never half-write: every record is checked before any file is written,
    # and the files are one batch: every target checked (only a new path or
    # a regular file is replaced), all written, then all renamed, or none.
    _validate_ram(build.ram, path)
    for a, p in anims:
        _validate_raa(a, p)
    with Batch() as batch:          # all files or none (io.atomic)
        for a, p in anims:
            write_raa(a, p, batch)
        write_ram(build.ram, path, batch)
    written = [str(path)] + [str(p) for _, p in anims]
    # The RAM alone shows the default pose exactly (the meshes are re-skinned
    # to it); what it cannot carry shows when the RAAs play.
    found = build.reported() if anims else {}
    if found:
        dev, where = _measure(scene, fwd, str(path), [str(p) for _, p in anims],
                              [np.arange(a.frame_count) for a, _ in anims], fps, build.size,
                              [clip_shift(c, fps) for c in clips])
        if dev > REPORT:
            warnings.append(Deviation(_carry_warning(build, found, f"by up to {dev:.2e} of the model size ({where})"),
                                      dev, where))
    return written


def write_animation(scene: Scene, clip: Clip, path, *, warnings: list[str] | None = None, fps: float = 24.0,
                    axes: AxisConversion | None = None) -> list[str]:
    """One clip of ``scene`` as the .raa ``path`` (for the joints
    :func:`write_scene` would write)."""
    warnings = warnings if warnings is not None else Warnings()
    if scene.skeleton is None:
        raise FormatError("no skeleton to animate", path=path)
    scene = without_mesh_holders(replace(scene, clips=[clip]))     # the joints write_scene writes
    clip = scene.clips[0]
    fwd = writer_axes(scene, axes)
    build = RamBuild(scene, fwd.inverse(), warnings)
    _clip_flags(build, clip)
    if build.reported():
        bones = ", ".join(scene.skeleton.names[j] for j in list(build.reported())[:8])
        warnings.append(f"{clip.name}: RAA carries rotations only; animated translation or scale ignored on "
                        f"bones: {bones}")
    raa = raa_from_clip(scene, clip, build.ram, axes=fwd, fps=fps, name=Path(path).stem, warnings=warnings)
    write_raa(raa, path)
    return [str(path)]
