# SPDX-License-Identifier: GPL-3.0-or-later
"""core/ without Blender: checked against literal ports of the code of the
RiTE skeletal animation system document (its C# listings: tests/rite_seed.py)."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import blender_normals
import numpy as np
import pytest
from dual_quaternion import dual_quaternion
from rite_seed import seed_mul, seed_slerp_no_invert, seed_to_matrix, seed_update_track

from legacy_skin_io.core import blend, quat, sampling, skeleton, skinning, vectors
from legacy_skin_io.io.rite import runtime

# literal ports of the RiTE document's C# code, one value at a time: tests/rite_seed.py


def rotate(q, v) -> np.ndarray:
    """v rotated by unit quaternions q: q * (v, 0) * conj(q), vectorised."""
    q, v = np.asarray(q, dtype=np.float64), np.asarray(v, dtype=np.float64)
    u = q[..., :3]
    w = q[..., 3:4]
    t = 2.0 * np.cross(u, v)
    return v + w * t + np.cross(u, t)


# --- quaternions ---------------------------------------------------------------

def test_quaternion_product_and_matrices_match_seed():
    rng = np.random.default_rng(0)
    a = quat.normalize(rng.normal(size=(50, 4)))
    b = quat.normalize(rng.normal(size=(50, 4)))
    prod = quat.mul(a, b)
    for i in range(50):
        assert np.allclose(prod[i], seed_mul(a[i], b[i]), atol=1e-15)
        assert np.allclose(quat.to_mat3(a[i]), seed_to_matrix(a[i]), atol=1e-14)
    # composition of rotations = product of matrices
    assert np.allclose(quat.to_mat3(prod), quat.to_mat3(a) @ quat.to_mat3(b), atol=1e-12)
    # rotate = q (v,0) q*
    v = rng.normal(size=(50, 3))
    pure = np.concatenate((v, np.zeros((50, 1))), axis=1)
    ref = quat.mul(quat.mul(a, pure), quat.conj(a))[:, :3]
    assert np.allclose(rotate(a, v), ref, atol=1e-12)
    # matrix round trip (up to sign)
    back = quat.from_mat3(quat.to_mat3(a))
    assert np.allclose(np.abs(quat.dot(back, a)), 1.0, atol=1e-12)
    m4 = quat.to_mat4(a, v)
    assert np.allclose(m4[:, :3, 3], v) and np.allclose(m4[:, 3], [0, 0, 0, 1])


def rite_world_quat(skel: skeleton.Skeleton, orientation, translation, rotation):
    """The RiTE skeletal animation system document's
    ``updateAbsolutes`` literally, with quaternions: (absolute rotations
    (..., J, 4), absolute translations (..., J, 3)), to cross-check the
    matrix path against the runtime's own arithmetic."""
    local_r = quat.mul(orientation, rotation)
    local_t = np.broadcast_to(np.asarray(translation, dtype=np.float64), local_r.shape[:-1] + (3,))
    abs_r = np.empty_like(local_r)
    abs_t = np.empty(local_r.shape[:-1] + (3,))
    for d, idx in enumerate(skel.levels):
        if d == 0:
            abs_r[..., idx, :] = local_r[..., idx, :]
            abs_t[..., idx, :] = local_t[..., idx, :]
        else:
            p = skel.parents[idx]
            abs_r[..., idx, :] = quat.mul(abs_r[..., p, :], local_r[..., idx, :])
            abs_t[..., idx, :] = abs_t[..., p, :] + rotate(abs_r[..., p, :], local_t[..., idx, :])
    return abs_r, abs_t


def test_slerp_no_invert_matches_seed_including_opposite_hemispheres():
    rng = np.random.default_rng(1)
    a = quat.normalize(rng.normal(size=(400, 4)))
    b = quat.normalize(rng.normal(size=(400, 4)))
    b[:100] = -a[:100] + rng.normal(scale=0.01, size=(100, 4))  # dot near -1: lerp branch
    b[100:150] = a[100:150] + rng.normal(scale=0.01, size=(50, 4))  # dot near 1
    b = quat.normalize(b)
    t = rng.uniform(0, 1, size=400)
    got = quat.slerp_no_invert(a, b, t)
    for i in range(400):
        assert np.allclose(got[i], seed_slerp_no_invert(a[i], b[i], t[i]), atol=1e-12)
    # no hemisphere flip: halfway between q and -q-ish is not q
    assert quat.dot(got[:100], a[:100]).min() < 0.9


