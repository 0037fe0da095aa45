# SPDX-License-Identifier: GPL-3.0-or-later
"""glTF 2.0, written (numpy and the standard library only): ``.glb``, or
``.gltf`` with its ``.bin``.

What is glTF's and stays in this package:

* +Y up, right-handed, counter-clockwise fronts in a node's own space
  (:func:`.from_scene.default_axes`: as Blender's glTF add-on reads it);
* a node is translation, rotation (x, y, z, w) and scale; a skinned mesh is
  a root node whose own transform is ignored; a skin's joints share a root;
* JOINTS_n/WEIGHTS_n sets of four influences summing to 1;
* animation times in seconds, LINEAR = slerp for rotations;
* images are PNG or JPEG, by URI or packed in the file.
"""
