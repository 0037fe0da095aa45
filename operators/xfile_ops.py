# SPDX-License-Identifier: GPL-3.0-or-later
"""File > Import (and Export) operators for DirectX .X, menus and drag-and-drop."""
from __future__ import annotations

import os

import bpy
from bpy.props import BoolProperty, EnumProperty, FloatProperty, IntProperty, StringProperty
from bpy_extras.io_utils import ExportHelper, axis_conversion, orientation_helper

from .rite_ops import MultiFileImport, ViewportDrop, _paths, _report_warnings


@orientation_helper(axis_forward="-Z", axis_up="Y")
class IMPORT_SCENE_OT_xfile(bpy.types.Operator, MultiFileImport):
    """Import DirectX .X files (text, binary, compressed): meshes, skeleton, skin and animations"""

    bl_idname = "import_scene.xfile"
    bl_label = "Import DirectX"
    bl_options = {"REGISTER", "UNDO", "PRESET"}

    filename_ext = ".x"
    filter_glob: StringProperty(default="*.x;*.X", options={"HIDDEN"})

    global_scale: FloatProperty(name="Scale", default=1.0, min=1e-6, max=1e6,
                                description="Scale the model (.X files are in the author's units)")
    every_frame_bone: BoolProperty(
        name="Every Frame a Bone", default=False,
        description="Make a bone of every frame (off: only frames that skin or hold meshes, "
                    "and their ancestors)")
    rest_from: EnumProperty(
        name="Rest Pose", default="BIND",
        items=[("BIND", "Bind Pose", "Rest pose from the skin's bind pose (inverse matrixOffset)"),
               ("FRAMES", "Frame Hierarchy", "Rest pose from the FrameTransformMatrix hierarchy")])
    import_animations: BoolProperty(name="Animations", default=True,
                                    description="One action per AnimationSet (NLA tracks, the first active)")
    bake: BoolProperty(name="Bake Every Frame", default=False,
                       description="Key every frame with the exact (slerp) playback instead of the file's keys")
    set_frame_range: BoolProperty(name="Set Frame Range", default=True)

    def execute(self, context):
        from . import xfile_import

        conv = axis_conversion(from_forward=self.axis_forward, from_up=self.axis_up).to_3x3()
        done = 0
        for path in _paths(self):
            try:
                res = xfile_import.load_x(context, path, axis_conversion=[list(r) for r in conv],
                                          global_scale=self.global_scale, every_frame_bone=self.every_frame_bone,
                                          rest_from=self.rest_from, bake=self.bake,
                                          import_animations=self.import_animations,
                                          set_frame_range=self.set_frame_range)
            except xfile_import.ImportFailed as err:
                self.report({"ERROR"}, str(err))
                return {"CANCELLED"} if done == 0 else {"FINISHED"}
            _report_warnings(self, res.warnings)
            done += 1
            n_bones = len(res.rig_build.bones) if res.rig_build else 0
            self.report({"INFO"}, f"Imported {os.path.basename(path)}: {len(res.meshes)} mesh(es), "
                                  f"{n_bones} bones, {len(res.actions)} action(s)")
        return {"FINISHED"}


class IO_FH_xfile(ViewportDrop, bpy.types.FileHandler):
    bl_idname = "IO_FH_xfile"
    bl_label = "DirectX"
    bl_import_operator = "import_scene.xfile"
    bl_export_operator = "export_scene.xfile"
    bl_file_extensions = ".x;.X"


def menu_import(self, context):
    self.layout.operator(IMPORT_SCENE_OT_xfile.bl_idname, text="DirectX (.x)")


@orientation_helper(axis_forward="-Z", axis_up="Y")
class EXPORT_SCENE_OT_xfile(bpy.types.Operator, ExportHelper):
    """Export the selected (or only) armature, its meshes and its actions as DirectX .X"""

    bl_idname = "export_scene.xfile"
    bl_label = "Export DirectX"
    bl_options = {"REGISTER", "PRESET"}

    filename_ext = ".x"
    filter_glob: StringProperty(default="*.x;*.X", options={"HIDDEN"})

    file_format: EnumProperty(
        name="Format", default="text",
        items=[("text", "Text", "Plain text (txt)"), ("binary", "Binary", "Binary tokens (bin)"),
               ("text_compressed", "Text, Compressed", "MSZIP-compressed text (tzip)"),
               ("binary_compressed", "Binary, Compressed", "MSZIP-compressed binary (bzip)")])
    float_size: EnumProperty(name="Float Size", default="32",
                             items=[("32", "32-bit", "Single precision"), ("64", "64-bit", "Double precision")])
    export_animations: BoolProperty(name="Animations", default=True,
                                    description="One AnimationSet per action that animates the armature")
    sampling: EnumProperty(
        name="Keys", default="AUTO",
        items=[("AUTO", "Keyed Frames When Exact",
                "Each bone's keyed frames when its curves are linear quaternion curves, else every frame"),
               ("FRAMES", "Every Frame", "A key on every frame of each action's range")])
    key_type: EnumProperty(
        name="Key Type", default="TRS",
        items=[("TRS", "Rotation, Scale, Position", "Separate rotation, scale and position keys"),
               ("MATRIX", "Matrix", "4x4 matrix keys")])
    ticks_per_second: IntProperty(name="Ticks per Second", default=4800, min=1, max=1000000,
                                  description="AnimTicksPerSecond (4800: D3DX and 3ds Max)")
    other_meshes: BoolProperty(name="Other Meshes", default=True,
                               description="Also export meshes not skinned or parented to the armature")
    apply_modifiers: BoolProperty(name="Apply Modifiers", default=False,
                                  description="Apply modifiers other than the Armature modifier")
    use_stored_axes: BoolProperty(name="Axes of the Import", default=True,
                                  description="Use the axes and scale the rig was imported with, if any")
    global_scale: FloatProperty(name="Scale", default=1.0, min=1e-6, max=1e6,
                                description="Scale the importer would apply (the export divides by it)")

    def execute(self, context):
        from . import xfile_export

        conv = [list(r) for r in axis_conversion(from_forward=self.axis_forward, from_up=self.axis_up).to_3x3()]
        try:
            warnings = xfile_export.save_x(
                context, self.filepath, fmt=self.file_format, float_size=int(self.float_size),
                axis_conversion=conv, global_scale=self.global_scale, use_stored_axes=self.use_stored_axes,
                ticks_per_second=self.ticks_per_second,
                sampling_mode=self.sampling, key_type=self.key_type, apply_modifiers=self.apply_modifiers,
                other_meshes=self.other_meshes, export_animations=self.export_animations)
        except (xfile_export.ExportFailed, ValueError, OSError) as err:
            self.report({"ERROR"}, str(err))
            return {"CANCELLED"}
        _report_warnings(self, warnings)
        self.report({"INFO"}, f"Exported {os.path.basename(self.filepath)}")
        return {"FINISHED"}


def menu_export(self, context):
    self.layout.operator(EXPORT_SCENE_OT_xfile.bl_idname, text="DirectX (.x)")


classes = (IMPORT_SCENE_OT_xfile, IO_FH_xfile, EXPORT_SCENE_OT_xfile)
