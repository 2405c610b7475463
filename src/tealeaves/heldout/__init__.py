"""Held-out likelihood log P(w | Phi, alpha m) and document completion log P(w2 | w1, ...)
by the estimators of Wallach et al. (2009). `heldout` and `completion` are the public entry
points; one module per estimator family registers itself (`spec.register`); `registry` looks names up."""

from __future__ import annotations

import math
import os
import time
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from ..corpus import Corpus, check_same_vocab
from ..errors import InvalidCorpusError, MethodError, shown
from ..files.kept import digest, kept
from ..model import VOCAB_HINT, TopicModel
from ..sampling import child, compiling, new_state
from ..topics import Topics, as_lda, require
from ..util.limits import (
    MAX_HOURS,
    check_bool,
    check_bootstrap,
    check_budget,
    check_int,
    check_memory,
    update_seconds,
)
from ..util.numbers import finite_float
from ..util.parallel import Progress, on_dask, run_tasks
from .adaptive import MIN_RUNS, TARGETS, adaptive_doc_task
from .adaptive import summarise as adaptive_summary
from .crosscheck import CHECK_TEMPERATURES, run_check
from .exact import DEFAULT_MAX_STATES, check_size
from .registry import for_document, get_method, method_names
from .result import HeldoutResult, bootstrap_bytes, bootstrap_sd, impossible_log_prob
from .spec import MethodSpec

SPLITS = ("first", "random")

__all__ = ["heldout", "completion", "HeldoutResult", "method_names", "get_method", "as_corpus",
           "check_vocab_fits"]


def heldout(model: TopicModel, docs: Corpus | Iterable[Sequence[int]], method: str | None = None,
            runs: int = 1, seed: int = 0, workers: int = 1, bootstrap: int = 10000,
            progress: bool | None = False, target_sd: float | None = None, check: int = 0,
            check_temperatures: int = CHECK_TEMPERATURES, max_hours: float | None = None,
            keep: str | os.PathLike | None = None, target_gap: float | None = None,
            grow: Sequence[str] | None = None, **params: Any) -> HeldoutResult:
    """Estimate log P(w_d | Phi, alpha m) for every document by `method` (see `method_names()`;
    None: the model's own default, left-to-right for LDA, ais over eta for a logistic-normal prior),
    `runs` independent times; parameters as in table 1 of the paper (`particles`,
    `temperatures`, `samples`, `burn_in`, `iterations`, `chain_length`, ...).

    `target_sd` (nats per token): each document's budget doubles until its run-to-run sd per
    token is below it and two consecutive budgets agree (`heldout.adaptive`); `target_gap` (nats per
    token): the same, until its estimated Jensen gap s^2 / (2 runs) is at most target_gap times its
    tokens; `grow`: the parameters doubled in turn (default: the method's). `check=K`: an
    independent reference on K random documents (exact, or AIS with `check_temperatures`) and
    the estimated bias per token with a 95% interval (`heldout.crosscheck`). A run estimated to take
    more than `max_hours` (default 24) stops before it starts. `keep`: a folder that keeps every
    finished document (`files.kept`); the same call with it resumes an interrupted run, with the
    same numbers."""
    if isinstance(model, Topics) and model.lda is None and model.prior == "logistic-normal":
        if target_gap is not None or grow is not None:
            raise MethodError(f"{'target_gap' if target_gap is not None else 'grow'} is not available for a "
                              "logistic-normal prior (its budget is adaptive already)")
        return _logistic_normal(model, docs, method, runs, seed, workers, bootstrap, target_sd, check,
                                max_hours, params, keep, check_temperatures)
    model = as_lda("heldout", model)
    spec = get_method("left-to-right" if method is None else method, "heldout")
    return _estimate(model, docs, spec, "heldout", params, runs, seed, workers, bootstrap,
                     progress, observed=0.0, split="first", target_sd=target_sd, check=check,
                     check_temperatures=check_temperatures, max_hours=max_hours, keep=keep,
                     target_gap=target_gap, grow=grow)


