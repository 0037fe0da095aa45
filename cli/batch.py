# SPDX-License-Identifier: GPL-3.0-or-later
"""``convert DIR -o OUTDIR --to EXT``: a whole folder, without Blender.

Every model file below DIR (by suffix, any registered format; subfolders
too, symbolic links to folders not followed, OUTDIR left out when it lies
inside DIR) is converted with the animation files that go with it to
OUTDIR/<the same subfolder>/<its stem><EXT>. An animation file goes with
the model file of its format in its folder: the only one, or else the one
whose stem, followed by ``_``, begins its stem (``hero.ram`` takes
``hero_walk.raa``, as ``convert`` names them); one that goes with no model
is reported as failed.

Each model is one job (``io.convert.convert_files``, which never raises);
``--jobs N`` runs N at once in worker processes, ``--scheduler ADDRESS`` on
Dask distributed (:mod:`.cluster`). A bad file never stops the others: the
end is a table of every file (converted, its loss and warnings; failed,
with the one-line reason) and a count. ``--report FILE.jsonl`` writes a line
per input as each is done, ``--resume`` skips what it says is done
(:mod:`.batch_report`). Ctrl-C or SIGTERM stops the run, its workers with
it. Exit status: 2 if any failed, else :data:`.convert.EXIT_LOSS` if any
deviates over the loss limit, else 0; 130 (143) when stopped.
"""
from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Generator
from concurrent.futures import ProcessPoolExecutor, as_completed
from contextlib import closing, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..io import export_options, options
from ..io.convert import Outcome, convert_files
from ..io.errors import FormatError
from ..io.formats import FORMATS, Format, UnknownFormat, for_path
from . import cluster
from .batch_report import Report, done_before, skipped
from .cluster import SchedulerError
from .convert import EXIT_LOSS, INPUT, limit
from .progress import Progress


@dataclass
class Job:
    """One model file and its animation files, and where they go."""

    inputs: list[str]
    output: str
    name: str                       # the model's path below DIR, for the table
    fps: float = 24.0
    read_options: dict | None = None
    write_options: dict | None = None
    path_mode: str | None = None


def importable() -> bool:
    """Whether a fresh Python process can import this package by its name
    (a worker process does): not inside Blender's extension namespace."""
    import importlib.util

    top = __name__.split(".")[0]
    return top != "bl_ext" and importlib.util.find_spec(top) is not None


def run_job(job: Job) -> Outcome:
    """Convert one job (in a worker process or not): never raises."""
    try:
        Path(job.output).parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        return Outcome(job.inputs, job.output, error=f"{Path(job.output).parent}: cannot make the folder "
                                                     f"({err.strerror or err})")
    return convert_files(job.inputs, job.output, fps=job.fps, read_options=job.read_options,
                         write_options=job.write_options, path_mode=job.path_mode)


def _format_of(name: str) -> tuple[Format, bool] | None:
    """(format, is an animation file) of a file name, by suffix only."""
    suffix = Path(name).suffix.lower()
    for fmt in FORMATS:
        if fmt.writes_only:                 # an input of no reader
            continue
        if suffix in fmt.model_suffixes:
            return fmt, False
        if suffix in fmt.anim_suffixes:
            return fmt, True
    return None


def _owner(anim: str, models: list[str]) -> str | None:
    """The model an animation file goes with (file names of one folder and format)."""
    if len(models) == 1:
        return models[0]
    stem = Path(anim).stem.lower()
    fits = [m for m in models if stem.startswith(Path(m).stem.lower() + "_")]
    return max(fits, key=len) if fits else None


def find_jobs(root: Path, out_root: Path, suffix: str) -> tuple[list[Job], list[Outcome]]:
    """The jobs of every model below ``root`` (sorted by path), and the
    animation files that go with no model (as failed outcomes)."""
    root, out_root = root.resolve(), out_root.resolve()
    jobs: list[Job] = []
    orphans: list[Outcome] = []
    for folder, dirs, files in os.walk(root):
        here = Path(folder)
        dirs[:] = sorted(d for d in dirs if (here / d).resolve() != out_root)
        by_format: dict[str, tuple[list[str], list[str]]] = {}
        for name in sorted(files):
            kind = _format_of(name)
            if kind is not None and (here / name).is_file():
                by_format.setdefault(kind[0].id, ([], []))[kind[1]].append(name)
        for models, anims in by_format.values():
            taken: dict[str, list[str]] = {m: [] for m in models}
            for a in anims:
                owner = _owner(a, models)
                if owner is None:
                    why = "no model file in its folder" if not models else \
                        f"several model files in its folder and none named as its prefix ({', '.join(models)})"
                    orphans.append(Outcome([str(here / a)], "", error=f"{a}: an animation with {why}"))
                else:
                    taken[owner].append(a)
            for m in models:
                rel = (here / m).relative_to(root)
                out = out_root / rel.parent / (Path(m).stem + suffix)
                jobs.append(Job([str(here / m)] + [str(here / a) for a in taken[m]], str(out), rel.as_posix()))
    jobs.sort(key=lambda j: j.name)
    return jobs, orphans


