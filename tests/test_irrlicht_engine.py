# SPDX-License-Identifier: GPL-3.0-or-later
"""What the Irrlicht engine (1.8.5) plays of .X files, through
tests/irrlicht_reading.py (fixture ``irrlicht``: skipped where Irrlicht
cannot be used, failed under LSIO_REQUIRE_IRRLICHT=1):

* frame-numbered real files play in Irrlicht as the project's core
  evaluates them, at every whole frame of the timeline;
* a text round trip through the project's .X writer leaves what Irrlicht
  plays unchanged;
* the tool reports Irrlicht's "Duplicated vertex" warning (and the copy's
  lost skin weights) for a vertex shared by faces of two materials;
* a file Irrlicht cannot read (MSZIP-compressed) fails clearly.

Errors are reported as fractions of the model size (bounding-box diagonal
of the default pose).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from legacy_skin_io.core import sampling
from legacy_skin_io.io.formats import by_id
from legacy_skin_io.io.xfile.reader import read_xfile
from legacy_skin_io.scene import Clip
from legacy_skin_io.scene import evaluate as ev

DATA = Path(__file__).resolve().parent / "data" / "x"
CHARACTER = DATA / "real" / "minetest__minetest_game" / "character.x"
STONE_MONSTER = DATA / "real" / "PilzAdam__mobs" / "mobs_stone_monster.x"
COMPRESSED = DATA / "assimp" / "test_cube_compressed.x"
BOUND = 1e-5


def irrlicht_timeline(clips: list[Clip], n_joints: int) -> tuple[Clip, int]:
    """(The clips as Irrlicht plays a file's AnimationSets, the number of
    channels filled in): one timeline per joint and channel, each set's keys
    appended in file order, a key not later than the last one kept dropped
    (CXMeshFileLoader appends, CSkinnedMesh::finalize drops); a joint keyed
    on some channels only gets Irrlicht's values for the others (position 0,
    no rotation, no scale) where the project keeps its FrameTransformMatrix's."""
    animated = np.zeros(n_joints, dtype=bool)
    for c in clips:
        animated |= c.animated
    filled = 0
    end = 0.0       # Irrlicht's last frame: the latest last key appended to a joint (before any is dropped)

    def channels(chs: list[sampling.Channels], rest: tuple[float, ...]) -> sampling.Channels:
        nonlocal filled, end
        tracks: dict[int, tuple[list, list]] = {}
        last: dict[int, float] = {}
        for ch in chs:
            for k, j in enumerate(ch.targets.tolist()):
                times = ch.times[ch.starts[k]:ch.starts[k + 1]]
                values = ch.values[ch.starts[k]:ch.starts[k + 1]]
                if len(times):
                    last[j] = float(times[-1])
                if j in tracks:
                    keep = times > tracks[j][0][-1][-1]
                    times, values = times[keep], values[keep]
                    if not len(times):
                        continue
                tracks.setdefault(j, ([], []))
                tracks[j][0].append(times)
                tracks[j][1].append(values)
        end = max([end, *last.values()])
        for j in np.flatnonzero(animated).tolist():
            if j not in tracks:
                filled += 1
                tracks[j] = ([np.zeros(1)], [np.array([rest])])
        if not tracks:
            return sampling.Channels.empty(len(rest))
        targets = sorted(tracks)
        return sampling.Channels.from_tracks(targets, [np.concatenate(tracks[j][0]) for j in targets],
                                             [np.concatenate(tracks[j][1]) for j in targets], len(rest))

    assert clips, "no AnimationSet"
    assert all(c.ticks_per_second is None for c in clips), "read with one tick per frame (time_base FRAMES)"
    clip = Clip("irrlicht", channels([c.rotation for c in clips], (0.0, 0.0, 0.0, 1.0)),
                channels([c.translation for c in clips], (0.0, 0.0, 0.0)),
                channels([c.scale for c in clips], (1.0, 1.0, 1.0)), animated, start=0.0, ticks_per_second=None,
                rotation_mode="slerp")
    clip.end = end
    return clip, filled


