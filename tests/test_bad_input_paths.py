# SPDX-License-Identifier: GPL-3.0-or-later
"""Inputs and targets that are not regular files, full disks and file-size
limits, long names: through ``convert`` (in a child process where a wrong
behaviour would hang or exhaust the machine) and the readers and writers
(io/paths.py, io/atomic.py). Device nodes and FIFOs are made inside a
temporary folder, never the machine's own /dev."""
from __future__ import annotations

import functools
import os
import resource
import shutil
import signal
from pathlib import Path

import pytest
from bad_input import cli_error, make_char_device, make_fifo
from conftest import run_cli

from legacy_skin_io.io import atomic, convert, formats, paths
from legacy_skin_io.io.errors import FormatError
from legacy_skin_io.io.rite import read_ram

ROOT = Path(__file__).resolve().parents[1]
RITE = ROOT / "samples" / "rite"
X = ROOT / "samples" / "x" / "tiny_4anim.x"
_cli = functools.partial(run_cli, timeout=120)


# ---------------------------------------------------------------------------
# inputs

def test_fifo_input_is_refused_without_waiting(tmp_path):
    """A FIFO (which would block the reader until a writer comes) as the model,
    as an animation, and without a suffix (sniffed): one line each, at once."""
    fifo = make_fifo(tmp_path, "model.ram")
    cli_error(_cli("convert", fifo, "-o", tmp_path / "o.x", timeout=60), "FIFO")
    anim = make_fifo(tmp_path, "anim.raa")
    cli_error(_cli("convert", RITE / "humanoid.ram", anim, "-o", tmp_path / "o.x", timeout=60), "FIFO")
    bare = make_fifo(tmp_path, "nosuffix")
    r = _cli("convert", bare, "-o", tmp_path / "o.x", timeout=60)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert not (tmp_path / "o.x").exists()


def test_device_input_is_refused(tmp_path):
    dev = make_char_device(tmp_path, "zero.x")
    cli_error(_cli("convert", dev, "-o", tmp_path / "o.ram", timeout=60), "character device")
    with pytest.raises(FormatError, match="character device"):
        formats.by_id("xfile").read_scene([dev])


def test_folder_input_is_refused(tmp_path):
    d = tmp_path / "folder.ram"
    d.mkdir()
    cli_error(_cli("convert", d, "-o", tmp_path / "o.x"), "folder")
    with pytest.raises(FormatError, match="folder"):
        formats.by_id("rite").read_scene([d])


def test_input_over_the_size_limit_is_refused_before_reading(tmp_path, monkeypatch):
    monkeypatch.setattr(paths, "MAX_INPUT_BYTES", 1000)
    for fmt, src in (("rite", RITE / "humanoid.ram"), ("xfile", X)):
        with pytest.raises(FormatError, match="too large"):
            formats.by_id(fmt).read_scene([src])
    with pytest.raises(FormatError, match="too large"):
        formats.by_id("rite").read_clips(None, None, [RITE / "walk.raa"])
    assert paths.check_input(RITE / "humanoid.ram", max_bytes=None) > 1000     # a .blend: Blender's to read
    small = tmp_path / "small.raa"
    small.write_bytes(b"frames 2\n" + b" " * 990)
    assert paths.read_input(small)[:8] == b"frames 2"       # at the limit: read


# ---------------------------------------------------------------------------
# targets

@pytest.mark.parametrize("kind", ["fifo", "device", "folder", "link to device"])
def test_export_never_replaces_what_is_not_a_regular_file(tmp_path, kind):
    if kind == "fifo":
        target = make_fifo(tmp_path, "out.x")
    elif kind == "device":
        target = make_char_device(tmp_path, "out.x")
    elif kind == "folder":
        target = tmp_path / "out.x"
        target.mkdir()
    else:
        dev = make_char_device(tmp_path, "null")
        target = tmp_path / "out.x"
        target.symlink_to(dev)
    before = os.lstat(target)
    r = _cli("convert", RITE / "humanoid.ram", "-o", target, timeout=60)
    cli_error(r, "will not replace")
    after = os.lstat(target)
    assert (after.st_mode, after.st_ino, after.st_rdev) == (before.st_mode, before.st_ino, before.st_rdev)
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []   # no temporary left


def test_link_to_a_regular_file_is_written_through(tmp_path):
    real = tmp_path / "real.x"
    real.write_bytes(b"old")
    link = tmp_path / "link.x"
    link.symlink_to(real)
    written = convert.convert([RITE / "humanoid.ram"], str(link), warnings=[])
    assert written == [str(link)]
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_bytes()[:4] == b"xof "


