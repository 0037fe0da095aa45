# SPDX-License-Identifier: GPL-3.0-or-later
"""Frame-numbered .X timelines written back with a one-timeline target,
checked frame for frame: for held-out files the repository cannot carry
(FPS Creator's stock characters, whose licence allows no redistribution).

    python3.11 tools/run.py py tools/timeline_round_trip.py [--target DARKBASIC] FILE.x ...

For each file: read (Automatic time base; its frames are its key times),
written with the target into a temporary folder, read back; prints the
written timeline's frames, the AnimationSet and key structure, and the
largest distance between the two at every frame of the timeline, both
evaluated by the core, as a fraction of the model size."""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

from legacy_skin_io.io.convert import convert
from legacy_skin_io.io.errors import Warnings
from legacy_skin_io.io.formats import by_id
from legacy_skin_io.io.xfile.reader import read_xfile
from legacy_skin_io.scene import evaluate as ev


def _meshes(xf) -> list:
    return list(xf.meshes) + [m for f in xf.all_frames() for m in f.meshes]


def check(path: Path, target: str, out_dir: Path) -> str:
    out = out_dir / (path.stem + ".x")
    w = Warnings()
    convert([str(path)], str(out), write_options={"target": target}, warnings=w)
    fmt = by_id("xfile")
    src = fmt.read_scene([str(path)], warnings=Warnings())
    got = fmt.read_scene([str(out)], warnings=Warnings(), ranges=str(out.with_suffix(".none")))
    if not src.clips:
        return f"{path.name}: no animation"
    xf = read_xfile(out)
    aset = xf.animation_sets[0]
    times = {tuple(k.times[[0, -1]].tolist()) + (len(k.times),) for a in aset.animations for k in a.keys}
    kinds = sorted({k.key_type for a in aset.animations for k in a.keys})
    lo, hi = src.clips[0].start, src.clips[0].end
    frames = np.arange(lo, hi + 1)
    dups = [m.duplicates if m.duplicates is not None else np.arange(len(m.positions)) for m in _meshes(xf)]
    by_name = {m.name: i for i, m in enumerate(src.meshes)}
    mesh = np.concatenate([np.full(len(d), by_name[m.name]) for d, m in zip(dups, got.meshes)])
    vertex = np.concatenate(dups)
    counts = np.concatenate(([0], np.cumsum([len(m.positions) for m in src.meshes])))
    size = ev.size(src)
    worst, at = 0.0, lo
    for f0 in range(0, len(frames), 256):
        block = frames[f0:f0 + 256]
        for f, a, b in zip(block, ev.evaluate(src, src.clips[0], block), ev.evaluate(got, got.clips[0], block)):
            err = float(np.linalg.norm(a[counts[mesh] + vertex] - b, axis=1).max()) / size
            if err > worst:
                worst, at = err, f
    sets = [s.name for s in xf.animation_sets]
    return (f"{path.name}: {len(src.clips)} set(s), timeline {lo:g}..{hi:g} -> sets {sets}, key types {kinds}, "
            f"tracks (first, last, keys) {sorted(times)[:3]}, "
            f"AnimTicksPerSecond {xf.anim_ticks_per_second}; worst {worst:.3g} of the model size at frame {at:g}; "
            f"{len(w)} warning(s){': ' + w[0] if len(w) else ''}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+", type=Path)
    ap.add_argument("--target", default="DARKBASIC", choices=("DARKBASIC", "IRRLICHT"))
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        for p in args.files:
            try:
                print(check(p, args.target, Path(tmp)), flush=True)
            except Exception as err:        # one line per file that fails
                print(f"{p.name}: FAILED {type(err).__name__}: {err}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
