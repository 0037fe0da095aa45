# SPDX-License-Identifier: GPL-3.0-or-later
"""In-memory model of a DirectX .X file, exactly as stored (no axis conversion).

Matrices are the 16 stored numbers reshaped row-major to (4, 4): Direct3D
row-vector convention, translation in row 3. Float arrays are float64, index
arrays int64.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


def identity() -> np.ndarray:
    return np.eye(4, dtype=np.float64)


@dataclass(eq=False)
class XEffect:
    """An EffectInstance: the effect file and its parameters in file order,
    each (kind, name, value): ("string", name, str), ("dword", name, int),
    ("floats", name, list of floats)."""

    filename: str
    params: list[tuple[str, str, object]] = field(default_factory=list)


@dataclass(eq=False)
class XMaterial:
    name: str | None = None
    face_color: np.ndarray = field(default_factory=lambda: np.ones(4))
    power: float = 0.0
    specular: np.ndarray = field(default_factory=lambda: np.zeros(3))
    emissive: np.ndarray = field(default_factory=lambda: np.zeros(3))
    texture: str | None = None
    #: the TextureFilename objects after the first, in file order
    more_textures: list[str] = field(default_factory=list)
    effect: XEffect | None = None
    #: NormalmapFilename (one exporter's normal map beside TextureFilename; assimp reads it)
    normal_map: str | None = None


@dataclass(eq=False)
class XSkinWeights:
    frame_name: str
    vertex_indices: np.ndarray
    weights: np.ndarray
    matrix_offset: np.ndarray = field(default_factory=identity)


@dataclass(eq=False)
class XMesh:
    name: str | None
    positions: np.ndarray
    face_sizes: np.ndarray
    face_indices: np.ndarray
    normals: np.ndarray | None = None
    normal_face_sizes: np.ndarray | None = None
    normal_face_indices: np.ndarray | None = None
    uvs: np.ndarray | None = None
    vertex_colors: np.ndarray | None = None
    material_indices: np.ndarray | None = None
    materials: list[XMaterial] = field(default_factory=list)
    skin_header: tuple[int, int, int] | None = None
    skin_weights: list[XSkinWeights] = field(default_factory=list)
    # Vertex streams from DeclData / FVFData not decoded into normals / uvs,
    # keyed by usage and index ("TANGENT0", "TEXCOORD1", ...): float64 (V, k).
    extra_streams: dict[str, np.ndarray] = field(default_factory=dict)
    #: MeshTextureCoords objects after the first (as assimp reads them: its next channels), (V, 2) each
    more_uvs: list[np.ndarray] = field(default_factory=list)
    #: VertexDuplicationIndices: (V,) the original vertex each vertex is a copy of (itself
    #: when it is one), for vertices an exporter split (at UV seams, material borders)
    duplicates: np.ndarray | None = None


@dataclass(eq=False)
class XFrame:
    name: str | None
    matrix: np.ndarray = field(default_factory=identity)
    children: list["XFrame"] = field(default_factory=list)
    meshes: list[XMesh] = field(default_factory=list)

    def walk(self):
        """This frame and all descendants, depth first, parents first."""
        stack = [self]
        while stack:
            frame = stack.pop()
            yield frame
            stack.extend(reversed(frame.children))


@dataclass(eq=False)
class XAnimationKey:
    key_type: int
    times: np.ndarray
    values: np.ndarray


@dataclass(eq=False)
class XAnimation:
    name: str | None = None
    frame_name: str | None = None
    keys: list[XAnimationKey] = field(default_factory=list)
    open_closed: int | None = None
    position_quality: int | None = None


@dataclass(eq=False)
class XAnimationSet:
    name: str | None = None
    animations: list[XAnimation] = field(default_factory=list)


@dataclass(eq=False)
class XFile:
    version: str = "0303"
    storage: str = "txt"               # header code: txt, bin, tzip, bzip
    float_size: int = 32
    frames: list[XFrame] = field(default_factory=list)
    meshes: list[XMesh] = field(default_factory=list)
    anim_ticks_per_second: int | None = None
    #: templates a writer declares at the top of the file (:mod:`.templates`): readers built on
    #: the retained-mode file API (DarkBASIC Pro's) know only the basic ones
    templates: tuple[str, ...] = ()
    animation_sets: list[XAnimationSet] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def all_frames(self):
        for root in self.frames:
            yield from root.walk()
