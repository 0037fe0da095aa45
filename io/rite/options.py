# SPDX-License-Identifier: GPL-3.0-or-later
"""RiTE's own options (see ``io.formats``): the shared orientation switch,
on by default: RiTE files are Y-up by their contract (Maya), so the
Forward/Up options apply unless the user asks for the automatic choice."""
from dataclasses import replace

from ..options import MANUAL_ORIENTATION

#: RiTE clips play with the Animator's own interpolation: key every frame.
IMPORT_DEFAULTS = {"bake": True}

IMPORT_OPTIONS: tuple = (replace(MANUAL_ORIENTATION, default=True),)
ANIM_IMPORT_OPTIONS: tuple = ()
EXPORT_OPTIONS: tuple = ()
