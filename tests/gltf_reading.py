# SPDX-License-Identifier: GPL-3.0-or-later
"""What the Khronos glTF Validator and three.js make of written glTF files,
run under Node (``tests/gltf/check.mjs``; its input and output are
documented there).

The npm packages (``tests/gltf/package.json``, pinned by its lock file) are
installed once with ``npm ci`` into ``.venv-node/`` of the repository (git
ignores it), again whenever the lock file changes. :func:`status` says
whether Node and npm are here; the pytest fixture ``gltf_readers`` in
``conftest.py`` skips the checks when they are not (or the install fails),
saying why in one line, and fails instead under ``LSIO_REQUIRE_NODE=1``
(CI). ``python tests/gltf_reading.py`` prints that status (``tools/run.py
test`` does, when the checks cannot run).

:func:`read` runs many files in one Node process and returns, per file,
the validator's report and three.js's vertex positions and node world
matrices at the times asked for.
"""
from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent / "gltf"
ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / ".venv-node"
INSTALL = "install Node.js 18 or later with npm (apt install nodejs npm)"
TIMEOUT = 1800.0


class GltfReadersError(RuntimeError):
    """The Node tools could not be installed or run (the message says why)."""


def status() -> tuple[bool, str]:
    """(True, "") when Node and npm are here, else (False, one line saying why)."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        return False, f"{'node' if node is None else 'npm'} not found: {INSTALL}"
    try:
        version = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=60).stdout.strip()
    except (OSError, subprocess.SubprocessError) as err:
        return False, f"node does not run ({err})"
    try:
        major = int(version.lstrip("v").split(".")[0])
    except ValueError:
        return False, f"node --version says {version!r}: {INSTALL}"
    if major < 18:
        return False, f"node {version} is too old: {INSTALL}"
    return True, ""


def _stamp() -> str:
    h = hashlib.sha256()
    for name in ("package.json", "package-lock.json"):
        h.update((HERE / name).read_bytes())
    return h.hexdigest()


def install() -> Path:
    """The folder holding ``node_modules`` with the pinned packages and
    ``check.mjs`` (installed with ``npm ci`` on first use, or when the lock
    file changed)."""
    ok, why = status()
    if not ok:
        raise GltfReadersError(why)
    stamp = CACHE / ".lsio-stamp"
    if not (stamp.is_file() and stamp.read_text() == _stamp() and (CACHE / "node_modules").is_dir()):
        CACHE.mkdir(exist_ok=True)
        for name in ("package.json", "package-lock.json"):
            shutil.copyfile(HERE / name, CACHE / name)
        done = subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=CACHE,
                              capture_output=True, text=True, timeout=TIMEOUT)
        if done.returncode != 0:
            raise GltfReadersError(f"npm ci failed in {CACHE}: {(done.stderr or done.stdout).strip()[-500:]}")
        stamp.write_text(_stamp())
    shutil.copyfile(HERE / "check.mjs", CACHE / "check.mjs")
    return CACHE


@dataclass
class Run:
    """One animation (-1: none, the default pose) at some times (seconds)."""

    animation: int
    times: list[float]


@dataclass
class Read:
    """What the validator and three.js made of one file."""

    path: Path
    errors: int = 0
    warnings: int = 0
    messages: list[str] = field(default_factory=list)
    stand_ins: int = 0                      # images missing on disk, given to the validator as stand-ins
    prims: list[tuple[int, int, int]] = field(default_factory=list)    # (mesh, primitive, vertices)
    nodes: list[int] = field(default_factory=list)
    positions: list[list[np.ndarray]] = field(default_factory=list)   # per run: (T, V_p, 3) per primitive
    worlds: list[np.ndarray] = field(default_factory=list)            # per run: (T, N, 4, 4) node world matrices
    error: str = ""


def read(files: list[tuple[Path, list[Run]]]) -> list[Read]:
    """Validate and play ``files`` (each with its runs) in one Node process."""
    folder = install()
    with tempfile.TemporaryDirectory(prefix="gltf_reading_") as tmp:
        jobs = [{"file": str(Path(p).resolve()), "out": str(Path(tmp) / f"job{i}"),
                 "runs": [{"animation": r.animation, "times": list(map(float, r.times))} for r in runs]}
                for i, (p, runs) in enumerate(files)]
        (Path(tmp) / "jobs.json").write_text(json.dumps(jobs))
        done = subprocess.run(["node", str(folder / "check.mjs"), str(Path(tmp) / "jobs.json")], cwd=folder,
                              capture_output=True, text=True, timeout=TIMEOUT)
        if done.returncode != 0:
            raise GltfReadersError(f"check.mjs failed: {done.stderr.strip()[-2000:]}")
        out = []
        for (p, runs), job, line in zip(files, jobs, done.stdout.splitlines()):
            d = json.loads(line)
            r = Read(Path(p), error=d.get("error", ""))
            v = d.get("validator")
            if v:
                r.errors, r.warnings, r.messages, r.stand_ins = v["errors"], v["warnings"], v["messages"], v["standIns"]
            if not r.error and runs:
                r.prims = [tuple(x) for x in d["prims"]]
                r.nodes = list(d["nodes"])
                counts = [c for _, _, c in r.prims]
                per = 3 * sum(counts) + 16 * len(r.nodes)
                for k, run in enumerate(runs):
                    data = np.fromfile(f"{job['out']}.{k}.f64", dtype=np.float64).reshape(len(run.times), per)
                    cut = np.cumsum([0] + [3 * c for c in counts])
                    r.positions.append([data[:, a:b].reshape(len(run.times), -1, 3) for a, b in zip(cut, cut[1:])])
                    r.worlds.append(np.swapaxes(data[:, cut[-1]:].reshape(len(run.times), -1, 4, 4), -1, -2))
            out.append(r)
        if len(out) != len(files):
            raise GltfReadersError(f"check.mjs answered {len(out)} of {len(files)} files: {done.stderr[-2000:]}")
        return out


if __name__ == "__main__":
    ok, why = status()
    print("glTF checks (Node: gltf-validator, three.js): " + ("can run" if ok else f"not run: {why}"))
    sys.exit(0 if ok else 1)
