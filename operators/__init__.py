# SPDX-License-Identifier: GPL-3.0-or-later
"""Everything that imports bpy: the builder (scene -> Blender), the
extractor (Blender -> scene), the import/export pipeline, and the operators,
menus and FileHandlers generated from the format registry."""
from . import ops


def register():
    ops.register()


def unregister():
    ops.unregister()
