# SPDX-License-Identifier: GPL-3.0-or-later
"""Names on export: every name a format can hold is written as
it is and comes back on re-import; what it cannot hold is replaced, kept
unique and reported; bones whose names hold quotes, brackets or control
characters keep their animation."""
from __future__ import annotations

import assimp_reading as ar
import export_checks as rig
import numpy as np
import pytest

# bone names (the rig's CHAIN + Arm renamed): text .X holds the first three as they are (頭's UTF-8
# holds the byte 0xA0, which is no whitespace to a reader: regression of the text reader)
NAMES = {"Bone.0": "Rücken", "Bone.1": "Шея", "Bone.2": "骨頭", "Bone.3": 'a"]b', "Arm": "two\twords"}
TEXT_HOLDS = {"Rücken", "Шея", "骨頭"}


def _renamed_rig(bpy):
    ao, mo, action = rig.build(bpy)
    for old, new in NAMES.items():
        ao.data.bones[old].name = new          # renames the vertex groups and the F-curve paths too
    action.name = "Act\nion [loop]"
    bpy.context.view_layer.update()
    return ao, mo, action


def _warnings(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith("Warning:")]


@pytest.mark.parametrize("storage", ["text", "binary"])
def test_x_names_survive_or_are_reported(bpy, tmp_path, capfd, storage):
    ao, mo, action = _renamed_rig(bpy)
    want = rig.positions(bpy, mo, rig.FRAMES)
    out = tmp_path / "names.x"
    capfd.readouterr()
    assert bpy.ops.export_scene.xfile(filepath=str(out), storage=storage) == {"FINISHED"}
    said = _warnings(capfd.readouterr().out)
    if storage == "binary":
        assert not [w for w in said if "written differently" in w], said
    else:
        renamed = [w for w in said if "joint name(s) written differently" in w]
        assert len(renamed) == 1 and "'a\"]b' -> 'a_]b'" in renamed[0] and "'two\\twords'" in renamed[0], said
        assert "骨頭" not in renamed[0], said
        assert [w for w in said if "animation name(s) written differently" in w], said
    sc = ar.assimp_scene(out, tmp_path)     # assimp refuses repeated bone names
    assert len({b.name for m in sc.meshes for b in m.bones}) == len(NAMES)
    assert len(sc.animations) == 1 and len(sc.animations[0].channels) == len(NAMES)  # every bone still animated
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.import_scene.xfile(filepath=str(out)) == {"FINISHED"}
    arm = next(o for o in bpy.context.scene.objects if o.type == "ARMATURE")
    got = {b.name for b in arm.data.bones}
    kept = set(NAMES.values()) if storage == "binary" else TEXT_HOLDS
    assert kept <= got, (kept, got)
    acts = [a.name for a in bpy.data.actions]
    assert ("Act\nion [loop]" in acts) if storage == "binary" else acts == ["Act_ion_[loop]"], acts
    # the animation of every bone came through: the re-import plays as the original did
    body = next(o for o in bpy.context.scene.objects if o.type == "MESH")
    track = arm.animation_data.nla_tracks[0]
    arm.animation_data.action = track.strips[0].action
    arm.animation_data.action_slot = track.strips[0].action_slot
    again = rig.positions(bpy, body, rig.FRAMES)
    size = rig.size(want[0])
    assert np.abs(np.sort(again.reshape(len(rig.FRAMES), -1), axis=1)
                  - np.sort(want.reshape(len(rig.FRAMES), -1), axis=1)).max() <= 1e-4 * size


def test_rite_names_survive_or_are_reported(bpy, tmp_path, capfd):
    ao, mo, action = _renamed_rig(bpy)
    out = tmp_path / "names.ram"
    capfd.readouterr()
    assert bpy.ops.export_scene.rite(filepath=str(out)) == {"FINISHED"}
    said = _warnings(capfd.readouterr().out)
    renamed = [w for w in said if "joint name(s) written differently" in w]
    assert len(renamed) == 1 and "'a\"]b' -> \"a']b\"" in renamed[0], said
    raa = sorted(tmp_path.glob("names_*.raa"))
    assert len(raa) == 1
    from legacy_skin_io.io.rite import read_raa, read_ram

    ram = read_ram(out)
    assert {"Rücken", "Шея", "骨頭", "two\twords", "a']b"} == {j.name for j in ram.joints}
    assert {t.joint_name for t in read_raa(raa[0]).tracks} == {j.name for j in ram.joints}   # none lost


