"""gensim `LdaModel` / `LdaMulticore`: phi = `get_topics()` (each topic's normalised lambda),
alpha = the model's alpha vector, beta = eta when it is one value for every word. A model saved
without its dictionary (`id2word`) has no words; tealeaves says so rather than inventing names.

gensim's other models are `Topics` (`gensim_topics`): `HdpModel` its truncated topics
(`get_topics()`: each topic's lambda + eta normalised, distributions) with their stick weights
(`hdp_to_lda()`'s alpha) and its hierarchical Dirichlet-process prior named (`topics.hdp_prior`:
no held-out likelihood, why there); `Nmf` its components (`get_topics(normalize=False)`:
non-negative weights); `LsiModel` its singular vectors (signed weights; the singular values as
topic weights); `LdaSeqModel` one time slice as the LDA it is (`time_slice=t`: gensim's own
reading, exp(E[log beta_t]) normalised per topic, and the model's alphas) or every slice
(`time_slice="all"`: one model per slice).

Files are loaded with gensim's own `load` of the class the file holds (a pickle: it runs code from
the file, so load only files you trust)."""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator
from typing import Any

import numpy as np

from ..errors import InputFileError, InvalidModelError, MethodError
from ..model import CheckedPhi, TopicModel, fill_phi, normalized_rows, phi_layout, row_blocks, row_sums
from .common import build_model, require


def is_gensim_lda(obj: Any) -> bool:
    return type(obj).__module__.startswith("gensim.models.lda") and hasattr(obj, "get_topics")


def topics(lda: Any) -> Any:
    """`lda.get_topics()` (lambda = eta + sstats, each row normalised, in gensim's dtype) checked
    into the model's layout a block of topics at a time when the model uses gensim's own
    `get_topics` and `get_lambda`: the same numbers without gensim's two T x V temporaries."""
    from gensim.models.ldamodel import LdaModel, LdaState

    state = getattr(lda, "state", None)
    if state is None:
        raise InvalidModelError("the model has no state: its .state file is missing or unreadable (gensim "
                                "saves a model in several files: MODEL, MODEL.state, MODEL.id2word, ...)")
    if type(lda).get_topics is not LdaModel.get_topics or type(state).get_lambda is not LdaState.get_lambda:
        return lda.get_topics()
    sstats, eta = state.sstats, np.asarray(state.eta)
    T, V = sstats.shape

    def blocks():
        for rows in row_blocks(T, V):
            lam = (eta[rows] if eta.ndim == 2 else eta) + sstats[rows]
            yield normalized_rows(lam, row_sums(lam))  # lam / its sum, also past float64's range

    return CheckedPhi(fill_phi(phi_layout(T, V), blocks(), normalize=True))


def from_gensim(lda: Any, name: str = "gensim", source: str | None = None) -> TopicModel:
    try:
        phi = topics(lda)
    except InvalidModelError as exc:
        raise InvalidModelError(f"{source or name}: {exc}") from None
    eta = np.asarray(lda.eta, dtype=np.float64)
    same = bool(eta.size) and np.allclose(eta, eta.reshape(-1)[0])
    beta = float(eta.reshape(-1)[0]) if same else None
    num_words = (phi.array if isinstance(phi, CheckedPhi) else phi).shape[1]
    vocab = _vocab(lda, num_words, source or name)
    meta = {
        "format": "gensim",
        "source": source,
        "beta": "eta" if same else (f"none: eta differs by word (eta='auto' learns it; shape {eta.shape}, "
                                    f"mean {float(eta.mean()):.4g}); one beta cannot stand for it"),
        "vocab": "from id2word"
        if vocab
        else "none: the model was saved without its dictionary (id2word); words are unknown",
    }
    return build_model(phi, lda.alpha, vocab, beta, name, source, meta)


OTHER = ("HdpModel", "Nmf", "LsiModel", "LdaSeqModel")


def is_gensim_other(obj: Any) -> bool:
    return type(obj).__module__.startswith("gensim.models") and type(obj).__name__ in OTHER


