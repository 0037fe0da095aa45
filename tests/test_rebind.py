# SPDX-License-Identifier: GPL-3.0-or-later
"""The numpy side of rigs with non-uniform scale and several bind poses,
checked against Direct3D's own formulas written out here:
``core.rig.armature_binds`` / ``similarity_part`` / ``scale_axes``
(non-uniform scale moved to the pose), ``core.rebind`` (each mesh's offsets
onto the armature's one bind pose), ``core.mirror`` (left/right pairs,
mirrored rolls) and ``core.limbs``."""
from __future__ import annotations

import numpy as np
import pytest

from legacy_skin_io.core import limbs, mirror, quat, rebind, rig
from legacy_skin_io.core.sampling import compose_trs, decompose_trs


def _rot(rng, n=None):
    return quat.to_mat3(quat.normalize(rng.normal(size=(4,) if n is None else (n, 4))))


def _trs(rng, s=(1.0, 1.0, 1.0)):
    m = np.eye(4)
    m[:3, :3] = _rot(rng) * np.asarray(s)[None, :]
    m[:3, 3] = rng.normal(size=3)
    return m


def test_similarity_part_keeps_uniform_and_mirrored_scales_and_strips_the_rest():
    rng = np.random.default_rng(1)
    m = _trs(rng, (2.0, 2.0, 2.0))
    sim, uniform = rig.similarity_part(m)
    assert uniform and np.allclose(sim, m, atol=1e-12)
    mirrored = m @ np.diag([-1.0, 1.0, 1.0, 1.0])
    assert rig.similarity_part(mirrored)[1]
    scaled = _trs(rng, (10.2, 1.5, 10.2))
    sim, uniform = rig.similarity_part(scaled)
    assert not uniform
    r = sim[:3, :3] / np.cbrt(np.linalg.det(sim[:3, :3]))
    assert np.allclose(r.T @ r, np.eye(3), atol=1e-12) and np.linalg.det(r) > 0
    assert np.isclose(np.linalg.det(sim[:3, :3]), np.linalg.det(scaled[:3, :3]))
    assert np.allclose(sim[:3, 3], scaled[:3, 3])


def test_armature_binds_move_non_uniform_scale_to_the_pose():
    """A chain root > hips (scaled 1.5 x 0.6 x 1.2) > spine > head: the
    armature's binds are similarities; below the hips they differ from the
    file's by one matrix on the left (what the meshes' placement takes);
    and each bone's pose basis for any rotation of the spine is a rotation
    times a scale along the bone's axes (what pose bones hold), exactly."""
    rng = np.random.default_rng(2)
    parents = np.array([-1, 0, 1, 2])
    local = np.array([_trs(rng), _trs(rng, (1.5, 0.6, 1.2)), _trs(rng), _trs(rng)])
    world = np.array([local[0], local[0] @ local[1], local[0] @ local[1] @ local[2],
                      local[0] @ local[1] @ local[2] @ local[3]])
    arm, scaled = rig.armature_binds(parents, np.arange(4), world)
    assert scaled.tolist() == [False, True, False, False]
    assert np.allclose(arm[0], world[0])
    for b in arm:
        assert rig.similarity_part(b)[1]
    left = arm[1] @ np.linalg.inv(world[1])
    for j in (2, 3):
        assert np.allclose(arm[j] @ np.linalg.inv(world[j]), left, atol=1e-10)
    # rest = the armature bind (rigid), the hips on their own axes: every basis is TRS
    rs = rig.RestSplit(rig.orthonormal(arm), arm, parents)
    for turn in np.linspace(0.0, 1.5, 4):
        posed = local.copy()
        posed[2] = posed[2] @ quat.to_mat4(quat.from_axis_angle(np.array([0.3, 0.9, 0.1]) / 0.9539, turn))
        posed[1] = posed[1] @ np.diag([1.0, 1.3, 0.7, 1.0])
        w = np.array([posed[0], posed[0] @ posed[1], posed[0] @ posed[1] @ posed[2],
                      posed[0] @ posed[1] @ posed[2] @ posed[3]])
        basis = rs.pose_basis(w[None])[0]
        t, r, s = decompose_trs(basis)
        assert np.abs(compose_trs(t, r, s) - basis).max() < 1e-9


