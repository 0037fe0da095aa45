# SPDX-License-Identifier: GPL-3.0-or-later
"""What Blender users expect from an importer/exporter, checked through the
installed extension: readable options, empties for frames, textures found
once, the Blender command line."""
from __future__ import annotations

import importlib
from pathlib import Path

import numpy as np
import pytest
from blender_checks import ext, save_png
from conftest import DATA, EXT_MODULE, SAMPLES

from legacy_skin_io.io.formats import FORMATS

TXT = b"xof 0303txt 0032\n"
JARGON = ("slerp", "nlerp", "matrixoffset", "framtransformmatrix", "channelbag", "quaternion f-curve")


def _operators(bpy):
    out = []
    for fmt in FORMATS:
        if fmt.writes_only:                 # no operator of this extension (Blender's own add-on has its name)
            continue
        for kind in ("import_scene", "import_anim", "export_scene", "export_anim"):
            op = getattr(getattr(bpy.ops, kind), fmt.id, None)
            try:
                rna = op.get_rna_type() if op is not None else None
            except KeyError:
                rna = None
            if rna is not None:
                out.append((f"{kind}.{fmt.id}", rna))
    return out


def test_every_option_has_a_plain_tooltip(bpy):
    ops = _operators(bpy)
    assert len(ops) >= 7
    for idname, rna in ops:
        for prop in rna.properties:
            if prop.identifier in ("rna_type", "filepath", "files", "directory", "filter_glob",
                                   "check_existing", "filename_ext", "hide_props_region"):
                continue
            if prop.is_hidden:
                continue
            assert prop.description.strip(), f"{idname}.{prop.identifier} has no tooltip"
            low = (prop.name + " " + prop.description).lower()
            assert not any(j in low for j in JARGON), f"{idname}.{prop.identifier}: {prop.description!r}"
            for item in (getattr(prop, "enum_items", ()) if not prop.identifier.startswith("axis_") else ()):
                assert item.description.strip(), f"{idname}.{prop.identifier}.{item.identifier}"


class _Layout:
    """Records what an operator's draw() shows: sections and properties."""

    def __init__(self, log):
        self.log = log
        self.use_property_split = self.use_property_decorate = self.enabled = True

    def panel(self, idname, default_closed=False):
        self.log.append(("panel", idname))
        return _Layout(self.log), _Layout(self.log)

    def label(self, text=""):
        self.log.append(("label", text))

    def column(self):
        return _Layout(self.log)

    def prop(self, data, name):
        self.log.append(("prop", name))


def test_options_are_drawn_in_sections(bpy):
    """Every import/export operator draws its own options (draw() with
    layout.panel sections Include / Transform / Armature / Animation, as
    FBX does), and shows each visible option exactly once."""
    ops_mod = ext("operators.ops")
    classes = [c for cs in ops_mod._classes.values() for c in cs
               if getattr(c, "bl_idname", "").startswith(("import_scene.", "export_scene."))]
    assert len(classes) == 2 * len([f for f in FORMATS if not f.writes_only])
    for cls in classes:
        kind, fid = cls.bl_idname.split(".")
        rna = getattr(getattr(bpy.ops, kind), fid).get_rna_type()
        log = []
        fake = type("Op", (), {p.identifier: p.default for p in rna.properties if hasattr(p, "default")})()
        fake.layout, fake.bl_idname, fake.format_options = _Layout(log), cls.bl_idname, cls.format_options
        fake.SECTIONS = cls.SECTIONS
        cls.draw(fake, bpy.context)
        titles = [t for k, t in log if k == "label"]
        drawn = [n for k, n in log if k == "prop"]
        assert {"Transform", "Animation"} <= set(titles) and ("Armature" in titles or kind == "export_scene")
        assert "Include" in titles
        visible = {p.identifier for p in rna.properties if not p.is_hidden and p.identifier not in
                   ("rna_type", "filepath", "files", "directory", "filter_glob", "check_existing",
                    "filename_ext", "hide_props_region", "collection")}
        assert sorted(drawn) == sorted(visible), (cls.bl_idname, set(visible) ^ set(drawn))


