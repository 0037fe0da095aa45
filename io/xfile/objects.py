# SPDX-License-Identifier: GPL-3.0-or-later
"""The generic object machinery of the .X parser (the same code for text and
binary tokens): object headers and bodies, child objects and ``{ Name }``
references, names and strings within ``limits``, unknown objects and
templates skipped, float checks (per-vertex data that is not finite set to
0 with a warning), warnings, and a missing closing brace closed where an
object that cannot lie inside (``PLACES``) begins, on a second reading. The templates the parser knows
are read by :mod:`.mesh_templates`, :mod:`.anim_templates` and
:mod:`.parser` (frames, the whole file)."""
from __future__ import annotations

import math
from collections import Counter

import numpy as np

from . import limits
from .key_tables import FLOAT32_MAX
from .model import XFile
from .tokens import CLOSE, EOF, GUID, NAME, NUM, OPEN, TokenStream


class _Ref:
    """A ``{ Name }`` reference waiting to be resolved after the whole file is read."""

    __slots__ = ("name", "mark")

    def __init__(self, name, mark):
        self.name = name
        self.mark = mark


def _label(kind: str, name: str | None) -> str:
    return f"{kind} {name!r}" if name else kind


#: Where an object of a known template may lie ("": the top level), for a file
#: whose braces do not balance (:attr:`ObjectReader.recover`): an object found
#: elsewhere closes the object it was found in. The templates that hold data
#: and no objects (MeshNormals, AnimationKey, ...) may hold none of these, nor
#: a reference; other objects may lie anywhere.
PLACES: dict[str, frozenset[str]] = {
    name: frozenset(places) for name, places in {
        "template": ("", "Frame", "Mesh", "MeshMaterialList", "Material", "AnimationSet", "Animation"),
        "Frame": ("", "Frame", "Animation"),
        "Mesh": ("", "Frame"),
        "Material": ("", "Frame", "Mesh", "MeshMaterialList"),
        "AnimationSet": ("",),
        "AnimTicksPerSecond": ("",),
        "Animation": ("AnimationSet",),
        "AnimationKey": ("Animation",),
        "AnimationOptions": ("Animation",),
        "FrameTransformMatrix": ("Frame",),
        "TextureFilename": ("Material",),
        "TextureFileName": ("Material",),
        **{name: ("Mesh",) for name in ("MeshNormals", "MeshTextureCoords", "MeshVertexColors", "MeshMaterialList",
                                        "SkinWeights", "XSkinMeshHeader", "DeclData", "FVFData",
                                        "VertexDuplicationIndices", "MeshFaceWraps")},
    }.items()}


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