def test_shortest_slerp_and_blender_nlerp():
    a = quat.from_axis_angle([0, 0, 1], 0.0)
    b = quat.from_axis_angle([0, 0, 1], 2.0)
    mid = quat.slerp_shortest(a, b, 0.5)
    assert np.allclose(mid, quat.from_axis_angle([0, 0, 1], 1.0))
    # shortest path: -b gives the same result
    assert np.allclose(quat.slerp_shortest(a, -b, 0.5), mid)
    # nlerp is per component on the stored values: -b goes the other way
    assert np.allclose(np.abs(quat.dot(quat.nlerp_blender(a, b, 0.5), mid)), 1.0)
    assert not np.allclose(np.abs(quat.dot(quat.nlerp_blender(a, -b, 0.25), mid)), 1.0)
    q = np.array([[0, 0, 0, 1.0], [0, 0, 0, -1.0], [0, 0, 0.1, -1.0]])
    c = quat.make_continuous(q)
    assert (quat.dot(c[1:], c[:-1]) >= 0).all()
    assert np.allclose(np.abs(c), np.abs(q))


def test_cross_is_numpys_bit_for_bit():
    """core.vectors.cross gives np.cross's numbers, broadcast over leading axes."""
    rng = np.random.default_rng(3)
    for shape_a, shape_b in (((3,), (3,)), ((50, 3), (50, 3)), ((7, 1, 3), (1, 5, 3)), ((4, 3), (3,))):
        a, b = rng.normal(size=shape_a) * 1e3, rng.normal(size=shape_b)
        assert np.array_equal(vectors.cross(a, b), np.cross(a, b))


# --- skeletons -----------------------------------------------------------------

def test_skeleton_any_order_cycles_and_missing_parents():
    sk = skeleton.Skeleton([2, -1, 1, 0], ["c", "root", "mid", "leaf"])
    assert [list(l) for l in sk.levels] == [[1], [2], [0], [3]]
    with pytest.raises(skeleton.SkeletonError, match="cycle"):
        skeleton.Skeleton([1, 0, -1], ["a", "b", "c"])
    with pytest.raises(skeleton.SkeletonError, match="missing parent"):
        skeleton.Skeleton([-1, 5], ["a", "b"])


def test_world_transforms_match_seed_update_absolutes_for_many_frames():
    rng = np.random.default_rng(2)
    J, F = 30, 7
    parents = np.array([-1] + [int(rng.integers(0, j)) for j in range(1, J)])
    perm = rng.permutation(J)  # joints listed in any order
    inv = np.argsort(perm)
    parents_p = np.array([inv[parents[p]] if parents[p] >= 0 else -1 for p in perm])
    sk = skeleton.Skeleton(parents_p)
    ori = quat.normalize(rng.normal(size=(J, 4)))
    tr = rng.normal(size=(J, 3))
    rot = quat.normalize(rng.normal(size=(F, J, 4)))
    world = sk.world(runtime.rite_local(ori, tr, rot))
    abs_r, abs_t = rite_world_quat(sk, ori, tr, rot)
    assert np.allclose(world[..., :3, :3], quat.to_mat3(abs_r), atol=1e-12)
    assert np.allclose(world[..., :3, 3], abs_t, atol=1e-12)
    # literal recursion for one frame
    f = 3
    for j in range(J):
        chain = []
        k = j
        while k >= 0:
            chain.append(k)
            k = parents_p[k]
        r = [0, 0, 0, 1.0]
        t = np.zeros(3)
        for k in reversed(chain):
            local = seed_mul(ori[k], rot[f, k])
            t = t + rotate(np.array(r), tr[k])
            r = seed_mul(r, local)
        assert np.allclose(world[f, j, :3, 3], t, atol=1e-12)
        assert np.allclose(world[f, j, :3, :3], seed_to_matrix(quat.normalize(np.array(r))), atol=1e-12)


