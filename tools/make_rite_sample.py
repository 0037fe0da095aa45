# SPDX-License-Identifier: GPL-3.0-or-later
"""Generate the sample RiTE rig: samples/rite/humanoid.ram, walk.raa, wave.raa.

    python3.11 tools/run.py py tools/make_rite_sample.py [--out DIR]

A Y-up humanoid about 1.8 units tall (like the "Male" model of the RiTE
skeletal animation system document): 26 joints whose
``orientation`` aims each joint's local X axis down its bone (as Maya's
joint orient does), bind ``rotation`` identity except the elbows; a mesh of
tapered tubes around the bones with computed per-vertex normals, cylindrical
UVs, 1-4 normalised smooth weights per vertex and four shaders (0 skin,
1 shirt, 2 trousers, 3 shoes). ``walk.raa`` is a 33-frame loop keyed every 4
frames (mergeable in the RiTE document's viewer), ``wave.raa`` a 41-frame
right-arm wave (dominant). No randomness: the output depends only on this script.
"""
from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

from legacy_skin_io.io.rite import RaaAnimation, RaaTrack, RamModel, RiteJoint, write_raa, write_ram

ROOT = Path(__file__).resolve().parents[1]
SKIN, SHIRT, TROUSERS, SHOES = 0, 1, 2, 3
RING_SIDES = 16


# -- quaternions (x, y, z, w), Hamilton product ----------------------------------

def qmul(a, b):
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return np.array([aw * bx + ax * bw + ay * bz - az * by,
                     aw * by - ax * bz + ay * bw + az * bx,
                     aw * bz + ax * by - ay * bx + az * bw,
                     aw * bw - ax * bx - ay * by - az * bz])


def qconj(q):
    return np.array([-q[0], -q[1], -q[2], q[3]])


def qaxis(axis, degrees):
    axis = np.asarray(axis, dtype=float)
    axis = axis / np.linalg.norm(axis)
    h = math.radians(degrees) / 2.0
    return np.array([*(axis * math.sin(h)), math.cos(h)])


def qrotate(q, v):
    return qmul(qmul(q, np.array([*v, 0.0])), qconj(q))[:3]


def qfrom_matrix(m):
    """Unit quaternion of a rotation matrix (columns are the rotated axes)."""
    t = np.trace(m)
    if t > 0:
        s = math.sqrt(t + 1.0) * 2
        q = [(m[2, 1] - m[1, 2]) / s, (m[0, 2] - m[2, 0]) / s, (m[1, 0] - m[0, 1]) / s, 0.25 * s]
    elif m[0, 0] > m[1, 1] and m[0, 0] > m[2, 2]:
        s = math.sqrt(1.0 + m[0, 0] - m[1, 1] - m[2, 2]) * 2
        q = [0.25 * s, (m[0, 1] + m[1, 0]) / s, (m[0, 2] + m[2, 0]) / s, (m[2, 1] - m[1, 2]) / s]
    elif m[1, 1] > m[2, 2]:
        s = math.sqrt(1.0 + m[1, 1] - m[0, 0] - m[2, 2]) * 2
        q = [(m[0, 1] + m[1, 0]) / s, 0.25 * s, (m[1, 2] + m[2, 1]) / s, (m[0, 2] - m[2, 0]) / s]
    else:
        s = math.sqrt(1.0 + m[2, 2] - m[0, 0] - m[1, 1]) * 2
        q = [(m[0, 2] + m[2, 0]) / s, (m[1, 2] + m[2, 1]) / s, 0.25 * s, (m[1, 0] - m[0, 1]) / s]
    q = np.array(q)
    q /= np.linalg.norm(q)
    return q if q[3] >= 0 else -q


def aim_frame(direction, up=(0.0, 0.0, 1.0)):
    """World rotation whose local X points along ``direction`` (Maya-style joint orient)."""
    x = np.asarray(direction, dtype=float)
    x /= np.linalg.norm(x)
    up = np.asarray(up, dtype=float)
    if abs(np.dot(up, x)) > 0.95:
        up = np.array([0.0, 1.0, 0.0]) if abs(x[1]) < 0.9 else np.array([1.0, 0.0, 0.0])
    z = up - np.dot(up, x) * x
    z /= np.linalg.norm(z)
    y = np.cross(z, x)
    return qfrom_matrix(np.column_stack([x, y, z]))


