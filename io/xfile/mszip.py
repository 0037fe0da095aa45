# SPDX-License-Identifier: GPL-3.0-or-later
"""MSZIP as used by compressed .X files (``tzip`` / ``bzip``).

After the 16-byte header: DWORD total uncompressed size (header included),
then blocks: WORD uncompressed size, WORD compressed size (counting the
``CK`` signature), ``CK``, raw deflate data. Each block is a complete deflate
stream whose history continues from the previous block's output, so every
block is inflated with the preceding output as preset dictionary.

Decompression bombs: a block holds at most ``BLOCK_SIZE`` bytes, and the
block headers (checked before anything is inflated) may announce at most
``MAX_RATIO`` times the compressed file size (``MIN_ALLOWANCE`` for small
files) and never more than ``MAX_INFLATED`` bytes. Real files inflate 2-10x.
"""
from __future__ import annotations

import struct
import zlib

from ..errors import FormatError

HEADER_SIZE = 16
BLOCK_SIZE = 32768
_WINDOW = 32768
MAX_RATIO = 64
MIN_ALLOWANCE = 1 << 20
MAX_INFLATED = 512 << 20


def allowance(compressed_size: int) -> int:
    """The most a compressed file of this many bytes may inflate to."""
    return min(MAX_INFLATED, max(MIN_ALLOWANCE, MAX_RATIO * compressed_size))


def decompress(data: bytes, path=None) -> bytes:
    """The uncompressed body (what follows the 16-byte header) of a tzip/bzip file."""
    p = HEADER_SIZE
    end = len(data)
    if end - p < 4:
        raise FormatError("compressed file: missing uncompressed-size field", path=path, offset=p)
    total = struct.unpack_from("<I", data, p)[0]
    p += 4
    # Walk the block headers first: the announced total must match them before
    # anything is inflated (so a lying header cannot make us inflate, or allocate,
    # more than the blocks themselves declare).
    limit = allowance(end)
    announced, q, n_blocks = 0, p, 0
    oversized = None
    while q + 4 <= end:
        usize, csize = struct.unpack_from("<HH", data, q)
        announced += usize
        if announced > limit:
            raise FormatError(f"MSZIP block {n_blocks}: the blocks announce more than {limit} "
                              f"bytes uncompressed, over the limit for a {end}-byte file "
                              f"(decompression bomb?)", path=path, offset=q)
        if usize > BLOCK_SIZE and oversized is None:
            oversized = (n_blocks, q, usize)
        q += 4 + max(csize, 2)
        n_blocks += 1
    if n_blocks and total != announced + HEADER_SIZE:
        raise FormatError(f"compressed file: header says {total} bytes uncompressed, the "
                          f"{n_blocks} block headers add up to {announced + HEADER_SIZE}",
                          path=path, offset=HEADER_SIZE)
    if oversized is not None:
        block, q, usize = oversized
        raise FormatError(f"MSZIP block {block}: announces {usize} bytes uncompressed, a block "
                          f"holds at most {BLOCK_SIZE}", path=path, offset=q)
    chunks: list[bytes] = []
    size = 0
    history = b""
    block = 0
    while p < end:
        if end - p < 6:
            raise FormatError(f"MSZIP block {block}: truncated block header", path=path, offset=p)
        usize, csize = struct.unpack_from("<HH", data, p)
        if data[p + 4:p + 6] != b"CK":
            raise FormatError(f"MSZIP block {block}: missing 'CK' signature", path=path, offset=p + 4)
        if csize < 2 or p + 4 + csize > end:
            raise FormatError(f"MSZIP block {block}: compressed size {csize} runs past the "
                              f"end of the file", path=path, offset=p + 2)
        payload = data[p + 6:p + 4 + csize]
        try:
            inflater = zlib.decompressobj(-15, zdict=history) if history else zlib.decompressobj(-15)
            # Bounded output: a block never legitimately exceeds usize bytes.
            chunk = inflater.decompress(payload, usize + 1)
        except zlib.error as exc:
            raise FormatError(f"MSZIP block {block}: corrupt deflate data ({exc})",
                              path=path, offset=p + 6) from None
        if len(chunk) != usize:
            raise FormatError(f"MSZIP block {block}: inflates to {len(chunk)} bytes, the "
                              f"block header says {usize}", path=path, offset=p)
        if size + usize > announced:  # cannot happen after the walk above; kept as a guard
            raise FormatError(f"MSZIP block {block}: output runs past the announced "
                              f"{announced} bytes", path=path, offset=p)
        chunks.append(chunk)
        size += usize
        # The next block's history: the last 32 KB of output (usually this block).
        history = chunk if usize >= _WINDOW else (history + chunk)[-_WINDOW:]
        p += 4 + csize
        block += 1
    if block == 0:
        raise FormatError("compressed file has no MSZIP blocks", path=path, offset=p)
    if total != size + HEADER_SIZE:
        raise FormatError(f"compressed file: header says {total} bytes uncompressed, the blocks "
                          f"hold {size + HEADER_SIZE}", path=path, offset=HEADER_SIZE)
    return b"".join(chunks)


def compress(header: bytes, body: bytes, level: int = 6) -> bytes:
    """A complete tzip/bzip file: ``header`` (16 bytes) + MSZIP blocks of ``body``."""
    if len(header) != HEADER_SIZE:
        raise ValueError("header must be 16 bytes")
    parts = [header, struct.pack("<I", len(body) + HEADER_SIZE)]
    previous = b""
    for start in range(0, len(body), BLOCK_SIZE) or [0]:
        chunk = body[start:start + BLOCK_SIZE]
        if previous:
            deflater = zlib.compressobj(level, zlib.DEFLATED, -15, zdict=previous)
        else:
            deflater = zlib.compressobj(level, zlib.DEFLATED, -15)
        packed = deflater.compress(chunk) + deflater.flush(zlib.Z_FINISH)
        parts.append(struct.pack("<HH", len(chunk), len(packed) + 2))
        parts.append(b"CK")
        parts.append(packed)
        previous = chunk
    return b"".join(parts)
