# SPDX-License-Identifier: GPL-3.0-or-later
"""Which way a mesh's faces point: the file's normals decide.

Direct3D draws the front of a face by its winding in screen space, after
every transform, and lights it by its normals turned by the same transforms
(a normal pointing out of a surface still does after any of them). A mesh
placed through a mirror (a frame above it that mirrors, or skinning
matrices that do: Blender's .X exporter and Maya's DXCC put the Y/Z swap
into a root frame) therefore shows the other side of each face than its own
space says, and its exporter stored the winding the mirror turns back: in
the mesh's own space its faces point inward, its normals out, and on screen
both point out. What a face shows is its own-space agreement times the sign
of the placement's determinant (``shown``); the builder keeps Blender's
objects free of mirrors so that Blender shows the same side.

The rule (:func:`turned_faces`):

* each face votes with the sign of its geometric normal (its winding, by
  Newell's method) against the sum of its corners' stored normals, times
  its ``shown`` sign;
* the normals are read in the mesh's space, or in the space of its frame
  (the frames above it, at the default pose) when they line up with the
  faces (all along, or all against, their winding) clearly better there:
  some 3DS conversions store world-space normals, turned up to 90 degrees
  and more against the positions (:func:`normal_space`: the shading reads
  them so too);
* per mesh, the majority of the votes decides (a tie keeps the file's
  winding): a mesh whose faces mostly disagree is turned as a whole;
* per face only where the winding itself is mixed: two faces sharing an edge
  that both run it the same way cannot both point out. In a patch of faces
  joined by shared edges that holds both windings, each side (the faces
  wound like the patch's first face, and the others) is turned when most of
  its own faces' votes disagree. A mesh whose winding is consistent is never
  split, whatever its normals say face by face (smoothed normals of thin
  plates, normals rotated against the positions: the shading makes such
  corners agree, ``core.faces.agreeing_normals``).

Meshes without normals are left as they are.
"""
from __future__ import annotations

import numpy as np

from ...core.faces import face_normals, face_of_corner

#: frame space is used when |mean cos| there (1 when every face's normals point
#: straight along or straight against its winding) beats the mesh space's by this much
SPACE_MARGIN = 0.1
#: label propagation rounds for the patches of mixed winding (each halves
#: the distance to a patch's first face; far more than any real mesh needs)
MAX_ROUNDS = 200


def _cosines(g: np.ndarray, s: np.ndarray) -> np.ndarray:
    """(F,) the cosine between each row of ``g`` and ``s`` (0 where either is 0)."""
    length = np.sqrt(np.einsum("ij,ij->i", g, g)) * np.sqrt(np.einsum("ij,ij->i", s, s))
    ok = length > 0
    return np.where(ok, np.einsum("ij,ij->i", g, s) / np.where(ok, length, 1.0), 0.0)


def _face_sums(sizes: np.ndarray, corner_normals) -> np.ndarray:
    """(F, 3) the sum of each face's corner normals."""
    F = len(sizes)
    n = np.asarray(corner_normals, dtype=np.float64).reshape(-1, 3)
    if F and len(n) == F * int(sizes[0]) and (sizes == sizes[0]).all():     # faces of one size
        return n.reshape(F, int(sizes[0]), 3).sum(axis=1)
    face = face_of_corner(sizes)
    s = np.zeros((F, 3))
    for axis in range(3):
        s[:, axis] = np.bincount(face, weights=n[:, axis], minlength=F)
    return s


def normal_space(positions, sizes, corners, corner_normals, frame: np.ndarray | None,
                 g: np.ndarray | None = None, here: np.ndarray | None = None,
                 sums: np.ndarray | None = None) -> np.ndarray | None:
    """The 3x3 matrix taking the stored normals into the mesh's space (row
    vectors: ``n_mesh = n @ m``) when they are stored in the frame's space,
    else None. ``frame``: the linear part taking mesh space to its frame's,
    as a row-vector matrix (``p_frame = p @ frame``), or None. Normals
    stored in the frame's space are read in the mesh's by the transpose of
    ``frame`` (the inverse of the inverse transpose that took them there);
    they are taken to be so when every face's normals then line up with its
    winding clearly better (|mean cos| by :data:`SPACE_MARGIN`). ``g``: the
    faces' :func:`~...core.faces.face_normals`, ``here`` their cosines
    with the normals as stored and ``sums`` the faces' sums of them, when
    the caller has them."""
    sizes = np.asarray(sizes, dtype=np.int64)
    if frame is None or not len(sizes):
        return None
    m = np.asarray(frame, dtype=np.float64)[:3, :3]
    det = float(np.linalg.det(m))
    uniform = np.eye(3) * np.cbrt(det)
    if not np.isfinite(det) or det == 0 or (np.abs(m - uniform) <= 1e-9 * np.abs(uniform)).all():
        return None             # a uniform scale turns no normal (np.allclose's test, without its overhead)
    g = face_normals(positions, sizes, corners) if g is None else g
    sums = _face_sums(sizes, corner_normals) if sums is None else sums
    if here is None:
        here = _cosines(g, sums)
    mean_here = abs(here.mean())
    if mean_here >= 1.0 - SPACE_MARGIN:
        return None             # (the frame cannot do better)
    there = abs(_cosines(g, sums @ m.T).mean())
    return m.T.copy() if there > mean_here + SPACE_MARGIN else None


def _space(to_mesh: np.ndarray | None) -> str:
    return "mesh" if to_mesh is None else "frame"


