# SPDX-License-Identifier: GPL-3.0-or-later
"""Import and export through the scene model, for every registered format
(``io.formats``): read -> scene -> builder, and extractor -> scene -> write.
The operators and the command line are thin layers over these functions
(as Blender's io_anim_bvh is over its ``load``).

Every failure is an :class:`IOFailed` with a one-line, user-facing message
naming the file and where (a bug: "internal error", with the traceback on
stderr); a failed import leaves the scene as it was
(:class:`~.rollback.Rollback`), a failed export leaves any existing file
untouched (the writers write a temporary file and rename it).
"""
from __future__ import annotations

import re
import sys
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.skeleton import SkeletonError
from ..io.errors import AnimationsOnly, FormatError, Warnings, note
from ..io.formats import Format, UnknownFormat
from ..io.import_options import ImportOptions
from ..scene import AxisConversion, SceneError
from ..scene.validate import check_import_size, validate
from . import anim_build, anim_extract, armature_extract, bone_axes, builder, extractor, metadata, own_binds
from .built import Built
from .extractor import ExtractError
from .rollback import Rollback


class IOFailed(Exception):
    """An import or export that did not happen (message is user-facing)."""


@dataclass
class Imported:
    path: str
    built: Built | None = None
    error: str | None = None
    warnings: list[str] = field(default_factory=list)


#: What a bad file, a bad target or an impossible request raises: one line
#: naming the file for the user. Anything else is a bug in this extension.
FILE_PROBLEMS = (FormatError, SceneError, SkeletonError, UnknownFormat, ExtractError, OSError, MemoryError)


def _fail(err: Exception, path) -> IOFailed:
    """The user's one line for ``err`` raised on ``path``. An exception that
    is not a file problem (``FILE_PROBLEMS``) is a bug: "internal error" for
    the user, and its traceback on stderr (Blender's console) for a report.
    Call it inside the ``except`` clause (the traceback is the one being
    handled)."""
    name = Path(path).name
    if isinstance(err, IOFailed):
        return err
    if isinstance(err, FormatError):
        return IOFailed(str(err))
    if isinstance(err, MemoryError):
        return IOFailed(f"{name}: out of memory (absurd sizes in the file?)")
    if isinstance(err, OSError):
        return IOFailed(f"{name}: {err.strerror or err}")
    if isinstance(err, FILE_PROBLEMS):
        return IOFailed(f"{name}: {err}")
    print(f"legacy_skin_io: internal error on {path}:\n{traceback.format_exc()}", file=sys.stderr)
    return IOFailed(f"{name}: internal error ({type(err).__name__}: {err}); please report it with the file "
                    f"(the traceback is in the console)")


def scene_fps(context) -> float:
    return context.scene.render.fps / context.scene.render.fps_base


#: What shows progress instead of Blender's window: the command line puts an
#: ``cli.progress.Progress`` (the window manager's progress_* names) here.
console: Any = None


def _progress(context):
    if console is not None:
        return console
    wm = getattr(context, "window_manager", None)
    return wm if wm is not None and getattr(context, "window", None) is not None else None


def load(context, fmt: Format, paths: list[str], *, axes: AxisConversion | None = None,
         options: ImportOptions | None = None, reader_options: dict | None = None) -> Built:
    """Read ``paths`` (one model file and, for formats that have them, its
    animation files) and build them. Raises IOFailed; the scene is then
    unchanged. ``options``: the shared import options (default: the
    format's defaults)."""
    options = options if options is not None else ImportOptions.of({}, fmt)
    warnings = Warnings()
    first = paths[0]
    try:
        scene = fmt.read_scene(paths, axes=axes, warnings=warnings, **(reader_options or {}))
    except AnimationsOnly as err:
        raise IOFailed(f"{err}; {animation_import_hint(fmt, first)}") from None
    except Exception as err:
        raise _fail(err, first) from None
    if not scene.meshes and scene.skeleton is None:
        raise IOFailed(f"{Path(first).name}: no mesh and no skeleton to import")
    orientation_note(scene, warnings)
    try:
        check_import_size(scene)
        warnings.extend(validate(scene, scene_fps(context)))
    except Exception as err:
        raise _fail(err, first) from None
    wm = _progress(context)
    if wm:
        wm.progress_begin(0, 3)
    try:
        with Rollback(context):
            built = builder.build(context, scene, options, progress=wm.progress_update if wm else None)
    except Exception as err:        # rolled back; a file problem or a bug, as _fail tells
        raise _fail(err, first) from None
    finally:
        if wm:
            wm.progress_end()
    warnings.extend(built.warnings)
    time_base_note(built, context, warnings)
    if built.self_check is not None and built.self_check.error > SELF_CHECK * built.self_check.size:
        c = built.self_check
        warnings.append(f"self-check: Blender shows mesh {c.mesh!r} up to {c.error / c.size:.1e} of the model "
                        f"size away from the file's default pose (more than {SELF_CHECK:g}); please report it "
                        f"with the file")
    built.warnings = warnings
    return built


