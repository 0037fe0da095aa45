# SPDX-License-Identifier: GPL-3.0-or-later
"""File > Import / Export operators, menu entries and drag-and-drop
handlers, generated for every format of the registry (``io.formats``).

For a format with id ``f``: ``import_scene.f`` (model files, several at
once), ``import_anim.f`` (its animation files onto the active armature, if
the format has any), ``export_scene.f``; FileHandlers for the 3D viewport and
the Outliner. Options are drawn in collapsible sections (Include, Transform,
Armature, Animation) as Blender's FBX add-on draws them.
"""

import os

import bpy
from bpy.props import BoolProperty, CollectionProperty, EnumProperty, FloatProperty, IntProperty, StringProperty
from bpy_extras.io_utils import ExportHelper, ImportHelper, orientation_helper

from ..io import export_options, formats, import_options
from ..io.export_options import BAKE_POSE
from ..io.formats import FORMATS, Format


def report(op, summary: str, warnings) -> None:
    """What an import or export tells the user: every warning (one per
    cause) in the Info log, the notes that need no action on the console,
    and last the summary, which Blender's status bar shows: it counts the
    warnings and quotes the first (``pipeline.summary``)."""
    from . import pipeline

    for w in warnings:
        op.report({"WARNING"}, w)
    pipeline.print_notes(warnings)
    op.report({"INFO"}, summary)


def exported(op, written: list[str], warnings) -> set[str]:
    """An export's report: its warnings, then the files written."""
    from . import pipeline

    report(op, pipeline.summary("Exported " + ", ".join(os.path.basename(p) for p in written), warnings),
           warnings)
    return {"FINISHED"}


def selected_paths(op) -> list[str]:
    if getattr(op, "files", None) and op.files and op.files[0].name:
        return [os.path.join(op.directory, f.name) for f in op.files]
    return [op.filepath]


def _axes(op, fmt: Format, scale: float | None = None):
    """The operator's Forward/Up/Scale (or ``scale``); a bad combination
    (parallel axes, a scale that is not a positive number: a script can set
    NaN) is IOFailed."""
    from .pipeline import IOFailed

    try:
        return fmt.axes(op.axis_forward, op.axis_up, op.global_scale if scale is None else scale)
    except ValueError as err:
        raise IOFailed(str(err)) from None


def _format_values(op) -> dict:
    """The operator's values of the format's own options (a file path made
    absolute: Blender spells a path under the .blend's folder "//...")."""
    return {n: bpy.path.abspath(v) if n in op.path_options and v else v
            for n, v in ((n, getattr(op, n)) for n in op.format_options)}


def draw_sections(op, sections) -> None:
    """Options in collapsible sections, as Blender's FBX add-on draws them:
    (title, property names, the switch that enables the names marked "*",
    closed by default)."""
    layout = op.layout
    layout.use_property_split = True
    layout.use_property_decorate = False
    for title, names, switch, closed in sections:
        if not names:
            continue
        header, body = layout.panel(f"{op.bl_idname}_{title.lower()}", default_closed=closed)
        header.label(text=title)
        if not body:
            continue
        col = body.column()
        for name in names:
            row = col
            if name.startswith("*"):
                row = col.column()
                if switch is not None and switch.startswith("!"):       # enabled while the switch is off
                    row.enabled = not bool(getattr(op, switch[1:], False))
                else:
                    # a switch the format does not offer (its option spec) leaves the names enabled
                    row.enabled = switch is None or bool(getattr(op, switch, True))
                name = name[1:]
            row.prop(op, name)


def with_format_options(sections, specs, fmt: Format) -> tuple:
    """``sections`` with the format's own options (``specs``) added to the
    section their ``panel`` names (enabled by its switch, if it has one);
    options of another panel get a section of their own. An option that is
    a section's switch (Manual Orientation) goes before the names it
    enables."""
    out = [(title, list(names), switch, closed) for title, names, switch, closed in sections]
    switches = {switch for _, _, switch, _ in out}
    for spec in specs:
        title = spec.panel or fmt.label
        sec = next((s for s in out if s[0].lower() == title.lower()), None)
        if sec is None:
            sec = (title, [], None, False)
            out.append(sec)
        names = sec[1]
        if spec.id in switches:
            names.insert(next((i for i, n in enumerate(names) if n.startswith("*")), len(names)), spec.id)
        else:
            names.append(("*" if sec[2] else "") + spec.id)
    return tuple((title, tuple(names), switch, closed) for title, names, switch, closed in out)


