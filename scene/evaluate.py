# SPDX-License-Identifier: GPL-3.0-or-later
"""The verification oracle: what a scene shows at a scene frame, computed
with core/ from the scene's own data (the file's keys through the clip's
sampler), never from what a Blender builder keyed.

* :func:`joint_world` — joint world matrices (F, J, 4, 4) for an action, a
  stack of layers (the RiTE Animator's mergeable/dominant mix,
  ``core.blend``), or the default pose;
* :func:`mesh_positions` — world positions of each mesh for those matrices
  (linear blend skinning with Blender's weight policy: weights divided by
  their sum, unweighted vertices stay where the mesh is placed);
* :func:`evaluate` — both at once: ``evaluate(scene, clips, frames, fps)``;
  :func:`farthest`, the largest distance between two scenes' vertices over
  frames (what a writer measures of what it wrote);
* :func:`corner_normals` — each mesh corner's normal as the RiTE runtime
  skins it (Blender derives its normals from the deformed mesh instead:
  verify reports the difference as information).
"""
from __future__ import annotations

import numpy as np

from ..core import blend, quat, sampling, skinning
from .model import Clip, Mesh, Scene, SceneError


def clip_times(clip: Clip, frames, fps: float) -> np.ndarray:
    """Clip times played at scene ``frames`` (time base and cycle applied)."""
    return clip.wrap(clip.to_times(frames, fps))


def joint_world(scene: Scene, clips: list[Clip] | Clip | None, frames, fps: float = 24.0) -> np.ndarray:
    """Joint world matrices (F, J, 4, 4) at scene ``frames``.

    ``clips``: None (the default pose), one clip (played alone, whatever its
    layer), or a list of layered clips: the RiTE Animator (``core.blend``),
    MERGEABLE ones mixed as the last of them says (``Clip.mix``: weighted
    average per joint, or the 2006 Animator's overwrites in order), DOMINANT
    ones on top; each clip on its own clock (its cycle); translation and
    scale keep the default pose (RiTE animates rotations only)."""
    sk = scene.skeleton
    if sk is None:
        raise SceneError("the scene has no skeleton")
    frames = np.asarray(frames, dtype=np.float64).reshape(-1)
    F = len(frames)
    if clips is None or (isinstance(clips, list) and not clips):
        return np.broadcast_to(sk.world(), (F,) + sk.local.shape).copy()
    if isinstance(clips, Clip):
        local = clips.sample_local(sk.local, clip_times(clips, frames, fps))
        return sk.world(local)
    t0, r0, s0 = sampling.decompose_trs(sk.local)
    merge = [c for c in clips if c.playback != "DOMINANT"]
    dom = [c for c in clips if c.playback == "DOMINANT"]
    J = len(sk)

    def layer(c: Clip):
        rot = c.rotations_at(r0, clip_times(c, frames, fps))
        active = np.zeros(J, dtype=bool)
        active[c.rotation.targets] = True
        return rot, active

    rot = blend.animator(r0, [(*layer(c), c.weight) for c in merge], [layer(c) for c in dom],
                         merge[-1].mix if merge else "WEIGHTED")
    local = sampling.compose_trs(np.broadcast_to(t0, (F, J, 3)), quat.normalize(rot),
                                 np.broadcast_to(s0, (F, J, 3)))
    return sk.world(local)


def skin_influences(mesh: Mesh) -> skinning.Influences:
    sk = mesh.skin
    return skinning.Influences.from_sparse(len(mesh.positions), sk.vertex, sk.joint, sk.weight)


def placement(scene: Scene, mesh: Mesh, world: np.ndarray) -> np.ndarray:
    """Mesh space -> world for joint world matrices (J, 4, 4)."""
    if mesh.parent >= 0:
        return world[mesh.parent] @ mesh.matrix
    return np.asarray(mesh.matrix, dtype=np.float64)


