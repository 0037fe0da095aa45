# SPDX-License-Identifier: GPL-3.0-or-later
"""What the Irrlicht engine (1.8.5, the system's ``libirrlicht-dev``) shows of
a .X file: the skinned vertex positions it plays at given frames.

``tests/irrlicht/irr_dump.cpp`` (its output format is documented there) is
compiled against the system Irrlicht with :func:`build` and run by
:func:`play`, which returns a :class:`Played`: Irrlicht's static and
animated vertex positions, in the file's own (left-handed) coordinates, its
mesh buffers, joints and log. :func:`irrlicht_vertex_order` rebuilds, from
the file read with the project's reader, which of the file's vertices each
of Irrlicht's buffer vertices is (CXMeshFileLoader::load: one buffer per
material, polygons fanned into triangles, unused vertices left out, a
vertex shared by faces of two materials copied into the second buffer
without its skin weights), and checks it against Irrlicht's static
positions.

What Irrlicht's .X loader does (read in its source, CXMeshFileLoader.cpp and
CSkinnedMesh.cpp): a key's time is its frame (AnimTicksPerSecond is
ignored); every AnimationSet's keys are appended to one timeline per joint,
keys not later than the previous one dropped; each joint's first key is
copied to frame 0 and its last to the last frame of the whole file, so the
timeline clamps; position and scale interpolate linearly, rotation by
slerp; a joint keyed on one channel only gets 0 / identity / no scale for
the others (not its FrameTransformMatrix); skinning is software skinning
with the weights normalised; MSZIP-compressed files are not read.

:func:`status` says whether the tool can be built here (the pytest fixture
``irrlicht`` in ``conftest.py`` skips, or fails under
``LSIO_REQUIRE_IRRLICHT=1``, when not). ``python tests/irrlicht_reading.py``
prints that status (``tools/run.py test`` does, when the checks cannot run).
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from unittest import mock

import numpy as np

SOURCE = Path(__file__).resolve().parent / "irrlicht" / "irr_dump.cpp"
INCLUDE = Path("/usr/include/irrlicht")
INSTALL = "apt install libirrlicht-dev g++"
MAGIC = b"IRRDUMP1"
TIMEOUT = 300.0

_tool: Path | None = None


class IrrlichtError(RuntimeError):
    """Irrlicht could not play a file (the message names the file and says why)."""


def status() -> tuple[bool, str]:
    """(True, "") when the tool can be built here, else (False, one line saying why)."""
    if not (INCLUDE / "irrlicht.h").is_file():
        return False, f"libirrlicht-dev not installed: {INSTALL}"
    compiler = shutil.which("g++")
    if compiler is None:
        return False, f"g++ not installed: {INSTALL}"
    try:
        lib = subprocess.run([compiler, "-print-file-name=libIrrlicht.so"], capture_output=True, text=True,
                             timeout=60).stdout.strip()
    except (OSError, subprocess.SubprocessError) as err:
        return False, f"g++ does not run ({err})"
    if not os.path.isabs(lib) or not os.path.exists(lib):
        return False, f"g++ finds no libIrrlicht.so: {INSTALL}"
    return True, ""


def build(tmpdir) -> Path:
    """Compile irr_dump.cpp into ``tmpdir``; the tool :func:`play` uses from now on."""
    global _tool
    ok, why = status()
    if not ok:
        raise IrrlichtError(f"cannot build irr_dump: {why}")
    out = Path(tmpdir) / "irr_dump"
    cmd = ["g++", "-O2", "-w", f"-I{INCLUDE}", str(SOURCE), "-o", str(out), "-lIrrlicht"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT)
    if done.returncode != 0:
        raise IrrlichtError(f"building irr_dump failed ({' '.join(cmd)}):\n{done.stderr.strip()}")
    _tool = out
    return out


@dataclass
class Played:
    """One run of irr_dump: Irrlicht's view of a file at ``frames``."""

    path: Path
    frames: np.ndarray            # (F,) as given
    static: np.ndarray            # (V, 3) buffer vertices as loaded (buffer space, before any animation)
    positions: np.ndarray         # (F, V, 3) world positions (the file's coordinates) at each frame
    joint_matrices: np.ndarray    # (F, J, 4, 4) GlobalAnimatedMatrix, row-vector layout (as the file's)
    buffer_vertices: np.ndarray   # (B,) vertices of each mesh buffer (buffers follow each other in V)
    attached_joint: np.ndarray    # (B,) the joint moving a rigid buffer, -1: none (skinned or top level)
    materials: int                # one material per buffer
    frame_count: int              # getFrameCount(): the timeline's last frame
    joints: list[str]
    joint_parents: np.ndarray     # (J,) -1: a root
    log: list[tuple[str, str]]    # (level, text) of every message Irrlicht logged
    header: dict

    @property
    def warnings(self) -> list[str]:
        """The log's warnings and errors."""
        return [text for level, text in self.log if level in ("warning", "error")]