# -- skeleton ---------------------------------------------------------------------

def skeleton_layout():
    """(name, parent name, world head position, world aim target) per joint, in file order."""
    j = []

    def add(name, parent, head, target):
        j.append((name, parent, np.array(head, dtype=float), np.array(target, dtype=float)))

    add("Hips", None, (0, 0.95, 0), (0, 1.05, 0))
    add("Spine", "Hips", (0, 1.05, 0), (0, 1.20, 0))
    add("Spine1", "Spine", (0, 1.20, 0), (0, 1.35, 0))
    add("Spine2", "Spine1", (0, 1.35, 0), (0, 1.52, 0))
    add("Neck", "Spine2", (0, 1.52, 0.005), (0, 1.62, 0.01))
    add("Head", "Neck", (0, 1.62, 0.01), (0, 1.80, 0.01))
    for side, s in (("Left", 1.0), ("Right", -1.0)):
        add(f"{side}Shoulder", "Spine2", (s * 0.05, 1.46, 0), (s * 0.18, 1.45, 0))
        add(f"{side}Arm", f"{side}Shoulder", (s * 0.18, 1.45, 0), (s * 0.46, 1.45, -0.01))
        add(f"{side}ForeArm", f"{side}Arm", (s * 0.46, 1.45, -0.01), (s * 0.72, 1.45, 0))
        add(f"{side}Hand", f"{side}ForeArm", (s * 0.72, 1.45, 0), (s * 0.80, 1.45, 0))
        add(f"{side}Fingers", f"{side}Hand", (s * 0.80, 1.45, 0), (s * 0.89, 1.445, 0))
        add(f"{side}Thumb", f"{side}Hand", (s * 0.74, 1.44, 0.03), (s * 0.79, 1.435, 0.07))
    for side, s in (("Left", 1.0), ("Right", -1.0)):
        add(f"{side}UpLeg", "Hips", (s * 0.10, 0.92, 0), (s * 0.10, 0.50, 0.01))
        add(f"{side}Leg", f"{side}UpLeg", (s * 0.10, 0.50, 0.01), (s * 0.10, 0.09, -0.01))
        add(f"{side}Foot", f"{side}Leg", (s * 0.10, 0.09, -0.01), (s * 0.10, 0.03, 0.12))
        add(f"{side}Toe", f"{side}Foot", (s * 0.10, 0.03, 0.12), (s * 0.10, 0.025, 0.20))
    return j


ELBOW_BIND = {"LeftForeArm": qaxis((0, 1, 0), 6.0), "RightForeArm": qaxis((0, 1, 0), 6.0)}


def build_skeleton():
    layout = skeleton_layout()
    index = {name: k for k, (name, *_rest) in enumerate(layout)}
    joints, world_rot, world_pos, frames = [], [], [], []
    for name, parent, head, target in layout:
        w = aim_frame(target - head)                      # desired bind world frame
        bind = ELBOW_BIND.get(name, np.array([0.0, 0.0, 0.0, 1.0]))
        if parent is None:
            p_rot, p_pos, pi = np.array([0.0, 0.0, 0.0, 1.0]), np.zeros(3), -1
        else:
            pi = index[parent]
            p_rot, p_pos = world_rot[pi], world_pos[pi]
        # R_j = R_p * orientation * rotation  ->  orientation = R_p^-1 * W * rotation^-1
        orient = qmul(qmul(qconj(p_rot), w), qconj(bind))
        orient /= np.linalg.norm(orient)
        if orient[3] < 0:
            orient = -orient
        translation = qrotate(qconj(p_rot), head - p_pos) if pi >= 0 else head.copy()
        r = qmul(qmul(p_rot, orient), bind)
        world_rot.append(r / np.linalg.norm(r))
        world_pos.append(head if pi < 0 else p_pos + qrotate(p_rot, translation))
        frames.append(qmul(p_rot, orient))  # the frame the joint's rotation acts in
        joints.append(RiteJoint(name, pi, np.round(orient, 12), np.round(translation, 12), bind))
    return joints, index, np.array(world_pos), world_rot, frames, layout


# -- mesh -------------------------------------------------------------------------

