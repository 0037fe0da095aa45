# SPDX-License-Identifier: GPL-3.0-or-later
"""File > Import / Export operators for RiTE, menus and drag-and-drop."""
from __future__ import annotations

import os

import bpy
from bpy.props import BoolProperty, CollectionProperty, EnumProperty, FloatProperty, StringProperty
from bpy_extras.io_utils import ExportHelper, ImportHelper, axis_conversion, orientation_helper


def _report_warnings(op, warnings, limit: int = 8) -> None:
    for w in warnings[:limit]:
        op.report({"WARNING"}, w)
    if len(warnings) > limit:
        op.report({"WARNING"}, f"... and {len(warnings) - limit} more warnings (see the console)")
        for w in warnings[limit:]:
            print("legacy_skin_io:", w)


def _paths(op) -> list[str]:
    if getattr(op, "files", None) and op.files and op.files[0].name:
        return [os.path.join(op.directory, f.name) for f in op.files]
    return [op.filepath]


class MultiFileImport(ImportHelper):
    """Several files at once (file browser or drag-and-drop)."""

    files: CollectionProperty(type=bpy.types.OperatorFileListElement, options={"HIDDEN", "SKIP_SAVE"})
    directory: StringProperty(subtype="DIR_PATH", options={"HIDDEN", "SKIP_SAVE"})

    def invoke(self, context, event):
        if self.filepath and os.path.isfile(self.filepath):  # drag-and-drop: options popup
            return self.invoke_popup(context)
        return ImportHelper.invoke(self, context, event)


@orientation_helper(axis_forward="-Z", axis_up="Y")
class IMPORT_SCENE_OT_rite(bpy.types.Operator, MultiFileImport):
    """Import a RiTE model (.ram): skeleton and skinned mesh"""

    bl_idname = "import_scene.rite"
    bl_label = "Import RiTE Model"
    bl_options = {"REGISTER", "UNDO", "PRESET"}

    filename_ext = ".ram"
    filter_glob: StringProperty(default="*.ram", options={"HIDDEN"})

    global_scale: FloatProperty(name="Scale", default=1.0, min=1e-6, max=1e6,
                                description="Scale the model (RiTE files are in the author's units)")
    point_bones_at_children: BoolProperty(
        name="Point Bones at Children", default=False,
        description="Turn bones towards their children for display; deformation stays identical "
                    "(off: each bone's rest matrix is exactly the joint's bind-pose transform)")

    def execute(self, context):
        from . import rite_import

        conv = axis_conversion(from_forward=self.axis_forward, from_up=self.axis_up).to_3x3()
        done = 0
        for path in _paths(self):
            try:
                res = rite_import.load_ram(context, path, axis_conversion=[list(r) for r in conv],
                                           global_scale=self.global_scale,
                                           point_bones_at_children=self.point_bones_at_children)
            except rite_import.ImportFailed as err:
                self.report({"ERROR"}, str(err))
                return {"CANCELLED"} if done == 0 else {"FINISHED"}
            _report_warnings(self, res.warnings)
            done += 1
            self.report({"INFO"}, f"Imported {os.path.basename(path)}: {len(res.rig.names)} joints, "
                                  f"{len(res.rig.ram.positions)} vertices, {len(res.rig.ram.tri_vertices)} triangles")
        return {"FINISHED"}


class IMPORT_ANIM_OT_rite(bpy.types.Operator, MultiFileImport):
    """Import RiTE animations (.raa) onto the active armature, one action per file"""

    bl_idname = "import_anim.rite"
    bl_label = "Import RiTE Animation"
    bl_options = {"REGISTER", "UNDO", "PRESET"}

    filename_ext = ".raa"
    filter_glob: StringProperty(default="*.raa", options={"HIDDEN"})

    mode: EnumProperty(
        name="Playback", default="ACTION",
        items=[("ACTION", "Active Action", "The (first) animation becomes the armature's action"),
               ("MERGEABLE", "Mergeable (NLA)", "NLA track mixed by weight with other mergeable animations"),
               ("DOMINANT", "Dominant (NLA)", "NLA track overriding the joints it animates")])
    weight: FloatProperty(name="Weight", default=1.0, min=0.0, max=1.0,
                          description="Weight of a mergeable animation in the mix")
    keys_only: BoolProperty(
        name="File Keys Only", default=False,
        description="Key only the file's keyframes, linear (approximate: the RiTE runtime slerps "
                    "and wraps; off keys every frame with the exact playback)")
    set_frame_range: BoolProperty(name="Set Frame Range", default=True)

    def execute(self, context):
        from . import rite_import

        try:
            actions, bounds, warnings = rite_import.load_raa(
                context, _paths(self), mode=self.mode, weight=self.weight, keys_only=self.keys_only,
                set_frame_range=self.set_frame_range)
        except rite_import.ImportFailed as err:
            self.report({"ERROR"}, str(err))
            return {"CANCELLED"}
        _report_warnings(self, warnings)
        self.report({"INFO"}, f"Imported {len(actions)} animation(s): " + ", ".join(a.name for a in actions))
        return {"FINISHED"}


