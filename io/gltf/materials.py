# SPDX-License-Identifier: GPL-3.0-or-later
"""Scene materials -> glTF metallic-roughness materials, their textures
and images.

A material shows what the project's Blender import shows: the base colour
(the texture instead where it has one, its alpha kept), dielectric, the
roughness :attr:`...scene.model.Material.roughness` gives for the specular
power, the emissive colour (its map instead where it has one), a normal
map, and ``BLEND`` where the alpha (the scene's alpha rule: what the
file's runtime shows, a .X alpha of 0 being opaque) is below 1; bump and
specular maps have no place in glTF's core material (reported). A texture is an image referenced by its name as a URI
(relative, or a ``file://`` URI for an absolute path); ``embed`` packs
PNG and JPEG images into the file instead (a ``.glb``'s binary chunk, a
``.gltf``'s data URI).
"""
from __future__ import annotations

import base64
import os
import re
from pathlib import Path
from urllib.parse import quote

import numpy as np

from ...scene import Scene
from ..errors import group
from .document import Document

_MAGIC = ((b"\x89PNG\r\n\x1a\n", "image/png"), (b"\xff\xd8\xff", "image/jpeg"))
_SUFFIX = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg"}
_DRIVE = re.compile(r"^[A-Za-z]:/")


def image_uri(name: str) -> str:
    """A texture name (as the scene holds it: a file's own spelling,
    Windows separators too) as a URI reference: relative names stay
    relative, absolute paths become ``file://`` URIs, percent-encoded."""
    s = name.replace("\\", "/")
    if _DRIVE.match(s):
        return "file:///" + quote(s, safe="/:")
    if s.startswith("/"):
        return "file://" + quote(s, safe="/")
    return quote(s, safe="/")


def _mime(data: bytes) -> str | None:
    return next((m for magic, m in _MAGIC if data.startswith(magic)), None)


class MaterialWriter:
    """The document's materials, made as primitives ask for them."""

    def __init__(self, doc: Document, scene: Scene, out_path, *, embed: bool, glb: bool, warnings: list[str]):
        self.doc = doc
        self.scene = scene
        self.embed = embed
        self.glb = glb
        self.warnings = warnings
        self.out_dir = Path(out_path).resolve().parent
        self.source_dir = Path(scene.source.path).resolve().parent if scene.source.path else None
        self._materials: dict[tuple[int, bool, bool], int] = {}
        self._textures: dict[str, int | None] = {}

    def index(self, material: int, uvs: bool = True, normals: bool = True) -> int | None:
        """The document's material for the scene's ``material`` (-1: none,
        None) on a primitive with or without ``uvs`` and ``normals``: its
        textures need UVs, a normal map normals too (a primitive without
        them gets the material without them)."""
        if not 0 <= material < len(self.scene.materials):
            return None
        m = self.scene.materials[material]
        key = (material, uvs and bool(m.texture or m.maps), uvs and normals and "normal" in m.maps)
        if key not in self._materials:
            self._materials[key] = self._material(material, *key[1:])
        return self._materials[key]

    def _material(self, material: int, textures: bool, normal_map: bool) -> int:
        m = self.scene.materials[material]
        rgba = np.ones(4)
        c = np.asarray(m.color, dtype=np.float64).reshape(-1)[:4]
        rgba[:len(c)] = c
        rgba = np.clip(rgba, 0.0, 1.0)
        pbr: dict = {"metallicFactor": 0.0, "roughnessFactor": float(np.clip(m.roughness, 0.0, 1.0))}
        out: dict = {"pbrMetallicRoughness": pbr}
        if m.name:
            out["name"] = m.name
        if textures and m.texture:
            pbr["baseColorTexture"] = {"index": self.texture(m.texture)}
            rgba[:3] = 1.0                  # the texture shows instead of the colour, as Blender's import has it
        pbr["baseColorFactor"] = [float(x) for x in rgba]
        if rgba[3] < 1.0:
            out["alphaMode"] = "BLEND"
        em = np.clip(np.asarray(m.emissive, dtype=np.float64).reshape(-1)[:3], 0.0, 1.0)
        if textures and "emission" in m.maps:   # the map shows as the emission colour, as Blender's import has it
            out["emissiveTexture"] = {"index": self.texture(m.maps["emission"])}
            em = np.ones(3)
        if len(em) == 3 and em.any():
            out["emissiveFactor"] = [float(x) for x in em]
        if normal_map:
            out["normalTexture"] = {"index": self.texture(m.maps["normal"])}
        for role in sorted(set(m.maps) - {"normal", "emission"}):
            group(self.warnings, f"{role} maps, which glTF's materials have no place for, not written",
                  f"{m.name!r} ({Path(m.maps[role].replace(chr(92), '/')).name})")
        return self.doc.add("materials", out)

    def texture(self, name: str) -> int | None:
        if name not in self._textures:
            self._textures[name] = self.doc.add("textures", {"source": self._image(name)})
        return self._textures[name]

    def _find(self, name: str) -> Path | None:
        """The image file a name stands for: beside the written file (where
        its URI leads), else beside the scene's source; None when neither is."""
        s = name.replace("\\", "/")
        if os.path.isabs(name) or _DRIVE.match(s):
            candidates = [Path(name)]
        else:
            candidates = [self.out_dir / s] + ([self.source_dir / s] if self.source_dir else [])
        return next((p for p in candidates if p.is_file()), None)

    def _image(self, name: str) -> int:
        label = Path(name.replace("\\", "/")).name or name
        image: dict = {"name": label}
        data = None
        if self.embed:
            found = self._find(name)
            try:
                data = found.read_bytes() if found is not None else None
            except OSError:
                data = None
            if data is None:
                group(self.warnings, "images not found, so not packed (referenced by name)", label,
                      fix="put them beside the model or the written file")
        mime = _mime(data) if data is not None else _SUFFIX.get(Path(label).suffix.lower())
        if data is not None and mime is not None:
            if self.glb:
                image.update(bufferView=self.doc.view(data), mimeType=mime)
            else:
                image["uri"] = f"data:{mime};base64," + base64.b64encode(data).decode("ascii")
            return self.doc.add("images", image)
        if mime is None:
            group(self.warnings, "images in a format glTF does not take (PNG and JPEG), referenced as they are",
                  label, fix="convert them to PNG for glTF viewers")
        image["uri"] = image_uri(name)
        return self.doc.add("images", image)
