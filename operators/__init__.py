# SPDX-License-Identifier: GPL-3.0-or-later
"""Everything that imports bpy: operators, menus, FileHandlers."""
import bpy

from . import rite_ops, xfile_ops

_classes = (*rite_ops.classes, *xfile_ops.classes)


def _menu_import(self, context):
    rite_ops.menu_import(self, context)
    xfile_ops.menu_import(self, context)


def _menu_export(self, context):
    rite_ops.menu_export(self, context)
    xfile_ops.menu_export(self, context)


def register():
    for cls in _classes:
        bpy.utils.register_class(cls)
    bpy.types.TOPBAR_MT_file_import.append(_menu_import)
    bpy.types.TOPBAR_MT_file_export.append(_menu_export)


def unregister():
    bpy.types.TOPBAR_MT_file_export.remove(_menu_export)
    bpy.types.TOPBAR_MT_file_import.remove(_menu_import)
    for cls in reversed(_classes):
        bpy.utils.unregister_class(cls)
