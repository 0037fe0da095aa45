# SPDX-License-Identifier: GPL-3.0-or-later
"""Format to format without Blender (io/convert.py and the adapters' writer
halves), checked against the oracle.

The reference is always the SOURCE file's scene through scene.evaluate; the
candidate is the OUTPUT file read back from disk by the reader adapters.
Both are compared as world positions of every vertex (meshes concatenated)
at every whole scene frame (24 fps); the largest distance is measured as a
fraction of the source's size (scene.evaluate.size).
"""
from __future__ import annotations

import argparse
import functools
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from legacy_skin_io.io import atomic, convert
from legacy_skin_io.io.errors import FormatError
from legacy_skin_io.io.rite import adapter as rite
from legacy_skin_io.io.rite import read_raa, read_ram
from legacy_skin_io.io.xfile import XFile, XMesh, write_xfile
from legacy_skin_io.io.xfile import adapter as xfile
from legacy_skin_io.scene import AxisConversion
from legacy_skin_io.scene import evaluate as ev

HERE = Path(__file__).resolve().parent
SAMPLES = HERE.parent / "samples" / "rite"
XDIR = HERE / "data" / "x"
RITE_INPUTS = [SAMPLES / "humanoid.ram", SAMPLES / "walk.raa", SAMPLES / "wave.raa"]
BROKEN = {"malformed_skinweights_oob.x", "OV_GetNextToken"}   # deliberately broken (see PROVENANCE.md)
FPS = 24.0
TOL = 1e-5
CARRY = re.compile(r"^RiTE cannot carry .* deviate from the scene by up to ([0-9.]+e[-+][0-9]+) of the model size")


def _x_files() -> list[Path]:
    out = []
    for p in sorted(XDIR.glob("*/*")):
        if p.suffix.lower() == ".x" or p.name in BROKEN:
            out.append(p)
    return out


@functools.lru_cache(maxsize=None)
def _source_x(path: str):
    """(scene, warnings) of a corpus file, or None when it does not parse or has no mesh."""
    try:
        scene = xfile.read_scene([path], warnings=[])
    except FormatError:
        return None
    return scene if scene.meshes else None


CORPUS = [p for p in _x_files() if p.name not in BROKEN and _source_x(str(p)) is not None]


def test_corpus_selection():
    """Every corpus file but the two broken ones parses and has meshes."""
    names = {p.name for p in CORPUS}
    assert len(CORPUS) == len(_x_files()) - len(BROKEN)
    for b in BROKEN:
        assert b not in names
        with pytest.raises(FormatError):
            xfile.read_scene([str(next(p for p in _x_files() if p.name == b))])


def whole_frames(clip) -> np.ndarray:
    """Every whole scene frame of a clip's range."""
    f0, f1 = clip.frame_range(FPS)
    return np.arange(np.floor(f0 + 1e-9), np.ceil(f1 - 1e-9) + 1.0)


@functools.lru_cache(maxsize=None)
def _reference_x(path: str, clip_index: int) -> tuple:
    """(frames, positions per frame) of a corpus file's clip (-1: the default pose at frame 0)."""
    scene = _source_x(path)
    if clip_index < 0:
        return np.array([0.0]), tuple(ev.evaluate(scene, None, [0.0], FPS))
    clip = scene.clips[clip_index]
    frames = whole_frames(clip)
    return frames, tuple(ev.evaluate(scene, clip, frames, FPS))


def _error(reference, candidate, size: float, vmap: np.ndarray | None = None) -> float:
    worst = 0.0
    assert len(reference) == len(candidate)
    for r, c in zip(reference, candidate):
        if vmap is not None:
            r = r[vmap]
        assert r.shape == c.shape
        if len(r):
            worst = max(worst, float(np.linalg.norm(r - c, axis=1).max()))
    return worst / size


