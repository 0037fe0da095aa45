# SPDX-License-Identifier: GPL-3.0-or-later
"""Format to format without Blender: read a scene with one format's reader,
write it with another's writer (numpy only; never imports bpy).

    python -m legacy_skin_io convert INPUT... -o OUTPUT [--fps F]
        [the output format's export options] [--input-... the input format's import options]

Formats are chosen by suffix through :mod:`.formats` (a model file and any
animation files of one format in, a model file out; a format with
animation files writes them beside it). The options are the formats' own
(``io/<format>/options.py``), e.g. for .X output ``--storage
text|binary|text_compressed|binary_compressed`` (``--format``, with
``compressed`` for text_compressed), ``--float 32|64``,
``--ticks-per-second N``; for .X input ``--input-ticks-per-second N``.
"""
from __future__ import annotations

import sys
import traceback
from pathlib import Path

from . import export_options, options
from .errors import FormatError, Warnings, note
from .formats import FORMATS, UnknownFormat, for_path


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
    if len({f.id for f in in_fmts}) != 1:
        raise FormatError("the input files are of different formats: "
                          + ", ".join(f"{Path(p).name} ({f.label})" for p, f in zip(inputs, in_fmts)))
    if out_fmt.anim_suffixes and Path(output).suffix.lower() in out_fmt.anim_suffixes:
        raise FormatError(f"write a model file ({', '.join(out_fmt.model_suffixes)}); its animations are "
                          f"written beside it", path=output)
    if not (fps > 0 and fps < float("inf")):        # NaN too
        raise FormatError(f"fps must be a positive number, not {fps!r}")
    try:
        scene = in_fmts[0].read_scene(inputs, warnings=warnings, **(read_options or {}))
    except SceneError as err:
        raise FormatError(str(err), path=inputs[0]) from None
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


#: ``convert`` offers the input format's import options as ``--input-<flag>``
INPUT = "input-"


def add_arguments(parser) -> None:
    """The ``convert`` subcommand's arguments (an argparse parser), the
    formats' options generated from the registry."""
    models = ", ".join(s for f in FORMATS for s in f.model_suffixes)
    parser.add_argument("inputs", nargs="+", metavar="INPUT",
                        help="the file(s) to read: a model file and any animation files of its format")
    parser.add_argument("-o", "--output", required=True, metavar="OUTPUT",
                        help=f"the model file to write, format by suffix ({models}); a format with animation "
                             f"files gets one <stem>_<animation> file per animation beside it")
    parser.add_argument("--fps", type=options.finite, default=24.0,
                        help="scene frames per second: frame-based animations <-> time-based ones (default 24)")
    options.add_flags(parser.add_argument_group("output options (every format)"),
                      [("every format", export_options.CONVERT)])
    options.add_flags(parser.add_argument_group("output options (each applies to its format's output)"),
                      [(f.label, f.export_options) for f in FORMATS])
    options.add_flags(parser.add_argument_group("input options (each applies to its format's input)"),
                      [(f.label, f.import_options) for f in FORMATS], prefix=INPUT)


def _one_line(message) -> str:
    return " ".join(str(message).splitlines())


def _given(args, warnings: list[str]) -> tuple[dict, dict]:
    """(import options, export options) given on the command line for the
    input's and the output's formats; other formats' flags are reported."""
    in_fmt, out_fmt = for_path(args.inputs[0]), for_path(args.output, sniff=False)
    for flag in options.unused(args, in_fmt.import_options, prefix=INPUT):
        warnings.append(f"{flag}: not an option of {in_fmt.label} input, ignored")
    for flag in options.unused(args, out_fmt.export_options + export_options.CONVERT):
        warnings.append(f"{flag}: not an option of {out_fmt.label} output, ignored")
    return (options.given(args, in_fmt.import_options, prefix=INPUT),
            options.given(args, out_fmt.export_options))


def run(args) -> int:
    """Run ``convert`` for parsed ``args``: 0 on success, 2 on an error
    (one ``error: ...`` line on stderr); warnings go to stderr as
    ``warning: ...``, then what needs no action as ``note: ...`` (e.g. how
    a .X file's up axis was decided), the files written to stdout."""
    warnings = Warnings()
    try:
        read, write = _given(args, warnings)
        shared = options.given(args, export_options.CONVERT)
        written = convert(list(args.inputs), args.output, fps=args.fps, read_options=read, write_options=write,
                          warnings=warnings, path_mode=shared.get("path_mode"))
    except (FormatError, UnknownFormat) as err:
        for w in warnings:
            print(f"warning: {_one_line(w)}", file=sys.stderr)
        print(f"error: {_one_line(err)}", file=sys.stderr)
        return 2
    except OSError as err:
        print(f"error: {_one_line(f'{args.output}: {err.strerror or err}')}", file=sys.stderr)
        return 2
    except Exception as err:        # a bug, not a bad file: the traceback is for the report
        traceback.print_exc()
        print(f"error: {_one_line(args.inputs[0])}: internal error ({type(err).__name__}: {_one_line(err)}); "
              f"please report it with the file", file=sys.stderr)
        return 2
    for w in warnings:
        print(f"warning: {_one_line(w)}", file=sys.stderr)
    for n in warnings.notes:
        print(f"note: {_one_line(n)}", file=sys.stderr)
    for p in written:
        print(f"wrote {p}")
    return 0
