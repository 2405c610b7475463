"""Many models, one table (`tl.evaluate`, `tealeaves evaluate`): for every model the held-out
log-likelihood per token with its run-to-run sd and the perplexity (the default estimator unless
told otherwise), coherence (NPMI and UMass by default) over a reference corpus, diversity,
exclusivity, predictive rank and automated word-intrusion model precision; every pair of models
compared with a 95% interval (the difference of their held-out estimates by default, free; Ratio-AIS
on request, or only for the pairs the difference cannot separate: `compare_models`); and a ranking
that groups models the evidence cannot separate. The work runs in STAGES, each timed (wall and
CPU seconds) and estimated before any work, the estimate checked against `max_hours`.

Models of every kind go in one table (`topics.Topics`: NMF, LSI, HDP, arrays, ...): each gets every
metric that applies to it (`topics.why_not`) and, for the others, None ("—" in the table) with the
reason listed under the table and in the row's `not_applicable`. Held-out likelihood, the pairwise
comparisons and the ranking are among the models with a likelihood: LDA, and models with a
logistic-normal prior (tomotopy's CTM, arrays with a mean and covariance), whose held-out column is
filled by their own estimator, annealed importance sampling over eta (`heldout.logistic_normal`,
said in the notes); the difference of held-out estimates compares any two of them (same tokens, both
estimates unbiased for P(w)), Ratio-AIS only two LDA models. The predictive metrics are LDA's only;
coherence, diversity, exclusivity and automated intrusion compare every model that has them.

Models with different vocabularies are scored on the same tokens: a held-out token counts only if
every model's vocabulary has its word; the others are dropped for all models and counted (the
`scoring` block says how many, and how many words of each model's vocabulary the held-out text
never reaches). Perplexities are then comparable: every model predicts the same token sequence
with its own full distribution over words."""

from __future__ import annotations

import inspect
import math
import os
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .coherence import ABSENT, DEFAULT_WINDOWS, count, diversity, exclusivity, topic_words
from .coherence import coherence as coherence_of
from .coherence.counts import read_once
from .coherence.index import is_index, read_index
from .compare import CompareResult, compare
from .corpus import Corpus
from .datasets import load_topics, read_corpus
from .errors import InvalidCorpusError, MethodError
from .heldout import HeldoutResult, check_vocab_fits, get_method
from .heldout import heldout as estimate_heldout
from .intrusion import auto, predictive
from .model import TopicModel
from .output import numbers
from .output.jsonout import json_safe
from .topics import NotApplicableError, Topics, as_lda, why_not
from .util.limits import MAX_HOURS, OPS_RATE, RATE, check_cost, check_float, update_seconds
from .util.stages import Stages, estimated_stages, stage_lines

DEFAULT_COHERENCE = ("npmi", "umass")
# row key -> column heading: IRBO for every model with top words, the others with word vectors
EMBEDDING_COLUMNS = {"irbo": "IRBO", "we_pairwise": "WE pair", "we_centroid": "WE centroid",
                     "we_irbo": "WE-IRBO"}
COMPARE_MODES = ("difference", "auto", "ratio-ais", "none")
STAGES = ("loading", "held-out", "comparisons", "coherence", "intrusion", "predictive")
DASH = "—"
# row key -> the metric of `topics.NEEDS` it needs
ROW_METRICS = {"per_token": "heldout", "coherence": "coherence", "diversity": "diversity",
               "exclusivity": "exclusivity", "predictive_rank": "predictive",
               "auto_model_precision": "auto MP"}
NO_REFERENCE = "not computed: no reference (reference=..., CLI --reference) to count words in"
LARGE_SECONDS = 60.0  # an estimate at least this long is shown before the work starts
BYTES_PER_TOKEN = 5.0  # a reference file's tokens, estimated from its size (errs towards more tokens)
TEXT_RATE = 1e6  # reference tokens read, tokenised and counted per second per worker (Python)
# Postings (occurrences of the words asked for) a reference index (.tlx) answers per second, one
# process: 2.8e7-3.4e7 per CPU second measured on this machine (2 shared cores) for 50 topics x 10
# words at windows None, 10 and 110 from a 2e6-token index (a one-off script, session 4), and 3.2e7
# in benchmarks/results/coherence_index.json (1 GB index, 4 measures); taken at a third of that.
# An index pass is priced as reading EVERY posting (one per token, its header's count), whatever
# the window: a query reads only its target words' postings, so the estimate errs on the long side.
INDEX_RATE = 1e7