def _vocab(model: Any, num_words: int, where: str) -> tuple[str, ...] | None:
    """The word of every column 0..num_words-1 from the model's `id2word`, None without one; a
    one-line error when an id has no word (a dict, or a Dictionary filtered without compactify())
    or its entry is not a string (bytes, a number: never its repr as a word)."""
    id2word = getattr(model, "id2word", None)
    if id2word is None or type(id2word).__name__ == "FakeDict":
        return None
    words, missing = [], []
    for i in range(num_words):
        try:
            words.append(id2word[i])
        except (KeyError, IndexError):
            missing.append(i)
    if missing:
        raise InvalidModelError(
            f"{where}: id2word has no word for id {missing[0]} ({len(missing)} of the model's {num_words} "
            "columns have none): the dictionary does not match the model (filtered without compactify()?)")
    bad = next((i for i, w in enumerate(words) if not isinstance(w, str)), None)
    if bad is not None:
        raise InvalidModelError(f"{where}: id2word maps id {bad} to {repr(words[bad])[:40]} "
                                f"({type(words[bad]).__name__}), not a word (a string)")
    return tuple(words)


def gensim_topics(obj: Any, name: str = "gensim", time_slice: int | str | None = None) -> Any:
    """A gensim HdpModel, Nmf, LsiModel (`Topics`) or LdaSeqModel (a `TopicModel` per time slice:
    `time_slice` an index, or "all" for a list) as the module notes say."""
    from ..topics import Topics, hdp_prior

    kind = type(obj).__name__
    source = f"gensim {kind}"
    if kind == "LdaSeqModel":
        return _ldaseq(obj, name, time_slice)
    if time_slice is not None:
        raise MethodError(f"time_slice applies to gensim's LdaSeqModel only, not a {kind}")
    if kind == "HdpModel":
        weights = np.asarray(obj.get_topics(), dtype=np.float64)
        sticks, _ = obj.hdp_to_lda()
        alpha, gamma = float(obj.m_alpha), float(obj.m_gamma)
        return Topics(name=name, source=source, vocab=_vocab(obj, weights.shape[1], source), weights=weights,
                      weights_kind="distributions", topic_weights=np.asarray(sticks, dtype=np.float64),
                      metadata={"format": "gensim", "truncation": weights.shape[0], "hdp_alpha": alpha,
                                "gamma": gamma,
                                "topic_weights": "the stick-breaking weights of the truncated topics "
                                                 "(hdp_to_lda's alpha)"},
                      prior_note=hdp_prior(alpha, gamma, f"its truncation to {weights.shape[0]} topics",
                                           "gensim's hdp_to_lda()"))
    if kind == "Nmf":
        weights = np.asarray(obj.get_topics(normalize=False), dtype=np.float64)
        return Topics(name=name, source=source, vocab=_vocab(obj, weights.shape[1], source), weights=weights,
                      weights_kind="nonnegative", weights_note="NMF components",
                      metadata={"format": "gensim"})
    if getattr(obj, "projection", None) is None:
        raise InvalidModelError(f"{name}: the LsiModel has no projection (its topics; saved as a second "
                                "file, MODEL.projection)")
    weights = np.asarray(obj.get_topics(), dtype=np.float64)  # LsiModel: projection.u.T
    s = np.asarray(obj.projection.s, dtype=np.float64)[: weights.shape[0]]
    return Topics(name=name, source=source, vocab=_vocab(obj, weights.shape[1], source), weights=weights,
                  weights_kind="signed", weights_note="LSI singular vectors", topic_weights=s,
                  metadata={"format": "gensim", "topic_weights": "the singular values"})


def _ldaseq(obj: Any, name: str, time_slice: int | str | None) -> TopicModel | list[TopicModel]:
    slices = len(obj.time_slice)
    if time_slice is None:
        raise MethodError(f"{name}: a gensim LdaSeqModel has {slices} time slices; choose one with "
                          f"time_slice=0..{slices - 1} (CLI --time-slice) or time_slice='all' for one "
                          "model per slice")
    if time_slice == "all":
        return [_ldaseq_slice(obj, f"{name}@{t}", t) for t in range(slices)]
    if isinstance(time_slice, bool) or not isinstance(time_slice, int | np.integer) \
            or not 0 <= time_slice < slices:
        raise MethodError(f"{name}: time_slice must be 0..{slices - 1} or 'all', got {time_slice!r}")
    return _ldaseq_slice(obj, name, int(time_slice))


