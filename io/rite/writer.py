# SPDX-License-Identifier: GPL-3.0-or-later
"""Write RAM/RAA in canonical form.

Canonical RAM: a comment line, ``joints``, ``mesh "NAME"``, ``vertices``,
``normals``, ``uvs``, ``triangles``, ``weights``; joints keep the file's ids
(``RamModel.joint_ids``, which RAA tracks may name), other ids 0..n-1; floats as Python
``repr`` (they read back bit-exact), integers plain, ``\\n`` line ends.
Canonical RAA: a comment line, ``frames N`` (when the animation's frame count
was given or differs from the default), then each track with ``keyframes N``
and its keys in frame order.

Writing the same model twice gives the same bytes, and reading a written file
gives back the same data. Models are validated first; problems raise
``FormatError`` and leave any existing file untouched. The validation applies
the readers' limits (float32 range, name length, frame, joint and track
counts, non-zero quaternions, non-negative weights), so whatever is written
reads back.
"""
from __future__ import annotations

import numpy as np

from ..atomic import Batch, write_atomic
from ..errors import FormatError
from ..numtext import format_rows
from .lexer import FLOAT_LIMIT, MAX_FRAMES, MAX_JOINTS, MAX_NAME_LENGTH, MAX_TRACKS, MIN_QUATERNION_LENGTH
from .model import RaaAnimation, RamModel

RAM_HEADER = "# RiTE Ascii Model (legacy_skin_io)\n"
RAA_HEADER = "# RiTE Ascii Animation (legacy_skin_io)\n"


def ram_to_text(m: RamModel) -> str:
    """The canonical RAM text of ``m``."""
    return b"".join(_ram_chunks(m, None, errors=_TEXT)).decode("utf-8", _TEXT)


def raa_to_text(a: RaaAnimation) -> str:
    """The canonical RAA text of ``a``."""
    return b"".join(_raa_chunks(a, None, errors=_TEXT)).decode("utf-8", _TEXT)


def write_ram(m: RamModel, path, batch: Batch | None = None) -> None:
    """Write ``m`` to ``path`` (temp file in the same directory, then ``os.replace``;
    with ``batch``, when the batch commits)."""
    _validate_ram(m, path)
    write_atomic(path, _ram_chunks(m, path, validated=True), batch)


def write_raa(a: RaaAnimation, path, batch: Batch | None = None) -> None:
    """Write ``a`` to ``path`` (temp file in the same directory, then ``os.replace``;
    with ``batch``, when the batch commits)."""
    _validate_raa(a, path)
    write_atomic(path, _raa_chunks(a, path, validated=True), batch)


# -- formatting -------------------------------------------------------------------
# Chunks are UTF-8 bytes; the record sections come from numtext.format_rows, whose
# text is that of "%d" / "%r" / "%s" (integers plain, floats as repr). Files are
# encoded strictly; the *_to_text functions carry any str through (lone surrogates too).

_TEXT = "surrogatepass"

def _q(name: str) -> str:
    return f'"{name}"'


def _vec(v) -> str:
    return " ".join(repr(x) for x in np.asarray(v, dtype=np.float64).tolist())


def _ram_chunks(m: RamModel, path, validated: bool = False, errors: str = "strict"):
    if not validated:
        _validate_ram(m, path)
    out = [RAM_HEADER, f"joints {len(m.joints)}\n"]
    ids = joint_ids(m)
    for k, j in enumerate(m.joints):
        parent = int(ids[j.parent]) if j.parent >= 0 else -1
        out.append(f"{int(ids[k])} {_q(j.name)}\nparent {parent}\norientation {_vec(j.orientation)}\n"
                   f"translation {_vec(j.translation)}\nrotation {_vec(j.rotation)}\n")
    out.append(f"mesh {_q(m.mesh_name)}\n")
    yield "".join(out).encode("utf-8", errors)

    nv, nn, nu = len(m.positions), len(m.normals), len(m.uvs)
    pos = np.asarray(m.positions, dtype=np.float64)
    yield b"vertices %d\n" % nv
    yield from format_rows([range(nv), pos[:, 0], pos[:, 1], pos[:, 2]])
    nrm = np.asarray(m.normals, dtype=np.float64)
    yield b"normals %d\n" % nn
    yield from format_rows([range(nn), nrm[:, 0], nrm[:, 1], nrm[:, 2]])
    uv = np.asarray(m.uvs, dtype=np.float64)
    yield b"uvs %d\n" % nu
    yield from format_rows([range(nu), uv[:, 0], uv[:, 1]])

    nt = len(m.tri_vertices)
    tv = np.asarray(m.tri_vertices, dtype=np.int64).reshape(nt, 3)
    zeros = np.zeros((nt, 3), dtype=np.int64)
    tn = np.asarray(m.tri_normals, dtype=np.int64).reshape(nt, 3) if (nn and m.tri_normals is not None) else zeros
    tu = np.asarray(m.tri_uvs, dtype=np.int64).reshape(nt, 3) if (nu and m.tri_uvs is not None) else zeros
    shader = np.asarray(m.tri_shader, dtype=np.int64).reshape(nt)
    yield b"triangles %d\n" % nt
    yield from format_rows([range(nt), shader] + [a[:, c] for a in (tv, tn, tu) for c in range(3)])

    nw = len(m.weight_value)
    wj = np.asarray(m.weight_joint, dtype=np.int64)
    # the joint's id and quoted name, both picked by the weight's joint: one string
    joint = ([f"{int(i)} {_q(j.name)}".encode("utf-8", errors) for i, j in zip(ids, m.joints)], wj)
    yield b"weights %d\n" % nw
    yield from format_rows([range(nw), np.asarray(m.weight_vertex, dtype=np.int64), joint,
                            np.asarray(m.weight_value, dtype=np.float64)])


