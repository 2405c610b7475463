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
A model file that cannot be read gets its row too (`rows.Unreadable`: every value "—", the
reason), and the others are evaluated; when none can be read, that is the error. With
`options.keep`, every model's finished documents are kept as they finish (`files.kept`), so an
interrupted evaluation resumes with the same numbers.

Models with different vocabularies are scored on the same tokens: a held-out token counts only if
every model's vocabulary has its word; the others are dropped for all models and counted (the
`scoring` block says how many, and how many words of each model's vocabulary the held-out text
never reaches). Perplexities are then comparable: every model predicts the same token sequence
with its own full distribution over words."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import Any

from ..coherence.counts import read_once
from ..corpus import Corpus
from ..errors import Interrupted, MethodError, shown
from ..heldout import HeldoutResult
from ..intrusion import predictive
from ..model import TopicModel
from ..topics import why_not
from ..util.numbers import finite_float
from ..util.stages import Stages
from . import cost, pairs
from .cost import estimate_cost, reference_tokens
from .options import COMPARE_MODES, DEFAULT_COHERENCE, EvaluateOptions
from .pairs import difference, rank_groups
from .result import EMBEDDING_COLUMNS, EvaluationResult
from .rows import (
    Unreadable,
    auto_intrusion,
    describe,
    has_likelihood,
    heldout_one,
    kept_folder,
    load_all,
    model_row,
    not_applicable,
    open_kept,
    renamed,
    top_words_or_none,
    topic_coherence,
    unique_names,
    unreadable_row,
    vectors_for,
    word_measures,
)
from .tokens import common_tokens

STAGES = ("loading", "held-out", "comparisons", "coherence", "intrusion", "judge", "predictive", "people")
NO_REFERENCE = "not computed: no reference (reference=..., CLI --reference) to count words in"
NO_PROPORTIONS = ("{name} gives no proportions for the held-out documents and is not an LDA to infer them "
                  "from (diagnostics are of the held-out documents)")


def _interrupted(exc: KeyboardInterrupt, opts: EvaluateOptions, held: int, n: int,
                 more: str = "") -> KeyboardInterrupt:
    """Ctrl-C with `opts.keep`, in any stage: what the folder holds, in one message (a stage that
    keeps nothing itself, coherence, intrusion or the judge, still has the held-out estimates kept
    before it); without `keep`, `exc`, saying only where the judge's answers are, if it has a cache."""
    judged = ""
    if opts.judge is not None and str(opts.judge.cache) != ":memory:":
        from ..judge.judge import default_cache

        judged = f"the judge's answers so far are in its cache, {opts.judge.cache or default_cache()}"
    if opts.keep is None:  # the judge's cache keeps its answers all the same
        return KeyboardInterrupt(judged) if judged else exc
    inner = f"; {exc}" if isinstance(exc, Interrupted) and str(exc) else ""
    inner += f"; {judged}" if judged else ""
    return Interrupted(f"the held-out estimates of {held} of {n} models finished{more}, in "
                       f"{opts.keep}{inner}", opts.keep)


