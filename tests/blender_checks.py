# SPDX-License-Identifier: GPL-3.0-or-later
"""Helpers shared by the Blender-side tests (test_*_blender.py, test_cli.py).

They only find what an import made (by the metadata the builder stores) and
load the installed extension's own modules; expected values always come from
a fresh parse of the file (the adapters' ``read_scene``) evaluated by the
oracle (``scene.evaluate``), never from Blender.
"""
from __future__ import annotations

import importlib
from pathlib import Path

import numpy as np
from conftest import EXT_MODULE

#: what a failed import must leave exactly as it was
DATA_COLLECTIONS = ("objects", "meshes", "armatures", "materials", "actions", "images")


def ext(name: str):
    """A module of the installed extension (e.g. "operators.metadata"): the
    code Blender runs, whose classes the oracle's isinstance checks expect."""
    return importlib.import_module(f"{EXT_MODULE}.{name}")


def fmt(fid: str):
    return ext("io.formats").by_id(fid)


def reference(fid: str, paths, axes=None):
    """A fresh parse of ``paths`` by the format's reader (the installed
    extension's), in the Blender space ``axes`` describes (default: the
    format's default axes)."""
    return fmt(fid).adapter.read_scene([str(p) for p in paths], axes=axes, warnings=[])


def imported(bpy):
    """(the armature object or None, {scene mesh index: mesh object}) of the
    current scene, found by the builder's metadata."""
    md = ext("operators.metadata")
    own = ext("operators.own_binds")        # a mesh's own binds belong to the rig they follow
    arms = [o for o in bpy.context.scene.objects if o.type == "ARMATURE" and not own.follows(o, o.parent)]
    assert len(arms) <= 1, [o.name for o in arms]
    meshes = {}
    for o in bpy.context.scene.objects:
        if o.type == "MESH":
            meta = md.load(o, md.MESH_KEY)
            assert meta is not None, f"{o.name} has no {md.MESH_KEY}"
            assert meta["index"] not in meshes
            meshes[meta["index"]] = o
    return (arms[0] if arms else None), meshes


def play(arm, clip_name: str) -> None:
    """Make the action of the NLA track named ``clip_name`` the armature's
    active action (the other ACTION tracks are muted by the importer)."""
    ad = arm.animation_data
    track = next(t for t in ad.nla_tracks if t.name == clip_name)
    strip = track.strips[0]
    ad.action = strip.action
    ad.action_slot = strip.action_slot


def fps(bpy) -> float:
    r = bpy.context.scene.render
    return r.fps / r.fps_base


def verify(bpy, meshes, ref, clips, frames, rel_tolerance: float = 1e-5, maps=None):
    return ext("operators.verify").verify(bpy.context, meshes, ref, clips, frames, rel_tolerance, maps=maps)


def snapshot(bpy) -> dict:
    """Every datablock name a failed import must not add or remove, and the
    scene frame settings it must not change."""
    out = {k: sorted(x.name for x in getattr(bpy.data, k)) for k in DATA_COLLECTIONS}
    sc = bpy.context.scene
    out["frames"] = (sc.frame_start, sc.frame_end, sc.frame_current)
    return out


def save_png(bpy, path: Path) -> None:
    """A 2 x 2 PNG written by Blender at ``path`` (folders made)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    img = bpy.data.images.new("tmp", 2, 2)
    img.filepath_raw = str(path)
    img.file_format = "PNG"
    img.save()
    bpy.data.images.remove(img)


def render_pixels(bpy, size, name: str = "check") -> np.ndarray:
    """The scene rendered with its camera and engine at ``size`` (w, h):
    (h, w, 4) RGBA, top row first."""
    scene = bpy.context.scene
    scene.render.resolution_x, scene.render.resolution_y = size
    scene.render.resolution_percentage = 100
    out = Path(bpy.app.tempdir) / f"{name}.png"
    scene.render.image_settings.file_format = "PNG"
    scene.render.image_settings.color_mode = "RGBA"
    scene.render.filepath = str(out)
    bpy.ops.render.render(write_still=True)
    img = bpy.data.images.load(str(out))
    px = np.empty(len(img.pixels), dtype=np.float32)
    img.pixels.foreach_get(px)
    bpy.data.images.remove(img)
    return px.reshape(size[1], size[0], 4)[::-1]
