# SPDX-License-Identifier: GPL-3.0-or-later
"""Reading .X files: header, decompression, tokenizer choice, error wrapping."""
from __future__ import annotations

import os
import re

from ..errors import FormatError, Warnings
from ..paths import read_input
from . import limits, mszip
from .binary_tokens import BinaryTokens
from .model import XFile
from .parser import Parser
from .text_tokens import TextTokens
from .tokens import EOF

_HEADER = re.compile(rb"^xof (\d{4})(txt |bin |tzip|bzip)(0032|0064)")


def parse_header(data: bytes, path=None) -> tuple[str, str, int]:
    m = _HEADER.match(data[:16])
    if m is None:
        if not data.startswith(b"xof "):
            raise FormatError("not a DirectX .X file (no 'xof ' signature)", path=path, offset=0)
        raise FormatError(f"unsupported .X header {data[:16]!r}", path=path, offset=0)
    version = m.group(1).decode("ascii")
    storage = m.group(2).decode("ascii").strip()
    return version, storage, int(m.group(3))


def read_xfile_bytes(data: bytes, path: str | os.PathLike | None = None) -> XFile:
    """Parse the bytes of a .X file. Any problem with the file raises
    FormatError with a position; any other exception is a bug of the reader."""
    try:
        return _read(bytes(data), path)
    except RecursionError:
        raise FormatError("objects nested too deeply", path=path) from None
    except MemoryError:
        raise FormatError("out of memory while reading (absurd sizes?)", path=path) from None


def read_xfile(path: str | os.PathLike) -> XFile:
    return read_xfile_bytes(read_input(path), path)


def _read(data: bytes, path) -> XFile:
    version, storage, float_size = parse_header(data, path)
    if storage == "txt":
        tokens = TextTokens(data, 16, path)
    elif storage == "bin":
        tokens = BinaryTokens(data, 16, float_size, path, base_offset=16)
    else:
        body = mszip.decompress(data, path)
        if storage == "tzip":
            tokens = TextTokens(body, 0, path, " (line of the decompressed text)")
        else:
            tokens = BinaryTokens(body, 0, float_size, path, base_offset=0,
                                  where_note=" (offset in the decompressed data)")

    def parser() -> Parser:
        warnings = Warnings(limit=limits.MAX_WARNINGS)
        if version not in ("0302", "0303"):
            warnings.append(f"unusual .X version {version}; read as 0303")
        xfile = XFile(version=version, storage=storage, float_size=float_size, warnings=warnings)
        return Parser(tokens, xfile, storage in ("txt", "tzip"))

    start = tokens.here()
    try:
        first = parser()
        try:
            return first.parse()
        except FormatError as err:
            if tokens.kind() != EOF or not first.misplaced:
                raise
            # The file ends inside an object, and an object lay where it cannot: a '}'
            # may be missing before it (all the data present). Read again, an object
            # found where it cannot lie closing the one it is in (Parser.recover); if
            # that fails too, the first error stands.
            tokens.reset(start)
            second = parser()
            second.recover = True
            try:
                return second.parse()
            except FormatError:
                raise err from None
    except RecursionError:
        raise tokens.error("objects nested too deeply") from None
    except MemoryError:
        raise tokens.error("out of memory while reading (absurd sizes?)") from None