def _vertex_map(ref_meshes, cand_meshes) -> np.ndarray:
    """Candidate vertex -> reference vertex (all meshes concatenated), from the
    corners (a writer that splits vertices keeps faces and corner order)."""
    assert len(ref_meshes) == len(cand_meshes)
    out, r_off = [], 0
    for a, b in zip(ref_meshes, cand_meshes):
        assert np.array_equal(a.face_sizes, b.face_sizes)
        Va, Vb = len(a.positions), len(b.positions)
        m = np.full(Vb, -1, dtype=np.int64)
        m[:Va] = np.arange(Va)
        m[b.corners] = a.corners
        assert (m >= 0).all()
        out.append(m + r_off)
        r_off += Va
    return np.concatenate(out) if out else np.zeros(0, dtype=np.int64)


# ---------------------------------------------------------------------------
# RiTE -> .X

@functools.lru_cache(maxsize=None)
def _rite_source():
    return rite.read_scene([str(p) for p in RITE_INPUTS], warnings=[])


@pytest.mark.parametrize("storage,float_size,key_type", [
    ("text", 32, "TRS"), ("binary", 64, "TRS"), ("text_compressed", 64, "TRS"),
    ("binary_compressed", 32, "TRS"), ("binary", 32, "MATRIX")])
def test_rite_to_x(tmp_path, storage, float_size, key_type):
    src = _rite_source()
    size = ev.size(src)
    out = tmp_path / "out.x"
    warnings: list[str] = []
    assert xfile.write_scene(src, out, warnings=warnings, storage=storage, float_size=float_size,
                             key_type=key_type) == [str(out)]
    assert warnings == []
    got = xfile.read_scene([str(out)])
    assert [c.name for c in got.clips] == [c.name for c in src.clips]
    vmap = _vertex_map(src.meshes, got.meshes)
    tol = TOL if float_size == 32 else 1e-7
    for a, b in zip(src.clips, got.clips):
        frames = np.arange(a.extras["rite"]["frames"], dtype=np.float64)   # 0..N-1
        err = _error(ev.evaluate(src, a, frames, FPS), ev.evaluate(got, b, frames, FPS), size, vmap)
        assert err <= tol, (a.name, err)
    assert _error(ev.evaluate(src, None, [0.0]), ev.evaluate(got, None, [0.0]), size, vmap) <= tol


# ---------------------------------------------------------------------------
# .X -> RiTE

def _rite_out(tmp_path: Path) -> list[str]:
    return [str(p) for p in sorted(tmp_path.iterdir()) if p.suffix in (".ram", ".raa")]


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name)
def test_x_to_rite(tmp_path, path):
    src = _source_x(str(path))
    size = ev.size(src)
    warnings: list[str] = []
    written = rite.write_scene(src, tmp_path / "out.ram", warnings=warnings, fps=FPS)
    assert written[0] == str(tmp_path / "out.ram") and len(written) == 1 + len(src.clips)
    assert sorted(written) == _rite_out(tmp_path)
    got = rite.read_scene(written, warnings=[])
    assert len(got.clips) == len(src.clips)
    assert len(got.meshes) == 1 and len(got.meshes[0].positions) == sum(len(m.positions) for m in src.meshes)
    errors = {}
    for i in range(len(src.clips)) or [-1]:
        frames, ref = _reference_x(str(path), i)
        errors[src.clips[i].name if i >= 0 else "(default pose)"] = _error(
            ref, ev.evaluate(got, got.clips[i] if i >= 0 else None, frames, FPS), size)
    carry = [w for w in warnings if w.startswith("RiTE cannot carry")]
    assert len(carry) <= 1, carry
    if carry:
        m = CARRY.match(carry[0])
        assert m, carry[0]
        figure = float(m.group(1))
        # the writer measures at every RAA frame (from 0), the test at the set's frames
        assert figure > TOL / 10 and figure >= max(errors.values()) * 0.99, (figure, errors)
    else:
        assert max(errors.values()) <= TOL, errors


# ---------------------------------------------------------------------------
# .X -> .X

STORAGE = ("text", "binary", "text_compressed", "binary_compressed")


