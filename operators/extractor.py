# SPDX-License-Identifier: GPL-3.0-or-later
"""The one extractor: Blender data -> a scene (``scene.Scene``) that any
format's writer takes. The inverse of ``builder``; :func:`scene_of` is the
entry, over one module per pass:

* :mod:`.armature_extract` — the armature's bones become the skeleton (the
  file's own joints for a rig the builder made);
* :mod:`.mesh_extract` — meshes, materials and weights;
* :mod:`.anim_extract` — actions become clips.
"""
from __future__ import annotations

from ..scene import AxisConversion, Scene, Source
from . import anim_extract, armature_extract, mesh_extract


class ExtractError(ValueError):
    """Nothing (or something impossible) to export: the message is user-facing."""


def scene_of(context, *, armature=None, objects=None, apply_modifiers: bool = True,
             animations: bool = True, actions: str = "OWNED", bake_pose: bool = True,
             warnings: list[str] | None = None) -> Scene:
    """A scene from Blender data: ``armature`` (or None) and the mesh
    ``objects`` to export (skinned to the armature, parented to its bones,
    or free). ``actions``: "OWNED" (the rig's active action, NLA strips and
    the actions an import made for it) or "ALL" (also every other action
    animating bones of its names); ``bake_pose``: actions as Blender shows them
    (the evaluated pose), else their F-curves alone."""
    warnings = warnings if warnings is not None else []
    context.view_layer.update()          # world matrices are stale until the depsgraph is evaluated
    r = armature_extract.rig_of(armature, placement=True) if armature is not None else None
    # the rig's actions: exported with it, and the channels they key are no part of its default pose (also
    # when the animations are not exported: its animation files play on the model)
    chosen = anim_extract.rig_actions(armature, r.bone_names.values(), actions) if r is not None else []
    if r is not None:
        anim_extract.hold_unkeyed_pose(r, chosen)
    scene = r.scene if r is not None else Scene(objects[0].name if objects else "scene",
                                                source=Source("blender", "", AxisConversion()))
    if r is not None and not bake_pose:
        odd = [b.name for b in armature.data.bones
               if (not b.use_inherit_rotation or b.inherit_scale != "FULL" or not b.use_local_location)]
        if odd:
            warnings.append(f"{armature.name}: bones with non-standard inheritance are exported with standard "
                            f"inheritance: {', '.join(odd[:8])} (Bake Pose exports what Blender shows)")
    materials: dict = {}
    for obj in objects or []:
        if obj.type != "MESH":
            continue
        scene.meshes.append(mesh_extract.mesh_of(context, obj, r, materials, scene.materials, apply_modifiers,
                                                 warnings))
        if obj.animation_data is not None and obj.animation_data.action is not None:
            warnings.append(f"{obj.name}: object animation is not exported")
    if r is not None and animations:
        fps = context.scene.render.fps / context.scene.render.fps_base
        for action, slot in chosen:
            clip = anim_extract.clip_of(context, action, r, fps, warnings, slot=slot, bake_pose=bake_pose)
            if clip is not None:
                scene.clips.append(clip)
        moving = anim_extract.object_motion(armature, chosen)
        if moving:
            warnings.append(f"{armature.name}: the animation of the object(s) {', '.join(map(repr, moving))} "
                            f"(location, rotation, scale) is not exported: the file places the rig where it is "
                            f"at frame {context.scene.frame_current}; animate its bones instead")
        if actions == "OWNED":
            other = anim_extract.unclaimed_actions(armature, r.bone_names.values(), chosen)
            if other:
                names = ", ".join(a.name for a in other[:6]) + (" ..." if len(other) > 6 else "")
                warnings.append(f"{len(other)} action(s) animate bones of {armature.name}'s names but are not "
                                f"assigned to it, not exported: {names} (Actions: All exports them)")
    if not scene.meshes and r is None:
        raise ExtractError("nothing to export: no armature and no mesh")
    return scene