# --- sampling ------------------------------------------------------------------

def test_rite_sampling_equals_seed_animator_every_frame():
    rng = np.random.default_rng(3)
    frames = 37
    tracks_f, tracks_q = [], []
    for k in [1, 2, 3, 5, 9]:
        f = np.sort(rng.choice(frames, size=k, replace=False))
        q = quat.normalize(rng.normal(size=(k, 4)))
        q[rng.random(k) < 0.5] *= -1  # opposite hemispheres stay as given
        tracks_f.append(f)
        tracks_q.append(q)
    # out-of-order keys are accepted and sorted
    order = rng.permutation(len(tracks_f[-1]))
    clip = runtime.RiteClip.from_tracks(frames, [tracks_f[0], tracks_f[1], tracks_f[2], tracks_f[3],
                                                  tracks_f[4][order]],
                                         tracks_q[:4] + [tracks_q[4][order]])
    all_frames = np.arange(frames)
    got = clip.sample(all_frames)
    assert got.shape == (frames, 5, 4)
    for ti in range(1, 5):  # multi-key tracks: the RiTE document's code exactly
        keys = list(zip(tracks_f[ti].tolist(), tracks_q[ti].tolist()))
        for f in all_frames:
            assert np.allclose(got[f, ti], seed_update_track(keys, frames, int(f)), atol=1e-12), (ti, f)
    # single-key track holds its key (the 2006 code divides by zero here)
    assert np.allclose(got[:, 0], tracks_q[0][0])
    with pytest.raises(ValueError):
        runtime.RiteClip.from_tracks(10, [np.array([1, 1])], [np.zeros((2, 4))])


def test_time_based_channels_hold_lerp_slerp():
    ch = sampling.Channels.from_tracks([0, 1], [np.array([10.0, 20.0]), np.array([5.0])],
                                       [np.array([[0, 0, 0], [10, 20, 30.0]]), np.array([[1, 2, 3.0]])], 3)
    out = ch.sample([0, 10, 15, 20, 99])
    assert np.allclose(out[:, 0], [[0, 0, 0], [0, 0, 0], [5, 10, 15], [10, 20, 30], [10, 20, 30]])
    assert np.allclose(out[:, 1], [1, 2, 3])
    a = quat.from_axis_angle([1, 0, 0], 0.2)
    b = -quat.from_axis_angle([1, 0, 0], 1.2)  # stored in the other hemisphere
    rc = sampling.Channels.from_tracks([0], [np.array([0.0, 4.0])], [np.stack((a, b))], 4)
    sl = rc.sample([1.0], "slerp")[0, 0]
    assert np.allclose(np.abs(quat.dot(sl, quat.from_axis_angle([1, 0, 0], 0.45))), 1.0)
    nl = rc.sample([1.0], "nlerp")[0, 0]
    assert np.allclose(nl, quat.normalize(a + (b - a) * 0.25))


def test_matrix_keys_decompose_and_compose():
    rng = np.random.default_rng(4)
    t = rng.normal(size=(6, 3))
    r = quat.normalize(rng.normal(size=(6, 4)))
    s = rng.uniform(0.5, 2, size=(6, 3))
    m = sampling.compose_trs(t, r, s)
    t2, r2, s2 = sampling.decompose_trs(m)
    assert np.allclose(sampling.compose_trs(t2, r2, s2), m, atol=1e-12)
    mirrored = m.copy()
    mirrored[:, :3, 0] *= -1
    t3, r3, s3 = sampling.decompose_trs(mirrored)
    assert np.allclose(sampling.compose_trs(t3, r3, s3), mirrored, atol=1e-12)
    rotation = sampling.Channels.from_tracks([1], [np.array([0.0, 10.0])], [r[:2]], 4)
    translation = sampling.Channels.from_tracks([0], [np.array([0.0, 10.0])], [t[:2]], 3)
    query = [0.0, 5.0, 10.0]
    assert np.allclose(translation.sample(query)[1, 0], (t[0] + t[1]) / 2)
    assert np.allclose(quat.to_mat3(rotation.sample(query, "slerp")[2, 0]), quat.to_mat3(r[1]))


