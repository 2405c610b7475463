"""Bundled data: the State of the Union corpus (paragraphs of the US presidents' annual messages,
1790-2026) with a train / held-out split, labels for B-Cubed, and demo models trained on it; built
by `scripts/make_sotu.py` (see data/SOTU_SOURCE.txt for the source and its terms).

The one place bundled names are resolved: `read_corpus("sotu:heldout")` and
`load_model("sotu:sotu-20-asym")` here are the public `tealeaves.read_corpus` / `tealeaves.load_model`;
every other path goes to the readers (`corpus.read_corpus`, `io.load_model`), which know no names."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

import numpy as np

from . import corpus as _corpus
from . import io as _io
from .corpus import Corpus
from .errors import JUDGMENT_STUDIES, SOTU_CORPORA, SOTU_MODELS, InputFileError, MethodError, no_such_file
from .files.textfile import check_encoding
from .model import TopicModel
from .topics import Topics


@dataclass(frozen=True)
class SotuCorpus:
    train: Corpus
    heldout: Corpus
    heldout_text: list[str]  # the opening of each held-out paragraph (at most 300 characters)
    party: dict[str, np.ndarray]  # "train"/"heldout" -> party label of each paragraph
    president: dict[str, np.ndarray]
    year: dict[str, np.ndarray]
    address: dict[str, np.ndarray]  # index of the address each paragraph comes from
    parties: tuple[str, ...]
    presidents: tuple[str, ...]


def _path(name: str):
    return resources.files("tealeaves") / "data" / name


def sotu() -> SotuCorpus:
    """The bundled corpus: 19,597 paragraphs (701,059 tokens, 3,000 words); every fifth address
    is held out (3,400 paragraphs)."""
    with resources.as_file(_path("sotu_corpus.npz")) as p, np.load(p, allow_pickle=False) as f:
        words, offsets, vocab = f["words"].astype(np.int32), f["offsets"], [str(w) for w in f["vocab"]]
        held, address = f["heldout"], f["address"]
        party, president, year = f["address_party"], f["address_president"], f["address_year"]
        parties, presidents = tuple(str(x) for x in f["parties"]), tuple(str(x) for x in f["presidents"])
        texts = [str(t) for t in f["heldout_text"]]
    docs = [words[offsets[d] : offsets[d + 1]] for d in range(len(offsets) - 1)]
    parts = {"train": np.flatnonzero(~held), "heldout": np.flatnonzero(held)}
    corpora = {
        k: Corpus.from_word_ids([docs[i] for i in idx], vocab, f"sotu:{k}") for k, idx in parts.items()
    }
    return SotuCorpus(
        corpora["train"],
        corpora["heldout"],
        texts,
        {k: party[address[idx]] for k, idx in parts.items()},
        {k: president[address[idx]] for k, idx in parts.items()},
        {k: year[address[idx]] for k, idx in parts.items()},
        {k: address[idx] for k, idx in parts.items()},
        parties,
        presidents,
    )


def sotu_model(name: str = "sotu-20-asym") -> TopicModel:
    """A demo model trained on the corpus's training paragraphs (tomotopy, fixed seed)."""
    if name not in SOTU_MODELS:
        raise MethodError(f"unknown bundled model {name!r} (known: {', '.join(SOTU_MODELS)})")
    with resources.as_file(_path(f"{name}.npz")) as p:
        return _io.load_model(p, name=name)


def bundled_model(source: Any) -> bool:
    """Whether `source` names a bundled model (`sotu:...`; a file of that name comes first): what
    every reader of a model name asks before looking at a file."""
    return (isinstance(source, str | os.PathLike) and os.fspath(source).startswith("sotu:")
            and not os.path.exists(source))


def bundled_file(name: Any) -> str | None:
    """The file of tealeaves' own data a bundled name (`sotu:train`, `sotu:sotu-20-asym`,
    `digits:test`) is read from, None for any other value (a file of that name comes first): what
    an output must never replace."""
    if not isinstance(name, str) or os.path.exists(name):
        return None
    if name in JUDGMENT_STUDIES:
        return str(_path(JUDGMENT_STUDIES[name]))
    if ":" not in name:
        return None
    prefix, part = name.split(":", 1)
    if name in SOTU_CORPORA:
        return str(_path("sotu_corpus.npz"))
    if prefix == "sotu" and part in SOTU_MODELS:
        return str(_path(f"{part}.npz"))
    if name in ("digits:test", "digits:train"):
        return str(_path("digits_binary.npz"))
    return None


def data_folder() -> str:
    """The folder of tealeaves' bundled data (tealeaves/data)."""
    return str(resources.files("tealeaves") / "data")


