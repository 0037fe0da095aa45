# SPDX-License-Identifier: GPL-3.0-or-later
"""File formats <-> in-memory models. Never imports bpy."""
