# SPDX-License-Identifier: GPL-3.0-or-later
"""The one error type every reader and writer raises, and the one warnings channel they fill."""
from __future__ import annotations

from pathlib import Path


class FormatError(ValueError):
    """A file could not be read (or written): names the file and where.

    ``line`` is 1-based for text files, ``offset`` a byte offset for binary
    ones; either may be None. ``str(err)`` is a complete, user-facing message,
    e.g. ``walk.raa:812: weights: expected 4 records, found 3``.
    """

    def __init__(self, message: str, *, path: str | Path | None = None,
                 line: int | None = None, offset: int | None = None):
        self.message = message
        self.path = str(path) if path is not None else None
        self.line = line
        self.offset = offset
        super().__init__(self._format())

    def _format(self) -> str:
        where = Path(self.path).name if self.path else "<data>"
        if self.line is not None:
            where += f":{self.line}"
        if self.offset is not None:
            where += f" (byte offset {self.offset})"
        return f"{where}: {self.message}"


class Deviation(str):
    """A warning that what was written deviates from what was asked: the
    message, with the figure it reports as attributes. ``figure`` is the
    largest distance between a vertex of the written files (read back and
    evaluated) and the same vertex of the scene, as a fraction of the model
    size, over every frame of every animation; ``where`` says where it
    happens (e.g. "Walk, frame 12"). ``convert`` exits non-zero when it is
    over its limit."""

    figure: float
    where: str

    def __new__(cls, message: str, figure: float, where: str = "") -> Deviation:
        self = super().__new__(cls, message)
        self.figure = float(figure)
        self.where = where
        return self

    def __getnewargs__(self):      # pickles (a worker process sends it back)
        return str(self), self.figure, self.where


def largest_deviation(warnings) -> Deviation | None:
    """The :class:`Deviation` with the largest figure among ``warnings``."""
    found = [w for w in warnings if isinstance(w, Deviation)]
    return max(found, key=lambda d: d.figure) if found else None


class Warnings(list):
    """The one channel for non-fatal findings of a read or write: a list of
    one-line messages, passed as ``warnings=`` to every reader and writer.

    It keeps the first ``limit`` messages; past them it only counts, and its
    last line says how many were left out, so a hostile file that would
    produce millions of warnings costs one counter, not millions of strings.
    """

    def __init__(self, items=(), *, limit: int = 1000):
        super().__init__()
        self.limit = limit
        self.dropped = 0
        self.extend(items)

    def append(self, message: str) -> None:
        if len(self) - (self.dropped > 0) < self.limit:
            super().append(message)
            return
        self.dropped += 1
        note = f"... and {self.dropped} more warning(s)"
        if self.dropped == 1:
            super().append(note)
        else:
            self[-1] = note

    def extend(self, messages) -> None:
        for m in messages:
            self.append(m)

    def __iadd__(self, messages):
        self.extend(messages)
        return self
