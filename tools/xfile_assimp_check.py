# SPDX-License-Identifier: GPL-3.0-or-later
"""Development check (not a test): our .X import against assimp's reading.

For every .X file of the corpus, ``assimp export FILE out.glb`` is imported
with Blender's glTF importer and the world-space vertices of all meshes are
compared with ours, at rest and at several times of every AnimationSet, by a
symmetric nearest-neighbour distance over the point sets (assimp splits
vertices per corner, so vertex orders differ). Passing: within 1e-3 of the
model size.

    python3.11 tools/run.py py tools/xfile_assimp_check.py [FILES...]

(``assimp`` comes with the pinned environment: cmeel-assimp in requirements.txt
puts it beside the environment's python, where it is looked up first.)

Like with like
--------------
* **rest** is the FrameTransformMatrix hierarchy on both sides: ours imported
  without animations; assimp's as a copy of its .glb with the ``animations``
  removed. (Blender's glTF importer, given animations, leaves the pose of the
  first animation's first frame in the pose bones, not the node transforms.)
* **set @ frame**: the same time in seconds (scene frames at the scene's fps).
  On the glTF side every animated object gets the action *and slot* of the
  NLA track named after the set (the importer makes one action per glTF
  animation with one slot per animated object: the armature and the skinned
  meshes' nodes; the first suitable slot is usually the wrong object's), and
  every pose bone / object starts from the static pose first, so channels a
  set does not animate show the node transforms, as in glTF (and in the file).
* Files without ``AnimTicksPerSecond``: assimp keeps 0 ticks per second and
  its glTF exporter writes key times tick / 0 (NaN, inf). assimp is given a
  copy with ``AnimTicksPerSecond 4800`` (the value our importer assumes)
  inserted before the first object; nothing else changes.
* A crash of ``assimp export`` is reported as such (no comparison). anim_test.x:
  ``assimp info`` and an .obj export read it; the glTF2 export segfaults. Its
  mesh is skinned to joint1..joint4 but only joint1/joint2 exist as frames,
  and assimp's glTF2 ``ExportSkin`` dereferences the node of every bone.
  ship.x: assimp 6.0.5's glTF2 export crashes writing its animation
  (``glTF2::Write(..., Animation&, ...)``; assimp 5.2 exported it). Through
  cmeel's ``bin/assimp`` launcher a crash by signal N shows as exit 256 - N.

Known differences of assimp's reading (explained in the last column)
--------------------------------------------------------------------
A probe over the tolerance is checked once more against the reference, the
scene ``io/xfile/adapter.read_scene`` makes of the file evaluated by
``scene.evaluate`` (core/ only, no Blender), with assimp's documented
behaviour applied; when that agrees, the verdict says which behaviour
explains the difference:

* ``FilterHierarchy``: assimp's X parser folds an unnamed child frame that
  holds meshes into its parent when the parent has no meshes and no other
  child (node matrix = parent @ child). An AnimationSet that animates the
  parent then replaces the folded matrix, dropping the child's
  FrameTransformMatrix (tiny_4anim.x: the Bip01_Footsteps mesh loses its
  1.51424 scale).
* ``glTF 4 weights``: assimp's glTF2 ``ExportSkin`` keeps at most 4
  influences per vertex: since assimp 6.0 (the pinned 6.0.5) its four largest
  weights; no renormalisation (bat.x: up to 6 influences). (assimp 5.2 kept
  the first four in bone order, then each further one overwrote the first
  slot holding a smaller weight, skipping influences once the four summed to
  >= 1.)
"""
from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "data" / "x"
BROKEN = {"malformed_skinweights_oob.x", "OV_GetNextToken"}
TOLERANCE = 1e-3


def _bpy():
    import bpy

    from legacy_skin_io import register

    if not hasattr(bpy.types, "IMPORT_SCENE_OT_xfile"):
        register()
    return bpy


def world_points(bpy, objs) -> np.ndarray:
    dg = bpy.context.evaluated_depsgraph_get()
    out = []
    for o in objs:
        ev = o.evaluated_get(dg)
        me = ev.data
        co = np.empty(3 * len(me.vertices), dtype=np.float32)
        me.vertices.foreach_get("co", co)
        m = np.array(ev.matrix_world)
        out.append(co.reshape(-1, 3).astype(np.float64) @ m[:3, :3].T + m[:3, 3])
    return np.concatenate(out) if out else np.zeros((0, 3))


def nn_distance(a: np.ndarray, b: np.ndarray) -> float:
    """Symmetric nearest-neighbour (Hausdorff) distance between point sets
    (inf when either side has non-finite points)."""
    from mathutils.kdtree import KDTree

    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        return float("inf")

    def one_way(src, dst):
        tree = KDTree(len(dst))
        for i, p in enumerate(dst):
            tree.insert(p, i)
        tree.balance()
        return max((tree.find(p)[2] for p in src), default=0.0)

    if len(a) == 0 or len(b) == 0:
        return float("inf") if len(a) != len(b) else 0.0
    return max(one_way(a, b), one_way(b, a))


