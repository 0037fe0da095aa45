# SPDX-License-Identifier: GPL-3.0-or-later
"""Headless command line (``python -m legacy_skin_io`` with the bpy module).

    python -m legacy_skin_io import MODEL.ram [ANIM.raa ...] -o OUT.blend
    python -m legacy_skin_io import MODEL.x [--bake] -o OUT.blend
    python -m legacy_skin_io verify MODEL.ram [ANIM.raa ...] [--dominant ANIM.raa ...]
    python -m legacy_skin_io verify MODEL.x [--bake]
    python -m legacy_skin_io export IN.blend -o OUT.ram [--animations]

``verify`` imports into a new scene, then compares Blender's evaluated mesh
with the core's evaluation of the original files at every frame, prints a
table (frame, max error, mean error) and a one-line verdict, and exits
non-zero when the error exceeds the tolerance (1e-5 of the model size).
A DirectX .X file is verified AnimationSet by AnimationSet (a table each,
every frame of the set; the default pose when it has none), one verdict for
all. Exit status: 0 pass, 1 over the tolerance, 2 unreadable input.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path


def _register():
    import bpy

    from .. import register

    if not hasattr(bpy.types, "IMPORT_SCENE_OT_rite"):
        register()
    return bpy


def _import_rite(bpy, ram: Path, mergeable: list[Path], dominant: list[Path], weights: list[float],
                 args) -> tuple:
    from ..io.rite.playback import StackEntry
    from . import rite_import
    from bpy_extras.io_utils import axis_conversion

    bpy.ops.wm.read_homefile(use_empty=True)
    conv = axis_conversion(from_forward=args.forward, from_up=args.up).to_3x3()
    res = rite_import.load_ram(bpy.context, str(ram), axis_conversion=[list(r) for r in conv],
                               global_scale=args.scale, point_bones_at_children=args.bones_at_children)
    for w in res.warnings:
        print("warning:", w)
    entries = []
    if weights and len(weights) != len(mergeable):
        raise SystemExit("--weights needs one weight per mergeable animation")
    use_nla = bool(dominant) or len(mergeable) > 1
    for i, path in enumerate(mergeable):
        w = weights[i] if weights else 1.0
        _, bounds, warns = rite_import.load_raa(bpy.context, [str(path)], armature=res.armature,
                                                mode="MERGEABLE" if use_nla else "ACTION", weight=w,
                                                keys_only=args.keys_only)
        entries.append(StackEntry(bounds[0], "MERGEABLE", w))
        for x in warns:
            print("warning:", x)
    for path in dominant:
        _, bounds, warns = rite_import.load_raa(bpy.context, [str(path)], armature=res.armature,
                                                mode="DOMINANT", keys_only=args.keys_only)
        entries.append(StackEntry(bounds[0], "DOMINANT", 1.0))
        for x in warns:
            print("warning:", x)
    if entries:
        bpy.context.scene.frame_start = 0
        bpy.context.scene.frame_end = max(max(e.bound.frame_count for e in entries) - 1, 1)
    return res, entries


def _is_x(path) -> bool:
    """A DirectX file: the .x suffix, or the ``xof `` header whatever the name."""
    path = Path(path)
    if path.suffix.lower() == ".x":
        return True
    try:
        with open(path, "rb") as fh:
            return fh.read(4) == b"xof "
    except OSError:
        return False


def _x_usage_error(args) -> str | None:
    """Options that only make sense for RiTE files, given with a .x file (or the reverse)."""
    if _is_x(args.model):
        extra = [name for name, given in (("animation files", args.animations), ("--dominant", args.dominant),
                                          ("--weights", args.weights), ("--keys-only", args.keys_only),
                                          ("--bones-at-children", args.bones_at_children)) if given]
        if extra:
            return f"{', '.join(extra)}: not for .x files (a .x file carries its own AnimationSets)"
    elif args.bake:
        return "--bake is for .x files"
    return None


def _import_x(bpy, path: Path, args):
    """Import a .X file into a new empty scene with the importer's defaults
    (or --bake / --forward / --up / --scale)."""
    from bpy_extras.io_utils import axis_conversion

    from . import xfile_import

    if not path.is_file():
        raise xfile_import.ImportFailed(f"{path}: no such file")
    bpy.ops.wm.read_homefile(use_empty=True)
    conv = axis_conversion(from_forward=args.forward, from_up=args.up).to_3x3()
    imp = xfile_import.load_x(bpy.context, str(path), axis_conversion=[list(r) for r in conv],
                              global_scale=args.scale, bake=args.bake)
    for w in imp.warnings:
        print("warning:", w)
    return imp


def _verify_x(bpy, imp, args) -> tuple[list, object]:
    """verify_x for every AnimationSet at every scene frame it spans (or the
    default pose): [(title, report)] and the combined report."""
    import numpy as np

    from ..io.xfile import read_xfile
    from ..io.xfile.playback import XRig
    from . import xfile_build, xfile_import
    from .verify import Report

    rig = XRig.from_xfile(read_xfile(args.model))  # the reference: a fresh parse, never read back from Blender
    scene = bpy.context.scene
    fps = scene.render.fps / scene.render.fps_base
    rot_mode = "slerp" if imp.baked else "nlerp"
    parts = []
    if imp.actions:
        for ci, clip in enumerate(rig.clips):
            f0, f1 = xfile_build.clip_frames(rig, clip, fps)
            frames = np.arange(min(np.floor(f0), 0.0), np.ceil(f1 - 1e-6) + 1.0)
            rep = xfile_import.verify_x(bpy.context, imp, rig, ci, frames, rot_mode, rel_tolerance=args.tolerance)
            parts.append((f"AnimationSet {clip.name!r}: frames {frames[0]:g}-{frames[-1]:g}", rep))
    else:
        rep = xfile_import.verify_x(bpy.context, imp, rig, None, [0], rot_mode, rel_tolerance=args.tolerance)
        parts.append(("default pose (no animation)", rep))
    first = parts[0][1]
    total = Report([f for _, r in parts for f in r.frames], first.size, first.tolerance)
    return parts, total


def _save_blend(bpy, path) -> None:
    out = Path(path).resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    bpy.ops.wm.save_as_mainfile(filepath=str(out))
    print(f"wrote {out}")


def _write_outputs(bpy, args, armature, frames) -> None:
    """``--blend`` and ``--render`` of the verify command."""
    if args.blend:
        _save_blend(bpy, args.blend)
    if args.render:
        from . import render

        render.render_poses(bpy.context, Path(args.render), armature, frames)
        print(f"wrote {Path(args.render).resolve()}")


def cmd_import(args) -> int:
    bpy = _register()
    from . import rite_import, xfile_import

    bad = _x_usage_error(args)
    if bad:
        print(f"error: {bad}", file=sys.stderr)
        return 2
    try:
        if _is_x(args.model):
            _import_x(bpy, Path(args.model), args)
        else:
            _import_rite(bpy, Path(args.model), [Path(p) for p in args.animations],
                         [Path(p) for p in args.dominant], args.weights, args)
    except (rite_import.ImportFailed, xfile_import.ImportFailed) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    _save_blend(bpy, args.output)
    return 0


def cmd_verify_x(bpy, args) -> int:
    from . import anim_build, xfile_import

    try:
        imp = _import_x(bpy, Path(args.model), args)
    except xfile_import.ImportFailed as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    parts, total = _verify_x(bpy, imp, args)
    for title, rep in parts:
        print(title)
        print(rep.table())
    print(total.verdict())
    if imp.actions:  # leave the first set active, as the importer does
        action, slot, _ = imp.actions[0]
        anim_build.assign_action(imp.armature, action, slot)
        bpy.context.scene.frame_set(0)
    _write_outputs(bpy, args, imp.armature, [f.frame for f in parts[0][1].frames])
    return 0 if total.ok else 1


def cmd_verify(args) -> int:
    bpy = _register()
    from . import rite_import, verify

    bad = _x_usage_error(args)
    if bad:
        print(f"error: {bad}", file=sys.stderr)
        return 2
    if _is_x(args.model):
        return cmd_verify_x(bpy, args)

    try:
        res, entries = _import_rite(bpy, Path(args.model), [Path(p) for p in args.animations],
                                    [Path(p) for p in args.dominant], args.weights, args)
    except rite_import.ImportFailed as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    scene = bpy.context.scene
    frames = list(range(scene.frame_start, scene.frame_end + 1)) if entries else [0]
    report = verify.verify_rite(bpy.context, res.armature, res.mesh, res.rig, res.conv, entries, frames,
                                rel_tolerance=args.tolerance)
    print(report.table())
    print(report.verdict())
    _write_outputs(bpy, args, res.armature, frames)
    if not args.keys_only and not report.ok:
        return 1
    return 0


def cmd_export(args) -> int:
    bpy = _register()
    bpy.ops.wm.open_mainfile(filepath=str(Path(args.blend).resolve()))
    kwargs = {"filepath": str(Path(args.output).resolve()), "export_animations": args.animations}
    try:
        result = bpy.ops.export_scene.rite(**kwargs)
    except RuntimeError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    return 0 if result == {"FINISHED"} else 1


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m legacy_skin_io", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)

    def common(p):
        p.add_argument("model", help=".ram or .x file")
        p.add_argument("animations", nargs="*", help="mergeable .raa files (bottom of the stack)")
        p.add_argument("--dominant", action="append", default=[], help="dominant .raa (repeatable)")
        p.add_argument("--weights", type=float, nargs="*", default=[], help="one weight per mergeable .raa")
        p.add_argument("--forward", default="-Z", help="file forward axis (default -Z)")
        p.add_argument("--up", default="Y", help="file up axis (default Y)")
        p.add_argument("--scale", type=float, default=1.0)
        p.add_argument("--bones-at-children", action="store_true")
        p.add_argument("--keys-only", action="store_true", help="key only the file's keys (approximate)")
        p.add_argument("--bake", action="store_true",
                       help=".x: key every frame with the exact (slerp) playback instead of the file's keys")

    p = sub.add_parser("import", help="import .ram/.raa or .x into a new .blend")
    common(p)
    p.add_argument("-o", "--output", required=True, help=".blend to write")
    p.set_defaults(func=cmd_import)
    p = sub.add_parser("verify", help="import and verify against the core, frame by frame")
    common(p)
    p.add_argument("--tolerance", type=float, default=1e-5, help="relative to the model size")
    p.add_argument("--blend", help="also save the imported scene")
    p.add_argument("--render", help="also render a picture of a few poses (PNG)")
    p.set_defaults(func=cmd_verify)
    p = sub.add_parser("export", help="export a .blend's rig to .ram (and .raa per action)")
    p.add_argument("blend")
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--animations", action="store_true", help="also write every action as .raa beside it")
    p.set_defaults(func=cmd_export)
    return ap


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)