def test_frames_without_meshes_become_empties(bpy, tmp_path):
    """A hierarchy of frames with a mesh under one of them and nothing
    skinned or animated: empties in the same hierarchy, the mesh under its
    frame (it imported 0 objects before)."""
    text = (TXT + b"Frame Root { FrameTransformMatrix { 1,0,0,0, 0,1,0,0, 0,0,1,0, 0,0,5,1;; }\n"
            b" Frame Arm { FrameTransformMatrix { 1,0,0,0, 0,1,0,0, 0,0,1,0, 2,0,0,1;; }\n"
            b"  Frame Hand { FrameTransformMatrix { 1,0,0,0, 0,1,0,0, 0,0,1,0, 1,0,0,1;; }\n"
            b"   Mesh box { 3; 0;0;0;, 1;0;0;, 0;1;0;; 1; 3;0,1,2;; } } }\n"
            b" Frame Leg { FrameTransformMatrix { 1,0,0,0, 0,1,0,0, 0,0,1,0, 0,-2,0,1;; } } }\n")
    (tmp_path / "scene.x").write_bytes(text)
    assert bpy.ops.import_scene.xfile(filepath=str(tmp_path / "scene.x")) == {"FINISHED"}
    objs = {o.name: o for o in bpy.context.scene.objects}
    assert {"Root", "Arm", "Hand", "Leg"} <= set(objs)
    assert all(objs[n].type == "EMPTY" for n in ("Root", "Arm", "Hand", "Leg"))
    assert objs["Arm"].parent == objs["Root"] and objs["Hand"].parent == objs["Arm"]
    mesh = next(o for o in objs.values() if o.type == "MESH")
    assert mesh.parent == objs["Hand"]
    bpy.context.view_layer.update()
    # file point (x, y, z) at Blender (x, z, y): the Hand frame's world origin is file (3, 0, 5)
    assert np.allclose(np.array(mesh.matrix_world)[:3, 3], [3.0, 5.0, 0.0], atol=1e-6)


def _material_file(names: list[str]) -> bytes:
    mats = b"".join(b'Material m%d { 1;1;1;1;; 0; 0;0;0;; 0;0;0;; TextureFilename { "%s"; } }\n'
                    % (i, n.encode()) for i, n in enumerate(names))
    faces = b",".join(b"3;0,1,2" for _ in names)
    return (TXT + b"Mesh m { 3; 0;0;0;, 1;0;0;, 0;1;0;; %d; %s;; MeshMaterialList { %d; %d; %s;; %s } }"
            % (len(names), faces, len(names), len(names), b",".join(b"%d" % i for i in range(len(names))), mats))


def test_one_image_per_texture_file_and_one_warning_per_missing(bpy, tmp_path, capfd):
    save_png(bpy, tmp_path / "tex" / "skin.png")
    names = ["skin.png", "SKIN.PNG", "textures\\skin.dds", "C:\\art\\skin.png", "gone.png", "gone.png", "gone.png"]
    (tmp_path / "m.x").write_bytes(_material_file(names))
    assert bpy.ops.import_scene.xfile(filepath=str(tmp_path / "m.x")) == {"FINISHED"}
    images = sorted(bpy.data.images, key=lambda i: i.name)
    assert [Path(i.filepath).name for i in images] == ["gone.png", "skin.png"]
    assert [tuple(i.size) != (0, 0) for i in images] == [False, True]     # (reading size loads a file)
    assert [i.has_data for i in images] == [False, True]        # gone.png: a path to relink, no data
    out = capfd.readouterr().out
    warned = [line for line in out.splitlines() if line.startswith("Warning:")]
    assert sum(w.count("not found") for w in warned) == 1 and "gone.png" in out
    mats = [m for m in bpy.data.materials if m.name.startswith("m")]
    linked = [m for m in mats if any(n.type == "TEX_IMAGE" and n.outputs["Color"].links for n in m.node_tree.nodes)]
    assert len(linked) == 4                                     # the four names that find skin.png
    assert all(not any(n.type == "TEX_IMAGE" and n.image is None for n in m.node_tree.nodes) for m in mats)
    missing = [m for m in mats if m.get("texture_path") == "gone.png"]
    assert len(missing) == 3                                    # the name kept for the user


