# SPDX-License-Identifier: GPL-3.0-or-later
"""Generate the crafted .X test files of tests/data/x/crafted/.

    python3.11 tools/run.py py tools/make_xfile_crafted.py [--out DIR]

Each is a few boxes (8 vertices, 12 triangles, one normal per side; sizes
differ so that no reader takes two for instances of one mesh) showing one
class of real files in isolation:

* ``alpha_zero_half_one.x``: Materials with faceColor alpha 0, 0.5 and 1;
* ``inside_out_mirror_root.x``: a root frame swapping Y and Z (a mirror) as
  Blender's .X exporter writes it, a box wound against its normals in its own
  space, one whose one side is wound the other way (mixed winding), and,
  outside the root, a box whose normals are stored in its frame's space
  (turned 150 degrees about z), as some 3DS conversions store them;
* ``materials_in_frames.x``: Materials declared inside Frames (Blitz3D),
  referenced by name before and after their declaration, and one at the top
  level after its use;
* ``extra_brace.x``: one '}' too many at the top level;
* ``uv_sets.x``: boxes of 24 vertices (4 a side) with two UV sets (a
  texture's, each side the whole square, and a lightmap's, the sides in a
  3 x 2 atlas), the second one written three ways: DeclData TEXCOORD1 (after
  a TANGENT0, as kW X-port writes its DeclData), a second
  MeshTextureCoords, FVFData XYZ | TEX1 holding the set MeshTextureCoords
  does not, without positions (Microsoft's FVFData page: "the mesh data
  minus the position data"; assimp and Irrlicht read it as the next set);
* ``effect_maps.x`` and its PNG textures: an EffectInstance with a normal
  map (``g_NormalTexture``), a missing specular map, a DWORD and a FLOAT
  parameter; an EffectInstance with a DXSAS ``Texture0@Name`` base colour
  and a missing ``BumpMap``; two TextureFilename objects in one Material;
  GameGuru's ``crate_D.png`` with ``crate_N/S/I.png`` beside it.
* ``decldata_nan_uvs.x``: a static building whose DeclData holds NaN (the
  x87 "indefinite" 0xFFC00000 MSVC writes) for the UVs of 16 of its 48
  vertices, as an Allegiance (1999-2000) structure does;
* ``key_time_minus_one.x``: an arm swinging, and an Animation of its root
  that moves nothing, keyed at time -1 (a DWORD 0xFFFFFFFF printed signed,
  as DirectX SDK-era exporters did);
* ``normals_without_brace.x``: a disc whose MeshNormals lacks its closing
  '}' (all its data present), followed by its MeshTextureCoords and
  MeshMaterialList;
* ``animation_on_missing_frame.x``: a top-level mesh (no frames) and an
  AnimationSet animating a frame the file does not have.

No randomness: the output depends only on this script. In a face,
cross(p1 - p0, p2 - p0) points out of the box (Direct3D's front side).
"""
from __future__ import annotations

import argparse
import struct
import zlib
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
HEADER = "xof 0303txt 0032\n"
CORNERS = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], dtype=np.float64)


def _f(x: float) -> str:
    return f"{x:.6f}"


def _sides() -> list[tuple[list[int], np.ndarray]]:
    """The six sides of the box: (4 corner indices wound outward, outward normal)."""
    out = []
    for axis in range(3):
        for sign in (-1, 1):
            n = np.zeros(3)
            n[axis] = sign
            idx = [i for i, v in enumerate(CORNERS) if v[axis] == sign]
            c = CORNERS[idx].mean(0)
            u = np.zeros(3)
            u[(axis + 1) % 3] = 1
            w = np.cross(n, u)
            angle = [np.arctan2((CORNERS[i] - c) @ w, (CORNERS[i] - c) @ u) for i in idx]
            quad = [idx[k] for k in np.argsort(angle)]
            p = CORNERS[quad]
            if np.cross(p[1] - p[0], p[2] - p[0]) @ n < 0:
                quad = quad[::-1]
            out.append((quad, n))
    return out


