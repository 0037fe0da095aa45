# SPDX-License-Identifier: GPL-3.0-or-later
"""``verify --report DIR``: the verification as a page people read.

``DIR/index.html`` (``operators/report_page.py``) holds the files, options,
versions and the verdict, then per animation a plot of the error per frame
and a strip of rendered frames (the first, the worst, the last; Cycles on
the CPU through ``operators/render.py``) beside it as ``DIR/frames_N.png``.
Each picture shows Blender's evaluated mesh (its own materials) and, side
by side with it, the core's evaluation of the file (``scene.evaluate`` on a fresh
parse, never read back from Blender): a second mesh with the same faces at
the core's positions, each vertex coloured by its distance to Blender's
(green within a tenth of the tolerance, amber at it, red over it).
"""
from __future__ import annotations

import ctypes
import datetime
import os
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import bpy
import numpy as np

from ..io.atomic import write_atomic
from ..scene import evaluate
from . import fcurves, mesh_arrays, metadata, render, report_page
from .verify import Report, evaluated_vertices

#: the core's copy stands beside Blender's mesh, this many times the figure's width away
GAP = 1.15
#: per-vertex colours of the core's copy (linear RGB) by distance to Blender's vertex
#: over the tolerance: within a tenth, at the tolerance, ten times over it or more
GOOD, AT, BAD = (0.10, 0.45, 0.16), (1.0, 0.62, 0.02), (0.80, 0.04, 0.03)


def error_colours(distance: np.ndarray, tolerance: float) -> np.ndarray:
    """(V, 4) RGBA: green up to a tenth of ``tolerance``, to amber at it, to
    red at ten times it (log scale in between)."""
    q = np.log10(np.maximum(distance / max(tolerance, 1e-300), 1e-30))      # -1 .. 0 .. 1
    t_low = np.clip(q + 1.0, 0.0, 1.0)[:, None]
    t_high = np.clip(q, 0.0, 1.0)[:, None]
    good, at, bad = (np.array(c) for c in (GOOD, AT, BAD))
    rgb = np.where(q[:, None] <= 0.0, good + (at - good) * t_low, at + (bad - at) * t_high)
    return np.hstack([rgb, np.ones((len(q), 1))])


@contextmanager
def quiet():
    """Blender's own lines on stdout ("Saved: ...", "Info: Saved as ...")
    silenced: file descriptor 1 goes to the null device meanwhile (C code
    writes there directly)."""
    sys.stdout.flush()
    try:
        saved = os.dup(1)
    except OSError:          # no file descriptor 1 (an embedded interpreter): nothing to silence
        yield
        return
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 1)
            try:
                yield
            finally:
                _flush_c_stdout()
                sys.stdout.flush()
    finally:
        os.dup2(saved, 1)
        os.close(saved)


def _flush_c_stdout() -> None:
    try:
        ctypes.CDLL(None).fflush(None)
    except (OSError, AttributeError, TypeError):      # no C library to ask (Windows): nothing buffered there
        pass