def _votes(positions, sizes, corners, corner_normals, frame, shown) -> tuple[np.ndarray, np.ndarray | None]:
    """:func:`votes` with the matrix :func:`normal_space` gives instead of
    the space's name (the faces' normals computed once for both)."""
    sizes = np.asarray(sizes, dtype=np.int64)
    n = np.asarray(corner_normals, dtype=np.float64).reshape(-1, 3)
    g = face_normals(positions, sizes, corners)
    sums = _face_sums(sizes, n)
    here = _cosines(g, sums)
    to_mesh = normal_space(positions, sizes, corners, n, frame, g, here, sums)
    c = np.sign(here if to_mesh is None else _cosines(g, _face_sums(sizes, n @ to_mesh))).astype(np.int64)
    if shown is not None:
        c *= np.sign(np.asarray(shown)).astype(np.int64)
    return c, to_mesh


def votes(positions, sizes, corners, corner_normals, frame: np.ndarray | None = None,
          shown=None) -> tuple[np.ndarray, str]:
    """(F,) +1 where a face's winding agrees with its stored normals, -1
    where it disagrees, 0 where either is degenerate, each times ``shown``
    (a sign per face or one for all: -1 where the face is placed through a
    mirror); and the space the normals were read in ("mesh" or "frame", see
    :func:`normal_space`)."""
    c, to_mesh = _votes(positions, sizes, corners, corner_normals, frame, shown)
    return c, _space(to_mesh)


def _links(sizes, corners):
    """Pairs of faces sharing an edge (the same two vertices; edges shared
    by exactly two faces): (face a, face b, 1 where both run the edge the
    same way). Vertices are not welded by position: separate surfaces that
    merely touch (a limb's tube ending where the next begins) are not one."""
    sizes = np.asarray(sizes, dtype=np.int64)
    v = np.asarray(corners, dtype=np.int64)
    F = len(sizes)
    empty = np.zeros(0, dtype=np.int64)
    if not F:
        return empty, empty, empty
    starts = np.zeros(F, dtype=np.int64)
    if F > 1:
        np.cumsum(sizes[:-1], out=starts[1:])
    face = np.repeat(np.arange(F), sizes)
    nxt = np.arange(len(v)) + 1
    nxt[starts + sizes - 1] = starts
    a, b = v, v[nxt]
    keep = a != b
    a, b, face = a[keep], b[keep], face[keep]
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    forward = (a < b).astype(np.int64)
    order = np.lexsort((hi, lo))
    lo, hi, forward, face = lo[order], hi[order], forward[order], face[order]
    same = (lo[1:] == lo[:-1]) & (hi[1:] == hi[:-1])
    # runs of exactly two: a pair whose edge no third face shares
    first = np.flatnonzero(same)
    pair = first[~(np.isin(first - 1, first) | np.isin(first + 1, first))]
    fa, fb = face[pair], face[pair + 1]
    ok = fa != fb
    return fa[ok], fb[ok], (forward[pair] == forward[pair + 1]).astype(np.int64)[ok]


def _patches(F: int, fa, fb, parity):
    """Per face: (label of its patch, 1 where it is wound against the
    patch's first face). Faces joined by links are one patch; a link's
    parity says whether its faces are wound against each other. Label
    propagation with pointer jumping, in bulk; where the parities contradict
    each other (a non-orientable patch) the smaller label's reading wins."""
    key = np.arange(F, dtype=np.int64) * 2
    for _ in range(MAX_ROUNDS):
        lab, par = key >> 1, key & 1
        new = key.copy()
        np.minimum.at(new, fb, lab[fa] * 2 + (par[fa] ^ parity))
        np.minimum.at(new, fa, lab[fb] * 2 + (par[fb] ^ parity))
        for _ in range(4):          # pointer jumping: a face takes its label's label
            lab, par = new >> 1, new & 1
            new = lab[lab] * 2 + (par ^ par[lab])
        if np.array_equal(new, key):
            break
        key = new
    return key >> 1, key & 1


def turned_faces(positions, sizes, corners, corner_normals, frame: np.ndarray | None = None, shown=None,
                 joined=None):
    """(F,) bool: the faces to turn over so they show the side the file's
    normals say (see the module doc), and the space the normals were read in."""
    turn, to_mesh = decide(positions, sizes, corners, corner_normals, frame, shown, joined)
    return turn, _space(to_mesh)


def decide(positions, sizes, corners, corner_normals, frame: np.ndarray | None = None, shown=None,
           joined=None):
    """:func:`turned_faces` with the matrix taking the stored normals into
    the mesh's space (:func:`normal_space`; None: they are in it) instead of
    the space's name. ``joined`` (V,): the vertex each vertex is a copy of
    (VertexDuplicationIndices: an exporter's split at UV seams and material
    borders), so that faces meeting across such a split share their edge."""
    sizes = np.asarray(sizes, dtype=np.int64)
    F = len(sizes)
    v, to_mesh = _votes(positions, sizes, corners, corner_normals, frame, shown)
    turn = np.zeros(F, dtype=bool)
    if not F:
        return turn, to_mesh
    if int((v < 0).sum()) > int((v > 0).sum()):
        turn[:] = True
        v = -v
    if not (v < 0).any():
        return turn, to_mesh          # every face agrees now: nothing to make consistent
    fa, fb, parity = _links(sizes, corners if joined is None else np.asarray(joined)[corners])
    if not parity.any():
        return turn, to_mesh          # the winding is consistent: the mesh decides
    label, against = _patches(F, fa, fb, parity)
    mixed = np.zeros(F, dtype=bool)
    mixed[label[against == 1]] = True
    mixed = mixed[label]            # faces of patches that hold both windings
    # per mixed patch, each side (wound with or against the patch's first face)
    # is turned when most of its own faces' votes disagree
    side = label * 2 + against
    score = np.bincount(side[mixed], weights=v[mixed], minlength=2 * F)
    turn ^= mixed & (score[side] < 0)
    return turn, to_mesh
