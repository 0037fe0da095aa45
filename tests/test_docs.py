# SPDX-License-Identifier: GPL-3.0-or-later
"""The documents follow the code: every flag of every command-line
subcommand is in docs/command-line.md under that subcommand's heading,
every relative link in README.md and docs/ resolves (file and heading), and
the README stays a short front page whose first two commands are the main
job and the tests. (Every operator option in the user guide's tables:
tests/test_docs_blender.py.)"""
from __future__ import annotations

import argparse
import re
import shlex
from urllib.parse import unquote

import pytest
from docs_tables import DOCS, README, ROOT, anchors, links, markdown_files, mentions_flag, sections_naming

from legacy_skin_io.cli import build_parser

COMMAND_LINE = DOCS / "command-line.md"


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def _flags(parser: argparse.ArgumentParser) -> list[str]:
    """Every option string of a parser (hidden aliases too: a user may meet them in old scripts), but -h/--help."""
    return [s for a in parser._actions for s in a.option_strings if s not in ("-h", "--help")]


def test_every_subcommand_has_a_section():
    text = COMMAND_LINE.read_text(encoding="utf-8")
    missing = [name for name in _subcommands() if not sections_naming(text, name)]
    assert not missing, f"docs/command-line.md has no heading naming `{'`, `'.join(missing)}`"


@pytest.mark.parametrize("name", sorted(_subcommands()))
def test_every_flag_is_in_its_subcommands_section(name):
    text = sections_naming(COMMAND_LINE.read_text(encoding="utf-8"), name)
    flags = _flags(_subcommands()[name])
    assert flags, f"{name} has no flags?"
    missing = [f for f in flags if not mentions_flag(text, f)]
    assert not missing, f"docs/command-line.md, section `{name}`, does not name {', '.join(missing)}"


def test_a_flag_missing_from_a_section_is_found():
    """The check above can fail: a section without a flag, or naming only a longer flag, is caught."""
    assert mentions_flag("`--weld`/`--no-weld`", "--weld")
    assert not mentions_flag("`--no-weld`", "--weld")
    assert not mentions_flag("`--input-weld`", "--weld")
    assert not mentions_flag("`--weld-all`", "--weld")
    assert sections_naming("## `a`\n--x\n## `b`\n--y\n", "a") == "## `a`\n--x"


def _targets():
    for path in markdown_files():
        for line, target in links(path.read_text(encoding="utf-8")):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):         # https:, mailto:
                continue
            yield path, line, target


def test_there_are_documents_and_links():
    assert (DOCS / "user-guide.md").is_file() and COMMAND_LINE.is_file()
    assert len(list(_targets())) > 20


def test_every_relative_link_resolves():
    bad = []
    for path, line, target in _targets():
        file_part, _, anchor = target.partition("#")
        dest = (path.parent / unquote(file_part)).resolve() if file_part else path
        where = f"{path.relative_to(ROOT)}:{line}: {target}"
        if not dest.exists():
            bad.append(f"{where} (no such file)")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest.read_text(encoding="utf-8")):
            bad.append(f"{where} (no such heading)")
    assert not bad, "links that do not resolve:\n" + "\n".join(bad)


def _commands(text: str) -> list[str]:
    """The commands of the README's code blocks, in order (comments and prompts dropped)."""
    out, fenced = [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            cmd = line.split(" #", 1)[0].strip()
            if cmd and not cmd.startswith("#"):
                out.append(cmd)
    return out


def test_the_readme_is_short_and_opens_with_the_two_commands():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 150
    first = [shlex.split(c) for c in _commands(text)[:2]]
    assert first[0] == ["python3.11", "tools/run.py", "demo"], first[0]
    assert first[1][:3] == ["python3.11", "tools/run.py", "test"], first[1]