@dataclass
class EvaluationResult:
    """One row per model (`rows`), pairwise `comparisons`, ranking `groups` (best first; the
    models within a group are not separated by the evidence; None when no comparison ran, with
    the reason in `groups_note`), the token `scoring` rule."""

    rows: list[dict[str, Any]]
    comparisons: list[dict[str, Any]]
    groups: list[list[str]] | None
    scoring: dict[str, Any]
    params: dict[str, Any]
    seconds: float
    stages: dict[str, Any] = field(default_factory=dict)
    estimate: dict[str, Any] = field(default_factory=dict)
    heldout: dict[str, HeldoutResult] = field(default_factory=dict, repr=False)
    diagnostics: dict[str, Any] = field(default_factory=dict, repr=False)  # issue 26: per-topic, on request
    stability: list[Any] | None = field(default=None, repr=False)  # issue 26: groups of restarts, on request
    topics: dict[str, dict[str, Any]] = field(default_factory=dict, repr=False)  # per model: words, coherence
    groups_note: str | None = None  # why there is no ranking (groups None)

    @property
    def names(self) -> list[str]:
        return [r["model"] for r in self.rows]

    @property
    def best(self) -> list[str]:
        """The models in the first group of the ranking."""
        return self.groups[0] if self.groups else []

    def table(self) -> str:
        """The terminal table: one row per model."""
        measures = self.params["coherence"]
        extra = [k for k in EMBEDDING_COLUMNS if any(k in r for r in self.rows)]
        head = ["model", "K", "log-lik/token", "± sd", "perplexity", *measures, "diversity",
                "exclusivity", "pred. rank", *[EMBEDDING_COLUMNS[k] for k in extra], "auto MP",
                *(["stability"] if self.stability is not None else [])]
        rows = []
        for r in self.rows:
            na = {**r.get("not_applicable", {}), **r.get("not_computed", {})}

            def cell(key: str, value: Any, shown: str | None = None, na: dict = na) -> str:
                return DASH if ROW_METRICS.get(key) in na else numbers.metric(shown or key, value)

            rows.append([r["model"], str(r["topics"]), cell("per_token", r["per_token"]),
                         cell("per_token", r["per_token_sd"], "per_token_sd"),
                         cell("per_token", r["perplexity"], "perplexity"),
                         *[cell("coherence", r["coherence"].get(m)) for m in measures],
                         cell("diversity", r["diversity"]), cell("exclusivity", r["exclusivity"]),
                         cell("predictive_rank", r["predictive_rank"]),
                         *[DASH if r.get(k) is None else numbers.metric(k, r[k]) for k in extra],
                         cell("auto_model_precision", r["auto_model_precision"])
                         + ("*" if r.get("auto_note") and "auto MP" not in na else ""),
                         *([numbers.metric("stability", r.get("stability"))]
                           if self.stability is not None else [])])
        widths = [max(len(x) for x in col) for col in zip(head, *rows, strict=True)]
        lines = ["  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in
                           enumerate(zip(cells, widths, strict=True))) for cells in [head, *rows]]
        lines.insert(1, "  ".join("-" * w for w in widths))
        return "\n".join(lines)

    def notes(self) -> list[str]:
        """Every fallback a row took, one line each (marked * in the table), then every metric that
        does not apply to a model, with the reason (— in the table)."""
        out = [f"* {r['model']}: automated intrusion: {r['auto_note']}"
               for r in self.rows if r.get("auto_note")]
        out += [f"{r['model']}: held-out: {r['heldout_note']}" for r in self.rows if r.get("heldout_note")]
        for r in self.rows:
            for metric, reason in {**r.get("not_applicable", {}), **r.get("not_computed", {})}.items():
                out.append(f"{DASH} {r['model']}: {metric}: {reason}")
        return out

    def meaningful(self) -> list[str]:
        """Which comparisons the table supports, in words."""
        rows = self.rows
        lik = [r["model"] for r in rows if "heldout" not in r.get("not_applicable", {})]
        others = [r["model"] for r in rows if r["model"] not in lik]
        lines = []
        own = [r["model"] for r in rows if r.get("heldout_note")]
        if own and len(lik) > 1:
            lines.append(f"held-out log-likelihoods of {', '.join(own)} come from ais over eta (a "
                         "logistic-normal prior): the difference method compares them with the others on "
                         "the same tokens; Ratio-AIS only between LDA models")
        if not others:
            return lines
        if len(lik) > 1:
            lines.append(f"held-out likelihood, the comparisons and the ranking are among the models with "
                         f"a likelihood only ({', '.join(lik)}); {', '.join(others)} have none")
        elif lik:
            lines.append(f"only {lik[0]} has a likelihood: no held-out ranking; "
                         f"{', '.join(others)} have none")
        else:
            lines.append("no model has a likelihood: no held-out ranking")
        top = [r["model"] for r in rows if "coherence" not in r.get("not_applicable", {})]
        lines.append(f"coherence, diversity and automated intrusion compare every model with top words "
                     f"({', '.join(top)}); exclusivity those with non-negative topic-word weights ("
                     + ", ".join(r["model"] for r in rows if "exclusivity" not in r.get("not_applicable", {}))
                     + ")")
        return lines

    def summary(self) -> str:
        """What the table can compare, the ranking and the comparisons, in words, then the notes."""
        lines = list(self.meaningful())
        if self.groups is None and self.groups_note:
            lines.append(f"no ranking: {self.groups_note}")
        groups = self.groups or []
        alone = len(groups) == 1 and len(groups[0]) == 1 and len(self.rows) > 1
        for i, g in enumerate([] if alone else groups, 1):
            tie = " (not separated by the evidence)" if len(g) > 1 else ""
            lines.append(f"rank {i}: {', '.join(g)}{tie}")
        for c in self.comparisons:
            lo, hi = c["per_token_interval"]
            lines.append(f"{c['a']} vs {c['b']} ({c['method']}): {c['per_token']:+.5f} nats per token, "
                         f"95% [{lo:+.5f}, {hi:+.5f}] about {c['per_token_interval_about']}: {c['verdict']}")
            if c.get("method_reason"):
                lines.append(f"  {c['method']}: {c['method_reason']}")
            if c.get("warning"):
                lines.append(f"  WARNING: {c['warning']}")
        prints = self.params.get("coherence_fingerprint") or {}
        if prints:
            from .coherence.fingerprint import line

            lines.append("coherence " + line(list(prints.values())))
        return "\n".join(lines + self.notes())

    def timing(self) -> str:
        """Wall and CPU seconds per stage, with the estimate made before the work."""
        return "\n".join(stage_lines(self.stages, estimated_stages(self.estimate)))

    def to_dict(self) -> dict[str, Any]:
        return json_safe({"task": "evaluate", "rows": self.rows, "comparisons": self.comparisons,
                          **({"groups": self.groups} if self.groups is not None else
                             {"groups_note": self.groups_note}),
                          "scoring": self.scoring, "params": self.params,
                          "seconds": self.seconds, "stages": self.stages, "estimate": self.estimate,
                          **({"diagnostics": {k: v.to_dict() for k, v in self.diagnostics.items()}}
                             if self.diagnostics else {}),
                          "topic_words": {k: v["words"] for k, v in self.topics.items() if v["words"]},
                          "topic_coherence": {k: v["coherence"] for k, v in self.topics.items()
                                              if v["coherence"]},
                          **({"stability": [g.to_dict() for g in self.stability]}
                             if self.stability is not None else {})})

    def to_frame(self):
        """The per-model table as a pandas DataFrame (one column per metric)."""
        try:
            import pandas as pd
        except ImportError:
            raise MethodError('to_frame needs pandas: pip install "tealeaves[pandas]"') from None
        flat = []
        for r in self.rows:
            row = {k: v for k, v in r.items() if k not in ("coherence", "auto_model_precision_ci")}
            row.update({f"coherence_{m}": v for m, v in r["coherence"].items()})
            flat.append(row)
        frame = pd.DataFrame(flat)
        return frame.drop(columns=[c for c in ("not_applicable",) if c in frame]).set_index("model")

    def __repr__(self) -> str:
        best = ", ".join(self.best) or "-"
        return f"EvaluationResult({len(self.rows)} models; best: {best})"

    def _repr_html_(self) -> str:
        from html import escape

        return f"<pre>{escape(self.table())}\n\n{escape(self.summary())}</pre>"


