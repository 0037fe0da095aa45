# SPDX-License-Identifier: GPL-3.0-or-later
"""The automatic up axis (scene/orientation.py) without Blender.

What is up for each corpus file is the catalogue's judgement
(tests/data/x/real/PROVENANCE.md: tiny_4anim.x is authored Z-up, the
other characters Y-up), checked here by joint names (the head above the
feet), never by the detector's own measure.
"""
from __future__ import annotations

import copy
import functools
import itertools
from pathlib import Path

import numpy as np
import pytest
from conftest import DATA, SAMPLES

from legacy_skin_io.io.errors import Warnings
from legacy_skin_io.io.formats import by_id, for_path
from legacy_skin_io.io.rite import adapter as rite
from legacy_skin_io.io.xfile import adapter as xfile
from legacy_skin_io.scene import AxisConversion, orientation
from legacy_skin_io.scene import evaluate as ev

X = DATA / "x"
REAL = X / "real"
TINY = X / "directx-sdk" / "tiny_4anim.x"
BCN = X / "assimp" / "BCN_Epileptic.X"
WUSON = X / "assimp" / "Testwuson.X"
NINJA = REAL / "TheGameCreators__Dark-Basic-Pro" / "extraanim.X"
HUMANOID = SAMPLES / "rite" / "humanoid.ram"
MINETEST = REAL / "minetest__minetest_game" / "character.x"

#: characters: (file, the file's up axis, a joint at the top, a joint at the bottom)
CHARACTERS = [
    (TINY, "Z", "Bip01_Head", "Bip01_L_Toe0"),
    (BCN, "Y", "B_Neck", "B_Toe_Left"),
    (WUSON, "Y", "Spine_Back01", "ForeLeg_L_05"),
    (NINJA, "Y", "x3ds_Head", "x3ds_L_Foot"),
    (HUMANOID, "Y", "Head", "LeftToe"),
]
#: nothing in them says up against the convention: they keep it, however turned
PROPS = [X / "directx-sdk" / "tiger.x", X / "directx-sdk" / "mslogo.x", X / "directx-sdk" / "bat.x",
         REAL / "walbourn__directx-sdk-legacy-samples" / "Dwarf.x", REAL / "PilzAdam__mobs" / "mobs_rat.x",
         REAL / "PilzAdam__mobs" / "mobs_stone_monster.x", REAL / "blitz-research__blitz3d" / "pistol.x",
         X / "assimp" / "anim_test.x", X / "assimp" / "test_cube_text.x"]


def _probe(path: Path):
    """The file read with its format's convention (the detector's input): a
    fresh copy of one reading per file."""
    return copy.deepcopy(_read_probe(path, path.stat().st_mtime_ns))


@functools.lru_cache(maxsize=8)
def _read_probe(path: Path, stamp: int):
    fmt = for_path(path)
    return fmt.adapter.read_scene([str(path)], axes=fmt.axes(), warnings=[])


def _turns():
    """The 48 signed permutations: every way a file's axes can be named."""
    for p in itertools.permutations(range(3)):
        for signs in itertools.product((1.0, -1.0), repeat=3):
            m = np.zeros((3, 3))
            m[range(3), p] = signs
            yield m


def _turn(scene, R) -> None:
    """Every position of ``scene`` turned by ``R``, its binds and
    animation too (what a file authored with other axes holds)."""
    a = AxisConversion(R)
    if scene.skeleton is not None:
        scene.skeleton.local = a.matrices(scene.skeleton.local)
        scene.skeleton.bind = a.matrices(scene.skeleton.bind)
    for c in scene.clips:
        c.rotation.values = a.quats(c.rotation.values)
        c.translation.values = a.translations(c.translation.values)
        c.scale.values = a.scales(c.scale.values)
    for m in scene.meshes:
        m.positions = a.points(m.positions)
        m.matrix = a.matrices(m.matrix)
        if m.skin is not None:
            m.skin.inverse_bind = a.matrices(m.skin.inverse_bind)


def _height(scene, top: str, bottom: str) -> float:
    """How far joint ``top`` stands above joint ``bottom`` in Blender's Z."""
    w = scene.skeleton.world()[:, :3, 3]
    i = scene.skeleton.index()
    return float(w[i[top], 2] - w[i[bottom], 2])


