# SPDX-License-Identifier: GPL-3.0-or-later
"""``verify --report DIR``, run as a user runs it (a subprocess): the page
holds the verdicts the command printed, a plot per animation drawn from
the errors it printed, the rendered frames as images beside it, and names
no network resource (it opens offline)."""
from __future__ import annotations

import re
import struct
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

from conftest import DATA, ROOT

CHARACTER = DATA / "x" / "real" / "minetest__minetest_game" / "character.x"   # 192 vertices, 2 sets


class Page(HTMLParser):
    """The elements of the report (tag, attributes, the text inside) in order."""

    def __init__(self):
        super().__init__()
        self.elements: list[tuple[str, dict, list[str]]] = []
        self.open: list[int] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, dict(attrs), []))
        if tag not in ("img", "meta", "line", "circle", "rect", "polyline", "br"):
            self.open.append(len(self.elements) - 1)

    def handle_startendtag(self, tag, attrs):
        self.elements.append((tag, dict(attrs), []))

    def handle_endtag(self, tag):
        while self.open:
            i = self.open.pop()
            if self.elements[i][0] == tag:
                break

    def handle_data(self, data):
        self.text.append(data)
        for i in self.open:
            self.elements[i][2].append(data)

    def all(self, tag, cls=None):
        return [e for e in self.elements if e[0] == tag and (cls is None or cls in e[1].get("class", "").split())]


def _sections(page: Page):
    """[(title, badge word)] per section, from the h2 headings."""
    return [("".join(text).replace(" PASS", "").replace(" FAIL", "").strip(), "".join(text).split()[-1])
            for tag, _, text in page.all("h2")]


def _points(attrs) -> list[tuple[float, float]]:
    return [tuple(map(float, p.split(","))) for p in attrs["points"].split()]


def _png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", path
    return struct.unpack(">II", head[16:24])


def test_report_holds_the_plots_pictures_and_verdicts_offline(tmp_path):
    out = tmp_path / "report"
    r = subprocess.run([sys.executable, "-m", "legacy_skin_io", "verify", str(CHARACTER), "--tolerance", "1e-12",
                        "--frames", "--report", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert r.returncode == 1, (r.stdout[-2000:], r.stderr[-3000:])    # over a tolerance of 1e-12: FAIL, exit 1
    assert "Traceback" not in r.stderr
    index = out / "index.html"
    assert f"wrote {index}" in r.stdout.splitlines()
    # what the command printed: the verdict, and per animation its summary and every frame's row
    verdict, = [ln for ln in r.stdout.splitlines() if ln.startswith(("PASS", "FAIL"))]
    printed = {}
    title = None
    for line in r.stdout.splitlines():
        if re.match(r"^'.*': frames \S+$", line):
            title, printed[line] = line, []
        elif title and re.match(r"^\s+-?\d", line):
            printed[title].append([float(v) for v in line.split()])
    assert len(printed) == 2

    text = index.read_text(encoding="utf-8")
    page = Page()
    page.feed(text)
    # the title, the verdict at the top as printed; the files, the Blender version
    assert ["".join(t) for _, _, t in page.all("h1")] == [f"verify {CHARACTER.name}"]
    assert ["".join(t) for _, _, t in page.all("title")] == [f"verify {CHARACTER.name}"]
    top, = page.all("div", "verdict")
    assert "FAIL" in top[1]["class"].split() and verdict in "".join(top[2])
    body = " ".join(page.text)
    assert str(CHARACTER.resolve()) in body
    assert re.search(r"Blender\s+\d+\.\d+", body)
    # one section per animation, in the printed order, each with its verdict
    sections = _sections(page)
    assert [t for t, _ in sections] == list(printed)
    assert [w for _, w in sections] == ["FAIL", "FAIL"]
    summaries = [ln for ln in r.stdout.splitlines() if ln.endswith(("PASS", "FAIL")) and "checked" in ln]
    assert all(s in body for s in summaries)
    normals = [ln for ln in r.stdout.splitlines() if ln.startswith("normals (information")]
    assert len(normals) == 2 and all(n in body for n in normals)        # the information, per animation
    # the plots: one svg each, a polyline of the worst and of the mean error per frame (one point a
    # frame, in frame order), the worst frame marked where the printed table has its largest error,
    # the tolerance drawn
    svgs = page.all("svg", "plot")
    assert len(svgs) == 2
    worst_lines, mean_lines = page.all("polyline", "worst"), page.all("polyline", "mean")
    marks, tolerances = page.all("circle", "worst-frame"), page.all("line", "tolerance")
    assert len(worst_lines) == len(mean_lines) == len(marks) == len(tolerances) == 2
    for rows, worst, mean, mark, tol in zip(printed.values(), worst_lines, mean_lines, marks, tolerances):
        wp, mp = _points(worst[1]), _points(mean[1])
        assert len(wp) == len(mp) == len(rows)
        xs = [x for x, _ in wp]
        assert xs == sorted(xs) and [x for x, _ in mp] == xs
        # log scale, higher error drawn higher (smaller y): the mean never above the worst
        assert all(m[1] >= w[1] - 1e-6 for w, m in zip(wp, mp))
        top_error = max(row[1] for row in rows)
        k = [round(x, 1) for x, _ in wp].index(round(float(mark[1]["cx"]), 1))
        assert rows[k][1] == top_error                      # marked at a frame with the largest error
        assert abs(float(mark[1]["cy"]) - wp[k][1]) < 0.2
        assert abs(min(y for _, y in wp) - wp[k][1]) < 0.2  # and it is the highest point of the line
        # the tolerance (1e-12 of the model size) is below every error: its line is lower than the curves
        assert all(y < float(tol[1]["y1"]) for _, y in mp)
    # the pictures: one strip per animation, files beside the page (or data: URIs), real PNGs of
    # the first, worst and last frames (each once), 360 x 300 per frame
    imgs = page.all("img")
    assert len(imgs) == 2
    for (_, attrs, _), rows in zip(imgs, printed.values()):
        src = attrs["src"]
        assert src.startswith("data:image/png;base64,") or (out / src).is_file(), src
        if not src.startswith("data:"):
            frames = {rows[0][0], rows[-1][0], rows[[row[1] for row in rows].index(max(row[1] for row in rows))][0]}
            assert _png_size(out / src) == (360 * len(frames), 300)
    # offline: no network resource anywhere, links only to files beside it or anchors in it
    assert not re.search(r"(?i)https?:|ftp:|//[a-z0-9]", text)
    assert not page.all("script") and not page.all("link") and "@import" not in text and "url(" not in text
    for tag, attrs, _ in page.elements:
        for key in ("src", "href"):
            if key in attrs:
                v = attrs[key]
                assert v.startswith(("#", "data:")) or (out / v).is_file(), (tag, v)


def test_report_folder_that_cannot_be_made_is_a_clean_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("a file, not a folder\n")
    r = subprocess.run([sys.executable, "-m", "legacy_skin_io", "verify", str(DATA / "x" / "assimp" / "test.x"),
                        "--report", str(blocker / "report")], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr[-2000:]
    errors = [ln for ln in r.stderr.splitlines() if ln.startswith("error: ")]
    assert errors == [f"error: {blocker / 'report'}: cannot make the report folder (Not a directory)"]
    assert r.stdout == ""           # refused before any work
