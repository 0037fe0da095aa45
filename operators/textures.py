# SPDX-License-Identifier: GPL-3.0-or-later
"""Texture paths from files -> Blender images, safely and once each.

A texture name is data from the file, so it is never trusted as a path:

* only files with a still-image extension are loaded;
* a relative path is resolved inside the folders searched (``..`` cannot
  leave them); an absolute or Windows path is looked for by its base name;
* the search (as FBX's importer does, and a little higher): the name as
  given, then its base name, in the model's folder and in ``textures/``,
  ``tex/``, ``texture/``, ``images/`` below it, then the same in the folder
  above and the one above that (:data:`PARENT_LEVELS`: the DirectX SDK keeps
  ``tiny\\Tiny_skin.dds`` beside the model's folder); any letter case, and
  other image extensions of the same stem (a ``.dds`` named in the file may
  sit there as ``.png``); a file found must lie inside the folder it was
  found from (a link cannot lead elsewhere);
* one image per distinct file. A texture not found still gets its image,
  with the path the file names, placed in the model's folder (the base name
  alone when the name is absolute or climbs with ``..``), and no data: *File
  > External Data > Find Missing Files* relinks it. Its image node is in the
  material, labelled as missing and not connected, so the model shows its
  material colour meanwhile. All missing ones make one warning.
"""
from __future__ import annotations

import os
from pathlib import Path

import bpy

from ..io.paths import IMAGE_EXTENSIONS

SUBFOLDERS = ("", "textures", "Textures", "tex", "texture", "images")
#: how many folders above the model's the search climbs
PARENT_LEVELS = 2
MAX_NAME = 1024


def _parts(name: str) -> list[str]:
    return [p for p in name.replace("\\", "/").split("/") if p and p != "."]


def _listing(folder: Path, cache: dict) -> tuple[dict[str, str], dict[str, str]]:
    """(files, folders) of ``folder`` by lower-case name."""
    key = str(folder)
    if key not in cache:
        files: dict[str, str] = {}
        dirs: dict[str, str] = {}
        try:
            with os.scandir(folder) as it:
                for e in it:
                    try:
                        if e.is_file():
                            files[e.name.lower()] = e.name
                        elif e.is_dir():
                            dirs[e.name.lower()] = e.name
                    except OSError:
                        continue
        except OSError:
            pass
        cache[key] = (files, dirs)
    return cache[key]


def _folder(base: Path, parts: list[str], cache: dict) -> Path | None:
    """``base`` / ``parts``, each part matched in any letter case, or None."""
    folder = base
    for part in parts:
        hit = _listing(folder, cache)[1].get(part.lower())
        if hit is None:
            return None
        folder = folder / hit
    return folder


def _is_relative(name: str, parts: list[str]) -> bool:
    """A name that stays below the folder it is read from."""
    is_abs = name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":")
    return not is_abs and ".." not in parts


def find_texture(name: str, model_path: str, _listings: dict | None = None) -> str | None:
    """The image file a texture name refers to, or None (see the module doc)."""
    listings = {} if _listings is None else _listings
    if not name or len(name) > MAX_NAME or "\x00" in name:
        return None
    parts = _parts(name)
    if not parts:
        return None
    here = Path(model_path).resolve().parent if model_path else Path.cwd()
    stem, ext = os.path.splitext(parts[-1])
    if ext.lower() not in IMAGE_EXTENSIONS:
        return None
    relative = _is_relative(name, parts)
    bases = [here, *list(here.parents)[:PARENT_LEVELS]]
    for base in bases:
        candidates = [_folder(base, parts[:-1], listings)] if relative and len(parts) > 1 else []
        candidates += [_folder(base, [sub], listings) if sub else base for sub in SUBFOLDERS]
        for folder in candidates:
            if folder is None:
                continue
            files = _listing(folder, listings)[0]
            hit = files.get(parts[-1].lower())
            if hit is None:
                for other in IMAGE_EXTENSIONS:
                    hit = files.get((stem + other).lower())
                    if hit is not None:
                        break
            if hit is not None:
                found = (folder / hit).resolve()
                try:
                    found.relative_to(base)
                except ValueError:
                    continue          # a link leading out of the folder searched
                return str(found)
    return None


def missing_path(name: str, model_path: str) -> str | None:
    """Where a texture that was not found is expected: the name inside the
    model's folder (its base name when the name is absolute or climbs with
    ``..``); None for a name that is no image file."""
    if not name or len(name) > MAX_NAME or "\x00" in name:
        return None
    parts = _parts(name)
    if not parts or os.path.splitext(parts[-1])[1].lower() not in IMAGE_EXTENSIONS:
        return None
    here = Path(model_path).resolve().parent if model_path else Path.cwd()
    return str(here.joinpath(*(parts if _is_relative(name, parts) else parts[-1:])))


class ImageCache:
    """One Blender image per found file, one image without data per missing
    file; missing names collected for one warning."""

    def __init__(self, pack: bool = False):
        self.pack = pack
        self.by_name: dict[str, object] = {}
        self.by_file: dict[str, object] = {}
        self.missing: list[str] = []
        self._listings: dict = {}

    def find(self, name: str, model_path: str) -> str | None:
        """:func:`find_texture`, through the folder listings this cache has read."""
        return find_texture(name, model_path, self._listings)

    def get(self, name: str, model_path: str, warnings: list[str]):
        """(image or None, True when the file was not found)."""
        if name in self.by_name:
            return self.by_name[name], name in self.missing
        found = self.find(name, model_path)
        img = None
        if found is None:
            self.missing.append(name)
            where = missing_path(name, model_path)
            if where is not None:
                img = self.by_file.get(where)
                if img is None:
                    img = self._placeholder(where)
                    self.by_file[where] = img
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
        return img, found is None

    @staticmethod
    def _placeholder(path: str):
        """An image of a file that is not there (as FBX's importer makes one):
        its path set, no data, so Find Missing Files can relink it."""
        img = bpy.data.images.new(Path(path).name, 1, 1)
        img.filepath = path
        img.source = "FILE"
        return img

    def report(self, warnings: list[str]) -> None:
        if self.missing:
            shown = ", ".join(repr(n[:80]) for n in self.missing[:6])
            more = f" and {len(self.missing) - 6} more" if len(self.missing) > 6 else ""
            warnings.append(f"{len(self.missing)} texture(s) not found near the file: {shown}{more}; their "
                            f"images keep the path: File > External Data > Find Missing Files relinks them")
