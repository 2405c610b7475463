"""Human (and automated) judgments of topics: the in-memory types every reader returns and the
meta-evaluation (`tealeaves.metaeval`) reads.

A `Judgments` holds one task's answers in long form, one row per answer: which topic (`topic`,
an index into `topics`), who answered (`annotator`, an index into `annotators`), about what
(`item`: -1 the topic as a whole, d >= 0 the topic's d-th judged document in `documents`) and
the answer (`value` on the task's `scale`; `text` for a free-text label). Annotators are numbered
within a study (no worker identifiers); two rows with the same annotator index come from the
same person (or the same automated run), which the statistics need.

The tasks (`TASKS`):

- "rating": the topic as a whole on an ordinal scale (Hoyle et al. 2021: 1-3, how related the
  top words are; ProxAnn's "clarity": 1-5, how clearly documents and words fit the category);
- "word-intrusion" / "topic-intrusion": 1 when the annotator picked the intruder, else 0
  (Chang et al. 2009); `choice` may keep the option picked;
- "label": the category an annotator inferred for the topic (free text, ProxAnn step 1);
- "fit": how well a document fits that category (ordinal, ProxAnn: 1-5), per document;
- "rank": the document's place when the annotator ordered the topic's documents by fit
  (1 = fits best; each annotator's ranks of a topic are a permutation of 1..n).

A `Study` gathers the tasks of one collection, the topics, the documents shown, the answers of
automated judges (`judges`: judge -> task -> Judgments whose annotators are its runs), the
per-topic metrics its authors computed, its citation and licence, and `notes`: every counted
policy applied while reading (responses excluded by attention checks, ...). Nothing is dropped
without a note.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..errors import InputFileError, MethodError, shown
from ..files.records import strict_bool, strict_float, strict_id, strict_int

TASKS = ("rating", "word-intrusion", "topic-intrusion", "label", "fit", "rank")
SCALE_KINDS = ("ordinal", "binary", "rank", "text", "real")
ROLES = ("exemplar", "evaluated", "distractor")
WHOLE_TOPIC = -1  # `item` of an answer about the topic as a whole
REAL_SLACK = 1e-6  # a "real" answer may pass its bounds by this fraction of the scale (float rounding
# of an expected score: ProxAnn's LLM fits reach 5.0000002)


@dataclass(frozen=True)
class Scale:
    """The answers' scale: `kind` "ordinal" (whole numbers low..high, higher = more coherent or
    better fitting), "binary" (0/1, 1 = correct), "rank" (1..high, 1 = best), "text" (no number)
    or "real" (any number in low..high, e.g. an automated judge's expected rating); `labels`: the
    options' wording, low to high, when known."""

    kind: str
    low: float = 0.0
    high: float = 1.0
    labels: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in SCALE_KINDS:
            raise MethodError(f"scale kind {self.kind!r} is not one of {', '.join(SCALE_KINDS)}")
        if self.kind != "text" and not (math.isfinite(self.low) and math.isfinite(self.high)
                                        and self.low < self.high):
            raise MethodError(f"scale {self.low}..{self.high}: low must be below high, both finite")

    @property
    def higher_is_better(self) -> bool:
        """Whether a larger value is a better topic or a better-fitting document (not for ranks)."""
        return self.kind != "rank"

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "low": self.low, "high": self.high, "labels": list(self.labels)}


BINARY = Scale("binary", 0, 1)
TEXT = Scale("text")