class ObjectReader:
    """Reads objects from a token stream into an XFile: the parts every
    template shares."""

    def __init__(self, tokens: TokenStream, xfile: XFile, is_text: bool):
        self.t = tokens
        self.xf = xfile
        self.is_text = is_text
        self.unknown: Counter[str] = Counter()   # unknown object name -> count (one warning each)
        self.declared: set[str] = set()          # the templates the file declares
        self.strays: Counter[str] = Counter()    # object -> value tokens found where objects go
        self.depth = 0
        self.objects = 0
        #: a second reading of a file whose braces do not balance (reader.py):
        #: an object found where it cannot lie (PLACES) closes the object it is
        #: in, whose '}' is taken to be missing; each such close is in ``unclosed``
        self.recover = False
        self.unclosed: list[str] = []
        self.misplaced = False      # an object was found where it cannot lie (recovery could differ)

    def warn(self, message: str) -> None:
        self.xf.warnings.append(message)      # the channel keeps MAX_WARNINGS and counts the rest

    def count(self, what: str, mark, n: int = 1) -> None:
        """Account for ``n`` more objects built from the file (limits.MAX_OBJECTS)."""
        self.objects += n
        if self.objects > limits.MAX_OBJECTS:
            raise self.t.error(f"{what}: the file holds more than {limits.MAX_OBJECTS} objects", mark)

    def word(self) -> str:
        """The current NAME (or NUM, in text) as a name, at most limits.MAX_NAME_LENGTH long."""
        mark = self.t.here()
        word = self.t.word()
        if len(word) > limits.MAX_NAME_LENGTH:
            self.long_name(word, mark)
        return word

    def long_name(self, word: str, mark):
        raise self.t.error(f"name of {len(word)} characters (the limit is "
                           f"{limits.MAX_NAME_LENGTH}): {word[:40]!r}...", mark)

    def string(self, what: str) -> str:
        mark = self.t.here()
        value = self.t.string(what)
        if len(value) > limits.MAX_NAME_LENGTH:
            raise self.t.error(f"{what}: string of {len(value)} characters (the limit is "
                               f"{limits.MAX_NAME_LENGTH}): {value[:40]!r}...", mark)
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

    def children(self, what: str, template: str = ""):
        """Yield (identifier, marker) for each child object, or (None, _Ref) for a
        reference, until the closing brace (consumed). ``template``: the
        object's own (when :attr:`recover`, an object that cannot lie in it
        ends it instead, its closing brace taken to be missing)."""
        t = self.t
        while True:
            k = t.kind()
            if k == CLOSE:
                t.advance()
                return
            if k == NAME:
                mark = t.here()
                ident = t.word()
                if len(ident) > limits.MAX_NAME_LENGTH:
                    self.long_name(ident, mark)
                if template and template not in PLACES.get(ident, (template,)):
                    self.misplaced = True
                    if self.recover:
                        after = t.here()
                        t.reset(mark)
                        if self.starts_object():
                            self.missing_brace(what, mark, inside=True)
                            return
                        t.reset(after)
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
        """Skip whatever children remain in the current object (one of the
        templates that hold data only; when :attr:`recover`, an object or a
        reference ends it instead, its closing brace taken to be missing)."""
        t = self.t
        k = t.kind()
        if k == CLOSE:  # (the usual case, without the generator)
            t.advance()
            return
        self.misplaced = True       # (an object or a reference in a template that holds data only)
        if self.recover and (k == OPEN or (k == NAME and self.starts_object())):
            self.missing_brace(what, t.here(), inside=False)
            return
        for ident, _ref in self.children(what):
            if ident is not None:
                self.unknown_object(ident)

    def starts_object(self) -> bool:
        """Does an object (identifier, optional name, '{') start here? (The
        stream is left where it is.)"""
        t = self.t
        mark = t.here()
        t.advance()
        k = t.kind()
        if k == NAME or (k == NUM and self.is_text):
            t.advance()
        starts = t.kind() == OPEN
        t.reset(mark)
        return starts

    def missing_brace(self, what: str, mark, inside: bool) -> None:
        """When :attr:`recover`: the object ``what`` ends before the object or
        reference at ``mark`` (which cannot lie inside it): its closing brace is
        taken to be missing (recorded in :attr:`unclosed`); the stream is left
        at ``mark``, for the objects around it."""
        t = self.t
        t.reset(mark)
        shown = "a reference" if t.kind() == OPEN else repr(t.word())
        t.reset(mark)
        self.unclosed.append(f"{what}{' (or an object inside it)' if inside else ''} has no closing '}}': closed at "
                             f"{self.at(mark)}, before {shown} (which cannot lie inside it)")

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
        if ident not in limits.IGNORED:
            self.unknown[ident] += 1

    def skip_template(self) -> None:
        t = self.t
        if t.kind() == NAME:
            self.declared.add(t.word())
        t.expect(OPEN, "template")
        t.skip_block()

    def enter(self, what: str, mark) -> None:
        self.depth += 1
        if self.depth > limits.MAX_DEPTH:
            raise self.t.error(f"{what}: objects nested deeper than {limits.MAX_DEPTH} levels", mark)

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

    def at(self, mark) -> str:
        """Where a marker lies, for a warning: "line 12" (text) or "offset 345" (binary)."""
        return ", ".join(f"{key} {value}" for key, value in self.t.position(mark).items()) + self.t.where_note

    def finite_or_zero(self, values: np.ndarray, what: str, kind: str, rows: tuple[str, str],
                       mark_of) -> np.ndarray:
        """``values`` (N, k) with every value that is not a finite 32-bit float
        (NaN, infinite, beyond float32) set to 0, and one warning naming
        ``what``, the count of such values and of their rows (``rows``: the
        word for one row and for several), and where the
        first lies (``mark_of(row, column)``: its marker). For per-vertex data
        a blemish in a real file (UVs, normals, colours: Direct3D draws the
        mesh all the same), not a reason to refuse it; positions, matrices and
        keys stay errors (:meth:`check_floats`)."""
        bad = ~(np.abs(values) <= FLOAT32_MAX)      # NaN too
        if not bad.any():
            return values
        n = int(bad.sum())
        r = int(bad.any(axis=1).sum())
        row, col = (int(x) for x in np.argwhere(bad)[0])
        self.warn(f"{what}: {n} {kind} value{'s were' if n != 1 else ' was'} not finite ({r} "
                  f"{rows[r != 1]}, the first at {self.at(mark_of(row, col))}), set to 0")
        values = values.copy()
        values[bad] = 0.0
        return values

    def read_matrix(self, what: str) -> np.ndarray:
        start = self.t.here()
        values = self.t.read_floats(16, what)
        self.check_floats(values, start, what)
        return values.reshape(4, 4)