def _top_words(m: TopicModel | Topics, topn: int) -> list[list[str]] | None:
    """Each topic's top `topn` words for the report's per-topic table (None if it has none)."""
    try:
        return topic_words(m, topn)
    except MethodError:
        return None


def _names(models: Sequence[TopicModel], names: Sequence[str] | None) -> list[str]:
    if names is not None and len(names) != len(models):
        raise MethodError(f"{len(names)} names for {len(models)} models")
    out = list(names) if names is not None else [m.name for m in models]
    seen: dict[str, int] = {}
    unique = []
    for n in out:
        seen[n] = seen.get(n, 0) + 1
        unique.append(n if seen[n] == 1 else f"{n} #{seen[n]}")
    return unique


def common_tokens(models: Sequence[TopicModel | Topics], docs: Any, tokenizer: str = "whitespace",
                  encoding: str = "utf-8") -> tuple[list[Corpus], dict[str, Any]]:
    """The held-out documents on each model's word ids, keeping only the tokens every model
    knows (see the module notes), and the report of what that rule kept and dropped."""
    vocabs = [m.vocab for m in models]
    if any(v is None for v in vocabs):
        if any(v is not None for v in vocabs) or len({m.num_words for m in models}) > 1:
            raise MethodError("models without a vocabulary can be evaluated together only if none has "
                              "one and all have the same number of words")
        corpus = docs if isinstance(docs, Corpus) else (
            read_corpus(docs, tokenizer=tokenizer, encoding=encoding) if isinstance(docs, str | os.PathLike)
            else Corpus.from_word_ids(docs))
        for m in models:  # text against a model without words: an error before any work
            check_vocab_fits(corpus, m)
        return [corpus] * len(models), {"rule": "same word ids (no vocabularies)", **corpus.report()}
    shared = set(vocabs[0]).intersection(*vocabs[1:])
    common = tuple(w for w in vocabs[0] if w in shared)
    if not common:
        raise MethodError("the models share no word; they cannot be scored on the same tokens")
    if isinstance(docs, Corpus):
        if docs.vocab is None:
            raise InvalidCorpusError("held-out documents given as word ids need their vocabulary "
                                     "(Corpus.vocab) to be scored by several models")
        texts = [[docs.vocab[i] for i in docs[d]] for d in range(len(docs))]
        corpus = Corpus.from_tokens(texts, common, docs.source, docs.oov_tokens, docs.oov_words)
    elif isinstance(docs, str | os.PathLike):
        corpus = read_corpus(docs, vocab=common, tokenizer=tokenizer, encoding=encoding)
    else:
        corpus = Corpus.from_tokens(docs, common)
    out = []
    for m in models:
        index = m.word_index() if isinstance(m, TopicModel) else {w: i for i, w in enumerate(m.vocab)}
        ids = np.array([index[w] for w in common], dtype=np.int64)
        out.append(Corpus(ids[corpus.words], corpus.offsets, m.vocab, corpus.source,
                          corpus.oov_tokens, corpus.oov_words))
    report = corpus.report()
    report["rule"] = ("a token is scored only if every model's vocabulary has its word; the others "
                      "are dropped for all models")
    report["common_words"] = len(common)
    report["words_only_in_model"] = {m.name: m.num_words - len(common) for m in models}
    return out, report


def _comparison(name_a: str, name_b: str, res: CompareResult) -> dict[str, Any]:
    i = res.verdict_interval()
    where = "in the population" if i.scope == "population" else "on these documents"
    if not i.available:
        verdict = f"not separated: the interval is unavailable ({i.reason})"
    elif i.low > 0:
        verdict = f"{name_a} is better {where}"
    elif i.high < 0:
        verdict = f"{name_b} is better {where}"
    else:
        verdict = f"not separated {where}: the interval includes 0"
    return {"a": name_a, "b": name_b, "method": res.method, "total": res.total,
            "per_token": res.per_token, "per_token_interval": [i.low, i.high],
            "per_token_interval_scope": i.scope, "per_token_interval_about": i.about,
            "warning": i.warning, "intervals": {k: v.to_dict() for k, v in res.intervals().items()},
            "verdict": verdict, "perplexity_ratio": res.perplexity_ratio}


