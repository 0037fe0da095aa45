# SPDX-License-Identifier: GPL-3.0-or-later
"""What Panda3D's own .X loader makes of files: run as a script (its own
process: Panda3D's engine beside bpy in one process is not wanted), prints
one JSON object {path: {"vertices", "characters", "parts"}}: the vertices
of every Geom, the Character nodes and the parts (joints) of their bundles."""
import json
import sys

from panda3d.core import Filename, loadPrcFileData

loadPrcFileData("", "window-type none\naudio-library-name null\nnotify-level warning\nnotify-level-device fatal\n")

from direct.showbase.ShowBase import ShowBase  # noqa: E402  (after the configuration above)


def _parts(part) -> int:
    return 1 + sum(_parts(part.getChild(i)) for i in range(part.getNumChildren()))


def main(paths) -> dict:
    base = ShowBase(windowType="none")
    out = {}
    for p in paths:
        model = base.loader.loadModel(Filename.fromOsSpecific(p), noCache=True)
        chars = model.findAllMatches("**/+Character")
        out[p] = {"vertices": sum(geom.getVertexData().getNumRows() for g in model.findAllMatches("**/+GeomNode")
                                  for geom in g.node().getGeoms()),
                  "characters": chars.getNumPaths(),
                  "parts": sum(_parts(c.node().getBundle(0)) for c in chars)}
    return out


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1:])))
