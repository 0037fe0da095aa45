# SPDX-License-Identifier: GPL-3.0-or-later
"""What a .X file may make the parser build: hostile input is refused
before it sizes anything. Every count is checked against what the rest of
the file could hold, every number that feeds geometry, transforms or
animation must be a finite 32-bit float (per-vertex UVs, normals and colours
that are not are set to 0 with a warning), and these limits bound what a
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
- ``MAX_WARNINGS``: warnings kept (the rest are counted in a last warning).
- ``key_tables.MAX_KEY_TIME``: animation key times lie in
  [0, MAX_KEY_TIME) ticks (a key outside, e.g. at -1, is skipped with a warning).

The parser reads them as ``limits.NAME`` at the time of use.
"""
from __future__ import annotations

MAX_DEPTH = 256             # syntactic nesting (recursion depth of the parser)
MAX_FRAME_DEPTH = 10_000    # levels of the frame tree (real rigs: < 100)
MAX_FRAMES = 100_000        # Frame objects (real files: < 1,000)
MAX_OBJECTS = 200_000       # data objects, ~1 KB each at most (real files: < 1,000)
MAX_MATERIALS = 32_767      # entries of one MeshMaterialList
MAX_INSTANCED = 1 << 24     # vertices + corners of repeated { Mesh } placements
MAX_NAME_LENGTH = 1024      # characters of a name or string (Windows paths: < 260)
MAX_WARNINGS = 1000
# Known objects whose content we do not need: skipped without a warning.
IGNORED = {"Header", "MeshFaceWraps", "ObjectMatrixComment"}
# Templates of DirectX (D3DX's own, the DirectX Content Tools') that hold
# nothing an import uses (effects, progressive-mesh data, patches, user
# key/value pairs, camera and mesh-name annotations): skipped with a note, as
# are objects of any template the file declares itself; other unknown objects
# are a warning.
UNUSED_TEMPLATES = {"KeyValuePair", "EffectInstance", "EffectParamFloats", "EffectParamString",
                    "EffectParamDWord", "FrameCamera", "FrameMeshName", "PMInfo", "PMAttributeRange",
                    "PMVSplitRecord", "Patch", "PatchMesh", "PatchMesh9", "CompressedAnimationSet"}
