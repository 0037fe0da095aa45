# SPDX-License-Identifier: GPL-3.0-or-later
"""Token stream -> XFile model (the same code for text and binary data).

Hostile input: every count is checked against what the rest of the file could
hold before it sizes anything, every number that feeds geometry, transforms or
animation must be a finite 32-bit float, and the limits below bound what a
small file can make the reader build (all raise FormatError with a position):

- ``MAX_DEPTH``: objects nested in the syntax (the parser recurses on them).
- ``MAX_FRAME_DEPTH``: depth of the frame tree, nesting and ``{ Frame }``
  references together.
- ``MAX_FRAMES``: Frame objects in the file. A frame has one parent: a frame
  that is already a child (nested, or referenced before) cannot be referenced
  again (no shared subtrees, so the tree never expands).
- ``MAX_OBJECTS``: data objects built from the file (frames, meshes,
  materials, skin weights, animation sets, animations, keys, references).
- ``MAX_MATERIALS``: entries of one MeshMaterialList (Blender's limit of
  material slots per mesh).
- ``MAX_INSTANCED``: vertices + face corners added by placing a mesh more
  than once (``{ Mesh }`` references are instances, not copies, in the model;
  importers copy them).
- ``MAX_NAME_LENGTH``: characters of a name or string (longer ones are an
  error, not truncated: a truncated name could resolve a reference to the
  wrong object).
- ``MAX_KEY_TIME``: animation key times must lie in [0, MAX_KEY_TIME) ticks.
- ``MAX_WARNINGS``: warnings kept (the rest are counted in a last warning).
"""
from __future__ import annotations

import math
from collections import Counter

import numpy as np

from .key_tables import FLOAT32_MAX, KEY_SIZES, MAX_KEY_TIME, KeyTables
from .model import XAnimation, XAnimationKey, XAnimationSet, XFile, XFrame, XMaterial, XMesh, XSkinWeights
from .tokens import CLOSE, EOF, GUID, NAME, NUM, OPEN, TokenStream
from .vertex_streams import decode_decl, decode_fvf, dwords_to_bytes

MAX_DEPTH = 256             # syntactic nesting (recursion depth of the parser)
MAX_FRAME_DEPTH = 10_000    # levels of the frame tree (real rigs: < 100)
MAX_FRAMES = 100_000        # Frame objects (real files: < 1,000)
MAX_OBJECTS = 200_000       # data objects, ~1 KB each at most (real files: < 1,000)
MAX_MATERIALS = 32_767      # entries of one MeshMaterialList
MAX_INSTANCED = 1 << 24     # vertices + corners of repeated { Mesh } placements
MAX_NAME_LENGTH = 1024      # characters of a name or string (Windows paths: < 260)
MAX_WARNINGS = 1000
# Known objects whose content we do not need: skipped without a warning.
IGNORED = {"Header", "VertexDuplicationIndices", "MeshFaceWraps", "ObjectMatrixComment"}


class _Ref:
    """A ``{ Name }`` reference waiting to be resolved after the whole file is read."""

    __slots__ = ("name", "mark")

    def __init__(self, name, mark):
        self.name = name
        self.mark = mark


def _label(kind: str, name: str | None) -> str:
    return f"{kind} {name!r}" if name else kind


class _Item:
    """``what: <detail with index>`` for error messages, built only when a message
    needs it: per-face / per-key loops set ``index`` instead of copying the
    owner's label (up to MAX_NAME_LENGTH characters) for every item."""

    __slots__ = ("what", "detail", "index")

    def __init__(self, what: str, detail: str, index: int = 0):
        self.what = what
        self.detail = detail  # with "{}" where the index goes
        self.index = index

    def __str__(self) -> str:
        return f"{self.what}: {self.detail.format(self.index)}"

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)


def _keys_ok(table: np.ndarray, expected: int) -> bool:
    """Every key (row) has ``expected`` values, a time in [0, MAX_KEY_TIME) and
    finite 32-bit float values: tested on the extremes of each column."""
    if len(table) == 1:
        low = high = table[0].tolist()
    else:
        low, high = table.min(axis=0).tolist(), table.max(axis=0).tolist()
    values = low[2:] + high[2:]
    total = sum(values)  # NaN if one is (numpy's min / max keep it, Python's may not)
    return (low[1] == high[1] == expected and low[0] >= 0 and high[0] < MAX_KEY_TIME
            and total == total and min(values) >= -FLOAT32_MAX and max(values) <= FLOAT32_MAX)


