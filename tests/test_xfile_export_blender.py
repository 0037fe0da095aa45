# SPDX-License-Identifier: GPL-3.0-or-later
"""DirectX .X export through bpy.ops (export_scene.xfile).

* .X -> Blender -> .X -> Blender deforms as the ORIGINAL file plays (the
  oracle, scene.evaluate, on a fresh parse of the original) at every frame
  of every AnimationSet, within 1e-5 of the model size, in text, binary and
  both compressed forms; the exported file keeps the frame names, vertex
  counts and set timings;
* a rig made in Blender -> .X -> Blender deforms as Blender deformed it,
  with the file holding what the options ask for (key type, float size,
  keys at the bones' own linear keys or every frame);
* a failed export leaves an existing file byte for byte as it was and no
  temporary file; the scope options choose which objects are written;
* a static mesh comes back with the winding, n-gons, UVs, normals, colours
  and materials the source file stores.
"""
from __future__ import annotations

import os

import export_checks as rig
import numpy as np
import pytest
from blender_checks import imported, play, reference
from conftest import DATA  # noqa: E402
from xfile_compare import all_meshes

from legacy_skin_io.io.xfile import read_xfile

X = DATA / "x"
TINY = X / "directx-sdk" / "tiny_4anim.x"
BCN = X / "assimp" / "BCN_Epileptic.X"
REL = 1e-5
HEADERS = {"text": b"txt ", "binary": b"bin ", "text_compressed": b"tzip", "binary_compressed": b"bzip"}


def _set_ticks(xf) -> dict[str, tuple[float, float]]:
    """{set name: (first, last) key time in seconds} of a parsed file."""
    tps = float(xf.anim_ticks_per_second or 4800)
    out = {}
    for s in xf.animation_sets:
        t = np.concatenate([np.asarray(k.times, dtype=np.float64) for a in s.animations for k in a.keys])
        out[s.name] = (t.min() / tps, t.max() / tps)
    return out


def _frames(xf) -> dict[str, tuple[str | None, bool]]:
    """{frame name: (parent name, holds meshes)}, unnamed frames named as
    the reader names their joints (frame<i>, in file order)."""
    out: dict = {}
    order = {id(f): i for i, f in enumerate(xf.all_frames())}

    def name(f):
        return f.name or f"frame{order[id(f)]}"

    def walk(f, parent):
        out[name(f)] = (parent, bool(f.meshes))
        for c in f.children:
            walk(c, name(f))

    for root in xf.frames:
        walk(root, None)
    return out


def assert_frames_kept(xf, src) -> None:
    """Every frame of ``xf`` is a frame of ``src`` under its nearest kept
    ancestor, or a top-level childless frame of its own that holds a mesh;
    the frames that skin and their ancestors are all kept."""
    want, got = _frames(src), _frames(xf)
    skinning = {sw.frame_name for m in all_meshes(src) for sw in m.skin_weights}
    for n in skinning:
        while n is not None:
            assert n in got, n
            n = want[n][0]
    children = {p for p, _ in got.values()}
    for n, (parent, holds) in got.items():
        if n not in want:
            assert holds and parent is None and n not in children, n
            continue
        up = want[n][0]
        while up is not None and up not in got:
            up = want[up][0]
        assert parent == up, (n, parent, up)


# ---------------------------------------------------------------------------
# .X -> Blender -> .X -> Blender

#: export options for each stored form (one of them with 64-bit floats)
FORMS = {"text": {"storage": "text"}, "binary": {"storage": "binary"},
         "text_compressed": {"storage": "text_compressed"},
         "binary_compressed-64": {"storage": "binary_compressed", "float_size": "64"}}


@pytest.mark.parametrize("path", [TINY, BCN], ids=lambda p: p.name)
def test_x_blender_x_blender_plays_the_original_file(bpy, tmp_path, path):
    """The reference is always the ORIGINAL file's oracle, at every whole
    frame of every AnimationSet; the re-import's meshes are matched to the
    original's by name or vertex count, their vertices through the written
    file's VertexDuplicationIndices and the welded import's vertices (the
    file's vertices are one where the import welded them: the written file
    has no more than the original)."""
    ref = reference("xfile", [path])
    src = read_xfile(path)
    assert rig.moved(ref, fps_=24.0) > 1e-2          # the reference really moves
    assert bpy.ops.import_scene.xfile(filepath=str(path)) == {"FINISHED"}
    rig.verify_clips(bpy, ref, f"{path.name} import")
    sources = rig.welded_sources(bpy)
    exported = {}
    for label, options in FORMS.items():
        out = tmp_path / f"out_{label}.x"
        assert bpy.ops.export_scene.xfile(filepath=str(out), **options) == {"FINISHED"}
        exported[label] = out
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in exported.values())
    for label, out in exported.items():
        options = FORMS[label]
        assert out.read_bytes()[:16] == (b"xof 0303" + HEADERS[options["storage"]]
                                         + options.get("float_size", "32").zfill(4).encode())
        # our parser's view of the exported file against the original's
        xf = read_xfile(out)
        assert_frames_kept(xf, src)
        got_v, src_v = (sorted(len(m.positions) for m in all_meshes(f)) for f in (xf, src))
        assert len(got_v) == len(src_v) and all(a <= b for a, b in zip(got_v, src_v)), (got_v, src_v)
        want_t, got_t = _set_ticks(src), _set_ticks(xf)
        assert want_t.keys() == got_t.keys()
        for k in want_t:                                    # the sets keep their start and length
            assert np.allclose(got_t[k], want_t[k], atol=1e-6), (k, got_t[k], want_t[k])
        bpy.ops.wm.read_homefile(use_empty=True)
        assert bpy.ops.import_scene.xfile(filepath=str(out)) == {"FINISHED"}
        rig.verify_clips(bpy, ref, f"{path.name} -> {label} ->", written=out, sources=sources)


