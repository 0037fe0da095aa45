# SPDX-License-Identifier: GPL-3.0-or-later
"""Shared helpers of the benchmarks (not a test): the .X corpus, the RATIO and INFO summary lines,
spreads over repeated runs, and wall-clock sections (functions wrapped in
place for the duration of a measurement, so the figures add up without a
profiler's overhead)."""
from __future__ import annotations

import importlib
import os
import shutil
import statistics
import sys
import time
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
X_CORPUS = ROOT / "tests" / "data" / "x"
#: corpus files that are meant to fail (tests of the readers' errors)
X_BROKEN = {"malformed_skinweights_oob.x", "OV_GetNextToken"}


def x_corpus() -> list[Path]:
    """The readable .X files of the test corpus, in name order."""
    return sorted(p for p in X_CORPUS.rglob("*") if p.suffix.lower() == ".x" and p.name not in X_BROKEN)


def assimp_command() -> tuple[str, dict[str, str]] | None:
    """The ``assimp`` executable and the environment to run it in (None: not found).

    Looked up with this Python's bin directory first: the pinned environment's
    (cmeel-assimp in requirements.txt). cmeel's ``bin/assimp`` is a Python
    script that starts the real executable, ``cmeel.prefix/bin/assimp`` in
    site-packages, with its library directory on LD_LIBRARY_PATH: that one is
    run directly, so that a timing holds assimp's work, not a Python start too
    (0.1 s per call, more than assimp takes on a small file)."""
    env = dict(os.environ)
    exe = shutil.which("assimp", path=os.pathsep.join(filter(None, [str(Path(sys.executable).parent),
                                                                    env.get("PATH")])))
    if exe is None:
        return None
    with open(exe, "rb") as f:
        head = f.read(512)
    if head.startswith(b"#!") and b"cmeel" in head:
        real = sorted(Path(exe).parent.parent.glob("lib/python*/site-packages/cmeel.prefix/bin/assimp"))
        if real:
            lib = real[-1].parent.parent / "lib"
            env["LD_LIBRARY_PATH"] = os.pathsep.join(filter(None, [str(lib), env.get("LD_LIBRARY_PATH")]))
            exe = str(real[-1])
    return exe, env


#: what to say when assimp is not found
ASSIMP_MISSING = ("assimp not found: it belongs to the pinned environment (cmeel-assimp in requirements.txt); "
                  "run through python3.11 tools/run.py")


def ratio_line(name: str, ours: float, baseline: float, target: float) -> str:
    """``RATIO <name>: <ours/baseline> (<ours> s vs <baseline> s; target <= X)`` (collected by run_all.py)."""
    r = ours / baseline if baseline > 0 else float("inf")
    return f"RATIO {name}: {r:.2f} ({ours:.3f} s vs {baseline:.3f} s; target <= {target:g})"


def info_line(name: str, ours: float, baseline: float) -> str:
    """``INFO <name>: <ours/baseline> (...)``: a ratio reported without a target (collected by run_all.py)."""
    r = ours / baseline if baseline > 0 else float("inf")
    return f"INFO {name}: {r:.2f} ({ours:.3f} s vs {baseline:.3f} s; informational)"


def spread(values, fmt: str = "{:.2f}") -> str:
    """"median m (min a .. max b, n runs)"."""
    v = sorted(values)
    if not v:
        return "no runs"
    med = statistics.median(v)
    if len(v) == 1:
        return f"{fmt.format(med)} (1 run)"
    return f"median {fmt.format(med)} (min {fmt.format(v[0])} .. max {fmt.format(v[-1])}, {len(v)} runs)"


def warm_gltf(bpy, tmp: Path) -> None:
    """One untimed glTF export and import (the first one loads the add-on)."""
    bpy.ops.wm.read_homefile(use_empty=True)
    warm = Path(tmp) / "warm.glb"
    bpy.ops.mesh.primitive_cube_add()
    bpy.ops.export_scene.gltf(filepath=str(warm))
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.import_scene.gltf(filepath=str(warm))


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


class Sections:
    """Wall time spent in named functions: ``with sections.watch(): ...``
    replaces ``module.attr`` by a timing wrapper (callers that look the name
    up at call time are measured) and restores it afterwards. Nested
    sections are counted in both (print them indented)."""

    def __init__(self, spec):
        # spec: [(label, "package.module", "attr", depth)]
        self.spec = list(spec)
        self.totals = {label: 0.0 for label, *_ in self.spec}
        self.calls = {label: 0 for label, *_ in self.spec}

    @contextmanager
    def watch(self):
        saved = []
        try:
            for label, modname, attr, _ in self.spec:
                mod = importlib.import_module(modname)
                orig = getattr(mod, attr)

                def wrapper(*a, __orig=orig, __label=label, **kw):
                    t0 = time.perf_counter()
                    try:
                        return __orig(*a, **kw)
                    finally:
                        self.totals[__label] += time.perf_counter() - t0
                        self.calls[__label] += 1

                setattr(mod, attr, wrapper)
                saved.append((mod, attr, orig))
            yield self
        finally:
            for mod, attr, orig in reversed(saved):
                setattr(mod, attr, orig)

    def report(self, total: float, indent: str = "    ") -> list[str]:
        lines = []
        top = 0.0
        for label, _, _, depth in self.spec:
            t = self.totals[label]
            if depth == 0:
                top += t
            if self.calls[label]:
                lines.append(f"{indent}{'  ' * depth}{label:<{34 - 2 * depth}} {t:7.3f} s  {100 * t / total:5.1f} %")
        lines.append(f"{indent}{'(rest)':<34} {total - top:7.3f} s  {100 * (total - top) / total:5.1f} %")
        return lines


def print_profile(profile, limit: int = 20, sort: str = "tottime") -> None:
    import io
    import pstats

    s = io.StringIO()
    pstats.Stats(profile, stream=s).sort_stats(sort).print_stats(limit)
    for line in s.getvalue().splitlines():
        if line.strip():
            print("    " + line.replace(str(ROOT) + "/", "").replace("/.venv/pkgroot/legacy_skin_io/", ""))
