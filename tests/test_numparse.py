# SPDX-License-Identifier: GPL-3.0-or-later
"""numparse.parse_decimals against Python's float(): every token it converts has
float()'s value bit for bit, every token float() refuses is left unconverted, and
the usual positional spellings (repr, %f, %g, integers) are converted: the RAM
reader and the text .X tokenizer read their numbers through it. The plain
parser the benchmarks compare it with (``numparse.plain``) reads the corpus
the same."""
from __future__ import annotations

import random
import re
from pathlib import Path

import numpy as np

from legacy_skin_io.io.numparse import CODES, PAD, parse_decimals, plain


def _laid_out(tokens: list[str]):
    """(codes, starts, ends) of the tokens laid out with one blank between them."""
    data = " ".join(tokens).encode()
    codes = np.zeros(PAD + len(data) + PAD, dtype=np.uint8)
    codes[PAD:PAD + len(data)] = np.frombuffer(data.translate(CODES), dtype=np.uint8)
    lengths = np.array([len(t.encode()) for t in tokens])
    starts = PAD + np.concatenate([[0], np.cumsum(lengths + 1)[:-1]])
    return codes, starts, starts + lengths


def parse(tokens: list[str], integers: bool = False):
    """parse_decimals on the tokens laid out with one blank between them."""
    return parse_decimals(*_laid_out(tokens), integers)


def float_or_none(token: str):
    try:
        return float(token)
    except ValueError:
        return None


def assert_as_float(tokens: list[str]) -> np.ndarray:
    """Converted tokens are float()'s value; tokens float() refuses are not converted. Returns ``done``."""
    values, done = parse(tokens)
    for token, value, ok in zip(tokens, values.tolist(), done.tolist()):
        want = float_or_none(token)
        if ok:
            assert want is not None, token
            assert np.float64(value).tobytes() == np.float64(want).tobytes(), (token, value, want)
    return done


def hard_doubles(rng: np.random.Generator, n: int) -> np.ndarray:
    bits = rng.integers(0, 2 ** 64, n, dtype=np.uint64, endpoint=False)
    x = bits.view(np.float64)
    x = x[np.isfinite(x)]
    powers = np.concatenate([2.0 ** np.arange(-1074, 1024), 10.0 ** np.arange(-323, 309)])
    with np.errstate(over="ignore"):
        near = np.concatenate([powers, np.nextafter(powers, np.inf), np.nextafter(powers, 0)])
    near = near[np.isfinite(near)]
    return np.concatenate([x, near, -near, rng.normal(size=n), rng.random(n) * 1e-5,
                           rng.normal(size=n).astype(np.float32).astype(np.float64)])


def test_repr_and_printf_spellings_are_converted_as_float_reads_them():
    rng = np.random.default_rng(1)
    x = hard_doubles(rng, 40_000).tolist()
    forms = [repr(v) for v in x] + ["%.17g" % v for v in x[::3]] + ["%.6f" % v for v in x[::5]]
    forms += ["%.9e" % v for v in x[::7]] + ["%.3E" % v for v in x[::11]] + ["%+.12g" % v for v in x[::13]]
    done = assert_as_float(forms)
    # positional spellings of up to 19 digits are all converted (exponents are left to float())
    left = [t for t, ok in zip(forms, done.tolist()) if not ok and "e" not in t.lower() and len(t) <= 20]
    assert not left, left[:10]


def test_short_decimals_and_integers_are_all_converted():
    rng = random.Random(2)
    tokens = []
    for _ in range(50_000):
        digits = "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 14)))
        p = rng.randint(0, len(digits))
        token = rng.choice(["", "-", "+"]) + digits[:p] + "." + digits[p:]
        tokens.append(token if rng.random() < 0.8 else token.replace(".", ""))
    assert assert_as_float(tokens).all()
    ints = [t for t in tokens if "." not in t]
    values, done = parse(ints, integers=True)
    assert done.all() and values.tolist() == [int(t) for t in ints]


