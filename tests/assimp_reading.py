# SPDX-License-Identifier: GPL-3.0-or-later
"""assimp's reading of a file, evaluated here with the formulas of assimp's
scene structure (an evaluator that shares nothing with the exporter).

``assimp export FILE out.assbin`` dumps the aiScene assimp made of the file
at full float precision (assimp's .assbin layout: its AssbinFileWriter, format
version 1.0, the same in assimp 5.2 and 6.0; :func:`read` checks the version
and that every mesh and channel chunk is read to its end, so a changed layout
fails instead of being misread);
:func:`read` parses the nodes, meshes with their bones, and the animations
(channels of position, rotation (w, x, y, z) and scaling keys, in ticks).
:class:`AiScene` then poses the node tree at a tick of an animation
(position and scaling interpolated linearly, rotations by slerp, clamped at
the first and last key, as assimp's viewer and its users do) and skins the
meshes the way Direct3D does: a vertex is ``sum_b w_b global(bone_b) @
offset_b @ v``; a mesh without bones sits at its node's global matrix.

The ``assimp`` command comes with the pinned test environment (``cmeel-assimp``
in requirements.txt installs it into the venv's bin directory, which
conftest.py puts first on PATH): :func:`exe` and :func:`run` FAIL the calling
test when it is missing, never skip it.
"""
from __future__ import annotations

import shutil
import struct
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

NODE, MESH, BONE, ANIMATION, NODE_ANIM, SCENE = 0x123C, 0x1237, 0x123A, 0x123B, 0x1238, 0x1239
HEADER = 512
VERSION = (1, 0)        # ASSBIN_VERSION_MAJOR, _MINOR of assimp 5.x and 6.x (code/Common/assbin_chunks.h)


MISSING = ("assimp not found on PATH: it belongs to the pinned test environment (cmeel-assimp in requirements.txt "
           "installs bin/assimp into the venv); run the tests with `python3.11 tools/run.py test`, or "
           "`pip install -r requirements.txt` into the environment that runs pytest")


def exe() -> str:
    """The ``assimp`` command's path; a missing one fails the calling test (with :data:`MISSING`)."""
    found = shutil.which("assimp")
    if found is None:
        pytest.fail(MISSING, pytrace=False)
    return found


def run(*args, timeout: float = 300) -> subprocess.CompletedProcess:
    """``assimp ARGS``, its output captured as text."""
    return subprocess.run([exe(), *map(str, args)], capture_output=True, text=True, timeout=timeout)


class _Buf:
    def __init__(self, data: bytes, pos: int = 0):
        self.d = data
        self.p = pos

    def u32(self) -> int:
        v = struct.unpack_from("<I", self.d, self.p)[0]
        self.p += 4
        return v

    def u16(self) -> int:
        v = struct.unpack_from("<H", self.d, self.p)[0]
        self.p += 2
        return v

    def f64(self) -> float:
        v = struct.unpack_from("<d", self.d, self.p)[0]
        self.p += 8
        return v

    def floats(self, n: int) -> np.ndarray:
        v = np.frombuffer(self.d, dtype="<f4", count=n, offset=self.p).astype(np.float64)
        self.p += 4 * n
        return v

    def string(self) -> str:
        n = self.u32()
        s = self.d[self.p:self.p + n].decode("utf-8", "replace")
        self.p += n
        return s

    def chunk(self, magic: int) -> int:
        """The end of the chunk starting here (asserting its magic)."""
        got, size = self.u32(), self.u32()
        assert got == magic, (hex(got), hex(magic))
        return self.p + size


@dataclass
class Node:
    name: str
    matrix: np.ndarray                       # 4x4, column vectors
    parent: int
    meshes: list[int]


@dataclass
class Bone:
    name: str
    offset: np.ndarray
    vertex: np.ndarray
    weight: np.ndarray


@dataclass
class AiMesh:
    positions: np.ndarray
    bones: list[Bone]
    uvs: list[np.ndarray] = field(default_factory=list)      # texture coordinate channels, (V, 3) each


@dataclass
class Channel:
    pos: tuple[np.ndarray, np.ndarray]       # (times, values)
    rot: tuple[np.ndarray, np.ndarray]       # values x, y, z, w
    scl: tuple[np.ndarray, np.ndarray]


@dataclass
class Animation:
    name: str
    duration: float
    ticks_per_second: float
    channels: dict[str, Channel] = field(default_factory=dict)

    def key_times(self) -> np.ndarray:
        """Every key time of every channel (ticks), sorted."""
        ts = [t for c in self.channels.values() for t, _ in (c.pos, c.rot, c.scl)]
        return np.unique(np.concatenate(ts)) if ts else np.zeros(0)