def _rows(values: list[str], indent: str, last: str = ";") -> list[str]:
    return [f"{indent}{v}{',' if i < len(values) - 1 else last}" for i, v in enumerate(values)]


def box(name: str, *, scale: float = 1.0, against=(), normal_turn: np.ndarray | None = None,
        materials: tuple[list[str], list[int]] | None = None, indent: str = " ") -> str:
    """A Mesh object. ``against``: sides wound against their normal;
    ``normal_turn``: a 3x3 row-vector matrix applied to the stored normals;
    ``materials``: (names referenced, material index per face)."""
    positions = CORNERS * scale
    tris, normal_faces, normals = [], [], []
    for k, (quad, n) in enumerate(_sides()):
        a, b, c, d = quad
        pair = [(a, b, c), (a, c, d)]
        if k in against:
            pair = [t[::-1] for t in pair]
        tris += pair
        normal_faces += [(k, k, k)] * 2
        normals.append(n if normal_turn is None else n @ normal_turn)
    i2 = indent + " "
    lines = [f"{indent}Mesh {name} {{", f"{i2}{len(positions)};"]
    lines += _rows([";".join(_f(x) for x in v) + ";" for v in positions], i2)
    lines += [f"{i2}{len(tris)};"] + _rows([f"3;{a},{b},{c};" for a, b, c in tris], i2)
    i3 = i2 + " "
    lines += [f"{i2}MeshNormals {{", f"{i3}{len(normals)};"]
    lines += _rows([";".join(_f(x) for x in n) + ";" for n in normals], i3)
    lines += [f"{i3}{len(normal_faces)};"] + _rows([f"3;{a},{b},{c};" for a, b, c in normal_faces], i3)
    lines += [f"{i2}}}"]
    if materials is not None:
        names, per_face = materials
        lines += [f"{i2}MeshMaterialList {{", f"{i3}{len(names)};", f"{i3}{len(per_face)};"]
        lines += _rows([str(m) for m in per_face], i3)
        lines += [f"{i3}{{{n}}}" for n in names] + [f"{i2}}}"]
    return "\n".join(lines + [f"{indent}}}"])


def frame_matrix(m: np.ndarray, indent: str = " ") -> str:
    rows = [", ".join(_f(x) for x in r) for r in m]
    return (f"{indent}FrameTransformMatrix {{\n{indent} " + f",\n{indent} ".join(rows)
            + f";;\n{indent}}}")


def translation(x: float, y: float, z: float) -> np.ndarray:
    m = np.eye(4)
    m[3, :3] = (x, y, z)
    return m


def material(name: str, rgba, indent: str = "") -> str:
    i2 = indent + " "
    return (f"{indent}Material {name} {{\n{i2}{';'.join(_f(x) for x in rgba)};;\n{i2}{_f(20.0)};\n"
            f"{i2}0.500000;0.500000;0.500000;;\n{i2}0.000000;0.000000;0.000000;;\n{indent}}}")


def alpha_zero_half_one() -> str:
    s = HEADER + ("// Crafted for legacy_skin_io's tests: Material faceColor alpha 0 (drawn opaque by\n"
                  "// Direct3D's fixed-function pipeline), 0.5 (see-through) and 1 (opaque), one box each.\n")
    mats = (("Zero", "AlphaZero", (0.8, 0.3, 0.2, 0.0)), ("Half", "AlphaHalf", (0.2, 0.5, 0.9, 0.5)),
            ("One", "AlphaOne", (0.3, 0.8, 0.3, 1.0)))
    s += "\n".join(material(m, rgba) for _, m, rgba in mats) + "\n"
    for i, (frame, mat, _rgba) in enumerate(mats):
        s += (f"Frame {frame} {{\n{frame_matrix(translation(3.0 * (i - 1), 0, 0))}\n"
              f"{box(frame + 'Box', scale=1.0 - 0.1 * i, materials=([mat], [0]))}\n}}\n")
    return s


