# SPDX-License-Identifier: GPL-3.0-or-later
"""A small Cycles (CPU) contact sheet of a few poses, for people to look at."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import bpy
import numpy as np
from mathutils import Vector

from .verify import evaluated_world

#: the camera's place relative to the figure's centre, in figure sizes
VIEW = (0.45, -1.25, 0.25)


def render_poses(context, out: Path, armature, frames, n_poses: int = 3, size=(240, 320), samples: int = 8,
                 engine: str = "CYCLES", before_frame=None):
    """Render ``n_poses`` frames of ``frames`` side by side into the PNG ``out``
    with ``engine`` (CYCLES on the CPU, BLENDER_WORKBENCH or Eevee: BLENDER_EEVEE,
    or BLENDER_EEVEE_NEXT where Blender 4.x names it so); ``before_frame(f)``,
    if given, is called after the scene is set to frame ``f`` and before it
    renders."""
    scene = context.scene
    meshes = [o for o in scene.objects if o.type == "MESH"]
    each = [evaluated_world(context, o) for o in meshes]
    pts = np.concatenate(each) if each else np.zeros((1, 3))
    centre = (pts.max(0) + pts.min(0)) / 2
    extent = float(np.linalg.norm(pts.max(0) - pts.min(0))) or 1.0
    cam_data = bpy.data.cameras.new("PreviewCamera")
    cam = bpy.data.objects.new("PreviewCamera", cam_data)
    scene.collection.objects.link(cam)
    cam.location = Vector(centre) + Vector(VIEW) * extent
    cam.rotation_euler = (Vector(centre) - cam.location).to_track_quat("-Z", "Y").to_euler()
    light_data: Any = bpy.data.lights.new("PreviewSun", "SUN")
    light_data.energy = 3.0
    light = bpy.data.objects.new("PreviewSun", light_data)
    light.rotation_euler = (0.7, 0.2, 0.5)
    scene.collection.objects.link(light)
    scene.camera = cam
    if scene.world is None:
        scene.world = bpy.data.worlds.new("PreviewWorld")
    engines = {e.identifier for e in type(scene.render).bl_rna.properties["engine"].enum_items}
    if engine == "BLENDER_EEVEE" and engine not in engines:
        engine = "BLENDER_EEVEE_NEXT"
    scene.render.engine = engine
    if engine == "CYCLES":
        scene.cycles.device = "CPU"
        scene.cycles.samples = samples
    elif engine.startswith("BLENDER_EEVEE"):
        scene.eevee.taa_render_samples = samples
    else:
        scene.display.shading.color_type = "MATERIAL"
    scene.render.resolution_x, scene.render.resolution_y = size
    scene.render.resolution_percentage = 100
    scene.render.image_settings.file_format = "PNG"
    frames = list(frames)
    picks = [frames[int(i)] for i in np.linspace(0, len(frames) - 1, n_poses)] if len(frames) > 1 else frames
    tiles = []
    tmp = out.with_suffix(".tile.png")
    for f in picks:
        scene.frame_set(int(f))
        if before_frame:
            before_frame(f)
        scene.render.filepath = str(tmp)
        bpy.ops.render.render(write_still=True)
        img: Any = bpy.data.images.load(str(tmp))
        px = np.empty(img.size[0] * img.size[1] * 4, dtype=np.float32)
        img.pixels.foreach_get(px)
        tiles.append(px.reshape(img.size[1], img.size[0], 4))
        bpy.data.images.remove(img)
    tmp.unlink(missing_ok=True)
    sheet = np.concatenate(tiles, axis=1)
    h, w = sheet.shape[:2]
    image: Any = bpy.data.images.new("poses", w, h, alpha=True)
    image.pixels.foreach_set(sheet.reshape(-1))
    image.filepath_raw = str(out)
    image.file_format = "PNG"
    out.parent.mkdir(parents=True, exist_ok=True)
    image.save()
    bpy.data.images.remove(image)
    for o in (cam, light):
        bpy.data.objects.remove(o)
    return out
