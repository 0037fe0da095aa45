# SPDX-License-Identifier: GPL-3.0-or-later
"""Real .X files slightly off: each imports with everything it
has, and one warning names what was not taken and where. The crafted files
(tools/make_xfile_crafted.py) show one blemish each as a real file holds it:
UVs that are NaN in a DeclData (an Allegiance building), an AnimationKey
time -1 (a DirectX SDK-era DWORD printed signed) or 4294967295, a
MeshNormals without its closing brace (a disc), an animation of a frame a
file without frames does not have; text, binary and compressed. A file of
animations alone (cut here from tiny_4anim.x's own text) is refused by the
model reading with the command that takes it, and plays on tiny's
skeleton exactly as tiny's own animations do. Truly broken files stay
refused (test_bad_input_xfile.py holds the rest)."""
from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest
from x_rigs import animation_only

from legacy_skin_io.io import convert
from legacy_skin_io.io.errors import AnimationsOnly, FormatError, Warnings
from legacy_skin_io.io.formats import by_id
from legacy_skin_io.io.xfile import mszip, read_xfile, read_xfile_bytes, write_xfile_bytes
from legacy_skin_io.scene import evaluate

X = Path(__file__).resolve().parent / "data" / "x"
CRAFTED = X / "crafted"
TINY = X / "directx-sdk" / "tiny_4anim.x"
XFMT = by_id("xfile")


def _line_of(path: Path, needle: str, nth: int = 0) -> int:
    """The 1-based line of the ``nth`` line of ``path`` that contains ``needle``."""
    return [i + 1 for i, ln in enumerate(path.read_text().splitlines()) if needle in ln][nth]


def _compressed(data: bytes) -> bytes:
    """A text or binary file's body as the same file MSZIP-compressed (tzip / bzip)."""
    kind = {b"txt ": b"tzip", b"bin ": b"bzip"}[data[8:12]]
    return mszip.compress(data[:8] + kind + data[12:16], data[16:])


# ---------------------------------------------------------------- NaN UVs in a DeclData
NAN_UVS = CRAFTED / "decldata_nan_uvs.x"


def _nan_uv_warning(where: str) -> str:
    return (f"Mesh 'Building': DeclData TEXCOORD0: 32 texture coordinate values were not finite (16 vertices, "
            f"the first at {where}), set to 0")


def test_decldata_nan_uvs_are_set_to_0_with_one_warning_naming_the_mesh_and_count():
    xf = read_xfile(NAN_UVS)
    first = _line_of(NAN_UVS, "4290772992")
    assert xf.warnings == [_nan_uv_warning(f"line {first}")]
    mesh = xf.frames[0].meshes[0]
    boxes = mesh.uvs.reshape(6, 8, 2)
    assert np.all(boxes[[2, 5]] == 0.0)
    # the other boxes keep their UVs (0.5 +- 0.5 from the corners), normals everywhere
    assert np.all(np.isin(boxes[[0, 1, 3, 4]], [0.0, 1.0])) and len(np.unique(boxes[[0, 1, 3, 4]])) == 2
    assert np.isfinite(mesh.normals).all() and np.allclose(np.linalg.norm(mesh.normals, axis=1), 1.0)


def test_decldata_nan_uvs_in_a_compressed_file_name_the_line_of_the_decompressed_text():
    xf = read_xfile_bytes(_compressed(NAN_UVS.read_bytes()))
    assert xf.warnings == [_nan_uv_warning(f"line {_line_of(NAN_UVS, '4290772992')} (line of the decompressed "
                                           f"text)")]


def test_decldata_nan_uvs_import_with_every_face_and_finite_uvs():
    warnings = Warnings()
    scene = XFMT.read_scene([NAN_UVS], warnings=warnings)
    (mesh,) = scene.meshes
    assert len(mesh.face_sizes) == 72 and np.isfinite(mesh.uvs).all()
    assert _nan_uv_warning(f"line {_line_of(NAN_UVS, '4290772992')}") in warnings


# ---------------------------------------------------------------- key times -1 and 4294967295
KEY_FILE = CRAFTED / "key_time_minus_one.x"


def _skip_warning(where: str, time: int) -> str:
    return (f"1 animation key with a time outside [0, 2147483648) ticks skipped (no time of the timeline to place "
            f"it at): the first at {where} (AnimationSet 'Swing': Animation: AnimationKey, key 0, time {time})")


