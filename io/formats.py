# SPDX-License-Identifier: GPL-3.0-or-later
"""The registry of file formats: the one place that knows which formats
there are. Operators, menus, FileHandlers, the command line's flags and
``convert`` are generated from it.

What a format's package provides (its ``adapter`` and ``options``
modules, its default axes) is the adapter contract: docs/adapter-contract.md.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from ..scene.validate import writable
from .errors import FormatError
from .options import MANUAL_ORIENTATION, Option, check
from .paths import check_input, check_target, is_regular


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
    left_handed: bool = False            # file coordinates are left-handed: imports mirror z
    package: str = ""                    # the package holding adapter and options (default io.<id>)
    #: written only (``convert``, the command line): no reader, and no operators or menus in Blender, whose own
    #: add-on for the format imports and exports it there
    writes_only: bool = False

    @property
    def _package(self) -> str:
        return self.package or f"{__package__}.{self.id}"

    @property
    def adapter(self):
        return importlib.import_module(f"{self._package}.adapter")

    @property
    def options(self):
        """The format's ``options`` module (see the module doc)."""
        return importlib.import_module(f"{self._package}.options")

    @property
    def import_options(self) -> tuple[Option, ...]:
        return tuple(getattr(self.options, "IMPORT_OPTIONS", ()))

    @property
    def anim_import_options(self) -> tuple[Option, ...]:
        return tuple(getattr(self.options, "ANIM_IMPORT_OPTIONS", ()))

    @property
    def export_options(self) -> tuple[Option, ...]:
        return tuple(getattr(self.options, "EXPORT_OPTIONS", ()))

    @property
    def import_defaults(self) -> dict:
        """The format's defaults for the shared import options (``io.import_options``)."""
        return dict(getattr(self.options, "IMPORT_DEFAULTS", {}))

    def default_axes(self, scale: float = 1.0):
        """File space -> Blender space when the user keeps the defaults: the
        adapter's ``default_axes()``, the one declaration of the format's axes."""
        return self.adapter.default_axes(scale)

    @property
    def default_forward_up(self) -> tuple[str, str]:
        """The importers' default Forward and Up: the file's axes that
        :meth:`default_axes` turns to Blender's Y and Z (as ``bpy_extras``'
        ``axis_conversion`` maps Forward and Up)."""
        from ..scene.orientation import axis_name

        c = self.default_axes().C
        if self.left_handed:            # the options describe the file after its z is mirrored
            c = c @ np.diag([1.0, 1.0, -1.0])
        forward, up = axis_name(c.T @ [0.0, 1.0, 0.0]), axis_name(c.T @ [0.0, 0.0, 1.0])
        if forward is None or up is None or np.linalg.det(c) < 0:
            raise ValueError(f"format {self.id!r}: default_axes() is no Forward/Up choice (a rotation taking "
                             f"file axes to Blender's{', after z is mirrored' if self.left_handed else ''})")
        return forward, up

    @property
    def animation_files(self) -> tuple[str, ...]:
        """Suffixes of the files whose animations import onto an existing armature."""
        return self.anim_suffixes or (self.model_suffixes if self.anim_import else ())

    @property
    def suffixes(self) -> tuple[str, ...]:
        return self.model_suffixes + self.anim_suffixes

    def axes(self, forward: str | None = None, up: str | None = None, scale: float = 1.0):
        """File space -> Blender space for the importer's Forward/Up/Scale
        (None: the format's default, :attr:`default_forward_up`; for a
        left-handed format they describe the file after its z is mirrored
        into a right-handed space)."""
        from ..scene import AxisConversion

        if forward is None or up is None:
            default_forward, default_up = self.default_forward_up
            forward, up = forward or default_forward, up or default_up
        return AxisConversion.from_axes(forward, up, scale, mirror_z=self.left_handed)

    # the adapter, with its options checked against the specs

    def read_scene(self, paths, *, axes=None, warnings=None, **options):
        paths = [str(p) for p in paths]
        options = check(self.import_options, options, f"{self.label} import", paths[0] if paths else None)
        self._readable(paths)
        _inputs(paths)
        axes = self.reading_axes(axes, options.pop(MANUAL_ORIENTATION.id, None))
        return self.adapter.read_scene(paths, axes=axes, warnings=warnings, **options)

    def reading_axes(self, axes=None, manual: bool | None = None):
        """What the reader gets as ``axes``: for a format that lists
        :data:`.options.MANUAL_ORIENTATION`, with the switch off (``manual``
        False, or None and the format's default off), the automatic axes
        (:class:`..scene.orientation.AutoAxes`, keeping the scale of
        ``axes``); else ``axes`` (None: the format's default axes, given
        as such to a reader that takes None for automatic)."""
        spec = next((s for s in self.import_options if s.id == MANUAL_ORIENTATION.id), None)
        if spec is None:
            return axes
        if spec.default if manual is None else manual:
            return axes if axes is not None else self.default_axes()
        from ..scene.orientation import AutoAxes

        forward, up = self.default_forward_up      # the convention the file is first read with
        return AutoAxes(scale=axes.s if axes is not None else 1.0, mirror_z=self.left_handed, forward=forward, up=up)

    def read_clips(self, skeleton, axes, paths, *, playback: str = "ACTION", weight: float = 1.0, warnings=None,
                   **options):
        paths = [str(p) for p in paths]
        options = check(self.anim_import_options, options, f"{self.anim_label or self.label} import",
                        paths[0] if paths else None)
        self._readable(paths)
        _inputs(paths)
        return self.adapter.read_clips(skeleton, axes, paths, playback=playback, weight=weight, warnings=warnings,
                                       **options)

    def _readable(self, paths) -> None:
        if self.writes_only:
            raise FormatError(f"{self.label} files are written here, not read (in Blender, its own importer reads "
                              f"them)", path=paths[0] if paths else None)

    def write_scene(self, scene, path, *, warnings=None, axes=None, fps: float = 24.0, **options) -> list[str]:
        options = check(self.export_options, options, f"{self.label} export", path)
        check_target(path)
        warnings = warnings if warnings is not None else []
        scene = writable(scene, warnings)            # what no reader could read back is left out, reported
        return self.adapter.write_scene(scene, path, warnings=warnings, axes=axes, fps=fps, **options)

    def write_animation(self, scene, clip, path, *, warnings=None, fps: float = 24.0, axes=None) -> list[str]:
        check_target(path)
        return self.adapter.write_animation(scene, clip, path, warnings=warnings, fps=fps, axes=axes)


