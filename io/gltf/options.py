# SPDX-License-Identifier: GPL-3.0-or-later
"""glTF's own options (see ``io.formats``): written only, by ``convert``
and the command line (inside Blender, its own glTF add-on imports and
exports)."""
from ..options import Option

EXPORT_OPTIONS = (
    Option("max_influences", "Max Influences",
           "Bone weights per vertex: the strongest this many, renormalised (4: JOINTS_0/WEIGHTS_0, what every "
           "glTF reader takes; 8: JOINTS_1/WEIGHTS_1 too; 0: all of them, in as many sets of 4 as needed)",
           4, min=0, max=255, panel="Geometry"),
    Option("scale", "Scale", "Multiply every coordinate by this (glTF counts metres; 1: the units as read)",
           1.0, min=1e-9, max=1e9, panel="Transform"),
    Option("embed_images", "Embed Images",
           "Pack the PNG and JPEG images into the file (a .glb's binary chunk, a .gltf's data URIs) instead "
           "of referring to them by name", False, panel="File"),
)
