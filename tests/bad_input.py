# SPDX-License-Identifier: GPL-3.0-or-later
"""What the bad-input tests (tests/test_bad_input_*.py) and the fuzz tools
(tools/fuzz_campaign.py) share: .X files built to hurt the reader (the
structural attacks: reference diamonds and chains, huge counts, MSZIP
bombs, a hostile number in every numeric field, megabyte strings), the
mutations of a real file (flipped bytes, truncations, hostile numbers,
dropped or doubled lines), and what a refusal must look like on the command
line (one ``error:`` line, exit 2, no traceback). FIFOs and device nodes
are made inside a folder the test gives, never the machine's own /dev."""
from __future__ import annotations

import os
import re
import stat
import struct
import zlib
from pathlib import Path

import numpy as np
import pytest

from legacy_skin_io.io.xfile import limits, mszip

TXT = b"xof 0303txt 0032\n"
BIN = b"xof 0303bin 0032"
TRI = b"3;\n0;0;0;,1;0;0;,0;1;0;;\n1;\n3;0,1,2;;\n"  # the body of a one-triangle mesh
IDENTITY = b"1,0,0,0,0,1,0,0,0,0,1,0,0,0,0,1;;"


# -- .X files built to hurt the reader -------------------------------------------
def binary_xfile(*tokens) -> bytes:
    """"{" "}", bytes (a NAME), ("s", bytes) STRING, ("i", [...]) INTEGER_LIST,
    ("f", [...]) FLOAT_LIST (32-bit)."""
    out = [BIN]
    for tok in tokens:
        if tok == "{":
            out.append(struct.pack("<H", 10))
        elif tok == "}":
            out.append(struct.pack("<H", 11))
        elif isinstance(tok, bytes):
            out.append(struct.pack("<HI", 1, len(tok)) + tok)
        elif tok[0] == "s":
            out.append(struct.pack("<HI", 2, len(tok[1])) + tok[1] + struct.pack("<H", 20))
        elif tok[0] == "i":
            out.append(struct.pack(f"<HI{len(tok[1])}I", 6, len(tok[1]), *tok[1]))
        else:
            out.append(struct.pack(f"<HI{len(tok[1])}f", 7, len(tok[1]), *tok[1]))
    return b"".join(out)


def diamond(levels: int) -> bytes:
    lines = [b"Frame F0 {}"] + [b"Frame F%d { {F%d} {F%d} }" % (i, i - 1, i - 1)
                                for i in range(1, levels + 1)]
    return TXT + b"\n".join(lines)


def chain(n: int) -> bytes:
    """n frames, each one the only child of the next (through a reference)."""
    lines = [b"Frame F0 {}"] + [b"Frame F%d { { F%d } }" % (i, i - 1) for i in range(1, n)]
    return TXT + b"\n".join(lines)


def mszip_bomb(blocks: int, fmt: bytes = b"tzip") -> tuple[bytes, int, int]:
    """A valid MSZIP file of ``blocks`` 32 KiB blocks of spaces (~50 bytes each),
    with the sizes of its first and of every later block."""
    chunk = b" " * mszip.BLOCK_SIZE
    first = zlib.compressobj(9, zlib.DEFLATED, -15)
    first = first.compress(chunk) + first.flush()
    rest = zlib.compressobj(9, zlib.DEFLATED, -15, zdict=chunk)
    rest = rest.compress(chunk) + rest.flush()
    head = struct.pack("<HH", mszip.BLOCK_SIZE, len(first) + 2) + b"CK" + first
    block = struct.pack("<HH", mszip.BLOCK_SIZE, len(rest) + 2) + b"CK" + rest
    total = struct.pack("<I", blocks * mszip.BLOCK_SIZE + 16)
    return b"xof 0303" + fmt + b"0032" + total + head + block * (blocks - 1), len(head), len(block)


def text_variants(name: str, data: bytes):
    """Yield a text file and its MSZIP-compressed copy."""
    yield name, data
    yield name + "/tzip", mszip.compress(b"xof 0303tzip0032", data[len(TXT):])


