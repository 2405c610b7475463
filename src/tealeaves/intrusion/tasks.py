"""Word and topic intrusion tasks (Chang et al. 2009, section 3), seeded and reproducible.

Word intrusion (3.1): a topic's `n_words` (5) most probable words plus one intruder, shuffled.
The intruder is drawn from words with low probability in this topic and high probability in
some other topic, operationalised as in Lau, Newman & Baldwin (2014): it is in this topic's
bottom `low_fraction` (half) and among the `high_top` (10) most probable words of another topic;
it is never one of this topic's top words.

"Bottom" is counted among the words the topic uses (`low_words`). A Gibbs-sampled topic gives
every word it never drew the same floor probability (the smoothing beta): 78-89% of the
vocabulary on the tomotopy models of `experiments/intrusion_repetition.py`. A rank over the
whole vocabulary puts the floor words' order (their word ids) in place of the topic's, and its
bottom half holds only floor words that no other topic ranks high. So a word is low when at
least (1 - `low_fraction`) of the topic's used (above-floor) words are strictly more probable;
floor words are always low. Ties count as one rank, so word ids never decide. On a dense model
(no floor) this is the rank over the vocabulary, as before. (A share of probability mass was the
other choice; it would make far more words "low" on dense models, where the rank rule is the
published one.)

Intruders are balanced (`_balanced_intruders`) so that how often a word is shown across the task
set does not give it away: each topic's intruder is the candidate whose number of appearances
(as a top word or an intruder) comes closest to that of one of the topic's own top words, drawn
at random, and a word is reused as an intruder only when that is closer. Without this the same
few words, high in many topics, were intruders again and again, and "pick the word seen most
often" found the intruder of a dense 60-topic model 40% of the time against 17% by chance; now
it does no better than chance (`most_repeated_guess` measures it; the experiment above).

Topic intrusion (3.2): a document, its `n_topics` (3) most probable topics and one intruder topic
drawn from its low-probability topics (the bottom `low_fraction` of topics by the document's
proportions), each shown by its `words_per_topic` (8) most probable words, shuffled.

Attention checks: word tasks whose intruder is an obvious marker word (`attention_word`).
Every task has an opaque `item` id, HMAC-SHA256 of (model, kind, index, seed) under a secret of
the task set: without the secret nobody can tell from an id which topic, document or attention
check it is. The annotator file holds only item, kind, text and options; the model, topic,
document and answer (the intruder's position) live only in the key.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import math
import os
import secrets
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..corpus import Corpus
from ..errors import InputFileError, MethodError, shown
from ..files import csvout
from ..files.atomic import atomic_path, atomic_paths, check_regular
from ..files.records import (
    check_proportions,
    numbered_csv,
    numbered_json_lines,
    strict_int,
    strict_strings,
)
from ..heldout import as_corpus
from ..model import TopicModel
from ..topics import Topics, require, word_scores
from ..util.limits import OPS_RATE, check_int, check_memory, check_work
from ..util.text import check_distinct_options, showable, shown_as


@dataclass
class Task:
    item: str
    kind: str  # "word" or "topic"
    model: str
    options: list[str]  # words (word task) or topics' word lists joined by spaces (topic task)
    topic: int | None = None
    document: int | None = None
    text: str = ""
    attention: bool = False
    # answer side (never written to the annotator file)
    intruder: int = -1  # position of the intruder in `options`
    relaxed: bool = False  # word task whose intruder broke the bottom-fraction rule (relax=True)
    option_topics: list[int] = field(default_factory=list)
    option_log_theta: list[float] = field(default_factory=list)
    # top words passed over because they look like a word already shown (`util.text.shown_as`)
    passed_over: list[str] = field(default_factory=list)

    def public(self) -> dict[str, Any]:
        """What an annotator sees: nothing that tells the model, topic, document or answer."""
        return {"item": self.item, "kind": self.kind, "text": self.text, "options": list(self.options)}

    def key(self) -> dict[str, Any]:
        """The public row plus the answer side."""
        return {**self.public(), "model": self.model, "topic": self.topic, "document": self.document,
                "intruder": self.intruder, "attention": self.attention, "relaxed": self.relaxed,
                "option_topics": self.option_topics, "option_log_theta": self.option_log_theta}


def new_secret() -> str:
    """A fresh task-set secret (128 random bits, hex)."""
    return secrets.token_hex(16)


def item_id(secret: str, model: str, kind: str, index: int, seed: int) -> str:
    """An opaque item id: annotators see it, so it must not tell the model, the topic or whether
    the item is an attention check (an unkeyed hash of these could be recomputed)."""
    mac = hmac.new(secret.encode(), f"{model}|{kind}|{index}|{seed}".encode(), hashlib.sha256)
    return "i" + mac.hexdigest()[:16]


def checked_secret(secret: str | None) -> str:
    if secret is None:
        return new_secret()
    if not isinstance(secret, str) or len(secret) < 16:
        raise MethodError("secret must be a string of at least 16 characters (see new_secret())")
    return secret


def secret_path(key_path: str | os.PathLike) -> str:
    """Where the CLI keeps a task set's secret: beside its key, `KEY.secret`."""
    return os.fspath(key_path) + ".secret"


