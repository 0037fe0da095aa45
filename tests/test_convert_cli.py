# SPDX-License-Identifier: GPL-3.0-or-later
"""The command line around ``convert`` (no Blender): the loss exit status
and ``--accept-loss``, the message for a missing model, a whole folder
(``convert DIR -o OUTDIR --to EXT``) with broken files in it, plain-text
``--help`` for every command, and the progress line."""
from __future__ import annotations

import argparse
import io
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import DATA, ROOT, SAMPLES

from legacy_skin_io import cli
from legacy_skin_io.cli import convert, progress
from legacy_skin_io.cli.convert import EXIT_LOSS, LOSS_LIMIT
from legacy_skin_io.io.rite import adapter as rite
from legacy_skin_io.io.xfile import adapter as xfile
from legacy_skin_io.scene import evaluate as ev

X = DATA / "x"
RITE = SAMPLES / "rite"
LOSSY = X / "assimp" / "BCN_Epileptic.X"       # animated translation RAA cannot carry: ~21% of the model size
CARRY = re.compile(r"deviate from the scene by up to (\S+) of the model size")
LOSS = re.compile(r"^(error: )?loss: the written files deviate from the input by up to (\S+) of the model size "
                  r"\((.*?)\), (.*)$")


def _run(argv: list[str]) -> int:
    p = argparse.ArgumentParser()
    convert.add_arguments(p)
    return convert.run(p.parse_args([str(a) for a in argv]))


def _measured_loss(src: Path, written: list[str]) -> float:
    """The largest vertex distance between the .X file and the RiTE files
    read back, at every RAA frame, as a fraction of the model size: the
    readers and the oracle, not the writer's figure."""
    a = xfile.read_scene([str(src)], warnings=[])
    b = rite.read_scene(written, warnings=[])
    worst = 0.0
    for ca, cb in zip(a.clips, b.clips):
        frames = np.arange(0.0, np.ceil(cb.frame_range(24.0)[1]) + 1.0)
        for p, q in zip(ev.evaluate(a, ca, frames), ev.evaluate(b, cb, frames)):
            worst = max(worst, float(np.linalg.norm(p - q, axis=1).max()))
    return worst / ev.size(a)


def test_convert_exits_3_over_the_loss_limit_and_keeps_the_files(tmp_path, capsys):
    out = tmp_path / "bcn.ram"
    assert _run([LOSSY, "-o", out]) == EXIT_LOSS == 3
    cap = capsys.readouterr()
    written = [ln[len("wrote "):] for ln in cap.out.splitlines()]
    assert written == [str(out), str(tmp_path / "bcn_Epileptisch.raa")]
    assert all(Path(p).is_file() for p in written)
    # the figure in one clear line, the last on stderr, and it is what the files deviate by
    last = cap.err.strip().splitlines()[-1]
    m = LOSS.match(last)
    assert m and m.group(1) == "error: " and "over the limit 0.001" in m.group(4) and "--accept-loss" in last, last
    figure = float(m.group(2))
    assert m.group(3) == "Epileptisch, frame 40"
    assert figure == float(CARRY.search(cap.err).group(1))       # the writer's warning says the same
    assert figure == pytest.approx(_measured_loss(LOSSY, written), rel=0.01)
    assert figure > LOSS_LIMIT
    # --accept-loss: the same files, exit 0, the figure still shown
    before = {p: Path(p).read_bytes() for p in written}
    assert _run([LOSSY, "-o", out, "--accept-loss"]) == 0
    cap = capsys.readouterr()
    m = LOSS.match(cap.err.strip().splitlines()[-1])
    assert m and not m.group(1) and float(m.group(2)) == figure and m.group(4) == "accepted (--accept-loss)"
    assert {p: Path(p).read_bytes() for p in written} == before
    # a limit above the figure: exit 0, "within the limit"
    assert _run([LOSSY, "-o", out, "--max-loss", "0.5"]) == 0
    assert capsys.readouterr().err.strip().splitlines()[-1].endswith("within the limit 0.5")
    # nothing lost (a cube without animation): no loss line, exit 0
    assert _run([X / "assimp" / "test.x", "-o", tmp_path / "cube.ram"]) == 0
    assert "loss:" not in capsys.readouterr().err


