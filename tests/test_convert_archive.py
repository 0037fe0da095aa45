# SPDX-License-Identifier: GPL-3.0-or-later
"""``convert DIR`` at archive scale (no Blender): ``--report FILE.jsonl``
(one line per input, written as each is done, complete lines after a killed
run), ``--resume`` (what the report says is done is not converted again),
``--jobs`` and ``--scheduler local:2`` (Dask, when installed) giving the
same files and report as one process, and the batches Dask's tasks take."""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import DATA, ROOT, SAMPLES, run_cli

from legacy_skin_io.cli import batch_report, cluster
from legacy_skin_io.io.convert import Outcome
from legacy_skin_io.io.formats import FORMATS

X = DATA / "x"
REAL = X / "real"
FIELDS = {"input", "animations", "outputs", "status", "reason", "deviation", "deviation_at", "seconds", "warnings"}
#: every registered format's model suffix (a format registered later is tested too)
TARGETS = [f.model_suffixes[0] for f in FORMATS]
#: what each input of :func:`_archive` comes to with --to x
STATUSES = {"character.x": "ok", "tiger.x": "ok", "props/cube.x": "ok", "chars/hero/humanoid.ram": "ok",
            "pistol.x": "warned", "props/broken.x": "failed", "loose/stray.raa": "failed"}


def _archive(tmp_path: Path) -> Path:
    """Real files: .X models (one that writes with a warning, one broken), a
    RiTE model with its two animations, an animation without its model."""
    src = tmp_path / "archive"
    for d in ("props", "chars/hero", "loose"):
        (src / d).mkdir(parents=True)
    shutil.copy(X / "assimp" / "test_cube_text.x", src / "props" / "cube.x")
    shutil.copy(X / "assimp" / "malformed_skinweights_oob.x", src / "props" / "broken.x")
    shutil.copy(X / "directx-sdk" / "tiger.x", src / "tiger.x")
    shutil.copy(REAL / "blitz-research__blitz3d" / "pistol.x", src / "pistol.x")    # material names renamed
    shutil.copy(REAL / "minetest__minetest_game" / "character.x", src / "character.x")
    for name in ("humanoid.ram", "walk.raa", "wave.raa"):
        shutil.copy(SAMPLES / "rite" / name, src / "chars" / "hero" / name)
    shutil.copy(SAMPLES / "rite" / "walk.raa", src / "loose" / "stray.raa")
    return src


def _lines(report: Path) -> list[dict]:
    text = report.read_text(encoding="utf-8")
    assert text.endswith("\n"), text[-200:]
    return [json.loads(line) for line in text.splitlines()]


def _by_name(lines: list[dict], src: Path) -> dict[str, dict]:
    """The last line of each input, by its path below ``src``."""
    return {Path(d["input"]).relative_to(src).as_posix(): d for d in lines}


