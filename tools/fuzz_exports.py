# SPDX-License-Identifier: GPL-3.0-or-later
"""The export and command-line half of tools/fuzz_campaign.py: hostile
scenes exported onto hostile targets through the export operators, and the
command line (``convert``, ``import``, ``verify``, ``export``) run with
hostile inputs, option values and outputs. FIFOs and device nodes are made
inside the campaign's temporary folder, never the machine's /dev.

A case passes when the export or command finishes (every file it names is
a regular file our readers read back) or fails with one line that is no
internal error; in every case no temporary file is left, anything that was
not a regular file is still what it was (same inode, type and device), and
a regular file an export failed to replace keeps its content.
"""
from __future__ import annotations

import os
import stat
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RITE = ROOT / "samples" / "rite"
X = ROOT / "samples" / "x" / "tiny_4anim.x"

#: hostile scenes: name -> (sample imported, what is done to it)
SCENES = ("rite", "x", "zero_prop", "faceless", "nan_vertex", "huge_scale", "long_action", "empty",
          "plain_mesh", "odd_names", "zero_bone")
#: hostile targets for a file named NAME in a fresh folder
TARGETS = ("new", "existing", "fifo", "device", "folder", "link_device", "link_file", "dangling_link",
           "missing_folder", "file_as_folder", "name_255", "name_256", "raa_is_folder", "readonly_folder")
#: (operator, suffix)
EXPORTS = (("export_scene.xfile", ".x"), ("export_scene.rite", ".ram"), ("export_anim.rite", ".raa"))


def export_cases(count: int, seed: int):
    """``count`` (scene, target, operator) combinations, every one of them
    first when ``count`` allows, then random ones."""
    import itertools
    import random

    combos = list(itertools.product(SCENES, TARGETS, range(len(EXPORTS))))
    random.Random(seed).shuffle(combos)
    for scene, target, op in combos[:count]:
        yield {"kind": "export", "name": f"export {scene} -> {target} ({EXPORTS[op][0]})", "scene": scene,
               "target": target, "op": op}


# ---------------------------------------------------------------------------
# targets

def _mknod(path: Path) -> bool:
    try:
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        return True
    except OSError:
        return False


def make_target(kind: str, folder: Path, suffix: str) -> Path | None:
    """The path to export to for target ``kind`` (None: not possible here)."""
    folder.mkdir(parents=True, exist_ok=True)
    p = folder / ("out" + suffix)
    if kind == "new":
        return p
    if kind == "existing":
        p.write_bytes(b"previous content\n")
        return p
    if kind == "fifo":
        os.mkfifo(p)
        return p
    if kind == "device":
        return p if _mknod(p) else None
    if kind == "folder":
        p.mkdir()
        return p
    if kind == "link_device":
        dev = folder / "dev_node"
        if not _mknod(dev):
            return None
        p.symlink_to(dev)
        return p
    if kind == "link_file":
        real = folder / ("real" + suffix)
        real.write_bytes(b"previous content\n")
        p.symlink_to(real)
        return p
    if kind == "dangling_link":
        p.symlink_to(folder / "nowhere" / "file")
        return p
    if kind == "missing_folder":
        return folder / "missing" / ("out" + suffix)
    if kind == "file_as_folder":
        (folder / "afile").write_bytes(b"a file\n")
        return folder / "afile" / ("out" + suffix)
    if kind == "name_255":
        return folder / ("n" * (255 - len(suffix)) + suffix)
    if kind == "name_256":
        return folder / ("n" * (256 - len(suffix)) + suffix)
    if kind == "raa_is_folder":
        for clip in ("walk", "Loiter", "Walk", "Jog", "Wave", "long"):
            (folder / f"out_{clip}.raa").mkdir()
        return p
    if kind == "readonly_folder":
        if os.geteuid() == 0:
            return None          # root writes into read-only folders
        ro = folder / "ro"
        ro.mkdir()
        ro.chmod(0o500)
        return ro / ("out" + suffix)
    raise ValueError(kind)


