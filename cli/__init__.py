# SPDX-License-Identifier: GPL-3.0-or-later
"""The command line: ``python -m legacy_skin_io COMMAND ...`` and, with the
extension enabled, ``blender --command legacy_skin_io COMMAND ...``.

* :mod:`.commands`: the parser, every subcommand's arguments and dispatch
  (:func:`main`);
* :mod:`.convert`: the ``convert`` command for files, without Blender (the
  conversion itself is ``io/convert.py``'s);
* :mod:`.batch`: ``convert DIR``, a whole folder, in worker processes
  (``--jobs``) or on Dask (:mod:`.cluster`), with its JSON Lines report
  (:mod:`.batch_report`);
* :mod:`.progress`: the progress line on stderr;
* :mod:`.blender_command`: ``import``, ``verify`` and ``export``, which run
  in Blender (the bpy module or ``blender --command``).

Dependencies point one way: ``cli`` -> ``operators`` -> ``io`` -> ``scene``
-> ``core``; nothing outside this folder imports it but the package's
``__init__`` and ``__main__``. What in ``operators`` shows progress is
handed :mod:`.progress`'s objects by :mod:`.blender_command`.
"""
from .commands import blender_command_line, build_parser, main

__all__ = ["blender_command_line", "build_parser", "main"]
