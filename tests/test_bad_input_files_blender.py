# SPDX-License-Identifier: GPL-3.0-or-later
"""Hostile files through the operators, not only the parsers: every
case gives a clean import or a one-line error (RuntimeError from bpy.ops),
leaves the scene exactly as it was on failure, and stays within work linear
in the file (``work_bounds``). A larger campaign: ``python3.11 tools/run.py py tools/fuzz_campaign.py``."""
from __future__ import annotations

import zlib
from pathlib import Path

import numpy as np
import pytest
from bad_input import mutants, structural_attacks
from blender_checks import ext, snapshot
from conftest import DATA
from work_bounds import bounded

from legacy_skin_io.io.rite import RamModel, RiteJoint, write_ram

X = DATA / "x"
TXT = b"xof 0303txt 0032\n"
MESH = (b"Mesh m { 3; 0;0;0;, 1;0;0;, 0;1;0;; 1; 3;0,1,2;; MeshMaterialList { 1; 1; 0;; "
        b"Material mat { 1;1;1;1;; 0; 0;0;0;; 0;0;0;; TextureFilename { \"%s\"; } } } }")


def _import(bpy, op: str, data: bytes | None, path: Path, bug: bool = False):
    """Run the import operator on ``data`` written to ``path`` (or on the
    file there), in work linear in its size: the result, or the error
    message. On failure, the scene must be untouched, and the message says
    "internal error" only for a ``bug``."""
    if data is not None:
        path.write_bytes(data)
    before = snapshot(bpy)
    try:
        # the import's Python calls: a few per byte of the file at most (a
        # 2.8 MB attack takes 4 million to parse), building a rig of 2,000 bones ~0.5 million
        with bounded(calls=20 * path.stat().st_size + 2_000_000):
            out = getattr(bpy.ops.import_scene, op)(filepath=str(path))
    except RuntimeError as err:
        out = str(err)
        assert snapshot(bpy) == before, f"{path.name}: the failed import left something behind"
        assert "Traceback" not in out
        assert len(out.strip().splitlines()) <= 2, out      # "Error: <one line>"
        assert ("internal error" in out) == bug, out
    else:
        for o in bpy.data.objects:        # the importer does not call Mesh.validate: nothing may need it
            if o.type == "MESH":
                assert not o.data.validate(verbose=False, clean_customdata=False), f"{path.name}: {o.name}"
    return out


@pytest.mark.parametrize("name", ["../../../../etc/passwd", "/etc/passwd", "/proc/self/environ", "/dev/zero",
                                  "//../../etc/passwd", "C:\\\\Windows\\\\win.ini", "x" * 5000 + ".png",
                                  "../" * 300 + "a.png"])
def test_texture_names_never_reach_outside_the_model_folder(bpy, tmp_path, name):
    """A texture name is data from the file: nothing outside the model's
    folder tree is loaded, no image datablock points there, and a name of
    5000 characters is no error."""
    (tmp_path / "passwd").write_text("not an image")
    res = _import(bpy, "xfile", TXT + MESH % name.encode(), tmp_path / "m.x")
    if len(name) > 1024:      # the reader refuses names this long, at their line
        assert isinstance(res, str) and "m.x:2" in res
        return
    assert res == {"FINISHED"}
    root = tmp_path.resolve()
    for img in bpy.data.images:
        fp = bpy.path.abspath(img.filepath) if img.filepath else ""
        assert fp and Path(fp).resolve().is_relative_to(root), (name[:40], img.filepath)
        assert Path(fp).suffix.lower() in (".png", ".jpg", ".jpeg", ".tga", ".bmp", ".dds", ".tif", ".tiff",
                                           ".exr", ".hdr", ".gif", ".psd", ".webp")


def test_a_texture_beside_the_file_is_found_by_base_name(bpy, tmp_path):
    img = bpy.data.images.new("t", 2, 2)
    img.filepath_raw = str(tmp_path / "textures" / "skin.png")
    (tmp_path / "textures").mkdir()
    img.file_format = "PNG"
    img.save()
    bpy.data.images.remove(img)
    res = _import(bpy, "xfile", TXT + MESH % b"D:\\\\art\\\\skin.dds", tmp_path / "m.x")
    assert res == {"FINISHED"}
    assert [Path(i.filepath).name for i in bpy.data.images] == ["skin.png"]


