# SPDX-License-Identifier: GPL-3.0-or-later
"""The import options every format shares, as option specs
(:class:`.options.Option`): the one list from which come the import
operators' properties and panel sections (``operators/ops.py``), the
builder's options (:class:`ImportOptions`) and the command line's flags of
``import`` and ``verify`` (:func:`add_flags`, :func:`chosen`).

:data:`MODEL` are File > Import's options for a model, :data:`ANIM` those
for animation files onto an armature. A format changes their defaults in
its ``options.IMPORT_DEFAULTS`` (:func:`for_format`); its default axes are
its adapter's ``default_axes()`` (``Format.default_forward_up``).
"""
from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

from ..scene.axes import AXES
from .options import MANUAL_ORIENTATION, Option, given

# ---------------------------------------------------------------------------
# the specs (panel order: the order the panels first appear in)

SCALE = Option("global_scale", "Scale", "Scale the model (files are in their author's units)", 1.0,
               min=1e-6, max=1e6, panel="Transform", flags=("--scale",))
#: Forward/Up: the default is the format's (its adapter's ``default_axes()``); the operators
#: draw them with Blender's ``orientation_helper``, which keeps the two axes apart
FORWARD = Option("axis_forward", "Forward",
                 "Which axis of the file becomes Blender's forward, +Y (into the screen in Front view: a "
                 "model made facing the opposite axis faces you there)", "-Z",
                 items=tuple((a, f"{a} Forward", "") for a in AXES), panel="Transform", flags=("--forward",),
                 enabled_by=MANUAL_ORIENTATION.id)
UP = Option("axis_up", "Up", "Which axis of the file points up (Blender's Z)", "Y",
            items=tuple((a, f"{a} Up", "") for a in AXES), panel="Transform", flags=("--up",),
            enabled_by=MANUAL_ORIENTATION.id)
BONE_DIRECTION = Option(
    "bone_direction", "Bone Direction", "Which way bones point (display and posing only: deformation is the same)",
    "CHILDREN",
    items=(("FILE", "Keep File Axes", "Each bone's axes are its joint's axes in the file"),
           ("CHILDREN", "Point at Children", "Bones point at their child (a leaf continues its parent); "
                                            "deformation and animation stay exact")),
    panel="Armature")
EVERY_JOINT_BONE = Option(
    "every_joint_bone", "All Joints as Bones",
    "Make a bone of every joint (off: only joints that deform or hold meshes, animated joints, and their parents)",
    False, panel="Armature", old_flags=("--all-joints",))
REST_FROM = Option(
    "rest_from", "Rest Pose", "Which pose the armature's rest pose is", "BIND",
    items=(("BIND", "Bind Pose", "Rest pose = the pose the skin was bound in"),
           ("DEFAULT", "Default Pose", "Rest pose = the pose the file shows without animation")),
    panel="Armature")
IMPORT_ANIMATIONS = Option("import_animations", "Animations",
                           "One action per animation (NLA tracks, the first active)", True, panel="Animation",
                           flags=("--animations",))
KEY_EVERY_FRAME = Option(
    "key_every_frame", "Key Every Frame",
    "Key the file's exact playback wherever Blender's interpolation would miss it at a frame. Off: the file's "
    "keys; RiTE also keys every frame between keys Blender would interpolate differently (more than 36 degrees "
    "apart, or through the loop's wrap): the same poses at every frame. DirectX keeps only its keys: Blender "
    "interpolates them component by component where DirectX turns at a constant speed, up to 0.03 degrees off "
    "between keys 30 degrees apart, 0.9 at 90",
    True, panel="Animation", enabled_by="import_animations", old_flags=("--bake",), old_off_flags=("--keys-only",))
SET_FRAME_RANGE = Option("set_frame_range", "Set Frame Range",
                         "Set the scene's start and end frames to the animations'", True, panel="Animation",
                         enabled_by="import_animations")
PACK_IMAGES = Option("pack_images", "Pack Images", "Pack the textures found into the .blend file", False,
                     panel="Include")
PLAYBACK = Option(
    "playback", "Playback",
    "How the animations play together", "ACTION",
    items=(("ACTION", "Active Action", "The (first) animation becomes the armature's action"),
           ("MERGEABLE", "Mergeable (NLA)", "An NLA track mixed by weight with the other mergeable ones"),
           ("DOMINANT", "Dominant (NLA)", "An NLA track overriding the joints it animates")),
    panel="Animation")
WEIGHT = Option("weight", "Weight", "Weight of a mergeable animation in the mix", 1.0, min=0.0, max=1.0,
                panel="Animation")

