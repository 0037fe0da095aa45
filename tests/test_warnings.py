# SPDX-License-Identifier: GPL-3.0-or-later
"""The one warnings channel (io/errors.Warnings): warnings, notes that need
no action, and one line per cause."""
from __future__ import annotations

from legacy_skin_io.io.errors import Warnings, group, note


def test_notes_stay_out_of_the_warnings():
    w = Warnings()
    w.append("texture gone.png not found")
    w.note("3 duplicate faces skipped")
    note(w, "2 degenerate faces skipped")
    assert list(w) == ["texture gone.png not found"]
    assert w.notes == ["3 duplicate faces skipped", "2 degenerate faces skipped"]
    plain: list[str] = []
    note(plain, "nothing to do")            # a plain list (tests, scripts) collects no notes
    assert plain == []


def test_one_line_per_cause_counts_and_names_its_items():
    w = Warnings()
    w.append("first")
    for i in range(12):
        w.group("SkinWeights name missing frames", f"j{i}", fix="check the exporter")
    w.group("SkinWeights name missing frames", "j3", fix="check the exporter")     # seen: not counted again
    w.append("last")
    assert len(w) == 3 and w[0] == "first" and w[2] == "last"
    assert w[1] == ("SkinWeights name missing frames (12): j0, j1, j2, j3, j4, j5, j6, j7 ...; "
                    "check the exporter")
    w.group("end joints without a bone", "Dummy01", note=True)
    w.group("end joints without a bone", "Dummy02", note=True)
    assert w.notes == ["end joints without a bone (2): Dummy01, Dummy02"] and len(w) == 3
    plain: list[str] = []
    group(plain, "cause", "a", fix="do this")
    group(plain, "cause", "b", note=True)
    assert plain == ["cause: a; do this"]


def test_channels_merge_with_their_notes_and_groups():
    a, b = Warnings(), Warnings()
    a.group("missing textures", "x.png")
    a.note("note a")
    b.append("b only")
    b.group("missing textures", "y.png")
    b.group("missing textures", "x.png")
    b.note("note b")
    a.extend(b)
    assert list(a) == ["missing textures (2): x.png, y.png", "b only"]
    assert a.notes == ["note a", "note b"]


def test_groups_respect_the_cap():
    w = Warnings(limit=2)
    w.append("a")
    w.append("b")
    w.group("late cause", "item")               # past the cap: not kept
    w.append("c")
    assert list(w) == ["a", "b", "... and 1 more warning(s)"]


def test_a_hostile_number_of_items_costs_a_counter():
    """200,000 findings of one cause: one line, counted, in linear time
    (the names kept are capped like the lines)."""
    w = Warnings(limit=100)
    for i in range(200_000):
        w.group("SkinWeights name missing frames", f"j{i}")
    assert len(w) == 1 and w[0].startswith("SkinWeights name missing frames (200000): j0, j1,")
    assert len(w._groups[("SkinWeights name missing frames", "", False)].seen) == 100