@dataclass(frozen=True, eq=False)
class TopicSet:
    """The topics judged: ids ("bills/mallet/4"), top words in order, the corpus each was trained
    on and the model that made it ("" where unknown). Meta-evaluation reports per corpus and pooled."""

    ids: tuple[str, ...]
    words: tuple[tuple[str, ...], ...] = ()
    corpus: tuple[str, ...] = ()
    model: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        n = len(self.ids)
        for name in ("words", "corpus", "model"):
            value = getattr(self, name)
            if not value:
                object.__setattr__(self, name, ((),) * n if name == "words" else ("",) * n)
            elif len(value) != n:
                raise MethodError(f"topics: {len(value)} {name} for {n} topics")
        repeated = [t for t, c in Counter(self.ids).items() if c > 1]
        if repeated:
            raise MethodError(f"topics: topic id {shown(repeated[0])} appears twice")

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def corpora(self) -> tuple[str, ...]:
        """The distinct corpora, in order of first appearance."""
        return tuple(dict.fromkeys(self.corpus))

    def index(self, topic_id: str) -> int:
        try:
            return self.ids.index(topic_id)
        except ValueError:
            raise MethodError(f"no topic {shown(topic_id)} among the {len(self.ids)} topics") from None

    def to_dict(self) -> dict[str, Any]:
        return {"ids": list(self.ids), "words": [list(w) for w in self.words],
                "corpus": list(self.corpus), "model": list(self.model)}


@dataclass(frozen=True, eq=False)
class Documents:
    """The documents shown with the topics, one row each: its topic (index), its `item` number
    within the topic (what `Judgments.item` refers to; -1 for exemplars, which are shown but not
    judged), its `role` ("exemplar", "evaluated", "distractor"), its id in its corpus, its text,
    the model's proportion of the topic in it (`theta`, NaN unknown) and whether the model assigns
    it to the topic (`assigned`: 1, 0, or -1 unknown)."""

    topic: np.ndarray
    item: np.ndarray
    role: tuple[str, ...]
    id: tuple[str, ...]
    text: tuple[str, ...]
    theta: np.ndarray
    assigned: np.ndarray

    def __post_init__(self) -> None:
        n = len(self.topic)
        for name in ("item", "role", "id", "text", "theta", "assigned"):
            if len(getattr(self, name)) != n:
                raise MethodError(f"documents: {len(getattr(self, name))} {name} for {n} documents")
        bad = [r for r in self.role if r not in ROLES]
        if bad:
            raise MethodError(f"documents: role {shown(bad[0])} is not one of {', '.join(ROLES)}")

    def __len__(self) -> int:
        return len(self.topic)

    def of(self, topic: int, role: str | None = None) -> np.ndarray:
        """Row numbers of topic `topic`'s documents (of one role), judged items in item order."""
        rows = np.flatnonzero(self.topic == topic)
        if role is not None:
            rows = rows[[self.role[r] == role for r in rows]]
        return rows[np.argsort(self.item[rows], kind="stable")]

    def item_theta(self, n_topics: int) -> list[np.ndarray]:
        """Per topic, the `theta` of its judged items 0..n-1 (evaluated and distractor documents)."""
        out = []
        for t in range(n_topics):
            rows = self.of(t)
            rows = rows[self.item[rows] >= 0]
            out.append(self.theta[rows])
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"topic": self.topic.tolist(), "item": self.item.tolist(), "role": list(self.role),
                "id": list(self.id), "text": list(self.text),
                "theta": [None if math.isnan(x) else float(x) for x in self.theta],
                "assigned": self.assigned.tolist()}


