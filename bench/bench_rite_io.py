# SPDX-License-Identifier: GPL-3.0-or-later
"""Benchmark: write and read a big RiTE RAM (1M vertices, 4M weights by default).

    python3.11 tools/run.py py bench/bench_rite_io.py [--vertices N] [--no-baseline] [--repeat N]

Informational (no target: what users feel is the import and export through
Blender, ``bench_rite_blender.py``). Generates a model in a temporary
directory, times ``write_ram`` and ``read_ram`` (seconds and MB/s), checks the
read-back data is identical bit for bit, and compares in the same run against
baselines:

* the writer as it was before its records were formatted with numpy
  (``%``-formatting: ``repr`` per float, ``%d`` per integer), written here,
  on the same model: its file must be byte-identical;
* a naive line-by-line reader (``str.split`` per line, ``float()`` per token,
  dicts for ids) written here, over the whole file;
* numpy's own text parsers on the sections' numbers alone, without the
  reader's checks (``np.fromstring(sep=" ")`` per section, ``np.loadtxt``
  for the weights and their quoted names): the floor of a reader built on them;
* ``numpy.loadtxt`` on the vertex section alone, against the reader's own
  parse of a file holding only that section.

Prints the times and the ratios (``INFO`` lines).
"""
from __future__ import annotations

import argparse
import itertools
import os
import re
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from legacy_skin_io.io.atomic import write_atomic
from legacy_skin_io.io.rite import RamModel, RiteJoint, read_ram, write_ram, writer

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import info_line  # noqa: E402


def make_model(n_vertices: int, seed: int = 0) -> RamModel:
    rng = np.random.default_rng(seed)
    n_joints = 32
    joints = []
    for k in range(n_joints):
        q = rng.normal(size=4)
        joints.append(RiteJoint(f"Joint {k:02d}", k - 1 if k else -1, q / np.linalg.norm(q),
                                rng.normal(size=3), np.array([0.0, 0.0, 0.0, 1.0])))
    v = n_vertices
    positions = rng.normal(size=(v, 3))
    normals = rng.normal(size=(v, 3))
    normals /= np.linalg.norm(normals, axis=1, keepdims=True)
    uvs = rng.random((v, 2))
    t = 2 * v
    tri_vertices = rng.integers(0, v, size=(t, 3))
    tri_shader = rng.integers(0, 3, size=t)
    w_per = 4
    weight_vertex = np.repeat(np.arange(v), w_per)
    weight_joint = rng.integers(0, n_joints, size=v * w_per)
    raw = rng.random((v, w_per))
    weight_value = (raw / raw.sum(axis=1, keepdims=True)).ravel()
    return RamModel(mesh_name="Bench", joints=joints, positions=positions, normals=normals, uvs=uvs,
                    tri_shader=tri_shader, tri_vertices=tri_vertices, tri_normals=tri_vertices.copy(),
                    tri_uvs=tri_vertices.copy(), weight_vertex=weight_vertex, weight_joint=weight_joint,
                    weight_value=weight_value)


def percent_write_ram(m: RamModel, path) -> None:
    """The RAM writer as it was with %-formatting (the baseline): same checks, same bytes."""
    writer._validate_ram(m, path)
    write_atomic(path, (c.encode("utf-8") for c in _percent_chunks(m)))


def _percent_rows(fmt: str, columns, n: int, block: int = 65536):
    for s in range(0, n, block):
        e = min(n, s + block)
        cols = [c[s:e] if isinstance(c, range) else c[s:e].tolist() for c in columns]
        yield (fmt * (e - s)) % tuple(itertools.chain.from_iterable(zip(*cols)))