@pytest.mark.parametrize("float_size", (32, 64))
@pytest.mark.parametrize("storage", STORAGE)
@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name)
def test_x_to_x(tmp_path, path, storage, float_size):
    src = _source_x(str(path))
    size = ev.size(src)
    out = tmp_path / "out.x"
    xfile.write_scene(src, out, warnings=[], storage=storage, float_size=float_size)
    got = xfile.read_scene([str(out)], warnings=[])
    assert [c.name for c in got.clips] == [c.name for c in src.clips]
    vmap = _vertex_map(src.meshes, got.meshes)
    tol = TOL if float_size == 32 else 1e-7
    for i in range(len(src.clips)) or [-1]:
        frames, ref = _reference_x(str(path), i)
        cand = ev.evaluate(got, got.clips[i] if i >= 0 else None, frames, FPS)
        err = _error(ref, cand, size, vmap)
        assert err <= tol, (src.clips[i].name if i >= 0 else "default pose", err)


# ---------------------------------------------------------------------------
# RiTE -> RiTE

def _corner_rows(values: np.ndarray, ids: np.ndarray) -> np.ndarray:
    return np.asarray(values, dtype=np.float64)[np.asarray(ids).reshape(-1)]


def test_rite_to_rite(tmp_path):
    src = _rite_source()
    a_dir, b_dir = tmp_path / "a", tmp_path / "b"
    a_dir.mkdir()
    b_dir.mkdir()
    warnings: list[str] = []
    written = rite.write_scene(src, a_dir / "out.ram", warnings=warnings)
    assert warnings == []
    assert [Path(p).name for p in written] == ["out.ram", "out_walk.raa", "out_wave.raa"]
    # written twice: the same bytes
    again = rite.write_scene(src, b_dir / "out.ram")
    for p, q in zip(written, again):
        assert Path(p).read_bytes() == Path(q).read_bytes(), Path(p).name
    old, new = read_ram(RITE_INPUTS[0]), read_ram(written[0])
    assert [j.name for j in new.joints] == [j.name for j in old.joints]
    assert [j.parent for j in new.joints] == [j.parent for j in old.joints]
    for attr in ("orientation", "translation", "rotation"):
        a = np.array([getattr(j, attr) for j in old.joints])
        b = np.array([getattr(j, attr) for j in new.joints])
        assert np.abs(a - b).max() <= 1e-9, attr
    assert old.mesh_name == new.mesh_name
    assert np.abs(old.positions - new.positions).max() <= 1e-9
    assert np.array_equal(old.tri_vertices, new.tri_vertices)
    assert np.array_equal(old.tri_shader, new.tri_shader)
    n_old = _corner_rows(old.normals, old.tri_normals)
    n_old /= np.linalg.norm(n_old, axis=1, keepdims=True)
    assert np.abs(n_old - _corner_rows(new.normals, new.tri_normals)).max() <= 1e-9
    assert np.array_equal(_corner_rows(old.uvs, old.tri_uvs), _corner_rows(new.uvs, new.tri_uvs))
    # after dedupe: as many distinct normals / uvs as the corners carry
    assert len(new.uvs) == len(np.unique(_corner_rows(old.uvs, old.tri_uvs), axis=0))
    assert np.array_equal(old.weight_vertex, new.weight_vertex)
    assert np.array_equal(old.weight_joint, new.weight_joint)
    assert np.abs(old.weight_value - new.weight_value).max() <= 1e-9
    for src_path, out_path in zip(RITE_INPUTS[1:], written[1:]):
        a, b = read_raa(src_path), read_raa(out_path)
        assert a.frame_count == b.frame_count and a.frame_count_given == b.frame_count_given
        assert [t.joint_name for t in a.tracks] == [t.joint_name for t in b.tracks]
        assert [t.joint_id for t in a.tracks] == [t.joint_id for t in b.tracks]
        for s, t in zip(a.tracks, b.tracks):
            assert np.array_equal(s.frames, t.frames)
            assert np.abs(s.rotations - t.rotations).max() <= 1e-9, t.joint_name   # signs included
    # and it plays the same
    got = rite.read_scene(written)
    size = ev.size(src)
    for a, b in zip(src.clips, got.clips):
        frames = np.arange(a.extras["rite"]["frames"], dtype=np.float64)
        assert _error(ev.evaluate(src, a, frames), ev.evaluate(got, b, frames), size) <= 1e-12


