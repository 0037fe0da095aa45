# SPDX-License-Identifier: GPL-3.0-or-later
"""The registry of file formats: the one place that knows which formats
there are. Operators, menus, FileHandlers, the command line's flags and
``convert`` are generated from it.

A format is a package (``io/<format>/`` for the built-in ones, any
importable package for one added with :func:`register`) holding two
modules. ``adapter`` provides

    read_scene(paths, *, axes=None, warnings=None, **import options) -> scene.Scene
        a model file and any animation files of the format, as one scene;
    read_clips(skeleton, axes, paths, *, layer, weight, warnings=None, **animation import options)
            -> [scene.Clip]
        animation files onto an existing skeleton (formats with ``animation_files``);
    write_scene(scene, path, *, warnings=None, axes=None, fps=24.0, **export options) -> [written paths]
        a scene as the format's files (model and, if it has them, animation
        files beside it; temporary file + rename, never half-written);
    write_animation(scene, clip, path, *, warnings=None, fps=24.0, axes=None) -> [written paths]
        one clip as an animation file (formats with ``anim_suffixes``);
    default_axes(scale=1.0) -> scene.AxisConversion
        file space -> Blender space when the user keeps the defaults.

Each raises :class:`.errors.FormatError` (naming the file and where) for a
file it cannot read or write, rejects options it does not have, and appends
one-line warnings to ``warnings`` (an :class:`.errors.Warnings`, the one
warnings channel). ``options`` lists the format's own options as
:class:`.options.Option` specs: ``IMPORT_OPTIONS`` (``read_scene``),
``ANIM_IMPORT_OPTIONS`` (``read_clips``), ``EXPORT_OPTIONS``
(``write_scene``), and ``IMPORT_DEFAULTS``, the format's defaults for the
shared import options (``bake``). A format whose reader can decide its
axes from the file's data (``axes`` an :class:`..scene.orientation.AutoAxes`,
read through :func:`..scene.orientation.read_oriented`) lists
:data:`.options.MANUAL_ORIENTATION` among its import options.

Call the adapter through its :class:`Format` (``fmt.read_scene(...)``
etc.): the options are checked against the specs first, so an option the
format does not have is one clear error for every format.

A format that is only written (``writes_only``: glTF, which Blender's own
add-on reads and writes inside Blender) has a ``write_scene`` and no
reader; it gets no operators or menus, and reading one of its files is
one clear error.

Adding a format: write that package and add one line to :data:`FORMATS`
(or call :func:`register` at run time).
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, replace
from pathlib import Path

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
        return dict(getattr(self.options, "IMPORT_DEFAULTS", {}))

    @property
    def animation_files(self) -> tuple[str, ...]:
        """Suffixes of the files whose animations import onto an existing armature."""
        return self.anim_suffixes or (self.model_suffixes if self.anim_import else ())

    @property
    def suffixes(self) -> tuple[str, ...]:
        return self.model_suffixes + self.anim_suffixes

    def axes(self, forward: str = "-Z", up: str = "Y", scale: float = 1.0):
        """File space -> Blender space for the importer's Forward/Up/Scale
        (for a left-handed format they describe the file after its z is
        mirrored into a right-handed space)."""
        from ..scene import AxisConversion

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
            return axes if axes is not None else self.adapter.default_axes()
        from ..scene.orientation import AutoAxes

        return AutoAxes(scale=axes.s if axes is not None else 1.0, mirror_z=self.left_handed)

    def read_clips(self, skeleton, axes, paths, *, layer: str = "ACTION", weight: float = 1.0, warnings=None,
                   **options):
        paths = [str(p) for p in paths]
        options = check(self.anim_import_options, options, f"{self.anim_label or self.label} import",
                        paths[0] if paths else None)
        self._readable(paths)
        _inputs(paths)
        return self.adapter.read_clips(skeleton, axes, paths, layer=layer, weight=weight, warnings=warnings,
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
