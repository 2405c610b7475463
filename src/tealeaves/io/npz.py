"""tealeaves' own model file: an uncompressed-pickle-free `.npz` holding `phi` (T x V),
`alpha` (T), `beta` (scalar, NaN when unknown), `vocab` (V strings, optional), `name`,
`metadata` (a JSON string) and `format_version`."""

from __future__ import annotations

import json

import numpy as np

from ..errors import ARCHIVE_ERRORS, InputFileError, InvalidModelError, no_such_file
from ..files.atomic import atomic_path, with_extension
from ..files.records import parse_json
from ..model import TopicModel
from ..output.jsonout import json_safe
from ..util.limits import check_array_file
from .common import read_phi

FORMAT_VERSION = 1


def save_npz(model: TopicModel, path: str, follow_link: bool = True) -> None:
    arrays = {
        "phi": model.phi,
        "alpha": model.alpha,
        "beta": np.float64(np.nan if model.beta is None else model.beta),
        "name": np.array(model.name),
        "metadata": np.array(json.dumps(json_safe(model.metadata), default=str)),  # strict JSON
        "format_version": np.int64(FORMAT_VERSION),
    }
    if model.vocab is not None:
        arrays["vocab"] = np.array(model.vocab, dtype=str)
    path = with_extension(path, ".npz")  # numpy's rule for the name
    try:
        with atomic_path(path, suffix=".npz", follow_link=follow_link) as tmp:
            np.savez_compressed(tmp, **arrays)
    except OSError as exc:
        raise InputFileError(f"{path}: cannot write model ({exc.strerror or exc})") from None


def _scalar(f, key: str, path: str, kind: type, default):
    """A 0-d entry of the archive as `kind` (a one-line error for an array or the wrong type)."""
    if key not in f.files:
        return default
    a = f[key]
    if a.ndim != 0 or (kind is float and a.dtype.kind not in "iuf") or (kind is str and a.dtype.kind != "U"):
        raise InputFileError(f"{path}: {key} must be a single {'number' if kind is float else 'string'}, "
                             f"got {a.dtype} of shape {a.shape}")
    return kind(a)


def _check_version(version: float, path: str) -> None:
    """Only the versions this reader knows (a later format may mean something else by a field)."""
    if version != FORMAT_VERSION:
        later = "; a newer tealeaves may read it" if version > FORMAT_VERSION else ""
        raise InputFileError(f"{path}: model file format_version {version:g} is not one this tealeaves reads "
                             f"(it reads version {FORMAT_VERSION}){later}")


def _metadata(text: str, path: str) -> dict:
    """The metadata JSON object, read by the one strict parser (`records.parse_json`: no
    duplicate keys, no NaN, Infinity or numbers too large for a float)."""
    where = f"{path}: metadata"
    meta = parse_json(text, where)
    if not isinstance(meta, dict):
        raise InputFileError(f"{where} must be a JSON object, got {type(meta).__name__}")
    return meta


def load_npz(path: str, normalize: bool = False) -> TopicModel:
    """The model in `path`; phi is read a block of rows at a time straight into the model's
    layout, so loading needs phi's size and a few MB."""
    check_array_file(path)
    try:
        with np.load(path, allow_pickle=False) as f:
            missing = [k for k in ("phi", "alpha") if k not in f.files]
            if missing:
                raise InputFileError(f"{path}: model file lacks {', '.join(missing)}")
            with f.zip.open("phi.npy") as member:  # streamed into the model's layout: no second copy
                phi = read_phi(member, normalize)
            alpha = f["alpha"]
            beta = _scalar(f, "beta", path, float, float("nan"))
            vocab = None
            if "vocab" in f.files:
                v = f["vocab"]
                if v.ndim != 1 or v.dtype.kind != "U":
                    raise InputFileError(f"{path}: vocab must be a 1-d array of strings, got {v.dtype} "
                                         f"of shape {v.shape}")
                vocab = [str(w) for w in v]
            _check_version(_scalar(f, "format_version", path, float, FORMAT_VERSION), path)
            name = _scalar(f, "name", path, str, path)
            meta = _metadata(_scalar(f, "metadata", path, str, "{}"), path)
    except InputFileError:
        raise
    except InvalidModelError as exc:
        raise InvalidModelError(f"{path}: {exc}") from None
    except FileNotFoundError:
        raise no_such_file(path) from None
    except ARCHIVE_ERRORS as exc:
        raise InputFileError(f"{path}: cannot read model .npz, truncated or not a model ({exc})") from None
    try:
        return TopicModel(
            phi,
            alpha,
            vocab=vocab,
            beta=None if np.isnan(beta) else beta,
            name=name,
            metadata=meta,
            normalize=normalize,
        )
    except InvalidModelError as exc:
        raise InvalidModelError(f"{path}: {exc}") from None