def _outputs(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def _comparable(lines: list[dict], src: Path, out: Path) -> list[dict]:
    """Report lines without their times, outputs below ``out`` by relative path, in input order."""
    rows = []
    for d in lines:
        d = dict(d, outputs=[Path(p).relative_to(out).as_posix() for p in d["outputs"]])
        assert d.pop("seconds") >= 0
        rows.append(d)
    return sorted(rows, key=lambda d: d["input"])


@pytest.mark.parametrize("to", TARGETS)
def test_report_has_one_line_per_input_with_its_status(tmp_path, to):
    src, out, report = _archive(tmp_path), tmp_path / "out", tmp_path / "r.jsonl"
    r = run_cli("convert", src, "-o", out, "--to", to, "--report", report)
    assert r.returncode == 2, (r.stdout, r.stderr)           # some failed
    lines = _lines(report)
    assert len(lines) == len(STATUSES) and all(set(d) == FIELDS for d in lines)
    got = _by_name(lines, src)
    assert {name for name, d in got.items() if d["status"] == "failed"} == {"props/broken.x", "loose/stray.raa"}
    if to == ".x":
        assert {name: d["status"] for name, d in got.items()} == STATUSES
        assert got["pistol.x"]["reason"] == got["pistol.x"]["warnings"][0]
        assert "material name(s) written differently" in got["pistol.x"]["reason"]
        assert all(d["deviation"] is None for d in got.values())          # .X carries all of these
    table = {m.group(2): m.group(3) for m in re.finditer(r"^(FAILED)\s+\S+\s+\S+\s+(\S+)\s+(.*)$", r.stdout, re.M)}
    for name, d in got.items():
        if d["status"] == "failed":
            assert d["outputs"] == [] and d["reason"] == table[name] and d["reason"]
        else:
            assert d["outputs"] and all(Path(p).is_file() for p in d["outputs"])
            assert str((out / name).with_suffix(to)) in d["outputs"]
            assert d["seconds"] > 0 and (d["deviation"] is None or d["status"] == "warned")
        assert (d["reason"] == "") == (d["status"] == "ok")
        assert (d["warnings"] == []) == (d["status"] != "warned")
    assert got["props/broken.x"]["reason"].startswith("broken.x:244: Mesh 'Cube': SkinWeights")
    assert got["chars/hero/humanoid.ram"]["animations"] == [str(src / "chars" / "hero" / n)
                                                            for n in ("walk.raa", "wave.raa")]


def test_report_holds_the_deviation_of_a_lossy_conversion(tmp_path):
    src, out, report = tmp_path / "src", tmp_path / "out", tmp_path / "r.jsonl"
    src.mkdir()
    shutil.copy(X / "assimp" / "BCN_Epileptic.X", src / "bcn.x")      # animated translation RAA cannot carry
    shutil.copy(X / "assimp" / "test.x", src / "cube.x")
    r = run_cli("convert", src, "-o", out, "--to", "ram", "--report", report)
    assert r.returncode == 3, (r.stdout, r.stderr)           # over the loss limit
    got = _by_name(_lines(report), src)
    bcn = got["bcn.x"]
    assert bcn["status"] == "warned" and 0.1 < bcn["deviation"] < 0.5 and bcn["deviation_at"] == "Epileptisch, frame 40"
    assert re.search(r"LOSS\s+(\S+)\s", r.stdout).group(1) == f"{bcn['deviation']:.2e}"   # the table's figure
    assert sorted(Path(p).name for p in bcn["outputs"]) == ["bcn.ram", "bcn_Epileptisch.raa"]
    assert got["cube.x"]["status"] == "ok" and got["cube.x"]["deviation"] is None


@pytest.mark.parametrize("to", TARGETS)
def test_resume_converts_nothing_that_is_done(tmp_path, to):
    src, out, report = _archive(tmp_path), tmp_path / "out", tmp_path / "r.jsonl"
    run_cli("convert", src, "-o", out, "--to", to, "--report", report)
    first = _by_name(_lines(report), src)
    ok = sorted(name for name, d in first.items() if d["status"] != "failed")      # written: ok or warned
    redo = sorted(name for name, d in first.items() if d["status"] == "failed")
    assert ok and "props/broken.x" in redo and any(first[n]["status"] == "warned" for n in ok)
    stamps = {p: os.stat(p).st_mtime_ns for d in first.values() for p in d["outputs"]}
    time.sleep(0.05)
    r = run_cli("convert", src, "-o", out, "--to", to, "--report", report, "--resume")
    summary = r.stdout.strip().splitlines()[-1]
    assert summary.startswith(f"{len(first)} file(s) in ") and f", {len(ok)} skipped (done in the report: --resume);" \
        in summary, summary
    again = _lines(report)[len(first):]                       # appended: the failed one again
    assert sorted(Path(d["input"]).relative_to(src).as_posix() for d in again) == redo
    for name, d in first.items():                             # the written ones (ok or warned) not written again
        for p in d["outputs"]:
            assert (os.stat(p).st_mtime_ns == stamps[p]) == (name in ok), (name, p)
    # an output gone, and that input is converted again
    gone = Path(first[ok[0]]["outputs"][0])
    gone.unlink()
    r = run_cli("convert", src, "-o", out, "--to", to, "--report", report, "--resume")
    assert f", {len(ok) - 1} skipped (done in the report: --resume)" in r.stdout and gone.is_file()
    assert _by_name(_lines(report), src)[ok[0]]["status"] == first[ok[0]]["status"]


@pytest.mark.parametrize("to", TARGETS)
def test_jobs_give_the_files_and_report_of_one_process(tmp_path, to):
    src = _archive(tmp_path)
    runs = {}
    for jobs in (1, 2):
        out, report = tmp_path / f"out{jobs}", tmp_path / f"r{jobs}.jsonl"
        r = run_cli("convert", src, "-o", out, "--to", to, "--report", report, "--jobs", jobs)
        assert r.returncode == 2 and "Traceback" not in r.stderr, (r.stdout, r.stderr)
        runs[jobs] = (_outputs(out), _comparable(_lines(report), src, out))
    assert runs[1][0] and runs[1] == runs[2]


def _killable_archive(tmp_path: Path, copies: int) -> Path:
    src = tmp_path / "big"
    real = sorted(REAL.rglob("*.x"))
    for k in range(copies):
        (src / f"c{k:02d}").mkdir(parents=True)
        for p in real:
            shutil.copy(p, src / f"c{k:02d}" / p.name)
    return src


def _wait_for_lines(report: Path, proc: subprocess.Popen, n: int) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if report.is_file() and report.read_bytes().count(b"\n") >= n:
            return
        time.sleep(0.02)
    raise AssertionError(f"no {n} report lines (exit {proc.poll()})")


def _group(pgid: int) -> list[int]:
    """The processes left in a process group."""
    left = []
    for d in Path("/proc").iterdir():
        try:
            fields = (d / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if d.name.isdigit() and int(fields[2]) == pgid and fields[0] != "Z":
            left.append(int(d.name))
    return left


@pytest.mark.parametrize("stop, to, jobs", [("SIGKILL", "parent", 2), ("SIGINT", "group", 1),
                                            ("SIGTERM", "parent", 2)])
def test_a_stopped_run_leaves_complete_lines_and_resume_goes_on(tmp_path, stop, to, jobs):
    """Killed (its worker processes then end by themselves), Ctrl-C at a
    terminal (the whole process group), or ``kill`` / a batch system's time
    limit (SIGTERM: it stops its workers): whole lines, nothing left running,
    and --resume converts the rest."""
    src, out, report = _killable_archive(tmp_path, 8), tmp_path / "out", tmp_path / "r.jsonl"
    total = sum(1 for _ in src.rglob("*.x"))
    proc = subprocess.Popen([sys.executable, "-m", "legacy_skin_io", "convert", str(src), "-o", str(out), "--to",
                             "x", "--report", str(report), "--jobs", str(jobs)], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        _wait_for_lines(report, proc, 5)
        (os.killpg if to == "group" else os.kill)(proc.pid, getattr(signal, stop))
        stdout, stderr = proc.communicate(timeout=60)
        deadline = time.monotonic() + 10
        while _group(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _group(proc.pid) == []                 # no worker process left behind
    finally:
        if _group(proc.pid):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    if stop != "SIGKILL":
        assert proc.returncode == 128 + getattr(signal, stop) and "Traceback" not in stderr, stderr
        how = "interrupted" if stop == "SIGINT" else "stopped \\(SIGTERM\\)"
        assert re.search(rf"^{how}; \d+ input\(s\) done are in \S+r\.jsonl: --resume goes on$", stderr, re.M), stderr
    lines = _lines(report)                       # every line whole
    assert 5 <= len(lines) < total and all(set(d) == FIELDS for d in lines)
    done = sum(d["status"] != "failed" for d in lines)
    r = run_cli("convert", src, "-o", out, "--to", "x", "--report", report, "--resume")
    assert r.returncode == 0, (r.stdout, r.stderr)
    assert f", 0 failed, {done} skipped (done in the report: --resume);" in r.stdout
    final = _by_name(_lines(report), src)
    assert len(final) == total and all(d["status"] != "failed" for d in final.values())
    assert all(Path(p).is_file() for d in final.values() for p in d["outputs"])


def test_resume_drops_a_line_cut_short(tmp_path):
    report = tmp_path / "r.jsonl"
    whole = Outcome([str(tmp_path / "a.x")], str(tmp_path / "out" / "a.x"), error="a.x:1: bad")
    with batch_report.Report(report) as r:
        r.write(whole)
    with open(report, "ab") as f:
        f.write(b'{"input": "/x/b.x", "outp')          # the machine went down mid-write
    done, warning = batch_report.done_before(report)
    assert list(done) == [whole.inputs[0]] and warning == ""
    with batch_report.Report(report, resume=True) as r:
        r.write(whole)
    assert [d["input"] for d in _lines(report)] == [whole.inputs[0]] * 2
    report.write_text('{"input": 1}\nnot json\n' + report.read_text())
    done, warning = batch_report.done_before(report)
    assert list(done) == [whole.inputs[0]] and warning == f"{report}:1: 2 line(s) that are not report lines, ignored"


def test_folder_flags_are_checked_before_any_work(tmp_path, monkeypatch):
    src, out = _archive(tmp_path), tmp_path / "out"
    for extra, message in ((["--resume"], r"^error: --resume needs --report FILE"),
                           (["--jobs", "2", "--scheduler", "local:2"], r"^error: --jobs and --scheduler: one or the"),
                           (["--scheduler", "local:0"], r"^error: --scheduler local:0: local:N starts N worker"),
                           (["--report", tmp_path], r"^error: .*cannot write the report|will not replace a folder")):
        r = run_cli("convert", src, "-o", out, "--to", "x", *extra)
        assert r.returncode == 2 and re.search(message, r.stderr, re.M) and "Traceback" not in r.stderr, r.stderr
        assert len(r.stderr.strip().splitlines()) == 1 and not out.exists()
    r = run_cli("convert", src / "tiger.x", "-o", tmp_path / "t.x", "--report", tmp_path / "r.jsonl", "--resume")
    assert r.returncode == 0 and "warning: --report, --resume: for a folder (convert DIR -o OUTDIR), ignored" \
        in r.stderr and not (tmp_path / "r.jsonl").exists()


def test_scheduler_without_dask_says_what_to_install(monkeypatch):
    real = cluster.importlib.util.find_spec
    monkeypatch.setattr(cluster.importlib.util, "find_spec",
                        lambda name, *a: None if name == "distributed" else real(name, *a))
    with pytest.raises(cluster.SchedulerError, match=r"^--scheduler needs Dask distributed, which is not "
                                                     r"installed: pip install -r requirements-cluster\.txt"):
        cluster.check("local:2")


def test_batches_put_a_large_file_alone_and_small_ones_together():
    sizes = [5000, 3000] + [10] * 200                  # largest first, as the jobs are started
    got = cluster.batches(sizes, workers=1)
    assert [k for g in got for k in g] == list(range(len(sizes)))     # every job once, in order
    assert got[0] == [0] and got[1] == [1]             # each over its share of the bytes (625) alone
    assert [len(g) for g in got[2:]] == [cluster.MAX_BATCH] * 6 + [200 - 6 * cluster.MAX_BATCH]
    assert [len(g) for g in cluster.batches(sizes, workers=4)[2:5]] == [16, 16, 16]    # a share of 156 bytes
    assert cluster.batches(sizes, workers=1000) == [[k] for k in range(len(sizes))]    # many workers: one each


def _dask_available() -> bool:
    import importlib.util

    if importlib.util.find_spec("distributed") is not None:
        return True
    if os.environ.get("LSIO_REQUIRE_DASK") == "1":
        pytest.fail("LSIO_REQUIRE_DASK=1 but Dask distributed is not installed (pip install -r "
                    "requirements-cluster.txt)")
    pytest.skip("Dask distributed not installed: --scheduler local:2 not tested (pip install -r "
                "requirements-cluster.txt; LSIO_REQUIRE_DASK=1 requires it)")
    return False


@pytest.mark.parametrize("to", TARGETS)
def test_scheduler_local_gives_the_files_and_report_of_one_process(tmp_path, to):
    _dask_available()
    src = _archive(tmp_path)
    runs = {}
    for name, how in (("one", ["--jobs", "1"]), ("dask", ["--scheduler", "local:2"])):
        out, report = tmp_path / name, tmp_path / f"{name}.jsonl"
        r = run_cli("convert", src, "-o", out, "--to", to, "--report", report, *how)
        assert r.returncode == 2 and "Traceback" not in r.stderr, (r.stdout, r.stderr)
        runs[name] = (_outputs(out), _comparable(_lines(report), src, out), r.stdout.splitlines()[:-1])
    assert runs["one"][0] and runs["one"] == runs["dask"]           # the files, the report, the table
    ok = sum(d["status"] != "failed" for d in runs["dask"][1])
    r = run_cli("convert", src, "-o", tmp_path / "dask", "--to", to, "--report", tmp_path / "dask.jsonl",
                "--resume", "--scheduler", "local:2")
    assert f", {ok} skipped (done in the report: --resume)" in r.stdout and "(scheduler local:2)" in r.stdout, r.stdout