def difference(a: HeldoutResult, b: HeldoutResult, name_a: str, name_b: str, seed: int) -> CompareResult:
    """log P(w|A) - log P(w|B) from two held-out results on the same documents and tokens."""
    sd = float(np.hypot(a.sd, b.sd))
    return CompareResult(method="difference", params={"estimator": a.label}, model_a=name_a,
                         model_b=name_b, doc_log_ratio=a.doc_log_prob - b.doc_log_prob,
                         doc_tokens=a.doc_tokens, sd_chains=sd, seconds=0.0, seed=seed,
                         workers=a.workers, corpus=a.corpus, run_log_prob_a=a.run_log_prob,
                         run_log_prob_b=b.run_log_prob)


def rank_groups(names: list[str], per_token: list[float],
                worse: dict[tuple[str, str], bool]) -> list[list[str]]:
    """Best first; a group is the best remaining model and every remaining model that is not
    significantly worse than it (`worse[(a, b)]`: b is significantly worse than a)."""
    order = [n for _, n in sorted(zip(per_token, names, strict=True), key=lambda t: -t[0])]
    groups = []
    while order:
        lead = order[0]
        group = [lead] + [n for n in order[1:] if not worse.get((lead, n), False)]
        groups.append(group)
        order = [n for n in order if n not in group]
    return groups


def _default(fn: Any, name: str) -> Any:
    """The default of `fn`'s parameter `name` (so an estimate follows the function it prices)."""
    return inspect.signature(fn).parameters[name].default


def reference_tokens(reference: Any) -> tuple[float, str]:
    """The reference's number of tokens, or an estimate from a file's size, and how it was got."""
    if isinstance(reference, Corpus):
        return float(reference.num_tokens), f"{reference.num_tokens:,} tokens"
    if is_index(reference):  # a .tlx: its header counts the tokens (its bytes are not text)
        n = read_index(reference).tokens
        return float(n), f"{n:,} tokens (its index header)"
    if isinstance(reference, str | os.PathLike):
        try:
            size = os.path.getsize(reference)
        except OSError:
            return 0.0, "size unknown"
        n = size / BYTES_PER_TOKEN
        return n, f"about {n:,.0f} tokens ({size:,} bytes / {BYTES_PER_TOKEN:g})"
    if isinstance(reference, Sequence):
        n = sum(len(d) for d in reference)
        return float(n), f"{n:,} tokens"
    return 0.0, "size unknown (an iterator)"


# Site updates per token of `compare`'s Ratio-AIS at its defaults: (start + path temperatures) x
# chains x both directions, read from its signature so the estimate follows the function
RATIO_AIS_PER_TOKEN = float((_default(compare, "start_temperatures") + _default(compare, "temperatures"))
                            * _default(compare, "chains") * 2)

PREDICTIVE_SWEEPS = float(_default(predictive, "burn_in") + _default(predictive, "samples"))


def ratio_ais_updates(tokens: float) -> float:
    """Site updates of `compare`'s Ratio-AIS at its defaults (both directions) over `tokens`."""
    return float(tokens) * RATIO_AIS_PER_TOKEN


def estimate_cost(models: Sequence[TopicModel], corpora: Sequence[Corpus], reference: Any,
                  coherence: Sequence[str], method: str, runs: int, params: dict[str, Any],
                  compare_models: str, workers: int) -> dict[str, Any]:
    """Estimated seconds per stage before any work: held-out by the estimator's own cost model,
    Ratio-AIS per pair that will (`"ratio-ais"`) or may (`"auto"`: `ratio_ais_up_to`) run it,
    reference counting per distinct window (coherence) and per model (intrusion), predictive
    sweeps. Every figure assumes the rates in `tealeaves.util.limits` and TEXT_RATE (a reference
    text) or INDEX_RATE (a reference index: its postings, not text)."""
    spec = get_method(method, "heldout")
    resolved = spec.resolve({k: v for k, v in params.items() if k in spec.params}, "heldout")
    held = sum(update_seconds(runs * sum(spec.work(int(n), resolved, m.num_topics) for n in c.lengths),
                              workers,
                              m.num_topics) if isinstance(m, TopicModel) else
               update_seconds(_logistic_normal_updates(m, c, runs, params), 1)
               for m, c in zip(models, corpora, strict=True))
    pred = sum(update_seconds(c.num_tokens * PREDICTIVE_SWEEPS, workers, m.num_topics)
               for m, c in zip(models, corpora, strict=True) if isinstance(m, TopicModel))
    ref, ref_how = reference_tokens(reference) if reference is not None else (0.0, "no reference")
    indexed = reference is not None and is_index(reference)
    w = max(int(workers), 1)
    read = (f"(its postings read at {INDEX_RATE:.0e} per second, one process)" if indexed else
            f"read at {TEXT_RATE:.0e} tokens per second per worker")

    def counting(window: int | None) -> float:
        if indexed:  # one pass over (at most) every posting, one process; the window costs nothing
            return ref / INDEX_RATE
        return ref / (TEXT_RATE * w) + ref * (window or 1) / (OPS_RATE * w)

    windows = {DEFAULT_WINDOWS[m] for m in coherence} if reference is not None else set()
    pairs = [(i, j) for i in range(len(models)) for j in range(i + 1, len(models))
             if _same_words(models[i], models[j])]
    ratio = [update_seconds(ratio_ais_updates(corpora[i].num_tokens), workers, models[i].num_topics)
             for i, _ in pairs]
    seconds = {"loading": 0.0, "held-out": held,
               "comparisons": sum(ratio) if compare_models == "ratio-ais" else 0.0,
               "coherence": sum(counting(win) for win in windows),
               "intrusion": len(models) * counting(_default(auto, "window")) if ref else 0.0,
               "predictive": pred}
    return {"seconds": seconds, "total": sum(seconds.values()),
            "ratio_ais_pairs": len(pairs), "ratio_ais_each": ratio,
            "ratio_ais_up_to": sum(ratio) if compare_models == "auto" else 0.0,
            "how": f"held-out site updates by the {spec.name} cost model and Ratio-AIS at compare's "
                   f"defaults, at about {RATE:.0e} per second per worker; reference {ref_how} {read}; "
                   f"{w} worker(s)"}


