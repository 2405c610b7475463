"""Numba kernels shared by every estimator, and the per-document arrays they run on.
Nothing outside this package knows about numba."""

from .prepare import PreparedDoc, prepare_doc
from .rng import child, new_state

__all__ = ["PreparedDoc", "child", "prepare_doc", "new_state"]
