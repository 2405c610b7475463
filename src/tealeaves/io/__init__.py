"""Model files and objects from other libraries, one module per outside format:
`npz` (ours), `mallet` (state, topic-word weights, topic keys, doc-topics), `gensim`, `sklearn`,
`tomotopy`, `pyldavis`, `pickled` (gensim files, pickled objects), `arrays` (a topic-word matrix
and its words, with what else there is). `load_model` (LDA) and `load_topics` (a model of any
kind, `Topics`) detect the format from the name and first bytes; a format given that the file's
first bytes contradict is an error naming what the file is.

Pickle-based files (gensim's `save`, pickled or joblib-dumped scikit-learn models) run code when
loaded: they load only with `allow_pickle=True`, never by detection alone. tomotopy's native
loader runs in a child process with a time limit (`native`)."""

from __future__ import annotations

import dataclasses
import os
from typing import Any

from ..corpus import read_vocab_file
from ..errors import InputFileError, InvalidModelError, MethodError, no_such_file, shorten
from ..files.textfile import check_regular
from ..model import TopicModel
from ..topics import Topics
from . import mallet
from .arrays import is_arrays_archive, load_arrays
from .bertopic import from_bertopic, is_bertopic
from .common import refuse_alpha
from .gensim import from_gensim, gensim_topics, is_gensim_lda, is_gensim_other, load_gensim_file
from .npz import load_npz, save_npz
from .pickled import (
    describe_pickle,
    gensim_sibling,
    library_of,
    load_pickled_object,
    looks_like_pickle,
    pickle_class,
    refuse,
)
from .pyldavis import from_pyldavis, is_pyldavis, load_pyldavis
from .sklearn import from_sklearn, is_sklearn, is_sklearn_nmf, sklearn_nmf
from .tomotopy import MAGIC as TOMOTOPY_MAGIC
from .tomotopy import from_tomotopy, is_tomotopy, load_tomotopy
from .tomotopy_zoo import NAMES as ZOO_NAMES
from .zoo import ZOO_FORMATS, zoo_detect, zoo_load

FORMATS = ("npz", "mallet-state", "mallet-weights", "gensim", "tomotopy", "pyldavis", "pickle", "arrays")
# other names users reach for
FORMAT_ALIASES = {"sklearn": "pickle", "scikit-learn": "pickle", "joblib": "pickle", "mallet": "mallet-state",
                  "npy": "arrays", "csv": "arrays"}
# what each format is, for the message when a file is another
FORMAT_TEXT = {"npz": "a tealeaves .npz model", "mallet-state": "a MALLET --output-state file",
               "mallet-weights": "a MALLET --topic-word-weights-file", "gensim": "a gensim model file (save)",
               "tomotopy": "a tomotopy model file", "pyldavis": "a pyLDAvis-style JSON file",
               "pickle": "a pickled model object (pickle or joblib)",
               "arrays": "plain arrays (a topic-word .npy, .npz with topic_word, or CSV)",
               **{f: f"a tomotopy {name} file" for f, name in ZOO_NAMES.items()},
               "bertopic": "a BERTopic directory", "bertopic-pickle": "a BERTopic pickle",
               "octis": "OCTIS model output"}

__all__ = ["load_model", "load_topics", "save_model", "detect", "sniff_format", "FORMATS", "FORMAT_ALIASES",
           "ZOO_FORMATS", "read_doc_topics", "read_topic_keys", "not_lda"]

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
    time_slice: int | None = None,
) -> TopicModel:
    """A `TopicModel` (LDA) from a file or a trained model object (the formats and options:
    `tealeaves.load_model`, which is this function that also takes the bundled models by name,
    `datasets.load_model`). A model of another kind is a one-line error saying what it is."""
    if time_slice == "all":
        raise MethodError("time_slice='all' gives one model per slice: use load_topics")
    model = _load(source, format, normalize, vocab, alpha, name, allow_pickle, timeout, time_slice=time_slice)
    if isinstance(model, Topics):
        if model.lda is None:
            raise not_lda(model)
        return model.lda
    return model


