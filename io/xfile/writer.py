# SPDX-License-Identifier: GPL-3.0-or-later
"""XFile model -> .X bytes (text, binary, MSZIP-compressed; 32/64-bit floats)."""
from __future__ import annotations

import os

import numpy as np

from ..atomic import write_atomic
from ..errors import FormatError
from . import mszip
from .binary_emit import BinaryEmitter
from .model import XAnimationSet, XFile, XFrame, XMaterial, XMesh
from .names import text_identifier
from .text_emit import TextEmitter
from .vertex_streams import encode_decl

#: storage kinds (write_xfile's ``storage``) -> header code (the codes are accepted too)
STORAGE = {"text": "txt", "binary": "bin", "text_compressed": "tzip",
           "binary_compressed": "bzip", "txt": "txt", "bin": "bin", "tzip": "tzip",
           "bzip": "bzip"}


def write_xfile(xf: XFile, path: str | os.PathLike, storage: str = "text",
                float_size: int = 32, batch=None) -> None:
    """Write ``xf`` to ``path``: serialised in memory, then written to a
    temporary file beside the target and renamed over it, so a failure
    (FormatError) leaves an existing file untouched (with ``batch``, an
    :class:`..atomic.Batch`: renamed when the batch commits)."""
    data = write_xfile_bytes(xf, storage=storage, float_size=float_size, path=path)
    write_atomic(path, (data,), batch=batch)


def write_xfile_bytes(xf: XFile, storage: str = "text", float_size: int = 32, path=None) -> bytes:
    code = STORAGE.get(storage)
    if code is None:
        raise ValueError(f"storage must be one of {sorted(STORAGE)}, not {storage!r}")
    if float_size not in (32, 64):
        raise ValueError(f"float_size must be 32 or 64, not {float_size!r}")
    version = xf.version if xf.version in ("0302", "0303") else "0303"
    header = f"xof {version}{code:<4}{float_size:04d}".encode("ascii")
    text = code in ("txt", "tzip")
    emitter = _TextEmitter(float_size) if text else BinaryEmitter(float_size)
    try:
        _Writer(emitter, text).file(xf)
    except FormatError as exc:
        raise FormatError(f"cannot write: {exc.message}", path=path) from None
    body = emitter.getvalue()
    if text:
        body = ("\n" + body).encode("utf-8")
    if code in ("txt", "bin"):
        return header + body
    return mszip.compress(header, body)


class _TextEmitter(TextEmitter):
    """Text output that spells names as :func:`.names.text_identifier` does
    (as they are wherever a text word can hold them)."""

    def begin(self, ident: str, name: str | None = None) -> None:
        if not name:
            super().begin(ident)
            return
        self._line(f"{ident} {text_identifier(name)} {{")
        self.indent += " "

    def reference(self, name: str) -> None:
        self._line(f"{{ {text_identifier(name)} }}")


def _need(cond: bool, message: str) -> None:
    """Data the file cannot hold: FormatError (the caller adds the path)."""
    if not cond:
        raise FormatError(message)


