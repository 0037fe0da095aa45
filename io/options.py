# SPDX-License-Identifier: GPL-3.0-or-later
"""A format's own options, as specs (``io/<format>/options.py`` lists them).

One :class:`Option` is all the extension needs to offer an option
everywhere: the operators draw it as a property (``operators/ops.py``), the
command line (``import``, ``verify``, ``export``) and ``convert`` as a flag
(:func:`add_flags`, :func:`given`), and every call through the registry
checks the names and values it gets (:func:`check`). Nothing else is
written by hand for an option: a spec added to a format's ``options.py``
appears in the operator, the command line and ``convert``.
"""
from __future__ import annotations

import argparse
import math
import os
import re
from dataclasses import dataclass

from .errors import FormatError

_FLAG = re.compile(r"--[a-z0-9]+(-[a-z0-9]+)*\Z")


class OptionError(FormatError):
    """An option a format does not have, or a value it does not take."""

    def _format(self) -> str:
        return super()._format() if self.path else self.message


@dataclass(frozen=True)
class Option:
    """One option of a format's import, animation import or export.

    ``id`` is the keyword the adapter function takes (and the operator
    property's name); the kind follows from ``items`` (an enum: (value,
    label, description) each, e.g. a first item ("AUTO", "Automatic", ...)
    as the default) or else from the type of ``default`` (bool, int,
    float, or str: a file path, "" for none). ``panel`` is the operator
    section it is drawn in ("Transform", "Armature", "Animation", "Include",
    "File"; another name gets a section of its own); ``enabled_by`` the id
    of the switch that enables it there, if any. ``flags`` are its
    command-line flags, the first one the main one (default: ``--`` and the
    id with dashes); ``aliases`` more command-line spellings of enum values,
    as (spelling, value) pairs. ``old_flags`` are former spellings of the
    main flag, still accepted but not listed by ``--help`` (whose text of
    the main flag names them); for a switch, ``old_off_flags`` former
    spellings that turn it off.
    """

    id: str
    name: str
    description: str
    default: bool | int | float | str
    items: tuple[tuple[str, str, str], ...] = ()
    min: float | None = None
    max: float | None = None
    panel: str = ""
    flags: tuple[str, ...] = ()
    aliases: tuple[tuple[str, str], ...] = ()
    #: ``convert`` offers it under its own flags too (not only ``--input-...``): an input
    #: option no output format has
    unprefixed: bool = False
    enabled_by: str = ""
    old_flags: tuple[str, ...] = ()
    old_off_flags: tuple[str, ...] = ()

    def __post_init__(self):
        if not self.id.isidentifier():
            raise ValueError(f"option id {self.id!r} is not an identifier")
        if self.items and self.default not in self.values:
            raise ValueError(f"option {self.id!r}: default {self.default!r} is not one of its items")
        if self.old_off_flags and self.kind != "bool":
            raise ValueError(f"option {self.id!r}: only a switch has flags that turn it off")
        for f in self.cli_flags + self.old_flags + self.old_off_flags:
            if not _FLAG.match(f):
                raise ValueError(f"option {self.id!r}: flag {f!r} is not of the form --lower-case-words")

    @property
    def kind(self) -> str:
        """"enum", "bool", "int", "float" or "path"."""
        if self.items:
            return "enum"
        if isinstance(self.default, bool):
            return "bool"
        if isinstance(self.default, str):
            return "path"
        return "int" if isinstance(self.default, int) else "float"

    @property
    def values(self) -> tuple[str, ...]:
        return tuple(i[0] for i in self.items)

    @property
    def cli_flags(self) -> tuple[str, ...]:
        return self.flags or ("--" + self.id.replace("_", "-"),)

    def value(self, v, what: str = ""):
        """``v`` as this option's value (an enum's item, a number in range,
        a bool); raises :class:`OptionError` naming ``what`` (default: the
        option's name) otherwise."""
        what = what or self.name
        kind = self.kind
        if kind == "enum":
            text = str(v)
            spelled = {val.lower(): val for val in self.values}
            spelled.update((s.lower(), val) for s, val in self.aliases)
            if text.lower() not in spelled:
                raise OptionError(f"{what}: {text!r} is not one of {', '.join(self.choices)}")
            return spelled[text.lower()]
        if kind == "path":
            if not isinstance(v, (str, os.PathLike)) or "\0" in str(v):
                raise OptionError(f"{what}: {v!r} is not a file path")
            return str(v)
        if kind == "bool":
            if not isinstance(v, (bool, int)):
                raise OptionError(f"{what}: {v!r} is not true or false")
            return bool(v)
        try:
            x = float(v)
        except (TypeError, ValueError):
            raise OptionError(f"{what}: {v!r} is not a number") from None
        if kind == "int":
            if not x.is_integer():
                raise OptionError(f"{what}: {v!r} is not a whole number")
            x = int(x)
        elif x != x:
            raise OptionError(f"{what}: {v!r} is not a number")
        elif not math.isfinite(x):
            raise OptionError(f"{what}: {v!r} is not a finite number")
        if self.min is not None and x < self.min:
            raise OptionError(f"{what} must be at least {self.min:g}, not {v}")
        if self.max is not None and x > self.max:
            raise OptionError(f"{what} must be at most {self.max:g}, not {v}")
        return x

    @property
    def choices(self) -> tuple[str, ...]:
        """What the command line accepts for an enum (values, then aliases)."""
        return self.values + tuple(s for s, _ in self.aliases)


