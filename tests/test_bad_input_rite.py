# SPDX-License-Identifier: GPL-3.0-or-later
"""RiTE RAM/RAA readers on hostile input: every problem is a FormatError naming the
file and the line, never another exception, a hang or a huge allocation.

Every hostile file is built here on the fly. Sections of 48 records or more go
through the vectorised reader, smaller ones through the line-by-line one; the
cases below use both sizes where it matters.
"""
from __future__ import annotations

import math
import random

import numpy as np
import pytest
from work_bounds import bounded

from legacy_skin_io.io.errors import FormatError, Warnings
from legacy_skin_io.io.rite import (
    RaaAnimation,
    RaaTrack,
    RamModel,
    RiteJoint,
    lexer,
    raa_reader,
    ram_reader,
    ram_to_text,
    read_raa_text,
    read_ram_text,
    write_raa,
    write_ram,
)

FLOAT_LIMIT = lexer.FLOAT_LIMIT
MAX_FRAMES = lexer.MAX_FRAMES
MAX_NAME = lexer.MAX_NAME_LENGTH
BIG = 64          # records per section in the "vectorised" variants (>= 48)
SMALL = 4         # ... and in the line-by-line ones


# -- building files ------------------------------------------------------------------

def _budget(data: str | bytes) -> int:
    """Function calls a read of ``data`` may make: a few per line, one per
    byte at most, so that work quadratic in a large input fails (a million
    fields, a megabyte name: ~10^12 operations)."""
    lines = data.count(b"\n" if isinstance(data, bytes) else "\n")
    return 50 * lines + len(data) + 20_000


def joint_lines(k: int, name: str, parent: int, orientation="0 0 0 1", translation="0 1 0",
                rotation="0 0 0 1") -> list[str]:
    return [f'{k} "{name}"', f"parent {parent}", f"orientation {orientation}",
            f"translation {translation}", f"rotation {rotation}"]


def ram_lines(n: int = SMALL, joints: int = 2) -> list[str]:
    """A valid RAM with ``n`` vertices/normals/uvs/triangles/weights, as a list of lines."""
    out = ["# RiTE Ascii Model", f"joints {joints}"]
    for k in range(joints):
        out += joint_lines(k, f"J {k}", k - 1)
    out += ['mesh "Body"', f"vertices {n}"]
    out += [f"{i} {0.5 * i} {1.0 - 0.25 * i} {i % 3}.125" for i in range(n)]
    out += [f"normals {n}"] + [f"{i} 0 0 1" for i in range(n)]
    out += [f"uvs {n}"] + [f"{i} {i / n} 0.5" for i in range(n)]
    out += [f"triangles {n}"] + [f"{i} {i % 3} {i} {(i + 1) % n} {(i + 2) % n} {i} {i} {i} {i} {i} {i}"
                                 for i in range(n)]
    out += [f"weights {n}"] + [f'{i} {i} {i % joints} "J {i % joints}" 1.0' for i in range(n)]
    return out


def raa_lines(n: int = SMALL, frames: int | None = None) -> list[str]:
    out = ["# RiTE Ascii Animation"]
    if frames is not None:
        out.append(f"frames {frames}")
    out += ['track 0 1 "J 1"', f"keyframes {n}"]
    out += [f"{i} {2 * i} 0 0 {math.sin(0.01 * i)!r} {math.cos(0.01 * i)!r}" for i in range(n)]
    return out


def text(lines: list[str]) -> str:
    return "\n".join(lines) + "\n"


def line_of(lines: list[str], prefix: str, nth: int = 0) -> int:
    """1-based number of the ``nth`` line starting with ``prefix``."""
    hits = [k for k, line in enumerate(lines) if line.startswith(prefix)]
    return hits[nth] + 1


def ram_error(data, name="h.ram") -> FormatError:
    with pytest.raises(FormatError) as info:
        read_ram_text(data, name)
    assert info.value.path == name
    return info.value


def raa_error(data, name="h.raa") -> FormatError:
    with pytest.raises(FormatError) as info:
        read_raa_text(data, name)
    assert info.value.path == name
    return info.value


def test_the_base_files_are_valid():
    for n in (SMALL, BIG):
        warnings = []
        m = read_ram_text(text(ram_lines(n)), "h.ram", warnings)
        assert warnings == [] and len(m.positions) == n and len(m.weight_value) == n
        a = read_raa_text(text(raa_lines(n)), "h.raa", warnings)
        assert warnings == [] and len(a.tracks[0].frames) == n


# -- 1. frame counts and other counts ------------------------------------------------

@pytest.mark.parametrize("value", ["999999999", str(MAX_FRAMES + 1), "9" * 30, str(2 ** 63), str(2 ** 64 + 1)])
def test_huge_frame_counts_are_refused_at_their_line(value):
    lines = raa_lines(frames=None)
    lines.insert(1, f"frames {value}")
    err = raa_error(text(lines))
    assert err.line == 2 and "limit" in str(err) and str(MAX_FRAMES) in str(err)


