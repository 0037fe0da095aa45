# SPDX-License-Identifier: GPL-3.0-or-later
"""Template declarations a writer puts at the top of a .X file.

D3DX and assimp know the skinning and animation templates; readers built on
DirectX's older retained-mode file API (``d3dxof``: DarkBASIC Pro, FPS
Creator) register only the basic ones (``D3DRM_XTEMPLATES``) and parse an
object of another template only when the file declares it, as every
exporter of their own character files does. The declarations below are
Microsoft's (``rmxftmpl.x`` / ``d3dx9mesh.h``), GUIDs included.
"""
from __future__ import annotations

import struct
import uuid

#: name -> (GUID, members): a member is (type, name) or ("array", type, name, dimension)
TEMPLATES: dict[str, tuple[str, tuple[tuple[str, ...], ...]]] = {
    "XSkinMeshHeader": ("3CF169CE-FF7C-44ab-93C0-F78F62D172E2", (
        ("WORD", "nMaxSkinWeightsPerVertex"), ("WORD", "nMaxSkinWeightsPerFace"), ("WORD", "nBones"))),
    "VertexDuplicationIndices": ("B8D65549-D7C9-4995-89CF-53A9A8B031E3", (
        ("DWORD", "nIndices"), ("DWORD", "nOriginalVertices"), ("array", "DWORD", "indices", "nIndices"))),
    "SkinWeights": ("6F0D123B-BAD2-4167-A0D0-80224F25FABB", (
        ("STRING", "transformNodeName"), ("DWORD", "nWeights"), ("array", "DWORD", "vertexIndices", "nWeights"),
        ("array", "FLOAT", "weights", "nWeights"), ("Matrix4x4", "matrixOffset"))),
    "AnimTicksPerSecond": ("9E415A43-7BA6-4a73-8743-B73D47E88476", (("DWORD", "AnimTicksPerSecond"),)),
    "VertexElement": ("F752461C-1E23-48f6-B9F8-8350850F336F", (
        ("DWORD", "Type"), ("DWORD", "Method"), ("DWORD", "Usage"), ("DWORD", "UsageIndex"))),
    "DeclData": ("BF22E553-292C-4781-9FEA-62BD554BDD93", (
        ("DWORD", "nElements"), ("array", "VertexElement", "Elements", "nElements"), ("DWORD", "nDWords"),
        ("array", "DWORD", "data", "nDWords"))),
    # an open template ("[...]": any object may be inside): its parameters
    "EffectInstance": ("E331F7E4-0559-4cc2-8E99-1CEC1657928F", (("STRING", "EffectFilename"), ("open",))),
    "EffectParamString": ("1DBC4C88-94C1-46ee-9076-2C28818C9481", (("STRING", "ParamName"), ("STRING", "Value"))),
    "EffectParamDWord": ("E13963BC-AE51-4c5d-B00F-CFA3A9D97CE5", (("STRING", "ParamName"), ("DWORD", "Value"))),
    "EffectParamFloats": ("3014B9A0-62F5-478c-9B86-E4AC9F4E418B", (
        ("STRING", "ParamName"), ("DWORD", "nFloats"), ("array", "FLOAT", "Floats", "nFloats"))),
}

# binary token ids (the .X binary format's)
_NAME, _INTEGER, _GUID, _OBRACE, _CBRACE, _OBRACKET, _CBRACKET, _DOT, _SEMICOLON, _TEMPLATE = \
    1, 3, 5, 10, 11, 14, 15, 18, 20, 31
_PRIMITIVE = {"WORD": 40, "DWORD": 41, "FLOAT": 42, "DOUBLE": 43, "CHAR": 44, "UCHAR": 45, "SWORD": 46,
              "SDWORD": 47, "STRING": 49, "ARRAY": 52}


def needed(xf) -> tuple[str, ...]:
    """The declarations the objects of ``xf`` use (in a valid order)."""
    meshes = [m for f in xf.all_frames() for m in f.meshes] + list(xf.meshes)
    out = []
    if xf.anim_ticks_per_second is not None:
        out.append("AnimTicksPerSecond")
    if any(m.skin_weights for m in meshes):
        out += ["XSkinMeshHeader", "SkinWeights"]
    if any(m.duplicates is not None for m in meshes):
        out.append("VertexDuplicationIndices")
    if any(m.extra_streams for m in meshes):
        out += ["VertexElement", "DeclData"]
    if any(mat.effect is not None for m in meshes for mat in m.materials):
        out += ["EffectInstance", "EffectParamString", "EffectParamDWord", "EffectParamFloats"]
    return tuple(out)


def text(names) -> str:
    """The declarations, as text."""
    lines = []
    for name in names:
        guid, members = TEMPLATES[name]
        lines += [f"template {name} {{", f" <{guid}>"]
        for m in members:
            lines.append(" [...]" if m[0] == "open" else
                         f" array {m[1]} {m[2]}[{m[3]}];" if m[0] == "array" else f" {m[0]} {m[1]};")
        lines += ["}", ""]
    return "\n".join(lines) + "\n"


def _word(token: int) -> bytes:
    return struct.pack("<H", token)


def _name(name: str) -> bytes:
    raw = name.encode("ascii")
    return struct.pack("<HI", _NAME, len(raw)) + raw


def _type(t: str) -> bytes:
    return _word(_PRIMITIVE[t]) if t in _PRIMITIVE else _name(t)


def binary(names) -> bytes:
    """The declarations, as binary tokens."""
    out = []
    for name in names:
        guid, members = TEMPLATES[name]
        out += [_word(_TEMPLATE), _name(name), _word(_OBRACE), _word(_GUID), uuid.UUID(guid).bytes_le]
        for m in members:
            if m[0] == "open":
                out += [_word(_OBRACKET), _word(_DOT) * 3, _word(_CBRACKET)]
            elif m[0] == "array":
                dim = m[3]
                size = struct.pack("<HI", _INTEGER, int(dim)) if dim.isdigit() else _name(dim)
                out += [_word(_PRIMITIVE["ARRAY"]), _type(m[1]), _name(m[2]), _word(_OBRACKET), size,
                        _word(_CBRACKET), _word(_SEMICOLON)]
            else:
                out += [_type(m[0]), _name(m[1]), _word(_SEMICOLON)]
        out.append(_word(_CBRACE))
    return b"".join(out)