def _meshes(bpy):
    """Mesh objects of the scene, leaving out bone display shapes (the glTF importer adds some)."""
    shapes = {pb.custom_shape.name for o in bpy.context.scene.objects if o.type == "ARMATURE"
              for pb in o.pose.bones if pb.custom_shape is not None}
    return [o for o in bpy.context.scene.objects if o.type == "MESH" and o.name not in shapes]


# ---------------------------------------------------------------------------
# assimp side

def _ticks_patched(path: Path, tmp: Path, ticks: int) -> Path:
    """A copy of ``path`` with an ``AnimTicksPerSecond`` object before the first
    object (compressed files are written uncompressed)."""
    from legacy_skin_io.io.xfile import mszip

    data = path.read_bytes()
    header, body = data[:16], data[16:]
    kind = header[8:12]
    if kind in (b"tzip", b"bzip"):
        body = mszip.decompress(data, path)
        kind = b"txt " if kind == b"tzip" else b"bin "
        header = header[:8] + kind + header[12:]
    if kind == b"txt ":
        obj = f"\nAnimTicksPerSecond {{\n {ticks};\n}}\n".encode()
    else:  # NAME, '{', INTEGER_LIST(1), '}'
        name = b"AnimTicksPerSecond"
        obj = (struct.pack("<HI", 1, len(name)) + name + struct.pack("<H", 10)
               + struct.pack("<HII", 6, 1, ticks) + struct.pack("<H", 11))
    out = tmp / (path.stem + f"_tps{ticks}.x")
    out.write_bytes(header + obj + body)
    return out


def _strip_animations(glb: Path, out: Path) -> Path:
    """The same .glb without its ``animations`` (the static pose = node transforms)."""
    data = glb.read_bytes()
    n = struct.unpack_from("<I", data, 12)[0]
    doc = json.loads(data[20:20 + n])
    doc.pop("animations", None)
    js = json.dumps(doc).encode()
    js += b" " * (-len(js) % 4)
    rest = data[20 + n:]
    out.write_bytes(data[:8] + struct.pack("<I", 20 + len(js) + len(rest)) + struct.pack("<I", len(js))
                    + b"JSON" + js + rest)
    return out


def _assimp() -> str | None:
    """The ``assimp`` command, the environment's (beside its python) first."""
    return shutil.which("assimp", path=os.pathsep.join(filter(None, [str(Path(sys.executable).parent),
                                                                     os.environ.get("PATH")])))


def _signal(returncode: int) -> int:
    """The signal that ended assimp (0: none). cmeel's ``bin/assimp`` is a
    Python launcher that exits with its child's return code, -N for signal N,
    which becomes the exit status 256 - N (assimp's own codes are small)."""
    return -returncode if returncode < 0 else 256 - returncode if returncode > 128 else 0


def assimp_glb(path: Path, tmp: Path, ref: "Reference") -> tuple[Path | None, str]:
    """``assimp export`` to .glb; (None, reason) when assimp fails."""
    src, note = path, ""
    if ref.scene.clips and not ref.xfile.anim_ticks_per_second:
        tps = int(ref.ticks_per_second)
        src = _ticks_patched(path, tmp, tps)
        note = f"AnimTicksPerSecond {tps} given to assimp"
    glb = tmp / (path.stem + ".glb")
    r = subprocess.run([_assimp() or "assimp", "export", str(src), str(glb)], capture_output=True, text=True)
    if _signal(r.returncode):
        return None, f"assimp crashes (signal {_signal(r.returncode)})"
    if r.returncode != 0 or not glb.exists():
        last = (r.stdout + r.stderr).strip().splitlines()[-1:] or [""]
        return None, f"assimp fails (exit {r.returncode}): {last[0][:60]}"
    return glb, note


def _static_pose(bpy) -> dict:
    """Object and pose-bone matrix_basis of the scene as imported without animations."""
    pose = {}
    for o in bpy.context.scene.objects:
        bones = {pb.name: pb.matrix_basis.copy() for pb in o.pose.bones} if o.type == "ARMATURE" else {}
        pose[o.name] = (o.matrix_basis.copy(), bones)
    return pose


def _gltf_pose(bpy, static: dict, set_name: str | None) -> list[str]:
    """Static pose, then every animated object on the action/slot of its NLA
    track named ``set_name`` (glTF animation = AnimationSet). Returns the
    names of objects that got an action."""
    used = []
    for o in bpy.context.scene.objects:
        ad = o.animation_data
        if ad is not None:
            for tr in ad.nla_tracks:
                tr.mute = True
            ad.action = None
        basis, bones = static.get(o.name, (None, {}))
        if basis is not None:
            o.matrix_basis = basis
        for name, m in bones.items():
            o.pose.bones[name].matrix_basis = m
        if ad is None or set_name is None:
            continue
        tr = ad.nla_tracks.get(set_name)
        if tr is None or not len(tr.strips):
            continue
        st = tr.strips[0]
        ad.action = st.action
        ad.action_slot = st.action_slot
        used.append(o.name)
    return used


