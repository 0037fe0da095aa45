# SPDX-License-Identifier: GPL-3.0-or-later
"""Read a RiTE Ascii Model (.ram) into a :class:`RamModel`."""
from __future__ import annotations

import numpy as np

from .ids import IdTable, first_bad_row
from .lexer import (
    MAX_JOINTS,
    LineBuffer,
    Sink,
    check_count_fits,
    check_quaternion,
    is_keyword,
    line_tokens,
    parse_count,
    parse_float,
    parse_id,
    parse_int,
    parse_name,
    where_name,
)
from .model import RamModel, RiteJoint
from .records import RecordSpec, read_records
from .source_io import load_bytes, stem_of, text_bytes

JOINT_LINES = ("parent", "orientation", "translation", "rotation")
SECTIONS = {
    "vertices": RecordSpec("vertices", "ifff", "ID X Y Z"),
    "normals": RecordSpec("normals", "ifff", "ID X Y Z"),
    "uvs": RecordSpec("uvs", "iff", "ID U V"),
    "triangles": RecordSpec("triangles", "idiiiiiiiii", "ID SHADER V0 V1 V2 N0 N1 N2 T0 T1 T2"),
    "weights": RecordSpec("weights", "iiinf", 'ID VERTEX JOINT "JOINT_NAME" W'),
}
KEYWORDS = frozenset(("joints", "mesh", *SECTIONS, *JOINT_LINES))
# fewest bytes a five-line joint record can take: '0 ""', 'parent 0', 'orientation 0 0 0 0',
# 'translation 0 0 0', 'rotation 0 0 0 0' and their newlines (69), rounded down
JOINT_MIN_BYTES = 64
_MAX_NAME_WARNINGS = 20


def read_ram(path, warnings=None) -> RamModel:
    """Read a .ram file. ``warnings``: optional list receiving warning strings."""
    return _parse(LineBuffer(load_bytes(path), path), stem_of(path), warnings)


def read_ram_text(text, path=None, warnings=None) -> RamModel:
    """Read RAM text (``str`` or ``bytes``); ``path`` only names it in messages."""
    return _parse(LineBuffer(text_bytes(text, path), path), stem_of(path), warnings)


def _header_count(src: LineBuffer, toks: list[str], line: int, what: str) -> int:
    if len(toks) != 2:
        raise src.error(line, f"'{what}' takes one count, found {len(toks) - 1} values")
    return parse_count(src, line, toks[1], what)


def _parse(src: LineBuffer, default_name: str, warnings) -> RamModel:
    sink = Sink(warnings, where_name(src.path))
    joints = None
    mesh_name = None
    seen: dict[str, int] = {}
    records = {}
    last = None  # (section, count) of the section that ended just before
    line, off = 1, 0
    while off <= src.size:
        text, nxt = src.line(off)
        toks = line_tokens(src, line, text)
        if toks is None:
            line, off = line + 1, nxt
            continue
        if not is_keyword(toks[0]):
            if last is not None:
                raise src.error(line, f"{last[0]}: expected {last[1]} records, found more "
                                      f"(line {line} is one too many)")
            raise src.error(line, "record line outside any section")
        kw = toks[0].lower()
        if kw in seen and kw in ("joints", "mesh", *SECTIONS):
            raise src.error(line, f"second '{kw}' (the first is on line {seen[kw]})")
        if kw == "joints":
            seen[kw] = line
            count = _header_count(src, toks, line, kw)
            check_count_fits(src, line, nxt, count, JOINT_MIN_BYTES, kw)
            if count > MAX_JOINTS:
                raise src.error(line, f"joints: expected {count} records, more than the limit of {MAX_JOINTS}")
            joints, line, off = _read_joints(src, line + 1, nxt, count, sink)
            last = (kw, count)
        elif kw == "mesh":
            seen[kw] = line
            if len(toks) != 2:
                raise src.error(line, f"'mesh' takes one quoted name, found {len(toks) - 1} values")
            mesh_name = parse_name(src, line, toks[1], "mesh")
            line, off = line + 1, nxt
            last = None
        elif kw in SECTIONS:
            seen[kw] = line
            count = _header_count(src, toks, line, kw)
            check_count_fits(src, line, nxt, count, SECTIONS[kw].min_bytes, kw)
            recs = read_records(src, line + 1, nxt, count, SECTIONS[kw], sink, KEYWORDS)
            records[kw] = recs
            line, off = recs.end_line, recs.end_off
            last = (kw, count)
        elif kw in JOINT_LINES:
            raise src.error(line, f"'{kw}' outside a joint record")
        else:
            sink.warn(line, f"unknown keyword {toks[0]!r}: line ignored")
            line, off = line + 1, nxt
    if not seen:
        raise src.error(None, "no RiTE model data (no 'joints', 'mesh' or mesh sections)")
    joint_list, joint_ids, joint_lines = _resolve_joints(src, joints or [], sink)
    return _build_mesh(src, sink, mesh_name if mesh_name is not None else default_name,
                       joint_list, joint_ids, joint_lines, records)


