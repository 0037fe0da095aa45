# SPDX-License-Identifier: GPL-3.0-or-later
"""Weld Vertices: a .X import's vertices that the file
splits but marks as one (VertexDuplicationIndices), or, without that
template, that lie at the same place with the same weights, are one Blender
vertex; everything else looks and plays as before.

Imported through ``bpy.ops`` (the installed extension), default options
(weld on) against ``weld=False`` (the file's vertices as stored). What is
expected comes from the file (its own data, read here), from Blender's mesh
as built, or from other readers (assimp reads the export back), never from
the weld's own code:

* the file's welding: per mesh, one Blender vertex per group of the file's
  vertices the file marks as one (the same VertexDuplicationIndices class,
  position and weights; without the template: position and weights), as
  many connected pieces as the file's faces joined through those groups,
  except the faces welding would collapse or lay on another face (kept
  apart, a few vertices and pieces more at most); no two vertices of one
  group left apart otherwise;
* the look: the same render as with weld off (Workbench, the project's
  renderer), seams exactly where the UVs of an edge's two sides differ,
  no smooth fan of Blender's sharing a corner normal between corners whose
  file normals differ, the file's own normals kept per corner;
* the playback: ``verify`` (the command) passes;
* the way back: an export writes every corner of the file with its
  position, normal, UV and weights (assimp reads both files).
"""
from __future__ import annotations

import functools
from pathlib import Path

import assimp_reading as ar
import numpy as np
import pytest
from blender_checks import ext, imported
from conftest import DATA, run_cli
from engine_checks import reader_meshes

from legacy_skin_io.io.xfile import read_xfile

X = DATA / "x"
BROKEN = {"malformed_skinweights_oob.x", "OV_GetNextToken"}     # refused on purpose (PROVENANCE.md)
#: real files: every corpus file but the crafted ones
REAL = [p for p in sorted(X.rglob("*")) if p.is_file() and p.suffix.lower() == ".x" and p.name not in BROKEN
        and "crafted" not in p.parts]


@functools.lru_cache(maxsize=None)
def _xfile(path: str):
    return read_xfile(path)


def _has_template(path: Path) -> bool:
    return any(m.duplicates is not None for m in reader_meshes(_xfile(str(path))))


TEMPLATE = [p for p in REAL if _has_template(p)]


def _id(p: Path) -> str:
    return p.name


# ---------------------------------------------------------------------------
# the file's own welding, from its data (no code of the weld's)

def _kept_faces(xm) -> list[tuple[int, ...]]:
    """The faces a split import shows: 3 corners or more, no vertex twice,
    not on the same vertices as an earlier face."""
    sizes = np.asarray(xm.face_sizes, dtype=np.int64)
    idx = np.asarray(xm.face_indices, dtype=np.int64).tolist()
    out, seen, at = [], set(), 0
    for k in sizes.tolist():
        f = tuple(idx[at:at + k])
        at += k
        key = tuple(sorted(f))
        if k >= 3 and len(set(f)) == k and key not in seen:
            seen.add(key)
            out.append(f)
    return out


def _groups(xm) -> np.ndarray:
    """(V,) a group number per vertex: vertices of one VertexDuplicationIndices
    class (followed to its original; without the template, one class) at
    the same stored position with the same weights on the same frames."""
    V = len(xm.positions)
    cls = list(range(V)) if xm.duplicates is not None else [0] * V
    if xm.duplicates is not None:
        dup = np.asarray(xm.duplicates).tolist()
        for v in range(V):
            seen, c = set(), v
            while dup[c] != c and c not in seen:
                seen.add(c)
                c = dup[c]
            cls[v] = c
    weights: list[dict] = [{} for _ in range(V)]
    for sw in xm.skin_weights:
        key = (sw.frame_name, np.asarray(sw.matrix_offset).tobytes())
        for v, w in zip(np.asarray(sw.vertex_indices).tolist(), np.asarray(sw.weights).tolist()):
            weights[v][key] = weights[v].get(key, 0.0) + w
    colors = None if xm.vertex_colors is None else np.asarray(xm.vertex_colors).tolist()
    number: dict = {}
    out = np.empty(V, dtype=np.int64)
    for v, p in enumerate(np.asarray(xm.positions, dtype=np.float64).tolist()):
        key = (cls[v], tuple(x + 0.0 for x in p), tuple(sorted(weights[v].items())),
               None if colors is None else tuple(colors[v]))
        out[v] = number.setdefault(key, len(number))
    return out