def _logistic_normal_updates(m: Topics, c: Corpus, runs: int, params: dict[str, Any]) -> float:
    """The updates `heldout_logistic_normal` checks against its budget (its own cost model)."""
    from .heldout.logistic_normal import heldout_logistic_normal

    temps = params.get("temperatures", _default(heldout_logistic_normal, "temperatures"))
    T, V = m.weights.shape
    if m.decoder == "product-of-experts":
        return float(runs) * temps * len(c) * T * V
    return float(runs) * temps * c.num_tokens * T


def _same_words(a: TopicModel | Topics, b: TopicModel | Topics) -> bool:
    """Ratio-AIS applies: two LDA models with the same number of topics and the same words."""
    if not (isinstance(a, TopicModel) and isinstance(b, TopicModel)):
        return False
    return a.num_topics == b.num_topics and a.num_words == b.num_words and (
        a.vocab is None or b.vocab is None or set(a.vocab) == set(b.vocab))


def _fmt_seconds(s: float) -> str:
    return f"{s:.2g} s" if s < 10 else f"{s:,.0f} s" if s < 3600 else f"{s / 3600:,.1f} h"


def _check_estimate(est: dict[str, Any], n: int, max_hours: float | None, clock: Stages, show: bool) -> None:
    """Show a large estimate on stderr (`show`), and refuse one longer than `max_hours`."""
    parts = ", ".join(f"{k} {_fmt_seconds(v)}" for k, v in est["seconds"].items() if v > 0)
    if est["ratio_ais_up_to"]:
        parts += f"; Ratio-AIS up to {_fmt_seconds(est['ratio_ais_up_to'])} more, only where needed"
    check_cost(f"evaluating {n} model(s)", seconds=est["total"], max_hours=max_hours,
               how=f"{parts}; {est['how']}")  # a refusal is the one line the user sees
    if est["total"] + est["ratio_ais_up_to"] >= LARGE_SECONDS and show:  # also when stderr is a file
        sys.stderr.write(f"{clock.label}: estimated {_fmt_seconds(est['total'])} before any work ({parts})\n")


def _comparisons(loaded: list[TopicModel], corpora: list[Corpus], held: dict[str, HeldoutResult],
                 mode: str, seed: int, workers: int, progress: bool | None, max_hours: float | None,
                 est: dict[str, Any], clock: Stages) -> tuple[list[dict[str, Any]], dict]:
    """Every pair: the difference of the held-out estimates (free), Ratio-AIS where `mode` asks
    for it ("ratio-ais": every pair with the same topics count and words; "auto": those pairs the
    difference does not separate, while the estimate stays within max_hours); each row says
    which method it used and why (`method_reason`)."""
    comparisons, worse = [], {}
    limit = (MAX_HOURS if max_hours is None else max_hours) * 3600
    spent = est["total"]
    eligible = iter(est["ratio_ais_each"])
    for i in range(len(loaded)):
        for j in range(i + 1, len(loaded)):
            a, b = loaded[i], loaded[j]
            same = _same_words(a, b)
            cost = next(eligible) if same else 0.0
            diff = _comparison(a.name, b.name, difference(held[a.name], held[b.name], a.name, b.name, seed))
            lo, hi = diff["per_token_interval"]
            separated = lo > 0 or hi < 0
            shown = f"95% [{lo:+.5f}, {hi:+.5f}]"
            run_ratio = same and (mode == "ratio-ais" or (mode == "auto" and not separated))
            if mode == "auto" and run_ratio and spent + cost > limit:
                run_ratio = False
                reason = (f"the difference did not separate the pair ({shown}); Ratio-AIS (about "
                          f"{_fmt_seconds(cost)}) would take the estimate past max_hours, so it was not run")
            elif not (isinstance(a, TopicModel) and isinstance(b, TopicModel)):
                reason = ("Ratio-AIS runs between two LDA models only; the difference of held-out estimates "
                          "(same tokens) compares these")
            elif not same:
                reason = ("the models differ in their number of topics or their words; Ratio-AIS needs "
                          "both equal")
            elif separated and mode != "ratio-ais":
                reason = f"the difference of held-out estimates separates the pair ({shown})" + (
                    "; Ratio-AIS was not needed" if mode == "auto" else "")
            elif mode == "difference":
                reason = (f"the default (free once the held-out runs exist); it did not separate the pair "
                          f"({shown}): compare_models='auto' (--compare auto) runs Ratio-AIS for such pairs "
                          f"(about {_fmt_seconds(cost)} here)")
            elif mode == "ratio-ais":
                reason = "requested (compare_models='ratio-ais')"
            else:
                reason = f"the difference of held-out estimates did not separate the pair ({shown})"
            if run_ratio:
                spent += cost if mode == "auto" else 0.0
                clock.say(f"  Ratio-AIS {a.name} vs {b.name} (about {_fmt_seconds(cost)})")
                res = compare(a, b, corpora[i], seed=seed, workers=workers, progress=progress,
                              max_hours=max_hours)
                row = _comparison(a.name, b.name, res)
                row["difference"] = {"per_token": diff["per_token"], "per_token_interval": [lo, hi],
                                     "verdict": diff["verdict"]}
            else:
                row = diff
            row["method_reason"] = reason
            comparisons.append(row)
            lo, hi = row["per_token_interval"]
            worse[(a.name, b.name)] = lo > 0
            worse[(b.name, a.name)] = hi < 0
    return comparisons, worse


