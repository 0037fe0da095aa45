# SPDX-License-Identifier: GPL-3.0-or-later
"""Format to format without Blender: read a scene with one format's reader,
write it with another's writer (numpy only; never imports bpy). The
``convert`` command (``cli/convert.py``) and the folder conversion
(``cli/batch.py``) call it; a script can too.

Formats are chosen by suffix through :mod:`.formats` (a model file and any
animation files of one format in, a model file out; a format with
animation files writes them beside it). The options are the formats' own
(``io/<format>/options.py``): ``read_options`` the input format's import
options, ``write_options`` the output format's export options.

What the output format cannot carry is written as close as it can be, and
the writer measures the loss: the written files are read back and
evaluated (skinned vertex positions) with the scene at every frame of every
animation; the largest distance between the same vertex in both, as a
fraction of the model size (the diagonal of the meshes' bounding box in the
default pose), is the figure (:func:`convert_files` returns it in its
:class:`Outcome`).
"""
from __future__ import annotations

import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from . import export_options
from .errors import AnimationsOnly, FormatError, Warnings, largest_deviation, note
from .formats import UnknownFormat, for_path


def convert(inputs: list[str], output: str, *, fps: float = 24.0, read_options: dict | None = None,
            write_options: dict | None = None, warnings: list[str] | None = None,
            path_mode: str | None = None) -> list[str]:
    """Convert ``inputs`` (one format's model file and its animation files)
    to ``output`` (format by suffix). Returns the paths written.
    ``read_options`` are the input format's import options,
    ``write_options`` the output format's export options (an option the
    format does not have, or a bad value, is an :class:`.options.OptionError`).
    Raises FormatError (bad input, unwritable output) or
    :class:`.formats.UnknownFormat` (unknown suffix); an existing output is
    replaced only by a complete file. ``path_mode`` (``io.export_options``;
    None: texture names as the input names them) rewrites texture paths,
    relative names taken as relative to the first input's folder."""
    from ..scene import SceneError

    warnings = warnings if warnings is not None else Warnings()
    inputs = [str(p) for p in inputs]
    if not inputs:
        raise FormatError("no input file given")
    out_fmt = for_path(output, sniff=False)
    in_fmts = [for_path(p) for p in inputs]
    if len({fmt.id for fmt in in_fmts}) != 1:
        raise FormatError("the input files are of different formats: "
                          + ", ".join(f"{Path(p).name} ({fmt.label})" for p, fmt in zip(inputs, in_fmts)))
    if out_fmt.anim_suffixes and Path(output).suffix.lower() in out_fmt.anim_suffixes:
        raise FormatError(f"write a model file ({', '.join(out_fmt.model_suffixes)}); its animations are "
                          f"written beside it", path=output)
    if not (fps > 0 and fps < float("inf")):        # NaN too
        raise FormatError(f"fps must be a positive number, not {fps!r}")
    try:
        scene = read_inputs(in_fmts[0], inputs, warnings, read_options or {})
    except SceneError as err:
        raise FormatError(str(err), path=inputs[0]) from None
    except AnimationsOnly as err:
        hint = (f"convert it with the model it plays on: convert MODEL{in_fmts[0].model_suffixes[0]} "
                f"{Path(err.path or inputs[0]).name} -o OUTPUT" if in_fmts[0].animation_files else "")
        raise FormatError(err.message + (f"; {hint}" if hint else ""), path=err.path) from None
    if scene.source.orientation is not None and scene.source.orientation.automatic:
        note(warnings, scene.source.orientation.note())
    copies = []
    if path_mode is not None:
        copies = export_options.texture_paths(scene, path_mode, output, base_dir=str(Path(inputs[0]).parent),
                                              warnings=warnings)
    try:
        written = out_fmt.write_scene(scene, output, warnings=warnings, fps=float(fps), **(write_options or {}))
    except SceneError as err:
        raise FormatError(str(err), path=output) from None
    export_options.copy_textures(copies, warnings)
    return written


def read_inputs(fmt, inputs: list[str], warnings, options: dict):
    """The scene of ``inputs``: a model file and its animation files; for a
    format whose animations come in model files (.X), the first file and
    the animations of the others read onto its skeleton by name."""
    if len(inputs) == 1 or fmt.anim_suffixes or not fmt.anim_import:
        return fmt.read_scene(inputs, warnings=warnings, **options)
    scene = fmt.read_scene(inputs[:1], warnings=warnings, **options)
    if scene.skeleton is None:
        raise FormatError("no skeleton to play the other files' animations on", path=inputs[0])
    anim_ids = {o.id for o in fmt.anim_import_options}
    scene.clips += fmt.read_clips(scene.skeleton, scene.source.axes, inputs[1:], warnings=warnings,
                                  **{k: v for k, v in options.items() if k in anim_ids})
    return scene


def one_line(message) -> str:
    return " ".join(str(message).splitlines())


@dataclass
class Outcome:
    """What converting one model (and its animation files) came to. Plain
    data: a worker process sends it back."""

    inputs: list[str]
    output: str
    written: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)      # what needs no action (how the up axis was decided)
    results: list[str] = field(default_factory=list)    # what the write made that the user needs (frame ranges)
    error: str = ""                 # one line; empty when the files were written
    loss: float | None = None       # the largest deviation reported, fraction of the model size
    where: str = ""                 # where it happens ("Walk, frame 12")
    seconds: float = 0.0            # the time the conversion took
    internal: str = ""              # the traceback of a bug (not a bad file)

    def over(self, limit: float | None) -> bool:
        """Written, but deviating by more than ``limit`` (None: any loss accepted)."""
        return not self.error and limit is not None and self.loss is not None and self.loss > limit


def convert_files(inputs: list[str], output: str, *, fps: float = 24.0, read_options: dict | None = None,
                  write_options: dict | None = None, path_mode: str | None = None) -> Outcome:
    """:func:`convert`, never raising: the files written, the warnings, the
    loss, or the one-line reason it failed. The one place every conversion
    of the command line goes through (one file or a folder's)."""
    warnings = Warnings()
    out = Outcome([str(p) for p in inputs], str(output))
    t0 = time.perf_counter()
    try:
        out.written = convert(out.inputs, out.output, fps=fps, read_options=read_options,
                              write_options=write_options, warnings=warnings, path_mode=path_mode)
    except (FormatError, UnknownFormat) as err:
        out.error = one_line(err)
    except OSError as err:
        out.error = one_line(f"{Path(output).name}: {err.strerror or err}")
    except MemoryError:
        out.error = f"{Path(out.inputs[0]).name}: out of memory (absurd sizes in the file?)"
    except Exception as err:        # a bug, not a bad file: the traceback is for the report
        out.internal = traceback.format_exc()
        out.error = (f"{Path(out.inputs[0]).name}: internal error ({type(err).__name__}: {one_line(err)}); "
                     f"please report it with the file")
    out.seconds = time.perf_counter() - t0
    out.warnings = [one_line(w) for w in warnings]
    out.notes = [one_line(n) for n in warnings.notes]
    out.results = [one_line(n) for n in warnings.results]
    worst = largest_deviation(warnings)
    if worst is not None:
        out.loss, out.where = worst.figure, worst.where
    return out
