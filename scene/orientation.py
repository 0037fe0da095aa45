# SPDX-License-Identifier: GPL-3.0-or-later
"""Which way is up: an automatic Forward/Up decided from a file's own data.

A reader given :class:`AutoAxes` instead of an :class:`~.axes.AxisConversion`
reads the file once with the format's conventional axes (the *probe*),
:func:`detect` looks at that scene, and the file is converted with the
axes chosen (:func:`read_oriented`): one rigid conversion applied at read
time to everything, animation included, so every verification stays exact
and a writer inverting the stored axes writes the file's own space back.

The evidence, strongest first:

* **the skeleton's hips**: a joint from which two similar limb chains leave
  side by side (the legs, or arms hanging down) while the rest of the body
  leaves the other way: the legs are below. Every such joint votes; the
  votes of a quadruped's hips and shoulders add up to "up" while their
  forward and backward parts cancel. The skeleton is judged in each pose
  the file shows (the frames' default pose, each animation's first frame),
  each pose an answer, most answers win; the bind pose breaks a tie and
  decides alone when no pose shown gives an answer (:func:`detect`);
* **the mesh's extent** (characters whose limbs are single joints): a model
  at least twice as long along another axis than the convention's up as
  along any other, with clearly more joints on one side of its root joint
  along that axis;
* otherwise the format's convention. Scenes with nothing skinned or
  animated (props, levels) always keep it: a long object lying on the
  ground says nothing about up.

Axes are named as the importer's Forward/Up options name them (for a
left-handed format: the file's axes once its z is mirrored); the summary
names the file's own axis (:attr:`.model.Orientation.file_up`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core import rig
from . import evaluate
from .axes import AxisConversion, axis_matrix
from .model import Orientation, Scene

#: a vote (or the sum of votes) counts when it is within this cosine of an axis ...
MIN_COSINE = 0.8
#: ... and at least this long, relative to the skeleton's size
MIN_VOTE = 0.25
#: a limb reaches at least this far from its hub (relative to the skeleton's size)
MIN_LIMB = 0.15
#: mesh evidence: the longest extent at least this many times the second
MIN_ELONGATION = 2.0
#: vertices of a mesh looked at, at most (evenly spaced)
SAMPLE = 20_000
#: animations whose first frame is looked at, at most (the first ones)
MAX_CLIPS = 16
#: skeletons with more joints that matter, and hubs with more branches, are no character's
MAX_JOINTS, MAX_BRANCHES = 2000, 16

_NAMES = {(0, 1): "X", (1, 1): "Y", (2, 1): "Z", (0, -1): "-X", (1, -1): "-Y", (2, -1): "-Z"}


def axis_name(v) -> str | None:
    """The name ("X", "-Z", ...) of a signed unit axis vector, else None."""
    v = np.asarray(v, dtype=np.float64)
    i = int(np.argmax(np.abs(v)))
    if not np.isfinite(v).all() or abs(abs(v[i]) - 1.0) > 1e-6 or np.abs(np.delete(v, i)).max() > 1e-6:
        return None
    return _NAMES[(i, 1 if v[i] > 0 else -1)]


def axis_vector(name: str) -> np.ndarray:
    i, sign = next(k for k, n in _NAMES.items() if n == name)
    v = np.zeros(3)
    v[i] = sign
    return v


def forward_for(up: str) -> str:
    """The Forward that goes with an automatic Up: the convention's -Z
    unless Up is on that axis; then Y (a Z-up DirectX file, authored in 3ds
    Max, is Forward Y, Up -Z: it stands and faces the front view)."""
    return "Y" if up in ("Z", "-Z") else "-Z"


@dataclass(frozen=True)
class AutoAxes:
    """Forward/Up to be decided from the file's data (the importers' default
    when *Manual Orientation* is off). ``forward``/``up`` are the format's
    conventional axes, ``mirror_z`` its handedness (as
    :meth:`~.axes.AxisConversion.from_axes` takes them)."""

    scale: float = 1.0
    mirror_z: bool = False
    forward: str = "-Z"
    up: str = "Y"

    def conversion(self, forward: str, up: str) -> AxisConversion:
        return AxisConversion.from_axes(forward, up, self.scale, mirror_z=self.mirror_z)

    @property
    def probe(self) -> AxisConversion:
        """The conversion the file is first read with: the convention."""
        return self.conversion(self.forward, self.up)

    def choose(self, probe_scene: Scene) -> Orientation:
        """The orientation for a scene read with :attr:`probe`."""
        found = detect(probe_scene)
        if found is None:
            return self._named(self.forward, self.up, "the format's convention (nothing in the data "
                                                      "against it)")
        direction, evidence = found
        # the probe's scene axis back to the importer's naming of file axes
        up = axis_name(axis_matrix(self.forward, self.up).T @ direction)
        assert up is not None
        if up == self.up:
            return self._named(self.forward, self.up, evidence)
        return self._named(forward_for(up), up, evidence)

    def _named(self, forward: str, up: str, evidence: str) -> Orientation:
        return Orientation(forward, up, file_axis(self.conversion(forward, up)), True, evidence)


def file_axis(axes: AxisConversion) -> str | None:
    """The file's axis that ``axes`` turns to Blender's up (+Z), if it is one."""
    return axis_name(axes.C.T @ np.array([0.0, 0.0, 1.0]))


def manual(axes: AxisConversion) -> Orientation:
    """The orientation of axes the user (or the format's convention) gave."""
    return Orientation("", "", file_axis(axes), False, "")


def read_oriented(axes, build, warnings, probe=None):
    """A scene read with ``axes``: an :class:`~.axes.AxisConversion` (used as
    given) or :class:`AutoAxes` (decided on the file's data read with the
    convention, then read with the axes chosen). ``build(conversion,
    warnings)`` reads the file's already parsed data into a scene; only the
    warnings of the scene returned reach ``warnings`` (a list, or the
    warnings channel). ``probe(conversion)``, if given, reads just what
    :func:`detect` looks at (the skeleton, mesh positions and skins, which
    joints are animated) more cheaply; without it the convention's whole
    scene is read, and kept when the choice is the convention."""
    if not isinstance(axes, AutoAxes):
        scene = build(axes, warnings)
        scene.source.orientation = manual(axes)
        return scene
    if probe is not None:
        chosen = axes.choose(probe(axes.probe))
        scene = build(axes.conversion(chosen.forward, chosen.up), warnings)
    else:
        first = type(warnings)()
        scene = build(axes.probe, first)
        chosen = axes.choose(scene)
        if (chosen.forward, chosen.up) == (axes.forward, axes.up):
            warnings.extend(first)
        else:
            scene = build(axes.conversion(chosen.forward, chosen.up), warnings)
    scene.source.orientation = chosen
    return scene


# ---------------------------------------------------------------------------
# the evidence

def detect(scene: Scene) -> tuple[np.ndarray, str] | None:
    """The scene-space direction (a signed unit axis) that is up by the
    scene's own data, with a phrase saying why; None when the data give no
    strong evidence (keep the convention).

    The skeleton is judged in each pose the file shows (:func:`_poses`: the
    frames' default pose and each animation's first frame), since any one
    of them may hold the body turned (an animation that starts lying down,
    frames saved at such a frame) or nothing (every frame the identity).
    Each pose with evidence votes and most votes win. The bind pose (where
    the skin's offsets put the joints) breaks a tie, and decides alone when
    no pose shown gives evidence (only the offsets say where the joints
    are); it is no voter otherwise, since it lacks what a frame holding the
    mesh or the skeleton adds to what is shown (an axis conversion, a
    scale)."""
    sk = scene.skeleton
    if sk is None or not len(sk):
        return None
    skinned = [m for m in scene.meshes if m.skin is not None and len(m.skin.joints)]
    animated = np.zeros(len(sk), dtype=bool)
    for c in scene.clips:
        if len(c.animated) == len(sk):
            animated |= c.animated
    if not skinned and not animated.any():
        return None                     # a prop or a level: keep the convention
    # the joints that move what is shown (as the builder picks bones): skin
    # joints and rigid meshes' frames; the animated ones only when nothing is
    # skinned (a skinned mesh's own frame, an end joint move nothing)
    relevant = animated.copy() if not skinned else np.zeros(len(sk), dtype=bool)
    for m in skinned:
        relevant[m.skin.joints] = True
    for m in scene.meshes:
        if m.skin is None and m.parent >= 0:
            relevant[m.parent] = True
    if relevant.sum() > MAX_JOINTS:
        return None
    topo = _Tree(sk.parents, sk.order, relevant)
    poses = _poses(scene, relevant)
    for what, judge in (("skeleton", lambda w, pos, size: _hips(topo, pos, size, sk.names)),
                        ("mesh", lambda w, pos, size: _elongation(scene, topo, w, pos, size, sk.names))):
        votes = [(label, found) for label, w, pos, size in poses
                 if (found := judge(w, pos, size)) is not None]
        if votes:
            return _tally(what, votes)
    return None


def _tally(what: str, votes: list[tuple[str, tuple[np.ndarray, str]]]) -> tuple[np.ndarray, str]:
    """The axis most poses shown stand on (a tie: the bind pose's if it is
    one of them, else the first's; none: the bind pose's), the reason of its
    first voter, and the poses that hold the body otherwise."""
    shown = [(label, found) for label, found in votes if label != BIND]
    bound = next((found for label, found in votes if label == BIND), None)
    if not shown:
        assert bound is not None
        return bound[0], f"decided from the {what}: {bound[1]} (in its bind pose: the poses shown give no evidence)"
    names = [axis_name(found[0]) for _, found in shown]
    most = max(names.count(n) for n in names)
    tied = [n for n in dict.fromkeys(names) if names.count(n) == most]
    tie_break = bound is not None and len(tied) > 1 and axis_name(bound[0]) in tied
    best = axis_name(bound[0]) if tie_break and bound is not None else tied[0]
    winner = shown[names.index(best)][1]
    against = [label for (label, _), n in zip(shown, names) if n != best]
    note = ""
    if against:
        listed = ", ".join(against[:3]) + (" ..." if len(against) > 3 else "")
        note = (f" (in {most} of the {len(shown)} poses shown{', and in the bind pose' if tie_break else ''}; "
                f"{listed} {'holds' if len(against) == 1 else 'hold'} the body otherwise)")
    return winner[0], f"decided from the {what}: {winner[1]}{note}"


#: the name of the bind pose among :func:`_poses`
BIND = "the bind pose"


def _poses(scene: Scene, relevant: np.ndarray) -> list[tuple[str, np.ndarray, np.ndarray, float]]:
    """(name, joint world matrices, joint positions, size of the relevant
    joints) of the poses the skeleton is judged in: the frames' default
    pose, the first frame of each animation (at most :data:`MAX_CLIPS`), the
    bind pose (where the skin gives binds); each where its positions are
    finite and spread."""
    sk = scene.skeleton
    out = []
    with np.errstate(all="ignore"):
        world = sk.world()
        candidates = [("the default pose", world)]
        for c in scene.clips[:MAX_CLIPS]:
            if len(c.animated) == len(sk) and c.animated.any():
                candidates.append((f"the first frame of {c.name!r}", sk.world(c.sample_local(sk.local, [c.start])[0])))
        if sk.has_bind[relevant].any():
            bind = np.where(sk.has_bind[:, None, None], sk.bind, np.nan)
            rig.resolve_binds(sk.parents, sk.order, sk.local, world, bind)
            candidates.append((BIND, bind))
        for label, w in candidates:
            pos = w[:, :3, 3]
            pts = pos[relevant]
            if not np.isfinite(pos).all():
                continue
            size = float(np.linalg.norm(pts.max(0) - pts.min(0)))
            if size > 0:
                out.append((label, w, pos, size))
    return out


class _Tree:
    """Children lists and the number of relevant joints of each subtree."""

    def __init__(self, parents: np.ndarray, order: np.ndarray, relevant: np.ndarray):
        self.parents = parents
        self.order = order                          # parents before children
        self.relevant = relevant
        self.children: list[list[int]] = [[] for _ in range(len(parents))]
        for j, p in enumerate(parents.tolist()):
            if p >= 0:
                self.children[p].append(j)
        self.count = relevant.astype(np.int64)
        for j in order[::-1].tolist():
            p = int(parents[j])
            if p >= 0:
                self.count[p] += self.count[j]

    def hubs(self, least: int = 3) -> np.ndarray:
        """Joints with ``least`` to :data:`MAX_BRANCHES` branches holding relevant joints."""
        p = self.parents[(self.parents >= 0) & (self.count > 0)]
        n = np.bincount(p, minlength=len(self.parents))
        return np.flatnonzero((n >= least) & (n <= MAX_BRANCHES))

    def subtree(self, j: int) -> list[int]:
        out, stack = [], [j]
        while stack:
            k = stack.pop()
            if self.relevant[k]:
                out.append(k)
            stack.extend(c for c in self.children[k] if self.count[c])
        return out


def _hips(tree: _Tree, pos: np.ndarray, size: float, names: list[str]):
    """Votes of every hub whose limb pair goes one way and the rest of the
    body the other: (rest of the body) - (limbs' ends)."""
    total = np.zeros(3)
    hubs = []
    for h in tree.hubs().tolist():
        branches = [c for c in tree.children[h] if tree.count[c]]
        parts = [tree.subtree(c) for c in branches]
        reach = []
        for part in parts:
            d = np.linalg.norm(pos[part] - pos[h], axis=1)
            reach.append(part[int(np.argmax(d))])
        best = None
        for a in range(len(parts)):
            for b in range(a + 1, len(parts)):
                pair = _limb_pair(pos, h, parts[a], parts[b], reach[a], reach[b], size)
                if pair is not None and (best is None or pair[0] > best[0]):
                    best = (pair[0], a, b)
        if best is None:
            continue
        _, a, b = best
        rest = [j for k, part in enumerate(parts) if k not in (a, b) for j in part]
        ends = (pos[reach[a]] + pos[reach[b]]) / 2 - pos[h]
        body = pos[rest].mean(axis=0) - pos[h]
        if not np.dot(body, ends) < 0:
            continue                    # the rest of the body is not on the other side
        total += body - ends
        hubs.append(names[h])
    if not hubs:
        return None
    axis = _axis(total, size)
    if axis is None:
        return None
    shown = ", ".join(repr(n) for n in hubs[:3]) + (" ..." if len(hubs) > 3 else "")
    return axis, f"limbs below {shown}, the rest of the body above"


def _limb_pair(pos, h, part_a, part_b, end_a, end_b, size):
    """(similarity, ...) when two branches look like a pair of limbs: each a
    chain of at least two joints, reaching as far (within a factor 1.5),
    far enough, side by side (at most 45 degrees apart) without being the
    same chain; else None."""
    if len(part_a) < 2 or len(part_b) < 2:
        return None
    va, vb = pos[end_a] - pos[h], pos[end_b] - pos[h]
    la, lb = float(np.linalg.norm(va)), float(np.linalg.norm(vb))
    if min(la, lb) < MIN_LIMB * size or max(la, lb) > 1.5 * min(la, lb):
        return None
    cos = float(np.dot(va, vb)) / (la * lb)
    if cos < np.cos(np.radians(45.0)) or np.linalg.norm(va - vb) < 0.02 * size:
        return None
    return (min(la, lb) / max(la, lb) + cos,)


def _axis(v: np.ndarray, size: float) -> np.ndarray | None:
    length = float(np.linalg.norm(v))
    if not length >= MIN_VOTE * size:
        return None
    i = int(np.argmax(np.abs(v)))
    if abs(v[i]) / length < MIN_COSINE:
        return None
    out = np.zeros(3)
    out[i] = np.sign(v[i])
    return out


def _elongation(scene: Scene, tree: _Tree, world: np.ndarray, pos: np.ndarray, size: float, names: list[str]):
    """A body with limbs (a joint with three branches) much taller along one
    axis than along the others, more of its joints on one side of its root,
    in the pose of the joint world matrices ``world``."""
    if not len(tree.hubs()):
        return None                     # a chain or a single joint: a prop (a sword, a pistol)
    pts = [evaluate.mesh_positions(scene, m, world, world) for m in (_sampled(m) for m in scene.meshes)]
    pts = [p for p in pts if len(p)]
    if not pts:
        return None
    p = np.concatenate(pts)
    if not np.isfinite(p).all():
        return None
    ext = p.max(0) - p.min(0)
    i = int(np.argmax(ext))
    second = float(np.sort(ext)[-2])
    if i == 2 or not ext[i] >= MIN_ELONGATION * second or not second > 0:
        return None                     # tall along the convention's up (its sign is not evidence enough)
    root = int(tree.order[np.flatnonzero(tree.count[tree.order] == tree.count.max())[-1]])
    rel = np.flatnonzero(tree.relevant)
    side = pos[rel, i] - pos[root, i]
    above, below = int((side > 1e-3 * size).sum()), int((side < -1e-3 * size).sum())
    if max(above, below) < 3 or max(above, below) < 2 * min(above, below):
        return None
    out = np.zeros(3)
    out[i] = 1.0 if above > below else -1.0
    return out, (f"{ext[i] / second:.1f} times longer along that axis than across, "
                 f"{max(above, below)} of its joints on that side of {names[root]!r}")


def _sampled(mesh):
    """``mesh`` with at most :data:`SAMPLE` of its vertices (evenly spaced)."""
    V = len(mesh.positions)
    if V <= SAMPLE:
        return mesh
    return evaluate.subset(mesh, np.linspace(0, V - 1, SAMPLE).astype(np.int64))