def _clashes(jobs: list[Job]) -> dict[int, str]:
    """Jobs that would write the same file as an earlier one (a.x and a.ram
    in one folder, to the same format): index -> the earlier job's name."""
    seen: dict[str, str] = {}
    out = {}
    for i, j in enumerate(jobs):
        key = os.path.normcase(j.output)
        if key in seen:
            out[i] = seen[key]
        else:
            seen[key] = j.name
    return out


def _options(args, jobs: list[Job], out_fmt: Format, warnings: list[str]) -> None:
    """Each job's reader and writer options from the command line (checked;
    flags no input or output format has are reported)."""
    in_formats = {for_path(j.inputs[0]).id: for_path(j.inputs[0]) for j in jobs}
    read = {fid: options.given(args, fmt.import_options, prefix=INPUT) for fid, fmt in in_formats.items()}
    write = options.given(args, out_fmt.export_options)
    mine = [s for fmt in in_formats.values() for s in fmt.import_options]
    for flag in options.unused(args, mine, prefix=INPUT):
        warnings.append(f"{flag}: not an option of the input files' formats, ignored")
    for flag in options.unused(args, out_fmt.export_options + export_options.CONVERT):
        warnings.append(f"{flag}: not an option of {out_fmt.label} output, ignored")
    shared = options.given(args, export_options.CONVERT)
    for j in jobs:
        j.fps = args.fps
        j.read_options = read[for_path(j.inputs[0]).id]
        j.write_options = write
        j.path_mode = shared.get("path_mode")


def _size(job: Job) -> int:
    total = 0
    for p in job.inputs:
        try:
            total += os.stat(p).st_size
        except OSError:
            pass
    return total


def _lost(job: Job, err: object) -> Outcome:
    """The outcome of a job whose worker died (killed, out of memory) or
    whose task could not run."""
    said = str(err).strip().splitlines()
    why = f"{type(err).__name__}: {said[0][:200]}" if said else type(err).__name__
    return Outcome(job.inputs, job.output, error=f"{job.name}: the worker process failed ({why})")


#: (index in the jobs, outcome) as each job is done; closed when the run stops
Runs = Generator[tuple[int, Outcome], None, None]


def _in_process(jobs: list[Job]) -> Runs:
    for k, job in enumerate(jobs):
        yield k, run_job(job)


def _watch_parent() -> None:
    """A worker process's first step: a thread that ends the worker when
    the process that started it is gone (killed: it could not stop its
    workers, which would wait for work forever)."""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, name="lsio-parent-watch", daemon=True).start()


def _in_processes(jobs: list[Job], workers: int) -> Runs:
    # spawn, never fork: a forked child inherits the locks other threads (the progress
    # line's, Blender's) held at that moment and can hang on them
    spawn = multiprocessing.get_context("spawn")
    pool = ProcessPoolExecutor(max_workers=min(workers, len(jobs)), mp_context=spawn, initializer=_watch_parent)
    try:
        futures = {pool.submit(run_job, job): k for k, job in enumerate(jobs)}
        for fut in as_completed(futures):
            k = futures[fut]
            try:
                yield k, fut.result()
            except Exception as err:        # the worker died (killed, out of memory)
                yield k, _lost(jobs[k], err)
    finally:        # stopped (Ctrl-C): the jobs not started are dropped, not waited for
        pool.shutdown(wait=True, cancel_futures=True)


def _on_scheduler(jobs: list[Job], sizes: list[int], address: str) -> Runs:
    def say(line: str) -> None:
        print(f"note: {line}", file=sys.stderr)

    for k, got in cluster.completed(jobs, sizes, run_job, address, say=say):
        yield k, got if isinstance(got, Outcome) else _lost(jobs[k], got)     # (the worker's exception)


