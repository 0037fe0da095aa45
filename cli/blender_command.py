# SPDX-License-Identifier: GPL-3.0-or-later
"""Blender's command line: the commands that run in Blender (``import``,
``verify``, ``export``), for every registered format, in the bpy module
(``python -m legacy_skin_io``) or ``blender --command legacy_skin_io``.
``commands`` parses the arguments and imports this module only for these
commands (``convert`` runs without Blender)."""
from __future__ import annotations

import atexit
import os
import sys
from contextlib import contextmanager
from pathlib import Path

import bpy
import numpy as np

from ..io import export_options, import_options, paths
from ..io import options as specs
from ..io.errors import FormatError
from ..io.formats import UnknownFormat, for_path
from ..io.options import MANUAL_ORIENTATION
from ..operators import anim_place, fcurves, ops, pipeline, report, verify
from ..scene import AxisConversion, Scene, SceneError
from .progress import Progress, counted


def _register():
    from .. import register, unregister

    if not ops._classes:       # not run inside Blender with the extension enabled
        register()
        # bpy 4.5 crashes at interpreter exit with the add-on still registered
        atexit.register(unregister)


def _axes(fmt, args) -> AxisConversion:
    """--forward, --up (default: the format's), --scale."""
    given = _options(fmt, args)[1]
    try:
        return fmt.axes(given.get(import_options.FORWARD.id), given.get(import_options.UP.id),
                        given.get(import_options.SCALE.id, import_options.SCALE.default))
    except ValueError as err:      # parallel axes, a scale <= 0: a clean error (exit 2), not a traceback
        raise pipeline.IOFailed(str(err)) from None


def _options(fmt, args) -> tuple[import_options.ImportOptions, dict]:
    """The shared import options (io.import_options.chosen; IOFailed for a bad value)."""
    try:
        return import_options.chosen(fmt, args)
    except specs.OptionError as err:
        raise pipeline.IOFailed(str(err)) from None


def _given(chosen, args) -> dict:
    """The command line's values of ``chosen`` options (checked: IOFailed for a bad one)."""
    try:
        return specs.given(args, chosen)
    except specs.OptionError as err:
        raise pipeline.IOFailed(str(err)) from None


def _report_unused(fmt, args, chosen) -> None:
    for flag in specs.unused(args, chosen):
        print(f"warning: {flag}: not an option of {fmt.label} files, ignored")


def scene_options(fmt, args) -> dict:
    """The command line's values of the format's ``read_scene`` options;
    ``--forward``/``--up`` switch Manual Orientation on unless it is given."""
    out = _given(fmt.import_options, args)
    manual = MANUAL_ORIENTATION.id
    axes_given = {import_options.FORWARD.id, import_options.UP.id} & set(_options(fmt, args)[1])
    if axes_given and manual not in out and manual in {s.id for s in fmt.import_options}:
        out[manual] = True
    return out


def reader_options(fmt, args) -> tuple[dict, dict]:
    """The command line's values of the format's own import options: those
    of ``read_scene`` (:func:`scene_options`) and those of ``read_clips``
    (io/<format>/options.py). Flags of other formats' options are reported
    and ignored."""
    _report_unused(fmt, args, fmt.import_options + fmt.anim_import_options)
    return scene_options(fmt, args), _given(fmt.anim_import_options, args)


@contextmanager
def _console(label: str):
    """Progress on the command line for what ``pipeline`` shows in Blender's window."""
    with Progress(label, note="reading") as progress:
        pipeline.console = progress
        try:
            yield progress
        finally:
            pipeline.console = None


