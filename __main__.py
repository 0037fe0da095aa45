# SPDX-License-Identifier: GPL-3.0-or-later
"""``python -m legacy_skin_io``: the command line (see ``cli``)."""
import sys

from .cli import main

if __name__ == "__main__":      # not when a worker process (convert --jobs) imports it as __mp_main__
    sys.exit(main())