def tube(points, radii, shaders, rings_per_segment):
    """Rings along a polyline; returns vertices (V,3), triangles (T,3), shader (T,)."""
    pts = [np.asarray(p, dtype=float) for p in points]
    centres, rads, seg_of_ring = [], [], []
    for i in range(len(pts) - 1):
        n = rings_per_segment[i] if isinstance(rings_per_segment, (list, tuple)) else rings_per_segment
        for k in range(n):
            t = k / n
            centres.append(pts[i] * (1 - t) + pts[i + 1] * t)
            rads.append(radii[i] * (1 - t) + radii[i + 1] * t)
            seg_of_ring.append(i)
    centres.append(pts[-1])
    rads.append(radii[-1])
    seg_of_ring.append(len(pts) - 2)
    verts, tris, shade = [], [], []
    ring_start = []
    prev_side = None
    for r, (c, rad) in enumerate(zip(centres, rads)):
        a = centres[max(r - 1, 0)]
        b = centres[min(r + 1, len(centres) - 1)]
        tangent = (b - a) / np.linalg.norm(b - a)
        hint = prev_side if prev_side is not None else (
            np.array([0.0, 0.0, 1.0]) if abs(tangent[2]) < 0.9 else np.array([1.0, 0.0, 0.0]))
        side = hint - np.dot(hint, tangent) * tangent
        side /= np.linalg.norm(side)
        prev_side = side
        other = np.cross(tangent, side)
        ring_start.append(len(verts))
        for s in range(RING_SIDES):
            ang = 2 * math.pi * s / RING_SIDES
            verts.append(c + rad * (math.cos(ang) * side + math.sin(ang) * other))
    for r in range(len(centres) - 1):
        a0, b0 = ring_start[r], ring_start[r + 1]
        sh = shaders[seg_of_ring[r]]
        for s in range(RING_SIDES):
            s1 = (s + 1) % RING_SIDES
            tris += [(a0 + s, b0 + s, b0 + s1), (a0 + s, b0 + s1, a0 + s1)]
            shade += [sh, sh]
    # caps: a centre vertex fanned to the end rings
    for end, ring, sh in ((0, ring_start[0], shaders[0]), (-1, ring_start[-1], shaders[-1])):
        centre = len(verts)
        tangent = centres[1] - centres[0] if end == 0 else centres[-1] - centres[-2]
        tangent = tangent / np.linalg.norm(tangent)
        verts.append(centres[end] - (0.5 * rads[end]) * tangent if end == 0
                     else centres[end] + (0.5 * rads[end]) * tangent)
        for s in range(RING_SIDES):
            s1 = (s + 1) % RING_SIDES
            tris.append((centre, ring + s1, ring + s) if end == 0 else (centre, ring + s, ring + s1))
            shade.append(sh)
    return np.array(verts), np.array(tris, dtype=np.int64), np.array(shade, dtype=np.int64)


def body_parts(P, index):
    """(polyline, radii, shader per segment, rings per segment, candidate joints) per part."""
    j = lambda name: P[index[name]]  # noqa: E731
    parts = [
        ([(0, 0.80, 0), j("Hips"), j("Spine"), j("Spine1"), j("Spine2"), (0, 1.46, 0), (0, 1.53, 0.005)],
         [0.11, 0.15, 0.14, 0.145, 0.165, 0.13, 0.06], [TROUSERS, TROUSERS, SHIRT, SHIRT, SHIRT, SHIRT],
         [3, 3, 4, 4, 3, 2], ["Hips", "Spine", "Spine1", "Spine2", "Neck"]),
        ([j("Neck"), j("Head"), (0, 1.69, 0.015), (0, 1.76, 0.01), (0, 1.80, 0.005)],
         [0.05, 0.075, 0.10, 0.085, 0.035], [SKIN] * 4, [3, 3, 3, 2], ["Spine2", "Neck", "Head"]),
    ]
    for side in ("Left", "Right"):
        s = 1.0 if side == "Left" else -1.0
        parts += [
            ([j(f"{side}Shoulder") * [1, 1, 1] + [s * 0.06, 0, 0], j(f"{side}Arm"), j(f"{side}ForeArm"),
              j(f"{side}Hand")],
             [0.055, 0.055, 0.045, 0.035], [SHIRT, SHIRT, SKIN], [2, 6, 6],
             ["Spine2", f"{side}Shoulder", f"{side}Arm", f"{side}ForeArm", f"{side}Hand"]),
            ([j(f"{side}Hand"), j(f"{side}Fingers"), (s * 0.89, 1.445, 0)],
             [0.035, 0.03, 0.015], [SKIN, SKIN], [3, 3], [f"{side}ForeArm", f"{side}Hand", f"{side}Fingers"]),
            ([j(f"{side}Thumb"), (s * 0.79, 1.435, 0.07)], [0.014, 0.01], [SKIN], [3],
             [f"{side}Hand", f"{side}Thumb"]),
            ([j(f"{side}UpLeg") + [0, 0.02, 0], j(f"{side}Leg"), j(f"{side}Foot")],
             [0.085, 0.058, 0.045], [TROUSERS, TROUSERS], [7, 7],
             ["Hips", f"{side}UpLeg", f"{side}Leg", f"{side}Foot"]),
            ([(s * 0.10, 0.045, -0.06), j(f"{side}Foot") * [1, 0, 1] + [0, 0.045, 0.03], j(f"{side}Toe"),
              (s * 0.10, 0.03, 0.21)],
             [0.04, 0.05, 0.04, 0.025], [SHOES, SHOES, SHOES], [2, 3, 3], [f"{side}Leg", f"{side}Foot", f"{side}Toe"]),
        ]
    return parts


