# SPDX-License-Identifier: GPL-3.0-or-later
"""The ``convert`` command: format to format without Blender (numpy only;
never imports bpy), the conversion itself being ``io/convert.py``'s.

    python -m legacy_skin_io convert INPUT... -o OUTPUT [--fps F] [--max-loss F | --accept-loss]
        [the output format's export options] [--input-... the input format's import options]
    python -m legacy_skin_io convert DIR -o OUTDIR --to EXT [--jobs N | --scheduler ADDRESS]
        [--report FILE.jsonl [--resume]] [the same options]

The options are generated from the registry: the formats' own
(``io/<format>/options.py``), e.g. for .X output ``--storage
text|binary|text_compressed|binary_compressed`` (``--format``, with
``compressed`` for text_compressed), ``--float 32|64``,
``--ticks-per-second N``; for .X input ``--input-ticks-per-second N``.

The written files' deviation from the input (``io.convert``'s loss) over
:data:`LOSS_LIMIT` (``--max-loss``) makes the command exit with
:data:`EXIT_LOSS`, the files written all the same, unless
``--accept-loss``. ``convert DIR`` converts a whole folder (:mod:`.batch`).
"""
from __future__ import annotations

import sys

from ..io import export_options, options
from ..io.convert import Outcome, convert_files, one_line
from ..io.errors import FormatError, Warnings
from ..io.formats import FORMATS, UnknownFormat, for_path

#: ``convert`` offers the input format's import options as ``--input-<flag>``
INPUT = "input-"
#: the largest loss (fraction of the model size) ``convert`` accepts without --accept-loss
LOSS_LIMIT = 1e-3
#: exit status: written, but the files deviate from the input by more than the limit
EXIT_LOSS = 3


def add_arguments(parser) -> None:
    """The ``convert`` subcommand's arguments (an argparse parser), the
    formats' options generated from the registry."""
    models = ", ".join(s for fmt in FORMATS for s in fmt.model_suffixes)
    parser.add_argument("inputs", nargs="+", metavar="INPUT",
                        help="the file(s) to read: a model file and any animation files of its format; or one "
                             "folder, converted as a whole (with --to)")
    parser.add_argument("-o", "--output", required=True, metavar="OUTPUT",
                        help=f"the model file to write, format by suffix ({models}); a format with animation "
                             f"files gets one <stem>_<animation> file per animation beside it. For a folder: "
                             f"the folder to write into (its tree is kept)")
    parser.add_argument("--fps", type=options.finite, default=24.0,
                        help="scene frames per second: frame-based animations <-> time-based ones (default 24)")
    options.add_flags(parser.add_argument_group("output options (every format)"),
                      [("every format", export_options.CONVERT)])
    loss = parser.add_mutually_exclusive_group()
    loss.add_argument("--max-loss", type=float, default=LOSS_LIMIT, metavar="F",
                      help=f"the largest deviation of the written files from the input accepted, as a fraction "
                           f"of the model size (default {LOSS_LIMIT:g}); over it the files are written and the "
                           f"exit status is {EXIT_LOSS}")
    loss.add_argument("--accept-loss", action="store_true",
                      help="exit 0 whatever the output format cannot carry (the loss is still printed)")
    batch = parser.add_argument_group("a folder (convert DIR -o OUTDIR --to EXT)")
    batch.add_argument("--to", metavar="EXT",
                       help=f"the format to write every model file below DIR in ({models}); each model file goes "
                            f"with the animation files beside it")
    batch.add_argument("-j", "--jobs", type=int, default=1, metavar="N",
                       help="convert N files at once, in N worker processes (default 1)")
    batch.add_argument("--report", metavar="FILE.jsonl",
                       help="write one JSON line per input to FILE as each is done: input, animations, outputs, "
                            "status (ok, warned, failed), reason, deviation, deviation_at, seconds, warnings "
                            "(started afresh; appended to with --resume)")
    batch.add_argument("--resume", action="store_true",
                       help="go on with the run --report FILE records: skip the inputs whose last line there "
                            "says ok or warned (written) and whose outputs all exist; failed ones are converted again")
    batch.add_argument("--scheduler", metavar="ADDRESS",
                       help="convert on Dask distributed instead of --jobs: tcp://HOST:8786 (a running "
                            "scheduler), a scheduler file (.json), or local:N (N worker processes here); "
                            "needs pip install -r requirements-cluster.txt")
    options.add_flags(parser.add_argument_group("output options (each applies to its format's output)"),
                      [(fmt.label, fmt.export_options) for fmt in FORMATS])
    options.add_flags(parser.add_argument_group("input options (each applies to its format's input)"),
                      [(fmt.label, fmt.import_options) for fmt in FORMATS], prefix=INPUT)


def loss_line(out: Outcome, limit: float | None) -> str:
    """``out``'s loss in one line (empty when there is none)."""
    if out.loss is None:
        return ""
    text = f"loss: the written files deviate from the input by up to {out.loss:.2e} of the model size"
    text += f" ({out.where})" if out.where else ""
    if limit is None:
        return text + ", accepted (--accept-loss)"
    if out.loss > limit:
        return text + f", over the limit {limit:g} (--max-loss); --accept-loss accepts it"
    return text + f", within the limit {limit:g}"


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


def limit(args) -> float | None:
    """The loss limit the command line sets (None: --accept-loss)."""
    return None if args.accept_loss else args.max_loss


def run(args) -> int:
    """Run ``convert`` for parsed ``args``: 0 on success, 2 on an error
    (one ``error: ...`` line on stderr), :data:`EXIT_LOSS` when the files
    are written but deviate over the limit; warnings go to stderr as
    ``warning: ...``, then what needs no action as ``note: ...`` (e.g. how
    a .X file's up axis was decided), the loss in one ``loss: ...`` line, the
    files written to stdout. A folder is :mod:`.batch`'s (``commands`` sends it there)."""
    folder_only = [flag for flag, given in (("--to", args.to), ("--jobs", args.jobs != 1), ("--report", args.report),
                                            ("--resume", args.resume), ("--scheduler", args.scheduler)) if given]
    if folder_only:
        print(f"warning: {', '.join(folder_only)}: for a folder (convert DIR -o OUTDIR), ignored", file=sys.stderr)
    if not (args.max_loss >= 0):
        print(f"error: --max-loss must be a fraction >= 0, not {args.max_loss}", file=sys.stderr)
        return 2
    early = Warnings()
    try:
        read, write = _given(args, early)
        shared = options.given(args, export_options.CONVERT)
    except (FormatError, UnknownFormat) as err:
        print(f"error: {one_line(err)}", file=sys.stderr)
        return 2
    out = convert_files(list(args.inputs), args.output, fps=args.fps, read_options=read, write_options=write,
                        path_mode=shared.get("path_mode"))
    for w in [*early, *out.warnings]:
        print(f"warning: {one_line(w)}", file=sys.stderr)
    if out.error:
        if out.internal:
            print(out.internal, end="", file=sys.stderr)
        print(f"error: {out.error}", file=sys.stderr)
        return 2
    for n in out.notes:
        print(f"note: {one_line(n)}", file=sys.stderr)
    for p in out.written:
        print(f"wrote {p}")
    for r in out.results:
        print(r)
    line = loss_line(out, limit(args))
    if out.over(limit(args)):
        print(f"error: {line} (exit {EXIT_LOSS})", file=sys.stderr)
        return EXIT_LOSS
    if line:
        print(line, file=sys.stderr)
    return 0