# ---------------------------------------------------------------------------
# import

class _FileImport(bpy.types.Operator, ImportHelper):  # type: ignore[misc]  # the stubs' invoke/check signatures differ
    """Several files at once (file browser or drag-and-drop, which shows the
    options in a popup first). Not registered itself: :func:`_operator` makes
    one per format, with the properties of the shared options (``SPECS``,
    from ``io.import_options``) and of the format's own."""

    fmt: Format
    format_options: tuple[str, ...] = ()
    path_options: frozenset[str] = frozenset()     # the format options that are file paths
    SPECS: tuple = ()
    SECTIONS: tuple = ()

    files: CollectionProperty(type=bpy.types.OperatorFileListElement, options={"HIDDEN", "SKIP_SAVE"})
    directory: StringProperty(subtype="DIR_PATH", options={"HIDDEN", "SKIP_SAVE"})

    def invoke(self, context, event):
        path = self.filepath  # type: ignore[attr-defined]  # ImportHelper's property
        if path and os.path.isfile(path):  # drag-and-drop: options popup
            return self.invoke_popup(context)
        return ImportHelper.invoke(self, context, event)

    def draw(self, context):
        draw_sections(self, self.SECTIONS)


class _ModelImport(_FileImport):
    """Shared by every format's model import (not registered itself)."""

    SPECS = import_options.MODEL

    def execute(self, context):
        from . import pipeline

        fmt = self.fmt
        try:
            axes = _axes(self, fmt)
        except pipeline.IOFailed as err:
            self.report({"ERROR"}, str(err))
            return {"CANCELLED"}
        results = pipeline.load_many(context, fmt, selected_paths(self), axes=axes,
                                     options=import_options.ImportOptions.of(self, fmt),
                                     reader_options=_format_values(self))
        ok = [r for r in results if r.built is not None]
        for r in results:
            if r.error:
                self.report({"ERROR"} if not ok else {"WARNING"}, r.error)
        for r in ok:
            assert r.built is not None
            report(self, pipeline.imported_summary(r.path, r.built, r.warnings, pipeline.scene_fps(context)),
                   r.warnings)
        return {"FINISHED"} if ok else {"CANCELLED"}


class _AnimImport(_FileImport):
    """Shared by every format's animation import (not registered itself)."""

    SPECS = import_options.ANIM

    def draw(self, context):
        # the weight applies to mergeable animations only
        weight = import_options.WEIGHT.id
        mergeable = getattr(self, import_options.PLAYBACK.id) == "MERGEABLE"
        sections = tuple((title, tuple(n for n in names if n.lstrip("*") != weight or mergeable), switch, closed)
                         for title, names, switch, closed in self.SECTIONS)
        draw_sections(self, sections)

    def execute(self, context):
        from . import pipeline

        arm = find_armature(context)
        try:
            # the shared options (io.import_options.ANIM) are load_animations' keywords
            built = pipeline.load_animations(context, self.fmt, selected_paths(self), armature=arm,
                                             reader_options=_format_values(self),
                                             **{s.id: getattr(self, s.id) for s in self.SPECS})
        except pipeline.IOFailed as err:
            self.report({"ERROR"}, str(err))
            return {"CANCELLED"}
        report(self, pipeline.animations_summary(built, built.warnings, pipeline.scene_fps(context)), built.warnings)
        return {"FINISHED"}


def find_armature(context):
    """The armature to animate: the active object (or its parent), else the
    scene's only armature; None if ambiguous."""
    obj = context.active_object
    if obj is not None and obj.type == "ARMATURE":
        return obj
    if obj is not None and obj.parent is not None and obj.parent.type == "ARMATURE":
        return obj.parent
    arms = [o for o in context.scene.objects if o.type == "ARMATURE"]
    return arms[0] if len(arms) == 1 else None


