# SPDX-License-Identifier: GPL-3.0-or-later
"""What an import made (:class:`Built`): the builder's passes fill it in
(``builder.build``; animation files onto an existing armature:
``builder.add_clips``), the pipeline reports from it."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..core import rig
from ..io.errors import Warnings
from ..scene import Scene
from .selfcheck import SelfCheck


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
    self_check: SelfCheck | None = None                        # the default pose against scene.evaluate's
    default_points: np.ndarray | None = None                   # evaluate.default_points of the scene
    default_channels: tuple | None = None                      # armature_build.default_channels, once made
    local_channels: tuple | None = None                        # scene.bone_keys.local_channels, once made
