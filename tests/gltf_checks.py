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

from legacy_skin_io.io import convert
from legacy_skin_io.io.errors import FormatError, Warnings, largest_deviation
from legacy_skin_io.io.formats import for_path
from legacy_skin_io.io.gltf import from_scene
from legacy_skin_io.scene import Clip, Scene
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
