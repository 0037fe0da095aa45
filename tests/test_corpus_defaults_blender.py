# SPDX-License-Identifier: GPL-3.0-or-later
"""Every corpus file imported as a new user imports it: File >
Import with no option touched, then looked at.

Each file is imported once (through ``bpy.ops``, the installed extension)
and measured; each item is its own case, so that what another branch
still has to deliver is marked on exactly that case:

* imports: the operator finishes;
* visible: no material of an imported mesh is fully transparent (the
  Principled BSDF's alpha, unless a texture drives it);
* standing (characters): a joint at the top of the body stands above one
  at the bottom, in Blender's Z, in the pose shown (the catalogue names
  them: tests/data/x/real/PROVENANCE.md);
* animation length: every animation whose keys span some time lasts more
  than 2 frames and less than 10 minutes at the scene's frame rate;
* faces out: the corner normals agree with their face's normal on at least
  95% of the corners (what the viewport shades), and every closed mesh
  (each edge between two faces wound the same way) encloses a positive
  volume as Blender shows it (its faces point out, whatever its normals);
* no unknown objects: no warning about skipped unknown objects;
* self-check silent: no self-check warning (Blender's default pose is the
  file's).

Crafted files: Y-up characters written back as Z-up files (3ds Max's
habit) or X-up by the project's writer, which must stand too.
"""
from __future__ import annotations

import functools
import re
from pathlib import Path

import numpy as np
import pytest
from conftest import DATA, SAMPLES

from legacy_skin_io.io.xfile import read_xfile

X = DATA / "x"
REAL = X / "real"
BROKEN = {"malformed_skinweights_oob.x", "OV_GetNextToken"}     # refused on purpose (PROVENANCE.md)

#: characters: a joint at the top and one at the bottom of the body
STANDING = {
    "tiny_4anim.x": ("Bip01_Head", "Bip01_L_Toe0"),
    "BCN_Epileptic.X": ("B_Neck", "B_Toe_Left"),
    "Testwuson.X": ("Spine_Back01", "ForeLeg_L_05"),
    "extraanim.X": ("x3ds_Head", "x3ds_L_Foot"),
    "character.x": ("Armature_Head", "Armature_Leg_Left"),
    "mobs_stone_monster.x": ("Armature_Bone_001", "Armature_Bone_003"),
    "humanoid.ram": ("Head", "LeftToe"),
    "bcn_z_up.x": ("B_Neck", "B_Toe_Left"),
    "wuson_z_up.x": ("Spine_Back01", "ForeLeg_L_05"),
    "ninja_x_up.x": ("x3ds_Head", "x3ds_L_Foot"),
}
ITEMS = ("imports", "visible", "standing", "animation length", "faces out", "no unknown objects",
         "self-check silent")

#: cases that do not hold yet, with the reason
PENDING: dict[tuple[str, str], str] = {}


def _corpus() -> list[Path]:
    files = [p for p in sorted(X.rglob("*")) if p.is_file() and p.suffix.lower() == ".x" and p.name not in BROKEN]
    return files + [SAMPLES / "rite" / "humanoid.ram"]


#: crafted: Y-up characters written with other axes (name -> (source, (Forward, Up) of the written
#: file in the importer's terms)): Z-up as 3ds Max exporters write them, and X-up
CRAFTED = {"bcn_z_up.x": (X / "assimp" / "BCN_Epileptic.X", ("Y", "-Z")),
           "wuson_z_up.x": (X / "assimp" / "Testwuson.X", ("Y", "-Z")),
           "ninja_x_up.x": (REAL / "TheGameCreators__Dark-Basic-Pro" / "extraanim.X", ("-Z", "X"))}


def _items(name: str, path: Path | None) -> list[str]:
    """The items that apply to a file (by its own data, not by its import)."""
    out = ["imports", "no unknown objects", "self-check silent"]
    if path is not None and path.suffix.lower() == ".x":
        xf = read_xfile(path)
        has_mesh = any(True for f in xf.all_frames() for _ in f.meshes) or bool(xf.meshes)
        frames = {f.name for f in xf.all_frames()}          # (an animation of a frame the file lacks plays nothing)
        timed = any(len({t for a in s.animations if a.frame_name in frames for k in a.keys
                         for t in np.asarray(k.times).tolist()}) > 1 for s in xf.animation_sets)
    else:
        has_mesh, timed = True, path is None or path.suffix == ".ram"
    if has_mesh:
        out += ["visible", "faces out"]
    if name in STANDING:
        out.append("standing")
    if timed:
        out.append("animation length")
    return [i for i in ITEMS if i in out]