def import_files(args):
    """A new empty scene with the model and its animations (mergeable ones
    first, then dominant ones). Returns (format, built, layered clips or None)."""
    _register()
    fmt = for_path(args.model)
    axes = _axes(fmt, args)
    opts, given = _options(fmt, args)
    playback, weight = given.get(import_options.PLAYBACK.id), given.get(import_options.WEIGHT.id, 1.0)
    keys = {"key_every_frame": opts.key_every_frame, "set_frame_range": opts.set_frame_range}
    for p in [args.model, *args.animations, *args.dominant]:
        _checked(paths.check_input, p)
    bpy.ops.wm.read_homefile(use_empty=True)
    mergeable, dominant = list(args.animations), list(args.dominant)
    layered = bool(dominant) or len(mergeable) > 1 or bool(args.weights) or playback not in (None, "ACTION")
    if args.weights and len(args.weights) != len(mergeable):
        raise pipeline.IOFailed("--weights needs one weight per mergeable animation")
    if any(w < 0 for w in args.weights):
        raise pipeline.IOFailed("--weights: a weight must not be negative")
    if (mergeable or dominant) and not fmt.animation_files:
        raise pipeline.IOFailed(f"{fmt.label} files carry their own animations: give only the model")
    for p in mergeable + dominant:
        if Path(p).suffix.lower() not in fmt.animation_files:
            raise pipeline.IOFailed(f"{Path(p).name}: a {fmt.label} model takes animations from "
                                    f"{', '.join(fmt.animation_files)} files")
    model_options, clip_options = reader_options(fmt, args)
    with _console(f"import {Path(args.model).name}"):
        built = pipeline.load(bpy.context, fmt, [args.model], axes=axes, options=opts, reader_options=model_options)
    warnings = built.warnings
    for i, p in enumerate(mergeable):
        extra = pipeline.load_animations(bpy.context, fmt, [p], armature=built.armature,
                                         playback=playback or ("MERGEABLE" if layered else "ACTION"),
                                         weight=float(args.weights[i]) if args.weights else weight,
                                         reader_options=clip_options, **keys)
        built.actions += extra.actions
        warnings.extend(extra.warnings)
    for p in dominant:
        extra = pipeline.load_animations(bpy.context, fmt, [p], armature=built.armature, playback="DOMINANT",
                                         reader_options=clip_options, **keys)
        built.actions += extra.actions
        warnings.extend(extra.warnings)
    print_report(pipeline.imported_summary(args.model, built, warnings, pipeline.scene_fps(bpy.context)), warnings)
    return fmt, built, layered


def _checked(check, path):
    """``check(path)`` (io.paths), its FormatError as the command's one-line error."""
    try:
        return check(path)
    except FormatError as err:
        raise pipeline.IOFailed(str(err)) from None


def _output(path, make: bool = True) -> Path:
    """A file the command writes (.blend, .png), checked as an export target
    is (io.paths.check_target). With ``make``, its missing folders are made
    first; without, only checked (the nearest existing one must be a
    folder), so that a command checks its outputs before any work and makes
    nothing when it fails. Returns the path to write."""
    out = Path(path).absolute()
    if not make:
        up = out.parent
        while not os.path.lexists(up) and up != up.parent:
            up = up.parent
        if up != out.parent:
            if not up.is_dir():
                raise pipeline.IOFailed(f"{out.name}: cannot make the folder {out.parent}: {up} is not a folder")
            if len(os.fsencode(out.name)) > 255:
                raise pipeline.IOFailed(f"{out.name[:40]}...: file name too long (more than 255 bytes)")
            return out
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise pipeline.IOFailed(f"{out.name}: cannot make the folder {out.parent}: {exc.strerror or exc}") from None
    return _checked(paths.check_target, out).resolve()


def print_report(summary: str, warnings) -> None:
    """What the operators report, on the command line: the warnings, the
    notes, and the summary last."""
    for w in warnings:
        print("warning:", w)
    pipeline.print_notes(warnings)
    print(summary)


def _save_blend(path) -> None:
    out = _output(path)
    try:
        with report.quiet():        # Blender's own "Info: Saved as" line
            bpy.ops.wm.save_as_mainfile(filepath=str(out))
    except RuntimeError as err:
        raise pipeline.IOFailed(f"{out.name}: cannot save ({str(err).strip().splitlines()[-1]})") from None
    print(f"wrote {out}")