def gltf_points(bpy, glb: Path, tmp: Path, probes) -> dict:
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.import_scene.gltf(filepath=str(_strip_animations(glb, tmp / "static.glb"))) == {"FINISHED"}
    bpy.context.scene.frame_set(0)
    out = {(None, None): world_points(bpy, _meshes(bpy))}
    static = _static_pose(bpy)
    if all(name is None for name, _ in probes):
        return out
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.import_scene.gltf(filepath=str(glb)) == {"FINISHED"}
    scene = bpy.context.scene
    for name, f in probes:
        if name is None:
            continue
        if not _gltf_pose(bpy, static, name):
            out[(name, f)] = None  # no glTF animation of that name
            continue
        whole = int(np.floor(f))
        scene.frame_set(whole, subframe=float(f - whole))
        out[(name, f)] = world_points(bpy, _meshes(bpy))
    return out


# ---------------------------------------------------------------------------
# the reference: the file's scene (io/xfile/adapter) evaluated by scene.evaluate,
# with assimp's documented behaviour applied

class Reference:
    """A .X file as the scene our reader makes of it (Blender space, default
    axes: what the glTF importer shows of assimp's reading too), with the
    parsed file's frames (joint ``i`` is frame ``i``)."""

    def __init__(self, path: Path):
        from legacy_skin_io.io.xfile import adapter, read_xfile
        from legacy_skin_io.scene import evaluate

        self.xfile = read_xfile(path)
        self.scene = adapter.scene_from_xfile(self.xfile, path=str(path))
        self.frames = list(self.xfile.all_frames())
        self.meshes = list(self.xfile.meshes) + [m for f in self.frames for m in f.meshes]   # scene.meshes' order
        self.ticks_per_second = float(self.xfile.anim_ticks_per_second or adapter.DEFAULT_TICKS_PER_SECOND)
        self.size = evaluate.size(self.scene)

    @property
    def parents(self) -> np.ndarray:
        sk = self.scene.skeleton
        return sk.parents if sk is not None else np.zeros(0, dtype=np.int64)

    def clip(self, name: str):
        return next(c for c in self.scene.clips if c.name == name)


def filter_hierarchy_folds(ref: Reference) -> dict[int, int]:
    """{unnamed child frame: parent frame} that assimp's FilterHierarchy folds."""
    kids: dict[int, list[int]] = {}
    for j, p in enumerate(ref.parents):
        if p >= 0:
            kids.setdefault(int(p), []).append(j)
    out = {}
    for p, ch in kids.items():
        c = ch[0]
        if (len(ch) == 1 and not ref.frames[p].meshes and not ref.frames[c].name
                and ref.frames[c].meshes):
            out[c] = p
    return out


def assimp_gltf_influences(ref: Reference, mi: int):
    """The influences assimp's glTF2 ExportSkin writes (see the module notes);
    None when every vertex has at most 4 (nothing dropped)."""
    from legacy_skin_io.core import skinning

    mesh = ref.scene.meshes[mi]
    sk = mesh.skin
    n = len(mesh.positions)
    if sk is None or not len(sk.vertex) or np.bincount(sk.vertex, minlength=n).max() <= 4:
        return None
    w = sk.weight.astype(np.float32)
    # each vertex's influences by weight, largest first (ties in the skin's order: assimp's std::sort may
    # order them either way), the first four kept
    order = np.lexsort((np.arange(len(w)), -w, sk.vertex))
    first = np.searchsorted(sk.vertex[order], sk.vertex[order])
    keep = order[np.arange(len(order)) - first < 4]
    return skinning.Influences.from_sparse(n, sk.vertex[keep], sk.joint[keep], w[keep].astype(np.float64))


def assimp_model_points(ref: Reference, clip, frame: float | None, fps: float):
    """The reference's world positions (Blender space) at a scene frame, with
    assimp's known behaviour applied; (points, names of the behaviours that
    changed anything)."""
    from legacy_skin_io.scene import evaluate

    scene = ref.scene
    sk = scene.skeleton
    applied = []
    if sk is None:
        return np.concatenate(evaluate.evaluate(scene, None, [0.0], fps)), applied
    default = sk.world()
    if clip is None:
        world = default
    else:
        local = clip.sample_local(sk.local, evaluate.clip_times(clip, [frame], fps))[0]
        folds = {c: p for c, p in filter_hierarchy_folds(ref).items() if clip.animated[p]}
        if folds:
            local[list(folds)] = np.eye(4)
            applied.append("FilterHierarchy")
        world = sk.world(local[None])[0]
    pts = []
    for mi, m in enumerate(scene.meshes):
        infl = assimp_gltf_influences(ref, mi)
        if infl is not None and "glTF 4 weights" not in applied:
            applied.append("glTF 4 weights")
        pts.append(evaluate.mesh_positions(scene, m, world, default, infl))
    return (np.concatenate(pts) if pts else np.zeros((0, 3))), applied


