# SPDX-License-Identifier: GPL-3.0-or-later
"""The Manual Orientation switch in the import operators (as Blender's FBX
importer has it): off, Forward/Up are greyed out and up is decided from the
file's data; on, Forward/Up apply. DirectX defaults to off, RiTE (Y-up by
contract) to on."""
from __future__ import annotations

import numpy as np
from blender_checks import ext, imported, reference, verify
from conftest import DATA, SAMPLES

TINY = DATA / "x" / "directx-sdk" / "tiny_4anim.x"


class _Layout:
    """Records each property drawn with whether its row is enabled."""

    def __init__(self, log):
        self.log = log
        self.use_property_split = self.use_property_decorate = self.enabled = True

    def panel(self, idname, default_closed=False):
        return _Layout(self.log), _Layout(self.log)

    def label(self, text=""):
        self.log.append(("label", text, True))

    def column(self):
        return _Layout(self.log)

    def prop(self, data, name):
        self.log.append(("prop", name, self.enabled))


def _drawn(bpy, idname: str, **values) -> list[tuple[str, bool]]:
    kind, fid = idname.split(".")
    cls = next(c for cs in ext("operators.ops")._classes.values() for c in cs if c.bl_idname == idname)
    rna = getattr(getattr(bpy.ops, kind), fid).get_rna_type()
    fake = type("Op", (), {p.identifier: p.default for p in rna.properties if hasattr(p, "default")})()
    for k, v in values.items():
        setattr(fake, k, v)
    log: list = []
    fake.layout, fake.bl_idname, fake.format_options, fake.SECTIONS = _Layout(log), idname, cls.format_options, \
        cls.SECTIONS
    cls.draw(fake, bpy.context)
    start = next(i for i, e in enumerate(log) if e[:2] == ("label", "Transform"))
    return [(n, on) for k, n, on in log[start + 1:start + 5] if k == "prop"]


def test_manual_orientation_greys_out_forward_and_up(bpy):
    assert _drawn(bpy, "import_scene.xfile") == [("global_scale", True), ("manual_orientation", True),
                                                 ("axis_forward", False), ("axis_up", False)]
    assert _drawn(bpy, "import_scene.xfile", manual_orientation=True)[2:] == [("axis_forward", True),
                                                                              ("axis_up", True)]
    assert _drawn(bpy, "import_scene.rite")[1:] == [("manual_orientation", True), ("axis_forward", True),
                                                    ("axis_up", True)]


def test_forward_and_up_apply_only_with_the_switch_on(bpy):
    """tiny_4anim.x (Z-up): by default it stands (Forward Y, Up -Z, chosen
    from its skeleton) whatever Forward/Up say; with the switch on, the
    Forward/Up given apply, and Forward Y, Up -Z give the same rig."""
    assert bpy.ops.import_scene.xfile(filepath=str(TINY), axis_forward="X", axis_up="Z",
                                      import_animations=False) == {"FINISHED"}
    arm, meshes = imported(bpy)
    md = ext("operators.metadata")
    auto = md.load(arm, md.RIG_KEY)["axes"]
    want = ext("scene").AxisConversion.from_axes("Y", "-Z", mirror_z=True)
    assert np.allclose(auto["C"], want.C)
    ref = reference("xfile", [TINY])
    assert verify(bpy, meshes, ref, None, [0.0]).ok
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.import_scene.xfile(filepath=str(TINY), manual_orientation=True, axis_forward="Y",
                                      axis_up="-Z", import_animations=False) == {"FINISHED"}
    arm, meshes = imported(bpy)
    assert np.allclose(md.load(arm, md.RIG_KEY)["axes"]["C"], want.C)
    assert verify(bpy, meshes, ref, None, [0.0]).ok
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.import_scene.xfile(filepath=str(TINY), manual_orientation=True,
                                      import_animations=False) == {"FINISHED"}
    arm, _ = imported(bpy)
    assert np.allclose(md.load(arm, md.RIG_KEY)["axes"]["C"], ext("io.xfile.adapter").default_axes().C)


