# SPDX-License-Identifier: GPL-3.0-or-later
"""The files the glTF checks convert, and what the core says they must show.

:func:`cases` lists every real .X file of the test corpus and the RiTE
samples; :func:`convert_case` converts one to .glb with ``convert`` (the
command line's path) and returns the reference scene (a fresh parse of the
source), the writer's layout of it (where each mesh's vertices and each
clip went: ``io.gltf.from_scene.build``) and the frames to check.
:func:`expected` is the core's evaluation of the source at those frames in
glTF's space, per written primitive; :func:`worst` compares.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from conftest import DATA, SAMPLES

from legacy_skin_io.core import quat, sampling
from legacy_skin_io.io import convert
from legacy_skin_io.io.errors import FormatError, Warnings, largest_deviation
from legacy_skin_io.io.formats import for_path
from legacy_skin_io.io.gltf import from_scene
from legacy_skin_io.scene import Clip, Material, Mesh, Scene, Skeleton, Skin, Source
from legacy_skin_io.scene import evaluate as ev

X = DATA / "x"
FPS = 24.0


def cases() -> list[tuple[str, list[Path]]]:
    """(name, inputs) of every .X file of the corpus and the RiTE samples."""
    out = [(p.relative_to(X).as_posix(), [p]) for p in sorted(X.rglob("*")) if p.suffix.lower() == ".x"]
    for ram in (SAMPLES / "rite" / "humanoid.ram", DATA / "rite" / "contract_example.ram"):
        out.append((ram.relative_to(ram.parents[1]).as_posix(), [ram, *sorted(ram.parent.glob("*.raa"))]))
    return out


@dataclass
class Case:
    name: str
    inputs: list[Path]
    output: Path | None = None
    refused: str = ""                      # why convert refused the file
    loss: float | None = None               # the deviation convert reported (fraction of the model size)
    warnings: list[str] = field(default_factory=list)
    scene: Scene | None = None
    layout: from_scene.Build | None = None

    @property
    def size(self) -> float:
        """The model size in the written file's units."""
        return ev.size(self.scene) * self.layout.back.s


def convert_case(name: str, inputs: list[Path], folder: Path, **write_options) -> Case:
    case = Case(name, inputs, folder / (Path(name).stem + ".glb"))
    warnings = Warnings()
    try:
        convert.convert([str(p) for p in inputs], str(case.output), fps=FPS, write_options=write_options,
                        warnings=warnings)
    except FormatError as err:
        case.refused, case.output = str(err), None
        return case
    case.warnings = [str(w) for w in warnings]
    worst = largest_deviation(warnings)
    case.loss = worst.figure if worst is not None else None
    case.scene = for_path(inputs[0]).read_scene([str(p) for p in inputs], warnings=[])
    case.layout = from_scene.build(case.scene, case.output, warnings=[], fps=FPS, **write_options)
    return case


def clip_frames(clip: Clip) -> np.ndarray:
    """Every whole scene frame of a clip's range (its ends where they fall between frames)."""
    frames, _ = clip.bake_frames(FPS)
    if clip.cycle is not None and clip.cycle[1] - clip.cycle[0] > 0 and len(frames) > 1:
        frames = frames[:-1]
    f0, f1 = clip.frame_range(FPS)
    return np.unique(np.clip(frames, f0, f1))


def runs(case: Case) -> list[tuple[int, Clip | None, np.ndarray, np.ndarray]]:
    """(animation index, clip, scene frames, seconds) to check: the default
    pose, then every written clip at its every frame."""
    out = [(-1, None, np.zeros(1), np.zeros(1))]
    for clip, written in zip(case.scene.clips, case.layout.clips):
        if written.index >= 0:
            frames = clip_frames(clip)
            out.append((written.index, clip, frames, frames / FPS - written.offset))
    return out


def expected(case: Case, clip: Clip | None, frames: np.ndarray) -> tuple[list[np.ndarray], np.ndarray | None]:
    """(per written primitive in the document's order, (F, V_p, 3) positions;
    (F, J, 4, 4) joint world matrices or None) in glTF's space, as the core
    evaluates the source scene."""
    sc, back = case.scene, case.layout.back
    pts = np.stack([back.points(p) for p in ev.evaluate(sc, clip, frames, FPS)])
    starts = np.concatenate(([0], np.cumsum([len(m.positions) for m in sc.meshes])))
    prims = []
    for i, w in sorted(case.layout.meshes.items(), key=lambda kv: kv[1].index):
        prims += [pts[:, starts[i] + src] for src in w.sources]
    worlds = back.matrices(ev.joint_world(sc, clip, frames, FPS)) if sc.skeleton is not None else None
    return prims, worlds


def worst(case: Case, got: list[np.ndarray], want: list[np.ndarray]) -> tuple[float, int, int]:
    """(largest vertex distance / model size, primitive, frame index) between two lists of (F, V, 3)."""
    out = (0.0, -1, -1)
    for k, (a, b) in enumerate(zip(got, want)):
        if a.size:
            d = np.linalg.norm(a - b, axis=-1).max(axis=1) / case.size
            f = int(np.argmax(d))
            if d[f] > out[0]:
                out = (float(d[f]), k, f)
    return out


