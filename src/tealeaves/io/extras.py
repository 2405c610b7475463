"""Optional libraries: a missing one is a one-line error naming the pip command."""

from __future__ import annotations

import importlib

from ..errors import MethodError


def require(module: str, extra: str) -> None:
    try:
        importlib.import_module(module)
    except ImportError:
        raise MethodError(
            f'this needs {module}, which is not installed: pip install "tealeaves[{extra}]"'
        ) from None