@pytest.mark.parametrize("ticks,tps", [(2_000_000_000, 1), (2_147_483_000, 7), (1_000_000, 1)])
def test_extreme_key_times_are_clear_errors_and_change_nothing(bpy, tmp_path, ticks, tps):
    from x_rigs import chain_file

    bpy.context.scene.frame_start, bpy.context.scene.frame_end, bpy.context.scene.frame_current = 3, 7, 5
    path = chain_file(tmp_path / "far.x", [0, ticks], tps=tps)
    out = _import(bpy, "xfile", None, path)
    assert isinstance(out, str) and "far.x" in out and "frame" in out
    assert (bpy.context.scene.frame_start, bpy.context.scene.frame_end, bpy.context.scene.frame_current) == \
        (3, 7, 5)


def _chain_ram(n: int) -> RamModel:
    joints = [RiteJoint(f"j{i}", i - 1, [0, 0, 0, 1.0], [0, 0.01, 0], [0, 0, 0, 1.0]) for i in range(n)]
    return RamModel(mesh_name="chain", joints=joints, positions=np.zeros((3, 3)),
                    tri_shader=np.zeros(1, dtype=np.int64), tri_vertices=np.array([[0, 1, 2]]),
                    weight_vertex=np.arange(3), weight_joint=np.zeros(3, dtype=np.int64), weight_value=np.ones(3))


def _chain_ram_text(n: int) -> bytes:
    """The RAM text ``write_ram(_chain_ram(n))`` writes, made without the
    writer (whose checks take seconds for a chain this long)."""
    joint = ('%d "j%d"\nparent %d\norientation 0.0 0.0 0.0 1.0\ntranslation 0.0 0.01 0.0\n'
             'rotation 0.0 0.0 0.0 1.0\n')
    return (f"joints {n}\n" + "".join(joint % (i, i, i - 1) for i in range(n))
            + 'mesh "chain"\nvertices 3\n0 0.0 0.0 0.0\n1 0.0 0.0 0.0\n2 0.0 0.0 0.0\nnormals 0\nuvs 0\n'
            'triangles 1\n0 0 0 1 2 0 0 0 0 0 0\nweights 3\n0 0 0 "j0" 1.0\n1 1 0 "j0" 1.0\n'
            '2 2 0 "j0" 1.0\n').encode()


def test_deep_hierarchies_are_refused_whatever_the_syntax(bpy, tmp_path):
    """Chained joints (RAM) or frames chained through references (.X), twice
    as deep as the limit (100,000 of them segfaulted Blender after 100 s
    before there was one): one depth limit for every format, refused in
    work linear in the file."""
    write_ram(_chain_ram(3), tmp_path / "three.ram")
    assert (tmp_path / "three.ram").read_bytes().split(b"\n", 1)[1] == _chain_ram_text(3)   # the writer's text
    out = _import(bpy, "rite", _chain_ram_text(20_001), tmp_path / "chain.ram")
    assert isinstance(out, str) and "deep" in out
    chain = TXT + b"Frame F0 { }\n" + b"\n".join(b"Frame F%d { { F%d } }" % (i, i - 1) for i in range(1, 20_001))
    out = _import(bpy, "xfile", chain, tmp_path / "chain.x")
    assert isinstance(out, str) and "chain.x" in out


def test_a_generous_chain_still_imports(bpy, tmp_path):
    write_ram(_chain_ram(2_000), tmp_path / "ok.ram")
    res = _import(bpy, "rite", None, tmp_path / "ok.ram")
    assert res == {"FINISHED"}
    assert len([o for o in bpy.data.objects if o.type == "ARMATURE"][0].data.bones) == 2_000


@pytest.mark.parametrize("body,fragment", [
    (b"Mesh m { 3; 0;0;0;, 1;0;0;, 0;1;0;; 1; 3;0,1,2;; MeshMaterialList { 1; 1; 4294967295;; "
     b"Material { 1;1;1;1;; 0; 0;0;0;; 0;0;0;; } } }", b""),
    (b"Mesh m { 3; 0;0;0;, 1;0;0;, 1e308;1;0;; 1; 3;0,1,2;; }", b""),
    (b"Frame f { FrameTransformMatrix { 0,0,0,0, 0,0,0,0, 0,0,0,0, 0,0,0,1;; } Mesh m { 3; 0;0;0;, 1;0;0;, "
     b"0;1;0;; 1; 3;0,1,2;; } }", b""),
], ids=["material-index", "huge-coordinate", "singular-matrix"])
def test_absurd_indices_numbers_and_matrices(bpy, tmp_path, body, fragment):
    out = _import(bpy, "xfile", TXT + body, tmp_path / "bad.x")
    assert isinstance(out, str) and "bad.x" in out