# ---------------------------------------------------------------------------
# our side

def our_points(bpy, path: Path, probes) -> dict:
    from legacy_skin_io.operators import fcurves

    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.import_scene.xfile(filepath=str(path), import_animations=False) == {"FINISHED"}
    bpy.context.scene.frame_set(0)
    out = {(None, None): world_points(bpy, _meshes(bpy))}
    if all(name is None for name, _ in probes):
        return out
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.import_scene.xfile(filepath=str(path)) == {"FINISHED"}
    scene = bpy.context.scene
    arm = next(o for o in scene.objects if o.type == "ARMATURE")
    for name, f in probes:
        if name is None:
            continue
        st = arm.animation_data.nla_tracks[name].strips[0]
        fcurves.assign_action(arm, st.action, st.action_slot)
        whole = int(np.floor(f))
        scene.frame_set(whole, subframe=float(f - whole))
        out[(name, f)] = world_points(bpy, _meshes(bpy))
    return out


# ---------------------------------------------------------------------------

def check(bpy, path: Path, tmp: Path, n_times: int = 4):
    ref = Reference(path)
    glb, note = assimp_glb(path, tmp, ref)
    if glb is None:
        names = {f.name for f in ref.frames}
        missing = sorted({sw.frame_name for m in ref.meshes for sw in m.skin_weights
                          if sw.frame_name not in names})
        if missing:  # assimp's glTF2 ExportSkin looks every bone up as a node
            note += f"; SkinWeights name missing frames: {', '.join(missing)}"
        return [(path.name, "-", "-", float("nan"), note)]
    fps = bpy.context.scene.render.fps / bpy.context.scene.render.fps_base
    probes = [(None, None)]
    for clip in ref.scene.clips:
        f1 = float(clip.to_frames(clip.end, fps))
        for f in np.unique(np.round(np.linspace(0, f1, n_times))):
            probes.append((clip.name, float(f)))
    theirs = gltf_points(bpy, glb, tmp, probes)
    ours = our_points(bpy, path, probes)
    size = ref.size
    rows = []
    for key in probes:
        name, f = key
        label = "rest" if name is None else f"{name} @ {f:g}"
        a, b = ours[key], theirs[key]
        if b is None:
            rows.append((path.name, label, f"{len(a)}/-", float("nan"), "no glTF animation of that name"))
            continue
        d = nn_distance(a, b) / size
        verdict = "ok" if d <= TOLERANCE else "DIFF"
        if verdict == "DIFF":
            clip = None if name is None else ref.clip(name)
            model, applied = assimp_model_points(ref, clip, f, fps)
            dm = nn_distance(model, b) / size
            if applied and dm <= TOLERANCE:
                verdict = f"explained: {' + '.join(applied)} (then {dm:.1e})"
        rows.append((path.name, label, f"{len(a)}/{len(b)}", d, verdict + (f"; {note}" if note else "")))
    return rows


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if _assimp() is None:
        print("assimp not found: it belongs to the pinned environment (cmeel-assimp in requirements.txt); "
              "run through python3.11 tools/run.py", file=sys.stderr)
        return 2
    files = [Path(a) for a in argv] or sorted(p for p in CORPUS.rglob("*")
                                              if p.suffix.lower() == ".x" and p.name not in BROKEN)
    bpy = _bpy()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for p in files:
            rows += check(bpy, p, Path(tmp))
    print(f"{'file':32} {'probe':24} {'points ours/assimp':>20} {'distance/size':>14}  verdict")
    for name, label, counts, rel, verdict in rows:
        print(f"{name:32} {label:24} {counts:>20} {rel:14.2e}  {verdict}")
    compared = [r for r in rows if np.isfinite(r[3]) or r[4].startswith("DIFF")]
    ok = [r for r in compared if r[4].startswith("ok")]
    explained = [r for r in compared if r[4].startswith("explained")]
    bad = [r for r in compared if r[4].startswith("DIFF")]
    skipped = len(rows) - len(compared)
    print(f"{len(ok)}/{len(compared)} compared probes agree within {TOLERANCE:g} of the model size, "
          f"{len(explained)} differ by assimp's known behaviour, {len(bad)} unexplained; "
          f"{skipped} not comparable (see verdict)")
    return 0 if not bad else 1


if __name__ == "__main__":
    sys.exit(main())