def test_frame_count_at_the_limit_is_fine():
    a = read_raa_text(text(raa_lines(frames=MAX_FRAMES)), "h.raa")
    assert a.frame_count == MAX_FRAMES


@pytest.mark.parametrize("n", [SMALL, BIG])
@pytest.mark.parametrize("frame,fragment", [
    (str(2 ** 53), "out of range"),             # not even an exact float64 integer
    (str(2 ** 53 - 1), "out of range"),
    (str(2 ** 63), "out of range"),             # beyond int64
    ("9" * 40, "out of range"),
    (str(MAX_FRAMES), "out of range"),          # frames would be MAX_FRAMES + 1
    ("-1", "out of range"),
    ("-99999999999999999999", "out of range"),
])
def test_extreme_key_frames_are_refused_at_their_line(n, frame, fragment):
    lines = raa_lines(n)
    k = len(lines) - n + n // 2                  # a key in the middle
    fields = lines[k].split()
    fields[1] = frame
    lines[k] = " ".join(fields)
    err = raa_error(text(lines))
    assert err.line == k + 1, str(err)
    assert fragment in str(err)


def test_last_allowed_key_frame():
    a = read_raa_text(f'track 0 0 "A"\n0 {MAX_FRAMES - 1} 0 0 0 1\n', "h.raa")
    assert a.frame_count == MAX_FRAMES


def test_negative_frame_count_is_refused():
    err = raa_error("frames -3\n")
    assert err.line == 1 and "negative" in str(err)


@pytest.mark.parametrize("header", ["joints", "vertices", "normals", "uvs", "triangles", "weights"])
@pytest.mark.parametrize("count", [10 ** 6, 2 ** 31, 2 ** 53, 2 ** 63, 10 ** 40])
def test_ram_counts_beyond_the_file_fail_at_their_line_without_allocating(header, count):
    lines = ram_lines(SMALL)
    k = line_of(lines, header + " ")
    lines[k - 1] = f"{header} {count}"
    with bounded(calls=_budget(text(lines)), memory=4 << 20):      # nothing sized by the count
        err = ram_error(text(lines))
    assert err.line == k, str(err)
    assert "can hold at most" in str(err) or "limit" in str(err)


@pytest.mark.parametrize("count", [10 ** 6, 2 ** 40, 10 ** 30])
def test_keyframe_counts_beyond_the_file_fail_at_their_line(count):
    lines = raa_lines(SMALL)
    k = line_of(lines, "keyframes")
    lines[k - 1] = f"keyframes {count}"
    err = raa_error(text(lines))
    assert err.line == k and "can hold at most" in str(err)


def test_a_count_the_file_can_hold_but_does_not_is_still_a_count_error():
    lines = ram_lines(BIG)
    k = line_of(lines, "weights ")
    lines[k - 1] = f"weights {BIG + 1}"
    lines.append("")
    lines.append("")             # room for one more record, but no record
    err = ram_error(text(lines))
    assert "weights: expected 65 records, found 64 at end of file" in str(err)


def test_joint_and_track_limits(monkeypatch):
    monkeypatch.setattr(ram_reader, "MAX_JOINTS", 3)
    lines = ram_lines(SMALL, joints=4)
    err = ram_error(text(lines))
    assert err.line == 2 and "limit of 3" in str(err)
    monkeypatch.setattr(raa_reader, "MAX_TRACKS", 5)
    tracks = "".join(f'track {k} {k} "J{k}"\n0 0 0 0 0 1\n' for k in range(6))
    err = raa_error(tracks)
    assert err.line == 11 and "limit of 5 tracks" in str(err)


# -- 2. non-finite and out-of-range values -------------------------------------------------

BAD_NUMBERS = ["nan", "NaN", "-nan", "inf", "-inf", "Infinity", "1e39", "-3.5e38", "3.4028235e38", "1e400",
               "1e99999999999", "-" + "9" * 60]


def _float_fields(n: int):
    """(section prefix, record index in section, field index) of float fields in a RAM."""
    for section, fields in (("vertices", (1, 2, 3)), ("normals", (1, 2, 3)), ("uvs", (1, 2)), ("weights", (4,))):
        for field in fields:
            yield section, n // 2, field


def _replace_field(lines: list[str], k: int, field: int, value: str) -> None:
    if '"' in lines[k]:          # a weight: ID VERTEX JOINT "NAME" W (names have a space)
        head, name, tail = lines[k].split('"')
        fields = head.split() + [f'"{name}"'] + tail.split()
    else:
        fields = lines[k].split()
    fields[field] = value
    lines[k] = " ".join(fields)


@pytest.mark.parametrize("n", [SMALL, BIG])
def test_non_finite_and_float32_overflow_in_every_mesh_field(n):
    for section, r, field in _float_fields(n):
        for bad in BAD_NUMBERS:
            lines = ram_lines(n)
            k = line_of(lines, section + " ") + r          # 0-based index of the record line
            _replace_field(lines, k, field, bad)
            err = ram_error(text(lines))
            assert err.line == k + 1, (section, field, bad, str(err))
            assert "nan and inf" in str(err) or "out of range" in str(err) or "float32" in str(err), str(err)