def test_scale_axes_of_a_sheared_frame():
    rng = np.random.default_rng(3)
    plain = _trs(rng, (1.0, 2.0, 0.5))
    assert np.allclose(rig.scale_axes(plain), np.eye(3))
    sheared = plain @ quat.to_mat4(quat.from_axis_angle(np.array([0.0, 0.6, 0.8]), 0.7))
    v = rig.scale_axes(sheared)
    lin = sheared[:3, :3]
    p = v.T @ (lin.T @ lin) @ v
    assert np.abs(p - np.diag(np.diag(p))).max() < 1e-10 and np.linalg.det(v) > 0


def _d3d(positions, offsets, joints, vertex, joint, weight, world):
    """Direct3D's skinning: sum_j w_j p O_j W_j (column vectors here), weights divided by their sum."""
    out = np.zeros((len(positions), 3))
    total = np.zeros(len(positions))
    for v, j, w in zip(vertex, joint, weight):
        k = int(np.searchsorted(joints, j))
        m = world[j] @ offsets[k]
        out[v] += w * (m[:3, :3] @ positions[v] + m[:3, 3])
        total[v] += w
    return out / total[:, None]


def _blender(pl, joints, vertex, joint, weight, world, arm_bind, corrections=None):
    """Blender's Armature modifier: sum_j w_j W_j B_j^-1 (F_j) E p'."""
    out = np.zeros((len(pl.positions), 3))
    total = np.zeros(len(pl.positions))
    for v, j, w in zip(vertex, joint, weight):
        k = int(np.searchsorted(joints, j))
        fix = corrections[k] if corrections is not None else np.eye(4)
        m = world[j] @ np.linalg.inv(arm_bind[j]) @ fix @ pl.matrix
        out[v] += w * (m[:3, :3] @ pl.positions[v] + m[:3, 3])
        total[v] += w
    return out / total[:, None]


def _skin_case(rng, differ: np.ndarray, blended: bool):
    """Three joints; the mesh's offsets are the armature's binds' except
    that joint 2's differ by ``differ`` (mesh placed at E)."""
    arm_bind = np.array([_trs(rng) for _ in range(3)])
    place = _trs(rng, (1.2, 1.2, 1.2))
    offsets = np.linalg.inv(arm_bind) @ place
    offsets[2] = np.linalg.inv(arm_bind[2] @ differ) @ place
    positions = rng.normal(size=(30, 3))
    vertex = np.concatenate([np.arange(10), np.arange(10, 20), np.arange(20, 30)])
    joint = np.repeat([0, 1, 2], 10)
    weight = np.ones(30)
    if blended:       # vertices 20..24 also weighted to joint 0
        vertex, joint = np.concatenate([vertex, np.arange(20, 25)]), np.concatenate([joint, np.zeros(5, int)])
        weight = np.concatenate([weight, np.full(5, 0.5)])
    return arm_bind, place, offsets, positions, vertex, joint, weight


@pytest.mark.parametrize("kind", ["same", "rigid", "affine", "blended"])
def test_place_skin_deforms_as_direct3d(kind):
    rng = np.random.default_rng(4)
    differ = {"same": np.eye(4), "rigid": _trs(rng), "affine": _trs(rng, (1.1, 0.8, 1.3)),
              "blended": _trs(rng)}[kind]
    arm_bind, place, offsets, positions, vertex, joint, weight = _skin_case(rng, differ, kind == "blended")
    joints = np.arange(3)
    pl = rebind.place_skin(positions, joints, offsets, vertex, joint, weight, arm_bind, place, 1e-9)
    assert np.allclose(pl.matrix, place)
    assert pl.exact == (kind != "blended")
    assert pl.moved.sum() == {"same": 0, "rigid": 10, "affine": 10, "blended": 0}[kind]
    assert pl.conflict.sum() == (5 if kind == "blended" else 0)
    for _ in range(3):
        world = np.array([_trs(rng, rng.uniform(0.5, 2.0, 3)) for _ in range(3)])
        want = _d3d(positions, offsets, joints, vertex, joint, weight, world)
        got = _blender(pl, joints, vertex, joint, weight, world, arm_bind,
                       None if pl.exact else pl.corrections)
        assert np.abs(got - want).max() < 1e-9


