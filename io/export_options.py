# SPDX-License-Identifier: GPL-3.0-or-later
"""The export options every format shares (what is taken from Blender and
how texture paths are written), as option specs: the export operators draw
them, the command line's ``export`` takes them as flags, ``convert`` the
ones that apply without Blender (:data:`CONVERT`). Texture path modes are
applied here (:func:`texture_paths`), as Blender's FBX exporter's are."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

from .options import Option

PATH_MODE = Option(
    "path_mode", "Path Mode", "How texture paths are written", "AUTO",
    items=(("AUTO", "Auto", "Relative to the written file where the image is in its folder (or below), else "
                            "absolute; a relative name read from a file is kept"),
           ("RELATIVE", "Relative", "Relative to the written file's folder"),
           ("ABSOLUTE", "Absolute", "Full paths"),
           ("STRIP", "Strip Path", "The image's file name only"),
           ("COPY", "Copy", "Copy the images beside the written file and name them only")),
    panel="Include")

#: also the animation export's option (``export_anim.<format>``)
BAKE_POSE = Option(
    "bake_pose", "Bake Pose", "Write what Blender shows (the evaluated pose: constraints, drivers, any rotation "
                              "mode) at each key and frame; off: the F-curves only", True,
    panel="Animation", enabled_by="export_animations", old_flags=("--bake",), old_off_flags=("--no-bake",))

OPTIONS = (
    Option("export_animations", "Animations", "Export the rig's actions", True, panel="Animation",
           flags=("--animations",)),
    Option("actions", "Actions", "Which actions are written", "OWNED",
           items=(("OWNED", "This Rig's", "The rig's active action, its NLA strips and the actions imported "
                                         "for it"),
                  ("ALL", "All Matching", "Also every other action that animates bones of the rig's names")),
           panel="Animation"),
    BAKE_POSE,
    Option("apply_modifiers", "Apply Modifiers", "Write meshes as their modifiers other than the Armature "
                                                  "modifier make them (as Blender shows them)", True,
           panel="Include"),
    PATH_MODE,
)

#: the shared options ``convert`` takes (it has no Blender data to choose from)
CONVERT = (PATH_MODE,)


def _resolve(path: str, base_dir: str | None) -> Path | None:
    """An absolute path for a texture name (a relative one against
    ``base_dir``; Windows separators taken as separators), None when it
    cannot be placed."""
    p = Path(path.replace("\\", "/")) if not os.path.isabs(path) else Path(path)
    if p.is_absolute():
        return p
    return (Path(base_dir) / p) if base_dir else None


def texture_paths(scene, mode: str, target, *, base_dir: str | None = None,
                  warnings: list[str] | None = None) -> list[tuple[Path, Path]]:
    """Rewrite the scene's texture paths for a file written at ``target``
    (``mode``: a :data:`PATH_MODE` value; ``base_dir``: where relative
    names in the scene are relative to, None for names kept as read).
    Returns the (source, destination) copies COPY asks for; the caller
    copies them once the file is written (:func:`copy_textures`)."""
    warnings = warnings if warnings is not None else []
    out_dir = Path(target).resolve().parent
    copies: list[tuple[Path, Path]] = []
    for mat in scene.materials:       # the base colour, the maps (normal, ...), further textures
        if mat.texture:
            mat.texture = _texture_path(mat.texture, mode, out_dir, base_dir, copies, warnings)
        for role, tex in list(mat.maps.items()):
            mat.maps[role] = _texture_path(tex, mode, out_dir, base_dir, copies, warnings)
        mat.more_textures = [_texture_path(t, mode, out_dir, base_dir, copies, warnings) for t in mat.more_textures]
    return copies


def _texture_path(tex: str, mode: str, out_dir: Path, base_dir: str | None, copies: list, warnings: list) -> str:
    """One texture name as :func:`texture_paths` writes it (copies added to ``copies``)."""
    relative_name = not os.path.isabs(tex) and not tex.replace("\\", "/").startswith("/")
    where = _resolve(tex, base_dir)
    if mode == "STRIP":
        return Path(tex.replace("\\", "/")).name
    if mode == "COPY":
        name = Path(tex.replace("\\", "/")).name
        if where is not None and where.is_file():
            if where.resolve() != (out_dir / name).resolve() and (where, out_dir / name) not in copies:
                copies.append((where, out_dir / name))
        else:
            warnings.append(f"texture {tex!r} not found: not copied (its name is written)")
        return name
    if where is None:
        return tex                          # a name as read, nowhere to place it: kept
    if mode == "ABSOLUTE":
        return str(where.resolve())
    if mode == "RELATIVE" or (mode == "AUTO" and not relative_name):
        try:
            rel = Path(os.path.relpath(where.resolve(), out_dir))
        except ValueError:              # another drive
            return str(where.resolve())
        inside = not rel.parts or rel.parts[0] != ".."
        return rel.as_posix() if mode == "RELATIVE" or inside else str(where.resolve())
    return tex


def copy_textures(copies: list[tuple[Path, Path]], warnings: list[str]) -> None:
    for src, dst in copies:
        try:
            shutil.copyfile(src, dst)
        except OSError as err:
            warnings.append(f"texture {src.name}: not copied ({err.strerror or err})")
