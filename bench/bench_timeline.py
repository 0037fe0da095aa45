#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Import time against timeline length: the .X importer on long animations
against assimp + Blender's glTF importer, in the same run (not a test).

    python3.11 tools/run.py py bench/bench_timeline.py [--runs N] [--quick] [--profile]

The files are ``tiny_4anim.x`` (48 frames, 4 AnimationSets, keys every 160
ticks) written again with ``AnimTicksPerSecond`` 2400, 240 and 24: at
24 fps its four sets then last 974, 9,744 and 97,440 frames in all (the
last is the file read at one tick per frame, the "100,000-frame" case of a
D3DX file whose ticks are taken for frames).

  ours:      ``operators.pipeline.load`` with the importer's defaults (the
             animation keyed with DirectX's exact playback)
  baseline:  ``assimp export FILE x.glb`` (a process) + ``bpy.ops.import_scene.gltf``

Per length: both times (best of N, alternating; wall clock, and our
process's CPU time, which a machine busy with other work inflates less),
and our speed in bone-frames per second (the frames of each set times the
bones it animates, summed over the sets; target >= 500,000). Last lines,
at the longest timeline: ours against the baseline, informational (the
baseline keys the file's keys only, one key per 160 frames, so that Blender
plays DirectX's slerp between them per component and misses it; ours plays
it within 1e-7 of the model size: not the same work, so no target), and
against the time 500,000 bone-frames per second allow (the target):

    INFO xfile import 97k-frame timeline/assimp+glTF: ...   (informational)
    RATIO xfile import 97k-frame timeline/500k bone-frames per s: ...   (target <= 1.0)
"""
from __future__ import annotations

import argparse
import cProfile
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import X_CORPUS, assimp_command, info_line, print_profile, ratio_line, spread, warm_gltf  # noqa: E402

TINY = X_CORPUS / "directx-sdk" / "tiny_4anim.x"
#: AnimTicksPerSecond of the written files: 974, 9,744, 97,440 frames at 24 fps
RATES = (2400, 240, 24)
TARGET_BONE_FRAMES = 500_000


def write_files(tmp: Path, rates) -> list[Path]:
    from legacy_skin_io.io.xfile import read_xfile, write_xfile

    xf = read_xfile(str(TINY))
    out = []
    for tps in rates:
        xf.anim_ticks_per_second = tps
        p = tmp / f"tiny_{tps}tps.x"
        write_xfile(xf, p, storage="binary")
        out.append(p)
    return out


def bone_frames(built, fps: float) -> tuple[int, int]:
    """(frames, bone-frames) of the imported sets: each set's whole frames
    times the bones it animates."""
    frames = bones = 0
    for _, _, clip in built.actions:
        f0, f1 = clip.frame_range(fps)
        n = int(round(f1 - f0)) + 1
        keyed = sum(1 for j in built.bone_names if clip.animated[j])
        frames += n
        bones += n * keyed
    return frames, bones


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="the two shorter timelines, 1 run")
    ap.add_argument("--profile", action="store_true", help="cProfile of our import of the longest timeline")
    args = ap.parse_args()
    rates = RATES[:2] if args.quick else RATES
    if args.quick:
        args.runs = 1
    assimp = assimp_command()
    have_assimp = assimp is not None
    import bpy

    from legacy_skin_io import register
    from legacy_skin_io.io.formats import by_id
    from legacy_skin_io.io.import_options import ImportOptions
    from legacy_skin_io.operators import pipeline

    register()
    fmt = by_id("xfile")
    defaults = ImportOptions.of({}, fmt)        # File > Import's options at the format's defaults
    print(f"{'file':18} {'frames':>7} {'bone-frames':>11} {'ours':>9} {'ours CPU':>9} {'bone-frames/s':>13} "
          f"{'assimp+glTF':>11} {'ratio':>6}")
    last = None
    with tempfile.TemporaryDirectory(prefix="bench_timeline_") as tmp:
        files = write_files(Path(tmp), rates)
        if have_assimp:
            warm_gltf(bpy, Path(tmp))
        for p in files:
            glb = p.with_suffix(".glb")
            ours, cpu, base, ratios = [], [], [], []
            counts = (0, 0)
            for _ in range(args.runs):
                bpy.ops.wm.read_homefile(use_empty=True)
                fps = bpy.context.scene.render.fps / bpy.context.scene.render.fps_base
                t0, c0 = time.perf_counter(), time.process_time()
                built = pipeline.load(bpy.context, fmt, [str(p)], options=defaults)
                ours.append(time.perf_counter() - t0)
                cpu.append(time.process_time() - c0)
                counts = bone_frames(built, fps)
                del built
                if have_assimp:
                    bpy.ops.wm.read_homefile(use_empty=True)
                    t0 = time.perf_counter()
                    subprocess.run([assimp[0], "export", str(p), str(glb)], capture_output=True, check=True,
                                   env=assimp[1])
                    bpy.ops.import_scene.gltf(filepath=str(glb))
                    base.append(time.perf_counter() - t0)
                    ratios.append(ours[-1] / base[-1])
            o = min(ours)
            b = min(base) if base else float("nan")
            print(f"{p.name:18} {counts[0]:7d} {counts[1]:11d} {o:8.2f}s {min(cpu):8.2f}s {counts[1] / o:13,.0f} "
                  f"{b:10.2f}s {o / b:6.2f}  {spread(ratios) if ratios else ''}", flush=True)
            last = (o, b, counts, min(cpu))
        if args.profile:
            bpy.ops.wm.read_homefile(use_empty=True)
            pr = cProfile.Profile()
            pr.enable()
            pipeline.load(bpy.context, fmt, [str(files[-1])], options=defaults)
            pr.disable()
            print_profile(pr, 25, "cumtime")
    assert last is not None
    o, b, counts, c = last
    print(f"ours: pipeline.load (defaults); baseline: assimp export (process) + glTF import; best of {args.runs}")
    print(f"longest timeline: {counts[0]:,} frames, {counts[1]:,} bone-frames in {o:.2f} s = "
          f"{counts[1] / o:,.0f} bone-frames per second ({counts[1] / c:,.0f} per CPU second; "
          f"target >= {TARGET_BONE_FRAMES:,})")
    label = f"xfile import {counts[0] / 1000:.0f}k-frame timeline/assimp+glTF"
    if not have_assimp:
        print(f"INFO {label}: n/a (assimp not found)")
    else:
        print(info_line(label, o, b))
    print(ratio_line(f"xfile import {counts[0] / 1000:.0f}k-frame timeline/500k bone-frames per s", o,
                     counts[1] / TARGET_BONE_FRAMES, 1.0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