def _cases():
    out = []
    for p in _corpus():
        for item in _items(p.name, p):
            marks = ()
            if (p.name, item) in PENDING:
                marks = (pytest.mark.xfail(strict=True, reason=f"pending: {item} ({PENDING[p.name, item]})"),)
            out.append(pytest.param(str(p), item, marks=marks, id=f"{p.name}-{item}"))
    for name, (src, _) in CRAFTED.items():
        for item in _items(name, src):
            marks = ()
            if (name, item) in PENDING:
                marks = (pytest.mark.xfail(strict=True, reason=f"pending: {item} ({PENDING[name, item]})"),)
            out.append(pytest.param(name, item, marks=marks, id=f"{name}-{item}"))
    return out


@functools.lru_cache(maxsize=None)
def _crafted(name: str, folder: str) -> Path:
    """A crafted file: ``CRAFTED[name]``'s source (Y-up) read with the
    convention and written with other axes by the project's writer."""
    from legacy_skin_io.io.formats import by_id

    src, axes = CRAFTED[name]
    x = by_id("xfile")
    scene = x.read_scene([src], manual_orientation=True)
    out = Path(folder) / name
    x.adapter.write_scene(scene, out, axes=x.axes(*axes), warnings=[])
    return out


@functools.lru_cache(maxsize=None)
def _look(bpy, target: str, folder: str) -> dict:
    """Import ``target`` with the defaults and measure every item."""
    path = Path(target) if "/" in target else _crafted(target, folder)
    bpy.ops.wm.read_homefile(use_empty=True)
    op = bpy.ops.import_scene.rite if path.suffix == ".ram" else bpy.ops.import_scene.xfile
    kw = {}
    if path.suffix == ".ram":           # the sample with its walk, both picked in the file browser
        kw = dict(directory=str(path.parent), files=[{"name": path.name}, {"name": "walk.raa"}])
    try:
        result = op(filepath=str(path), **kw)
    except RuntimeError as err:
        return {"imports": False, "error": str(err)}
    out: dict = {"imports": result == {"FINISHED"}, "name": path.name}
    objs = list(bpy.context.scene.objects)
    meshes = [o for o in objs if o.type == "MESH"]
    out["transparent"] = _transparent(meshes)
    out["faces_out"] = _faces_out(meshes)
    out["inside_out"] = _inside_out(bpy, meshes)
    arms = [o for o in objs if o.type == "ARMATURE"]
    out["height"] = None
    if path.name in STANDING and arms:
        top, bottom = STANDING[path.name]
        arm = arms[0]
        bpy.context.view_layer.update()
        w = np.array(arm.matrix_world)

        def z(bone):
            return (w @ np.append(np.array(arm.pose.bones[bone].head), 1.0))[2]

        out["height"] = z(top) - z(bottom)
    fps = bpy.context.scene.render.fps / bpy.context.scene.render.fps_base
    still = _still_sets(path)
    out["lengths"] = {a.name: float(a.frame_range[1] - a.frame_range[0]) for a in bpy.data.actions
                      if a.name not in still}
    out["fps"] = fps
    return out


def _still_sets(path: Path) -> set[str]:
    """AnimationSets whose keys all lie at one time (a pose, e.g. Wuson_Bind)."""
    if path.suffix.lower() != ".x":
        return set()
    out = set()
    for i, s in enumerate(read_xfile(path).animation_sets):
        times = {t for a in s.animations for k in a.keys for t in np.asarray(k.times).tolist()}
        if len(times) <= 1:
            out.add(s.name or f"AnimationSet{i}")
    return out


def _transparent(meshes) -> list[str]:
    """Materials of ``meshes`` drawn fully transparent: alpha 0 on a
    Principled BSDF whose Alpha no texture drives."""
    out = []
    for o in meshes:
        for slot in o.material_slots:
            m = slot.material
            if m is None or m.node_tree is None:
                continue
            for n in m.node_tree.nodes:
                if n.type == "BSDF_PRINCIPLED":
                    a = n.inputs["Alpha"]
                    if not a.is_linked and a.default_value <= 0.0:
                        out.append(m.name)
    return sorted(set(out))


