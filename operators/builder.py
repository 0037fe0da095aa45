# SPDX-License-Identifier: GPL-3.0-or-later
"""The one Blender builder: a scene (``scene.Scene``, already in Blender
space) -> armature, bones, meshes, materials, vertex groups, actions and
NLA tracks. Every format's importer ends here (:func:`build`; animation
files onto an existing armature: :func:`add_clips`).

The passes live in one module each, named for what they make:

* :mod:`.armature_build` — which joints become bones, their rigid rest
  matrices (the rest of the bind is ``K``, ``core.rig.RestSplit``), the
  armature and its default pose (or empties when no bone is needed);
* :mod:`.mesh_build` — meshes, materials, placement and vertex groups;
* :mod:`.anim_build` — clips become actions (the file's keys mapped channel
  by channel when that is exact, else every frame baked from the clip's own
  sampler);
* :mod:`.anim_place` — where they play: NLA tracks, RiTE-style layers as
  the layer stack, the active action.

What the passes make is a :class:`.built.Built`.

Between the meshes and the actions, :mod:`.selfcheck` compares what Blender
shows at the default pose with ``scene.evaluate``'s evaluation of the scene.
"""
from __future__ import annotations

import numpy as np

from ..core import rig
from ..io.import_options import ImportOptions
from ..scene import Clip, Scene, evaluate
from . import anim_build, anim_place, armature_build, mesh_build, selfcheck
from .built import Built


def build(context, scene: Scene, options: ImportOptions | None = None, progress=None) -> Built:
    """Build ``scene`` into the current Blender scene. The caller wraps this
    in a :class:`~.rollback.Rollback`."""
    options = options or ImportOptions()
    built = Built(scene, default_points=evaluate.default_points(scene))
    size = evaluate.size(scene, built.default_points)
    sk = scene.skeleton
    default_world = sk.world() if sk is not None else None
    has_bones = sk is not None and len(sk) and armature_build.bone_joints(scene, options.every_joint_bone).any()
    if has_bones and default_world is not None:
        armature_build.build_armature(context, built, f"{scene.name}_rig" if scene.meshes else scene.name, size,
                                      mesh_build.skin_binds(scene, default_world),
                                      every_joint_bone=options.every_joint_bone, rest_from=options.rest_from,
                                      bone_direction=options.bone_direction)
    elif sk is not None and len(sk):
        armature_build.build_empties(context, built, size)
    if progress:
        progress(1)
    mesh_build.build_meshes(context, built, options.pack_images, default_world, size)
    if options.self_check and built.meshes:     # the default pose, before any action moves it
        built.self_check = selfcheck.run(context, scene, built.meshes, size, built.default_points)
    if progress:
        progress(2)
    fps = context.scene.render.fps / context.scene.render.fps_base
    if built.armature is not None and options.import_animations and scene.clips:
        anim_build.build_clips(built, fps, options.key_every_frame, size)
        span = anim_place.place_actions(built, fps)
        if options.set_frame_range and span is not None:
            set_scene_range(context.scene, span)
    objs = list(built.meshes.values()) + ([built.armature] if built.armature else []) + list(built.empties.values())
    for o in context.view_layer.objects:
        o.select_set(False)
    for o in objs:
        o.select_set(True)
    context.view_layer.objects.active = built.armature or next(iter(built.meshes.values()), None)
    context.view_layer.update()
    return built


def set_scene_range(sc, span: tuple[float, float]) -> None:
    """The scene's start and end frames for a range to play (``anim_place.place_actions``)."""
    sc.frame_start = int(np.floor(span[0] + 1e-6))
    sc.frame_end = max(int(np.ceil(span[1] - 1e-6)), sc.frame_start + 1)


def add_clips(context, arm_obj, skeleton_scene: Scene, clips: list[Clip], *, bone_names: dict[int, str],
              rest: rig.RestSplit, bones: np.ndarray, key_every_frame: bool = True,
              set_frame_range: bool = True) -> Built:
    """Animation files onto an existing armature (built or extracted):
    actions for ``clips``, placed as a model's are (``anim_place.place_actions``)."""
    built = Built(skeleton_scene, arm_obj, rest, bones, bone_names)
    fps = context.scene.render.fps / context.scene.render.fps_base
    static = anim_build.static_channels(built, clips)
    size = evaluate.size(skeleton_scene)
    skeleton_scene.clips = clips          # channel_mode_exact looks at the clips' scale keys
    try:
        exact = anim_build.channel_mode_exact(built, size)
    finally:
        skeleton_scene.clips = []
    for clip in clips:
        anim_build.short_clip_warning(built, clip, fps)
        baked = anim_build.must_bake(built, clip, fps, key_every_frame, exact)
        mask = anim_build.linear_mask(built, clip, fps, key_every_frame, exact) if baked else None
        action, slot = anim_build.build_action(built, clip, fps, baked, static, mask=mask, size=size)
        built.actions.append((action, slot, clip))
    span = anim_place.place_actions(built, fps)
    if set_frame_range and span is not None:
        set_scene_range(context.scene, span)
    return built