@pytest.mark.parametrize("path,up,top,bottom", CHARACTERS, ids=lambda v: getattr(v, "name", None))
def test_characters_stand_whichever_way_their_file_points(path, up, top, bottom):
    """Read automatically, every character stands (head above feet) and the
    summary names the file's up axis; turned into any of the 48 ways of
    naming axes, the detector finds the turned up, never another axis."""
    fmt = for_path(path)
    scene = fmt.read_scene([path], manual_orientation=False)
    o = scene.source.orientation
    assert o.automatic and o.file_up == up and "skeleton" in o.evidence
    assert _height(scene, top, bottom) > 0.2 * ev.size(scene)
    truth = orientation.detect(_probe(path))[0]
    if path.suffix.lower() == ".x":     # the reader's cheap probe sees what the whole scene shows
        from legacy_skin_io.io.xfile import read_xfile
        from legacy_skin_io.io.xfile.to_scene import _Reader

        light = _Reader(read_xfile(path), xfile.default_axes(), str(path), []).probe(path.stem)
        assert not any(len(m.corners) for m in light.meshes)
        found = orientation.detect(light)
        assert np.array_equal(found[0], truth) and found[1] == orientation.detect(_probe(path))[1]
    for R in _turns():
        turned = _probe(path)
        _turn(turned, R)
        found = orientation.detect(turned)
        assert found is not None and np.array_equal(found[0], R @ truth), R


@pytest.mark.parametrize("path", PROPS, ids=lambda p: p.name)
def test_props_and_ambiguous_models_keep_the_convention(path):
    """Props (nothing skinned or animated), a gun, a bat with spread wings,
    a cylinder, a monster whose limbs are single joints: no evidence, in
    any of the 48 namings of their axes."""
    assert orientation.detect(_probe(path)) is None
    for R in list(_turns())[::5]:
        turned = _probe(path)
        _turn(turned, R)
        assert orientation.detect(turned) is None, R
    o = for_path(path).read_scene([path]).source.orientation
    assert (o.forward, o.up, o.file_up) == ("-Z", "Y", "Y") and "convention" in o.evidence


def test_a_body_with_single_joint_limbs_stands_by_its_extent():
    """The Minetest player (a leg, an arm, the head: one joint each) gives
    no limb chains; its mesh, twice as tall as wide, with its joints above
    its root, stands it up when its file lies on its back or side."""
    base = _probe(MINETEST)
    assert orientation.detect(base) is None         # tall along the convention's up: keep it
    for R in _turns():
        turned = _probe(MINETEST)
        _turn(turned, R)
        found = orientation.detect(turned)
        if abs((R @ [0, 0, 1.0])[2]) == 1.0:
            assert found is None                    # its height along Z: the convention stays
        else:
            assert found is not None and np.array_equal(found[0], R @ [0, 0, 1.0]) and "mesh" in found[1]


@pytest.mark.parametrize("up", ["-Z", "Z", "-Y", "X", "-X"])
@pytest.mark.parametrize("path", [BCN, WUSON, NINJA], ids=lambda p: p.name)
def test_a_file_written_with_other_axes_reads_back_as_the_original(tmp_path, path, up):
    """A Y-up character written as a file whose up is another axis (a 3ds
    Max export is Up -Z, Forward Y in the importer's terms): read
    automatically, it is the original scene again (one rigid conversion,
    chosen from the data), and the summary names that axis."""
    fwd = orientation.forward_for(up)
    original = xfile.read_scene([str(path)], axes=xfile.default_axes(), warnings=[])
    out = tmp_path / "turned.x"
    xfile.write_scene(original, out, axes=by_id("xfile").axes(fwd, up), warnings=[])
    back = by_id("xfile").read_scene([out], warnings=Warnings())
    o = back.source.orientation
    assert (o.forward, o.up) == (fwd, up)
    assert o.file_up == orientation.axis_name(np.diag([1.0, 1.0, -1.0]) @ orientation.axis_vector(up))
    a, b = ev.evaluate(original, None, [0.0])[0], ev.evaluate(back, None, [0.0])[0]
    assert np.abs(a - b).max() <= 1e-5 * ev.size(original)
    for c0, c1 in zip(original.clips, back.clips):       # the animation is turned with the rest
        frames = np.linspace(*c0.frame_range(24.0), 7)
        p0, p1 = ev.evaluate(original, c0, frames), ev.evaluate(back, c1, frames)
        assert max(np.abs(x - y).max() for x, y in zip(p0, p1)) <= 1e-5 * ev.size(original)


