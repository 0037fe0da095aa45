# SPDX-License-Identifier: GPL-3.0-or-later
"""DirectX .X <-> scene: the format's one entry point for the registry
(``io.formats``; the contract is in its module doc).

The reading half is :mod:`.to_scene` (XFile -> scene, AnimationSets onto
another skeleton), the writing half :mod:`.from_scene` (scene -> XFile);
the .X conventions both apply (row-vector matrices, left-handed space,
conjugated rotation keys, ticks) are in :mod:`.conventions`.
"""
from .conventions import DEFAULT_TICKS_PER_SECOND, FORMAT, col, default_axes, key_from_rotation, rotation_from_key
from .from_scene import KEY_TYPES, write_scene, writer_axes, xfile_from_scene
from .to_scene import read_clips, read_scene, scene_from_xfile

__all__ = ["FORMAT", "DEFAULT_TICKS_PER_SECOND", "default_axes", "col", "rotation_from_key", "key_from_rotation",
           "read_scene", "read_clips", "scene_from_xfile", "write_scene", "xfile_from_scene", "writer_axes",
           "KEY_TYPES"]