def test_sampling_many_tracks_in_one_call_matches_per_track():
    rng = np.random.default_rng(5)
    times = [np.sort(rng.uniform(0, 100, size=int(rng.integers(1, 8)))) for _ in range(40)]
    vals = [rng.normal(size=(len(t), 3)) for t in times]
    ch = sampling.Channels.from_tracks(np.arange(40), times, vals, 3)
    q = rng.uniform(-10, 110, size=200)
    out = ch.sample(q)
    for i in range(40):
        ref = np.stack([np.interp(q, times[i], vals[i][:, c]) for c in range(3)], axis=1)
        assert np.allclose(out[:, i], ref)


# --- blending ------------------------------------------------------------------

def test_mergeable_weights_and_dominant_override():
    rng = np.random.default_rng(6)
    F, J = 4, 5
    base = quat.normalize(rng.normal(size=(J, 4)))
    walk = quat.normalize(rng.normal(size=(F, J, 4)))
    run = quat.normalize(rng.normal(size=(F, J, 4)))
    wave = quat.normalize(rng.normal(size=(F, J, 4)))
    walk_act = np.array([1, 1, 1, 0, 0], bool)
    run_act = np.array([0, 1, 1, 0, 0], bool)
    wave_act = np.array([0, 1, 0, 0, 1], bool)
    out = blend.animator(base, [(walk, walk_act, 1.0), (run, run_act, 3.0)], [(wave, wave_act)])
    # the weighted average, by hand: each rotation in the sign nearer the first, normalised
    aligned = np.where(np.sum(walk * run, axis=-1, keepdims=True) < 0, -run, run)
    assert np.allclose(out[:, 2], quat.normalize(0.25 * walk[:, 2] + 0.75 * aligned[:, 2]))
    assert np.allclose(out[:, 0], walk[:, 0])       # walk alone animates joint 0: all of it, whatever its weight
    assert np.allclose(out[:, 1], wave[:, 1])       # dominant overrides
    assert np.allclose(out[:, 3], base[3])          # untouched joint keeps its base
    assert np.allclose(out[:, 4], wave[:, 4])
    # the 2006 Animator: run overwrites walk where it animates, weights unused
    old = blend.animator(base, [(walk, walk_act, 1.0), (run, run_act, 3.0)], [], mix="ANIMATOR_2006")
    assert np.allclose(old[:, 0], walk[:, 0]) and np.allclose(old[:, 1:3], run[:, 1:3])
    # joints whose animations all weigh 0 keep their default
    zero = blend.animator(base, [(walk, walk_act, 0.0)], [])
    assert np.allclose(zero, np.broadcast_to(base, zero.shape))


# --- skinning ------------------------------------------------------------------

def _random_skin(rng, V=2000, J=12, K=4, dtype=np.float64):
    pos = rng.normal(size=(V, 3)).astype(dtype)
    mats = np.tile(np.eye(4), (J, 1, 1))
    mats[:, :3, :3] = quat.to_mat3(quat.normalize(rng.normal(size=(J, 4)))) * rng.uniform(0.5, 1.5, (J, 1, 1))
    mats[:, :3, 3] = rng.normal(size=(J, 3))
    vert = np.repeat(np.arange(V), K)
    joint = rng.integers(0, J, size=V * K)
    weight = rng.uniform(0, 1, size=V * K)
    return pos, mats, vert, joint, weight


def test_linear_blend_policies_against_naive_loop():
    rng = np.random.default_rng(7)
    pos, mats, vert, joint, weight = _random_skin(rng, V=300)
    weight[vert < 5] = 0.0  # unweighted vertices
    infl = skinning.Influences.from_sparse(300, vert, joint, weight)
    out_b, _ = skinning.linear_blend(pos, mats, infl, "blender", threads=False)
    out_r, _ = skinning.linear_blend(pos, mats, infl, "rite")
    acc = np.zeros((300, 3))
    tot = np.zeros(300)
    for v, j, w in zip(vert, joint, weight):
        acc[v] += w * (mats[j, :3, :3] @ pos[v] + mats[j, :3, 3])
        tot[v] += w
    assert np.allclose(out_r, acc)
    moving = tot > 1e-4
    assert np.allclose(out_b[moving], acc[moving] / tot[moving, None])
    assert np.allclose(out_b[~moving], pos[~moving])
    assert np.allclose(out_r[:5], 0.0)  # RiTE: weights as given, none -> origin