class CoreCopy:
    """The core's evaluation as meshes beside Blender's: one per built mesh,
    with its faces, at the core's positions moved by ``offset`` (world
    space), each vertex coloured by its distance to Blender's evaluated
    vertex (:func:`error_colours`)."""

    def __init__(self, built, reference, tolerance: float, offset):
        counts = [len(m.positions) for m in reference.meshes]
        self.starts = np.concatenate(([0], np.cumsum(counts))).astype(int)
        self.tolerance = tolerance
        self.offset = np.asarray(offset, dtype=np.float64)
        self.objects: list[tuple[int, Any, Any]] = []
        mat: Any = bpy.data.materials.new("CoreEvaluation")
        self.material = mat
        if hasattr(mat, "use_nodes") and not mat.use_nodes:
            mat.use_nodes = True
        nodes = mat.node_tree.nodes
        nodes.clear()
        attr: Any = nodes.new("ShaderNodeAttribute")
        attr.attribute_name = "core_error"
        bsdf: Any = nodes.new("ShaderNodeBsdfDiffuse")
        out = nodes.new("ShaderNodeOutputMaterial")
        mat.node_tree.links.new(attr.outputs["Color"], bsdf.inputs["Color"])
        mat.node_tree.links.new(bsdf.outputs["BSDF"], out.inputs["Surface"])
        scene = bpy.context.scene
        for i, obj in sorted(built.meshes.items()):
            me = _same_faces(obj.data, f"core_{obj.name}")
            me.materials.append(mat)
            me.color_attributes.new("core_error", "FLOAT_COLOR", "POINT")
            ob: Any = bpy.data.objects.new(f"core_{obj.name}", me)
            scene.collection.objects.link(ob)
            self.objects.append((i, ob, obj))

    def show(self, context, positions: np.ndarray) -> None:
        """The copy at ``positions`` (every reference mesh's vertices,
        concatenated, world space), coloured against Blender's meshes as
        they are evaluated now."""
        for i, ob, blender in self.objects:
            want = positions[self.starts[i]:self.starts[i + 1]]
            vertex = metadata.load_weld(blender.data)
            err = np.linalg.norm(evaluated_vertices(context, blender, vertex) - want, axis=1)
            if vertex is not None:      # welded: each Blender vertex where its first file vertex is, its worst error
                first = np.zeros(len(blender.data.vertices), dtype=np.int64)
                first[vertex[::-1]] = np.arange(len(vertex))[::-1]
                worst = np.zeros(len(first))
                np.maximum.at(worst, vertex, err)
                want, err = want[first], worst
            me = ob.data
            me.vertices.foreach_set("co", np.ascontiguousarray(want + self.offset, dtype=np.float32).reshape(-1))
            colours = error_colours(err, self.tolerance)
            me.color_attributes["core_error"].data.foreach_set("color", colours.astype(np.float32).reshape(-1))
            me.update()

    def remove(self) -> None:
        for _, ob, _ in self.objects:
            me = ob.data
            bpy.data.objects.remove(ob)
            bpy.data.meshes.remove(me)
        self.objects = []
        bpy.data.materials.remove(self.material)


def _same_faces(src, name: str):
    """A new mesh with ``src``'s vertices and faces (positions to be set)."""
    corner = mesh_arrays.corner_vertices(src)
    loop_start = np.empty(len(src.polygons), dtype=np.int32)
    src.polygons.foreach_get("loop_start", loop_start)
    me: Any = bpy.data.meshes.new(name)
    me.vertices.add(len(src.vertices))
    me.loops.add(len(corner))
    me.polygons.add(len(loop_start))
    me.loops.foreach_set("vertex_index", corner)
    me.polygons.foreach_set("loop_start", loop_start)
    me.vertices.foreach_set("co", mesh_arrays.positions(src).reshape(-1))
    me.update(calc_edges=True)
    return me


def picks(rep: Report) -> list[tuple[float, str]]:
    """The frames a strip shows: the first, the worst, the last (each once,
    its roles joined)."""
    if not rep.frames:
        return []
    worst = rep.worst
    roles: dict[float, list[str]] = {}
    for f, role in ((rep.frames[0].frame, "first"), (worst.frame if worst else rep.frames[0].frame, "worst"),
                    (rep.frames[-1].frame, "last")):
        roles.setdefault(f, []).append(role)
    return sorted((f, ", ".join(r)) for f, r in roles.items())


def _play(built, reference, clips) -> None:
    """Make Blender play what ``scene.evaluate`` played: a clip's action (the
    layer stack and the default pose play as the import left them)."""
    if clips is None or isinstance(clips, (list, tuple)) or built.armature is None:
        return
    for (action, slot, _), clip in zip(built.actions, reference.clips):
        if clip is clips:
            fcurves.assign_action(built.armature, action, slot)
            return


def _beside(points: np.ndarray) -> np.ndarray:
    """Where the core's copy goes: to the camera's right of Blender's
    figure (``render.VIEW``), :data:`GAP` times the figure's width away."""
    view = -np.asarray(render.VIEW, dtype=np.float64)
    right = np.cross(view, (0.0, 0.0, 1.0))
    right /= np.linalg.norm(right) or 1.0
    along = points @ right if len(points) else np.zeros(1)
    return right * GAP * max(float(along.max() - along.min()), 1e-6)