def _logistic_normal(model: Topics, docs: Any, method: str | None, runs: int, seed: int, workers: int,
                     bootstrap: int, target_sd: float | None, check: int, max_hours: float | None,
                     params: dict[str, Any], keep: str | os.PathLike | None = None,
                     check_temperatures: int = CHECK_TEMPERATURES) -> HeldoutResult:
    """A logistic-normal prior has no collapsed sampler: `ais` over eta (`logistic_normal`) is its
    estimator, given as "ais" or by no method at all; any other method asked for is a one-line
    error (never a silent substitution: `--methods left-to-right,ais` compared AIS with itself).
    Its budget is adaptive unless `temperatures` is given; `check=K` as for LDA."""
    from .logistic_normal import heldout_logistic_normal

    require("heldout", model)
    if method not in (None, "ais"):
        raise MethodError(f"{method} integrates over a Dirichlet prior; {shown(model.name, 80)} has a "
                          "logistic-normal prior: its estimator is ais over eta (by elliptical slice "
                          "sampling): give method ais, or no method", options=("method",))
    unknown = sorted(set(params) - {"temperatures", "schedule", "tolerance"})
    if unknown or target_sd is not None or workers != 1:
        what = unknown[0] if unknown else ("target_sd" if target_sd is not None else "workers")
        raise MethodError(f"{what} is not available for a logistic-normal prior (ais over eta takes "
                          "temperatures, schedule, tolerance, runs, seed, bootstrap, check and max_hours)")
    corpus = docs if isinstance(docs, Corpus) else Corpus.from_word_ids(docs, model.vocab)
    check_vocab_fits(corpus, model)
    return heldout_logistic_normal(model, corpus, runs=runs, seed=seed, bootstrap=bootstrap,
                                   max_hours=max_hours, keep=keep, check=check,
                                   check_temperatures=check_temperatures, **params)


def completion(model: TopicModel, docs: Corpus | Iterable[Sequence[int]],
               method: str = "left-to-right", observed: float = 0.5, split: str = "first",
               runs: int = 1, seed: int = 0, workers: int = 1, bootstrap: int = 10000,
               progress: bool | None = False, target_sd: float | None = None, check: int = 0,
               check_temperatures: int = CHECK_TEMPERATURES, max_hours: float | None = None,
               keep: str | os.PathLike | None = None, target_gap: float | None = None,
               grow: Sequence[str] | None = None, **params: Any) -> HeldoutResult:
    """Estimate log P(w2 | w1, Phi, alpha m) (section 5): w1 is the first floor(observed N)
    tokens of each document (`split="first"`) or a seeded random subset of that size
    (`split="random"`); methods `estimated-theta`, `ais`, `left-to-right` (and `exact`).
    `target_sd`, `target_gap`, `grow`, `check` and `keep` as in `heldout`."""
    model = as_lda("completion", model)
    spec = get_method(method, "completion")
    if not (isinstance(observed, int | float) and 0.0 <= observed < 1.0):
        raise MethodError(f"observed must be a fraction in [0, 1), got {observed!r}")
    if split not in SPLITS:
        raise MethodError(f"split must be one of {', '.join(SPLITS)}, got {split!r}")
    return _estimate(model, docs, spec, "completion", params, runs, seed, workers, bootstrap,
                     progress, observed=float(observed), split=split, target_sd=target_sd,
                     check=check, check_temperatures=check_temperatures, max_hours=max_hours, keep=keep,
                     target_gap=target_gap, grow=grow)


def as_corpus(docs: Corpus | Iterable[Sequence[int]], model: TopicModel) -> Corpus:
    """Check that `docs` fit `model`: same vocabulary, ids < V, no word that every topic gives
    probability zero."""
    corpus = docs if isinstance(docs, Corpus) else Corpus.from_word_ids(docs, model.vocab)
    check_vocab_fits(corpus, model)
    if corpus.num_tokens:
        top = int(corpus.words.max())
        if top >= model.num_words:
            d = Corpus.doc_of_token(int(np.argmax(corpus.words >= model.num_words)), corpus.offsets)
            raise InvalidCorpusError(
                f"{corpus.source}: document {d} has word id {top} but the model has "
                f"{model.num_words} words"
            )
        colmax = model.phi.max(axis=0)
        zero = colmax[corpus.words] == 0
        if zero.any():
            i = int(np.argmax(zero))
            d = Corpus.doc_of_token(i, corpus.offsets)
            w = int(corpus.words[i])
            name = f" ({shown(model.vocab[w])})" if model.vocab else ""
            raise InvalidCorpusError(
                f"{corpus.source}: document {d} has word {w}{name}, which has probability 0 "
                "under every topic; the model cannot score it"
            )
    return corpus


