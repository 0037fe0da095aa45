# SPDX-License-Identifier: GPL-3.0-or-later
"""Scene -> glTF 2.0: the writing half of the adapter.

Joints are nodes with the translation, rotation and scale of their default
local transforms; a skinned mesh is a root node with a skin of its own (its
joints, its inverse bind matrices); a rigid mesh is a node under its
joint's. Space is glTF's: +Y up, right-handed, the scene's units times the
writer's scale.

What glTF cannot carry is written as close as it can be and measured:
the scene with what was written in its place (the default pose without
shear, the influences kept) is evaluated by the core at the default pose
and every whole frame of every clip, and the largest vertex distance, a
fraction of the model size, is one :class:`..errors.Deviation` naming the
causes (with float32's rounding of coordinates far from the origin, a
bound of it, when that is over :data:`REPORT`).
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from ...core import quat, sampling
from ...scene import AxisConversion, Mesh, Scene, SceneError, Skeleton, Skin
from ...scene.validate import validate
from ..atomic import Batch
from ..errors import Deviation, FormatError, Warnings
from .animation import AnimationWriter, WrittenClip
from .document import Document
from .materials import MaterialWriter
from .meshes import Influences, Written, influences, write_mesh

FORMAT = "gltf"
GENERATOR = "legacy_skin_io"
#: a lossy step is reported when it moves vertices by more than this fraction of the model size
REPORT = 1e-6
#: a default pose matrix is a translation, rotation and scale when recomposing it changes no entry by more
#: than this (relative to its largest)
TRS_EXACT = 1e-12


def default_axes(scale: float = 1.0) -> AxisConversion:
    """glTF (+Y up, +Z forward, right-handed) -> Blender: (x, y, z) -> (x, -z, y), as Blender's glTF add-on reads it."""
    return AxisConversion.from_axes("-Z", "Y", scale)


def writer_axes(scene: Scene, axes: AxisConversion | None = None, scale: float = 1.0) -> AxisConversion:
    """The conversion the writer inverts (``Scene.writer_axes``), the scale
    ``scale`` applied on top (file units = scene units * scale)."""
    base = scene.writer_axes(FORMAT, default_axes(), axes)
    return AxisConversion(base.C, base.s / scale)