def _collapsing(faces: list[tuple[int, ...]], group: np.ndarray) -> list[tuple[int, ...]]:
    """The faces that welding ``group`` would make collapse (two corners one
    vertex) or lie on the vertices of an earlier face."""
    out, seen = [], set()
    for f in faces:
        g = tuple(int(group[v]) for v in f)
        key = tuple(sorted(g))
        if len(set(g)) < len(g) or key in seen:
            out.append(f)
        else:
            seen.add(key)
    return out


def _pieces(n: int, edges: np.ndarray) -> int:
    """Connected pieces of ``n`` points joined by ``edges`` ((E, 2))."""
    label = np.arange(n)
    edges = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    while len(edges):
        low = np.minimum(label[edges[:, 0]], label[edges[:, 1]])
        before = label.copy()
        np.minimum.at(label, edges[:, 0], low)
        np.minimum.at(label, edges[:, 1], low)
        label = label[label]
        if np.array_equal(label, before):
            break
    return len(np.unique(label))


def _face_edges(faces) -> np.ndarray:
    return np.array([(f[i], f[(i + 1) % len(f)]) for f in faces for i in range(len(f))], dtype=np.int64)


# ---------------------------------------------------------------------------
# Blender's side

def _import(bpy, path: Path, **options):
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.import_scene.xfile(filepath=str(path), **options) == {"FINISHED"}
    return imported(bpy)


def _arr(coll, attr: str, width: int, dtype=np.float32) -> np.ndarray:
    a = np.empty(len(coll) * width, dtype=dtype)
    coll.foreach_get(attr, a)
    return a.reshape(-1, width) if width > 1 else a


def _blender_of(me, n_file: int) -> np.ndarray:
    """The Blender vertex of each of the file mesh's vertices, as the import stored it."""
    vertex = ext("operators.metadata").load_weld(me, n_file)
    assert vertex is not None, f"{me.name}: no stored vertex map"
    return vertex


def _end_values(me, values: np.ndarray) -> dict:
    """{(edge, vertex): the set of ``values`` rows of the corners at that end of the edge}."""
    loops = me.loops
    vert = _arr(loops, "vertex_index", 1, np.int32).tolist()
    edge = _arr(loops, "edge_index", 1, np.int32).tolist()
    starts = _arr(me.polygons, "loop_start", 1, np.int32).tolist()
    sizes = _arr(me.polygons, "loop_total", 1, np.int32).tolist()
    rows = [tuple(r) for r in np.asarray(values).tolist()]
    out: dict = {}
    for s, k in zip(starts, sizes):
        for i in range(s, s + k):
            j = s + (i - s + 1) % k
            out.setdefault((edge[i], vert[i]), set()).add(rows[i])
            out.setdefault((edge[i], vert[j]), set()).add(rows[j])
    return out


# ---------------------------------------------------------------------------
# the file's welding: vertices and pieces

@pytest.mark.parametrize("path", TEMPLATE, ids=_id)
def test_vertices_and_pieces_as_the_file_welds(bpy, path):
    """Per mesh: as many vertices as the file's VertexDuplicationIndices
    groups and as many pieces as its faces make through them, up to the
    faces that welding would collapse or lay on another (their vertices
    kept apart: a few more, never fewer); weld off: the file's vertices and
    corners as stored, no seam."""
    xms = reader_meshes(_xfile(str(path)))
    _, on = _import(bpy, path)
    counts = []
    for i, obj in on.items():
        xm = xms[i]
        me = obj.data
        group = _groups(xm)
        faces = _kept_faces(xm)
        apart = _collapsing(faces, group)
        if xm.duplicates is not None:       # the file's own classes are the groups (same places, same weights)
            assert len(np.unique(group)) == len(np.unique(_classes(xm))), obj.name
        n_groups = len(np.unique(group))
        W = len(me.vertices)
        bound = sum(len(f) for f in apart)
        assert n_groups <= W <= n_groups + bound, (obj.name, W, n_groups, bound)
        file_edges = _face_edges(faces)
        joined = np.concatenate([file_edges.reshape(-1, 2),
                                 np.stack([np.arange(len(group)), np.unique(group, return_index=True)[1][group]],
                                          axis=1)])
        want = _pieces(len(group), joined)
        got = _pieces(W, _arr(me.edges, "vertices", 2, np.int32))
        assert want <= got <= want + len(apart), (obj.name, got, want, len(apart))
        if not apart:
            assert (W, got) == (n_groups, want), obj.name
        counts.append((obj.name, len(xm.positions), W, n_groups, got, want, len(apart)))
    print(path.name, counts)
    _, off = _import(bpy, path, weld=False)
    for i, obj in off.items():
        me, xm = obj.data, xms[i]
        assert len(me.vertices) == len(xm.positions), obj.name
        corner = _arr(me.loops, "vertex_index", 1, np.int32).tolist()
        sizes = _arr(me.polygons, "loop_total", 1, np.int32).tolist()
        starts = np.cumsum([0] + sizes[:-1]).tolist()
        got = [sorted(corner[s:s + k]) for s, k in zip(starts, sizes)]     # (the winding as Blender shows it)
        assert got == [sorted(f) for f in _kept_faces(xm)], obj.name
        assert not _arr(me.edges, "use_seam", 1, bool).any(), obj.name
        assert ext("operators.metadata").load_weld(me) is None


