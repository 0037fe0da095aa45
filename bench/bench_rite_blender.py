#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""RiTE read / import / export times, with Blender's C++ OBJ importer and
exporter on the same mesh as the baseline, in the same run (not a test).

    python3.11 tools/run.py py bench/bench_rite_blender.py [--vertices 1000000]

Prints, for the bundled sample and a generated big RAM (1,000,000 vertices,
~2,000,000 triangles, 4,000,000 weights): read (io only), full import
(read + Blender data), export, and the ratios against OBJ import/export of the
same triangles (positions, normals, UVs; no skin).
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def big_ram(n_vertices: int, seed: int = 0):
    from legacy_skin_io.core import quat
    from legacy_skin_io.io.rite import RamModel, RiteJoint

    rng = np.random.default_rng(seed)
    side = int(np.sqrt(n_vertices))
    n_vertices = side * side
    u, v = np.meshgrid(np.linspace(0, 1, side), np.linspace(0, 1, side))
    pos = np.stack((u.ravel(), np.sin(3 * u.ravel()) * 0.1, v.ravel()), axis=1) * 2.0
    idx = np.arange(n_vertices).reshape(side, side)
    a, b, c, d = idx[:-1, :-1].ravel(), idx[:-1, 1:].ravel(), idx[1:, 1:].ravel(), idx[1:, :-1].ravel()
    tris = np.concatenate((np.stack((a, b, c), 1), np.stack((a, c, d), 1)))
    J = 64
    joints = [RiteJoint(f"joint {j}", -1 if j == 0 else int(rng.integers(0, j)),
                        quat.normalize(rng.normal(size=4) * [0.1, 0.1, 0.1, 1]), rng.normal(size=3) * 0.2,
                        [0, 0, 0, 1.0]) for j in range(J)]
    wj = (np.arange(n_vertices)[:, None] * 7 + np.arange(4)[None, :] * 13) % J
    wv = np.repeat(np.arange(n_vertices), 4)
    ww = np.tile([0.4, 0.3, 0.2, 0.1], n_vertices)
    normals = np.tile([0.0, 1.0, 0.0], (n_vertices, 1))
    return RamModel(mesh_name="Big", joints=joints, positions=pos, normals=normals, uvs=pos[:, [0, 2]] / 2,
                    tri_shader=np.zeros(len(tris), dtype=np.int64), tri_vertices=tris, tri_normals=tris,
                    tri_uvs=tris, weight_vertex=wv, weight_joint=wj.ravel(), weight_value=ww)


def write_obj(ram, path: Path) -> None:
    """The same triangles as an OBJ (Y-up), written with numpy."""
    with open(path, "w") as f:
        np.savetxt(f, ram.positions, fmt="v %.9g %.9g %.9g")
        np.savetxt(f, ram.uvs, fmt="vt %.9g %.9g")
        np.savetxt(f, ram.normals, fmt="vn %.9g %.9g %.9g")
        t = ram.tri_vertices + 1
        tu = ram.tri_uvs + 1
        tn = ram.tri_normals + 1
        faces = np.stack((t[:, 0], tu[:, 0], tn[:, 0], t[:, 1], tu[:, 1], tn[:, 1], t[:, 2], tu[:, 2], tn[:, 2]), 1)
        np.savetxt(f, faces, fmt="f %d/%d/%d %d/%d/%d %d/%d/%d")


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def run_case(bpy, name: str, ram_path: Path, obj_path: Path, tmp: Path):
    from legacy_skin_io.io.rite import read_ram
    from legacy_skin_io.operators import rite_export, rite_import

    t_read, ram = timed(lambda: read_ram(ram_path))
    bpy.ops.wm.read_homefile(use_empty=True)
    t_import, res = timed(lambda: rite_import.load_ram(bpy.context, str(ram_path)))
    t_export, _ = timed(lambda: rite_export.save_ram(bpy.context, str(tmp / "out.ram"), armature=res.armature))
    bpy.ops.wm.read_homefile(use_empty=True)
    t_obj_import, _ = timed(lambda: bpy.ops.wm.obj_import(filepath=str(obj_path)))
    t_obj_export, _ = timed(lambda: bpy.ops.wm.obj_export(filepath=str(tmp / "out.obj"), export_materials=False))
    print(f"{name}: {len(ram.positions)} vertices, {len(ram.tri_vertices)} triangles, "
          f"{len(ram.weight_value)} weights, {len(ram.joints)} joints")
    print(f"  read (io)        {t_read:8.2f} s")
    print(f"  import (Blender) {t_import:8.2f} s   OBJ import {t_obj_import:8.2f} s   "
          f"ratio rite/obj {t_import / t_obj_import:.2f}")
    print(f"  export (Blender) {t_export:8.2f} s   OBJ export {t_obj_export:8.2f} s   "
          f"ratio rite/obj {t_export / t_obj_export:.2f}")
    return t_import / t_obj_import


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--vertices", type=int, default=1_000_000)
    args = ap.parse_args()
    import bpy

    from legacy_skin_io import register

    register()
    from legacy_skin_io.io.rite import read_ram, write_ram

    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        sample = ROOT / "samples" / "rite" / "humanoid.ram"
        if sample.exists():
            write_obj(read_ram(sample), tmp / "sample.obj")
            run_case(bpy, "sample humanoid.ram", sample, tmp / "sample.obj", tmp)
        ram = big_ram(args.vertices)
        write_ram(ram, tmp / "big.ram")
        write_obj(ram, tmp / "big.obj")
        print(f"big.ram: {os.path.getsize(tmp / 'big.ram') / 1e6:.0f} MB, big.obj: "
              f"{os.path.getsize(tmp / 'big.obj') / 1e6:.0f} MB")
        r = run_case(bpy, "big.ram", tmp / "big.ram", tmp / "big.obj", tmp)
    print(f"import rite/obj (1M vertices): {r:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
