#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""A larger hostile campaign through the operators and the command line
(the CI-sized ones are tests/test_bad_input_*_blender.py).

    python3.11 tools/run.py py tools/fuzz_campaign.py [--count 400] [--exports 462] [--no-cli] [--seed 1] [--batch 50]

Cases:

* imports: every structural attack of tests/bad_input.py, and
  ``--count`` mutants (byte flips, truncations, hostile numbers, dropped or
  repeated lines) of each corpus file and sample;
* exports (tools/fuzz_exports.py): ``--exports`` combinations of a hostile
  scene (a prop scaled to zero, a mesh without faces, a NaN vertex, a scale
  of 1e30, an action a million frames long at 1 fps, odd names, a bone
  scaled to zero, an empty scene ...) and a hostile target (a FIFO, a device
  node, a folder, links to a device, to a file and to nowhere, a missing
  folder, a file as a folder, names of 255 and 256 bytes, a folder where a
  RAA goes ...) through every export operator;
* the command line (unless ``--no-cli``): ``convert``, ``import``,
  ``verify`` and ``export`` with hostile inputs, outputs and option values,
  each in its own process.

Each batch of imports and exports runs in a child process into an empty
scene and checks: the result is FINISHED or a one-line RuntimeError that is
no internal error, a failed import leaves the scene as it was, imported
vertices are finite, what an export wrote reads back, no export replaced
anything but a regular file or left a temporary file (fuzz_exports.py),
each case takes < 30 s, and the child's resident memory stays < 1.5 GB. The
parent reports crashes (a child killed by a signal), hangs (a batch past
its time limit) and every failed check, with the case to reproduce it, and
exits 1 if there was any.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"
sys.path.insert(0, str(Path(__file__).resolve().parent))
import fuzz_exports  # noqa: E402

CASE_SECONDS = 30.0
MEMORY_LIMIT = 1.5 * 1024 ** 3


def cases(count: int, seed: int):
    sys.path.insert(0, str(TESTS))
    from bad_input import mutants, structural_attacks

    for name, data in structural_attacks():
        yield "xfile", f"attack {name}", data
    sources = sorted((TESTS / "data" / "x").glob("*/*.[xX]")) + sorted((TESTS / "data" / "rite").glob("*.ram")) \
        + [ROOT / "samples" / "rite" / "humanoid.ram"]
    for k, src in enumerate(sources):
        if src.stat().st_size > 3_000_000:
            continue
        op = "rite" if src.suffix.lower() == ".ram" else "xfile"
        for i, mutant in enumerate(mutants(seed * 1000 + k, src.read_bytes(), count)):
            yield op, f"mutant {src.name} #{i}", mutant


