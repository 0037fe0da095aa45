# SPDX-License-Identifier: GPL-3.0-or-later
"""Token stream -> XFile model (the same code for text and binary data)."""
from __future__ import annotations

from collections import Counter

import numpy as np

from ..errors import FormatError
from .model import (XAnimation, XAnimationKey, XAnimationSet, XFile, XFrame,
                    XMaterial, XMesh, XSkinWeights)
from .tokens import CLOSE, EOF, GUID, NAME, NUM, OPEN, TokenStream
from .vertex_streams import decode_decl, decode_fvf, dwords_to_bytes

MAX_DEPTH = 256
KEY_SIZES = {0: 4, 1: 3, 2: 3, 3: 16, 4: 16}
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
        self.depth = 0
        self.strays: Counter[str] = Counter()

    # ------------------------------------------------------------------
    # generic structure
    def parse(self) -> XFile:
        t = self.t
        top_frames: list[XFrame | _Ref] = []
        while True:
            k = t.kind()
            if k == EOF:
                break
            if k == NAME:
                mark = t.here()
                ident = t.word()
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
                self.xf.warnings.append(f"top-level reference {{ {ref.name} }} ignored")
            else:
                raise t.error(f"unexpected {t.describe()} at top level")
        self.resolve(top_frames)
        for ident, count in sorted(self.unknown.items()):
            self.xf.warnings.append(f"skipped {count} unknown '{ident}' object(s)")
        for what, count in sorted(self.strays.items()):
            self.xf.warnings.append(f"{what}: ignored {count} unexpected value token(s)")
        return self.xf

    def begin(self, ident: str) -> str | None:
        """After the identifier: optional name, '{', optional GUID. Returns the name."""
        t = self.t
        name = None
        k = t.kind()
        if k == NAME or (k == NUM and self.is_text):
            name = t.word() or None
        t.expect(OPEN, _label(ident, name))
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
        for ident, ref in self.children(what):
            if ident is not None:
                self.unknown_object(ident)

    def reference(self) -> _Ref:
        t = self.t
        mark = t.here()
        t.advance()  # '{'
        name = None
        k = t.kind()
        if k == NAME or (k == NUM and self.is_text):
            name = t.word()
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

    # ------------------------------------------------------------------
    # frames
    def frame(self) -> XFrame:
        mark = self.t.here()
        name = self.begin("Frame")
        what = _label("Frame", name)
        self.enter(what, mark)
        frame = XFrame(name)
        self.frame_marks[id(frame)] = mark
        if name is not None:
            self.frames_by_name.setdefault(name, frame)
        for ident, mark in self.children(what):
            if ident is None:
                frame.children.append(mark)  # a _Ref, resolved later
            elif ident == "FrameTransformMatrix":
                self.begin(ident)
                frame.matrix = self.t.read_floats(16, f"{what}: FrameTransformMatrix").reshape(4, 4)
                self.end(ident)
            elif ident == "Frame":
                frame.children.append(self.frame())
            elif ident == "Mesh":
                frame.meshes.append(self.mesh())
            else:
                self.unknown_object(ident)
        self.depth -= 1
        return frame

    def ticks(self, mark) -> None:
        self.begin("AnimTicksPerSecond")
        value = self.t.read_int("AnimTicksPerSecond")
        self.end("AnimTicksPerSecond")
        if self.xf.anim_ticks_per_second is None:
            self.xf.anim_ticks_per_second = value
        elif value != self.xf.anim_ticks_per_second:
            self.xf.warnings.append(f"AnimTicksPerSecond given again as {value}; "
                                    f"keeping {self.xf.anim_ticks_per_second}")

    # ------------------------------------------------------------------
    # meshes
    def faces(self, count: int, what: str):
        """``count`` faces ``n; i0, ..., in-1`` -> (sizes, flat indices, marker)."""
        t = self.t
        start = t.here()
        if count == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.int64), start
        first = t.read_int(f"{what}: face 0")
        t.reset(start)
        # Fast path: every face has the first face's size (all-triangle meshes).
        if first > 0 and count * (first + 1) <= t.numbers_left():
            try:
                flat = t.read_ints(count * (first + 1), what)
            except FormatError:
                flat = None
            if flat is not None:
                table = flat.reshape(count, first + 1)
                if np.all(table[:, 0] == first):
                    return (np.full(count, first, dtype=np.int64),
                            np.ascontiguousarray(table[:, 1:]).reshape(-1), start)
            t.reset(start)
        sizes = np.empty(count, dtype=np.int64)
        parts = []
        for f in range(count):
            mark = t.here()
            n = t.read_int(f"{what}: face {f}")
            if n < 0 or n > t.numbers_left():
                raise t.error(f"{what}: face {f} claims {n} indices", mark)
            sizes[f] = n
            parts.append(t.read_ints(n, f"{what}: face {f}"))
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
        nv = t.read_count(f"{what}: vertex count", 3)
        vmark = t.here()
        positions = t.read_floats(3 * nv, f"{what}: vertices").reshape(nv, 3)
        finite = np.isfinite(positions).all(axis=1)
        if not finite.all():
            v = int(np.flatnonzero(~finite)[0])
            raise t.error(f"{what}: vertex {v} is not finite ({positions[v].tolist()})",
                          t.mark_plus(vmark, 3 * v))
        nf = t.read_count(f"{what}: face count", 1)
        sizes, indices, fmark = self.faces(nf, f"{what}: faces")
        self.check_indices(indices, nv, sizes, fmark, f"{what}: faces", "vertex")
        mesh = XMesh(name, positions, sizes, indices)
        if name is not None:
            self.meshes_by_name.setdefault(name, mesh)
        streams: dict[str, np.ndarray] = {}
        for ident, mark in self.children(what):
            if ident is None:
                self.xf.warnings.append(f"{what}: reference {{ {mark.name} }} ignored")
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
                mesh.skin_weights.append(self.skin_weights(mesh, what))
            elif ident == "DeclData":
                streams.update(self.decl_data(mesh, what))
            elif ident == "FVFData":
                streams.update(self.fvf_data(mesh, what))
            else:
                self.unknown_object(ident)
        if mesh.normals is None and "NORMAL0" in streams and streams["NORMAL0"].shape[1] >= 3:
            mesh.normals = np.ascontiguousarray(streams.pop("NORMAL0")[:, :3])
            mesh.normal_face_sizes = mesh.face_sizes.copy()
            mesh.normal_face_indices = mesh.face_indices.copy()
        if mesh.uvs is None and "TEXCOORD0" in streams and streams["TEXCOORD0"].shape[1] >= 2:
            mesh.uvs = np.ascontiguousarray(streams.pop("TEXCOORD0")[:, :2])
        mesh.extra_streams = streams
        self.depth -= 1
        return mesh

    def mesh_normals(self, mesh: XMesh, owner: str) -> None:
        t = self.t
        what = f"{owner}: MeshNormals"
        self.begin("MeshNormals")
        nn = t.read_count(f"{what}: normal count", 3)
        normals = t.read_floats(3 * nn, f"{what}: normals").reshape(nn, 3)
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
        mesh.uvs = t.read_floats(2 * n, what).reshape(n, 2)
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
        colors = mesh.vertex_colors if mesh.vertex_colors is not None else np.ones((nv, 4))
        colors[index.astype(np.int64)] = table[:, 1:]
        mesh.vertex_colors = colors
        self.end(what)

    def material_list(self, mesh: XMesh, owner: str) -> None:
        t = self.t
        what = f"{owner}: MeshMaterialList"
        self.begin("MeshMaterialList")
        n_materials = t.read_count(f"{what}: material count", 0)
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
                self.material_refs.append((mesh, len(materials), mark))
                materials.append(None)
            elif ident == "Material":
                materials.append(self.material())
            else:
                self.unknown_object(ident)
        if len(materials) != n_materials:
            self.xf.warnings.append(f"{what}: declares {n_materials} materials, "
                                    f"holds {len(materials)}")
            # Pad with defaults only as far as the face indices need (the declared
            # count is not backed by any data, so it must not size an allocation).
            needed = int(indices.max()) + 1 if indices.size else 0
            while len(materials) < needed:
                materials.append(XMaterial())
        mesh.material_indices = indices
        mesh.materials = materials

    def material(self) -> XMaterial:
        t = self.t
        name = self.begin("Material")
        what = _label("Material", name)
        values = t.read_floats(11, what)
        mat = XMaterial(name, values[0:4].copy(), float(values[4]), values[5:8].copy(),
                        values[8:11].copy())
        for ident, mark in self.children(what):
            if ident in ("TextureFilename", "TextureFileName"):
                self.begin(ident)
                mat.texture = t.string(f"{what}: {ident}")
                self.end(ident)
            elif ident is None:
                self.xf.warnings.append(f"{what}: reference {{ {mark.name} }} ignored")
            else:
                self.unknown_object(ident)
        if name is not None:
            self.materials_by_name.setdefault(name, mat)
        return mat

    def skin_weights(self, mesh: XMesh, owner: str) -> XSkinWeights:
        t = self.t
        self.begin("SkinWeights")
        bone = t.string(f"{owner}: SkinWeights")
        what = f"{owner}: SkinWeights {bone!r}"
        n = t.read_count(f"{what}: weight count", 2)
        imark = t.here()
        indices = t.read_ints(n, f"{what}: vertex indices")
        weights = t.read_floats(n, f"{what}: weights")
        matrix = t.read_floats(16, f"{what}: matrixOffset").reshape(4, 4)
        nv = len(mesh.positions)
        bad = np.flatnonzero((indices < 0) | (indices >= nv))
        if bad.size:
            k = int(bad[0])
            raise t.error(f"{what}: weight {k} names vertex {int(indices[k])}, but the mesh "
                          f"has only {nv} vertices", t.mark_plus(imark, k))
        self.end(what)
        return XSkinWeights(bone, indices, weights, matrix)

    def decl_data(self, mesh: XMesh, owner: str) -> dict:
        t = self.t
        what = f"{owner}: DeclData"
        self.begin("DeclData")
        ne = t.read_count(f"{what}: element count", 4)
        elements = t.read_ints(4 * ne, f"{what}: elements").reshape(ne, 4)
        mark = t.here()
        nd = t.read_count(f"{what}: DWORD count", 1)
        raw = dwords_to_bytes(t.read_ints(nd, f"{what}: data"))
        if raw is None:
            raise t.error(f"{what}: data value out of DWORD range", mark)
        self.end(what)
        return decode_decl(elements, raw, len(mesh.positions), self.xf.warnings, what)

    def fvf_data(self, mesh: XMesh, owner: str) -> dict:
        t = self.t
        what = f"{owner}: FVFData"
        self.begin("FVFData")
        fvf = t.read_int(f"{what}: flags")
        mark = t.here()
        nd = t.read_count(f"{what}: DWORD count", 1)
        raw = dwords_to_bytes(t.read_ints(nd, f"{what}: data"))
        if raw is None:
            raise t.error(f"{what}: data value out of DWORD range", mark)
        self.end(what)
        return decode_fvf(fvf, raw, len(mesh.positions), self.xf.warnings, what)

    # ------------------------------------------------------------------
    # animation
    def animation_set(self) -> XAnimationSet:
        name = self.begin("AnimationSet")
        what = _label("AnimationSet", name)
        aset = XAnimationSet(name)
        for ident, mark in self.children(what):
            if ident == "Animation":
                aset.animations.append(self.animation(what))
            elif ident is None:
                self.xf.warnings.append(f"{what}: reference {{ {mark.name} }} ignored")
            else:
                self.unknown_object(ident)
        return aset

    def animation(self, owner: str) -> XAnimation:
        t = self.t
        name = self.begin("Animation")
        what = f"{owner}: {_label('Animation', name)}"
        anim = XAnimation(name)
        for ident, mark in self.children(what):
            if ident is None:
                if anim.frame_name is not None and mark.name != anim.frame_name:
                    self.xf.warnings.append(f"{what}: second frame reference "
                                            f"{{ {mark.name} }} ignored")
                elif mark.name is not None:
                    anim.frame_name = mark.name
            elif ident == "AnimationKey":
                anim.keys.append(self.animation_key(what))
            elif ident == "AnimationOptions":
                self.begin(ident)
                anim.open_closed = t.read_int(f"{what}: AnimationOptions")
                anim.position_quality = t.read_int(f"{what}: AnimationOptions")
                self.end(ident)
            elif ident == "Frame" and anim.frame_name is None:
                # Some exporters put the animated frame's name in an inline object.
                sub = self.frame()
                anim.frame_name = sub.name
            else:
                self.unknown_object(ident)
        return anim

    def animation_key(self, owner: str) -> XAnimationKey:
        t = self.t
        self.begin("AnimationKey")
        what = f"{owner}: AnimationKey"
        tmark = t.here()
        key_type = t.read_int(f"{what}: key type")
        expected = KEY_SIZES.get(key_type)
        if expected is None:
            raise t.error(f"{what}: unknown key type {key_type}", tmark)
        nk = t.read_count(f"{what}: key count", 2 + expected)
        start = t.here()
        table = None
        if nk:
            t.read_floats(1, f"{what}: key 0 time")
            n = t.read_int(f"{what}: key 0 value count")
            t.reset(start)
            if n == expected:
                try:
                    table = t.read_floats(nk * (2 + n), f"{what}: keys").reshape(nk, 2 + n)
                except FormatError:
                    table = None
                if table is not None and not np.all(table[:, 1] == n):
                    table = None
                if table is None:
                    t.reset(start)
        if table is None:
            table = np.empty((nk, 2 + expected))
            for k in range(nk):
                table[k, 0] = t.read_float(f"{what}: key {k} time")
                vmark = t.here()
                n = t.read_int(f"{what}: key {k} value count")
                if n != expected:
                    raise t.error(f"{what}: key {k} has {n} values, key type {key_type} "
                                  f"needs {expected}", vmark)
                table[k, 2:] = t.read_floats(n, f"{what}: key {k}")
        self.end(what)
        return XAnimationKey(key_type, np.ascontiguousarray(table[:, 0]),
                             np.ascontiguousarray(table[:, 2:]))

    # ------------------------------------------------------------------
    # references
    def resolve(self, top_frames: list) -> None:
        referenced_frames: set[int] = set()
        referenced_meshes: set[int] = set()
        stack = [f for f in top_frames if isinstance(f, XFrame)]
        seen: set[int] = set()
        while stack:
            frame = stack.pop()
            if id(frame) in seen:
                continue
            seen.add(id(frame))
            children = []
            for child in frame.children:
                if isinstance(child, _Ref):
                    target = self.frames_by_name.get(child.name)
                    if target is not None:
                        children.append(target)
                        referenced_frames.add(id(target))
                        continue
                    mesh = self.meshes_by_name.get(child.name)
                    if mesh is not None:
                        frame.meshes.append(mesh)
                        referenced_meshes.add(id(mesh))
                        continue
                    self.xf.warnings.append(f"{_label('Frame', frame.name)}: reference "
                                            f"{{ {child.name} }} to an unknown object ignored")
                else:
                    children.append(child)
            frame.children = children
            stack.extend(children)
        self.xf.frames = [f for f in top_frames
                          if isinstance(f, XFrame) and id(f) not in referenced_frames]
        self.xf.meshes = [m for m in self.xf.meshes if id(m) not in referenced_meshes]
        # Reference cycles would make the hierarchy infinite.
        state: dict[int, int] = {}
        for root in self.frames_by_name.values():
            self._check_cycle(root, state)
        for mesh, slot, ref in self.material_refs:
            mat = self.materials_by_name.get(ref.name)
            if mat is None:
                self.xf.warnings.append(f"{_label('Mesh', mesh.name)}: reference to unknown "
                                        f"material {{ {ref.name} }}; default material used")
                mat = XMaterial(ref.name)
            mesh.materials[slot] = mat

    def _check_cycle(self, root: XFrame, state: dict[int, int]) -> None:
        if state.get(id(root)) == 2:
            return
        stack = [(root, iter(root.children))]
        state[id(root)] = 1
        while stack:
            frame, it = stack[-1]
            child = next(it, None)
            if child is None:
                state[id(frame)] = 2
                stack.pop()
                continue
            s = state.get(id(child))
            if s == 1:
                raise self.t.error(f"frame {child.name!r} contains itself through a reference",
                                   self.frame_marks.get(id(child)))
            if s is None:
                state[id(child)] = 1
                stack.append((child, iter(child.children)))
