# SPDX-License-Identifier: GPL-3.0-or-later
"""Format to format without Blender: read a scene with one format's reader,
write it with another's writer (numpy only; never imports bpy).

    python -m legacy_skin_io convert INPUT... -o OUTPUT [--fps F] [--max-loss F | --accept-loss]
        [the output format's export options] [--input-... the input format's import options]
    python -m legacy_skin_io convert DIR -o OUTDIR --to EXT [--jobs N | --scheduler ADDRESS]
        [--report FILE.jsonl [--resume]] [the same options]

Formats are chosen by suffix through :mod:`.formats` (a model file and any
animation files of one format in, a model file out; a format with
animation files writes them beside it). The options are the formats' own
(``io/<format>/options.py``), e.g. for .X output ``--storage
text|binary|text_compressed|binary_compressed`` (``--format``, with
``compressed`` for text_compressed), ``--float 32|64``,
``--ticks-per-second N``; for .X input ``--input-ticks-per-second N``.

What the output format cannot carry is written as close as it can be, and
the writer measures the loss: the written files are read back and
evaluated (skinned vertex positions) with the scene at every frame of every
animation; the largest distance between the same vertex in both, as a
fraction of the model size (the diagonal of the meshes' bounding box in the
default pose), is the figure. Over :data:`LOSS_LIMIT` (``--max-loss``) the
command exits with :data:`EXIT_LOSS`, the files written all the same,
unless ``--accept-loss``. ``convert DIR`` converts a whole folder
(:mod:`.batch`).
"""
from __future__ import annotations

import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from . import export_options, options
from .errors import AnimationsOnly, FormatError, Warnings, largest_deviation, note
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


#: ``convert`` offers the input format's import options as ``--input-<flag>``
INPUT = "input-"
#: the largest loss (fraction of the model size) ``convert`` accepts without --accept-loss
LOSS_LIMIT = 1e-3
#: exit status: written, but the files deviate from the input by more than the limit
EXIT_LOSS = 3


def add_arguments(parser) -> None:
    """The ``convert`` subcommand's arguments (an argparse parser), the
    formats' options generated from the registry."""
    models = ", ".join(s for f in FORMATS for s in f.model_suffixes)
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
                      [(f.label, f.export_options) for f in FORMATS])
    options.add_flags(parser.add_argument_group("input options (each applies to its format's input)"),
                      [(f.label, f.import_options) for f in FORMATS], prefix=INPUT)


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

    def loss_line(self, limit: float | None) -> str:
        """The loss in one line (empty when there is none)."""
        if self.loss is None:
            return ""
        text = f"loss: the written files deviate from the input by up to {self.loss:.2e} of the model size"
        text += f" ({self.where})" if self.where else ""
        if limit is None:
            return text + ", accepted (--accept-loss)"
        if self.loss > limit:
            return text + f", over the limit {limit:g} (--max-loss); --accept-loss accepts it"
        return text + f", within the limit {limit:g}"


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
    files written to stdout. A folder as the one input converts the folder (:mod:`.batch`)."""
    if len(args.inputs) == 1 and Path(args.inputs[0]).is_dir():
        from . import batch

        return batch.run(args)
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
    line = out.loss_line(limit(args))
    if out.over(limit(args)):
        print(f"error: {line} (exit {EXIT_LOSS})", file=sys.stderr)
        return EXIT_LOSS
    if line:
        print(line, file=sys.stderr)
    return 0