def _raa_chunks(a: RaaAnimation, path, validated: bool = False, errors: str = "strict"):
    if not validated:
        _validate_raa(a, path)
    out = [RAA_HEADER]
    if _frames_line_needed(a):
        out.append(f"frames {int(a.frame_count)}\n")
    yield "".join(out).encode("utf-8", errors)
    for t_id, t in enumerate(a.tracks):
        frames = np.asarray(t.frames, dtype=np.int64).reshape(-1)
        rot = np.asarray(t.rotations, dtype=np.float64).reshape(len(frames), 4)
        order = np.argsort(frames, kind="stable")
        frames, rot = frames[order], rot[order]
        k = len(frames)
        yield f"track {t_id} {int(t.joint_id)} {_q(t.joint_name)}\nkeyframes {k}\n".encode("utf-8", errors)
        yield from format_rows([range(k), frames, rot[:, 0], rot[:, 1], rot[:, 2], rot[:, 3]])


def _frames_line_needed(a: RaaAnimation) -> bool:
    default = max((int(np.max(t.frames)) for t in a.tracks), default=-1) + 1
    return bool(a.frame_count_given) or int(a.frame_count) != default


# -- validation -------------------------------------------------------------------

def joint_ids(m: RamModel) -> np.ndarray:
    """The ids the joints are written with: the file's own (``joint_ids``),
    when there is one per joint, all distinct and non-negative; else 0..J-1."""
    J = len(m.joints)
    ids = m.joint_ids
    if ids is not None and len(ids) == J and (J == 0 or (ids.min() >= 0 and len(np.unique(ids)) == J)):
        return ids
    return np.arange(J, dtype=np.int64)


def _fail(path, message: str) -> FormatError:
    return FormatError(f"cannot write: {message}", path=path)


def _check_name(path, name, what: str) -> None:
    if not isinstance(name, str):
        raise _fail(path, f"{what} name must be a string, not {type(name).__name__}")
    bad = [c for c in ('"', "\n", "\r") if c in name]
    if bad:
        raise _fail(path, f"{what} name {name[:40]!r} contains {bad[0]!r}, which RiTE names cannot hold")
    if len(name) > MAX_NAME_LENGTH:
        raise _fail(path, f"{what} name {name[:40]!r}... has {len(name)} characters "
                          f"(at most {MAX_NAME_LENGTH})")


def _floats(path, arr, shape_tail: tuple, what: str) -> np.ndarray:
    try:
        a = np.asarray(arr, dtype=np.float64)
    except (TypeError, ValueError):
        raise _fail(path, f"{what} is not numeric") from None
    if a.size == 0 and len(shape_tail) and a.ndim < 1 + len(shape_tail):
        a = a.reshape((0, *shape_tail))
    if a.ndim != 1 + len(shape_tail) or a.shape[1:] != shape_tail:
        raise _fail(path, f"{what} must have shape (n, {', '.join(map(str, shape_tail))}), not {a.shape}")
    if not np.isfinite(a).all():
        raise _fail(path, f"{what} contains nan or inf")
    if a.size and np.abs(a).max() > FLOAT_LIMIT:
        raise _fail(path, f"{what} has values beyond float32's range (|x| > {FLOAT_LIMIT:.7g})")
    return a


def _quaternions(path, q: np.ndarray, what: str) -> None:
    lengths = np.sqrt(np.einsum("ij,ij->i", q, q)) if len(q) else np.zeros(0)
    if not (lengths >= MIN_QUATERNION_LENGTH).all():
        raise _fail(path, f"{what} has a quaternion too short to normalise "
                          f"(length below {MIN_QUATERNION_LENGTH:g})")


def _indices(path, arr, n_rows: int, cols: int | None, limit: int, what: str, low: int = 0) -> np.ndarray:
    try:
        a = np.asarray(arr)
    except (TypeError, ValueError):
        raise _fail(path, f"{what} is not an integer array") from None
    if a.size == 0:
        a = a.reshape((0,) if cols is None else (0, cols))
    if a.dtype.kind not in "iu" and a.size:
        raise _fail(path, f"{what} must be integers, not {a.dtype}")
    want = (n_rows,) if cols is None else (n_rows, cols)
    if a.shape != want:
        raise _fail(path, f"{what} must have shape {want}, not {a.shape}")
    if a.size and (a.min() < low or a.max() >= limit):
        raise _fail(path, f"{what} has values outside {low}..{limit - 1}")
    return a


