# SPDX-License-Identifier: GPL-3.0-or-later
"""RiTE RAM (model) and RAA (animation) files: readers and canonical writers.

Pure Python + numpy (never imports bpy). See ``model`` for the data layout.
Every reader raises only :class:`legacy_skin_io.io.errors.FormatError` (with the
file and 1-based line) for bad input; warnings go to the optional ``warnings``
list.
"""
from .model import RaaAnimation, RaaTrack, RamModel, RiteJoint
from .raa_reader import read_raa, read_raa_text
from .ram_reader import read_ram, read_ram_text
from .writer import raa_to_text, ram_to_text, write_raa, write_ram

__all__ = [
    "RamModel", "RiteJoint", "RaaAnimation", "RaaTrack",
    "read_ram", "read_ram_text", "read_raa", "read_raa_text",
    "write_ram", "write_raa", "ram_to_text", "raa_to_text",
]
