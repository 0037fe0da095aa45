# SPDX-License-Identifier: GPL-3.0-or-later
"""Scene -> RAM records, for :mod:`.from_scene`: the joints in the default
pose (rigid, a uniform scale folded into the translations below), every
mesh re-skinned to that pose and merged into the one triangle mesh a RAM
holds (normals and UVs per corner, deduplicated), and what the file could
not carry exactly, joint by joint (:class:`RamBuild`)."""
from __future__ import annotations

import numpy as np

from ...core import quat, rig
from ...scene import AxisConversion, Mesh, Scene, Skeleton, evaluate
from ..name_match import shown
from ..rows import dedupe_rows
from .model import RamModel, RiteJoint
from .names import joint_names, spelt
from .to_scene import FORMAT

#: What RAM/RAA cannot carry is reported when it moves vertices by more than
#: this fraction of the model size (32-bit files carry noise near 1e-7).
REPORT = 1e-6
#: A default pose joint is rigid up to a uniform scale when its 3x3 part
#: divided by that scale is orthonormal within this (float32 noise: ~3e-6).
RIGID_TOLERANCE = 1e-5


def _rite_names(names: list[str], warnings: list[str]) -> list[str]:
    """Joint names RiTE can hold (:func:`.names.joint_names`), every change reported."""
    out, changed = joint_names(names)
    if changed:
        warnings.append(f"{len(changed)} joint name(s) written differently, RiTE names hold no '\"' or line "
                        f"break and must differ: {shown(changed)}")
    return out