def child(batch_file: str) -> int:
    """Import every case of the batch; one JSON line per case on stdout."""
    import bpy
    import numpy as np

    import legacy_skin_io

    legacy_skin_io.register()
    batch = json.loads(Path(batch_file).read_text())
    tmp = Path(tempfile.mkdtemp())
    for case in batch:
        if case["kind"] == "export":
            t = time.perf_counter()
            problems = fuzz_exports.run_export(bpy, case, tmp)
            dt = time.perf_counter() - t
            if dt > CASE_SECONDS:
                problems.append(f"took {dt:.1f} s")
            print(json.dumps({"name": case["name"], "seconds": round(dt, 3), "problems": problems}), flush=True)
            continue
        op, name, path = case["op"], case["name"], case["path"]
        bpy.ops.wm.read_homefile(use_empty=True)
        before = {k: sorted(x.name for x in getattr(bpy.data, k)) for k in ("objects", "meshes", "armatures",
                                                                         "materials", "actions", "images")}
        t = time.perf_counter()
        problems = []
        try:
            getattr(bpy.ops.import_scene, op)(filepath=path)
            for o in bpy.data.objects:
                if o.type == "MESH":
                    co = np.empty(3 * len(o.data.vertices), dtype=np.float32)
                    o.data.vertices.foreach_get("co", co)
                    if not np.isfinite(co).all():
                        problems.append("non-finite vertices imported")
        except RuntimeError as err:
            after = {k: sorted(x.name for x in getattr(bpy.data, k)) for k in before}
            if after != before:
                problems.append("a failed import left data behind")
            if "Traceback" in str(err) or len(str(err).strip().splitlines()) > 2:
                problems.append(f"not a one-line error: {str(err)[:200]!r}")
            if "internal error" in str(err):
                problems.append(f"a bug, not a file problem: {str(err)[:200]!r}")
        except Exception as err:  # noqa: BLE001 - anything else is a finding
            problems.append(f"{type(err).__name__}: {err}")
        dt = time.perf_counter() - t
        if dt > CASE_SECONDS:
            problems.append(f"took {dt:.1f} s")
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        if rss > MEMORY_LIMIT:
            problems.append(f"resident memory {rss / 2**20:.0f} MB")
        print(json.dumps({"name": name, "seconds": round(dt, 3), "problems": problems}), flush=True)
    del tmp
    legacy_skin_io.unregister()      # bpy 4.5 crashes at exit with an add-on left registered
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--count", type=int, default=200, help="mutants per source file (default 200)")
    ap.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    ap.add_argument("--batch", type=int, default=50, help="cases per child process (default 50)")
    ap.add_argument("--exports", type=int, default=len(fuzz_exports.SCENES) * len(fuzz_exports.TARGETS)
                    * len(fuzz_exports.EXPORTS), help="export cases (default: every scene x target x operator)")
    ap.add_argument("--no-cli", action="store_true", help="leave out the command-line cases")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        return child(args.child)
    work = Path(tempfile.mkdtemp(prefix="lsio-fuzz-"))
    all_cases: list[dict] = []
    for i, (op, name, data) in enumerate(cases(args.count, args.seed)):
        p = work / f"case{i}{'.ram' if op == 'rite' else '.x'}"
        p.write_bytes(data)
        all_cases.append({"kind": "import", "op": op, "name": name, "path": str(p)})
    all_cases += list(fuzz_exports.export_cases(args.exports, args.seed))
    findings, done, slowest = [], 0, (0.0, "")
    t0 = time.time()
    for start in range(0, len(all_cases), args.batch):
        batch = all_cases[start:start + args.batch]
        bf = work / "batch.json"
        bf.write_text(json.dumps(batch))
        try:
            proc = subprocess.run([sys.executable, __file__, "--child", str(bf)], capture_output=True, text=True,
                                  timeout=CASE_SECONDS * len(batch) + 60, cwd=ROOT,
                                  env=dict(os.environ))
        except subprocess.TimeoutExpired:
            findings.append((batch[0]["name"], "batch hung past its time limit"))
            continue
        seen = set()
        for line in proc.stdout.splitlines():
            if not line.startswith("{"):
                continue
            r = json.loads(line)
            seen.add(r["name"])
            done += 1
            slowest = max(slowest, (r["seconds"], r["name"]))
            for p in r["problems"]:
                findings.append((r["name"], p))
        if proc.returncode != 0:
            crashed = next((c for c in batch if c["name"] not in seen), batch[-1])
            findings.append((crashed["name"], f"child exited with {proc.returncode}: {proc.stderr[-300:]!r}"))
        print(f"{done}/{len(all_cases)} cases, {len(findings)} findings, {time.time() - t0:.0f} s", flush=True)
    if not args.no_cli:
        cli = list(fuzz_exports.cli_cases(work))
        for k, (name, argv, folder) in enumerate(cli):
            t = time.perf_counter()
            problems = fuzz_exports.run_cli(name, argv, folder, seconds=120.0)
            dt = time.perf_counter() - t
            done += 1
            slowest = max(slowest, (dt, name))
            findings += [(f"cli {name}", p) for p in problems]
            if (k + 1) % 20 == 0 or k + 1 == len(cli):
                print(f"command line: {k + 1}/{len(cli)} cases, {len(findings)} findings, {time.time() - t0:.0f} s",
                      flush=True)
    print(f"slowest case: {slowest[1]} ({slowest[0]:.2f} s)")
    for name, problem in findings:
        print(f"FINDING {name}: {problem}")
    print(f"{done} passed, {len(findings)} failed")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
