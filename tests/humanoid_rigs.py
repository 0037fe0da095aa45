# SPDX-License-Identifier: GPL-3.0-or-later
"""Humanoid .X files as 3ds Max exporters write them, for the automatic up
axis: the 25-bone Max humanoid (Root > Pelvis > Thigh/Calf/Foot/Toe on
both sides and Spine_01..03 > Neck > Head, Clavicle > UpperArm > Armroll >
Forearm > Hand on both sides) and a Character Studio Biped (Bip01 >
Bip01_Pelvis > Bip01_Spine > the thighs and Bip01_Spine1 > ... > Bip01_Neck
> the clavicles and Bip01_Head) and a generic humanoid (Hips at the root,
Mixamo's names), each a skinned tube per bone and at most one animation of
4800 ticks (AnimTicksPerSecond 4800: 3ds Max's own tick; a walk, or a
get-up starting on its back).

The model is built in Blender's space (Z up, facing -Y, its left at +x, in
centimetres as Max exports) and written with the file's axes: ``up="Z"``
keeps it (Max's right-handed coordinates as they are, as tiny_4anim.x and
miko.X hold them, so that Direct3D, left-handed, shows it mirrored; Up -Z,
Forward Y in the importer's terms), ``up="Y"`` swaps y and z (Direct3D's
Y-up convention: the import's default maps it back). The frames hold one of :data:`POSES`, the skin's
offsets always the bind pose (a T-pose, or for ``"tpose"`` an A-pose with
the frames in a T-pose):

* ``bind``: the bind pose;
* ``tpose``: arms out, bound with arms down at 45 degrees;
* ``turned_root``: the root's and the pelvis's own axes turned (-90 about
  x, as Biped's Bip01 and Bip01 Pelvis are), their children's frames
  making up for it: the same joint positions;
* ``lying_root``: the whole body turned -90 about x at the root (a frame of
  an animation lying down, a root holding a conversion);
* ``lying_pelvis``: everything from the pelvis turned +90 about x;
* ``first_frame``: the walk's first key (legs apart, knees bent, arms
  swinging, the spine leaning);
* ``bind_space_only``: every frame the identity (all joints at the origin):
  only the mesh in bind space and the offsets say where the joints are;
* ``world_in_frames``: each FrameTransformMatrix holds the joint's world
  matrix instead of its parent-relative one (the joints pile up along the
  body, legs going up).
"""
from __future__ import annotations

import numpy as np

from legacy_skin_io.core import quat
from legacy_skin_io.io import xfile as X
from legacy_skin_io.io.xfile.conventions import col, key_from_rotation

POSES = ("bind", "tpose", "turned_root", "lying_root", "lying_pelvis", "first_frame", "bind_space_only",
         "world_in_frames")
#: poses whose frames stand (the others lie, or hold no pose)
STANDING_FRAMES = ("bind", "tpose", "turned_root", "first_frame")
TICKS_PER_SECOND = 4800


def _side(rows, sides=("L", "R")):
    """Rows for the left side (x > 0) and their mirror for the right."""
    out = []
    for side, sx in zip(sides, (1.0, -1.0)):
        for name, parent, head in rows:
            out.append((name.format(s=side), parent.format(s=side), (sx * head[0], head[1], head[2])))
    return out


#: (name, parent, head in the model's space) of the 3ds Max humanoid: 25 joints, cm
MAX_RIG = [("Root", None, (0.0, 0.0, 0.0)), ("Pelvis", "Root", (0.0, 0.0, 95.0))] + _side([
    ("{s}_Thigh", "Pelvis", (10.0, 0.0, 92.0)), ("{s}_Calf", "{s}_Thigh", (10.0, -1.5, 50.0)),
    ("{s}_Foot", "{s}_Calf", (10.0, 1.0, 9.0)), ("{s}_Toe", "{s}_Foot", (10.0, -11.0, 2.0))]) + [
    ("Spine_01", "Pelvis", (0.0, 0.0, 104.0)), ("Spine_02", "Spine_01", (0.0, 0.5, 118.0)),
    ("Spine_03", "Spine_02", (0.0, 0.5, 132.0)), ("Neck", "Spine_03", (0.0, 0.0, 149.0)),
    ("Head", "Neck", (0.0, -1.0, 157.0))] + _side([
        ("{s}_Clavicle", "Spine_03", (3.0, -1.0, 146.0)), ("{s}_UpperArm", "{s}_Clavicle", (17.0, 0.0, 145.0)),
        ("{s}_Armroll", "{s}_UpperArm", (30.0, 0.0, 145.0)), ("{s}_Forearm", "{s}_Armroll", (44.0, 0.0, 145.0)),
        ("{s}_Hand", "{s}_Forearm", (69.0, 0.0, 145.0))])