def bundled_corpus(name: Any) -> Corpus | None:
    """The part of the bundled corpus `name` names (`sotu:train`, `sotu:heldout`), or None for any
    other name or object."""
    if not isinstance(name, str) or name not in SOTU_CORPORA:
        return None
    return getattr(sotu(), name.split(":")[1])


def read_corpus(
    path: str | os.PathLike,
    vocab: Sequence[str] | None = None,
    format: str | None = None,
    strict: bool = False,
    vocab_path: str | os.PathLike | None = None,
    tokenizer: str | Callable[[str], list[str]] = "whitespace",
    encoding: str = "utf-8",
) -> Corpus:
    """Read documents from `path`.

    Formats: `text` (one document per line, whitespace-separated tokens mapped through
    `vocab`; without a vocabulary one is built from the file; `tokenizer` "default" applies
    `tealeaves.util.text.tokenize` to raw text, or pass a callable), `ids` (one document per line,
    whitespace-separated integer word ids; `vocab_path` may name the file's vocabulary, one
    word per line, which must equal `vocab`), `npz` (arrays `words`, `offsets` and optionally
    `vocab`). The format is taken from the extension (.npz) unless given. `encoding` is the text
    files' character encoding. The bundled corpus is `sotu:train` / `sotu:heldout`.
    """
    name = os.fspath(path)
    corpus = bundled_corpus(name)
    if corpus is None:
        return _corpus.read_corpus(name, vocab=vocab, format=format, strict=strict, vocab_path=vocab_path,
                                   tokenizer=tokenizer, encoding=encoding)
    check_encoding(encoding)
    if vocab is not None and tuple(vocab) != corpus.vocab:
        texts = [[corpus.vocab[i] for i in d] for d in corpus]
        return Corpus.from_tokens(texts, vocab, name)
    return corpus


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
    """A trained topic model of any kind as `Topics`: what it provides, and so which metrics apply.

    Every `load_model` format and object (LDA: then every metric applies), and: gensim `HdpModel`
    (its truncated topics, distributions, with their stick weights; no prior), `Nmf` (non-negative
    weights), `LsiModel` (signed weights), `LdaSeqModel` (`time_slice=t`: that slice's LDA;
    `time_slice="all"`: a list, one model per slice); scikit-learn `NMF` (non-negative weights;
    `vocab` as for its LDA); plain arrays (`format="arrays"`, detected for `.npy` files and `.npz`
    archives holding `topic_word`): a topic-word matrix (`.npy`, `.npz`, CSV), its words
    (`vocab`, a file one word per line), optionally the training documents' proportions
    (`doc_topic`, a D x T `.npy` or CSV file) and a prior (`alpha` for a Dirichlet; `mean` and
    `cov` in the archive for a logistic-normal), `weights` saying what the values are
    ("distributions", the default and checked: `normalize=True` rescales rows that do not sum to
    1 and says so in `metadata["normalized"]`; "nonnegative"; "signed"). Pickle-based files load
    only with `allow_pickle=True`, as for `load_model`; a format given for another library's file
    is an error naming what the file is. tomotopy's zoo, BERTopic and OCTIS: see
    docs/guide/other_models.md (`metadata`: for a tomotopy DMRModel, the metadata value whose
    Dirichlet prior scores held-out documents)."""
    if not bundled_model(source):
        return _io.load_topics(source, format=format, normalize=normalize, vocab=vocab, alpha=alpha,
                               name=name, allow_pickle=allow_pickle, timeout=timeout, doc_topic=doc_topic,
                               weights=weights, time_slice=time_slice, metadata=metadata)
    return _io.load_topics(load_model(source, vocab=vocab, alpha=alpha, name=name))


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
    """A `TopicModel` (LDA) from a file or a trained model object; a model of another kind is a
    one-line error saying what it is (load it with `load_topics`).

    Files: our `.npz`, MALLET's `--output-state` (gzip) and `--topic-word-weights-file` (needs
    `alpha`: a vector or the `--output-topic-keys` file), a gensim `LdaModel.save` file, a tomotopy
    `LDAModel.save` file, a pyLDAvis-style JSON (needs `alpha`). Objects: gensim `LdaModel` /
    `LdaMulticore`, scikit-learn `LatentDirichletAllocation` or a Pipeline ending in one (`vocab`:
    the fitted vectorizer or a word list, unless the pipeline holds the vectorizer), tomotopy
    `LDAModel`, a pyLDAvis-style dict (needs `alpha`); one time slice of a gensim `LdaSeqModel`
    (`time_slice`); plain arrays with a Dirichlet `alpha` (see `load_topics`).

    Pickle-based files (gensim's `save`; `format="pickle"`: a pickled or joblib-dumped model
    object, e.g. scikit-learn's) run code when loaded and load only with `allow_pickle=True`.
    `timeout` (seconds) limits tomotopy's loader, which runs in a child process (default 60 s
    + 2 s per MB). `vocab` (a word list, a fitted vectorizer or a vocabulary file, one word per
    line) gives any model saved without its words a vocabulary; a model that has one must match it.
    The bundled models: `sotu:sotu-20-asym`, `sotu:sotu-20-sym`, `sotu:sotu-50-asym` (a file of that
    name comes first)."""
    if not bundled_model(source):
        return _io.load_model(source, format=format, normalize=normalize, vocab=vocab, alpha=alpha,
                              name=name, allow_pickle=allow_pickle, timeout=timeout, time_slice=time_slice)
    path = os.fspath(source)
    _io.refuse_alpha(alpha, path)
    model = _io.load_model(sotu_model(path.split(":", 1)[1]), vocab=vocab)
    return model if name is None else model.with_params(name=name)