def test_garbage_is_never_converted_and_numbers_among_it_are():
    rng = random.Random(3)
    tokens = ["".join(rng.choice("0123456789..eE+-_x ") for _ in range(rng.randint(1, 40))).replace(" ", "")
              or "." for _ in range(60_000)]
    tokens += ["1e5.5", "--1", "+-1", "1.2.3", "1e", "e5", ".", "-", "+", "1e+", "0x1F", "1_0", "nan", "inf",
               "-inf", "1e999", "-1e999", "1e-999", "0e99999999", "١٢", "1.#QNAN0", "9" * 30, "0." + "0" * 40 + "1"]
    done = assert_as_float(tokens)
    assert done.sum() > 1000                    # (the random strings that are numbers)


def test_integers_follow_the_integer_grammar():
    tokens = ["0", "-0", "+5", "05", "1.0", "1e2", "-", "12a", str(2 ** 53 - 1), str(2 ** 53), "-" + str(2 ** 53 - 1),
              "0" * 30 + "7", "9" * 20]
    values, done = parse(tokens, integers=True)
    want = {"0": 0, "-0": 0, "+5": 5, "05": 5, str(2 ** 53 - 1): 2 ** 53 - 1, "-" + str(2 ** 53 - 1): -(2 ** 53 - 1)}
    assert {t: v for t, v, ok in zip(tokens, values.tolist(), done.tolist()) if ok} == want


def _corpus_tokens():
    """(file name, codes, starts, ends) of every text .X, RAM and RAA file of the tests and samples."""
    from legacy_skin_io.io.xfile import text_scan

    root = Path(__file__).resolve().parents[1]
    for p in sorted([*root.glob("tests/data/**/*"), *root.glob("samples/**/*")]):
        suffix = p.suffix.lower()
        if not p.is_file() or suffix not in (".x", ".ram", ".raa"):
            continue
        data = p.read_bytes()
        if suffix == ".x":
            if data[8:12] != b"txt ":
                continue
            starts, ends, codes = text_scan.scan(data, 16)
            yield p.name, codes, starts + PAD, ends + PAD
        else:
            codes = np.frombuffer(b"\x80" * PAD + data.translate(CODES) + b"\x80" * PAD, dtype=np.uint8)
            spans = np.array([m.span() for m in re.finditer(rb'[^\s"]+', data)], dtype=np.int64).reshape(-1, 2)
            yield p.name, codes, spans[:, 0] + PAD, spans[:, 1] + PAD


def test_the_plain_parser_reads_the_corpus_as_the_hand_written_one():
    """The benchmarks' plain numerics (LSIO_PLAIN_NUMERICS: np.fromstring) read every token of the
    corpus to the same doubles and integers: the comparison times the same results."""
    files = tokens = 0
    for name, codes, starts, ends in _corpus_tokens():
        for integers in (False, True):
            hand_values, hand_done = parse_decimals(codes, starts, ends, integers)
            plain_values, plain_done = plain.parse_decimals(codes, starts, ends, integers)
            assert np.array_equal(hand_done, plain_done), name
            assert np.array_equal(hand_values[hand_done].view(np.uint64), plain_values[hand_done].view(np.uint64)), name
            tokens += int(hand_done.sum())
        files += 1
    assert files >= 30 and tokens > 1_000_000


def test_the_plain_parser_follows_float_on_hard_values_and_garbage():
    rng = np.random.default_rng(4)
    x = hard_doubles(rng, 5_000).tolist()
    tokens = [repr(v) for v in x] + ["%.6f" % v for v in x[::5]] + ["1_0", "1.2.3", "-", "+.5", "5.", "--1",
                                                                       "1e5", "9" * 400, "0x1F", "nan"]
    plain_values, plain_done = plain.parse_decimals(*_laid_out(tokens))
    for token, value, ok in zip(tokens, plain_values.tolist(), plain_done.tolist()):
        if ok:
            assert np.float64(value).tobytes() == np.float64(float(token)).tobytes(), token
    assert plain_done.sum() > 10_000
    ints = ["0", "-0", "+5", "05", "1.0", str(2 ** 53 - 1), str(2 ** 53), "9" * 20, "12a"]
    values, done = plain.parse_decimals(*_laid_out(ints), integers=True)
    assert {t: v for t, v, ok in zip(ints, values.tolist(), done.tolist()) if ok} == {
        "0": 0, "-0": 0, "+5": 5, "05": 5, str(2 ** 53 - 1): 2 ** 53 - 1}
