# SPDX-License-Identifier: GPL-3.0-or-later
"""The one metadata schema stored on what the builder makes (JSON strings in
ID properties, so they survive save and reload):

* on an armature object, :data:`RIG_KEY`: the source format and file, the
  axis conversion the reader applied, and the skeleton (joint names and
  parents, default local and bind matrices, which joints are which bones and
  the skeleton's extras) — everything the extractor needs to give an
  exporter the file's own joints back;
* on an action, :data:`CLIP_KEY`: the clip's layer, weight, range, cycle,
  time base and extras;
* on a mesh object, :data:`MESH_KEY`: the mesh's index in its scene and its
  extras; on its mesh, when its vertices were welded, :data:`WELD_KEY`
  (:func:`store_weld`);
* on an action the layer stack made for itself (``anim_place``), not an
  animation of its own, :data:`MIX_KEY`: its role ("base", or "signed" with
  its "source" action's name).

An exporter applies the stored axes only when the rig came from its own
format; otherwise it uses the target format's defaults.
"""
from __future__ import annotations

import json

import numpy as np

RIG_KEY = "legacy_skin_io_rig"
CLIP_KEY = "legacy_skin_io_clip"
MESH_KEY = "legacy_skin_io_mesh"
MIX_KEY = "legacy_skin_io_mix"
NORMAL_ATTR = "lsio_normal"     # exact corner normals (Blender stores custom normals quantised)
MATERIAL_ATTR = "lsio_material"  # a face's own scene material where several share one Blender material
#: on a welded Blender mesh (``mesh_weld``): an int array, the Blender vertex of each vertex of the scene's mesh
WELD_KEY = "legacy_skin_io_weld"


def _default(o):
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, (np.floating,)):
        return float(o)
    raise TypeError(f"not JSON-able: {type(o).__name__}")


def store(idb, key: str, data: dict) -> None:
    idb[key] = json.dumps(data, default=_default)


def load(idb, key: str) -> dict | None:
    raw = idb.get(key) if idb is not None else None
    if not raw:
        return None
    try:
        d = json.loads(raw)
    except (TypeError, ValueError):
        return None
    return d if isinstance(d, dict) else None


def playback(clip_meta: dict, default: str = "ACTION") -> str:
    """How a clip stored under :data:`CLIP_KEY` plays (ACTION, MERGEABLE or
    DOMINANT): its ``playback``, or the ``layer`` that .blend files saved
    by earlier releases hold."""
    return str(clip_meta.get("playback", clip_meta.get("layer", default)))


def store_weld(me, vertex: np.ndarray) -> None:
    """On a welded Blender mesh ``me``: ``vertex`` (V,), the Blender vertex of
    each vertex of the scene's mesh (an ID property array, binary)."""
    me[WELD_KEY] = np.ascontiguousarray(vertex, dtype=np.int32)


def load_weld(me, n_vertices: int | None = None) -> np.ndarray | None:
    """The Blender vertex of each vertex of the scene's mesh (int64), as
    :func:`store_weld` stored it on ``me``, or None (not welded, or a map
    that does not fit ``me``'s vertices or ``n_vertices`` scene vertices)."""
    raw = me.get(WELD_KEY) if me is not None else None
    if raw is None:
        return None
    try:
        out = np.asarray(raw, dtype=np.int64).reshape(-1)
    except (TypeError, ValueError):
        return None
    if (n_vertices is not None and len(out) != n_vertices) or (len(out) and (out.min() < 0 or
                                                                          out.max() >= len(me.vertices))):
        return None
    return out