def _percent_chunks(m: RamModel):
    q = lambda name: f'"{name}"'                                                     # noqa: E731
    vec = lambda v: " ".join(repr(x) for x in np.asarray(v, dtype=np.float64).tolist())  # noqa: E731
    out = [writer.RAM_HEADER, f"joints {len(m.joints)}\n"]
    ids = writer.joint_ids(m)
    for k, j in enumerate(m.joints):
        parent = int(ids[j.parent]) if j.parent >= 0 else -1
        out.append(f"{int(ids[k])} {q(j.name)}\nparent {parent}\norientation {vec(j.orientation)}\n"
                   f"translation {vec(j.translation)}\nrotation {vec(j.rotation)}\n")
    out.append(f"mesh {q(m.mesh_name)}\n")
    yield "".join(out)
    for name, arr, width in (("vertices", m.positions, 3), ("normals", m.normals, 3), ("uvs", m.uvs, 2)):
        a = np.asarray(arr, dtype=np.float64)
        yield f"{name} {len(a)}\n"
        yield from _percent_rows("%d" + " %r" * width + "\n", [range(len(a))] + [a[:, c] for c in range(width)],
                                 len(a))
    nt = len(m.tri_vertices)
    zeros = np.zeros((nt, 3), dtype=np.int64)
    tn = m.tri_normals if len(m.normals) and m.tri_normals is not None else zeros
    tu = m.tri_uvs if len(m.uvs) and m.tri_uvs is not None else zeros
    block = np.column_stack([np.asarray(m.tri_shader, dtype=np.int64).reshape(nt),
                             np.asarray(m.tri_vertices, dtype=np.int64).reshape(nt, 3),
                             np.asarray(tn, dtype=np.int64).reshape(nt, 3),
                             np.asarray(tu, dtype=np.int64).reshape(nt, 3)])
    yield f"triangles {nt}\n"
    yield from _percent_rows("%d" + " %d" * 10 + "\n", [range(nt)] + [block[:, c] for c in range(10)], nt)
    nw = len(m.weight_value)
    quoted = np.array([q(j.name) for j in m.joints] or [""], dtype=object)
    wj = np.asarray(m.weight_joint, dtype=np.int64)
    yield f"weights {nw}\n"
    yield from _percent_rows("%d %d %d %s %r\n",
                             [range(nw), np.asarray(m.weight_vertex, dtype=np.int64), ids[wj] if nw else wj,
                              quoted[wj], np.asarray(m.weight_value, dtype=np.float64)], nw)


def naive_read(path):
    """A straightforward reader: one Python loop iteration and float() per token."""
    sections = {}
    current = None
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if '"' in line:
                head, name, tail = line.split('"', 2)
                toks = head.split() + [name] + tail.split()
            else:
                toks = line.split()
            if not toks or toks[0].startswith("#"):
                continue
            if toks[0][0].isalpha():
                if toks[0] in ("vertices", "normals", "uvs", "triangles", "weights"):
                    current = sections.setdefault(toks[0], {})
                continue
            if current is None:
                continue
            key = int(toks[0])
            current[key] = [int(t) if t.lstrip("-").isdigit()
                            else (t if not t[:1].isdigit() and t[:1] not in "-." else float(t))
                            for t in toks[1:]]
    out = {}
    for name, recs in sections.items():
        out[name] = [recs[k] for k in sorted(recs)]
    return out


def numpy_parsers(path) -> float:
    """Seconds numpy's own text parsers take for the numbers of the RAM's record
    sections (no checks: a count of values is all that is compared)."""
    import io

    data = Path(path).read_bytes()
    t0 = time.perf_counter()
    heads = [(m.start(), m.group(1)) for m in re.finditer(rb"^(vertices|normals|uvs|triangles|weights) \d+\n",
                                                          data, re.MULTILINE)]
    heads.append((len(data), None))
    got = 0
    for (a, name), (b, _) in zip(heads, heads[1:]):
        body = data[data.index(b"\n", a) + 1:b]
        if name == b"weights":
            got += np.loadtxt(io.BytesIO(body), usecols=(0, 1, 2, 4), quotechar='"', dtype=np.float64).size
        else:
            got += np.fromstring(body, sep=" ").size
    dt = time.perf_counter() - t0
    assert got > 0
    return dt


