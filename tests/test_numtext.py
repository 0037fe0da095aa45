# SPDX-License-Identifier: GPL-3.0-or-later
"""numtext.format_rows against Python's own formatting: every float as ``repr``,
every integer as ``%d``, byte for byte; the RiTE writer against the
%-formatting it replaced; the plain writer the benchmarks compare it with
(``numtext.plain``) against it."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from rite_random import random_ram

from legacy_skin_io.io.numtext import format_rows, plain
from legacy_skin_io.io.rite import RaaAnimation, RaaTrack, RiteJoint, raa_to_text, ram_to_text, writer

F32_MAX = float(np.finfo(np.float32).max)

#: rows enough for format_rows to lay its text out with numpy (it leaves small tables to %)
ROWS = 1024


def text_of(columns, **kw) -> list:
    data = b"".join(format_rows(columns, **kw))
    assert data.endswith(b"\n")
    return data.decode("utf-8").split("\n")[:-1]


def assert_floats_as_repr(x) -> None:
    x = np.asarray(x, dtype=np.float64)
    x = np.resize(x, max(len(x), ROWS))
    got = text_of([x])
    want = [repr(v) for v in x.tolist()]
    assert len(got) == len(want)
    bad = [(w, g) for w, g in zip(want, got) if w != g]
    assert not bad, f"{len(bad)} of {len(want)} differ from repr, e.g. {bad[:5]}"


def neighbours(x) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(over="ignore"):
        return np.concatenate([x, np.nextafter(x, np.inf), np.nextafter(x, -np.inf)])


# -- floats ---------------------------------------------------------------------

HARD = [0.0, -0.0, 5e-324, -5e-324, 1e-323, 2.2250738585072014e-308, 2.225073858507201e-308,
        1.7976931348623157e308, -1.7976931348623157e308, 0.1, 0.2, 0.3, 1 / 3, 2 / 3, 1.0, -1.0, 0.5,
        1e16, 1e16 - 2, 1e16 + 2, 9999999999999998.0, 1234567890123456.0, 123456789012345678.0, 1e15, 1e17,
        1e22, 1e23, 0.0001, 0.00010000000000000002, 9.999999999999999e-05, 1e-05, 1.5e-05, 0.001,
        float(np.float32(0.8)), float(np.float32(0.1)), float(np.float32(1 / 3)), F32_MAX, -F32_MAX,
        float(np.finfo(np.float32).tiny), float(np.finfo(np.float32).smallest_subnormal),
        float("nan"), float("inf"), float("-inf"), 2.0 ** 50 + 0.25, 2.0 ** 50 + 0.75, 2.0 ** 51 + 0.5,
        4.35, 2.675, 1.005, 0.30000000000000004, 100.0, 1e100, 123.456, 5e-310, 9007199254740993.0]


def test_hard_values_are_repr():
    assert_floats_as_repr(neighbours(HARD))


def test_powers_of_two_and_ten_and_their_neighbours():
    assert_floats_as_repr(neighbours(2.0 ** np.arange(-1074, 1024)))
    assert_floats_as_repr(neighbours(10.0 ** np.arange(-323, 309)))
    assert_floats_as_repr(neighbours(-(10.0 ** np.arange(-323, 309))))


def test_random_bit_patterns_over_the_whole_finite_range():
    bits = np.random.default_rng(1).integers(0, 2 ** 64, 200_000, dtype=np.uint64, endpoint=False)
    x = bits.view(np.float64)
    assert_floats_as_repr(x[np.isfinite(x)])


def test_random_normals_uniforms_and_float32_values():
    rng = np.random.default_rng(2)
    assert_floats_as_repr(rng.normal(size=100_000))
    assert_floats_as_repr(rng.random(20_000))
    assert_floats_as_repr(rng.normal(size=20_000).astype(np.float32).astype(np.float64))
    assert_floats_as_repr((rng.normal(size=20_000) * 1000).astype(np.float32).astype(np.float64))
    assert_floats_as_repr((rng.standard_cauchy(20_000) * 1e-3).astype(np.float32).astype(np.float64))


def test_round_decimals_whole_numbers_and_halves():
    rng = np.random.default_rng(3)
    assert_floats_as_repr(np.concatenate([np.round(rng.normal(size=3000) * 100, k) for k in range(7)]))
    assert_floats_as_repr(rng.integers(-10 ** 6, 10 ** 6, 20_000).astype(np.float64))
    assert_floats_as_repr(rng.integers(-10 ** 6, 10 ** 6, 20_000) / 8)
    assert_floats_as_repr(rng.integers(-2 ** 62, 2 ** 62, 20_000).astype(np.float64))


def test_exponent_form_in_a_block_of_positional_values():
    rng = np.random.default_rng(4)
    x = rng.normal(size=5000)
    x[::7] *= 1e-9
    x[3::11] *= 1e20
    x[5::13] = -0.0
    x[6::17] = 1e-320
    assert_floats_as_repr(x)


def test_ties_between_two_candidates_are_repr():
    x = np.array([2.0 ** 50 + 0.25 + i for i in range(100)] + [2.0 ** 50 + 0.75 + i for i in range(100)])
    assert_floats_as_repr(x)                          # (exactly halfway between two 16-digit candidates)


# -- integers and strings ---------------------------------------------------------

def test_integers_are_percent_d():
    rng = np.random.default_rng(6)
    edges = [0, 1, -1, 9, 10, 99, 100, -100, 2 ** 63 - 1, -2 ** 63, -(2 ** 63) + 1]
    edges += [s * (10 ** e + o) for e in range(1, 19) for o in (-1, 0, 1) for s in (1, -1)]
    columns = [np.array(edges * 10, dtype=np.int64),
               rng.integers(-2 ** 63, 2 ** 63 - 1, len(edges) * 10, dtype=np.int64),
               rng.integers(0, 10 ** 7, len(edges) * 10),
               rng.integers(0, 100, len(edges) * 10)]
    want = [" ".join("%d" % v for v in row) for row in zip(*(c.tolist() for c in columns))]
    assert text_of(columns) == want


def test_unsigned_beyond_int64_and_small_dtypes():
    u = np.array([0, 2 ** 63, 2 ** 64 - 1, 12345] * (ROWS // 4), dtype=np.uint64)
    small = np.resize(np.arange(-128, 128, dtype=np.int8), ROWS)
    flags = np.arange(ROWS) % 3 == 0
    f32 = np.linspace(-1, 1, ROWS, dtype=np.float32)
    assert text_of([u, small, flags, f32]) == [
        "%d %d %d %r" % row for row in zip(u.tolist(), small.tolist(), flags.tolist(), f32.astype(float).tolist())]


def test_strings_from_a_table_unicode_and_nul():
    table = ['"Joint 01"', '"épaule gauche"', '"日本"', '"a\0b"', '""', '"' + "x" * 40 + '"']
    index = np.arange(ROWS) % len(table)
    want = ["%d %s %r" % (i, table[j], i / 7) for i, j in enumerate(index.tolist())]
    assert text_of([range(ROWS), ([t.encode() for t in table], index), np.arange(ROWS) / 7]) == want


def test_blocks_small_tables_and_empty_columns_give_the_same_text():
    rng = np.random.default_rng(7)
    x, v = rng.normal(size=1000), rng.integers(-50, 10 ** 9, 1000)
    whole = text_of([range(1000), v, x])
    assert whole == ["%d %d %r" % row for row in zip(range(1000), v.tolist(), x.tolist())]
    assert text_of([range(1000), v, x], block_rows=7) == whole
    for n in (1, 10, 511, 512, 513):
        assert text_of([range(n), v[:n], x[:n]]) == whole[:n]
    assert b"".join(format_rows([np.zeros(0), np.zeros(0, dtype=np.int64)])) == b""
    with pytest.raises(ValueError):
        list(format_rows([np.zeros(3), np.zeros(4)]))


# -- the RiTE writer against the %-formatting it replaced -----------------------------

def percent_rows(fmt: str, columns, n: int) -> str:
    cols = [c if isinstance(c, range) else np.asarray(c).tolist() for c in columns]
    return (fmt * n) % tuple(itertools.chain.from_iterable(zip(*cols)))


def percent_ram(m) -> str:
    """The RAM text as the writer made it with %-formatting (floats repr, integers %d)."""
    q = lambda s: f'"{s}"'                                                           # noqa: E731
    vec = lambda v: " ".join(repr(float(x)) for x in v)                              # noqa: E731
    ids = writer.joint_ids(m)
    out = [writer.RAM_HEADER, f"joints {len(m.joints)}\n"]
    for k, j in enumerate(m.joints):
        parent = int(ids[j.parent]) if j.parent >= 0 else -1
        out.append(f"{int(ids[k])} {q(j.name)}\nparent {parent}\norientation {vec(j.orientation)}\n"
                   f"translation {vec(j.translation)}\nrotation {vec(j.rotation)}\n")
    out.append(f"mesh {q(m.mesh_name)}\n")
    for name, a in (("vertices", m.positions), ("normals", m.normals), ("uvs", m.uvs)):
        a = np.asarray(a, dtype=np.float64)
        out.append(f"{name} {len(a)}\n")
        out.append(percent_rows("%d" + " %r" * a.shape[1] + "\n", [range(len(a))] + list(a.T), len(a)))
    nt = len(m.tri_vertices)
    cols = [m.tri_shader, *np.asarray(m.tri_vertices).T, *np.asarray(m.tri_normals).T, *np.asarray(m.tri_uvs).T]
    out.append(f"triangles {nt}\n" + percent_rows("%d" + " %d" * 10 + "\n", [range(nt)] + cols, nt))
    nw = len(m.weight_value)
    names = [q(m.joints[j].name) for j in np.asarray(m.weight_joint).tolist()]
    out.append(f"weights {nw}\n" + percent_rows("%d %d %d %s %r\n", [range(nw), m.weight_vertex,
                                                ids[m.weight_joint], names, m.weight_value], nw))
    return "".join(out)


def percent_raa(a) -> str:
    out = [writer.RAA_HEADER]
    if writer._frames_line_needed(a):
        out.append(f"frames {int(a.frame_count)}\n")
    for t_id, t in enumerate(a.tracks):
        order = np.argsort(t.frames, kind="stable")
        frames, rot = np.asarray(t.frames)[order], np.asarray(t.rotations, dtype=np.float64)[order]
        out.append(f'track {t_id} {int(t.joint_id)} "{t.joint_name}"\nkeyframes {len(frames)}\n')
        out.append(percent_rows("%d %d %r %r %r %r\n", [range(len(frames)), frames, *rot.T], len(frames)))
    return "".join(out)


def hostile_values(m, rng) -> None:
    """Values at the edges of what the writer accepts, in every float section."""
    special = np.array([0.0, -0.0, 5e-324, 1e-5, 1e-4, 1e16, -1e16 + 2, F32_MAX, -F32_MAX, 0.1,
                        float(np.float32(0.8)), 1 / 3, 123456789.0, 2.0 ** 50 + 0.25])
    for a in (m.positions, m.normals, m.uvs):
        flat = a.reshape(-1)
        at = rng.choice(len(flat), size=len(special), replace=False)
        flat[at] = special
    m.weight_value[: len(special)] = np.abs(special)
    m.tri_shader[:3] = [-(2 ** 53) + 1, 2 ** 53 - 1, -7]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ram_text_is_that_of_percent_formatting(seed):
    rng = np.random.default_rng(seed)
    m = random_ram(seed, n_per_joint=40 if seed else 2500)          # the first seed: several blocks per section
    for k, name in ((1, "épaule\0droite"), (2, "lone \ud800 surrogate")):
        m.joints[k] = RiteJoint(name, m.joints[k].parent, m.joints[k].orientation, m.joints[k].translation,
                                m.joints[k].rotation)
    hostile_values(m, rng)
    text = ram_to_text(m)
    assert text == percent_ram(m)
    assert len(m.weight_value) > 16384 or seed                     # (the first seed spans blocks)


def test_raa_text_is_that_of_percent_formatting():
    rng = np.random.default_rng(9)
    tracks = []
    for j, keys in enumerate((1, 5, 63, 64, 300)):
        frames = rng.permutation(400)[:keys]
        q = rng.normal(size=(keys, 4))
        q[0] = [-0.0, 1e-5, 1e16, F32_MAX]
        tracks.append(RaaTrack(j, f"joint {j}", frames, q))
    a = RaaAnimation("anim", 400, True, tracks)
    assert raa_to_text(a) == percent_raa(a)


def test_the_plain_writer_writes_the_text_of_the_hand_written_one():
    """The benchmarks' plain numerics (LSIO_PLAIN_NUMERICS: %-formatting) write the same bytes."""
    rng = np.random.default_rng(11)
    n = 3 * ROWS + 5
    x = np.resize(np.array(HARD), n)
    x[len(HARD):] = rng.normal(size=n - len(HARD)) * 10.0 ** rng.integers(-20, 20, n - len(HARD))
    table = [b'"Joint 01"', '"épaule"'.encode(), b'"a\0b"', b'""']
    columns = [range(n), rng.integers(-(2 ** 62), 2 ** 62, n), (table, np.arange(n) % len(table)), x,
               np.arange(n, dtype=np.uint64) + np.uint64(2 ** 63), rng.normal(size=n).astype(np.float32)]
    for rows in (n, 7, 0):
        cut = [c[:rows] if not isinstance(c, tuple) else (c[0], c[1][:rows]) for c in columns]
        assert b"".join(plain.format_rows(cut, block_rows=ROWS)) == b"".join(format_rows(cut))
