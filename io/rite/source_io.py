# SPDX-License-Identifier: GPL-3.0-or-later
"""File access shared by the RiTE readers: load bytes (writers use io.atomic)."""
from __future__ import annotations

from pathlib import Path

from ..errors import FormatError
from ..paths import read_input


def stem_of(path) -> str:
    return Path(path).stem if path is not None else ""


def load_bytes(path) -> bytes:
    return read_input(path)


def text_bytes(text, path=None) -> bytes:
    if isinstance(text, (bytes, bytearray, memoryview)):
        return bytes(text)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise FormatError(f"text cannot be encoded as UTF-8 ({exc.reason})", path=path) from None