def convert_all(jobs: list[Job], workers: int = 1, *, scheduler: str | None = None,
                report: Report | None = None) -> list[Outcome]:
    """Every job's outcome, in the jobs' order; ``workers`` > 1 runs them in
    that many processes, ``scheduler`` on Dask distributed (:mod:`.cluster`;
    SchedulerError when it cannot). Each outcome goes to ``report`` as it
    comes; a progress line counts them on stderr."""
    results: list[Outcome | None] = [None] * len(jobs)
    clashes = _clashes(jobs)
    for i, earlier in clashes.items():
        clash = Outcome(jobs[i].inputs, jobs[i].output,
                        error=f"{jobs[i].name}: its output {Path(jobs[i].output).name} is also {earlier}'s")
        results[i] = clash
        if report is not None:
            report.write(clash)
    todo = [i for i in range(len(jobs)) if i not in clashes]
    size: dict[int, int] = {}
    if scheduler or (workers > 1 and len(todo) > 1):
        # the largest first, so that no long one is left for the end while the others wait
        size = {i: _size(jobs[i]) for i in todo}
        todo.sort(key=lambda i: -size[i])
    mine = [jobs[i] for i in todo]
    if scheduler:
        runs = _on_scheduler(mine, [size[i] for i in todo], scheduler)
    elif size:
        runs = _in_processes(mine, workers)
    else:
        runs = _in_process(mine)
    done = len(clashes)
    failed = 0
    with Progress("convert", len(jobs)) as progress, closing(runs):
        progress.update(done)
        for k, outcome in runs:
            results[todo[k]] = outcome
            done += 1
            failed += bool(outcome.error)
            if report is not None:
                report.write(outcome)
            progress.update(done, note=f"{failed} failed" if failed else "")
    return [r for r in results if r is not None]


def table(names: list[str], outcomes: list[Outcome], loss_limit: float | None) -> list[str]:
    """The summary: one row per file (result, loss, warnings, file, detail)."""
    width = max([len(n) for n in names] + [4])
    rows = [f"{'result':<9} {'loss':>8} {'warn':>4}  {'file':<{width}}  detail"]
    for name, o in zip(names, outcomes):
        if o.error:
            result, detail = "FAILED", o.error
        elif o.over(loss_limit):
            result, detail = "LOSS", f"written; deviates {o.loss:.2e} of the model size ({o.where})"
        else:
            anims = len(o.inputs) - 1
            result, detail = "converted", f"{len(o.written)} file(s) written" + \
                (f" (with {anims} animation file(s))" if anims else "")
        loss = f"{o.loss:.2e}" if o.loss is not None else "-"
        warn = str(len(o.warnings)) if not o.error else "-"
        rows.append(f"{result:<9} {loss:>8} {warn:>4}  {name:<{width}}  {detail}")
    return rows


class _stopped_by:
    """``with _stopped_by(signal.SIGTERM) as stop:``: the signal (``kill``, a
    batch system's time limit) stops the run as Ctrl-C does (KeyboardInterrupt,
    so that the worker processes are stopped and the report closed);
    ``stop.got`` says whether it came. Outside the main thread, nothing."""

    def __init__(self, signum: int):
        self.signum = signum
        self.got = False
        self._saved: Any = None         # the handler before (signal.signal's)

    def _handle(self, signum, frame) -> None:
        self.got = True
        raise KeyboardInterrupt

    def __enter__(self) -> _stopped_by:
        if threading.current_thread() is threading.main_thread():
            self._saved = signal.signal(self.signum, self._handle)
        return self

    def __exit__(self, *exc) -> None:
        if self._saved is not None:
            signal.signal(self.signum, self._saved)


def _folder_flags(args) -> str:
    """The error line of the folder's own flags (--jobs, --report, --resume,
    --scheduler, --max-loss); empty when they are fine."""
    if args.jobs < 1:
        return f"--jobs must be at least 1, not {args.jobs}"
    if not (args.max_loss >= 0):
        return f"--max-loss must be a fraction >= 0, not {args.max_loss}"
    if args.resume and not args.report:
        return "--resume needs --report FILE: the report of the run to go on with"
    if args.scheduler is None:
        return ""
    if args.jobs != 1:
        return "--jobs and --scheduler: one or the other (a scheduler has its own workers)"
    if not importable():
        return ("--scheduler: its workers need the package importable on its own (python -m legacy_skin_io, "
                "not blender --command)")
    try:
        cluster.check(args.scheduler)
    except SchedulerError as err:
        return str(err)
    return ""