def _node(b: _Buf, nodes: list[Node], parent: int) -> None:
    end = b.chunk(NODE)
    name = b.string()
    m = b.floats(16).reshape(4, 4)
    n_children, n_meshes, _ = b.u32(), b.u32(), b.u32()      # children, meshes, metadata entries
    meshes = [b.u32() for _ in range(n_meshes)]
    me = len(nodes)
    nodes.append(Node(name, m, parent, meshes))
    for _ in range(n_children):
        _node(b, nodes, me)
    b.p = end          # metadata skipped


def _mesh(b: _Buf) -> AiMesh:
    end = b.chunk(MESH)
    b.u32()                                   # primitive types
    nv, nf, nb = b.u32(), b.u32(), b.u32()
    b.u32()                                   # material
    comp = b.u32()
    pos = b.floats(3 * nv).reshape(-1, 3) if comp & 0x1 else np.zeros((0, 3))
    if comp & 0x2:
        b.floats(3 * nv)
    if comp & 0x4:
        b.floats(6 * nv)
    for n in range(8):
        if comp & (0x1000000 << n):          # colours
            b.floats(4 * nv)
    uvs = []
    for n in range(8):
        if comp & (0x100 << n):               # texture coordinates
            b.u32()
            uvs.append(b.floats(3 * nv).reshape(-1, 3))
    for _ in range(nf):
        k = b.u16()
        b.p += k * (2 if nv < (1 << 16) else 4)
    bones = []
    for _ in range(nb):
        bend = b.chunk(BONE)
        name = b.string()
        nw = b.u32()
        off = b.floats(16).reshape(4, 4)
        w = np.frombuffer(b.d, dtype=np.dtype([("v", "<u4"), ("w", "<f4")]), count=nw, offset=b.p)
        b.p = bend
        bones.append(Bone(name, off, w["v"].astype(np.int64), w["w"].astype(np.float64)))
    assert b.p == end, f"mesh chunk: {end - b.p} bytes left after its bones (a changed .assbin layout?)"
    return AiMesh(pos, bones, uvs)


def _keys(b: _Buf, n: int, width: int) -> tuple[np.ndarray, np.ndarray]:
    rec = np.frombuffer(b.d, dtype=np.dtype([("t", "<f8"), ("v", "<f4", (width,))]), count=n, offset=b.p)
    b.p += n * (8 + 4 * width)
    return rec["t"].astype(np.float64), rec["v"].astype(np.float64)


def _animation(b: _Buf) -> Animation:
    end = b.chunk(ANIMATION)
    a = Animation(b.string(), b.f64(), b.f64())
    for _ in range(b.u32()):
        cend = b.chunk(NODE_ANIM)
        name = b.string()
        npos, nrot, nscl = b.u32(), b.u32(), b.u32()
        b.u32(), b.u32()
        pos = _keys(b, npos, 3)
        t, wxyz = _keys(b, nrot, 4)
        scl = _keys(b, nscl, 3)
        a.channels[name] = Channel(pos, (t, np.concatenate((wxyz[:, 1:], wxyz[:, :1]), axis=1)), scl)
        assert b.p == cend, f"channel {name!r}: {cend - b.p} bytes left after its keys (a changed .assbin layout?)"
    assert b.p == end, f"animation {a.name!r}: {end - b.p} bytes left after its channels"
    return a


def _slerp(a: np.ndarray, b: np.ndarray, u: float) -> np.ndarray:
    d = float(np.dot(a, b))
    if d < 0:
        b, d = -b, -d
    if d > 0.9999:
        q = a + u * (b - a)
    else:
        th = np.arccos(min(d, 1.0))
        q = (np.sin((1 - u) * th) * a + np.sin(u * th) * b) / np.sin(th)
    return q / np.linalg.norm(q)


def _sample(keys: tuple[np.ndarray, np.ndarray], t: float, rotation: bool) -> np.ndarray | None:
    ts, vs = keys
    if not len(ts):
        return None
    if t <= ts[0]:
        return vs[0]
    if t >= ts[-1]:
        return vs[-1]
    k = int(np.searchsorted(ts, t, side="right")) - 1
    u = (t - ts[k]) / (ts[k + 1] - ts[k])
    return _slerp(vs[k], vs[k + 1], u) if rotation else vs[k] + u * (vs[k + 1] - vs[k])


def _trs(t, q, s) -> np.ndarray:
    x, y, z, w = q / np.linalg.norm(q)
    r = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                  [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                  [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])
    m = np.eye(4)
    m[:3, :3] = r * s
    m[:3, 3] = t
    return m


