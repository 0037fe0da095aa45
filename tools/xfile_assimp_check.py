# SPDX-License-Identifier: GPL-3.0-or-later
"""Development check (not a test): our .X import against assimp's reading.

For every .X file of the corpus, ``assimp export FILE out.glb`` is imported
with Blender's glTF importer and the world-space vertices of all meshes are
compared with ours, at rest and at several times of every AnimationSet, by a
symmetric nearest-neighbour distance over the point sets (assimp splits
vertices per corner, so vertex orders differ). Passing: within 1e-3 of the
model size.

    apt-get install -y assimp-utils
    python3.11 tools/run.py py tools/xfile_assimp_check.py [FILES...]
"""
from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "data" / "x"
BROKEN = {"malformed_skinweights_oob.x", "OV_GetNextToken"}


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
    """Symmetric nearest-neighbour (Hausdorff) distance between point sets."""
    from mathutils.kdtree import KDTree

    def one_way(src, dst):
        tree = KDTree(len(dst))
        for i, p in enumerate(dst):
            tree.insert(p, i)
        tree.balance()
        return max((tree.find(p)[2] for p in src), default=0.0)

    if len(a) == 0 or len(b) == 0:
        return float("inf") if len(a) != len(b) else 0.0
    return max(one_way(a, b), one_way(b, a))


def _meshes(bpy, names):
    """Mesh objects, leaving out bone display shapes (the glTF importer adds some)."""
    shapes = {pb.custom_shape.name for o in bpy.data.objects if o.type == "ARMATURE"
              for pb in o.pose.bones if pb.custom_shape is not None}
    return [bpy.data.objects[n] for n in names
            if bpy.data.objects[n].type == "MESH" and n not in shapes]


def check(bpy, path: Path, tmp: Path, n_times: int = 4):
    from legacy_skin_io.io.xfile import read_xfile
    from legacy_skin_io.io.xfile.playback import XRig

    rig = XRig.from_xfile(read_xfile(path))
    glb = tmp / (path.stem + ".glb")
    r = subprocess.run(["assimp", "export", str(path), str(glb)], capture_output=True, text=True)
    if r.returncode != 0 or not glb.exists():
        return [(path.name, "-", "assimp failed", float("nan"), "")]
    scene = bpy.context.scene
    fps = scene.render.fps / scene.render.fps_base
    # times: rest, then a few frames of every set
    probes = [(None, None)]
    for ci, clip in enumerate(rig.clips):
        f1 = float(rig.ticks_to_frames(clip.last_tick, fps))
        for f in np.unique(np.round(np.linspace(0, f1, n_times))):
            probes.append((ci, float(f)))
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.import_scene.gltf(filepath=str(glb))
    scene = bpy.context.scene
    g_objs = [o.name for o in bpy.context.scene.objects]
    g_arms = [o for o in bpy.context.scene.objects if o.type == "ARMATURE"]
    g_points = {}
    for ci, f in probes:
        for arm in g_arms:
            ad = arm.animation_data
            if ad is None:
                continue
            if ci is None:  # the node transforms as imported, no action
                ad.action = None
            else:
                name = rig.clips[ci].name
                act = next((a for a in bpy.data.actions if a.name.startswith(name) or name in a.name), None)
                if act is None:
                    continue
                for tr in ad.nla_tracks:
                    tr.mute = True
                ad.action = act
                if hasattr(ad, "action_suitable_slots") and ad.action_suitable_slots:
                    ad.action_slot = ad.action_suitable_slots[0]
        scene.frame_set(int(f or 0))
        g_points[(ci, f)] = world_points(bpy, _meshes(bpy, g_objs))
    size = rig.size()
    rows = []
    for ci, f in probes:
        if ci is None:  # our default pose: the frame matrices (no animation)
            bpy.ops.wm.read_homefile(use_empty=True)
            assert bpy.ops.import_scene.xfile(filepath=str(path), import_animations=False) == {"FINISHED"}
            scene = bpy.context.scene
            scene.frame_set(0)
            o_objs = [o.name for o in scene.objects]
        else:
            if ci == 0 and f == probes[1][1]:
                bpy.ops.wm.read_homefile(use_empty=True)
                assert bpy.ops.import_scene.xfile(filepath=str(path)) == {"FINISHED"}
                scene = bpy.context.scene
                o_objs = [o.name for o in scene.objects]
                arm = next(o for o in scene.objects if o.type == "ARMATURE")
            from legacy_skin_io.operators import anim_build

            tr = arm.animation_data.nla_tracks[rig.clips[ci].name]
            anim_build.assign_action(arm, tr.strips[0].action, tr.strips[0].action_slot)
            scene.frame_set(int(f))
        ours = world_points(bpy, _meshes(bpy, o_objs))
        d = nn_distance(ours, g_points[(ci, f)])
        label = "rest" if ci is None else f"{rig.clips[ci].name} @ {f:g}"
        rows.append((path.name, label, f"{len(ours)}/{len(g_points[(ci, f)])}", d / size,
                     "ok" if d <= 1e-3 * size else "DIFF"))
    return rows


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if shutil.which("assimp") is None:
        print("assimp not found: apt-get install -y assimp-utils", file=sys.stderr)
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
    bad = [r for r in rows if r[4] != "ok"]
    print(f"{len(rows) - len(bad)}/{len(rows)} probes agree within 1e-3 of the model size")
    return 0 if not bad else 1


if __name__ == "__main__":
    sys.exit(main())