def core_in_file_space(path: Path, frames: np.ndarray):
    """(positions (F,) list of per-mesh (V_m, 3) arrays in the file's space, the model size, the
    combined clip, channels filled in): the project's reading of ``path`` evaluated by the core at
    ``frames``, its AnimationSets combined as Irrlicht combines them."""
    fmt = by_id("xfile")
    scene = fmt.read_scene([path], manual_orientation=True, time_base="FRAMES")
    clip, filled = irrlicht_timeline(scene.clips, scene.n_joints)
    inv = scene.source.axes.inverse()
    sizes = np.cumsum([len(m.positions) for m in scene.meshes])[:-1]
    per_frame = [np.split(inv.points(p), sizes) for p in ev.evaluate(scene, clip, frames)]
    model = float(np.linalg.norm(np.ptp(inv.points(ev.default_points(scene)), axis=0)))
    return per_frame, model, clip, filled


@pytest.mark.parametrize("path", [CHARACTER, STONE_MONSTER], ids=lambda p: p.name)
def test_irrlicht_plays_frame_numbered_files_as_the_core_evaluates_them(irrlicht, path):
    first = irrlicht.play(path, [0.0])
    frames = np.arange(first.frame_count + 1, dtype=np.float64)       # every whole frame of the timeline
    played = irrlicht.play(path, frames)
    order = irrlicht.irrlicht_vertex_order(path, played)
    core, model, clip, filled = core_in_file_space(path, frames)
    assert played.frame_count == np.floor(clip.end), (
        f"{path.name}: Irrlicht's timeline ends at frame {played.frame_count}, the file's combined keys at {clip.end}")
    expected = np.stack([order.take(per_mesh) for per_mesh in core])
    err = np.linalg.norm(played.positions - expected, axis=-1) / model
    f, v = np.unravel_index(int(np.argmax(err)), err.shape)
    print(f"{path.name}: {len(frames)} frames, {err.shape[1]} vertices, {filled} channels filled in, worst "
          f"{err.max():.3g} of the model size ({model:.4g}) at frame {frames[f]:g}, Irrlicht vertex {v} "
          f"(file vertex {order.vertex[v]})")
    assert err.max() <= BOUND, (
        f"{path.name}: Irrlicht and the core differ by {err.max():.3g} of the model size at frame {frames[f]:g}, "
        f"Irrlicht vertex {v} (mesh {order.mesh[v]} vertex {order.vertex[v]}): Irrlicht "
        f"{played.positions[f, v].tolist()}, core {expected[f, v].tolist()}")
    moved = np.linalg.norm(played.positions - played.positions[:1], axis=-1).max() / model
    assert moved > 0.01, f"{path.name}: Irrlicht plays no motion ({moved:.3g} of the model size at most)"


def _weights(order, joint_names: list[str]) -> np.ndarray:
    """(V, len(joint_names)) each Irrlicht vertex's skin weights by joint name, normalised as Irrlicht
    does (a duplicated vertex has none)."""
    column = {n: i for i, n in enumerate(joint_names)}
    out = []
    for mi, m in enumerate(order.meshes):
        w = np.zeros((len(m.positions), len(joint_names)))
        for sw in m.skin_weights:
            np.add.at(w, (np.asarray(sw.vertex_indices, dtype=np.int64), column[sw.frame_name]),
                      np.asarray(sw.weights, dtype=np.float64))
        total = w.sum(axis=1, keepdims=True)
        w = np.divide(w, total, out=np.zeros_like(w), where=total > 0)
        mine = order.mesh == mi
        out.append((mine, w[order.vertex[mine]]))
    result = np.zeros((len(order.vertex), len(joint_names)))
    for mine, w in out:
        result[mine] = w
    result[order.duplicated] = 0.0
    return result


