"""Model files. `load_model` detects the format; today: our own `.npz` (see `io.npz`)."""

from __future__ import annotations

import os

from ..errors import InputFileError
from ..model import TopicModel
from .npz import load_npz, save_npz

FORMATS = ("npz",)


def load_model(path: str | os.PathLike | TopicModel, format: str | None = None,
               normalize: bool = False) -> TopicModel:
    """Load a topic model from `path` (a `TopicModel` is returned as it is)."""
    if isinstance(path, TopicModel):
        return path
    path = os.fspath(path)
    fmt = format or _detect(path)
    if fmt == "npz":
        return load_npz(path, normalize=normalize)
    raise InputFileError(f"{path}: unknown model format {fmt!r} (known: {', '.join(FORMATS)})")


def save_model(model: TopicModel, path: str | os.PathLike) -> None:
    """Save `model` in tealeaves' own `.npz` format."""
    save_npz(model, os.fspath(path))


def _detect(path: str) -> str:
    if path.endswith(".npz"):
        return "npz"
    if not os.path.exists(path):
        raise InputFileError(f"{path}: no such file")
    with open(path, "rb") as fh:
        head = fh.read(4)
    if head.startswith(b"PK"):
        return "npz"
    raise InputFileError(f"{path}: cannot tell the model format (pass format=...; known: npz)")
