# SPDX-License-Identifier: GPL-3.0-or-later
"""Token stream -> XFile model (the same code for text and binary data): the
top level of the file, Frame and AnimTicksPerSecond objects, and the
``{ Name }`` references resolved once the whole file is read.

The other templates are read by :mod:`.mesh_templates` and
:mod:`.anim_templates` on the generic machinery of :mod:`.objects`; what a
hostile file may make the parser build is bounded by :mod:`.limits`.
"""
from __future__ import annotations

from ..errors import note
from . import limits
from .anim_templates import AnimationTemplates
from .key_tables import KeyTables
from .mesh_templates import MeshTemplates
from .model import XFile, XFrame, XMaterial, XMesh
from .objects import _label, _Ref
from .tokens import CLOSE, EOF, NAME, OPEN, TokenStream


class Parser(MeshTemplates, AnimationTemplates):
    def __init__(self, tokens: TokenStream, xfile: XFile, is_text: bool):
        super().__init__(tokens, xfile, is_text)
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
        self.in_animation = 0  # > 0 while parsing a Frame object inside an Animation
        self.key_tables = KeyTables()
        self.extra_braces: list[str] = []  # where each '}' closing nothing at the top level lies

    # ------------------------------------------------------------------
    # the file
    def parse(self) -> XFile:
        top_frames: list[XFrame] = []
        try:
            self.objects_at_top(top_frames)
        except Exception:
            self.check_keys()  # an earlier key's error comes first
            raise
        self.check_keys()
        self.skipped_keys()
        self.resolve(top_frames)
        for ident, count in sorted(self.unknown.items()):
            if ident in self.declared or ident in limits.UNUSED_TEMPLATES:   # known, nothing to import
                note(self.xf.warnings, f"skipped {count} '{ident}' object(s) (nothing in them is imported)")
            else:
                self.warn(f"skipped {count} unknown '{ident}' object(s)")
        for what, count in sorted(self.strays.items()):
            self.warn(f"{what}: ignored {count} unexpected value token(s)")
        if self.unclosed:
            more = len(self.unclosed) - 1
            self.warn(self.unclosed[0] + (f" (and {more} more such object{'s' if more > 1 else ''})" if more else ""))
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
                    self.loose_material("top level")
                elif ident == "AnimTicksPerSecond":
                    self.ticks(mark)
                elif ident == "AnimationSet":
                    self.xf.animation_sets.append(self.animation_set())
                else:
                    self.unknown_object(ident)
            elif k == OPEN:
                ref = self.reference()
                self.warn(f"top-level reference {{ {ref.name} }} ignored")
            elif k == CLOSE:
                # one '}' too many (assimp and Irrlicht read past it): nothing is open to close
                self.extra_braces.append(self.at(t.here()))
                t.advance()
            else:
                raise t.error(f"unexpected {t.describe()} at top level")
        if self.extra_braces:
            more = f" (and {len(self.extra_braces) - 1} more)" if len(self.extra_braces) > 1 else ""
            self.warn(f"{self.extra_braces[0]}: a '}}' that closes nothing, ignored{more}")

    # ------------------------------------------------------------------
    # frames
    def frame(self) -> XFrame:
        mark = self.t.here()
        name = self.begin("Frame")
        what = _label("Frame", name)
        self.enter(what, mark)
        if len(self.frames) >= limits.MAX_FRAMES:
            raise self.t.error(f"{what}: more than {limits.MAX_FRAMES} frames", mark)
        self.count(what, mark)
        frame = XFrame(name)
        self.frames.append(frame)
        self.frame_marks[id(frame)] = mark
        if name is not None:
            self.frames_by_name.setdefault(name, frame)
        for ident, mark in self.children(what, "Frame"):
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
            elif ident == "Material":     # (Blitz3D): found by name wherever it is declared
                self.loose_material(what)
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
    # references
    def resolve(self, top_frames: list[XFrame]) -> None:
        """Attach the ``{ Name }`` references of frames, in file order.

        A frame has one parent: a reference to a frame that already has one
        (nested in another frame, or referenced before) is an error, so the
        hierarchy stays a tree and never expands. A mesh may be placed more
        than once (instances), within limits.MAX_INSTANCED extra vertices + corners.
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
                    if instanced > limits.MAX_INSTANCED:
                        raise t.error(f"{owner}: reference {{ {ref.name!r} }}: mesh instances "
                                      f"add more than {limits.MAX_INSTANCED} vertices and corners",
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
        """No frame may contain itself, nor lie deeper than limits.MAX_FRAME_DEPTH.

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
                if d > limits.MAX_FRAME_DEPTH:
                    _parent, mark, _via = parents[id(g)]
                    raise self.t.error(f"{_label('Frame', g.name)} lies {d} levels deep in the "
                                       f"frame hierarchy (the limit is {limits.MAX_FRAME_DEPTH})", mark)

    def cycle_error(self, cycle: list[XFrame]):
        """Raise at the first (in file order) reference closing a frame cycle."""
        links = [(self.parents[id(f)][1], f) for f in cycle if self.parents[id(f)][2]]
        mark, frame = min(links, key=lambda link: link[0])
        raise self.t.error(f"frame {frame.name!r} contains itself through a reference", mark)
