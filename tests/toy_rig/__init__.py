# SPDX-License-Identifier: GPL-3.0-or-later
"""A toy JSON rig format, for tests only: the proof that a third format is
one package and one registration line (nothing outside this package
changes for it), written from docs/adapter-contract.md.

A model file (``.toyrig``) holds joints (name, parent, local translation
and rotation), meshes (positions, triangles, and a skin: inverse bind
matrices and (vertex, joint, weight) triples); an animation file
(``.toyanim``) holds rotation and translation keys per joint, key times in
seconds. Files are Z-up (X forward) and right-handed, as 3ds Max's are: the
format declares it in its adapter's ``default_axes()`` and every import
path (File > Import, the command line, convert) reads it from there.

The package is written exactly as a built-in ``io/<format>/`` package is
(relative imports of the scene model and the errors), so it is loaded as a
subpackage of the ``io`` package of the legacy_skin_io it is registered
with (:func:`mount`): the repository's, or the installed extension's in
Blender.
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ID = "toy"


def mount(host: str) -> str:
    """Load this package as ``<host>.io.toy_rig`` and return that name (the
    package to register: ``formats.register(FORMAT, package=mount(host))``)."""
    name = f"{host}.io.toy_rig"
    if name not in sys.modules:
        importlib.import_module(f"{host}.io")
        here = Path(__file__).resolve().parent
        spec = importlib.util.spec_from_file_location(name, here / "__init__.py",
                                                      submodule_search_locations=[str(here)])
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return name


def format_line(formats_module):
    """The registration line: a :class:`io.formats.Format` of the host's."""
    return formats_module.Format(ID, "Toy Rig", (".toyrig",), (".toyanim",), "Toy Animation",
                                 "Toy rig (.toyrig, JSON): joints, skinned meshes; animations (.toyanim)")