def _inputs(paths) -> None:
    """Every input is a regular file within the size limit (io.paths), checked
    before any is read."""
    for p in paths:
        check_input(p)


#: The registered formats (built-in ones first; :func:`register` adds more).
FORMATS: list[Format] = [
    Format("rite", "RiTE Model", (".ram",), (".raa",), "RiTE Animation",
           "RiTE model (.ram): skeleton and skinned mesh; animations (.raa): rotation keys"),
    Format("xfile", "DirectX", (".x",), (), "DirectX Animation",
           "DirectX .X (text, binary, compressed): meshes, skeleton, skin and animations", b"xof ",
           anim_import=True, left_handed=True),
    Format("gltf", "glTF 2.0", (".glb", ".gltf"), description="glTF 2.0 (.glb, or .gltf with its .bin): skeleton, "
           "skinned meshes, materials and animations for today's engines and viewers", writes_only=True),
]

_listeners: list = []


def register(fmt: Format, *, package: str | None = None) -> Format:
    """Add a format at run time: ``package`` is the importable package that
    holds its ``adapter`` and ``options`` modules (anywhere on the import
    path). The extension's operators, menus and FileHandlers follow at once
    when it is enabled; the command line and ``convert`` offer it from
    their next run. Returns the registered format."""
    if package:
        fmt = replace(fmt, package=package)
    if not fmt.writes_only:
        from .import_options import check_defaults

        check_defaults(fmt)
    if any(f.id == fmt.id for f in FORMATS):
        raise ValueError(f"a format {fmt.id!r} is already registered")
    taken = {s for f in FORMATS for s in f.suffixes} & set(fmt.suffixes)
    if taken:
        raise ValueError(f"{', '.join(sorted(taken))}: already claimed by a registered format")
    FORMATS.append(fmt)
    _changed()
    return fmt


def unregister(fid: str) -> None:
    """Remove a format added with :func:`register` (and its operators)."""
    FORMATS[:] = [f for f in FORMATS if f.id != fid]
    _changed()


def subscribe(listener) -> None:
    """Call ``listener()`` whenever a format is registered or unregistered."""
    if listener not in _listeners:
        _listeners.append(listener)


def unsubscribe(listener) -> None:
    if listener in _listeners:
        _listeners.remove(listener)


def _changed() -> None:
    for listener in list(_listeners):
        listener()


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
    if sniff and is_regular(path):        # never open a FIFO or a device to sniff it
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