def check_secret_beside(key_path: str | os.PathLike) -> None:
    """Refuse a key, or its secret's name, that is not a regular file: a device or FIFO would be
    written through (the key shown on a terminal) and its `KEY.secret` created beside it."""
    why = "a key's secret is kept beside it as KEY.secret, so the key must be a regular file"
    check_regular(key_path, why)
    check_regular(secret_path(key_path), "the secret of a key must be a regular file")


def key_secret(key_path: str | os.PathLike) -> str:
    """The secret kept beside `key_path` (so that regenerating tasks gives the same ids), or a
    new one."""
    p = secret_path(key_path)
    if not os.path.exists(p):
        return new_secret()
    try:
        with open(p, encoding="ascii") as fh:
            return checked_secret(fh.read().strip())
    except (OSError, UnicodeDecodeError, MethodError) as exc:
        raise InputFileError(f"{p}: not a task-set secret ({exc})") from None


def check_tasks(count: int, shown: int) -> None:
    """Refuse, before building them, more tasks than memory holds (each task: its words or
    texts in memory, in the task file, the key and the CSV; about 500 bytes plus 100 per item shown)."""
    check_memory(f"{count:,} intrusion tasks of {shown:,} items", count * (500.0 + 100.0 * shown),
                 how="about 500 bytes per task and 100 per item shown")


def word_tasks_work(T: int, V: int, high_top: int) -> float:
    """Elements `word_tasks` handles: every topic's word order (T x V) and, per topic, the other
    topics' top `high_top` words (T x T x high_top: quadratic in the number of topics)."""
    return float(T) * V * 3 + float(T) * T * high_top


def check_word_tasks(T: int, V: int, high_top: int) -> None:
    check_work(f"word intrusion tasks for {T:,} topics of {V:,} words", word_tasks_work(T, V, high_top),
               nbytes=2 * 8.0 * T * V, how=f"{word_tasks_work(T, V, high_top):.3g} elements at about "
                                          f"{OPS_RATE:.0e} per second; two int64 topics x words orders")


def _need_vocab(model: TopicModel) -> tuple[str, ...]:
    return model.require_vocab("intrusion tasks show words")


# A word within this relative distance of a topic's minimum probability is at its floor (unused).
FLOOR_RTOL = 1e-6


def low_words(phi_k: np.ndarray, low_fraction: float) -> np.ndarray:
    """Which words lie in the topic's bottom `low_fraction` (a boolean mask): those that at least
    (1 - `low_fraction`) of the topic's used words outrank strictly. Used words are those above
    the topic's floor (its minimum, within FLOOR_RTOL); floor words are always low."""
    phi_k = np.asarray(phi_k, dtype=np.float64)
    used = phi_k > phi_k.min() * (1 + FLOOR_RTOL)
    desc = np.sort(-phi_k[used])
    above = np.searchsorted(desc, -phi_k, side="left")  # used words strictly more probable
    return above >= (1 - low_fraction) * int(used.sum())


