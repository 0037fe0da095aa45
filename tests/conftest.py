# SPDX-License-Identifier: GPL-3.0-or-later
"""Shared fixtures.

Blender-side tests use ``bpy_ext``: it builds the extension zip with
Blender's own tool, points BLENDER_USER_RESOURCES at a temporary directory,
imports bpy and installs the zip into the user repository, enabled, exactly
as a user would. ``bpy`` is imported nowhere else in the test process.
"""
from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parent / "data"
SAMPLES = ROOT / "samples"
EXT_MODULE = "bl_ext.user_default.legacy_skin_io"

# The pinned environment's commands (``assimp``, from cmeel-assimp) live beside its python: first on PATH,
# as in an activated venv, also when pytest runs as ``.venv/bin/python -m pytest`` (tests/assimp_reading.py).
_BIN = str(Path(sys.executable).parent)
if os.environ.get("PATH", "").split(os.pathsep)[0] != _BIN:
    os.environ["PATH"] = os.pathsep.join([_BIN, *filter(None, [os.environ.get("PATH")])])


def run_cli(*args, timeout: float = 300, preexec_fn=None) -> subprocess.CompletedProcess:
    """``python -m legacy_skin_io ARGS`` from the repository, its output captured."""
    return subprocess.run([sys.executable, "-m", "legacy_skin_io", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout, preexec_fn=preexec_fn)

@pytest.fixture(scope="session")
def bpy_ext(tmp_path_factory):
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import build as build_tool
    finally:
        sys.path.pop(0)
    zip_path = build_tool.build(tmp_path_factory.mktemp("dist"))
    os.environ["BLENDER_USER_RESOURCES"] = str(tmp_path_factory.mktemp("blender_user"))
    import bpy

    result = bpy.ops.extensions.package_install_files(
        filepath=str(zip_path), repo="user_default", enable_on_install=True)
    assert result == {"FINISHED"}
    assert EXT_MODULE in bpy.context.preferences.addons.keys()
    return bpy


@pytest.fixture
def ext(bpy_ext):
    """The installed extension package (``bl_ext.user_default.legacy_skin_io``)."""
    return importlib.import_module(EXT_MODULE)


@pytest.fixture
def bpy(bpy_ext):
    """bpy with an empty scene (extensions stay enabled)."""
    bpy_ext.ops.wm.read_homefile(use_empty=True)
    return bpy_ext


@pytest.fixture(scope="session")
def irrlicht(tmp_path_factory):
    """``tests/irrlicht_reading.py`` with its tool (irr_dump, against the
    system's Irrlicht) built once per session. Where Irrlicht cannot be used
    the test is skipped, saying why; under ``LSIO_REQUIRE_IRRLICHT=1`` (CI)
    it fails instead."""
    import irrlicht_reading

    ok, why = irrlicht_reading.status()
    if not ok:
        if os.environ.get("LSIO_REQUIRE_IRRLICHT") == "1":
            pytest.fail(f"LSIO_REQUIRE_IRRLICHT=1, but Irrlicht cannot be used here: {why}", pytrace=False)
        pytest.skip(f"Irrlicht checks not run: {why}")
    irrlicht_reading.build(tmp_path_factory.mktemp("irrlicht"))
    return irrlicht_reading


@pytest.fixture(scope="session")
def gltf_readers():
    """``tests/gltf_reading.py`` with its Node packages (the glTF Validator,
    three.js) installed once. Where Node cannot be used the test is
    skipped, saying why in one line; under ``LSIO_REQUIRE_NODE=1`` (CI) it
    fails instead."""
    import gltf_reading

    ok, why = gltf_reading.status()
    if ok:
        try:
            gltf_reading.install()
        except (gltf_reading.GltfReadersError, OSError, subprocess.SubprocessError) as err:
            ok, why = False, str(err).splitlines()[0] if str(err) else type(err).__name__
    if not ok:
        if os.environ.get("LSIO_REQUIRE_NODE") == "1":
            pytest.fail(f"LSIO_REQUIRE_NODE=1, but the glTF checks cannot run here: {why}", pytrace=False)
        pytest.skip(f"glTF checks (Node: gltf-validator, three.js) not run: {why}")
    return gltf_reading


BLENDER_FIXTURES = {"bpy", "bpy_ext", "ext"}


def pytest_addoption(parser):
    parser.addoption("--blender-only", action="store_true",
                     help="run only the tests that drive Blender (to repeat them on another Blender, "
                          "e.g. LSIO_BPY=4.5)")


def pytest_collection_modifyitems(config, items):
    if not config.getoption("--blender-only"):
        return
    keep = [i for i in items if BLENDER_FIXTURES & set(getattr(i, "fixturenames", ()))]
    config.hook.pytest_deselected(items=[i for i in items if i not in keep])
    items[:] = keep