def evaluate(models: Sequence[TopicModel | str | os.PathLike | Any],
             heldout: Corpus | str | os.PathLike | Iterable[Sequence[str]] | None = None,
             reference: Corpus | str | os.PathLike | Iterable[Sequence[str]] | None = None,
             names: Sequence[str] | None = None, options: EvaluateOptions | None = None, *,
             progress: bool | None = False, stages: Stages | None = None,
             **settings: Any) -> EvaluationResult:
    """Evaluate every model on the same held-out documents (`heldout=`; text, token lists or a
    Corpus) and, with `reference` texts, for coherence and automated intrusion, as `options` say
    (`EvaluateOptions`; keyword `settings` are shorthand for its fields, and any other keyword is an
    estimator parameter: `evaluate(models, heldout=h, runs=3, particles=50)`). The estimated cost
    is checked against `options.max_hours` before any model is evaluated; `progress` shows the
    stages on stderr; `stages` is a clock already started (the CLI's, which timed reading the
    models). Every model with top words gets IRBO (`tl.irbo`); with `options.embeddings` the vectors
    are read before any other work."""
    opts = EvaluateOptions.of(options, **settings)
    docs = heldout
    if opts.absent is not None and reference is None:
        raise MethodError("absent is the policy for top words the reference lacks: give a reference too")
    if not models:
        raise MethodError("no models to evaluate")
    clock = stages if stages is not None else Stages(STAGES, enabled=progress)
    with clock.stage("loading", f"{len(models)} model(s) and the held-out documents"):
        everything = load_all(models)
        if names is not None and len(names) != len(everything) and len(names) == len(models):
            raise MethodError(f"{len(names)} names for {len(models)} models that hold {len(everything)} (a "
                              "model given as several, e.g. every time slice, is named by its reader: leave "
                              "names out)")
        labels = unique_names(everything, names)
        everything = [renamed(m, n) for m, n in zip(everything, labels, strict=True)]
        every = [m for m in everything if not isinstance(m, Unreadable)]
        if not every:  # one unreadable model among others gets its row; none readable is an error
            raise MethodError(f"no model could be read ({len(everything)} given): "
                              + "; ".join(m.reason for m in everything))
        na = {m.name: not_applicable(m) for m in every}
        vectors = vectors_for([m for m in every if "coherence" not in na[m.name]], opts.embeddings,
                              opts.embeddings_format, opts.topn)
        loaded = [m for m in every if has_likelihood(m)]
        if loaded and docs is None:
            raise MethodError("evaluate needs held-out documents (heldout=...)")
        corpora, scoring = common_tokens(loaded, docs, opts.tokenizer, opts.encoding) if loaded else (
            [], {"rule": "no model has a likelihood: no held-out documents scored"})
        reference = read_once(reference, opts.encoding)  # a pipe: read once for every measure and window
    est = estimate_cost(loaded, corpora, reference, opts, every=every)
    worded = [m for m in every if "coherence" not in na[m.name]]
    est["seconds"]["judge"] = 0.0
    if opts.judge is not None:  # consent, the server, the model: before any work; its time in the estimate
        from .judged import check_judge

        est["seconds"]["judge"] = check_judge(opts.judge, worded, opts.judge_tasks)
        est["total"] += est["seconds"]["judge"]
    cost.check_estimate(est, len(loaded), opts.max_hours, clock, show=progress is not False)
    open_kept(opts, loaded, corpora)  # this evaluation's folder of kept work, or a new one
    n = len(loaded)
    held: dict[str, HeldoutResult] = {}
    comparisons, worse = [], {}
    diag: dict[str, Any] = {}
    preds = {}
    ldas = [(m, c) for m, c in zip(loaded, corpora, strict=True) if isinstance(m, TopicModel)]
    try:  # with keep: each model's finished documents kept as they finish (`kept_folder`)
        for k, (m, c) in enumerate(zip(loaded, corpora, strict=True), 1):
            with clock.stage("held-out", f"{m.name} ({k}/{n})"):
                held[m.name] = heldout_one(m, c, opts, progress)
        if opts.compare_models != "none" and n > 1:
            with clock.stage("comparisons", f"{n * (n - 1) // 2} pair(s), {opts.compare_models}"):
                comparisons, worse = pairs.comparisons(loaded, corpora, held, opts, progress, est, clock)
    except KeyboardInterrupt as exc:
        raise _interrupted(exc, opts, len(held), n) from None
    fingerprints: dict[str, Any] = {}
    coh: dict[str, dict[str, float]] = {m.name: {} for m in every}
    per_topic = {m.name: {"words": top_words_or_none(m, opts.topn), "coherence": {}} for m in worded}
    autos: dict[str, tuple[dict[str, Any] | None, str | None]] = {m.name: (None, None) for m in every}
    judged: dict[str, dict[str, Any]] = {}
    agreed: dict[str, dict[str, Any]] = {}
    predicting = False
    try:  # with keep: Ctrl-C in any stage says what is kept (the held-out estimates, theta)
        if reference is not None and opts.coherence and worded:
            with clock.stage("coherence", "counting the reference"):
                means, values, fingerprints, flags = topic_coherence(
                    worded, reference, opts.coherence, opts.topn, opts.absent, opts.workers, opts.encoding)
                for m in worded:
                    coh[m.name] = means[m.name]
                    per_topic[m.name]["coherence"] = values[m.name]
                    if m.name in flags:  # the junk flags NPMI raises (None: the reference is too small)
                        per_topic[m.name]["flags"] = flags[m.name]
                        if flags[m.name] is None:  # said, never shown as "no flag"
                            from ..diagnostics.flags import too_small

                            per_topic[m.name]["flags_note"] = too_small({"fingerprint": fingerprints["npmi"]})
        if reference is not None:
            for k, m in enumerate(worded, 1):
                with clock.stage("intrusion", f"{m.name} ({k}/{len(worded)})"):
                    autos[m.name] = auto_intrusion(m, reference, opts.seed, opts.workers, opts.encoding)
        if opts.judge is not None:
            from .judged import agreement, judge_models

            judged = judge_models(opts.judge, worded, opts.judge_tasks, clock)
            agreed = agreement(opts.judge, opts.judge_tasks)
            for name, got in judged.items():
                per_topic[name]["judge"] = got["per_topic"]
        predicting = True
        for k, (m, c) in enumerate(ldas, 1):
            with clock.stage("predictive", f"{m.name} ({k}/{len(ldas)})"):
                preds[m.name] = predictive(m, c, seed=opts.seed, workers=opts.workers, progress=False,
                                           keep=kept_folder(opts, "theta", m))
    except KeyboardInterrupt as exc:
        more = f"; the predictive metrics of {len(preds)} of {len(ldas)}" if predicting else ""
        raise _interrupted(exc, opts, len(held), n, more) from None
    rows = [model_row(m, held.get(m.name), preds.get(m.name), coh[m.name], autos[m.name], na[m.name],
                      opts.diversity_topn) for m in every]
    if reference is None:  # measures that need one: the reason, in the row and under the table
        for r, m in zip(rows, every, strict=True):
            if m in worded:
                r["not_computed"] = {"coherence": NO_REFERENCE, "auto MP": NO_REFERENCE}
    for r, m in zip(rows, every, strict=True):
        r.update(word_measures(m, vectors, opts.topn, r))
        if m.name in judged:
            got = judged[m.name]
            r.update(got["row"])
            r["judge_notes"] = got["notes"]
            r["judge_accounting"] = got["accounting"]
            if got["not_computed"]:
                r["not_computed"] = {**r.get("not_computed", {}), **got["not_computed"]}
    if opts.diagnostics:  # per-topic diagnostics: on request, "—" with the reason where they do not apply
        from ..diagnostics import of_models

        reasons: dict[str, str] = {}
        diag = of_models(loaded, corpora, seed=opts.seed, workers=opts.workers, not_applicable=reasons)
        for r, m in zip(rows, every, strict=True):
            if m not in loaded:
                reasons[m.name] = why_not("diagnostics", m) or NO_PROPORTIONS.format(name=shown(m.name, 80))
            if m.name in reasons:
                r.setdefault("not_applicable", {})["diagnostics"] = reasons[m.name]
    ready = iter(rows)  # every model's row in the order given, an unreadable one's included
    rows = [unreadable_row(m) if isinstance(m, Unreadable) else next(ready) for m in everything]
    groups: list[list[str]] | None = rank_groups([r["model"] for r in rows if r["model"] in held],
                                                 [r["per_token"] for r in rows if r["model"] in held], worse)
    groups_note = None
    pairs.versus_best(rows, comparisons, groups if opts.compare_models != "none" else None)
    if opts.compare_models == "none" and n > 1:
        order = ", ".join(n for g in groups or [] for n in g)  # one group, by point estimate
        groups, groups_note = None, (f"not compared (compare_models='none', CLI --compare none), so no model "
                                     f"is shown better or tied; by point estimate alone: {order}")
    human = None
    if opts.human is not None:
        from .human import people

        shown_columns = [k for k in ("auto_model_precision", "diversity", "irbo", "we_irbo")
                         if any(finite_float(r.get(k)) is not None for r in rows)]
        try:  # with keep: Ctrl-C here says what is kept, as in the stages before
            with clock.stage("people", "each metric's agreement with people"):
                human = people(opts.human, every, per_topic, key=opts.human_key, columns=shown_columns,
                               bootstrap=opts.human_bootstrap, seed=opts.seed)
        except KeyboardInterrupt as exc:
            raise _interrupted(exc, opts, len(held), n) from None
    params_out = {**opts.to_dict(),
                  "heldout_params": held[loaded[0].name].params if loaded else None,
                  "reference": describe(reference), "coherence_fingerprint": fingerprints,
                  "embeddings": vectors.info if vectors is not None else None}
    timing = clock.to_dict()
    estimate = {"stages": est["seconds"], "total": est["total"], "ratio_ais_up_to": est["ratio_ais_up_to"],
                "how": est["how"]}
    stab = None
    if opts.stability:  # stability across restarts: one call, on request
        from ..diagnostics.stability import stability_groups
        stab = stability_groups(every, skip_inapplicable=True)
        per = {m: v for g in stab for m, v in g.per_model.items()}
        for r in rows:
            r["stability"] = per.get(r["model"])
    return EvaluationResult(rows, comparisons, groups, scoring, params_out, timing["total"]["wall"],
                            timing, estimate, held, diag, stab, per_topic, groups_note, human, agreed)

__all__ = ["evaluate", "EvaluateOptions", "EvaluationResult", "common_tokens", "rank_groups", "difference",
           "estimate_cost", "reference_tokens", "COMPARE_MODES", "DEFAULT_COHERENCE", "EMBEDDING_COLUMNS",
           "STAGES"]