def _swing_keys(xf) -> tuple[list[float], list[float]]:
    arm, root = xf.animation_sets[0].animations
    assert (arm.frame_name, root.frame_name) == ("Arm", "Root")
    return arm.keys[0].times.tolist(), root.keys[0].times.tolist()


@pytest.mark.parametrize("spelling, time", [("-1", -1), ("4294967295", 4294967295)])
@pytest.mark.parametrize("compressed", [False, True])
def test_a_key_time_no_tick_can_be_is_skipped_in_text(spelling, time, compressed):
    text = KEY_FILE.read_text().replace("    -1;4;", f"    {spelling};4;")
    data = text.encode()
    line = _line_of(KEY_FILE, "    -1;4;")
    note = " (line of the decompressed text)" if compressed else ""
    xf = read_xfile_bytes(_compressed(data) if compressed else data)
    assert xf.warnings == [_skip_warning(f"line {line}{note}", time)]
    assert _swing_keys(xf) == ([0.0, 2400.0, 4800.0], [])


def _binary_with_time(time: int) -> tuple[bytes, int]:
    """key_time_minus_one.x written binary with the root's key at ``time``
    (a DWORD the writer would not write), and the byte offset of that time."""
    xf = read_xfile(KEY_FILE)
    key = xf.animation_sets[0].animations[1].keys[0]
    key.times, key.values = np.array([1234567.0]), np.array([[1.0, 0.0, 0.0, 0.0]])
    data = write_xfile_bytes(xf, storage="binary")
    marker = struct.pack("<I", 1234567)
    assert data.count(marker) == 1
    return data.replace(marker, struct.pack("<I", time)), data.index(marker)


@pytest.mark.parametrize("time", [0xFFFFFFFF, 2 ** 31])
def test_a_key_time_no_tick_can_be_is_skipped_in_binary(time):
    data, offset = _binary_with_time(time)
    xf = read_xfile_bytes(data)
    assert xf.warnings == [_skip_warning(f"offset {offset}", time)]
    assert _swing_keys(xf) == ([0.0, 2400.0, 4800.0], [])
    # compressed: the offset in the decompressed data
    xf = read_xfile_bytes(_compressed(data))
    assert xf.warnings == [_skip_warning(f"offset {offset - 16} (offset in the decompressed data)", time)]
    assert _swing_keys(xf) == ([0.0, 2400.0, 4800.0], [])


def test_the_file_with_a_key_at_minus_one_plays_its_other_animation():
    warnings = Warnings()
    scene = XFMT.read_scene([KEY_FILE], warnings=warnings)
    (clip,) = scene.clips
    arm, root = scene.skeleton.names.index("Arm"), scene.skeleton.names.index("Root")
    assert clip.animated[arm] and not clip.animated[root]
    assert (clip.start, clip.end) == (0.0, 4800.0)
    assert sum("skipped" in w for w in warnings) == 1


def test_several_keys_that_cannot_be_placed_are_one_warning_with_the_count():
    text = KEY_FILE.read_text().replace("    2400;4;", "    -5;4;").replace("    4800;4;", "    4294967295;4;")
    xf = read_xfile_bytes(text.encode())
    assert len(xf.warnings) == 1
    assert xf.warnings[0].startswith("3 animation keys with a time outside [0, 2147483648) ticks skipped")
    assert f"the first at line {_line_of(KEY_FILE, '    2400;4;')} (AnimationSet 'Swing': Animation: " \
           f"AnimationKey, key 1, time -5)" in xf.warnings[0]
    assert _swing_keys(xf) == ([0.0], [])


def test_a_key_value_that_is_not_finite_is_still_refused():
    text = KEY_FILE.read_text().replace("2400;4;0.921061,", "2400;4;nan,")
    with pytest.raises(FormatError, match="key 1 value 0 is not finite"):
        read_xfile_bytes(text.encode())


# ---------------------------------------------------------------- a missing closing brace
DISC = CRAFTED / "normals_without_brace.x"


def _brace_warning(where: str) -> str:
    return (f"Mesh 'Disc': MeshNormals has no closing '}}': closed at {where}, before 'MeshTextureCoords' "
            f"(which cannot lie inside it)")


