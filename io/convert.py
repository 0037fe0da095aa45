# SPDX-License-Identifier: GPL-3.0-or-later
"""Format to format without Blender: read a scene with one format's reader,
write it with another's writer (numpy only; never imports bpy).

    python -m legacy_skin_io convert INPUT... -o OUTPUT [--fps F]
        [--format text|binary|compressed] [--float 32|64] [--ticks-per-second N]

Formats are chosen by suffix through :mod:`.formats` (RiTE: one .ram and
any .raa files, each .raa a clip; DirectX: one .x file).
"""
from __future__ import annotations

import sys
from pathlib import Path

from .errors import FormatError
from .formats import UnknownFormat, for_path

#: ``--format`` values -> io/xfile/writer.py formats
XFILE_FORMATS = {"text": "text", "binary": "binary", "compressed": "text_compressed",
                 "text_compressed": "text_compressed", "binary_compressed": "binary_compressed"}


def convert(inputs: list[str], output: str, *, fps: float = 24.0, fmt: str | None = None,
            float_size: int | None = None, ticks_per_second: int | None = None,
            warnings: list[str] | None = None) -> list[str]:
    """Convert ``inputs`` (one format's model file and its animation files)
    to ``output`` (format by suffix). Returns the paths written. ``fmt``,
    ``float_size`` and ``ticks_per_second`` are .X options (a warning says so
    when they are given for another format). Raises FormatError (bad input,
    unwritable output) or :class:`.formats.UnknownFormat` (unknown suffix);
    an existing output is replaced only by a complete file."""
    from ..scene import SceneError

    warnings = warnings if warnings is not None else []
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
    if not fps or fps <= 0:
        raise FormatError(f"fps must be a positive number, not {fps!r}")
    reader = in_fmts[0].adapter
    try:
        scene = reader.read_scene(inputs, warnings=warnings)
    except SceneError as err:
        raise FormatError(str(err), path=inputs[0]) from None
    options: dict = {"fps": float(fps)}
    xopts = {"fmt": fmt, "float_size": float_size, "ticks_per_second": ticks_per_second}
    if out_fmt.id == "xfile":
        if fmt is not None:
            if fmt not in XFILE_FORMATS:
                raise FormatError(f"format must be one of text, binary, compressed, not {fmt!r}")
            options["fmt"] = XFILE_FORMATS[fmt]
        if float_size is not None:
            options["float_size"] = int(float_size)
        if ticks_per_second is not None:
            options["ticks_per_second"] = int(ticks_per_second)
    else:
        given = [k for k, v in xopts.items() if v is not None]
        if given:
            warnings.append(f"{', '.join(given)}: .x options, ignored for {out_fmt.label} output")
    try:
        return out_fmt.adapter.write_scene(scene, output, warnings=warnings, **options)
    except SceneError as err:
        raise FormatError(str(err), path=output) from None


def add_arguments(parser) -> None:
    """The ``convert`` subcommand's arguments (an argparse parser)."""
    parser.add_argument("inputs", nargs="+", metavar="INPUT",
                        help="the file(s) to read: a .x file, or a .ram model and any .raa animations")
    parser.add_argument("-o", "--output", required=True, metavar="OUTPUT",
                        help="the file to write, format by suffix (.x, .ram; a .ram gets one "
                             "<stem>_<animation>.raa per animation beside it)")
    parser.add_argument("--fps", type=float, default=24.0,
                        help="scene frames per second: RiTE frames <-> .X ticks (default 24)")
    parser.add_argument("--format", dest="fmt", choices=("text", "binary", "compressed"), default=None,
                        help=".x output: text (default), binary, or compressed (MSZIP-compressed text)")
    parser.add_argument("--float", dest="float_size", type=int, choices=(32, 64), default=None,
                        help=".x output: 32-bit (default) or 64-bit floats")
    parser.add_argument("--ticks-per-second", dest="ticks_per_second", type=int, default=None, metavar="N",
                        help=".x output: AnimTicksPerSecond (default: the input's rate for .x input, else 4800)")


def _one_line(message) -> str:
    return " ".join(str(message).splitlines())


def run(args) -> int:
    """Run ``convert`` for parsed ``args``: 0 on success, 2 on an error
    (one ``error: ...`` line on stderr); warnings go to stderr as
    ``warning: ...``, the files written to stdout."""
    warnings: list[str] = []
    if args.ticks_per_second is not None and args.ticks_per_second < 1:
        print(f"error: --ticks-per-second must be at least 1, not {args.ticks_per_second}", file=sys.stderr)
        return 2
    try:
        written = convert(list(args.inputs), args.output, fps=args.fps, fmt=args.fmt,
                          float_size=args.float_size, ticks_per_second=args.ticks_per_second,
                          warnings=warnings)
    except (FormatError, UnknownFormat) as err:
        for w in warnings:
            print(f"warning: {_one_line(w)}", file=sys.stderr)
        print(f"error: {_one_line(err)}", file=sys.stderr)
        return 2
    except OSError as err:
        print(f"error: {_one_line(f'{args.output}: {err.strerror or err}')}", file=sys.stderr)
        return 2
    for w in warnings:
        print(f"warning: {_one_line(w)}", file=sys.stderr)
    for p in written:
        print(f"wrote {p}")
    return 0