def test_linear_blend_float32_threads_and_normals():
    rng = np.random.default_rng(8)
    pos, mats, vert, joint, weight = _random_skin(rng, V=100_000)
    infl = skinning.Influences.from_sparse(100_000, vert, joint, weight, dtype=np.float32)
    p64, _ = skinning.linear_blend(pos, mats, infl, threads=False)
    p32, _ = skinning.linear_blend(pos.astype(np.float32), mats, infl, threads=True)
    assert p32.dtype == np.float32
    assert np.abs(p32 - p64).max() < 1e-4 * np.abs(p64).max()
    # rigid transforms: normals rotate with the rotation part (the RiTE document: rotations)
    rigid = mats.copy()
    rigid[:, :3, :3] /= np.linalg.norm(rigid[:, :3, :3], axis=1, keepdims=True)
    one = skinning.Influences.from_sparse(10, np.arange(10), np.arange(10) % 12, np.ones(10))
    n = quat.normalize(rng.normal(size=(10, 4)))[:, :3]
    n /= np.linalg.norm(n, axis=1, keepdims=True)
    _, nn = skinning.linear_blend(pos[:10], rigid, one, normals=n)
    ref = np.einsum("nij,nj->ni", rigid[np.arange(10) % 12, :3, :3], n)
    assert np.allclose(nn, ref)


def _skin_reference(pos, nrm, mats, normal_mats, joints, weights, policy):
    """Straightforward linear blend skinning in float64, slot by slot:
    sum over influences of w * (M @ [p, 1]) (normals: w * (N @ n), then
    normalised); "blender" divides by the weight sum and keeps vertices whose
    weights sum to at most 1e-4 where they are."""
    pos = np.asarray(pos, dtype=np.float64)
    nrm = np.asarray(nrm, dtype=np.float64)
    w = np.asarray(weights, dtype=np.float64)
    out = np.zeros_like(pos)
    out_n = np.zeros_like(nrm)
    for k in range(joints.shape[1]):
        m = mats[joints[:, k]]
        out += w[:, k, None] * (np.einsum("vij,vj->vi", m[:, :3, :3], pos) + m[:, :3, 3])
        out_n += w[:, k, None] * np.einsum("vij,vj->vi", normal_mats[joints[:, k]], nrm)
    if policy == "blender":
        total = w.sum(axis=1)
        still = total <= skinning.BLENDER_MIN_CONTRIB
        div = np.where(still, 1.0, total)[:, None]
        out = np.where(still[:, None], pos, out / div)
        out_n = np.where(still[:, None], nrm, out_n / div)
    length = np.linalg.norm(out_n, axis=1, keepdims=True)
    return out, out_n / np.where(length > 0, length, 1.0)