# ---------------------------------------------------------------------------
# a synthetic scene: every placement the writers handle

def _synthetic(translate: bool = False, skeleton: bool = True):
    """Three joints (the middle one uniformly scaled by 2), a skinned mesh
    placed by a matrix with n-gons, UV seams, colours and two materials, a
    rigid mesh under a joint with its own matrix, an unskinned top-level
    mesh; a .X-style clip rotating two joints (``translate``: and moving one)."""
    from legacy_skin_io.core import quat, sampling
    from legacy_skin_io.scene import Clip, Material, Mesh, Scene, Skeleton, Skin, Source

    def trs(t, axis, angle, s=1.0):
        return sampling.compose_trs(np.array(t, float), quat.from_axis_angle(np.array(axis, float), np.array(angle)),
                                    np.full(3, s))

    rng = np.random.default_rng(7)
    mats = [Material("skin", color=np.array([0.8, 0.5, 0.4, 1.0])),
            Material("cloth", color=np.array([0.2, 0.3, 0.9, 1.0]), texture="cloth.png",
                     extras={"rite_shader": 7})]
    # a strip of 3 quads, a pentagon and a triangle
    pos = np.array([[0, 0, 0], [1, 0, 0], [2, 0, 0], [3, 0, 0], [0, 1, 0], [1, 1, 0], [2, 1, 0], [3, 1, 0],
                    [3.5, 0.5, 0], [4, 1.5, 0.2], [4.5, 0, 0.1]], dtype=float) * 0.3
    sizes = np.array([4, 4, 4, 5, 3])
    corners = np.array([0, 1, 5, 4, 1, 2, 6, 5, 2, 3, 7, 6, 3, 8, 9, 10, 7, 7, 10, 9])
    uvs = rng.random((len(corners), 2))
    uvs[[1, 4]] = uvs[1]            # corners of vertex 1 agree on one face pair, others split
    normals = rng.normal(size=(len(corners), 3))
    normals /= np.linalg.norm(normals, axis=1, keepdims=True)
    placed = trs([0.1, 0.0, 0.2], [0, 0, 1], 0.1)
    meshes = [Mesh("body", pos, sizes, corners, normals=normals, uvs=uvs, colors=rng.random((len(pos), 4)),
                   face_materials=np.array([0, 0, 1, 1, 0]), materials=[0, 1], matrix=placed)]
    quad = Mesh("hat", np.array([[0, 0, 0], [0.2, 0, 0], [0.2, 0.2, 0], [0, 0.2, 0.0]]), np.array([4]),
                np.array([0, 1, 2, 3]), matrix=trs([0, 0.2, 0], [1, 0, 0], 0.4), parent=2 if skeleton else -1)
    tri = Mesh("base", np.array([[0, 0, 0], [0.5, 0, 0], [0, 0.5, 0.0]]), np.array([3]), np.array([0, 1, 2]),
               matrix=trs([-0.5, 0, 0], [0, 1, 0], 0.3), materials=[1])
    meshes += [quad, tri]
    if not skeleton:
        return Scene("static", None, meshes, mats, [], Source("test"))
    local = np.stack([trs([0, 0, 1], [0, 0, 1], 0.3), trs([0, 1, 0], [1, 0, 0], 0.5, 2.0),
                      trs([0, 0.5, 0], [0, 1, 0], 0.2)])
    sk = Skeleton(["root", "arm", "hand"], [-1, 0, 1], local, np.zeros((3, 4, 4)), np.ones(3, dtype=bool))
    sk.bind = sk.world()
    V = len(pos)
    vertex = np.repeat(np.arange(V), 2)
    joint = np.stack((np.arange(V) % 3, (np.arange(V) + 1) % 3), axis=1).reshape(-1)
    weight = rng.random(2 * V) + 0.1
    joints = np.arange(3)
    meshes[0].skin = Skin(joints, np.linalg.inv(sk.bind) @ placed, vertex, joint, weight)
    keys = np.array([0.0, 2400.0, 4800.0])
    rot = [quat.from_axis_angle(np.array([[0, 0, 1.0]] * 3), np.array([0.0, 0.8, -0.4])),
           quat.from_axis_angle(np.array([[1.0, 1, 0]] * 3), np.array([0.2, -0.5, 0.9]))]
    from legacy_skin_io.core import sampling as smp
    r0 = smp.decompose_trs(local)[1]
    rot = [quat.normalize(quat.mul(r0[j], r)) for j, r in zip((1, 2), rot)]
    rotation = smp.Channels.from_tracks([1, 2], [keys, keys], rot, 4)
    translation = (smp.Channels.from_tracks([2], [keys], [np.array([[0, 0.5, 0], [0.1, 0.6, 0], [0, 0.5, 0.0]])], 3)
                   if translate else smp.Channels.empty(3))
    clip = Clip("wiggle", rotation, translation, smp.Channels.empty(3), np.array([False, True, True]),
                start=0.0, end=4800.0, ticks_per_second=4800.0)
    return Scene("synthetic", sk, meshes, mats, [clip], Source("test"))


