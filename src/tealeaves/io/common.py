"""What every reader shares: the one-line error for a missing optional library, and building the
`TopicModel` (a single alpha value spread over the topics; a validation error names the source)."""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import InvalidModelError, MethodError
from ..model import TopicModel


def require(module: str, extra: str) -> None:
    try:
        importlib.import_module(module)
    except ImportError:
        raise MethodError(
            f'this needs {module}, which is not installed: pip install "tealeaves[{extra}]"'
        ) from None


def build_model(
    phi: Any,
    alpha: Any,
    vocab: Sequence[str] | None,
    beta: float | None,
    name: str,
    source: str | None,
    metadata: dict[str, Any],
    normalize: bool = True,
) -> TopicModel:
    """A validated model from a reader's arrays. `alpha` may be one number for every topic.
    `normalize` rescales rows that do not sum to one (libraries store float32 or unnormalised
    weights); errors are prefixed with `source` (or `name`)."""
    phi = np.asarray(phi, dtype=np.float64)
    try:
        alpha = np.asarray(alpha, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise InvalidModelError(f"{source or name}: alpha is not numeric") from None
    if alpha.size == 1 and phi.ndim == 2:
        alpha = np.full(phi.shape[0], float(alpha[0]))
    try:
        return TopicModel(
            phi, alpha, vocab=vocab, beta=beta, name=name, metadata=metadata, normalize=normalize
        )
    except InvalidModelError as exc:
        raise InvalidModelError(f"{source or name}: {exc}") from None
