# SPDX-License-Identifier: GPL-3.0-or-later
"""The registry of file formats. Operators, menus, FileHandlers, the
command line and ``convert`` are generated from it.

A format is an ``io/<format>/`` package whose ``adapter`` module provides

    read_scene(paths, *, axes=None, warnings) -> scene.Scene
        a model file and any animation files of the format, as one scene;
    read_clips(scene_skeleton, axes, paths, *, layer, weight, warnings) -> [scene.Clip]
        animation files onto an existing skeleton (formats with ``animation_files``);
    write_scene(scene, path, *, warnings, **options) -> [written paths]
        a scene as the format's files (temporary file + rename);
    write_animation(scene, clip, path, *, warnings, fps, axes) -> [written paths]
        one clip as an animation file (formats with ``anim_suffixes``);
    default_axes(scale) -> scene.AxisConversion
        file space -> Blender space when the user keeps the defaults.

and ``options.py`` holds its operator options (see :attr:`Format.options`).

Adding a format: write that package and add one line to :data:`FORMATS`.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Format:
    id: str                              # also the operator suffix: import_scene.<id>
    label: str                           # menu text: "<label> (.ext)"
    model_suffixes: tuple[str, ...]      # model files (lower case, with the dot)
    anim_suffixes: tuple[str, ...] = ()  # animation-only files, if the format has them
    anim_label: str = ""
    description: str = ""
    magic: bytes = b""                   # first bytes of a model file, if the format has a signature
    anim_import: bool = False            # model files' animations import onto another rig (read_clips)

    @property
    def adapter(self):
        return importlib.import_module(f"{__package__}.{self.id}.adapter")

    @property
    def options(self):
        """``io/<format>/options.py``: IMPORT_DEFAULTS (the format's defaults
        for the shared import options) and EXPORT_OPTIONS (specs of its own
        export options, passed to ``write_scene`` by keyword)."""
        return importlib.import_module(f"{__package__}.{self.id}.options")

    @property
    def animation_files(self) -> tuple[str, ...]:
        """Suffixes of the files whose animations import onto an existing armature."""
        return self.anim_suffixes or (self.model_suffixes if self.anim_import else ())

    @property
    def suffixes(self) -> tuple[str, ...]:
        return self.model_suffixes + self.anim_suffixes


FORMATS: tuple[Format, ...] = (
    Format("rite", "RiTE Model", (".ram",), (".raa",), "RiTE Animation",
           "RiTE model (.ram): skeleton and skinned mesh; animations (.raa): rotation keys"),
    Format("xfile", "DirectX", (".x",), (), "DirectX Animation",
           "DirectX .X (text, binary, compressed): meshes, skeleton, skin and animations", b"xof ",
           anim_import=True),
)


class UnknownFormat(ValueError):
    """A file whose format no registered format claims."""


def by_id(fid: str) -> Format:
    for f in FORMATS:
        if f.id == fid:
            return f
    raise UnknownFormat(f"unknown format {fid!r} (known: {', '.join(f.id for f in FORMATS)})")


def for_path(path, *, sniff: bool = True) -> Format:
    """The format of ``path``: by suffix, else (``sniff``) by its first bytes."""
    suffix = Path(path).suffix.lower()
    for f in FORMATS:
        if suffix in f.suffixes:
            return f
    if sniff:
        try:
            with open(path, "rb") as fh:
                head = fh.read(16)
        except OSError:
            head = b""
        for f in FORMATS:
            if f.magic and head.startswith(f.magic):
                return f
    known = ", ".join(s for f in FORMATS for s in f.suffixes)
    raise UnknownFormat(f"{Path(path).name}: unknown file type (known: {known})")

