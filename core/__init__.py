# SPDX-License-Identifier: GPL-3.0-or-later
"""Standalone numpy reimplementation of keyframe evaluation and skinning.

Never imports bpy. Quaternions are stored x, y, z, w; matrices are 4x4 for
column vectors (``v' = M @ v``), as in Blender.
"""