def _correspondence(a, a_order, b, b_order, model: float) -> np.ndarray:
    """For each Irrlicht vertex of ``b``, a vertex of ``a`` at the same place at frame 0 (within 1e-6 of
    the model size) with the same skin weights by joint name (within 1e-5): a fixed map, built once
    (coincident vertices with the same weights move alike: any of them will do)."""
    names = sorted({sw.frame_name for o in (a_order, b_order) for m in o.meshes for sw in m.skin_weights})
    wa, wb = _weights(a_order, names), _weights(b_order, names)
    pa, pb = a.positions[0], b.positions[0]
    out = np.full(len(pb), -1, dtype=np.int64)
    for v in range(len(pb)):
        near = np.flatnonzero(np.linalg.norm(pa - pb[v], axis=1) <= 1e-6 * model)
        same = near[np.abs(wa[near] - wb[v]).max(axis=1, initial=0.0) <= 1e-5] if len(near) else near
        assert len(same), (f"{b.path.name}: vertex {v} (mesh {b_order.mesh[v]} vertex {b_order.vertex[v]}) at "
                           f"{pb[v].tolist()} has no vertex of {a.path.name} at that place with its weights "
                           f"({len(near)} at that place)")
        out[v] = same[0]
    return out


def test_round_trip_through_the_writer_plays_the_same_in_irrlicht(irrlicht, tmp_path):
    fmt = by_id("xfile")
    scene = fmt.read_scene([CHARACTER])
    out = tmp_path / "character_written.x"
    fmt.write_scene(scene, out, storage="text")
    first = irrlicht.play(CHARACTER, [0.0])
    frames = np.arange(first.frame_count + 1, dtype=np.float64)
    original, written = irrlicht.play(CHARACTER, frames), irrlicht.play(out, frames)
    assert written.frame_count == original.frame_count, (
        f"the written file's timeline ends at frame {written.frame_count} in Irrlicht, the original's at "
        f"{original.frame_count}")
    a_order = irrlicht.irrlicht_vertex_order(CHARACTER, original)
    b_order = irrlicht.irrlicht_vertex_order(out, written)
    model = irrlicht.size(original.static)
    # both ways: every written vertex is an original one, and every original one is written
    match = _correspondence(original, a_order, written, b_order, model)
    back = _correspondence(written, b_order, original, a_order, model)
    err = np.linalg.norm(written.positions - original.positions[:, match], axis=-1) / model
    err_back = np.linalg.norm(original.positions - written.positions[:, back], axis=-1) / model
    f, v = np.unravel_index(int(np.argmax(err)), err.shape)
    print(f"round trip: {len(written.static)} written vertices for {len(original.static)}, {len(frames)} frames, "
          f"worst {max(err.max(), err_back.max()):.3g} of the model size at frame {frames[f]:g}, written vertex {v}")
    assert err.max() < BOUND, (
        f"the written file plays {err.max():.3g} of the model size away from the original at frame "
        f"{frames[f]:g}, written vertex {v} (original vertex {match[v]}): {written.positions[f, v].tolist()} "
        f"instead of {original.positions[f, match[v]].tolist()}")
    f, v = np.unravel_index(int(np.argmax(err_back)), err_back.shape)
    assert err_back.max() < BOUND, (
        f"original vertex {v} plays {err_back.max():.3g} of the model size away from its written counterpart "
        f"{back[v]} at frame {frames[f]:g}")