#: Character Studio's Biped (names as Max exporters write them: spaces as underscores)
BIPED_RIG = [("Bip01", None, (0.0, 0.0, 95.0)), ("Bip01_Pelvis", "Bip01", (0.0, 0.0, 95.0)),
             ("Bip01_Spine", "Bip01_Pelvis", (0.0, 0.0, 104.0))] + _side([
    ("Bip01_{s}_Thigh", "Bip01_Spine", (10.0, 0.0, 92.0)),
    ("Bip01_{s}_Calf", "Bip01_{s}_Thigh", (10.0, -1.5, 50.0)),
    ("Bip01_{s}_Foot", "Bip01_{s}_Calf", (10.0, 1.0, 9.0)),
    ("Bip01_{s}_Toe0", "Bip01_{s}_Foot", (10.0, -11.0, 2.0))]) + [
    ("Bip01_Spine1", "Bip01_Spine", (0.0, 0.5, 120.0)), ("Bip01_Spine2", "Bip01_Spine1", (0.0, 0.5, 134.0)),
    ("Bip01_Neck", "Bip01_Spine2", (0.0, 0.0, 149.0)), ("Bip01_Head", "Bip01_Neck", (0.0, -1.0, 157.0)),
    ("Bip01_HeadNub", "Bip01_Head", (0.0, -1.0, 177.0))] + _side([
        ("Bip01_{s}_Clavicle", "Bip01_Neck", (3.0, -1.0, 146.0)),
        ("Bip01_{s}_UpperArm", "Bip01_{s}_Clavicle", (17.0, 0.0, 145.0)),
        ("Bip01_{s}_Forearm", "Bip01_{s}_UpperArm", (44.0, 0.0, 145.0)),
        ("Bip01_{s}_Hand", "Bip01_{s}_Forearm", (69.0, 0.0, 145.0)),
        ("Bip01_{s}_Finger0", "Bip01_{s}_Hand", (79.0, -2.0, 145.0))])

#: a generic humanoid (the hips its root, the legs its children; Mixamo's names)
GENERIC_RIG = [("Hips", None, (0.0, 0.0, 95.0))] + _side([
    ("{s}UpLeg", "Hips", (10.0, 0.0, 92.0)), ("{s}Leg", "{s}UpLeg", (10.0, -1.5, 50.0)),
    ("{s}Foot", "{s}Leg", (10.0, 1.0, 9.0)), ("{s}ToeBase", "{s}Foot", (10.0, -11.0, 2.0))], ("Left", "Right")) + [
    ("Spine", "Hips", (0.0, 0.0, 106.0)), ("Spine1", "Spine", (0.0, 0.5, 120.0)),
    ("Spine2", "Spine1", (0.0, 0.5, 134.0)), ("Neck", "Spine2", (0.0, 0.0, 149.0)),
    ("Head", "Neck", (0.0, -1.0, 157.0))] + _side([
        ("{s}Shoulder", "Spine2", (3.0, -1.0, 146.0)), ("{s}Arm", "{s}Shoulder", (17.0, 0.0, 145.0)),
        ("{s}ForeArm", "{s}Arm", (44.0, 0.0, 145.0)), ("{s}Hand", "{s}ForeArm", (69.0, 0.0, 145.0))],
        ("Left", "Right"))