def test_convert_names_the_file_when_the_model_is_missing(tmp_path, capsys):
    assert _run([RITE / "walk.raa", "-o", tmp_path / "walk.x"]) == 2
    assert capsys.readouterr().err.strip() == "error: walk.raa: give exactly one .ram model (got 0)"
    two = tmp_path / "other.ram"
    shutil.copy(RITE / "humanoid.ram", two)
    assert _run([RITE / "humanoid.ram", two, "-o", tmp_path / "h.x"]) == 2
    assert capsys.readouterr().err.strip() == "error: other.ram: give exactly one .ram model (got 2)"
    assert list(tmp_path.iterdir()) == [two]


def _help_texts() -> dict[str, str]:
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    out = {"": parser.format_help()}
    out.update({name: p.format_help() for name, p in sub.choices.items()})
    return out


def test_help_is_plain_text():
    texts = _help_texts()
    assert set(texts) == {"", "convert", "import", "verify", "export"}
    for name, text in texts.items():
        assert "`" not in text and not re.search(r":(func|class|mod|meth|data|attr):", text), (name, text)
    assert "--accept-loss" in texts["convert"] and "--jobs" in texts["convert"]
    assert "--frames" in texts["verify"] and "--report" in texts["verify"]
    assert "Exit status" in texts[""] and "3 convert wrote the files" in " ".join(texts[""].split())


def test_plain_strips_markup():
    from legacy_skin_io.io.options import plain

    assert plain("see ``--storage`` and :func:`convert` or :class:`~.errors.Warnings`, `x`") == \
        "see --storage and convert or .errors.Warnings, x"


# ---------------------------------------------------------------------------
# a folder

