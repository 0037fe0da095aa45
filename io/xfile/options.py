# SPDX-License-Identifier: GPL-3.0-or-later
"""DirectX's operator options (see ``io.formats.Format.options``)."""

#: D3DX interpolates rotation keys by slerp, Blender's quaternion F-curves
#: per component (1.1e-4 of the model size apart on tiny_4anim.x between
#: keys): key every frame with the exact playback by default.
IMPORT_DEFAULTS = {"bake": True}

#: Options of the model import, passed to ``adapter.read_scene`` by keyword.
IMPORT_OPTIONS = (
    {"id": "ticks_per_second", "type": "float", "name": "Ticks per Second", "default": 0.0, "min": 0.0,
     "max": 1e9, "panel": "animation",
     "description": "Time base of the animation keys: 0 uses the file's AnimTicksPerSecond (4800 when it has "
                    "none, as DirectX assumes); set it to the scene's frame rate for one frame per tick"},
)

EXPORT_OPTIONS = (
    {"id": "fmt", "type": "enum", "name": "Format", "default": "text",
     "description": "How the file is stored",
     "items": [("text", "Text", "Plain text, readable and diffable"),
               ("binary", "Binary", "Binary tokens: smaller and faster to read"),
               ("text_compressed", "Text, Compressed", "MSZIP-compressed text"),
               ("binary_compressed", "Binary, Compressed", "MSZIP-compressed binary: the smallest")]},
    {"id": "float_size", "type": "enum", "name": "Float Size", "default": "32",
     "description": "Precision of the numbers in the file",
     "items": [("32", "32-bit", "Single precision (what most programs read)"),
               ("64", "64-bit", "Double precision")]},
    {"id": "key_type", "type": "enum", "name": "Key Type", "default": "TRS",
     "description": "How each bone's animation is stored",
     "items": [("TRS", "Rotation, Scale, Position", "Separate rotation, scale and position keys"),
               ("MATRIX", "Matrix", "One 4x4 matrix per key")]},
    {"id": "ticks_per_second", "type": "int", "name": "Ticks per Second", "default": 4800, "min": 1,
     "max": 1_000_000,
     "description": "Time resolution of the animation keys (4800 is what DirectX and 3ds Max use)"},
)
