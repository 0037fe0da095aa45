# SPDX-License-Identifier: GPL-3.0-or-later
"""Legacy Skin IO: RiTE RAM/RAA and DirectX .X for Blender.

This module only registers the operators. Importing the package (or its
``core`` and ``io`` subpackages) never imports ``bpy``; the Blender side lives
in ``operators`` and is loaded on ``register()``.
"""


def register():
    from . import operators

    operators.register()


def unregister():
    from . import operators

    operators.unregister()
