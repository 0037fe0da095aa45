# SPDX-License-Identifier: GPL-3.0-or-later
"""scene -> glTF 2.0: the format's one entry point for the registry
(``io.formats``; the contract is in its module doc). Written only: the
registry's ``writes_only`` keeps it out of Blender's menus, where Blender's
own glTF add-on reads and writes the format."""
from .from_scene import FORMAT, default_axes, write_scene, writer_axes

__all__ = ["FORMAT", "default_axes", "write_scene", "writer_axes"]