def _no_intruder(phi_k: np.ndarray, k: int, n_words: int, high_top: int) -> str:
    """Why topic `k` can have no intruder: no other topic's top word is strictly less probable
    than its shown top words (they tie with the words below, e.g. an all-equal or one-hot row)."""
    used = int((phi_k > phi_k.min() * (1 + FLOOR_RTOL)).sum())
    return (f"topic {k}: no word in another topic's top {high_top} is strictly less probable than its top "
            f"{n_words} words, so no intruder could be told apart (only {used} word(s) have more than the "
            "topic's minimum probability; the rest tie at it)")


def _check_showable(word: str, where: str) -> None:
    """A word shown to annotators must be text a web page and every database carry (the app's
    rule, `text.UNSHOWABLE`)."""
    from .taskset import bad_character

    bad = bad_character(word)
    if bad is not None:
        raise MethodError(f"{where} ({shown(word)}) holds {bad}; annotators cannot be shown it "
                          "(fix the vocabulary)")


def _distinct_top(ranked: np.ndarray, vocab: Sequence[str], n_words: int,
                  k: int, look_of: Callable[[int], str] | None = None) -> tuple[list[int], list[int]]:
    """The topic's first `n_words` words (in `ranked` order) that look different from each other
    (the app's rule, `util.text.shown_as`: NFKC, invisible characters, spacing; `look_of(w)`, a
    cached `shown_as(vocab[w])`), and the words passed over because they look blank or like one
    already taken."""
    look_of = look_of or (lambda w: shown_as(vocab[w]))
    top, passed, looks = [], [], set()
    for w in ranked:
        if len(top) == n_words:
            break
        look = look_of(int(w))
        if not look or look in looks:
            passed.append(int(w))
            continue
        top.append(int(w))
        looks.add(look)
    if len(top) < n_words:
        raise MethodError(f"topic {k}: fewer than n_words={n_words} words that look different from each "
                          "other (annotators could not tell the options apart)", options=("n_words",))
    return top, passed


def _balanced_intruders(
    tops: dict[int, list[int]], pools: dict[int, list[int]], rng: np.random.Generator
) -> dict[int, int]:
    """One intruder per topic from its pool, chosen so that a word's number of appearances across
    the tasks does not tell it from the top words: topics in random order; for each, the target
    is the current count of one of its top words drawn at random, and the intruder is drawn among
    the candidates whose count after this use comes closest to it."""
    shown: dict[int, int] = {}
    for top in tops.values():
        for w in top:
            shown[w] = shown.get(w, 0) + 1
    chosen = {}
    for k in rng.permutation(np.array(list(tops), dtype=np.int64)):
        k = int(k)
        target = shown[tops[k][int(rng.integers(len(tops[k])))]]
        gap = [abs(shown.get(w, 0) + 1 - target) for w in pools[k]]
        least = min(gap)  # once: inside the comprehension it was recomputed per word (quadratic)
        best = [w for w, g in zip(pools[k], gap, strict=True) if g == least]
        w = int(best[int(rng.integers(len(best)))])
        chosen[k] = w
        shown[w] = shown.get(w, 0) + 1
    return chosen