# ---------------------------------------------------------------------------
# a rig made in Blender

@pytest.mark.parametrize("options", [
    {"storage": "binary_compressed"},
    {"storage": "text", "float_size": "64", "key_type": "MATRIX"},
    {"storage": "binary", "ticks_per_second": 24},
], ids=["bzip-trs", "text64-matrix-every-frame", "binary-24-ticks"])
def test_rig_made_in_blender_round_trips(bpy, tmp_path, options):
    ao, mo, action = rig.build(bpy)
    n_quads = len(mo.data.polygons)
    frames = rig.FRAMES
    want = rig.positions(bpy, mo, frames)
    size = rig.size(want[0])
    assert np.abs(want - want[0]).max() > 0.05 * size       # it does move
    out = tmp_path / "rig.x"
    assert bpy.ops.export_scene.xfile(filepath=str(out), **options) == {"FINISHED"}
    # the scene was not modified
    assert ao.animation_data.action == action and bpy.context.scene.frame_current == frames[-1]
    assert out.read_bytes()[8:12] == HEADERS[options["storage"]]
    xf = read_xfile(out)
    m = next(iter(all_meshes(xf)))
    assert len(m.face_sizes) == n_quads and set(m.face_sizes.tolist()) == {4}
    assert len(m.positions) == len(mo.data.vertices)
    assert {sw.frame_name for sw in m.skin_weights} == set(rig.NAMES)
    frames_of = _frames(xf)
    assert sorted(n for n, (_, holds) in frames_of.items() if not holds) == sorted(rig.NAMES)
    assert frames_of["Bone.1"][0] == "Bone.0" and frames_of["Arm"][0] == "Bone.1"
    assert [s.name for s in xf.animation_sets] == ["Bend"]
    assert xf.float_size == int(options.get("float_size", "32"))
    tps = options.get("ticks_per_second", 4800)
    assert xf.anim_ticks_per_second == tps
    anims = {a.frame_name: a for a in xf.animation_sets[0].animations}
    assert sorted(anims) == sorted(rig.NAMES)
    matrix = options.get("key_type") == "MATRIX"
    # rotation keys (the rig only turns its bones: no position or scale keys)
    assert {k.key_type for a in anims.values() for k in a.keys} == ({4} if matrix else {0})
    # Blender interpolates quaternion keys per component, .X readers by slerp:
    # a key on every frame of the action's range 1..13 (exact at whole frames)
    for n, a in anims.items():
        for k in a.keys:
            assert np.array_equal(k.times, np.arange(1, 14) * tps / 24.0), (n, k.key_type, k.times)
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.import_scene.xfile(filepath=str(out)) == {"FINISHED"}
    arm, meshes = imported(bpy)
    play(arm, "Bend")
    got = rig.positions(bpy, meshes[0], frames)
    err = np.linalg.norm(got - want, axis=2).max()
    print(f"Blender rig -> .X {options}: max error {err:.3g} ({err / size:.3g} of size {size:.3g})")
    assert err <= REL * size
    # the rig comes back with its own bones, no more (a frame written for the
    # skinned mesh must not become a bone: each round trip would add one)
    assert sorted(b.name for b in arm.data.bones) == sorted(rig.NAMES)


# ---------------------------------------------------------------------------
# failures

PREVIOUS = b"precious\n"


