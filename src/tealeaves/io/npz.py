"""tealeaves' own model file: an uncompressed-pickle-free `.npz` holding `phi` (T x V),
`alpha` (T), `beta` (scalar, NaN when unknown), `vocab` (V strings, optional), `name`,
`metadata` (a JSON string) and `format_version`."""

from __future__ import annotations

import json
import zipfile

import numpy as np

from ..atomic import atomic_path
from ..errors import InputFileError, InvalidModelError
from ..model import TopicModel

FORMAT_VERSION = 1


def save_npz(model: TopicModel, path: str) -> None:
    arrays = {
        "phi": model.phi,
        "alpha": model.alpha,
        "beta": np.float64(np.nan if model.beta is None else model.beta),
        "name": np.array(model.name),
        "metadata": np.array(json.dumps(model.metadata, default=str)),
        "format_version": np.int64(FORMAT_VERSION),
    }
    if model.vocab is not None:
        arrays["vocab"] = np.array(model.vocab, dtype=str)
    if not path.endswith(".npz"):  # numpy's rule for the name
        path += ".npz"
    try:
        with atomic_path(path, suffix=".npz") as tmp:
            np.savez_compressed(tmp, **arrays)
    except OSError as exc:
        raise InputFileError(f"{path}: cannot write model ({exc.strerror or exc})") from None


def load_npz(path: str, normalize: bool = False) -> TopicModel:
    try:
        with np.load(path, allow_pickle=False) as f:
            missing = [k for k in ("phi", "alpha") if k not in f.files]
            if missing:
                raise InputFileError(f"{path}: model file lacks {', '.join(missing)}")
            phi = f["phi"]
            alpha = f["alpha"]
            beta = float(f["beta"]) if "beta" in f.files else float("nan")
            vocab = [str(w) for w in f["vocab"]] if "vocab" in f.files else None
            name = str(f["name"]) if "name" in f.files else path
            meta = json.loads(str(f["metadata"])) if "metadata" in f.files else {}
    except InputFileError:
        raise
    except FileNotFoundError:
        raise InputFileError(f"{path}: no such file") from None
    except (OSError, zipfile.BadZipFile, EOFError, ValueError, KeyError) as exc:
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
