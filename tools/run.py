#!/usr/bin/env python3.11
"""One entry point for developers, CI and users of the repository.

    python3.11 tools/run.py demo     # main job on the bundled samples
    python3.11 tools/run.py test     # the whole test suite
    python3.11 tools/run.py build    # build + validate the extension zip
    python3.11 tools/run.py bench    # benchmarks (prints ratios)
    python3.11 tools/run.py check    # linter (ruff) and type check of operators/, cli/ (mypy, fake-bpy-module)
    python3.11 tools/run.py py ...   # run python inside the project environment

Each command creates the environment it needs on first use: a virtual
environment in ``.venv`` (``.venv-bpy4.5`` when ``LSIO_BPY=4.5``) with the
pinned requirements, and the repository made importable as the package
``legacy_skin_io`` (so ``python -m legacy_skin_io`` works inside it).
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BPY_SERIES = os.environ.get("LSIO_BPY", "5.0")
BPY_PINS = {"5.0": "bpy==5.0.1", "4.5": "bpy>=4.5,<4.6"}


def venv_dir() -> Path:
    return ROOT / (".venv" if BPY_SERIES == "5.0" else f".venv-bpy{BPY_SERIES}")


def venv_python() -> Path:
    return venv_dir() / "bin" / "python"


def _requirements() -> list[str]:
    reqs = []
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        if line.startswith("bpy"):
            if BPY_SERIES not in BPY_PINS:
                sys.exit(f"LSIO_BPY must be one of {sorted(BPY_PINS)}, not {BPY_SERIES!r}")
            line = BPY_PINS[BPY_SERIES]
        reqs.append(line)
    return reqs


def ensure_env() -> Path:
    """Create the virtual environment with the pinned requirements if needed."""
    if sys.version_info[:2] != (3, 11):
        sys.exit("tools/run.py needs Python 3.11 (the bpy wheel requires it): run it with python3.11")
    vdir = venv_dir()
    py = venv_python()
    reqs = _requirements()
    stamp = vdir / ".lsio-requirements"
    wanted = "\n".join(reqs)
    if not py.exists():
        print(f"[run] creating {vdir.name} (first use)", flush=True)
        subprocess.check_call([sys.executable, "-m", "venv", str(vdir)])
    if not stamp.exists() or stamp.read_text() != wanted:
        print(f"[run] installing {' '.join(reqs)}", flush=True)
        subprocess.check_call([str(py), "-m", "pip", "install", "--disable-pip-version-check", "-q", *reqs])
        stamp.write_text(wanted)
    # Make the repository importable as ``legacy_skin_io`` inside the venv.
    pkgroot = vdir / "pkgroot"
    pkgroot.mkdir(exist_ok=True)
    link = pkgroot / "legacy_skin_io"
    if not (link.is_symlink() and link.resolve() == ROOT):
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(ROOT, target_is_directory=True)
    site = subprocess.check_output(
        [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], text=True
    ).strip()
    pth = Path(site) / "legacy_skin_io_dev.pth"
    if not pth.exists() or pth.read_text().strip() != str(pkgroot):
        pth.write_text(str(pkgroot) + "\n")
    return py


def run_py(args: list[str]) -> int:
    py = ensure_env()
    env = dict(os.environ)
    env.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    # the environment's commands (assimp, from cmeel-assimp) first on PATH, as in an activated venv
    env["PATH"] = os.pathsep.join([str(py.parent), *filter(None, [env.get("PATH")])])
    return subprocess.call([str(py), *args], cwd=ROOT, env=env)


#: the checks against readers of other programs, (word in their test files' names, the script saying
#: whether they can run here)
READER_CHECKS = (("irrlicht", "irrlicht_reading.py"), ("gltf", "gltf_reading.py"))


def reader_notes(paths: list[str], rest: list[str]) -> list[str]:
    """One line for each check against another program's reader (Irrlicht: tests/irrlicht_reading.py; the
    glTF Validator and three.js under Node: tests/gltf_reading.py) that cannot run here, saying why; none
    for those that can, or that the tests asked for do not include."""
    if "--blender-only" in rest:
        return []
    out = []
    for word, script in READER_CHECKS:
        if paths and not any(word in p or (ROOT / p).is_dir() for p in paths):
            continue
        done = subprocess.run([str(ensure_env()), str(ROOT / "tests" / script)], cwd=ROOT, capture_output=True,
                              text=True)
        if done.returncode != 0:
            said = done.stdout.strip().splitlines()
            out.append(f"[run] {said[-1]}" if said else f"[run] {script}: status unknown "
                                                         f"({done.stderr.strip()[-300:]})")
    return out


def check(rest: list[str]) -> int:
    """ruff over the repository, mypy over operators/ and cli/ (and the
    bpy-free packages they import) against fake-bpy-module's stubs, in
    ``.venv-check``."""
    if sys.version_info[:2] != (3, 11):
        sys.exit("tools/run.py needs Python 3.11: run it with python3.11")
    vdir = ROOT / ".venv-check"
    py = vdir / "bin" / "python"
    wanted = (ROOT / "requirements-dev.txt").read_text()
    stamp = vdir / ".lsio-requirements"
    if not py.exists():
        print("[run] creating .venv-check (first use)", flush=True)
        subprocess.check_call([sys.executable, "-m", "venv", str(vdir)])
    if not stamp.exists() or stamp.read_text() != wanted:
        print("[run] installing the developer checks (requirements-dev.txt)", flush=True)
        subprocess.check_call([str(py), "-m", "pip", "install", "--disable-pip-version-check", "-q",
                               "-r", str(ROOT / "requirements-dev.txt")])
        stamp.write_text(wanted)
    pkgroot = vdir / "pkgroot"
    pkgroot.mkdir(exist_ok=True)
    link = pkgroot / "legacy_skin_io"
    if not (link.is_symlink() and link.resolve() == ROOT):   # a moved or copied checkout checks itself
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(ROOT, target_is_directory=True)
    code = subprocess.call([str(py), "-m", "ruff", "check", "."], cwd=ROOT)
    env = dict(os.environ, MYPYPATH=str(pkgroot))
    code |= subprocess.call([str(py), "-m", "mypy", "--no-error-summary" if "-q" in rest else "--pretty",
                             "-p", "legacy_skin_io.operators", "-p", "legacy_skin_io.cli"], cwd=pkgroot, env=env)
    print("check:", "PASS" if code == 0 else "FAIL", flush=True)
    return code


def main(argv: list[str]) -> int:
    if not argv or argv[0] in {"-h", "--help", "help"}:
        print(__doc__)
        return 0
    cmd, rest = argv[0], argv[1:]
    if cmd == "test":
        paths = [a for a in rest if not a.startswith("-")]
        notes = reader_notes(paths, rest)
        # -rfEsx: failures and errors (pytest's default) and every skip and xfail listed with its reason in
        # the summary (an -r... of the caller replaces it)
        code = run_py(["-m", "pytest", "-p", "no:cacheprovider", "-rfEsx", *([] if paths else ["tests"]), *rest])
        for note in notes:
            print(note, flush=True)
        return code
    if cmd == "build":
        return run_py([str(ROOT / "tools" / "build.py"), *rest])
    if cmd == "demo":
        return run_py([str(ROOT / "tools" / "demo.py"), *rest])
    if cmd == "bench":
        return run_py([str(ROOT / "bench" / "run_all.py"), *rest])
    if cmd == "check":
        return check(rest)
    if cmd == "py":
        return run_py(rest)
    print(f"unknown command {cmd!r}\n{__doc__}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
