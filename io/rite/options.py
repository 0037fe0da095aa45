# SPDX-License-Identifier: GPL-3.0-or-later
"""RiTE's own options (see ``io.formats``): the shared orientation switch,
on by default: RiTE files are Y-up by their contract (Maya), so the
Forward/Up options apply unless the user asks for the automatic choice;
and how mergeable animations mix."""
from dataclasses import replace

from ..options import MANUAL_ORIENTATION, Option

#: RiTE clips play with the Animator's own interpolation: key every frame.
IMPORT_DEFAULTS = {"key_every_frame": True}

IMPORT_OPTIONS: tuple = (replace(MANUAL_ORIENTATION, default=True),)
ANIM_IMPORT_OPTIONS: tuple = (
    Option("mix", "Mergeable Mix",
           "How mergeable animations combine on the joints they share (the layer stack's mix; dominant "
           "animations overwrite either way)",
           "WEIGHTED",
           items=(("WEIGHTED", "Weighted (the RiTE document's design)",
                   "Each joint takes the weighted average of the mergeable animations that animate it (the "
                   "RiTE document's design; the 2006 code had not finished it): the weighted sum of the "
                   "rotations, normalised; for two rotations up to 60 degrees apart within 0.3 degrees of "
                   "turning from one to the other at a constant speed, exactly halfway at equal weights"),
                  ("ANIMATOR_2006", "2006 Animator (later overwrites)",
                   "As the 2006 Animator plays them: each mergeable animation, in import order, overwrites the "
                   "joints it animates; weights are not used")),
           panel="Animation"),
)
EXPORT_OPTIONS: tuple = ()
