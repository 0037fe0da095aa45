# SPDX-License-Identifier: GPL-3.0-or-later
"""RiTE RAM/RAA -> scene: the reading half of the adapter (the RiTE
conventions it applies are listed in :mod:`.adapter`)."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np

from ...core import quat, sampling
from ...scene import AxisConversion, Clip, Material, Mesh, Scene, SceneError, Skeleton, Skin, Source
from ...scene.orientation import AutoAxes, read_oriented
from ..errors import FormatError, Warnings
from .model import RaaAnimation, RamModel
from .names import joint_index
from .runtime import RiteClip, rite_local

FORMAT = "rite"
#: Default axes: RiTE files are Y-up (Maya), Blender is Z-up.
DEFAULT_FORWARD, DEFAULT_UP = "-Z", "Y"
PALETTE = [(0.8, 0.62, 0.5), (0.25, 0.4, 0.7), (0.3, 0.3, 0.32), (0.15, 0.1, 0.08), (0.6, 0.6, 0.2)]


def default_axes(scale: float = 1.0) -> AxisConversion:
    return AxisConversion.from_axes(DEFAULT_FORWARD, DEFAULT_UP, scale)


# ---------------------------------------------------------------------------
# skeleton and mesh

def skeleton_from_ram(ram: RamModel, axes: AxisConversion) -> Skeleton:
    names = [j.name for j in ram.joints]
    ori = np.array([j.orientation for j in ram.joints], dtype=np.float64).reshape(-1, 4)
    tr = np.array([j.translation for j in ram.joints], dtype=np.float64).reshape(-1, 3)
    rot = np.array([j.rotation for j in ram.joints], dtype=np.float64).reshape(-1, 4)
    local = axes.matrices(rite_local(ori, tr, rot))
    parents = np.array([j.parent for j in ram.joints], dtype=np.int64)
    ids = ram.joint_ids if ram.joint_ids is not None else np.arange(len(names))
    sk = Skeleton(names, parents, local, np.zeros_like(local), np.ones(len(names), dtype=bool),
                  extras={"rite": {"orientation": ori.tolist(), "translation": tr.tolist(),
                                   "rotation": rot.tolist(), "ids": [int(i) for i in ids]}})
    sk.bind = sk.world()   # RiTE binds in the pose the file describes
    return sk


def mesh_from_ram(ram: RamModel, axes: AxisConversion, name: str, first_material: int = 0) \
        -> tuple[Mesh, list[Material]]:
    """The RAM's triangle mesh in scene space, one material per SHADER id."""
    tv = ram.tri_vertices
    T = len(tv)
    corners = tv.reshape(-1)
    local = np.tile(np.arange(3), T)
    if axes.mirrors:       # a reflection turns the winding over
        local = 2 - local
    corner_src = np.repeat(np.arange(T) * 3, 3) + local
    corners = corners[corner_src]
    normals = uvs = None
    if ram.tri_normals is not None and len(ram.normals):
        n = axes.directions(ram.normals)              # each distinct normal once, then per corner
        length = np.linalg.norm(n, axis=1, keepdims=True)
        normals = (n / np.where(length > 0, length, 1.0))[ram.tri_normals.reshape(-1)[corner_src]]
    if ram.tri_uvs is not None and len(ram.uvs):
        uvs = ram.uvs[ram.tri_uvs.reshape(-1)[corner_src]]
    shader_ids, face_mat = np.unique(ram.tri_shader, return_inverse=True)
    materials = []
    for k, sid in enumerate(shader_ids.tolist()):
        rgb = PALETTE[k % len(PALETTE)]
        materials.append(Material(f"{name}_shader{sid}", color=np.array([*rgb, 1.0]),
                                  extras={"rite_shader": int(sid)}))
    # every RiTE joint has a bind pose and may be animated: all of them skin
    # (and become bones), whether or not a vertex is weighted to them
    joints = np.arange(len(ram.joints), dtype=np.int64)
    mesh = Mesh(name, axes.points(ram.positions), np.full(T, 3, dtype=np.int64), corners,
                normals=normals, uvs=uvs, face_materials=face_mat.astype(np.int64),
                materials=list(range(first_material, first_material + len(materials))))
    mesh.skin = Skin(joints, np.zeros((len(joints), 4, 4)), ram.weight_vertex.copy(), ram.weight_joint.copy(),
                     ram.weight_value.copy())
    return mesh, materials


def scene_from_ram(ram: RamModel, *, path: str = "", axes: AxisConversion | None = None,
                   warnings: list[str] | None = None) -> Scene:
    """A RAM as a scene: skeleton (bind = the file's pose), one skinned mesh."""
    axes = axes or default_axes()
    name = ram.mesh_name or (Path(path).stem if path else "rite")
    sk = skeleton_from_ram(ram, axes)
    mesh, mats = mesh_from_ram(ram, axes, name)
    mesh.skin.inverse_bind = np.linalg.inv(sk.bind[mesh.skin.joints]) if len(mesh.skin.joints) else \
        np.zeros((0, 4, 4))
    scene = Scene(name, sk, [mesh], mats, [], Source(FORMAT, str(path), axes),
                  extras={"rite": {"mesh_name": ram.mesh_name}})
    if warnings is not None:
        _weight_warnings(ram, warnings)
    return scene