def _classes(xm) -> np.ndarray:
    dup = np.asarray(xm.duplicates, dtype=np.int64)
    out = dup.copy()
    for _ in range(64):
        out = dup[out]
    return out


@pytest.mark.parametrize("path", REAL, ids=_id)
def test_no_vertex_of_a_group_left_apart(bpy, path):
    """Every group of the file's vertices (:func:`_groups`: the file's own
    classes where it has VertexDuplicationIndices; else every vertex at one
    place with the same weights) is one Blender vertex, but for the vertices
    of faces welding would collapse or lay on another; vertices of
    different groups are never one."""
    xms = reader_meshes(_xfile(str(path)))
    _, on = _import(bpy, path)
    left = 0
    for i, obj in on.items():
        xm = xms[i]
        group = _groups(xm)
        vertex = ext("operators.metadata").load_weld(obj.data, len(group))
        if vertex is None:          # nothing welded: no two vertices of the mesh are one group
            assert len(np.unique(group)) == len(group), obj.name
            continue
        pairs = np.unique(np.stack([group, vertex], axis=1), axis=0)
        assert len(np.unique(pairs[:, 1])) == len(pairs), f"{obj.name}: vertices of two groups made one"
        apart_vertices = {v for f in _collapsing(_kept_faces(xm), group) for v in f}
        extra = len(pairs) - len(np.unique(group))
        split = np.flatnonzero(np.bincount(pairs[:, 0], minlength=len(np.unique(group))) > 1)
        members = np.flatnonzero(np.isin(group, split))
        # every group split in Blender holds a vertex of a face kept apart
        assert all(bool(apart_vertices & set(members[group[members] == g].tolist())) for g in split.tolist()), \
            obj.name
        left += extra
    print(path.name, "vertices left apart by faces that would collapse or repeat:", left)


# ---------------------------------------------------------------------------
# the look

def _render(bpy, path: Path, out: Path, **options) -> np.ndarray:
    _import(bpy, path, **options)
    ext("operators.render").render_poses(bpy.context, out, None, [bpy.context.scene.frame_current], n_poses=1,
                                         size=(200, 200), engine="BLENDER_WORKBENCH")
    img = bpy.data.images.load(str(out))
    try:
        px = np.empty(img.size[0] * img.size[1] * 4, dtype=np.float32)
        img.pixels.foreach_get(px)
    finally:
        bpy.data.images.remove(img)
    return px.reshape(-1, 4)[:, :3]


@pytest.mark.parametrize("path", [p for p in REAL if any(len(m.face_sizes) for m in reader_meshes(_xfile(str(p))))],
                         ids=_id)
def test_same_render_as_split(bpy, path, tmp_path):
    """The welded import renders as the split one (Workbench, studio light
    on the corner normals): the pixels differ by less than 1% on average
    and fewer than 1% of them by more than 8/255."""
    a = _render(bpy, path, tmp_path / "off.png", weld=False)
    b = _render(bpy, path, tmp_path / "on.png")
    d = np.abs(a - b).max(axis=1)
    mean, many = float(np.abs(a - b).mean()), float((d > 8 / 255).mean())
    print(f"{path.name}: mean pixel difference {mean:.2e}, {100 * many:.3f}% of pixels over 8/255")
    assert mean < 0.01 and many < 0.01