RIGS = {"max": MAX_RIG, "biped": BIPED_RIG, "generic": GENERIC_RIG}
#: per rig: (a joint at the top, the joints at the bottom, the toes, a left and a right hand)
LANDMARKS = {"max": ("Head", ("L_Foot", "R_Foot"), ("L_Toe", "R_Toe"), "L_Hand", "R_Hand"),
             "biped": ("Bip01_Head", ("Bip01_L_Foot", "Bip01_R_Foot"), ("Bip01_L_Toe0", "Bip01_R_Toe0"),
                       "Bip01_L_Hand", "Bip01_R_Hand"),
             "generic": ("Head", ("LeftFoot", "RightFoot"), ("LeftToeBase", "RightToeBase"), "LeftHand", "RightHand")}
#: per rig: the joints a pose turns: ({side: (thigh, calf, upper arm)}, the spine's lean, the pelvis)
_POSED = {"max": ({s: (f"{s}_Thigh", f"{s}_Calf", f"{s}_UpperArm") for s in "LR"}, "Spine_01", "Pelvis"),
          "biped": ({s: (f"Bip01_{s}_Thigh", f"Bip01_{s}_Calf", f"Bip01_{s}_UpperArm") for s in "LR"},
                    "Bip01_Spine1", "Bip01_Pelvis"),
          "generic": ({s: (f"{n}UpLeg", f"{n}Leg", f"{n}Arm") for s, n in (("L", "Left"), ("R", "Right"))},
                      "Spine", "Hips")}


def _turn(axis, degrees: float, at=(0.0, 0.0, 0.0)) -> np.ndarray:
    """A 4x4 rotation about ``axis`` through point ``at``."""
    a = np.asarray(axis, dtype=np.float64)
    m = quat.to_mat4(quat.from_axis_angle(a / np.linalg.norm(a), np.radians(degrees)))
    t = np.eye(4)
    t[:3, 3] = at
    back = np.eye(4)
    back[:3, 3] = -np.asarray(at, dtype=np.float64)
    return t @ m @ back


