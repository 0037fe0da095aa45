# SPDX-License-Identifier: GPL-3.0-or-later
"""Toy rig JSON <-> scene (the format's adapter; see the package doc)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ...core import quat, rig, sampling
from ...scene import AxisConversion, Clip, Mesh, Scene, Skeleton, Skin, Source
from ..atomic import write_atomic
from ..errors import FormatError, Warnings

FORMAT = "toy"
MODEL, ANIM = ".toyrig", ".toyanim"


#: The file's space: Z up, X forward (right-handed). The format's one declaration of its axes:
#: the importers' default Forward/Up and what convert reads and writes (docs/adapter-contract.md).
FORWARD, UP = "X", "Z"


def default_axes(scale: float = 1.0) -> AxisConversion:
    return AxisConversion.from_axes(FORWARD, UP, scale)


def _load(path, kind: str, warnings) -> dict:
    try:
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
    except OSError as err:
        raise FormatError(f"cannot read file: {err.strerror or err}", path=path) from None
    except json.JSONDecodeError as err:
        raise FormatError(err.msg, path=path, line=err.lineno) from None
    except UnicodeDecodeError:
        raise FormatError("not UTF-8 text", path=path) from None
    if not isinstance(doc, dict) or doc.get("format") != kind:
        raise FormatError(f"not a {kind} file (no \"format\": \"{kind}\")", path=path, line=1)
    known = {"format", "joints", "meshes"} if kind == "toy-rig" else {"format", "name", "tracks"}
    for key in sorted(set(doc) - known):
        warnings.append(f"{Path(path).name}: unknown key {key!r} ignored")
    return doc


def _array(value, shape, what: str, path, dtype=np.float64) -> np.ndarray:
    try:
        a = np.asarray(value, dtype=dtype)
    except (TypeError, ValueError):
        raise FormatError(f"{what}: not an array of numbers", path=path) from None
    if a.ndim != len(shape) or any(n is not None and a.shape[i] != n for i, n in enumerate(shape)):
        if a.size == 0:
            return np.zeros([n or 0 for n in shape], dtype=dtype)
        raise FormatError(f"{what}: expected shape {shape}, got {a.shape}", path=path)
    if dtype == np.float64 and not np.isfinite(a).all():
        raise FormatError(f"{what}: not finite", path=path)
    return a


# ---------------------------------------------------------------------------
# reading

def read_scene(paths, *, axes: AxisConversion | None = None, warnings: list[str] | None = None,
               speed: float = 1.0) -> Scene:
    """A .toyrig and any .toyanim files as one scene (a clip per .toyanim)."""
    warnings = warnings if warnings is not None else Warnings()
    paths = [str(p) for p in paths]
    models = [p for p in paths if p.lower().endswith(MODEL)]
    if len(models) != 1:
        raise FormatError(f"give exactly one {MODEL} model (got {len(models)})")
    path = models[0]
    axes = axes or default_axes()
    doc = _load(path, "toy-rig", warnings)
    joints = doc.get("joints") or []
    try:
        names = [str(j["name"]) for j in joints]
        index = {n: i for i, n in enumerate(names)}
        parents = [-1 if j.get("parent") is None else index[j["parent"]] for j in joints]
    except (KeyError, TypeError) as err:
        raise FormatError(f"joints: bad or unknown joint {err}", path=path) from None
    t = _array([j.get("translation", [0, 0, 0]) for j in joints], (None, 3), "joint translation", path)
    r = _array([j.get("rotation", [0, 0, 0, 1]) for j in joints], (None, 4), "joint rotation", path)
    s = _array([j.get("scale", [1, 1, 1]) for j in joints], (None, 3), "joint scale", path)
    local = axes.matrices(sampling.compose_trs(t, quat.normalize(r), s)) if len(joints) else np.zeros((0, 4, 4))
    J = len(names)
    sk = Skeleton(names, parents, local, np.full((J, 4, 4), np.nan), np.zeros(J, dtype=bool)) if J else None
    meshes = [_mesh(m, k, axes, index, path) for k, m in enumerate(doc.get("meshes") or [])]
    if sk is not None:      # a joint binds where its inverse bind says (meshes are at the origin)
        for m in meshes:
            if m.skin is not None:
                sk.bind[m.skin.joints] = np.linalg.inv(m.skin.inverse_bind)
                sk.has_bind[m.skin.joints] = True
        rig.resolve_binds(sk.parents, sk.order, sk.local, sk.world(), sk.bind)
    scene = Scene(Path(path).stem, sk, meshes, [], [], Source(FORMAT, path, axes))
    anims = [p for p in paths if p != path]
    if anims and sk is None:
        raise FormatError("animations need joints", path=path)
    if anims:
        scene.clips = read_clips(sk, axes, anims, warnings=warnings, speed=speed)
    return scene


def _mesh(m: dict, k: int, axes: AxisConversion, index: dict, path) -> Mesh:
    what = f"mesh {k}"
    pos = _array(m.get("positions", []), (None, 3), f"{what}: positions", path)
    tri = _array(m.get("triangles", []), (None, 3), f"{what}: triangles", path, np.int64)
    if len(tri) and (tri.min() < 0 or tri.max() >= len(pos)):
        raise FormatError(f"{what}: a triangle names a vertex out of range", path=path)
    if axes.mirrors:
        tri = tri[:, ::-1]
    mesh = Mesh(str(m.get("name") or f"mesh{k}"), axes.points(pos), np.full(len(tri), 3, dtype=np.int64),
                tri.reshape(-1).copy())
    skin = m.get("skin")
    if skin:
        try:
            joints = np.array([index[n] for n in skin["joints"]], dtype=np.int64)
            wj = np.array([index[w[1]] for w in skin["weights"]], dtype=np.int64)
        except (KeyError, TypeError, IndexError) as err:
            raise FormatError(f"{what}: skin names an unknown joint {err}", path=path) from None
        ib = axes.matrices(_array(skin["inverse_bind"], (len(joints), 4, 4), f"{what}: inverse_bind", path))
        wv = _array([w[0] for w in skin["weights"]], (None,), f"{what}: weights", path, np.int64)
        ww = _array([w[2] for w in skin["weights"]], (None,), f"{what}: weights", path)
        order = np.argsort(joints)
        mesh.skin = Skin(joints[order], ib[order], wv, wj, ww)
    return mesh


def read_clips(skeleton: Skeleton, axes: AxisConversion, paths, *, playback: str = "ACTION", weight: float = 1.0,
               warnings: list[str] | None = None, speed: float = 1.0) -> list[Clip]:
    """.toyanim files as clips on ``skeleton`` (tracks bound by joint name),
    key times divided by ``speed``."""
    warnings = warnings if warnings is not None else Warnings()
    index = skeleton.index()
    clips = []
    for p in paths:
        doc = _load(p, "toy-anim", warnings)
        rot: tuple[list, list, list] = ([], [], [])
        tra: tuple[list, list, list] = ([], [], [])
        sca: tuple[list, list, list] = ([], [], [])
        animated = np.zeros(len(skeleton), dtype=bool)
        lo, hi = np.inf, -np.inf
        for name, track in (doc.get("tracks") or {}).items():
            j = index.get(name)
            if j is None:
                warnings.append(f"{Path(p).name}: track {name!r} matches no joint, skipped")
                continue
            times = _array(track.get("times", []), (None,), f"track {name!r}: times", p) / float(speed)
            animated[j] = True
            for key, width, into, conv in (("rotations", 4, rot, lambda v: axes.quats(quat.normalize(v))),
                                           ("translations", 3, tra, axes.translations),
                                           ("scales", 3, sca, axes.scales)):
                if key in track:
                    into[0].append(j)
                    into[1].append(times)
                    into[2].append(conv(_array(track[key], (len(times), width), f"track {name!r}: {key}", p)))
            if len(times):
                lo, hi = min(lo, times.min()), max(hi, times.max())
        if not np.isfinite(lo):
            lo = hi = 0.0

        def channels(c, width):
            return sampling.Channels.from_tracks(*c, width) if c[0] else sampling.Channels.empty(width)

        clips.append(Clip(str(doc.get("name") or Path(p).stem), channels(rot, 4), channels(tra, 3),
                          channels(sca, 3), animated, start=float(lo), end=float(hi),
                          ticks_per_second=1.0, rotation_mode="slerp", playback=playback, weight=float(weight)))
    return clips


# ---------------------------------------------------------------------------
# writing

def _dump(doc: dict, path, layout: str) -> None:
    indent = {"COMPACT": None, "INDENTED": 1}.get(layout, 1 if len(json.dumps(doc)) < 100_000 else None)
    target = Path(path)
    if target.exists() and not target.is_file():
        raise FormatError("cannot write file: a folder (or another non-file) has that name", path=path)
    write_atomic(path, [(json.dumps(doc, indent=indent) + "\n").encode("utf-8")])


def _rig(scene: Scene, back: AxisConversion, warnings) -> dict:
    sk = scene.skeleton
    joints, meshes = [], []
    if sk is not None:
        t, r, s = sampling.decompose_trs(back.matrices(sk.local))
        joints = [{"name": n, "parent": None if p < 0 else sk.names[p], "translation": t[j].tolist(),
                   "rotation": r[j].tolist(), "scale": s[j].tolist()}
                  for j, (n, p) in enumerate(zip(sk.names, sk.parents.tolist()))]
    lost = False
    default = sk.world() if sk is not None else None
    for m in scene.meshes:
        sizes = np.asarray(m.face_sizes, dtype=np.int64)
        starts = m.face_starts
        n = np.maximum(sizes - 2, 0)
        face = np.repeat(np.arange(len(sizes)), n)
        i = np.arange(int(n.sum())) - np.repeat(np.cumsum(n) - n, n) + 1
        corner = np.stack((starts[face], starts[face] + i, starts[face] + i + 1), axis=1)
        tri = np.asarray(m.corners, dtype=np.int64)[corner]
        if back.mirrors:
            tri = tri[:, ::-1]
        lost |= m.uvs is not None or m.normals is not None or bool(m.materials)
        # positions where the mesh is placed at the default pose; the inverse binds follow
        mw = np.asarray(m.matrix, dtype=np.float64)
        if m.parent >= 0 and sk is not None:
            mw = default[m.parent] @ mw
        pos = np.asarray(m.positions, dtype=np.float64) @ mw[:3, :3].T + mw[:3, 3]
        out = {"name": m.name, "positions": back.points(pos).tolist(), "triangles": tri.tolist()}
        skin = m.skin
        if skin is None and m.parent >= 0 and sk is not None:      # rigid on its joint
            V = len(pos)
            skin = Skin(np.array([m.parent]), np.asarray(m.matrix, dtype=np.float64)[None], np.arange(V),
                        np.full(V, m.parent), np.ones(V))
        if skin is not None and sk is not None:
            ib = np.asarray(skin.inverse_bind, dtype=np.float64) @ np.linalg.inv(mw)
            out["skin"] = {"joints": [sk.names[j] for j in skin.joints.tolist()],
                           "inverse_bind": back.matrices(ib).tolist(),
                           "weights": [[int(v), sk.names[j], float(w)] for v, j, w in
                                       zip(skin.vertex.tolist(), skin.joint.tolist(), skin.weight.tolist())]}
        meshes.append(out)
    if lost:
        warnings.append("toy rigs carry no UVs, normals or materials: not written")
    return {"format": "toy-rig", "joints": joints, "meshes": meshes}


def _anim(scene: Scene, clip: Clip, back: AxisConversion, fps: float) -> dict:
    """The clip at every whole frame of its range (times in seconds)."""
    sk = scene.skeleton
    frames, times = clip.bake_frames(fps)
    joints = np.flatnonzero(clip.animated)
    local = back.matrices(clip.sample_local(sk.local, times)[:, joints])
    t, r, s = sampling.decompose_trs(local)
    r = quat.make_continuous(r, axis=0)
    seconds = (frames / fps).tolist()
    return {"format": "toy-anim", "name": clip.name,
            "tracks": {sk.names[j]: {"times": seconds, "rotations": r[:, a].tolist(), "translations": t[:, a].tolist(),
                                     "scales": s[:, a].tolist()} for a, j in enumerate(joints.tolist())}}


def write_scene(scene: Scene, path, *, warnings: list[str] | None = None, axes: AxisConversion | None = None,
                fps: float = 24.0, layout: str = "AUTO") -> list[str]:
    """``path`` (.toyrig) and one ``<stem>_<clip>.toyanim`` per clip beside it."""
    warnings = warnings if warnings is not None else Warnings()
    back = scene.writer_axes(FORMAT, default_axes(), axes).inverse()
    path = Path(path)
    anims = [(_anim(scene, c, back, fps), path.with_name(f"{path.stem}_{k}{ANIM}"))
             for k, c in enumerate(scene.clips if scene.skeleton is not None else [])]
    rig = _rig(scene, back, warnings)
    for doc, p in anims:
        _dump(doc, p, layout)
    _dump(rig, path, layout)
    return [str(path)] + [str(p) for _, p in anims]


def write_animation(scene: Scene, clip: Clip, path, *, warnings: list[str] | None = None, fps: float = 24.0,
                    axes: AxisConversion | None = None) -> list[str]:
    if scene.skeleton is None:
        raise FormatError("no skeleton to animate", path=path)
    _dump(_anim(scene, clip, scene.writer_axes(FORMAT, default_axes(), axes).inverse(), fps), path, "AUTO")
    return [str(path)]