@dataclass(frozen=True, eq=False)
class Judgments:
    """One task's answers in long form (see the module notes); `check()` has run on every
    instance a reader returns."""

    task: str
    scale: Scale
    topics: TopicSet
    annotators: tuple[str, ...]
    topic: np.ndarray  # int64 (n,)
    annotator: np.ndarray  # int64 (n,)
    item: np.ndarray  # int64 (n,): -1 the topic as a whole
    value: np.ndarray  # float64 (n,): NaN for text answers
    text: tuple[str, ...] | None = None
    familiar: np.ndarray | None = None  # bool (n,): the annotator said they knew the subject
    choice: np.ndarray | None = None  # int64 (n,): the option picked (intrusion), -1 unknown
    documents: Documents | None = None
    source: str = ""

    def __post_init__(self) -> None:
        n = len(self.topic)
        for name in ("annotator", "item", "value", "text", "familiar", "choice"):
            value = getattr(self, name)
            if value is not None and len(value) != n:
                raise MethodError(f"{self.task} judgments: {len(value)} {name} for {n} answers")

    def __len__(self) -> int:
        return len(self.topic)

    def __repr__(self) -> str:
        return (f"Judgments({self.task}, {len(self)} answers, {self.n_topics} topics, "
                f"{len(self.annotators)} annotators, scale {self.scale.kind} "
                f"{self.scale.low:g}..{self.scale.high:g})")

    @property
    def n_topics(self) -> int:
        return len(self.topics)

    def counts(self) -> np.ndarray:
        """Per topic, the number of distinct annotators who answered it."""
        pairs = np.unique(np.stack([self.topic, self.annotator]), axis=1)
        return np.bincount(pairs[0], minlength=self.n_topics)

    def oriented(self) -> np.ndarray:
        """The values with larger = better (ranks negated), as the statistics read them."""
        return self.value if self.scale.higher_is_better else -self.value

    def topic_means(self) -> np.ndarray:
        """Per topic, the mean answer over its answers (oriented: larger = better); NaN for a topic
        no one answered."""
        if self.scale.kind == "text":
            raise MethodError(f"{self.task} answers are text: they have no mean")
        sums = np.bincount(self.topic, weights=self.oriented(), minlength=self.n_topics)
        counts = np.bincount(self.topic, minlength=self.n_topics)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)

    def select(self, rows: np.ndarray) -> Judgments:
        """The answers at `rows` (a boolean mask or row numbers); topics and annotators are kept."""
        def pick(a: Any) -> Any:
            if a is None:
                return None
            if isinstance(a, tuple):
                return tuple(a[i] for i in np.arange(len(a))[rows])
            return a[rows]
        return replace(self, topic=self.topic[rows], annotator=self.annotator[rows], item=self.item[rows],
                       value=self.value[rows], text=pick(self.text), familiar=pick(self.familiar),
                       choice=pick(self.choice))

    def check(self, where: str = "", places: Sequence[str] | None = None) -> Judgments:
        """One-line errors for answers that cannot be right: an index out of range, a value off
        the scale, an answer given twice, a ranking that is not a permutation; returns self.
        Errors name `where` (else the source) and the answer, or `places[r]` ("FILE:LINE")."""
        at = where or self.source or self.task

        def answer(r: int, full: bool = True) -> str:
            head = places[r] if places is not None else f"{at}: answer {r}"
            if not full:
                return head
            item = "" if self.item[r] < 0 else f", document item {self.item[r]}"
            return (f"{head} (topic {shown(self.topics.ids[self.topic[r]])}, annotator "
                    f"{shown(self.annotators[self.annotator[r]])}{item})")

        for name, arr, hi in (("topic", self.topic, self.n_topics), ("annotator", self.annotator,
                                                                     len(self.annotators))):
            bad = np.flatnonzero((arr < 0) | (arr >= hi))
            if bad.size:
                raise InputFileError(f"{answer(int(bad[0]), False)}: {name} index {arr[bad[0]]} is not "
                                     f"among the {hi} {name}s")
        bad = np.flatnonzero(self.item < WHOLE_TOPIC)
        if bad.size:
            raise InputFileError(f"{answer(int(bad[0]))}: item {self.item[bad[0]]} (use -1 for the topic "
                                 "as a whole)")
        if self.scale.kind == "text":
            if self.text is None:
                raise InputFileError(f"{at}: a text task needs the answers' text")
        else:
            v = self.value
            slack = REAL_SLACK * (self.scale.high - self.scale.low) if self.scale.kind == "real" else 0.0
            low, high = self.scale.low - slack, self.scale.high + slack
            bad = np.flatnonzero(~np.isfinite(v) | (v < low) | (v > high))
            if bad.size:
                raise InputFileError(f"{answer(int(bad[0]))}: value {v[bad[0]]:g} is off the scale "
                                     f"{self.scale.low:g}..{self.scale.high:g}")
            if self.scale.kind in ("ordinal", "binary", "rank"):
                bad = np.flatnonzero(v != np.round(v))
                if bad.size:
                    raise InputFileError(f"{answer(int(bad[0]))}: value {v[bad[0]]:g} is not a whole "
                                         f"number on the {self.scale.kind} scale")
        order = np.lexsort((self.item, self.annotator, self.topic))
        t, a, i = self.topic[order], self.annotator[order], self.item[order]
        same = (t[1:] == t[:-1]) & (a[1:] == a[:-1]) & (i[1:] == i[:-1])
        if np.any(same):
            k = int(np.flatnonzero(same)[0])
            what = "topic" if i[k] < 0 else "document"
            raise InputFileError(f"{answer(int(order[k + 1]))}: the annotator answered this {what} twice "
                                 f"(also answer {order[k]})")
        if self.scale.kind == "rank":
            starts = np.flatnonzero(np.r_[True, (t[1:] != t[:-1]) | (a[1:] != a[:-1])])
            for s, e in zip(starts, np.r_[starts[1:], len(t)], strict=True):
                got = np.sort(self.value[order[s:e]])
                if not np.array_equal(got, np.arange(1, e - s + 1)):
                    raise InputFileError(f"{answer(int(order[s]))}: the ranks {got.astype(int).tolist()} "
                                         f"are not a permutation of 1..{e - s}")
        return self


