# SPDX-License-Identifier: GPL-3.0-or-later
"""The user guide's options tables follow the operators the built extension
registers: every option a user sees (a property not HIDDEN) of every
import and export operator, for every format, is a row of the table under
the heading naming that operator in docs/user-guide.md, with its UI label
and its default; and no row names an option the operator does not have.
Driven through the installed zip (conftest's ``ext``), as a user has it."""
from __future__ import annotations

import pytest
from docs_tables import DOCS, formats_of, operator_tables, per_format, plain_cell

USER_GUIDE = DOCS / "user-guide.md"
KINDS = ("import_scene", "import_anim", "export_scene", "export_anim")
#: the file browser's own field, not an option of the operator
NOT_OPTIONS = {"filepath"}


def _operators(bpy, ext) -> list[tuple[str, object]]:
    """(idname, format) of every operator the extension registers for its formats."""
    out = []
    for fmt in ext.io.formats.FORMATS:
        for kind in KINDS:
            cls = getattr(bpy.types, f"{kind.upper()}_OT_{fmt.id}", None)
            # Blender's own glTF add-on has import_scene.gltf: only the extension's operators count
            if cls is not None and cls.__module__.startswith(ext.__name__):
                out.append((f"{kind}.{fmt.id}", fmt))
    return out


def _options(bpy, idname: str) -> list:
    mod, name = idname.split(".")
    props = getattr(getattr(bpy.ops, mod), name).get_rna_type().properties
    return [p for p in props if p.identifier != "rna_type" and not p.is_hidden and p.identifier not in NOT_OPTIONS]


def shown(prop) -> str:
    """A property's default as the tables write it: on/off, an enum item's
    UI label, a number as ``%g``, ``empty`` for an empty text."""
    if prop.type == "BOOLEAN":
        return "on" if prop.default else "off"
    if prop.type == "ENUM":
        return next(i.name for i in prop.enum_items if i.identifier == prop.default)
    if prop.type in ("FLOAT", "INT"):
        return f"{prop.default:g}"
    if prop.type == "STRING":
        return prop.default or "empty"
    raise AssertionError(f"{prop.identifier}: a {prop.type} property, which the tables do not cover")


@pytest.fixture(scope="module")
def tables():
    return operator_tables(USER_GUIDE.read_text(encoding="utf-8"))


def _table(tables, idname):
    found = [rows for ids, rows in tables.items() if idname in ids]
    assert found, f"docs/user-guide.md has no heading naming `{idname}` with an options table after it"
    return found[0]


def test_every_option_of_every_operator_is_in_its_table_with_its_default(ext, bpy, tables):
    ops = _operators(bpy, ext)
    assert {i.split(".")[0] for i, _ in ops} >= {"import_scene", "import_anim", "export_scene"}
    labels = [f.label for f in ext.io.formats.FORMATS]
    problems = []
    for idname, fmt in ops:
        rows = {plain_cell(r.get("Option", "")): r for r in _table(tables, idname)}
        for prop in _options(bpy, idname):
            row = rows.get(prop.name)
            if row is None:
                problems.append(f"{idname}: no row for {prop.name!r} ({prop.identifier})")
                continue
            if fmt.label not in formats_of(row.get("Formats", "all"), labels):
                problems.append(f"{idname}: {prop.name!r}: the Formats cell {row.get('Formats')!r} leaves out "
                                f"{fmt.label}")
            documented = per_format(row.get("Default", ""), fmt.label)
            if documented != shown(prop):
                problems.append(f"{idname}: {prop.name!r}: default {shown(prop)!r}, the table says {documented!r}")
    assert not problems, "docs/user-guide.md's options tables:\n" + "\n".join(problems)


def test_no_row_names_an_option_its_operators_do_not_have(ext, bpy, tables):
    ops = dict(_operators(bpy, ext))
    labels = [f.label for f in ext.io.formats.FORMATS]
    problems = []
    for ids, rows in tables.items():
        mine = [i for i in ids if i in ops]
        for row in rows:
            name = plain_cell(row.get("Option", ""))
            has = [i for i in mine if name in {p.name for p in _options(bpy, i)}]
            if not has:
                problems.append(f"{', '.join(ids)}: {name!r} is an option of none of them")
            for i in mine:
                if ops[i].label in formats_of(row.get("Formats", "all"), labels) and i not in has:
                    problems.append(f"{i}: {name!r}: the table says {ops[i].label} has it; the operator has not")
    assert not problems, "docs/user-guide.md's options tables:\n" + "\n".join(problems)


def test_the_table_reader_sees_a_wrong_default():
    """The check can fail: a table whose default differs is read as such."""
    text = ("## Import (`import_scene.a`)\n\n| Option | Default | Formats | What |\n|---|---|---|---|\n"
            "| *Scale* | RiTE: 1; DirectX: 2 | all | x |\n")
    (row,) = operator_tables(text)[("import_scene.a",)]
    assert plain_cell(row["Option"]) == "Scale"
    assert per_format(row["Default"], "RiTE Model") == "1"
    assert per_format(row["Default"], "DirectX") == "2"
    assert per_format(row["Default"], "glTF 2.0") is None
    assert formats_of("DirectX", ["RiTE Model", "DirectX"]) == ["DirectX"]