def _ldaseq_slice(obj: Any, name: str, t: int) -> TopicModel:
    logp = np.stack([np.asarray(chain.e_log_prob[:, t], dtype=np.float64) for chain in obj.topic_chains])
    phi = np.exp(logp - logp.max(axis=1, keepdims=True))
    phi /= phi.sum(axis=1, keepdims=True)  # gensim's own reading of a slice (print_topic, dtm_vis)
    meta = {"format": "gensim LdaSeqModel", "time_slice": t, "time_slices": len(obj.time_slice),
            "phi": "exp(E[log beta_t]) normalised per topic, as gensim's print_topic and dtm_vis read it"}
    return build_model(phi, obj.alphas, _vocab(obj, phi.shape[1], name), None, name, None, meta)


def missing_companion(path: str, exc: FileNotFoundError) -> InputFileError:
    """The error for a gensim model whose load opened a file that is not there: the model file
    itself, or (named) one of the files gensim saved beside it (large arrays as MODEL.NAME.npy,
    MODEL.state, MODEL.id2word), which were not copied with it."""
    gone = exc.filename if isinstance(exc.filename, str) else None
    if gone is None or os.path.abspath(gone) == os.path.abspath(path):
        return InputFileError(f"{path}: no such file (or a file gensim saved beside it is missing)")
    return InputFileError(f"{path}: its companion file {os.path.basename(gone)} is missing from "
                          f"{os.path.dirname(os.path.abspath(gone))} (gensim saves a model in several "
                          "files, MODEL.state, MODEL.id2word and large arrays as MODEL.NAME.npy: copy "
                          "them all along with it)")


def load_gensim_file(path: str, cls: str | None, time_slice: int | str | None = None) -> Any:
    """Any gensim model file (consent given): loaded by the `load` of the class it holds."""
    require("gensim", "gensim")
    name = os.path.basename(path)
    kind = (cls or "").rsplit(".", 1)[-1]
    if kind in ("LdaModel", "LdaMulticore") or cls is None:
        if time_slice is not None:
            raise MethodError(f"{path}: time_slice applies to gensim's LdaSeqModel only")
        return load_gensim(path)
    if kind not in OTHER:
        raise InputFileError(f"{path}: a gensim {kind}, which is no topic model tealeaves reads (known: "
                             f"LdaModel, LdaMulticore, {', '.join(OTHER)})")
    import importlib

    module, _, attr = cls.rpartition(".")
    try:
        with _quiet():
            model = getattr(importlib.import_module(module), attr).load(path)
    except FileNotFoundError as exc:
        raise missing_companion(path, exc) from None
    except Exception as exc:  # gensim raises many kinds for a bad file
        raise InputFileError(f"{path}: gensim cannot load it as a {kind} "
                             f"({type(exc).__name__}: {exc})") from None
    if kind == "LsiModel" and getattr(model, "projection", None) is None:  # gensim only logs its absence
        raise InputFileError(f"{path}: the LsiModel has no projection (its topics): gensim saves it in "
                             f"two files, {name} and {name}.projection, and the second is missing or "
                             "unreadable")
    return gensim_topics(model, name, time_slice)


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """gensim's loaders log what they skip (LsiModel: "failed to load projection") through the root
    logger, which would also configure it for good; the reader says it in its one-line error."""
    root = logging.getLogger()
    guard = logging.NullHandler() if not root.handlers else None
    if guard is not None:
        root.addHandler(guard)  # keeps logging.warning() from calling basicConfig
    logging.disable(logging.WARNING)
    try:
        yield
    finally:
        logging.disable(logging.NOTSET)
        if guard is not None:
            root.removeHandler(guard)


def load_gensim(path: str | os.PathLike) -> TopicModel:
    require("gensim", "gensim")
    from gensim.models import LdaModel

    path = os.fspath(path)
    try:
        with _quiet():  # gensim logs "failed to load state" before its error: the error says it
            lda = LdaModel.load(path)
    except FileNotFoundError as exc:
        raise missing_companion(path, exc) from None
    except Exception as exc:  # gensim raises many kinds for a bad file
        raise InputFileError(
            f"{path}: gensim cannot load it as an LdaModel ({type(exc).__name__}: {exc})"
        ) from None
    return from_gensim(lda, name=os.path.basename(path), source=path)
