# SPDX-License-Identifier: GPL-3.0-or-later
"""One format to the other, headless (io.convert.convert) and through
Blender (bpy.ops import, export, import): what Blender plays after the trip
is what the ORIGINAL files play (the oracle, scene.evaluate, on the source
format's fresh read_scene), at every whole frame, within 1e-5 of the model
size.

* RiTE -> .X: samples/rite/humanoid.ram with walk.raa and wave.raa;
* .X -> RiTE: tests/data/x/assimp/Testwuson.X (Wuson_Walk and Wuson_Bind
  are rotation-only; Wuson_Run moves its root, which RAA cannot carry, and
  the conversion says so), and a file made here whose default pose differs
  from its bind pose by a translation, with a rotation-only AnimationSet
  (a RiTE file's only pose is its bind pose: the mesh must be re-skinned to
  the default pose, not shifted by the difference).
"""
from __future__ import annotations

import numpy as np
import pytest
from blender_checks import imported, reference, verify
from conftest import DATA, SAMPLES  # noqa: E402
from export_checks import match_meshes, moved, verify_clips, welded_sources

from legacy_skin_io.io.convert import convert
from legacy_skin_io.io.rite import read_raa, read_ram
from legacy_skin_io.io.xfile import read_xfile

HUMANOID = SAMPLES / "rite" / "humanoid.ram"
WALK, WAVE = SAMPLES / "rite" / "walk.raa", SAMPLES / "rite" / "wave.raa"
WUSON = DATA / "x" / "assimp" / "Testwuson.X"
REL = 1e-5


def _raa_frames(path):
    """Frames 0..N-1 of an RAA file (N: the file's own frame count)."""
    n = read_raa(path).frame_count
    return lambda clip, fps_: np.arange(n, dtype=np.float64)


# ---------------------------------------------------------------------------
# RiTE -> .X