def play(path, frames, tool: Path | None = None, timeout: float = TIMEOUT) -> Played:
    """Irrlicht's vertex positions of the .X file ``path`` at ``frames``
    (floats, played in that order). Raises :class:`IrrlichtError` naming the
    file when Irrlicht cannot load it (or the run fails or times out)."""
    tool = tool or _tool
    if tool is None:
        raise IrrlichtError("irr_dump is not built: call build(tmpdir) first (the `irrlicht` fixture does)")
    path = Path(path)
    frames = np.asarray(frames, dtype=np.float64).reshape(-1)
    if not len(frames):
        raise ValueError("play: give at least one frame")
    fd, name = tempfile.mkstemp(prefix="irr_dump_", suffix=".bin")
    os.close(fd)
    out = Path(name)
    cmd = [str(tool), str(path), str(out), *(repr(float(f)) for f in frames)]
    try:
        try:
            done = subprocess.run(cmd, capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise IrrlichtError(f"{path}: Irrlicht did not finish within {timeout:g} s") from None
        err = done.stderr.decode("utf-8", "replace").strip()
        if done.returncode < 0:
            try:
                name = signal.Signals(-done.returncode).name
            except ValueError:
                name = f"signal {-done.returncode}"
            raise IrrlichtError(f"{path}: irr_dump crashed ({name}) while Irrlicht loaded or played the file"
                                + (f": {err}" if err else ""))
        if done.returncode != 0:
            err = err or f"irr_dump exited with status {done.returncode}"
            raise IrrlichtError(err if str(path) in err else f"{path}: {err}")
        data = out.read_bytes()
    finally:
        out.unlink(missing_ok=True)
    return _parse(path, data)


def _parse(path: Path, data: bytes) -> Played:
    if data[:8] != MAGIC:
        raise IrrlichtError(f"{path}: irr_dump wrote no IRRDUMP1 header")
    (n,) = struct.unpack_from("<I", data, 8)
    header = json.loads(data[12:12 + n].decode("ascii"))
    V, F, J = int(header["vertices"]), len(header["frames"]), len(header["joints"])
    floats = np.frombuffer(data, dtype="<f4", offset=12 + n).astype(np.float64)
    want = V * 3 + F * V * 3 + F * J * 16
    if len(floats) != want:
        raise IrrlichtError(f"{path}: irr_dump wrote {len(floats)} numbers, expected {want}")
    static = floats[:V * 3].reshape(V, 3)
    positions = floats[V * 3:V * 3 + F * V * 3].reshape(F, V, 3)
    joints = floats[V * 3 + F * V * 3:].reshape(F, J, 4, 4)
    buffers = header["buffers"]
    return Played(path, np.asarray(header["frames"], dtype=np.float64), static, positions, joints,
                  np.array([b["vertices"] for b in buffers], dtype=np.int64),
                  np.array([b["attached_joint"] for b in buffers], dtype=np.int64), int(header["materials"]),
                  int(header["frame_count"]), list(header["joints"]),
                  np.asarray(header["joint_parents"], dtype=np.int64),
                  [(e["level"], e["text"]) for e in header["log"]], header)


# ---------------------------------------------------------------------------
# Irrlicht's buffer vertices -> the file's vertices

@dataclass
class VertexOrder:
    """Which file vertex each of Irrlicht's buffer vertices is (buffers
    concatenated, as :class:`Played` has them)."""

    meshes: list                  # the file's XMesh objects in Irrlicht's (the file's) parse order
    mesh: np.ndarray              # (V,) index into ``meshes``
    vertex: np.ndarray            # (V,) the vertex's index in its mesh's positions
    duplicated: np.ndarray        # (V,) a copy for a face of another material (no skin weights in Irrlicht)
    buffer_vertices: np.ndarray   # (B,)
    reader_mesh: np.ndarray       # (V,) index in the reader's mesh order (XFile.meshes, then each frame's
    #                               meshes depth-first: the order of Scene.meshes of a read scene)
    positions: np.ndarray         # (V, 3) the file's positions in this order (Irrlicht's static positions)

    def take(self, per_reader_mesh) -> np.ndarray:
        """Per-vertex data given per mesh in the reader's order (a list of
        (V_m, ...) arrays, e.g. a scene's evaluated meshes) in Irrlicht's order."""
        starts = np.concatenate(([0], np.cumsum([len(a) for a in per_reader_mesh])))
        flat = np.concatenate([np.asarray(a, dtype=np.float64) for a in per_reader_mesh])
        return flat[starts[self.reader_mesh] + self.vertex]


def parse_order(path):
    """(XFile, its meshes in the order the file holds them): Irrlicht's
    Meshes array. The reader keeps top-level meshes apart from the frames
    (XFile.meshes) and each frame's meshes apart from its child frames, so
    the order is recorded while it parses (every Mesh object goes through
    ``Parser.mesh``)."""
    from legacy_skin_io.io.xfile import parser as xparser
    from legacy_skin_io.io.xfile import reader as xreader

    order: list = []

    class _Recording(xparser.Parser):
        def mesh(self):
            m = super().mesh()
            order.append(m)        # meshes do not nest: completion order is the file's order
            return m

    with mock.patch.object(xreader, "Parser", _Recording):
        xf = xreader.read_xfile(path)
    return xf, order


def _mesh_buffers(m) -> list[tuple[np.ndarray, np.ndarray]]:
    """CXMeshFileLoader::load for one mesh (the non-BETTER_MESHBUFFER_SPLITTING
    path): per material buffer, (source vertex of each buffer vertex,
    duplicated?)."""
    n_buffers = max(len(m.materials), 1)        # no material: Irrlicht's default one
    sizes = np.asarray(m.face_sizes, dtype=np.int64)
    idx = np.asarray(m.face_indices, dtype=np.int64)
    V = len(m.positions)
    if m.material_indices is not None and len(m.materials):
        face_mat = np.asarray(m.material_indices, dtype=np.int64)
    else:
        face_mat = np.zeros(len(sizes), dtype=np.int64)
    # each polygon fanned into triangles (first, k+1, k+2)
    n_tri = np.maximum(sizes - 2, 0)
    tri_face = np.repeat(np.arange(len(sizes)), n_tri)
    k = np.arange(len(tri_face)) - np.repeat(np.cumsum(n_tri) - n_tri, n_tri)    # triangle k of its face
    first = (np.cumsum(sizes) - sizes)[tri_face]
    corners = np.stack((idx[first], idx[first + k + 1], idx[first + k + 2]), axis=1).reshape(-1)
    corner_mat = np.repeat(face_mat[tri_face], 3)
    out: list[tuple[np.ndarray, np.ndarray]] = [(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=bool))
                                                for _ in range(n_buffers)]
    if not len(corners):
        return out
    # a vertex goes to the buffer of the first triangle using it; every later corner of another
    # material gets a copy of it of its own, appended after the mesh's vertices in corner order
    used, first_corner = np.unique(corners, return_index=True)
    link = np.full(V, -1, dtype=np.int64)
    link[used] = corner_mat[first_corner]
    dup = corner_mat != link[corners]
    for b in range(n_buffers):
        own = np.flatnonzero(link == b)
        copies = corners[dup & (corner_mat == b)]
        out[b] = (np.concatenate((own, copies)),
                  np.concatenate((np.zeros(len(own), dtype=bool), np.ones(len(copies), dtype=bool))))
    return out