def _by_name(meshes):
    return {m.name: m for m in meshes}


@pytest.mark.parametrize("skeleton", (True, False))
def test_synthetic_scene(tmp_path, skeleton):
    src = _synthetic(skeleton=skeleton)
    size = ev.size(src)
    frames = np.arange(25.0) if skeleton else np.array([0.0])
    clip = src.clips[0] if skeleton else None
    ref = ev.evaluate(src, clip, frames)
    odd = AxisConversion.from_axes("X", "Z", 0.01, mirror_z=True)     # any axes, with a scale
    for storage, float_size, key_type, axes, tol in (("text", 32, "TRS", None, TOL),
                                                 ("binary_compressed", 64, "TRS", None, 1e-7),
                                                 ("binary", 64, "MATRIX", odd, 1e-7)):
        out = tmp_path / f"out_{storage}.x"
        warnings: list[str] = []
        xfile.write_scene(src, out, warnings=warnings, storage=storage, float_size=float_size, key_type=key_type,
                          axes=axes)
        assert warnings == []
        got = xfile.read_scene([str(out)], warnings=[], axes=axes)
        names = _by_name(got.meshes)
        assert sorted(names) == sorted(m.name for m in src.meshes)
        got.meshes = [names[m.name] for m in src.meshes]      # the reader lists top-level meshes first
        vmap = _vertex_map(src.meshes, got.meshes)
        assert len(got.meshes[0].positions) > len(src.meshes[0].positions)     # split along the UV seams
        body = got.meshes[0]
        assert np.abs(body.uvs - src.meshes[0].uvs).max() < 1e-6 and np.abs(
            body.colors - src.meshes[0].colors[vmap[:len(body.positions)]]).max() < 1e-6
        assert np.abs(body.normals - src.meshes[0].normals).max() < 1e-6
        assert [got.materials[i].name for i in body.materials] == ["skin", "cloth"]
        assert _error(ref, ev.evaluate(got, got.clips[0] if skeleton else None, frames), size, vmap) <= tol
    for axes in (odd, None):
        warnings = []
        written = rite.write_scene(src, tmp_path / "out.ram", warnings=warnings, axes=axes)
        assert warnings == []
        got = rite.read_scene(written, axes=axes)
        assert _error(ref, ev.evaluate(got, got.clips[0] if skeleton else None, frames), size) <= 1e-9
    ram = read_ram(written[0])
    assert sorted(set(ram.tri_shader.tolist())) == ([0, 7] if skeleton else [0, 7])
    assert len(ram.tri_vertices) == 3 * 2 + 3 + 1 + 2 + 1     # fans: 3 quads, a pentagon, 2 triangles, a quad
    if skeleton:   # the uniform scale of "arm" is folded into "hand"'s translation
        assert np.allclose(np.linalg.norm(ram.joints[2].translation), 2 * 0.5)