def bone_segments(P, layout, index):
    seg = {}
    for name, _parent, _head, target in layout:
        seg[name] = (P[index[name]], target)
    seg["Hips"] = (np.array([0.0, 0.80, 0.0]), P[index["Spine"]])
    return seg


def point_segment_distance(p, a, b):
    ab = b - a
    t = np.clip(((p - a) @ ab) / np.dot(ab, ab), 0.0, 1.0)
    return np.linalg.norm(p - (a + t[:, None] * ab), axis=1)


def skin_weights(verts, candidates, segments, index):
    """1-4 smooth influences per vertex from inverse distances to the candidate bones."""
    d = np.stack([point_segment_distance(verts, *segments[c]) for c in candidates], axis=1)
    w = 1.0 / (d + 0.01) ** 4
    w /= w.sum(axis=1, keepdims=True)
    order = np.argsort(-w, axis=1)[:, :4]
    top = np.take_along_axis(w, order, axis=1)
    top[top < 0.03] = 0.0
    top /= top.sum(axis=1, keepdims=True)
    out = []
    for v in range(len(verts)):
        for k in range(order.shape[1]):
            if top[v, k] > 0:
                out.append((v, index[candidates[order[v, k]]], top[v, k]))
    return out


def vertex_normals(verts, tris):
    fn = np.cross(verts[tris[:, 1]] - verts[tris[:, 0]], verts[tris[:, 2]] - verts[tris[:, 0]])
    vn = np.zeros_like(verts)
    for c in range(3):
        np.add.at(vn, tris[:, c], fn)
    return vn / np.linalg.norm(vn, axis=1, keepdims=True)


def build_model():
    joints, index, P, world_rot, frames, layout = build_skeleton()
    segments = bone_segments(P, layout, index)
    all_v, all_t, all_s, weights = [], [], [], []
    base = 0
    for points, radii, shaders, rings, candidates in body_parts(P, index):
        v, t, s = tube(points, radii, shaders, rings)
        for vi, ji, wv in skin_weights(v, candidates, segments, index):
            weights.append((vi + base, ji, wv))
        all_v.append(v)
        all_t.append(t + base)
        all_s.append(s)
        base += len(v)
    verts = np.round(np.concatenate(all_v), 6)
    tris = np.concatenate(all_t)
    normals = vertex_normals(verts, tris)
    u = np.arctan2(verts[:, 0], verts[:, 2]) / (2 * math.pi) + 0.5
    uvs = np.column_stack([u, verts[:, 1] / 1.8])
    wv = np.array([w[0] for w in weights], dtype=np.int64)
    wj = np.array([w[1] for w in weights], dtype=np.int64)
    ww = np.array([w[2] for w in weights])
    model = RamModel(mesh_name="Male", joints=joints, positions=verts, normals=normals, uvs=uvs,
                     tri_shader=np.concatenate(all_s), tri_vertices=tris, tri_normals=tris.copy(),
                     tri_uvs=tris.copy(), weight_vertex=wv, weight_joint=wj, weight_value=ww)
    return model, index, frames