@pytest.mark.parametrize("value", ["nan", "inf", "-0.5", "1e39"])
def test_non_finite_or_negative_weights_are_refused(bpy, tmp_path, value):
    """NaN or inf weights were stored in vertex groups with no warning."""
    lines = (DATA / "rite" / "contract_example.ram").read_text().splitlines()
    k = next(i for i, ln in enumerate(lines) if ln.startswith("weights"))
    toks = lines[k + 1].split()
    toks[-1] = value
    lines[k + 1] = " ".join(toks)
    (tmp_path / "w.ram").write_text("\n".join(lines) + "\n")
    out = _import(bpy, "rite", None, tmp_path / "w.ram")
    assert isinstance(out, str) and f"w.ram:{k + 2}" in out


def _inject(monkeypatch, module: str, function: str, error: Exception) -> None:
    """Make ``function`` of the installed extension's ``module`` raise
    ``error``, as a bug in it would."""
    def broken(*a, **k):
        raise error

    monkeypatch.setattr(ext(module), function, broken)


def _internal_error(message: str, stderr: str, function: str, path_name: str) -> None:
    """The user's line names the file and says "internal error" (not a
    file problem); the traceback, down to the failing function, is on stderr."""
    assert "internal error" in message and path_name in message, message
    assert "Traceback" not in message and len(message.strip().splitlines()) <= 2, message
    assert "Traceback (most recent call last)" in stderr and f"in {function}" in stderr, stderr


@pytest.mark.parametrize("module, function, error", [
    ("operators.mesh_build", "place_mesh", ValueError("operands could not be broadcast together")),
    ("operators.armature_build", "rest_matrices", TypeError("unsupported operand type(s)")),
    ("operators.anim_build", "build_action", KeyError("injected")),
    ("operators.pipeline", "validate", ValueError("a numpy-style bug")),
])
def test_a_bug_while_importing_is_an_internal_error(bpy, monkeypatch, capsys, module, function, error):
    """An unexpected exception in the import (injected here; a ValueError
    or TypeError from numpy is a bug, not a bad file) is reported as an
    internal error with its traceback in the console, and everything the
    import made is removed."""
    capsys.readouterr()
    _inject(monkeypatch, module, function, error)
    out = _import(bpy, "xfile", None, X / "directx-sdk" / "tiny_4anim.x", bug=True)
    assert isinstance(out, str)
    _internal_error(out, capsys.readouterr().err, "broken", "tiny_4anim.x")


def test_a_bad_file_is_not_an_internal_error(bpy, tmp_path, capsys):
    """A file problem stays one line naming the file and its position, with
    no traceback in the console."""
    capsys.readouterr()
    out = _import(bpy, "xfile", TXT + b"Frame f { FrameTransformMatrix { 1; 2; } }", tmp_path / "bad.x")
    assert isinstance(out, str) and "bad.x:2" in out and "internal error" not in out, out
    assert "Traceback" not in capsys.readouterr().err


def test_a_singular_skin_offset_is_a_file_problem(bpy, tmp_path):
    """A SkinWeights matrixOffset that cannot be inverted (found by the
    fuzzer: it was reported as numpy's "Singular matrix") is a file
    problem, named as one."""
    zero = b"0,0,0,0, 0,0,0,0, 0,0,0,0, 0,0,0,0;;"
    data = (TXT + b"Frame root { FrameTransformMatrix { 1,0,0,0, 0,1,0,0, 0,0,1,0, 0,0,0,1;; }\n"
            b"Mesh m { 3; 0;0;0;, 1;0;0;, 0;1;0;; 1; 3;0,1,2;;\n"
            b'SkinWeights { "root"; 3; 0,1,2; 1.0,1.0,1.0; ' + zero + b" } } }\n")
    out = _import(bpy, "xfile", data, tmp_path / "skin.x")
    assert isinstance(out, str) and "skin.x" in out and "matrixOffset is singular" in out, out


def test_a_singular_frame_under_an_unskinned_one_is_a_file_problem(bpy, tmp_path):
    """A joint without SkinWeights takes its bind pose from a skinned child
    through the child's FrameTransformMatrix; a singular one (found by the
    fuzzer: numpy's "Singular matrix") is a file problem, never a bug."""
    flat = b"0,0,0,0, 0,0,0,0, 0,0,0,0, 0,0,0,1;;"
    data = (TXT + b"Frame root { FrameTransformMatrix { 1,0,0,0, 0,1,0,0, 0,0,1,0, 0,0,0,1;; }\n"
            b"Frame child { FrameTransformMatrix { " + flat + b" } }\n"
            b"Mesh m { 3; 0;0;0;, 1;0;0;, 0;1;0;; 1; 3;0,1,2;;\n"
            b'SkinWeights { "child"; 3; 0,1,2; 1.0,1.0,1.0; 1,0,0,0, 0,1,0,0, 0,0,1,0, 0,0,0,1;; } } }\n')
    out = _import(bpy, "xfile", data, tmp_path / "flat.x")
    assert out == {"FINISHED"} or ("flat.x" in out and "singular" in out), out