def cmd_import(args) -> int:
    try:
        _output(args.output, make=False)
        import_files(args)
        _save_blend(args.output)
    except pipeline.IOFailed as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    return 0


def _reference(fmt, args, layers: bool) -> Scene:
    """A fresh parse of the files (never read back from Blender), with the
    command line's options: the model and, for a layer stack (``layers``,
    as :func:`import_files` decided), each animation read onto it as a
    layer, as the import read them."""
    axes = _axes(fmt, args)
    model_options, clip_options = scene_options(fmt, args), _given(fmt.anim_import_options, args)
    given = _options(fmt, args)[1]
    playback, weight = given.get(import_options.PLAYBACK.id), given.get(import_options.WEIGHT.id, 1.0)
    if not layers and (fmt.anim_suffixes or not args.animations):
        return fmt.read_scene([args.model, *args.animations], axes=axes, **model_options)
    reference = fmt.read_scene([args.model], axes=axes, **model_options)
    if not layers:     # a model file's animations, onto it
        reference.clips += fmt.read_clips(reference.skeleton, reference.source.axes, args.animations, **clip_options)
        return reference
    clips = []
    for i, p in enumerate(args.animations):
        clips += fmt.read_clips(reference.skeleton, reference.source.axes, [p], playback=playback or "MERGEABLE",
                                weight=float(args.weights[i]) if args.weights else weight, **clip_options)
    for p in args.dominant:
        clips += fmt.read_clips(reference.skeleton, reference.source.axes, [p], playback="DOMINANT",
                                **clip_options)
    reference.clips = clips
    return reference


def _frames(clips, fps: float) -> np.ndarray:
    """Scene frames to check: from 0 (or the first clip frame before it) to
    the end of the longest clip and, for clips that loop, one loop more
    (the wrap and the frames after it)."""
    start = min(min(np.floor(c.frame_range(fps)[0]) for c in clips), 0.0)
    end = max(c.frame_range(fps)[1] for c in clips)
    loops = [anim_place.loop_range(c, fps) for c in clips]
    more = max([r[1] - r[0] + 1.0 for r in loops if r is not None] + [0.0])
    return np.arange(start, np.ceil(end - 1e-6) + more + 1.0)


def verify_import(fmt, built, layered: bool, args) -> tuple[list, verify.Report]:
    """Tables of Blender's deformation against `scene.evaluate` on a fresh parse:
    one for a layer stack, else one per clip at every frame it spans and,
    for a clip that loops, one loop more (the default pose when there is
    none). Returns ([(title, report)], total)."""
    try:
        reference = _reference(fmt, args, layered)
    except (FormatError, SceneError) as err:
        raise pipeline.IOFailed(str(err)) from None
    if not built.baked and not any(c.sampler is not None for c in reference.clips):
        for c in reference.clips:      # file keys: Blender interpolates quaternions per component
            c.rotation_mode = "nlerp"
    if not _options(fmt, args)[0].key_every_frame:      # the file's keys, as Blender interpolates them (per
        for c in reference.clips:      # component), unless the clip's sampler keys what Blender cannot (RiTE)
            if not hasattr(c.sampler, "linear_keys"):
                c.sampler = None
                c.rotation_mode = "nlerp"
    scene = bpy.context.scene
    fps = scene.render.fps / scene.render.fps_base
    parts = []
    if reference.clips and layered:
        frames = _frames(reference.clips, fps)
        parts.append(("layer stack", verify.verify(bpy.context, built.meshes, reference, reference.clips, frames,
                                                   args.tolerance, normals=True, counted=counted)))
    elif reference.clips and built.actions:
        for (action, slot, _), clip in zip(built.actions, reference.clips):
            fcurves.assign_action(built.armature, action, slot)
            frames = _frames([clip], fps)
            rep = verify.verify(bpy.context, built.meshes, reference, clip, frames, args.tolerance, normals=True,
                                counted=counted)
            parts.append((f"{clip.name!r}: frames {frames[0]:g}-{frames[-1]:g}", rep))
        action, slot, _ = built.actions[0]
        fcurves.assign_action(built.armature, action, slot)
        scene.frame_set(scene.frame_start)
    else:
        parts.append(("default pose (no animation)",
                      verify.verify(bpy.context, built.meshes, reference, None, [0.0], args.tolerance,
                                    normals=True, counted=counted)))
    first = parts[0][1]
    return parts, verify.Report([f for _, r in parts for f in r.frames], first.size, first.tolerance)


