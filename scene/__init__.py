# SPDX-License-Identifier: GPL-3.0-or-later
"""The format-neutral scene model between the file formats and Blender.

Never imports bpy. Readers (``io/<format>/adapter.py``) build a
:class:`Scene`; writers take one; the Blender builder and extractor
(``operators/builder.py``, ``operators/extractor.py``) turn it into Blender
data and back; :mod:`.evaluate` is the verification oracle.
"""
from .axes import AxisConversion, axis_matrix
from .model import Clip, Material, Mesh, Sampler, Scene, SceneError, Skeleton, Skin, Source

__all__ = ["AxisConversion", "axis_matrix", "Clip", "Material", "Mesh", "Sampler", "Scene", "SceneError",
           "Skeleton", "Skin", "Source"]