def _resumed(report: str, jobs: list[Job]) -> tuple[list[Job], int]:
    """The jobs ``--resume`` leaves to do, and how many it skips."""
    done, warning = done_before(report)
    if warning:
        print(f"warning: {warning}", file=sys.stderr)
    todo = [j for j in jobs if not skipped(j.inputs, j.output, done)]
    return todo, len(jobs) - len(todo)


def run(args) -> int:
    """``convert DIR -o OUTDIR --to EXT [--jobs N | --scheduler ADDRESS] [--report FILE [--resume]]``."""
    root, out_root = Path(args.inputs[0]), Path(args.output)
    models = ", ".join(s for fmt in FORMATS for s in fmt.model_suffixes)
    if not args.to:
        print(f"error: {root}: a folder converts with --to EXT, the format to write ({models})", file=sys.stderr)
        return 2
    suffix = "." + args.to.lower().lstrip(".")
    try:
        out_fmt = for_path("x" + suffix, sniff=False)
    except UnknownFormat:
        out_fmt = None
    if out_fmt is None or suffix not in out_fmt.model_suffixes:
        print(f"error: --to {args.to}: not a model format (one of {models})", file=sys.stderr)
        return 2
    bad = _folder_flags(args)
    if bad:
        print(f"error: {bad}", file=sys.stderr)
        return 2
    workers = args.jobs
    if workers > 1 and not importable():
        print("warning: --jobs: worker processes need the package importable on its own (python -m "
              "legacy_skin_io, not blender --command): converting in this process", file=sys.stderr)
        workers = 1
    if out_root.exists() and not out_root.is_dir():
        print(f"error: {out_root}: not a folder (convert DIR writes into a folder)", file=sys.stderr)
        return 2
    jobs, orphans = find_jobs(root, out_root, suffix)
    warnings: list[str] = []
    try:
        _options(args, jobs, out_fmt, warnings)
    except options.OptionError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    for w in warnings:
        print(f"warning: {w}", file=sys.stderr)
    if not jobs and not orphans:
        print(f"error: {root}: no model file ({models}) in it", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    report = None
    stop = _stopped_by(signal.SIGTERM)
    try:
        with stop:
            jobs, skips = _resumed(args.report, jobs) if args.resume else (jobs, 0)
            report = Report(args.report, resume=args.resume) if args.report else None
            with report if report is not None else nullcontext():
                for o in orphans if report is not None else []:
                    report.write(o)
                outcomes = convert_all(jobs, workers, scheduler=args.scheduler, report=report)
    except (FormatError, SchedulerError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        how = "stopped (SIGTERM)" if stop.got else "interrupted"
        where = f"; {report.lines} input(s) done are in {report.path}: --resume goes on" if report is not None else ""
        print(f"\n{how}{where}", file=sys.stderr)
        return 128 + (signal.SIGTERM if stop.got else signal.SIGINT)
    seconds = time.perf_counter() - t0
    for o in outcomes:
        if o.internal:                      # a bug: the traceback for a report
            print(o.internal, end="", file=sys.stderr)
    names = [j.name for j in jobs] + [Path(o.inputs[0]).resolve().relative_to(root.resolve()).as_posix()
                                      for o in orphans]
    outcomes += orphans
    loss_limit = limit(args)
    if outcomes:
        for row in table(names, outcomes, loss_limit):
            print(row)
    failed = sum(bool(o.error) for o in outcomes)
    lossy = sum(o.over(loss_limit) for o in outcomes)
    converted = len(outcomes) - failed - lossy
    what = f"{lossy} over the loss limit {loss_limit:g} (written; --accept-loss accepts them), " if lossy else ""
    how = f"scheduler {args.scheduler}" if args.scheduler else f"{workers} job{'s' if workers > 1 else ''}"
    again = f", {skips} skipped (done in the report: --resume)" if args.resume else ""
    print(f"{len(outcomes) + skips} file(s) in {seconds:.1f} s ({how}): {converted} converted, {what}{failed} "
          f"failed{again}; written below {out_root.resolve()}")
    if report is not None and report.error:
        print(f"error: {report.error}", file=sys.stderr)
        return 2
    if failed:
        return 2
    return EXIT_LOSS if lossy else 0