def test_the_file_is_read_again_only_when_the_data_disagree_with_the_convention():
    """One build of the parsed file for a Y-up file, two for tiny (Z-up);
    the warnings are the final reading's only: the same as a reading with
    those axes given."""
    from legacy_skin_io.io.xfile import read_xfile
    from legacy_skin_io.io.xfile.to_scene import _Reader

    for path, builds in ((BCN, 1), (TINY, 2)):
        xf = read_xfile(path)
        calls = []

        def build(axes, sink, xf=xf, path=path, calls=calls):
            calls.append(axes)
            return _Reader(xf, axes, str(path), sink).scene(path.stem)

        auto = Warnings()
        scene = orientation.read_oriented(orientation.AutoAxes(mirror_z=True), build, auto)
        assert len(calls) == builds and calls[-1] == scene.source.axes
        manual = Warnings()
        _Reader(xf, scene.source.axes, str(path), manual).scene(path.stem)
        assert list(auto) == list(manual) and auto.notes == manual.notes


def test_the_switch_is_the_registrys():
    """Manual Orientation off gives the reader AutoAxes (keeping the scale);
    on, the axes given (or the format's default); RiTE keeps its Y-up
    contract unless the switch is turned off; a format without the switch
    gets the axes as given."""
    x, r = by_id("xfile"), by_id("rite")
    given = x.axes("Y", "Z", 2.0)
    auto = x.reading_axes(given)
    assert isinstance(auto, orientation.AutoAxes) and auto.scale == 2.0 and auto.mirror_z
    assert x.reading_axes(given, True) is given
    assert x.reading_axes(None, True) == xfile.default_axes()
    assert r.reading_axes(None) == rite.default_axes()
    assert isinstance(r.reading_axes(None, False), orientation.AutoAxes)
    scene = r.read_scene([HUMANOID])
    assert not scene.source.orientation.automatic and scene.source.orientation.file_up == "Y"
    assert scene.source.axes == rite.default_axes()


def test_rite_with_the_switch_off_stands_a_z_up_model(tmp_path):
    original = rite.read_scene([str(HUMANOID)], warnings=[])
    out = tmp_path / "lying.ram"
    written = rite.write_scene(original, out, axes=by_id("rite").axes("Y", "Z"), warnings=[])
    lying = by_id("rite").read_scene(written)
    assert _height(lying, "Head", "LeftToe") < 0.3 * ev.size(lying)      # the contract: Y-up
    standing = by_id("rite").read_scene(written, manual_orientation=False)
    assert standing.source.orientation.file_up == "Z"
    a, b = ev.evaluate(original, None, [0.0])[0], ev.evaluate(standing, None, [0.0])[0]
    assert np.abs(a - b).max() <= 1e-5 * ev.size(original)


# ---------------------------------------------------------------------------
# 3ds Max humanoids: whatever pose their frames hold

def _humanoid(tmp_path, kind, pose, up, animation="walk") -> Path:
    from humanoid_rigs import humanoid_xfile

    from legacy_skin_io.io.xfile import write_xfile

    out = tmp_path / f"{kind}_{pose}_{up}_{animation}.x"
    write_xfile(humanoid_xfile(kind, pose, up, animation), out)
    return out


def _stands(scene, world, kind, facing: bool = True) -> bool:
    """Head above both feet by 0.4 of the skeleton's size, toes ahead of the feet
    (Blender's front: -Y), the hands on either side, in the pose of joint
    world matrices ``world``. The left hand is at +x for a Y-up file (a
    right-handed model turned left-handed by swapping y and z) and at -x for
    a Z-up one, which holds 3ds Max's right-handed coordinates as they are
    (as tiny_4anim.x does): Direct3D, left-handed, shows it mirrored, and so
    does the import. ``facing`` False: the head above the feet only (the
    rule decides up; the facing goes with the axis it picks)."""
    from humanoid_rigs import LANDMARKS

    top, feet, toes, left, right = LANDMARKS[kind]
    i = scene.skeleton.index()
    p = world[:, :3, 3]
    side = 1.0 if scene.source.orientation.file_up == "Y" else -1.0
    size = float(np.linalg.norm(np.ptp(p, axis=0)))
    upright = p[i[top], 2] - max(p[i[f], 2] for f in feet) > 0.4 * size
    front = (all(p[i[t], 1] < p[i[f], 1] for t, f in zip(toes, feet))
             and side * p[i[left], 0] > 0.0 > side * p[i[right], 0])
    return bool(upright and (front or not facing))