def _validate_ram(m: RamModel, path) -> None:
    _check_name(path, m.mesh_name, "mesh")
    nj = len(m.joints)
    if nj > MAX_JOINTS:
        raise _fail(path, f"{nj} joints, more than the limit of {MAX_JOINTS}")
    parents = []
    for k, j in enumerate(m.joints):
        _check_name(path, j.name, f"joint {k}")
        try:
            p = int(j.parent)
        except (TypeError, ValueError):
            raise _fail(path, f"joint {k} {j.name!r}: parent is not an integer") from None
        if not -1 <= p < nj:
            raise _fail(path, f"joint {k} {j.name!r}: parent {p} is not -1 or a joint index")
        parents.append(p)
        for attr, size in (("orientation", 4), ("translation", 3), ("rotation", 4)):
            v = np.asarray(getattr(j, attr), dtype=np.float64)
            if v.shape != (size,) or not np.isfinite(v).all() or np.abs(v).max() > FLOAT_LIMIT:
                raise _fail(path, f"joint {k} {j.name!r}: {attr} must be {size} finite numbers "
                                  f"of float32 range")
            if size == 4:
                _quaternions(path, v[None, :], f"joint {k} {j.name!r}: {attr}")
    state = [0] * nj
    for k in range(nj):
        path_ = []
        c = k
        while c != -1 and state[c] == 0:
            state[c] = 1
            path_.append(c)
            c = parents[c]
        if c != -1 and state[c] == 1:
            raise _fail(path, f"joint {c} {m.joints[c].name!r}: parents form a cycle")
        for x in path_:
            state[x] = 2
    nv = len(_floats(path, m.positions, (3,), "positions"))
    nn = len(_floats(path, m.normals, (3,), "normals"))
    nu = len(_floats(path, m.uvs, (2,), "uvs"))
    tv = np.asarray(m.tri_vertices)
    nt = len(tv) if tv.ndim else 0
    _indices(path, m.tri_shader, nt, None, 2 ** 53, "tri_shader", low=-(2 ** 53) + 1)
    _indices(path, m.tri_vertices, nt, 3, nv, "tri_vertices")
    for arr, count, what in ((m.tri_normals, nn, "tri_normals"), (m.tri_uvs, nu, "tri_uvs")):
        if count:
            if arr is None:
                if nt:
                    raise _fail(path, f"{what} is None but the model has {what[4:]}")
            else:
                _indices(path, arr, nt, 3, count, what)
        elif arr is not None and np.asarray(arr).size:
            raise _fail(path, f"{what} given but the model has no {what[4:]}")
    wv = np.asarray(m.weight_value)
    nw = len(wv) if wv.ndim else 0
    _indices(path, m.weight_vertex, nw, None, nv, "weight_vertex")
    _indices(path, m.weight_joint, nw, None, nj, "weight_joint")
    v = _floats(path, np.asarray(m.weight_value, dtype=np.float64).reshape(-1, 1), (1,), "weight_value")
    if len(v) != nw:
        raise _fail(path, "weight_value must be one-dimensional")
    if (v < 0).any():
        raise _fail(path, "weight_value has negative weights")


def _validate_raa(a: RaaAnimation, path) -> None:
    _check_name(path, a.name, "animation")
    try:
        fc = int(a.frame_count)
    except (TypeError, ValueError):
        raise _fail(path, "frame_count is not an integer") from None
    if fc < 0:
        raise _fail(path, f"frame_count {fc} is negative")
    if fc > MAX_FRAMES:
        raise _fail(path, f"frame_count {fc} is more than the limit of {MAX_FRAMES}")
    if len(a.tracks) > MAX_TRACKS:
        raise _fail(path, f"{len(a.tracks)} tracks, more than the limit of {MAX_TRACKS}")
    for k, t in enumerate(a.tracks):
        _check_name(path, t.joint_name, f"track {k} joint")
        if int(t.joint_id) < 0 or int(t.joint_id) >= 2 ** 53:
            raise _fail(path, f"track {k}: joint id {int(t.joint_id)} out of range")
        frames = np.asarray(t.frames)
        if frames.ndim != 1 or frames.size == 0:
            raise _fail(path, f"track {k} ({t.joint_name!r}) must have at least one key")
        _indices(path, frames, len(frames), None, fc, f"track {k} ({t.joint_name!r}) frames")
        if len(np.unique(frames)) != len(frames):
            raise _fail(path, f"track {k} ({t.joint_name!r}) has two keys on one frame")
        rot = _floats(path, t.rotations, (4,), f"track {k} ({t.joint_name!r}) rotations")
        _quaternions(path, rot, f"track {k} ({t.joint_name!r}) rotations")
        if len(rot) != len(frames):
            raise _fail(path, f"track {k} ({t.joint_name!r}): {len(frames)} frames but {len(rot)} rotations")