def load_topics(
    source: str | os.PathLike | Any,
    format: str | None = None,
    normalize: bool = False,
    vocab: Any = None,
    alpha: Any = None,
    name: str | None = None,
    allow_pickle: bool = False,
    timeout: float | None = None,
    doc_topic: Any = None,
    weights: str | None = None,
    time_slice: int | str | None = None,
    metadata: str | None = None,
) -> Topics | list[Topics]:
    """A model of any kind as `Topics` (an LDA through `load_model`'s readers, then
    `Topics.from_lda`); `tealeaves.load_topics` documents the formats. A list for
    `time_slice="all"` (one model per time slice of a gensim LdaSeqModel). `metadata`: for a
    tomotopy DMRModel, the metadata value whose prior scores held-out documents."""
    out = _load(source, format, normalize, vocab, alpha, name, allow_pickle, timeout, doc_topic, weights,
                time_slice, metadata)
    if isinstance(out, list):
        return [_as_topics(m) for m in out]
    return _as_topics(out)


def _as_topics(model: TopicModel | Topics) -> Topics:
    if isinstance(model, Topics):
        return model
    fmt = model.metadata.get("format")
    return Topics.from_lda(model, source=f"LDA ({fmt})" if fmt else "LDA")


def not_lda(model: Topics) -> MethodError:
    """The one-line error for a model of another kind where LDA is needed."""
    kinds = {"distributions": "topic-word distributions without a Dirichlet prior",
             "nonnegative": "non-negative topic-word weights", "signed": "signed topic-word weights"}
    what = model.weights_note or kinds.get(model.weights_kind or "", "top words only")
    fmt = model.metadata.get("format") if isinstance(model.metadata, dict) else None
    read = f" (read as format {fmt})" if isinstance(fmt, str) else ""
    return MethodError(f"{model.name} is a {model.source} ({what}), not an LDA model{read}: load it with "
                       "load_topics (tealeaves evaluate, coherence, diversity take it) and use the "
                       "metrics that apply to it")


def _load(source: Any, format: str | None, normalize: bool, vocab: Any, alpha: Any, name: str | None,
          allow_pickle: bool, timeout: float | None, doc_topic: Any = None, weights: str | None = None,
          time_slice: int | str | None = None,
          metadata: str | None = None) -> TopicModel | Topics | list[TopicModel]:
    """The model a source holds, of whatever kind: LDA as a TopicModel."""
    if metadata is not None and not isinstance(metadata, str):
        raise MethodError(f"metadata must be a string (a DMR metadata value), got {type(metadata).__name__}")
    if metadata is not None and not isinstance(source, str | os.PathLike):
        raise MethodError("metadata= is for a tomotopy DMRModel file; this is a "
                          f"{type(source).__name__} object")
    if vocab is not None:
        vocab = _Vocab(vocab_words(vocab), f"vocabulary {os.fspath(vocab)}"
                       if isinstance(vocab, str | os.PathLike) else "vocab=")
    if isinstance(source, TopicModel | Topics):
        refuse_alpha(alpha, f"a {type(source).__name__}")
        return _finish(source, vocab, name)
    if not isinstance(source, str | os.PathLike):
        model = _from_object(source, vocab, alpha, time_slice, normalize=normalize)
        return _finish(model, vocab, name)
    path = os.fspath(source)
    if format is not None and not isinstance(format, str):
        raise MethodError(f"format must be a string, got {format!r}")
    if not (os.path.isdir(path) and format in (None, "bertopic")):  # BERTopic saves a directory
        check_regular(path)
    fmt = FORMAT_ALIASES.get(format, format) if format else detect(path)
    if fmt in ZOO_FORMATS:
        refuse_alpha(alpha, f"{path} (format {fmt})")
        if doc_topic is not None or weights is not None or time_slice is not None:
            raise MethodError(f"{path}: doc_topic=, weights= and time_slice= are not for format {fmt}")
        model = zoo_load(path, fmt, allow_pickle=allow_pickle, timeout=timeout,
                         vocab=vocab if fmt == "octis" else None, metadata=metadata)
        return _finish(model, None if fmt == "octis" else vocab, name)
    if metadata is not None:
        raise MethodError(f"{path}: metadata= (--dmr-metadata) is for tomotopy's DMRModel; this is "
                          f"format {fmt}")
    if fmt not in FORMATS:
        known = ", ".join([*FORMATS, *ZOO_FORMATS, *FORMAT_ALIASES])
        raise MethodError(f"{path}: unknown model format {fmt!r} (known: {known})")
    if format:
        check_format(path, format, fmt, allow_pickle)
    if fmt != "arrays" and (doc_topic is not None or weights is not None):
        raise MethodError(f"{path}: doc_topic= and weights= (CLI --doc-topic, --weights) are for the arrays "
                          f"format; this is {FORMAT_TEXT[fmt]}")
    if time_slice is not None and fmt not in ("gensim", "pickle"):
        raise MethodError(f"{path}: time_slice (CLI --time-slice) is for gensim's LdaSeqModel; this is "
                          f"{FORMAT_TEXT[fmt]}")
    if fmt in ("gensim", "pickle"):
        if not allow_pickle:
            raise refuse(path, "a gensim model file" if fmt == "gensim" else "this file")
        cls = pickle_class(path)
        if cls is not None and cls.startswith("gensim."):
            refuse_alpha(alpha, f"{path} (a gensim model)")
            model = load_gensim_file(path, cls, time_slice)
        else:
            model = load_pickled_object(path, lambda obj: _from_object(obj, vocab, alpha, time_slice, path))
        return _finish(model, vocab, name)
    if fmt in ("npz", "mallet-state", "tomotopy"):
        refuse_alpha(alpha, f"{path} (format {fmt})")
    if fmt == "arrays":
        return load_arrays(path, vocab=vocab, doc_topic=doc_topic, alpha=alpha, weights=weights,
                           normalize=normalize, name=name)
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
        model = load_pyldavis(path, alpha, normalize)
    return _finish(model, vocab, name)


