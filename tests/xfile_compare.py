# SPDX-License-Identifier: GPL-3.0-or-later
"""Structural comparison of two XFile models (round-trip checks, tests)."""
from __future__ import annotations

import numpy as np

from legacy_skin_io.io.xfile.model import XAnimationSet, XFile, XFrame, XMaterial, XMesh


def all_meshes(xf: XFile):
    """Every mesh of a parsed file: top-level ones, then those under frames
    (file order)."""
    yield from xf.meshes
    for frame in xf.all_frames():
        yield from frame.meshes


def diff_xfiles(a: XFile, b: XFile, rtol: float = 0.0, atol: float = 0.0) -> list[str]:
    """Differences between the data of two models (header fields and warnings are
    ignored). Floats compare with ``np.allclose(rtol, atol)``; ints exactly."""
    out: list[str] = []
    d = _Diff(out, rtol, atol)
    d.value("anim_ticks_per_second", a.anim_ticks_per_second, b.anim_ticks_per_second)
    d.lists("frames", a.frames, b.frames, d.frame)
    d.lists("meshes", a.meshes, b.meshes, d.mesh)
    d.lists("animation_sets", a.animation_sets, b.animation_sets, d.animation_set)
    return out


class _Diff:
    def __init__(self, out: list[str], rtol: float, atol: float):
        self.out = out
        self.rtol = rtol
        self.atol = atol

    def value(self, where, x, y):
        if x != y:
            self.out.append(f"{where}: {x!r} != {y!r}")

    def array(self, where, x, y, exact=False):
        if x is None or y is None:
            if (x is None) != (y is None):
                self.out.append(f"{where}: {'None' if x is None else 'array'} != "
                                f"{'None' if y is None else 'array'}")
            return
        x = np.asarray(x)
        y = np.asarray(y)
        if x.shape != y.shape:
            self.out.append(f"{where}: shape {x.shape} != {y.shape}")
            return
        if exact or x.dtype.kind in "iu" and y.dtype.kind in "iu":
            ok = np.array_equal(x, y)
        else:
            ok = np.allclose(x, y, rtol=self.rtol, atol=self.atol, equal_nan=True)
        if not ok:
            diff = np.abs(x.astype(np.float64) - y.astype(np.float64))
            self.out.append(f"{where}: arrays differ (max abs difference {np.nanmax(diff):g})")

    def lists(self, where, xs, ys, item):
        if len(xs) != len(ys):
            self.out.append(f"{where}: {len(xs)} items != {len(ys)}")
        for k, (x, y) in enumerate(zip(xs, ys)):
            item(f"{where}[{k}]", x, y)

    def frame(self, where, x: XFrame, y: XFrame):
        self.value(f"{where}.name", x.name, y.name)
        self.array(f"{where}.matrix", x.matrix, y.matrix)
        self.lists(f"{where}.meshes", x.meshes, y.meshes, self.mesh)
        self.lists(f"{where}.children", x.children, y.children, self.frame)

    def material(self, where, x: XMaterial, y: XMaterial):
        self.value(f"{where}.name", x.name, y.name)
        self.array(f"{where}.face_color", x.face_color, y.face_color)
        self.array(f"{where}.power", x.power, y.power)
        self.array(f"{where}.specular", x.specular, y.specular)
        self.array(f"{where}.emissive", x.emissive, y.emissive)
        self.value(f"{where}.texture", x.texture, y.texture)
        self.value(f"{where}.more_textures", x.more_textures, y.more_textures)
        self.value(f"{where}.normal_map", x.normal_map, y.normal_map)
        self.value(f"{where}.effect", x.effect is None, y.effect is None)
        if x.effect is not None and y.effect is not None:
            self.value(f"{where}.effect.filename", x.effect.filename, y.effect.filename)
            self.value(f"{where}.effect names", [p[:2] for p in x.effect.params], [p[:2] for p in y.effect.params])
            for (kind, name, a), (_k, _n, b) in zip(x.effect.params, y.effect.params):
                if kind == "floats":
                    self.array(f"{where}.effect[{name}]", np.array(a), np.array(b))
                else:
                    self.value(f"{where}.effect[{name}]", a, b)

    def mesh(self, where, x: XMesh, y: XMesh):
        self.value(f"{where}.name", x.name, y.name)
        for attr in ("positions", "face_sizes", "face_indices", "normals", "normal_face_sizes",
                     "normal_face_indices", "uvs", "vertex_colors", "material_indices"):
            self.array(f"{where}.{attr}", getattr(x, attr), getattr(y, attr))
        self.lists(f"{where}.materials", x.materials, y.materials, self.material)
        self.value(f"{where}.skin_header", x.skin_header, y.skin_header)
        self.lists(f"{where}.skin_weights", x.skin_weights, y.skin_weights, self.skin)
        self.value(f"{where}.more_uvs", len(x.more_uvs), len(y.more_uvs))
        for k, (a, b) in enumerate(zip(x.more_uvs, y.more_uvs)):
            self.array(f"{where}.more_uvs[{k}]", a, b)
        self.value(f"{where}.extra_streams keys", sorted(x.extra_streams), sorted(y.extra_streams))
        for key in sorted(set(x.extra_streams) & set(y.extra_streams)):
            self.array(f"{where}.extra_streams[{key}]", x.extra_streams[key], y.extra_streams[key])

    def skin(self, where, x, y):
        self.value(f"{where}.frame_name", x.frame_name, y.frame_name)
        self.array(f"{where}.vertex_indices", x.vertex_indices, y.vertex_indices)
        self.array(f"{where}.weights", x.weights, y.weights)
        self.array(f"{where}.matrix_offset", x.matrix_offset, y.matrix_offset)

    def animation_set(self, where, x: XAnimationSet, y: XAnimationSet):
        self.value(f"{where}.name", x.name, y.name)
        self.lists(f"{where}.animations", x.animations, y.animations, self.animation)

    def animation(self, where, x, y):
        self.value(f"{where}.name", x.name, y.name)
        self.value(f"{where}.frame_name", x.frame_name, y.frame_name)
        self.value(f"{where}.open_closed", x.open_closed, y.open_closed)
        self.value(f"{where}.position_quality", x.position_quality, y.position_quality)
        self.lists(f"{where}.keys", x.keys, y.keys, self.key)

    def key(self, where, x, y):
        self.value(f"{where}.key_type", x.key_type, y.key_type)
        self.array(f"{where}.times", x.times, y.times)
        self.array(f"{where}.values", x.values, y.values)