def _weight_warnings(ram: RamModel, warnings: list[str]) -> None:
    V = len(ram.positions)
    if len(ram.weight_vertex):
        total = np.bincount(ram.weight_vertex, weights=ram.weight_value, minlength=V)
        weighted = np.bincount(ram.weight_vertex, minlength=V) > 0
        off = weighted & (np.abs(total - 1.0) > 1e-4)
        if off.any():
            # at the bind pose every joint's matrix is the identity: the runtime puts a vertex at sum(w) * p
            p = ram.positions
            size = float(np.linalg.norm(p.max(0) - p.min(0))) or 1.0
            dev = float((np.abs(total[off] - 1.0) * np.linalg.norm(p[off], axis=1)).max()) / size
            warnings.append(f"{int(off.sum())} vertices have weights that do not sum to 1 (sums "
                            f"{total[off].min():.3g} to {total[off].max():.3g}): Blender and the core divide "
                            f"them by their sum; the RiTE runtime uses them as given, which puts those vertices "
                            f"up to {dev:.3g} of the model size elsewhere at the bind pose")
    unweighted = V - int(np.count_nonzero(np.bincount(ram.weight_vertex, minlength=V))) if V else 0
    if unweighted:
        warnings.append(f"{unweighted} vertices have no weights (they stay at their bind position in Blender)")


# ---------------------------------------------------------------------------
# animation

def rite_joints(skeleton: Skeleton, axes: AxisConversion) -> tuple[np.ndarray, np.ndarray]:
    """(orientation (J, 4), bind rotation (J, 4)) of each joint in file space:
    the RAM's values for a RiTE skeleton; for any other skeleton the joint's
    default local rotation as orientation and the identity as bind rotation
    (keys then rotate relative to the default pose)."""
    d = skeleton.extras.get("rite")
    if d and len(d.get("orientation", ())) == len(skeleton):
        return np.array(d["orientation"], dtype=np.float64), np.array(d["rotation"], dtype=np.float64)
    back = axes.inverse()
    r = sampling.decompose_trs(back.matrices(skeleton.local))[1]
    return r, np.tile(quat.IDENTITY, (len(skeleton), 1))


def bind_tracks(names: list[str], anim: RaaAnimation, warnings: list[str],
                ids: list[int] | None = None) -> list[tuple[int, object]]:
    """(joint, track) pairs: by joint name first; a track whose name matches
    no joint binds by its joint id to the joint with that RAM id (``ids``:
    the file's joint ids; none for a rig that did not come from a RAM) if no
    track claims that joint by name, with a warning; the rest are reported
    and skipped. A track bound by name whose joint id is another joint's is
    reported too: the RiTE runtime binds by id."""
    # by the rig's own names, or as the writer respelt them (an animation written from this rig)
    by_name = joint_index(names, [tr.joint_name for tr in anim.tracks])
    by_id = {int(v): i for i, v in enumerate(ids)} if ids is not None else {}
    claimed = {by_name[tr.joint_name] for tr in anim.tracks if tr.joint_name in by_name}
    out, skipped, by_ids, clashes = [], [], [], []
    for tr in anim.tracks:
        j = by_name.get(tr.joint_name)
        if j is None:
            k = by_id.get(int(tr.joint_id))
            if k is not None and k not in claimed:
                j = k
                claimed.add(k)
                by_ids.append(f"{tr.joint_name!r} -> {names[k]!r} (id {int(tr.joint_id)})")
        else:
            k = by_id.get(int(tr.joint_id))
            if k is not None and k != j:
                clashes.append(f"{tr.joint_name!r} (joint id {int(tr.joint_id)} is {names[k]!r})")
        if j is None:
            skipped.append(tr.joint_name)
            continue
        out.append((j, tr))
    if by_ids:
        warnings.append(f"{anim.name}: {len(by_ids)} track(s) bound by joint id, their names match no joint: "
                        f"{', '.join(by_ids[:6])}{' ...' if len(by_ids) > 6 else ''}")
    if clashes:
        warnings.append(f"{anim.name}: {len(clashes)} track(s) whose name and joint id name different joints, "
                        f"bound by name (the RiTE runtime binds by id and would animate the other joint): "
                        f"{', '.join(clashes[:6])}{' ...' if len(clashes) > 6 else ''}")
    if skipped:
        warnings.append(f"{anim.name}: {len(skipped)} track(s) match no joint of the model by name or id, "
                        f"skipped: {', '.join(skipped[:10])}{' ...' if len(skipped) > 10 else ''}")
    joints = [j for j, _ in out]
    if len(set(joints)) != len(joints):
        warnings.append(f"{anim.name}: several tracks animate the same joint; the last one wins")
        last = {j: k for k, (j, _) in enumerate(out)}
        out = [p for k, p in enumerate(out) if last[p[0]] == k]
    return out


