#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Build and validate the extension zip with Blender's own extension tool.

    python3.11 tools/run.py build [--output-dir DIR]

Uses the ``blender_ext.py`` that ships inside the installed ``bpy`` wheel
(the same code as ``blender --command extension build``). Prints the path of
the zip as its last line.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def blender_ext_script() -> Path:
    import importlib.util

    spec = importlib.util.find_spec("bpy")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("bpy is not installed in this environment (run through tools/run.py)")
    base = Path(list(spec.submodule_search_locations)[0])
    hits = sorted(base.glob("*/scripts/addons_core/bl_pkg/cli/blender_ext.py"))
    if not hits:
        raise SystemExit(f"blender_ext.py not found under {base}")
    return hits[-1]


def build(output_dir: Path) -> Path:
    output_dir.mkdir(parents=True, exist_ok=True)
    script = blender_ext_script()
    subprocess.run([sys.executable, str(script), "build", "--source-dir", str(ROOT),
                    "--output-dir", str(output_dir)], check=True, stdout=subprocess.PIPE, text=True)
    version = None
    for line in (ROOT / "blender_manifest.toml").read_text().splitlines():
        if line.startswith("version"):
            version = line.split("=", 1)[1].strip().strip('"')
    zip_path = output_dir / f"legacy_skin_io-{version}.zip"
    if not zip_path.exists():
        raise SystemExit(f"build did not produce {zip_path}")
    subprocess.run([sys.executable, str(script), "validate", str(zip_path)], check=True)
    return zip_path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--output-dir", type=Path, default=ROOT / "dist")
    args = ap.parse_args()
    print(build(args.output_dir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