def check_format(path: str, given: str, fmt: str, allow_pickle: bool = True) -> None:
    """A format given for a file whose first bytes say it is another (the wrong library's file):
    one line naming what the file is and the format to give. Pickles: the class they hold says
    which library made them (read without unpickling); without consent the refusal comes first."""
    found = sniff_format(path)
    if found in ("gensim", "pickle") and fmt in ("gensim", "pickle"):
        if not allow_pickle:
            return
        cls = pickle_class(path)
        lib = library_of(cls)
        if cls is None:
            return
        if given == "gensim" and lib != "gensim":
            raise InputFileError(f"{path}: this is {describe_pickle(cls)}, not a gensim model file; give "
                                 f"--model-format {'sklearn' if lib == 'scikit-learn' else 'pickle'}")
        if given in ("sklearn", "scikit-learn") and lib != "scikit-learn":
            raise InputFileError(f"{path}: this is {describe_pickle(cls)}, not a scikit-learn model; give "
                                 f"--model-format {'gensim' if lib == 'gensim' else 'pickle'}")
        return
    if found is None or found == fmt:
        return
    what = FORMAT_TEXT[found]
    if found in ("gensim", "pickle"):
        what = describe_pickle(pickle_class(path))
    raise InputFileError(f"{path}: this is {what}, not {FORMAT_TEXT[fmt]} (--model-format {given}); give "
                         f"--model-format {found}, or leave it out: it is detected")


class _Vocab(tuple):
    """Words given with `vocab=`, and where they came from (for messages)."""

    source: str

    def __new__(cls, words: tuple[str, ...], source: str) -> _Vocab:
        out = super().__new__(cls, words)
        out.source = source
        return out


def _finish(model: Any, vocab: _Vocab | None, name: str | None) -> Any:
    """`model` (a TopicModel, Topics, or a list of them) with the vocabulary given (if any: attached
    when it has none, else checked) and its name."""
    if isinstance(model, list):
        return [_finish(m, vocab, None if name is None else f"{name}@{i}") for i, m in enumerate(model)]
    if isinstance(model, Topics):
        if model.lda is not None:
            lda = _finish(model.lda, vocab, name)
            return dataclasses.replace(model, lda=lda, name=lda.name, vocab=lda.vocab, weights=lda.phi)
        if vocab is not None:
            if model.vocab is None:
                model = dataclasses.replace(model, vocab=tuple(vocab))
            elif tuple(vocab) != model.vocab:
                raise InvalidModelError(f"{vocab.source} does not match the model's own vocabulary")
        return model if name is None else dataclasses.replace(model, name=name)
    if vocab is not None:
        model = model.with_vocab(vocab, vocab.source)
    return model if name is None else model.with_params(name=name)