@pytest.mark.parametrize("kind", ["same", "blended"])
def test_the_shortcut_for_agreeing_binds_places_as_the_full_placement(monkeypatch, kind):
    """Meshes whose offsets agree with the armature's binds skip the per-weight
    placement. Around the tolerance (one joint's offset off by 1e-4 .. 1e2 of
    it; a scaled mesh frame; unweighted vertices), what it returns is what the
    full placement returns."""
    rng = np.random.default_rng(11)
    tol = 1e-6
    for size in (1.0, 40.0):
        arm_bind, place, offsets, positions, vertex, joint, weight = _skin_case(rng, np.eye(4), kind == "blended")
        place = place @ np.diag([size, size, size, 1.0])
        offsets = offsets @ np.diag([size, size, size, 1.0])
        keep = vertex < 27            # vertices 27..29 unweighted
        for off in (0.0, 1e-4, 1e-2, 0.3, 1.0, 3.0, 1e2):
            o = offsets.copy()
            o[1][:3, 3] += off * tol * rng.normal(size=3) / np.sqrt(3)
            args = (positions, np.arange(3), o, vertex[keep], joint[keep], weight[keep], arm_bind, place, tol)
            fast = rebind.place_skin(*args)
            with monkeypatch.context() as mp:
                mp.setattr(rebind, "_within", lambda *a: False)
                full = rebind.place_skin(*args)
            assert np.array_equal(fast.moved, full.moved), (size, off)
            assert np.array_equal(fast.conflict, full.conflict), (size, off)
            assert np.array_equal(fast.positions, full.positions), (size, off)
            assert np.allclose(fast.vertex_transform, full.vertex_transform, atol=1e-12)
            assert np.allclose(fast.matrix, full.matrix) and np.allclose(fast.corrections, full.corrections)
    taken = []
    monkeypatch.setattr(rebind, "_within", lambda *a: taken.append(1) or False)
    rebind.place_skin(positions, np.arange(3), offsets, vertex, joint, weight, arm_bind, place, tol)
    assert taken                      # the shortcut is asked before the full placement


def test_unweighted_vertices_stay_where_the_mesh_frame_puts_them():
    rng = np.random.default_rng(5)
    arm_bind, place, offsets, positions, vertex, joint, weight = _skin_case(rng, np.eye(4), False)
    keep = vertex < 25          # vertices 25..29 have no weight
    frame = _trs(rng)           # the frame holding the mesh (Direct3D ignores it for skinned vertices)
    pl = rebind.place_skin(positions, np.arange(3), offsets, vertex[keep], joint[keep], weight[keep],
                           arm_bind, frame, 1e-9)
    at = pl.positions[25:] @ pl.matrix[:3, :3].T + pl.matrix[:3, 3]
    assert np.allclose(at, positions[25:] @ frame[:3, :3].T + frame[:3, 3])
    assert pl.moved[25:].all() and not pl.moved[:25].any()


def test_choose_binds_prefers_the_default_pose():
    rng = np.random.default_rng(6)
    default = np.array([_trs(rng) for _ in range(2)])
    bind = np.full((2, 4, 4), np.nan)
    frame = _trs(rng, (1.3, 1.3, 1.3))       # a helmet in its own frame, same offsets as the body
    offsets = np.linalg.inv(default)
    out = rebind.choose_binds(bind, default, [(np.arange(2), offsets, frame, np.array([5, 5])),
                                              (np.arange(2), offsets, np.eye(4), np.array([1, 1]))])
    assert np.allclose(out, default)


