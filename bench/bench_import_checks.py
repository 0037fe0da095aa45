#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the import's own checks cost (not a test): the self-check (Blender's
default pose against ``scene.evaluate``, ``operators/selfcheck.py``) and the
automatic up axis (``scene/orientation.py``), each timed against the same
import without it, in the same run.

    python3.11 tools/run.py py bench/bench_import_checks.py [--vertices 300000] [--runs 3]
        [--anim-frames 100] [--quick]

* self-check: the grid of ``bench_rite_blender.py`` (300,000 vertices, 4
  weights each) on the bundled humanoid's skeleton (26 joints), with an
  animation, imported with
  ``operators.pipeline.load`` with ``self_check`` on and off, alternately;
* automatic up axis: the same scene written as a binary .X lying on its
  back (Up -Z, Forward Y: a 3ds Max export), imported with Manual
  Orientation off (it stands up: the parsed file is converted twice) and on
  with the same axes.

Each pair runs the two imports back to back ``--runs`` times (alternating
which goes first); the RATIO is the median pair's. Last lines:

    RATIO self-check on/off: ...          (target <= 1.05)
    RATIO automatic/manual up axis: ...   (target <= 1.05)
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import Sections, ratio_line, spread, timed  # noqa: E402
from bench_rite_blender import big_raa, big_ram  # noqa: E402

PKG = "legacy_skin_io"
SECTIONS = [
    ("read_scene (RiTE)", f"{PKG}.io.rite.adapter", "read_scene", 0),
    ("read_scene (.X)", f"{PKG}.io.xfile.adapter", "read_scene", 0),
    ("orientation.detect", f"{PKG}.scene.orientation", "detect", 1),
    ("builder.build", f"{PKG}.operators.builder", "build", 0),
    ("self-check", f"{PKG}.operators.selfcheck", "run", 1),
]


def big_character(n_vertices: int):
    """The bundled humanoid's skeleton (a character: the automatic up axis
    finds its legs) with ``bench_rite_blender``'s grid of ``n_vertices``
    vertices, stretched over the humanoid's height and weighted to its
    joints."""
    import dataclasses

    import numpy as np

    from legacy_skin_io.io.rite import read_ram

    human = read_ram(Path(__file__).resolve().parents[1] / "samples" / "rite" / "humanoid.ram")
    grid = big_ram(n_vertices, n_joints=len(human.joints))
    lo, hi = human.positions.min(0), human.positions.max(0)
    pos = lo + (grid.positions - grid.positions.min(0)) / np.ptp(grid.positions, axis=0).clip(1e-9) * (hi - lo)
    return dataclasses.replace(grid, joints=human.joints, positions=pos, joint_ids=None)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vertices", type=int, default=300_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--anim-frames", type=int, default=100)
    ap.add_argument("--quick", action="store_true", help="30,000 vertices, 2 runs")
    args = ap.parse_args()
    if args.quick:
        args.vertices, args.runs = min(args.vertices, 30_000), min(args.runs, 2)
    import bpy

    from legacy_skin_io import register
    from legacy_skin_io.io.formats import by_id
    from legacy_skin_io.io.import_options import ImportOptions
    from legacy_skin_io.io.rite import write_raa, write_ram
    from legacy_skin_io.operators import pipeline

    register()
    rite, xfile = by_id("rite"), by_id("xfile")
    ctx = bpy.context

    def load(fmt, paths, check=True, axes=None, **reader_options):
        bpy.ops.wm.read_homefile(use_empty=True)
        opts = ImportOptions(key_every_frame=True, self_check=check)
        return timed(lambda: pipeline.load(ctx, fmt, [str(p) for p in paths], axes=axes, options=opts,
                                           reader_options=reader_options))[0]

    def pair(label, a, b):
        """The median of the ratios of back-to-back runs (their order
        alternating): on a busy machine the load drifts between runs far
        more than within a pair."""
        a(), b()            # untimed: the first large allocations are the slowest
        rows = []
        for i in range(args.runs):
            if i % 2:
                y, x = b(), a()
            else:
                x, y = a(), b()
            rows.append((x, y))
            print(f"  {label}: {x:.2f}s vs {y:.2f}s", flush=True)
        ratios = sorted(x / y for x, y in rows)
        print(f"  ratio {spread(ratios, '{:.3f}')}")
        mid = len(rows) // 2
        return sorted(rows, key=lambda r: r[0] / r[1])[mid]

    with tempfile.TemporaryDirectory(prefix="bench_import_checks_") as d:
        tmp = Path(d)
        ram = big_character(args.vertices)
        write_ram(ram, tmp / "big.ram")
        inputs = [tmp / "big.ram"]
        if args.anim_frames > 0:
            write_raa(big_raa(ram, args.anim_frames), tmp / "anim.raa")
            inputs.append(tmp / "anim.raa")
        del ram
        print(f"self-check: {args.vertices:,} vertices, {args.anim_frames}-frame animation")
        on, off = pair("on/off", lambda: load(rite, inputs, True), lambda: load(rite, inputs, False))
        sec = Sections(SECTIONS)
        with sec.watch():
            total = load(rite, inputs, True)
        print("\n".join(sec.report(total)))

        # the same scene as a .X file lying on its back (Up -Z, Forward Y in the importer's terms)
        scene = rite.read_scene(inputs[:1])
        lying = xfile.axes("Y", "-Z")
        xfile.write_scene(scene, tmp / "lying.x", axes=lying, storage="binary")
        del scene
        auto = xfile.read_scene([tmp / "lying.x"])
        print(f"automatic up axis: {auto.source.orientation.phrase()} ({auto.source.orientation.evidence})")
        del auto
        a_on, a_off = pair("automatic/manual",
                           lambda: load(xfile, [tmp / "lying.x"]),
                           lambda: load(xfile, [tmp / "lying.x"], axes=lying, manual_orientation=True))
        sec = Sections(SECTIONS)
        with sec.watch():
            total = load(xfile, [tmp / "lying.x"])
        print("\n".join(sec.report(total)))
    print(ratio_line("self-check on/off", on, off, 1.05))
    print(ratio_line("automatic/manual up axis", a_on, a_off, 1.05))
    return 0


if __name__ == "__main__":
    sys.exit(main())
