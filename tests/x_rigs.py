# SPDX-License-Identifier: GPL-3.0-or-later
"""Small skinned .X files built for tests (XFile models written with the
project's .X writer): a chain of frames with a skinned box around each,
rotation keys at chosen tick times, optionally no AnimTicksPerSecond; and
a file of animations alone cut from a real file's text."""
from __future__ import annotations

import re

import numpy as np

from legacy_skin_io.core import quat
from legacy_skin_io.io.xfile import (
    XAnimation,
    XAnimationKey,
    XAnimationSet,
    XFile,
    XFrame,
    XMesh,
    XSkinWeights,
    write_xfile,
)


def _row(m: np.ndarray) -> np.ndarray:
    return np.asarray(m, dtype=np.float64).T      # column-vector -> Direct3D row-vector


def chain_file(path, ticks, *, n_joints: int = 3, tps: int | None = None, seed: int = 0,
               default_offset=(0.0, 0.0, 0.0), sets: int = 1):
    """A chain of ``n_joints`` frames one unit apart along file y, a box of
    8 vertices around each, each box weighted to its joint (and half of
    each box's top to the next joint); ``sets`` AnimationSets with rotation
    keys at ``ticks`` on every joint. ``default_offset`` moves the root's
    FrameTransformMatrix away from its bind (matrixOffset). Returns the path."""
    rng = np.random.default_rng(seed)
    frames = []
    for j in range(n_joints):
        m = np.eye(4)
        m[:3, 3] = (0.0, 1.0 if j else 0.0, 0.0)
        if j == 0:
            m[:3, 3] += default_offset
        frames.append(XFrame(f"joint{j}", _row(m)))
    for j in range(1, n_joints):
        frames[j - 1].children.append(frames[j])
    corners = np.array([[x, y, z] for x in (-0.3, 0.3) for y in (0.1, 0.9) for z in (-0.3, 0.3)])
    pos = np.concatenate([corners + [0.0, j, 0.0] for j in range(n_joints)])
    faces = []
    for j in range(n_joints):
        b = 8 * j
        faces += [[b, b + 1, b + 3, b + 2], [b + 4, b + 6, b + 7, b + 5], [b, b + 4, b + 5, b + 1],
                  [b + 2, b + 3, b + 7, b + 6], [b, b + 2, b + 6, b + 4], [b + 1, b + 5, b + 7, b + 3]]
    mesh = XMesh("body", pos, np.full(len(faces), 4), np.array(faces).reshape(-1))
    bind_world = np.array([np.eye(4) for _ in range(n_joints)])
    for j in range(n_joints):
        bind_world[j][:3, 3] = (0.0, float(j), 0.0)
    for j in range(n_joints):
        verts = np.arange(8 * j, 8 * j + 8)
        w = np.ones(8)
        top = verts[[2, 3, 6, 7]]
        extra_v, extra_w = [], []
        if j + 1 < n_joints:
            w[[2, 3, 6, 7]] = 0.5
        if j > 0:
            extra_v = list(np.arange(8 * (j - 1), 8 * j)[[2, 3, 6, 7]])
            extra_w = [0.5] * 4
        mesh.skin_weights.append(XSkinWeights(f"joint{j}", np.concatenate([verts, extra_v]).astype(np.int64),
                                              np.concatenate([w, extra_w]),
                                              _row(np.linalg.inv(bind_world[j]))))
        del top
    mesh.skin_header = (2, 2, n_joints)
    frames[0].meshes.append(mesh)
    xf = XFile(frames=[frames[0]], anim_ticks_per_second=tps)
    ticks = np.asarray(ticks, dtype=np.float64)
    for s in range(sets):
        aset = XAnimationSet(f"Set{s}")
        for j in range(n_joints):
            axis = rng.normal(size=3)
            angle = np.linspace(0.0, rng.uniform(0.5, 1.2), len(ticks)) * np.sin(np.arange(len(ticks)) * 0.3 + s)
            q = quat.from_axis_angle(np.broadcast_to(axis / np.linalg.norm(axis), (len(ticks), 3)), angle)
            wxyz = np.stack((q[:, 3], -q[:, 0], -q[:, 1], -q[:, 2]), axis=1)   # .X keys: the conjugate
            aset.animations.append(XAnimation(None, f"joint{j}", [XAnimationKey(0, ticks.copy(), wxyz)]))
        xf.animation_sets.append(aset)
    write_xfile(xf, path)
    return path


_TOP_OBJECT = re.compile(r"([A-Za-z_][\w]*)[^{};\"]*\{")


def animation_only(text: str, drop=("Frame", "Mesh", "Material")) -> str:
    """A text .X file's text without its top-level objects of the kinds
    ``drop`` (its frame hierarchy, its meshes and their materials): what is
    left (templates, AnimTicksPerSecond, AnimationSets) is a file of
    animations alone, made to be played on the skeleton of the original.
    Braces inside strings and comments are not counted."""
    out, depth, i, keep_from = [], 0, 0, 0
    drop_start = None
    n = len(text)
    while i < n:
        c = text[i]
        if c == '"':
            i = text.find('"', i + 1) + 1 or n
            continue
        if c == "#" or text.startswith("//", i):
            i = text.find("\n", i) + 1 or n
            continue
        if c == "{":
            if depth == 0:
                start = text.rfind("\n", 0, i) + 1
                m = _TOP_OBJECT.match(text[start:i + 1].lstrip())
                if m is not None and m.group(1) in drop:
                    drop_start = start
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0 and drop_start is not None:
                out.append(text[keep_from:drop_start])
                keep_from = i + 1
                drop_start = None
        i += 1
    out.append(text[keep_from:])
    return "".join(out)
