# SPDX-License-Identifier: GPL-3.0-or-later
"""RiTE's operator options (see ``io.formats.Format.options``)."""

#: RiTE clips play with the Animator's own interpolation: key every frame.
IMPORT_DEFAULTS = {"bake": True}

IMPORT_OPTIONS: tuple = ()

EXPORT_OPTIONS: tuple = ()