def test_x_clips_at_different_rates(tmp_path):
    """Key-for-key clips at different tick rates: written at the first one's."""
    from legacy_skin_io.core import sampling

    src = _synthetic()
    a = src.clips[0]
    half = lambda ch: sampling.Channels(ch.times / 2, ch.values, ch.starts, ch.track_of_key, ch.targets)
    b = type(a)("slow", half(a.rotation), half(a.translation), half(a.scale), a.animated, start=0.0,
                end=a.end / 2, ticks_per_second=2400.0)
    src.clips.append(b)
    warnings: list[str] = []
    xfile.write_scene(src, tmp_path / "out.x", warnings=warnings, storage="binary", float_size=64)
    assert any("rescaled" in w for w in warnings)
    got = xfile.read_scene([str(tmp_path / "out.x")])
    assert [c.ticks_per_second for c in got.clips] == [4800.0, 4800.0]
    assert np.array_equal(got.clips[1].rotation.times, a.rotation.times)
    frames = np.arange(25.0)
    by_name = _by_name(got.meshes)
    got.meshes = [by_name[m.name] for m in src.meshes]
    vmap = _vertex_map(src.meshes, got.meshes)
    for x, y in zip(src.clips, got.clips):
        assert _error(ev.evaluate(src, x, frames), ev.evaluate(got, y, frames), ev.size(src), vmap) <= 1e-7


def test_synthetic_animated_translation(tmp_path):
    src = _synthetic(translate=True)
    warnings: list[str] = []
    written = rite.write_scene(src, tmp_path / "out.ram", warnings=warnings)
    carry = [w for w in warnings if w.startswith("RiTE cannot carry")]
    assert len(carry) == 1 and "animated translation" in carry[0] and "hand" in carry[0]
    figure = float(CARRY.match(carry[0]).group(1))
    got = rite.read_scene(written)
    frames = np.arange(25.0)
    err = _error(ev.evaluate(src, src.clips[0], frames), ev.evaluate(got, got.clips[0], frames), ev.size(src))
    assert err > 1e-3 and abs(figure - err) <= 0.01 * err


# ---------------------------------------------------------------------------
# the command

def _run(argv: list[str]) -> int:
    from legacy_skin_io.cli import convert  # the command (the module's convert is io.convert)

    p = argparse.ArgumentParser()
    convert.add_arguments(p)
    return convert.run(p.parse_args(argv))


def test_convert_command_without_bpy(tmp_path):
    out = tmp_path / "out.x"
    code = textwrap.dedent(f"""
        import sys
        class Block:
            def find_spec(self, name, path=None, target=None):
                if name == "bpy" or name.startswith("bpy.") or name == "mathutils":
                    raise ImportError("bpy is blocked in this test")
        sys.meta_path.insert(0, Block())
        import argparse
        from legacy_skin_io.cli import convert
        p = argparse.ArgumentParser()
        convert.add_arguments(p)
        rc = convert.run(p.parse_args({[*map(str, RITE_INPUTS), "-o", str(out), "--format", "compressed",
                                        "--float", "64", "--ticks-per-second", "2400"]!r}))
        assert "bpy" not in sys.modules and "mathutils" not in sys.modules
        print("rc", rc)
    """)
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert "rc 0" in res.stdout and f"wrote {out}" in res.stdout
    assert out.exists() and out.read_bytes()[:16] == b"xof 0303tzip0064"
    got = xfile.read_scene([str(out)])
    assert [c.ticks_per_second for c in got.clips] == [2400.0, 2400.0]


def test_convert_command_messages(tmp_path, capsys):
    assert _run([str(XDIR / "assimp" / "test.x"), "-o", str(tmp_path / "cube.ram"), "--format", "binary"]) == 0
    cap = capsys.readouterr()
    assert cap.out.strip() == f"wrote {tmp_path / 'cube.ram'}"
    assert cap.err.startswith("warning: --storage: not an option of RiTE Model output, ignored")
    for argv in ([str(XDIR / "assimp" / "test.x"), "-o", str(tmp_path / "cube.obj")],          # unknown suffix
                 [str(XDIR / "assimp" / "malformed_skinweights_oob.x"), "-o", str(tmp_path / "m.x")],  # bad input
                 [str(XDIR / "assimp" / "test.x"), "-o", str(tmp_path / "missing" / "cube.x")],  # unwritable
                 [str(RITE_INPUTS[1]), "-o", str(tmp_path / "walk.x")]):                          # no .ram
        assert _run(argv) == 2, argv
        cap = capsys.readouterr()
        lines = cap.err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), cap.err
        assert cap.out == ""
    assert sorted(os.listdir(tmp_path)) == ["cube.ram"]


