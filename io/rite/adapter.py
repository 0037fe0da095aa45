# SPDX-License-Identifier: GPL-3.0-or-later
"""RiTE RAM/RAA <-> scene: the format's one entry point for the registry
(``io.formats``; the contract is in its module doc). The reading half is
:mod:`.to_scene`, the writing half :mod:`.from_scene`.

What is RiTE's and stays in this package:

* a joint's local transform is ``orientation * rotation`` with a fixed
  translation (the RAM's rotation is the bind rotation; RAA keys replace it);
* the bind pose is the pose the file describes: joints' bind matrices are
  their world matrices, the mesh is in model space;
* RAA tracks bind to joints by name first, then by joint id
  (:func:`.to_scene.bind_tracks`);
* the Animator's playback: keys sampled by ``slerpNoInvert`` with a cyclic
  key search (:class:`.runtime.RiteClip`, the clip's sampler), and the loop
  0, 1..N-1, 1..N-1, ... (the clip's cycle (1, N));
* a material per SHADER id (RiTE shaders live outside the format).

The file's own numbers that a round trip must reproduce exactly (the split
of a joint's rotation into orientation and bind rotation, key frames and
signs) travel as ``extras["rite"]``.
"""
from .from_scene import raa_from_clip, write_animation, write_scene, writer_axes
from .to_scene import FORMAT, bind_tracks, clip_from_raa, default_axes, read_clips, read_scene, scene_from_ram

__all__ = ["FORMAT", "default_axes", "read_scene", "read_clips", "scene_from_ram", "clip_from_raa", "bind_tracks",
           "write_scene", "write_animation", "writer_axes", "raa_from_clip"]