def mesh_positions(scene: Scene, mesh: Mesh, world: np.ndarray, default_world: np.ndarray | None = None,
                   influences: skinning.Influences | None = None) -> np.ndarray:
    """World positions (V, 3) of ``mesh`` for joint world matrices (J, 4, 4).

    Skinned: ``sum_k w_k world_k @ inverse_bind_k @ p`` with Blender's weight
    policy (weights divided by their sum; a vertex without weight stays
    where the mesh is placed at the default pose). Rigid: the placement."""
    p = np.asarray(mesh.positions, dtype=np.float64)
    if mesh.skin is None or scene.skeleton is None:
        if scene.skeleton is None:
            m = np.asarray(mesh.matrix, dtype=np.float64)
        else:
            m = placement(scene, mesh, world)
        return p @ m[:3, :3].T + m[:3, 3]
    if default_world is None:
        default_world = scene.skeleton.world()
    mw = placement(scene, mesh, default_world)
    rest = p @ mw[:3, :3].T + mw[:3, 3]
    inv_mw = np.linalg.inv(mw)
    mats = np.tile(np.eye(4), (len(scene.skeleton), 1, 1))
    sk = mesh.skin
    mats[sk.joints] = world[sk.joints] @ sk.inverse_bind @ inv_mw
    used = mats[sk.joints]
    if (np.abs(used[:, :3, :3] - np.eye(3)).max(initial=0.0) <= 1e-14
            and np.abs(used[:, :3, 3]).max(initial=0.0) <= 1e-14 * max(1.0, float(np.abs(rest).max(initial=0.0)))):
        return rest         # every joint where it binds (an import's default pose): nothing moves
    out, _ = skinning.linear_blend(rest, mats, influences or skin_influences(mesh), "blender")
    return np.array(out, dtype=np.float64)


def subset(mesh: Mesh, vertices) -> Mesh:
    """``mesh`` reduced to ``vertices`` (indices, in that order) with their
    skin weights and no faces: :func:`mesh_positions` of it are those
    vertices' positions (to check a sample of a large mesh)."""
    v = np.asarray(vertices, dtype=np.int64)
    out = Mesh(mesh.name, np.asarray(mesh.positions)[v], np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64),
               parent=mesh.parent, matrix=mesh.matrix)
    if mesh.skin is not None:
        sk = mesh.skin
        new = np.full(len(mesh.positions), -1, dtype=np.int64)
        new[v] = np.arange(len(v))
        w_vertex = np.asarray(sk.vertex, dtype=np.int64)
        keep = new[w_vertex] >= 0
        out.skin = type(sk)(sk.joints, sk.inverse_bind, new[w_vertex[keep]], np.asarray(sk.joint)[keep],
                            np.asarray(sk.weight)[keep])
    return out


def evaluate(scene: Scene, clips: list[Clip] | Clip | None, frames, fps: float = 24.0) -> list[np.ndarray]:
    """World positions of every mesh at every scene frame: a list (one per
    frame) of lists (one per mesh) of (V, 3) arrays, concatenated per frame
    into (V_total, 3)."""
    frames = np.asarray(frames, dtype=np.float64).reshape(-1)
    if scene.skeleton is None:
        pts = [mesh_positions(scene, m, np.zeros((0, 4, 4))) for m in scene.meshes]
        one = np.concatenate(pts) if pts else np.zeros((0, 3))
        return [one for _ in frames]
    worlds = joint_world(scene, clips, frames, fps)
    default = scene.skeleton.world()
    infl: dict = {}
    out = []
    for w in worlds:
        pts = []
        for i, m in enumerate(scene.meshes):
            if m.skin is not None and i not in infl and len(frames) > 1:
                infl[i] = skin_influences(m)          # padded once for all frames
            pts.append(mesh_positions(scene, m, w, default, infl.get(i)))
        out.append(np.concatenate(pts) if pts else np.zeros((0, 3)))
    return out