def test_side_pairs_and_the_mirror_plane():
    names = ["Hips", "LeftArm", "RightArm", "Bip01_L_Thigh", "Bip01_R_Thigh", "Bip01 L Calf", "Bip01 R Calf",
             "thigh.L", "thigh.R", "arm_l", "arm_r", "UpperLeftArm", "UpperRightArm", "Cleft", "Cright", "Lone_L"]
    pairs = {(names[a], names[b]) for a, b in mirror.side_pairs(names)}
    assert pairs == {("LeftArm", "RightArm"), ("Bip01_L_Thigh", "Bip01_R_Thigh"), ("Bip01 L Calf", "Bip01 R Calf"),
                     ("thigh.L", "thigh.R"), ("arm_l", "arm_r"), ("UpperLeftArm", "UpperRightArm")}
    rng = np.random.default_rng(7)
    left = rng.normal(size=(4, 3)) + [2.0, 0.0, 0.0]
    n = np.array([0.6, 0.0, 0.8])
    m = np.eye(3) - 2 * np.outer(n, n)
    heads = np.concatenate([left, left @ m.T + 0.6 * n])        # plane n . x = 0.3
    pairs = [(i, i + 4) for i in range(4)]
    got_n, offset = mirror.mirror_plane(heads, pairs, 1e-9)
    assert np.allclose(got_n, n) and np.isclose(offset, 0.3)
    heads[5] += 0.01
    assert mirror.mirror_plane(heads, pairs, 1e-3) is None


def test_mirrored_rolls_mirror_the_rests():
    rng = np.random.default_rng(8)
    n = np.array([1.0, 0.0, 0.0])
    m = np.eye(3) - 2 * np.outer(n, n)
    f = np.diag([-1.0, 1.0, 1.0])
    left = _rot(rng, 3)
    heads_l = rng.normal(size=(3, 3)) + [1.0, 0.0, 0.0]
    right = np.array([m @ r @ f for r in left]) @ quat.to_mat3(quat.from_axis_angle(np.array([0.0, 1.0, 0.0]),
                                                                                   0.4))   # rolled off
    centre = rig.aim_y(_rot(rng), np.array([0.0, 0.6, 0.8]))       # its Y axis in the plane x = 0
    rot = np.concatenate([left, right, centre[None]])
    heads = np.concatenate([heads_l, heads_l @ m.T, [[0.0, 0.2, 0.3]]])
    out, changed = mirror.mirrored_rolls(rot, heads, [(0, 3), (1, 4), (2, 5)], (n, 0.0), 1e-9)
    for a, b in [(0, 3), (1, 4), (2, 5)]:
        assert np.allclose(m @ out[a] @ f, out[b], atol=1e-12)
        assert np.allclose(out[b][:, 1], rot[b][:, 1])            # directions kept
    assert np.allclose(m @ out[6] @ f, out[6]) and np.allclose(out[6][:, 1], rot[6][:, 1])
    assert sorted(changed) == [3, 4, 5, 6]


def test_limb_lengths_end_on_the_child_and_stay_within_the_model():
    heads = np.array([[0.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, 2.0], [0.0, 0.0, 50.0], [0.1, 0.0, 2.5]])
    parent = np.array([-1, 0, 1, 2, 2])
    rest = np.tile(np.eye(4), (5, 1, 1))
    rest[:, :3, 3] = heads
    up = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]])     # Y along +z
    rest[:, :3, :3] = up
    aim = np.full((5, 3), np.nan)
    aim[0], aim[1], aim[2] = heads[1], heads[2], heads[3]
    lengths, touching = limbs.limb_lengths(rest, parent, aim, 10.0, 1e-3)
    assert np.allclose(lengths[:2], 1.0)
    assert lengths[2] == pytest.approx(5.0)              # 48 away: cut to half the model
    assert touching.tolist() == [False, True, True, False, False]
    assert lengths[3] == pytest.approx(1.0) and lengths[4] == pytest.approx(1.0)   # leaves: a share
    assert lengths.max() <= 0.5 * 10.0