# -- skeleton -------------------------------------------------------------------

def _read_joints(src: LineBuffer, line: int, off: int, count: int, sink: Sink):
    """``count`` five-line joint records from ``line``/``off``; returns (raw joints, next line, its offset)."""
    out = []
    cur = None
    stage = 0
    while cur is not None or len(out) < count:
        if off > src.size:
            if cur is not None:
                raise src.error(src.last_line(), f"joint {cur['id']} {cur['name']!r}: expected "
                                                 f"'{JOINT_LINES[stage]}', found end of file")
            raise src.error(src.last_line(), f"joints: expected {count} records, "
                                             f"found {len(out)} at end of file")
        text, nxt = src.line(off)
        toks = line_tokens(src, line, text)
        here = line
        line, off = line + 1, nxt
        if toks is None:
            continue
        if is_keyword(toks[0]):
            kw = toks[0].lower()
            if cur is not None and kw == JOINT_LINES[stage]:
                what = f"joint {cur['id']} {kw}"
                if kw == "parent":
                    if len(toks) != 2:
                        raise src.error(here, f"{what}: expected 1 value, found {len(toks) - 1}")
                    parent = parse_int(src, here, toks[1], what)
                    if parent < -1:
                        raise src.error(here, f"{what}: expected -1 or a joint id, found {parent}")
                    cur["parent"] = parent
                    cur["parent_line"] = here
                else:
                    size = 3 if kw == "translation" else 4
                    if len(toks) != size + 1:
                        raise src.error(here, f"{what}: expected {size} values, found {len(toks) - 1}")
                    values = [parse_float(src, here, t, what) for t in toks[1:]]
                    if size == 4:
                        norm = check_quaternion(src, here, values, f"joint {cur['id']} {cur['name']!r} {kw}")
                        if abs(norm - 1.0) > 1e-3:
                            sink.warn(here, f"joint {cur['id']} {cur['name']!r}: {kw} is not a unit "
                                            f"quaternion (length {norm:.6g})")
                    cur[kw] = np.array(values, dtype=np.float64)
                stage += 1
                if stage == len(JOINT_LINES):
                    out.append(cur)
                    cur = None
                continue
            if kw in KEYWORDS:
                if cur is not None:
                    raise src.error(here, f"joint {cur['id']} {cur['name']!r}: expected "
                                          f"'{JOINT_LINES[stage]}', found '{toks[0]}'")
                raise src.error(here, f"joints: expected {count} records, found {len(out)} before line {here}")
            sink.warn(here, f"unknown keyword {toks[0]!r}: line ignored")
            continue
        if cur is not None:
            raise src.error(here, f"joint {cur['id']} {cur['name']!r}: expected "
                                  f"'{JOINT_LINES[stage]}', found a record line")
        if len(toks) != 2:
            raise src.error(here, f'joint record: expected ID "NAME", found {len(toks)} fields')
        jid = parse_id(src, here, toks[0], "joint record")
        name = parse_name(src, here, toks[1], "joint record")
        cur = {"id": jid, "name": name, "line": here}
        stage = 0
    return out, line, off


def _resolve_joints(src: LineBuffer, raw: list, sink: Sink):
    index = {}
    for k, j in enumerate(raw):
        if j["id"] in index:
            first = raw[index[j["id"]]]["line"]
            raise src.error(j["line"], f"duplicate joint id {j['id']} (first defined on line {first})")
        index[j["id"]] = k
    parents = []
    for j in raw:
        p = j["parent"]
        if p == -1:
            parents.append(-1)
        elif p in index:
            parents.append(index[p])
        else:
            raise src.error(j["parent_line"], f"joint {j['id']} {j['name']!r}: parent id {p} is not defined")
    state = [0] * len(raw)
    for k in range(len(raw)):
        path = []
        c = k
        while c != -1 and state[c] == 0:
            state[c] = 1
            path.append(c)
            c = parents[c]
        if c != -1 and state[c] == 1:
            cycle = path[path.index(c):]
            first = min(cycle)
            chain = " -> ".join(str(raw[m]["id"]) for m in cycle + [c])
            raise src.error(raw[first]["line"], f"joint {raw[first]['id']} {raw[first]['name']!r}: "
                                                f"parents form a cycle ({chain})")
        for m in path:
            state[m] = 2
    joints = [RiteJoint(j["name"], parents[k], j["orientation"], j["translation"], j["rotation"])
              for k, j in enumerate(raw)]
    ids = np.array([j["id"] for j in raw], dtype=np.int64)
    lines = np.array([j["line"] for j in raw], dtype=np.int64)
    return joints, ids, lines


# -- mesh -------------------------------------------------------------------------