class _Writer:
    def __init__(self, emitter, text: bool):
        self.e = emitter
        self.text = text

    def name(self, name: str | None) -> str | None:
        """Names that end up as references must be spelled the same everywhere."""
        if not name:
            return None
        return text_identifier(name) if self.text else name

    def file(self, xf: XFile) -> None:
        e = self.e
        if xf.templates:
            e.templates(xf.templates)
        if xf.anim_ticks_per_second is not None:
            e.begin("AnimTicksPerSecond")
            e.dwords([xf.anim_ticks_per_second])
            e.end()
            e.blank()
        for frame in xf.frames:
            self.frame(frame, 0)
            e.blank()
        for mesh in xf.meshes:
            self.mesh(mesh)
            e.blank()
        for aset in xf.animation_sets:
            self.animation_set(aset)
            e.blank()

    def frame(self, frame: XFrame, depth: int) -> None:
        _need(depth < 256, "frames nested deeper than 256 levels (a cycle?)")
        e = self.e
        e.begin("Frame", frame.name)
        matrix = np.asarray(frame.matrix, dtype=np.float64)
        _need(matrix.shape == (4, 4), f"frame {frame.name!r}: matrix must be 4x4")
        e.begin("FrameTransformMatrix")
        e.matrix(matrix)
        e.end()
        for mesh in frame.meshes:
            self.mesh(mesh)
        for child in frame.children:
            self.frame(child, depth + 1)
        e.end()

    def material(self, mat: XMaterial) -> None:
        e = self.e
        e.begin("Material", mat.name)
        e.floats(np.asarray(mat.face_color, dtype=np.float64).reshape(4))
        e.float_member(float(mat.power))
        e.floats(np.asarray(mat.specular, dtype=np.float64).reshape(3))
        e.floats(np.asarray(mat.emissive, dtype=np.float64).reshape(3))
        for texture in ([mat.texture] if mat.texture is not None else []) + list(mat.more_textures):
            e.begin("TextureFilename")
            e.string(texture)
            e.end()
        if mat.normal_map is not None:
            e.begin("NormalmapFilename")
            e.string(mat.normal_map)
            e.end()
        if mat.effect is not None:
            e.begin("EffectInstance")
            e.string(mat.effect.filename)
            for kind, name, value in mat.effect.params:
                e.begin("EffectParam" + {"string": "String", "dword": "DWord", "floats": "Floats"}[kind])
                e.string(name)
                if kind == "string":
                    e.string(str(value))
                elif kind == "dword":
                    e.dwords([int(value)])      # type: ignore[call-overload]
                else:
                    floats = np.asarray(value, dtype=np.float64).reshape(-1)
                    _need(bool(np.isfinite(floats).all()), f"material {mat.name!r}: effect parameter {name!r} "
                                                           f"is not finite")
                    e.dwords([len(floats)])
                    e.float_array(floats)
                e.end()
            e.end()
        e.end()

    def mesh(self, mesh: XMesh) -> None:
        e = self.e
        label = f"mesh {mesh.name!r}" if mesh.name else "mesh"
        positions = np.asarray(mesh.positions, dtype=np.float64).reshape(-1, 3)
        nv = len(positions)
        _need(bool(np.isfinite(positions).all()), f"{label}: positions are not finite")
        sizes = np.asarray(mesh.face_sizes, dtype=np.int64)
        indices = np.asarray(mesh.face_indices, dtype=np.int64)
        _need(int(sizes.sum()) == len(indices) and (sizes >= 0).all(),
              f"{label}: face_sizes do not add up to face_indices")
        _need(indices.size == 0 or (indices.min() >= 0 and indices.max() < nv),
              f"{label}: face index out of range")
        nf = len(sizes)
        e.begin("Mesh", mesh.name)
        e.dwords([nv])
        e.struct_array(positions)
        e.dwords([nf])
        e.faces(sizes, indices)
        if mesh.normals is not None:
            normals = np.asarray(mesh.normals, dtype=np.float64).reshape(-1, 3)
            nsizes = sizes if mesh.normal_face_sizes is None else \
                np.asarray(mesh.normal_face_sizes, dtype=np.int64)
            nindices = indices if mesh.normal_face_indices is None else \
                np.asarray(mesh.normal_face_indices, dtype=np.int64)
            _need(np.array_equal(nsizes, sizes), f"{label}: normal faces differ from faces")
            _need(nindices.size == 0 or (nindices.min() >= 0 and nindices.max() < len(normals)),
                  f"{label}: normal index out of range")
            e.begin("MeshNormals")
            e.dwords([len(normals)])
            e.struct_array(normals)
            e.dwords([nf])
            e.faces(nsizes, nindices)
            e.end()
        for uvs in ([mesh.uvs] if mesh.uvs is not None else []) + list(mesh.more_uvs):
            uvs = np.asarray(uvs, dtype=np.float64)
            _need(uvs.shape == (nv, 2), f"{label}: uvs must be ({nv}, 2)")
            e.begin("MeshTextureCoords")
            e.dwords([nv])
            e.struct_array(uvs)
            e.end()
        if mesh.vertex_colors is not None:
            colors = np.asarray(mesh.vertex_colors, dtype=np.float64)
            _need(colors.shape == (nv, 4), f"{label}: vertex_colors must be ({nv}, 4)")
            e.begin("MeshVertexColors")
            e.dwords([nv])
            e.struct_array(np.concatenate([np.arange(nv, dtype=np.float64)[:, None], colors],
                                          axis=1), int_columns=1)
            e.end()
        if mesh.materials or mesh.material_indices is not None:
            mi = np.zeros(nf, np.int64) if mesh.material_indices is None else \
                np.asarray(mesh.material_indices, dtype=np.int64)
            _need(len(mi) == nf, f"{label}: material_indices must have one entry per face")
            _need(mi.size == 0 or (mi.min() >= 0 and mi.max() < len(mesh.materials)),
                  f"{label}: material index out of range")
            e.begin("MeshMaterialList")
            e.dwords([len(mesh.materials), nf])
            e.dword_array(mi)
            for mat in mesh.materials:
                self.material(mat)
            e.end()
        if mesh.duplicates is not None:
            dup = np.asarray(mesh.duplicates, dtype=np.int64)
            _need(len(dup) == nv and (nv == 0 or (dup.min() >= 0 and dup.max() < nv)),
                  f"{label}: duplicates must name one vertex of the mesh per vertex")
            e.begin("VertexDuplicationIndices")
            e.dwords([nv, len(np.unique(dup))])
            e.dword_array(dup)
            e.end()
        header = mesh.skin_header
        if header is None and mesh.skin_weights:
            header = _skin_header(mesh)
        if header is not None:
            e.begin("XSkinMeshHeader")
            e.dwords(list(header))
            e.end()
        for sw in mesh.skin_weights:
            vi = np.asarray(sw.vertex_indices, dtype=np.int64)
            w = np.asarray(sw.weights, dtype=np.float64)
            _need(len(vi) == len(w), f"{label}: skin weights {sw.frame_name!r}: "
                                     "indices and weights differ in length")
            _need(vi.size == 0 or (vi.min() >= 0 and vi.max() < nv),
                  f"{label}: skin weights {sw.frame_name!r}: vertex index out of range")
            e.begin("SkinWeights")
            e.string(self.name(sw.frame_name) or "")
            e.dwords([len(vi)])
            e.dword_array(vi)
            e.float_array(w)
            e.matrix(np.asarray(sw.matrix_offset, dtype=np.float64).reshape(16))
            e.end()
        if mesh.extra_streams:
            elements, dwords = encode_decl(mesh.extra_streams, nv)
            e.begin("DeclData")
            e.dwords([len(elements)])
            e.struct_array(elements, int_columns=4)
            e.dwords([len(dwords)])
            e.dword_array(dwords)
            e.end()
        e.end()

    def animation_set(self, aset: XAnimationSet) -> None:
        e = self.e
        e.begin("AnimationSet", aset.name)
        for anim in aset.animations:
            e.begin("Animation", anim.name)
            if anim.frame_name:
                e.reference(self.name(anim.frame_name))
            if anim.open_closed is not None or anim.position_quality is not None:
                e.begin("AnimationOptions")
                e.dwords([anim.open_closed or 0, anim.position_quality or 0])
                e.end()
            for key in anim.keys:
                values = np.asarray(key.values, dtype=np.float64)
                times = np.asarray(key.times, dtype=np.float64).reshape(-1)
                _need(values.ndim == 2 and len(values) == len(times),
                      f"animation {anim.name!r}: key values must be (K, n)")
                e.begin("AnimationKey")
                e.dwords([key.key_type, len(times)])
                e.timed_keys(times, values)
                e.end()
            e.end()
        e.end()


def _skin_header(mesh: XMesh) -> tuple[int, int, int]:
    nv = len(mesh.positions)
    per_vertex = np.zeros(nv, dtype=np.int64)
    for sw in mesh.skin_weights:
        np.add.at(per_vertex, np.asarray(sw.vertex_indices, dtype=np.int64), 1)
    max_vertex = int(per_vertex.max()) if nv else 0
    max_face = 0
    sizes = np.asarray(mesh.face_sizes, dtype=np.int64)
    if len(sizes):
        face_of = np.repeat(np.arange(len(sizes)), sizes)
        corners = np.asarray(mesh.face_indices, dtype=np.int64)
        for_face = np.zeros(len(sizes), dtype=np.int64)
        for sw in mesh.skin_weights:
            touched = np.zeros(nv, dtype=bool)
            touched[np.asarray(sw.vertex_indices, dtype=np.int64)] = True
            hit = np.zeros(len(sizes), dtype=bool)
            hit[face_of[touched[corners]]] = True
            for_face += hit
        max_face = int(for_face.max())
    return (max_vertex, max_face, len(mesh.skin_weights))
