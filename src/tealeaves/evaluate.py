"""Many models, one table (`tl.evaluate`, `tealeaves evaluate`): for every model the held-out
log-likelihood per token with its run-to-run sd and the perplexity (the default estimator unless
told otherwise), coherence (NPMI and UMass by default) over a reference corpus, diversity,
exclusivity, predictive rank and automated word-intrusion model precision; every pair of models
compared with a 95% interval (Ratio-AIS between models with the same topics and words, the
difference of their held-out estimates otherwise); and a ranking that groups models the evidence
cannot separate.

Models with different vocabularies are scored on the same tokens: a held-out token counts only if
every model's vocabulary has its word; the others are dropped for all models and counted (the
`scoring` block says how many, and how many words of each model's vocabulary the held-out text
never reaches). Perplexities are then comparable: every model predicts the same token sequence
with its own full distribution over words."""

from __future__ import annotations

import math
import os
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .coherence import DEFAULT_WINDOWS, count, diversity, exclusivity, topic_words
from .coherence import coherence as coherence_of
from .compare import CompareResult, compare
from .corpus import Corpus, read_corpus
from .errors import InvalidCorpusError, MethodError
from .heldout import HeldoutResult, check_vocab_fits
from .heldout import heldout as estimate_heldout
from .intrusion import auto, predictive
from .io import load_model
from .jsonout import json_safe
from .model import TopicModel

DEFAULT_COHERENCE = ("npmi", "umass")
COMPARE_MODES = ("auto", "difference", "none")


@dataclass
class EvaluationResult:
    """One row per model (`rows`), pairwise `comparisons`, ranking `groups` (best first; the
    models within a group are not separated by the evidence), the token `scoring` rule."""

    rows: list[dict[str, Any]]
    comparisons: list[dict[str, Any]]
    groups: list[list[str]]
    scoring: dict[str, Any]
    params: dict[str, Any]
    seconds: float
    heldout: dict[str, HeldoutResult] = field(default_factory=dict, repr=False)

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
        head = ["model", "K", "log-lik/token", "± sd", "perplexity", *measures, "diversity",
                "exclusivity", "pred. rank", "auto MP"]
        rows = []
        for r in self.rows:
            rows.append([r["model"], str(r["topics"]), _f(r["per_token"], 4), _f(r["per_token_sd"], 4),
                         _f(r["perplexity"], 1), *[_f(r["coherence"].get(m), 3) for m in measures],
                         _f(r["diversity"], 3), _f(r["exclusivity"], 2), _f(r["predictive_rank"], 1),
                         _f(r["auto_model_precision"], 2) + ("*" if r.get("auto_note") else "")])
        widths = [max(len(x) for x in col) for col in zip(head, *rows, strict=True)]
        lines = ["  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in
                           enumerate(zip(cells, widths, strict=True))) for cells in [head, *rows]]
        lines.insert(1, "  ".join("-" * w for w in widths))
        return "\n".join(lines)

    def notes(self) -> list[str]:
        """Every fallback a row took, one line each (marked * in the table)."""
        return [f"* {r['model']}: automated intrusion: {r['auto_note']}"
                for r in self.rows if r.get("auto_note")]

    def summary(self) -> str:
        """The ranking and the comparisons, in words, then the notes."""
        lines = []
        for i, g in enumerate(self.groups, 1):
            tie = " (not separated by the evidence)" if len(g) > 1 else ""
            lines.append(f"rank {i}: {', '.join(g)}{tie}")
        for c in self.comparisons:
            lo, hi = c["per_token_interval"]
            lines.append(f"{c['a']} vs {c['b']} ({c['method']}): {c['per_token']:+.5f} nats per token, "
                         f"95% [{lo:+.5f}, {hi:+.5f}] about {c['per_token_interval_about']}: {c['verdict']}")
            if c.get("warning"):
                lines.append(f"  WARNING: {c['warning']}")
        return "\n".join(lines + self.notes())

    def to_dict(self) -> dict[str, Any]:
        return json_safe({"task": "evaluate", "rows": self.rows, "comparisons": self.comparisons,
                          "groups": self.groups, "scoring": self.scoring, "params": self.params,
                          "seconds": self.seconds})

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
        return pd.DataFrame(flat).set_index("model")

    def __repr__(self) -> str:
        best = ", ".join(self.best) or "-"
        return f"EvaluationResult({len(self.rows)} models; best: {best})"

    def _repr_html_(self) -> str:
        from html import escape

        return f"<pre>{escape(self.table())}\n\n{escape(self.summary())}</pre>"


def _f(v: Any, digits: int) -> str:
    return "-" if v is None or (isinstance(v, float) and not math.isfinite(v)) else f"{v:.{digits}f}"


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