def test_missing_folder_and_long_names_are_one_line(tmp_path):
    cli_error(_cli("convert", RITE / "humanoid.ram", "-o", tmp_path / "nowhere" / "o.x"), "does not exist")
    long_x = tmp_path / ("a" * 254 + ".x")                # 256 bytes: too long for a file name
    with pytest.raises(FormatError, match="too long"):
        convert.convert([RITE / "humanoid.ram"], str(long_x), warnings=[])
    cli_error(_cli("convert", RITE / "humanoid.ram", "-o", long_x), "too long")
    # a legal 255-byte name: written (its temporary file's name stays within the limit)
    ok = tmp_path / ("b" * 251 + ".ram")
    assert convert.convert([RITE / "humanoid.ram"], str(ok), warnings=[]) == [str(ok)]
    ok.unlink()
    # a RAA name derived from a long RAM name: refused, and nothing written
    ram = tmp_path / ("c" * 250 + ".ram")          # fits; "<stem>_walk.raa" does not
    with pytest.raises(FormatError, match="too long"):
        convert.convert([RITE / "humanoid.ram", RITE / "walk.raa"], str(ram), warnings=[])
    assert not ram.exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


# ---------------------------------------------------------------------------
# full disks and file-size limits: all or nothing

def _fsize_limit(nbytes: int):
    def limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)       # write raises EFBIG instead of killing
        resource.setrlimit(resource.RLIMIT_FSIZE, (nbytes, nbytes))
    return limit


@pytest.mark.parametrize("out", ["o.x", "o.ram"])
def test_file_size_limit_fails_cleanly_and_leaves_the_targets(tmp_path, out):
    """Under a 20 kB file-size limit (a full disk as the writer sees it) the
    export fails with one line, every target keeps its previous content and
    no temporary file is left (RiTE: the RAM and its RAAs are all or nothing)."""
    target = tmp_path / out
    old = {target: b"previous model\n"}
    if out.endswith(".ram"):
        old[tmp_path / "o_walk.raa"] = b"previous walk\n"
    for p, data in old.items():
        p.write_bytes(data)
    r = _cli("convert", RITE / "humanoid.ram", RITE / "walk.raa", "-o", target,
             preexec_fn=_fsize_limit(20_000))
    cli_error(r, "File too large")
    assert {p: p.read_bytes() for p in old} == old
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in old)


def test_multi_file_export_is_all_or_nothing(tmp_path):
    """The second file of a RiTE export cannot be written (a folder has its
    name): nothing is written, the model file keeps its content."""
    (tmp_path / "o_wave.raa").mkdir()
    (tmp_path / "o.ram").write_bytes(b"previous\n")
    r = _cli("convert", RITE / "humanoid.ram", RITE / "walk.raa", RITE / "wave.raa", "-o", tmp_path / "o.ram")
    cli_error(r, "o_wave.raa")
    assert (tmp_path / "o.ram").read_bytes() == b"previous\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o.ram", "o_wave.raa"]


def test_batch_puts_back_every_target_when_a_rename_fails(tmp_path, monkeypatch):
    """A failure while renaming (after the first target was replaced) puts
    the first target's previous content back and removes every temporary."""
    a, b = tmp_path / "a.ram", tmp_path / "b.raa"
    a.write_bytes(b"old a")
    real_replace = os.replace
    calls = []

    def replace(src, dst):
        calls.append(dst)
        if Path(dst) == b:
            raise OSError(28, "No space left on device")
        return real_replace(src, dst)

    monkeypatch.setattr(atomic.os, "replace", replace)
    batch = atomic.Batch()
    batch.add(a, b"new a")
    batch.add(b, b"new b")
    with pytest.raises(FormatError, match="No space left"):
        batch.commit()
    assert a.read_bytes() == b"old a" and not b.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.ram"]


def test_read_only_folder_fails_with_one_line(tmp_path):
    if os.geteuid() == 0:
        pytest.skip("root writes into read-only folders")
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        cli_error(_cli("convert", RITE / "humanoid.ram", "-o", folder / "o.x"), "Permission denied")
    finally:
        folder.chmod(0o700)


def test_written_files_read_back(tmp_path):
    written = convert.convert([RITE / "humanoid.ram", RITE / "walk.raa"], str(tmp_path / "m.ram"), warnings=[])
    assert [Path(p).name for p in written] == ["m.ram", "m_walk.raa"]
    assert len(read_ram(written[0]).joints) == len(read_ram(RITE / "humanoid.ram").joints)
    shutil.rmtree(tmp_path)