def animation_import_hint(fmt: Format, path: str) -> str:
    """Where a file of animations alone imports: onto the armature of its
    model, in Blender and on the command line."""
    if not fmt.animation_files:
        return "this format's animations import with their model only"
    model = f"MODEL{fmt.model_suffixes[0]}"
    return (f"import {model} first, then this file onto its armature with File > Import > {fmt.anim_label} "
            f"({', '.join(fmt.animation_files)}); on the command line: import {model} {Path(path).name} "
            f"-o OUT.blend")


#: the self-check's tolerance, relative to the model size (as ``verify``'s)
SELF_CHECK = 1e-5


def orientation_note(scene, warnings) -> None:
    """How up was decided (console only): the evidence, and the manual
    Forward/Up that give the same."""
    o = scene.source.orientation
    if o is not None and o.automatic:
        note(warnings, o.note())


def time_base_note(built, context, warnings) -> None:
    """Which time base the clips' keys were read with, and why (console
    only: the summary names the time base and the length)."""
    said = anim_build.time_base_note([c for _, _, c in built.actions], scene_fps(context))
    if said:
        note(warnings, said)


def print_notes(warnings) -> None:
    """The notes of ``warnings`` (findings that need no action) on the console."""
    for n in getattr(warnings, "notes", ()):
        print("legacy_skin_io: note:", n)


def _count(n: int, one: str, many: str = "") -> str:
    return f"{n} {one if n == 1 else (many or one + 's')}"


def summary(head: str, warnings, details: list[str] | None = None) -> str:
    """The one line the user sees (Blender's status bar, the command
    line's last line): ``head``, ``details`` in parentheses, and the
    number of warnings with the first one."""
    parts = [", ".join(details)] if details else []
    parts += getattr(warnings, "results", [])           # what the user needs of an export (frame ranges)
    line = head + (f" ({'; '.join(parts)})" if parts else "")
    n = len(warnings)
    if n == 1:
        line += f"; 1 warning: {warnings[0]}"
    elif n:
        line += f"; {n} warnings, the first: {warnings[0]}"
    return line


def _time_bases(clips, fps: float) -> list[str]:
    """The time base(s) the clips' keys were read with and the longest
    clip's length in frames, for a summary."""
    if not clips:
        return []
    rates = sorted({c.ticks_per_second for c in clips if c.ticks_per_second is not None})
    out = [f"{r:g} ticks/s" for r in rates]
    if any(c.ticks_per_second is None and c.extras.get("time_base") for c in clips):
        out.append("one tick per frame")
    longest = max(f1 - f0 for f0, f1 in (c.frame_range(fps) for c in clips))
    out.append(f"{'longest ' if len(clips) > 1 else ''}{longest:.4g} frames")
    return out


def imported_summary(path: str, built: Built, warnings, fps: float = 24.0) -> str:
    """E.g. "Imported tiny_4anim.x: 1 mesh, 35 bones, 4 actions (Z up, 4800
    ticks/s, longest 317.6 frames); 1 warning: ..."."""
    parts = [_count(len(built.meshes), "mesh", "meshes")]
    if len(built.bones):
        parts.append(_count(len(built.bones), "bone"))
    if built.empties:
        parts.append(_count(len(built.empties), "empty", "empties"))
    if built.actions:
        parts.append(_count(len(built.actions), "action"))
    o = built.scene.source.orientation
    details = [o.phrase()] if o is not None else []
    details += _time_bases([c for _, _, c in built.actions], fps)
    return summary(f"Imported {Path(path).name}: {', '.join(parts)}", warnings, details)


def animations_summary(built: Built, warnings, fps: float = 24.0) -> str:
    """E.g. "Imported 2 animations onto tiny_rig: Walk, Jog (4800 ticks/s, longest 40 frames)"."""
    names = [a.name for a, _, _ in built.actions]
    head = f"Imported {_count(len(names), 'animation')} onto {built.armature.name}: {', '.join(names[:8])}"
    return summary(head + (" ..." if len(names) > 8 else ""), warnings,
                   _time_bases([c for _, _, c in built.actions], fps))