def _plays_back(bpy, capfd, ao, mo, action, importer, path, frames, want, unmatched: str) -> None:
    """``importer`` (an animation import operator) reads ``path`` onto
    ``ao`` with no track left unmatched (no warning holding ``unmatched``),
    and the one action it adds plays ``want`` (``mo``'s positions at
    ``frames`` with ``action``) within 1e-5 of the model size."""
    bpy.context.view_layer.objects.active = ao
    capfd.readouterr()
    assert importer(filepath=str(path)) == {"FINISHED"}
    said = _warnings(capfd.readouterr().out)
    assert not [w for w in said if unmatched in w], said
    new = [a for a in bpy.data.actions if a is not action]
    assert len(new) == 1, [a.name for a in new]
    ad = ao.animation_data
    for t in ad.nla_tracks:
        t.mute = True
    ad.action = new[0]
    ad.action_slot = new[0].slots[0]
    got = rig.positions(bpy, mo, frames)
    assert np.abs(got - want).max() <= 1e-5 * rig.size(want[0]), np.abs(got - want).max() / rig.size(want[0])


@pytest.mark.parametrize("storage", ["text", "text_compressed"])
def test_x_text_respelt_names_play_back_on_the_rig(bpy, tmp_path, capfd, storage):
    """A rig's own animation written to text .X, where its bone
    names are respelt (a quote, a tab), imported back onto that rig with
    File > Import > DirectX Animation: every bone is found again (the
    writer's respelling is deterministic) and the rig plays what it played."""
    ao, mo, action = _renamed_rig(bpy)
    frames = [1, 4, 7, 10, 13]
    want = rig.positions(bpy, mo, frames)
    out = tmp_path / "names.x"
    assert bpy.ops.export_scene.xfile(filepath=str(out), storage=storage) == {"FINISHED"}
    from legacy_skin_io.io.xfile.reader import read_xfile

    written = {f.name for f in read_xfile(out).all_frames()}
    assert {"a_]b", "two_words"} <= written, written             # respelt in the file
    _plays_back(bpy, capfd, ao, mo, action, bpy.ops.import_anim.xfile, out, frames, want, "match no bone")


#: bone names with brackets, as data paths spell them (the RiTE writer spells '"' as "'")
BRACKETS = {"Bone.0": 'root["0"]', "Bone.1": "spine[1]", "Bone.2": 'arm["1"]', "Bone.3": 'x["a"]', "Arm": 'L["hand"]'}


@pytest.mark.parametrize("how", ["model", "animation"])
def test_rite_bracket_names_play_back_on_the_rig(bpy, tmp_path, capfd, how):
    """A rig whose bone names hold brackets and quotes written to
    RAM+RAA (or the RAA alone) and its RAA imported back onto it: the tracks,
    whose names the writer respelt, find their bones (they found none: "no
    track matches a joint of the armature") and the rig plays what it played."""
    ao, mo, action = rig.build(bpy)
    for old, new in BRACKETS.items():
        ao.data.bones[old].name = new
    bpy.context.view_layer.update()
    frames = [1, 4, 7, 10, 13]
    want = rig.positions(bpy, mo, frames)
    bpy.context.view_layer.objects.active = ao
    if how == "model":
        assert bpy.ops.export_scene.rite(filepath=str(tmp_path / "br.ram")) == {"FINISHED"}
        raa = tmp_path / "br_Bend.raa"
    else:
        raa = tmp_path / "br.raa"
        assert bpy.ops.export_anim.rite(filepath=str(raa)) == {"FINISHED"}
    from legacy_skin_io.io.rite import read_raa

    assert {t.joint_name for t in read_raa(raa).tracks} == {n.replace('"', "'") for n in BRACKETS.values()}
    _plays_back(bpy, capfd, ao, mo, action, bpy.ops.import_anim.rite, raa, frames, want, "match no joint")


@pytest.mark.parametrize("how", ["model", "animation"])
def test_rite_mesh_name_written_differently_is_reported(bpy, tmp_path, capfd, how):
    """A mesh whose name holds '"' (and ';', which RiTE holds) is
    written with "'": one warning names the original and the written name
    (before: changed without a word). The RAA-only export writes no mesh and
    says nothing of it; a name RiTE holds is not reported."""
    ao, mo, action = rig.build(bpy)
    mo.name = 'Body "v2"; final'
    bpy.context.view_layer.objects.active = ao
    capfd.readouterr()
    if how == "model":
        assert bpy.ops.export_scene.rite(filepath=str(tmp_path / "m.ram")) == {"FINISHED"}
    else:
        assert bpy.ops.export_anim.rite(filepath=str(tmp_path / "m.raa")) == {"FINISHED"}
    said = [w for w in _warnings(capfd.readouterr().out) if "mesh name" in w]
    if how == "animation":
        assert not said, said
        return
    from legacy_skin_io.io.rite import read_ram

    assert read_ram(tmp_path / "m.ram").mesh_name == "Body 'v2'; final"
    assert len(said) == 1, said
    assert "'Body \"v2\"; final'" in said[0] and "\"Body 'v2'; final\"" in said[0], said[0]
    mo.name = "Body; final"
    capfd.readouterr()
    assert bpy.ops.export_scene.rite(filepath=str(tmp_path / "m.ram")) == {"FINISHED"}
    assert not [w for w in _warnings(capfd.readouterr().out) if "mesh name" in w]
    assert read_ram(tmp_path / "m.ram").mesh_name == "Body; final"