# -- animations -------------------------------------------------------------------

def local_key(joints, frames, index, name, world_q):
    """The joint ``rotation`` that applies ``world_q`` (a bind-pose world rotation) to the joint."""
    k = index[name]
    bind = joints[k].rotation
    w = frames[k]
    delta = qmul(qmul(qconj(w), world_q), w)   # world rotation expressed in the joint's frame
    q = qmul(delta, bind)
    q /= np.linalg.norm(q)
    return q if q[3] >= 0 else -q


def make_track(joints, frames, index, name, frame_numbers, world_rotations):
    rots = np.array([local_key(joints, frames, index, name, q) for q in world_rotations])
    return RaaTrack(index[name], name, np.array(frame_numbers, dtype=np.int64), np.round(rots, 9))


def walk(joints, frames, index):
    keys = list(range(0, 33, 4))
    phase = [2 * math.pi * f / 32 for f in keys]
    X, Y, Z = (1, 0, 0), (0, 1, 0), (0, 0, 1)
    spec = {
        "Hips": lambda p: qmul(qaxis(Y, 6 * math.sin(p)), qaxis(Z, 3 * math.sin(2 * p))),
        "Spine": lambda p: qaxis(Y, -4 * math.sin(p)),
        "Spine1": lambda p: qaxis(Y, -3 * math.sin(p)),
        "Neck": lambda p: qaxis(Y, 5 * math.sin(p)),
        "LeftUpLeg": lambda p: qaxis(X, -25 * math.sin(p)),
        "RightUpLeg": lambda p: qaxis(X, 25 * math.sin(p)),
        "LeftLeg": lambda p: qaxis(X, 30 * (1 - math.cos(p)) / 2 + 5),
        "RightLeg": lambda p: qaxis(X, 30 * (1 + math.cos(p)) / 2 + 5),
        "LeftFoot": lambda p: qaxis(X, -10 * math.sin(p)),
        "RightFoot": lambda p: qaxis(X, 10 * math.sin(p)),
        "LeftArm": lambda p: qmul(qaxis(X, 20 * math.sin(p)), qaxis(Z, -70)),
        "RightArm": lambda p: qmul(qaxis(X, -20 * math.sin(p)), qaxis(Z, 70)),
        "LeftForeArm": lambda p: qaxis(X, -12 - 8 * math.sin(p)),
        "RightForeArm": lambda p: qaxis(X, -12 + 8 * math.sin(p)),
    }
    tracks = []
    for name, fn in spec.items():
        rots = [fn(p) for p in phase]
        rots[-1] = rots[0]  # the loop closes exactly
        tracks.append(make_track(joints, frames, index, name, keys, rots))
    return RaaAnimation("walk", 33, True, tracks)


def wave(joints, frames, index):
    keys = list(range(0, 41, 5))
    Z, X = (0, 0, 1), (1, 0, 0)
    spec = {
        "RightShoulder": lambda k: qaxis(Z, -10),
        "RightArm": lambda k: qmul(qaxis(X, -15), qaxis(Z, -55)),
        "RightForeArm": lambda k: qaxis(Z, -60 + 25 * math.sin(2 * math.pi * 2 * k / 40)),
        "RightHand": lambda k: qaxis(Z, 20 * math.sin(2 * math.pi * 2 * k / 40 + 0.8)),
    }
    tracks = []
    for name, fn in spec.items():
        rots = [fn(k) for k in keys]
        rots[-1] = rots[0]
        tracks.append(make_track(joints, frames, index, name, keys, rots))
    return RaaAnimation("wave", 41, True, tracks)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "samples" / "rite")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    model, index, frames = build_model()
    write_ram(model, args.out / "humanoid.ram")
    write_raa(walk(model.joints, frames, index), args.out / "walk.raa")
    write_raa(wave(model.joints, frames, index), args.out / "wave.raa")
    counts = np.bincount(model.weight_vertex, minlength=len(model.positions))
    print(f"humanoid.ram: {len(model.joints)} joints, {len(model.positions)} vertices, "
          f"{len(model.tri_vertices)} triangles, {len(model.weight_value)} weights "
          f"({counts.min()}-{counts.max()} per vertex), shaders {sorted(set(model.tri_shader.tolist()))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