def vocab_words(vocab: Any) -> tuple[str, ...]:
    """Words from a vocabulary file (one per line), a fitted vectorizer
    (`get_feature_names_out`) or a sequence of words (strings: a number is not a word)."""
    if isinstance(vocab, str | os.PathLike):
        return read_vocab_file(vocab)
    if hasattr(vocab, "get_feature_names_out"):
        try:
            vocab = vocab.get_feature_names_out()
        except Exception as exc:  # NotFittedError and friends
            raise InvalidModelError(
                f"the vectorizer gives no vocabulary ({type(exc).__name__}: {exc})") from None
    try:
        words = tuple(vocab)
    except TypeError:
        raise MethodError(f"vocab must be a file, a fitted vectorizer or a list of words, got "
                          f"{type(vocab).__name__}") from None
    bad = next((i for i, w in enumerate(words) if not isinstance(w, str)), None)
    if bad is not None:  # str() would make 273.0 the word "273.0"
        raise MethodError(f"vocab must be words (strings); entry {bad} is {shorten(repr(words[bad]))} "
                          f"({type(words[bad]).__name__})")
    return tuple(str(w) for w in words)  # numpy's str_ as str


def _from_object(obj: Any, vocab: Any, alpha: Any, time_slice: int | str | None = None,
                 source: str | None = None, normalize: bool = False) -> Any:
    if not is_pyldavis(obj):
        refuse_alpha(alpha, f"a {type(obj).__name__} object")
    if time_slice is not None and not type(obj).__name__ == "LdaSeqModel":
        raise MethodError(f"time_slice applies to gensim's LdaSeqModel only, not a {type(obj).__name__}")
    if is_gensim_lda(obj):
        return from_gensim(obj)
    if is_gensim_other(obj):
        return gensim_topics(obj, time_slice=time_slice)
    if is_sklearn(obj):
        return from_sklearn(obj, vocab, source=source)
    if is_sklearn_nmf(obj):
        return sklearn_nmf(obj, vocab, source=source)
    if is_tomotopy(obj):
        return from_tomotopy(obj)
    if is_bertopic(obj):
        return from_bertopic(obj)
    if is_pyldavis(obj):
        return from_pyldavis(obj, alpha, normalize=normalize)
    raise MethodError(
        f"cannot make a topic model from a {type(obj).__module__}.{type(obj).__name__} "
        "(known: gensim LdaModel, LdaMulticore, HdpModel, Nmf, LsiModel, LdaSeqModel; scikit-learn "
        "LatentDirichletAllocation, NMF; tomotopy LDAModel; BERTopic; pyLDAvis-style dict; TopicModel, "
        "Topics)"
    )


def save_model(model: TopicModel, path: str | os.PathLike, follow_link: bool = True) -> None:
    """Save `model` in tealeaves' own `.npz` format (`follow_link=False`: in a folder the tool
    keeps, a link at `path` is replaced, not written through: `files.atomic`)."""
    save_npz(model, os.fspath(path), follow_link)


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
    """`detect`, but None for a file in no format we know. The model zoo's formats first
    (`zoo.zoo_detect`: a BERTopic directory, OCTIS's .npz, tomotopy's other models)."""
    if not os.path.exists(path):
        raise no_such_file(path)
    if not os.path.isdir(path):
        check_regular(path)  # a pipe would be read here and again by the reader (or block)
    zoo = zoo_detect(path)
    if zoo is not None:
        return zoo
    if os.path.isdir(path):
        raise InputFileError(f"{path}: is a directory, not a model file (a BERTopic model saved with "
                             "save() is a directory holding topics.json and config.json)")
    if path.endswith(".npz"):
        return "arrays" if is_arrays_archive(path) else "npz"
    try:
        with open(path, "rb") as fh:
            head = fh.read(4096)
    except OSError as exc:
        raise InputFileError(f"{path}: cannot read ({exc.strerror or exc})") from None
    if looks_like_pickle(head):
        cls = pickle_class(path)
        return "gensim" if gensim_sibling(path) or (cls or "").startswith("gensim.") else "pickle"
    if head.startswith(b"PK"):
        return "arrays" if is_arrays_archive(path) else "npz"
    if head.startswith(b"\x93NUMPY"):
        return "arrays"
    if head.startswith(TOMOTOPY_MAGIC):
        return "tomotopy"
    found = mallet.sniff(path, head)
    if found:
        return found
    if head.lstrip().startswith(b"{"):
        return "pyldavis"
    return None