def farthest(scene: Scene, clip: Clip | None, other: Scene, other_clip: Clip | None, frames,
             fps: float = 24.0, shift: float = 0.0) -> tuple[float, float]:
    """(the largest distance between a vertex of ``scene`` playing ``clip``
    and the same vertex of ``other`` playing ``other_clip`` (None: the
    default pose), the frame where it is) over scene ``frames`` of
    ``other_clip`` (``clip`` at ``shift`` frames earlier), evaluated 32
    frames at a time (a bounded number in memory). Meshes of different
    sizes are not compared."""
    frames = np.asarray(frames, dtype=np.float64).reshape(-1)
    worst, at = 0.0, float(frames[0]) if len(frames) else 0.0
    for lo in range(0, len(frames), 32):
        part = frames[lo:lo + 32]
        for f, a, b in zip(part, evaluate(scene, clip, part - shift, fps), evaluate(other, other_clip, part, fps)):
            if len(a) and a.shape == b.shape:
                d = float(np.linalg.norm(a - b, axis=1).max())
                if d > worst:
                    worst, at = d, float(f)
    return worst, at


def corner_normals(scene: Scene, mesh: Mesh, world: np.ndarray, default_world: np.ndarray | None = None,
                   influences: skinning.Influences | None = None) -> np.ndarray | None:
    """World normals (L, 3) of ``mesh``'s corners for joint world matrices
    (J, 4, 4), as the RiTE runtime skins them (``Mesh.transformVertices``):
    each corner's normal turned by the weighted sum of its vertex's joints'
    rotations (``sum_k w_k R_k n``), normalised here only to give a
    direction (the runtime does not renormalise). None for a mesh without
    normals."""
    if mesh.normals is None or not len(mesh.normals):
        return None
    n = np.asarray(mesh.normals, dtype=np.float64)
    if mesh.skin is None or scene.skeleton is None:
        m = placement(scene, mesh, world) if scene.skeleton is not None else np.asarray(mesh.matrix)
        out = n @ np.linalg.inv(m[:3, :3])
    else:
        if default_world is None:
            default_world = scene.skeleton.world()
        mw = placement(scene, mesh, default_world)
        sk = mesh.skin
        mats = np.tile(np.eye(4), (len(scene.skeleton), 1, 1))
        mats[sk.joints] = world[sk.joints] @ sk.inverse_bind @ np.linalg.inv(mw)
        # the rotation parts' inverse transpose (the rotations themselves for rigid joints)
        normal_mats = np.linalg.inv(mats[:, :3, :3]).transpose(0, 2, 1)
        infl = influences or skin_influences(mesh)
        w, _ = infl.policy_weights("blender")
        per_vertex = np.einsum("vk,vkij->vij", w, normal_mats[infl.joints])
        rest = n @ np.linalg.inv(mw[:3, :3])
        out = np.einsum("cij,cj->ci", per_vertex[np.asarray(mesh.corners, dtype=np.int64)], rest)
    length = np.linalg.norm(out, axis=1, keepdims=True)
    return out / np.where(length > 0, length, 1.0)


def default_points(scene: Scene) -> np.ndarray:
    """World positions (V_total, 3) of every mesh at the default pose."""
    return evaluate(scene, None, [0.0])[0]


def size(scene: Scene, points: np.ndarray | None = None) -> float:
    """Diagonal of the bounding box of every mesh at the default pose
    (``points``: :func:`default_points` when already known; the joints
    when there is no mesh); 1.0 for an empty scene."""
    pts = [p for p in [default_points(scene) if points is None else points] if len(p)]
    if not pts and scene.skeleton is not None and len(scene.skeleton):
        pts = [scene.skeleton.world()[:, :3, 3]]
    if not pts:
        return 1.0
    p = np.concatenate(pts)
    d = float(np.linalg.norm(p.max(0) - p.min(0)))
    return d if d > 0 else 1.0
