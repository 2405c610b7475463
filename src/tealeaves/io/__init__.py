"""Model files and objects from other libraries, one module per outside format:
`npz` (ours), `mallet` (state, topic-word weights, topic keys, doc-topics), `gensim`, `sklearn`,
`tomotopy`, `pyldavis`, `pickled` (gensim files, pickled objects). `load_model` detects the
format from the name and first bytes.

Pickle-based files (gensim's `save`, pickled or joblib-dumped scikit-learn models) run code when
loaded: they load only with `allow_pickle=True`, never by detection alone. tomotopy's native
loader runs in a child process with a time limit (`native`)."""

from __future__ import annotations

import os
from typing import Any

from ..corpus import read_vocab_file
from ..errors import InputFileError, InvalidModelError, MethodError
from ..files.textfile import check_regular
from ..model import TopicModel
from . import mallet
from .gensim import from_gensim, is_gensim_lda, load_gensim
from .npz import load_npz, save_npz
from .pickled import gensim_sibling, load_pickled_object, looks_like_pickle, refuse
from .pyldavis import from_pyldavis, is_pyldavis, load_pyldavis
from .sklearn import from_sklearn, is_sklearn
from .tomotopy import MAGIC as TOMOTOPY_MAGIC
from .tomotopy import from_tomotopy, is_tomotopy, load_tomotopy

FORMATS = ("npz", "mallet-state", "mallet-weights", "gensim", "tomotopy", "pyldavis", "pickle")
# other names users reach for
FORMAT_ALIASES = {"sklearn": "pickle", "scikit-learn": "pickle", "joblib": "pickle", "mallet": "mallet-state"}

__all__ = ["load_model", "save_model", "detect", "sniff_format", "FORMATS", "FORMAT_ALIASES",
           "read_doc_topics", "read_topic_keys"]

read_doc_topics = mallet.read_doc_topics
read_topic_keys = mallet.read_topic_keys


def load_model(
    source: str | os.PathLike | Any,
    format: str | None = None,
    normalize: bool = False,
    vocab: Any = None,
    alpha: Any = None,
    name: str | None = None,
    allow_pickle: bool = False,
    timeout: float | None = None,
) -> TopicModel:
    """A `TopicModel` from a file or a trained model object (the formats and options:
    `tealeaves.load_model`, which is this function that also takes the bundled models by name,
    `datasets.load_model`)."""
    if vocab is not None:
        vocab = _Vocab(vocab_words(vocab), f"vocabulary {os.fspath(vocab)}"
                       if isinstance(vocab, str | os.PathLike) else "vocab=")
    if isinstance(source, TopicModel):
        refuse_alpha(alpha, "a TopicModel")
        return _finish(source, vocab, None)
    if not isinstance(source, str | os.PathLike):
        model = _from_object(source, vocab, alpha)
        return _finish(model, vocab, name)
    path = os.fspath(source)
    if format is not None and not isinstance(format, str):
        raise MethodError(f"format must be a string, got {format!r}")
    check_regular(path)
    fmt = FORMAT_ALIASES.get(format, format) if format else detect(path)
    if fmt not in FORMATS:
        known = ", ".join([*FORMATS, *FORMAT_ALIASES])
        raise MethodError(f"{path}: unknown model format {fmt!r} (known: {known})")
    if fmt in ("gensim", "pickle"):
        if not allow_pickle:
            raise refuse(path, "a gensim model file" if fmt == "gensim" else "this file")
        if fmt == "gensim":
            refuse_alpha(alpha, f"{path} (a gensim model)")
            model = load_gensim(path)
        else:
            model = load_pickled_object(path, lambda obj: _from_object(obj, vocab, alpha))
        return _finish(model, vocab, name)
    if fmt in ("npz", "mallet-state", "tomotopy"):
        refuse_alpha(alpha, f"{path} (format {fmt})")
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
    elif fmt == "tomotopy":
        model = load_tomotopy(path, timeout)
    else:
        model = load_pyldavis(path, alpha)
    return _finish(model, vocab, name)


