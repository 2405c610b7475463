"""One model's row of the table: every metric that applies to it, None with the reason for the
others; the models loaded and named."""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..coherence import coherence as coherence_of
from ..coherence import count, counting, diversity, exclusivity, topic_words
from ..corpus import Corpus
from ..datasets import load_topics
from ..errors import MethodError, TealeavesError
from ..heldout import HeldoutResult
from ..heldout import heldout as estimate_heldout
from ..intrusion import auto
from ..model import TopicModel
from ..topics import NotApplicableError, Topics, as_lda, why_not
from .options import EvaluateOptions
from .result import ROW_METRICS


def top_words_or_none(m: TopicModel | Topics, topn: int) -> list[list[str]] | None:
    """Each topic's top `topn` words for the report's per-topic table (None if it has none)."""
    try:
        return topic_words(m, topn)
    except MethodError:
        return None


def unique_names(models: Sequence[TopicModel | Topics | Unreadable],
                 names: Sequence[str] | None) -> list[str]:
    if names is not None and len(names) != len(models):
        raise MethodError(f"{len(names)} names for {len(models)} models")
    out = list(names) if names is not None else [m.name for m in models]
    seen: dict[str, int] = {}
    unique = []
    for n in out:
        seen[n] = seen.get(n, 0) + 1
        unique.append(n if seen[n] == 1 else f"{n} #{seen[n]}")
    return unique


@dataclass(frozen=True)
class Unreadable:
    """A model `evaluate` could not read: its row says why (`unreadable`), every metric "—"; the
    others are evaluated (unless none could be read)."""

    name: str
    reason: str


def load_all(models: Sequence[Any]) -> list[TopicModel | Topics | Unreadable]:
    """Every model: an LDA as its TopicModel, any other kind as Topics; a list (every time slice of a
    model) becomes its models; a file that cannot be read, `Unreadable` with the reason."""
    out: list[TopicModel | Topics | Unreadable] = []
    for m in models:
        try:
            got = m if isinstance(m, TopicModel | Topics | Unreadable) else load_topics(m)
        except TealeavesError as exc:
            got = Unreadable(os.path.basename(os.fspath(m)) if isinstance(m, str | os.PathLike) else str(m),
                             str(exc))
        for one in got if isinstance(got, list) else [got]:
            out.append(one.lda if isinstance(one, Topics) and one.lda is not None else one)
    return out


def unreadable_row(m: Unreadable) -> dict[str, Any]:
    """The row of a model that could not be read: every value None, the reason in `unreadable`."""
    return {"model": m.name, "kind": None, "topics": None, "words": None, "heldout": None, "per_token": None,
            "per_token_sd": None, "perplexity": None, "total": None, "tokens": None, "coherence": {},
            "diversity": None, "exclusivity": None, "predictive_rank": None,
            "predictive_log_likelihood": None,
            "auto_model_precision": None, "auto_model_precision_ci": None, "unreadable": m.reason}


def has_likelihood(m: TopicModel | Topics) -> bool:
    """An LDA, or a generative model with a logistic-normal prior (scored by ais over eta)."""
    return isinstance(m, TopicModel) or (m.lda is None and m.prior == "logistic-normal"
                                         and why_not("heldout", m) is None)


def model_digest(m: TopicModel | Topics) -> str:
    """`sha256:...` of what a model's numbers depend on (`files.kept.digest`)."""
    from ..files.kept import digest

    return digest(*((m.phi_wt, m.alpha, m.vocab) if isinstance(m, TopicModel) else
                    (m.weights, m.mean, m.cov, m.decoder, m.vocab)))


def open_kept(options: EvaluateOptions, models: Sequence[TopicModel | Topics],
              corpora: Sequence[Corpus]) -> None:
    """Check, before any work, that `options.keep` (when given) is this evaluation's folder of kept
    work, or a new one: the same models in order, held-out tokens and settings (`files.kept`); each
    stage's subfolder (`kept_folder`) is checked again when opened."""
    if options.keep is None:
        return
    from ..files.kept import Kept, digest

    o = options
    Kept(o.keep, "evaluate", {"models": [model_digest(m) for m in models],
                              "documents": [digest(c.words, c.offsets) for c in corpora],
                              "method": o.method, "runs": o.runs, "params": dict(o.heldout_params),
                              "compare_models": o.compare_models, "seed": o.seed}, len(models), "model")


def kept_folder(options: EvaluateOptions, stage: str, *models: TopicModel | Topics) -> str | None:
    """The subfolder of `options.keep` that keeps `stage` of `models` (None without `keep`): named
    by the models' contents, so a model given twice, or renamed, finds its work."""
    if options.keep is None:
        return None
    return os.path.join(options.keep, "-".join([stage, *(model_digest(m)[7:23] for m in models)]))


def heldout_one(m: TopicModel | Topics, c: Corpus, options: EvaluateOptions,
                progress: bool | None) -> HeldoutResult:
    """`tl.heldout` for one model: LDA by `method` and `params`; a logistic-normal prior by its own
    estimator, ais over eta, given only the parameters it takes (temperatures, schedule). With
    `options.keep`, its finished documents are kept in a subfolder (`kept_folder`)."""
    o = options
    keep = kept_folder(o, "heldout", m)
    if isinstance(m, TopicModel):
        return estimate_heldout(m, c, method=o.method, runs=o.runs, seed=o.seed, workers=o.workers,
                                progress=progress, max_hours=o.max_hours, keep=keep, **o.heldout_params)
    own = {k: v for k, v in o.heldout_params.items() if k in ("temperatures", "schedule")}
    return estimate_heldout(m, c, method="ais", runs=o.runs, seed=o.seed, max_hours=o.max_hours, keep=keep,
                            **own)