def cmd_verify(args) -> int:
    if args.report:         # before the work: a report that cannot be written is a bad option
        try:
            Path(args.report).mkdir(parents=True, exist_ok=True)
        except OSError as err:
            print(f"error: {args.report}: cannot make the report folder ({err.strerror or err})", file=sys.stderr)
            return 2
    try:
        for out in (args.blend, args.render):
            if out:
                _output(out, make=False)
        fmt, built, layered = import_files(args)
    except pipeline.IOFailed as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    try:
        parts, total = verify_import(fmt, built, layered, args)
    except pipeline.IOFailed as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    for title, rep in parts:
        if args.frames:
            print(title)
            print(rep.table())
        print(rep.summary(title))
        if args.frames and rep.normal_deviation is not None:     # information (the report shows it too)
            print(rep.normal_deviation.line())
    print(total.verdict())
    if args.blend:
        try:
            _save_blend(args.blend)
        except pipeline.IOFailed as err:
            print(f"error: {err}", file=sys.stderr)
            return 2
    if args.render:
        from ..operators import render

        with report.quiet():
            render.render_poses(bpy.context, Path(args.render), built.armature,
                                [f.frame for f in parts[0][1].frames])
        print(f"wrote {Path(args.render).resolve()}")
    if args.report:
        opts, given = _options(fmt, args)
        shared = {**vars(opts), **given}
        del shared["self_check"]
        header = report.facts(args, fmt, total, {**shared, **_given(fmt.import_options, args)})
        try:
            page = report.write_report(bpy.context, Path(args.report), f"verify {Path(args.model).name}", parts,
                                       total, built, header, progress=Progress)
        except (OSError, FormatError) as err:
            print(f"error: {args.report}: cannot write the report ({getattr(err, 'strerror', None) or err})",
                  file=sys.stderr)
            return 2
        print(f"wrote {page}")
    return 0 if total.ok else 1


def cmd_export(args) -> int:
    _register()
    src = Path(args.blend)
    try:
        fmt = for_path(args.output, sniff=False)
    except UnknownFormat as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    try:
        _checked(lambda p: paths.check_input(p, max_bytes=None), src)     # Blender reads it: no size limit
        _checked(paths.check_target, Path(args.output).absolute())
    except pipeline.IOFailed as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    try:
        bpy.ops.wm.open_mainfile(filepath=str(src.resolve()))
    except RuntimeError as err:
        print(f"error: {src.name}: not a readable .blend file ({str(err).strip().splitlines()[-1]})",
              file=sys.stderr)
        return 2
    try:
        _report_unused(fmt, args, fmt.export_options + export_options.OPTIONS)
        shared = {**pipeline.shared_values(None), **_given(export_options.OPTIONS, args)}
        written, warnings = pipeline.save(bpy.context, fmt, str(Path(args.output).resolve()), **shared,
                                          **_given(fmt.export_options, args))
    except pipeline.IOFailed as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print_report(pipeline.summary("Exported " + ", ".join(Path(p).name for p in written), warnings), warnings)
    for p in written:
        print(f"wrote {p}")
    return 0
