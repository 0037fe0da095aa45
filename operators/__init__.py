# SPDX-License-Identifier: GPL-3.0-or-later
"""Everything that imports bpy: operators, menus, FileHandlers."""


def register():
    pass


def unregister():
    pass
