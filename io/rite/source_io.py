# SPDX-License-Identifier: GPL-3.0-or-later
"""File access shared by the readers and writers: load bytes, atomic replace."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

from ..errors import FormatError


def stem_of(path) -> str:
    return Path(path).stem if path is not None else ""


def load_bytes(path) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError as exc:
        raise FormatError(f"cannot read file: {exc.strerror or exc}", path=path) from None


def text_bytes(text, path=None) -> bytes:
    if isinstance(text, (bytes, bytearray, memoryview)):
        return bytes(text)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise FormatError(f"text cannot be encoded as UTF-8 ({exc.reason})", path=path) from None


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_atomic(path, chunks) -> None:
    """Write the byte strings ``chunks`` to ``path`` via a temporary file + ``os.replace``.

    The target is either left untouched or replaced by the complete file.
    """
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
