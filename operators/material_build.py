# SPDX-License-Identifier: GPL-3.0-or-later
"""Scene materials -> Blender materials (the builder's material pass): a
Principled BSDF per material, its base colour texture, and its further maps
(``material_maps``); beyond :data:`MATERIAL_LIMIT` materials, one Blender
material per distinct look (faces keep their own scene material in
``metadata.MATERIAL_ATTR``)."""
from __future__ import annotations

from typing import Any

import bpy
import numpy as np

from ..io.errors import note
from ..scene import Material, Scene
from . import material_maps, metadata, textures

#: Blender's material creation slows down quadratically: beyond this many
#: materials, materials that look the same share one Blender material (each
#: face keeps its own in the MATERIAL_ATTR face attribute).
MATERIAL_LIMIT = 256


def _appearance(mat: Material) -> tuple:
    return (tuple(np.round(np.asarray(mat.color, dtype=np.float64), 9)), round(float(mat.specular_power), 9),
            tuple(np.round(mat.specular, 9)), tuple(np.round(mat.emissive, 9)), mat.texture,
            tuple(sorted(mat.maps.items())), tuple(mat.more_textures))


def material_groups(scene: Scene) -> np.ndarray:
    """(M,) index of the Blender material each scene material becomes: its
    own, or (beyond MATERIAL_LIMIT) the first one that looks the same."""
    n = len(scene.materials)
    if n <= MATERIAL_LIMIT:
        return np.arange(n)
    first: dict[tuple, int] = {}
    return np.array([first.setdefault(_appearance(m), k) for k, m in enumerate(scene.materials)], dtype=np.int64)


def build_materials(scene: Scene, images: textures.ImageCache,
                    warnings: list[str]) -> tuple[np.ndarray, dict[int, Any]]:
    """(:func:`material_groups`, {group: Blender material}): the materials
    the scene's meshes use, their images through ``images``."""
    groups = material_groups(scene)
    mats = {int(k): make_material(scene.materials[k], scene.source.path, images, warnings)
            for k in np.unique(groups).tolist()}
    if len(mats) < len(scene.materials):
        note(warnings, f"{len(scene.materials)} materials: the {len(mats)} distinct looks were made "
                       f"(faces keep their own in the {metadata.MATERIAL_ATTR!r} attribute)")
    return groups, mats


def _set_input(node, name: str, value) -> None:
    """A node input's default value, set only when it changes (each set
    updates the node tree: about 30 microseconds, even to the same value)."""
    sock = node.inputs[name]
    if not np.array_equal(np.asarray(sock.default_value, dtype=np.float32), np.asarray(value, dtype=np.float32)):
        sock.default_value = value


def make_material(mat: Material, filepath: str, images: textures.ImageCache, warnings: list[str]):
    """Principled BSDF from a scene material."""
    out = bpy.data.materials.new(mat.name)
    if out.node_tree is None:  # Blender 4.5; 5.0 materials come with nodes
        out.use_nodes = True
    nt = out.node_tree
    bsdf = next((n for n in nt.nodes if n.type == "BSDF_PRINCIPLED"), None)
    if bsdf is None:
        bsdf = nt.nodes.new("ShaderNodeBsdfPrincipled")
    rgba = tuple(float(x) for x in np.asarray(mat.color, dtype=np.float64)[:4])
    _set_input(bsdf, "Base Color", rgba)
    _set_input(bsdf, "Alpha", rgba[3])
    out.diffuse_color = rgba
    _set_input(bsdf, "Roughness", mat.roughness)
    spec = np.asarray(mat.specular, dtype=np.float64).reshape(-1)[:3]
    level = float(np.clip(spec.max() if len(spec) else 0.0, 0.0, 1.0))
    for label in ("Specular IOR Level", "Specular"):
        if label in bsdf.inputs:
            _set_input(bsdf, label, 0.5 * level)
            break
    if "Specular Tint" in bsdf.inputs and level > 0:
        try:
            _set_input(bsdf, "Specular Tint", (*[float(x) for x in spec / level], 1.0))
        except (TypeError, ValueError):
            pass
    em = np.asarray(mat.emissive, dtype=np.float64).reshape(-1)[:3]
    if em.any():
        key_in = "Emission Color" if "Emission Color" in bsdf.inputs else "Emission"
        _set_input(bsdf, key_in, (*[float(x) for x in em], 1.0))
        if "Emission Strength" in bsdf.inputs:
            _set_input(bsdf, "Emission Strength", 1.0)
    if rgba[3] < 1.0:
        # see-through in Eevee (render method), Workbench and Eevee Legacy (blend mode); Cycles reads
        # the Alpha input. (The scene's alpha is what the file's runtime shows: .X alpha 0 is opaque.)
        for attr, val in (("surface_render_method", "BLENDED"), ("blend_method", "BLEND")):
            try:
                setattr(out, attr, val)
            except (AttributeError, TypeError):
                pass
    meta = {"extras": mat.extras, "texture": mat.texture}
    if mat.texture:
        img, missing = images.get(mat.texture, filepath, warnings)
        if img is not None:
            tex = nt.nodes.new("ShaderNodeTexImage")
            tex.image = img
            tex.location = (bsdf.location.x - 350, bsdf.location.y)
            meta["image"] = bpy.path.abspath(img.filepath)   # export writes the file's name while it stays
            if missing:         # not connected: the material shows its colour until the image is relinked
                tex.label = f"Missing: {img.name}"
            else:
                nt.links.new(tex.outputs["Color"], bsdf.inputs["Base Color"])
        if img is None or missing:
            out["texture_path"] = mat.texture    # kept for the user and for export
    meta.update(material_maps.add_maps(nt, bsdf, mat, filepath, images, warnings))
    metadata.store(out, metadata.MESH_KEY, meta)
    return out


def report_maps(scene: Scene, mats: dict, warnings: list[str]) -> None:
    """One line for the materials with several textures (the first is the
    base colour, the others image nodes) and one for the maps wired in."""
    several = [f"{scene.materials[k].name!r} (+{len(scene.materials[k].more_textures)})" for k in mats
               if scene.materials[k].more_textures]
    if several:
        note(warnings, f"{len(several)} material(s) with several textures: the first is the base colour, the others "
                       f"are kept as image nodes, not connected: {', '.join(several[:6])}"
                       f"{' ...' if len(several) > 6 else ''}")
    counts: dict[str, int] = {}
    for out in mats.values():
        meta = metadata.load(out, metadata.MESH_KEY) or {}
        for role in meta.get("maps") or {}:
            counts[role] = counts.get(role, 0) + 1
    if counts:
        note(warnings, "texture maps in the materials (a missing file's image is not connected): " +
             ", ".join(f"{n} {role}" for role, n in counts.items()))