def test_failed_export_leaves_the_existing_file_untouched(bpy, tmp_path):
    out = tmp_path / "keep.x"
    out.write_bytes(PREVIOUS)
    with pytest.raises(RuntimeError, match="nothing to export"):
        bpy.ops.export_scene.xfile(filepath=str(out))
    assert out.read_bytes() == PREVIOUS
    # a mesh the writer refuses (a coordinate that is not finite): fails after building
    assert bpy.ops.import_scene.xfile(filepath=str(X / "assimp" / "test_cube_text.x")) == {"FINISHED"}
    _, meshes = imported(bpy)
    me = meshes[0].data
    co = np.empty(3 * len(me.vertices), dtype=np.float32)
    me.vertices.foreach_get("co", co)
    good = co.copy()
    co[0] = np.nan
    me.vertices.foreach_set("co", co)
    for storage in HEADERS:
        with pytest.raises(RuntimeError, match="not (a )?finite"):
            bpy.ops.export_scene.xfile(filepath=str(out), storage=storage)
        assert out.read_bytes() == PREVIOUS
    # into a folder that does not exist
    me.vertices.foreach_set("co", good)
    with pytest.raises(RuntimeError, match="cannot write"):
        bpy.ops.export_scene.xfile(filepath=str(tmp_path / "missing" / "keep.x"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.x"]   # no temporary file left
    me.vertices.foreach_set("co", good)
    me.update()
    assert bpy.ops.export_scene.xfile(filepath=str(out)) == {"FINISHED"}
    assert read_xfile(out).frames and os.path.getsize(out) > 100
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.x"]


def test_export_menu_and_file_handler(bpy):
    assert bpy.ops.export_scene.xfile.get_rna_type().name == "Export DirectX"
    assert bpy.types.IO_FH_xfile.bl_export_operator == "export_scene.xfile"


# ---------------------------------------------------------------------------
# what is exported

def test_export_scope(bpy, tmp_path):
    ao, mo, _ = rig.build(bpy)
    crate = rig.crate(bpy)
    body, box = len(mo.data.vertices), len(crate.data.vertices)

    def written(**kw) -> list[int]:
        out = tmp_path / "scope.x"
        assert bpy.ops.export_scene.xfile(filepath=str(out), **kw) == {"FINISHED"}
        return sorted(len(m.positions) for m in all_meshes(read_xfile(out)))

    for o in bpy.context.view_layer.objects:
        o.select_set(o == ao)
    bpy.context.view_layer.objects.active = ao
    assert written(use_selection=True) == [body]          # the armature brings its mesh, not the crate
    assert written(use_selection=False) == sorted([body, box])
    crate.hide_set(True)
    assert written(use_visible=True) == [body]
    crate.hide_set(False)
    props = bpy.data.collections.new("Props")
    bpy.context.scene.collection.children.link(props)
    bpy.context.scene.collection.objects.unlink(crate)
    props.objects.link(crate)
    assert written(collection="Props") == [box]
    assert read_xfile(tmp_path / "scope.x").animation_sets == []       # no armature in that collection
    vl = bpy.context.view_layer
    vl.active_layer_collection = vl.layer_collection.children["Props"]
    assert written(use_active_collection=True) == [box]
    before = (tmp_path / "scope.x").read_bytes()
    with pytest.raises(RuntimeError, match="No Such Collection"):
        bpy.ops.export_scene.xfile(filepath=str(tmp_path / "scope.x"), collection="No Such Collection")
    assert (tmp_path / "scope.x").read_bytes() == before


# ---------------------------------------------------------------------------
# static meshes

@pytest.mark.parametrize("weld", [False, True], ids=["split", "welded"])
@pytest.mark.parametrize("path", [X / "directx-sdk" / "tiger.x", X / "assimp" / "kwxport_test_cubewithvcolors.x"],
                         ids=lambda p: p.name)
def test_static_mesh_comes_back_as_stored(bpy, tmp_path, path, weld):
    """Winding, n-gons, UVs (v flipped back), normals, vertex colours and
    materials of a static mesh are what the source file stores: its
    vertices as stored when imported split, every corner's when welded
    (the cube's 24 vertices are 8 in Blender, split again at its UV seams)."""
    assert bpy.ops.import_scene.xfile(filepath=str(path), weld=weld) == {"FINISHED"}
    out = tmp_path / "out.x"
    assert bpy.ops.export_scene.xfile(filepath=str(out), float_size="64") == {"FINISHED"}
    assert read_xfile(out).float_size == 64
    src = next(iter(all_meshes(read_xfile(path))))
    got = next(iter(all_meshes(read_xfile(out))))
    assert np.array_equal(got.face_sizes, src.face_sizes)
    if not weld:
        assert np.array_equal(got.face_indices, src.face_indices)
    g, s = got.face_indices, src.face_indices              # each corner's vertex
    assert np.abs(got.positions[g] - src.positions[s]).max() < 1e-5 * np.abs(src.positions).max()
    assert np.abs(got.uvs[g] - src.uvs[s]).max() < 1e-6
    if src.normals is not None:
        sn = src.normals[src.normal_face_indices] if src.normal_face_indices is not None else \
            src.normals[src.face_indices]
        sn = sn / np.linalg.norm(sn, axis=1, keepdims=True)
        gn = got.normals[got.normal_face_indices]
        assert np.abs(gn - sn).max() < 1e-6
    if src.vertex_colors is not None:
        assert np.abs(got.vertex_colors[g, :src.vertex_colors.shape[1]] - src.vertex_colors[s]).max() < 1e-6
    assert np.array_equal(got.material_indices, src.material_indices)
    assert len(got.materials) == len(src.materials)
    for a, b in zip(got.materials, src.materials):
        assert np.abs(a.face_color - b.face_color).max() < 1e-6
        assert abs(a.power - b.power) < 1e-3 * max(1.0, b.power)
        assert np.abs(np.asarray(a.specular) - np.asarray(b.specular)).max() < 1e-6
        assert np.abs(np.asarray(a.emissive) - np.asarray(b.emissive)).max() < 1e-6
        assert a.texture == b.texture