def _tree(tmp_path: Path) -> Path:
    """A folder of real files: .X models (one broken, one truncated), a
    RiTE model with its animations in a subfolder, an animation without
    its model, and a file of no format."""
    src = tmp_path / "assets"
    (src / "props").mkdir(parents=True)
    (src / "chars" / "hero").mkdir(parents=True)
    (src / "loose").mkdir()
    shutil.copy(X / "assimp" / "test_cube_text.x", src / "props" / "cube.x")
    shutil.copy(X / "assimp" / "anim_test.x", src / "props" / "cylinder.x")
    shutil.copy(X / "directx-sdk" / "tiger.x", src / "tiger.x")
    shutil.copy(X / "assimp" / "malformed_skinweights_oob.x", src / "props" / "broken.x")
    cube = (X / "assimp" / "test_cube_text.x").read_bytes()
    (src / "props" / "truncated.x").write_bytes(cube[:len(cube) // 2])
    for name in ("humanoid.ram", "walk.raa", "wave.raa"):
        shutil.copy(RITE / name, src / "chars" / "hero" / name)
    shutil.copy(RITE / "walk.raa", src / "loose" / "stray.raa")
    (src / "props" / "notes.txt").write_text("not a model\n")
    return src


def _convert_dir(*args, timeout=600):
    return subprocess.run([sys.executable, "-m", "legacy_skin_io", "convert", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)


def _table(stdout: str) -> dict[str, tuple[str, str, str]]:
    """{file: (result, loss, detail)} from the summary table."""
    rows = {}
    for line in stdout.splitlines()[1:]:
        m = re.match(r"^(converted|LOSS|FAILED)\s+(\S+)\s+(\S+)\s+(\S+)\s+(.*)$", line)
        if m:
            rows[m.group(4)] = (m.group(1), m.group(2), m.group(5))
    return rows


@pytest.mark.parametrize("jobs", [1, 2])
def test_convert_folder_converts_the_others_and_reports_the_broken(tmp_path, jobs):
    src = _tree(tmp_path)
    out = tmp_path / "out"
    r = _convert_dir(src, "-o", out, "--to", "x", "--jobs", jobs)
    assert r.returncode == 2, (r.stdout, r.stderr)           # some failed
    assert "Traceback" not in r.stderr
    rows = _table(r.stdout)
    assert set(rows) == {"props/broken.x", "props/cube.x", "props/cylinder.x", "props/truncated.x", "tiger.x",
                         "chars/hero/humanoid.ram", "loose/stray.raa"}
    assert rows["props/broken.x"][0] == "FAILED" and rows["props/broken.x"][2].startswith(
        "broken.x:244: Mesh 'Cube': SkinWeights")    # the reader's line: file, line, why
    assert rows["props/truncated.x"][0] == "FAILED" and rows["props/truncated.x"][2].startswith("truncated.x")
    assert rows["loose/stray.raa"][0] == "FAILED" and "no model file in its folder" in rows["loose/stray.raa"][2]
    for name in ("props/cube.x", "props/cylinder.x", "tiger.x", "chars/hero/humanoid.ram"):
        assert rows[name][0] == "converted", (name, rows[name])
    assert "(with 2 animation file(s))" in rows["chars/hero/humanoid.ram"][2]
    last = r.stdout.strip().splitlines()[-1]
    assert re.match(rf"^7 file\(s\) in \S+ s \({jobs} jobs?\): 4 converted, 3 failed; written below ", last), last
    # the tree is kept, and each output is what converting that model alone writes
    written = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert written == ["chars/hero/humanoid.x", "props/cube.x", "props/cylinder.x", "tiger.x"]
    alone = tmp_path / "alone"
    alone.mkdir()
    for name, inputs in [("props/cube.x", [src / "props" / "cube.x"]), ("tiger.x", [src / "tiger.x"]),
                         ("chars/hero/humanoid.x", [src / "chars" / "hero" / n
                                                    for n in ("humanoid.ram", "walk.raa", "wave.raa")])]:
        target = alone / Path(name).name
        assert _run([*inputs, "-o", target]) == 0
        assert (out / name).read_bytes() == target.read_bytes(), name
    got = xfile.read_scene([str(out / "chars" / "hero" / "humanoid.x")], warnings=[])
    assert [c.name for c in got.clips] == ["walk", "wave"]


def test_convert_folder_loss_exit_and_accept_loss(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(LOSSY, src / "bcn.x")
    shutil.copy(X / "assimp" / "test.x", src / "cube.x")
    out = tmp_path / "out"
    r = _convert_dir(src, "-o", out, "--to", ".ram")
    assert r.returncode == EXIT_LOSS, (r.stdout, r.stderr)
    rows = _table(r.stdout)
    assert rows["bcn.x"][0] == "LOSS" and float(rows["bcn.x"][1]) > LOSS_LIMIT
    assert "Epileptisch, frame 40" in rows["bcn.x"][2] and rows["cube.x"][:2] == ("converted", "-")
    assert sorted(p.name for p in out.iterdir()) == ["bcn.ram", "bcn_Epileptisch.raa", "cube.ram"]
    r = _convert_dir(src, "-o", out, "--to", ".ram", "--accept-loss")
    assert r.returncode == 0, (r.stdout, r.stderr)
    assert _table(r.stdout)["bcn.x"][0] == "converted"


def test_convert_folder_needs_a_target_format(tmp_path):
    src = _tree(tmp_path)
    for extra, message in (([], "a folder converts with --to EXT"), (["--to", "raa"], "not a model format")):
        r = _convert_dir(src, "-o", tmp_path / "out", *extra)
        assert r.returncode == 2 and re.search(message, r.stderr) and "Traceback" not in r.stderr, r.stderr
    assert not (tmp_path / "out").exists()


# ---------------------------------------------------------------------------
# progress

class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_progress_on_a_terminal_redraws_one_line_and_erases_it(monkeypatch):
    monkeypatch.setattr(progress, "DELAY", 0.0)
    monkeypatch.setattr(progress, "TICK", 0.01)
    monkeypatch.delenv("LSIO_PROGRESS", raising=False)
    term = _Terminal()
    with progress.Progress("verify 'Walk'", 300, stream=term) as p:
        p.update(150)
        time.sleep(0.2)
    text = term.getvalue()
    assert "\n" not in text                                  # redrawn in place
    assert "\r\x1b[Kverify 'Walk': 150/300 (50%)" in text
    assert text.endswith("\r\x1b[K")                          # erased at the end


def test_progress_in_a_log_is_a_line_now_and_then(monkeypatch):
    monkeypatch.setattr(progress, "TICK", 0.01)
    monkeypatch.setattr(progress, "EVERY", 0.1)
    monkeypatch.delenv("LSIO_PROGRESS", raising=False)
    log = io.StringIO()
    with progress.Progress("convert", 10, stream=log) as p:          # a short run: nothing at all
        p.update(3)
    assert log.getvalue() == ""
    with progress.Progress("convert", 10, stream=log) as p:
        p.update(2)
        time.sleep(0.35)
    lines = log.getvalue().splitlines()
    assert 2 <= len(lines) <= 4 and all(re.match(r"^convert: 2/10 \(20%\), \d+ s$", ln) for ln in lines), lines
    assert "\r" not in log.getvalue()