def bench(n_vertices: int, baseline: bool, repeat: int = 2) -> int:
    model = make_model(n_vertices)
    with tempfile.TemporaryDirectory(prefix="bench_rite_") as tmp:
        path = Path(tmp) / "big.ram"
        ppath = Path(tmp) / "percent.ram"
        t_write = t_percent = float("inf")
        for _ in range(max(1, repeat)):                     # alternately, the best of each
            t0 = time.perf_counter()
            write_ram(model, path)
            t_write = min(t_write, time.perf_counter() - t0)
            t0 = time.perf_counter()
            percent_write_ram(model, ppath)
            t_percent = min(t_percent, time.perf_counter() - t0)
        identical = ppath.read_bytes() == path.read_bytes()
        ppath.unlink()
        size_mb = os.path.getsize(path) / 1e6
        print(f"model: {len(model.positions):,} vertices, {len(model.normals):,} normals, "
              f"{len(model.uvs):,} uvs, {len(model.tri_vertices):,} triangles, "
              f"{len(model.weight_value):,} weights; file {size_mb:.1f} MB")
        runs = f" (best of {repeat})" if repeat > 1 else ""
        print(f"write_ram: {t_write:7.2f} s  {size_mb / t_write:7.1f} MB/s{runs}")
        print(f"baseline %-formatting writer: {t_percent:7.2f} s  {size_mb / t_percent:7.1f} MB/s{runs}"
              f"  -> write_ram is {t_percent / t_write:.1f}x faster; files identical: {identical}")
        if not identical:
            return 1

        warnings: list = []
        t0 = time.perf_counter()
        back = read_ram(path, warnings)
        t_read = time.perf_counter() - t0
        print(f"read_ram:  {t_read:7.2f} s  {size_mb / t_read:7.1f} MB/s")
        bits = lambda a: np.ascontiguousarray(a, dtype=np.float64).view(np.uint64)   # noqa: E731
        same = (not warnings and np.array_equal(bits(back.positions), bits(model.positions))
                and np.array_equal(bits(back.normals), bits(model.normals))
                and np.array_equal(bits(back.uvs), bits(model.uvs))
                and np.array_equal(back.tri_vertices, model.tri_vertices)
                and np.array_equal(back.tri_normals, model.tri_normals)
                and np.array_equal(back.tri_shader, model.tri_shader)
                and np.array_equal(back.weight_joint, model.weight_joint)
                and np.array_equal(bits(back.weight_value), bits(model.weight_value)))
        print(f"read-back identical: {same}")
        if not same:
            return 1

        if baseline:
            t0 = time.perf_counter()
            naive = naive_read(path)
            t_naive = time.perf_counter() - t0
            ok = len(naive["vertices"]) == len(model.positions)
            print(f"baseline naive line-by-line reader: {t_naive:7.2f} s  {size_mb / t_naive:7.1f} MB/s"
                  f"  -> read_ram is {t_naive / t_read:.1f}x faster{'' if ok else ' (baseline miscounted!)'}")
            del naive

        t_numpy = numpy_parsers(path)
        print(f"numpy's parsers on the numbers alone: {t_numpy:7.2f} s  -> read_ram takes {t_read / t_numpy:.2f}x that")

        # vertex section alone: read_ram vs numpy.loadtxt
        vpath = Path(tmp) / "vertices.ram"
        write_ram(RamModel(mesh_name="V", positions=model.positions), vpath)
        t0 = time.perf_counter()
        vm = read_ram(vpath)
        t_vs = time.perf_counter() - t0
        with open(vpath, encoding="utf-8") as fh:
            lines = fh.readlines()
        start = next(k for k, line in enumerate(lines) if line.startswith("vertices")) + 1
        del lines
        t0 = time.perf_counter()
        arr = np.loadtxt(vpath, skiprows=start, max_rows=len(model.positions), dtype=np.float64)
        t_lt = time.perf_counter() - t0
        assert np.array_equal(arr[:, 1:], vm.positions)
        print(f"vertex section only: read_ram {t_vs:.2f} s, numpy.loadtxt {t_lt:.2f} s "
              f"-> ratio {t_lt / t_vs:.1f}x")
    print(info_line(f"rite read_ram {n_vertices / 1e6:g}M vertices/numpy's parsers", t_read, t_numpy))
    print(info_line("rite write_ram/%-format", t_write, t_percent))
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vertices", type=int, default=1_000_000)
    ap.add_argument("--no-baseline", action="store_true", help="skip the slow naive reader")
    ap.add_argument("--repeat", type=int, default=2,
                    help="write with both writers this many times, alternately, and keep the best of each")
    args = ap.parse_args(argv)
    return bench(args.vertices, not args.no_baseline, args.repeat)


if __name__ == "__main__":
    sys.exit(main())