@pytest.mark.parametrize("attr,size", [("orientation", 4), ("translation", 3), ("rotation", 4)])
def test_non_finite_joint_values(attr, size):
    for bad in BAD_NUMBERS:
        for pos in range(size):
            lines = ram_lines()
            k = line_of(lines, attr, nth=1)
            values = lines[k - 1].split()[1:]
            values[pos] = bad
            lines[k - 1] = f"{attr} " + " ".join(values)
            err = ram_error(text(lines))
            assert err.line == k, (attr, bad, str(err))


@pytest.mark.parametrize("n", [SMALL, BIG])
def test_non_finite_key_rotations(n):
    for bad in BAD_NUMBERS:
        for field in range(2, 6):
            lines = raa_lines(n)
            k = len(lines) - n + n // 2
            fields = lines[k].split()
            fields[field] = bad
            lines[k] = " ".join(fields)
            err = raa_error(text(lines))
            assert err.line == k + 1, (bad, field, str(err))


def test_float32_limit_itself_is_accepted():
    lines = ram_lines(BIG)
    k = line_of(lines, "vertices ")
    lines[k] = f"0 {FLOAT_LIMIT!r} {-FLOAT_LIMIT!r} 0"
    m = read_ram_text(text(lines), "h.ram")
    assert m.positions[0].tolist() == [FLOAT_LIMIT, -FLOAT_LIMIT, 0.0]


@pytest.mark.parametrize("n", [SMALL, BIG])
@pytest.mark.parametrize("weight", ["-0.5", "-1e-300", "-1"])
def test_negative_weights_are_refused(n, weight):
    lines = ram_lines(n)
    k = line_of(lines, "weights ") + n // 2
    _replace_field(lines, k, 4, weight)
    err = ram_error(text(lines))
    assert err.line == k + 1 and "negative" in str(err)


def test_minus_zero_weight_is_not_negative():
    lines = ram_lines(SMALL)
    k = line_of(lines, "weights ")
    _replace_field(lines, k, 4, "-0.0")
    m = read_ram_text(text(lines), "h.ram")
    assert m.weight_value[0] == 0.0


# -- 3. quaternions that cannot be normalised -------------------------------------------------

@pytest.mark.parametrize("attr", ["orientation", "rotation"])
@pytest.mark.parametrize("q", ["0 0 0 0", "-0 0.0 0e5 -0.0", "1e-13 0 0 0", "0 0 1e-300 1e-300"])
def test_zero_joint_quaternions(attr, q):
    lines = ram_lines()
    k = line_of(lines, attr, nth=1)
    lines[k - 1] = f"{attr} {q}"
    err = ram_error(text(lines))
    assert err.line == k and "cannot be normalised" in str(err)


@pytest.mark.parametrize("n", [SMALL, BIG])
def test_zero_key_quaternions(n):
    lines = raa_lines(n)
    k = len(lines) - n + n // 2
    fields = lines[k].split()
    lines[k] = " ".join(fields[:2] + ["0", "0", "0", "0"])
    err = raa_error(text(lines))
    assert err.line == k + 1 and "cannot be normalised" in str(err)


def test_short_but_normalisable_quaternion_only_warns():
    lines = ram_lines()
    k = line_of(lines, "rotation", nth=1)
    lines[k - 1] = "rotation 0 0 0 1e-6"
    warnings = []
    read_ram_text(text(lines), "h.ram", warnings)
    assert len(warnings) == 1 and f"h.ram:{k}:" in warnings[0]


# -- 4. hostile strings ---------------------------------------------------------------------

def test_name_length_limit_everywhere():
    ok, long = "n" * MAX_NAME, "n" * (MAX_NAME + 1)
    read_ram_text(text(ram_lines()).replace('mesh "Body"', f'mesh "{ok}"'), "h.ram")
    cases = [
        text(ram_lines()).replace('mesh "Body"', f'mesh "{long}"'),
        text(ram_lines()).replace('1 "J 1"', f'1 "{long}"'),
    ]
    for n in (SMALL, BIG):
        lines = ram_lines(n)
        k = line_of(lines, "weights ") + n // 2
        lines[k] = lines[k].replace(f'"J {n // 2 % 2}"', f'"{long}"')
        cases.append(text(lines))
    for data in cases:
        err = ram_error(data)
        assert "longer than the limit" in str(err) and err.line is not None
    err = raa_error(f'track 0 0 "{long}"\n0 0 0 0 0 1\n')
    assert err.line == 1 and "longer than the limit" in str(err)