def test_a_bone_blender_cannot_hold_is_a_file_problem(bpy, tmp_path):
    """A joint 1e20 away makes Blender's float32 bones degenerate (found by
    the fuzzer: numpy's "Singular matrix" on the rest pose): one line that
    says so, the scene untouched."""
    text = (DATA / "rite" / "contract_example.ram").read_text()
    assert "translation 0 0.25 0" in text
    (tmp_path / "far.ram").write_text(text.replace("translation 0 0.25 0", "translation 1e20 0.25 0", 1))
    out = _import(bpy, "rite", None, tmp_path / "far.ram")
    assert isinstance(out, str) and "far.ram" in out and "Blender cannot hold its bone" in out, out


def test_a_bug_while_importing_an_animation_is_an_internal_error(bpy, monkeypatch, capsys):
    """The same for an animation imported onto an armature: the armature's
    actions and NLA tracks are as they were."""
    rite = DATA / "rite"
    assert bpy.ops.import_scene.rite(filepath=str(rite / "contract_example.ram")) == {"FINISHED"}
    arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    before = snapshot(bpy)
    tracks = [t.name for t in arm.animation_data.nla_tracks] if arm.animation_data else []
    capsys.readouterr()
    _inject(monkeypatch, "operators.anim_place", "place_layers", IndexError("index 3 is out of bounds"))
    with pytest.raises(RuntimeError) as err:
        bpy.ops.import_anim.rite(filepath=str(rite / "contract_example.raa"), playback="MERGEABLE")
    _internal_error(str(err.value), capsys.readouterr().err, "broken", "contract_example.raa")
    assert snapshot(bpy) == before
    assert ([t.name for t in arm.animation_data.nla_tracks] if arm.animation_data else []) == tracks


def test_a_bug_while_exporting_is_an_internal_error(bpy, monkeypatch, capsys, tmp_path):
    """An export that hits a bug says so, and writes nothing."""
    assert bpy.ops.import_scene.rite(filepath=str(DATA / "rite" / "contract_example.ram")) == {"FINISHED"}
    capsys.readouterr()
    _inject(monkeypatch, "operators.mesh_extract", "vertex_weights", ValueError("setting an array element"))
    target = tmp_path / "out.x"
    with pytest.raises(RuntimeError) as err:
        bpy.ops.export_scene.xfile(filepath=str(target))
    _internal_error(str(err.value), capsys.readouterr().err, "broken", "out.x")
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------------------
# fuzzing through the operators

def _structural_sample(step: int):
    for k, (name, data) in enumerate(structural_attacks()):
        if k % step == 0:
            yield name, data


def test_structural_attacks_through_the_operator(bpy, tmp_path):
    """Every 12th of the structural attacks of ``bad_input`` (deep and
    shared references, huge counts and indices, non-finite values in every
    numeric field, extreme times, hostile strings), driven through
    bpy.ops.import_scene.xfile."""
    n = 0
    for _name, data in _structural_sample(12):
        _import(bpy, "xfile", data, tmp_path / "attack.x")
        n += 1
    assert n >= 60


@pytest.mark.parametrize("op,source", [
    ("xfile", X / "assimp" / "test_cube_text.x"), ("xfile", X / "assimp" / "anim_test.x"),
    ("rite", DATA / "rite" / "contract_example.ram"),
], ids=["cube", "anim_test", "ram"])
def test_mutation_fuzzer_through_the_operator(bpy, tmp_path, op, source):
    """Mutated real files: a clean import (then every vertex Blender holds is
    finite) or a one-line error with the scene untouched."""
    data = source.read_bytes()
    ok = failed = 0
    for k, mutant in enumerate(mutants(zlib.crc32(source.name.encode()) % 1000, data, 25)):
        bpy.ops.wm.read_homefile(use_empty=True)
        out = _import(bpy, op, mutant, tmp_path / f"m{k}{source.suffix}")
        if out == {"FINISHED"}:
            ok += 1
            for o in bpy.data.objects:
                if o.type == "MESH":
                    co = np.empty(3 * len(o.data.vertices), dtype=np.float32)
                    o.data.vertices.foreach_get("co", co)
                    assert np.isfinite(co).all()
        else:
            failed += 1
    assert ok + failed == 25 and failed > 0
