# SPDX-License-Identifier: GPL-3.0-or-later
"""Atomic file replacement shared by every writer: one file, or several as
one (all or nothing).

``write_atomic(path, chunks)`` writes the byte strings ``chunks`` to a
temporary file in the target's folder, flushes and syncs it to disk and
renames it over the target (``os.replace``). A :class:`Batch` does the same
for several files as one export: every file is written to its temporary
file first, and only when all of them are complete are they renamed over
their targets; on any failure every temporary file is removed and every
target is left as it was (a target already replaced in the renaming is put
back from its previous content).

Each target is checked first (:func:`.paths.check_target`): only a new path
or a regular file is ever replaced, never a folder, FIFO, device or socket;
a symbolic link to a regular file is written through to that file. An
OSError (a full disk, a file-size limit, a read-only folder) becomes a
:class:`FormatError` naming the file; any other exception, including one
raised while producing ``chunks``, propagates, after the same clean-up.
"""
from __future__ import annotations

import os
import secrets
import shutil
import stat
import tempfile
from pathlib import Path

from .errors import FormatError
from .paths import check_target, kind_of

#: characters of the target's name kept in its temporary file's name (the
#: temporary name must stay within the file system's name limit)
_TMP_NAME = 40


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _error(exc: OSError, path) -> FormatError:
    return FormatError(f"cannot write file: {exc.strerror or exc}", path=path)


def _unlink(path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


class Batch:
    """Several files written as one: ``add`` each, then ``commit`` (or use
    it as a context manager, which commits on success and discards on an
    exception)::

        with Batch() as batch:
            batch.add("a.ram", chunks)
            batch.add("a_walk.raa", more)

    Nothing is visible at the targets until ``commit``, which renames every
    temporary file over its target or, failing, restores them all."""

    def __init__(self) -> None:
        self._files: list[tuple[Path, Path, Path]] = []     # (target as given, real target, temporary)

    def add(self, path, chunks) -> None:
        """Write ``chunks`` (an iterable of byte strings, or one) to a
        temporary file for ``path``. On failure every temporary file of the
        batch is removed and FormatError (or the chunks' own exception) is
        raised."""
        if isinstance(chunks, (bytes, bytearray, memoryview)):
            chunks = (chunks,)
        try:
            target = check_target(path)
            self._write(path, target, chunks)
        except BaseException:
            self.discard()
            raise

    def _write(self, path, target: Path, chunks) -> None:
        directory = target.parent if str(target.parent) else Path(".")
        try:
            fd, tmp = tempfile.mkstemp(prefix=f".{target.name[:_TMP_NAME]}.", suffix=".tmp", dir=directory)
        except OSError as exc:
            raise _error(exc, path) from None
        self._files.append((Path(path), target, Path(tmp)))
        try:
            with os.fdopen(fd, "wb") as fh:
                for chunk in chunks:
                    fh.write(chunk)
                fh.flush()
                os.fsync(fh.fileno())
            try:
                mode = os.stat(target).st_mode & 0o7777
            except OSError:
                mode = 0o666 & ~_umask()
            os.chmod(tmp, mode)
        except OSError as exc:
            raise _error(exc, path) from None

    def discard(self) -> None:
        """Remove every temporary file; the targets are untouched."""
        for _, _, tmp in self._files:
            _unlink(tmp)
        self._files = []

    def commit(self) -> list[str]:
        """Rename every temporary file over its target (each target checked
        again: still a new path or a regular file). If one fails, the
        targets replaced so far get their previous content back, and
        FormatError names the file. Returns the targets as given."""
        done: list[tuple[Path, Path | None]] = []       # (real target, its previous content kept aside)
        try:
            for given, target, tmp in self._files:
                keep = None
                try:
                    st = os.lstat(target)
                except FileNotFoundError:
                    st = None
                except OSError as exc:
                    raise _error(exc, given) from None
                if st is not None and not stat.S_ISREG(st.st_mode):
                    raise FormatError(f"will not replace {kind_of(st.st_mode)}: give a regular file or a new name",
                                      path=given)
                try:
                    if st is not None:
                        keep = _keep_aside(target)
                    os.replace(tmp, target)
                except OSError as exc:
                    if keep is not None:
                        _unlink(keep)
                    raise _error(exc, given) from None
                done.append((target, keep))
        except BaseException:
            for target, keep in reversed(done):
                try:
                    if keep is not None:
                        os.replace(keep, target)
                    else:
                        os.unlink(target)
                except OSError:
                    pass
            self.discard()
            raise
        for _, keep in done:
            if keep is not None:
                _unlink(keep)
        _sync_folders({target.parent for _, target, _ in self._files})
        written = [str(given) for given, _, _ in self._files]
        self._files = []
        return written

    def __enter__(self) -> Batch:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.discard()


def _keep_aside(target: Path) -> Path:
    """A second name for the current content of ``target`` (a hard link, or
    a copy where the file system has none), to put back if the batch fails."""
    for _ in range(100):
        keep = target.with_name(f".{target.name[:_TMP_NAME]}.{secrets.token_hex(4)}.old")
        try:
            os.link(target, keep)
            return keep
        except FileExistsError:
            continue
        except OSError:
            shutil.copy2(target, keep)
            return keep
    raise FileExistsError(f"no free name beside {target.name}")


def _sync_folders(folders) -> None:
    """Make the renames durable (where the system allows syncing a folder)."""
    for folder in folders:
        try:
            fd = os.open(folder, os.O_RDONLY)
        except OSError:
            continue
        try:
            os.fsync(fd)
        except OSError:
            pass
        finally:
            os.close(fd)


def write_atomic(path, chunks, batch: Batch | None = None) -> None:
    """Write the byte strings ``chunks`` (an iterable, or one bytes object) to
    ``path`` via a temporary file + ``os.replace``; with ``batch``, as one file
    of that batch (renamed when the batch commits). An existing file keeps its
    permission bits; a new one gets the usual ``0o666 & ~umask``."""
    if batch is not None:
        batch.add(path, chunks)
        return
    one = Batch()
    one.add(path, chunks)
    one.commit()