def _strip(context, folder: Path, n: int, built, rep: Report, size) -> tuple[str, list[str]]:
    reference, clips = rep.played
    chosen = picks(rep)
    frames = [f for f, _ in chosen]
    scene = context.scene
    fps = scene.render.fps / scene.render.fps_base
    want = dict(zip(frames, evaluate.evaluate(reference, clips, frames, fps)))
    _play(built, reference, clips)
    copy = CoreCopy(built, reference, rep.tolerance, _beside(np.concatenate(list(want.values()))))
    name = f"frames_{n}.png"
    try:
        scene.frame_set(int(frames[0]))
        copy.show(context, want[frames[0]])
        with quiet():
            render.render_poses(context, folder / name, built.armature, frames, n_poses=len(frames), size=size,
                                before_frame=lambda f: copy.show(context, want[f]))
    finally:
        copy.remove()
    by_frame = {f.frame: f for f in rep.frames}
    captions = [f"frame {f:g} ({role}): {by_frame[f].max_error / rep.size:.2e}" for f, role in chosen]
    return name, captions


def _version() -> str:
    manifest = Path(__file__).resolve().parents[1] / "blender_manifest.toml"
    try:
        for line in manifest.read_text().splitlines():
            if line.startswith("version"):
                return line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return "unknown"


def facts(args, fmt, total: Report, options_used: dict) -> list[tuple[str, str]]:
    """The page's header: the files, the options (``options_used``: the shared
    import options' values and the format's options given), the versions."""
    files = [("model", args.model)] + [("animation", p) for p in args.animations] + \
        [("dominant animation", p) for p in args.dominant]
    options = []
    if args.weights:
        options.append("weights " + ", ".join(f"{w:g}" for w in args.weights))
    options += [f"{k.replace('_', ' ')} {v}" for k, v in options_used.items()]
    out = [(label, str(Path(p).resolve())) for label, p in files]
    out += [("format", fmt.label), ("options", "; ".join(options)),
            ("tolerance", f"{args.tolerance:g} of the model size ({total.tolerance:.3e} in its units)"),
            ("model size", f"{total.size:.6g} (the diagonal of the meshes' bounding box in the default pose)"),
            ("Blender", f"{bpy.app.version_string}"), ("legacy_skin_io", _version()),
            ("written", datetime.datetime.now().isoformat(timespec="seconds"))]
    return out


def write_report(context, folder, title: str, parts, total: Report, built, header: list[tuple[str, str]],
                 tile=(360, 300), *, progress) -> Path:
    """The report of ``parts`` ([(title, Report)] as ``verify`` prints them)
    into ``folder``: index.html and one strip of frames per part. Returns the
    page's path. ``progress(label, total)`` makes what shows how far the
    rendering is (a context manager with ``update(done, note=)``: the
    command line passes ``cli.progress.Progress``)."""
    folder = Path(folder).resolve()
    folder.mkdir(parents=True, exist_ok=True)
    sections = []
    with progress("report: rendering", len(parts)) as shown:
        for n, (name, rep) in enumerate(parts, 1):
            shown.update(n - 1, note=name)
            size = rep.size or 1.0
            image, captions = "", list[str]()
            if rep.played is not None and rep.frames and built.meshes:
                image, captions = _strip(context, folder, n, built, rep, tile)
            sections.append(report_page.Section(
                title=name, summary=rep.summary(name), ok=rep.ok, frames=[f.frame for f in rep.frames],
                max_error=[f.max_error / size for f in rep.frames],
                mean_error=[f.mean_error / size for f in rep.frames],
                tolerance=rep.tolerance / size, size=size, image=image, captions=captions,
                extra=[rep.normal_deviation.line()] if rep.normal_deviation is not None else []))
    text = report_page.page(title, total.verdict(), total.ok, header, sections)
    index = folder / "index.html"
    write_atomic(index, text.encode("utf-8"))
    return index
