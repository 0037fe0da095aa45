# SPDX-License-Identifier: GPL-3.0-or-later
"""Skinning over flat arrays: V vertices with up to K influences.

Influences are padded (V, K) arrays of joint indices and weights (unused
slots have weight 0). Two weight policies:

* ``"blender"``: weights divided by their sum; a vertex whose weights sum to
  at most 1e-4 stays where it is (Blender's Armature modifier).
* ``"rite"``: weights used as given (the RiTE runtime does not renormalise).

Linear blend skinning (``SkinJob``) prepares the weighted rest positions of
every influence once; a pose then gathers rows of the skinning matrices and
takes one dot product per vertex and row. It runs in float32 or float64 (the
dtype of the inputs) on chunks of vertices spread over threads (numpy
releases the GIL).
"""
from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass

import numpy as np

BLENDER_MIN_CONTRIB = 1e-4
_CHUNK = 16384          # most vertices per chunk of work
_POOL: ThreadPoolExecutor | None = None


def _parallel(fn, items) -> None:
    """``fn(item)`` for every item, on the pool's threads *and* the calling
    thread, items handed out one at a time. The calling thread is already
    running where pool threads woken from sleep start late, so it takes
    items from the start instead of waiting for them."""
    workers = min(_pool()._max_workers, len(items))
    items_iter = iter(items)
    lock = threading.Lock()

    def worker():
        while True:
            with lock:
                item = next(items_iter, None)
            if item is None:
                return
            fn(item)

    futures = [_pool().submit(worker) for _ in range(workers - 1)]
    try:
        worker()
    finally:
        for f in futures:
            f.cancel()          # not started: nothing left to do (and no wait on a busy pool)
        wait(futures)
    for f in futures:
        if not f.cancelled():
            f.result()


def _pool() -> ThreadPoolExecutor:
    global _POOL
    if _POOL is None:
        _POOL = ThreadPoolExecutor(max_workers=max(1, min(8, os.cpu_count() or 1)))
    return _POOL


@dataclass
class Influences:
    joints: np.ndarray   # (V, K) int32
    weights: np.ndarray  # (V, K) float

    @property
    def n_vertices(self) -> int:
        return self.joints.shape[0]

    @classmethod
    def from_sparse(cls, n_vertices: int, vertex, joint, weight, dtype=np.float64) -> "Influences":
        """Pad (vertex, joint, weight) triples into (V, K) arrays.

        Several triples naming the same (vertex, joint) are summed, as
        Blender's vertex groups would hold one weight per pair."""
        vertex = np.asarray(vertex, dtype=np.int64)
        joint = np.asarray(joint, dtype=np.int64)
        weight = np.asarray(weight, dtype=np.float64)
        if len(vertex) and (vertex.min() < 0 or vertex.max() >= n_vertices):
            raise ValueError("influence vertex index out of range")
        vertex, joint, weight = sum_pairs(vertex, joint, weight)
        counts = np.bincount(vertex, minlength=n_vertices)
        K = max(1, int(counts.max()) if len(counts) else 1)
        starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
        order = np.argsort(vertex, kind="stable")
        slot = np.arange(len(vertex)) - starts[vertex[order]]
        joints = np.zeros((n_vertices, K), dtype=np.int32)
        weights = np.zeros((n_vertices, K), dtype=dtype)
        joints[vertex[order], slot] = joint[order]
        weights[vertex[order], slot] = weight[order]
        return cls(joints, weights)

    def policy_weights(self, policy: str) -> tuple[np.ndarray, np.ndarray]:
        """(weights to use (V, K), moving (V,) bool) under a weight policy."""
        w = self.weights
        if policy == "rite":
            return w, np.ones(len(w), dtype=bool)
        if policy == "blender":
            total = w.sum(axis=1, dtype=np.float64)
            moving = total > BLENDER_MIN_CONTRIB
            scale = np.where(moving, 1.0 / np.where(moving, total, 1.0), 0.0).astype(w.dtype)
            return w * scale[:, None], moving
        raise ValueError(f"unknown weight policy {policy!r}")