def _faces_out(meshes) -> float:
    """Fraction of corners whose normal agrees with its face's normal."""
    agree = total = 0
    for o in meshes:
        me = o.data
        L, F = len(me.loops), len(me.polygons)
        if not L:
            continue
        cn = np.zeros(L * 3, dtype=np.float32)
        me.corner_normals.foreach_get("vector", cn)
        fn = np.zeros(F * 3, dtype=np.float32)
        me.polygons.foreach_get("normal", fn)
        totals = np.zeros(F, dtype=np.int64)
        me.polygons.foreach_get("loop_total", totals)
        face = np.repeat(np.arange(F), totals)
        dots = np.sum(cn.reshape(-1, 3) * fn.reshape(-1, 3)[face], axis=1)
        agree += int((dots > 0).sum())
        total += L
    return agree / total if total else 1.0


def _inside_out(bpy, meshes) -> list[str]:
    """Closed meshes (every directed edge's reverse belongs to another face:
    consistently wound, no border) whose evaluated mesh, in the object's
    space (Blender shows a mirrored object's faces as its space winds them),
    encloses a negative volume: shown inside out."""
    dg = bpy.context.evaluated_depsgraph_get()
    out = []
    for o in meshes:
        ev = o.evaluated_get(dg)
        me = ev.to_mesh()
        try:
            L, F = len(me.loops), len(me.polygons)
            p = np.zeros(len(me.vertices) * 3, dtype=np.float32)
            me.vertices.foreach_get("co", p)
            cv = np.zeros(L, dtype=np.int64)
            me.loops.foreach_get("vertex_index", cv)
            sizes = np.zeros(F, dtype=np.int64)
            me.polygons.foreach_get("loop_total", sizes)
        finally:
            ev.to_mesh_clear()
        if not L:
            continue
        p = p.reshape(-1, 3).astype(np.float64)
        starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
        face = np.repeat(np.arange(F), sizes)
        nxt = np.arange(L) + 1
        nxt[starts + sizes - 1] = starts
        edges = {(int(a), int(b)) for a, b in zip(cv, cv[nxt])}
        if len(edges) != L or any((b, a) not in edges for a, b in edges):
            continue                    # open, or wound both ways: no inside to tell
        # signed volume: the fan of each face from its first corner, against the origin
        first = p[cv[starts]][face]
        vol = float(np.einsum("ij,ij->i", first, np.cross(p[cv], p[cv[nxt]])).sum()) / 6.0
        if vol < 0:
            out.append(o.name)
    return out


@pytest.mark.parametrize("target,item", _cases())
def test_a_default_import_looks_right(bpy_ext, tmp_path_factory, capfd, target, item):
    folder = str(_folder(tmp_path_factory))
    capfd.readouterr()
    look = _look(bpy_ext, target, folder)
    printed = capfd.readouterr().out
    if printed:
        _REPORTS[target] = printed
    reports = _REPORTS.get(target, "")
    warnings = [ln for ln in reports.splitlines() if ln.startswith("Warning: ")]
    if item == "imports":
        assert look["imports"], look.get("error")
        return
    assert look["imports"], f"not imported: {look.get('error')}"
    if item == "visible":
        assert not look["transparent"], look["transparent"]
    elif item == "standing":
        assert look["height"] is not None and look["height"] > 0, look["height"]
    elif item == "animation length":
        lengths = look["lengths"]
        assert lengths and all(2.0 < n < 600 * look["fps"] for n in lengths.values()), lengths
    elif item == "faces out":
        assert look["faces_out"] >= 0.95, look["faces_out"]
        assert not look["inside_out"], look["inside_out"]
    elif item == "no unknown objects":
        assert not [w for w in warnings if re.search(r"unknown .*object", w)], warnings
    elif item == "self-check silent":
        assert not [w for w in warnings if w.startswith("Warning: self-check")], warnings


_REPORTS: dict[str, str] = {}
_FOLDER: list[Path] = []


def _folder(factory) -> Path:
    if not _FOLDER:
        _FOLDER.append(factory.mktemp("crafted"))
    return _FOLDER[0]