def word_tasks(
    model: TopicModel | Topics,
    topics: Sequence[int] | None = None,
    n_words: int = 5,
    low_fraction: float = 0.5,
    high_top: int = 10,
    seed: int = 0,
    attention_checks: int = 0,
    attention_word: str = "xxxxx",
    relax: bool = False,
    secret: str | None = None,
) -> list[Task]:
    """One word-intrusion task per topic (all topics unless `topics` is given): the topic's top
    `n_words` words and an intruder from another topic's top `high_top` that lies in this topic's
    bottom `low_fraction` of the words it uses (`low_words`; Chang et al. 2009), balanced across
    topics so that repetition does not reveal it (see the module notes). An intruder is always
    strictly less probable in the topic than each of its shown top words: a topic where no other
    topic's top word is (an all-equal row; a one-hot row, whose top words include words tied at
    probability 0) is an error, `relax` or not. A topic with no word in the bottom fraction is an
    error, unless `relax`: then the intruder is the least probable of the other topics' top words
    under the topic, and the task is marked `relaxed`. A shown word with a control character
    (`text.UNSHOWABLE`, which the annotation app refuses) is an error naming it. Item ids are
    keyed by `secret` (default a fresh one: pass the same secret and seed to reproduce ids). A model
    of another kind (`Topics`) is read through `word_scores`: only the order of its words counts."""
    secret = checked_secret(secret)
    phi, vocab = word_scores(model.lda if isinstance(model, Topics) and model.lda is not None else model)
    T, V = phi.shape
    if T < 2:
        raise MethodError("word intrusion needs at least 2 topics (the intruder is taken from another)")
    if n_words + 1 > V:
        raise MethodError(f"the model has {V} words; word intrusion shows n_words={n_words} of them plus "
                          "an intruder", options=("n_words",))
    if high_top > V:
        raise MethodError(f"high_top={high_top} is more than the model's {V} words", options=("high_top",))
    check_tasks(T + check_int("attention_checks", attention_checks, 0), n_words + 1)
    check_word_tasks(T, V, high_top)
    rng = np.random.default_rng(seed)
    order = np.argsort(-phi, axis=1, kind="stable")
    ks = list(range(T)) if topics is None else [int(k) for k in topics]
    tops, pools, relaxed, passed = {}, {}, set(), {}
    seen: dict[int, str] = {}

    def look_of(w: int) -> str:  # shown_as of each word once, not once per topic (T x T x high_top calls)
        if w not in seen:
            seen[w] = shown_as(vocab[w])
        return seen[w]

    for k in ks:
        if not 0 <= k < T:
            raise MethodError(f"topic {k} does not exist (the model has {T})")
        top, passed[k] = _distinct_top(order[k], vocab, n_words, k, look_of)
        looks = {look_of(w) for w in top}
        # an intruder must be strictly less probable than every shown top word, or it is not one,
        # and must not look like one of them (or blank)
        lowest_shown = phi[k, top].min()
        others = [int(w) for w in np.unique(order[np.arange(T) != k, :high_top])
                  if w not in top and phi[k, w] < lowest_shown and look_of(int(w))
                  and look_of(int(w)) not in looks]
        if not others:
            raise MethodError(_no_intruder(phi[k], k, n_words, high_top))
        low = low_words(phi[k], low_fraction)
        pool = [w for w in others if low[w]]
        if not pool and relax:
            pool = [min(others, key=lambda w: (phi[k, w], w))]
            relaxed.add(k)
        if not pool:
            raise MethodError(
                f"topic {k}: no word is both in another topic's top {high_top} and in the bottom "
                f"{low_fraction:.0%} of the words this topic uses; lower high_top, raise low_fraction "
                "or relax",
                options=("high_top", "low_fraction", "relax"),
            )
        tops[k], pools[k] = top, pool
    intruders = _balanced_intruders(tops, pools, rng)
    for k in ks:
        for w in [*tops[k], intruders[k]]:
            _check_showable(vocab[w], f"topic {k}: word {w}")
    if attention_checks:
        _check_showable(attention_word, "attention_word")
    tasks = []
    for k in ks:
        words = [vocab[w] for w in tops[k]] + [vocab[intruders[k]]]
        perm = rng.permutation(len(words))
        tasks.append(
            Task(
                item=item_id(secret, model.name, "word", k, seed),
                kind="word",
                model=model.name,
                topic=k,
                options=[words[i] for i in perm],
                intruder=int(np.flatnonzero(perm == n_words)[0]),
                relaxed=k in relaxed,
                passed_over=[vocab[w] for w in passed[k]],
            )
        )
    for a in range(attention_checks):
        k = int(rng.integers(T))
        top = tops[k] if k in tops else _distinct_top(order[k], vocab, n_words, k)[0]
        words = [vocab[w] for w in top] + [attention_word]
        for w in top:
            _check_showable(vocab[w], f"topic {k}: word {w}")
        perm = rng.permutation(len(words))
        tasks.append(
            Task(
                item=item_id(secret, model.name, "attention", a, seed),
                kind="word",
                model=model.name,
                topic=k,
                options=[words[i] for i in perm],
                attention=True,
                intruder=int(np.flatnonzero(perm == n_words)[0]),
            )
        )
    for t in tasks:  # the app's check (`check_task_set`), where the tasks are made: a BadValueError
        check_distinct_options(t.options, f"topic {t.topic}" + (" (attention check)" if t.attention else ""))
    return tasks


