# SPDX-License-Identifier: GPL-3.0-or-later
"""``python -m legacy_skin_io``: the headless command line (needs the bpy module)."""
import sys

from .operators.cli import main

sys.exit(main())