@pytest.mark.parametrize("route", ["convert", "blender"])
def test_rite_to_x_plays_the_rite_files(bpy, tmp_path, route):
    ref = reference("rite", [HUMANOID, WALK, WAVE])
    assert [c.name for c in ref.clips] == ["walk", "wave"]
    frames = {"walk": _raa_frames(WALK), "wave": _raa_frames(WAVE)}
    assert moved(ref, lambda c, f: frames[c.name](c, f)) > 1e-2
    out = tmp_path / "humanoid.x"
    if route == "convert":
        warnings: list[str] = []
        assert convert([str(HUMANOID), str(WALK), str(WAVE)], str(out), warnings=warnings) == [str(out)]
        assert warnings == []
    else:
        assert bpy.ops.import_scene.rite(directory=str(HUMANOID.parent), files=[
            {"name": HUMANOID.name}, {"name": WALK.name}, {"name": WAVE.name}]) == {"FINISHED"}
        assert bpy.ops.export_scene.xfile(filepath=str(out)) == {"FINISHED"}
        bpy.ops.wm.read_homefile(use_empty=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["humanoid.x"]
    xf = read_xfile(out)
    assert [s.name for s in xf.animation_sets] == ["walk", "wave"]
    assert sorted(f.name for f in xf.all_frames() if not f.meshes) == sorted(j.name for j in read_ram(HUMANOID).joints)
    assert bpy.ops.import_scene.xfile(filepath=str(out)) == {"FINISHED"}
    reports = verify_clips(bpy, ref, f"humanoid -> {route} -> .x ->", frames_of=lambda c, f: frames[c.name](c, f),
                           written=out)
    assert [len(r.frames) for r in reports.values()] == [33, 41]


# ---------------------------------------------------------------------------
# .X -> RiTE

def _rite_import(bpy, ram, raas):
    assert bpy.ops.import_scene.rite(directory=str(ram.parent), files=[{"name": ram.name}]
                                     + [{"name": p.name} for p in raas]) == {"FINISHED"}


@pytest.mark.parametrize("route", ["convert", "blender"])
def test_x_to_rite_plays_the_x_file(bpy, tmp_path, capfd, route):
    """Testwuson.X's Wuson_Walk and Wuson_Bind are rotation-only: exact in
    RAM/RAA; Wuson_Run moves the root, which RAA cannot carry: a warning
    names the bone and the set."""
    ref = reference("xfile", [WUSON])
    clips = {c.name: c for c in ref.clips}
    assert sorted(clips) == ["Wuson_Bind", "Wuson_Run", "Wuson_Walk"]
    assert moved(ref) > 1e-2
    out = tmp_path / "wuson.ram"
    sources = None              # the RAM's vertices: the file's, or the welded import's (each its file vertex)
    if route == "convert":
        warnings: list[str] = []
        written = convert([str(WUSON)], str(out), warnings=warnings)
    else:
        assert bpy.ops.import_scene.xfile(filepath=str(WUSON)) == {"FINISHED"}
        sources = welded_sources(bpy)
        capfd.readouterr()
        assert bpy.ops.export_scene.rite(filepath=str(out), export_animations=True) == {"FINISHED"}
        warnings = [line for line in capfd.readouterr().out.splitlines() if line.startswith("Warning:")]
        written = [str(p) for p in sorted(tmp_path.iterdir())]
        bpy.ops.wm.read_homefile(use_empty=True)
    names = {f"wuson_{n}.raa" for n in clips}
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(names | {"wuson.ram"})
    assert sorted(str(p) for p in written) == sorted(str(tmp_path / n) for n in names | {"wuson.ram"})
    carry = [w for w in warnings if "cannot carry" in w]
    assert len(carry) == 1 and "Root" in carry[0] and "Wuson_Run" in carry[0], warnings
    assert "Wuson_Walk" not in carry[0] and "Wuson_Bind" not in carry[0]
    for name in ("Wuson_Walk", "Wuson_Bind"):
        raa = tmp_path / f"wuson_{name}.raa"
        _rite_import(bpy, out, [raa])
        verify_clips(bpy, ref, f"Testwuson -> {route} -> RiTE ->", clips=[clips[name]], track=raa.stem,
                     sources=sources)
        bpy.ops.wm.read_homefile(use_empty=True)


def _row(m: np.ndarray) -> str:
    """A column-vector 4x4 as a .X row-vector matrix."""
    return ",".join(f"{v:.9g}" for v in np.asarray(m).T.reshape(-1)) + ";;"


def _rot(axis, angle) -> np.ndarray:
    axis = np.asarray(axis, dtype=np.float64) / np.linalg.norm(axis)
    x, y, z = axis
    c, s = np.cos(angle), np.sin(angle)
    C = 1 - c
    m = np.eye(4)
    m[:3, :3] = [[c + x * x * C, x * y * C - z * s, x * z * C + y * s],
                 [y * x * C + z * s, c + y * y * C, y * z * C - x * s],
                 [z * x * C - y * s, z * y * C + x * s, c + z * z * C]]
    return m


def _trans(t) -> np.ndarray:
    m = np.eye(4)
    m[:3, 3] = t
    return m


def _shifted_bind_x(path) -> None:
    """A leg: Root > Hip > Knee, a skinned box column (4 vertices per ring),
    bound in a pose where every joint stood 0.1 to the side and 0.3 higher
    than in the file's default pose (matrixOffset = inverse(T(shift) @
    default world)); a rotation-only AnimationSet at 24 ticks per second."""
    local = {"Root": _trans((0.5, 0.0, 0.2)) @ _rot((0, 1, 0), 0.5),
             "Hip": _trans((0.0, 1.0, 0.0)) @ _rot((0, 0, 1), 0.2),
             "Knee": _trans((0.0, 1.0, 0.0))}
    world = {"Root": local["Root"]}
    world["Hip"] = world["Root"] @ local["Hip"]
    world["Knee"] = world["Hip"] @ local["Knee"]
    shift = _trans((0.1, 0.3, 0.0))
    offsets = {n: np.linalg.inv(shift @ w) for n, w in world.items()}
    heights = np.linspace(0.0, 2.4, 9)
    ring = np.array([[-0.15, 0, -0.15], [0.15, 0, -0.15], [0.15, 0, 0.15], [-0.15, 0, 0.15]])
    verts = np.concatenate([ring + [0.5, h + 0.3, 0.2] for h in heights])      # in the bind pose
    faces = []
    for r in range(len(heights) - 1):
        for k in range(4):
            a, b = r * 4 + k, r * 4 + (k + 1) % 4
            faces.append((a, b, b + 4, a + 4))
    V = len(verts)
    y = np.repeat(heights, 4)
    w_hip = np.clip(1.0 - np.abs(y - 1.0) / 1.0, 0, 1)
    w_knee = np.clip((y - 1.0) / 1.0, 0, 1)
    w_root = np.clip(1.0 - y / 0.6, 0, 1)
    weights = {"Root": w_root, "Hip": w_hip, "Knee": w_knee}

    def skin(name):
        w = weights[name]
        idx = np.nonzero(w > 0)[0]
        return (f"SkinWeights {{ \"{name}\"; {len(idx)}; {','.join(map(str, idx))}; "
                f"{','.join(f'{v:.9g}' for v in w[idx])}; {_row(offsets[name])} }}")

    def key(q_xyzw):      # a stored rotation key (w, x, y, z) (the conjugate convention stays the reader's)
        x, y_, z, w = q_xyzw
        return f"4;{w:.9g},{x:.9g},{y_:.9g},{z:.9g};;"

    def qa(axis, angle):
        axis = np.asarray(axis, dtype=np.float64) / np.linalg.norm(axis)
        return (*(np.sin(angle / 2) * axis), np.cos(angle / 2))

    hip_keys = [(0, qa((0, 0, 1), 0.2)), (6, qa((1, 0, 0.3), 0.7)), (12, qa((0, 0, 1), -0.5)),
                (24, qa((0, 0, 1), 0.2))]
    knee_keys = [(0, qa((1, 0, 0), 0.0)), (8, qa((1, 0, 0), 1.1)), (24, qa((1, 0.2, 0), 0.1))]

    def animation(frame, keys):
        body = ",".join(f"{t};{key(q)}" for t, q in keys)
        return f"Animation {{ {{ {frame} }} AnimationKey {{ 0; {len(keys)}; {body[:-1]};; }} }}"

    text = f"""xof 0303txt 0032
Frame Root {{
  FrameTransformMatrix {{ {_row(local['Root'])} }}
  Frame Hip {{
    FrameTransformMatrix {{ {_row(local['Hip'])} }}
    Frame Knee {{
      FrameTransformMatrix {{ {_row(local['Knee'])} }}
    }}
  }}
}}
Mesh Leg {{
  {V};
  {','.join(f'{x:.9g};{y_:.9g};{z:.9g};' for x, y_, z in verts)[:-1]};;
  {len(faces)};
  {','.join(f'4;{a},{b},{c},{d};' for a, b, c, d in faces)[:-1]};;
  XSkinMeshHeader {{ 3; 6; 3; }}
  {skin('Root')}
  {skin('Hip')}
  {skin('Knee')}
}}
AnimTicksPerSecond {{ 24; }}
AnimationSet Swing {{
  {animation('Hip', hip_keys)}
  {animation('Knee', knee_keys)}
}}
"""
    path.write_text(text)


@pytest.mark.parametrize("route", ["convert", "blender"])
def test_x_with_a_shifted_bind_pose_to_rite_plays_the_x_file(bpy, tmp_path, route):
    src = tmp_path / "leg.x"
    _shifted_bind_x(src)
    ref = reference("xfile", [src])
    assert [c.name for c in ref.clips] == ["Swing"]
    (clip,) = ref.clips
    assert clip.frame_range(24.0) == (0.0, 24.0)
    assert ref.skeleton.names == ["Root", "Hip", "Knee"]
    # the file's default pose is not its bind pose: they differ by the shift
    assert np.allclose(ref.skeleton.bind[:, :3, 3] - ref.skeleton.world()[:, :3, 3],
                       ref.source.axes.translations([0.1, 0.3, 0.0]), atol=1e-6)
    assert moved(ref) > 0.1
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    out = out_dir / "leg.ram"
    if route == "convert":
        warnings: list[str] = []
        convert([str(src)], str(out), warnings=warnings)
        assert warnings == []
    else:
        assert bpy.ops.import_scene.xfile(filepath=str(src)) == {"FINISHED"}
        verify_clips(bpy, ref, "leg.x import")
        assert bpy.ops.export_scene.rite(filepath=str(out), export_animations=True) == {"FINISHED"}
        bpy.ops.wm.read_homefile(use_empty=True)
    assert sorted(p.name for p in out_dir.iterdir()) == ["leg.ram", "leg_Swing.raa"]
    ram = read_ram(out)
    assert [j.name for j in ram.joints] == ["Root", "Hip", "Knee"]
    assert len(ram.positions) == 36
    assert read_raa(out_dir / "leg_Swing.raa").frame_count == 25
    _rite_import(bpy, out, [out_dir / "leg_Swing.raa"])
    reports = verify_clips(bpy, ref, f"leg.x -> {route} -> RiTE ->", track="leg_Swing")
    assert len(reports["Swing"].frames) == 25
    # without animation (the rest pose) RiTE shows its bind pose: it must be the .X file's default pose
    arm, meshes = imported(bpy)
    arm.animation_data.action = None
    for t in arm.animation_data.nla_tracks:
        t.mute = True
    for pb in arm.pose.bones:
        pb.location, pb.rotation_quaternion, pb.scale = (0, 0, 0), (1, 0, 0, 0), (1, 1, 1)
    rep = verify(bpy, match_meshes(ref, meshes), ref, None, [0.0], REL)
    print(f"leg.x -> {route} -> RiTE -> default pose: {rep.verdict()}")
    assert rep.ok, rep.table()
