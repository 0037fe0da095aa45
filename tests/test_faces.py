# SPDX-License-Identifier: GPL-3.0-or-later
"""Faces and their normals without Blender: ``core.faces`` (geometric
normals, shading normals made to agree with their faces) and the rules of
``io.xfile.facing`` that decide which side a face shows: normals stored in
the frame's space, and faces placed through a mirror. Expected values come
from geometry written out here (a box, a plate, rotations by hand)."""
from __future__ import annotations

import numpy as np
import pytest

from legacy_skin_io.core import faces
from legacy_skin_io.io.xfile import facing


def _box():
    """A unit box around the origin, every face wound outward (counter-clockwise
    seen from outside), as triangles; and each corner's outward face normal."""
    pos = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], dtype=float)
    quads = [[0, 1, 3, 2], [4, 6, 7, 5], [0, 4, 5, 1], [2, 3, 7, 6], [0, 2, 6, 4], [1, 5, 7, 3]]
    tris = [t for q in quads for t in ([q[0], q[1], q[2]], [q[0], q[2], q[3]])]
    corners = np.array(tris).reshape(-1)
    outward = []
    for t in tris:
        c = pos[t].mean(axis=0)
        axis = np.argmax(np.abs(c))
        n = np.zeros(3)
        n[axis] = np.sign(c[axis])
        outward += [n] * 3
    return pos, np.full(len(tris), 3), corners, np.array(outward)


def _rotation(axis: int, degrees: float) -> np.ndarray:
    a = np.radians(degrees)
    c, s = np.cos(a), np.sin(a)
    i, j = [k for k in range(3) if k != axis]
    r = np.eye(3)
    r[i, i], r[i, j], r[j, i], r[j, j] = c, -s, s, c
    return r


# ---------------------------------------------------------------- core.faces
def test_face_normals_follow_the_winding():
    pos, sizes, corners, outward = _box()
    g = faces.face_normals(pos, sizes, corners)
    unit = g / np.linalg.norm(g, axis=1, keepdims=True)
    assert np.allclose(unit, outward[::3])
    # a hexagon's Newell normal is its plane's, its length twice its area
    hexagon = np.array([[np.cos(a), np.sin(a), 0.0] for a in np.linspace(0, 2 * np.pi, 7)[:-1]])
    area = 6 * np.sqrt(3) / 4
    assert np.allclose(faces.face_normals(hexagon, [6], np.arange(6)), [[0, 0, 2 * area]])
    assert np.allclose(faces.face_normals(hexagon, [6], np.arange(6)[::-1]), [[0, 0, -2 * area]])
    assert np.array_equal(faces.face_of_corner(np.array([3, 4, 3])), [0, 0, 0, 1, 1, 1, 1, 2, 2, 2])


@pytest.mark.parametrize("kind", ["triangles", "quads", "mixed"])
def test_face_normals_are_twice_the_vector_area_on_every_path(kind):
    """All triangles, all faces of one size and mixed sizes take different
    paths: each face's normal is twice its vector area, by the shoelace sum
    written out here face by face (and none depends on where the face is)."""
    rng = np.random.default_rng(7)
    sizes = {"triangles": np.full(50, 3), "quads": np.full(50, 4), "mixed": rng.integers(3, 8, 50)}[kind]
    pos = rng.normal(size=(40, 3))
    corners = rng.integers(0, len(pos), int(sizes.sum()))
    want, at = [], 0
    for k in sizes:
        q = pos[corners[at:at + k]]
        want.append(sum(np.cross(q[i], q[(i + 1) % k]) for i in range(k)))
        at += k
    got = faces.face_normals(pos, sizes, corners)
    assert np.allclose(got, want, rtol=1e-12, atol=1e-12)
    assert np.allclose(faces.face_normals(pos + [5.0, -3.0, 2.0], sizes, corners), want, rtol=1e-9, atol=1e-9)


def test_agreeing_normals_reflect_stray_corners_across_their_face():
    pos, sizes, corners, outward = _box()
    # smoothed normals (the corner's direction from the centre): every one leans out of its face already
    smooth = pos[corners] / np.sqrt(3)
    got, changed = faces.agreeing_normals(smooth, pos, sizes, corners)
    assert not changed.any() and np.array_equal(got, smooth)
    # the +x side's normals stored inward (as test_cube_*.x's): reflected across its plane
    stored = smooth.copy()
    plus_x = outward[:, 0] > 0
    stored[plus_x, 0] *= -1
    got, changed = faces.agreeing_normals(stored, pos, sizes, corners)
    assert np.array_equal(changed, plus_x)
    assert np.allclose(got, smooth)                         # the along-face part turned, the smoothing kept
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0)


