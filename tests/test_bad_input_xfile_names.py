# SPDX-License-Identifier: GPL-3.0-or-later
""".X files whose names mislead: two frames of one name, SkinWeights naming
one frame several times with different matrixOffsets. Direct3D finds a
frame by name (the first of that name) and makes each SkinWeights a bone
of its own, with its own offset: the import must mean that (checked here
against the skinning computed by hand from the file's numbers, in the
file's row-vector convention), warn, and ``verify`` (Blender against the
oracle) must agree."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np

from legacy_skin_io.io.xfile import adapter as xfile
from legacy_skin_io.scene import evaluate

ROOT = Path(__file__).resolve().parents[1]


def _t(x, y, z):
    m = np.eye(4)
    m[3, :3] = (x, y, z)          # .X matrices are row-vector: translation in the last row
    return m


def _mat(m) -> str:
    return ",".join(repr(float(v)) for v in np.asarray(m).reshape(-1)) + ";;"


POSITIONS = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]], dtype=np.float64)
# (frame, vertices, weights, offset): every vertex's weights sum to 1
TRIPLE = [("bone", [0, 1], [0.5, 0.5], _t(-1, 0, 0)),
          ("bone", [0, 1], [0.25, 0.25], _t(-1, 0, 0)),      # the same offset: one joint
          ("bone", [1, 3], [0.25, 0.5], _t(-1, -1, 0)),      # another offset
          ("root", [0, 2, 3], [0.25, 1.0, 0.5], np.eye(4))]
FRAMES = {"root": np.eye(4), "bone": _t(1, 0, 0)}


def _xfile(skins, second_bone: bool) -> bytes:
    sw = "".join(f'SkinWeights {{ "{f}"; {len(v)}; {",".join(map(str, v))}; {",".join(map(repr, w))}; {_mat(o)} }}\n'
                 for f, v, w, o in skins)
    extra = f"Frame bone {{ FrameTransformMatrix {{ {_mat(_t(0, 5, 0))} }} }}" if second_bone else ""
    return f"""xof 0303txt 0032
Frame root {{
 FrameTransformMatrix {{ {_mat(FRAMES['root'])} }}
 Frame bone {{ FrameTransformMatrix {{ {_mat(FRAMES['bone'])} }} {extra} }}
 Mesh m {{
  4; {" ".join(f"{x};{y};{z};," for x, y, z in POSITIONS[:-1])} {"{};{};{};;".format(*POSITIONS[-1])}
  2; 3;0,1,2;, 3;1,3,2;;
  {sw}
 }}
}}
AnimationSet turn {{
 Animation {{ {{ bone }} AnimationKey {{ 0; 2; 0;4;1,0,0,0;;, 4800;4;0.7071068,0,0,0.7071068;;; }} }}
}}
""".encode()


def _by_hand(skins) -> np.ndarray:
    """Direct3D's skinning at the default pose: sum over SkinWeights of
    w * v * offset * world(frame), row vectors, the frame found by name."""
    world = {"root": FRAMES["root"], "bone": FRAMES["bone"] @ FRAMES["root"]}
    out = np.zeros((len(POSITIONS), 4))
    rows = np.c_[POSITIONS, np.ones(len(POSITIONS))]
    for f, v, w, o in skins:
        for vi, wi in zip(v, w):
            out[vi] += wi * rows[vi] @ o @ world[f]
    return out[:, :3]


def _verify(path: Path):
    return subprocess.run([sys.executable, "-m", "legacy_skin_io", "verify", str(path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)


def _check(tmp_path, skins, second_bone: bool, expect_warning: str):
    path = tmp_path / "m.x"
    path.write_bytes(_xfile(skins, second_bone))
    warnings: list[str] = []
    scene = xfile.read_scene([str(path)], warnings=warnings)
    assert any(expect_warning in w for w in warnings), warnings
    got = evaluate.evaluate(scene, None, [0.0])[0]
    want = scene.source.axes.points(_by_hand(skins))
    assert np.abs(got - want).max() < 1e-9, (got, want)
    r = _verify(path)
    assert r.returncode == 0, (r.stdout[-2000:], r.stderr[-2000:])
    assert "PASS" in r.stdout


def test_skinweights_naming_one_frame_three_times(tmp_path):
    _check(tmp_path, TRIPLE, False, "SkinWeights name frame 'bone' again with another matrixOffset")


def test_two_frames_of_one_name_skin_with_the_first(tmp_path):
    """Two frames named "bone" and two SkinWeights naming "bone" (the author
    meant both): Direct3D binds both to the first frame of that name."""
    skins = [("bone", [0, 1], [1.0, 0.75], _t(-1, 0, 0)), ("bone", [1, 3], [0.25, 1.0], _t(0, -5, 0)),
             ("root", [2], [1.0], np.eye(4))]
    _check(tmp_path, skins, True, "frames of the same name, renamed: 'bone'")