def check_vocab_fits(corpus: Corpus, model: TopicModel) -> None:
    """The one place where documents meet a model's word ids: text read without the model's
    vocabulary (ids the reader made up in order of first appearance) is never scored; a
    vocabulary the documents carry must be the model's, or as long as it when the model has none."""
    where = f"model {shown(model.name, 120)}"
    if corpus.built_vocab and corpus.vocab != model.vocab:
        if model.vocab is None:
            raise InvalidCorpusError(
                f"{corpus.source}: text documents cannot be scored by {where}, which has no vocabulary "
                f"to map their words to its word ids; {VOCAB_HINT}; or give word-id documents "
                "(--format ids, or an .npz corpus)")
        raise InvalidCorpusError(
            f"{corpus.source}: the documents were read without {where}'s vocabulary (their word ids "
            "were made up from the text); read them with it: read_corpus(path, vocab=model.vocab)")
    if corpus.vocab is None:
        return
    if model.vocab is not None:
        check_same_vocab(corpus.vocab, model.vocab, f"corpus {corpus.source}", where)
    elif len(corpus.vocab) != model.num_words:
        raise InvalidCorpusError(
            f"{corpus.source}: the documents' vocabulary has {len(corpus.vocab)} words but {where} has "
            f"{model.num_words} (and no vocabulary to match them by); {VOCAB_HINT}")


def _target(spec: MethodSpec, resolved: dict[str, Any], target_sd: float | None, target_gap: float | None,
            grow: Sequence[str] | None) -> tuple[str, float, tuple[str, ...]] | None:
    """(which target, its value, the parameters doubled in turn) from `target_sd`, `target_gap` and
    `grow` (`heldout.adaptive`), checked; None without a target."""
    given = [(k, v) for k, v in (("target_sd", target_sd), ("target_gap", target_gap)) if v is not None]
    if not given:
        if grow is not None:
            raise MethodError("grow applies only with target_sd or target_gap")
        return None
    if len(given) > 1:
        raise MethodError("give target_sd or target_gap, not both")
    kind, value = given[0]
    assert kind in TARGETS
    if (v := finite_float(value)) is None or v <= 0:
        raise MethodError(f"{kind} must be a positive number of nats per token, got {value!r}")
    if spec.budget is None:
        raise MethodError(f"{kind} does not apply to {spec.name}: it has no budget that buys "
                          "accuracy" + (" (it is exact)" if spec.name == "exact" else
                                        " (it does not converge to P(w))"))
    if grow is None:  # target_sd doubles the budget alone, as it always did
        names = tuple(g for g in spec.grow if g in resolved) if kind == "target_gap" else ()
        names = names or (spec.budget,)
    else:
        names = tuple(grow) if not isinstance(grow, str) else (grow,)
        bad = [g for g in names if not (g in resolved and isinstance(resolved[g], int)
                                        and not isinstance(resolved[g], bool) and resolved[g] > 0)]
        if not names or bad:
            takes = ", ".join(k for k, x in resolved.items()
                              if isinstance(x, int) and not isinstance(x, bool))
            raise MethodError(f"grow: {bad[0] if bad else 'nothing'} is not a positive whole-number "
                              f"parameter of {spec.name} (give some of: {takes})")
    return kind, v, names


def _split(words: np.ndarray, observed: float, split: str, seq: np.random.SeedSequence):
    n_obs = int(math.floor(observed * words.size + 1e-9))
    if split == "random" and n_obs:
        rng = np.random.default_rng(child(seq, 2))
        mask = np.zeros(words.size, bool)
        mask[rng.choice(words.size, n_obs, replace=False)] = True
        words = np.concatenate([words[mask], words[~mask]])
    return words, n_obs


def _doc_task(shared: tuple, item: tuple) -> np.ndarray:
    """One document's runs: (2, runs), its log estimates and their relative variance estimates V
    (`MethodSpec.call`; NaN for methods without one, 0 for a document with nothing to score)."""
    phi_wt, alpha, name, task, params, runs = shared
    words, n_obs, seq = item
    out = np.zeros((2, runs))
    if words.size == n_obs:
        return out
    spec, params = for_document(get_method(name, task), params, task, int(words.size), phi_wt.shape[1])
    doc = spec.document(phi_wt, alpha, words, n_obs, params)
    rng = np.random.default_rng(child(seq, 0))  # numpy draws (Dirichlet)
    state = new_state(child(seq, 1))  # the kernels' generator
    for r in range(runs):
        out[:, r] = spec.call(doc, n_obs, rng, state, params)
    return out


def _warm_up(shared: tuple, items: list[tuple]) -> None:
    """One run on two words of the first document to be scored: compiles the method's kernels for
    these arrays (or loads them from the disk cache) before the timed part, so that compiling is
    reported apart from `seconds`. Its own seed: the results do not change."""
    for words, n_obs, _ in items:
        if words.size > n_obs:
            n = min(n_obs, 1)
            _doc_task((*shared[:-1], 1), (words[: n + 2], n, np.random.SeedSequence(0)))
            break
    phi_wt, alpha, name, task, params, _ = shared
    spec = get_method(name, task)
    others = {for_document(spec, params, task, int(w.size), phi_wt.shape[1])[0].name for w, _, _ in items}
    for other in others - {name}:  # the fallback's kernels too
        alt = get_method(other, task)
        words, n_obs, _ = items[0]
        _doc_task((phi_wt, alpha, other, task, alt.resolve({}, task), 1),
                  (words[: min(n_obs, 1) + 2], min(n_obs, 1), np.random.SeedSequence(0)))


