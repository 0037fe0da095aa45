# SPDX-License-Identifier: GPL-3.0-or-later
"""The one error type every reader and writer raises."""
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