def _skin_case(rng, V, J, K, scale_spread=0.5):
    """Random rig and influences with the awkward cases: vertices without any
    weight, vertices with fewer influences than K (padding, zero weights
    before non-zero ones), repeated joints and a tiny total weight."""
    pos = rng.normal(size=(V, 3)) * 3.0
    nrm = rng.normal(size=(V, 3))
    nrm /= np.linalg.norm(nrm, axis=1, keepdims=True)
    mats = np.tile(np.eye(4), (J, 1, 1))
    mats[:, :3, :3] = quat.to_mat3(quat.normalize(rng.normal(size=(J, 4)))) * rng.uniform(
        1 - scale_spread, 1 + scale_spread, (J, 1, 3))
    mats[:, :3, 3] = rng.normal(size=(J, 3))
    joints = rng.integers(0, J, size=(V, K)).astype(np.int32)
    weights = rng.uniform(0, 1, size=(V, K))
    weights[rng.random((V, K)) < 0.25] = 0.0       # padding anywhere in the row
    weights[: V // 50] = 0.0                       # no influence at all
    weights[V // 50: V // 40, 1:] = 0.0            # a single influence
    if V > 100:
        weights[V // 40: V // 40 + 3] = 2e-5       # total under Blender's 1e-4
    return pos, nrm, mats, joints, weights


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("policy", ["blender", "rite"])
@pytest.mark.parametrize("V,J,K", [(20_000, 24, 4), (9000, 64, 3), (3000, 200, 5), (700, 1, 2), (50, 7, 1)])
def test_skin_job_matches_straightforward_reference(dtype, policy, V, J, K):
    """SkinJob against a slot-by-slot float64 reference: both policies and
    dtypes, normals, unweighted and padded vertices, a single joint, odd K,
    rigs with and without the joint-pair table, several chunks and threads."""
    rng = np.random.default_rng(V + J + K)
    pos, nrm, mats, joints, weights = _skin_case(rng, V, J, K)
    normal_mats = np.swapaxes(np.linalg.inv(mats[:, :3, :3]), -1, -2)
    ref, ref_n = _skin_reference(pos, nrm, mats, normal_mats, joints, weights, policy)
    infl = skinning.Influences(joints, weights.astype(dtype))
    size = np.abs(ref).max()
    tol = 1e-12 if dtype == np.float64 else 1e-5
    for threads in (False, True):
        job = skinning.SkinJob(pos.astype(dtype), infl, policy, normals=nrm.astype(dtype), threads=threads)
        out, out_n = job.run(mats)
        assert out.shape == (V, 3) and out_n.shape == (V, 3)
        assert out.dtype == dtype and out_n.dtype == dtype
        assert np.abs(out - ref).max() <= tol * size
        assert np.abs(out_n - ref_n).max() <= tol          # unit vectors
        # positions only, and the same job run again with another pose
        plain = skinning.SkinJob(pos.astype(dtype), infl, policy, threads=threads)
        p1, none = plain.run(mats)
        assert none is None and np.abs(p1 - ref).max() <= tol * size
        moved = mats.copy()
        moved[:, :3, 3] += 1.0
        ref2, _ = _skin_reference(pos, nrm, moved, normal_mats, joints, weights, policy)
        p2, _ = plain.run(moved)
        assert np.abs(p2 - ref2).max() <= tol * np.abs(ref2).max()


def test_skin_job_from_sparse_float32_rig_and_explicit_normal_matrices():
    """The benchmark's shape in small: from_sparse influences (float32, four
    per vertex), skinned in float32 and float64; explicit normal matrices."""
    rng = np.random.default_rng(21)
    pos, mats, vert, joint, weight = _random_skin(rng, V=30_000, J=64, K=4)
    nrm = rng.normal(size=(30_000, 3))
    normal_mats = quat.to_mat3(quat.normalize(rng.normal(size=(64, 4))))
    for dtype in (np.float32, np.float64):
        infl = skinning.Influences.from_sparse(30_000, vert, joint, weight, dtype=dtype)
        ref, ref_n = _skin_reference(pos, nrm, mats, normal_mats, infl.joints, infl.weights, "blender")
        job = skinning.SkinJob(pos.astype(dtype), infl, normals=nrm.astype(dtype))
        out, out_n = job.run(mats, normal_matrices=normal_mats)
        tol = 1e-5 if dtype == np.float32 else 1e-12
        assert np.abs(out - ref).max() <= tol * np.abs(ref).max()
        assert np.abs(out_n - ref_n).max() <= tol          # unit vectors


def test_skin_job_index_checks():
    infl = skinning.Influences(np.array([[0, 3], [2, 1]], dtype=np.int32), np.array([[0.5, 0.5], [1.0, 0.0]]))
    job = skinning.SkinJob(np.zeros((2, 3)), infl)
    assert job.joint_limit == 4
    with pytest.raises(IndexError):
        job.run(np.tile(np.eye(4), (3, 1, 1)))
    out, _ = job.run(np.tile(np.eye(4), (4, 1, 1)))
    assert np.allclose(out, 0.0)
    bad = skinning.Influences(np.array([[0, -1]], dtype=np.int32), np.array([[0.5, 0.5]]))
    with pytest.raises(IndexError):
        skinning.SkinJob(np.zeros((1, 3)), bad)
    empty = skinning.SkinJob(np.zeros((0, 3)), skinning.Influences(np.zeros((0, 1), np.int32), np.zeros((0, 1))))
    out, _ = empty.run(np.tile(np.eye(4), (1, 1, 1)))
    assert out.shape == (0, 3)


def test_dual_quaternion_rigid_single_influence_is_exact_and_preserves_length():
    rng = np.random.default_rng(9)
    J = 6
    rest = np.tile(np.eye(4), (J, 1, 1))
    rest[:, :3, 3] = rng.normal(size=(J, 3))
    skin = np.tile(np.eye(4), (J, 1, 1))
    skin[:, :3, :3] = quat.to_mat3(quat.normalize(rng.normal(size=(J, 4))))
    skin[:, :3, 3] = rng.normal(size=(J, 3))
    pos = rng.normal(size=(50, 3))
    one = skinning.Influences.from_sparse(50, np.arange(50), np.arange(50) % J, np.full(50, 0.7))
    dq = dual_quaternion(pos, skin, rest, one)
    lbs, _ = skinning.linear_blend(pos, skin, one)
    assert np.allclose(dq, lbs, atol=1e-12)
    # two bones rotating 180 degrees apart about a shared axis: DQS keeps the
    # distance to the axis where LBS collapses towards it
    two_skin = np.tile(np.eye(4), (2, 1, 1))
    two_skin[1, :3, :3] = quat.to_mat3(quat.from_axis_angle([0, 0, 1], np.pi * 0.9))
    two = skinning.Influences.from_sparse(1, [0, 0], [0, 1], [0.5, 0.5])
    p = np.array([[1.0, 0, 0]])
    dq2 = dual_quaternion(p, two_skin, np.tile(np.eye(4), (2, 1, 1)), two)
    lbs2, _ = skinning.linear_blend(p, two_skin, two)
    assert abs(np.linalg.norm(dq2[0, :2]) - 1.0) < 1e-12
    assert np.linalg.norm(lbs2[0, :2]) < 0.2


def test_vertex_normals_of_a_cube_and_ngon():
    pos = np.array([[x, y, z] for x in (0, 1) for y in (0, 1) for z in (0, 1)], dtype=float)
    faces = [[0, 1, 3, 2], [4, 6, 7, 5], [0, 4, 5, 1], [2, 3, 7, 6], [0, 2, 6, 4], [1, 5, 7, 3]]
    sizes = np.array([4] * 6)
    corners = np.array(sum(faces, []))
    fn = blender_normals.face_normals(pos, sizes, corners)
    assert np.allclose(np.abs(fn).sum(axis=1), 1.0)
    vn = blender_normals.vertex_normals(pos, sizes, corners)
    centre = pos - 0.5
    assert np.allclose(vn, centre / np.linalg.norm(centre, axis=1, keepdims=True))
    hexagon = np.array([[np.cos(a), np.sin(a), 0.0] for a in np.linspace(0, 2 * np.pi, 7)[:-1]])
    assert np.allclose(blender_normals.face_normals(hexagon, [6], np.arange(6)), [[0, 0, 1]])


def test_core_and_io_import_without_bpy():
    code = textwrap.dedent("""
        import sys
        class Block:
            def find_spec(self, name, path=None, target=None):
                if name == "bpy" or name.startswith("bpy.") or name == "mathutils":
                    raise ImportError("bpy is blocked in this test")
        sys.meta_path.insert(0, Block())
        import legacy_skin_io.core.quat, legacy_skin_io.core.skeleton, legacy_skin_io.core.sampling
        import legacy_skin_io.core.blend, legacy_skin_io.core.skinning
        import legacy_skin_io.io, legacy_skin_io.io.errors
        import pkgutil, importlib, legacy_skin_io.io as io_pkg
        for m in pkgutil.walk_packages(io_pkg.__path__, "legacy_skin_io.io."):
            importlib.import_module(m.name)
        assert "bpy" not in sys.modules
        print("ok")
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