class Parser:
    def __init__(self, tokens: TokenStream, xfile: XFile, is_text: bool):
        self.t = tokens
        self.xf = xfile
        self.is_text = is_text
        self.unknown: Counter[str] = Counter()
        self.frames_by_name: dict[str, XFrame] = {}
        self.meshes_by_name: dict[str, XMesh] = {}
        self.materials_by_name: dict[str, XMaterial] = {}
        self.material_refs: list[tuple[XMesh, int, _Ref]] = []
        self.frame_marks: dict[int, object] = {}
        # Every Frame object in file order, each frame's (parent, marker of the
        # link, via a reference?), and the { references } inside frames in file order.
        self.frames: list[XFrame] = []
        self.parents: dict[int, tuple[XFrame, object, bool]] = {}
        self.frame_refs: list[tuple[XFrame, _Ref]] = []
        self.depth = 0
        self.in_animation = 0  # > 0 while parsing a Frame object inside an Animation
        self.objects = 0
        self.suppressed = 0
        self.key_tables = KeyTables()
        self.strays: Counter[str] = Counter()

    # ------------------------------------------------------------------
    # generic structure
    def parse(self) -> XFile:
        top_frames: list[XFrame] = []
        try:
            self.objects_at_top(top_frames)
        except Exception:
            self.check_keys()  # an earlier key's error comes first
            raise
        self.check_keys()
        self.resolve(top_frames)
        for ident, count in sorted(self.unknown.items()):
            self.warn(f"skipped {count} unknown '{ident}' object(s)")
        for what, count in sorted(self.strays.items()):
            self.warn(f"{what}: ignored {count} unexpected value token(s)")
        if self.suppressed:
            self.xf.warnings.append(f"... and {self.suppressed} more warning(s)")
        return self.xf

    def objects_at_top(self, top_frames: list[XFrame]) -> None:
        t = self.t
        while True:
            k = t.kind()
            if k == EOF:
                break
            if k == NAME:
                mark = t.here()
                ident = self.word()
                if ident == "template":
                    self.skip_template()
                elif ident == "Frame":
                    top_frames.append(self.frame())
                elif ident == "Mesh":
                    self.xf.meshes.append(self.mesh())
                elif ident == "Material":
                    self.material()
                elif ident == "AnimTicksPerSecond":
                    self.ticks(mark)
                elif ident == "AnimationSet":
                    self.xf.animation_sets.append(self.animation_set())
                else:
                    self.unknown_object(ident)
            elif k == OPEN:
                ref = self.reference()
                self.warn(f"top-level reference {{ {ref.name} }} ignored")
            else:
                raise t.error(f"unexpected {t.describe()} at top level")

    def warn(self, message: str) -> None:
        if len(self.xf.warnings) < MAX_WARNINGS:
            self.xf.warnings.append(message)
        else:
            self.suppressed += 1

    def count(self, what: str, mark, n: int = 1) -> None:
        """Account for ``n`` more objects built from the file (MAX_OBJECTS)."""
        self.objects += n
        if self.objects > MAX_OBJECTS:
            raise self.t.error(f"{what}: the file holds more than {MAX_OBJECTS} objects", mark)

    def word(self) -> str:
        """The current NAME (or NUM, in text) as a name, at most MAX_NAME_LENGTH long."""
        mark = self.t.here()
        word = self.t.word()
        if len(word) > MAX_NAME_LENGTH:
            self.long_name(word, mark)
        return word

    def long_name(self, word: str, mark):
        raise self.t.error(f"name of {len(word)} characters (the limit is "
                           f"{MAX_NAME_LENGTH}): {word[:40]!r}...", mark)

    def string(self, what: str) -> str:
        mark = self.t.here()
        value = self.t.string(what)
        if len(value) > MAX_NAME_LENGTH:
            raise self.t.error(f"{what}: string of {len(value)} characters (the limit is "
                               f"{MAX_NAME_LENGTH}): {value[:40]!r}...", mark)
        return value

    def begin(self, ident: str) -> str | None:
        """After the identifier: optional name, '{', optional GUID. Returns the name."""
        t = self.t
        name = None
        k = t.kind()
        if k == NAME or (k == NUM and self.is_text):
            name = self.word() or None
        if t.kind() != OPEN:  # (t.expect, without building the label every time)
            raise t.error(f"{_label(ident, name)}: expected {OPEN!r}, found {t.describe()}")
        t.advance()
        if t.kind() == GUID:
            t.advance()
        return name

    def children(self, what: str):
        """Yield (identifier, marker) for each child object, or (None, _Ref) for a
        reference, until the closing brace (consumed)."""
        t = self.t
        while True:
            k = t.kind()
            if k == CLOSE:
                t.advance()
                return
            if k == NAME:
                mark = t.here()
                ident = t.word()
                if len(ident) > MAX_NAME_LENGTH:
                    self.long_name(ident, mark)
                if ident == "template":
                    self.skip_template()
                    continue
                yield ident, mark
            elif k == OPEN:
                yield None, self.reference()
            elif k == EOF:
                raise t.error(f"{what}: unexpected end of file (missing '}}')")
            else:
                self.strays[what] += 1
                t.advance()

    def end(self, what: str) -> None:
        """Skip whatever children remain in the current object."""
        if self.t.kind() == CLOSE:  # (the usual case, without the generator)
            self.t.advance()
            return
        for ident, _ref in self.children(what):
            if ident is not None:
                self.unknown_object(ident)

    def reference(self) -> _Ref:
        t = self.t
        mark = t.here()
        t.advance()  # '{'
        name = None
        k = t.kind()
        if k == NAME or (k == NUM and self.is_text):
            name = self.word()
        if t.kind() == GUID:
            t.advance()
        if t.kind() != CLOSE:
            raise t.error(f"reference: expected '}}', found {t.describe()}")
        t.advance()
        return _Ref(name, mark)

    def unknown_object(self, ident: str) -> None:
        t = self.t
        k = t.kind()
        if k == NAME or (k == NUM and self.is_text):
            t.advance()
        t.expect(OPEN, f"object {ident!r}")
        t.skip_block()
        if ident not in IGNORED:
            self.unknown[ident] += 1

    def skip_template(self) -> None:
        t = self.t
        if t.kind() == NAME:
            t.advance()
        t.expect(OPEN, "template")
        t.skip_block()

    def enter(self, what: str, mark) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise self.t.error(f"{what}: objects nested deeper than {MAX_DEPTH} levels", mark)

    def check_floats(self, values: np.ndarray, start, what: str, item: str | None = None,
                     width: int = 1) -> None:
        """Raise at the first of ``values`` (read from marker ``start``, in file
        order) that is NaN, infinite or beyond the 32-bit float range: Blender
        stores float32, such a value would become inf / NaN there."""
        flat = values.reshape(-1)
        ok = np.abs(flat) <= FLOAT32_MAX  # False for NaN too
        if ok.all():
            return
        k = int(np.flatnonzero(~ok)[0])
        v = float(flat[k])
        problem = "is beyond the 32-bit float range" if math.isfinite(v) else "is not finite"
        if item is None:
            message = f"{what}: value {k} {problem} ({v!r})"
        else:
            i = k // width
            row = [float(x) for x in flat[i * width:(i + 1) * width]]
            message = f"{what}: {item} {i} {problem} ({row[0] if width == 1 else row})"
        raise self.t.error(message, self.t.mark_plus(start, k))

    def read_matrix(self, what: str) -> np.ndarray:
        start = self.t.here()
        values = self.t.read_floats(16, what)
        self.check_floats(values, start, what)
        return values.reshape(4, 4)

    # ------------------------------------------------------------------
    # frames
    def frame(self) -> XFrame:
        mark = self.t.here()
        name = self.begin("Frame")
        what = _label("Frame", name)
        self.enter(what, mark)
        if len(self.frames) >= MAX_FRAMES:
            raise self.t.error(f"{what}: more than {MAX_FRAMES} frames", mark)
        self.count(what, mark)
        frame = XFrame(name)
        self.frames.append(frame)
        self.frame_marks[id(frame)] = mark
        if name is not None:
            self.frames_by_name.setdefault(name, frame)
        for ident, mark in self.children(what):
            if ident is None:
                if not self.in_animation:  # (frames inside an Animation only name one)
                    self.count(what, mark.mark)
                    frame.children.append(mark)  # a _Ref, resolved later
                    self.frame_refs.append((frame, mark))
            elif ident == "FrameTransformMatrix":
                self.begin(ident)
                frame.matrix = self.read_matrix(f"{what}: FrameTransformMatrix")
                self.end(ident)
            elif ident == "Frame":
                child = self.frame()
                frame.children.append(child)
                self.parents[id(child)] = (frame, self.frame_marks[id(child)], False)
            elif ident == "Mesh":
                frame.meshes.append(self.mesh())
            else:
                self.unknown_object(ident)
        self.depth -= 1
        return frame

    def ticks(self, mark) -> None:
        self.begin("AnimTicksPerSecond")
        vmark = self.t.here()
        value = self.t.read_int("AnimTicksPerSecond")
        if not 0 <= value <= 0xFFFFFFFF:
            raise self.t.error(f"AnimTicksPerSecond {value} is not a DWORD", vmark)
        self.end("AnimTicksPerSecond")
        if self.xf.anim_ticks_per_second is None:
            self.xf.anim_ticks_per_second = value
        elif value != self.xf.anim_ticks_per_second:
            self.warn(f"AnimTicksPerSecond given again as {value}; "
                      f"keeping {self.xf.anim_ticks_per_second}")

    # ------------------------------------------------------------------
    # meshes
    def faces(self, count: int, what: str):
        """``count`` faces ``n; i0, ..., in-1`` -> (sizes, flat indices, marker)."""
        t = self.t
        start = t.here()
        if count == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.int64), start
        first = t.read_int(_Item(what, "face 0"))
        t.reset(start)
        # Fast path: every face has the first face's size (all-triangle meshes).
        # (Probed without raising: building an error costs a scan of a text file.)
        if first > 0 and count * (first + 1) <= t.numbers_left():
            flat = t.try_read_ints(count * (first + 1))
            if flat is not None:
                table = flat.reshape(count, first + 1)
                if np.all(table[:, 0] == first):
                    return (np.full(count, first, dtype=np.int64),
                            np.ascontiguousarray(table[:, 1:]).reshape(-1), start)
            t.reset(start)
        sizes = np.empty(count, dtype=np.int64)
        parts = []
        label = _Item(what, "face {}")
        for f in range(count):
            mark = t.here()
            label.index = f
            n = t.read_int(label)
            if n < 0 or n > t.numbers_left():
                raise t.error(f"{what}: face {f} claims {n} indices", mark)
            sizes[f] = n
            parts.append(t.read_ints(n, label))
        return sizes, np.concatenate(parts) if parts else np.zeros(0, np.int64), start

    def check_indices(self, indices, limit, sizes, start, what, target):
        """Raise at the first index outside [0, limit) of a face list."""
        if indices.size == 0:
            return
        bad = np.flatnonzero((indices < 0) | (indices >= limit))
        if bad.size == 0:
            return
        k = int(bad[0])
        ends = np.cumsum(sizes)
        face = int(np.searchsorted(ends, k, side="right"))
        mark = self.t.mark_plus(start, k + face + 1)  # + one size value per face so far
        raise self.t.error(f"{what}: face {face} uses {target} {int(indices[k])}, "
                           f"but there are only {limit}", mark)

    def mesh(self) -> XMesh:
        t = self.t
        mark = t.here()
        name = self.begin("Mesh")
        what = _label("Mesh", name)
        self.enter(what, mark)
        self.count(what, mark)
        nv = t.read_count(f"{what}: vertex count", 3)
        vmark = t.here()
        positions = t.read_floats(3 * nv, f"{what}: vertices").reshape(nv, 3)
        self.check_floats(positions, vmark, what, "vertex", 3)
        nf = t.read_count(f"{what}: face count", 1)
        sizes, indices, fmark = self.faces(nf, f"{what}: faces")
        self.check_indices(indices, nv, sizes, fmark, f"{what}: faces", "vertex")
        mesh = XMesh(name, positions, sizes, indices)
        if name is not None:
            self.meshes_by_name.setdefault(name, mesh)
        streams: dict[str, np.ndarray] = {}
        origins: dict[str, tuple] = {}
        for ident, mark in self.children(what):
            if ident is None:
                self.warn(f"{what}: reference {{ {mark.name} }} ignored")
            elif ident == "MeshNormals":
                self.mesh_normals(mesh, what)
            elif ident == "MeshTextureCoords":
                self.mesh_uvs(mesh, what)
            elif ident == "MeshVertexColors":
                self.mesh_colors(mesh, what)
            elif ident == "MeshMaterialList":
                self.material_list(mesh, what)
            elif ident == "XSkinMeshHeader":
                self.begin(ident)
                header = t.read_ints(3, f"{what}: XSkinMeshHeader")
                mesh.skin_header = tuple(int(x) for x in header)
                self.end(ident)
            elif ident == "SkinWeights":
                self.count(what, mark)
                mesh.skin_weights.append(self.skin_weights(mesh, what))
            elif ident == "DeclData":
                streams.update(self.decl_data(mesh, what, origins))
            elif ident == "FVFData":
                streams.update(self.fvf_data(mesh, what, origins))
            else:
                self.unknown_object(ident)
        if mesh.normals is None and "NORMAL0" in streams and streams["NORMAL0"].shape[1] >= 3:
            normals = np.ascontiguousarray(streams.pop("NORMAL0")[:, :3])
            self.check_stream(normals, origins["NORMAL0"], what, "NORMAL0")
            mesh.normals = normals
            mesh.normal_face_sizes = mesh.face_sizes.copy()
            mesh.normal_face_indices = mesh.face_indices.copy()
        if mesh.uvs is None and "TEXCOORD0" in streams and streams["TEXCOORD0"].shape[1] >= 2:
            uvs = np.ascontiguousarray(streams.pop("TEXCOORD0")[:, :2])
            self.check_stream(uvs, origins["TEXCOORD0"], what, "TEXCOORD0")
            mesh.uvs = uvs
        mesh.extra_streams = streams
        self.depth -= 1
        return mesh

    def check_stream(self, values: np.ndarray, origin, what: str, key: str) -> None:
        """A DeclData / FVFData stream that becomes normals or UVs must be finite."""
        ok = np.abs(values) <= FLOAT32_MAX
        if ok.all():
            return
        v, c = (int(x) for x in np.argwhere(~ok)[0])
        kind, mark, offset, stride, component = origin
        dword = (v * stride + offset + c * component) // 4
        raise self.t.error(f"{what}: {kind} {key} of vertex {v} is not a finite 32-bit "
                           f"value ({values[v].tolist()})", self.t.mark_plus(mark, dword))

    def mesh_normals(self, mesh: XMesh, owner: str) -> None:
        t = self.t
        what = f"{owner}: MeshNormals"
        self.begin("MeshNormals")
        nn = t.read_count(f"{what}: normal count", 3)
        nmark = t.here()
        normals = t.read_floats(3 * nn, f"{what}: normals").reshape(nn, 3)
        self.check_floats(normals, nmark, what, "normal", 3)
        cmark = t.here()
        nf = t.read_count(f"{what}: face count", 1)
        if nf != len(mesh.face_sizes):
            raise t.error(f"{what}: {nf} normal faces for {len(mesh.face_sizes)} mesh faces", cmark)
        sizes, indices, fmark = self.faces(nf, f"{what}: faces")
        if not np.array_equal(sizes, mesh.face_sizes):
            f = int(np.flatnonzero(sizes != mesh.face_sizes)[0])
            raise t.error(f"{what}: face {f} has {int(sizes[f])} normal indices for "
                          f"{int(mesh.face_sizes[f])} vertices", fmark)
        self.check_indices(indices, nn, sizes, fmark, f"{what}: faces", "normal")
        mesh.normals, mesh.normal_face_sizes, mesh.normal_face_indices = normals, sizes, indices
        self.end(what)

    def mesh_uvs(self, mesh: XMesh, owner: str) -> None:
        t = self.t
        what = f"{owner}: MeshTextureCoords"
        self.begin("MeshTextureCoords")
        mark = t.here()
        n = t.read_count(f"{what}: count", 2)
        if n != len(mesh.positions):
            raise t.error(f"{what}: {n} texture coordinates for {len(mesh.positions)} vertices", mark)
        umark = t.here()
        uvs = t.read_floats(2 * n, what).reshape(n, 2)
        self.check_floats(uvs, umark, what, "texture coordinate", 2)
        mesh.uvs = uvs
        self.end(what)

    def mesh_colors(self, mesh: XMesh, owner: str) -> None:
        t = self.t
        what = f"{owner}: MeshVertexColors"
        self.begin("MeshVertexColors")
        n = t.read_count(f"{what}: count", 5)
        start = t.here()
        table = t.read_floats(5 * n, what).reshape(n, 5)
        index = table[:, 0]
        nv = len(mesh.positions)
        bad = np.flatnonzero((index < 0) | (index >= nv) | (index != np.floor(index)))
        if bad.size:
            k = int(bad[0])
            raise t.error(f"{what}: entry {k} names vertex {index[k]:g}, but there are only "
                          f"{nv} vertices", t.mark_plus(start, 5 * k))
        self.check_floats(table, start, what, "entry", 5)
        colors = mesh.vertex_colors if mesh.vertex_colors is not None else np.ones((nv, 4))
        colors[index.astype(np.int64)] = table[:, 1:]
        mesh.vertex_colors = colors
        self.end(what)

    def material_list(self, mesh: XMesh, owner: str) -> None:
        t = self.t
        what = f"{owner}: MeshMaterialList"
        self.begin("MeshMaterialList")
        nmark = t.here()
        n_materials = t.read_count(f"{what}: material count", 0)
        # Each material of the list is an object or a { reference }: 3 tokens at least.
        if n_materials > MAX_MATERIALS or 3 * n_materials > t.tokens_left():
            limit = (f"more than {MAX_MATERIALS} materials" if n_materials > MAX_MATERIALS else
                     f"only {t.tokens_left()} tokens are left")
            raise t.error(f"{what}: material count {n_materials}: {limit}", nmark)
        cmark = t.here()
        n_indices = t.read_count(f"{what}: face index count", 1)
        nf = len(mesh.face_sizes)
        if n_indices not in (nf, 1) and not (n_indices == 0 and nf == 0):
            raise t.error(f"{what}: {n_indices} face material indices for {nf} faces", cmark)
        imark = t.here()
        indices = t.read_ints(n_indices, f"{what}: face material indices")
        bad = np.flatnonzero((indices < 0) | (indices >= n_materials))
        if bad.size:
            k = int(bad[0])
            raise t.error(f"{what}: face {k} uses material {int(indices[k])}, but the list "
                          f"declares {n_materials}", t.mark_plus(imark, k))
        if n_indices == 1 and nf != 1:
            indices = np.full(nf, indices[0], dtype=np.int64)
        materials: list = []
        for ident, mark in self.children(what):
            if ident is None:
                if len(materials) >= MAX_MATERIALS:
                    raise t.error(f"{what}: more than {MAX_MATERIALS} materials", mark.mark)
                self.count(what, mark.mark)
                self.material_refs.append((mesh, len(materials), mark))
                materials.append(None)
            elif ident == "Material":
                if len(materials) >= MAX_MATERIALS:
                    raise t.error(f"{what}: more than {MAX_MATERIALS} materials", mark)
                materials.append(self.material())
            else:
                self.unknown_object(ident)
        if len(materials) != n_materials:
            self.warn(f"{what}: declares {n_materials} materials, holds {len(materials)}")
            # Pad with defaults only as far as the face indices need (at most the
            # declared count, which was checked above, and within MAX_OBJECTS).
            needed = int(indices.max()) + 1 if indices.size else 0
            if needed > len(materials):
                self.count(what, nmark, needed - len(materials))
            while len(materials) < needed:
                materials.append(XMaterial())
        mesh.material_indices = indices
        mesh.materials = materials

    def material(self) -> XMaterial:
        t = self.t
        mark = t.here()
        name = self.begin("Material")
        what = _label("Material", name)
        self.count(what, mark)
        vmark = t.here()
        values = t.read_floats(11, what)
        self.check_floats(values, vmark, what)
        mat = XMaterial(name, values[0:4].copy(), float(values[4]), values[5:8].copy(),
                        values[8:11].copy())
        for ident, mark in self.children(what):
            if ident in ("TextureFilename", "TextureFileName"):
                self.begin(ident)
                mat.texture = self.string(f"{what}: {ident}")
                self.end(ident)
            elif ident is None:
                self.warn(f"{what}: reference {{ {mark.name} }} ignored")
            else:
                self.unknown_object(ident)
        if name is not None:
            self.materials_by_name.setdefault(name, mat)
        return mat

    def skin_weights(self, mesh: XMesh, owner: str) -> XSkinWeights:
        t = self.t
        self.begin("SkinWeights")
        bone = self.string(f"{owner}: SkinWeights")
        what = f"{owner}: SkinWeights {bone!r}"
        n = t.read_count(f"{what}: weight count", 2)
        imark = t.here()
        indices = t.read_ints(n, f"{what}: vertex indices")
        wmark = t.here()
        weights = t.read_floats(n, f"{what}: weights")
        matrix = self.read_matrix(f"{what}: matrixOffset")
        nv = len(mesh.positions)
        bad = np.flatnonzero((indices < 0) | (indices >= nv))
        if bad.size:
            k = int(bad[0])
            raise t.error(f"{what}: weight {k} names vertex {int(indices[k])}, but the mesh "
                          f"has only {nv} vertices", t.mark_plus(imark, k))
        self.check_floats(weights, wmark, what, "weight")
        self.end(what)
        return XSkinWeights(bone, indices, weights, matrix)

    def decl_data(self, mesh: XMesh, owner: str, origins: dict) -> dict:
        t = self.t
        what = f"{owner}: DeclData"
        self.begin("DeclData")
        ne = t.read_count(f"{what}: element count", 4)
        elements = t.read_ints(4 * ne, f"{what}: elements").reshape(ne, 4)
        return self._vertex_data("DeclData", what, origins,
                                 lambda raw, warnings, layout: decode_decl(elements, raw, len(mesh.positions),
                                                                           warnings, what, layout))

    def fvf_data(self, mesh: XMesh, owner: str, origins: dict) -> dict:
        t = self.t
        what = f"{owner}: FVFData"
        self.begin("FVFData")
        fvf = t.read_int(f"{what}: flags")
        return self._vertex_data("FVFData", what, origins,
                                 lambda raw, warnings, layout: decode_fvf(fvf, raw, len(mesh.positions),
                                                                          warnings, what, layout))

    def _vertex_data(self, kind: str, what: str, origins: dict, decode) -> dict:
        """The DWORD array that ends a DeclData / FVFData object, decoded into
        vertex streams (``decode(raw bytes, warnings, layout)``); each stream's
        origin (object kind, the data's mark, its place) goes into ``origins``."""
        t = self.t
        mark = t.here()
        nd = t.read_count(f"{what}: DWORD count", 1)
        dmark = t.here()
        raw = dwords_to_bytes(t.read_ints(nd, f"{what}: data"))
        if raw is None:
            raise t.error(f"{what}: data value out of DWORD range", mark)
        self.end(what)
        warnings: list[str] = []
        layout: dict = {}
        streams = decode(raw, warnings, layout)
        for message in warnings:
            self.warn(message)
        for key, where in layout.items():
            origins[key] = (kind, dmark, *where)
        return streams

    # ------------------------------------------------------------------
    # animation
    def animation_set(self) -> XAnimationSet:
        mark = self.t.here()
        name = self.begin("AnimationSet")
        what = _label("AnimationSet", name)
        self.count(what, mark)
        aset = XAnimationSet(name)
        for ident, mark in self.children(what):
            if ident == "Animation":
                aset.animations.append(self.animation(what, mark))
            elif ident is None:
                self.warn(f"{what}: reference {{ {mark.name} }} ignored")
            else:
                self.unknown_object(ident)
        return aset

    def animation(self, owner: str, mark) -> XAnimation:
        t = self.t
        name = self.begin("Animation")
        what = f"{owner}: {_label('Animation', name)}"
        self.count(what, mark)
        anim = XAnimation(name)
        for ident, mark in self.children(what):
            if ident is None:
                if anim.frame_name is not None and mark.name != anim.frame_name:
                    self.warn(f"{what}: second frame reference {{ {mark.name} }} ignored")
                elif mark.name is not None:
                    anim.frame_name = mark.name
            elif ident == "AnimationKey":
                self.count(what, mark)
                anim.keys.append(self.animation_key(what))
            elif ident == "AnimationOptions":
                self.begin(ident)
                anim.open_closed = t.read_int(f"{what}: AnimationOptions")
                anim.position_quality = t.read_int(f"{what}: AnimationOptions")
                self.end(ident)
            elif ident == "Frame" and anim.frame_name is None:
                # Some exporters put the animated frame's name in an inline object.
                self.in_animation += 1
                sub = self.frame()
                self.in_animation -= 1
                anim.frame_name = sub.name
            else:
                self.unknown_object(ident)
        return anim

    def animation_key(self, owner: str) -> XAnimationKey:
        t = self.t
        self.begin("AnimationKey")
        what = f"{owner}: AnimationKey"
        tmark = t.here()
        key = self.key_tables.take(t.number_block(), tmark, what)
        if key is not None:  # (checked by check_keys)
            return key
        t.reset(tmark)
        return self.read_key(what, tmark)

    def check_keys(self) -> None:
        """Check the keys taken on trust (key_tables); the first bad one is read
        again number by number, which raises its error."""
        bad = self.key_tables.settle()
        if bad is not None:
            mark, what = bad
            self.t.reset(mark)
            self.read_key(what, mark)
            raise self.t.error(f"{what}: inconsistent key checks (internal error)", mark)

    def read_key(self, what: str, tmark) -> XAnimationKey:
        """An AnimationKey body (after its '{'), number by number."""
        t = self.t
        key_type = t.read_int(f"{what}: key type")
        expected = KEY_SIZES.get(key_type)
        if expected is None:
            raise t.error(f"{what}: unknown key type {key_type}", tmark)
        nk = t.read_count(f"{what}: key count", 2 + expected)
        start = t.here()
        width = 2 + expected
        table = None
        if nk:
            # Probed without raising (an error costs a scan of a text file).
            table = t.try_read_floats(nk * width)
            if table is not None:
                table = table.reshape(nk, width)
                if not np.all(table[:, 1] == expected):
                    table = None
                    t.reset(start)
        if table is None:
            table = np.empty((nk, width))
            time_label = _Item(what, "key {} time")
            count_label = _Item(what, "key {} value count")
            values_label = _Item(what, "key {}")
            for k in range(nk):
                time_label.index = count_label.index = values_label.index = k
                table[k, 0] = t.read_float(time_label)
                vmark = t.here()
                n = t.read_int(count_label)
                if n != expected:
                    raise t.error(f"{what}: key {k} has {n} values, key type {key_type} "
                                  f"needs {expected}", vmark)
                table[k, 2:] = t.read_floats(n, values_label)
        if nk and not _keys_ok(table, expected):
            self.bad_keys(table, start, what)
        self.end(what)
        return XAnimationKey(key_type, table[:, 0].copy(), table[:, 2:].copy())

    def bad_keys(self, table: np.ndarray, start, what: str) -> None:
        """Raise at the first bad key time or value (the table is the key tokens
        in file order: flat index = numbers after ``start``)."""
        width = table.shape[1]
        times = table[:, 0]
        bad = np.flatnonzero(~((times >= 0) & (times < MAX_KEY_TIME)))  # NaN fails too
        if bad.size:
            k = int(bad[0])
            raise self.t.error(f"{what}: key {k} time {float(times[k])!r} is outside "
                               f"[0, {MAX_KEY_TIME}) ticks", self.t.mark_plus(start, k * width))
        values = table[:, 2:]
        k, c = (int(x) for x in np.argwhere(~(np.abs(values) <= FLOAT32_MAX))[0])
        v = float(values[k, c])
        problem = "is beyond the 32-bit float range" if math.isfinite(v) else "is not finite"
        raise self.t.error(f"{what}: key {k} value {c} {problem} ({v!r})",
                           self.t.mark_plus(start, k * width + 2 + c))

    # ------------------------------------------------------------------
    # references
    def resolve(self, top_frames: list[XFrame]) -> None:
        """Attach the ``{ Name }`` references of frames, in file order.

        A frame has one parent: a reference to a frame that already has one
        (nested in another frame, or referenced before) is an error, so the
        hierarchy stays a tree and never expands. A mesh may be placed more
        than once (instances), within MAX_INSTANCED extra vertices + corners.
        """
        t = self.t
        resolved: dict[int, object] = {}
        placed: set[int] = {id(m) for f in self.frames for m in f.meshes}
        moved: set[int] = set()  # top-level meshes now under a frame
        instanced = 0
        for frame, ref in self.frame_refs:
            owner = _label("Frame", frame.name)
            target = self.frames_by_name.get(ref.name)
            if target is not None:
                link = self.parents.get(id(target))
                if link is not None:
                    raise t.error(f"{owner}: reference {{ {ref.name!r} }}: frame {ref.name!r} is "
                                  f"already a child of {_label('Frame', link[0].name)} (a frame "
                                  f"can have only one parent)", ref.mark)
                self.parents[id(target)] = (frame, ref.mark, True)
                resolved[id(ref)] = target
                continue
            mesh = self.meshes_by_name.get(ref.name)
            if mesh is not None:
                if id(mesh) in placed:
                    instanced += len(mesh.positions) + len(mesh.face_indices)
                    if instanced > MAX_INSTANCED:
                        raise t.error(f"{owner}: reference {{ {ref.name!r} }}: mesh instances "
                                      f"add more than {MAX_INSTANCED} vertices and corners",
                                      ref.mark)
                else:
                    placed.add(id(mesh))
                    moved.add(id(mesh))
                resolved[id(ref)] = mesh
                continue
            self.warn(f"{owner}: reference {{ {ref.name} }} to an unknown object ignored")
        for frame in {id(f): f for f, _ref in self.frame_refs}.values():
            children = []
            for child in frame.children:
                if isinstance(child, _Ref):
                    target = resolved.get(id(child))
                    if isinstance(target, XFrame):
                        children.append(target)
                    elif target is not None:
                        frame.meshes.append(target)
                else:
                    children.append(child)
            frame.children = children
        self.check_tree()
        self.xf.frames = [f for f in top_frames if id(f) not in self.parents]
        self.xf.meshes = [m for m in self.xf.meshes if id(m) not in moved]
        for mesh, slot, ref in self.material_refs:
            mat = self.materials_by_name.get(ref.name)
            if mat is None:
                self.warn(f"{_label('Mesh', mesh.name)}: reference to unknown "
                          f"material {{ {ref.name} }}; default material used")
                mat = XMaterial(ref.name)
            mesh.materials[slot] = mat

    def check_tree(self) -> None:
        """No frame may contain itself, nor lie deeper than MAX_FRAME_DEPTH.

        Every frame has at most one parent, so following parents is linear."""
        parents = self.parents
        depth: dict[int, int] = {}
        for frame in self.frames:
            path = []
            on_path: set[int] = set()
            f = frame
            while f is not None and id(f) not in depth:
                if id(f) in on_path:
                    self.cycle_error(path[path.index(f):])
                on_path.add(id(f))
                path.append(f)
                link = parents.get(id(f))
                f = link[0] if link is not None else None
            d = depth[id(f)] if f is not None else 0
            for g in reversed(path):
                d += 1
                depth[id(g)] = d
                if d > MAX_FRAME_DEPTH:
                    _parent, mark, _via = parents[id(g)]
                    raise self.t.error(f"{_label('Frame', g.name)} lies {d} levels deep in the "
                                       f"frame hierarchy (the limit is {MAX_FRAME_DEPTH})", mark)

    def cycle_error(self, cycle: list[XFrame]):
        """Raise at the first (in file order) reference closing a frame cycle."""
        links = [(self.parents[id(f)][1], f) for f in cycle if self.parents[id(f)][2]]
        mark, frame = min(links, key=lambda link: link[0])
        raise self.t.error(f"frame {frame.name!r} contains itself through a reference", mark)