def _table(src, recs, what):
    if recs is None:
        return IdTable(src, np.zeros(0, dtype=np.int64), None, what)
    return IdTable(src, recs.col(0), recs.line, what)


def _refs(src, table: IdTable, refs: np.ndarray, recs, owner: str, what: str, ids: np.ndarray):
    idx, ok = table.lookup(refs)
    r = None if ok is None else first_bad_row(ok)
    if r is not None:
        col = int(np.flatnonzero(~ok[r])[0]) if ok.ndim > 1 else 0
        value = int(refs[r, col]) if refs.ndim > 1 else int(refs[r])
        raise src.error(recs.line(r), f"{owner} {int(ids[r])}: {what} id {value} is not defined")
    return np.ascontiguousarray(idx)


def _build_mesh(src, sink, mesh_name, joints, joint_ids, joint_lines, records) -> RamModel:
    get = records.get
    vt = _table(src, get("vertices"), "vertex")
    positions = vt.arrange(get("vertices").floats) if get("vertices") is not None else np.zeros((0, 3))
    nt = _table(src, get("normals"), "normal")
    normals = nt.arrange(get("normals").floats) if get("normals") is not None else np.zeros((0, 3))
    ut = _table(src, get("uvs"), "uv")
    uvs = ut.arrange(get("uvs").floats) if get("uvs") is not None else np.zeros((0, 2))

    tri = get("triangles")
    tri_normals = tri_uvs = None
    if tri is None:
        tri_shader = np.zeros(0, dtype=np.int64)
        tri_vertices = np.zeros((0, 3), dtype=np.int64)
        if len(normals):
            tri_normals = np.zeros((0, 3), dtype=np.int64)
        if len(uvs):
            tri_uvs = np.zeros((0, 3), dtype=np.int64)
    else:
        tt = _table(src, tri, "triangle")
        tids = tri.col(0)
        tri_shader = tt.arrange(tri.col(1))
        tri_vertices = tt.arrange(_refs(src, vt, tri.cols(2, 5), tri, "triangle", "vertex", tids))
        if len(normals):
            tri_normals = tt.arrange(_refs(src, nt, tri.cols(5, 8), tri, "triangle", "normal", tids))
        if len(uvs):
            tri_uvs = tt.arrange(_refs(src, ut, tri.cols(8, 11), tri, "triangle", "uv", tids))

    w = get("weights")
    if w is None:
        weight_vertex = np.zeros(0, dtype=np.int64)
        weight_joint = np.zeros(0, dtype=np.int64)
        weight_value = np.zeros(0, dtype=np.float64)
    else:
        wt = _table(src, w, "weight")
        wids = w.col(0)
        negative = np.flatnonzero(w.floats[:, 0] < 0)
        if negative.size:
            r = int(negative[0])
            raise src.error(w.line(r), f"weight {int(wids[r])}: weight {w.floats[r, 0]!r} is negative")
        jt = IdTable(src, joint_ids, lambda r: int(joint_lines[r]), "joint")
        vidx = _refs(src, vt, w.col(1), w, "weight", "vertex", wids)
        jpos = _refs(src, jt, w.col(2), w, "weight", "joint", wids)
        jidx = jpos if jt.order is None else jt.order[jpos]
        _check_weight_names(sink, w, joints, jidx, wids)
        weight_vertex = wt.arrange(vidx)
        weight_joint = wt.arrange(jidx)
        weight_value = wt.arrange(w.floats[:, 0])

    return RamModel(mesh_name=mesh_name, joints=joints, joint_ids=joint_ids, positions=positions, normals=normals,
                    uvs=uvs,
                    tri_shader=tri_shader, tri_vertices=tri_vertices, tri_normals=tri_normals,
                    tri_uvs=tri_uvs, weight_vertex=weight_vertex, weight_joint=weight_joint,
                    weight_value=weight_value)


def _check_weight_names(sink, w, joints, jidx, wids) -> None:
    """Warn (once per joint/name pair) where a weight's quoted name is not its joint's name."""
    if not len(w):
        return
    bad = np.flatnonzero(w.names_differ(jidx, [j.name for j in joints]))
    if not bad.size:
        return
    seen: dict = {}
    named = w.col(2)
    for r in bad.tolist():
        key = (int(jidx[r]), w.name(r))
        if key in seen:
            seen[key][1] += 1
        elif len(seen) < _MAX_NAME_WARNINGS:
            seen[key] = [r, 0]
        else:
            seen.setdefault(None, [r, 0])[1] += 1
    for key, (r, more) in seen.items():
        if key is None:
            continue
        extra = f" (and {more} more weights like it)" if more else ""
        sink.warn(w.line(r), f"weight {int(wids[r])}: joint {int(named[r])} is named {key[1]!r} "
                             f"but the skeleton calls it {joints[key[0]].name!r}{extra}")
    if None in seen:
        sink.warn(None, f"{seen[None][1] + 1} more weights name their joint differently from the skeleton")
