# SPDX-License-Identifier: GPL-3.0-or-later
"""A material's texture maps beyond the base colour, both ways (the
builder's :func:`add_maps`, the extractor's :func:`maps_of`).

* normal maps through a Normal Map node into the Principled BSDF's Normal;
  bump (height) maps through a Bump node (after the normal map when there
  is one); specular maps into Specular IOR Level; emission
  (self-illumination) maps into Emission Color;
* GameGuru's (FPS Creator's) maps beside a ``_D`` texture: ``NAME_N``
  (normal), ``NAME_S`` (specular), ``NAME_I`` (illumination), any image
  extension and letter case, used where the material names no map of that
  role and only when the file is there;
* further textures (a second TextureFilename) as image nodes, not
  connected.

Images come from the builder's :class:`.textures.ImageCache`: a missing file
still gets its image (with its path, for Find Missing Files), in an image
node labelled as missing and not connected, as for the base colour. The
names the file gave are kept in the material's metadata and written back
while the image still has the path the import gave it.
"""
from __future__ import annotations

import os
from typing import Any

import bpy

from ..scene.model import MAP_ROLES, Material
from . import textures

#: the image node of each role (node names are the extractor's key)
NODE_NAMES = {"normal": "Normal Map Texture", "bump": "Bump Map Texture", "specular": "Specular Map Texture",
              "emission": "Emission Map Texture"}
MORE_NODE = "Texture {}"        # the further textures, numbered from 2 (the file's second TextureFilename)
#: GameGuru's suffixes beside a _D (diffuse) texture
BESIDE = (("N", "normal"), ("S", "specular"), ("I", "emission"))


def image_path(img) -> str:
    """The path of an image as export writes it (absolute where Blender keeps it relative)."""
    raw = img.filepath or img.name
    return bpy.path.abspath(raw, library=img.library) if raw.startswith("//") else raw


def beside(texture: str | None, filepath: str, images: textures.ImageCache) -> dict[str, str]:
    """GameGuru's maps found beside a ``_D`` texture: role -> texture name
    (looked for through ``images``' folder listings)."""
    if not texture:
        return {}
    stem, ext = os.path.splitext(texture)
    if len(stem) < 2 or stem[-2:].upper() != "_D":
        return {}
    out = {}
    for suffix, role in BESIDE:
        name = stem[:-1] + (suffix if stem[-1] == "D" else suffix.lower()) + ext
        if images.find(name, filepath) is not None:
            out[role] = name
    return out


def _input(bsdf, *names):
    return next((bsdf.inputs[n] for n in names if n in bsdf.inputs), None)


def _image_node(nt, name: str, img, location, data: bool):
    tex = nt.nodes.new("ShaderNodeTexImage")
    tex.name = name
    tex.image = img
    tex.location = location
    if data:        # normal, bump and specular maps hold data, not colours
        try:
            img.colorspace_settings.name = "Non-Color"
        except (TypeError, AttributeError):
            pass
    return tex