class Rig:
    """Names, parents and bind world matrices (model space) of a rig."""

    def __init__(self, kind: str):
        rows = RIGS[kind]
        self.kind = kind
        self.names = [r[0] for r in rows]
        ix = {n: i for i, n in enumerate(self.names)}
        self.parents = np.array([ix[r[1]] if r[1] is not None else -1 for r in rows])
        heads = np.array([r[2] for r in rows], dtype=np.float64)
        self.children = [[c for c in range(len(rows)) if self.parents[c] == j] for j in range(len(rows))]
        self.bind = np.array([np.eye(4) for _ in rows])
        for j in range(len(rows)):
            # Max bones: x along the bone, towards the child leading the longest chain
            kids = self.children[j]
            if kids:
                far = max(kids, key=lambda c: len(self.subtree(c)))
                d = heads[far] - heads[j]
            else:
                d = heads[j] - heads[self.parents[j]]
            if np.linalg.norm(d) < 1e-9:
                d = np.array([0.0, 0.0, 1.0])
            x = d / np.linalg.norm(d)
            ref = np.array([0.0, -1.0, 0.0]) if abs(x[1]) < 0.9 else np.array([0.0, 0.0, 1.0])
            z = np.cross(x, ref)
            z /= np.linalg.norm(z)
            self.bind[j, :3, :3] = np.stack([x, np.cross(z, x), z], axis=1)
            self.bind[j, :3, 3] = heads[j]
        if kind == "biped":          # Biped's own axes: Bip01 and its pelvis turned
            for name, turn in (("Bip01", _turn((1, 0, 0), -90.0) @ _turn((0, 0, 1), -90.0)),
                               ("Bip01_Pelvis", _turn((1, 0, 0), -90.0) @ _turn((0, 1, 0), -90.0))):
                j = ix[name]
                self.bind[j, :3, :3] = turn[:3, :3]
        self.index = ix

    def subtree(self, j: int) -> list[int]:
        out, stack = [], [j]
        while stack:
            k = stack.pop()
            out.append(k)
            stack.extend(self.children[k])
        return out

    def turned(self, world: np.ndarray, joint: str, axis, degrees: float) -> np.ndarray:
        """``world`` with ``joint``'s subtree turned about ``axis`` at the joint's head."""
        j = self.index[joint]
        out = world.copy()
        m = _turn(axis, degrees, world[j, :3, 3])
        sub = self.subtree(j)
        out[sub] = m[None] @ world[sub]
        return out

    def world_of_locals(self, locals_: np.ndarray) -> np.ndarray:
        """World matrices of parent-relative ``locals_``."""
        out = locals_.copy()
        for j in range(len(self.names)):          # parents come first in every rig
            if self.parents[j] >= 0:
                out[j] = out[self.parents[j]] @ locals_[j]
        return out

    def arms(self, world: np.ndarray, degrees: float) -> np.ndarray:
        """Both arms turned down by ``degrees`` at the shoulders."""
        for s, sign in (("L", -1.0), ("R", 1.0)):
            world = self.turned(world, _POSED[self.kind][0][s][2], (0.0, 1.0, 0.0), sign * degrees)
        return world

    def walk(self, phase: float) -> np.ndarray:
        """A walk cycle's pose at ``phase`` (radians) from the T-pose."""
        limbs, spine, _ = _POSED[self.kind]
        w = self.arms(self.bind, 75.0)
        swing = np.sin(phase)
        for s, sign in (("L", 1.0), ("R", -1.0)):
            thigh, calf, arm = limbs[s]
            w = self.turned(w, thigh, (1.0, 0.0, 0.0), -28.0 * sign * swing)
            w = self.turned(w, calf, (1.0, 0.0, 0.0), 20.0 + 15.0 * sign * swing)
            w = self.turned(w, arm, (1.0, 0.0, 0.0), 20.0 * sign * swing)
        return self.turned(w, spine, (1.0, 0.0, 0.0), -8.0)

    def frames(self, pose: str) -> tuple[np.ndarray, np.ndarray]:
        """(the bind pose, the frames' world matrices) for ``pose``, model space."""
        bind = self.bind
        root = self.names[0]
        pelvis = _POSED[self.kind][2]
        if pose == "bind":
            return bind, bind
        if pose == "tpose":
            return self.arms(bind, 45.0), bind
        if pose == "turned_root":
            out = bind.copy()
            for name, turn in ((root, _turn((1, 0, 0), -90.0)), (pelvis, _turn((0, 0, 1), 90.0))):
                j = self.index[name]
                out[j, :3, :3] = turn[:3, :3] @ out[j, :3, :3]
            return bind, out
        if pose == "lying_root":
            return bind, self.turned(bind, root, (1.0, 0.0, 0.0), -90.0)
        if pose == "lying_pelvis":
            return bind, self.turned(bind, pelvis, (1.0, 0.0, 0.0), 90.0)
        if pose == "first_frame":
            return bind, self.walk(0.5)
        if pose == "bind_space_only":
            return bind, np.array([np.eye(4) for _ in self.names])
        if pose == "world_in_frames":
            return bind, self.world_of_locals(bind)
        raise ValueError(pose)


def file_axes(up: str) -> np.ndarray:
    """Model space -> the file's space (4x4): Z-up kept, Y-up swaps y and z."""
    if up == "Z":
        return np.eye(4)
    if up == "Y":
        return np.eye(4)[[0, 2, 1, 3]]
    raise ValueError(up)


def _tubes(rig: Rig, bind: np.ndarray):
    """One skinned box per joint (Max's Root and Biped's Bip01 carry none), from its
    head to its child's (a leaf: on along its parent's direction): positions
    (model space, bind pose), faces and the joint of each vertex."""
    pos, faces, owner = [], [], []
    for j, name in enumerate(rig.names):
        if name in ("Root", "Bip01"):
            continue
        head = bind[j, :3, 3]
        kids = rig.children[j]
        if kids:
            tail = np.mean([bind[c, :3, 3] for c in kids], axis=0)
        else:
            tail = head + 0.5 * (head - bind[rig.parents[j], :3, 3])
        d = tail - head
        if np.linalg.norm(d) < 1e-6:
            d = np.array([0.0, 0.0, 8.0])
            tail = head + d
        x = d / np.linalg.norm(d)
        ref = np.array([0.0, 1.0, 0.0]) if abs(x[1]) < 0.9 else np.array([0.0, 0.0, 1.0])
        u = np.cross(x, ref)
        u /= np.linalg.norm(u)
        v = np.cross(x, u)
        r = 8.0 if "Pelvis" in name or "Spine" in name else 4.0
        b = len(pos)
        for end in (head, tail):
            for du, dv in ((-1, -1), (-1, 1), (1, 1), (1, -1)):
                pos.append(end + r * (du * u + dv * v))
                owner.append(j)
        faces += [[b + 3, b + 2, b + 1, b], [b + 4, b + 5, b + 6, b + 7]]
        faces += [[b + i, b + (i + 1) % 4, b + 4 + (i + 1) % 4, b + 4 + i] for i in range(4)]
    return np.array(pos), np.array(faces), np.array(owner)


