# SPDX-License-Identifier: GPL-3.0-or-later
"""Atomic file replacement shared by every writer.

``write_atomic(path, chunks)`` writes the byte strings ``chunks`` to a
temporary file in the target's folder, flushes it to disk and renames it
over the target (``os.replace``). The target is either left untouched or
replaced by the complete file; the temporary file never survives a failure
(an OSError becomes a :class:`FormatError` naming the file; any other
exception, including one raised while producing ``chunks``, propagates).
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

from .errors import FormatError


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_atomic(path, chunks) -> None:
    """Write the byte strings ``chunks`` (an iterable, or one bytes object) to
    ``path`` via a temporary file + ``os.replace``. An existing file keeps its
    permission bits; a new one gets the usual ``0o666 & ~umask``."""
    if isinstance(chunks, (bytes, bytearray, memoryview)):
        chunks = (chunks,)
    path = Path(path)
    directory = path.parent if str(path.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    except OSError as exc:
        raise FormatError(f"cannot write file: {exc.strerror or exc}", path=path) from None
    try:
        with os.fdopen(fd, "wb") as fh:
            for chunk in chunks:
                fh.write(chunk)
            fh.flush()
            os.fsync(fh.fileno())
        try:
            mode = os.stat(path).st_mode & 0o7777
        except OSError:
            mode = 0o666 & ~_umask()
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise FormatError(f"cannot write file: {exc.strerror or exc}", path=path) from None
        raise
