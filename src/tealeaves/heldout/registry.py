"""The registry of method names: every estimator module, imported once on the first lookup (each
registers its methods with `spec.register`), and the lookups."""

from __future__ import annotations

from typing import Any

from ..errors import MethodError
from .spec import _ALIASES, _METHODS, MethodSpec


def get_method(name: str, task: str = "heldout") -> MethodSpec:
    _load()
    key = _ALIASES.get(name, name)
    spec = _METHODS.get(key)
    if spec is None or task not in spec.tasks:
        raise MethodError(f"unknown {task} method {name!r} (known: {', '.join(method_names(task))})")
    return spec


def for_document(spec: MethodSpec, params: dict[str, Any], task: str, num_tokens: int,
                 num_topics: int) -> tuple[MethodSpec, dict[str, Any]]:
    """The method and parameters that score a document of `num_tokens` tokens under `num_topics`
    topics: `spec` with `params`, or the method its `fallback` names, with that method's defaults."""
    if spec.fallback is not None and (other := spec.fallback(num_tokens, num_topics, params)):
        alt = get_method(other, task)
        return alt, alt.resolve({}, task)
    return spec, params


def method_names(task: str = "heldout") -> list[str]:
    _load()
    return [n for n, s in _METHODS.items() if task in s.tasks]


def _load() -> None:
    """Import every estimator module once (each registers its methods)."""
    from . import (  # noqa: F401
        ais,
        bridge,
        chib,
        estimated_theta,
        exact,
        harmonic,
        importance,
        left_to_right,
    )