def _disc_is_whole(xf) -> None:
    mesh = xf.frames[0].meshes[0]
    assert mesh.name == "Disc" and len(mesh.face_sizes) == 16
    assert mesh.normals.tolist() == [[0.0, 1.0, 0.0]] and mesh.uvs.shape == (17, 2)
    assert [m.name for m in mesh.materials] == ["Stone"]


def test_meshnormals_without_its_brace_is_closed_at_the_next_object():
    xf = read_xfile(DISC)
    assert xf.warnings == [_brace_warning(f"line {_line_of(DISC, '  MeshTextureCoords {')}")]
    _disc_is_whole(xf)


def test_meshnormals_without_its_brace_in_compressed_text():
    xf = read_xfile_bytes(_compressed(DISC.read_bytes()))
    assert xf.warnings == [_brace_warning(f"line {_line_of(DISC, '  MeshTextureCoords {')} (line of the "
                                          f"decompressed text)")]
    _disc_is_whole(xf)


def test_meshnormals_without_its_brace_in_binary():
    whole = write_xfile_bytes(read_xfile(DISC), storage="binary")
    name = struct.pack("<HI", 1, len(b"MeshTextureCoords")) + b"MeshTextureCoords"
    close = struct.pack("<H", 11)
    assert whole.count(close + name) == 1
    data = whole.replace(close + name, name)
    xf = read_xfile_bytes(data)
    assert xf.warnings == [_brace_warning(f"offset {data.index(name)}")]
    _disc_is_whole(xf)


def test_a_missing_brace_deeper_is_closed_where_an_object_cannot_lie():
    """MeshNormals last in its mesh, its brace missing: the mesh's and the
    frame's braces come one early, and the frame is closed at the
    AnimationSet, which cannot lie in a frame; the mesh and the set are
    whole."""
    text = DISC.read_text()
    body = (text[:text.index("  MeshTextureCoords {")] + " }\n}\nAnimationSet Turn {\n Animation {\n  { Disc }\n"
            "  AnimationKey {\n   2;\n   1;\n   0;3;0.0,1.0,0.0;;;\n  }\n }\n}\n")
    xf = read_xfile_bytes(body.encode())
    line = body[:body.index("AnimationSet Turn")].count("\n") + 1
    assert xf.warnings == [f"Frame 'Disc' (or an object inside it) has no closing '}}': closed at line {line}, "
                           f"before 'AnimationSet' (which cannot lie inside it)"]
    mesh = xf.frames[0].meshes[0]
    assert len(mesh.face_sizes) == 16 and mesh.normals.tolist() == [[0.0, 1.0, 0.0]]
    assert len(xf.animation_sets) == 1 and xf.animation_sets[0].animations[0].keys[0].times.tolist() == [0.0]


@pytest.mark.parametrize("cut, expect", [
    ("all", "unexpected end of file"),            # nothing follows the unclosed objects: refused
    ("data", "needs 16 numbers"),                 # the normals' data cut short
])
def test_truly_broken_files_stay_refused(cut, expect):
    text = DISC.read_text()
    if cut == "all":
        body = text[:text.index("  MeshTextureCoords")]
    else:
        body = text[:text.index("   3;0,0,0;,") + 40]
    with pytest.raises(FormatError, match=expect):
        read_xfile_bytes(body.encode())


def test_a_balanced_file_with_an_object_inside_meshnormals_reads_as_before():
    """Only a file that ends inside an object is read again: a balanced file
    with an unknown object in its MeshNormals still skips that object."""
    text = DISC.read_text().replace("  MeshTextureCoords {", "   Note { 1; }\n  }\n  MeshTextureCoords {", 1)
    xf = read_xfile_bytes(text.encode())
    assert xf.warnings == ["skipped 1 unknown 'Note' object(s)"]
    _disc_is_whole(xf)


# ---------------------------------------------------------------- an animation of a frame the file lacks
MISSING = CRAFTED / "animation_on_missing_frame.x"


def test_an_animation_of_a_frame_a_file_without_frames_lacks_is_one_warning():
    warnings = Warnings()
    scene = XFMT.read_scene([MISSING], warnings=warnings)
    assert scene.skeleton is None and [m.name for m in scene.meshes] == ["Crate"] and scene.clips == []
    assert list(warnings) == ["Animations name frames the file does not have, skipped (1): 'Crate' (Spin)"]