def clip_from_raa(skeleton: Skeleton, axes: AxisConversion, anim: RaaAnimation, *, playback: str = "ACTION",
                  weight: float = 1.0, mix: str = "WEIGHTED", warnings: list[str] | None = None) -> Clip:
    """An RAA as a clip on ``skeleton`` (whose joints' file-space
    orientation comes from :func:`rite_joints`); ``mix``: how mergeable
    layers combine (``scene.Clip.mix``)."""
    warnings = warnings if warnings is not None else Warnings()
    d = skeleton.extras.get("rite") or {}
    ids = d.get("ids") if len(d.get("ids", ())) == len(skeleton) else None
    pairs = bind_tracks(list(skeleton.names), anim, warnings, ids)
    ori, _ = rite_joints(skeleton, axes)
    ori = quat.normalize(ori)
    joints = np.array([j for j, _ in pairs], dtype=np.int64)
    frames = [np.asarray(tr.frames, dtype=np.float64) for _, tr in pairs]
    rots = [axes.quats(quat.mul(ori[j], np.asarray(tr.rotations, dtype=np.float64))) for j, tr in pairs]
    try:
        rclip = RiteClip.from_tracks(anim.frame_count, frames, rots)
    except SceneError as err:
        raise FormatError(f"{anim.name}: {err}") from None
    J = len(skeleton)
    animated = np.zeros(J, dtype=bool)
    animated[joints] = True
    n = int(anim.frame_count)
    rotation = sampling.Channels(rclip.times, rclip.rotations, rclip.starts, rclip.track_of_key, joints)
    clip = Clip(anim.name, rotation, sampling.Channels.empty(3), sampling.Channels.empty(3), animated,
                start=0.0, end=float(max(n - 1, 0)), ticks_per_second=None,
                sampler=rclip, cycle=(1.0, float(n)) if n >= 2 else None,
                playback=playback, weight=float(weight), mix=mix,
                extras={"rite": {"frames": n, "frames_given": bool(anim.frame_count_given)}})
    clip.extras["rite"]["keys"] = key_signs(clip, skeleton)
    return clip


def key_signs(clip: Clip, skeleton: Skeleton) -> dict[str, list[list[int]]]:
    """{joint name: [[frame, sign], ...]}: each file key's frame and the sign
    that turns the clip's rotation there, made sign-continuous along the
    frames (``Clip.baked_rotations`` of an ACTION clip, whatever the clip's
    layer: the hemisphere of a fixed rotation is no stable reference for
    rotations near 180 degrees) back into the file's quaternion."""
    r0 = np.tile(quat.IDENTITY, (len(skeleton), 1))
    times, baked = replace(clip, playback="ACTION").baked_rotations(r0, 24.0)   # RiTE clips count frames: any fps
    ch = clip.rotation
    out = {}
    for t, j in enumerate(ch.targets):
        lo, hi = ch.starts[t], ch.starts[t + 1]
        frames = ch.times[lo:hi]
        k = np.searchsorted(times, frames)
        k = np.clip(k, 0, len(times) - 1)
        signs = np.where(np.sum(baked[k, j] * ch.values[lo:hi], axis=1) < 0, -1, 1)
        out[skeleton.names[int(j)]] = [[int(f), int(sg)] for f, sg in zip(frames, signs)]
    return out


def read_scene(paths, *, axes: AxisConversion | AutoAxes | None = None,
               warnings: list[str] | None = None) -> Scene:
    """A .ram and any number of .raa files as one scene (a clip per .raa).
    ``axes``: None for RiTE's Y-up, or :class:`AutoAxes` to decide from the
    model's data (the .raa files follow the model's axes)."""
    from .ram_reader import read_ram

    warnings = warnings if warnings is not None else Warnings()
    paths = [str(p) for p in paths]
    models = [p for p in paths if Path(p).suffix.lower() == ".ram"]
    if len(models) != 1:        # named: the first file given, or the second model
        raise FormatError(f"give exactly one .ram model (got {len(models)})",
                          path=models[1] if len(models) > 1 else paths[0] if paths else None)
    ram = read_ram(models[0], warnings=warnings)
    scene = read_oriented(axes or default_axes(),
                          lambda conv, sink: scene_from_ram(ram, path=models[0], axes=conv, warnings=sink), warnings)
    scene.clips = read_clips(scene.skeleton, scene.source.axes, [p for p in paths if p not in models],
                             warnings=warnings)
    return scene


def read_clips(skeleton: Skeleton, axes: AxisConversion, paths, *, playback: str = "ACTION", weight: float = 1.0,
               mix: str = "WEIGHTED", warnings: list[str] | None = None) -> list[Clip]:
    """.raa files as clips on ``skeleton`` (bound by name, then id); ``mix``:
    the RiTE animation import's option (``options.ANIM_IMPORT_OPTIONS``)."""
    from .raa_reader import read_raa

    warnings = warnings if warnings is not None else Warnings()
    clips = []
    for p in paths:
        anim = read_raa(p, warnings=warnings)
        clip = clip_from_raa(skeleton, axes, anim, playback=playback, weight=weight, mix=mix, warnings=warnings)
        if not len(clip.rotation.targets) and anim.tracks:
            raise FormatError("no track matches a joint of the armature", path=p)
        clips.append(clip)
    return clips