def _estimate(model: TopicModel, docs: Any, spec: MethodSpec, task: str, params: dict[str, Any],
              runs: int, seed: int, workers: int, bootstrap: int, progress: bool | None,
              observed: float, split: str, target_sd: float | None = None, check: int = 0,
              check_temperatures: int = CHECK_TEMPERATURES, max_hours: float | None = None,
              keep: str | os.PathLike | None = None, target_gap: float | None = None,
              grow: Sequence[str] | None = None) -> HeldoutResult:
    if not isinstance(model, TopicModel):
        raise MethodError(f"model must be a TopicModel, got {type(model).__name__}")
    resolved = spec.resolve(params, task)
    for name, value, low in (("runs", runs, 1), ("workers", workers, 1), ("bootstrap", bootstrap, 0),
                             ("check", check, 0), ("check_temperatures", check_temperatures, 1),
                             ("seed", seed, 0)):
        check_int(name, value, low)  # a bool is not a number (red team 6, F18: seed=True was 1)
    check_bool("progress", progress, none=True)
    target = _target(spec, resolved, target_sd, target_gap, grow)
    if target is not None:
        runs = max(int(runs), MIN_RUNS)
    corpus = as_corpus(docs, model)
    check_memory(f"{runs:,} runs of {len(corpus):,} documents", 2 * 8.0 * runs * len(corpus),
                 how="two float64 values per run and document")
    resampled = runs >= 2 and len(corpus) > 0  # else bootstrap_sd has nothing to resample
    check_bootstrap(bootstrap, float(runs) * len(corpus) * resampled,
                    bootstrap_bytes(bootstrap, runs) * resampled, max_hours)
    seqs = np.random.SeedSequence(int(seed)).spawn(len(corpus))
    items = [_split(corpus[d], observed, split, seqs[d]) + (seqs[d],) for d in range(len(corpus))]
    if spec.name == "exact":
        for d, (words, _, _) in enumerate(items):
            check_size(words.size, model.num_topics, resolved["max_states"], f"document {d}: ")
    per_doc = [for_document(spec, resolved, task, int(w.size), model.num_topics) for w, _, _ in items]
    fell = [d for d, (s, _) in enumerate(per_doc) if s.name != spec.name]
    fallback = {"method": per_doc[fell[0]][0].name, "from": spec.name, "documents": fell} if fell else None
    if fell and len(fell) == len(items):  # every document: the result is the other method's
        spec, resolved = per_doc[0]
    what = f"{task} by {spec.name}"
    runs = int(runs)
    fingerprint = {"task": task, "model": digest(model.phi_wt, model.alpha, model.vocab),
                   "documents": digest(corpus.words, corpus.offsets), "method": spec.name, "params": resolved,
                   "runs": runs, "seed": int(seed), "observed": observed, "split": split,
                   "target_sd": target_sd}
    if target is not None:  # the result's runs are drawn anew at the budget decided on (issue 36)
        fingerprint["runs_drawn"] = "anew"
        if target_gap is not None or grow is not None:
            fingerprint["target"] = [target[0], target[1], list(target[2])]

    def valid(v: Any) -> bool:  # a kept document's value has the shape and range this run gives it
        if target is None:
            ok = isinstance(v, np.ndarray) and v.shape == (2, runs)
        else:
            ok = (isinstance(v, list) and len(v) == 7 and isinstance(v[0], np.ndarray)
                  and v[0].shape == (runs,))
        return ok and not impossible_log_prob(v[0]).any()  # log P finite and <= 0 (red team 7)

    with kept(keep, what, fingerprint, len(items), valid=valid) as k:
        done = k.done if k is not None else {}
        # also sizes the batches
        costs = [s.work(int(w.size), p, model.num_topics) * runs
                 for (w, _, _), (s, p) in zip(items, per_doc, strict=True)]
        planned = float(sum(costs))
        left = planned - sum(costs[d] for d in done)  # what a resumed run still has to do
        if target is not None:  # at least 3 sets of runs: the start, one doubling, the new runs (adaptive)
            left *= 3
        shares = {spec.name: left}
        if check:  # the cross-check's stages, named in a refusal (red team 6, F13)
            n = min(check, len(items))
            share = n / max(len(items), 1)
            reference = (f"the cross-check's reference (AIS, 2 runs of {check_temperatures:,} temperatures "
                         f"on at most {n:,} document{'s' if n != 1 else ''})")
            shares[reference] = check_temperatures * 2 * corpus.num_tokens * share
            if runs < 2:
                shares[f"the cross-check's 2 more runs of {spec.name}"] = 2 * planned * share
        check_budget(sum(shares.values()), int(workers), max_hours,
                     what + (f" with its cross-check (check={check})" if check else ""), model.num_topics,
                     shares if check else None, kernel=spec.kernel)
        shared = (model.phi_wt, np.array(model.alpha), spec.name, task, resolved, runs)
        bar = Progress(len(items), f"{task} {spec.name}", enabled=progress)
        extra: dict[str, Any] = {"observed": observed, "split": split} if task == "completion" else {}
        if k is not None:
            extra["kept"] = {"folder": k.folder, "resumed_documents": k.resumed}
        if fallback:
            extra["fallback"] = fallback
        one_worker = update_seconds(left, 1, model.num_topics, spec.kernel)  # whether Dask is worth it
        remote = on_dask(one_worker)
        with compiling(f"{task} {spec.name}", notice=progress is not False) as compiled:
            if not remote:  # Dask workers load their own kernels (at start with --preload)
                _warm_up(shared, [items[d] for d in range(len(items)) if d not in done])
        t0 = time.perf_counter()
        where = {"seconds": one_worker, "what": what, "done": done,
                 "on_result": k.add if k is not None else None}
        if target is None:
            rows = run_tasks(_doc_task, shared, items, int(workers), bar, costs, **where)
            variances = [r[1] for r in rows]
            rows = [r[0] for r in rows]
            cost = planned
        else:
            deadline = time.time() + 3600 * (MAX_HOURS if max_hours is None else float(max_hours))
            outcomes = run_tasks(adaptive_doc_task, (*shared, *target, deadline), items, int(workers), bar,
                                 costs, **where)
            rows = [o[0] for o in outcomes]
            variances = [o[5] for o in outcomes]
            cost = float(sum(o[3] for o in outcomes))
            extra["adaptive"] = adaptive_summary(outcomes, *target)
    seconds = time.perf_counter() - t0
    run_log_prob = np.array(rows, dtype=np.float64).reshape(len(items), int(runs)).T
    run_rel_var = np.array(variances, dtype=np.float64).reshape(len(items), int(runs)).T
    doc_tokens = np.array([w.size - n for w, n, _ in items], dtype=np.int64)
    # what is computed, not the task's name: with nothing observed (completion at observed=0, or
    # documents too short to observe a token) every estimate is of P(w) (red team 6, F15)
    joint = all(n == 0 for _, n, _ in items)
    unbiased = spec.is_unbiased(resolved) and joint
    if spec.caution is not None:  # with a target: of the budgets the scored documents ended with
        ended = ([resolved] if target is None else
                 [{**resolved, **o[1]} for o, (w, n, _) in zip(outcomes, items, strict=True) if w.size > n])
        if said := sorted({c for p in ended if (c := spec.caution(p, np.asarray(model.alpha)))}):
            extra["caution"] = said[0]
    result = HeldoutResult(
        method=spec.name, params=resolved, run_log_prob=run_log_prob, doc_tokens=doc_tokens,
        seconds=seconds, compile_seconds=compiled.seconds, seed=int(seed), workers=int(workers),
        corpus=corpus.report(),
        model=model.name, task=task, site_updates=cost,
        sd=bootstrap_sd(run_log_prob, int(bootstrap), int(seed)), bootstrap=int(bootstrap),
        extra=extra, unbiased=unbiased, run_rel_var=run_rel_var if joint and spec.variance else None,
    )
    if check:
        def estimate(sub: Corpus, method: str, runs: int, **p: Any) -> HeldoutResult:
            ref_spec = get_method(method, task)
            return _estimate(model, sub, ref_spec, task, p, runs, int(seed) + 1, workers, 0, False,
                             observed, "first")

        def rerun(sub: Corpus) -> HeldoutResult:
            return _estimate(model, sub, spec, task, resolved, 2, int(seed) + 2, workers, 0, False,
                             observed, "first")

        result.extra["check"] = run_check(
            estimate, rerun, [w for w, _, _ in items], [n for _, n, _ in items], run_log_prob,
            int(check), int(seed), model.num_topics, DEFAULT_MAX_STATES, int(check_temperatures),
            model.vocab, unbiased)
    return result