def _decompose(m: np.ndarray):
    t = m[:3, 3].copy()
    s = np.linalg.norm(m[:3, :3], axis=0)
    if np.linalg.det(m[:3, :3]) < 0:
        s[0] = -s[0]
    r = m[:3, :3] / s
    tr = np.trace(r)
    k = int(np.argmax([tr, r[0, 0], r[1, 1], r[2, 2]]))      # Shepperd: the largest pivot
    if k == 0:
        w = np.sqrt(1.0 + tr) / 2
        q = np.array([r[2, 1] - r[1, 2], r[0, 2] - r[2, 0], r[1, 0] - r[0, 1], 0.0]) / (4 * w)
        q[3] = w
    else:
        i = k - 1
        j, l = (i + 1) % 3, (i + 2) % 3
        v = np.sqrt(max(1.0 + r[i, i] - r[j, j] - r[l, l], 0.0)) / 2
        q = np.zeros(4)
        q[i] = v
        q[j] = (r[j, i] + r[i, j]) / (4 * v)
        q[l] = (r[l, i] + r[i, l]) / (4 * v)
        q[3] = (r[l, j] - r[j, l]) / (4 * v)
    return t, q, s


@dataclass
class AiScene:
    nodes: list[Node]
    meshes: list[AiMesh]
    animations: list[Animation]

    def animation(self, name: str) -> Animation:
        hit = [a for a in self.animations if a.name == name]
        assert len(hit) == 1, (name, [a.name for a in self.animations])
        return hit[0]

    def globals(self, anim: Animation | None = None, tick: float = 0.0) -> dict[str, np.ndarray]:
        """Global matrices of the named nodes at ``tick`` of ``anim`` (None: the node matrices)."""
        out: list[np.ndarray] = []
        for n in self.nodes:
            local = n.matrix
            ch = anim.channels.get(n.name) if anim is not None else None
            if ch is not None:
                t0, q0, s0 = _decompose(local)
                t = _sample(ch.pos, tick, False)
                q = _sample(ch.rot, tick, True)
                s = _sample(ch.scl, tick, False)
                local = _trs(t0 if t is None else t, q0 if q is None else q, s0 if s is None else s)
            out.append(local if n.parent < 0 else out[n.parent] @ local)
        return {n.name: g for n, g in zip(self.nodes, out)}

    def points(self, anim: Animation | None = None, tick: float = 0.0) -> list[np.ndarray]:
        """Each mesh's vertices at ``tick`` (world space)."""
        g = self.globals(anim, tick)
        holder = {mi: n.name for n in self.nodes for mi in n.meshes}
        out = []
        for mi, m in enumerate(self.meshes):
            p = np.c_[m.positions, np.ones(len(m.positions))]
            if not m.bones:
                out.append((p @ g[holder[mi]].T)[:, :3])
                continue
            acc = np.zeros((len(p), 3))
            for bone in m.bones:
                if bone.name not in g:        # a bone naming no node (anim_test.x): nothing moves it
                    continue
                M = g[bone.name] @ bone.offset
                acc[bone.vertex] += bone.weight[:, None] * (p[bone.vertex] @ M.T)[:, :3]
            out.append(acc)
        return out


def read(path) -> AiScene:
    data = Path(path).read_bytes()
    assert data[:19] == b"ASSIMP.binary-dump."
    version = struct.unpack_from("<II", data, 44)
    assert version == VERSION, f".assbin format version {version}, not {VERSION}: check assimp's AssbinFileWriter"
    shortened, compressed = struct.unpack_from("<HH", data, 60)
    assert not shortened and not compressed
    b = _Buf(data, HEADER)
    end = b.chunk(SCENE)
    b.u32()
    n_mesh, n_mat, n_anim = b.u32(), b.u32(), b.u32()
    b.u32(), b.u32(), b.u32()
    nodes: list[Node] = []
    _node(b, nodes, -1)
    meshes = [_mesh(b) for _ in range(n_mesh)]
    for _ in range(n_mat):
        b.p = b.chunk(0x123D)
    anims = [_animation(b) for _ in range(n_anim)]
    assert b.p <= end
    return AiScene(nodes, meshes, anims)


def assimp_scene(path, tmp) -> AiScene:
    """``assimp export path tmp/<name>.assbin``, parsed (AssertionError naming
    assimp's message when it refuses the file)."""
    out = Path(tmp) / (Path(path).name + ".assbin")
    r = run("export", path, out)
    assert r.returncode == 0 and out.exists(), f"assimp refuses {Path(path).name}: {(r.stdout + r.stderr)[-400:]}"
    return read(out)


def size(points: list[np.ndarray]) -> float:
    p = np.concatenate(points) if points else np.zeros((1, 3))
    return float(np.linalg.norm(p.max(0) - p.min(0)))