def joint_error(case: Case, got: np.ndarray, want: np.ndarray) -> float:
    """Largest difference of joint world matrices: translations as a
    fraction of the model size, the 3x3 parts times one model size."""
    J = want.shape[1]
    d_t = np.abs(got[:, :J, :3, 3] - want[:, :, :3, 3]).max(initial=0.0) / case.size
    d_m = np.abs(got[:, :J, :3, :3] - want[:, :, :3, :3]).max(initial=0.0)
    return float(max(d_t, d_m))


_COMPONENTS = {5121: np.uint8, 5123: np.uint16, 5125: np.uint32, 5126: np.float32}
_WIDTHS = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT4": 16}


class Gltf:
    """A written file read back plainly (for what the checks look at in the
    file itself): its JSON and its accessors as arrays."""

    def __init__(self, path: Path):
        import json
        import struct

        data = Path(path).read_bytes()
        if data[:4] == b"glTF":
            n = struct.unpack_from("<I", data, 12)[0]
            self.json = json.loads(data[20:20 + n])
            rest = data[20 + n:]
            self.bin = rest[8:8 + struct.unpack_from("<I", rest, 0)[0]] if rest else b""
        else:
            self.json = json.loads(data)
            buffers = self.json.get("buffers", [])
            self.bin = (Path(path).parent / buffers[0]["uri"]).read_bytes() if buffers else b""

    def accessor(self, i: int) -> np.ndarray:
        a = self.json["accessors"][i]
        v = self.json["bufferViews"][a["bufferView"]]
        dt = np.dtype(_COMPONENTS[a["componentType"]])
        w = _WIDTHS[a["type"]]
        start = v.get("byteOffset", 0) + a.get("byteOffset", 0)
        out = np.frombuffer(self.bin, dtype=dt, count=a["count"] * w, offset=start)
        return out.reshape(a["count"], w) if w > 1 else out


def one_animation(src: Path, k: int, dst: Path) -> Path:
    """A copy of the .glb ``src`` with only its animation ``k`` (-1: none),
    the rest unchanged (Blender's glTF import makes the first animation the
    active action: this is how one animation is played alone, every other
    joint in its default pose)."""
    import json
    import struct

    data = src.read_bytes()
    n = struct.unpack_from("<I", data, 12)[0]
    doc = json.loads(data[20:20 + n])
    anims = doc.pop("animations", [])
    if k >= 0:
        doc["animations"] = [anims[k]]
    text = json.dumps(doc).encode("utf-8")
    text += b" " * ((-len(text)) % 4)
    rest = data[20 + n:]
    dst.write_bytes(struct.pack("<III", 0x46546C67, 2, 20 + len(text) + len(rest))
                    + struct.pack("<II", len(text), 0x4E4F534A) + text + rest)
    return dst


def key_frames(clip: Clip) -> np.ndarray:
    """The scene frames of a clip's own keys (of the joints it animates), within its range."""
    times = [ch.times[ch.starts[k]:ch.starts[k + 1]] for ch in (clip.rotation, clip.translation, clip.scale)
             for k, j in enumerate(ch.targets.tolist()) if clip.animated[j]]
    frames = clip.to_frames(np.unique(np.concatenate(times)), FPS) if times else np.zeros(0)
    f0, f1 = clip.frame_range(FPS)
    return frames[(frames >= f0 - 1e-9) & (frames <= f1 + 1e-9)]


def rot(axis, degrees) -> np.ndarray:
    return quat.to_mat4(quat.from_axis_angle(np.asarray(axis, dtype=np.float64), np.radians(degrees)))


def at(x, y, z) -> np.ndarray:
    m = np.eye(4)
    m[:3, 3] = (x, y, z)
    return m


