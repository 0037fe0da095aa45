# SPDX-License-Identifier: GPL-3.0-or-later
"""``convert DIR --report FILE.jsonl [--resume]``: what happened to each
input, for a program to read, and where a stopped run goes on.

The report is JSON Lines: one object per input (a model file with its
animation files, or an animation file that goes with no model), appended
and flushed as soon as that input is done, in the order they finish. Each
line is written whole with one ``write`` call, so a run that is stopped or
killed leaves complete lines; a line cut short all the same (the machine
went down mid-write) is dropped by the next ``--resume``, which then writes
on after the last complete line. The fields (:func:`record`):

``input``         the model file (absolute path)
``animations``    the animation files converted with it
``outputs``       the files written (absolute paths; empty when it failed)
``status``        ``ok`` (written, nothing to say), ``warned`` (written, with
                  warnings: a deviation, a blemish of the file) or ``failed``
``reason``        one line: why it failed; for ``warned`` the first warning; empty
                  for ``ok``
``deviation``     the largest deviation of the written files from the input, as a
                  fraction of the model size (null: none measured)
``deviation_at``  where it happens ("Walk, frame 12")
``seconds``       the time the conversion took (in its worker)
``warnings``      every warning, one line each

Without ``--resume`` the file is started afresh. With ``--resume`` it is
appended to, and an input whose last line says ``ok`` or ``warned``
(written: a second run would write the same files with the same warnings),
with the same animation files, and whose outputs (the same model file among
them) all exist is skipped (:func:`skipped`); ``failed`` ones are converted
again. A program reading a report takes the last line of each
input.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from ..io.convert import Outcome
from ..io.errors import FormatError
from ..io.paths import check_target

STATUSES = ("ok", "warned", "failed")


def status(outcome: Outcome) -> str:
    """``ok``, ``warned`` or ``failed``."""
    if outcome.error:
        return "failed"
    return "warned" if outcome.warnings else "ok"


def reason(outcome: Outcome) -> str:
    """The one line a report gives for an outcome's status."""
    if outcome.error:
        return outcome.error
    return outcome.warnings[0] if outcome.warnings else ""


def record(outcome: Outcome) -> dict:
    """One report line's object."""
    return {"input": outcome.inputs[0], "animations": outcome.inputs[1:], "outputs": list(outcome.written),
            "status": status(outcome), "reason": reason(outcome), "deviation": outcome.loss,
            "deviation_at": outcome.where, "seconds": round(outcome.seconds, 4), "warnings": list(outcome.warnings)}


class Report:
    """The report file, open for appending lines (``with Report(path,
    resume=...) as r: r.write(outcome)``). Opening raises FormatError
    naming the file; a failed write stops the writing, and :attr:`error`
    says why (the run goes on; the caller reports it at the end)."""

    def __init__(self, path, *, resume: bool = False):
        self.path = Path(path)
        self.error = ""
        self.lines = 0
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)     # as OUTDIR's folders are made
        except OSError as err:
            raise FormatError(f"cannot make the report's folder ({err.strerror or err})", path=self.path) from None
        out = check_target(self.path)
        flags = os.O_CREAT | os.O_APPEND | (os.O_RDWR if resume else os.O_WRONLY | os.O_TRUNC)
        try:
            self._fd = os.open(out, flags, 0o666)
            if resume:
                _drop_cut_line(self._fd)
        except OSError as err:
            raise FormatError(f"cannot write the report: {err.strerror or err}", path=self.path) from None

    def write(self, outcome: Outcome) -> None:
        if self._fd < 0:
            return
        data = (json.dumps(record(outcome), ensure_ascii=False) + "\n").encode("utf-8", "surrogateescape")
        try:
            view = memoryview(data)
            while view:                     # one call but for a very long line on a full disk
                view = view[os.write(self._fd, view):]
            self.lines += 1
        except OSError as err:
            self.error = f"{self.path}: cannot append to the report ({err.strerror or err}); it stops after " \
                         f"{self.lines} line(s)"
            self.close()

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> Report:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _drop_cut_line(fd: int) -> None:
    """Cut an incomplete last line (a write the machine did not finish) off
    an existing report, so that the next line starts on a line of its own."""
    size = os.fstat(fd).st_size
    if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
        return
    keep, step = 0, 1 << 16
    end = size
    while end > 0:
        start = max(0, end - step)
        chunk = os.pread(fd, end - start, start)
        k = chunk.rfind(b"\n")
        if k >= 0:
            keep = start + k + 1
            break
        end = start
    os.ftruncate(fd, keep)


def done_before(path) -> tuple[dict[str, dict], str]:
    """The last line of each input in an existing report (none when there is
    no such file), and a warning line about lines that are not report
    lines (empty when all are)."""
    found: dict[str, dict] = {}
    bad, first = 0, 0
    try:
        with open(path, "rb") as f:
            for n, raw in enumerate(f, 1):
                if not raw.endswith(b"\n"):         # cut short: the next write drops it
                    break
                try:
                    obj = json.loads(raw)
                except ValueError:
                    obj = None
                if not (isinstance(obj, dict) and isinstance(obj.get("input"), str)
                        and obj.get("status") in STATUSES and isinstance(obj.get("outputs"), list)):
                    bad += 1
                    first = first or n
                    continue
                found[obj["input"]] = obj
    except FileNotFoundError:
        return {}, ""
    except OSError as err:
        raise FormatError(f"cannot read the report: {err.strerror or err}", path=path) from None
    warning = f"{path}:{first}: {bad} line(s) that are not report lines, ignored" if bad else ""
    return found, warning


def skipped(inputs: list[str], output: str, done: dict[str, dict]) -> bool:
    """Whether ``--resume`` skips the job converting ``inputs`` to ``output``:
    its last report line says ok or warned (written), with the same animation
    files, ``output`` among the files written, and they all exist."""
    line = done.get(inputs[0])
    if line is None or line["status"] == "failed" or line.get("animations") != inputs[1:]:
        return False
    outputs = [str(p) for p in line["outputs"]]
    return output in outputs and all(os.path.isfile(p) for p in outputs)
