# SPDX-License-Identifier: GPL-3.0-or-later
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parent / "data"