def evaluate(models: Sequence[TopicModel | str | os.PathLike | Any],
             heldout: Corpus | str | os.PathLike | Iterable[Sequence[str]] | None = None,
             reference: Corpus | str | os.PathLike | Iterable[Sequence[str]] | None = None,
             names: Sequence[str] | None = None, method: str = "left-to-right", runs: int = 2,
             coherence: Sequence[str] = DEFAULT_COHERENCE, topn: int = 10, diversity_topn: int = 25,
             compare_models: str = "difference", seed: int = 0, workers: int = 1,
             progress: bool | None = False, tokenizer: str = "whitespace", encoding: str = "utf-8",
             max_hours: float | None = None, stages: Stages | None = None, diagnostics: bool = False,
             stability: bool = False, absent: str | None = None, embeddings: Any = None,
             embeddings_format: str | None = None, **params: Any) -> EvaluationResult:
    """Evaluate every model on the same held-out documents (`heldout=`; text, token lists or a
    Corpus) and, with `reference` texts, for coherence and automated intrusion. `method`,
    `runs` and `params` go to `tl.heldout` with the same `seed` for every model (so each row
    equals a separate `tl.heldout` call). `compare_models`: "difference" (the difference of the
    held-out estimates for every pair, free), "auto" (and Ratio-AIS for the pairs with the same
    topics count and words that the difference does not separate), "ratio-ais" (Ratio-AIS for
    every such pair), "none". The estimated cost is checked against `max_hours` (default 24)
    before any model is evaluated; `progress` shows the stages on stderr; `stages` is a clock
    already started (the CLI's, which timed reading the models). `diagnostics`: each LDA's per-topic
    diagnostics on the held-out documents (`tl.diagnostics`, theta inferred). `stability`: the models
    with the same K and words form groups of restarts (`tl.stability`); each row gets its
    restart's stability (None outside a group). `absent`: coherence's
    policy for top words the reference lacks (`tl.coherence`; None: the measure's own). Every
    model with top words gets IRBO (`tl.irbo`); `embeddings` (a word-vector file, `Vectors` or a
    mapping; `embeddings_format` as `read_vectors`) adds word-embedding coherence, pairwise and
    centroid, and WE-IRBO-Match, the vectors read before any other work."""
    docs = heldout
    if absent is not None and absent not in ABSENT:
        raise MethodError(f"absent must be one of {', '.join(ABSENT)}, got {absent!r}")
    if absent is not None and reference is None:
        raise MethodError("absent is the policy for top words the reference lacks: give a reference too")
    if compare_models not in COMPARE_MODES:
        raise MethodError(f"compare_models must be one of {', '.join(COMPARE_MODES)}, got {compare_models!r}")
    for m in coherence:
        if m not in DEFAULT_WINDOWS:
            raise MethodError(f"unknown coherence measure {m!r} (known: {', '.join(DEFAULT_WINDOWS)})")
    if not models:
        raise MethodError("no models to evaluate")
    if max_hours is not None:
        max_hours = check_float("max_hours", max_hours, 0, low_open=True)
    clock = stages if stages is not None else Stages(STAGES, enabled=progress)
    with clock.stage("loading", f"{len(models)} model(s) and the held-out documents"):
        every = _load_all(models)
        if names is not None and len(names) != len(every) and len(names) == len(models):
            raise MethodError(f"{len(names)} names for {len(models)} models that hold {len(every)} (a "
                              "model given as several, e.g. every time slice, is named by its reader: leave "
                              "names out)")
        labels = _names(every, names)
        every = [_renamed(m, n) for m, n in zip(every, labels, strict=True)]
        na = {m.name: _not_applicable(m) for m in every}
        vectors = _vectors([m for m in every if "coherence" not in na[m.name]], embeddings, embeddings_format,
                           topn)
        loaded = [m for m in every if _has_likelihood(m)]
        if loaded and docs is None:
            raise MethodError("evaluate needs held-out documents (heldout=...)")
        corpora, scoring = common_tokens(loaded, docs, tokenizer, encoding) if loaded else (
            [], {"rule": "no model has a likelihood: no held-out documents scored"})
        reference = read_once(reference, encoding)  # a pipe: read once for every measure and window
    est = estimate_cost(loaded, corpora, reference, coherence, method, runs, params, compare_models, workers)
    _check_estimate(est, len(loaded), max_hours, clock, show=progress is not False)
    n = len(loaded)
    held: dict[str, HeldoutResult] = {}
    for k, (m, c) in enumerate(zip(loaded, corpora, strict=True), 1):
        with clock.stage("held-out", f"{m.name} ({k}/{n})"):
            held[m.name] = _heldout_one(m, c, method, runs, seed, workers, progress, max_hours, params)
    comparisons, worse = [], {}
    if compare_models != "none" and n > 1:
        with clock.stage("comparisons", f"{n * (n - 1) // 2} pair(s), {compare_models}"):
            comparisons, worse = _comparisons(loaded, corpora, held, compare_models, seed, workers, progress,
                                              max_hours, est, clock)
    counts, fingerprints = {}, {}
    worded = [m for m in every if "coherence" not in na[m.name]]
    coh: dict[str, dict[str, float]] = {m.name: {} for m in every}
    per_topic = {m.name: {"words": _top_words(m, topn), "coherence": {}} for m in worded}  # the report's
    if reference is not None and coherence and worded:
        with clock.stage("coherence", "counting the reference"):
            groups = [t for m in worded for t in topic_words(m, topn)]
            targets = sorted({w for t in groups for w in t})
            for win in {DEFAULT_WINDOWS[ms] for ms in coherence}:
                counts[win] = count(reference, targets, window=win, workers=workers, encoding=encoding,
                                    groups=groups)
            for m in worded:
                res = {ms: coherence_of(m, reference, measure=ms, topn=topn, absent=absent,
                                        counts=counts[DEFAULT_WINDOWS[ms]]) for ms in coherence}
                coh[m.name] = {ms: r.mean for ms, r in res.items()}
                per_topic[m.name]["coherence"] = {ms: r.per_topic.tolist() for ms, r in res.items()}
                fingerprints = {ms: r.fingerprint for ms, r in res.items()}
    autos: dict[str, tuple[dict[str, Any] | None, str | None]] = {m.name: (None, None) for m in every}
    if reference is not None:
        for k, m in enumerate(worded, 1):
            with clock.stage("intrusion", f"{m.name} ({k}/{len(worded)})"):
                autos[m.name] = _auto(m, reference, seed, workers, encoding)
    preds = {}
    ldas = [(m, c) for m, c in zip(loaded, corpora, strict=True) if isinstance(m, TopicModel)]
    for k, (m, c) in enumerate(ldas, 1):
        with clock.stage("predictive", f"{m.name} ({k}/{len(ldas)})"):
            preds[m.name] = predictive(m, c, seed=seed, workers=workers, progress=False)
    rows = [_row(m, held.get(m.name), preds.get(m.name), coh[m.name], autos[m.name], na[m.name],
                 diversity_topn) for m in every]
    if reference is None:  # measures that need one: the reason, in the row and under the table
        for r, m in zip(rows, every, strict=True):
            if m in worded:
                r["not_computed"] = {"coherence": NO_REFERENCE, "auto MP": NO_REFERENCE}
    for r, m in zip(rows, every, strict=True):
        r.update(_word_measures(m, vectors, topn, r))
    groups: list[list[str]] | None = rank_groups([r["model"] for r in rows if r["model"] in held],
                                                 [r["per_token"] for r in rows if r["model"] in held], worse)
    groups_note = None
    if compare_models == "none" and n > 1:
        order = ", ".join(n for g in groups or [] for n in g)  # one group, by point estimate
        groups, groups_note = None, (f"not compared (compare_models='none', CLI --compare none), so no model "
                                     f"is shown better or tied; by point estimate alone: {order}")
    params_out = {"method": method, "runs": runs,
                  "heldout_params": held[loaded[0].name].params if loaded else None,
                  "coherence": list(coherence), "topn": topn, "diversity_topn": diversity_topn,
                  "compare_models": compare_models, "seed": seed, "reference": _describe(reference),
                  "coherence_fingerprint": fingerprints, "absent": absent,
                  "embeddings": vectors.info if vectors is not None else None,
                  "max_hours": max_hours}
    timing = clock.to_dict()
    estimate = {"stages": est["seconds"], "total": est["total"], "ratio_ais_up_to": est["ratio_ais_up_to"],
                "how": est["how"]}
    # --- per-topic diagnostics (issue 26): one call, on request ---
    diag = {}
    if diagnostics:
        from .diagnostics import of_models
        diag = of_models(loaded, corpora, seed=seed, workers=workers)
    # --- stability across restarts (issue 26): one call, on request ---
    stab = None
    if stability:
        from .diagnostics.stability import stability_groups
        stab = stability_groups(every, skip_inapplicable=True)
        per = {m: v for g in stab for m, v in g.per_model.items()}
        for r in rows:
            r["stability"] = per.get(r["model"])
    return EvaluationResult(rows, comparisons, groups, scoring, params_out, timing["total"]["wall"],
                            timing, estimate, held, diag, stab, per_topic, groups_note)


