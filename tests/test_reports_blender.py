# SPDX-License-Identifier: GPL-3.0-or-later
"""What an import tells its user (reports worth reading), read
where Blender puts it: in background mode every operator report is
printed as ``Warning: ...`` / ``Info: ...`` in the order reported (the
status bar shows the last one); notes that need no action go to the
console as ``legacy_skin_io: note: ...``. Also the self-check every import
runs, and the command line's summary."""
from __future__ import annotations

import re
import subprocess
import sys

import numpy as np
import pytest
from blender_checks import ext, imported
from conftest import DATA, ROOT

TINY = DATA / "x" / "directx-sdk" / "tiny_4anim.x"
CUBE = DATA / "x" / "assimp" / "test_cube_text.x"
TXT = b"xof 0303txt 0032\n"


def _reports(out: str) -> tuple[list[str], list[str], list[str]]:
    """(warnings, infos, notes) printed during an operator call."""
    lines = out.splitlines()
    warn = [ln[len("Warning: "):] for ln in lines if ln.startswith("Warning: ")]
    info = [ln[len("Info: "):] for ln in lines if ln.startswith("Info: ")]
    notes = [ln for ln in lines if ln.startswith("legacy_skin_io: note: ")]
    return warn, info, notes


def _count(summary: str) -> int:
    m = re.search(r"; (\d+) warnings?(, the first)?: ", summary)
    return int(m.group(1)) if m else 0


def test_a_default_import_of_tiny_says_one_line_and_warns_only_what_needs_action(bpy, capfd):
    """The summary comes last (what the status bar shows), names the file's
    up axis and counts the warnings, quoting the first; duplicate faces and
    animated end joints without a bone need no action: console notes only;
    nothing says "see the console"."""
    capfd.readouterr()
    assert bpy.ops.import_scene.xfile(filepath=str(TINY)) == {"FINISHED"}
    out = capfd.readouterr().out
    warn, info, notes = _reports(out)
    assert len(info) == 1
    summary = info[0]
    reports = [ln for ln in out.splitlines() if ln.startswith(("Warning: ", "Info: "))]
    assert reports[-1] == "Info: " + summary
    assert re.match(r"Imported tiny_4anim\.x: 2 meshes, \d+ bones, 4 actions \(Z up[,)]", summary), summary
    assert _count(summary) == len(warn)
    if warn:
        assert warn[0] in summary
    assert not any("duplicate face" in w or "no bone" in w for w in warn), warn
    assert any("duplicate face" in n for n in notes) and any("no bone" in n for n in notes)
    assert sum("no bone" in n for n in notes) == 1            # one line for the four animations
    assert any("up is the file's Z axis" in n and "Forward Y, Up -Z" in n for n in notes)
    assert "console" not in out.replace("legacy_skin_io: note:", "")


def test_findings_of_one_cause_are_one_warning_with_count_and_names(bpy, tmp_path, capfd):
    """Three SkinWeights naming frames the file does not have, two frames of
    the same name: one warning each, with the count and the names."""
    skin = b"".join(b'SkinWeights { "%s"; 1; %d; 1.0; 1,0,0,0, 0,1,0,0, 0,0,1,0, 0,0,0,1;; }\n' % (n, i)
                    for i, n in enumerate((b"gone1", b"gone2", b"gone3")))
    text = (TXT + b"Frame A { Frame A { } Frame A { }\n"
            b"Mesh m { 3; 0;0;0;, 1;0;0;, 0;1;0;; 1; 3;0,1,2;; " + skin + b"} }\n")
    (tmp_path / "m.x").write_bytes(text)
    capfd.readouterr()
    assert bpy.ops.import_scene.xfile(filepath=str(tmp_path / "m.x")) == {"FINISHED"}
    warn, info, _ = _reports(capfd.readouterr().out)
    missing = [w for w in warn if "SkinWeights" in w]
    assert len(missing) == 1 and "(3)" in missing[0] and all(f"gone{i}" in missing[0] for i in (1, 2, 3))
    renamed = [w for w in warn if "same name" in w]
    assert len(renamed) == 1 and "(2)" in renamed[0]
    assert _count(info[-1]) == len(warn)


def test_an_export_says_one_line_too(bpy, tmp_path, capfd):
    assert bpy.ops.import_scene.xfile(filepath=str(CUBE)) == {"FINISHED"}
    capfd.readouterr()
    assert bpy.ops.export_scene.rite(filepath=str(tmp_path / "cube.ram")) == {"FINISHED"}
    warn, info, _ = _reports(capfd.readouterr().out)
    assert len(info) == 1 and info[0].startswith("Exported cube.ram") and _count(info[0]) == len(warn)


def test_the_command_line_prints_the_operators_summary(bpy, tmp_path, capfd):
    capfd.readouterr()
    assert bpy.ops.import_scene.xfile(filepath=str(TINY)) == {"FINISHED"}
    _, info, _ = _reports(capfd.readouterr().out)
    r = subprocess.run([sys.executable, "-m", "legacy_skin_io", "import", str(TINY), "-o", str(tmp_path / "t.blend")],
                       cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    assert info[0] in r.stdout.splitlines(), (info[0], r.stdout[-2000:])


def test_the_self_check_measures_what_blender_shows(bpy):
    """Moving one vertex of the imported mesh by d: the self-check (run on
    the scene the import built) finds d; untouched, it finds float32 noise."""
    sc = ext("operators.selfcheck")
    ev = ext("scene.evaluate")
    assert bpy.ops.import_scene.xfile(filepath=str(TINY), import_animations=False) == {"FINISHED"}
    _, meshes = imported(bpy)
    scene = ext("io.formats").by_id("xfile").read_scene([TINY])
    size = ev.size(scene)
    quiet = sc.run(bpy.context, scene, meshes, size)
    assert quiet.error <= 1e-6 * size and quiet.vertices >= min(sc.SAMPLE, 4893) * 0.9
    obj = max(meshes.values(), key=lambda o: len(o.data.vertices))
    d = 1e-3 * size
    obj.data.vertices[0].co.z += d / obj.matrix_world.to_scale()[2]
    obj.data.update()
    moved = sc.run(bpy.context, scene, meshes, size)
    assert moved.error == pytest.approx(d, rel=1e-3) and moved.mesh == scene.meshes[
        next(i for i, o in meshes.items() if o == obj)].name


def test_the_self_check_reports_a_difference_with_its_figure(bpy, capfd, monkeypatch):
    """When what Blender shows is not what the file means: one warning with
    the figure (the oracle's positions shifted here by 1e-3 of the size)."""
    sc = ext("operators.selfcheck")
    oracle, real_run = ext("scene.evaluate"), sc.run

    def shifted(context, scene, objects, size, points=None):
        points = oracle.default_points(scene) if points is None else points
        return real_run(context, scene, objects, size, points + np.array([0.0, 0.0, 1e-3 * size]))

    monkeypatch.setattr(sc, "run", shifted)
    capfd.readouterr()
    assert bpy.ops.import_scene.xfile(filepath=str(CUBE)) == {"FINISHED"}
    warn, info, _ = _reports(capfd.readouterr().out)
    checks = [w for w in warn if w.startswith("self-check")]
    assert len(checks) == 1 and "1.0e-03 of the model size" in checks[0], warn
    assert _count(info[0]) == len(warn)