def test_pack_images_option(bpy, tmp_path):
    save_png(bpy, tmp_path / "skin.png")
    (tmp_path / "m.x").write_bytes(_material_file(["skin.png"]))
    assert bpy.ops.import_scene.xfile(filepath=str(tmp_path / "m.x"), pack_images=True) == {"FINISHED"}
    assert [bool(i.packed_file) for i in bpy.data.images] == [True]


def test_blender_command_line_runs_the_same_commands(bpy, tmp_path):
    """``blender --command legacy_skin_io ...`` is registered with
    bpy.utils.register_cli_command and takes the CLI's subcommands."""
    assert importlib.import_module(EXT_MODULE)._command_handle is not None       # the package's register()
    command_line = ext("cli").blender_command_line
    out = tmp_path / "humanoid.x"
    rite = SAMPLES / "rite"
    code = command_line(["convert", str(rite / "humanoid.ram"), str(rite / "walk.raa"), "-o", str(out)])
    assert code == 0 and out.read_bytes().startswith(b"xof ")
    assert command_line(["convert", str(DATA / "x" / "assimp" / "OV_GetNextToken"), "-o",
                         str(tmp_path / "x.ram")]) == 2
    assert command_line(["--no-such-option"]) == 2


@pytest.mark.parametrize("sub", ["convert", "import", "verify", "export"])
def test_every_command_line_option_has_help(sub):
    cli = ext("cli")
    parser = cli.build_parser()
    action = next(a for a in parser._actions if getattr(a, "choices", None) and sub in a.choices)
    for a in action.choices[sub]._actions:
        if a.dest != "help":
            assert a.help, f"{sub} {a.option_strings or a.dest} has no help"


@pytest.mark.parametrize("fid", [f.id for f in FORMATS if not f.writes_only])
def test_collection_exporters_export_only_their_collection(bpy, tmp_path, fid):
    """Blender's Collection Exporters (Collection properties > Exporters):
    the exporter sees only its collection (it used to log "collection not
    found" and export the whole scene)."""
    assert bpy.ops.import_scene.xfile(filepath=str(DATA / "x" / "directx-sdk" / "tiny_4anim.x")) == {"FINISHED"}
    coll = bpy.data.collections.new("Props")
    bpy.context.scene.collection.children.link(coll)
    mesh = bpy.data.meshes.new("crate")
    mesh.from_pydata([(0, 0, 0), (1, 0, 0), (0, 1, 0), (0, 0, 1)], [], [(0, 1, 2), (0, 1, 3), (0, 2, 3), (1, 2, 3)])
    coll.objects.link(bpy.data.objects.new("crate", mesh))
    fmt = next(f for f in FORMATS if f.id == fid)
    if hasattr(coll.exporters, "new"):                         # Blender 5.0
        exporter = coll.exporters.new(f"IO_FH_{fid}", name="mine")
    else:                                                      # 4.5 LTS: the operator behind the panel
        with bpy.context.temp_override(collection=coll):
            assert bpy.ops.collection.exporter_add(name=f"IO_FH_{fid}") == {"FINISHED"}
        exporter = coll.exporters[-1]
    out = tmp_path / f"props{fmt.model_suffixes[0]}"
    exporter.export_properties.filepath = str(out)
    with bpy.context.temp_override(collection=coll):
        assert bpy.ops.collection.exporter_export(index=0) == {"FINISHED"}
    back = ext(f"io.{fid}.adapter").read_scene([str(out)], warnings=[])
    assert sum(len(m.positions) for m in back.meshes) == 4       # the crate, not tiny's 4,893 vertices


