"""Comparing topic models directly (Foulds & Smyth 2014).

`compare(A, B, docs)` estimates log P(w_d | A) - log P(w_d | B) for every document by Ratio-AIS:
annealing the topic assignments z of each document from model B to model A (`forward`), or
from A to B and negating (`reverse`), along the `convex` or `geometric` path
(`tealeaves.sampling.pair`). Two starts for the chain's first state:
- `start="ais"` (default): an ordinary AIS run from the prior to B (`start_temperatures`) whose
  weight is carried along; with M chains the estimate is log(sum_m wS_m wP_m / sum_m wS_m),
  exact in expectation for numerator and denominator alike;
- `start="burn-in"`: `burn_in` Gibbs sweeps under B, then the annealing weight alone
  (consistent as the burn-in grows, cheaper).
Forward and reverse are unbiased for P(w | A) / P(w | B) and P(w | B) / P(w | A), so in log
space the forward estimate is low and the reverse high *on average*; for one document the
bracket forward <= exact <= reverse held on only a quarter to a third of short real paragraphs at
100 to 3,000 temperatures (docs/compare_coverage.md). With `direction="both"` the reported ratio
is their midpoint and `gap` their distance, a convergence diagnostic; each document's interval
is the bracket widened by 1.96 chain sd (`document_intervals`). Defaults (1,000 temperatures, 4
chains) were chosen by measurement: those intervals covered the exact log ratio on 93-99.5% of short
paragraphs from 2 chains up. `method="difference"` subtracts two separate held-out runs instead;
its per-document intervals come from each model's run-to-run spread (none with one run).
Per-token intervals are about the population the documents were drawn from or about these
documents (`CompareResult.interval`, `tealeaves.compare.intervals`).

`training_curve(models, docs)` is Iteration-AIS: one chain per document and chain anneals from
the prior to M_1 and then M_{i-1} -> M_i along the convex path; the running weights estimate
log P(w | M_i) for every i.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from ..corpus import Corpus
from ..errors import MethodError
from ..files.kept import Kept, digest, kept
from ..heldout import as_corpus, get_method, heldout
from ..heldout.ais import SCHEDULES, temperature_schedule
from ..heldout.result import bootstrap_bytes, bootstrap_sd
from ..model import TopicModel
from ..sampling import child, new_state, pair, prepare_models
from ..topics import as_lda
from ..util.limits import check_bool, check_bootstrap, check_budget, check_int, update_seconds
from ..util.parallel import Progress, run_tasks
from .align import align_models, align_vocab
from .result import CompareResult, CurveResult, DirectionEstimate, bootstrap_over_chains

PATHS = ("convex", "geometric")
DIRECTIONS = ("forward", "reverse", "both")
STARTS = ("ais", "burn-in")
METHODS = ("ratio-ais", "difference")
# Ratio-AIS's options and their defaults (`compare`'s None)
RATIO_AIS = {"path": "convex", "direction": "both", "temperatures": 1000, "start": "ais",
             "start_temperatures": 2000, "burn_in": 200, "schedule": "sigmoid", "align_topics": True}
DIFFERENCE_ESTIMATOR = "left-to-right"

__all__ = ["compare", "training_curve", "method_options", "CompareResult", "CurveResult"]


def _check_choice(name: str, value: Any, choices: Sequence[str]) -> str:
    if value not in choices:
        raise MethodError(f"{name} must be one of {', '.join(choices)}, got {value!r}")
    return value


def _compare_doc(shared: tuple, item: tuple) -> dict[str, np.ndarray]:
    phi_wts, alphas, opts = shared
    words, seq = item
    M = opts["chains"]
    out = {d: np.zeros((3, M)) for d in opts["directions"]}  # start, path, log scale
    if words.size == 0:
        return out
    pm = prepare_models(phi_wts, alphas, words)
    path_taus = temperature_schedule(opts["schedule"], opts["temperatures"])
    start_taus = temperature_schedule("geometric", opts["start_temperatures"])
    geometric = opts["path"] == "geometric"
    for k, direction in enumerate(opts["directions"]):
        state = new_state(child(seq, k))
        s, d = (1, 0) if direction == "forward" else (0, 1)  # model 0 is A, 1 is B
        w = pair.ratio_chains(pm.rows[s], pm.logrows[s], pm.alphas[s], pm.rows[d], pm.logrows[d],
                              pm.alphas[d], start_taus, path_taus, opts["start"] == "ais",
                              opts["burn_in"], geometric, M, state)
        out[direction][:2] = w.T
        out[direction][2] = pm.log_scale
    return out


def method_options(method: str, given: dict[str, Any], estimator: str | None = None) -> dict[str, Any]:
    """The one check of which options go with which method, the API's and the CLI's (red team 6,
    F17). `given`: the Ratio-AIS options given (not None). For ratio-ais: every Ratio-AIS option,
    defaults filled in; `estimator` is refused. For difference: those that are parameters of the
    estimator (`temperatures` and `schedule` of ais), passed to it; any other is refused."""
    _check_choice("method", method, METHODS)
    if method == "ratio-ais":
        if estimator is not None:
            raise MethodError("estimator applies only to method difference", options=("estimator", "method"))
        return {**RATIO_AIS, **given}
    takes = get_method(DIFFERENCE_ESTIMATOR if estimator is None else estimator).params_for("heldout")
    for name in given:
        if name not in takes:
            raise MethodError(f"{name} applies only to method ratio-ais (method difference takes estimator, "
                              "chains, particles and the other parameters of a heldout run)",
                              options=(name, "method", "estimator", "chains", "particles"))
    return dict(given)


def compare(model_a: TopicModel, model_b: TopicModel, docs: Corpus | Iterable[Sequence[int]],
            method: str = "ratio-ais", path: str | None = None, direction: str | None = None,
            temperatures: int | None = None, chains: int = 4, start: str | None = None,
            start_temperatures: int | None = None, burn_in: int | None = None,
            schedule: str | None = None, align_topics: bool | None = None, seed: int = 0,
            workers: int = 1, bootstrap: int = 10000, progress: bool | None = False,
            estimator: str | None = None, max_hours: float | None = None,
            labels: Sequence[str] | None = None, keep: str | os.PathLike | None = None,
            **estimator_params: Any) -> CompareResult:
    """log P(w_d | A) - log P(w_d | B) for every document (see the module notes).

    Ratio-AIS parameters (None: the default in `RATIO_AIS`): `path` (convex), `direction` (both),
    `temperatures` (S of the B -> A path, 1000; `schedule` as in `heldout` AIS, sigmoid: small
    steps at both ends, where one model's improbable states are switched off), `chains` (M per
    document and direction), `start` (ais), `start_temperatures` (prior -> B, 2000), `burn_in`
    (200), `align_topics` (relabel B's topics to match A's, True; changes no probability,
    shortens the path). `method="difference"` runs `heldout(..., method=estimator, runs=chains,
    **estimator_params)` for each model (estimator left-to-right by default; `temperatures` and
    `schedule` go to an ais estimator); a Ratio-AIS option it does not take is refused
    (`method_options`). `labels`: the two models' names in error messages (the CLI gives the file
    names). `keep`: a folder keeping every finished document (`files.kept`; for the difference,
    each model's held-out estimates in its subfolders a/ and b/); the same call with it resumes an
    interrupted run, same numbers."""
    ratio = {k: v for k, v in (("path", path), ("direction", direction), ("temperatures", temperatures),
                               ("start", start), ("start_temperatures", start_temperatures),
                               ("burn_in", burn_in), ("schedule", schedule),
                               ("align_topics", align_topics)) if v is not None}
    opts = method_options(method, ratio, estimator)
    model_a, model_b = (as_lda("compare", m) for m in (model_a, model_b))
    for m in (model_a, model_b):
        if not isinstance(m, TopicModel):
            raise MethodError(f"models must be TopicModel objects, got {type(m).__name__}")
    chains = check_int("chains", chains, 1)
    seed = check_int("seed", seed, 0)
    workers = check_int("workers", workers, 1)
    bootstrap = check_int("bootstrap", bootstrap, 0)
    check_bool("progress", progress, none=True)
    if method == "difference":
        return _difference(model_a, model_b, docs, estimator or DIFFERENCE_ESTIMATOR, chains, seed, workers,
                           bootstrap, progress, {**opts, **estimator_params}, labels,
                           keep)
    if estimator_params:
        raise MethodError(f"ratio-ais has no parameter {sorted(estimator_params)[0]!r}")
    path, direction, start, schedule = opts["path"], opts["direction"], opts["start"], opts["schedule"]
    temperatures, start_temperatures = opts["temperatures"], opts["start_temperatures"]
    burn_in, align_topics = opts["burn_in"], opts["align_topics"]
    _check_choice("path", path, PATHS)
    _check_choice("direction", direction, DIRECTIONS)
    _check_choice("start", start, STARTS)
    _check_choice("schedule", schedule, SCHEDULES)
    temperatures = check_int("temperatures", temperatures, 1)
    start_temperatures = check_int("start_temperatures", start_temperatures, 1)
    burn_in = check_int("burn_in", burn_in, 0)
    align_topics = check_bool("align_topics", align_topics)
    model_a, model_b = align_models([model_a, model_b], topics=align_topics, labels=labels)
    corpus = as_corpus(docs, model_a)
    as_corpus(corpus, model_b)
    directions = ["forward", "reverse"] if direction == "both" else [direction]
    opts = {"chains": chains, "directions": directions, "path": path, "temperatures": temperatures,
            "start": start, "start_temperatures": start_temperatures, "burn_in": burn_in,
            "schedule": schedule}
    shared = ([np.ascontiguousarray(m.phi.T) for m in (model_a, model_b)],
              [np.array(m.alpha) for m in (model_a, model_b)], opts)
    per_chain = start_temperatures * (start == "ais") + temperatures + burn_in * (start == "burn-in")
    resampled = chains >= 2 and len(corpus) > 0
    check_bootstrap(bootstrap, float(chains) * len(corpus) * len(directions) * resampled,
                    bootstrap_bytes(bootstrap, chains, 2e6) * resampled, max_hours)
    updates = float(corpus.num_tokens * per_chain * chains * len(directions))
    check_budget(updates, workers, max_hours, "Ratio-AIS", model_a.num_topics, kernel="pair")
    seqs = np.random.SeedSequence(seed).spawn(len(corpus))
    items = [(corpus[d], seqs[d]) for d in range(len(corpus))]
    bar = Progress(len(items), f"compare {path}", enabled=progress)
    fingerprint = {"a": digest(model_a.phi_wt, model_a.alpha, model_a.vocab),
                   "b": digest(model_b.phi_wt, model_b.alpha, model_b.vocab),
                   "documents": digest(corpus.words, corpus.offsets), "options": opts, "seed": seed}

    def valid(v: Any) -> bool:  # a kept document: per direction its (3, chains) weights
        return isinstance(v, dict) and set(v) == set(directions) and all(
            isinstance(x, np.ndarray) and x.shape == (3, chains) for x in v.values())

    with kept(keep, "Ratio-AIS", fingerprint, len(items), valid=valid) as k:
        t0 = time.perf_counter()
        rows = run_tasks(_compare_doc, shared, items, workers, bar, [len(w) for w, _ in items],
                         update_seconds(updates, 1, model_a.num_topics, "pair"), "Ratio-AIS",
                         done=k.done if k is not None else None, on_result=k.add if k is not None else None)
        seconds = time.perf_counter() - t0
    ests: dict[str, DirectionEstimate] = {}
    for d in directions:
        arr = np.stack([r[d] for r in rows], axis=-1) if rows else np.zeros((3, chains, 0))
        est = DirectionEstimate(d, arr[0], arr[1], arr[2, 0])
        est.sd = bootstrap_over_chains(est.start_log_weight, est.path_log_weight, est.sign,
                                       bootstrap, seed)
        ests[d] = est
    if direction == "both":
        f, r = ests["forward"], ests["reverse"]
        doc_log_ratio = 0.5 * (f.doc_log_ratio + r.doc_log_ratio)
        sd = 0.5 * float(np.hypot(f.sd, r.sd))
    else:
        doc_log_ratio = ests[direction].doc_log_ratio
        sd = ests[direction].sd
    params = {"path": path, "direction": direction, "temperatures": temperatures, "chains": chains,
              "start": start, "start_temperatures": start_temperatures if start == "ais" else None,
              "burn_in": burn_in if start == "burn-in" else None, "schedule": schedule,
              "align_topics": align_topics}
    return CompareResult(
        method="ratio-ais", params=params, model_a=model_a.name, model_b=model_b.name,
        doc_log_ratio=doc_log_ratio, doc_tokens=corpus.lengths.astype(np.int64), sd_chains=sd,
        seconds=seconds, seed=seed, workers=workers, corpus=corpus.report(),
        forward=ests.get("forward"), reverse=ests.get("reverse"),
        site_updates=float(corpus.num_tokens * per_chain * chains * len(directions)),
        bootstrap=bootstrap,
    )


def _difference(model_a, model_b, docs, estimator, chains, seed, workers, bootstrap, progress,
                params, labels=None, keep=None) -> CompareResult:
    model_b = align_vocab(model_a, model_b, labels)  # the two models may differ in their topics
    corpus = as_corpus(docs, model_a)
    common = dict(runs=chains, seed=seed, workers=workers, bootstrap=bootstrap, progress=progress)
    if keep is not None:  # the folder is this comparison's (each model's subfolder checks its own work)
        Kept(keep, "difference of held-out estimates", {"a": "a/", "b": "b/"}, 2, "model")
    sub = (lambda name: None) if keep is None else (lambda name: os.path.join(os.fspath(keep), name))
    ra = heldout(model_a, corpus, method=estimator, keep=sub("a"), **common, **params)
    # independent streams for B: a different seed derived from the same one
    rb = heldout(model_b, corpus, method=estimator, keep=sub("b"), **{**common, "seed": seed + 1_000_003},
                 **params)
    sd = float(np.hypot(ra.sd, rb.sd))
    return CompareResult(
        method="difference", params={"estimator": estimator, "runs": chains, **ra.params},
        model_a=model_a.name, model_b=model_b.name, doc_log_ratio=ra.doc_log_prob - rb.doc_log_prob,
        doc_tokens=ra.doc_tokens, sd_chains=sd, seconds=ra.seconds + rb.seconds, seed=seed,
        workers=workers, corpus=ra.corpus, site_updates=ra.site_updates + rb.site_updates,
        bootstrap=bootstrap, extra={"a": ra.summary(), "b": rb.summary()},
        run_log_prob_a=ra.run_log_prob, run_log_prob_b=rb.run_log_prob,
    )


def _curve_doc(shared: tuple, item: tuple) -> np.ndarray:
    phi_wts, alphas, opts = shared
    words, seq = item
    K, M = len(phi_wts), opts["chains"]
    out = np.zeros((M, K))
    if words.size == 0:
        return out
    pm = prepare_models(phi_wts, alphas, words)
    first_taus = temperature_schedule("geometric", opts["first_temperatures"])
    path_taus = temperature_schedule(opts["schedule"], opts["temperatures"])
    state = new_state(child(seq, 0))
    out = pair.curve_chains(pm.rows, pm.logrows, pm.alphas, first_taus, path_taus, M, state)
    return out + pm.log_scale


def training_curve(models: Sequence[TopicModel], docs: Corpus | Iterable[Sequence[int]],
                   temperatures: int = 1000, first_temperatures: int = 2000, chains: int = 2,
                   schedule: str = "sigmoid", align_topics: bool = False, seed: int = 0,
                   workers: int = 1, bootstrap: int = 10000,
                   progress: bool | None = False, max_hours: float | None = None,
                   labels: Sequence[str] | None = None) -> CurveResult:
    """Iteration-AIS: log P(w_d | M_i) for a sequence of models with the same vocabulary and
    number of topics (for example snapshots of one training run). The first segment is AIS from
    the prior to M_1 (`first_temperatures`, geometric schedule: the hardest segment); each later
    segment anneals M_{i-1} -> M_i along the convex path with `temperatures` steps. A run estimated
    to take more than `max_hours` (default 24) stops before it starts. `labels`: the models'
    names in error messages (the CLI gives the file names)."""
    models = [as_lda("curve", m) for m in models]
    if len(models) < 1 or not all(isinstance(m, TopicModel) for m in models):
        raise MethodError("training_curve needs a non-empty sequence of TopicModel objects")
    chains = check_int("chains", chains, 1)
    temperatures = check_int("temperatures", temperatures, 1)
    first = check_int("first_temperatures", first_temperatures, 1)
    seed = check_int("seed", seed, 0)
    workers = check_int("workers", workers, 1)
    align_topics = check_bool("align_topics", align_topics)
    check_bool("progress", progress, none=True)
    _check_choice("schedule", schedule, SCHEDULES)
    models = align_models(models, topics=align_topics, labels=labels,
                          hint="Iteration-AIS anneals from one model to the next, so every model needs "
                               "one K; compare models of different K pair by pair (tealeaves compare "
                               "--method difference; Python: compare(..., method='difference'))")
    corpus = as_corpus(docs, models[0])
    for m in models[1:]:
        as_corpus(corpus, m)
    K = len(models)
    resampled = chains >= 2 and len(corpus) > 0
    check_bootstrap(bootstrap, float(chains) * len(corpus) * K * resampled,
                    bootstrap_bytes(bootstrap, chains) * resampled, max_hours)
    updates = float(corpus.num_tokens) * chains * (first + temperatures * (K - 1))
    check_budget(updates, workers, max_hours, "Iteration-AIS", models[0].num_topics, kernel="pair")
    opts = {"chains": chains, "temperatures": temperatures, "first_temperatures": first,
            "schedule": schedule}
    shared = ([np.ascontiguousarray(m.phi.T) for m in models], [np.array(m.alpha) for m in models],
              opts)
    seqs = np.random.SeedSequence(seed).spawn(len(corpus))
    items = [(corpus[d], seqs[d]) for d in range(len(corpus))]
    bar = Progress(len(items), "curve", enabled=progress)
    t0 = time.perf_counter()
    rows = run_tasks(_curve_doc, shared, items, workers, bar, [len(w) for w, _ in items],
                     update_seconds(updates, 1, models[0].num_topics, "pair"), "Iteration-AIS")
    seconds = time.perf_counter() - t0
    cum = np.stack(rows, axis=-1) if rows else np.zeros((chains, K, 0))  # (M, K, D)
    sd = np.array([bootstrap_sd(cum[:, k, :], bootstrap, seed) for k in range(K)])
    return CurveResult(
        models=[m.name for m in models], cumulative_log_weight=cum,
        doc_tokens=corpus.lengths.astype(np.int64),
        params={"temperatures": temperatures, "first_temperatures": first, "chains": chains,
                "schedule": schedule, "align_topics": align_topics, "bootstrap": bootstrap},
        seconds=seconds, seed=seed, workers=workers, corpus=corpus.report(), sd=sd,
    )
