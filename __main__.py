# SPDX-License-Identifier: GPL-3.0-or-later
"""``python -m legacy_skin_io``: the command line (see ``cli``)."""
import sys

from .cli import main

sys.exit(main())