def renamed(m: TopicModel | Topics | Unreadable, name: str) -> TopicModel | Topics | Unreadable:
    return m.with_params(name=name) if isinstance(m, TopicModel) else dataclasses.replace(m, name=name)


def not_applicable(m: TopicModel | Topics) -> dict[str, str]:
    """metric -> why it does not apply to `m` (nothing for an LDA with words)."""
    out = {}
    for metric in dict.fromkeys(ROW_METRICS.values()):
        reason = why_not(metric, m) if isinstance(m, Topics) else None
        if reason is None and isinstance(m, Topics) and (metric == "predictive" or (
                metric == "heldout" and not has_likelihood(m))):
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


def model_row(m: TopicModel | Topics, h: HeldoutResult | None, pred: Any, coh: dict[str, float],
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
                               f"({_budget(h)}; a {m.prior} prior, "
                               f"{m.decoder} decoder), not the LDA models' method")
    if na:
        row["not_applicable"] = dict(na)
    return row


def topic_coherence(models: Sequence[TopicModel | Topics], reference: Any, measures: Sequence[str],
                    topn: int, absent: str | None, workers: int, encoding: str) -> tuple[
                        dict[str, dict[str, float]], dict[str, dict[str, list[float]]], dict[str, Any],
                        dict[str, Any]]:
    """Each model's coherence by every measure over `reference` (the default convention), counted
    once per window and counting rule for all the models' top words: the means, the per-topic
    values, the fingerprints, and with NPMI each topic's coherence flags (`flags.coherence_flags`;
    None: the reference is too small for them)."""
    from ..diagnostics.flags import coherence_flags

    groups = [t for m in models for t in topic_words(m, topn)]
    targets = sorted({w for t in groups for w in t})
    counts = {(win, rule): count(reference, targets, window=win, workers=workers, encoding=encoding,
                                 rule=rule, groups=groups)
              for win, rule in {counting(ms) for ms in measures}}
    means, per_topic, fingerprints, flags = {}, {}, {}, {}
    for m in models:
        res = {ms: coherence_of(m, reference, measure=ms, topn=topn, absent=absent,
                                counts=counts[counting(ms)]) for ms in measures}
        means[m.name] = {ms: r.mean for ms, r in res.items()}
        per_topic[m.name] = {ms: r.per_topic.tolist() for ms, r in res.items()}
        fingerprints = {ms: r.fingerprint for ms, r in res.items()}
        if "npmi" in res:
            flags[m.name] = coherence_flags(res["npmi"])
    return means, per_topic, fingerprints, flags


def study_scores(models: Mapping[str, Any], study: Any, reference: Any, measures: Sequence[str],
                 topn: int = 10, absent: str | None = None, workers: int = 1, encoding: str = "utf-8"
                 ) -> tuple[dict[str, np.ndarray], list[str]]:
    """tealeaves' coherence (each of `measures` over `reference`) and exclusivity of the very topics
    a study judged, from the models that made them (name -> model; matched as `human.match_models`): one
    value per study topic, and the notes of the matching."""
    from .human import DEPTH, align, match_models

    named = {n: renamed(m, n) for n, m in models.items()}
    words = {n: topic_words(m, DEPTH) for n, m in named.items()}
    matched, notes = match_models(study.topics, words)
    used = [named[n] for n in dict.fromkeys(matched.values())]
    out: dict[str, np.ndarray] = {}
    if measures:
        _, values, _, _ = topic_coherence(used, reference, measures, topn, absent, workers, encoding)
        out = {ms: align({n: v[ms] for n, v in values.items()}, study.topics, matched) for ms in measures}
    excl = {m.name: exclusivity(m).tolist() for m in used if why_not("exclusivity", m) is None}
    if excl:
        out["exclusivity"] = align(excl, study.topics, matched)
    return out, notes


def auto_intrusion(m: TopicModel | Topics, reference: Any, seed: int, workers: int,
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


def vectors_for(worded: list[TopicModel | Topics], embeddings: Any, format: str | None, topn: int) -> Any:
    """The word vectors of every top word of the models with words, read once (None: none asked)."""
    if embeddings is None:
        return None
    from ..coherence.embeddings import _vectors_for

    return _vectors_for(embeddings, [t for m in worded for t in topic_words(m, topn)], format)


def word_measures(m: TopicModel | Topics, vectors: Any, topn: int, row: dict[str, Any]) -> dict[str, Any]:
    """IRBO (None where the model has no top words), and with `vectors` word-embedding coherence
    (pairwise, centroid) and WE-IRBO-Match; a measure the model cannot have is None, its reason
    added to the row's `not_applicable`."""
    from ..coherence.embeddings import embedding_coherence, we_irbo
    from ..coherence.rbo import irbo

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


def describe(source: Any) -> str | None:
    if source is None:
        return None
    if isinstance(source, str | os.PathLike):
        return os.fspath(source)
    return getattr(source, "source", "<memory>")


def _budget(h) -> str:
    """The logistic-normal estimate's temperatures: fixed, or the adaptive budget's range and chains."""
    a = h.extra.get("adaptive")
    if a is None:
        return f"{h.params.get('temperatures')} temperatures"
    b = a["budgets"]
    return (f"{a['chains']} chains, {min(b)} to {max(b)} temperatures per document, set by their agreement"
            if b else f"{a['chains']} chains, adaptive temperatures")
