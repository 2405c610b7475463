"""Bundled data: the State of the Union corpus (paragraphs of the US presidents' annual messages,
1790-2026) with a train / held-out split, labels for B-Cubed, and demo models trained on it; built
by `scripts/make_sotu.py` (see data/SOTU_SOURCE.txt for the source and its terms)."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources

import numpy as np

from .corpus import Corpus
from .errors import MethodError
from .io import load_model
from .model import TopicModel

SOTU_MODELS = ("sotu-20-asym", "sotu-20-sym", "sotu-50-asym")


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
        return load_model(p, name=name)
