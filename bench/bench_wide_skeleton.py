# SPDX-License-Identifier: GPL-3.0-or-later
"""Benchmark: wide skeletons (many root joints, each skinning its own
triangle), RiTE and .X, at 1k, 10k and 100k joints (not a test).

    python3.11 tools/run.py py bench/bench_wide_skeleton.py [--joints 1000 10000 100000] [--blender 1000 10000]

For each size it times, per joint:

* reading the file into a scene and checking it (``read_scene`` +
  ``validate``: the project's own work, numpy and Python) for a RAM and an
  .X file whose every frame is named by a SkinWeights (at most 60,000: the
  .X reader's object limit). The RATIO of the
  largest size's time per joint to the smallest's must stay near 1
  (linear; target <= 2);
* the import through ``bpy.ops`` (sizes of ``--blender``, within the import
  limit ``scene.validate.MAX_IMPORT_JOINTS``), against Blender's own calls
  for the same rig done bare in the same run: ``edit_bones.new`` per bone,
  ``vertex_groups.new`` per group and ``VertexGroup.add`` per group. Each of
  those costs time proportional to the bones or groups already made (a
  name check over the list, an index search), so they grow with the square
  of the joint count; the RATIO of our import's growth (per joint, largest
  size over smallest) to that baseline's growth shows whether the import
  adds any growth of its own (target <= ~1.2).

A size over the import limit is refused by the import before anything is
built; the time of that refusal is printed too (proportional to the file).
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def ratio_line(name: str, ours: float, base: float, target: float, unit: str = "us/joint") -> str:
    """``RATIO <name>: <ours/base> (...; target <= X)`` (collected by run_all.py), per-joint figures in us."""
    r = ours / base if base > 0 else float("inf")
    return f"RATIO {name}: {r:.2f} ({ours:.4g} vs {base:.4g} {unit}; target <= {target:g})"


#: a frame, its FrameTransformMatrix and its SkinWeights are 3 objects: the .X
#: reader's MAX_OBJECTS (200,000) caps this shape below 66,667 joints
X_MAX_JOINTS = 60_000


def wide_ram(n: int, path: Path) -> None:
    from legacy_skin_io.io.rite import RamModel, RiteJoint, write_ram

    joints = [RiteJoint(f"j{i}", -1, [0, 0, 0, 1.0], [i * 0.01, 0, 0], [0, 0, 0, 1.0]) for i in range(n)]
    write_ram(RamModel(mesh_name="wide", joints=joints, positions=_positions(n),
                       tri_shader=np.zeros(n, dtype=np.int64), tri_vertices=np.arange(3 * n).reshape(n, 3),
                       weight_vertex=np.arange(3 * n), weight_joint=np.repeat(np.arange(n), 3),
                       weight_value=np.ones(3 * n)), path)


def _positions(n: int) -> np.ndarray:
    k = np.arange(n) * 0.01
    pos = np.zeros((3 * n, 3))
    pos[0::3, 0], pos[1::3, 0], pos[2::3, 0], pos[2::3, 1] = k, k + 0.005, k, 0.01
    return pos


def wide_x(n: int, path: Path) -> None:
    """n root frames, one mesh, n SkinWeights (one per frame)."""
    out = ["xof 0303txt 0032\n"]
    out += [f"Frame j{i} {{ FrameTransformMatrix {{ 1,0,0,0, 0,1,0,0, 0,0,1,0, {i * 0.01!r},0,0,1;; }} }}\n"
            for i in range(n)]
    pos = _positions(n)
    out.append(f"Mesh m {{ {3 * n}; " + ",".join(f"{x!r};{y!r};{z!r};" for x, y, z in pos.tolist()) + ";\n")
    out.append(f"{n}; " + ",".join(f"3;{3 * i},{3 * i + 1},{3 * i + 2};" for i in range(n)) + ";\n")
    out.append(f"XSkinMeshHeader {{ 1; 1; {n}; }}\n")
    out += [f'SkinWeights {{ "j{i}"; 3; {3 * i},{3 * i + 1},{3 * i + 2}; 1.0,1.0,1.0; '
            f'1,0,0,0, 0,1,0,0, 0,0,1,0, {-i * 0.01!r},0,0,1;; }}\n' for i in range(n)]
    out.append("}\n")
    path.write_text("".join(out))


def read_time(fid: str, path: Path) -> float:
    from legacy_skin_io.io import formats
    from legacy_skin_io.scene.validate import validate

    t = time.perf_counter()
    validate(formats.by_id(fid).read_scene([str(path)], warnings=[]))
    return time.perf_counter() - t


def blender_bare(bpy, n: int) -> float:
    """Blender's own calls for an n-bone rig skinning one triangle per bone."""
    bpy.ops.wm.read_homefile(use_empty=True)
    t = time.perf_counter()
    arm = bpy.data.armatures.new("bare")
    obj = bpy.data.objects.new("bare", arm)
    bpy.context.collection.objects.link(obj)
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="EDIT")
    for i in range(n):
        b = arm.edit_bones.new(f"j{i}")
        b.tail = (0.0, 0.01, 0.0)
    bpy.ops.object.mode_set(mode="OBJECT")
    me = bpy.data.meshes.new("bare")
    me.from_pydata(_positions(n).tolist(), [], np.arange(3 * n).reshape(n, 3).tolist())
    mo = bpy.data.objects.new("bare", me)
    bpy.context.collection.objects.link(mo)
    for i in range(n):
        mo.vertex_groups.new(name=f"j{i}")
    for i, g in enumerate(list(mo.vertex_groups)):
        g.add([3 * i, 3 * i + 1, 3 * i + 2], 1.0, "REPLACE")
    return time.perf_counter() - t