def common_tokens(models: Sequence[TopicModel], docs: Any, tokenizer: str = "whitespace",
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
        index = m.word_index()
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


def evaluate(models: Sequence[TopicModel | str | os.PathLike | Any],
             heldout: Corpus | str | os.PathLike | Iterable[Sequence[str]] | None = None,
             reference: Corpus | str | os.PathLike | Iterable[Sequence[str]] | None = None,
             names: Sequence[str] | None = None, method: str = "left-to-right", runs: int = 2,
             coherence: Sequence[str] = DEFAULT_COHERENCE, topn: int = 10, diversity_topn: int = 25,
             compare_models: str = "auto", seed: int = 0, workers: int = 1,
             progress: bool | None = False, tokenizer: str = "whitespace", encoding: str = "utf-8",
             **params: Any) -> EvaluationResult:
    """Evaluate every model on the same held-out documents (`heldout=`; text, token lists or a
    Corpus) and, with `reference` texts, for coherence and automated intrusion. `method`,
    `runs` and `params` go to `tl.heldout` with the same `seed` for every model (so each row
    equals a separate `tl.heldout` call); `compare_models`: "auto" (Ratio-AIS where two models
    share topics count and words, else the difference of estimates), "difference", "none"."""
    docs = heldout
    if docs is None:
        raise MethodError("evaluate needs held-out documents (heldout=...)")
    if compare_models not in COMPARE_MODES:
        raise MethodError(f"compare_models must be one of {', '.join(COMPARE_MODES)}, got {compare_models!r}")
    for m in coherence:
        if m not in DEFAULT_WINDOWS:
            raise MethodError(f"unknown coherence measure {m!r} (known: {', '.join(DEFAULT_WINDOWS)})")
    if not models:
        raise MethodError("no models to evaluate")
    t0 = time.perf_counter()
    loaded = [m if isinstance(m, TopicModel) else load_model(m) for m in models]
    labels = _names(loaded, names)
    loaded = [m.with_params(name=n) for m, n in zip(loaded, labels, strict=True)]
    corpora, scoring = common_tokens(loaded, docs, tokenizer, encoding)
    held: dict[str, HeldoutResult] = {}
    for m, c in zip(loaded, corpora, strict=True):
        held[m.name] = estimate_heldout(m, c, method=method, runs=runs, seed=seed, workers=workers,
                               progress=progress, **params)
    counts = {}
    if reference is not None and coherence:
        targets = sorted({w for m in loaded for t in topic_words(m, topn) for w in t})
        for win in {DEFAULT_WINDOWS[ms] for ms in coherence}:
            counts[win] = count(reference, targets, window=win, workers=workers, encoding=encoding)
    rows = []
    for m, c in zip(loaded, corpora, strict=True):
        h = held[m.name]
        coh = {ms: coherence_of(m, reference, measure=ms, topn=topn, counts=counts[DEFAULT_WINDOWS[ms]]).mean
               for ms in coherence} if counts else {}
        auto_mp, auto_note = None, None
        if reference is not None:
            try:
                a = auto(m, reference, seed=seed, workers=workers, relax=True, encoding=encoding)
                auto_mp = a.summary[m.name]
                relaxed = sum(1 for k in a.items if k.get("relaxed"))
                if relaxed:
                    auto_note = (f"{relaxed} of {m.num_topics} topic(s) had no intruder in the bottom half "
                                 "of their used words; the least probable of the other topics' top words "
                                 "was used")
            except MethodError as exc:  # e.g. no word qualifies as an intruder in a tiny model
                auto_note = f"not computed: {exc}"
        pred = predictive(m, c, seed=seed, workers=workers, progress=False)
        rows.append({
            "model": m.name, "topics": m.num_topics, "words": m.num_words,
            "heldout": h.label, "per_token": h.per_token,
            "per_token_sd": h.sd / h.tokens if h.tokens else math.nan,
            "perplexity": h.perplexity, "total": h.total, "tokens": h.tokens,
            "coherence": coh, "diversity": diversity(m, diversity_topn) if m.vocab else math.nan,
            "exclusivity": float(exclusivity(m).mean()),
            "predictive_rank": pred.rank, "predictive_log_likelihood": pred.log_likelihood,
            "auto_model_precision": auto_mp["model_precision"] if auto_mp else math.nan,
            "auto_model_precision_ci": auto_mp["model_precision_ci"] if auto_mp else None,
            **({"auto_note": auto_note} if auto_note else {}),
        })
    comparisons, worse = [], {}
    if compare_models != "none":
        for i in range(len(loaded)):
            for j in range(i + 1, len(loaded)):
                a, b = loaded[i], loaded[j]
                same = a.num_topics == b.num_topics and (a.vocab is None or set(a.vocab) == set(b.vocab))
                if compare_models == "auto" and same:
                    res = compare(a, b, corpora[i], seed=seed, workers=workers, progress=progress)
                else:
                    res = difference(held[a.name], held[b.name], a.name, b.name, seed)
                row = _comparison(a.name, b.name, res)
                comparisons.append(row)
                lo, hi = row["per_token_interval"]
                worse[(a.name, b.name)] = lo > 0
                worse[(b.name, a.name)] = hi < 0
    groups = rank_groups([r["model"] for r in rows], [r["per_token"] for r in rows], worse)
    params_out = {"method": method, "runs": runs, "heldout_params": held[loaded[0].name].params,
                  "coherence": list(coherence), "topn": topn, "diversity_topn": diversity_topn,
                  "compare_models": compare_models, "seed": seed, "reference": _describe(reference)}
    return EvaluationResult(rows, comparisons, groups, scoring, params_out, time.perf_counter() - t0, held)


def _describe(source: Any) -> str | None:
    if source is None:
        return None
    if isinstance(source, str | os.PathLike):
        return os.fspath(source)
    return getattr(source, "source", "<memory>")


__all__ = ["evaluate", "EvaluationResult", "common_tokens", "rank_groups", "difference"]