def irrlicht_vertex_order(path, played: Played | None = None) -> VertexOrder:
    """Irrlicht's buffer vertices of the .X file ``path`` as the file's own
    vertices, rebuilt from the project's reading of the file, and checked
    against Irrlicht's static positions (``played``, else the file played
    at frame 0): an AssertionError says where they differ."""
    xf, meshes = parse_order(path)
    reader = list(xf.meshes) + [m for f in xf.all_frames() for m in f.meshes]
    reader_index: dict[int, int] = {}
    for i, m in enumerate(reader):
        reader_index.setdefault(id(m), i)
    mesh, vertex, dup, counts, pos = [], [], [], [], []
    for mi, m in enumerate(meshes):
        for src, copy in _mesh_buffers(m):
            mesh.append(np.full(len(src), mi, dtype=np.int64))
            vertex.append(src)
            dup.append(copy)
            counts.append(len(src))
            pos.append(np.asarray(m.positions, dtype=np.float64).reshape(-1, 3)[src])
    cat = (lambda a, dt: np.concatenate(a) if a else np.zeros(0, dtype=dt))
    mesh_a = cat(mesh, np.int64)
    rmesh = np.array([reader_index.get(id(m), -1) for m in meshes], dtype=np.int64)
    order = VertexOrder(meshes, mesh_a, cat(vertex, np.int64), cat(dup, bool), np.array(counts, dtype=np.int64),
                        rmesh[mesh_a] if len(mesh_a) else mesh_a,
                        np.concatenate(pos) if pos else np.zeros((0, 3)))
    check_static(order, played if played is not None else play(path, [0.0]))
    return order