def test_agreeing_normals_tilt_edge_on_corners_and_leave_flat_faces():
    pos = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [2, 0, 0], [3, 0, 0]], dtype=float)
    sizes = np.array([3, 3])
    corners = np.array([0, 1, 2, 0, 3, 4])                 # a triangle in z = 0 (front +z), one without area
    n = np.tile([1.0, 0.0, 0.0], (6, 1))                    # in the first face's plane; any for the flat one
    got, changed = faces.agreeing_normals(n, pos, sizes, corners)
    assert changed[:3].all() and not changed[3:].any()
    assert np.allclose(got[:3], [[np.cos(np.radians(5)), 0, np.sin(np.radians(5))]] * 3)
    assert np.array_equal(got[3:], n[3:])
    # a normal straight against its face, with no direction in the plane: the face's own
    got, _ = faces.agreeing_normals(np.tile([0.0, 0.0, -1.0], (6, 1)), pos, sizes, corners)
    assert np.allclose(got[:3], [[0, 0, 1]] * 3)


# ---------------------------------------------------------------- facing: the frame's space
def test_normals_stored_in_the_frames_space_are_read_there():
    pos, sizes, corners, outward = _box()
    frame = _rotation(1, 150.0)                            # row vectors: p_frame = p @ frame
    stored = outward @ frame                                # the outward normals, turned into the frame's space
    to_mesh = facing.normal_space(pos, sizes, corners, stored, frame)
    assert to_mesh is not None and np.allclose(stored @ to_mesh, outward)
    votes, space = facing.votes(pos, sizes, corners, stored, frame)
    assert space == "frame" and (votes > 0).all()
    # as stored, in the mesh's space, 8 of 12 faces disagree: no face is turned all the same
    assert (facing.votes(pos, sizes, corners, stored)[0] < 0).sum() == 8
    assert not facing.turned_faces(pos, sizes, corners, stored, frame)[0].any()


@pytest.mark.parametrize("frame", [np.eye(3), np.eye(3) * 2.5, _rotation(2, 150.0)],
                         ids=["identity", "uniform scale", "normals already in mesh space"])
def test_normals_in_mesh_space_stay_there(frame):
    pos, sizes, corners, outward = _box()
    assert facing.normal_space(pos, sizes, corners, outward, frame) is None
    assert facing.normal_space(pos, sizes, corners, outward, None) is None


# ---------------------------------------------------------------- facing: placed through a mirror
def test_a_mirror_above_a_mesh_decides_which_side_it_shows():
    pos, sizes, corners, outward = _box()
    inward = corners.reshape(-1, 3)[:, ::-1].reshape(-1)     # every face wound the other way
    # own space: wound against its normals, turned; placed through a mirror it shows out as stored
    assert facing.turned_faces(pos, sizes, inward, outward)[0].all()
    assert not facing.turned_faces(pos, sizes, inward, outward, shown=-1)[0].any()
    assert (facing.votes(pos, sizes, inward, outward, shown=-1)[0] > 0).all()
    # wound outward in its own space: a mirror shows it inside out, so it is turned
    assert facing.turned_faces(pos, sizes, corners, outward, shown=-1)[0].all()
    # per face: the faces placed through the mirror (a skin whose joints mirror part of the mesh)
    shown = np.where(np.arange(12) < 6, -1, 1)
    votes, _ = facing.votes(pos, sizes, corners, outward, shown=shown)
    assert np.array_equal(votes, shown)


def test_the_mirror_shown_moves_with_the_majority_of_normals():
    """test_cube_*.x: the normals of two opposite sides stored mirrored (8 of
    12 faces agree): the majority decides for the mesh, the winding stays whole."""
    pos, sizes, corners, outward = _box()
    stored = outward.copy()
    stored[:, 0] *= -1                                      # the x sides' normals inward
    votes, _ = facing.votes(pos, sizes, corners, stored)
    assert (votes > 0).sum() == 8 and (votes < 0).sum() == 4
    assert not facing.turned_faces(pos, sizes, corners, stored)[0].any()
    assert facing.turned_faces(pos, sizes, corners, stored, shown=-1)[0].all()


def test_corner_order_reverses_the_faces_asked_for():
    sizes = np.array([3, 4, 3])
    assert faces.corner_order(sizes, False).tolist() == list(range(10))
    assert faces.corner_order(sizes, [False, True, False]).tolist() == [0, 1, 2, 6, 5, 4, 3, 7, 8, 9]
    assert faces.corner_order(sizes, True).tolist() == [2, 1, 0, 6, 5, 4, 3, 9, 8, 7]
