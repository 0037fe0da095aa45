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


class AnimationsOnly(FormatError):
    """A model file that holds animations and nothing to play them on (no
    mesh, no skeleton): made to be played on another file's skeleton. The
    model imports (operators, ``import``, ``convert``) add which command takes
    such a file."""


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

    Three kinds of message, one line each:

    * :meth:`append`: a warning, something the user should know or act on
      (shown in Blender's status bar and Info log);
    * :meth:`note`: needs no action (a duplicate face skipped): kept in
      :attr:`notes`, printed on the console only;
    * :meth:`group`: one of several findings of one cause: a single line per
      cause, "cause (count): name, name, ...; fix", updated as items come.

    Beside them, :attr:`results` holds what a write made that the user needs
    to know (the frame ranges of a timeline): shown with the summary, not as
    a warning.

    It keeps the first ``limit`` messages; past them it only counts, and its
    last line says how many were left out, so a hostile file that would
    produce millions of warnings costs one counter, not millions of strings.
    """

    #: items a group line names (the count covers them all)
    SHOWN = 8

    def __init__(self, items=(), *, limit: int = 1000):
        super().__init__()
        self.limit = limit
        self.dropped = 0
        self.notes: list[str] = []
        self.results: list[str] = []
        self._groups: dict[tuple[str, str, bool], _Group] = {}
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

    def note(self, message: str) -> None:
        """A finding that needs no action (the console shows it)."""
        if len(self.notes) < self.limit:
            self.notes.append(message)

    def group(self, cause: str, item: str, *, fix: str = "", note: bool = False) -> None:
        """``item`` (a name) under ``cause``: one line per (cause, fix,
        note), naming the first :attr:`SHOWN` distinct items and counting
        them all; ``fix`` says what to do (e.g. the option to set)."""
        key = (cause, fix, note)
        g = self._groups.get(key)
        if g is None:
            lines = self.notes if note else self
            if len(lines) - (self.dropped > 0 and not note) >= self.limit:
                return
            g = self._groups[key] = _Group(len(lines))
            list.append(lines, "")
        if item in g.seen:
            return
        g.count += 1
        if len(g.seen) < self.limit:        # past it, items are counted, not kept
            g.seen[item] = None
        if len(g.shown) < self.SHOWN:
            g.shown.append(item)
        line = f"{cause} ({g.count}): {', '.join(g.shown)}{' ...' if g.count > len(g.shown) else ''}"
        (self.notes if note else self)[g.index] = line + (f"; {fix}" if fix else "")

    def extend(self, messages) -> None:
        if isinstance(messages, Warnings):      # another channel: its notes and groups too
            lines = {False: set(), True: set()}
            for (_, _, is_note), g in messages._groups.items():
                lines[is_note].add(g.index)
            for i, m in enumerate(list(messages)):
                if i not in lines[False]:
                    self.append(m)
            for i, m in enumerate(messages.notes):
                if i not in lines[True]:
                    self.note(m)
            self.results.extend(messages.results)
            for (cause, fix, is_note), g in messages._groups.items():
                for item in g.seen:
                    self.group(cause, item, fix=fix, note=is_note)
            return
        for m in messages:
            self.append(m)

    def __iadd__(self, messages):
        self.extend(messages)
        return self


class _Group:
    def __init__(self, index: int):
        self.index = index
        self.count = 0
        self.seen: dict[str, None] = {}
        self.shown: list[str] = []


def note(warnings, message: str) -> None:
    """A no-action finding into ``warnings`` (a :class:`Warnings`; a plain
    list, as tests pass, does not collect notes)."""
    if isinstance(warnings, Warnings):
        warnings.note(message)


def result(warnings, message: str) -> None:
    """What a write made that the user needs to know (``Warnings.results``;
    a plain list, as tests pass, does not collect it)."""
    if isinstance(warnings, Warnings):
        warnings.results.append(message)


def group(warnings, cause: str, item: str, *, fix: str = "", note: bool = False) -> None:
    """:meth:`Warnings.group` for any warnings list (a plain list gets one
    line per item)."""
    if isinstance(warnings, Warnings):
        warnings.group(cause, item, fix=fix, note=note)
    elif not note:
        warnings.append(f"{cause}: {item}" + (f"; {fix}" if fix else ""))