def snapshot(folder: Path) -> dict:
    """Every entry under ``folder``: (type, inode, device, content of regular files)."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            st = os.lstat(p)
            data = p.read_bytes() if stat.S_ISREG(st.st_mode) and st.st_size < 1 << 16 else None
            out[str(p.relative_to(folder))] = (stat.S_IFMT(st.st_mode), st.st_ino, st.st_rdev, data)
    return out


def check_target(folder: Path, before: dict, finished: bool, written: list[Path]) -> list[str]:
    """What an export may have changed in ``folder``: only regular files (or
    new paths) it wrote; nothing left behind."""
    problems = []
    after = snapshot(folder)
    for name, (kind, ino, rdev, data) in before.items():
        now = after.get(name)
        if kind != stat.S_IFREG:
            if now is None or now[:3] != (kind, ino, rdev):
                problems.append(f"{name}: a {oct(kind)} entry was replaced or removed")
        elif not finished and (now is None or now[3] != data):
            problems.append(f"{name}: a failed export changed an existing file")
    left = [n for n in after if Path(n).name.startswith(".") and n not in before]
    if left:
        problems.append(f"temporary files left: {left[:3]}")
    for p in written:
        if not p.is_file():
            problems.append(f"{p.name}: reported written, but not a regular file")
    try:
        os.chmod(folder / "ro", 0o700)
    except OSError:
        pass
    return problems


# ---------------------------------------------------------------------------
# scenes (in the child, with bpy)

def build_scene(bpy, kind: str) -> None:
    """The hostile scene ``kind`` in the current (empty) Blender file."""
    if kind == "empty":
        return
    if kind == "x":
        bpy.ops.import_scene.xfile(filepath=str(X))
        return
    if kind == "plain_mesh":
        me = bpy.data.meshes.new("plain")
        me.from_pydata([(0, 0, 0), (1, 0, 0), (0, 1, 0)], [], [(0, 1, 2)])
        bpy.context.scene.collection.objects.link(bpy.data.objects.new("plain", me))
        return
    bpy.ops.import_scene.rite(filepath=str(RITE / "humanoid.ram"))
    bpy.ops.import_anim.rite(filepath=str(RITE / "walk.raa"))
    arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    body = next(o for o in bpy.data.objects if o.type == "MESH")
    if kind in ("zero_prop", "faceless"):
        me = bpy.data.meshes.new(kind)
        if kind == "zero_prop":
            me.from_pydata([(0, 0, 0), (1, 0, 0), (0, 1, 0), (0, 0, 1)], [], [(0, 1, 2), (0, 1, 3)])
        else:
            me.from_pydata([(0, 0, 0), (1, 0, 0), (0, 1, 0)], [(0, 1)], [])
        obj = bpy.data.objects.new(kind, me)
        bpy.context.scene.collection.objects.link(obj)
        obj.parent = arm
        if kind == "zero_prop":
            obj.parent_type, obj.parent_bone = "BONE", arm.data.bones[0].name
            obj.scale = (0.0, 0.0, 0.0)
    elif kind == "nan_vertex":
        body.data.vertices[0].co = (float("nan"), 0.0, 0.0)
    elif kind == "huge_scale":
        arm.scale = (1e30, 1e30, 1e30)
    elif kind == "long_action":
        bpy.context.scene.render.fps = 1
        act = arm.animation_data.action
        for fc in _fcurves(act):
            fc.keyframe_points.insert(1_000_000.0, fc.keyframe_points[0].co[1])
            break
    elif kind == "odd_names":
        arm.data.bones[0].name = 'b"{quoted}; ' + "\u30dc\u30fc\u30f3"
        body.name = "mesh with spaces and \\ backslash"
        arm.animation_data.action.name = "walk/..\\" + "x" * 50
    elif kind == "zero_bone":
        arm.pose.bones[1].scale = (0.0, 0.0, 0.0)


def _fcurves(action):
    try:
        return list(action.fcurves)
    except AttributeError:        # Blender 5.0: slotted actions
        return [fc for layer in action.layers for strip in layer.strips for bag in strip.channelbags
                for fc in bag.fcurves]


def read_back(path: Path) -> str | None:
    """None when our reader reads ``path``, else the error."""
    from legacy_skin_io.io import formats
    from legacy_skin_io.io.rite import read_raa

    try:
        if path.suffix.lower() == ".raa":
            read_raa(path)
        else:
            formats.for_path(path).read_scene([str(path)], warnings=[])
    except Exception as err:  # noqa: BLE001 - any failure is a finding
        return f"{type(err).__name__}: {err}"
    return None


def run_export(bpy, case: dict, work: Path) -> list[str]:
    """One export case in the child process: the problems found."""
    op_name, suffix = EXPORTS[case["op"]]
    folder = work / f"e{abs(hash(case['name'])) % 10**9}"
    bpy.ops.wm.read_homefile(use_empty=True)
    try:
        build_scene(bpy, case["scene"])
    except Exception as err:  # noqa: BLE001
        return [f"could not build the scene: {type(err).__name__}: {err}"]
    target = make_target(case["target"], folder, suffix)
    if target is None:
        return []
    before = snapshot(folder)
    problems = []
    category, name = op_name.split(".")
    finished = False
    written: list[Path] = []
    try:
        res = getattr(getattr(bpy.ops, category), name)(filepath=str(target))
        finished = res == {"FINISHED"}
        if finished:
            real = target.resolve() if target.is_symlink() else target
            raas = target.parent.glob(target.stem + "_*.raa") if suffix == ".ram" else ()
            written = [real] + sorted(p for p in raas if str(p.relative_to(folder)) not in before)
            for p in written:
                err = read_back(p)
                if err:
                    problems.append(f"{p.name}: written, then not readable: {err[:200]}")
    except RuntimeError as err:
        text = str(err)
        if "Traceback" in text or len(text.strip().splitlines()) > 2:
            problems.append(f"not a one-line error: {text[:200]!r}")
        if "internal error" in text:
            problems.append(f"a bug, not a target problem: {text[:200]!r}")
    except Exception as err:  # noqa: BLE001
        problems.append(f"{type(err).__name__}: {err}")
    problems += check_target(folder, before, finished, written)
    return problems


# ---------------------------------------------------------------------------
# the command line (each case its own process)

def cli_cases(work: Path):
    """(name, argv, folder to watch) of the command-line cases."""
    ram, walk, x = str(RITE / "humanoid.ram"), str(RITE / "walk.raa"), str(X)
    folder = work / "cli"
    folder.mkdir(parents=True, exist_ok=True)
    fifo = folder / "fifo.ram"
    os.mkfifo(fifo)
    dev = folder / "dev.x"
    has_dev = _mknod(dev)
    adir = folder / "adir.x"
    adir.mkdir()
    afile = folder / "afile"
    afile.write_text("a file\n")
    big = folder / "empty.ram"
    big.write_bytes(b"")
    inputs = [str(fifo), str(adir), str(big), str(folder / "missing.ram")] + ([str(dev)] if has_dev else [])
    outputs = [str(fifo), str(adir), str(afile / "o.x"), str(folder / "nope" / "o.ram"),
               str(folder / ("n" * 254 + ".x"))] + ([str(dev)] if has_dev else [])
    numbers = ["nan", "inf", "-inf", "-1", "0", "1e400", "1e-320", "abc"]
    for i, p in enumerate(inputs):
        yield f"convert input {Path(p).name[:20]}", ["convert", p, "-o", str(folder / f"c{i}.x")], folder
        yield f"verify input {Path(p).name[:20]}", ["verify", p], folder
        yield f"import input {Path(p).name[:20]}", ["import", p, "-o", str(folder / f"i{i}.blend")], folder
        yield f"export input {Path(p).name[:20]}", ["export", p, "-o", str(folder / f"x{i}.x")], folder
    for o in outputs:
        yield f"convert output {Path(o).name[:20]}", ["convert", ram, walk, "-o", o], folder
        yield f"import output {Path(o).name[:20]}", ["import", ram, "-o", o], folder
    yield "verify --blend in a file", ["verify", ram, "--blend", str(afile / "x.blend")], folder
    yield "import -o a folder", ["import", ram, "-o", str(adir)], folder
    for v in numbers:
        yield f"verify --scale {v}", ["verify", ram, "--scale", v], folder
        yield f"verify --tolerance {v}", ["verify", ram, walk, "--tolerance", v], folder
        yield f"convert --fps {v}", ["convert", ram, walk, "-o", str(folder / "f.x"), "--fps", v], folder
        yield f"convert --ticks-per-second {v}", ["convert", x, "-o", str(folder / "t.x"), "--ticks-per-second",
                                                 v], folder
        yield f"convert --input-ticks-per-second {v}", ["convert", x, "-o", str(folder / "t.ram"),
                                                       "--input-ticks-per-second", v], folder
    yield "convert tiny --fps", ["convert", ram, walk, "-o", str(folder / "tiny.x"), "--fps", "1e-9"], folder


def run_cli(name: str, argv: list[str], folder: Path, seconds: float) -> list[str]:
    before = snapshot(folder)
    t = time.perf_counter()
    try:
        r = subprocess.run([sys.executable, "-m", "legacy_skin_io", *argv], cwd=ROOT, capture_output=True,
                           text=True, timeout=seconds, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return [f"hung past {seconds:.0f} s"]
    problems = []
    out = r.stdout + r.stderr
    if r.returncode not in (0, 1, 2, 3):     # 3: written, with a loss over --max-loss (one error line)
        problems.append(f"exit status {r.returncode}: {r.stderr[-300:]!r}")
    if "Traceback" in out:
        problems.append(f"a traceback: {r.stderr[-300:]!r}")
    if "internal error" in out:
        problems.append(f"a bug: {r.stderr[-300:]!r}")
    if r.returncode in (2, 3):
        errors = [ln for ln in r.stderr.splitlines() if ln.startswith("error: ") or ": error: " in ln]
        if len(errors) != 1:
            problems.append(f"exit {r.returncode} without exactly one error line: {r.stderr[-300:]!r}")
    wrote = [Path(ln[len("wrote "):].strip()) for ln in r.stdout.splitlines() if ln.startswith("wrote ")]
    problems += check_target(folder, before, r.returncode in (0, 1, 3), [p for p in wrote if p.parent == folder])
    for p in wrote if argv[0] in ("convert", "export") else ():      # import and verify write .blend files
        if p.suffix.lower() in (".x", ".ram", ".raa") and (err := read_back(p)):
            problems.append(f"{p.name}: written, then not readable: {err[:200]}")
    for p in wrote:                   # the next case starts from the same folder
        if p.parent == folder and p.is_file():
            p.unlink()
    dt = time.perf_counter() - t
    if dt > seconds:
        problems.append(f"took {dt:.0f} s")
    return problems
