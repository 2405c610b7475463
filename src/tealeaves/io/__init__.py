"""Model files and objects from other libraries, one module per outside format:
`npz` (ours), `mallet` (state, topic-word weights, topic keys, doc-topics), `gensim`, `sklearn`,
`tomotopy`, `pyldavis`. `load_model` detects the format where that is safe.

Pickle-based formats run code when loaded: tealeaves loads them only through the library's own
loader (gensim's `LdaModel.load`), and takes scikit-learn models only as fitted objects."""

from __future__ import annotations

import os
from typing import Any

from ..errors import InputFileError, MethodError
from ..model import TopicModel
from . import mallet
from .gensim import from_gensim, is_gensim_lda, load_gensim
from .npz import load_npz, save_npz
from .pyldavis import from_pyldavis, is_pyldavis, load_pyldavis
from .sklearn import from_sklearn, is_sklearn
from .tomotopy import MAGIC as TOMOTOPY_MAGIC
from .tomotopy import from_tomotopy, is_tomotopy, load_tomotopy

FORMATS = ("npz", "mallet-state", "mallet-weights", "gensim", "tomotopy", "pyldavis")

__all__ = ["load_model", "save_model", "FORMATS", "read_doc_topics", "read_topic_keys"]

read_doc_topics = mallet.read_doc_topics
read_topic_keys = mallet.read_topic_keys


def load_model(
    source: str | os.PathLike | Any,
    format: str | None = None,
    normalize: bool = False,
    vocab: Any = None,
    alpha: Any = None,
    name: str | None = None,
) -> TopicModel:
    """A `TopicModel` from a file or a trained model object.

    Files: our `.npz`, MALLET's `--output-state` (gzip) and `--topic-word-weights-file` (needs
    `alpha`: a vector or the `--output-topic-keys` file), a gensim `LdaModel.save` file, a tomotopy
    `LDAModel.save` file, a pyLDAvis-style JSON (needs `alpha`). Objects: gensim `LdaModel` /
    `LdaMulticore`, scikit-learn `LatentDirichletAllocation` or a Pipeline ending in one (`vocab`:
    the fitted vectorizer or a word list, unless the pipeline holds the vectorizer), tomotopy
    `LDAModel`, a pyLDAvis-style dict (needs `alpha`)."""
    if isinstance(source, TopicModel):
        return source
    if not isinstance(source, str | os.PathLike):
        model = _from_object(source, vocab, alpha)
        return model if name is None else model.with_params(name=name)
    path = os.fspath(source)
    fmt = format or detect(path)
    if fmt == "npz":
        model = load_npz(path, normalize=normalize)
    elif fmt == "mallet-state":
        model = mallet.read_state(path)
    elif fmt == "mallet-weights":
        if alpha is None:
            raise MethodError(
                f"{path}: MALLET's topic-word weights carry no alpha; pass alpha= (a vector or "
                "the --output-topic-keys file; CLI: --alpha FILE)"
            )
        model = mallet.read_word_weights(path, alpha)
    elif fmt == "gensim":
        model = load_gensim(path)
    elif fmt == "tomotopy":
        model = load_tomotopy(path)
    elif fmt == "pyldavis":
        model = load_pyldavis(path, alpha)
    else:
        raise InputFileError(f"{path}: unknown model format {fmt!r} (known: {', '.join(FORMATS)})")
    return model if name is None else model.with_params(name=name)


def _from_object(obj: Any, vocab: Any, alpha: Any) -> TopicModel:
    if is_gensim_lda(obj):
        return from_gensim(obj)
    if is_sklearn(obj):
        return from_sklearn(obj, vocab)
    if is_tomotopy(obj):
        return from_tomotopy(obj)
    if is_pyldavis(obj):
        return from_pyldavis(obj, alpha)
    raise MethodError(
        f"cannot make a topic model from a {type(obj).__module__}.{type(obj).__name__} "
        "(known: gensim LdaModel, scikit-learn LatentDirichletAllocation, tomotopy LDAModel, "
        "pyLDAvis-style dict, TopicModel)"
    )


def save_model(model: TopicModel, path: str | os.PathLike) -> None:
    """Save `model` in tealeaves' own `.npz` format."""
    save_npz(model, os.fspath(path))


def detect(path: str) -> str:
    """The format of the model file at `path`, from its name and first bytes."""
    if path.endswith(".npz"):
        return "npz"
    if os.path.exists(path + ".state"):  # gensim writes FILE and FILE.state
        return "gensim"
    if not os.path.exists(path):
        raise InputFileError(f"{path}: no such file")
    with open(path, "rb") as fh:
        head = fh.read(4096)
    if head.startswith(b"PK"):
        return "npz"
    if head.startswith(TOMOTOPY_MAGIC):
        return "tomotopy"
    found = mallet.sniff(path, head)
    if found:
        return found
    if head.lstrip().startswith(b"{"):
        return "pyldavis"
    raise InputFileError(
        f"{path}: cannot tell the model format (pass format=...; known: {', '.join(FORMATS)})"
    )