SHARED = """xof 0303txt 0032
Frame Root {
  FrameTransformMatrix { 1.0,0.0,0.0,0.0, 0.0,1.0,0.0,0.0, 0.0,0.0,1.0,0.0, 0.0,0.0,0.0,1.0;; }
  Frame Bone {
    FrameTransformMatrix { 1.0,0.0,0.0,0.0, 0.0,1.0,0.0,0.0, 0.0,0.0,1.0,0.0, 0.0,0.0,0.0,1.0;; }
  }
  Mesh Two {
    VERTICES
    2;
    3;0,1,2;,
    3;FACE;;
    MeshMaterialList {
      2;
      2;
      0,
      1;;
      Material Red { 1.0;0.0;0.0;1.0;; 0.0; 0.0;0.0;0.0;; 0.0;0.0;0.0;; }
      Material Blue { 0.0;0.0;1.0;1.0;; 0.0; 0.0;0.0;0.0;; 0.0;0.0;0.0;; }
    }
    SkinWeights {
      "Bone";
      COUNT;
      INDICES;
      WEIGHTS;
      1.0,0.0,0.0,0.0, 0.0,1.0,0.0,0.0, 0.0,0.0,1.0,0.0, 0.0,0.0,0.0,1.0;;
    }
  }
}
AnimationSet Lift {
  Animation {
    { Bone }
    AnimationKey { 2; 2; 0;3;0.0,0.0,0.0;;, 10;3;0.0,0.0,5.0;;; }
  }
}
"""


def _two_triangles(path: Path, split: bool) -> Path:
    """Two triangles of two materials, all vertices on one bone that rises by 5 in z from frame 0 to 10;
    they share vertex 2 unless ``split`` (then the second uses a copy of it, vertex 5)."""
    points = [(0, 0, 0), (1, 0, 0), (1, 1, 0), (2, 1, 0), (2, 2, 0)] + ([(1, 1, 0)] if split else [])
    n = len(points)
    text = (SHARED.replace("VERTICES", f"{n};\n    " + ",\n    ".join(f"{x:.1f};{y:.1f};{z:.1f};"
                                                                      for x, y, z in points) + ";")
            .replace("FACE", "5,3,4" if split else "2,3,4").replace("COUNT", str(n))
            .replace("INDICES", ",".join(map(str, range(n)))).replace("WEIGHTS", ",".join(["1.0"] * n)))
    path.write_text(text)
    return path


def test_duplicated_vertex_warning_for_a_vertex_shared_by_two_materials(irrlicht, tmp_path):
    shared = _two_triangles(tmp_path / "shared.x", split=False)
    split = _two_triangles(tmp_path / "split.x", split=True)
    a, b = irrlicht.play(shared, [0.0, 10.0]), irrlicht.play(split, [0.0, 10.0])
    warning = "Duplicated vertex, animation might be corrupted."
    assert any(warning in w for w in a.warnings), f"shared vertex: no duplicate warning in {a.log}"
    assert not any(warning in w for w in b.warnings), f"split vertex: duplicate warning in {b.log}"
    assert a.buffer_vertices.tolist() == [3, 3] and b.buffer_vertices.tolist() == [3, 3], (
        a.buffer_vertices.tolist(), b.buffer_vertices.tolist())
    oa, ob = irrlicht.irrlicht_vertex_order(shared, a), irrlicht.irrlicht_vertex_order(split, b)
    assert oa.duplicated.tolist() == [False] * 5 + [True] and not ob.duplicated.any(), (
        oa.duplicated.tolist(), ob.duplicated.tolist())
    # the copy lost its skin weights: it stays where it was while the rest rises by 5
    rise_a = a.positions[1, :, 2] - a.positions[0, :, 2]
    rise_b = b.positions[1, :, 2] - b.positions[0, :, 2]
    assert np.allclose(rise_b, 5.0, atol=1e-6), f"split file: rises {rise_b.tolist()}"
    assert np.allclose(rise_a[~oa.duplicated], 5.0, atol=1e-6) and np.allclose(rise_a[oa.duplicated], 0.0), (
        f"shared file: rises {rise_a.tolist()} (duplicated {oa.duplicated.tolist()})")