#: File > Import of a model (``import_scene.<format>``)
MODEL = (SCALE, FORWARD, UP, BONE_DIRECTION, EVERY_JOINT_BONE, REST_FROM, IMPORT_ANIMATIONS, KEY_EVERY_FRAME,
         SET_FRAME_RANGE, PACK_IMAGES)
#: File > Import of animation files onto the active armature (``import_anim.<format>``)
ANIM = (PLAYBACK, WEIGHT, KEY_EVERY_FRAME, SET_FRAME_RANGE)
#: every shared import option once
ALL = tuple({s.id: s for s in MODEL + ANIM}.values())
#: the options that are the axes (an :class:`..scene.AxisConversion`, not :class:`ImportOptions`)
AXIS_IDS = (SCALE.id, FORWARD.id, UP.id)
#: panels drawn closed
CLOSED_PANELS = ("Include",)


def _default(spec: Option) -> Any:
    return spec.default


@dataclass
class ImportOptions:
    """What the builder (``operators/builder.py``) takes: the values of the
    shared model import options other than the axes (a test checks that
    the fields are :data:`MODEL`'s ids)."""

    bone_direction: str = _default(BONE_DIRECTION)       # "FILE": bones keep the joints' axes
    every_joint_bone: bool = _default(EVERY_JOINT_BONE)
    rest_from: str = _default(REST_FROM)                 # "DEFAULT": rest from the default pose
    import_animations: bool = _default(IMPORT_ANIMATIONS)
    key_every_frame: bool = _default(KEY_EVERY_FRAME)
    set_frame_range: bool = _default(SET_FRAME_RANGE)
    pack_images: bool = _default(PACK_IMAGES)
    #: not an option: compare Blender's default pose with the core's evaluation (``selfcheck``)
    self_check: bool = True

    @classmethod
    def of(cls, values, fmt=None) -> ImportOptions:
        """The options from ``values`` (a dict, or an object with the options
        as attributes: an operator), missing ones at ``fmt``'s defaults."""
        defaults = format_defaults(fmt)
        get = values.get if isinstance(values, dict) else (lambda k, d: getattr(values, k, d))
        return cls(**{f.name: get(f.name, defaults.get(f.name, getattr(cls, f.name))) for f in fields(cls)})


def format_defaults(fmt) -> dict:
    """``fmt``'s defaults for the shared options (its ``IMPORT_DEFAULTS``; none for None)."""
    return dict(fmt.import_defaults) if fmt is not None else {}


def for_format(specs, fmt) -> tuple[Option, ...]:
    """``specs`` with ``fmt``'s defaults: its ``IMPORT_DEFAULTS`` and its default axes."""
    defaults = format_defaults(fmt)
    defaults[FORWARD.id], defaults[UP.id] = fmt.default_forward_up
    return tuple(replace(s, default=defaults[s.id]) if s.id in defaults else s for s in specs)


def check_defaults(fmt) -> None:
    """A format's ``IMPORT_DEFAULTS`` name shared options other than the axes
    (ValueError otherwise: the default axes are the adapter's ``default_axes()``)."""
    _ = fmt.default_forward_up      # ValueError for default axes that are no Forward/Up choice
    by_id = {s.id: s for s in ALL}
    for k, v in format_defaults(fmt).items():
        if k in (FORWARD.id, UP.id):
            raise ValueError(f"format {fmt.id!r}: IMPORT_DEFAULTS[{k!r}]: a format's default axes are its "
                             f"adapter's default_axes() (docs/adapter-contract.md)")
        if k not in by_id:
            raise ValueError(f"format {fmt.id!r}: IMPORT_DEFAULTS names {k!r}, not a shared import option "
                             f"(they are: {', '.join(by_id)})")
        by_id[k].value(v, f"format {fmt.id!r}: IMPORT_DEFAULTS[{k!r}]")


# ---------------------------------------------------------------------------
# the command line

def sources(formats) -> list[tuple[str, tuple[Option, ...]]]:
    """The shared import options with each readable format's defaults, for
    :func:`.options.add_flags` (one flag each; its help names the defaults
    that differ between formats)."""
    return [(f.label, for_format(ALL, f)) for f in formats if not f.writes_only]


def chosen(fmt, args) -> tuple[ImportOptions, dict]:
    """The command line's shared import options (``args`` parsed with the
    flags of :func:`sources`) for a file of ``fmt``: the builder's options
    (missing ones at the format's defaults) and the values given of the
    other options (the axes, Playback, Weight), by id. A bad value raises
    :class:`.options.OptionError` naming its flag."""
    values = given(args, ALL)
    opts = ImportOptions.of(values, fmt)
    return opts, {k: v for k, v in values.items() if not hasattr(opts, k)}
