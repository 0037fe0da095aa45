# SPDX-License-Identifier: GPL-3.0-or-later
"""What a path must be before it is read or written: every entry point
(the operators, drag-and-drop, the command line, ``convert``, ``verify``)
goes through these checks, each with one call.

- :func:`check_input` / :func:`read_input`: an input is a regular file (a
  symbolic link to one is followed) of at most :data:`MAX_INPUT_BYTES`. A
  FIFO, a device, a socket or a folder is refused before anything is read
  from it (opening a FIFO for reading would wait for a writer; ``/dev/zero``
  would be read until memory runs out).
- :func:`check_target`: an export target is a new path or an existing
  regular file in an existing folder, with a name the file system takes.
  A symbolic link to a regular file is written through (the file it points
  to is replaced, the link stays), as most tools do; anything else (a
  folder, a FIFO, a device, a socket, a link to one of those) is refused,
  never replaced.

Each raises :class:`.errors.FormatError` with one line naming the file.
"""
from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from .errors import FormatError

#: The still-image file extensions a texture name may have (a name without one is no image file).
IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg", ".tga", ".bmp", ".dds", ".tif", ".tiff", ".exr", ".hdr",
                    ".gif", ".psd", ".webp")

#: Largest input file read (bytes). Larger files are refused before reading.
MAX_INPUT_BYTES = 1 << 30

_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def kind_of(mode: int) -> str:
    """What a non-regular file is, in words (for the error line)."""
    return next((text for test, text in _KINDS if test(mode)), "not a regular file")


def _size_text(n: int) -> str:
    return f"{n / 2 ** 20:.0f} MB" if n >= 2 ** 20 else f"{n} bytes"


def _input_error(path, st: os.stat_result, limit: int | None) -> FormatError | None:
    if not stat.S_ISREG(st.st_mode):
        return FormatError(f"cannot read {kind_of(st.st_mode)}: give a regular file", path=path)
    if limit is not None and st.st_size > limit:
        return FormatError(f"file too large ({_size_text(st.st_size)}; the limit is {_size_text(limit)})", path=path)
    return None


def check_input(path, max_bytes: int | None = -1) -> int:
    """The size of the regular file ``path``; FormatError if it is missing,
    not a regular file or larger than ``max_bytes`` (default
    :data:`MAX_INPUT_BYTES`; None: no limit, for files Blender reads). Never
    opens the file."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise FormatError("no such file", path=path) from None
    except OSError as exc:
        raise FormatError(f"cannot read file: {exc.strerror or exc}", path=path) from None
    except ValueError as exc:      # an embedded NUL
        raise FormatError(f"cannot read file: {exc}", path=path) from None
    err = _input_error(path, st, MAX_INPUT_BYTES if max_bytes == -1 else max_bytes)
    if err is not None:
        raise err
    return st.st_size


def is_regular(path) -> bool:
    """True when ``path`` is (a link to) a regular file; never opens it."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def read_input(path) -> bytes:
    """The bytes of the regular file ``path`` (see :func:`check_input`). The
    file is opened without blocking and checked on the open descriptor, so a
    path swapped for a FIFO after the check cannot make the read wait, and at
    most the limit (plus one byte, to see a file that grew) is read."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise FormatError(f"cannot read file: {exc.strerror or exc}", path=path) from None
    except ValueError as exc:
        raise FormatError(f"cannot read file: {exc}", path=path) from None
    try:
        st = os.fstat(fd)
        err = _input_error(path, st, MAX_INPUT_BYTES)
        if err is not None:
            raise err
        with os.fdopen(fd, "rb", closefd=True) as fh:
            fd = -1
            parts = [fh.read(st.st_size + 1)]
            got = len(parts[0])
            while got > st.st_size and got <= MAX_INPUT_BYTES:     # it grew while being read
                more = fh.read(min(64 << 20, MAX_INPUT_BYTES + 1 - got))
                if not more:
                    break
                parts.append(more)
                got += len(more)
        data = parts[0] if len(parts) == 1 else b"".join(parts)
    except FormatError:
        raise
    except OSError as exc:
        raise FormatError(f"cannot read file: {exc.strerror or exc}", path=path) from None
    finally:
        if fd >= 0:
            os.close(fd)
    if len(data) > MAX_INPUT_BYTES:
        raise FormatError(f"file too large (over the limit of {_size_text(MAX_INPUT_BYTES)})", path=path)
    return data


def _name_max(folder: Path) -> int:
    try:
        return int(os.pathconf(folder, "PC_NAME_MAX"))
    except (OSError, ValueError, AttributeError):
        return 255


def check_target(path) -> Path:
    """The path to write for the export target ``path``: ``path`` itself, or
    for a symbolic link to a regular file (or a dangling one) the file it
    points to. FormatError, naming the file, for anything that must not be
    replaced (a folder, a FIFO, a device, a socket, a link to one), a folder
    that does not exist and a name too long for the file system."""
    path = Path(path)
    name = path.name
    if not name or name in (".", ".."):
        raise FormatError("not a file name: give a file to write", path=path)
    try:
        target = Path(os.path.realpath(path)) if path.is_symlink() else path
        folder = target.parent if str(target.parent) else Path(".")
        limit = _name_max(folder) if folder.is_dir() else 255
        if len(os.fsencode(target.name)) > limit:
            raise FormatError(f"file name too long ({len(os.fsencode(target.name))} bytes; the file system takes "
                              f"{limit}): choose a shorter name", path=path)
        if not folder.is_dir():
            missing = not os.path.lexists(folder)
            what = "does not exist" if missing else "is not a folder"
            raise FormatError(f"cannot write file: {os.strerror(errno.ENOENT if missing else errno.ENOTDIR)} "
                              f"(the folder {folder} {what})", path=path)
        try:
            st = os.lstat(target)
        except FileNotFoundError:
            return target
        if stat.S_ISLNK(st.st_mode):        # a link loop, or a chain realpath could not follow
            raise FormatError("cannot write file: a symbolic link that leads nowhere", path=path)
        if not stat.S_ISREG(st.st_mode):
            link = " (the symbolic link's target)" if target != path else ""
            raise FormatError(f"will not replace {kind_of(st.st_mode)}{link}: give a regular file or a new name",
                              path=path)
    except FormatError:
        raise
    except OSError as exc:
        raise FormatError(f"cannot write file: {exc.strerror or exc}", path=path) from None
    except ValueError as exc:
        raise FormatError(f"cannot write file: {exc}", path=path) from None
    return target
