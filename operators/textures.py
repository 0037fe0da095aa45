# SPDX-License-Identifier: GPL-3.0-or-later
"""Texture paths from files -> Blender images, safely and once each.

A texture name is data from the file, so it is never trusted as a path:

* only files with an image extension are loaded;
* a relative path is resolved inside the model's folder tree (``..`` cannot
  leave it); an absolute or Windows path is looked for by its base name;
* the search (as FBX's importer does): the name as given, then its base
  name in the model's folder and in ``textures/``, ``tex/``, ``texture/``,
  ``images/`` below it, any letter case, and other image extensions of the
  same stem (a ``.dds`` named in the file may sit beside it as ``.png``);
* one image per distinct file; a missing one is one warning, and no image
  datablock points anywhere it should not.
"""
from __future__ import annotations

import os
from pathlib import Path

import bpy

IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg", ".tga", ".bmp", ".dds", ".tif", ".tiff", ".exr", ".hdr",
                    ".gif", ".psd", ".webp")
SUBFOLDERS = ("", "textures", "Textures", "tex", "texture", "images")
MAX_NAME = 1024


def _parts(name: str) -> list[str]:
    return [p for p in name.replace("\\", "/").split("/") if p and p != "."]


def _listing(folder: Path, cache: dict) -> dict[str, str]:
    key = str(folder)
    if key not in cache:
        try:
            cache[key] = {e.lower(): e for e in os.listdir(folder) if (folder / e).is_file()}
        except OSError:
            cache[key] = {}
    return cache[key]


def find_texture(name: str, model_path: str, _listings: dict | None = None) -> str | None:
    """The image file a texture name refers to, or None (see the module doc)."""
    listings = {} if _listings is None else _listings
    if not name or len(name) > MAX_NAME or "\x00" in name:
        return None
    parts = _parts(name)
    if not parts:
        return None
    base = Path(model_path).resolve().parent if model_path else Path.cwd()
    stem, ext = os.path.splitext(parts[-1])
    if ext.lower() not in IMAGE_EXTENSIONS:
        return None
    candidates: list[tuple[Path, str]] = []
    is_abs = name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":")
    if not is_abs and ".." not in parts:
        rel = Path(*parts[:-1])
        candidates.append((base / rel, parts[-1]))
    for sub in SUBFOLDERS:
        candidates.append((base / sub if sub else base, parts[-1]))
    for folder, fname in candidates:
        listing = _listing(folder, listings)
        hit = listing.get(fname.lower())
        if hit is None:
            for other in IMAGE_EXTENSIONS:
                hit = listing.get((stem + other).lower())
                if hit is not None:
                    break
        if hit is not None:
            found = (folder / hit).resolve()
            try:
                found.relative_to(base)
            except ValueError:
                continue          # a link leading out of the model's folder tree
            return str(found)
    return None


class ImageCache:
    """One Blender image per found file; missing names collected for one warning."""

    def __init__(self, pack: bool = False):
        self.pack = pack
        self.by_name: dict[str, object] = {}
        self.by_file: dict[str, object] = {}
        self.missing: list[str] = []
        self._listings: dict = {}

    def get(self, name: str, model_path: str, warnings: list[str]):
        if name in self.by_name:
            return self.by_name[name]
        found = find_texture(name, model_path, self._listings)
        img = None
        if found is None:
            self.missing.append(name)
        else:
            img = self.by_file.get(found)
            if img is None:
                try:
                    img = bpy.data.images.load(found, check_existing=True)
                    if self.pack:
                        img.pack()
                except RuntimeError as err:
                    warnings.append(f"texture {Path(found).name}: cannot load ({err})")
                    img = None
                self.by_file[found] = img
        self.by_name[name] = img
        return img

    def report(self, warnings: list[str]) -> None:
        if self.missing:
            shown = ", ".join(repr(n[:80]) for n in self.missing[:6])
            more = f" and {len(self.missing) - 6} more" if len(self.missing) > 6 else ""
            warnings.append(f"{len(self.missing)} texture(s) not found beside the file: {shown}{more} "
                            f"(materials keep the name in their 'texture_path' property)")
