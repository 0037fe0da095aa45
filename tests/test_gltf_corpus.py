# SPDX-License-Identifier: GPL-3.0-or-later
"""Every real .X file of the test corpus and the RiTE samples converted to
.glb, checked by readers we did not write: the Khronos glTF
Validator finds no error, and three.js (GLTFLoader, AnimationMixer), which
follows the glTF specification's interpolation, shows at the default pose
and at every whole frame of every animation what the core evaluates from
the source file, within 1e-5 of the model size. One Node process reads
every file (``tests/gltf_reading.py``). What ``convert`` refuses, and what
it reports lossy with its figure, is listed here; for a lossy file the
figure is what three.js shows."""
from __future__ import annotations

import gltf_checks as gc
import pytest

CASES = gc.cases()
NAMES = [n for n, _ in CASES]
TOLERANCE = 1e-5

#: files ``convert`` refuses, with what its one line says
REFUSED = {"assimp/malformed_skinweights_oob.x": "names vertex 1000000, but the mesh has only 24 vertices"}
#: files written with a loss, reported (a Deviation) with what its line names
LOSSY = {
    "directx-sdk/bat.x": "more than 4 weights per vertex",          # 473 vertices of 6 weights
    "real/walbourn__directx-sdk-legacy-samples/scene.x": "shear in the default pose",   # two trees' frames
}
#: validator warnings a converted corpus file may have: its textures as the file names them
EXPECTED_WARNINGS = ("IMAGE_UNRECOGNIZED_FORMAT",     # .dds, .tga, .bmp: referenced as they are (warned)
                     "NON_RELATIVE_URI",                # an absolute Windows path, as a file:// URI
                     "MESH_PRIMITIVE_GENERATED_TANGENT_SPACE")   # a normal map: the reader makes the tangents


@pytest.fixture(scope="module")
def corpus(gltf_readers, tmp_path_factory):
    """name -> (case, what the validator and three.js made of it), every file in one Node process."""
    folder = tmp_path_factory.mktemp("gltf_corpus")
    cases = {}
    for name, inputs in CASES:
        sub = folder / name.replace("/", "__")
        sub.mkdir()
        cases[name] = gc.convert_case(name, inputs, sub)
    written = [c for c in cases.values() if c.output is not None]
    reads = gltf_readers.read([(c.output, [gltf_readers.Run(a, list(s)) for a, _, _, s in gc.runs(c)])
                               for c in written])
    return {c.name: (c, r) for c, r in zip(written, reads)} | {n: (c, None) for n, c in cases.items()
                                                              if c.output is None}


def test_convert_refuses_and_reports_lossy_exactly_these(corpus):
    refused = {n: c.refused for n, (c, _) in corpus.items() if c.refused}
    assert set(refused) == set(REFUSED), refused
    for n, why in REFUSED.items():
        assert why in refused[n]
    lossy = {n: c for n, (c, _) in corpus.items() if c.loss is not None}
    assert set(lossy) == set(LOSSY), {n: c.loss for n, c in lossy.items()}
    for n, why in LOSSY.items():
        assert any(why in w for w in lossy[n].warnings), lossy[n].warnings


def _read(corpus, name: str):
    """(case, read) of a file convert wrote (a refused one is skipped, saying why)."""
    case, read = corpus[name]
    if read is None:
        pytest.skip(f"convert refuses it: {case.refused}")
    assert not read.error, read.error
    return case, read


@pytest.mark.parametrize("name", NAMES)
def test_the_validator_finds_no_error(corpus, name):
    _, read = _read(corpus, name)
    assert read.errors == 0, read.messages
    assert all(m.split()[1] in EXPECTED_WARNINGS for m in read.messages if m.startswith("warning")), read.messages


@pytest.mark.parametrize("name", NAMES)
def test_three_js_plays_every_frame_as_the_core_evaluates_the_source(corpus, name):
    case, read = _read(corpus, name)
    loss = case.loss or 0.0
    seen = 0.0
    has_vertices = any(len(m.positions) for m in case.scene.meshes)
    for k, (_, clip, frames, _) in enumerate(gc.runs(case)):
        want, worlds = gc.expected(case, clip, frames)
        assert [len(p[0]) for p in want] == [n for _, _, n in read.prims]
        dev, prim, f = gc.worst(case, read.positions[k], want)
        what = "the default pose" if clip is None else f"{clip.name}, frame {frames[f]:g}"
        assert dev <= loss + TOLERANCE, f"{dev:.3g} of the model size at {what} (primitive {prim})"
        joints = gc.joint_error(case, read.worlds[k], worlds) if worlds is not None else 0.0
        assert joints <= loss + TOLERANCE, f"joint matrices {joints:.3g} apart at {what}"
        seen = max(seen, dev if has_vertices else joints)
    if case.loss is not None:           # the figure convert reports is what three.js shows
        assert abs(case.loss - seen) <= TOLERANCE, (case.loss, seen)
