# SPDX-License-Identifier: GPL-3.0-or-later
"""RiTE RAM/RAA reader and writer: grammar, errors with lines, warnings, round trips."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from work_bounds import bounded

from legacy_skin_io.io.errors import FormatError
from legacy_skin_io.io.rite import (
    RaaAnimation,
    RaaTrack,
    RamModel,
    RiteJoint,
    raa_to_text,
    ram_to_text,
    read_raa,
    read_raa_text,
    read_ram,
    read_ram_text,
    write_raa,
    write_ram,
)

HERE = Path(__file__).resolve().parent
DATA = HERE / "data" / "rite"
SAMPLES = HERE.parent / "samples" / "rite"
EXAMPLE_RAM = (DATA / "contract_example.ram").read_text()
EXAMPLE_RAA = (DATA / "contract_example.raa").read_text()


def ram_error(text: str) -> FormatError:
    with pytest.raises(FormatError) as info:
        read_ram_text(text, "t.ram")
    return info.value


def raa_error(text: str) -> FormatError:
    with pytest.raises(FormatError) as info:
        read_raa_text(text, "t.raa")
    return info.value


def assert_same_model(a: RamModel, b: RamModel) -> None:
    assert a.mesh_name == b.mesh_name
    assert len(a.joints) == len(b.joints)
    for ja, jb in zip(a.joints, b.joints):
        assert ja.name == jb.name and ja.parent == jb.parent
        for attr in ("orientation", "translation", "rotation"):
            assert np.array_equal(getattr(ja, attr), getattr(jb, attr))
    for attr in ("positions", "normals", "uvs", "tri_shader", "tri_vertices", "tri_normals", "tri_uvs",
                 "weight_vertex", "weight_joint", "weight_value"):
        x, y = getattr(a, attr), getattr(b, attr)
        if x is None or y is None:
            assert x is None and y is None, attr
        else:
            assert x.dtype == y.dtype and np.array_equal(x, y), attr


def assert_same_anim(a: RaaAnimation, b: RaaAnimation) -> None:
    assert (a.name, a.frame_count, a.frame_count_given) == (b.name, b.frame_count, b.frame_count_given)
    assert len(a.tracks) == len(b.tracks)
    for ta, tb in zip(a.tracks, b.tracks):
        assert (ta.joint_id, ta.joint_name) == (tb.joint_id, tb.joint_name)
        assert np.array_equal(ta.frames, tb.frames) and np.array_equal(ta.rotations, tb.rotations)


# -- the contract's example ---------------------------------------------------------

def test_contract_example_ram():
    warnings = []
    m = read_ram(DATA / "contract_example.ram", warnings)
    assert warnings == []
    assert m.mesh_name == "Body"
    assert [j.name for j in m.joints] == ["Hips", "Spine"]
    assert [j.parent for j in m.joints] == [-1, 0]
    assert np.array_equal(m.joints[1].translation, [0, 0.25, 0])
    assert m.joints[0].orientation.dtype == np.float64
    assert np.array_equal(m.positions, [[0.1, 1.0, 0.0], [-0.1, 1.0, 0.0], [0.0, 1.3, 0.0]])
    assert np.array_equal(m.normals, [[0, 0, 1]])
    assert np.array_equal(m.uvs, [[0, 0], [1, 0], [0.5, 1]])
    assert m.tri_shader.tolist() == [0]
    assert m.tri_vertices.tolist() == [[0, 1, 2]] and m.tri_vertices.dtype == np.int64
    assert m.tri_normals.tolist() == [[0, 0, 0]]
    assert m.tri_uvs.tolist() == [[0, 1, 2]]
    assert m.weight_vertex.tolist() == [0, 1, 2, 2]
    assert m.weight_joint.tolist() == [0, 0, 0, 1]
    assert m.weight_value.tolist() == [1.0, 1.0, 0.25, 0.75]


def test_contract_example_raa():
    a = read_raa(DATA / "contract_example.raa")
    assert a.name == "contract_example" and a.frame_count == 33 and a.frame_count_given
    (t,) = a.tracks
    assert (t.joint_id, t.joint_name) == (1, "Spine")
    assert t.frames.tolist() == [0, 16, 32] and t.frames.dtype == np.int64
    assert np.array_equal(t.rotations[1], [0, 0, 0.3826834, 0.9238795])


def test_mesh_name_defaults_to_stem_and_optional_sections():
    text = EXAMPLE_RAM.replace('mesh "Body"\n', "")
    text = text[:text.index("normals 1")] + text[text.index("triangles 1"):]
    m = read_ram_text(text, "/x/My Model.ram")
    assert m.mesh_name == "My Model"
    assert m.tri_normals is None and m.tri_uvs is None
    assert m.normals.shape == (0, 3) and m.uvs.shape == (0, 2)
    # count 0 is the same as omitted; the triangle's normal ids are then ignored
    m2 = read_ram_text(EXAMPLE_RAM.replace("normals 1\n0 0 0 1\n", "normals 0\n"), "t.ram")
    assert m2.tri_normals is None and m2.tri_uvs is not None


def test_frames_default_is_largest_key_plus_one():
    a = read_raa_text(EXAMPLE_RAA.replace("frames 33\n", ""), "w.raa")
    assert a.frame_count == 33 and not a.frame_count_given
    b = read_raa_text(EXAMPLE_RAA.replace("keyframes 3\n", ""), "w.raa")  # keyframes is optional
    assert [len(t.frames) for t in b.tracks] == [3]


# -- lexical freedom --------------------------------------------------------------

def test_crlf_tabs_comments_case_and_blank_lines():
    lines = EXAMPLE_RAM.split("\n")
    out = []
    for k, line in enumerate(lines):
        out.append(line.replace(" ", "\t  ") if k % 3 == 0 else line)
        if k % 4 == 1:
            out += ["", "# a comment \"with a quote", "   // another", "\t"]
    text = "\r\n".join(out).replace("vertices", "VERTICES").replace("parent", "Parent")
    assert_same_model(read_ram_text(text, "t.ram"), read_ram_text(EXAMPLE_RAM, "t.ram"))


def test_names_with_spaces_and_joints_child_before_parent_and_ids_out_of_order():
    text = """joints 3
