# SPDX-License-Identifier: GPL-3.0-or-later
"""Benchmark: write and read a big RiTE RAM (1M vertices, 4M weights by default).

    python3.11 tools/run.py py bench/bench_rite_io.py [--vertices N] [--no-baseline]

Generates a model in a temporary directory, times ``write_ram`` and
``read_ram`` (seconds and MB/s), checks the read-back data is identical, and
compares in the same run against two baselines:

* a naive line-by-line reader (``str.split`` per line, ``float()`` per token,
  dicts for ids) written here, over the whole file;
* ``numpy.loadtxt`` on the vertex section alone, against the reader's own
  parse of a file holding only that section.

Prints the speed-up ratios.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from legacy_skin_io.io.rite import RamModel, RiteJoint, read_ram, write_ram


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
            current[key] = [int(t) if t.lstrip("-").isdigit() else (t if not t[:1].isdigit() and t[:1] not in "-." else float(t))
                            for t in toks[1:]]
    out = {}
    for name, recs in sections.items():
        out[name] = [recs[k] for k in sorted(recs)]
    return out


def bench(n_vertices: int, baseline: bool) -> int:
    model = make_model(n_vertices)
    with tempfile.TemporaryDirectory(prefix="bench_rite_") as tmp:
        path = Path(tmp) / "big.ram"
        t0 = time.perf_counter()
        write_ram(model, path)
        t_write = time.perf_counter() - t0
        size_mb = os.path.getsize(path) / 1e6
        print(f"model: {len(model.positions):,} vertices, {len(model.normals):,} normals, "
              f"{len(model.uvs):,} uvs, {len(model.tri_vertices):,} triangles, "
              f"{len(model.weight_value):,} weights; file {size_mb:.1f} MB")
        print(f"write_ram: {t_write:7.2f} s  {size_mb / t_write:7.1f} MB/s")

        warnings: list = []
        t0 = time.perf_counter()
        back = read_ram(path, warnings)
        t_read = time.perf_counter() - t0
        print(f"read_ram:  {t_read:7.2f} s  {size_mb / t_read:7.1f} MB/s")
        same = (not warnings and np.array_equal(back.positions, model.positions)
                and np.array_equal(back.normals, model.normals) and np.array_equal(back.uvs, model.uvs)
                and np.array_equal(back.tri_vertices, model.tri_vertices)
                and np.array_equal(back.tri_normals, model.tri_normals)
                and np.array_equal(back.tri_shader, model.tri_shader)
                and np.array_equal(back.weight_joint, model.weight_joint)
                and np.array_equal(back.weight_value, model.weight_value))
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
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vertices", type=int, default=1_000_000)
    ap.add_argument("--no-baseline", action="store_true", help="skip the slow naive reader")
    args = ap.parse_args(argv)
    return bench(args.vertices, not args.no_baseline)


if __name__ == "__main__":
    sys.exit(main())
