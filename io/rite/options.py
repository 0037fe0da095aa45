# SPDX-License-Identifier: GPL-3.0-or-later
"""RiTE's own options (see ``io.formats``): none beyond the shared ones."""

#: RiTE clips play with the Animator's own interpolation: key every frame.
IMPORT_DEFAULTS = {"bake": True}

IMPORT_OPTIONS: tuple = ()
ANIM_IMPORT_OPTIONS: tuple = ()
EXPORT_OPTIONS: tuple = ()