def test_degenerate_and_duplicate_faces_are_skipped_with_counts(bpy, tmp_path, capfd):
    """Faces Blender cannot hold are dropped, counted in the report, and the
    rest keep their corners in order: a quad, a triangle, the same quad
    rotated and the triangle reversed (duplicates: later ones go), a
    triangle with a vertex twice (degenerate) and a second, distinct quad."""
    faces = [[0, 1, 2, 3], [0, 1, 4], [2, 3, 0, 1], [4, 1, 0], [1, 1, 2], [1, 2, 4, 5]]
    pts = b",".join(b"%d;%d;0;" % (i % 3, i // 3) for i in range(6))
    rows = b",".join(b"%d;%s" % (len(f), b",".join(b"%d" % v for v in f)) for f in faces)
    (tmp_path / "f.x").write_bytes(TXT + b"Mesh m { 6; %s; %d; %s;; }" % (pts, len(faces), rows))
    assert bpy.ops.import_scene.xfile(filepath=str(tmp_path / "f.x")) == {"FINISHED"}
    me = next(o for o in bpy.context.scene.objects if o.type == "MESH").data
    got = [list(p.vertices) for p in me.polygons]
    # independent of the builder: keep a face unless a vertex repeats or an earlier kept face has its vertex set
    want, seen = [], set()
    for f in faces:
        key = frozenset(f)
        if len(key) == len(f) and key not in seen:
            want.append(f[::-1])                # .X winds clockwise, Blender counter-clockwise
        seen.add(key)
    assert got == want
    cap = capfd.readouterr()
    err = cap.out + cap.err
    assert "1 degenerate face(s) skipped" in err
    assert "2 duplicate face(s)" in err


def test_imported_curves_hold_their_end_values(bpy):
    """Every imported F-curve extrapolates constantly (nothing drifts past an
    action's ends) and interpolates linearly between baked keys."""
    assert bpy.ops.import_scene.xfile(filepath=str(DATA / "x" / "assimp" / "BCN_Epileptic.X")) == {"FINISHED"}
    curves = [fc for act in bpy.data.actions for bag in _channelbags(act) for fc in bag.fcurves]
    assert len(curves) > 100
    assert all(fc.extrapolation == "CONSTANT" for fc in curves)
    assert all(k.interpolation == "LINEAR" for fc in curves[:50] for k in fc.keyframe_points)


def test_imported_curves_are_grouped_by_bone(bpy):
    """Each bone's F-curves are in one action group named after the bone,
    as Blender's own keying groups them (the Dope Sheet and Graph Editor
    list them per bone)."""
    assert bpy.ops.import_scene.xfile(filepath=str(DATA / "x" / "directx-sdk" / "tiny_4anim.x")) == {"FINISHED"}
    seen = 0
    for act in bpy.data.actions:
        for bag in _channelbags(act):
            for fc in bag.fcurves:
                bone = fc.data_path.split('"')[1]
                assert fc.group is not None and fc.group.name == bone, (act.name, fc.data_path)
                seen += 1
            names = [g.name for g in bag.groups]
            assert len(names) == len(set(names))
    assert seen > 1000


def _channelbags(action):
    for layer in action.layers:
        for strip in layer.strips:
            yield from strip.channelbags


def test_imported_faces_are_smooth(bpy):
    """Shaded with the file's normals, as glTF's importer does: no face is flat."""
    assert bpy.ops.import_scene.rite(filepath=str(SAMPLES / "rite" / "humanoid.ram")) == {"FINISHED"}
    me = next(o for o in bpy.data.objects if o.type == "MESH").data
    assert len(me.polygons) > 100 and all(p.use_smooth for p in me.polygons)
    assert "sharp_face" not in me.attributes