def most_repeated_guess(tasks: Sequence[Task | dict[str, Any]], seed: int = 0) -> dict[str, Any]:
    """How well an annotator does who sees every task and, in each word task, picks the option
    shown most often across all tasks (ties at random, seeded): `hits` of `items` non-attention
    word tasks, `accuracy`, its `expected` value over the tie draws, and `chance` (the mean of
    1 / number of options). Near chance means repetition does not give the intruder away."""
    rows = [t.key() if isinstance(t, Task) else t for t in tasks]
    seen: dict[str, int] = {}
    for r in rows:
        for o in r["options"]:
            seen[o] = seen.get(o, 0) + 1
    rng = np.random.default_rng(seed)
    hits, expected, chance, n = 0, 0.0, 0.0, 0
    for r in rows:
        if r["kind"] != "word" or r.get("attention"):
            continue
        counts = np.array([seen[o] for o in r["options"]])
        best = np.flatnonzero(counts == counts.max())
        hits += int(best[int(rng.integers(len(best)))] == r["intruder"])
        expected += (r["intruder"] in best) / len(best)
        chance += 1 / len(r["options"])
        n += 1
    return {"items": n, "hits": hits, "accuracy": hits / n if n else math.nan,
            "expected": expected / n if n else math.nan, "chance": chance / n if n else math.nan}


def documents_and_topics(
    model: TopicModel | Topics,
    docs: Corpus | Iterable[Sequence[int]] | np.ndarray,
    texts: Sequence[str] | None,
    what: str,
    n_words: int,
    burn_in: int = 100,
    samples: int = 200,
    seed: int = 0,
    progress: bool | None = None,
) -> tuple[TopicModel | Topics, np.ndarray, Sequence[str], np.ndarray, Sequence[str] | None]:
    """What tasks that show documents need (topic intrusion, ProxAnn): the model (an LDA inside a
    `Topics` taken out), its topic-word scores and vocabulary (every topic's top `n_words` words
    checked showable, before any inference), and the documents' topic proportions, D x T: `docs`
    itself when it is a float matrix, else inferred from the documents (`infer_theta(burn_in,
    samples, seed)`; an LDA only), and the texts (without `texts`, a document's first 50 words)."""
    given = isinstance(docs, np.ndarray) and docs.ndim == 2 and docs.dtype.kind == "f"
    if isinstance(model, Topics) and model.lda is not None:
        model = model.lda
    if isinstance(model, Topics):  # another kind: its own proportions, no inference
        require(what, model)
        if not given:
            raise MethodError(f"{what} of {model.name[:80]!r} ({model.source}) needs the documents' "
                              "topic proportions: docs=model.doc_topic (no inference for this kind)")
        phi, vocab = word_scores(model, what)
    else:
        phi, vocab = model.phi, _need_vocab(model)
    T = phi.shape[0]
    for k, row in enumerate(np.argsort(-phi, axis=1, kind="stable")[:, :n_words]):  # before any inference
        for w in row:
            _check_showable(vocab[w], f"topic {k}: word {w}")
    if given:
        theta = docs
    else:
        from .predictive import infer_theta

        corpus = as_corpus(docs, model)
        theta = infer_theta(model, corpus, burn_in=burn_in, samples=samples, seed=seed, progress=progress)
        if texts is None:
            texts = [" ".join(vocab[w] for w in corpus[d][:50]) for d in range(len(corpus))]
    theta = np.asarray(theta)
    if theta.ndim != 2 or theta.shape[1] != T:
        raise MethodError(f"theta must be documents x {T} topics, got shape {theta.shape}")
    theta = check_proportions(theta, "theta")
    if texts is not None and len(texts) != len(theta):
        raise MethodError(f"{len(texts)} texts for {len(theta)} documents")
    return model, phi, vocab, theta, texts