@pytest.mark.parametrize("path", TEMPLATE + [X / "assimp" / "Testwuson.X", X / "directx-sdk" / "bat.x",
                                  X / "real" / "blitz-research__blitz3d" / "mother.x"], ids=_id)
def test_seams_and_normals(bpy, path):
    """Seams exactly on the edges whose two sides' UVs differ at an end; no
    smooth edge between corners whose file normals differ (Blender would
    give them one normal); the file's normals kept per corner as the split
    import keeps them (exactly: export writes them), and Blender's shading
    normals within its storage's precision of them (custom normals are 16-bit
    angles in each smooth fan's space: about 1e-4, up to 1e-2 where a fan is
    narrow, split or welded alike). A mesh without normals (mother.x's
    body) is sharp exactly where the file split its vertices, so Blender
    shades it as the split mesh."""
    md = ext("operators.metadata")
    xms = reader_meshes(_xfile(str(path)))
    _, off = _import(bpy, path, weld=False)
    split = {i: (_arr(o.data.attributes[md.NORMAL_ATTR].data, "vector", 3) if md.NORMAL_ATTR in o.data.attributes
                 else None, _arr(o.data.corner_normals, "vector", 3)) for i, o in off.items()}
    _, on = _import(bpy, path)
    for i, obj in on.items():
        me = obj.data
        if not len(me.loops):
            continue
        seams = _arr(me.edges, "use_seam", 1, bool)
        if me.uv_layers.active is not None:
            uv = _arr(me.uv_layers.active.uv, "vector", 2)
            differ = {e for (e, _), s in _end_values(me, uv).items() if len(s) > 1}
            assert set(np.flatnonzero(seams).tolist()) == differ, obj.name
        else:
            assert not seams.any()
        file_n, split_shown = split[i]
        if file_n is None:
            sharp = _arr(me.edges, "use_edge_sharp", 1, bool)
            if ext("operators.metadata").load_weld(me) is not None:
                apart = {e for (e, _), s in _end_values(me, _file_corners(me, xms[i])).items() if len(s) > 1}
                assert set(np.flatnonzero(sharp).tolist()) == apart, obj.name
            continue
        n = _arr(me.attributes[md.NORMAL_ATTR].data, "vector", 3)
        assert np.array_equal(n, file_n), f"{obj.name}: the file's normals per corner"
        sharp = _arr(me.edges, "use_edge_sharp", 1, bool)
        for (e, _), s in _end_values(me, n).items():
            if len(s) > 1 and not sharp[e]:
                spread = np.ptp(np.array(sorted(s)), axis=0).max()
                assert spread <= 1e-6, f"{obj.name}: edge {e} smooth between normals {spread:.2e} apart"
        # Blender's shading normals against the file's, where the import sets them as they are (it turns some:
        # a mesh re-expressed in the armature's bind pose, normals facing away from their face)
        shown = _arr(me.corner_normals, "vector", 3)
        as_is = np.linalg.norm(split_shown - file_n, axis=1) < 1e-2
        d_on, d_off = (np.linalg.norm(x - file_n, axis=1)[as_is] for x in (shown, split_shown))
        if len(d_on):
            print(f"{path.name} {obj.name}: shading normals from the file's: welded p99 "
                  f"{np.quantile(d_on, 0.99):.1e} max {d_on.max():.1e}, split p99 {np.quantile(d_off, 0.99):.1e} "
                  f"max {d_off.max():.1e}")
            assert np.quantile(d_on, 0.99) < 1e-3 and d_on.max() < 3e-2


def _file_corners(me, xm) -> np.ndarray:
    """(L, 1) the file's vertex of each of a welded Blender mesh's corners:
    its faces are the file's kept faces in order, each corner the file
    vertex of the face that became its Blender vertex."""
    vertex = _blender_of(me, len(xm.positions))
    corner = _arr(me.loops, "vertex_index", 1, np.int32).tolist()
    out = []
    at = 0
    for f in _kept_faces(xm):
        own = {int(vertex[v]): v for v in f}
        out += [own[b] for b in corner[at:at + len(f)]]
        at += len(f)
    return np.array(out, dtype=np.float64)[:, None]


# ---------------------------------------------------------------------------
# playback and the way back