def inside_out_mirror_root() -> str:
    s = HEADER + (
        "// Crafted for legacy_skin_io's tests. As Blender's .X exporter writes: a root frame that swaps\n"
        "// Y and Z (a mirror), each face wound against its stored normal in the mesh's own space\n"
        "// (InsideOut); MixedBox: the same but one side (2 triangles) wound the other way, against\n"
        "// its neighbours; RotatedNormals (outside the root): wound outward, normals stored in the\n"
        "// frame's space (turned 150 degrees about z against the mesh's), as some 3DS conversions do.\n")
    swap = np.array([[1, 0, 0, 0], [0, 0, 1, 0], [0, 1, 0, 0], [0, 0, 0, 1.0]])
    s += "Frame Root {\n" + frame_matrix(swap) + "\n"
    s += (" Frame InsideOut {\n" + frame_matrix(translation(-3, 0, 0), "  ") + "\n"
          + box("InsideOut", against=range(6), indent="  ") + "\n }\n")
    s += (" Frame Mixed {\n" + frame_matrix(translation(3, 0, 0), "  ") + "\n"
          + box("MixedBox", scale=0.9, against=(0, 1, 2, 3, 5), indent="  ") + "\n }\n}\n")
    c, sn = np.cos(np.radians(150)), np.sin(np.radians(150))
    turn = np.array([[c, sn, 0, 0], [-sn, c, 0, 0], [0, 0, 1, 0], [0, 0, 6, 1.0]])
    s += "Frame Rotated {\n" + frame_matrix(turn) + "\n" + box("RotatedNormals", scale=0.8, normal_turn=turn[:3, :3])
    return s + "\n}\n"


def materials_in_frames() -> str:
    s = HEADER + (
        "// Crafted for legacy_skin_io's tests: Materials declared inside Frame objects and referenced by\n"
        "// name from the meshes' MeshMaterialList, as Blitz3D's exporter writes them: declared before\n"
        "// their use in the same frame (Red), after their use in a later frame (Blue), at the top level\n"
        "// after the use (Green).\n")
    s += "Frame Scene_Root {\n" + frame_matrix(np.eye(4)) + "\n"
    s += (" Frame Body {\n" + frame_matrix(np.eye(4), "  ") + "\n" + material("Red", (1, 0, 0, 1), "  ") + "\n"
          + box("BodyMesh", materials=(["Red", "Blue"], [0] * 6 + [1] * 6), indent="  ") + "\n }\n")
    s += (" Frame Head {\n" + frame_matrix(translation(0, 3, 0), "  ") + "\n"
          + material("Blue", (0, 0, 1, 1), "  ") + "\n"
          + box("HeadMesh", scale=0.9, materials=(["Blue"], [0]), indent="  ") + "\n }\n")
    s += (" Frame Leg {\n" + frame_matrix(translation(0, -3, 0), "  ") + "\n"
          + box("LegMesh", scale=0.8, materials=(["Green"], [0]), indent="  ") + "\n }\n}\n")
    return s + material("Green", (0, 1, 0, 1)) + "\n"


def extra_brace() -> str:
    return (HEADER + "// Crafted for legacy_skin_io's tests: one closing brace too many at the top level (the\n"
            "// last line), which assimp and Irrlicht read past.\nFrame Box {\n" + frame_matrix(np.eye(4))
            + "\n" + box("BoxMesh") + "\n}\n}\n")