# ---------------------------------------------------------------------------
# export

class _Export(bpy.types.Operator, ExportHelper):  # type: ignore[misc]  # the stubs' invoke/check signatures differ
    fmt: Format
    format_options: tuple[str, ...] = ()
    path_options: frozenset[str] = frozenset()     # the format options that are file paths
    use_selection: BoolProperty(name="Selected Objects", default=False,
                                description="Export only the selected objects (and the armature's meshes)")
    use_visible: BoolProperty(name="Visible Objects", default=False, description="Export only visible objects")
    use_active_collection: BoolProperty(name="Active Collection", default=False,
                                        description="Export only the objects of the active collection")
    collection: StringProperty(name="Collection", default="",
                               description="Export only this collection's objects (set by Collection Exporters)")
    use_stored_axes: BoolProperty(
        name="Axes as Imported", default=True,
        description="A rig imported from this format is written back with the axes and scale it was "
                    "imported with, any other rig with the format's own (off: the Forward, Up and Scale below)")
    global_scale: FloatProperty(name="Scale", default=1.0, min=1e-6, max=1e6,
                                description="Multiply the scene's sizes by this in the file")

    SECTIONS = (("Include", ("use_selection", "use_visible", "use_active_collection", "apply_modifiers",
                             "path_mode"), None, False),
                ("Transform", ("use_stored_axes", "*global_scale", "*axis_forward", "*axis_up"), "!use_stored_axes",
                 False),
                ("Animation", ("export_animations", "*actions", "*bake_pose"), "export_animations", False))

    def draw(self, context):
        draw_sections(self, self.SECTIONS)

    def execute(self, context):
        from . import pipeline

        fmt = self.fmt
        try:
            # the file's size is the scene's times Scale (as Blender's FBX exporter scales)
            axes = None if self.use_stored_axes else _axes(self, fmt, 1.0 / self.global_scale)
            objs = pipeline.export_objects(context, use_selection=self.use_selection, use_visible=self.use_visible,
                                           use_active_collection=self.use_active_collection,
                                           collection=self.collection)
            path = self.filepath  # type: ignore[attr-defined]  # ExportHelper's property
            written, warnings = pipeline.save(context, fmt, path, objects=objs, axes=axes,
                                              **pipeline.shared_values(self), **_format_values(self))
        except pipeline.IOFailed as err:
            self.report({"ERROR"}, str(err))
            return {"CANCELLED"}
        return exported(self, written, warnings)


class _AnimExport(bpy.types.Operator, ExportHelper):  # type: ignore[misc]  # the stubs' invoke/check signatures differ
    """The active armature's action (or, animated by NLA tracks only, the
    selected tracks', else the unmuted ones', one file each)."""

    fmt: Format
    SECTIONS = (("Animation", (BAKE_POSE.id,), None, False),)

    def draw(self, context):
        draw_sections(self, self.SECTIONS)

    def execute(self, context):
        from . import pipeline

        try:
            path = self.filepath  # type: ignore[attr-defined]  # ExportHelper's property
            written, warnings = pipeline.save_animation(context, self.fmt, path,
                                                        armature=find_armature(context),
                                                        bake_pose=getattr(self, BAKE_POSE.id))
        except pipeline.IOFailed as err:
            self.report({"ERROR"}, str(err))
            return {"CANCELLED"}
        return exported(self, written, warnings)


# ---------------------------------------------------------------------------
# generation

def _oriented(cls, fmt: Format):
    """Blender's orientation_helper (Forward/Up options, kept apart) with the
    format's default axes and the specs' names and tooltips
    (``io.import_options``)."""
    forward, up = fmt.default_forward_up
    cls = orientation_helper(axis_forward=forward, axis_up=up)(cls)  # type: ignore[misc]
    for spec in (import_options.FORWARD, import_options.UP):
        prop = cls.__annotations__[spec.id]
        cls.__annotations__[spec.id] = prop.function(**{**prop.keywords, "description": spec.description})
    return cls