def _load_all(models: Sequence[Any]) -> list[TopicModel | Topics]:
    """Every model: an LDA as its TopicModel, any other kind as Topics; a list (every time slice of a
    model) becomes its models."""
    out: list[TopicModel | Topics] = []
    for m in models:
        got = m if isinstance(m, TopicModel | Topics) else load_topics(m)
        for one in got if isinstance(got, list) else [got]:
            out.append(one.lda if isinstance(one, Topics) and one.lda is not None else one)
    return out


def _has_likelihood(m: TopicModel | Topics) -> bool:
    """An LDA, or a generative model with a logistic-normal prior (scored by ais over eta)."""
    return isinstance(m, TopicModel) or (m.lda is None and m.prior == "logistic-normal"
                                         and why_not("heldout", m) is None)


def _heldout_one(m: TopicModel | Topics, c: Corpus, method: str, runs: int, seed: int, workers: int,
                 progress: bool | None, max_hours: float | None, params: dict[str, Any]) -> HeldoutResult:
    """`tl.heldout` for one model: LDA by `method` and `params`; a logistic-normal prior by its own
    estimator, ais over eta, given only the parameters it takes (temperatures, schedule)."""
    if isinstance(m, TopicModel):
        return estimate_heldout(m, c, method=method, runs=runs, seed=seed, workers=workers,
                                progress=progress, max_hours=max_hours, **params)
    own = {k: v for k, v in params.items() if k in ("temperatures", "schedule")}
    return estimate_heldout(m, c, method="ais", runs=runs, seed=seed, max_hours=max_hours, **own)


def _renamed(m: TopicModel | Topics, name: str) -> TopicModel | Topics:
    import dataclasses

    return m.with_params(name=name) if isinstance(m, TopicModel) else dataclasses.replace(m, name=name)


