# SPDX-License-Identifier: GPL-3.0-or-later
"""Panda3D's own .X loader (panda3d, pinned in the test environment) reads
what the exporter writes: a skinned mesh of a rigged file in a Frame (it
skips the top-level meshes of a file with frames: 0 vertices shown, before),
a Character with the skeleton's joints, every vertex."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import SAMPLES

from legacy_skin_io.io.convert import convert
from legacy_skin_io.io.errors import Warnings
from legacy_skin_io.io.xfile.reader import read_xfile

RITE = [SAMPLES / "rite" / n for n in ("humanoid.ram", "walk.raa", "wave.raa")]
SCRIPT = Path(__file__).resolve().parent / "panda3d" / "panda_info.py"


def panda(*paths) -> dict:
    r = subprocess.run([sys.executable, str(SCRIPT), *map(str, paths)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-800:]
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("target", ["DIRECTX", "IRRLICHT", "DARKBASIC"])
def test_panda3d_shows_every_vertex_of_a_rite_character_converted_to_x(tmp_path, target):
    out = tmp_path / "humanoid.x"
    convert([str(p) for p in RITE], str(out), write_options={"target": target}, warnings=Warnings())
    xf = read_xfile(out)
    assert not xf.meshes                        # no top-level mesh in a file with frames
    vertices = sum(len(m.positions) for f in xf.all_frames() for m in f.meshes)
    got = panda(out)[str(out)]
    joints = sum(1 for _ in xf.all_frames())
    print(f"{target}: Panda3D shows {got['vertices']} of {vertices} vertices, {got['characters']} character(s), "
          f"{got['parts']} parts for {joints} frames")
    assert got["vertices"] == vertices and got["characters"] == 1 and got["parts"] >= joints
