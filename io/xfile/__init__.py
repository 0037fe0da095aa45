# SPDX-License-Identifier: GPL-3.0-or-later
"""DirectX .X reader and writer (text, binary, MSZIP-compressed; 32/64-bit floats).

Pure Python + numpy. Data is kept exactly as stored: Direct3D row-vector
matrices, left-handed coordinates, v-down texture coordinates; converting to
Blender's conventions is the importer's job.
"""
from .model import XAnimation, XAnimationKey, XAnimationSet, XFile, XFrame, XMaterial, XMesh, XSkinWeights
from .reader import read_xfile, read_xfile_bytes
from .writer import STORAGE, write_xfile, write_xfile_bytes

__all__ = [
    "read_xfile", "read_xfile_bytes", "write_xfile", "write_xfile_bytes", "STORAGE",
    "XFile", "XFrame", "XMesh", "XMaterial", "XSkinWeights", "XAnimationSet",
    "XAnimation", "XAnimationKey",
]