def _not_applicable(m: TopicModel | Topics) -> dict[str, str]:
    """metric -> why it does not apply to `m` (nothing for an LDA with words)."""
    out = {}
    for metric in dict.fromkeys(ROW_METRICS.values()):
        reason = why_not(metric, m) if isinstance(m, Topics) else None
        if reason is None and isinstance(m, Topics) and (metric == "predictive" or (
                metric == "heldout" and not _has_likelihood(m))):
            try:
                as_lda(metric, m)
            except NotApplicableError as exc:
                reason = str(exc).split(": ", 1)[1]
        if reason is None and isinstance(m, TopicModel) and metric in ("coherence", "diversity", "auto MP") \
                and m.vocab is None:
            reason = f"{m.name}: no vocabulary: no top words"
        if reason is not None:
            out[metric] = reason
    return out


def _row(m: TopicModel | Topics, h: HeldoutResult | None, pred: Any, coh: dict[str, float],
         auto_result: tuple[dict[str, Any] | None, str | None], na: dict[str, str],
         diversity_topn: int) -> dict[str, Any]:
    """One model's row: every metric that applies, None for the others (reasons in `not_applicable`)."""
    auto_mp, auto_note = auto_result
    words = m.num_words if isinstance(m, TopicModel) else (
        len(m.vocab) if m.vocab is not None else None)
    row = {
        "model": m.name, "kind": "LDA" if isinstance(m, TopicModel) else m.source, "topics": m.num_topics,
        "words": words, "heldout": h.label if h else None, "per_token": h.per_token if h else None,
        "per_token_sd": (h.sd / h.tokens if h.tokens else math.nan) if h else None,
        "perplexity": h.perplexity if h else None, "total": h.total if h else None,
        "tokens": h.tokens if h else None, "coherence": coh,
        "diversity": diversity(m, diversity_topn) if "diversity" not in na else None,
        "exclusivity": float(exclusivity(m).mean()) if "exclusivity" not in na else None,
        "predictive_rank": pred.rank if pred else None,
        "predictive_log_likelihood": pred.log_likelihood if pred else None,
        "auto_model_precision": auto_mp["model_precision"] if auto_mp else math.nan,
        "auto_model_precision_ci": auto_mp["model_precision_ci"] if auto_mp else None,
        **({"auto_note": auto_note} if auto_note else {}),
    }
    if isinstance(m, TopicModel) and m.vocab is None:
        row["diversity"] = math.nan
    if h is not None and not isinstance(m, TopicModel):
        row["heldout_note"] = (f"its own estimator, {h.method} over eta by elliptical slice sampling "
                               f"({h.params.get('temperatures')} temperatures; a {m.prior} prior, "
                               f"{m.decoder} decoder), not the LDA models' method")
    if na:
        row["not_applicable"] = dict(na)
    return row


def _auto(m: TopicModel | Topics, reference: Any, seed: int, workers: int,
          encoding: str) -> tuple[dict[str, Any] | None, str | None]:
    """Automated word intrusion for one model, and the note of any fallback it took."""
    try:
        a = auto(m, reference, seed=seed, workers=workers, relax=True, encoding=encoding)
    except MethodError as exc:  # e.g. no word qualifies as an intruder in a tiny model
        return None, f"not computed: {exc}"
    relaxed = sum(1 for k in a.items if k.get("relaxed"))
    note = (f"{relaxed} of {m.num_topics} topic(s) had no intruder in the bottom half of their used words; "
            "the least probable of the other topics' top words was used") if relaxed else None
    return a.summary[m.name], note


def _vectors(worded: list[TopicModel | Topics], embeddings: Any, format: str | None, topn: int) -> Any:
    """The word vectors of every top word of the models with words, read once (None: none asked)."""
    if embeddings is None:
        return None
    from .coherence.embeddings import _vectors_for

    return _vectors_for(embeddings, [t for m in worded for t in topic_words(m, topn)], format)


def _word_measures(m: TopicModel | Topics, vectors: Any, topn: int, row: dict[str, Any]) -> dict[str, Any]:
    """IRBO (None where the model has no top words), and with `vectors` word-embedding coherence
    (pairwise, centroid) and WE-IRBO-Match; a measure the model cannot have is None, its reason
    added to the row's `not_applicable`."""
    from .coherence.embeddings import embedding_coherence, we_irbo
    from .coherence.rbo import irbo

    keys = ["irbo"] + (["we_pairwise", "we_centroid", "we_irbo"] if vectors is not None else [])
    out: dict[str, Any] = dict.fromkeys(keys + (["we_missing_words"] if vectors is not None else []))
    if "coherence" in row.get("not_applicable", {}):
        return out
    calls = {"irbo": lambda: irbo(m, topn), "we_irbo": lambda: we_irbo(m, vectors, topn).score,
             "we_pairwise": lambda: embedding_coherence(m, vectors, "pairwise", topn),
             "we_centroid": lambda: embedding_coherence(m, vectors, "centroid", topn)}
    for k in keys:
        try:
            got = calls[k]()
        except MethodError as exc:
            row.setdefault("not_applicable", {})[k] = str(exc)
            continue
        if k in ("we_pairwise", "we_centroid"):
            out["we_missing_words"] = sum(map(len, got.missing))
            got = got.score
        out[k] = got
    return out


def _describe(source: Any) -> str | None:
    if source is None:
        return None
    if isinstance(source, str | os.PathLike):
        return os.fspath(source)
    return getattr(source, "source", "<memory>")


__all__ = ["evaluate", "EvaluationResult", "common_tokens", "rank_groups", "difference", "estimate_cost",
           "COMPARE_MODES", "STAGES"]