NUMERIC_FIELDS = {
    "matrix": b"Frame f { FrameTransformMatrix { 1,0,0,0,0,1,0,0,0,0,1,0,0,0,%s,1;; } }",
    "position": b"Mesh m { 3; 0;0;0;,1;0;0;,0;%s;0;; 1; 3;0,1,2;; }",
    "normal": b"Mesh m { " + TRI + b" MeshNormals { 1; 0;0;%s;; 1; 3;0,0,0;; } }",
    "uv": b"Mesh m { " + TRI + b" MeshTextureCoords { 3; 0;0;,1;0;,%s;1;; } }",
    "color": b"Mesh m { " + TRI + b" MeshVertexColors { 1; 0;1;%s;1;1;; } }",
    "color index": b"Mesh m { " + TRI + b" MeshVertexColors { 1; %s;1;1;1;1;; } }",
    "material": b"Material m { 1;1;1;%s;; 0; 0;0;0;; 0;0;0;; }",
    "weight": b'Mesh m { ' + TRI + b' SkinWeights { "b"; 1; 0; %s; ' + IDENTITY + b' } }',
    "matrixOffset": b'Mesh m { ' + TRI + b' SkinWeights { "b"; 1; 0; 1; 1,0,0,0,0,1,0,0,0,0,1,0,0,0,%s,1;; } }',
    "key time": b"AnimationSet { Animation { { f } AnimationKey { 2; 2; 0;3;0,0,0;;, %s;3;0,0,0;;; } } }",
    "key value": b"AnimationSet { Animation { { f } AnimationKey { 0; 1; 0;4;1,%s,0,0;;; } } }",
    "key count": b"AnimationSet { Animation { AnimationKey { 0; %s; 0;4;1,0,0,0;;; } } }",
    "value count": b"AnimationSet { Animation { AnimationKey { 0; 1; 0;%s;1,0,0,0;;; } } }",
    "vertex count": b"Mesh m { %s; 0;0;0;; 0; }",
    "face count": b"Mesh m { 3; 0;0;0;,1;0;0;,0;1;0;; %s; 3;0,1,2;; }",
    "face size": b"Mesh m { 3; 0;0;0;,1;0;0;,0;1;0;; 1; %s;0,1,2;; }",
    "face index": b"Mesh m { 3; 0;0;0;,1;0;0;,0;1;0;; 1; 3;0,1,%s;; }",
    "material count": b"Mesh m { " + TRI + b" MeshMaterialList { %s; 1; 0;; { x } } }",
    "material index": b"Mesh m { " + TRI + b" MeshMaterialList { 1; 1; %s;; { x } } }",
    "weight count": b'Mesh m { ' + TRI + b' SkinWeights { "b"; %s; 0; 1; ' + IDENTITY + b' } }',
    "weight index": b'Mesh m { ' + TRI + b' SkinWeights { "b"; 1; %s; 1; ' + IDENTITY + b' } }',
    "decl elements": b"Mesh m { " + TRI + b" DeclData { %s; 2;0;3;0;; 0; } }",
    "decl data": b"Mesh m { " + TRI + b" DeclData { 1; 2;0;3;0;; 9; 0,0,0,0,0,0,0,0,%s;; } }",
    "fvf data": b"Mesh m { " + TRI + b" FVFData { 256; 6; 0,0,0,0,0,%s;; } }",
    "fvf flags": b"Mesh m { " + TRI + b" FVFData { %s; 0; } }",
    "ticks": b"AnimTicksPerSecond { %s; }",
    "skin header": b"Mesh m { " + TRI + b" XSkinMeshHeader { %s; 1; 1; } }",
}
HOSTILE_NUMBERS = [b"nan", b"inf", b"-inf", b"1.#QNAN0", b"-1.#IND00", b"1e39", b"-1e39", b"1e400",
                   b"-1", b"4294967295", b"4294967296", b"18446744073709551616", b"2147483648",
                   b"0.5", b"1" * 5000, b"-0", b"1e-400", b"0x10", b"++1"]