@dataclass(frozen=True, eq=False)
class Study:
    """A collection of judgments (see the module notes). `study["rating"]` is one task's
    `Judgments`; `metrics[name]` a per-topic array (NaN where the authors give none)."""

    name: str
    topics: TopicSet
    tasks: dict[str, Judgments]
    judges: dict[str, dict[str, Judgments]] = field(default_factory=dict)
    metrics: dict[str, np.ndarray] = field(default_factory=dict)
    documents: Documents | None = None
    title: str = ""
    citation: str = ""
    licence: str = ""
    notes: tuple[str, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)  # study-specific material (JSON-ready)

    def __getitem__(self, task: str) -> Judgments:
        if task not in self.tasks:
            raise MethodError(f"study {self.name!r} has no task {task!r} (it has: {', '.join(self.tasks)})")
        return self.tasks[task]

    def __repr__(self) -> str:
        tasks = ", ".join(f"{k} {len(v)}" for k, v in self.tasks.items())
        judges = f", {len(self.judges)} automated judges" if self.judges else ""
        return f"Study({self.name}: {len(self.topics)} topics; answers: {tasks}{judges})"

    def take(self, topics: Sequence[int] | np.ndarray) -> Study:
        """The study restricted to the topics at indices `topics` (in that order): their answers,
        documents, judges' answers and metrics; every other topic's are left out (a subsample)."""
        keep = np.asarray(topics, dtype=np.int64).reshape(-1)
        n = len(self.topics)
        if keep.size and (keep.min() < 0 or keep.max() >= n) or len(set(keep.tolist())) != keep.size:
            raise MethodError(f"study {self.name!r}: topics to keep must be distinct indices below {n}")
        new = np.full(n, -1, dtype=np.int64)
        new[keep] = np.arange(keep.size)
        t = self.topics
        sub = TopicSet(tuple(t.ids[i] for i in keep), tuple(t.words[i] for i in keep),
                       tuple(t.corpus[i] for i in keep), tuple(t.model[i] for i in keep))
        docs = self.documents
        if docs is not None:
            rows = np.flatnonzero(new[docs.topic] >= 0)
            docs = Documents(new[docs.topic[rows]], docs.item[rows], tuple(docs.role[r] for r in rows),
                             tuple(docs.id[r] for r in rows), tuple(docs.text[r] for r in rows),
                             docs.theta[rows], docs.assigned[rows])

        def cut(j: Judgments) -> Judgments:
            j = j.select(new[j.topic] >= 0)
            own = docs if j.documents is self.documents else j.documents if j.documents is None else None
            if own is None and j.documents is not None:
                raise MethodError(f"{j.task} answers carry documents of their own; take() keeps the study's")
            return replace(j, topics=sub, topic=new[j.topic], documents=own)

        return replace(self, topics=sub, tasks={k: cut(v) for k, v in self.tasks.items()},
                       judges={k: {t: cut(v) for t, v in d.items()} for k, d in self.judges.items()},
                       metrics={k: np.asarray(v)[keep] for k, v in self.metrics.items()}, documents=docs)

    def metric(self, name: str) -> np.ndarray:
        if name not in self.metrics:
            raise MethodError(f"study {self.name!r} has no metric {name!r} "
                              f"(it has: {', '.join(self.metrics) or 'none'})")
        return self.metrics[name]