def test_rite_stays_y_up_unless_asked(bpy):
    assert bpy.ops.import_scene.rite(filepath=str(SAMPLES / "rite" / "humanoid.ram")) == {"FINISHED"}
    arm, _ = imported(bpy)
    md = ext("operators.metadata")
    assert np.allclose(md.load(arm, md.RIG_KEY)["axes"]["C"], ext("io.rite.adapter").default_axes().C)


def _file_world(path) -> dict:
    """Frame name -> world matrix as the file stores it (row vectors)."""
    from legacy_skin_io.io.xfile import read_xfile

    out = {}

    def walk(f, parent):
        m = np.asarray(f.matrix, dtype=np.float64).reshape(4, 4) @ parent
        if f.name:
            out[f.name] = m
        for c in f.children:
            walk(c, m)

    for root in read_xfile(path).frames:
        walk(root, np.eye(4))
    return out


def test_export_writes_the_files_own_axes_back(bpy, tmp_path):
    """tiny_4anim.x stood up automatically, exported with no option touched:
    the written file is Z-up as the original (its joints where the file has
    them, in the file's own space), not the Y-up scene Blender shows."""
    assert bpy.ops.import_scene.xfile(filepath=str(TINY)) == {"FINISHED"}
    out = tmp_path / "tiny_back.x"
    assert bpy.ops.export_scene.xfile(filepath=str(out)) == {"FINISHED"}
    want, got = _file_world(TINY), _file_world(out)
    names = [n for n in ("Bip01_Head", "Bip01_L_Toe0", "Bip01_R_Hand", "Bip01_Pelvis") if n in got]
    assert len(names) == 4
    for n in names:
        assert np.abs(got[n][3, :3] - want[n][3, :3]).max() < 1e-3, (n, got[n][3, :3], want[n][3, :3])
    # and the head is above the feet along the file's +Z, as authored
    assert got["Bip01_Head"][3, 2] - got["Bip01_L_Toe0"][3, 2] > 300


def test_a_z_up_max_humanoid_stands_with_the_defaults(bpy, tmp_path):
    """The 25-bone 3ds Max humanoid, Z-up, its frames all the identity (only
    the skin's offsets and its one 4800-tick walk say where the joints are;
    it once came in lying, "nothing in the data against it"):
    File > Import > DirectX with no option touched stands it. At frame 0 the
    Head bone is above both Foot bones by most of the model's height, the
    toes are ahead of the feet (-Y), the deformed mesh is taller than wide,
    and it deforms as the file's own data say (verify)."""
    from humanoid_rigs import humanoid_xfile

    from legacy_skin_io.io.xfile import write_xfile

    path = tmp_path / "max_humanoid.x"
    write_xfile(humanoid_xfile("max", "bind_space_only", "Z"), path)
    assert bpy.ops.import_scene.xfile(filepath=str(path)) == {"FINISHED"}
    arm, meshes = imported(bpy)
    md = ext("operators.metadata")
    assert np.allclose(md.load(arm, md.RIG_KEY)["axes"]["C"],
                       ext("scene").AxisConversion.from_axes("Y", "-Z", mirror_z=True).C)
    sc = bpy.context.scene
    sc.frame_set(0)
    bpy.context.view_layer.update()

    def at(name):
        return np.array(arm.matrix_world @ arm.pose.bones[name].head)

    head, feet, toes = at("Head"), [at("L_Foot"), at("R_Foot")], [at("L_Toe"), at("R_Toe")]
    assert head[2] - max(f[2] for f in feet) > 120.0, (head, feet)      # the model: 157 units from foot to head
    assert all(t[1] < f[1] for t, f in zip(toes, feet)), (toes, feet)
    body = next(iter(meshes.values()))
    ev = body.evaluated_get(bpy.context.evaluated_depsgraph_get()).to_mesh()
    co = np.empty(len(ev.vertices) * 3)
    ev.vertices.foreach_get("co", co)
    co = co.reshape(-1, 3) @ np.array(body.matrix_world)[:3, :3].T + np.array(body.matrix_world)[:3, 3]
    extent = np.ptp(co, axis=0)
    assert extent[2] > 1.5 * max(extent[0], extent[1]), extent
    ref = reference("xfile", [path])
    assert verify(bpy, meshes, ref, ref.clips[0], [0.0, 6.0, 12.0]).ok
