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
  sampler) and RiTE-style layers become NLA tracks.

Between the meshes and the actions, :mod:`.selfcheck` compares what Blender
shows at the default pose with the oracle's evaluation of the scene.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..core import rig
from ..io.errors import Warnings
from ..io.import_options import ImportOptions
from ..scene import Clip, Scene
from ..scene import evaluate as oracle
from . import anim_build, anim_layers, armature_build, mesh_build, selfcheck


@dataclass
class Built:
    """What an import made: the armature (or None) and, per scene mesh, its object."""

    scene: Scene
    armature: Any = None                                        # the armature object, or None
    rest: rig.RestSplit | None = None
    bones: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))  # joint of each bone
    bone_names: dict[int, str] = field(default_factory=dict)   # joint -> bone name
    meshes: dict[int, Any] = field(default_factory=dict)       # scene mesh index -> object
    empties: dict[int, Any] = field(default_factory=dict)      # joint -> empty (scenes without armature)
    actions: list = field(default_factory=list)                # (action, slot, clip)
    baked: bool = False
    warnings: list[str] = field(default_factory=Warnings)
    self_check: selfcheck.SelfCheck | None = None              # the default pose against the oracle
    default_points: np.ndarray | None = None                   # oracle.default_points of the scene
    default_channels: tuple | None = None                      # armature_build.default_channels, once made
    local_channels: tuple | None = None                        # armature_build.local_channels, once made


def build(context, scene: Scene, options: ImportOptions | None = None, progress=None) -> Built:
    """Build ``scene`` into the current Blender scene. The caller wraps this
    in a :class:`~.rollback.Rollback`."""
    options = options or ImportOptions()
    built = Built(scene, default_points=oracle.default_points(scene))
    size = oracle.size(scene, built.default_points)
    sk = scene.skeleton
    default_world = sk.world() if sk is not None else None
    has_bones = sk is not None and len(sk) and armature_build.bone_joints(scene, options.every_joint_bone).any()
    if has_bones and default_world is not None:
        armature_build.build_armature(context, built, f"{scene.name}_rig" if scene.meshes else scene.name,
                                      options, size, mesh_build.skin_binds(scene, default_world))
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
        span = anim_build.build_clips(built, fps, options.key_every_frame, size)
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
    """The scene's start and end frames for a range to play (``anim_build.place_actions``)."""
    sc.frame_start = int(np.floor(span[0] + 1e-6))
    sc.frame_end = max(int(np.ceil(span[1] - 1e-6)), sc.frame_start + 1)


def add_clips(context, arm_obj, skeleton_scene: Scene, clips: list[Clip], *, bone_names: dict[int, str],
              rest: rig.RestSplit, bones: np.ndarray, bake: bool = True, set_frame_range: bool = True) -> Built:
    """Animation files onto an existing armature (built or extracted):
    actions for ``clips``, placed as the clips' layers say."""
    built = Built(skeleton_scene, arm_obj, rest, bones, bone_names)
    fps = context.scene.render.fps / context.scene.render.fps_base
    static = anim_build.static_channels(built, clips)
    size = oracle.size(skeleton_scene)
    skeleton_scene.clips = clips          # channel_mode_exact looks at the clips' scale keys
    try:
        exact = anim_build.channel_mode_exact(built, size)
    finally:
        skeleton_scene.clips = []
    for clip in clips:
        anim_build.short_clip_warning(built, clip, fps)
        baked = anim_build.must_bake(built, clip, fps, bake, exact)
        mask = anim_build.linear_mask(built, clip, fps, bake, exact) if baked else None
        action, slot = anim_build.build_action(built, clip, fps, baked, static, mask=mask, size=size)
        built.actions.append((action, slot, clip))
    acts = [(a, s, c) for a, s, c in built.actions if c.layer == "ACTION"]
    layers = [(a, s, c.layer, c.weight) for a, s, c in built.actions if c.layer != "ACTION"]
    span = None
    if acts:
        anim_build.assign_action(arm_obj, acts[0][0], acts[0][1])
        span = anim_build.loop_range(acts[0][2], fps)
    if span is None and built.actions:
        span = (0.0, max(c.frame_range(fps)[1] for _, _, c in built.actions))
    if layers:
        mix = next((c.mix for _, _, c in reversed(built.actions) if c.layer == "MERGEABLE"), None)
        span = anim_layers.place_layers(built, layers, fps, mix=mix)    # the whole stack plays
    for a, _, _ in built.actions:      # nothing imported is lost on save and reload
        a.use_fake_user = True
    if set_frame_range and span is not None:
        set_scene_range(context.scene, span)
    return built
