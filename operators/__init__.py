# SPDX-License-Identifier: GPL-3.0-or-later
"""Everything that imports bpy: the builder (scene -> Blender), the
extractor (Blender -> scene), the import/export pipeline, and the operators,
menus and FileHandlers generated from the format registry."""
import bpy

from . import ops

_cli_handle = None


def _command_line(argv: list[str]) -> int:
    """``blender --command legacy_skin_io ...``: the same subcommands as
    ``python -m legacy_skin_io``."""
    from ..cli import main

    try:
        return main(argv)
    except SystemExit as exc:        # argparse's --help and usage errors
        return int(exc.code or 0) if isinstance(exc.code, int) else 2


def register():
    global _cli_handle
    ops.register()
    if hasattr(bpy.utils, "register_cli_command"):
        _cli_handle = bpy.utils.register_cli_command("legacy_skin_io", _command_line)


def unregister():
    global _cli_handle
    if _cli_handle is not None:
        bpy.utils.unregister_cli_command(_cli_handle)
        _cli_handle = None
    ops.unregister()
