# SPDX-License-Identifier: GPL-3.0-or-later
"""DirectX's own options (see ``io.formats``): each one reaches the
operators, the command line and ``convert`` from here.

Up is decided from the file's data by default (``MANUAL_ORIENTATION`` off):
.X files come Y-up (DirectX's habit) or Z-up (3ds Max exporters) and say
nothing about it."""
from ..options import MANUAL_ORIENTATION, Option

#: D3DX interpolates rotation keys by slerp, Blender's quaternion F-curves
#: per component (1.1e-4 of the model size apart on tiny_4anim.x between
#: keys): key every frame with the exact playback by default.
IMPORT_DEFAULTS = {"key_every_frame": True}

TIME_BASE = Option(
    "time_base", "Time Base",
    "What one tick of the animation keys is",
    "AUTO",
    items=(("AUTO", "Automatic", "From the file: its AnimTicksPerSecond; without one, frame numbers when the keys "
                                 "are (gaps under 80 ticks or a last key under 400), else D3DX's 4800 per second"),
           ("FILE", "File", "The file's AnimTicksPerSecond, or 4800 when it has none (as DirectX does)"),
           ("FRAMES", "One Tick per Frame", "Key times are frame numbers at the scene's frame rate"),
           ("CUSTOM", "Custom", "Ticks per Second below")),
    panel="Animation")
TICKS_PER_SECOND = Option(
    "ticks_per_second", "Ticks per Second",
    "Ticks per second of the animation keys for the Custom time base (a number above 0 with Automatic "
    "also means Custom; 0: unset)",
    0.0, min=0.0, max=1e9, panel="Animation")

#: One timeline in, named clips out: a frame-ranges file (:mod:`..ranges`: the JSON a
#: one-timeline export writes, or a Minetest mod's Lua file) cuts the file's timeline into one
#: clip per range (:mod:`.timeline_ranges`); without it, ``STEM.ranges.json`` beside the model
RANGES = Option(
    "ranges", "Frame Ranges",
    "A file naming the animations as frame ranges of the file's timeline, one action each: a .ranges.json "
    "(what a one-timeline export writes) or a Minetest mod's Lua file (animation tables, set_animation "
    "calls). Empty: the model's own .ranges.json when there is one",
    "", panel="Animation", unprefixed=True)

#: A .X file stores a vertex once per UV, normal and material, so every UV seam and hard
#: edge is a cut: welded, the mesh edits as one piece and looks the same (:mod:`..weld`).
WELD = Option(
    "weld", "Weld Vertices",
    "Make the vertices the file splits at UV seams, hard edges and material borders one vertex each "
    "(those its VertexDuplicationIndices mark as one; without them, those at the same place with the same "
    "weights), with the UV seams marked and the file's normals kept, so the mesh edits as one piece and looks "
    "the same (off: the file's vertices as stored)",
    True, panel="Geometry")

#: ``read_scene``'s options (model import, ``import``/``verify``, ``convert``'s input)
IMPORT_OPTIONS = (MANUAL_ORIENTATION, TIME_BASE, TICKS_PER_SECOND, RANGES, WELD)
#: ``read_clips``'s options (animations onto an existing armature)
ANIM_IMPORT_OPTIONS = (TIME_BASE, TICKS_PER_SECOND, RANGES)

#: ``write_scene``'s options (export, ``export``, ``convert``'s output)
#: The storage kinds of a .X file (the writer's ``storage``).
STORAGE = Option("storage", "Storage", "How the file is stored", "text",
                 items=(("text", "Text", "Plain text, readable and diffable"),
                        ("binary", "Binary", "Binary tokens: smaller and faster to read"),
                        ("text_compressed", "Text, Compressed", "MSZIP-compressed text"),
                        ("binary_compressed", "Binary, Compressed", "MSZIP-compressed binary: the smallest")),
                 panel="File", old_flags=("--format",), aliases=(("compressed", "text_compressed"),))

#: Which program the file is for (:mod:`.targets`): DirectX's own semantics, or one
#: frame-numbered timeline the way Irrlicht (Minetest/Luanti) or DarkBASIC Pro
#: (FPS Creator, GameGuru Classic) play it, with its frame ranges written beside it.
TARGET = Option(
    "target", "Target", "The program the file is for",
    "DIRECTX",
    items=(("DIRECTX", "DirectX", "Direct3D and D3DX: one AnimationSet per action, key times in ticks"),
           ("IRRLICHT", "Irrlicht / Minetest",
            "Irrlicht 1.8 and the games on it (Minetest/Luanti): every action end to end on one "
            "frame-numbered timeline, keys on every frame, uncompressed; the frame ranges written beside "
            "the file (.ranges.json, .ranges.lua)"),
           ("DARKBASIC", "DarkBASIC / FPS Creator",
            "DarkBASIC Pro, FPS Creator, GameGuru Classic: every action end to end on one frame-numbered "
            "timeline of matrix keys on every frame, as their character files are; the frame ranges written "
            "beside the file (.ranges.json)")),
    panel="File")
MAX_INFLUENCES = Option(
    "max_influences", "Max Influences",
    "Keep at most this many bone weights per vertex, the strongest, renormalised (0: no limit; 4 for "
    "Direct3D 9 hardware skinning)",
    0, min=0, max=255, panel="Geometry")
TRIANGULATE = Option("triangulate", "Triangulate Faces", "Write every face as triangles", False,
                     panel="Geometry")

EXPORT_OPTIONS = (
    TARGET,
    STORAGE,
    Option("float_size", "Float Size", "Precision of the numbers in the file", "32",
           items=(("32", "32-bit", "Single precision (what most programs read)"),
                  ("64", "64-bit", "Double precision")),
           panel="File", flags=("--float-size", "--float")),
    Option("key_type", "Key Type", "How each bone's animation is stored (the Irrlicht target always writes "
                                   "rotation and position keys, and scale keys where a bone scales; the "
                                   "DarkBASIC target matrix keys, as their readers need)", "TRS",
           items=(("TRS", "Rotation, Scale, Position", "Separate rotation, scale and position keys"),
                  ("MATRIX", "Matrix", "One 4x4 matrix per key")),
           panel="Animation"),
    Option("ticks_per_second", "Ticks per Second",
           "Time resolution of the animation keys (AnimTicksPerSecond; 0: the time base the animations were "
           "imported with, a file's own ticks, else 4800, what DirectX and 3ds Max use). Irrlicht target: the "
           "speed its frame-numbered timeline plays at (0: the frame rate)",
           0, min=0, max=1_000_000, panel="Animation"),
    MAX_INFLUENCES,
    TRIANGULATE,
)