def _drop_poll(cls, context):
    return context.area is not None and context.area.type in ("VIEW_3D", "OUTLINER")


def _prop(spec):
    """A bpy property from a format's option spec (:class:`..io.options.Option`)."""
    kw = {"name": spec.name, "description": spec.description, "default": spec.default}
    if spec.kind == "enum":
        return EnumProperty(items=list(spec.items), **kw)
    if spec.kind == "int":
        return IntProperty(min=int(spec.min if spec.min is not None else -2**31),
                           max=int(spec.max if spec.max is not None else 2**31 - 1), **kw)
    if spec.kind == "float":
        return FloatProperty(min=spec.min if spec.min is not None else -1e30,
                             max=spec.max if spec.max is not None else 1e30, **kw)
    if spec.kind == "path":       # "//" paths under the .blend's folder allowed (made absolute: _format_values)
        return StringProperty(subtype="FILE_PATH", options={"PATH_SUPPORTS_BLEND_RELATIVE"}, **kw)
    return BoolProperty(**kw)


def spec_sections(specs) -> tuple:
    """:func:`draw_sections`' sections for option specs: one per panel, in the
    order the panels first appear, the options a switch enables marked."""
    panels: dict[str, list] = {}
    for spec in specs:
        panels.setdefault(spec.panel, []).append(spec)
    out = []
    for title, group in panels.items():
        switches = {s.enabled_by for s in group if s.enabled_by}
        assert len(switches) <= 1, f"panel {title}: options enabled by several switches"
        out.append((title, tuple(("*" if s.enabled_by else "") + s.id for s in group),
                    next(iter(switches), None), title in import_options.CLOSED_PANELS))
    return tuple(out)


def _operator(base, fmt: Format, idname: str, label: str, doc: str, suffixes: tuple[str, ...],
              specs: tuple = (), undo: bool = True):
    """An operator class for ``fmt``: ``base``'s options (its shared ``SPECS``
    at the format's defaults, drawn in their panels), the format's own
    (``specs``, drawn in the sections they name), a file filter for ``suffixes``."""
    glob = ";".join(f"*{s}" for s in suffixes)
    ann = {"filter_glob": StringProperty(default=glob + ";" + glob.upper(), options={"HIDDEN"})}
    shared = import_options.for_format(getattr(base, "SPECS", ()), fmt)
    axes = (import_options.FORWARD.id, import_options.UP.id)      # orientation_helper's (_oriented)
    for spec in shared + tuple(specs):
        if spec.id not in axes:
            ann[spec.id] = _prop(spec)
    kind, _ = idname.split(".")
    attrs = {"__doc__": doc, "bl_idname": idname, "bl_label": label,
             "bl_options": {"REGISTER", "UNDO", "PRESET"} if undo else {"REGISTER", "PRESET"},
             "filename_ext": suffixes[0], "fmt": fmt, "format_options": tuple(s.id for s in specs),
             "path_options": frozenset(s.id for s in specs if s.kind == "path"),
             "__annotations__": ann}
    if shared:
        attrs["SECTIONS"] = with_format_options(spec_sections(shared), specs, fmt)
    elif hasattr(base, "SECTIONS"):
        attrs["SECTIONS"] = with_format_options(base.SECTIONS, specs, fmt)
    return type(f"{kind.upper()}_OT_{fmt.id}", (base,), attrs)


def _shared_export_props() -> None:
    """The export options every format shares (``io.export_options``) on the export operators."""
    for spec in export_options.OPTIONS:
        _Export.__annotations__[spec.id] = _prop(spec)
    _AnimExport.__annotations__[BAKE_POSE.id] = _prop(BAKE_POSE)


_shared_export_props()