def nearest_rigid(m: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(rigid matrices, exact (...,) bool, error (...,)) of (..., 4, 4): the
    closest rotation to the 3x3 part divided by its uniform scale (signed
    cube root of the determinant), same translation. ``exact`` is False where
    that part is not a rotation within :data:`RIGID_TOLERANCE` (non-uniform
    scale, shear, a zero scale); ``error`` is how far it is from one."""
    m = np.asarray(m, dtype=np.float64)
    s = rig.uniform_scale(m)
    ok = np.isfinite(s) & (np.abs(s) > 1e-300)
    r = m[..., :3, :3] / np.where(ok, s, 1.0)[..., None, None]
    err = np.abs(r @ np.swapaxes(r, -1, -2) - np.eye(3)).max(axis=(-1, -2))
    ok &= err <= RIGID_TOLERANCE
    out = m.copy()
    out[..., :3, :3] = np.where(ok[..., None, None], r, m[..., :3, :3])
    return rig.orthonormal(out), ok, err


def _own_shear(world: np.ndarray, parents: np.ndarray) -> np.ndarray:
    """(J,) bool: joints whose default local matrix is not rigid up to a
    uniform scale (roots, and joints under a parent that flattens space,
    count as such): where a non-rigid default pose arises, not every joint
    below that merely inherits it."""
    has_p = parents[:, None, None] >= 0
    pw = np.where(has_p, world[np.maximum(parents, 0)], np.eye(4))
    with np.errstate(all="ignore"):
        det = np.linalg.det(pw[:, :3, :3])
    invertible = np.isfinite(det) & (np.abs(det) > 1e-300) & np.isfinite(world).all(axis=(1, 2))
    safe = invertible[:, None, None]
    local = np.linalg.solve(np.where(safe, pw, np.eye(4)), np.where(safe, world, np.eye(4)))
    return ~nearest_rigid(local)[1] | ~invertible | (parents < 0)


class RamBuild:
    """A scene's RAM (file space) and what it could not carry exactly."""

    def __init__(self, scene: Scene, back: AxisConversion, warnings: list[str]):
        self.scene = scene
        self.back = back
        self.warnings = warnings
        self.size = evaluate.size(scene)
        # what the files cannot carry: joint -> {reason: estimated vertex
        # displacement it causes, scene units}
        self.effects: dict[int, dict[str, float]] = {}
        sk = scene.skeleton
        if sk is None or not len(sk):
            self.names = ["root"]
            self.parents = np.array([-1])
            self.world = np.eye(4)[None]
            joints = [RiteJoint("root", -1, quat.IDENTITY, np.zeros(3), quat.IDENTITY)]
        else:
            joints = self._joints(sk)
        self.root = int(np.flatnonzero(self.parents < 0)[0])
        d = scene.skeleton.extras.get("rite") if scene.skeleton is not None else None
        ids = d.get("ids") if d and scene.source.format == FORMAT and len(d.get("ids", ())) == len(joints) else None
        self.ram = RamModel(mesh_name=self._mesh_name(), joints=joints, joint_ids=ids)
        self._meshes()

    def flag(self, j: int, why: str, effect: float) -> None:
        d = self.effects.setdefault(int(j), {})
        d[why] = max(d.get(why, 0.0), float(effect))

    def reported(self) -> dict[int, dict[str, float]]:
        """The effects above :data:`REPORT` of the model size."""
        limit = REPORT * self.size
        out = {}
        for j, d in self.effects.items():
            big = {r: e for r, e in d.items() if e > limit}
            if big:
                out[j] = big
        return out

    def _mesh_name(self) -> str:
        sc = self.scene
        name = ""
        if sc.source.format == FORMAT:
            name = (sc.extras.get("rite") or {}).get("mesh_name") or ""
        name = name or (sc.meshes[0].name if sc.meshes else "")
        if not name:                  # no mesh: the scene's name (an animation export writes no mesh)
            return spelt(sc.name or "mesh")
        written = spelt(name)
        if written != name:
            self.warnings.append(f"mesh name written differently, RiTE names hold no '\"' or line break: "
                                 f"{shown([(name, written)])}")
        return written

    def _joints(self, sk: Skeleton) -> list[RiteJoint]:
        J = len(sk)
        self.names = _rite_names(list(sk.names), self.warnings)
        self.parents = np.asarray(sk.parents, dtype=np.int64)
        self.world = sk.world()                                  # default pose, scene space
        rigid, ok, err = nearest_rigid(self.world)
        for j in np.flatnonzero(~ok & _own_shear(self.world, self.parents)):
            self.flag(j, "non-uniform scale or shear in the default pose", err[j] * self.size)
        parent_world = np.where(self.parents[:, None, None] >= 0, rigid[np.maximum(self.parents, 0)], np.eye(4))
        local = self.back.matrices(np.linalg.inv(parent_world) @ rigid)
        ori = quat.from_mat3(local)
        ori = np.where(ori[:, 3:] < 0, -ori, ori)
        tr = local[:, :3, 3].copy()
        rot = np.tile(quat.IDENTITY, (J, 1))
        d = sk.extras.get("rite") if self.scene.source.format == FORMAT else None
        if d and all(len(d.get(k, ())) == J for k in ("orientation", "rotation", "translation")):
            xo = np.array(d["orientation"], dtype=np.float64).reshape(J, 4)
            xr = np.array(d["rotation"], dtype=np.float64).reshape(J, 4)
            xt = np.array(d["translation"], dtype=np.float64).reshape(J, 3)
            q = quat.normalize(quat.mul(xo, xr))
            dq = np.minimum(np.abs(q - ori).max(axis=1), np.abs(q + ori).max(axis=1))
            ref = max(float(np.abs(tr).max()) if J else 0.0, 1e-300)
            same = (dq <= 1e-9) & (np.abs(xt - tr).max(axis=1) <= 1e-9 * ref)
            ori[same], rot[same], tr[same] = xo[same], xr[same], xt[same]
        return [RiteJoint(self.names[j], int(self.parents[j]), ori[j], tr[j], rot[j]) for j in range(J)]

    def _meshes(self) -> None:
        sc = self.scene
        meshes = sc.meshes
        has_n = any(m.normals is not None for m in meshes)
        has_uv = any(m.uvs is not None for m in meshes)
        P, N, UV, CV, TRI, SH, WV, WJ, WW = [], [], [], [], [], [], [], [], []
        v_off = c_off = 0
        top_level = False
        for m in meshes:
            p, n, (wv, wj, ww) = self._placed(m)
            if m.skin is None and (m.parent < 0 or sc.skeleton is None):
                top_level = True
            V = len(p)
            sizes = np.asarray(m.face_sizes, dtype=np.int64).reshape(-1)
            corners = np.asarray(m.corners, dtype=np.int64).reshape(-1)
            starts = m.face_starts
            if has_n and n is None:
                n = _face_normals(p, corners, sizes, starts)
            # fans: (s, s+i, s+i+1)
            ntri = np.maximum(sizes - 2, 0)
            if np.any(sizes < 3):
                self.warnings.append(f"mesh {m.name!r}: {int(np.sum(sizes < 3))} faces with fewer than 3 corners "
                                     f"skipped")
            T = int(ntri.sum())
            face = np.repeat(np.arange(len(sizes)), ntri)
            i = np.arange(T) - np.repeat(np.cumsum(ntri) - ntri, ntri) + 1
            a = starts[face]
            tri = np.stack((a, a + i, a + i + 1), axis=1)
            if self.back.mirrors:
                tri = tri[:, [0, 2, 1]]
            TRI.append(tri + c_off)                    # corner indices, all meshes' corners in a row
            CV.append(corners + v_off)
            P.append(p)
            if has_n:
                N.append(n)
            if has_uv:
                UV.append(np.zeros((len(corners), 2)) if m.uvs is None else np.asarray(m.uvs, dtype=np.float64))
            SH.append(self._shaders(m)[face])
            WV.append(wv + v_off)
            WJ.append(wj)
            WW.append(ww)
            v_off += V
            c_off += len(corners)
        if top_level and sc.skeleton is not None:
            for c in sc.clips:
                if c.animated[self.root]:
                    self.flag(self.root, "motion of the root joint, which carries the unskinned top-level meshes",
                              self.size)
                    break
        back = self.back
        ram = self.ram
        cat = (lambda a, shape, dt=np.float64: np.concatenate(a) if a else np.zeros(shape, dtype=dt))
        ram.positions = back.points(cat(P, (0, 3)))
        tri = cat(TRI, (0, 3), np.int64)
        corner_v = cat(CV, (0,), np.int64)
        ram.tri_vertices = corner_v[tri]
        # normals and UVs: the distinct rows of the corners the triangles use
        # (a vertex's corners mostly share one), converted after merging
        mark = np.zeros(len(corner_v), dtype=bool)
        mark[tri] = True
        used = np.flatnonzero(mark)
        if has_n:
            nu, inv = dedupe_rows(cat(N, (0, 3))[used], corner_v[used])
            nu = back.directions(nu)
            length = np.linalg.norm(nu, axis=1, keepdims=True)
            ram.normals, again = dedupe_rows(nu / np.where(length > 0, length, 1.0))
            ram.tri_normals = _remap(again[inv], used, tri)
        if has_uv:
            ram.uvs, inv = dedupe_rows(cat(UV, (0, 2))[used], corner_v[used])
            ram.tri_uvs = _remap(inv, used, tri)
        ram.tri_shader = cat(SH, (0,), np.int64)
        ram.weight_vertex = cat(WV, (0,), np.int64)
        ram.weight_joint = cat(WJ, (0,), np.int64)
        ram.weight_value = cat(WW, (0,))

    def _shaders(self, m: Mesh) -> np.ndarray:
        """Shader id of each face: the material's RiTE shader, else its scene index (0 without one)."""
        F = len(m.face_sizes)
        if not m.materials:
            return np.zeros(F, dtype=np.int64)
        ids = []
        for i in m.materials:
            mat = self.scene.materials[int(i)] if 0 <= int(i) < len(self.scene.materials) else None
            sid = mat.extras.get("rite_shader") if mat is not None else None
            ids.append(int(sid) if isinstance(sid, (int, np.integer)) else int(i))
        fm = np.zeros(F, dtype=np.int64) if m.face_materials is None else \
            np.clip(np.asarray(m.face_materials, dtype=np.int64).reshape(-1), 0, len(ids) - 1)
        return np.array(ids, dtype=np.int64)[fm]

    def _placed(self, m: Mesh):
        """(positions (V, 3), corner normals (L, 3) or None, (vertex, joint, weight))
        in scene space at the RAM's pose."""
        sc = self.scene
        sk = sc.skeleton
        W = self.world
        p = np.asarray(m.positions, dtype=np.float64).reshape(-1, 3)
        V = len(p)
        corners = np.asarray(m.corners, dtype=np.int64).reshape(-1)
        n = None if m.normals is None else np.asarray(m.normals, dtype=np.float64).reshape(-1, 3)
        M = np.asarray(m.matrix, dtype=np.float64).reshape(4, 4)
        if m.skin is None or sk is None:
            if m.parent >= 0 and sk is not None:
                G, j = W[m.parent] @ M, int(m.parent)
            else:
                G, j = M, self.root
            weights = (np.arange(V, dtype=np.int64), np.full(V, j, dtype=np.int64), np.ones(V))
            if np.array_equal(G, np.eye(4)):
                return p, n, weights
            return p @ G[:3, :3].T + G[:3, 3], (None if n is None else n @ np.linalg.inv(G[:3, :3])), weights
        skin = m.skin
        sj = np.asarray(skin.joints, dtype=np.int64)
        wv = np.asarray(skin.vertex, dtype=np.int64)
        wj = np.asarray(skin.joint, dtype=np.int64)
        ww = np.asarray(skin.weight, dtype=np.float64)
        k = np.searchsorted(sj, wj)
        known = (k < len(sj)) & (sj[np.minimum(k, max(len(sj) - 1, 0))] == wj) if len(sj) else np.zeros(len(wj), bool)
        if not known.all():
            self.warnings.append(f"mesh {m.name!r}: weights on joints without an inverse bind ignored")
            wv, wj, ww, k = wv[known], wj[known], ww[known], k[known]
        D = W[sj] @ np.asarray(skin.inverse_bind, dtype=np.float64).reshape(-1, 4, 4)   # bind -> default pose
        total = np.bincount(wv, weights=ww, minlength=V)
        weighted = total != 0.0
        mw = W[m.parent] @ M if m.parent >= 0 else M
        tol_t = 1e-12 * self.size
        if len(D) == 0 or (np.abs(D[:, :3, :3] - np.eye(3)).max() <= 1e-12
                           and np.abs(D[:, :3, 3]).max() <= tol_t):
            out, nm, G3 = p.copy(), n, None          # already in the default pose: kept exactly
            wout = ww
        else:
            wn = ww / np.where(weighted, total, 1.0)[wv]
            if np.abs(D[:, :3, :3] - D[0, :3, :3]).max() <= 1e-12 and np.abs(D[:, :3, 3] - D[0, :3, 3]).max() <= tol_t:
                G = np.broadcast_to(D[0], (V, 4, 4)).copy()
            else:
                G = np.zeros((V, 4, 4))
                np.add.at(G, wv, wn[:, None, None] * D[k])
            out = np.einsum("vij,vj->vi", G[:, :3, :3], p) + G[:, :3, 3]
            # what one blended pose cannot say: each influence's own placement
            own = np.einsum("wij,wj->wi", D[k, :3, :3], p[wv]) + D[k, :3, 3]
            dev = np.linalg.norm(own - out[wv], axis=1)
            dev[ww == 0] = 0.0
            if len(dev):
                per_joint = np.zeros(len(W))
                np.maximum.at(per_joint, wj, dev)
                for j in np.flatnonzero(per_joint > 0):
                    self.flag(j, "a bind pose that differs from the default pose in more than a rigid move",
                              per_joint[j])
            G3 = G[:, :3, :3]
            nm = None
            if n is not None:
                usable = weighted & (np.abs(np.linalg.det(G3)) > 1e-300)
                inv = np.linalg.inv(np.where(usable[:, None, None], G3, np.eye(3)))
                nm = np.einsum("li,lij->lj", n, inv[corners])
            wout = wn
        if not weighted.all():               # unweighted vertices stay where the mesh is placed
            rest = ~weighted
            out[rest] = p[rest] @ mw[:3, :3].T + mw[:3, 3]
            if n is not None:
                nm = np.array(n if nm is None else nm, dtype=np.float64, copy=True)
                at = rest[corners]
                nm[at] = n[at] @ np.linalg.inv(mw[:3, :3])
        return out, nm, (wv, wj, wout)


def _remap(row_of_used: np.ndarray, used: np.ndarray, tri: np.ndarray) -> np.ndarray:
    """Per triangle corner, the row of its corner (``used``: the corner indices ``row_of_used`` is for)."""
    row = np.zeros(int(used[-1]) + 1 if len(used) else 0, dtype=np.int64)
    row[used] = row_of_used
    return row[tri]


def _face_normals(p: np.ndarray, corners: np.ndarray, sizes: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Flat (Newell) normals of each face, per corner."""
    L = len(corners)
    if not L:
        return np.zeros((0, 3))
    face = np.repeat(np.arange(len(sizes)), sizes)
    local = np.arange(L) - starts[face]
    nxt = starts[face] + (local + 1) % sizes[face]
    a, b = p[corners], p[corners[nxt]]
    e = np.stack(((a[:, 1] - b[:, 1]) * (a[:, 2] + b[:, 2]), (a[:, 2] - b[:, 2]) * (a[:, 0] + b[:, 0]),
                  (a[:, 0] - b[:, 0]) * (a[:, 1] + b[:, 1])), axis=1)
    fn = np.zeros((len(sizes), 3))
    np.add.at(fn, face, e)
    length = np.linalg.norm(fn, axis=1, keepdims=True)
    fn = fn / np.where(length > 0, length, 1.0)
    return fn[face]
