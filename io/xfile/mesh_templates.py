# SPDX-License-Identifier: GPL-3.0-or-later
"""The mesh templates of .X files: Mesh with its faces, MeshNormals,
MeshTextureCoords, MeshVertexColors, MeshMaterialList and Material,
SkinWeights, and the vertex streams of DeclData / FVFData."""
from __future__ import annotations

import numpy as np

from . import limits
from .model import XEffect, XMaterial, XMesh, XSkinWeights
from .objects import ObjectReader, _Item, _label, _Ref
from .vertex_streams import decode_decl, decode_fvf, dwords_to_bytes


class MeshTemplates(ObjectReader):
    """Mesh and material objects (mixed into :class:`~.parser.Parser`)."""

    meshes_by_name: dict[str, XMesh]
    materials_by_name: dict[str, XMaterial]
    material_refs: list[tuple[XMesh, int, _Ref]]    # { Material } references, resolved at the end

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
        fvf: dict[str, np.ndarray] = {}
        for ident, mark in self.children(what, "Mesh"):
            if ident is None:
                self.warn(f"{what}: reference {{ {mark.name} }} ignored")
            elif ident == "MeshNormals":
                self.mesh_normals(mesh, what)
            elif ident == "MeshTextureCoords":
                uvs = self.mesh_uvs(mesh, what)
                if mesh.uvs is None:
                    mesh.uvs = uvs
                else:           # a second set (as assimp reads it: the next channel)
                    mesh.more_uvs.append(uvs)
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
            elif ident == "VertexDuplicationIndices":
                self.duplication(mesh, what)
            elif ident == "DeclData":
                streams.update(self.decl_data(mesh, what, origins))
            elif ident == "FVFData":
                fvf.update(self.fvf_data(mesh, what, origins))
            elif ident == "Material":       # outside its MeshMaterialList: only a name refers to it
                self.loose_material(what)
            else:
                self.unknown_object(ident)
        streams.update(self.fvf_sets(mesh, fvf, origins))
        if mesh.normals is None and "NORMAL0" in streams and streams["NORMAL0"].shape[1] >= 3:
            normals = np.ascontiguousarray(streams.pop("NORMAL0")[:, :3])
            mesh.normals = self.finite_stream(normals, origins["NORMAL0"], what, "NORMAL0", "normal")
            mesh.normal_face_sizes = mesh.face_sizes.copy()
            mesh.normal_face_indices = mesh.face_indices.copy()
        if mesh.uvs is None and "TEXCOORD0" in streams and streams["TEXCOORD0"].shape[1] >= 2:
            uvs = np.ascontiguousarray(streams.pop("TEXCOORD0")[:, :2])
            mesh.uvs = self.finite_stream(uvs, origins["TEXCOORD0"], what, "TEXCOORD0", "texture coordinate")
        for key, values in streams.items():      # further UV sets (TEXCOORD1..) become UV maps
            if key.startswith("TEXCOORD") and key != "TEXCOORD0" and values.shape[1] >= 2:
                uvs = values[:, :2]
                fixed = self.finite_stream(uvs, origins[key], what, key, "texture coordinate")
                if fixed is not uvs:                 # values set to 0: a copy of the stream holds them
                    streams[key] = values.copy()
                    streams[key][:, :2] = fixed
        mesh.extra_streams = streams
        self.depth -= 1
        return mesh

    @staticmethod
    def fvf_sets(mesh: XMesh, fvf: dict, origins: dict) -> dict:
        """FVFData streams, their texture sets numbered after the mesh's
        MeshTextureCoords: files hold there the sets the standard templates
        do not (assimp reads its sets as channels after MeshTextureCoords',
        Irrlicht its data as the second set), unless its first set repeats
        the MeshTextureCoords (the whole vertex minus its position)."""
        sets = sorted((int(k[8:]), k) for k in fvf if k.startswith("TEXCOORD"))
        if mesh.uvs is None or not sets:
            return fvf
        first = fvf.get("TEXCOORD0")
        if first is not None and first.shape[1] >= 2 and np.allclose(first[:, :2], mesh.uvs, atol=1e-6):
            return fvf
        shift = 1 + len(mesh.more_uvs)
        out = {k: v for k, v in fvf.items() if not k.startswith("TEXCOORD")}
        for n, key in sets:
            if n + shift < 8:
                out[f"TEXCOORD{n + shift}"] = fvf[key]
                origins[f"TEXCOORD{n + shift}"] = origins.get(key)
        return out

    def finite_stream(self, values: np.ndarray, origin, what: str, key: str, kind: str) -> np.ndarray:
        """A DeclData / FVFData stream that becomes normals or UVs, its values
        that are not finite set to 0 (one warning, :meth:`finite_or_zero`)."""
        source, mark, offset, stride, component = origin

        def mark_of(v: int, c: int):
            return self.t.mark_plus(mark, (v * stride + offset + c * component) // 4)

        return self.finite_or_zero(values, f"{what}: {source} {key}", kind, ("vertex", "vertices"), mark_of)

    def duplication(self, mesh: XMesh, owner: str) -> None:
        """VertexDuplicationIndices: which vertices an exporter split from
        which. One that does not fit the mesh is a warning (it only says
        which vertices were one)."""
        t = self.t
        what = f"{owner}: VertexDuplicationIndices"
        self.begin("VertexDuplicationIndices")
        n = t.read_count(f"{what}: count", 1)
        n_original = t.read_int(what)
        idx = t.read_ints(n, what).astype(np.int64)
        self.end(what)
        nv = len(mesh.positions)
        if n != nv or not (0 <= n_original <= nv) or (n and (idx.min() < 0 or idx.max() >= nv)):
            self.warn(f"{what}: {n} indices of {n_original} original vertices do not fit the mesh's {nv} "
                      f"vertices: ignored")
            return
        mesh.duplicates = idx

    def mesh_normals(self, mesh: XMesh, owner: str) -> None:
        t = self.t
        what = f"{owner}: MeshNormals"
        self.begin("MeshNormals")
        nn = t.read_count(f"{what}: normal count", 3)
        nmark = t.here()
        normals = self.finite_or_zero(t.read_floats(3 * nn, f"{what}: normals").reshape(nn, 3), what, "normal",
                                      ("normal", "normals"), lambda r, c: t.mark_plus(nmark, 3 * r + c))
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

    def mesh_uvs(self, mesh: XMesh, owner: str) -> np.ndarray:
        t = self.t
        what = f"{owner}: MeshTextureCoords"
        self.begin("MeshTextureCoords")
        mark = t.here()
        n = t.read_count(f"{what}: count", 2)
        if n != len(mesh.positions):
            raise t.error(f"{what}: {n} texture coordinates for {len(mesh.positions)} vertices", mark)
        umark = t.here()
        uvs = self.finite_or_zero(t.read_floats(2 * n, what).reshape(n, 2), what, "texture coordinate",
                                  ("vertex", "vertices"), lambda r, c: t.mark_plus(umark, 2 * r + c))
        self.end(what)
        return uvs

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
        rgba = self.finite_or_zero(table[:, 1:], what, "colour", ("vertex", "vertices"),
                                   lambda r, c: t.mark_plus(start, 5 * r + 1 + c))
        colors = mesh.vertex_colors if mesh.vertex_colors is not None else np.ones((nv, 4))
        colors[index.astype(np.int64)] = rgba
        mesh.vertex_colors = colors
        self.end(what)

    def material_list(self, mesh: XMesh, owner: str) -> None:
        t = self.t
        what = f"{owner}: MeshMaterialList"
        self.begin("MeshMaterialList")
        nmark = t.here()
        n_materials = t.read_count(f"{what}: material count", 0)
        # Each material of the list is an object or a { reference }: 3 tokens at least.
        if n_materials > limits.MAX_MATERIALS or 3 * n_materials > t.tokens_left():
            limit = (f"more than {limits.MAX_MATERIALS} materials" if n_materials > limits.MAX_MATERIALS else
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
        for ident, mark in self.children(what, "MeshMaterialList"):
            if ident is None:
                if len(materials) >= limits.MAX_MATERIALS:
                    raise t.error(f"{what}: more than {limits.MAX_MATERIALS} materials", mark.mark)
                self.count(what, mark.mark)
                self.material_refs.append((mesh, len(materials), mark))
                materials.append(None)
            elif ident == "Material":
                if len(materials) >= limits.MAX_MATERIALS:
                    raise t.error(f"{what}: more than {limits.MAX_MATERIALS} materials", mark)
                materials.append(self.material())
            else:
                self.unknown_object(ident)
        if len(materials) != n_materials:
            self.warn(f"{what}: declares {n_materials} materials, holds {len(materials)}")
            # Pad with defaults only as far as the face indices need (at most the
            # declared count, which was checked above, and within limits.MAX_OBJECTS).
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
        for ident, mark in self.children(what, "Material"):
            if ident in ("TextureFilename", "TextureFileName"):
                self.begin(ident)
                texture = self.string(f"{what}: {ident}")
                if mat.texture is None:
                    mat.texture = texture
                else:
                    mat.more_textures.append(texture)
                self.end(ident)
            elif ident in ("NormalmapFilename", "NormalmapFileName"):
                self.begin(ident)
                mat.normal_map = self.string(f"{what}: {ident}")
                self.end(ident)
            elif ident == "EffectInstance" and mat.effect is None:
                self.count(what, mark)
                mat.effect = self.effect_instance(what)
            elif ident is None:
                self.warn(f"{what}: reference {{ {mark.name} }} ignored")
            else:
                self.unknown_object(ident)
        if name is not None:
            self.materials_by_name.setdefault(name, mat)
        return mat

    def effect_instance(self, owner: str) -> XEffect:
        """EffectInstance: the effect file and its EffectParamString /
        EffectParamDWord / EffectParamFloats parameters (other objects in it
        are skipped as unknown)."""
        t = self.t
        self.begin("EffectInstance")
        what = f"{owner}: EffectInstance"
        effect = XEffect(self.string(what))
        for ident, mark in self.children(what):
            if ident in ("EffectParamString", "EffectParamDWord", "EffectParamFloats"):
                self.count(what, mark)
                self.begin(ident)
                label = f"{what}: {ident}"
                name = self.string(label)
                value: object
                if ident == "EffectParamString":
                    value = self.string(f"{label} {name!r}")
                elif ident == "EffectParamDWord":
                    value = int(t.read_int(f"{label} {name!r}"))
                else:
                    n = t.read_count(f"{label} {name!r}: count", 1)
                    fmark = t.here()
                    floats = t.read_floats(n, f"{label} {name!r}")
                    self.check_floats(floats, fmark, f"{label} {name!r}")
                    value = floats.tolist()
                self.end(label)
                effect.params.append((ident[len("EffectParam"):].lower(), name, value))
            elif ident is None:
                self.warn(f"{what}: reference {{ {mark.name} }} ignored")
            else:
                self.unknown_object(ident)
        return effect

    def loose_material(self, where: str) -> None:
        """A Material outside any MeshMaterialList (at the top level, in a
        Frame or a Mesh): meshes refer to it by name, wherever it is
        declared, before or after the reference (as D3DX resolves them)."""
        mat = self.material()
        if mat.name is None:
            self.warn(f"{where}: an unnamed Material outside a MeshMaterialList ignored (no mesh can "
                      f"refer to it)")

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