def uv_box(name: str, *, scale: float = 1.0, second: str = "decl", materials: list[str] = (),
           indent: str = " ") -> str:
    """A Mesh of 24 vertices (each side its own 4) with normals per vertex,
    UV set 0 the whole square on each side and set 1 the sides in a 3 x 2
    atlas, written as ``second``: "decl", "coords" (a second
    MeshTextureCoords), "fvf" or "none"; ``materials`` referenced by name
    (the first on every face)."""
    positions, normals, uv0, uv1, tris = [], [], [], [], []
    square = [(0.0, 1.0), (1.0, 1.0), (1.0, 0.0), (0.0, 0.0)]       # v down, as .X stores it
    for k, (quad, n) in enumerate(_sides()):
        base = len(positions)
        for c, (u, v) in zip(quad, square):
            positions.append(CORNERS[c] * scale)
            normals.append(n)
            uv0.append((u, v))
            uv1.append(((k % 3 + 0.05 + 0.9 * u) / 3.0, (k // 3 + 0.05 + 0.9 * v) / 2.0))
        tris += [(base, base + 1, base + 2), (base, base + 2, base + 3)]
    i2, i3 = indent + " ", indent + "  "
    lines = [f"{indent}Mesh {name} {{", f"{i2}{len(positions)};"]
    lines += _rows([";".join(_f(x) for x in v) + ";" for v in positions], i2)
    lines += [f"{i2}{len(tris)};"] + _rows([f"3;{a},{b},{c};" for a, b, c in tris], i2)
    lines += [f"{i2}MeshNormals {{", f"{i3}{len(normals)};"]
    lines += _rows([";".join(_f(x) for x in n) + ";" for n in normals], i3)
    lines += [f"{i3}{len(tris)};"] + _rows([f"3;{a},{b},{c};" for a, b, c in tris], i3) + [f"{i2}}}"]

    def coords(uv):
        return ([f"{i2}MeshTextureCoords {{", f"{i3}{len(uv)};"]
                + _rows([f"{_f(u)};{_f(v)};" for u, v in uv], i3) + [f"{i2}}}"])

    lines += coords(uv0)
    if second == "coords":
        lines += coords(uv1)
    elif second in ("decl", "fvf"):
        tangents = [np.roll(n, 1) for n in normals]        # any unit vector across the normal will do
        if second == "decl":   # (type, method, usage, index): FLOAT3 TANGENT0, FLOAT2 TEXCOORD1
            head = [f"{i2}DeclData {{", f"{i3}2;", f"{i3}2;0;6;0;,", f"{i3}1;0;5;1;;"]
            rows = [np.concatenate([t, uv]) for t, uv in zip(tangents, uv1)]
        else:                  # D3DFVF_XYZ | D3DFVF_TEX1: the set MeshTextureCoords does not hold, no positions
            head = [f"{i2}FVFData {{", f"{i3}{0x102};"]
            rows = [np.array(b) for b in uv1]
        words = np.ascontiguousarray(np.array(rows, dtype="<f4")).view("<u4").reshape(-1)
        lines += head + [f"{i3}{len(words)};"] + _rows([str(int(w)) for w in words], i3) + [f"{i2}}}"]
    if materials:
        lines += [f"{i2}MeshMaterialList {{", f"{i3}{len(materials)};", f"{i3}{len(tris)};"]
        lines += _rows(["0"] * len(tris), i3) + [f"{i3}{{{m}}}" for m in materials] + [f"{i2}}}"]
    return "\n".join(lines + [f"{indent}}}"])


def uv_sets() -> str:
    s = HEADER + ("// Crafted for legacy_skin_io's tests: three boxes with two UV sets each, the second\n"
                  "// written as DeclData TEXCOORD1 (after a TANGENT0), as a second MeshTextureCoords, and\n"
                  "// in FVFData (XYZ | TEX1: the data holds the second set, no position).\n")
    for i, (frame, second) in enumerate((("Decl", "decl"), ("Coords", "coords"), ("Fvf", "fvf"))):
        s += (f"Frame {frame} {{\n{frame_matrix(translation(3.0 * (i - 1), 0, 0))}\n"
              f"{uv_box(frame + 'Box', scale=1.0 - 0.1 * i, second=second)}\n}}\n")
    return s


def effect_material(name: str, textures: list[str], effect: str | None, params: list[tuple]) -> str:
    """A Material (white, power 20) with TextureFilename objects and an
    EffectInstance of (kind, name, value) parameters."""
    lines = [f"Material {name} {{", " 1.000000;1.000000;1.000000;1.000000;;", f" {_f(20.0)};",
             " 0.500000;0.500000;0.500000;;", " 0.000000;0.000000;0.000000;;"]
    for t in textures:
        lines += [" TextureFilename {", f'  "{t}";', " }"]
    if effect is not None:
        lines += [" EffectInstance {", f'  "{effect}";']
        for kind, pname, value in params:
            if kind == "string":
                lines += ["  EffectParamString {", f'   "{pname}";', f'   "{value}";', "  }"]
            elif kind == "dword":
                lines += ["  EffectParamDWord {", f'   "{pname}";', f"   {value};", "  }"]
            else:
                lines += ["  EffectParamFloats {", f'   "{pname}";', f"   {len(value)};",
                          "   " + ",".join(_f(x) for x in value) + ";", "  }"]
        lines += [" }"]
    return "\n".join(lines + ["}"])


EFFECT_MATERIALS = (
    ("Bricks", ["bricks_diffuse.png"], "NormalMap.fx",
     [("string", "g_DiffuseTexture", "bricks_diffuse.png"), ("string", "g_NormalTexture", "bricks_normal.png"),
      ("string", "SpecularMap", "bricks_specular.png"), ("dword", "technique", 1),
      ("floats", "Diffuse", [1.0, 1.0, 1.0, 1.0])]),
    ("Wall", [], "textbump.fx", [("string", "Texture0@Name", "wall.png"), ("string", "BumpMap", "wall_height.png"),
                                 ("floats", "Power", [32.0])]),
    ("Decal", ["first.png", "second.png"], None, []),
    ("Crate", ["crate_D.png"], None, []),
)


def effect_maps() -> str:
    s = HEADER + ("// Crafted for legacy_skin_io's tests: texture maps. Bricks: an EffectInstance with a\n"
                  "// normal map, a specular map that is not there, a DWORD and a FLOAT parameter; Wall: a\n"
                  "// DXSAS Texture0@Name base colour and a BumpMap that is not there; Decal: two\n"
                  "// TextureFilename objects; Crate: GameGuru's crate_D.png with crate_N/S/I.png beside it.\n")
    s += "\n".join(effect_material(*m) for m in EFFECT_MATERIALS) + "\n"
    for i, (mat, *_rest) in enumerate(EFFECT_MATERIALS):
        s += (f"Frame {mat}Frame {{\n{frame_matrix(translation(3.0 * i - 4.5, 0, 0))}\n"
              f"{uv_box(mat + 'Box', second='none', materials=[mat])}\n}}\n")
    return s


def png(pixels: np.ndarray) -> bytes:
    """An 8-bit RGB PNG of (h, w, 3) values in [0, 1]."""
    h, w, _ = pixels.shape
    raw = np.round(np.clip(pixels, 0, 1) * 255).astype(np.uint8)
    body = b"".join(b"\0" + raw[y].tobytes() for y in range(h))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(body, 9)) + chunk(b"IEND", b""))


def images() -> dict[str, bytes]:
    """The textures of effect_maps.x: 32 x 32, a checker for colours, ridges for normals."""
    y, x = np.mgrid[0:32, 0:32] / 32.0
    checker = ((np.floor(x * 4) + np.floor(y * 4)) % 2)[..., None]

    def colour(a, b):
        return checker * np.array(a) + (1 - checker) * np.array(b)

    slope = np.cos(2 * np.pi * 4 * x) * 0.8           # ridges along v: the normal tilts in u
    n = np.stack([slope, np.zeros_like(x), np.ones_like(x)], -1)
    normal = (n / np.linalg.norm(n, axis=-1, keepdims=True) + 1) / 2
    grey = np.repeat(checker, 3, -1) * 0.8 + 0.1
    return {"bricks_diffuse.png": png(colour((0.7, 0.3, 0.2), (0.8, 0.7, 0.6))), "bricks_normal.png": png(normal),
            "wall.png": png(colour((0.5, 0.5, 0.5), (0.7, 0.7, 0.7))), "first.png": png(colour((1, 0, 0), (1, 1, 1))),
            "second.png": png(colour((0, 0, 1), (1, 1, 1))),
            "crate_D.png": png(colour((0.6, 0.4, 0.1), (0.4, 0.3, 0.1))), "crate_N.png": png(normal),
            "crate_S.png": png(grey), "crate_I.png": png(colour((1, 1, 0), (0, 0, 0)))}




def _dword(x: float) -> int:
    return int(np.array([x], dtype="<f4").view("<u4")[0])


#: the float NaN MSVC's x87 code produces ("-1.#IND"), as a DWORD
INDEFINITE = 0xFFC00000


def decldata_nan_uvs() -> str:
    """Six boxes in one mesh, per-vertex normals and UVs in a DeclData
    (FLOAT3 NORMAL, FLOAT2 TEXCOORD0); boxes 2 and 5 hold NaN UVs."""
    s = HEADER + ("// Crafted for legacy_skin_io's tests: a static building, one mesh of six boxes whose DeclData\n"
                  "// holds NaN (0xFFC00000) for the UVs of 16 vertices (two boxes), as an Allegiance structure\n"
                  "// exported in 1999-2000 does. assimp, Irrlicht and Direct3D load it.\n")
    positions, faces, dwords = [], [], []
    for b in range(6):
        offset = np.array([3.0 * (b % 3), 0.0, 3.0 * (b // 3)])
        size = np.array([1.0, 1.0 + 0.25 * b, 1.0])
        base = len(positions)
        for c in CORNERS:
            positions.append(c * size + offset)
            n = c / np.linalg.norm(c)
            uv = [0.5 + 0.5 * c[0], 0.5 - 0.5 * c[1]]
            uv_words = [INDEFINITE, INDEFINITE] if b in (2, 5) else [_dword(x) for x in uv]
            dwords += [_dword(x) for x in n] + uv_words
        for quad, _n in _sides():
            a, b1, c1, d = (base + q for q in quad)
            faces += [(a, b1, c1), (a, c1, d)]
    lines = ["Frame Building {", frame_matrix(np.eye(4)), " Mesh Building {", f"  {len(positions)};"]
    lines += _rows([";".join(_f(x) for x in v) + ";" for v in positions], "  ")
    lines += [f"  {len(faces)};"] + _rows([f"3;{a},{b},{c};" for a, b, c in faces], "  ")
    lines += ["  MeshMaterialList {", "   1;", f"   {len(faces)};"] + _rows(["0"] * len(faces), "   ")
    lines += [material("Concrete", (0.6, 0.6, 0.55, 1.0), "   "), "  }"]
    lines += ["  DeclData {", "   2;", "   2;0;3;0;,", "   1;0;5;0;;", f"   {len(dwords)};"]
    lines += _rows([str(d) for d in dwords], "   ")
    return s + "\n".join(lines + ["  }", " }", "}"]) + "\n"


def _quat_key(t: int, q) -> str:
    return f"{t};4;{','.join(_f(x) for x in q)};;"


def key_time_minus_one() -> str:
    s = HEADER + ("// Crafted for legacy_skin_io's tests: an arm swinging about its shoulder, and an Animation of\n"
                  "// the root that moves nothing, its only key at time -1 (a DWORD 0xFFFFFFFF printed signed, as\n"
                  "// DirectX SDK-era exporters wrote it; assimp reads 4294967295).\nAnimTicksPerSecond {\n 4800;\n}\n")
    s += ("Frame Root {\n" + frame_matrix(np.eye(4)) + "\n Frame Arm {\n" + frame_matrix(translation(0, 1, 0), "  ")
          + "\n" + box("ArmBox", scale=0.5, indent="  ") + "\n }\n}\n")
    swing = [(0, (1, 0, 0, 0)), (2400, (np.cos(0.4), 0, 0, np.sin(0.4))), (4800, (1, 0, 0, 0))]
    keys = ",\n".join("    " + _quat_key(t, q) for t, q in swing) + ";\n"
    s += ("AnimationSet Swing {\n Animation {\n  { Arm }\n  AnimationKey {\n   0;\n   3;\n" + keys + "  }\n }\n"
          " Animation {\n  { Root }\n  AnimationKey {\n   0;\n   1;\n    " + _quat_key(-1, (1, 0, 0, 0)) + ";\n"
          "  }\n }\n}\n")
    return s


def normals_without_brace() -> str:
    s = HEADER + ("// Crafted for legacy_skin_io's tests: a disc whose MeshNormals lacks its closing brace, all its\n"
                  "// data present; its MeshTextureCoords and MeshMaterialList follow.\n")
    n = 16
    angles = 2 * np.pi * np.arange(n) / n
    rim = np.stack([np.cos(angles), np.zeros(n), np.sin(angles)], axis=1)
    positions = np.concatenate([[[0.0, 0.0, 0.0]], rim])
    tris = [(0, 1 + (k + 1) % n, 1 + k) for k in range(n)]      # cross(p1 - p0, p2 - p0) points +y
    uvs = 0.5 + 0.5 * positions[:, [0, 2]]
    lines = ["Frame Disc {", frame_matrix(translation(0, 0.5, 0)), " Mesh Disc {", f"  {len(positions)};"]
    lines += _rows([";".join(_f(x) for x in v) + ";" for v in positions], "  ")
    lines += [f"  {len(tris)};"] + _rows([f"3;{a},{b},{c};" for a, b, c in tris], "  ")
    lines += ["  MeshNormals {", "   1;", "   0.000000;1.000000;0.000000;;", f"   {len(tris)};"]
    lines += _rows(["3;0,0,0;"] * len(tris), "   ")
    lines += ["  MeshTextureCoords {", f"   {len(uvs)};"] + _rows([f"{_f(u)};{_f(v)};" for u, v in uvs], "   ")
    lines += ["  }", "  MeshMaterialList {", "   1;", "   1;", "   0;;", material("Stone", (0.5, 0.5, 0.5, 1), "   "),
              "  }", " }", "}"]
    return s + "\n".join(lines) + "\n"


def animation_on_missing_frame() -> str:
    s = HEADER + ("// Crafted for legacy_skin_io's tests: a mesh at the top level (no frames) and an AnimationSet\n"
                  "// whose only Animation names the frame 'Crate', which the file does not have.\n")
    s += box("Crate", indent="") + "\n"
    spin = [(0, (1, 0, 0, 0)), (4800, (np.cos(0.5), 0, np.sin(0.5), 0))]
    keys = ",\n".join("    " + _quat_key(t, q) for t, q in spin) + ";\n"
    return s + ("AnimationSet Spin {\n Animation {\n  { Crate }\n  AnimationKey {\n   0;\n   2;\n" + keys
                + "  }\n }\n}\n")


FILES = {"alpha_zero_half_one.x": alpha_zero_half_one, "inside_out_mirror_root.x": inside_out_mirror_root,
         "materials_in_frames.x": materials_in_frames, "extra_brace.x": extra_brace, "uv_sets.x": uv_sets,
         "effect_maps.x": effect_maps, "decldata_nan_uvs.x": decldata_nan_uvs,
         "key_time_minus_one.x": key_time_minus_one,
         "normals_without_brace.x": normals_without_brace, "animation_on_missing_frame.x": animation_on_missing_frame}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "tests" / "data" / "x" / "crafted"))
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for name, make in FILES.items():
        (out / name).write_text(make(), newline="\n")
    for name, data in images().items():
        (out / name).write_bytes(data)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