def structural_attacks():
    """(name, bytes) of hostile .X files built on purpose."""
    yield "diamond", diamond(40)
    yield "diamond/binary", binary_xfile(b"Frame", b"A", "{", "}", *(
        tok for i in range(1, 30) for tok in (b"Frame", b"A%d" % i, "{", "{", b"A%d" % (i - 1) if i > 1
                                               else b"A", "}", "{", b"A%d" % (i - 1) if i > 1 else b"A",
                                               "}", "}")))
    yield from text_variants("chain 20000", chain(20_000))
    yield "chain reversed", TXT + b"\n".join(b"Frame F%d { { F%d } }" % (i, i + 1) for i in range(5000))
    yield "nesting 100000", TXT + b"Frame {\n" * 100_000 + b"}\n" * 100_000
    yield "cycle", TXT + b"Frame A { Frame B { Frame C { { A } } } }"
    yield "self", TXT + b"Frame A { { A } }"
    yield "mesh instances", (TXT + b"Mesh M { " + TRI + b"} Frame F { " + b"{ M } " * 200_000 + b"}")
    yield "refs to nothing", TXT + b"Frame F { " + b"{ nothing } " * 100_000 + b"}"
    yield "top-level refs", TXT + b"{ a } " * 100_000
    yield "unknown references", TXT + b"Mesh m { " + TRI + b"{ x } " * 100_000 + b"}"
    yield "material refs", TXT + b"Mesh m { " + TRI + b"MeshMaterialList { 1; 1; 0;; " + b"{ x } " * 50_000 + b"} }"
    for field, template in NUMERIC_FIELDS.items():
        for number in HOSTILE_NUMBERS:
            yield from text_variants(f"{field}={number[:12]!r}", TXT + template % number)
    for what in (b"Frame", b"Mesh", b"Material", b"AnimationSet", b"Animation", b"Unknown"):
        yield f"long {what!r}", TXT + what + b" " + b"n" * 2_000_000 + b" { }"
    material = TXT + b'Material m { 1;1;1;1;; 0; 0;0;0;; 0;0;0;; TextureFilename { "'
    yield "long string", material + b"s" * 2_000_000 + b'"; } }'
    yield "unterminated string", material + b"s" * 2_000_000
    yield "long guid", TXT + b"Frame f { <" + b"0" * 2_000_000 + b"> }"
    yield "long number", TXT + b"Mesh m { " + b"9" * 2_000_000 + b"; }"
    yield "long binary name", binary_xfile(b"Frame", b"n" * 2_000_000, "{", "}")
    yield "binary string length", BIN + struct.pack("<HI", 2, 0xFFFFFFFF) + b"abc"
    yield "binary list count", BIN + struct.pack("<HI", 7, 0xFFFFFFFF) + b"\0" * 8
    yield "binary nan matrix", binary_xfile(b"Frame", "{", b"FrameTransformMatrix", "{",
                                    ("f", [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, float("nan"), 1]), "}", "}")
    yield "binary key time", binary_xfile(b"AnimationSet", "{", b"Animation", "{", b"AnimationKey", "{",
                                  ("i", [2, 1, 0xFFFFFFFF, 3]), ("f", [0, 0, 0]), "}", "}", "}")
    yield "binary material index", binary_xfile(b"Mesh", "{", ("i", [3]), ("f", [0] * 9), ("i", [1, 3, 0, 1, 2]),
                                        b"MeshMaterialList", "{", ("i", [1, 1, 0xFFFFFFFF]), "}", "}")
    # 8 lists padding 32767 default materials each: past MAX_OBJECTS.
    many_mats = b"Mesh m { " + TRI + b"MeshMaterialList { 32767; 1; 32766;; } } "
    yield "material padding", TXT + many_mats * 8 + b"Filler { " + b"0 " * 100_000 + b"} "
    yield "many objects", TXT + b"AnimationSet { " + b"Animation { } " * (limits.MAX_OBJECTS + 10) + b"}"
    yield "ngons", TXT + b"Mesh {4;0;0;0;,1;0;0;,0;1;0;,1;1;0;;2;4;0,1,3,2;,3;0,1,2;;}" * 5000
    bomb, _head, _block = mszip_bomb(131071)
    yield "mszip bomb", bomb
    yield "mszip bomb/bzip", mszip_bomb(40000, b"bzip")[0]
    yield "mszip oversized block", (b"xof 0303tzip0032" + struct.pack("<I", 65535 + 16)
                                    + struct.pack("<HH", 65535, 10) + b"CK" + b"\x03\x00" * 4)


