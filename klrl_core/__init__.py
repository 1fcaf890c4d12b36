"""klrl_core: the exact computations behind every figure of the explorer.

Pure functions on NumPy arrays; no UI or table library is imported here.
Import the submodule you need, e.g. ``from klrl_core import tilt``.
"""