def test_convert_reports_a_bug_as_an_internal_error(tmp_path, capsys, monkeypatch):
    """A bug (not a bad file) is one "internal error" line, exit 2, and the
    traceback for a report; nothing is written."""
    def broken(*args, **kwargs):
        raise TypeError("injected")

    monkeypatch.setattr(xfile, "write_scene", broken)
    out = tmp_path / "cube.x"
    assert _run([str(XDIR / "assimp" / "test.x"), "-o", str(out)]) == 2
    cap = capsys.readouterr()
    assert "Traceback (most recent call last)" in cap.err
    last = cap.err.strip().splitlines()[-1]
    assert last.startswith("error: ") and "internal error (TypeError: injected)" in last, last
    assert not out.exists()


def test_xfile_writer_options_are_file_errors(tmp_path):
    """Bad writer options are FormatErrors naming the target, not bare ValueErrors."""
    scene = xfile.read_scene([str(XDIR / "assimp" / "test.x")])
    with pytest.raises(FormatError, match=r"^bad\.x: key_type must be one of"):
        xfile.write_scene(scene, tmp_path / "bad.x", key_type="EULER")
    assert not (tmp_path / "bad.x").exists()


def test_convert_writes_rite_animations_beside(tmp_path):
    written = convert.convert([str(XDIR / "assimp" / "Testwuson.X")], str(tmp_path / "wuson.ram"))
    assert [Path(p).name for p in written] == ["wuson.ram", "wuson_Wuson_Run.raa", "wuson_Wuson_Walk.raa",
                                               "wuson_Wuson_Bind.raa"]


# ---------------------------------------------------------------------------
# atomic writes

def _tmp_leftovers(folder: Path) -> list[str]:
    return [n for n in os.listdir(folder) if n.endswith(".tmp")]


def test_failed_convert_leaves_output(tmp_path):
    good = (XDIR / "assimp" / "test_cube_text.x").read_bytes()
    bad = tmp_path / "truncated.x"
    bad.write_bytes(good[:len(good) // 2])
    for name in ("old.x", "old.ram"):
        out = tmp_path / name
        out.write_bytes(b"the old file\n")
        with pytest.raises(FormatError):
            convert.convert([str(bad)], str(out))
        assert _run([str(bad), "-o", str(out)]) == 2
        assert out.read_bytes() == b"the old file\n"
    assert _tmp_leftovers(tmp_path) == []


def test_failed_write_leaves_output(tmp_path):
    out = tmp_path / "old.x"
    out.write_bytes(b"the old file\n")

    def chunks():
        yield b"part of a new file"
        raise RuntimeError("disk on fire")

    with pytest.raises(RuntimeError):
        atomic.write_atomic(out, chunks())
    assert out.read_bytes() == b"the old file\n"
    bad = XFile(meshes=[XMesh("m", np.array([[np.nan, 0.0, 0.0]]), np.array([1]), np.array([0]))])
    with pytest.raises(FormatError):
        write_xfile(bad, out)
    assert out.read_bytes() == b"the old file\n"
    with pytest.raises(FormatError):
        atomic.write_atomic(tmp_path / "missing" / "new.x", [b"x"])
    assert _tmp_leftovers(tmp_path) == []
    # a successful write keeps the old file's permission bits
    out.chmod(0o640)
    write_xfile(xfile.xfile_from_scene(_source_x(str(XDIR / "assimp" / "test.x"))), out)
    assert (out.stat().st_mode & 0o777) == 0o640 and out.read_bytes().startswith(b"xof ")
    assert _tmp_leftovers(tmp_path) == []
