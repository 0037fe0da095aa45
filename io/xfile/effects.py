# SPDX-License-Identifier: GPL-3.0-or-later
"""Texture maps of .X materials, both ways: what an ``EffectInstance``'s
texture parameters are for, and a material's textures as the scene keeps
them (:attr:`...scene.model.Material.maps`).

An EffectInstance names an effect file (``.fx``) and sets its parameters;
texture parameters are ``EffectParamString`` objects whose value is an
image file name. Their names are the effect's own, so a parameter's role is
read from words in its name, as they appear in real files:

* the DirectX SDK: ``g_txScene`` (the Dwarf's diffuse texture),
  ``g_txEnvMap``, DXSAS ``Texture0@Name`` / ``Texture1@Name``,
  ``g_MeshTexture``;
* 3ds Max DirectX shader materials written by kW X-port: ``diffuseMap``,
  ``normalMap``, ``specularMap``, ``glossMap``, ``bumpMap``;
* effect-per-decal scenes: ``g_tDiffuse``, ``g_tNormal``, ``g_tSpecular``,
  ``g_tOpacity``; engines' ``g_NormalTexture``, ``NormalMap``,
  ``SpecularMap``, ``BumpMap``, ``EmissiveMap``, ``IllumMap``.

One exporter writes a normal map as a ``NormalmapFilename`` object beside
TextureFilename (assimp reads it): it is the normal map too.

A parameter whose value is no image file name (``"None"``, an empty
string) names no texture. The effect and all its parameters are kept
(``extras["xfile"]["effect"]``) and written back with the same names, each
texture parameter with the scene's current name for its role.
"""
from __future__ import annotations

import os
import re

from ...scene.model import MAP_ROLES, Material
from ..paths import IMAGE_EXTENSIONS
from .model import XEffect, XMaterial

#: words of a texture parameter's name (lower case, letters and digits only) -> its role;
#: the first that matches wins ("diffuse" is the base colour)
ROLE_WORDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("normal", ("normal",)),
    ("bump", ("bump", "height")),
    ("specular", ("spec", "gloss")),
    ("emission", ("emissi", "illum", "glow")),
    ("diffuse", ("diffuse", "albedo", "basecolor", "basetex", "basemap", "colormap", "colortex",
                 "txscene", "meshtexture", "texture0")),
)
PARAM_KINDS = ("string", "dword", "floats")


def role_of(param: str) -> str | None:
    """The role of a texture parameter by its name (:data:`ROLE_WORDS`), or None."""
    word = re.sub(r"[^a-z0-9]", "", param.lower())
    return next((role for role, words in ROLE_WORDS if any(w in word for w in words)), None)


def is_image_name(value: object) -> bool:
    """A string that names an image file (by its extension)."""
    if not isinstance(value, str) or not value.strip():
        return False
    return os.path.splitext(value.replace("\\", "/"))[1].lower() in IMAGE_EXTENSIONS


def read_maps(xm: XMaterial) -> tuple[str | None, dict[str, str], list[str], dict | None]:
    """(base colour texture, maps by role, further TextureFilename names, the
    effect as JSON-able extras or None) of a material as read. The base
    colour is the first TextureFilename, else the effect's diffuse texture;
    each role takes the first texture parameter of its role."""
    texture = xm.texture
    maps: dict[str, str] = {}
    effect = None
    if xm.effect is not None:
        effect = {"file": xm.effect.filename, "params": [[k, n, v] for k, n, v in xm.effect.params],
                  "texture_filename": xm.texture is not None}
        for kind, name, value in xm.effect.params:
            if kind != "string" or not is_image_name(value):
                continue
            role = role_of(name)
            if role == "diffuse" and texture is None:
                texture = str(value)
            elif role in MAP_ROLES and role not in maps:
                maps[str(role)] = str(value)
    if xm.normal_map is not None:
        maps.setdefault("normal", xm.normal_map)
        effect = effect or {}
        effect["normalmap_filename"] = True
    return texture, maps, list(xm.more_textures), effect


def _params(info: dict) -> list[tuple[str, str, object]] | None:
    """The effect parameters kept in extras, checked (None when they are not as written)."""
    out: list[tuple[str, str, object]] = []
    for p in info.get("params") or []:
        if not (isinstance(p, (list, tuple)) and len(p) == 3 and p[0] in PARAM_KINDS and isinstance(p[1], str)):
            return None
        kind, name, value = p
        ok = (isinstance(value, str) if kind == "string" else
              isinstance(value, int) and 0 <= value <= 0xFFFFFFFF if kind == "dword" else
              isinstance(value, list) and all(isinstance(x, (int, float)) for x in value))
        if not ok:
            return None
        out.append((kind, name, value))
    return out


def write_maps(mat: Material) -> tuple[str | None, list[str], XEffect | None, str | None]:
    """(TextureFilename, further TextureFilename names, EffectInstance,
    NormalmapFilename) of a scene material: the effect it was read with, its
    texture parameters set to the material's current textures of their
    roles; a TextureFilename for the base colour when there is no effect or
    the file had one beside it; the normal map as NormalmapFilename when the
    file wrote it so."""
    xinfo = mat.extras.get("xfile") if isinstance(mat.extras, dict) else None
    info = xinfo.get("effect") if isinstance(xinfo, dict) else None
    normal = mat.maps.get("normal") if isinstance(info, dict) and info.get("normalmap_filename") else None
    params = _params(info) if isinstance(info, dict) and isinstance(info.get("file"), str) else None
    if params is None or not isinstance(info, dict):
        return mat.texture, list(mat.more_textures), None, normal
    current = dict(mat.maps)
    if mat.texture:
        current["diffuse"] = mat.texture
    out = []
    for kind, name, value in params:
        role = role_of(name) if kind == "string" and is_image_name(value) else None
        out.append((kind, name, current.get(role, value) if role is not None else value))
    texture = mat.texture if info.get("texture_filename", True) else None
    return texture, list(mat.more_textures), XEffect(str(info["file"]), out), normal