def classes_for(fmt: Format) -> list:
    imp = _operator(_ModelImport, fmt, f"import_scene.{fmt.id}", f"Import {fmt.label}",
                    f"Import {fmt.description}", fmt.model_suffixes, fmt.import_options)
    out = [_oriented(imp, fmt)]
    if fmt.animation_files:
        out.append(_operator(_AnimImport, fmt, f"import_anim.{fmt.id}", f"Import {fmt.anim_label}",
                             f"Import {fmt.anim_label} onto the active armature (matched by bone name), one action "
                             f"per animation", fmt.animation_files, fmt.anim_import_options))
    out.append(_oriented(_operator(_Export, fmt, f"export_scene.{fmt.id}", f"Export {fmt.label}",
                                   f"Export {fmt.description}", fmt.model_suffixes, fmt.export_options,
                                   undo=False), fmt))
    if fmt.anim_suffixes:
        out.append(_operator(_AnimExport, fmt, f"export_anim.{fmt.id}", f"Export {fmt.anim_label}",
                             f"Export the active armature's action as a {fmt.anim_label} file", fmt.anim_suffixes,
                             undo=False))
    out.append(type(f"IO_FH_{fmt.id}", (bpy.types.FileHandler,), {
        "bl_idname": f"IO_FH_{fmt.id}", "bl_label": fmt.label,
        "bl_import_operator": f"import_scene.{fmt.id}", "bl_export_operator": f"export_scene.{fmt.id}",
        "bl_file_extensions": ";".join(fmt.model_suffixes + tuple(s.upper() for s in fmt.model_suffixes)),
        "poll_drop": classmethod(_drop_poll)}))
    if fmt.anim_suffixes:
        out.append(type(f"IO_FH_{fmt.id}_anim", (bpy.types.FileHandler,), {
            "bl_idname": f"IO_FH_{fmt.id}_anim", "bl_label": fmt.anim_label,
            "bl_import_operator": f"import_anim.{fmt.id}",
            "bl_file_extensions": ";".join(fmt.anim_suffixes + tuple(s.upper() for s in fmt.anim_suffixes)),
            "poll_drop": classmethod(_drop_poll)}))
    return out


def menu_import(self, context):
    for fmt in FORMATS:
        if fmt.id not in _classes:
            continue
        self.layout.operator(f"import_scene.{fmt.id}", text=f"{fmt.label} ({', '.join(fmt.model_suffixes)})")
        if fmt.animation_files:
            self.layout.operator(f"import_anim.{fmt.id}",
                                 text=f"{fmt.anim_label} ({', '.join(fmt.animation_files)})")


def menu_export(self, context):
    for fmt in FORMATS:
        if fmt.id not in _classes:
            continue
        self.layout.operator(f"export_scene.{fmt.id}", text=f"{fmt.label} ({', '.join(fmt.model_suffixes)})")
        if fmt.anim_suffixes:
            self.layout.operator(f"export_anim.{fmt.id}",
                                 text=f"{fmt.anim_label} ({', '.join(fmt.anim_suffixes)})")


#: format id -> the operator and FileHandler classes registered for it
_classes: dict[str, list] = {}


def sync() -> None:
    """Operators and FileHandlers for exactly the formats of the registry:
    run on register() and whenever a format is registered or unregistered
    at run time (``io.formats.register``)."""
    ids = {f.id for f in FORMATS}
    for fid in [k for k in _classes if k not in ids]:
        for cls in reversed(_classes.pop(fid)):
            bpy.utils.unregister_class(cls)
    for fmt in FORMATS:
        if fmt.id in _classes or fmt.writes_only:      # written only: Blender's own add-on has it in Blender
            continue
        done: list = []
        try:
            for cls in classes_for(fmt):
                bpy.utils.register_class(cls)
                done.append(cls)
        except Exception:
            for cls in reversed(done):
                bpy.utils.unregister_class(cls)
            raise
        _classes[fmt.id] = done


def register():
    sync()
    formats.subscribe(sync)
    bpy.types.TOPBAR_MT_file_import.append(menu_import)
    bpy.types.TOPBAR_MT_file_export.append(menu_export)


def unregister():
    formats.unsubscribe(sync)
    bpy.types.TOPBAR_MT_file_export.remove(menu_export)
    bpy.types.TOPBAR_MT_file_import.remove(menu_import)
    for fid in list(_classes):
        for cls in reversed(_classes.pop(fid)):
            bpy.utils.unregister_class(cls)