@pytest.mark.parametrize("path", TEMPLATE, ids=_id)
def test_verify_passes(path):
    """The ``verify`` command (every frame of every animation, every vertex
    of the file through its Blender vertex) passes with the default weld,
    as it does with ``--no-weld``."""
    for flags in ((), ("--no-weld",)):
        r = run_cli("verify", path, *flags, timeout=900)
        assert r.returncode == 0 and "PASS" in r.stdout, (flags, r.stdout[-800:], r.stderr[-800:])
        print(path.name, *flags, r.stdout.strip().splitlines()[-1])


def _corners(mesh: ar.AiMesh, size: float, names: list[str]) -> list[np.ndarray]:
    """Each face of an assimp mesh as rows of its corners: position / size,
    unit normal, UV (each set), and the weight of each bone of ``names``
    (0 where the mesh has no such bone)."""
    V = len(mesh.positions)
    w = np.zeros((V, len(names)))
    for b in mesh.bones:
        if b.name in names:
            np.add.at(w[:, names.index(b.name)], b.vertex, b.weight)
    n = np.zeros((V, 3)) if mesh.normals is None else mesh.normals
    n = n / np.maximum(np.linalg.norm(n, axis=1, keepdims=True), 1e-30)
    rows = np.concatenate([mesh.positions / size, n] + [u[:, :2] for u in mesh.uvs] + [w], axis=1)
    return [rows[f] for f in mesh.faces]


@pytest.mark.parametrize("path", TEMPLATE, ids=_id)
def test_round_trip_keeps_every_corner(bpy, path, tmp_path):
    """Import (welded) and export: assimp reads every face of the file back
    from the written file, in order, each corner with its position, normal,
    UVs and bone weights (within float32 text), but the faces the import
    skips (degenerate, or on the vertices of another: counted from the
    file)."""
    _import(bpy, path)
    out = tmp_path / "back.x"
    assert bpy.ops.export_scene.xfile(filepath=str(out)) == {"FINISHED"}
    a, b = ar.assimp_scene(path, tmp_path), ar.assimp_scene(out, tmp_path)
    assert len(a.meshes) == len(b.meshes)
    size = ar.size([m.positions for m in a.meshes])
    skipped = 0
    for ma, mb in zip(a.meshes, b.meshes):
        # the bones of frames the file has (weights naming no frame move nothing: the import reports and skips
        # them, anim_test.x's joint3 and joint4); a bone weighing nothing is not written
        nodes = {n.name for n in a.nodes}
        names = sorted({bb.name for bb in ma.bones + mb.bones} & nodes)
        fa, fb = _corners(ma, size, names), _corners(mb, size, names)
        k = 0
        for f in fa:            # the written faces are the file's, in order, the skipped ones left out
            if k < len(fb) and f.shape == fb[k].shape and np.abs(f - fb[k]).max() <= 2e-6:
                k += 1
            else:
                skipped += 1
        assert k == len(fb), f"written face {k} is none of the file's: {fb[k] if k < len(fb) else ''}"
    dropped = sum(len(xm.face_sizes) - len(_kept_faces(xm)) for xm in reader_meshes(_xfile(str(path))))
    assert skipped == dropped
    print(path.name, f"{sum(len(m.faces) for m in b.meshes)} faces written back corner for corner, {skipped} skipped")


# ---------------------------------------------------------------------------
# faces kept apart

DOUBLE_SIDED = """xof 0303txt 0032
Frame Root {{
 FrameTransformMatrix {{ 1.0,0.0,0.0,0.0,0.0,1.0,0.0,0.0,0.0,0.0,1.0,0.0,0.0,0.0,0.0,1.0;; }}
 Mesh Leaf {{
  10;
  0.0;0.0;0.0;, 1.0;0.0;0.0;, 1.0;1.0;0.0;, 0.0;1.0;0.0;,
  0.0;0.0;0.0;, 1.0;0.0;0.0;, 1.0;1.0;0.0;, 0.0;1.0;0.0;,
  0.5;0.5;0.0;, 0.5;0.5;0.0;;
  {faces};
  {face_list};
  MeshNormals {{
   2; 0.0;0.0;1.0;, 0.0;0.0;-1.0;;
   {faces};
   {normal_list};
  }}
  MeshTextureCoords {{
   10; 0.0;0.0;, 1.0;0.0;, 1.0;1.0;, 0.0;1.0;, 0.0;0.0;, 1.0;0.0;, 1.0;1.0;, 0.0;1.0;, 0.5;0.5;, 0.5;0.5;;
  }}
  {dup}
 }}
}}
"""