def load_many(context, fmt: Format, paths: list[str], **kw) -> list[Imported]:
    """Each model file on its own (animation files of the format go with the
    first model): a broken file is reported and rolled back, the others are
    still imported, as Blender's glTF and FBX importers do."""
    models = [p for p in paths if Path(p).suffix.lower() not in fmt.anim_suffixes]
    anims = [p for p in paths if Path(p).suffix.lower() in fmt.anim_suffixes]
    if not models:
        return [Imported(paths[0] if paths else "", None,
                         f"no model file ({', '.join(fmt.model_suffixes)}) among the files: animations "
                         f"import onto an armature with File > Import > {fmt.anim_label}")]
    out = []
    for i, p in enumerate(models):
        try:
            built = load(context, fmt, [p] + (anims if i == 0 else []), **kw)
            out.append(Imported(p, built, None, built.warnings))
        except IOFailed as err:
            out.append(Imported(p, None, str(err)))
    return out


def load_animations(context, fmt: Format, paths: list[str], *, armature, playback: str = "ACTION",
                    weight: float = 1.0, key_every_frame: bool = True, set_frame_range: bool = True,
                    reader_options: dict | None = None) -> Built:
    """Animation files of ``fmt`` onto an existing armature, one action each."""
    if armature is None:
        raise IOFailed("no armature to animate: select the armature (import a model first)")
    try:
        r = armature_extract.rig_of(armature)
    except Exception as err:
        raise _fail(err, armature.name) from None
    warnings = Warnings()
    # the files' own space: the rig's axes when it came from this format, else the format's defaults
    axes = r.scene.writer_axes(fmt.id, fmt.default_axes())
    clips = []
    for p in paths:
        try:
            clips += fmt.read_clips(r.skeleton, axes, [p], playback=playback, weight=weight, warnings=warnings,
                                    **(reader_options or {}))
        except Exception as err:
            raise _fail(err, p) from None
    try:
        r.scene.clips = clips
        validate(r.scene, scene_fps(context), bones=len(r.bones))
    except Exception as err:
        raise _fail(err, paths[0]) from None
    finally:
        r.scene.clips = []
    try:        # bones the animation needs otherwise (disconnected, turned to their joints' axes)
        r = bone_axes.prepare(context, r, clips, warnings)
    except Exception as err:
        raise _fail(err, armature.name) from None
    wm = _progress(context)
    try:
        with Rollback(context, armature):
            built = builder.add_clips(context, armature, r.scene, clips, bone_names=r.bone_names, rest=r.rest,
                                      bones=r.bones, key_every_frame=key_every_frame, set_frame_range=set_frame_range)
    except Exception as err:
        raise _fail(err, paths[0]) from None
    finally:
        if wm:
            wm.progress_end()
    warnings.extend(built.warnings)
    time_base_note(built, context, warnings)
    built.warnings = warnings
    return built


# ---------------------------------------------------------------------------
# export

def export_objects(context, *, use_selection=False, use_visible=False, use_active_collection=False,
                   collection: str = "") -> list:
    """The objects an export covers, as FBX and glTF choose them."""
    if collection:
        import bpy

        coll = bpy.data.collections.get(collection)
        if coll is None:
            raise IOFailed(f"collection {collection!r} not found")
        objs = list(coll.all_objects)
    elif use_active_collection:
        objs = list(context.view_layer.active_layer_collection.collection.all_objects)
    else:
        objs = list(context.view_layer.objects)
    if use_selection:
        objs = [o for o in objs if o.select_get()]
    if use_visible:
        objs = [o for o in objs if o.visible_get()]
    return objs


def choose_armature(objs: list, context):
    # a mesh's own binds (operators.own_binds) are part of the rig they follow
    arms = [o for o in objs if o.type == "ARMATURE" and not own_binds.follows(o, o.parent)]
    if len(arms) == 1:
        return arms[0]
    if not arms:
        owners = {m.object for o in objs if o.type == "MESH" for m in o.modifiers
                  if m.type == "ARMATURE" and m.object is not None}
        return next(iter(owners)) if len(owners) == 1 else None
    active = context.view_layer.objects.active
    if active in arms:
        return active
    raise IOFailed("several armatures: select the one to export (or export the selection)")


def shared_values(source) -> dict:
    """The values of the export options every format shares
    (``io.export_options``) on an operator or parsed arguments (missing or
    None: the option's default)."""
    from ..io import export_options

    out = {}
    for spec in export_options.OPTIONS:
        v = getattr(source, spec.id, None)
        out[spec.id] = spec.default if v is None else v
    return out