7 "Left Lower Arm"
parent 5
orientation 0 0 0 1
translation 0.3 0 0
rotation 0 0 0 1
2 "Root Joint"
parent -1
orientation 0 0 0 1
translation 0 1 0
rotation 0 0 0 1
5 "Left Upper Arm"
parent 2
orientation 0 0 0.7071067811865476 0.7071067811865476
translation 0.2 0 0
rotation 0 0 0 1
mesh "Body Mesh"
vertices 3
20 2 2 2
10 1 1 1
30 3 3 3
triangles 2
9 4 30 10 20 0 0 0 0 0 0
3 5 10 20 30 0 0 0 0 0 0
weights 3
8 30 7 "Left Lower Arm" 1.0
1 10 2 "Root Joint" 0.5
4 10 5 "Left Upper Arm" 0.5
"""
    warnings = []
    m = read_ram_text(text, "t.ram", warnings)
    assert warnings == []
    assert [j.name for j in m.joints] == ["Left Lower Arm", "Root Joint", "Left Upper Arm"]
    assert [j.parent for j in m.joints] == [2, -1, 1]
    assert m.mesh_name == "Body Mesh"
    assert m.positions[:, 0].tolist() == [1, 2, 3]            # sorted by vertex id 10, 20, 30
    assert m.tri_shader.tolist() == [5, 4]                    # triangle ids 3, 9
    assert m.tri_vertices.tolist() == [[0, 1, 2], [2, 0, 1]]
    assert m.weight_vertex.tolist() == [0, 0, 2]              # weight ids 1, 4, 8
    assert m.weight_joint.tolist() == [1, 2, 0]
    assert m.weight_value.tolist() == [0.5, 0.5, 1.0]


def test_keys_out_of_order_are_sorted():
    text = 'track 3 9 "Arm"\n2 20 0 0 0 1\n0 0 0 0 1 0\n1 10 0 1 0 0\n'
    a = read_raa_text(text, "a.raa")
    assert a.tracks[0].frames.tolist() == [0, 10, 20]
    assert a.tracks[0].rotations[:, 3].tolist() == [0, 0, 1]
    assert a.frame_count == 21


def test_float_forms_python_accepts():
    text = EXAMPLE_RAM.replace("0 0.1 1.0 0.0", "0 +.1 1E0 -0.")
    m = read_ram_text(text, "t.ram")
    assert m.positions[0].tolist() == [0.1, 1.0, 0.0]
    assert np.signbit(m.positions[0, 2])


# -- errors with their line ------------------------------------------------------

@pytest.mark.parametrize("old,new,line,fragment", [
    ("weights 4", "weights 5", 31, "weights: expected 5 records, found 4 at end of file"),
    ("vertices 3", "vertices 4", 18, "vertices: expected 4 records, found 3 before line 18"),
    ("vertices 3", "vertices 2", 17, "vertices: expected 2 records, found more"),
    ("joints 2", "joints 3", 13, "joints: expected 3 records, found 2 before line 13"),
    ("joints 2", "joints 1", 8, "joints: expected 1 records, found more"),
    ("1 -0.1 1.0 0.0", "1 -0.1 nan 0.0", 16, "nan and inf are not allowed"),
    ("1 -0.1 1.0 0.0", "1 -0.1 1e999 0.0", 16, "out of range"),
    ("1 -0.1 1.0 0.0", "1 -0.1 -inf 0.0", 16, "nan and inf"),
    ("1 -0.1 1.0 0.0", "1 -0.1 1.0", 16, "expected 4 fields"),
    ("1 -0.1 1.0 0.0", "1.0 -0.1 1.0 0.0", 16, "expected an integer"),
    ("1 -0.1 1.0 0.0", "1e0 -0.1 1.0 0.0", 16, "expected an integer"),
    ("1 -0.1 1.0 0.0", "-1 -0.1 1.0 0.0", 16, "must not be negative"),
    ("2 0.0 1.3 0.0", "1 0.0 1.3 0.0", 17, "duplicate vertex id 1 (first defined on line 16)"),
    ("0 0 0 1 2 0 0 0 0 1 2", "0 0 0 1 3 0 0 0 0 1 2", 25, "triangle 0: vertex id 3 is not defined"),
    ("0 0 0 1 2 0 0 0 0 1 2", "0 0 0 1 2 0 0 0 0 1 7", 25, "triangle 0: uv id 7 is not defined"),
    ("0 0 0 1 2 0 0 0 0 1 2", "0 0 0 1 2 0 1 0 0 1 2", 25, "normal id 1 is not defined"),
    ('3 2 1 "Spine" 0.75', '3 2 4 "Spine" 0.75', 30, "weight 3: joint id 4 is not defined"),
    ('3 2 1 "Spine" 0.75', '3 9 1 "Spine" 0.75', 30, "weight 3: vertex id 9 is not defined"),
    ('3 2 1 "Spine" 0.75', '3 2 1 "Spine 0.75', 30, "unterminated quoted name"),
    ('3 2 1 "Spine" 0.75', '3 2 1 Spine 0.75', 30, "expected a quoted name"),
    ("parent 0", "parent 4", 9, "parent id 4 is not defined"),
    ("parent -1", "parent 1", 3, "parents form a cycle"),
    ("parent 0", "parent 1", 8, "parents form a cycle (1 -> 1)"),   # its own parent
    ("translation 0 0.25 0", "rotation 0 0 0 1", 11, "expected 'translation', found 'rotation'"),
    ("orientation 0 0 0 1\ntranslation 0 1 0", "orientation 0 0 1\ntranslation 0 1 0", 5, "expected 4 values"),
    ('1 "Spine"', '0 "Spine"', 8, "duplicate joint id 0 (first defined on line 3)"),
    ("uvs 3", "uvs -3", 20, "count must not be negative"),
    ("uvs 3", "uvs 3 4", 20, "takes one count"),
    ('mesh "Body"', 'mesh "Body"\nmesh "Again"', 14, "second 'mesh'"),
])
def test_ram_errors_name_the_line(old, new, line, fragment):
    assert old in EXAMPLE_RAM
    err = ram_error(EXAMPLE_RAM.replace(old, new, 1))
    assert err.line == line, str(err)
    assert fragment in str(err), str(err)
    assert err.path == "t.ram" and str(err).startswith(f"t.ram:{line}: ")


def test_count_short_error_matches_the_documented_wording():
    text = EXAMPLE_RAM.replace("weights 4", "weights 5") + "# trailer\nfoo 1\n"
    text = text.replace("# trailer\nfoo 1\n", "vertices 0\n")
    err = ram_error(text)
    assert str(err) == "t.ram:31: weights: expected 5 records, found 4 before line 31"


def test_record_outside_section_and_joint_keyword_outside_joint():
    assert ram_error("0 1 2 3\n").line == 1
    assert "outside a joint" in str(ram_error("joints 0\nparent -1\n"))
    assert ram_error("# nothing\n\n").line is None          # no RiTE data at all


@pytest.mark.parametrize("text,line,fragment", [
    ('frames 10\ntrack 0 1 "A"\n0 10 0 0 0 1\n', 3, "key frame 10 is out of range"),
    ('track 0 1 "A"\n0 -1 0 0 0 1\n', 2, "key frame -1 is out of range"),
    ('track 0 1 "A"\n0 3 0 0 0 1\n1 3 0 0 0 1\n', 3, "two keys on frame 3 (the other is on line 2)"),
    ('track 0 1 "A"\n0 3 0 0 0 1\n0 4 0 0 0 1\n', 3, "duplicate track 0 key id 0"),
    ('track 0 1 "A"\ntrack 1 2 "B"\n0 1 0 0 0 1\n', 1, "has no keys"),
    ('track 0 1 "A"\nkeyframes 2\n0 1 0 0 0 1\ntrack 1 2 "B"\n0 1 0 0 0 1\n', 4,
     "keyframes: expected 2 records, found 1 before line 4"),
    ('track 0 1 "A"\nkeyframes 1\n0 1 0 0 0 1\n1 2 0 0 0 1\n', 4, "keyframes: expected 1 records, found more"),
    ('track 0 1 "A"\n0 1 0 0 0 1\nframes 5\n', 3, "'frames' must come before the first track"),
    ('frames 5\nframes 6\n', 2, "second 'frames'"),
    ('track 0 1 "A"\n0 1 0 0 nan 1\n', 2, "nan and inf"),
    ('track 0 1 "A"\n0 1 0 0 0\n', 2, "expected 6 fields"),
    ('track 0 1 "A"\n0 1 0 0 0 1\ntrack 0 2 "B"\n0 1 0 0 0 1\n', 3, "duplicate track id 0"),
    ('0 1 0 0 0 1\n', 1, "key record outside a track"),
    ('track 0 1 "A"\n0 1 0 0 0 1\nkeyframes 1\n', 3, "must directly follow"),
    ('track 0 -1 "A"\n0 1 0 0 0 1\n', 1, "must not be negative"),
    ('track 0 1 A\n0 1 0 0 0 1\n', 1, "expected a quoted name"),
])
def test_raa_errors_name_the_line(text, line, fragment):
    err = raa_error(text)
    assert err.line == line, str(err)
    assert fragment in str(err), str(err)


def test_absurd_counts_fail_without_work_or_memory_sized_by_the_count():
    for text in ("vertices 4000000000\n0 1 2 3\n", "joints 4000000000\n0 \"A\"\n",
                 "weights 99999999999999999999\n", "triangles 4000000000\n"):
        with bounded(calls=20_000, memory=4 << 20):
            err = ram_error(text)
        assert "expected" in str(err)
    with bounded(calls=20_000, memory=4 << 20):
        raa_error('track 0 1 "A"\nkeyframes 4000000000\n0 0 0 0 0 1\n')


def test_file_errors_are_format_errors(tmp_path):
    with pytest.raises(FormatError):
        read_ram(tmp_path / "missing.ram")
    (tmp_path / "bin.ram").write_bytes(b"joints 0\nmesh \"\xff\xfe\"\n")
    with pytest.raises(FormatError) as info:
        read_ram(tmp_path / "bin.ram")
    assert info.value.line == 2


# -- warnings ---------------------------------------------------------------------

def test_unknown_keyword_warns_with_line_and_is_skipped():
    text = (EXAMPLE_RAM.replace("normals 1", "scale 2 2 2\nnormals 1")
            .replace("2 0.0 1.3 0.0", "2 0.0 1.3 0.0\nblend on"))
    warnings = []
    m = read_ram_text(text, "t.ram", warnings)
    assert warnings == ["t.ram:18: unknown keyword 'blend': line ignored",
                        "t.ram:19: unknown keyword 'scale': line ignored"]
    assert_same_model(m, read_ram_text(EXAMPLE_RAM, "t.ram"))


def test_unknown_keyword_inside_a_counted_section_is_not_a_record():
    text = EXAMPLE_RAM.replace("1 1 0\n", "1 1 0\nwrap repeat\n")
    warnings = []
    m = read_ram_text(text, "t.ram", warnings)
    assert len(warnings) == 1 and "t.ram:23:" in warnings[0] and "'wrap'" in warnings[0]
    assert m.uvs.shape == (3, 2)


def test_weight_name_mismatch_warns():
    warnings = []
    m = read_ram_text(EXAMPLE_RAM.replace('3 2 1 "Spine"', '3 2 1 "Chest"'), "t.ram", warnings)
    assert m.weight_joint.tolist() == [0, 0, 0, 1]     # the id wins
    assert len(warnings) == 1
    assert warnings[0].startswith("t.ram:30: weight 3:") and "'Chest'" in warnings[0] and "'Spine'" in warnings[0]


def test_weight_name_mismatch_warns_in_vectorised_path_too():
    m = random_model(np.random.default_rng(5), n_vertices=300)
    text = ram_to_text(m)
    name = m.joints[int(m.weight_joint[7])].name
    lines = text.split("\n")
    k = lines.index(f"weights {len(m.weight_value)}") + 1 + 7
    lines[k] = lines[k].replace(f'"{name}"', '"Someone Else"')
    warnings = []
    back = read_ram_text("\n".join(lines), "t.ram", warnings)
    assert len(warnings) == 1 and warnings[0].startswith(f"t.ram:{k + 1}: weight 7:")
    assert_same_model(back, read_ram_text(text, "t.ram"))


# -- round trips ----------------------------------------------------------------

def random_model(rng, n_vertices=200, with_normals=True, with_uvs=True) -> RamModel:
    nj = int(rng.integers(1, 12))
    joints = []
    for k in range(nj):
        q = rng.normal(size=4)
        joints.append(RiteJoint(f"joint {k} {'x' * int(rng.integers(0, 4))}", int(rng.integers(-1, k)) if k else -1,
                                q / np.linalg.norm(q), rng.normal(size=3) * 10.0 ** rng.integers(-8, 8, size=3),
                                np.array([0.0, 0.0, 0.0, 1.0]) if k % 2 else q[::-1] / np.linalg.norm(q)))
    v = n_vertices
    nt = int(rng.integers(1, 2 * v))
    nw = int(rng.integers(v, 4 * v))
    positions = rng.normal(size=(v, 3)) * 10.0 ** rng.integers(-20, 20, size=(v, 3))
    positions[0] = [-0.0, 0.0, 1e-300]
    tri_v = rng.integers(0, v, size=(nt, 3))
    return RamModel(
        mesh_name=f"mesh {int(rng.integers(100))}",
        joints=joints, positions=positions,
        normals=rng.normal(size=(v // 2, 3)) if with_normals else np.zeros((0, 3)),
        uvs=rng.random((v // 3, 2)) if with_uvs else np.zeros((0, 2)),
        tri_shader=rng.integers(-3, 40, size=nt), tri_vertices=tri_v,
        tri_normals=rng.integers(0, v // 2, size=(nt, 3)) if with_normals else None,
        tri_uvs=rng.integers(0, v // 3, size=(nt, 3)) if with_uvs else None,
        weight_vertex=rng.integers(0, v, size=nw), weight_joint=rng.integers(0, nj, size=nw),
        weight_value=rng.random(nw))


def random_anim(rng) -> RaaAnimation:
    frames = int(rng.integers(1, 200))
    tracks = []
    for k in range(int(rng.integers(0, 6))):
        keys = np.sort(rng.choice(frames, size=int(rng.integers(1, min(frames, 30) + 1)), replace=False))
        q = rng.normal(size=(len(keys), 4))
        tracks.append(RaaTrack(int(rng.integers(0, 50)), f"J {k}", keys, q / np.linalg.norm(q, axis=1)[:, None]))
    given = bool(rng.integers(0, 2)) or not tracks
    if not given:
        frames = max(int(t.frames[-1]) for t in tracks) + 1
    return RaaAnimation("anim", frames, given, tracks)


@pytest.mark.parametrize("seed", range(8))
def test_ram_round_trip_data_and_bytes(tmp_path, seed):
    rng = np.random.default_rng(seed)
    m = random_model(rng, n_vertices=int(rng.integers(3, 400)), with_normals=seed % 3 != 0, with_uvs=seed % 4 != 1)
    path = tmp_path / f"mesh {m.mesh_name[5:]}.ram"
    write_ram(m, path)
    back = read_ram(path)
    assert_same_model(back, m)
    first = path.read_bytes()
    write_ram(back, path)
    assert path.read_bytes() == first
    assert ram_to_text(back).encode() == first
    assert [p.name for p in tmp_path.iterdir()] == [path.name]    # no temp files left


@pytest.mark.parametrize("seed", range(8))
def test_raa_round_trip_data_and_bytes(tmp_path, seed):
    a = random_anim(np.random.default_rng(100 + seed))
    path = tmp_path / "anim.raa"
    write_raa(a, path)
    back = read_raa(path)
    assert_same_anim(back, a)
    first = path.read_bytes()
    write_raa(back, path)
    assert path.read_bytes() == first == raa_to_text(back).encode()


def test_contract_example_read_write_read():
    m = read_ram_text(EXAMPLE_RAM, "t.ram")
    again = read_ram_text(ram_to_text(m), "t.ram")
    assert_same_model(again, m)
    assert ram_to_text(again) == ram_to_text(m)
    a = read_raa_text(EXAMPLE_RAA, "t.raa")
    assert_same_anim(read_raa_text(raa_to_text(a), "t.raa"), a)


def test_vectorised_and_line_by_line_paths_agree():
    """Inserting a comment into each section forces the line-by-line path."""
    m = random_model(np.random.default_rng(11), n_vertices=500)
    text = ram_to_text(m)
    slow = text
    for kw in ("vertices", "normals", "uvs", "triangles", "weights"):
        slow = slow.replace(f"\n{kw} ", f"\n{kw} ", 1)
        head, rest = slow.split(f"\n{kw} ", 1)
        count_line, body = rest.split("\n", 1)
        slow = f"{head}\n{kw} {count_line}\n# forced slow path\n{body}"
    assert slow != text
    assert_same_model(read_ram_text(slow, "t.ram"), m)
    assert_same_model(read_ram_text(text, "t.ram"), m)
    crlf = "\r\n".join(line if '"' in line else line.replace(" ", "\t ") for line in text.split("\n"))
    assert_same_model(read_ram_text(crlf, "t.ram"), m)


def test_writer_rejects_bad_models_and_keeps_the_old_file(tmp_path):
    path = tmp_path / "keep.ram"
    good = read_ram_text(EXAMPLE_RAM, "keep.ram")
    write_ram(good, path)
    before = path.read_bytes()
    bad_models = []
    m = read_ram_text(EXAMPLE_RAM); m.joints[0].name = 'say "hi"'; bad_models.append(m)
    m = read_ram_text(EXAMPLE_RAM); m.positions[0, 0] = np.nan; bad_models.append(m)
    m = read_ram_text(EXAMPLE_RAM); m.tri_vertices[0, 0] = 3; bad_models.append(m)
    m = read_ram_text(EXAMPLE_RAM); m.weight_joint[0] = 2; bad_models.append(m)
    m = read_ram_text(EXAMPLE_RAM); m.joints[0].parent = 1; bad_models.append(m)   # cycle
    m = read_ram_text(EXAMPLE_RAM); m.tri_normals = None; bad_models.append(m)
    for bad in bad_models:
        with pytest.raises(FormatError):
            write_ram(bad, path)
        assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.ram"]
    with pytest.raises(FormatError):
        write_raa(RaaAnimation("a", 5, True, [RaaTrack(0, "A", [1, 1], np.zeros((2, 4)) + [0, 0, 0, 1])]),
                  tmp_path / "a.raa")
    with pytest.raises(FormatError):
        write_raa(RaaAnimation("a", 5, True, [RaaTrack(0, "A", [5], [[0, 0, 0, 1]])]), tmp_path / "a.raa")


# -- fuzz -------------------------------------------------------------------------

def _only_format_errors(reader, data: bytes) -> None:
    """FormatError or nothing, in work linear in the lines of ``data``."""
    try:
        with bounded(calls=50 * data.count(b"\n") + 20_000):
            reader(data, "f")
    except FormatError:
        pass


def test_fuzz_truncations_at_every_line():
    for text, reader in ((EXAMPLE_RAM, read_ram_text), (EXAMPLE_RAA, read_raa_text),
                         (ram_to_text(random_model(np.random.default_rng(3), 40)), read_ram_text)):
        data = text.encode()
        cuts = [k for k, b in enumerate(data) if b == 10]
        for cut in cuts + [c + 1 for c in cuts] + [c - 2 for c in cuts if c > 2]:
            _only_format_errors(reader, data[:cut])


def test_fuzz_random_corruptions():
    rng = np.random.default_rng(1234)
    base_ram = ram_to_text(random_model(np.random.default_rng(4), 30)).encode()
    sources = [(EXAMPLE_RAM.encode(), read_ram_text), (base_ram, read_ram_text),
               (EXAMPLE_RAA.encode(), read_raa_text)]
    alphabet = b'0123456789 \t\n\r"#/-+.eE' + b"nanifxyz\x00\xff\x0b"
    for k in range(360):
        data, reader = sources[k % 3]
        buf = bytearray(data)
        kind = rng.integers(0, 4)
        pos = int(rng.integers(0, len(buf)))
        if kind == 0:
            buf[pos] = int(rng.choice(list(alphabet)))
        elif kind == 1:
            del buf[pos]
        elif kind == 2:
            lines = bytes(buf).split(b"\n")
            i, j = rng.integers(0, len(lines), size=2)
            lines[i] = lines[j]
            buf = bytearray(b"\n".join(lines))
        else:
            lines = bytes(buf).split(b"\n")
            del lines[int(rng.integers(0, len(lines)))]
            buf = bytearray(b"\n".join(lines))
        _only_format_errors(reader, bytes(buf))


# -- the sample rig -----------------------------------------------------------------

def test_sample_rig_reads_clean_with_the_stated_properties():
    warnings = []
    m = read_ram(SAMPLES / "humanoid.ram", warnings)
    walk = read_raa(SAMPLES / "walk.raa", warnings)
    wave = read_raa(SAMPLES / "wave.raa", warnings)
    assert warnings == []
    assert len(m.joints) >= 20
    names = {j.name for j in m.joints}
    assert {"Hips", "Head", "LeftArm", "RightForeArm", "LeftUpLeg", "RightFoot"} <= names
    assert sum(not np.allclose(j.orientation, [0, 0, 0, 1]) for j in m.joints) >= 5
    assert len(m.tri_vertices) > 2000
    assert len(set(m.tri_shader.tolist())) >= 3
    height = m.positions[:, 1].max() - m.positions[:, 1].min()
    assert 1.6 < height < 2.0
    counts = np.bincount(m.weight_vertex, minlength=len(m.positions))
    assert counts.min() >= 1 and counts.max() <= 4
    sums = np.bincount(m.weight_vertex, weights=m.weight_value, minlength=len(m.positions))
    assert np.allclose(sums, 1.0, atol=1e-9)
    assert np.allclose(np.linalg.norm(m.normals, axis=1), 1.0)
    assert m.tri_normals is not None and m.tri_uvs is not None
    assert walk.frame_count == 33
    for t in walk.tracks:
        assert t.frames.tolist() == list(range(0, 33, 4))
        assert np.array_equal(t.rotations[0], t.rotations[-1])
        assert m.joints[t.joint_id].name == t.joint_name
    assert 35 <= wave.frame_count <= 45
    assert all(t.joint_name.startswith("Right") for t in wave.tracks)


def _contract_sections(path) -> dict:
    """The RAM/RAA contract read line by line, without io/rite: every
    ``keyword N`` header followed by N rows (joints: N blocks of 5 lines),
    each row split into tokens (quoted names kept whole)."""
    import shlex

    lines = [ln.strip() for ln in Path(path).read_text().splitlines()]
    lines = [ln for ln in lines if ln and not ln.startswith("#")]
    out: dict = {}
    i = 0
    while i < len(lines):
        toks = shlex.split(lines[i])
        if toks[0] in ("frames", "mesh"):
            out[toks[0]] = toks[1]
            i += 1
        elif toks[0] == "track":
            out.setdefault("tracks", []).append(toks[1:])
            n = int(shlex.split(lines[i + 1])[1])
            out.setdefault("keys", []).append([shlex.split(r) for r in lines[i + 2:i + 2 + n]])
            i += 2 + n
        else:
            n = int(toks[1])
            per = 5 if toks[0] == "joints" else 1
            out[toks[0]] = [shlex.split(r) for r in lines[i + 1:i + 1 + n * per]]
            i += 1 + n * per
    return out


def test_samples_follow_the_contract_read_independently():
    """The bundled samples read by io/rite equal a plain line-by-line reading
    of the contract's grammar (independent of the reader and of the writer
    that made them)."""
    ram = read_ram(SAMPLES / "humanoid.ram")
    sec = _contract_sections(SAMPLES / "humanoid.ram")
    blocks = [sec["joints"][k:k + 5] for k in range(0, len(sec["joints"]), 5)]
    assert [b[0][1] for b in blocks] == [j.name for j in ram.joints]
    for b, j in zip(blocks, ram.joints):
        assert np.array_equal([float(x) for x in b[2][1:]], j.orientation)
        assert np.array_equal([float(x) for x in b[3][1:]], j.translation)
        assert np.array_equal([float(x) for x in b[4][1:]], j.rotation)
    vid = [int(r[0]) for r in sec["vertices"]]
    pos = np.array([[float(x) for x in r[1:4]] for r in sec["vertices"]])
    assert np.array_equal(pos[np.argsort(vid)], ram.positions)
    w = np.array([float(r[4]) for r in sec["weights"]])
    assert np.allclose(np.sort(w), np.sort(ram.weight_value), rtol=0, atol=0)
    assert len(sec["triangles"]) == len(ram.tri_vertices)
    for name in ("walk.raa", "wave.raa"):
        raa = read_raa(SAMPLES / name)
        sec = _contract_sections(SAMPLES / name)
        assert int(sec["frames"]) == raa.frame_count
        assert [t[2] for t in sec["tracks"]] == [t.joint_name for t in raa.tracks]
        for rows, t in zip(sec["keys"], raa.tracks):
            assert [int(r[1]) for r in rows] == t.frames.tolist()
            assert np.array_equal(np.array([[float(x) for x in r[2:6]] for r in rows]), t.rotations)
