"""Numba kernels shared by every estimator, and the per-document arrays they run on.
Nothing outside this package knows about numba."""

from .prepare import PreparedDoc, PreparedModels, prepare_doc, prepare_models
from .rng import child, new_state

__all__ = ["PreparedDoc", "PreparedModels", "child", "prepare_doc", "prepare_models", "new_state"]