def import_time(bpy, op: str, path: Path) -> tuple[float, str]:
    bpy.ops.wm.read_homefile(use_empty=True)
    t = time.perf_counter()
    try:
        getattr(bpy.ops.import_scene, op)(filepath=str(path))
        out = "imported"
    except RuntimeError as err:
        out = "refused: " + str(err).strip().splitlines()[-1][:120]
    return time.perf_counter() - t, out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--joints", type=int, nargs="+", default=[1000, 10000, 100000])
    ap.add_argument("--blender", type=int, nargs="*", default=[1000, 10000],
                    help="sizes also imported through Blender (default 1000 10000)")
    ap.add_argument("--quick", action="store_true", help="1k and 10k joints, Blender at 1k and 5k")
    args = ap.parse_args(argv)
    if args.quick:
        args.joints, args.blender = [1000, 10000], [1000, 5000]
    work = Path(tempfile.mkdtemp(prefix="lsio-wide-"))
    per: dict[str, dict[int, float]] = {"ram": {}, "x": {}}
    for size in args.joints:
        for fid, kind, make in (("rite", "ram", wide_ram), ("xfile", "x", wide_x)):
            n = min(size, X_MAX_JOINTS) if kind == "x" else size
            p = work / f"wide{n}.{kind}"
            make(n, p)
            dt = read_time(fid, p)
            per[kind][n] = dt / n
            print(f"read {kind:>3} {n:>7} joints ({p.stat().st_size / 2**20:6.1f} MB): {dt:7.3f} s, "
                  f"{dt / n * 1e6:6.1f} us/joint", flush=True)
    lines = [ratio_line(f"wide {kind} read per joint, {max(per[kind])} vs {min(per[kind])} joints",
                        per[kind][max(per[kind])] * 1e6, per[kind][min(per[kind])] * 1e6, 2.0) for kind in ("ram", "x")]
    if args.blender:
        import bpy

        import legacy_skin_io

        legacy_skin_io.register()
        ours: dict[int, float] = {}
        bare: dict[int, float] = {}
        for n in sorted(set(args.blender)):
            p = work / f"wide{n}.ram"
            if not p.exists():
                wide_ram(n, p)
            dt, what = import_time(bpy, "rite", p)
            print(f"import ram {n:>7} joints: {dt:7.3f} s, {dt / n * 1e6:7.1f} us/joint ({what})", flush=True)
            if what == "imported":
                ours[n] = dt / n
                b = blender_bare(bpy, n)
                bare[n] = b / n
                print(f"  Blender's own calls (bones, groups, weights) bare: {b:7.3f} s, {b / n * 1e6:7.1f} "
                      f"us/joint", flush=True)
        for n in args.joints:
            if n not in ours and n > max(args.blender):
                p = work / f"wide{n}.ram"
                dt, what = import_time(bpy, "rite", p)
                print(f"import ram {n:>7} joints: {dt:7.3f} s ({what})", flush=True)
        legacy_skin_io.unregister()
        if len(ours) >= 2:
            a, b = min(ours), max(ours)
            lines.append(ratio_line(f"wide import growth per joint {b} vs {a} joints, ours over Blender's bare calls",
                                    ours[b] / ours[a], bare[b] / bare[a], 1.2, unit="x growth"))
    print()
    for ln in lines:
        print(ln)
    return 0


if __name__ == "__main__":
    sys.exit(main())