def check_static(order: VertexOrder, played: Played) -> None:
    """AssertionError unless ``order``'s positions are Irrlicht's static
    positions (float32 precision) buffer by buffer."""
    where = played.path
    said = played.warnings
    said = f" (Irrlicht's warnings: {'; '.join(said[:6])}{' ...' if len(said) > 6 else ''})" if said else ""
    assert np.array_equal(order.buffer_vertices, played.buffer_vertices), (
        f"{where}: rebuilt buffers hold {order.buffer_vertices.tolist()} vertices, Irrlicht's "
        f"{played.buffer_vertices.tolist()}{said}")
    want = order.positions.astype(np.float32).astype(np.float64)
    # Irrlicht's text float parser (fast_atof) is not correctly rounded: allow a few float32 ulps
    tol = 4 * np.spacing(np.abs(want).astype(np.float32)).astype(np.float64) + 1e-30
    bad = np.abs(played.static - want) > tol
    if bad.any():
        v = int(np.flatnonzero(bad.any(axis=1))[0])
        raise AssertionError(
            f"{where}: rebuilt vertex order differs from Irrlicht's static positions at {int(bad.any(axis=1).sum())} "
            f"of {len(want)} vertices; first: buffer vertex {v} = mesh {int(order.mesh[v])} vertex "
            f"{int(order.vertex[v])} at {want[v].tolist()}, Irrlicht has {played.static[v].tolist()}{said}")


def size(points: np.ndarray) -> float:
    """Bounding-box diagonal of ``points`` (N, 3); 1.0 when empty or flat."""
    p = np.asarray(points, dtype=np.float64).reshape(-1, 3)
    d = float(np.linalg.norm(p.max(0) - p.min(0))) if len(p) else 0.0
    return d if d > 0 else 1.0


if __name__ == "__main__":
    ok, why = status()
    print("Irrlicht checks: can run here" if ok else f"Irrlicht checks: not run here ({why})")
    sys.exit(0 if ok else 1)