def load_judgments(source: str | os.PathLike, exclude: str = "authors", corpus: str = "bills"):
    """Human judgments of topics as a `tealeaves.judgments.Study`.

    Bundled (a file of that name comes first): `"hoyle2021"` (Hoyle et al. 2021: 3-point ratings
    and word intrusion of 300 topics, Wikitext and NYTimes x MALLET, D-VAE, ETM, with the
    authors' NPMI, C_V, UCI and UMass per reference corpus) and `"proxann2025:bills"` (ProxAnn,
    Hoyle et al. 2025: labels, clarity and fit ratings, rankings of 24 Bills topics, the
    documents shown and the answers of seven LLMs). Files: a study saved with
    `tealeaves.judgments.bundle.save_study` (`.json.gz`, `.json`); a CSV of answers, one per row
    (`tealeaves.judgments.table.read_table`); a folder of Hoyle et al.'s release (all_data.json and
    the per-task CSVs) or of ProxAnn's (`json_out/` with a Qualtrics export naming `corpus`).
    `exclude`: ProxAnn's attention-check rule ("authors", "strict" or "none",
    `judgments.proxann.excluded`); the study's `notes` say what it removed."""
    from .judgments import bundle, hoyle, proxann
    from .judgments.table import read_table

    name = os.fspath(source)
    if name == "proxann2025":
        name = "proxann2025:bills"
    if name in JUDGMENT_STUDIES and not os.path.exists(name):
        with resources.as_file(_path(JUDGMENT_STUDIES[name])) as p:
            study = bundle.read_study(p, trusted=True)
    elif not os.path.exists(name):
        known = ", ".join(JUDGMENT_STUDIES)
        raise no_such_file(name, f"no such file or bundled study (bundled: {known})")
    elif os.path.isdir(name):
        if os.path.exists(os.path.join(name, "all_data.json")):
            return hoyle.read_hoyle(name)
        study = _proxann_folder(name, corpus)
    elif name.endswith((".json", ".json.gz", ".gz")):
        study = bundle.read_study(name)
    else:
        return read_table(name)
    if "responses" in study.extra:
        study = proxann.exclude(study, exclude)
    return study


def human_agreement_figures() -> dict[str, Any]:
    """How well each coherence measure agreed with people on the bundled studies' topics, as
    experiments/human_agreement.py measured it (`data/human_agreement.json`; what `tealeaves
    evaluate --human hoyle2021` carries over)."""
    from .files.records import read_json

    with resources.as_file(_path("human_agreement.json")) as p:
        return read_json(p)


def _proxann_folder(folder: str, corpus: str):
    """ProxAnn's `data/` folder: json_out/config_<corpus>_*.json, the Qualtrics export(s) whose
    name holds `corpus` (in the folder or human_annotations/), llm_out/mean/<corpus>, cohrs/."""
    from .judgments import proxann

    configs = sorted(os.path.join(folder, "json_out", f) for f in os.listdir(os.path.join(folder, "json_out"))
                     if f.startswith(f"config_{corpus}") and f.endswith(".json")) \
        if os.path.isdir(os.path.join(folder, "json_out")) else []
    places = [folder, os.path.join(folder, "human_annotations")]
    exports = sorted(os.path.join(d, f) for d in places if os.path.isdir(d) for f in os.listdir(d)
                     if f.lower().endswith(".csv") and corpus.lower() in f.lower())
    if not configs or len(exports) != 1:
        raise InputFileError(f"{folder}: not a folder of judgments: expected all_data.json (Hoyle et al. "
                             f"2021) or json_out/config_{corpus}_*.json and one Qualtrics export naming "
                             f"{corpus!r} (ProxAnn; found {len(exports)})")
    llm = os.path.join(folder, "llm_out", "mean", corpus)
    cohrs = {"": os.path.join(folder, "cohrs", f"all_cohrs_{corpus}.csv")}
    return proxann.read_proxann(exports[0], configs, llm if os.path.isdir(llm) else None,
                                {k: v for k, v in cohrs.items() if os.path.exists(v)})
