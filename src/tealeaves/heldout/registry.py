"""The registry of method names: every estimator module, imported once on the first lookup (each
registers its methods with `spec.register`), and the lookups."""

from __future__ import annotations

from ..errors import MethodError
from .spec import _ALIASES, _METHODS, MethodSpec


def get_method(name: str, task: str = "heldout") -> MethodSpec:
    _load()
    key = _ALIASES.get(name, name)
    spec = _METHODS.get(key)
    if spec is None or task not in spec.tasks:
        raise MethodError(f"unknown {task} method {name!r} (known: {', '.join(method_names(task))})")
    return spec


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