#: The importers' switch between the automatic axes and the Forward/Up
#: options (as Blender's FBX importer has it). A format lists it in its
#: ``IMPORT_OPTIONS`` (with its own default) when its reader takes
#: :class:`..scene.orientation.AutoAxes`; :meth:`.formats.Format.read_scene`
#: turns it into the axes the reader gets (the reader never sees it).
MANUAL_ORIENTATION = Option(
    "manual_orientation", "Manual Orientation",
    "Use the Forward and Up axes below (off: up is decided from the file's data, e.g. a character's legs "
    "below its hips, and the import summary says which axis it is)",
    False, panel="Transform")


def check(specs, options: dict, what: str, path=None) -> dict:
    """``options`` (keyword -> value) checked against ``specs``: each value
    as its option takes it. An unknown keyword or a bad value raises
    :class:`OptionError` naming ``what`` (e.g. "DirectX import") and
    ``path``."""
    by_id = {s.id: s for s in specs}
    out = {}
    for k, v in options.items():
        spec = by_id.get(k)
        if spec is None:
            known = ", ".join(by_id) or "none"
            raise OptionError(f"{what} has no option {k!r} (its options: {known})", path=path)
        try:
            out[k] = spec.value(v, f"{what}: {spec.name}")
        except OptionError as err:
            raise OptionError(err.message, path=path) from None
    return out


# ---------------------------------------------------------------------------
# the command line

def finite(text: str) -> float:
    """An argparse ``type`` for a number flag: a finite float (NaN and inf
    are a usage error, exit 2, one line)."""
    try:
        x = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(x):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    return x


def _dest(prefix: str, spec: Option) -> str:
    return f"option[{prefix}]{spec.cli_flags[0]}"


def _flag(prefix: str, flag: str) -> str:
    return "--" + prefix + flag[2:]