class SkinJob:
    """Linear blend skinning prepared once, run for many poses (ozz-style job).

    What does not depend on the pose is prepared at construction: each
    vertex's influences are ordered with the non-zero weights first, and every
    influence slot stores the weighted homogeneous rest position
    ``w_k * [x, y, z, 1]`` (``w_k * [nx, ny, nz, 0]`` for normals), vertex
    after vertex, so that

        out[v, r] = sum over slots k and columns c of M_{j_k}[r, c] * w_k p[v, c]

    is one dot product of length 4 K per vertex and row. A pose then costs,
    per chunk of vertices, one ``np.take`` of matrix rows and one ``einsum``
    of those dot products (no per-vertex blend of 12 gathered matrix entries
    per influence). In float32 a gathered item is the same row of the
    matrices of two joints (a table of joint pairs, 32 bytes per item; built
    per pose while the rig is small enough for it to stay in cache), so a
    vertex with four influences needs six gathers. Chunks only carry as many
    slots as their vertices use, and are spread over threads (numpy releases
    the GIL), each thread with its own scratch buffers: a pose allocates
    nothing big. ``run(matrices)`` returns (V, 3) views of the result.
    """

    # gathered matrix rows of one chunk, per thread: L2-sized in one thread; with
    # threads, twice that (fewer numpy calls, i.e. fewer GIL hand-overs per pose,
    # are worth more than the cache there: bench_skinning measures both)
    _SCRATCH_BYTES = 1 << 19
    _PAIR_TABLE_BYTES = 1 << 20   # joint-pair table (float32) at most this big

    def __init__(self, positions: np.ndarray, influences: Influences, policy: str = "blender",
                 normals: np.ndarray | None = None, dtype=None, threads: bool = True):
        pos = np.asarray(positions)
        self.dtype = np.dtype(dtype or (pos.dtype if pos.dtype in (np.float32, np.float64) else np.float64))
        ftype = self.dtype
        pos = np.asarray(pos, dtype=ftype).reshape(-1, 3)
        nrm = None if normals is None else np.asarray(normals, dtype=ftype).reshape(-1, 3)
        w, moving = influences.policy_weights(policy)
        joints = np.asarray(influences.joints)
        if joints.size and joints.min() < 0:
            raise IndexError("negative joint index in the influences")
        # gathers use np.take(mode="wrap"): no per-element bounds check; run()
        # checks the largest index once
        self.joint_limit = int(joints.max()) + 1 if joints.size else 0
        V, K = joints.shape
        w = np.asarray(w, dtype=ftype)
        # non-zero weights first (from_sparse pads at the end already): a chunk
        # carries only the slots its vertices use
        nonzero = w != 0
        if K > 1 and (~nonzero[:, :-1] & nonzero[:, 1:]).any():
            unordered = np.nonzero((~nonzero[:, :-1] & nonzero[:, 1:]).any(axis=1))[0]
            if len(unordered):
                order = np.argsort(~nonzero[unordered], axis=1, kind="stable")
                w, joints = w.copy(), joints.copy()
                w[unordered] = np.take_along_axis(w[unordered], order, axis=1)
                joints[unordered] = np.take_along_axis(joints[unordered], order, axis=1)
                nonzero[unordered] = np.take_along_axis(nonzero[unordered], order, axis=1)
        self._rows = 3 if nrm is None else 6
        # joints per gathered item: pairs in float32 (a 32-byte item, numpy's
        # fastest take) when the pair table is small, else one joint
        n_joints = max(1, self.joint_limit)
        per_item = 2 if (ftype == np.float32 and K > 1
                         and self._rows * n_joints * n_joints * 8 * ftype.itemsize <= self._PAIR_TABLE_BYTES) else 1
        slots = -(-K // per_item) * per_item        # whole items; a padding slot has weight 0
        per_vertex = self._rows * 4 * max(slots, 1) * ftype.itemsize
        scratch = self._SCRATCH_BYTES * (2 if threads else 1)
        chunk = int(min(_CHUNK, max(256, 2 ** int(np.log2(max(1, scratch // per_vertex))))))
        self.bounds = [(i, lo, min(V, lo + chunk)) for i, lo in enumerate(range(0, V, chunk))]
        starts = [lo for _, lo, _ in self.bounds]
        # slots used in each chunk: 1 + the last column with a non-zero weight
        chunk_used = np.zeros(len(starts), dtype=int)
        for k in range(K if V else 0):
            chunk_used[np.logical_or.reduceat(nonzero[:, k], starts)] = k + 1
        n_chunks = len(self.bounds)
        self._index: list[np.ndarray] = [np.empty(0)] * n_chunks
        self._weighted_positions: list[np.ndarray] = [np.empty(0)] * n_chunks
        self._weighted_normals: list[np.ndarray] = [np.empty(0)] * n_chunks

        def prepare(item):
            i, lo, hi = item
            k = -(-int(chunk_used[i]) // per_item) * per_item
            chunk_w, chunk_j = w[lo:hi, :k], joints[lo:hi, :k].astype(np.intp)
            if k > K:                               # odd K in pairs: one padding slot
                chunk_w = np.concatenate([chunk_w, np.zeros((hi - lo, k - K), ftype)], axis=1)
                chunk_j = np.concatenate([chunk_j, np.zeros((hi - lo, k - K), np.intp)], axis=1)
            self._index[i] = chunk_j[:, 0::2] * n_joints + chunk_j[:, 1::2] if per_item == 2 else chunk_j
            self._weighted_positions[i] = self._weighted(pos[lo:hi], 1, chunk_w)
            if nrm is not None:
                self._weighted_normals[i] = self._weighted(nrm[lo:hi], 0, chunk_w)

        if threads and n_chunks > 1:
            _parallel(prepare, self.bounds)
        else:
            for item in self.bounds:
                prepare(item)
        self._n_joints = n_joints
        self._joints_per_item = per_item
        self._chunk_size = chunk
        # vertices that stay where they are (blender policy, weights summing to ~0)
        self.still = np.nonzero(~moving)[0]
        self._still_pos = pos[self.still].T.copy()
        self._still_nrm = None if nrm is None else nrm[self.still].T.copy()
        self._still_at = np.searchsorted(self.still, starts + [V])
        self.threads = threads and len(self.bounds) > 1
        self.out_t = np.empty((3, V), dtype=ftype)
        self.out_n_t = None if nrm is None else np.empty((3, V), dtype=ftype)
        self._scratch_size = self._rows * chunk * 4 * max(slots, 1)
        self._local = threading.local()

    @staticmethod
    def _weighted(p: np.ndarray, last: float, w: np.ndarray) -> np.ndarray:
        """(V, 4 K): w[v, k] * [p_x, p_y, p_z, last], the slots of a vertex side by side."""
        V, K = w.shape
        p4 = np.empty((V, 4), dtype=p.dtype)
        p4[:, :3] = p
        p4[:, 3] = last
        # repeat each vertex's 4 values K times as one item (a plain copy), then
        # scale each component by the slot weights (long strided loops; a
        # broadcast over the last axis of 4 would run one tiny loop per slot)
        item = np.dtype((np.void, 4 * p.dtype.itemsize))
        q = np.repeat(p4.view(item).reshape(V), K).view(p.dtype).reshape(V * K, 4)
        wf = w.reshape(-1)
        for c in range(4):
            q[:, c] *= wf
        return q.reshape(V, 4 * K)

    def _scratch(self):
        """This thread's scratch arrays (allocated on its first chunk, then reused)."""
        b = getattr(self._local, "scratch", None)
        if b is None:
            chunk = self._chunk_size
            b = (np.empty(self._scratch_size, dtype=self.dtype),    # gathered matrix rows
                 np.empty((2, chunk), dtype=self.dtype),            # normal lengths
                 np.empty(chunk, dtype=bool))
            self._local.scratch = b
        return b

    def _chunk(self, item, table):
        i, lo, hi = item
        n = hi - lo
        out = self.out_t[:, lo:hi]
        out_n = None if self.out_n_t is None else self.out_n_t[:, lo:hi]
        gathered, lengths, zero = self._scratch()
        index = self._index[i]
        if index.shape[1] == 0:
            out[...] = 0
            if out_n is not None:
                out_n[...] = 0
        else:
            rows, width = len(table), 4 * self._joints_per_item * index.shape[1]
            taken = gathered[:rows * n * width].reshape(rows, n, index.shape[1], table.shape[2])
            np.take(table, index, axis=1, out=taken, mode="wrap")
            taken = taken.reshape(rows, n, width)
            np.einsum("rvs,vs->rv", taken[:3], self._weighted_positions[i], out=out, optimize=False)
            if out_n is not None:
                np.einsum("rvs,vs->rv", taken[3:], self._weighted_normals[i], out=out_n, optimize=False)
        a, b = self._still_at[i], self._still_at[i + 1]
        if b > a:
            idx = self.still[a:b] - lo
            out[:, idx] = self._still_pos[:, a:b]
            if out_n is not None:
                out_n[:, idx] = self._still_nrm[:, a:b]
        if out_n is not None:
            length, tmp = lengths[0, :n], lengths[1, :n]
            np.multiply(out_n[0], out_n[0], out=length)
            np.multiply(out_n[1], out_n[1], out=tmp)
            length += tmp
            np.multiply(out_n[2], out_n[2], out=tmp)
            length += tmp
            np.sqrt(length, out=length)
            np.equal(length, 0, out=zero[:n])
            length += zero[:n]                  # zero length: divide by 1
            out_n /= length

    def _table(self, m: np.ndarray, normal_matrices) -> np.ndarray:
        """Rows of the skinning (and normal) matrices, (rows, J, 4); in pairs
        (rows, J * J, 8): item a * J + b holds row r of joints a and b."""
        n_joints = self._n_joints
        rows = np.zeros((self._rows, n_joints, 4), dtype=self.dtype)
        rows[:3] = m[:n_joints, :3, :4].transpose(1, 0, 2)
        if self._rows == 6:
            if normal_matrices is None:
                normal_matrices = np.swapaxes(np.linalg.inv(m[:n_joints, :3, :3]), -1, -2)
            rows[3:, :, :3] = np.swapaxes(np.asarray(normal_matrices, dtype=np.float64)[:n_joints], 0, 1)
        if self._joints_per_item == 1:
            return rows
        pairs = np.empty((self._rows, n_joints, n_joints, 8), dtype=self.dtype)
        pairs[:, :, :, :4] = rows[:, :, None]
        pairs[:, :, :, 4:] = rows[:, None]
        return pairs.reshape(self._rows, n_joints * n_joints, 8)

    def run(self, matrices: np.ndarray, normal_matrices: np.ndarray | None = None):
        """Skin with (J, 4, 4) matrices; normals (if given at construction) use
        ``normal_matrices`` (default: inverse transpose of each 3x3, i.e. the
        rotation part for rigid transforms) and are normalised."""
        m = np.asarray(matrices, dtype=np.float64)
        if len(m) < self.joint_limit:
            raise IndexError(f"influences name joint {self.joint_limit - 1} but only {len(m)} matrices are given")
        table = self._table(m, normal_matrices) if len(m) else None

        def work(item):
            self._chunk(item, table)

        if self.threads:
            _parallel(work, self.bounds)
        else:
            for item in self.bounds:
                work(item)
        return self.out_t.T, None if self.out_n_t is None else self.out_n_t.T


def linear_blend(positions: np.ndarray, matrices: np.ndarray, influences: Influences,
                 policy: str = "blender", normals: np.ndarray | None = None,
                 normal_matrices: np.ndarray | None = None, threads: bool = True):
    """Linear blend skinning in one call (see ``SkinJob`` to reuse the set-up).

    positions (V, 3); matrices (J, 4, 4) skinning matrices (world @ bind^-1);
    normals (V, 3) optional. Returns (positions, normals or None) as (V, 3)
    arrays in the positions' dtype (float32 or float64).
    """
    job = SkinJob(positions, influences, policy, normals=normals, threads=threads)
    return job.run(matrices, normal_matrices)


def sum_pairs(vertex: np.ndarray, joint: np.ndarray, weight: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sparse (vertex, joint, weight) triples (int64, int64, float64) with
    the triples of each (vertex, joint) pair summed into one, ordered by
    vertex, then joint (no triples: as given)."""
    if not len(vertex):
        return vertex, joint, weight
    n_j = int(joint.max()) + 1
    pair, inv = np.unique(vertex * n_j + joint, return_inverse=True)
    return pair // n_j, pair % n_j, np.bincount(inv, weights=weight, minlength=len(pair))


def limit_influences(vertex, joint, weight, limit: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Sparse (vertex, joint, weight) triples with at most ``limit`` joints
    per vertex (0: no limit): each vertex keeps its strongest weights
    (triples of one (vertex, joint) pair summed first), scaled so that they
    add up to what all of its weights did. Returns (vertex, joint, weight,
    the vertices that lost weights)."""
    vertex = np.asarray(vertex, dtype=np.int64)
    joint = np.asarray(joint, dtype=np.int64)
    weight = np.asarray(weight, dtype=np.float64)
    if limit <= 0 or not len(vertex):
        return vertex, joint, weight, np.zeros(0, dtype=np.int64)
    v, j, summed = sum_pairs(vertex, joint, weight)
    if np.bincount(v).max() <= limit:
        return vertex, joint, weight, np.zeros(0, dtype=np.int64)
    order = np.lexsort((-summed, v))                        # by vertex, strongest first
    v, j, w = v[order], j[order], summed[order]
    first = np.concatenate(([True], v[1:] != v[:-1]))
    rank = np.arange(len(v)) - np.maximum.accumulate(np.where(first, np.arange(len(v)), 0))
    keep = rank < limit
    total = np.bincount(v, weights=w)
    kept = np.bincount(v[keep], weights=w[keep], minlength=len(total))
    scale = np.divide(total, kept, out=np.ones_like(total), where=kept != 0)
    lost = np.unique(v[~keep])
    return v[keep], j[keep], w[keep] * scale[v[keep]], lost