class _Vocab(tuple):
    """Words given with `vocab=`, and where they came from (for messages)."""

    source: str

    def __new__(cls, words: tuple[str, ...], source: str) -> _Vocab:
        out = super().__new__(cls, words)
        out.source = source
        return out


def _finish(model: TopicModel, vocab: _Vocab | None, name: str | None) -> TopicModel:
    """`model` with the vocabulary given (if any: attached when it has none, else checked) and
    its name."""
    if vocab is not None:
        model = model.with_vocab(vocab, vocab.source)
    return model if name is None else model.with_params(name=name)


def vocab_words(vocab: Any) -> tuple[str, ...]:
    """Words from a vocabulary file (one per line), a fitted vectorizer
    (`get_feature_names_out`) or a sequence of words."""
    if isinstance(vocab, str | os.PathLike):
        return read_vocab_file(vocab)
    if hasattr(vocab, "get_feature_names_out"):
        try:
            vocab = vocab.get_feature_names_out()
        except Exception as exc:  # NotFittedError and friends
            raise InvalidModelError(
                f"the vectorizer gives no vocabulary ({type(exc).__name__}: {exc})") from None
    try:
        return tuple(str(w) for w in vocab)
    except TypeError:
        raise MethodError(f"vocab must be a file, a fitted vectorizer or a list of words, got "
                          f"{type(vocab).__name__}") from None


def refuse_alpha(alpha: Any, what: str) -> None:
    """Refuse `alpha` for a model that carries its own (applying it silently, or ignoring it
    silently, would both score something other than what was asked)."""
    if alpha is not None:
        raise MethodError(f"{what} has its own alpha; alpha= (CLI: --alpha) is only for formats without "
                          "one (MALLET topic-word weights, pyLDAvis JSON)")


def _from_object(obj: Any, vocab: Any, alpha: Any) -> TopicModel:
    if not is_pyldavis(obj):
        refuse_alpha(alpha, f"a {type(obj).__name__} object")
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
    """The format of the model file at `path`, from its name and first bytes. A pickle is
    reported as "gensim" (it has gensim's `.state` sibling) or "pickle"; loading it still needs
    consent."""
    fmt = sniff_format(path)
    if fmt is None:
        raise InputFileError(
            f"{path}: cannot tell the model format (give it: format=... in Python, --model-format "
            f"on the command line; known: {', '.join(FORMATS)}; a scikit-learn model saved with "
            "pickle or joblib: --model-format sklearn --allow-pickle)"
        )
    return fmt


def sniff_format(path: str) -> str | None:
    """`detect`, but None for a file in no format we know."""
    if path.endswith(".npz"):
        return "npz"
    if not os.path.exists(path):
        raise InputFileError(f"{path}: no such file")
    if os.path.isdir(path):
        raise InputFileError(f"{path}: is a directory, not a model file")
    try:
        with open(path, "rb") as fh:
            head = fh.read(4096)
    except OSError as exc:
        raise InputFileError(f"{path}: cannot read ({exc.strerror or exc})") from None
    if looks_like_pickle(head):
        return "gensim" if gensim_sibling(path) else "pickle"
    if head.startswith(b"PK"):
        return "npz"
    if head.startswith(TOMOTOPY_MAGIC):
        return "tomotopy"
    found = mallet.sniff(path, head)
    if found:
        return found
    if head.lstrip().startswith(b"{"):
        return "pyldavis"
    return None


# --- issue 24 part B: the model zoo (tomotopy's other models, BERTopic, OCTIS) as Topics; the
# general load_topics calls zoo_detect before the other detection, and zoo_load for ZOO_FORMATS.
from .zoo import ZOO_FORMATS, zoo_detect, zoo_load  # noqa: E402, F401