# -- real files mutated ------------------------------------------------------------
def mutants(seed: int, data: bytes, count: int):
    """``count`` mutations of ``data`` (a real file): bytes flipped, the file
    truncated, a hostile number where a number was, a line doubled or
    dropped; the same ones for the same seed."""
    rng = np.random.default_rng(seed)
    numbers = [b"nan", b"inf", b"-1e39", b"4294967295", b"-1", b"1e308", b"0", b"99999999999999999999"]
    for _ in range(count):
        b = bytearray(data)
        kind = rng.integers(0, 4)
        if kind == 0:                                   # flip bytes
            for i in rng.integers(16, len(b), size=int(rng.integers(1, 8))):
                b[i] = int(rng.integers(0, 256))
        elif kind == 1:                                 # truncate
            del b[int(rng.integers(16, len(b))):]
        elif kind == 2:                                 # a hostile number where a number was
            lines = bytes(b).split(b"\n")
            i = int(rng.integers(1, len(lines)))
            toks = lines[i].replace(b",", b" ").replace(b";", b" ").split()
            nums = [t for t in toks if t[:1].isdigit() or t[:1] == b"-"]
            if nums:
                lines[i] = lines[i].replace(nums[int(rng.integers(0, len(nums)))],
                                            numbers[int(rng.integers(0, len(numbers)))], 1)
            b = bytearray(b"\n".join(lines))
        else:                                           # duplicate or drop a line
            lines = bytes(b).split(b"\n")
            i = int(rng.integers(1, len(lines)))
            if rng.random() < 0.5:
                lines.insert(i, lines[i])
            else:
                del lines[i]
            b = bytearray(b"\n".join(lines))
        yield bytes(b)


# -- paths that are not regular files -----------------------------------------------
def make_fifo(folder: Path, name: str) -> Path:
    """A FIFO (a reader would wait for a writer) named ``name`` inside ``folder``."""
    p = Path(folder) / name
    os.mkfifo(p)
    return p


def make_char_device(folder: Path, name: str) -> Path:
    """A character device node (the null device's numbers) inside ``folder``, or skip."""
    p = Path(folder) / name
    try:
        os.mknod(p, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except OSError as err:
        pytest.skip(f"cannot make a device node here: {err}")
    return p


# -- a refusal on the command line ----------------------------------------------------
def cli_error(r, *words: str, pattern: str | None = None) -> str:
    """The completed command ``r`` (conftest.run_cli) was refused as bad
    input: exit 2, no traceback, exactly one error line (``error: ...``, or
    Blender's command line's ``...: error: ...``) holding every one of
    ``words`` and matching the regular expression ``pattern``, and no
    "internal error". Returns that line."""
    assert r.returncode == 2, (r.returncode, r.stdout[-1000:], r.stderr[-2000:])
    assert "Traceback" not in r.stderr and "Traceback" not in r.stdout, r.stderr[-2000:]
    errors = [ln for ln in r.stderr.splitlines() if ln.startswith("error: ") or ": error: " in ln]
    assert len(errors) == 1, r.stderr[-2000:]
    assert all(w in errors[0] for w in words), (words, errors[0])
    assert pattern is None or re.search(pattern, errors[0]), (pattern, errors[0])
    assert "internal error" not in errors[0], errors[0]
    return errors[0]
