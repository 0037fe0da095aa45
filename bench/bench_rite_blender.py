#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""RiTE import / export through Blender against Blender's glTF importer and
exporter on the same skinned scene, in the same run (not a test).

    python3.11 tools/run.py py bench/bench_rite_blender.py [--vertices 300000] [--runs 3]
        [--weights varied|patterned] [--anim-frames N] [--profile] [--quick]

A generated RAM (default 300,000 vertices, ~600,000 triangles, 64 joints,
4 weights per vertex; written with io/rite's writer) is

* imported with ``operators.pipeline.load`` (what ``import_scene.rite``
  runs) and compared with ``bpy.ops.import_scene.gltf`` of the same skinned
  mesh (the .glb is ``bpy.ops.export_scene.gltf`` of the imported scene);
* exported with ``operators.pipeline.save`` (.ram) and compared with
  ``bpy.ops.export_scene.gltf`` of the same scene.

``--anim-frames N`` adds an animation (a RAA of N frames keying every joint
every 10 frames) to both sides: imported with the model, exported as .raa
beside the .ram, and by the glTF exporter as an animation.

``--weights varied`` (default): every vertex has its own four weights, as a
painted or smooth-bound character has; ``patterned``: three weight patterns
only (what the old benchmark generated; vertex groups then fill in a few
hundred batches). Each run times all four operations; the sections of our
import and export (wall clock of the functions named) are printed for the
last run, ``--profile`` adds cProfile listings. The ratios use the best
of the runs on each side (the machine may be busy; the per-run ratios'
spread is printed), after one untimed round of all four (printed). Last lines:

    RATIO rite import/glTF: ...   (target <= 1.0)
    RATIO rite export/glTF: ...   (target <= 1.0)
"""
from __future__ import annotations

import argparse
import cProfile
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import Sections, print_profile, ratio_line, spread, timed  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PKG = "legacy_skin_io"

IMPORT_SECTIONS = [
    ("read_scene (io, numpy)", f"{PKG}.io.rite.adapter", "read_scene", 0),
    ("read_ram (parser)", f"{PKG}.io.rite.ram_reader", "read_ram", 1),
    ("scene_from_ram", f"{PKG}.io.rite.to_scene", "scene_from_ram", 1),
    ("read_clips (RAA)", f"{PKG}.io.rite.to_scene", "read_clips", 1),
    ("validate", f"{PKG}.operators.pipeline", "validate", 0),
    ("builder.build", f"{PKG}.operators.builder", "build", 0),
    ("build_armature", f"{PKG}.operators.armature_build", "build_armature", 1),
    ("build_mesh", f"{PKG}.operators.mesh_build", "build_mesh", 1),
    ("valid_faces", f"{PKG}.operators.mesh_build", "valid_faces", 2),
    ("place_mesh", f"{PKG}.operators.mesh_build", "place_mesh", 1),
    ("add_vertex_groups", f"{PKG}.operators.mesh_build", "add_vertex_groups", 2),
    ("self-check (default pose vs evaluate)", f"{PKG}.operators.selfcheck", "run", 1),
    ("evaluate.size", f"{PKG}.scene.evaluate", "size", 1),
    ("build_action", f"{PKG}.operators.anim_build", "build_action", 1),
]
EXPORT_SECTIONS = [
    ("extractor.scene_of", f"{PKG}.operators.extractor", "scene_of", 0),
    ("mesh_of", f"{PKG}.operators.mesh_extract", "mesh_of", 1),
    ("vertex_weights", f"{PKG}.operators.mesh_extract", "vertex_weights", 2),
    ("clip_of", f"{PKG}.operators.anim_extract", "clip_of", 1),
    ("fcurve_values", f"{PKG}.operators.fcurves", "fcurve_values", 2),
    ("write_scene (io, numpy)", f"{PKG}.io.rite.adapter", "write_scene", 0),
    ("RamBuild (scene -> RAM records)", f"{PKG}.io.rite.from_scene", "RamBuild", 1),
    ("write_ram (text)", f"{PKG}.io.rite.from_scene", "write_ram", 1),
    ("raa_from_clip", f"{PKG}.io.rite.from_scene", "raa_from_clip", 1),
    ("write_raa (text)", f"{PKG}.io.rite.from_scene", "write_raa", 1),
    ("_measure (what RAA cannot carry)", f"{PKG}.io.rite.from_scene", "_measure", 1),
]


def big_ram(n_vertices: int, n_joints: int = 64, influences: int = 4, weights: str = "varied", seed: int = 0):
    """A grid of about ``n_vertices`` vertices (two triangles per cell), a
    random joint tree, ``influences`` distinct joints per vertex."""
    from legacy_skin_io.core import quat
    from legacy_skin_io.io.rite import RamModel, RiteJoint

    rng = np.random.default_rng(seed)
    nx = max(2, int(round(np.sqrt(n_vertices * 5 / 6))))
    ny = max(2, int(round(n_vertices / nx)))
    u, v = np.meshgrid(np.linspace(0, 1, nx), np.linspace(0, 1, ny))
    u, v = u.ravel(), v.ravel()
    pos = np.stack((u, np.sin(3 * u) * 0.1 + 0.05 * np.cos(5 * v), v), axis=1) * 2.0
    n = len(pos)
    idx = np.arange(n).reshape(ny, nx)
    a, b, c, d = idx[:-1, :-1].ravel(), idx[:-1, 1:].ravel(), idx[1:, 1:].ravel(), idx[1:, :-1].ravel()
    # wound so that the faces' fronts point up (+Y), as their normals do (a grid whose normals
    # all point behind its faces has every shading normal reflected on import)
    tris = np.concatenate((np.stack((a, c, b), 1), np.stack((a, d, c), 1)))
    J = n_joints
    joints = [RiteJoint(f"joint {j}", -1 if j == 0 else int(rng.integers(max(0, j - 4), j)),
                        quat.normalize(rng.normal(size=4) * [0.1, 0.1, 0.1, 1]), rng.normal(size=3) * 0.2,
                        [0, 0, 0, 1.0]) for j in range(J)]
    K = influences
    # K distinct joints per vertex, spatially coherent (cells of the grid)
    cell = (np.floor(u * 7.999) * 8 + np.floor(v * 7.999)).astype(np.int64)
    wj = (cell[:, None] * 7 + np.arange(K)[None, :] * 13) % J
    if weights == "patterned":
        patterns = np.array([[0.4, 0.3, 0.2, 0.1], [0.7, 0.1, 0.1, 0.1], [0.25, 0.25, 0.25, 0.25]])[:, :K]
        ww = patterns[np.arange(n) % len(patterns)]
    else:
        raw = rng.random((n, K)) + 0.05
        ww = raw / raw.sum(axis=1, keepdims=True)
    normals = np.stack((np.zeros(n), np.ones(n), np.zeros(n)), axis=1)
    return RamModel(mesh_name="Big", joints=joints, positions=pos, normals=normals, uvs=pos[:, [0, 2]] / 2,
                    tri_shader=np.zeros(len(tris), dtype=np.int64), tri_vertices=tris, tri_normals=tris,
                    tri_uvs=tris, weight_vertex=np.repeat(np.arange(n), K), weight_joint=wj.ravel(),
                    weight_value=ww.ravel())


def big_raa(ram, frames: int, seed: int = 1):
    """Every joint keyed every 10 frames (and on the last), small random turns."""
    from legacy_skin_io.core import quat
    from legacy_skin_io.io.rite import RaaAnimation, RaaTrack

    rng = np.random.default_rng(seed)
    keys = np.unique(np.r_[np.arange(0, frames, 10), frames - 1])
    tracks = [RaaTrack(j, joint.name, keys, quat.normalize(rng.normal(size=(len(keys), 4)) * [0.2, 0.2, 0.2, 1]))
              for j, joint in enumerate(ram.joints)]
    return RaaAnimation("anim", frames, True, tracks)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vertices", type=int, default=300_000)
    ap.add_argument("--joints", type=int, default=64)
    ap.add_argument("--influences", type=int, default=4)
    ap.add_argument("--weights", choices=("varied", "patterned"), default="varied")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--anim-frames", type=int, default=0, help="add an animation of this many frames")
    ap.add_argument("--profile", action="store_true", help="also cProfile one import and one export")
    ap.add_argument("--quick", action="store_true", help="30,000 vertices, 2 runs")
    args = ap.parse_args()
    if args.quick:
        args.vertices, args.runs = min(args.vertices, 30_000), min(args.runs, 2)
    import bpy

    from legacy_skin_io import register
    from legacy_skin_io.io.formats import by_id
    from legacy_skin_io.io.rite import write_raa, write_ram
    from legacy_skin_io.operators import pipeline

    register()
    fmt = by_id("rite")
    ctx = bpy.context

    def ours_import(*paths):
        bpy.ops.wm.read_homefile(use_empty=True)
        return timed(lambda: pipeline.load(ctx, fmt, [str(p) for p in paths], options=options))[0]

    from legacy_skin_io.io.import_options import ImportOptions

    options = ImportOptions.of({}, fmt)

    def gltf_export(path):
        return timed(lambda: bpy.ops.export_scene.gltf(filepath=str(path), export_format="GLB"))[0]

    def gltf_import(path):
        bpy.ops.wm.read_homefile(use_empty=True)
        return timed(lambda: bpy.ops.import_scene.gltf(filepath=str(path)))[0]

    with tempfile.TemporaryDirectory(prefix="bench_rite_blender_") as d:
        tmp = Path(d)
        # warm-up on the bundled sample (first calls load modules and add-ons)
        sample = ROOT / "samples" / "rite" / "humanoid.ram"
        ours_import(sample)
        pipeline.save(ctx, fmt, str(tmp / "warm.ram"))
        gltf_export(tmp / "warm.glb")
        gltf_import(tmp / "warm.glb")

        ram = big_ram(args.vertices, args.joints, args.influences, args.weights)
        t_gen, _ = timed(lambda r=ram: write_ram(r, tmp / "big.ram"))
        print(f"big.ram: {len(ram.positions):,} vertices, {len(ram.tri_vertices):,} triangles, "
              f"{len(ram.weight_value):,} weights ({args.weights}), {len(ram.joints)} joints; "
              f"{os.path.getsize(tmp / 'big.ram') / 1e6:.0f} MB (written in {t_gen:.2f} s)")
        inputs = [tmp / "big.ram"]
        if args.anim_frames > 0:
            write_raa(big_raa(ram, args.anim_frames), tmp / "anim.raa")
            inputs.append(tmp / "anim.raa")
            print(f"anim.raa: {args.anim_frames} frames, {len(ram.joints)} tracks keyed every 10 frames")
        del ram
        glb = tmp / "big.glb"
        # one untimed round of all four on the big scene: the first large
        # allocations of a fresh process are the slowest (on the 2-vCPU VM
        # the first import took 2.5 s against 1.9 s later, and the glTF
        # import that follows it reuses the memory it faulted in)
        warm = [ours_import(*inputs), timed(lambda: pipeline.save(ctx, fmt, str(tmp / "out.ram")))[0],
                gltf_export(glb), gltf_import(glb)]
        print(f"untimed first round: rite import {warm[0]:.2f}s, rite export {warm[1]:.2f}s, "
              f"glTF export {warm[2]:.2f}s, glTF import {warm[3]:.2f}s")
        imp_s, exp_s = Sections(IMPORT_SECTIONS), Sections(EXPORT_SECTIONS)
        rows = []
        print(f"{'run':>3} {'rite import':>12} {'glTF import':>12} {'ratio':>6} | "
              f"{'rite export':>12} {'glTF export':>12} {'ratio':>6}")
        for run in range(args.runs):
            last = run == args.runs - 1
            if last:
                imp_s = Sections(IMPORT_SECTIONS)
                exp_s = Sections(EXPORT_SECTIONS)
                with imp_s.watch():
                    t_ri = ours_import(*inputs)
                with exp_s.watch():
                    t_re, _ = timed(lambda: pipeline.save(ctx, fmt, str(tmp / "out.ram")))
            else:
                t_ri = ours_import(*inputs)
                t_re, _ = timed(lambda: pipeline.save(ctx, fmt, str(tmp / "out.ram")))
            t_ge = gltf_export(glb)           # the same scene as our export
            t_gi = gltf_import(glb)
            rows.append((t_ri, t_gi, t_re, t_ge))
            print(f"{run + 1:>3} {t_ri:11.2f}s {t_gi:11.2f}s {t_ri / t_gi:6.2f} | "
                  f"{t_re:11.2f}s {t_ge:11.2f}s {t_re / t_ge:6.2f}", flush=True)
        print(f"glb: {os.path.getsize(glb) / 1e6:.0f} MB")
        print(f"import ratio: {spread([r[0] / r[1] for r in rows])}")
        print(f"export ratio: {spread([r[2] / r[3] for r in rows])}")
        print(f"our import, where the time goes (last run, {rows[-1][0]:.2f} s):")
        print("\n".join(imp_s.report(rows[-1][0])))
        print(f"our export, where the time goes (last run, {rows[-1][2]:.2f} s):")
        print("\n".join(exp_s.report(rows[-1][2])))
        if args.profile:
            bpy.ops.wm.read_homefile(use_empty=True)
            pr = cProfile.Profile()
            pr.runcall(pipeline.load, ctx, fmt, [str(p) for p in inputs], options=options)
            print("cProfile, our import (tottime):")
            print_profile(pr, 20)
            pr = cProfile.Profile()
            pr.runcall(pipeline.save, ctx, fmt, str(tmp / "out.ram"))
            print("cProfile, our export (tottime):")
            print_profile(pr, 20)
    best = [min(r[k] for r in rows) for k in range(4)]
    anim = f", {args.anim_frames}-frame animation" if args.anim_frames > 0 else ""
    print(f"(best of {len(rows)} runs each side; {args.vertices:,} vertices, {args.weights} weights{anim})")
    print(ratio_line("rite import/glTF", best[0], best[1], 1.0))
    print(ratio_line("rite export/glTF", best[2], best[3], 1.0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
