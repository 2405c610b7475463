"""The human side of a meta-evaluation, and its two-stage bootstrap.

Each topic's answers are held as a matrix: its annotators x the items judged (one column for a
task about the topic as a whole; the evaluated documents for ProxAnn's fit and rank), oriented
so that larger is better. A topic's human score is a function of the column means over a
multiset of its annotators (`Quality`):

- "mean": the mean answer (mean rating, intrusion accuracy);
- "theta" / "assigned": ProxAnn's topic quality, Kendall's tau-b between the documents' mean fit
  (or mean rank, reversed) and the model's proportions theta (or its 0/1 assignments).

A bootstrap replicate draws topics with replacement (within each corpus, so every corpus keeps
its number of topics), then, for each drawn topic, as many of its annotators as it has, with
replacement (Davison & Hinkley 1997, section 3.8, "two-stage" resampling). On simulated raters
its percentile intervals for the correlation with the k-rater mean cover at 95 % within Monte
Carlo error for 24-150 topics and 3-15 raters (tests/test_metaeval.py; a topics-only bootstrap
undercovers there, 92-94 %). A split half draws each topic's annotators into two halves of
sizes floor(k/2) and ceil(k/2).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from ..errors import MethodError
from ..judgments import Judgments
from .stats import kendall_rows

QUALITIES = ("mean", "theta", "assigned")
CHUNK_CELLS = 4_000_000  # values gathered per chunk of replicates (memory ~ 32 MB)


@dataclass(frozen=True, eq=False)
class HumanTable:
    """Topics x annotators x items of oriented answers (NaN: not answered), with each topic's
    number of annotators, and the reference each topic's item means are compared with (quality
    "theta"/"assigned": topics x items)."""

    values: np.ndarray  # (n_topics, kmax, m)
    counts: np.ndarray  # (n_topics,)
    quality: str
    reference: np.ndarray | None  # (n_topics, m)
    topics: np.ndarray  # the Judgments' topic index of each row
    complete: bool = False  # every annotator of a topic answered each of its items
    who: np.ndarray | None = None  # (n_topics, kmax): the annotator index of each slot, -1 empty

    def full(self) -> np.ndarray:
        """Each topic's score from all its annotators."""
        with np.errstate(invalid="ignore"):
            means = np.nanmean(self.values, axis=1)
        return _scores(self, means[None], None if self.reference is None else self.reference[None])[0]


def human_table(j: Judgments, quality: str = "mean") -> HumanTable:
    """The answers of `j` arranged for resampling. "mean" needs answers about whole topics (or
    averages every item an annotator answered); "theta"/"assigned" need answers about documents
    with the model's theta / assignments (`j.documents`), evaluated documents only."""
    if quality not in QUALITIES:
        raise MethodError(f"quality {quality!r} is not one of {', '.join(QUALITIES)}")
    if j.scale.kind == "text":
        raise MethodError(f"{j.task} answers are text: they have no score to correlate")
    v = j.oriented()
    if quality == "mean":
        items = np.zeros(len(j), dtype=np.int64)
        m = 1
        ref = None
    else:
        if j.documents is None:
            raise MethodError(f"quality {quality!r} needs the documents' {quality} (these {j.task} answers "
                              "come without documents)")
        docs = j.documents
        evaluated = [docs.of(t, "evaluated") for t in range(j.n_topics)]
        m = max((len(e) for e in evaluated), default=0)
        if m < 2 or np.all(j.item < 0):
            raise MethodError(f"quality {quality!r} needs answers about a topic's documents; {j.task} "
                              "answers are about whole topics")
        ref = np.full((j.n_topics, m), np.nan)
        slot = {}
        for t, rows in enumerate(evaluated):
            vals = docs.theta[rows] if quality == "theta" else docs.assigned[rows].astype(float)
            if quality == "assigned" and np.any(docs.assigned[rows] < 0):
                raise MethodError(f"topic {j.topics.ids[t]}: the documents' assignments are unknown")
            ref[t, : len(rows)] = vals
            for k, r in enumerate(rows):
                slot[(t, int(docs.item[r]))] = k
        keep = np.array([(int(t), int(i)) in slot for t, i in zip(j.topic, j.item, strict=True)], dtype=bool)
        items = np.array([slot.get((int(t), int(i)), -1) for t, i in zip(j.topic, j.item, strict=True)])
        j, v, items = j.select(keep), v[keep], items[keep]
    pairs, inverse = np.unique(np.stack([j.topic, j.annotator]), axis=1, return_inverse=True)
    inverse = inverse.reshape(-1)
    counts = np.bincount(pairs[0], minlength=j.n_topics)
    present = np.flatnonzero(counts > 0)
    kmax = int(counts.max(initial=0))
    # position of each (topic, annotator) pair among its topic's annotators
    first = np.searchsorted(pairs[0], pairs[0], side="left")
    pos = np.arange(pairs.shape[1]) - first
    row_of = np.full(j.n_topics, -1)
    row_of[present] = np.arange(len(present))
    values = np.full((len(present), max(kmax, 1), m), np.nan)
    sums = np.zeros_like(values)
    hits = np.zeros_like(values)
    np.add.at(sums, (row_of[j.topic], pos[inverse], items), v)
    np.add.at(hits, (row_of[j.topic], pos[inverse], items), 1.0)
    with np.errstate(invalid="ignore"):
        values = np.where(hits > 0, sums / np.maximum(hits, 1), np.nan)
    live = np.arange(values.shape[1])[None, :, None] < counts[present][:, None, None]
    complete = bool(np.all(np.isfinite(values) | ~live))
    reference = None if ref is None else ref[present]
    who = np.full(values.shape[:2], -1, dtype=np.int64)
    who[row_of[pairs[0]], pos] = pairs[1]
    return HumanTable(values, counts[present], quality, reference, present, complete, who)