def humanoid_xfile(kind: str = "max", pose: str = "bind", up: str = "Z", animation: str = "walk") -> X.XFile:
    """The rig ``kind`` with its frames holding ``pose``, written with
    ``up``, and one AnimationSet of 4800 ticks: ``"walk"`` (a walk cycle
    starting from the ``first_frame`` pose), ``"get_up"`` (starting on its
    back, standing up), or none (``"none"``)."""
    rig = Rig(kind)
    bind, world = rig.frames(pose)
    A = file_axes(up)
    Ai = np.linalg.inv(A)
    fbind = A[None] @ bind @ Ai[None]
    fworld = A[None] @ world @ Ai[None]
    frames = []
    for j, name in enumerate(rig.names):
        p = rig.parents[j]
        local = fworld[j] if p < 0 else np.linalg.solve(fworld[p], fworld[j])
        frames.append(X.XFrame(name, col(local)))        # col: column-vector <-> Direct3D row-vector
        if p >= 0:
            frames[p].children.append(frames[j])
    pos, faces, owner = _tubes(rig, bind)
    m = X.XMesh("Body", (A[:3, :3] @ pos.T).T, np.full(len(faces), 4), faces.reshape(-1))
    if up == "Y":                     # the swap mirrors: keep the faces' winding outward
        m.face_indices = faces[:, ::-1].reshape(-1)
    for j in np.unique(owner).tolist():
        v = np.flatnonzero(owner == j)
        m.skin_weights.append(X.XSkinWeights(rig.names[j], v, np.ones(len(v)), col(np.linalg.inv(fbind[j]))))
    m.skin_header = (1, 1, len(m.skin_weights))
    scene_root = X.XFrame("Scene_Root", np.eye(4), children=[frames[0]], meshes=[m])
    xf = X.XFile(frames=[scene_root], anim_ticks_per_second=TICKS_PER_SECOND)
    if animation != "none":
        xf.animation_sets.append(_anim_set(rig, animation, A, Ai))
    return xf


def _anim_set(rig: Rig, animation: str, A: np.ndarray, Ai: np.ndarray) -> X.XAnimationSet:
    """A walk cycle over 4800 ticks (a key every 800), the first key the
    ``first_frame`` pose, or a get-up (the same, turned -90 about x at the
    root at first, upright at the end); every joint keyed (rotation and
    position)."""
    ticks = np.arange(0.0, 4800.0 + 1.0, 800.0)
    poses = [rig.walk(0.5 + 2.0 * np.pi * t / 4800.0) for t in ticks]
    if animation == "get_up":
        poses = [rig.turned(w, rig.names[0], (1.0, 0.0, 0.0), -90.0 * (1.0 - t / 4800.0)) for w, t in zip(poses, ticks)]
    elif animation != "walk":
        raise ValueError(animation)
    worlds = np.array([A[None] @ w @ Ai[None] for w in poses])
    aset = X.XAnimationSet("GetUp" if animation == "get_up" else "Walk")
    for j, name in enumerate(rig.names):
        p = rig.parents[j]
        local = worlds[:, j] if p < 0 else np.linalg.solve(worlds[:, p], worlds[:, j])
        q = quat.make_continuous(quat.from_mat3(local[:, :3, :3]))
        aset.animations.append(X.XAnimation(None, name, [X.XAnimationKey(0, ticks, key_from_rotation(q)),
                                                       X.XAnimationKey(2, ticks, local[:, :3, 3].copy())]))
    return aset