def hard_scene(*, influences: int = 4, shear: bool = False) -> Scene:
    """The rig of the module doc; ``influences``: the most weights of a
    vertex (5 puts more than glTF's 4 on some); ``shear``: the head's
    default pose (not animated) sheared."""
    names = ["hips", "spine", "head", "prop root", "prop", "tail"]
    parents = [-1, 0, 1, -1, 3, 0]
    local = np.stack([at(0, 0, 1), at(0, 0, 0.5) @ rot((1, 0, 0), 20), at(0, 0, 0.5),
                      at(2, 0, 0) @ np.diag([-1.0, 1.0, 1.0, 1.0]), at(0, 0, 0.3) @ rot((0, 0, 1), 30),
                      at(0, -0.3, 0.2) @ rot((1, 0, 0), -60)])
    if shear:
        local[2, 0, 1] = 0.3
    sk = Skeleton(names, parents, local, np.zeros_like(local), np.ones(len(names), dtype=bool))
    bind = sk.world()
    bind[1] = bind[1] @ rot((0, 1, 0), 15)          # the spine bound otherwise than its default pose
    sk.bind = bind
    # a column of 5 rings of 4 vertices around the spine, quads between them, a pentagon at the top
    ring = np.array([[0.2, 0.2], [-0.2, 0.2], [-0.2, -0.2], [0.2, -0.2]])
    pos = np.concatenate([np.column_stack((ring, np.full(4, z))) for z in np.linspace(0.8, 2.2, 5)])
    pos = np.concatenate((pos, [[0.0, 0.3, 2.3]]))                 # the pentagon's fifth corner
    quads = [(4 * k + i, 4 * k + (i + 1) % 4, 4 * (k + 1) + (i + 1) % 4, 4 * (k + 1) + i)
             for k in range(4) for i in range(4)]
    faces = quads + [(16, 17, 20, 18, 19)]
    sizes = np.array([len(f) for f in faces])
    corners = np.concatenate(faces)
    V = len(pos)
    height = (pos[:, 2] - 0.8) / 1.5
    v, j, w = [], [], []
    for i in range(2, V):                       # vertex 0 has no weight
        shares = np.clip([1 - 2 * height[i], 1 - abs(2 * height[i] - 1), 2 * height[i] - 1], 0, None) + 0.05
        v += [i] * 3
        j += [0, 1, 2]
        w += list(shares)
    v += [1, 1]                                  # half on 'prop', which the skin has no inverse bind for
    j += [0, 4]
    w += [0.5, 0.5]
    if influences > 4:
        for i in (5, 6, 7):
            v += [i, i]
            j += [5, 4]
            w += [0.3, 0.25]
    skin = Skin(np.array([0, 1, 2, 3, 5]), np.linalg.inv(bind[[0, 1, 2, 3, 5]]), np.array(v), np.array(j),
                np.array(w))
    rng = np.random.default_rng(30)
    normals = rng.normal(size=(len(corners), 3))
    normals /= np.linalg.norm(normals, axis=1, keepdims=True)
    body = Mesh("body", pos, sizes, corners, normals=normals, uvs=rng.uniform(0, 1, (len(corners), 2)),
                colors=rng.uniform(0, 1, (V, 4)), face_materials=np.array([0] * 8 + [1] * 9), materials=[0, 1],
                skin=skin)
    # a tetrahedron wound counter-clockwise seen from outside where it is placed, under the mirrored joint
    tet = np.array([[0, 0, 0], [0.2, 0, 0], [0, 0.2, 0], [0, 0, 0.2]], dtype=np.float64)
    placement = np.array([[1, 0.4, 0, 0.1], [0, 1, 0, 0], [0, 0, 1, 0.05], [0, 0, 0, 1]], dtype=np.float64)
    world = sk.world()[4] @ placement
    placed = tet @ world[:3, :3].T + world[:3, 3]
    tris = np.array([[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])
    centre = placed.mean(axis=0)
    for t in tris:                               # counter-clockwise seen from outside, in the world
        n = np.cross(placed[t[1]] - placed[t[0]], placed[t[2]] - placed[t[0]])
        if np.dot(n, placed[t].mean(axis=0) - centre) < 0:
            t[[1, 2]] = t[[2, 1]]
    gem = Mesh("gem", tet, np.full(4, 3), tris.reshape(-1), face_materials=np.zeros(4, np.int64), materials=[1],
               parent=4, matrix=placement)
    mats = [Material("skin", np.array([0.9, 0.7, 0.6, 1.0]), specular_power=20.0),
            Material("glass", np.array([0.2, 0.4, 0.9, 0.5]), texture="textures\\glass.png",
                     emissive=np.array([0.1, 0.0, 0.0]))]
    J = len(names)
    r_spine = np.stack([quat.from_axis_angle([1, 0, 0], np.radians(a)) for a in (20, 190, 35)])
    r_spine = quat.make_continuous(r_spine)
    swing = Clip("swing", sampling.Channels.from_tracks([1], [np.array([0.0, 2400.0, 4800.0])], [r_spine], 4),
                 sampling.Channels.from_tracks([0], [np.array([0.0, 4800.0])], [np.array([[0, 0, 1.0], [0.3, 0, 1.2]])],
                                               3),
                 sampling.Channels.from_tracks([2], [np.array([1200.0, 3600.0])],
                                               [np.array([[1.0, 1.0, 1.0], [1.5, 0.7, 1.0]])], 3),
                 np.isin(np.arange(J), [0, 1, 2]), start=0.0, end=4800.0, ticks_per_second=4800.0)
    r_head = np.stack([quat.IDENTITY, quat.from_axis_angle([0, 1, 0], np.radians(100))])
    nod = Clip("nod", sampling.Channels.from_tracks([2], [np.array([0.0, 10.0])], [r_head], 4),
               sampling.Channels.empty(3), sampling.Channels.empty(3), np.isin(np.arange(J), [2]), start=0.0,
               end=10.0, rotation_mode="nlerp")
    return Scene("hard", sk, [body, gem], mats, [swing, nod], Source("none"))