def add_maps(nt, bsdf, mat: Material, filepath: str, images: textures.ImageCache, warnings: list[str]) -> dict:
    """The material's maps and further textures as image nodes (module doc);
    returns what the metadata keeps: {"maps": {role: [name, image path]},
    "more": [[name, image path], ...], "beside": [roles found beside]}."""
    maps = dict(mat.maps)
    found = {r: n for r, n in beside(mat.texture, filepath, images).items() if r not in maps}
    maps.update(found)
    x, y = bsdf.location.x - 700, bsdf.location.y - 320
    kept: dict[str, list[str]] = {}
    shown: dict[str, Any] = {}
    for role in MAP_ROLES:
        name = maps.get(role)
        img, missing = images.get(name, filepath, warnings) if name else (None, True)
        if img is None:
            continue
        # (an image the base colour shows too keeps its colour space)
        data = role != "emission" and img is not images.by_name.get(mat.texture or "")
        tex = _image_node(nt, NODE_NAMES[role], img, (x, y), data)
        y -= 300
        kept[role] = [str(name), bpy.path.abspath(img.filepath)]
        if missing:
            tex.label = f"Missing: {img.name}"
        else:
            shown[role] = tex
    links = nt.links
    normal_out = None
    if "normal" in shown:
        nm = nt.nodes.new("ShaderNodeNormalMap")
        nm.location = (bsdf.location.x - 300, bsdf.location.y - 320)
        links.new(shown["normal"].outputs["Color"], nm.inputs["Color"])
        normal_out = nm.outputs["Normal"]
    if "bump" in shown:
        bump = nt.nodes.new("ShaderNodeBump")
        bump.location = (bsdf.location.x - 300, bsdf.location.y - 520)
        links.new(shown["bump"].outputs["Color"], bump.inputs["Height"])
        if normal_out is not None:
            links.new(normal_out, bump.inputs["Normal"])
        normal_out = bump.outputs["Normal"]
    if normal_out is not None:
        links.new(normal_out, bsdf.inputs["Normal"])
    socket = _input(bsdf, "Specular IOR Level", "Specular")
    if "specular" in shown and socket is not None:
        links.new(shown["specular"].outputs["Color"], socket)
    socket = _input(bsdf, "Emission Color", "Emission")
    if "emission" in shown and socket is not None:
        links.new(shown["emission"].outputs["Color"], socket)
        strength = _input(bsdf, "Emission Strength")
        if strength is not None and not strength.default_value:
            strength.default_value = 1.0
    more = []
    for k, name in enumerate(mat.more_textures):
        img, missing = images.get(name, filepath, warnings)
        if img is None:
            more.append([name, ""])
            continue
        tex = _image_node(nt, MORE_NODE.format(k + 2), img, (x - 320, bsdf.location.y - 320 * k), False)
        tex.label = f"{'Missing: ' if missing else ''}{img.name} (not connected)"
        more.append([name, bpy.path.abspath(img.filepath)])
    return {"maps": kept, "more": more, "beside": sorted(found)}


def _from(socket, node_type: str | None = None):
    """The node linked into ``socket`` (of ``node_type``), or None."""
    if socket is None or not socket.is_linked:
        return None
    node = socket.links[0].from_node
    return node if node_type is None or node.type == node_type else None


def _linked(bsdf) -> dict[str, object]:
    """The image nodes wired into the BSDF, by role (whatever their names)."""
    out: dict[str, object] = {}
    via = _from(bsdf.inputs.get("Normal"))
    while via is not None and via.type in ("BUMP", "NORMAL_MAP"):
        if via.type == "BUMP":
            out.setdefault("bump", _from(via.inputs.get("Height"), "TEX_IMAGE"))
            via = _from(via.inputs.get("Normal"))
        else:
            out.setdefault("normal", _from(via.inputs.get("Color"), "TEX_IMAGE"))
            via = None
    out["specular"] = _from(_input(bsdf, "Specular IOR Level", "Specular"), "TEX_IMAGE")
    out["emission"] = _from(_input(bsdf, "Emission Color", "Emission"), "TEX_IMAGE")
    return {r: n for r, n in out.items() if n is not None}


def _name(node, kept) -> str | None:
    """The texture name of an image node: the file's own while the image keeps the path the import gave it."""
    if node is None or getattr(node, "image", None) is None:
        return None
    path = image_path(node.image)
    if isinstance(kept, list) and len(kept) == 2 and kept[1] == path:
        return str(kept[0])
    return path


def maps_of(mat, meta: dict) -> tuple[dict[str, str], list[str]]:
    """(maps by role, further textures) of a Blender material: the image
    nodes wired into its Principled BSDF, else those the import named."""
    if mat is None or mat.node_tree is None:
        return {}, []
    nodes = mat.node_tree.nodes
    bsdf = next((nd for nd in nodes if nd.type == "BSDF_PRINCIPLED"), None)
    linked = _linked(bsdf) if bsdf is not None else {}
    kept = meta.get("maps") if isinstance(meta.get("maps"), dict) else {}
    maps = {}
    for role in MAP_ROLES:
        node = linked.get(role) or nodes.get(NODE_NAMES[role])
        name = _name(node, kept.get(role))
        if name:
            maps[role] = name
    more = []
    for k, entry in enumerate(meta.get("more") or []):
        node = nodes.get(MORE_NODE.format(k + 2))
        name = _name(node, entry) if node is not None else None
        if name:
            more.append(name)
    return maps, more