class ViewportDrop:
    """FileHandler mixin: accept files dropped on the 3D viewport."""

    @classmethod
    def poll_drop(cls, context):
        return context.area is not None and context.area.type == "VIEW_3D"


class IO_FH_rite_ram(ViewportDrop, bpy.types.FileHandler):
    bl_idname = "IO_FH_rite_ram"
    bl_label = "RiTE Model"
    bl_import_operator = "import_scene.rite"
    bl_export_operator = "export_scene.rite"
    bl_file_extensions = ".ram"


class IO_FH_rite_raa(ViewportDrop, bpy.types.FileHandler):
    bl_idname = "IO_FH_rite_raa"
    bl_label = "RiTE Animation"
    bl_import_operator = "import_anim.rite"
    bl_file_extensions = ".raa"


def menu_import(self, context):
    self.layout.operator(IMPORT_SCENE_OT_rite.bl_idname, text="RiTE Model (.ram)")
    self.layout.operator(IMPORT_ANIM_OT_rite.bl_idname, text="RiTE Animation (.raa)")


classes = (IMPORT_SCENE_OT_rite, IMPORT_ANIM_OT_rite, IO_FH_rite_ram, IO_FH_rite_raa)


@orientation_helper(axis_forward="-Z", axis_up="Y")
class EXPORT_SCENE_OT_rite(bpy.types.Operator, ExportHelper):
    """Export the selected (or only) armature and its skinned mesh as a RiTE model (.ram)"""

    bl_idname = "export_scene.rite"
    bl_label = "Export RiTE Model"
    bl_options = {"REGISTER", "PRESET"}

    filename_ext = ".ram"
    filter_glob: StringProperty(default="*.ram", options={"HIDDEN"})
    export_animations: BoolProperty(name="Export Animations", default=False,
                                    description="Also write every action of the rig as a .raa beside the .ram")
    apply_modifiers: BoolProperty(name="Apply Modifiers", default=False,
                                  description="Apply modifiers other than the Armature modifier")
    use_stored_axes: BoolProperty(name="Axes of the Import", default=True,
                                  description="Use the axes and scale the rig was imported with, if any")
    global_scale: FloatProperty(name="Scale", default=1.0, min=1e-6, max=1e6)

    def execute(self, context):
        from . import rite_export

        conv = None
        if not self.use_stored_axes:
            conv = [list(r) for r in axis_conversion(from_forward=self.axis_forward,
                                                     from_up=self.axis_up).to_3x3()]
        try:
            warnings = rite_export.save_ram(context, self.filepath, export_animations=self.export_animations,
                                            apply_modifiers=self.apply_modifiers, axis_conversion=conv,
                                            global_scale=self.global_scale)
        except (rite_export.ExportFailed, ValueError, OSError) as err:
            self.report({"ERROR"}, str(err))
            return {"CANCELLED"}
        _report_warnings(self, warnings)
        self.report({"INFO"}, f"Exported {os.path.basename(self.filepath)}")
        return {"FINISHED"}


class EXPORT_ANIM_OT_rite(bpy.types.Operator, ExportHelper):
    """Export the active armature's action as a RiTE animation (.raa, rotations only)"""

    bl_idname = "export_anim.rite"
    bl_label = "Export RiTE Animation"
    bl_options = {"REGISTER", "PRESET"}

    filename_ext = ".raa"
    filter_glob: StringProperty(default="*.raa", options={"HIDDEN"})

    def execute(self, context):
        from . import rite_export

        try:
            warnings = rite_export.save_raa(context, self.filepath)
        except (rite_export.ExportFailed, ValueError, OSError) as err:
            self.report({"ERROR"}, str(err))
            return {"CANCELLED"}
        _report_warnings(self, warnings)
        self.report({"INFO"}, f"Exported {os.path.basename(self.filepath)}")
        return {"FINISHED"}


def menu_export(self, context):
    self.layout.operator(EXPORT_SCENE_OT_rite.bl_idname, text="RiTE Model (.ram)")
    self.layout.operator(EXPORT_ANIM_OT_rite.bl_idname, text="RiTE Animation (.raa)")


classes = (*classes, EXPORT_SCENE_OT_rite, EXPORT_ANIM_OT_rite)
