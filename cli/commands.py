# SPDX-License-Identifier: GPL-3.0-or-later
"""The command line: python -m legacy_skin_io COMMAND ... (and, with the
extension installed, blender --command legacy_skin_io COMMAND ...).

    convert INPUT... -o OUTPUT          any format to any format, numpy only (no Blender)
    convert DIR -o OUTDIR --to EXT      every model file below DIR, with its animation files
    import  MODEL [ANIM...] -o OUT.blend
    verify  MODEL [ANIM...] [--dominant ANIM ...] [--frames] [--report DIR]
    export  IN.blend -o OUTPUT          format by OUTPUT's suffix

Formats are recognised by suffix (or signature). verify imports into a new
scene, then compares Blender's evaluated meshes with the core's evaluation
of the original files (a fresh parse) at every frame: one line per
animation (frames checked, the worst frame and its error as a fraction of
the model size, PASS or FAIL) and a verdict; --frames adds the per-frame
table, --report DIR writes an HTML page with plots and rendered frames.

Exit status: 0 success (verify: within the tolerance); 1 verify over the
tolerance; 2 unreadable input, unwritable output or bad options (convert
DIR: a file failed); 3 convert wrote the files but they deviate from the
input by more than --max-loss of the model size (--accept-loss to accept).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..io import export_options, formats, options
from ..scene.axes import AXES


def _model_args(p) -> None:
    p.add_argument("model", help=f"model file ({_suffixes('model_suffixes', read=True)})")
    p.add_argument("animations", nargs="*",
                   help=f"animation files ({_suffixes('anim_suffixes')}); with several or with --dominant they are "
                        f"mergeable layers")
    p.add_argument("--dominant", action="append", default=[], metavar="ANIM",
                   help="a dominant animation layer, on top of the mergeable ones (repeatable)")
    p.add_argument("--weights", type=options.finite, nargs="*", default=[], metavar="W",
                   help="one weight per mergeable animation (default 1 each)")
    p.add_argument("--forward", choices=AXES,
                   help="the file's forward axis (default -Z); with --up, they switch --manual-orientation on")
    p.add_argument("--up", choices=AXES,
                   help="the file's up axis (default Y; without it and --forward, formats that decide up from "
                        "the file's data do so)")
    p.add_argument("--scale", type=options.finite, default=1.0, help="scale applied to the model (default 1)")
    p.add_argument("--bone-direction", default="CHILDREN", choices=("FILE", "CHILDREN"),
                   help="CHILDREN (default): bones point along the limbs, at their children; "
                        "FILE: bones keep the joints' axes")
    p.add_argument("--all-joints", action="store_true", help="make a bone of every joint")
    keys = p.add_mutually_exclusive_group()
    keys.add_argument("--bake", action="store_true",
                      help="key every frame with the file's exact playback (the default)")
    keys.add_argument("--keys-only", action="store_true",
                      help="key only the file's keys (RiTE: and every frame between keys Blender would "
                           "interpolate differently: the same poses, verified against the runtime; DirectX: "
                           "interpolated per component, verified against that)")
    options.add_flags(p.add_argument_group("format options (each applies to its format's files)"),
                      [(f.label, _union(f.import_options, f.anim_import_options)) for f in formats.FORMATS])


def _suffixes(kind: str, read: bool = False) -> str:
    """The registered formats' model or animation suffixes, for --help
    (``read``: of the formats that are read)."""
    return ", ".join(s for fmt in formats.FORMATS if not (read and fmt.writes_only) for s in getattr(fmt, kind))


def _union(*groups) -> tuple:
    """Options of several groups, each once."""
    return tuple({s.id: s for g in groups for s in g}.values())


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m legacy_skin_io", description=options.plain(__doc__),
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True, metavar="COMMAND")
    p = sub.add_parser("convert", help="convert between formats without Blender (numpy only)")
    from . import convert

    convert.add_arguments(p)
    p.set_defaults(func=_convert)
    p = sub.add_parser("import", help="import a model (and animations) into a new .blend")
    _model_args(p)
    p.add_argument("-o", "--output", required=True, help="the .blend file to write")
    p.set_defaults(func=lambda a: _blender("cmd_import", a))
    p = sub.add_parser("verify", help="import, then check Blender's deformation against the core at every frame")
    _model_args(p)
    p.add_argument("--tolerance", type=options.finite, default=1e-5,
                   help="largest error allowed, relative to the model size (default 1e-5)")
    p.add_argument("--blend", help="also save the imported scene to this .blend")
    p.add_argument("--render", help="also render a picture of a few poses to this PNG (Cycles, CPU)")
    p.add_argument("-v", "--frames", action="store_true",
                   help="also print the table of every frame checked (frame, max error, mean error)")
    p.add_argument("--report", metavar="DIR",
                   help="also write an HTML report to DIR/index.html: per animation a plot of the error per "
                        "frame and rendered frames (first, worst, last) with the core's evaluation overlaid "
                        "(Cycles, CPU); it opens offline")
    p.set_defaults(func=lambda a: _blender("cmd_verify", a))
    p = sub.add_parser("export", help="export a .blend's rig and meshes (format by the output's suffix)")
    p.add_argument("blend", help="the .blend file to read")
    p.add_argument("-o", "--output", required=True, help=f"the file to write ({_suffixes('model_suffixes')})")
    options.add_flags(p.add_argument_group("export options (every format)"),
                      [("every format", export_options.OPTIONS)])
    options.add_flags(p.add_argument_group("format options (each applies to its format's files)"),
                      [(fmt.label, fmt.export_options) for fmt in formats.FORMATS])
    p.set_defaults(func=lambda a: _blender("cmd_export", a))
    return ap


def _convert(args) -> int:
    """``convert``: a folder as the one input is converted as a whole
    (:mod:`.batch`), files one conversion (:mod:`.convert`)."""
    if len(args.inputs) == 1 and Path(args.inputs[0]).is_dir():
        from . import batch

        return batch.run(args)
    from . import convert

    return convert.run(args)


def _blender(name: str, args) -> int:
    try:
        from . import blender_command
    except ImportError as err:
        print(f"error: this command needs Blender's Python module (bpy): {err}", file=sys.stderr)
        return 2
    return getattr(blender_command, name)(args)


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


def blender_command_line(argv: list[str]) -> int:
    """``blender --command legacy_skin_io ...``: the same subcommands as
    ``python -m legacy_skin_io`` (registered by the package's ``register``)."""
    try:
        return main(argv)
    except SystemExit as exc:        # argparse's --help and usage errors
        return int(exc.code or 0) if isinstance(exc.code, int) else 2