def test_a_compressed_file_fails_clearly(irrlicht):
    assert read_xfile(COMPRESSED).meshes or any(f.meshes for f in read_xfile(COMPRESSED).all_frames()), (
        "the project's reader reads the file (the failure below is Irrlicht's)")
    with pytest.raises(irrlicht.IrrlichtError) as info:
        irrlicht.play(COMPRESSED, [0.0], timeout=60)
    message = str(info.value)
    assert COMPRESSED.name in message and "uncompressed" in message, message


ORDER_FILES = [DATA / "real" / "blitz-research__blitz3d" / "ship.x",                 # shared vertices, quads
               DATA / "real" / "TheGameCreators__Dark-Basic-Pro" / "extraanim.X",   # 17 rigid meshes, 64-bit
               DATA / "assimp" / "fromtruespace_bin32.x",                           # binary
               DATA / "directx-sdk" / "tiger.x",                                    # a top-level mesh, 64-bit
               DATA / "directx-sdk" / "tiny_4anim.x"]                               # a rigid and a skinned mesh


@pytest.mark.parametrize("path", ORDER_FILES, ids=lambda p: p.name)
def test_vertex_order_is_irrlichts(irrlicht, path):
    """irrlicht_vertex_order rebuilds Irrlicht's buffers (it checks Irrlicht's static positions itself):
    Irrlicht warns of duplicated vertices exactly when the rebuild makes copies, and every vertex a
    face uses is in a buffer."""
    played = irrlicht.play(path, [0.0])
    order = irrlicht.irrlicht_vertex_order(path, played)
    warned = any("Duplicated vertex" in w for w in played.warnings)
    assert warned == bool(order.duplicated.any()), (
        f"{path.name}: {int(order.duplicated.sum())} copies rebuilt, Irrlicht warned: {warned}")
    for mi, m in enumerate(order.meshes):
        used = set(np.asarray(m.face_indices).tolist())
        placed = set(order.vertex[(order.mesh == mi) & ~order.duplicated].tolist())
        assert placed == used, (f"{path.name}: mesh {mi} ({m.name}): {len(used - placed)} used vertices missing, "
                                f"{len(placed - used)} unused ones placed")
    print(f"{path.name}: {len(order.vertex)} vertices in {len(order.buffer_vertices)} buffers of "
          f"{len(order.meshes)} meshes, {int(order.duplicated.sum())} copies")


def _triangle(name: str, x: float) -> str:
    return f"Mesh {name} {{ 3; {x:.1f};0.0;0.0;, {x + 1:.1f};0.0;0.0;, {x:.1f};1.0;0.0;; 1; 3;0,1,2;; }}\n"


IDENTITY = "FrameTransformMatrix { 1.0,0.0,0.0,0.0, 0.0,1.0,0.0,0.0, 0.0,0.0,1.0,0.0, 0.0,0.0,0.0,1.0;; }\n"


def test_vertex_order_follows_the_files_object_order(irrlicht, tmp_path):
    """Irrlicht takes meshes in the order the file holds them (top-level ones between frames, a frame's
    meshes around its child frames); the reader keeps top-level meshes apart and a frame's meshes
    together: the rebuild follows the file."""
    path = tmp_path / "order.x"
    path.write_text("xof 0303txt 0032\n" + _triangle("Top", 0) + "Frame A {\n" + IDENTITY + _triangle("A1", 10)
                    + "Frame B {\n" + IDENTITY + _triangle("B1", 20) + "}\n" + _triangle("A2", 30) + "}\n"
                    + _triangle("Last", 40))
    played = irrlicht.play(path, [0.0])
    order = irrlicht.irrlicht_vertex_order(path, played)
    names = [m.name for m in order.meshes]
    assert names == ["Top", "A1", "B1", "A2", "Last"], names
    by_buffer = order.reader_mesh[np.cumsum(order.buffer_vertices) - 1].tolist()
    assert by_buffer != sorted(by_buffer), f"the reader's order is the file's here ({by_buffer}): nothing tested"
    assert np.allclose(played.static[::3, 0], [0, 10, 20, 30, 40]), played.static[::3].tolist()