@pytest.mark.parametrize("size", [1 << 20, 4 << 20])
def test_megabyte_names_and_lines_are_linear(size):
    name = "x" * size
    cases = [
        (read_ram_text, f'mesh "{name}"\n'),
        (read_ram_text, f'mesh "{name}\n'),                                   # unterminated
        (read_ram_text, 'joints 1\n0 "' + name + '"\n'),
        (read_raa_text, f'track 0 0 "{name}"\n0 0 0 0 0 1\n'),
        (read_ram_text, text(ram_lines(BIG)).replace('"J 1" 1.0', f'"{name}" 1.0', 1)),
        (read_ram_text, "vertices 1\n0 " + "1" * size + " 0 0\n"),           # a huge number
        (read_ram_text, "vertices 1\n" + "7" * size + " 0 0 0\n"),           # a huge id
        (read_ram_text, text(ram_lines(BIG)).replace("\n5 2.5 ", "\n5 0." + "3" * size + " ", 1)),
        (read_ram_text, text(ram_lines(BIG)).replace("\n5 2.5 ", "\n" + "5" * size + " 2.5 ", 1)),
        (read_ram_text, "# " + name + "\n" + text(ram_lines())),             # a huge comment: fine
        (read_ram_text, '"' * size + "\n"),
        (read_raa_text, "frames " + "9" * size + "\n"),
        (read_raa_text, 'track 0 0 "A"\n' + " ".join(["0"] * (size // 2)) + "\n"),   # a million fields
    ]
    for reader, data in cases:
        try:
            with bounded(calls=_budget(data)):      # quadratic work on megabytes: ~10^12
                reader(data, "h")
        except FormatError as err:
            assert len(str(err)) < 400


def test_names_with_odd_characters():
    for name in ("tab\there", "#not a comment", "//neither", "dots.in.name", "e", "1.5e3", "  ", "", "J 1 ",
                 "\u00e9\u4e2d\U0001f600", "x" * MAX_NAME):
        lines = ram_lines(BIG)
        data = text(lines).replace('"J 1"', f'"{name}"')
        warnings = []
        m = read_ram_text(data, "h.ram", warnings)
        assert m.joints[1].name == name and warnings == []
        assert len(m.weight_value) == BIG


@pytest.mark.parametrize("n", [SMALL, BIG])
def test_weight_name_mismatch_in_the_last_bytes_of_the_file(n):
    lines = ram_lines(n)
    last = lines[-1]
    for other in ("J 9", "J", "J 1x", "j 1", "J 0"):
        lines[-1] = last.replace(f'"J {(n - 1) % 2}"', f'"{other}"')
        warnings = []
        read_ram_text(text(lines).rstrip("\n"), "h.ram", warnings)
        assert len(warnings) == 1 and warnings[0].startswith(f"h.ram:{len(lines)}: weight {n - 1}:"), other


# -- 5. many shader ids -------------------------------------------------------------------

def test_twenty_thousand_distinct_shader_ids_read_fast():
    n = 20_000
    lines = ["vertices 3", "0 0 0 0", "1 1 0 0", "2 0 1 0", f"triangles {n}"]
    lines += [f"{i} {7 * i + 3} 0 1 2 0 0 0 0 0 0" for i in range(n)]
    with bounded(calls=_budget(text(lines))):       # not a call per pair of ids
        m = read_ram_text(text(lines), "h.ram")
    assert len(np.unique(m.tri_shader)) == n and m.tri_shader[-1] == 7 * (n - 1) + 3


# -- writers refuse what readers refuse --------------------------------------------------------

def test_writer_applies_the_reader_limits(tmp_path):
    base = read_ram_text(text(ram_lines(BIG)), "h.ram")
    bad = []
    m = read_ram_text(text(ram_lines(BIG)), "h.ram"); m.positions[3, 1] = 1e39; bad.append(m)
    m = read_ram_text(text(ram_lines(BIG)), "h.ram"); m.weight_value[2] = -0.25; bad.append(m)
    m = read_ram_text(text(ram_lines(BIG)), "h.ram"); m.joints[0].rotation[:] = 0; bad.append(m)
    m = read_ram_text(text(ram_lines(BIG)), "h.ram"); m.joints[1].name = "j" * (MAX_NAME + 1); bad.append(m)
    write_ram(base, tmp_path / "ok.ram")
    for model in bad:
        with pytest.raises(FormatError):
            write_ram(model, tmp_path / "bad.ram")
    key = np.array([[0.0, 0.0, 0.0, 1.0]])
    with pytest.raises(FormatError):
        write_raa(RaaAnimation("a", MAX_FRAMES + 1, True, [RaaTrack(0, "A", [0], key)]), tmp_path / "a.raa")
    with pytest.raises(FormatError):
        write_raa(RaaAnimation("a", 5, True, [RaaTrack(0, "A", [0], key * 0)]), tmp_path / "a.raa")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ok.ram"]


def test_warnings_are_capped():
    """A file warning on every line fills the warnings channel up to its
    limit; past it, one last line counts the rest."""
    data = text(ram_lines()[:2] + ["bogus keyword"] * 5000 + ram_lines()[2:])
    warnings = Warnings()
    read_ram_text(data, "h.ram", warnings)
    assert len(warnings) == warnings.limit + 1
    assert warnings[0].startswith("h.ram:3: unknown keyword 'bogus'")
    assert warnings[-1] == f"... and {5000 - warnings.limit} more warning(s)"


# -- the vectorised reader: float() bit for bit, errors at their line ---------------------------

def _number_token(rng: random.Random) -> str:
    x = rng.choice([rng.gauss(0, 1), rng.uniform(-1e6, 1e6), rng.choice([-1, 1]) * 10 ** rng.uniform(-330, 38),
                    rng.random()])
    kind = rng.randrange(9)
    if kind == 0:
        return repr(x)
    if kind == 1:
        return "%.*f" % (rng.randint(0, 30), x)
    if kind == 2:
        return ("%.*e" % (rng.randint(0, 25), x)).replace("e", rng.choice("eE"))
    if kind == 3:
        return "%.*g" % (rng.randint(1, 25), x)
    if kind == 4:                       # raw digit strings with a point and an exponent anywhere
        digits = "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 26)))
        p = rng.randint(0, len(digits))
        s = digits[:p] + ("." if rng.random() < 0.8 else "") + digits[p:]
        if rng.random() < 0.5:
            s += rng.choice("eE") + rng.choice(["", "+", "-"]) + str(rng.randint(0, 340))
        return rng.choice(["", "-", "+"]) + s
    if kind == 5:                       # powers of two down to the smallest subnormal
        return repr(rng.choice([-1, 1]) * 2.0 ** rng.randint(-1074, 127))
    if kind == 6:
        return rng.choice(["0", "-0", "0.0", "-0.0", ".5", "5.", "-.5", "+5", "1e5", "1E+05", "+.5e-3",
                           "00001.5", "0.000000000000000000000000001", "1_0", "5e-324", "2.4703282292062328e-324",
                           "2e-324", "1e-400", "-1e-400", "2.2250738585072011e-308", "9007199254740993",
                           "123456789012345678901234567890", "3.4028234663852886e38", "1e38", "1e-45"])
    if kind == 7:
        return str(rng.randint(-10 ** 18, 10 ** 18))
    return "%.17g" % x


def _expected(tok: str):
    try:
        v = float(tok)
    except ValueError:
        return None
    if not np.isfinite(v) or abs(v) > FLOAT_LIMIT:
        return None
    return v


def test_vectorised_numbers_equal_python_float_bit_for_bit():
    rng = random.Random(20240611)
    for trial in range(40):
        n = rng.randint(BIG, 200)
        rows = []
        while len(rows) < n:
            row = [_number_token(rng) for _ in range(3)]
            if all(_expected(t) is not None for t in row):
                rows.append(row)
        blank = rng.choice([" ", "\t", "  ", " \t "])
        eol = rng.choice(["\n", "\r\n", " \n"])
        data = f"vertices {n}\n" + "".join(f"{i}{blank}{blank.join(r)}{eol}" for i, r in enumerate(rows))
        m = read_ram_text(data, "h.ram")
        want = np.array([[float(t) for t in r] for r in rows])
        assert m.positions.view(np.uint64).tolist() == want.view(np.uint64).tolist(), trial


def test_vectorised_reader_reports_the_first_bad_token_at_its_line():
    rng = random.Random(7)
    bad_tokens = ["nan", "inf", "1e39", "1.2.3", "1e", "--1", "0x10", "1,5", "e5", ".", "-", "1e5.5",
                  "12a", '"1"', "١٢"]
    for bad in bad_tokens:
        n = 100
        lines = [f"vertices {n}"] + [f"{i} {rng.gauss(0, 1)!r} {i}.5 -{i}e-3" for i in range(n)]
        r = rng.randint(1, n)
        fields = lines[r].split()
        fields[rng.randint(1, 3)] = bad
        lines[r] = " ".join(fields)
        data = text(lines)
        try:
            float(bad)
            accepted = _expected(bad) is not None
        except ValueError:
            accepted = False
        if accepted:                       # e.g. Arabic-Indic digits: float() reads them
            read_ram_text(data, "h.ram")
            continue
        err = ram_error(data)
        assert err.line == r + 1, (bad, str(err))


@pytest.mark.parametrize("token", ["+5", "05", "-0", str(2 ** 53 - 1), str(2 ** 53), "9" * 17, "0" * 30 + "7",
                                   "1.0", "1e0", "-3", "\u0663"])
def test_vectorised_integer_fields_follow_the_grammar(token):
    """Ids are ``[+-]?[0-9]+``, below 2**53 and not negative, whichever reader reads them."""
    n = 100
    lines = [f"vertices {n}"] + [f"{1000 + i} 0 0 0" for i in range(n)]
    lines[50] = f"{token} 0 0 0"
    data = text(lines)
    valid = token.isascii() and token.lstrip("+-").isdigit() and 0 <= int(token) < 2 ** 53
    if valid:
        m = read_ram_text(data, "h.ram")
        assert len(m.positions) == n
    else:
        err = ram_error(data)
        assert err.line == 51, str(err)


def test_vectorised_and_line_by_line_readers_agree_on_a_written_model():
    rng = np.random.default_rng(3)
    v = 500
    q = rng.normal(size=(3, 4))
    m = RamModel(mesh_name="M", joints=[RiteJoint(f"j {k}", k - 1, q[k] / np.linalg.norm(q[k]), rng.normal(size=3),
                                                  [0, 0, 0, 1]) for k in range(3)],
                 positions=rng.normal(size=(v, 3)) * 10.0 ** rng.integers(-30, 30, size=(v, 3)),
                 normals=rng.normal(size=(v, 3)), uvs=rng.random((v, 2)),
                 tri_shader=rng.integers(-5, 5, size=v), tri_vertices=rng.integers(0, v, size=(v, 3)),
                 tri_normals=rng.integers(0, v, size=(v, 3)), tri_uvs=rng.integers(0, v, size=(v, 3)),
                 weight_vertex=rng.integers(0, v, size=2 * v), weight_joint=rng.integers(0, 3, size=2 * v),
                 weight_value=rng.random(2 * v))
    fast = ram_to_text(m)
    slow = fast.replace("\n", "\n# forcing the line-by-line reader\n", 1)
    for section in ("vertices", "normals", "uvs", "triangles", "weights"):   # a comment in each section
        head, rest = slow.split(f"\n{section} ", 1)
        count, body = rest.split("\n", 1)
        slow = f"{head}\n{section} {count}\n# comment\n{body}"
    a, b = read_ram_text(fast, "h.ram"), read_ram_text(slow, "h.ram")
    for attr in ("positions", "normals", "uvs", "tri_shader", "tri_vertices", "tri_normals", "tri_uvs",
                 "weight_vertex", "weight_joint", "weight_value"):
        x, y = getattr(a, attr), getattr(b, attr)
        assert x.dtype == y.dtype and np.array_equal(x.view(np.uint64) if x.dtype == np.float64 else x,
                                                     y.view(np.uint64) if y.dtype == np.float64 else y), attr
        assert np.array_equal(x, getattr(m, attr)), attr


def test_vectorised_reader_on_number_garbage():
    """Random strings of digits, points, signs and exponent letters among good numbers:
    float()'s value where float() reads them (within range), else an error at the first bad line."""
    rng = random.Random(99)

    def token():
        if rng.random() > garbage:
            return rng.choice([repr(rng.gauss(0, 1)), "%.3e" % rng.gauss(0, 1e-3), str(rng.randint(-99, 99))])
        return "".join(rng.choice("0123456789..eE+-") for _ in range(rng.randint(1, 45)))

    outcomes = {"read": 0, "error": 0}
    for trial in range(150):
        garbage = rng.choice([0.001, 0.01, 0.15])
        n = rng.randint(BIG, 120)
        rows = [[token() for _ in range(3)] for _ in range(n)]
        data = f"vertices {n}\n" + "".join(f"{i} {' '.join(r)}\n" for i, r in enumerate(rows))
        first_bad = next((i + 2 for i, r in enumerate(rows) if any(_expected(t) is None for t in r)), None)
        try:
            m = read_ram_text(data, "g.ram")
        except FormatError as err:
            assert err.line == first_bad, (trial, str(err))
            outcomes["error"] += 1
            continue
        assert first_bad is None, trial
        want = np.array([[float(t) for t in r] for r in rows])
        assert m.positions.view(np.uint64).tolist() == want.view(np.uint64).tolist(), trial
        outcomes["read"] += 1
    assert min(outcomes.values()) > 20, outcomes


def test_exponent_tokens_with_a_point_after_the_exponent():
    lines = [f"{i} 1.5e-{i % 30} 2e{i % 7} -3.25E+0{i % 9}" for i in range(60)]
    m = read_ram_text("vertices 60\n" + "\n".join(lines) + "\n", "h.ram")
    assert m.positions[7].tolist() == [1.5e-7, 2e0, -3.25e7]
    lines[30] = "30 1e" + "0" * 30 + ".5 0 0"
    err = ram_error("vertices 60\n" + "\n".join(lines) + "\n")
    assert err.line == 32 and "expected a number" in str(err)


# -- structural attacks ----------------------------------------------------------------------

def hostile_files():
    """Yield (name, reader, text) hostile RAM/RAA files: every one must give a result or a FormatError."""
    huge = ["-1", "0", "4294967296", str(2 ** 53), str(2 ** 63), str(2 ** 64), "9" * 50, "1e3", "+7", "07", "x"]
    for n in (SMALL, BIG):
        ram = ram_lines(n)
        raa = raa_lines(n, frames=4 * n)
        # counts
        for header in ("joints", "vertices", "normals", "uvs", "triangles", "weights"):
            k = line_of(ram, header + " ") - 1
            for value in huge + [str(n - 1), str(n + 1)]:
                lines = list(ram)
                lines[k] = f"{header} {value}"
                yield f"ram-{n}-count-{header}-{value[:12]}", read_ram_text, text(lines)
        for kw, value in [(kw, v) for kw in ("frames", "keyframes") for v in huge + [str(MAX_FRAMES), "1"]]:
            lines = [f"{kw} {value}" if line.startswith(kw) else line for line in raa]
            yield f"raa-{n}-count-{kw}-{value[:12]}", read_raa_text, text(lines)
        # every field of every record type: out-of-range ids/indices and non-finite values
        values = ["-1", str(2 ** 53 - 1), str(2 ** 53), str(2 ** 63), "9" * 40, "nan", "inf", "-inf", "1e39",
                  "1e-400", "0x1F", "1_0", "", "0 0", '"q"', "\x00", "\x7f", "é"]
        for section in ("vertices", "normals", "uvs", "triangles", "weights"):
            k = line_of(ram, section + " ") + n // 2
            nfields = len(ram[k].split()) - (1 if section == "weights" else 0)
            for field in range(nfields):
                for value in values:
                    lines = list(ram)
                    _replace_field(lines, k, field, value)
                    yield f"ram-{n}-{section}-{field}-{value!r}", read_ram_text, text(lines)
        for attr in ("parent", "orientation", "translation", "rotation"):
            k = line_of(ram, attr, nth=1) - 1
            for value in values:
                lines = list(ram)
                fields = lines[k].split()
                fields[1] = value
                lines[k] = " ".join(fields)
                yield f"ram-{n}-joint-{attr}-{value!r}", read_ram_text, text(lines)
        for field in range(6):
            k = len(raa) - n + n // 2
            for value in values:
                lines = list(raa)
                fields = lines[k].split()
                fields[field] = value
                lines[k] = " ".join(fields)
                yield f"raa-{n}-key-{field}-{value!r}", read_raa_text, text(lines)
        for value in values:
            lines = [f"track 0 {value} \"J 1\"" if line.startswith("track") else line for line in raa]
            yield f"raa-{n}-track-joint-{value!r}", read_raa_text, text(lines)
        # references: self parent, cycles, missing joints/vertices, duplicate ids
        yield f"ram-{n}-self-parent", read_ram_text, text(ram).replace("parent 0", "parent 1")
        yield f"ram-{n}-cycle", read_ram_text, text(ram).replace("parent -1", "parent 1")
        last_vertex = f"\n{n - 1} {0.5 * (n - 1)}"
        yield f"ram-{n}-dup-vertex", read_ram_text, text(ram).replace(last_vertex, f"\n0 {0.5 * (n - 1)}")
        # truncations and duplications
        data = text(ram)
        for cut in range(0, len(data), max(1, len(data) // 23)):
            yield f"ram-{n}-cut-{cut}", read_ram_text, data[:cut]
        data = text(raa)
        for cut in range(0, len(data), max(1, len(data) // 11)):
            yield f"raa-{n}-cut-{cut}", read_raa_text, data[:cut]
        yield f"ram-{n}-twice", read_ram_text, text(ram + ram)
        yield f"raa-{n}-twice", read_raa_text, text(raa + raa)
        # encodings and control characters
        yield f"ram-{n}-latin1", read_ram_text, text(ram).encode("utf-8").replace(b"Body", b"B\xf6dy")
        yield f"ram-{n}-bom-crlf", read_ram_text, b"\xef\xbb\xbf" + text(ram).replace("\n", "\r\n").encode()
        yield f"ram-{n}-nul", read_ram_text, text(ram).replace(" ", "\x00", 40)
        yield f"ram-{n}-cr-only", read_ram_text, text(ram).replace("\n", "\r")
        yield f"ram-{n}-tabs", read_ram_text, text(ram).replace(" ", "\t\x0b\x0c")
    # hostile strings and shapes
    yield "ram-empty", read_ram_text, ""
    yield "raa-empty", read_raa_text, ""
    yield "ram-blank-lines", read_ram_text, "\n" * 200_000
    yield "ram-unknown-keywords", read_ram_text, "bogus line here\n" * 50_000
    yield "raa-many-frames-lines", read_raa_text, "frames 1\n" * 1000
    yield "ram-quote-soup", read_ram_text, 'mesh "' + '" "' * 100_000 + '"\n'
    yield "ram-deep-chain", read_ram_text, "joints 3000\n" + "\n".join(
        "\n".join(joint_lines(k, f"j{k}", k - 1)) for k in range(3000)) + "\n"
    yield "ram-reverse-chain", read_ram_text, "joints 3000\n" + "\n".join(
        "\n".join(joint_lines(k, f"j{k}", k + 1 if k < 2999 else -1)) for k in range(3000)) + "\n"
    yield "raa-keys-everywhere", read_raa_text, 'track 0 0 "A"\n' + "".join(
        f"{k} {MAX_FRAMES - 1 - k} 0 0 0 1\n" for k in range(2000))
    yield "ram-huge-ids", read_ram_text, "vertices 60\n" + "".join(f"{2 ** 53 - 1 - k} 0 0 0\n" for k in range(60)) + \
        "triangles 1\n0 0 0 1 2 0 0 0 0 0 0\n"
    yield "ram-weights-to-nowhere", read_ram_text, text(ram_lines(BIG)).replace(
        f'{BIG - 1} {BIG - 1} 1 "J 1"', f'{BIG - 1} {BIG - 1} {2 ** 53 - 1} "J 1"')


def test_hostile_files_give_only_format_errors_in_linear_work():
    seen = 0
    for name, reader, data in hostile_files():
        seen += 1
        try:
            with bounded(calls=_budget(data)):
                reader(data, name)
        except FormatError as err:
            assert err.path == name, (name, str(err))
            if err.line is None:
                assert "no RiTE" in err.message or "cannot read" in err.message, (name, str(err))
            else:
                assert err.line >= 1
            assert str(err).startswith(name), (name, str(err))
        except Exception as err:         # noqa: BLE001 - the point of the test
            pytest.fail(f"{name}: {type(err).__name__}: {err}")
    assert seen > 1000


# -- sections of many blocks: problems deep inside ------------------------------------------------

def test_problems_deep_in_sections_of_several_blocks():
    """Sections of a few megabytes (the vectorised reader cuts them into blocks of whole
    lines): awkward but valid lines deep inside are read as written, and bad ones are
    reported at their line with the line-by-line reader's words."""
    rng = np.random.default_rng(8)
    n = 60_000
    lines = ram_lines(n)
    k = line_of(lines, "vertices ")                 # lines[k + r]: vertex r, on line k + r + 1
    w = line_of(lines, "weights ")
    xyz = np.column_stack([rng.normal(size=n), rng.normal(size=n) * 1e-5, rng.integers(-9, 9, n)])
    for r in range(n):                               # awkward numbers, so blocks differ in size
        lines[k + r] = f"{r} {xyz[r, 0]!r} {xyz[r, 1]!r} {int(xyz[r, 2])}"
    m = read_ram_text(text(lines), "h.ram")
    assert len(text(lines)) > 4 << 20
    assert m.positions.view(np.uint64).tolist() == xyz.view(np.uint64).tolist()
    weight_vertex = m.weight_vertex.copy()

    # awkward but valid
    spaced = list(lines)
    spaced[k + 41_200] = "41200\t0.5\t0.25 \r 1"
    spaced[w + 52_300] = '52300 52300 0 "J 0"  1.0'
    got = read_ram_text(text(spaced), "h.ram")
    assert got.positions[41_200].tolist() == [0.5, 0.25, 1.0]
    assert np.array_equal(np.delete(got.positions, 41_200, axis=0), np.delete(xyz, 41_200, axis=0))
    assert np.array_equal(got.weight_vertex, weight_vertex)
    warnings: list = []
    renamed = list(lines)
    renamed[w + 52_200] = '52200 52200 0 "J  0" 1.0'
    renamed[w + 1_000] = '1000 1000 1 "" 1.0'
    got = read_ram_text(text(renamed), "h.ram", warnings)
    assert np.array_equal(got.weight_vertex, weight_vertex)
    assert len(warnings) == 2 and all("but the skeleton calls it" in x for x in warnings), warnings
    assert f"h.ram:{w + 1_001}:" in warnings[0] and f"h.ram:{w + 52_201}:" in warnings[1]

    # bad: (section start, row, line, where it is reported, what it says)
    after_vertices = line_of(lines, "normals ")
    cases = [(k, 50_500, "1 2 nan 4", 0, "nan and inf are not allowed"),
             (k, 45_000, "# a comment takes a record's place", after_vertices,
              f"vertices: expected {n} records, found {n - 1} before line {after_vertices}"),
             (k, 59_999, "7 7 7", 0, "expected 4 fields (ID X Y Z), found 3"),
             (k, 33_000, "", after_vertices, f"expected {n} records, found {n - 1}"),
             (k, 39_000, "39000 0.5\x01 0.25 1", 0, "expected a number, found '0.5\\x01'"),
             (w, 51_500, '51500 51500 1 "J 1 "x" 1.0', 0, "unterminated quoted name"),
             (w, 56_000, "56000 56000 1 J_1 1.0", 0, "expected a quoted name, found 'J_1'"),
             (w, 59_999, '59999 59999 1 "J 1" 1.0 2.0', 0, "expected 5 fields"),
             (w, 44_444, '44444 44444 1 "J 1" -1.0', 0, "is negative")]
    for first, row, bad, where, fragment in cases:
        broken = list(lines)
        broken[first + row] = bad
        err = ram_error(text(broken))
        assert err.line == (where or first + row + 1), (bad, str(err))
        assert fragment in err.message, (bad, str(err))
