# SPDX-License-Identifier: GPL-3.0-or-later
"""File > Import (and Export) operators for DirectX .X, menus and drag-and-drop."""
from __future__ import annotations

import os

import bpy
from bpy.props import BoolProperty, CollectionProperty, EnumProperty, FloatProperty, StringProperty
from bpy_extras.io_utils import ImportHelper, axis_conversion, orientation_helper

from .rite_ops import _paths, _report_warnings


@orientation_helper(axis_forward="-Z", axis_up="Y")
class IMPORT_SCENE_OT_xfile(bpy.types.Operator, ImportHelper):
    """Import DirectX .X files (text, binary, compressed): meshes, skeleton, skin and animations"""

    bl_idname = "import_scene.xfile"
    bl_label = "Import DirectX"
    bl_options = {"REGISTER", "UNDO", "PRESET"}

    filename_ext = ".x"
    filter_glob: StringProperty(default="*.x;*.X", options={"HIDDEN"})
    files: CollectionProperty(type=bpy.types.OperatorFileListElement, options={"HIDDEN", "SKIP_SAVE"})
    directory: StringProperty(subtype="DIR_PATH", options={"HIDDEN", "SKIP_SAVE"})

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

    def invoke(self, context, event):
        if self.filepath and os.path.isfile(self.filepath):  # drag-and-drop: options popup
            return self.invoke_popup(context)
        return ImportHelper.invoke(self, context, event)


class IO_FH_xfile(bpy.types.FileHandler):
    bl_idname = "IO_FH_xfile"
    bl_label = "DirectX"
    bl_import_operator = "import_scene.xfile"
    bl_file_extensions = ".x;.X"

    @classmethod
    def poll_drop(cls, context):
        return context.area is not None and context.area.type == "VIEW_3D"


def menu_import(self, context):
    self.layout.operator(IMPORT_SCENE_OT_xfile.bl_idname, text="DirectX (.x)")


def menu_export(self, context):
    pass


classes = (IMPORT_SCENE_OT_xfile, IO_FH_xfile)