def save(context, fmt: Format, path: str, *, objects=None, axes: AxisConversion | None = None,
         apply_modifiers: bool = True, export_animations: bool = True, actions: str = "OWNED",
         bake_pose: bool = True, path_mode: str = "AUTO", **writer_options) -> tuple[list[str], list[str]]:
    """Export ``objects`` (default: the view layer's) as ``fmt``'s
    format (the shared options: ``io.export_options``). Returns (written
    paths, warnings)."""
    from ..io import export_options

    warnings = Warnings()
    objs = list(context.view_layer.objects) if objects is None else list(objects)
    arm = choose_armature(objs, context)
    meshes = [o for o in objs if o.type == "MESH"]
    if arm is not None:
        for o in context.view_layer.objects:          # the armature's own meshes come with it
            if o.type == "MESH" and o not in meshes and (
                    o.parent == arm or any(m.type == "ARMATURE" and m.object == arm for m in o.modifiers)):
                meshes.append(o)
    try:
        scene = extractor.scene_of(context, armature=arm, objects=meshes, apply_modifiers=apply_modifiers,
                                   animations=export_animations, actions=actions, bake_pose=bake_pose,
                                   warnings=warnings)
        validate(scene, scene_fps(context))
        copies = export_options.texture_paths(scene, path_mode, path, warnings=warnings)
        fps = scene_fps(context)
        written = fmt.write_scene(scene, path, warnings=warnings, axes=axes, fps=fps, **writer_options)
        export_options.copy_textures(copies, warnings)
    except ExtractError as err:
        raise IOFailed(str(err)) from None
    except Exception as err:
        raise _fail(err, path) from None
    return written, warnings


def _file_part(name: str) -> str:
    """A name usable in a file name on every system."""
    out = re.sub(r'[\\/:*?"<>|\x00-\x1f]+', "_", name).strip(" .")
    return out or "action"


def chosen_actions(armature) -> list[tuple]:
    """The (action, slot) pairs an animation export writes: the active
    action; else the actions of the selected NLA tracks; else of the
    unmuted ones; else of all of them (never a layer stack's mix base or
    signed copies, ``anim_place``)."""
    ad = armature.animation_data
    if ad is None:
        return []
    if ad.action is not None:
        return [(ad.action, getattr(ad, "action_slot", None))]
    tracks = list(ad.nla_tracks)
    for pick in ([t for t in tracks if t.select], [t for t in tracks if not t.mute], tracks):
        out: list[tuple] = []
        for t in pick:
            for st in t.strips:
                if (st.action is not None and st.action not in [a for a, _ in out]
                        and metadata.load(st.action, metadata.MIX_KEY) is None):   # not a layer stack's own
                    out.append((st.action, getattr(st, "action_slot", None)))
        if out:
            return out
    return []


def save_animation(context, fmt: Format, path: str, *, armature, action=None, bake_pose: bool = True,
                   axes: AxisConversion | None = None) -> tuple[list[str], list[str]]:
    """The armature's active action (or ``action``) as one animation file of
    ``fmt``; a rig animated by NLA tracks only: the chosen tracks'
    (:func:`chosen_actions`), one file each (``<stem>_<action>`` beside
    ``path`` when there are several)."""
    if armature is None:
        raise IOFailed("select the armature whose action to export")
    pairs = [(action, None)] if action is not None else chosen_actions(armature)
    if not pairs:
        raise IOFailed(f"{armature.name} has no action and no NLA track to export (make the action to export "
                       f"active)")
    warnings = Warnings()
    context.view_layer.update()
    written: list[str] = []
    target = Path(path)
    try:
        r = armature_extract.rig_of(armature, placement=True)
        # the default pose the model's export writes (its animation files play on that model)
        anim_extract.hold_unkeyed_pose(r, anim_extract.rig_actions(armature, r.bone_names.values()))
        fps = scene_fps(context)
        for act, slot in pairs:
            clip = anim_extract.clip_of(context, act, r, fps, warnings, slot=slot, bake_pose=bake_pose)
            if clip is None:
                raise IOFailed(f"{act.name} animates no bone of {armature.name}")
            r.scene.clips = [clip]
            validate(r.scene, fps)
            out = target if len(pairs) == 1 else target.with_name(f"{target.stem}_{_file_part(act.name)}"
                                                                  f"{target.suffix}")
            written += fmt.write_animation(r.scene, clip, str(out), warnings=warnings, fps=fps, axes=axes)
    except Exception as err:
        raise _fail(err, path) from None
    return written, warnings