def topic_tasks(
    model: TopicModel | Topics,
    docs: Corpus | Iterable[Sequence[int]] | np.ndarray,
    texts: Sequence[str] | None = None,
    documents: Sequence[int] | None = None,
    n_topics: int = 3,
    words_per_topic: int = 8,
    low_fraction: float = 0.5,
    seed: int = 0,
    burn_in: int = 100,
    samples: int = 200,
    progress: bool | None = None,
    secret: str | None = None,
) -> list[Task]:
    """One topic-intrusion task per document (item ids keyed by `secret`, as in `word_tasks`).
    `docs` is either the documents (a Corpus or word-id sequences; their theta is inferred with
    `infer_theta(burn_in, samples, seed)`) or their topic proportions, a D x T float array.
    Without `texts`, a document is shown by its first 50 words."""
    secret = checked_secret(secret)
    model, phi, vocab, theta, texts = documents_and_topics(
        model, docs, texts, "topic intrusion", words_per_topic, burn_in, samples, seed, progress)
    T = phi.shape[0]
    order = np.argsort(-phi, axis=1, kind="stable")[:, :words_per_topic]
    if T < n_topics + 1:
        raise MethodError(f"topic intrusion needs at least {n_topics + 1} topics; the model has {T}")
    rng = np.random.default_rng(seed)
    labels = [" ".join(vocab[w] for w in row) for row in order]
    tasks = []
    for d in range(len(theta)) if documents is None else documents:
        if not 0 <= d < len(theta):
            raise MethodError(f"document {d} does not exist (there are {len(theta)})")
        th = theta[d]
        by = np.argsort(-th, kind="stable")
        top = list(by[:n_topics])
        n_low = max(1, int(round(low_fraction * T)))
        pool = [t for t in by[T - n_low :] if t not in top]
        if not pool:
            raise MethodError(f"document {d}: no low-probability topic outside its top {n_topics}")
        intruder = int(rng.choice(pool))
        shown = top + [intruder]
        perm = rng.permutation(len(shown))
        opts = [int(shown[i]) for i in perm]
        with np.errstate(divide="ignore"):
            log_theta = [float(np.log(th[t])) for t in opts]
        tasks.append(
            Task(
                item=item_id(secret, model.name, "topic", d, seed),
                kind="topic",
                model=model.name,
                document=int(d),
                text=(showable(texts[d]) if texts is not None else ""),  # a form feed would fail serve
                options=[labels[t] for t in opts],
                intruder=int(np.flatnonzero(perm == n_topics)[0]),
                option_topics=opts,
                option_log_theta=log_theta,
            )
        )
    return tasks


def read_tasks(path: str | os.PathLike) -> list[dict[str, Any]]:
    """Annotator-facing tasks written by `write_tasks`: JSON lines, or the long CSV (one row per
    option, with `position`) regrouped into one row per item. Options are lists of strings; a
    topic or document is a whole number (or absent)."""
    return [t for _, t in numbered_tasks(path)]