# ---------------------------------------------------------------- a file of animations alone
@pytest.fixture(scope="module")
def tiny_animations(tmp_path_factory) -> Path:
    """tiny_4anim.x without its frame hierarchy (and meshes): its four sets alone."""
    path = tmp_path_factory.mktemp("anim") / "tiny_animations.x"
    path.write_text(animation_only(TINY.read_text()))
    xf = read_xfile(path)
    assert xf.frames == [] and xf.meshes == [] and len(xf.animation_sets) == 4
    return path


def test_the_model_reading_refuses_a_file_of_animations_alone_saying_what_it_holds(tiny_animations):
    with pytest.raises(AnimationsOnly) as info:
        XFMT.read_scene([tiny_animations])
    assert str(info.value) == (
        "tiny_animations.x: the file holds only animations (4 AnimationSets keying 46 frames: 'Scene_Root', "
        "'Bip01', 'Bip01_Footsteps', 'Bip01_Pelvis' ...), no mesh and no skeleton: they play on the skeleton of "
        "a model with those frames")


def test_convert_of_a_file_of_animations_alone_says_to_convert_it_with_its_model(tiny_animations, tmp_path):
    out = convert.convert_files([str(tiny_animations)], str(tmp_path / "out.x"))
    assert out.error.endswith("; convert it with the model it plays on: convert MODEL.x tiny_animations.x "
                              "-o OUTPUT"), out.error
    assert not (tmp_path / "out.x").exists()


def _same_playback(model, clips_a, clips_b) -> float:
    """The largest distance between the two clips' skinned vertices at 9
    frames of each, as a fraction of the model size."""
    size = evaluate.size(model)
    worst = 0.0
    for a, b in zip(clips_a, clips_b, strict=True):
        frames = np.linspace(0.0, a.frame_range(24.0)[1], 9)
        for x, y in zip(evaluate.evaluate(model, a, frames, 24.0), evaluate.evaluate(model, b, frames, 24.0)):
            worst = max(worst, float(np.abs(x - y).max()) / size)
    return worst


def test_a_file_of_animations_alone_plays_on_the_skeleton_its_tracks_name(tiny_animations):
    """Read onto tiny's skeleton (by the tracks' frame names), the cut file's
    sets deform tiny as its own sets do."""
    model = XFMT.read_scene([TINY])
    warnings = Warnings()
    clips = XFMT.read_clips(model.skeleton, model.source.axes, [tiny_animations], warnings=warnings)
    assert list(warnings) == []
    assert [c.name for c in clips] == [c.name for c in model.clips] == ["Loiter", "Walk", "Jog", "Wave"]
    for own, cut in zip(model.clips, clips):
        assert np.array_equal(own.animated, cut.animated)
    assert _same_playback(model, model.clips, clips) <= 1e-5


def test_convert_reads_a_file_of_animations_alone_onto_its_model(tiny_animations, tmp_path):
    out = tmp_path / "both.x"
    convert.convert([str(TINY), str(tiny_animations)], str(out), warnings=Warnings())
    back = XFMT.read_scene([out])
    assert [c.name for c in back.clips] == ["Loiter", "Walk", "Jog", "Wave", "Loiter.1", "Walk.1", "Jog.1", "Wave.1"]
    assert _same_playback(back, back.clips[:4], back.clips[4:]) <= 1e-5


def test_tracks_the_armature_lacks_are_named_and_the_rest_plays(tiny_animations):
    """An armature without tiny's finger joints: each set names the fingers
    it keys in one warning and animates every other joint it keys."""
    model = XFMT.read_scene([TINY])
    sk = model.skeleton
    finger = np.array(["Finger" in n for n in sk.names])
    assert finger.any()
    fewer = type(sk)([f"other{i}" if finger[i] else n for i, n in enumerate(sk.names)], sk.parents, sk.local,
                     sk.bind, sk.has_bind)
    warnings = Warnings()
    clips = XFMT.read_clips(fewer, model.source.axes, [tiny_animations], warnings=warnings)
    for own, cut in zip(model.clips, clips, strict=True):
        assert np.array_equal(cut.animated, own.animated & ~finger)
    assert len(warnings) == 4
    for own, w in zip(model.clips, warnings):
        n = int((own.animated & finger).sum())
        assert w.startswith(f"{own.name}: {n} animated frame(s) match no bone, skipped: Bip01_"), w
