# SPDX-License-Identifier: GPL-3.0-or-later
"""The toy format's own options (see ``io.formats``)."""
from ..options import Option

IMPORT_DEFAULTS = {"key_every_frame": False}

SPEED = Option("speed", "Speed", "Playback speed: key times are divided by it", 1.0, min=0.01, max=100.0,
               panel="Animation")

IMPORT_OPTIONS = (SPEED,)
ANIM_IMPORT_OPTIONS = (SPEED,)

EXPORT_OPTIONS = (
    Option("layout", "Layout", "How the JSON text is laid out", "AUTO",
           items=(("AUTO", "Automatic", "Indented for small files, one line for large ones"),
                  ("COMPACT", "Compact", "One line"),
                  ("INDENTED", "Indented", "One value per line, indented")),
           panel="File"),
)