def index_of(values: Iterable[str]) -> tuple[tuple[str, ...], np.ndarray]:
    """Distinct values in order of first appearance, and each value's index among them."""
    seen: dict[str, int] = {}
    idx = [seen.setdefault(v, len(seen)) for v in values]
    return tuple(seen), np.asarray(idx, dtype=np.int64)


def from_rows(
    rows: Sequence[Mapping[str, Any]],
    task: str,
    scale: Scale,
    topics: TopicSet | None = None,
    documents: Documents | None = None,
    source: str = "",
    places: Sequence[str] | None = None,
) -> Judgments:
    """`Judgments` from one dict per answer: "topic" (an id), "annotator" (an id), "value" (a
    number on `scale`; "text" for a label), optionally "item" (-1 or absent: the topic as a whole),
    "familiar" (bool), "choice" (int). `topics` fixes the topic order (a topic no one answered is
    kept; an answer about a topic not in it is an error); `places` names each row for errors
    ("FILE:LINE"). The annotation app's export and a user's own study go through here."""
    if task not in TASKS:
        raise MethodError(f"task {task!r} is not one of {', '.join(TASKS)}")
    def where(i: int) -> str:
        return places[i] if places is not None else f"{source or task}: answer {i}"
    if topics is None:
        topics = TopicSet(tuple(dict.fromkeys(str(r.get("topic")) for r in rows)))
    position = {t: i for i, t in enumerate(topics.ids)}
    topic = np.empty(len(rows), dtype=np.int64)
    for i, r in enumerate(rows):
        if "topic" not in r or "annotator" not in r or ("value" not in r and scale.kind != "text"):
            raise InputFileError(f"{where(i)}: an answer needs a topic, an annotator and a value")
        if str(r["topic"]) not in position:
            raise InputFileError(f"{where(i)}: topic {shown(r['topic'])} is not among the study's topics")
        topic[i] = position[str(r["topic"])]
    annotators, annotator = index_of(strict_id(r["annotator"], where(i), "annotator")
                                     for i, r in enumerate(rows))
    item = np.array([WHOLE_TOPIC if r.get("item") in (None, "") else
                     strict_int(r["item"], where(i), "item", -1) for i, r in enumerate(rows)], dtype=np.int64)
    text = tuple(str(r.get("text", "")) for r in rows) if scale.kind == "text" else None
    value = np.array([np.nan if scale.kind == "text" else strict_float(r["value"], where(i), "value")
                      for i, r in enumerate(rows)], dtype=np.float64)
    familiar = (np.array([strict_bool(r["familiar"], where(i), "familiar") for i, r in enumerate(rows)])
                if rows and all(r.get("familiar") not in (None, "") for r in rows) else None)
    has_choice = bool(rows) and all(r.get("choice") not in (None, "") for r in rows)
    choice = (np.array([strict_int(r["choice"], where(i), "choice") for i, r in enumerate(rows)],
                       dtype=np.int64) if has_choice else None)
    out = Judgments(task, scale, topics, annotators, topic, annotator, item, value, text, familiar, choice,
                    documents, source)
    return out.check(places=places)
