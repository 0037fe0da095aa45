# SPDX-License-Identifier: GPL-3.0-or-later
"""A failed import leaves the scene as it was: :class:`Rollback` remembers
what exists and the scene settings an import may change, and on failure
removes every datablock created since and restores the settings."""
from __future__ import annotations

import bpy

COLLECTIONS = ("objects", "meshes", "armatures", "materials", "actions", "images", "collections")


class Rollback:
    """``with Rollback(context, armature): ...`` — on an exception, undo the
    import's effects (and re-raise). ``armature``: an existing armature the
    import animates (its action, slot and NLA tracks are restored)."""

    def __init__(self, context, armature=None):
        self.context = context
        self.armature = armature

    def __enter__(self):
        self.before = {name: set(getattr(bpy.data, name)) for name in COLLECTIONS}
        sc = self.context.scene
        self.frames = (sc.frame_start, sc.frame_end, sc.frame_current, sc.render.fps, sc.render.fps_base)
        self.anim = None
        arm = self.armature
        if arm is not None:
            ad = arm.animation_data
            self.anim = (ad is not None, ad.action if ad else None, ad.action_slot if ad else None,
                         [t.name for t in ad.nla_tracks] if ad else [])
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            return False
        self.undo()
        return False

    def undo(self) -> None:
        arm = self.armature
        if arm is not None and self.anim is not None:
            had, action, slot, tracks = self.anim
            ad = arm.animation_data
            if ad is not None:
                for t in [t for t in ad.nla_tracks if t.name not in tracks]:
                    ad.nla_tracks.remove(t)
                try:
                    ad.action = action
                    if action is not None and slot is not None:
                        ad.action_slot = slot
                except (RuntimeError, ReferenceError, TypeError):
                    pass
                if not had:
                    arm.animation_data_clear()
        for name in reversed(COLLECTIONS):
            coll = getattr(bpy.data, name)
            for idb in [i for i in coll if i not in self.before[name]]:
                try:
                    coll.remove(idb)
                except (ReferenceError, RuntimeError):
                    pass
        sc = self.context.scene
        sc.frame_start, sc.frame_end = self.frames[0], self.frames[1]
        sc.frame_current = self.frames[2]
        sc.render.fps, sc.render.fps_base = self.frames[3], self.frames[4]