def _shown(scene):
    """(the first animation's first frame, or None; the default pose; the bind pose) joint world matrices."""
    sk = scene.skeleton
    first = None
    if scene.clips:
        c = scene.clips[0]
        first = sk.world(c.sample_local(sk.local, [c.start])[0])
    return first, sk.world(), sk.bind


@pytest.mark.parametrize("animation", ["walk", "none"])
@pytest.mark.parametrize("up", ["Z", "Y"])
@pytest.mark.parametrize("kind", ["max", "biped", "generic"])
def test_a_max_humanoid_stands_whatever_pose_its_frames_hold(tmp_path, kind, up, animation):
    """The 25-bone 3ds Max humanoid, a Biped and a generic humanoid, Z-up
    (as Max exports) or Y-up, their frames holding the bind pose, a T-pose
    over an A-pose bind, a root and pelvis with turned axes, the body turned
    at the root or the pelvis, the walk's first key, every frame the
    identity, or world matrices: read with the defaults, the file's up is
    found from the skeleton, and the body stands facing -Y at frame 0 (the
    walk's first frame; without animation the default pose, or where it
    holds no body the bind pose) and, where the frames do not hold it
    turned, in every pose the import keeps; frames holding it turned with
    no animation to say otherwise: what Direct3D shows (the frames) stands.
    Before, the identity frames and world matrices gave "the
    format's convention (nothing in the data against it)" or an axis from
    the mesh's extent, and a body turned in its frames was stood up by them
    whatever its animation showed."""
    from humanoid_rigs import POSES, STANDING_FRAMES

    for pose in POSES:
        scene = by_id("xfile").read_scene([_humanoid(tmp_path, kind, pose, up, animation)], warnings=Warnings())
        o = scene.source.orientation
        degenerate = pose in ("bind_space_only", "world_in_frames")
        turned = pose in ("lying_root", "lying_pelvis")
        assert o.automatic and o.evidence.startswith("decided from the skeleton"), (pose, o)
        assert (o.file_up == up) != (turned and animation == "none"), (pose, o)
        first, default, bind = _shown(scene)
        if animation == "walk":
            assert _stands(scene, first, kind) and _stands(scene, bind, kind), pose
        elif degenerate:
            assert _stands(scene, bind, kind) and "bind pose" in o.evidence, pose
        else:                           # what Direct3D shows stands; a bind pose turned against it does not
            assert _stands(scene, default, kind, facing=not turned), pose
            assert _stands(scene, bind, kind, facing=False) != turned, pose
        assert _stands(scene, default, kind, facing=False) == (pose in STANDING_FRAMES
                                                               or (turned and animation == "none")), pose


def test_an_animation_starting_on_its_back_does_not_lay_the_body_down(tmp_path):
    """A get-up whose first key lies on its back, frames and bind standing:
    the poses shown tie, the bind pose breaks the tie, and the summary names
    the pose that disagrees."""
    scene = by_id("xfile").read_scene([_humanoid(tmp_path, "max", "bind", "Z", "get_up")], warnings=Warnings())
    o = scene.source.orientation
    assert o.file_up == "Z" and "'GetUp' holds the body otherwise" in o.evidence and "bind pose" in o.evidence
    first, default, bind = _shown(scene)
    assert _stands(scene, default, "max") and _stands(scene, bind, "max") and not _stands(scene, first, "max")


@pytest.mark.parametrize("kind,pose", [("max", "bind_space_only"), ("biped", "world_in_frames"),
                                       ("generic", "lying_pelvis")])
def test_a_max_humanoid_is_found_whichever_way_its_file_points(tmp_path, kind, pose):
    """The detector's answer on a humanoid the old rule missed, read with
    the convention and turned into each of the 48 namings of its axes, is
    the turned up: the reader's cheap probe (first keys only) agrees with
    the whole scene."""
    from legacy_skin_io.io.xfile import read_xfile
    from legacy_skin_io.io.xfile.to_scene import _Reader

    path = _humanoid(tmp_path, kind, pose, "Z")
    truth = orientation.detect(_probe(path))
    light = _Reader(read_xfile(path), xfile.default_axes(), str(path), []).probe(path.stem)
    assert orientation.detect(light)[1] == truth[1] and np.array_equal(orientation.detect(light)[0], truth[0])
    assert np.array_equal(truth[0], [0.0, 1.0, 0.0])    # the file's z, read as Y-up: the probe's y
    for R in _turns():
        turned = _probe(path)
        _turn(turned, R)
        found = orientation.detect(turned)
        assert found is not None and np.array_equal(found[0], R @ truth[0]), R

