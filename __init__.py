# SPDX-License-Identifier: GPL-3.0-or-later
"""Legacy Skin IO: RiTE RAM/RAA and DirectX .X for Blender.

This module only registers the operators and the ``blender --command
legacy_skin_io`` entry. Importing the package (or its ``core``, ``io`` and
``cli`` subpackages) never imports ``bpy``; the Blender side lives in
``operators`` (and ``cli/blender_command.py``) and is loaded on
``register()``.
"""

_command_handle = None


def register():
    global _command_handle
    import bpy

    from . import operators
    from .cli import blender_command_line

    operators.register()
    if hasattr(bpy.utils, "register_cli_command"):
        _command_handle = bpy.utils.register_cli_command("legacy_skin_io", blender_command_line)


def unregister():
    global _command_handle
    import bpy

    from . import operators

    if _command_handle is not None:
        bpy.utils.unregister_cli_command(_command_handle)
        _command_handle = None
    operators.unregister()
