# SPDX-License-Identifier: GPL-3.0-or-later
"""Reading the project's Markdown documents the way the docs tests need:
sections by heading, the tables in them, relative links and flags.

The user guide's options tables (``docs/user-guide.md``) follow one form,
which :func:`operator_tables` reads: a heading naming the operators it is
for as code (`` `import_scene.xfile` ``), then a table whose columns start
with Option (the UI label), Default and Formats. A Default cell is one value
for every format, or per format, ``RiTE: on; DirectX: off`` (a name that
begins the format's label). A Formats cell is ``all`` or the formats that
have the option, by such names, separated by commas."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
README = ROOT / "README.md"

_HEADING = re.compile(r"^(#{1,6})\s+(.*)$")
_IDNAME = re.compile(r"`([a-z_]+\.[a-z0-9_]+)`")
_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def markdown_files() -> list[Path]:
    """README.md and every Markdown file under docs/."""
    return [README, *sorted(DOCS.rglob("*.md"))]


def _strip_code_blocks(text: str) -> str:
    """``text`` with fenced code blocks blanked (their lines kept, so line numbers hold)."""
    out, fenced = [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            out.append("")
            continue
        out.append("" if fenced else line)
    return "\n".join(out)


def headings(text: str) -> list[tuple[int, int, str]]:
    """(line index, level, title) of every heading outside code blocks."""
    out = []
    for i, line in enumerate(_strip_code_blocks(text).splitlines()):
        m = _HEADING.match(line)
        if m:
            out.append((i, len(m.group(1)), m.group(2).strip()))
    return out


def slug(title: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation other than
    ``-`` and ``_`` dropped, spaces as ``-``."""
    text = re.sub(r"[^\w\- ]", "", title.lower().replace("`", ""))
    return text.replace(" ", "-")


def anchors(text: str) -> set[str]:
    """The anchors a document's headings make (a repeated one as ``name-1``, ...)."""
    seen: dict[str, int] = {}
    out = set()
    for _, _, title in headings(text):
        s = slug(title)
        n = seen.get(s, 0)
        out.add(s if n == 0 else f"{s}-{n}")
        seen[s] = n + 1
    return out


def links(text: str) -> list[tuple[int, str]]:
    """(line number, target) of every Markdown link and image outside code blocks and code spans."""
    out = []
    for i, line in enumerate(_strip_code_blocks(text).splitlines(), 1):
        line = re.sub(r"`[^`]*`", "", line)
        out += [(i, m.group(1)) for m in _LINK.finditer(line)]
    return out


def cells(row: str) -> list[str]:
    """The cells of a Markdown table row."""
    row = row.strip()
    return [c.strip() for c in row.strip("|").split("|")]


def plain_cell(text: str) -> str:
    """A cell without emphasis and code marks."""
    return re.sub(r"[`*]", "", text).strip()


def table_after(lines: list[str], start: int) -> list[list[str]]:
    """The rows (header first, the separator left out) of the first table after line ``start``."""
    i = start + 1
    while i < len(lines) and not lines[i].lstrip().startswith("|"):
        if _HEADING.match(lines[i]):
            return []
        i += 1
    rows = []
    while i < len(lines) and lines[i].lstrip().startswith("|"):
        row = cells(lines[i])
        if not all(re.fullmatch(r":?-+:?", c) for c in row):
            rows.append(row)
        i += 1
    return rows


def operator_tables(text: str) -> dict[tuple[str, ...], list[dict[str, str]]]:
    """The user guide's options tables: (the operators a heading names) ->
    its table's rows as {"Option": ..., "Default": ..., "Formats": ..., ...}."""
    lines = text.splitlines()
    out: dict[tuple[str, ...], list[dict[str, str]]] = {}
    for i, _, title in headings(text):
        ids = tuple(_IDNAME.findall(title))
        if not ids:
            continue
        rows = table_after(lines, i)
        if rows:
            header = [plain_cell(c) for c in rows[0]]
            out[ids] = [dict(zip(header, r)) for r in rows[1:]]
    return out


def per_format(cell: str, label: str) -> str | None:
    """The value a Default cell gives the format labelled ``label``
    (``RiTE: on; DirectX: off``, or one value for all), None if it names
    formats but not this one."""
    text = plain_cell(cell)
    parts = [p.strip() for p in text.split(";")]
    keyed = [p.split(":", 1) for p in parts if re.match(r"^[A-Za-z][\w .]*:\s", p)]
    if not keyed or len(keyed) != len(parts):
        return text
    for key, value in keyed:
        if label.startswith(key.strip()):
            return value.strip()
    return None


def formats_of(cell: str, labels: list[str]) -> list[str]:
    """The format labels a Formats cell names (``all``: every one of ``labels``)."""
    text = plain_cell(cell)
    if text.lower() == "all":
        return list(labels)
    names = [n.strip() for n in text.split(",") if n.strip()]
    return [lab for lab in labels if any(lab.startswith(n) for n in names)]


def sections_naming(text: str, word: str) -> str:
    """The text of every section (to the next heading of its level or
    above) whose heading names ``word`` as code (`` `convert` ``)."""
    lines = text.splitlines()
    hs = headings(text)
    out = []
    for k, (i, level, title) in enumerate(hs):
        if f"`{word}`" not in title:
            continue
        end = next((j for j, lv, _ in hs[k + 1:] if lv <= level), len(lines))
        out.append("\n".join(lines[i:end]))
    return "\n".join(out)


def mentions_flag(text: str, flag: str) -> bool:
    """Whether ``text`` names ``flag`` (``--weld``, ``-o``) as itself, not as part of a longer flag."""
    return re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", text) is not None