def _trs(m: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(translation, unit rotation, scale, the matrices they make) of (..., 4, 4)."""
    t, r, s = sampling.decompose_trs(m)
    r = quat.normalize(r)
    return t, r, s, sampling.compose_trs(t, r, s)


def _node_trs(node: dict, t, r, s) -> dict:
    """``node`` with the properties that are not the default."""
    if np.any(t != 0):
        node["translation"] = [float(x) for x in t]
    if not np.array_equal(r, quat.IDENTITY):
        node["rotation"] = [float(x) for x in r]
    if np.any(s != 1):
        node["scale"] = [float(x) for x in s]
    return node


class Build:
    """One scene as a glTF document, and what it could not carry."""

    def __init__(self, scene: Scene, path: Path, back: AxisConversion, *, fps: float, max_influences: int,
                 embed: bool, warnings: list[str]):
        self.scene = scene
        self.back = back
        self.warnings = warnings
        self.cap = int(max_influences)
        self.fps = float(fps)
        self.doc = Document(GENERATOR)
        self.glb = path.suffix.lower() == ".glb"
        self.mats = MaterialWriter(self.doc, scene, path, embed=embed, glb=self.glb, warnings=warnings)
        self.roots: list[int] = []
        self.reasons: dict[str, str] = {}       # what glTF cannot carry -> where
        self.written_local: np.ndarray | None = None
        self.written_skins: dict[int, Influences] = {}
        self.meshes: dict[int, Written] = {}     # scene mesh -> what was written (for the checks)
        self.clips: list[WrittenClip] = []
        sk = scene.skeleton
        self.J = len(sk) if sk is not None else 0
        self.default_world = sk.world() if self.J else np.zeros((0, 4, 4))
        from ...scene.evaluate import size

        self.size = size(scene)
        self.wrapper: int | None = None
        self.skins = {i: influences(m, self.cap) for i, m in enumerate(scene.meshes)
                      if m.skin is not None and self.J}
        self.joints()
        for i, m in enumerate(scene.meshes):
            self.mesh(i, m)
        writer = AnimationWriter(self.doc, scene, list(range(self.J)), back, fps, warnings)
        self.clips = [writer.write(c) for c in scene.clips] if self.J else []
        if scene.clips and not self.J:
            warnings.append("the scene has animations but no skeleton: animations not written")
        self.doc.add("scenes", {"nodes": self.roots} if self.roots else {})
        self.doc.json["scene"] = 0

    # -- nodes -------------------------------------------------------------
    def joints(self) -> None:
        sk = self.scene.skeleton
        if not self.J:
            return
        local = self.back.matrices(sk.local)
        t, r, s, again = _trs(local)
        err = np.abs(again - local)
        scale = np.maximum(np.abs(local[:, :3, :3]).max(axis=(1, 2)), 1e-300)
        sheared = np.flatnonzero(err.max(axis=(1, 2)) > TRS_EXACT * np.maximum(scale, 1.0))
        self.written_local = sk.local.copy()
        if len(sheared):
            self.written_local[sheared] = self.back.inverse().matrices(again[sheared])
            effect = err[sheared, :3, :3].max(axis=(1, 2)) * self.size * self.back.s + err[sheared, :3, 3].max(axis=1)
            big = sheared[effect > REPORT * self.size * self.back.s]
            if len(big):
                names = ", ".join(sk.names[j] or f"joint {j}" for j in big[:8]) + (" ..." if len(big) > 8 else "")
                self.reasons["shear in the default pose (a node holds translation, rotation and scale)"] = names
        for j in range(self.J):
            node = _node_trs({"name": sk.names[j]} if sk.names[j] else {}, t[j], r[j], s[j])
            self.doc.add("nodes", node)
        parents = sk.parents
        roots = [int(j) for j in np.flatnonzero(parents < 0)]
        for j in range(self.J):
            p = int(parents[j])
            if p >= 0:
                self.doc.json["nodes"][p].setdefault("children", []).append(j)
        skinned = bool(self.skins)
        if any(inf.static for inf in self.skins.values()) or (skinned and len(roots) > 1):
            # one root for every joint (a skin's joints need a common root), and the static joint
            self.wrapper = self.doc.add("nodes", {"name": self.scene.name or "root", "children": roots})
            self.roots.append(self.wrapper)
        else:
            self.roots.extend(roots)

    def _placed(self, m: Mesh) -> np.ndarray:
        """Mesh space -> world at the default pose (scene space)."""
        mw = np.asarray(m.matrix, dtype=np.float64).reshape(4, 4)
        if m.parent >= 0 and self.J:
            mw = self.default_world[int(m.parent)] @ mw
        return mw

    def mesh(self, i: int, m: Mesh) -> None:
        material = self.mats.index
        node: dict = {"name": m.name} if m.name else {}
        inf = self.skins.get(i)
        if inf is not None:
            w = write_mesh(self.doc, m, self.back, fold=None, reverse=False, material=material, influences=inf)
            if w.index < 0:
                return self._no_triangles(m)
            sj = np.asarray(m.skin.joints, dtype=np.int64)
            ibm = self.back.matrices(np.asarray(m.skin.inverse_bind, dtype=np.float64).reshape(-1, 4, 4))
            joints = [int(j) for j in sj]
            if inf.static:
                ibm = np.concatenate((ibm, self.back.matrices(self._placed(m))[None]))
                joints.append(self.wrapper)
            skin = {"joints": joints, "inverseBindMatrices": self.doc.accessor(np.swapaxes(ibm, 1, 2), "MAT4")}
            if m.name:
                skin["name"] = m.name
            node.update(mesh=w.index, skin=self.doc.add("skins", skin))
            self.written_skins[i] = inf
            self.roots.append(self.doc.add("nodes", node))
        else:
            parent = int(m.parent) if self.J and m.parent >= 0 else -1
            matrix = np.asarray(m.matrix, dtype=np.float64).reshape(4, 4)
            t, r, s, again = _trs(self.back.matrices(matrix))
            exact = np.abs(again - self.back.matrices(matrix)).max() <= TRS_EXACT * max(1.0, np.abs(again).max())
            reverse = bool(np.linalg.det(self._placed(m)[:3, :3]) < 0)
            w = write_mesh(self.doc, m, self.back, fold=None if exact else matrix, reverse=reverse,
                           material=material, influences=None)
            if w.index < 0:
                return self._no_triangles(m)
            node["mesh"] = w.index
            if exact:
                _node_trs(node, t, r, s)
            n = self.doc.add("nodes", node)
            if parent >= 0:
                self.doc.json["nodes"][parent].setdefault("children", []).append(n)
            else:
                self.roots.append(n)
        if w.dropped_faces:
            self.warnings.append(f"mesh {m.name!r}: {w.dropped_faces} face(s) with fewer than 3 corners left out")
        self.meshes[i] = w

    def _no_triangles(self, m: Mesh) -> None:
        self.warnings.append(f"mesh {m.name!r} has no face with 3 corners or more: left out")

    # -- what glTF cannot carry ----------------------------------------------
    def lossy(self) -> None:
        """Name the lossy steps and measure what they cost (one Deviation)."""
        capped = {self.scene.meshes[i].name or f"mesh {i}": inf.limited for i, inf in self.written_skins.items()
                  if inf.limited}
        if capped:
            where = ", ".join(f"{n!r} {k}" for n, k in list(capped.items())[:8])
            self.reasons[f"more than {self.cap} weights per vertex (--max-influences; 0 writes them all as "
                         f"JOINTS_1/WEIGHTS_1...): the strongest {self.cap} kept, renormalised"] = where
        figure, where = 0.0, ""
        if self.reasons:
            figure, where = _measure(self.scene, self._as_written(), self.fps, self.size)
        bound = self._float32_bound()
        if bound > REPORT:
            self.reasons["coordinates far larger than the model, which float32 rounds"] = f"up to {bound:.2e}"
            if bound > figure:
                figure, where = bound, "float32 rounding"
        if self.reasons:
            why = "; ".join(f"{r} ({w})" for r, w in self.reasons.items())
            self.warnings.append(Deviation(f"glTF cannot carry {why}: the written file deviates from the scene by "
                                           f"up to {figure:.2e} of the model size ({where})", figure, where))

    def _float32_bound(self) -> float:
        """The largest float32 rounding of a written coordinate (mesh
        positions, translation keys), a fraction of the model size."""
        worst = 0.0
        for m in self.scene.meshes:
            p = self.back.points(np.asarray(m.positions, dtype=np.float64).reshape(-1, 3))
            if len(p):
                worst = max(worst, float(np.abs(p.astype(np.float32) - p).max()))
        for c in self.scene.clips:
            v = self.back.translations(c.translation.values)
            if len(v):
                worst = max(worst, float(np.abs(v.astype(np.float32) - v).max()))
        return worst * np.sqrt(3.0) / (self.size * self.back.s)

    def _as_written(self) -> Scene:
        """The scene with the default pose and the influences as written."""
        sc = self.scene
        sk = sc.skeleton
        skeleton = sk
        if sk is not None and self.written_local is not None:
            skeleton = Skeleton(list(sk.names), sk.parents, self.written_local, sk.bind, sk.has_bind, sk.extras)
        meshes = []
        for i, m in enumerate(sc.meshes):
            inf = self.written_skins.get(i)
            if inf is None:
                meshes.append(m)
                continue
            sj = np.asarray(m.skin.joints, dtype=np.int64)
            outside = np.setdiff1d(np.arange(self.J), sj)
            slots = np.concatenate((sj, outside[:1] if len(outside) else [-1]))   # the static joint: no bind
            v, k = np.nonzero(inf.weights > 0)
            j = slots[inf.joints[v, k]]
            w = inf.weights[v, k].astype(np.float64)
            keep = j >= 0                  # (no joint outside the skin: the vertex has no weight, and stays)
            meshes.append(dataclasses.replace(m, skin=Skin(sj, m.skin.inverse_bind, v[keep], j[keep], w[keep])))
        return dataclasses.replace(sc, skeleton=skeleton, meshes=meshes)


def _measure(scene: Scene, written: Scene, fps: float, size: float) -> tuple[float, str]:
    """Largest vertex distance / ``size`` between ``scene`` and ``written``
    at the default pose and every whole frame of every clip, and where. A
    scene without vertices is its skeleton: the joints' world matrices are
    compared instead (a point one model size from the joint)."""
    from ...scene.evaluate import farthest, joint_world

    if not any(len(m.positions) for m in scene.meshes) and scene.skeleton is not None:
        worst, where = 0.0, ""
        for a, b, frames, name in [(None, None, np.zeros(1), "the default pose")] + \
                [(c, d, c.bake_frames(fps)[0], c.name) for c, d in zip(scene.clips, written.clips)]:
            x, y = joint_world(scene, a, frames, fps), joint_world(written, b, frames, fps)
            d = np.maximum(np.linalg.norm(x[..., :3, 3] - y[..., :3, 3], axis=-1),
                           np.abs(x[..., :3, :3] - y[..., :3, :3]).max(axis=(-1, -2)) * size)
            f, j = np.unravel_index(int(np.argmax(d)), d.shape)
            if d[f, j] > worst:
                worst = float(d[f, j])
                where = f"{name}, joint {scene.skeleton.names[j]!r}"
                where += "" if a is None else f", frame {int(frames[f])}"
        return worst / size, where

    worst, where = farthest(scene, None, written, None, [0.0], fps)[0], "the default pose"
    for a, b in zip(scene.clips, written.clips):
        d, f = farthest(scene, a, written, b, a.bake_frames(fps)[0], fps)
        if d > worst:
            worst, where = d, f"{a.name}, frame {int(f)}"
    return worst / size, where


def build(scene: Scene, path, *, warnings: list[str] | None = None, fps: float = 24.0,
          axes: AxisConversion | None = None, max_influences: int = 4, scale: float = 1.0,
          embed_images: bool = False) -> Build:
    """The document :func:`write_scene` writes for ``scene`` at ``path``,
    with where each mesh and clip went (what was lost measured and
    reported in ``warnings``)."""
    warnings = warnings if warnings is not None else Warnings()
    path = Path(path)
    if not (np.isfinite(fps) and fps > 0):
        raise FormatError(f"fps must be a positive number, not {fps!r}", path=path)
    if not (np.isfinite(scale) and scale > 0):
        raise FormatError(f"scale must be a positive number, not {scale!r}", path=path)
    if not 0 <= int(max_influences) <= 255:
        raise FormatError(f"max influences must be 0 (no limit) to 255, not {max_influences!r}", path=path)
    if path.suffix.lower() not in (".glb", ".gltf"):
        raise FormatError("a glTF file is named .glb or .gltf", path=path)
    back = writer_axes(scene, axes, float(scale)).inverse()
    try:
        validate(scene, fps, bones=0)       # (bones: no limit of baked keys, nothing is baked for Blender)
        out = Build(scene, path, back, fps=fps, max_influences=int(max_influences), embed=bool(embed_images),
                    warnings=warnings)
        out.lossy()
    except SceneError as err:
        raise FormatError(str(err), path=path) from None
    except FormatError as err:
        raise FormatError(err.message, path=path) if err.path is None else err from None
    return out


def write_scene(scene: Scene, path, *, warnings: list[str] | None = None, fps: float = 24.0,
                axes: AxisConversion | None = None, max_influences: int = 4, scale: float = 1.0,
                embed_images: bool = False) -> list[str]:
    """Write ``scene`` as ``path``: a ``.glb``, or a ``.gltf`` with its
    ``<stem>.bin`` beside it (the options of :data:`.options.EXPORT_OPTIONS`),
    converted to glTF's space (the inverse of ``axes``, else of
    :func:`default_axes`; times ``scale``). All files or none are written.
    Returns the paths written."""
    path = Path(path)
    doc = build(scene, path, warnings=warnings, fps=fps, axes=axes, max_influences=max_influences, scale=scale,
                embed_images=embed_images).doc
    if path.suffix.lower() == ".glb":
        with Batch() as batch:
            batch.add(path, doc.glb())
        return [str(path)]
    bin_path = path.with_suffix(".bin")
    text, data = doc.gltf(bin_path.name)
    with Batch() as batch:
        batch.add(path, text)
        if data is not None:
            batch.add(bin_path, data)
    return [str(path)] + ([str(bin_path)] if data is not None else [])
