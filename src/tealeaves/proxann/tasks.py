"""ProxAnn tasks (Hoyle, Calvo-Bartolomé, Boyd-Graber & Resnik, ACL 2025), built from any model
that gives top words and document-topic proportions, seeded and reproducible.

One task per topic k. The annotator sees the topic's `n_words` top words and its `n_exemplars`
exemplar documents, names the category they share, rates how well each of the task's documents
fits that category (1-5), then ranks them. The documents:

- exemplars: the documents of highest theta_dk (the topic's most typical documents);
- evaluation documents: `n_eval` others chosen across the range of theta_dk (stratified): target
  proportions evenly spaced from the highest to the lowest theta_dk among the remaining
  documents, and for each target the remaining document nearest to it (ties drawn at random).
  This is the layout of the published study, whose evaluation documents sit at about 6/6, 5/6,
  ..., 0 of the topic's largest proportion;
- a distractor: a document that is clearly about something else, the natural attention check.
  From the corpus, it is a document in the bottom `low_fraction` of theta_dk (among those left)
  that another topic dominates most (the largest max_{j != k} theta_dj, ties at random); with
  `distractor_texts` (outside texts, as the published study used a product review among bills),
  one of those drawn at random;
- with `instructed_check`, one more item that is not a document but an instruction ("choose 2"),
  rated and not ranked: an instructed-response attention check.

A document whose text looks like one already in the task (the app's rule, `util.text.shown_as`)
is passed over: nobody could tell two of them apart in the ranking. The task's documents are
shuffled and get ids d1, d2, ... in that order (the app shows them in an order of each
annotator's own); the item id is keyed by the task set's secret as for intrusion tasks. The
annotator file holds only the item, the words, the exemplar texts and the documents' ids and
texts; the key adds the model, topic, each document's corpus row, theta_dk and role.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..corpus import Corpus
from ..errors import MethodError
from ..files import csvout
from ..intrusion.tasks import (
    checked_secret,
    documents_and_topics,
    item_id,
    write_tasks,
)
from ..model import TopicModel
from ..topics import Topics
from ..util.limits import check_int, check_memory
from ..util.text import excerpt, showable, shown_as

SCALE = 5  # fit ratings and clarity are 1..SCALE
MAX_DOCUMENTS = 20  # documents rated per task (the ranking's answer must fit the app's body limit)
MAX_LABEL = 200  # characters of a category label
KIND = "proxann"
INSTRUCTED_RATING = 2
INSTRUCTED_TEXT = ("Attention check: this is not a document. Whatever your category is, choose "
                   f"{INSTRUCTED_RATING} (\u201cit mostly does not fit\u201d) for this item.")
ROLES = ("eval", "distractor", "instructed")


@dataclass
class ProxAnnTask:
    item: str
    model: str
    topic: int
    words: list[str]
    exemplars: list[str]  # texts shown
    documents: list[dict[str, Any]]  # shown order: id, text, rank (is it ranked), role, document, theta
    exemplar_documents: list[int] = field(default_factory=list)
    exemplar_theta: list[float] = field(default_factory=list)
    passed_over: int = 0  # documents passed over because their text looks like one already taken

    def public(self) -> dict[str, Any]:
        """What an annotator sees: nothing that tells the model, the topic, a document's
        proportion or which document is the distractor."""
        return {"item": self.item, "kind": KIND, "words": list(self.words), "exemplars": list(self.exemplars),
                "documents": [{"id": d["id"], "text": d["text"], "rank": d["rank"]} for d in self.documents]}

    def key(self) -> dict[str, Any]:
        """The public row plus the answer side: per document its role (eval, distractor or
        instructed), corpus row and theta_dk (None where it has none), and the expected rating of
        an instructed item."""
        public = self.public()
        for shown, d in zip(public["documents"], self.documents, strict=True):
            shown |= {"role": d["role"], "document": d["document"], "theta": d["theta"]}
            if d["role"] == "instructed":
                shown["expected"] = INSTRUCTED_RATING
        return {**public, "model": self.model, "topic": self.topic,
                "exemplar_documents": self.exemplar_documents, "exemplar_theta": self.exemplar_theta}


def check_proxann_tasks(count: int, shown: int, chars: int) -> None:
    """Refuse, before building them, more tasks than memory holds (each task: its texts in memory,
    the task file and the key)."""
    check_memory(f"{count:,} ProxAnn tasks of {shown:,} texts",
                 count * (1000.0 + 3 * shown * (chars + 100.0)),
                 how="about 3 copies of each text shown, and 1 KB per task")


class _Picker:
    """Documents taken for one task, with the look of their texts (`shown_as`)."""

    def __init__(self, texts: Sequence[str], max_chars: int) -> None:
        self.texts, self.max_chars = texts, max_chars
        self.taken: set[int] = set()
        self.looks: set[str] = set()
        self.passed = 0

    def text(self, d: int) -> str:
        return excerpt(showable(self.texts[d]), self.max_chars)

    def take(self, d: int) -> bool:
        """Take document `d` unless its text is blank or looks like one taken (then it is passed
        over and never offered again)."""
        look = shown_as(self.text(d))
        self.taken.add(d)
        if not look or look in self.looks:
            self.passed += 1
            return False
        self.looks.add(look)
        return True


def _exemplars(theta_k: np.ndarray, pool: np.ndarray, n: int, pick: _Picker, k: int) -> list[int]:
    """The `n` documents of highest theta_dk (ties: the earlier document first)."""
    out = []
    for d in pool[np.argsort(-theta_k[pool], kind="stable")]:
        if len(out) == n:
            return out
        if pick.take(int(d)):
            out.append(int(d))
    raise MethodError(f"topic {k}: fewer than {n} documents with different texts for the exemplars",
                      options=("n_exemplars",))


def _stratified(theta_k: np.ndarray, pool: np.ndarray, n: int, pick: _Picker,
                rng: np.random.Generator, k: int) -> list[int]:
    """`n` documents across the range of theta_dk: for targets evenly spaced from the highest to
    the lowest proportion in `pool`, the document left nearest each (ties at random)."""
    left = np.array([d for d in pool if d not in pick.taken], dtype=np.int64)
    if left.size < n:
        raise MethodError(f"topic {k}: {left.size} documents left for {n} evaluation documents "
                          "(give more documents, or fewer exemplars or evaluation documents)",
                          options=("n_eval", "n_exemplars"))
    values = theta_k[left]
    hi, lo = float(values.max()), float(values.min())
    targets = [hi] if n == 1 else [hi - (hi - lo) * i / (n - 1) for i in range(n)]
    free = np.ones(left.size, dtype=bool)
    out = []
    for target in targets:
        while True:
            if not free.any():
                raise MethodError(f"topic {k}: too few documents with different texts for {n} evaluation "
                                  "documents", options=("n_eval",))
            gap = np.where(free, np.abs(values - target), np.inf)
            best = np.flatnonzero(gap == gap.min())
            i = int(best[int(rng.integers(best.size))])
            free[i] = False
            if pick.take(int(left[i])):
                out.append(int(left[i]))
                break
    return out


def _distractor(theta: np.ndarray, k: int, pool: np.ndarray, low_fraction: float, pick: _Picker,
                rng: np.random.Generator) -> int:
    """A document left in the bottom `low_fraction` of theta_dk that another topic dominates most
    (largest max_{j != k} theta_dj; ties at random)."""
    left = np.array([d for d in pool if d not in pick.taken], dtype=np.int64)
    if left.size == 0:
        raise MethodError(f"topic {k}: no document left for the distractor (give more documents)")
    cut = np.quantile(theta[left, k], low_fraction)
    low = left[theta[left, k] <= cut]
    other = np.delete(theta[low], k, axis=1).max(axis=1)
    order = np.lexsort((rng.random(low.size), -other))
    for d in low[order]:
        if pick.take(int(d)):
            return int(d)
    raise MethodError(f"topic {k}: no document with a text of its own left for the distractor")


def proxann_tasks(
    model: TopicModel | Topics,
    docs: Corpus | Iterable[Sequence[int]] | np.ndarray,
    texts: Sequence[str] | None = None,
    topics: Sequence[int] | None = None,
    documents: Sequence[int] | None = None,
    n_words: int = 15,
    n_exemplars: int = 7,
    n_eval: int = 7,
    low_fraction: float = 0.1,
    distractor_texts: Sequence[str] | None = None,
    instructed_check: bool = False,
    max_chars: int = 600,
    seed: int = 0,
    burn_in: int = 100,
    samples: int = 200,
    progress: bool | None = None,
    secret: str | None = None,
) -> list[ProxAnnTask]:
    """One ProxAnn task per topic (all unless `topics`), see the module notes. `docs` is the
    documents (a Corpus or word-id sequences: theta inferred by `infer_theta(burn_in, samples,
    seed)`, an LDA only) or their topic proportions (a D x T float array, e.g. a model's
    `doc_topic`); `texts` are what annotators read (default a document's first 50 words), cut at a
    word boundary to `max_chars`; `documents` limits the documents used (e.g. those with a text).
    The defaults are the published study's: 15 words, 7 exemplars, 7 evaluation documents."""
    secret = checked_secret(secret)
    n_words = check_int("n_words", n_words, 1)
    n_exemplars = check_int("n_exemplars", n_exemplars, 1)
    n_eval = check_int("n_eval", n_eval, 2)
    max_chars = check_int("max_chars", max_chars, 20)
    rated = n_eval + 1 + bool(instructed_check)
    if rated > MAX_DOCUMENTS:
        check = " and the check" if instructed_check else ""
        raise MethodError(f"n_eval={n_eval}: at most {MAX_DOCUMENTS} documents are rated per task "
                          f"(evaluation documents, the distractor{check})",
                          options=("n_eval",))
    if not 0 < low_fraction <= 1 or not math.isfinite(low_fraction):
        raise MethodError(f"low_fraction must be in (0, 1], got {low_fraction}", options=("low_fraction",))
    model, phi, vocab, theta, texts = documents_and_topics(
        model, docs, texts, "proxann", n_words, burn_in, samples, seed, progress)
    D, T = theta.shape
    if texts is None:
        raise MethodError("ProxAnn tasks show documents: give their texts (texts=)")
    if T < 2 and distractor_texts is None:
        raise MethodError("a distractor is a document another topic dominates: the model needs at least 2 "
                          "topics (or give distractor_texts)")
    if n_words > phi.shape[1]:
        raise MethodError(f"n_words={n_words} is more than the model's {phi.shape[1]} words",
                          options=("n_words",))
    pool = np.arange(D, dtype=np.int64) if documents is None else np.array(sorted(set(documents)), np.int64)
    if pool.size and not (0 <= pool.min() and pool.max() < D):
        bad = int(pool.max()) if pool.max() >= D else int(pool.min())
        raise MethodError(f"document {bad} does not exist (there are {D})")
    need = n_exemplars + n_eval + (distractor_texts is None)
    if pool.size < need:
        also = " and a distractor" if distractor_texts is None else ""
        raise MethodError(f"{pool.size} documents for {n_exemplars} exemplars, {n_eval} evaluation "
                          f"documents{also} per topic: give at least {need} documents",
                          options=("n_exemplars", "n_eval"))
    outside = [excerpt(showable(t), max_chars) for t in distractor_texts or ()]
    if distractor_texts is not None and not [t for t in outside if shown_as(t)]:
        raise MethodError("distractor_texts holds no text to show")
    ks = list(range(T)) if topics is None else [int(k) for k in topics]
    for k in ks:
        if not 0 <= k < T:
            raise MethodError(f"topic {k} does not exist (the model has {T})")
    check_proxann_tasks(len(ks), n_words + n_exemplars + rated, max_chars)
    rng = np.random.default_rng(seed)
    order = np.argsort(-phi, axis=1, kind="stable")[:, :n_words]
    tasks = []
    for k in ks:
        pick = _Picker(texts, max_chars)
        theta_k = theta[:, k]
        ex = _exemplars(theta_k, pool, n_exemplars, pick, k)
        ev = _stratified(theta_k, pool, n_eval, pick, rng, k)
        docs_k = [{"text": pick.text(d), "rank": True, "role": "eval", "document": d,
                   "theta": float(theta_k[d])} for d in ev]
        if distractor_texts is None:
            d = _distractor(theta, k, pool, low_fraction, pick, rng)
            docs_k.append({"text": pick.text(d), "rank": True, "role": "distractor", "document": d,
                           "theta": float(theta_k[d])})
        else:
            choices = [t for t in outside if shown_as(t) and shown_as(t) not in pick.looks]
            if not choices:
                raise MethodError(f"topic {k}: every distractor text looks like one of the topic's documents")
            docs_k.append({"text": choices[int(rng.integers(len(choices)))], "rank": True,
                           "role": "distractor", "document": None, "theta": None})
        if instructed_check:
            docs_k.append({"text": INSTRUCTED_TEXT, "rank": False, "role": "instructed", "document": None,
                           "theta": None})
        shown = [docs_k[i] for i in rng.permutation(len(docs_k))]
        for i, d in enumerate(shown, 1):
            d["id"] = f"d{i}"
        tasks.append(ProxAnnTask(
            item=item_id(secret, model.name, KIND, k, seed), model=model.name, topic=k,
            words=[vocab[w] for w in order[k]], exemplars=[pick.text(d) for d in ex], documents=shown,
            exemplar_documents=ex, exemplar_theta=[float(theta_k[d]) for d in ex],
            passed_over=pick.passed))
    return tasks


def check_task_files(path: str | os.PathLike, key_path: str | os.PathLike) -> None:
    """Refuse task or key names that are not JSON lines (a task holds lists of documents)."""
    for p, what in ((path, "the tasks"), (key_path, "the key")):
        if csvout.table_format(p, what) != "jsonl":
            raise MethodError(f"{what} {os.fspath(p)!r}: ProxAnn tasks are written as JSON lines (.jsonl); "
                              "each holds lists of documents")


def write_proxann_tasks(tasks: Sequence[ProxAnnTask], path: str | os.PathLike, key_path: str | os.PathLike,
                        secret: str | None = None) -> None:
    """Annotator file and key as JSON lines (a task holds lists of documents: no CSV), written
    together atomically with the secret beside the key when given (`intrusion.write_tasks`)."""
    check_task_files(path, key_path)
    write_tasks(tasks, path, key_path, secret=secret)  # takes any task with public() and key()
