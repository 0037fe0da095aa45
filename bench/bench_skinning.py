#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Skinning and sampling benchmark (not a test).

    python3.11 tools/run.py py bench/bench_skinning.py [--vertices 500000] [--runs 15]

Builds one skinned mesh (500,000 vertices, 64 bones, 4 influences) in
Blender, then times in the same run, pose after pose:
  * Blender: Armature modifier evaluation (depsgraph update) plus reading the
    deformed vertices back with foreach_get of the ``position`` attribute
    (15x faster than ``vertices.foreach_get("co")``: 1 ms for 500,000);
  * core: the same skinning with a core.skinning.SkinJob prepared once
    (float32; the pose matrices computed by the core from the pose channels,
    with the rig's inverse bind matrices computed once, not per pose).
The outputs are compared so both sides compute the same thing. Each side
runs first for every other pose (``--order``). Prints sampling throughput
(100 joints x 10,000 frames), the spread of the per-pose ratios, the CPU
time of each side (all threads) and, as its last line, the ratio of the
median wall times:

    RATIO skinning core/Blender: ...   (target <= 0.5)
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ratio_line, spread  # noqa: E402

from legacy_skin_io.core import quat, sampling, skeleton, skinning  # noqa: E402
from legacy_skin_io.io.rite import runtime  # noqa: E402


def build_scene(bpy, V, J, K, rng):
    bpy.ops.wm.read_homefile(use_empty=True)
    arm = bpy.data.armatures.new("Rig")
    ao = bpy.data.objects.new("Rig", arm)
    bpy.context.scene.collection.objects.link(ao)
    bpy.context.view_layer.objects.active = ao
    bpy.ops.object.mode_set(mode="EDIT")
    names, parents = [], []
    for j in range(J):
        b = arm.edit_bones.new(f"b{j}")
        p = -1 if j == 0 else int(rng.integers(max(0, j - 4), j))
        b.head = rng.normal(size=3)
        b.tail = np.array(b.head) + rng.normal(size=3) * 0.3
        if p >= 0:
            b.parent = arm.edit_bones[names[p]]
        names.append(b.name)
        parents.append(p)
    bpy.ops.object.mode_set(mode="OBJECT")
    me = bpy.data.meshes.new("Skin")
    me.vertices.add(V)
    pos = rng.normal(size=(V, 3)).astype(np.float32)
    me.vertices.foreach_set("co", pos.reshape(-1))
    me.update()
    mo = bpy.data.objects.new("Skin", me)
    bpy.context.scene.collection.objects.link(mo)
    mo.parent = ao
    # K distinct bones per vertex, weights from a few fixed patterns so the
    # vertex groups can be filled in bulk (VertexGroup.add by equal weight).
    patterns = np.array([[0.4, 0.3, 0.2, 0.1], [0.7, 0.1, 0.1, 0.1], [0.25, 0.25, 0.25, 0.25]])[:, :K]
    patterns /= patterns.sum(axis=1, keepdims=True)
    pat = rng.integers(0, len(patterns), size=V)
    offs = np.stack([rng.permutation(J)[:K] for _ in range(64)])
    joints = (offs[rng.integers(0, 64, size=V)] + rng.integers(0, J, size=(V, 1))) % J
    weights = patterns[pat].astype(np.float32)
    groups = [mo.vertex_groups.new(name=n) for n in names]
    for j in range(J):
        for k in range(K):
            sel = np.nonzero(joints[:, k] == j)[0]
            for pv in range(len(patterns)):
                idx = sel[pat[sel] == pv]
                if len(idx):
                    groups[j].add(idx.tolist(), float(patterns[pv, k]), "REPLACE")
    mod = mo.modifiers.new("Armature", "ARMATURE")
    mod.object = ao
    infl = skinning.Influences(joints.astype(np.int32), weights)
    return ao, mo, names, np.array(parents), pos, infl


def core_pose(ao, names, parents, rel, inv_bind):
    q = np.array([tuple(ao.pose.bones[n].rotation_quaternion) for n in names])
    basis = quat.to_mat4(np.concatenate((q[:, 1:], q[:, :1]), axis=1))
    world = skeleton.Skeleton(parents).world(rel @ basis)
    # world @ inverse(bind), with the inverse bind matrices computed once per
    # rig: np.linalg.inv goes through OpenBLAS (LAPACK), whose worker thread
    # then busy-waits for a while, holding a CPU while SkinJob.run's threads work
    return world @ inv_bind


def bench_sampling(rng):
    J, F = 100, 10_000
    frames = [np.sort(rng.choice(F, size=40, replace=False)) for _ in range(J)]
    rots = [quat.normalize(rng.normal(size=(40, 4))) for _ in range(J)]
    clip = runtime.RiteClip.from_tracks(F, frames, rots)
    query = np.arange(F)
    t0 = time.perf_counter()
    out = clip.sample(query)
    t_legacy = time.perf_counter() - t0
    assert out.shape == (F, J, 4)
    ch = sampling.Channels.from_tracks(np.arange(J), [f.astype(float) * 160 for f in frames], rots, 4)
    times = query * 160.0 + 37.0
    t0 = time.perf_counter()
    out2 = ch.sample(times, "slerp")
    t_time = time.perf_counter() - t0
    assert out2.shape == (F, J, 4)
    n = J * F
    print(f"sampling legacy (RiTE, slerpNoInvert): {n / t_legacy / 1e6:.1f} M joint-frames/s "
          f"({J} joints x {F} frames in {t_legacy * 1e3:.0f} ms)")
    print(f"sampling time-based (.X, slerp):      {n / t_time / 1e6:.1f} M joint-frames/s "
          f"({J} joints x {F} frames in {t_time * 1e3:.0f} ms)")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--vertices", type=int, default=500_000)
    ap.add_argument("--bones", type=int, default=64)
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--quick", action="store_true", help="100,000 vertices, 8 poses")
    ap.add_argument("--order", choices=("alternate", "core-first", "blender-first"), default="alternate",
                    help="which side runs first for each pose (default: each in turn)")
    args = ap.parse_args()
    if args.quick:
        args.vertices, args.runs = min(args.vertices, 100_000), min(args.runs, 8)
    import bpy

    rng = np.random.default_rng(0)
    bench_sampling(rng)
    t0 = time.perf_counter()
    ao, mo, names, parents, pos, infl = build_scene(bpy, args.vertices, args.bones, 4, rng)
    print(f"scene: {args.vertices} vertices, {args.bones} bones, 4 influences "
          f"(built in {time.perf_counter() - t0:.1f} s)")
    rest = np.array([np.array(ao.data.bones[n].matrix_local) for n in names])
    rel = np.array([np.linalg.inv(rest[p]) @ rest[j] if p >= 0 else rest[j] for j, p in enumerate(parents)])
    inv_bind = np.linalg.inv(rest)
    dg = bpy.context.evaluated_depsgraph_get()
    buf = np.empty(args.vertices * 3, dtype=np.float32)
    job = skinning.SkinJob(pos, infl, "blender")
    ratios, tb_all, tc_all, cpu_b, cpu_c = [], [], [], [], []
    for run in range(args.runs + 2):
        for n in names:
            q = quat.normalize(rng.normal(size=4) * 0.3 + [0, 0, 0, 1])
            ao.pose.bones[n].rotation_quaternion = (q[3], q[0], q[1], q[2])
        def ours():
            c0, t0 = time.process_time(), time.perf_counter()
            skin = core_pose(ao, names, parents, rel, inv_bind)
            out, _ = job.run(skin)
            cpu_c.append(time.process_time() - c0)
            return time.perf_counter() - t0, out

        def blender():
            c0, t0 = time.process_time(), time.perf_counter()
            dg.update()
            ev = mo.evaluated_get(dg)
            ev.data.attributes["position"].data.foreach_get("vector", buf)   # Blender's fastest read-back
            cpu_b.append(time.process_time() - c0)
            return time.perf_counter() - t0

        if args.order == "core-first" or (args.order == "alternate" and run % 2 == 0):
            tc, out = ours()
            tb = blender()
        else:
            tb = blender()
            tc, out = ours()
        err = np.abs(out - buf.reshape(-1, 3)).max()
        if err > 1e-3:
            raise SystemExit(f"core and Blender disagree by {err}")
        if run >= 2:  # warm-up
            ratios.append(tc / tb)
            tb_all.append(tb)
            tc_all.append(tc)
    print(f"blender armature modifier + read-back: {spread([t * 1e3 for t in tb_all], '{:.1f} ms')}")
    print(f"core pose + SkinJob.run (float32, {skinning._pool()._max_workers} threads): "
          f"{spread([t * 1e3 for t in tc_all], '{:.1f} ms')} (max |diff| vs Blender {err:.2e})")
    print(f"per-pose ratio core/blender: {spread(ratios, '{:.3f}')}")
    print(f"CPU time (all threads of the process) per pose: core {statistics.median(cpu_c[2:]) * 1e3:.1f} ms, "
          f"Blender {statistics.median(cpu_b[2:]) * 1e3:.1f} ms (medians; Blender's worker thread may still "
          f"be busy while the core runs)")
    print(f"best of {args.runs}: core {min(tc_all) * 1e3:.1f} ms vs Blender {min(tb_all) * 1e3:.1f} ms "
          f"-> {min(tc_all) / min(tb_all):.3f}")
    print(f"({args.vertices:,} vertices, {args.bones} bones; medians of {args.runs} poses)")
    print(ratio_line("skinning core/Blender", statistics.median(tc_all), statistics.median(tb_all), 0.5))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