def _mean(table: HumanTable, vals: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Mean over axis 2 of `vals` (b, n, k, m) where `mask` (b, n, k) holds; NaN where none."""
    if table.complete:
        count = mask.sum(axis=2)[..., None]
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(mask[..., None], vals, 0.0).sum(axis=2) / count
    with np.errstate(invalid="ignore"):
        return np.nanmean(np.where(mask[..., None], vals, np.nan), axis=2)


def strata(groups: np.ndarray) -> list[np.ndarray]:
    """Row numbers of each group, in order of first appearance."""
    _, first, inverse = np.unique(groups, return_index=True, return_inverse=True)
    order = np.argsort(first)
    return [np.flatnonzero(inverse == g) for g in order]


def replicates(table: HumanTable, rows: np.ndarray, groups: np.ndarray, n_boot: int, seed: int,
               split: bool = True) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray | None]]:
    """Chunks of bootstrap replicates: (drawn row numbers (b, n), human scores of the drawn
    topics from their drawn annotators (b, n), and, with `split`, the two halves' scores
    (2, b, n)). `rows` are the table rows taking part, `groups` their corpus labels (resampled
    within each). The stream depends only on `seed` and the data."""
    rng = np.random.default_rng(seed)
    parts = strata(groups)
    n = len(rows)
    kmax, m = table.values.shape[1], table.values.shape[2]
    chunk = max(1, min(n_boot, CHUNK_CELLS // max(1, n * kmax * m)))
    done = 0
    while done < n_boot:
        b = min(chunk, n_boot - done)
        drawn = np.concatenate([part[rng.integers(0, len(part), (b, len(part)))] for part in parts], axis=1)
        t = rows[drawn]  # table rows (b, n)
        k = table.counts[t]  # annotators of each drawn topic
        pick = np.floor(rng.random((b, n, kmax)) * k[..., None]).astype(np.int64)
        live = np.arange(kmax)[None, None, :] < k[..., None]
        means = _mean(table, table.values[t[..., None], pick], live)  # (b, n, m)
        ref = None if table.reference is None else table.reference[t]
        human = _scores(table, means, ref)
        halves = _halves(table, t, k, live, rng, ref) if split else None
        done += b
        yield drawn, human, halves


def _scores(table: HumanTable, means: np.ndarray, ref: np.ndarray | None) -> np.ndarray:
    """Per-topic scores from item means (b, n, m) and the reference aligned with them."""
    if table.quality == "mean":
        return means[..., 0]
    b, n, m = means.shape
    return kendall_rows(means.reshape(b * n, m), np.ascontiguousarray(ref).reshape(b * n, m)).reshape(b, n)


def _halves(table: HumanTable, t: np.ndarray, k: np.ndarray, live: np.ndarray, rng: np.random.Generator,
            ref: np.ndarray | None) -> np.ndarray:
    """The scores of random split halves (sizes floor(k/2), ceil(k/2)) of each drawn topic's own
    annotators: (2, b, n); NaN for a topic with one annotator."""
    keys = np.where(live, rng.random(live.shape), np.inf)
    half = (k // 2)[..., None]
    cut = np.take_along_axis(np.sort(keys, axis=2), np.maximum(half - 1, 0), axis=2)
    first = live & (keys <= cut) & (half >= 1)
    own = table.values[t]
    return np.stack([_scores(table, _mean(table, own, mask), ref) for mask in (first, live & ~first)])


def split_halves(table: HumanTable, rows: np.ndarray, n_splits: int, seed: int) -> np.ndarray:
    """The two halves' scores (2, n_splits, n) of `n_splits` random split halves of each topic's
    annotators (topics as they are, not resampled)."""
    rng = np.random.default_rng(seed)
    t = np.broadcast_to(rows, (n_splits, len(rows)))
    k = table.counts[t]
    live = np.arange(table.values.shape[1])[None, None, :] < k[..., None]
    return _halves(table, t, k, live, rng, None if table.reference is None else table.reference[t])