def _leaf(tmp_path: Path, name: str, dup: bool, sliver: bool = False) -> Path:
    """A square leaf, its front on vertices 0-3 and its back (the other
    winding) on copies 4-7, which ``dup`` marks as the same vertices;
    ``sliver``: a third triangle with two corners on one place (vertices 8
    and 9, the same weights: none)."""
    faces = ["4;0,1,2,3;", "4;7,6,5,4;"]
    normals = ["4;0,0,0,0;", "4;1,1,1,1;"]
    if sliver:
        faces.append("3;1,8,9;")
        normals.append("3;0,0,0;")
    text = DOUBLE_SIDED.format(faces=len(faces), face_list=",".join(faces), normal_list=",".join(normals),
                               dup="VertexDuplicationIndices { 10; 8; 0,1,2,3,0,1,2,3,8,9; }" if dup else "")
    p = tmp_path / name
    p.write_text(text)
    return p


@pytest.mark.parametrize("dup", [True, False], ids=["template", "positions"])
def test_double_sided_faces_keep_their_vertices(bpy, tmp_path, dup):
    """A double-sided leaf (its back on copies of its front's vertices,
    marked as one or merely at the same places) stays two faces on vertices
    of their own: welding would lay the back on the front's vertices, which
    Blender would show as one face; a face that welding would collapse
    (two corners at one place) keeps its own vertices too. Both render as
    split, and an export writes every face back."""
    path = _leaf(tmp_path, "leaf.x", dup, sliver=not dup)
    _, on = _import(bpy, path)
    me = on[0].data
    n_faces = 2 if dup else 3
    assert len(me.polygons) == n_faces
    sizes = _arr(me.polygons, "loop_total", 1, np.int32)
    corner = _arr(me.loops, "vertex_index", 1, np.int32)
    rows = {tuple(sorted(corner[s:s + k].tolist())) for s, k in zip(np.cumsum(sizes) - sizes, sizes)}
    assert len(rows) == n_faces and all(len(r) == len(set(r)) for r in rows)
    assert len(me.vertices) == 10
    out = tmp_path / "back.x"
    assert bpy.ops.export_scene.xfile(filepath=str(out)) == {"FINISHED"}
    back = reader_meshes(read_xfile(out))[0]
    assert len(back.face_sizes) == n_faces


def test_welded_file_edits_as_one_piece(bpy, tmp_path):
    """A leaf's front split at a UV seam (a file of two quads on six
    vertices, two of them copies marked as one; no normals) comes in as one
    piece with a seam between the quads, and sharp there (Blender shades
    it as the split file)."""
    text = """xof 0303txt 0032
Mesh Strip {
 8;
 0.0;0.0;0.0;, 1.0;0.0;0.0;, 1.0;1.0;0.0;, 0.0;1.0;0.0;, 1.0;0.0;0.0;, 2.0;0.0;0.0;, 2.0;1.0;0.0;, 1.0;1.0;0.0;;
 2; 4;0,1,2,3;, 4;4,5,6,7;;
 MeshTextureCoords { 8; 0.0;0.0;, 0.5;0.0;, 0.5;1.0;, 0.0;1.0;, 0.6;0.0;, 1.0;0.0;, 1.0;1.0;, 0.6;1.0;; }
 VertexDuplicationIndices { 8; 6; 0,1,2,3,1,5,6,2; }
}
"""
    p = tmp_path / "strip.x"
    p.write_text(text)
    _, on = _import(bpy, p)
    me = on[0].data
    assert len(me.vertices) == 6
    assert _pieces(6, _arr(me.edges, "vertices", 2, np.int32)) == 1
    ev = _arr(me.edges, "vertices", 2, np.int32)
    seams = _arr(me.edges, "use_seam", 1, bool)
    assert [sorted(e) for e in ev[seams].tolist()] == [sorted(_blender_of(me, 8)[[1, 2]].tolist())]
    assert np.array_equal(_arr(me.edges, "use_edge_sharp", 1, bool), seams)
    _, off = _import(bpy, p, weld=False)
    assert len(off[0].data.vertices) == 8