def numbered_tasks(
    path: str | os.PathLike, constants: tuple[str, ...] = ()
) -> list[tuple[str, dict[str, Any]]]:
    """`read_tasks` with each task's place, "FILE:LINE" (its first line); `constants` as `parse_json`."""
    p = os.fspath(path)
    if not csvout.is_csv(p):
        rows = numbered_json_lines(p, constants)
        for where, r in rows:
            if "item" not in r or not isinstance(r.get("options"), list):
                raise InputFileError(f"{where}: a task needs an item and a list of options")
            r["options"] = strict_strings(r["options"], where, "options")
            _task_numbers(r, where)
        return rows
    header, lines = numbered_csv(p, ("item", "position", "option"))
    out: dict[str, tuple[str, dict[str, Any]]] = {}
    for where, r in lines:
        fields: dict[str, Any] = {k: r[k] for k in header if k not in ("position", "option")}
        for k in ("topic", "document"):
            if fields.get(k) in ("", "None"):
                fields[k] = None
        _task_numbers(fields, where)
        first, t = out.setdefault(r["item"], (where, fields | {"options": []}))
        differs = [k for k in fields if fields[k] != t[k]]
        if differs:
            k = differs[0]
            raise InputFileError(f"{where}: item {r['item']!r}: {k} {str(fields[k])[:40]!r} differs from "
                                 f"{str(t[k])[:40]!r} on the item's first line ({first})")
        if r["position"] != str(len(t["options"])):
            raise InputFileError(f"{where}: item {r['item']!r}: expected position {len(t['options'])}, "
                                 f"got {r['position'][:40]!r}")
        t["options"].append(r["option"])
    return list(out.values())


def _task_numbers(task: dict[str, Any], where: str) -> None:
    """A task's topic and document, when given, as whole numbers."""
    for k in ("topic", "document"):
        if task.get(k) is not None:
            task[k] = strict_int(task[k], where, k, low=0)


LOG_ZERO = ("-Infinity",)  # a key's option_log_theta is -inf where a proportion is 0 (json.dumps writes it)


def write_tasks(
    tasks: Sequence[Task], path: str | os.PathLike, key_path: str | os.PathLike, secret: str | None = None
) -> None:
    """Annotator file (no answers) and key file, as JSONL (.jsonl) or long-format CSV (.csv:
    one row per option, in shown order), written together atomically; with `secret`, also the
    task set's secret beside the key (`secret_path`, owner-only; the key and its secret must then
    be regular files). The format comes from each name's extension (`csvout.table_format`)."""
    if _same_file(path, key_path):
        raise MethodError(f"the tasks and the key name the same file {os.fspath(path)!r}")
    csvout.table_format(path, "the tasks")
    csvout.table_format(key_path, "the key")
    if secret is not None:
        secret = checked_secret(secret)
        check_secret_beside(key_path)
    with atomic_paths([path, key_path]) as (tmp_tasks, tmp_key), contextlib.ExitStack() as stack:
        _write_rows([t.public() for t in tasks], os.fspath(path), tmp_tasks)
        _write_rows([t.key() for t in tasks], os.fspath(key_path), tmp_key)
        if secret is not None:  # owner-only, put in place with the other two
            tmp = stack.enter_context(atomic_path(secret_path(key_path), mode=0o600))
            with open(tmp, "w", encoding="ascii") as fh:
                fh.write(secret + "\n")


def _same_file(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)


def _write_rows(rows: list[dict[str, Any]], name: str, out: str) -> None:
    """`rows` to `out` as JSON lines, or as long CSV when the target `name` ends in .csv."""
    if csvout.table_format(name) == "jsonl":
        with open(out, "w", encoding="utf-8") as fh:
            fh.writelines(json.dumps(r) + "\n" for r in rows)
        return
    with open(out, "w", newline="", encoding="utf-8") as fh:
        w = csvout.writer(fh)
        extra = [k for k in rows[0] if k != "options"] if rows else []
        w.writerow([*extra, "position", "option"])
        for r in rows:
            for i, o in enumerate(r["options"]):
                w.writerow([json.dumps(r[k]) if isinstance(r[k], list) else r[k] for k in extra] + [i, o])