def add_flags(parser, sources, *, prefix: str = "") -> None:
    """Command-line flags for the options of several formats (``sources``:
    (format label, options) pairs) on an argparse ``parser``. Formats that
    share a flag share its argument (each checks the value as its own
    option takes it); ``prefix`` goes after the flags' ``--`` (``convert``
    offers the input format's import options as ``--input-...``)."""
    groups: dict[str, list[tuple[str, Option]]] = {}
    owner: dict[str, str] = {}
    for label, specs in sources:
        for spec in specs:
            main = spec.cli_flags[0]
            groups.setdefault(main, []).append((label, spec))
            for f in spec.cli_flags:
                if owner.setdefault(f, main) != main:
                    raise ValueError(f"flag {f} names two different options ({owner[f]} and {main})")
    for main, users in groups.items():
        switch = {spec.kind == "bool" for _, spec in users}
        if len(switch) > 1:
            raise ValueError(f"flag {main} is a switch for one format and takes a value for another")
        flags = list(dict.fromkeys(_flag(prefix, f) for _, spec in users for f in spec.cli_flags))
        if prefix and all(spec.unprefixed for _, spec in users):
            flags += [f for _, spec in users for f in spec.cli_flags if f not in flags]
        text = _shared_help(users)
        old = list(dict.fromkeys(f for _, spec in users for f in spec.old_flags))
        off = list(dict.fromkeys(f for _, spec in users for f in spec.old_off_flags))
        if old or off:
            was = ", ".join(old) + (" and " if old and off else "") + \
                (f"{', '.join(off)} for {_flag(prefix, '--no-' + main[2:])}" if off else "")
            text += f" (formerly {was}: still accepted for one release)"
        text = text.replace("%", "%%")
        dest = _dest(prefix, users[0][1])
        hidden = argparse.SUPPRESS
        if switch == {True}:
            parser.add_argument(*flags, dest=dest, action=argparse.BooleanOptionalAction, default=None, help=text)
            for spellings, value in ((old, True), (off, False)):
                if spellings:
                    parser.add_argument(*(_flag(prefix, f) for f in spellings), dest=dest, action="store_const",
                                        const=value, default=None, help=hidden)
        else:
            metavar = {"enum": "CHOICE", "path": "FILE"}.get(users[0][1].kind, "N")
            parser.add_argument(*flags, dest=dest, default=None, metavar=metavar, help=text)
            if old:
                parser.add_argument(*(_flag(prefix, f) for f in old), dest=dest, default=None, help=hidden)


def _shared_help(users: list[tuple[str, Option]]) -> str:
    """The help of a flag several formats share: each format's text, or
    one text when they differ in their defaults only (which it lists)."""
    first = users[0][1]

    def but_default(spec: Option) -> dict:
        return {k: v for k, v in vars(spec).items() if k != "default"}

    if any(but_default(spec) != but_default(first) for _, spec in users[1:]):
        return "; ".join(f"{label}: {_help(spec)}" for label, spec in users)
    defaults = {_shown(spec) for _, spec in users}
    if len(defaults) == 1:
        return _help(first)
    return _help(first, ", ".join(f"{label} {_shown(spec)}" for label, spec in users))


_ROLE = re.compile(r":[a-z]+:`~?([^`]*)`")


def plain(text: str) -> str:
    """``text`` (a docstring, a description) without reStructuredText
    markup, for the command line's help: roles (:func:`name`) become the
    name, double and single backticks go."""
    return _ROLE.sub(r"\1", text).replace("``", "").replace("`", "")


def _shown(spec: Option) -> str:
    """The default as ``--help`` shows it."""
    if spec.kind == "bool":
        return "on" if spec.default else "off"
    return f"{spec.default:g}" if spec.kind in ("int", "float") else str(spec.default)


def _help(spec: Option, default: str = "") -> str:
    text = plain(spec.description).rstrip(".")
    default = default or _shown(spec)
    if spec.kind == "enum":
        text += f" ({', '.join(spec.choices)}; default {default})"
    elif spec.kind != "path":
        text += f" (default {default})"
    return text


def given(args, specs, *, prefix: str = "") -> dict:
    """The values of ``specs`` given on the command line (``args`` parsed
    with :func:`add_flags` and the same ``prefix``), checked; a bad one
    raises :class:`OptionError` naming its flag."""
    out = {}
    for spec in specs:
        raw = getattr(args, _dest(prefix, spec), None)
        if raw is not None:
            out[spec.id] = spec.value(raw, _flag(prefix, spec.cli_flags[0]))
    return out


def unused(args, specs, *, prefix: str = "") -> list[str]:
    """The flags (with ``prefix``) given on the command line that none of
    ``specs`` has: other formats' options."""
    mine = {_dest(prefix, s) for s in specs}
    space = f"option[{prefix}]"
    return [_flag(prefix, k[len(space):]) for k, v in sorted(vars(args).items())
            if k.startswith(space) and v is not None and k not in mine]
