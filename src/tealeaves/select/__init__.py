"""Choosing the number of topics (`tl.select`, `tealeaves select`): split the documents
reproducibly into training and held-out parts, train LDA for every K and restart, evaluate every
model as `tl.evaluate` does (held-out log-likelihood by the default estimator, coherence over
the training part, diversity, exclusivity, predictive rank, automated intrusion, and the classic
K-selection metrics of `classic`), say which K each metric favours, whether the difference from
the runner-up is significant and which way the metric is known to err, and decide by the stated
rule of `rule`: the chosen K, every other K compared with it, and the Ks not separated from it.

Everything finished is kept in `out/` (the split, each trained model as our `.npz`, each model's
evaluation as JSON), each file written atomically, so an interrupted run resumes where it
stopped and nothing finished is recomputed. Models are spread over `workers` local processes (or
a Dask cluster, as every command's tasks are).

Trainers: `tomotopy` (collapsed Gibbs sampling with asymmetric alpha optimised every 10
iterations; log p(w | z) of up to 10 states after the first half of the iterations kept in the
model's metadata for Griffiths and Steyvers' metric; extra `tomotopy`), `gensim` (online
variational Bayes; extra `gensim`), `sklearn` (batch variational Bayes; extra `sklearn`)."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import math
import os
import re
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..coherence import DEFAULT_WINDOWS, topic_words
from ..corpus import Corpus
from ..datasets import read_corpus
from ..diagnostics.stability import stability
from ..errors import InputFileError, Interrupted, MethodError, shorten
from ..evaluate import DEFAULT_COHERENCE, EvaluateOptions, evaluate
from ..files import runfolder
from ..files.atomic import write_text
from ..heldout import get_method
from ..io import save_model
from ..io.common import require
from ..model import TopicModel
from ..output import numbers
from ..output.display import Display
from ..output.jsonout import json_safe
from ..topics import as_topics
from ..util.limits import MAX_HOURS, OPS_RATE, check_cost, check_float, check_int
from ..util.parallel import Progress, run_tasks
from .classic import (
    BIAS,
    CLASSIC,
    arun_2010,
    cao_juan_2009,
    deveaud_2014,
    fold_in,
    griffiths_2004,
    log_p_w_given_z,
)
from .rule import RULES, decide, disagreements, edge, interval_text, leans, represent
from .saved import read_evaluation, read_model

TRAINERS = ("tomotopy", "gensim", "sklearn")
SPLIT, RUN_FOLDERS = "split.json", ("models", "evals")  # a run folder's manifest, and its work
TEMPORARY = r"\.K\d+-r\d+\.(npz|json)\.\w+\.(npz|tmp)"  # files.atomic's temporary names of its work
COHERENCE_TOPN, DIVERSITY_TOPN = 10, 25  # the top words every model's coherence and diversity score
STABILITY_TOPN = 10  # the top words each restart keeps for the stability of its K
MODEL_KEY = "_model"  # a trained model handed back by a task when no --out folder keeps it
BETA = 0.01  # the topic-word prior every trainer uses (and Griffiths 2004's p(w | z) with it)
METRICS = {  # name in the table -> (row key, higher is better)
    "log-lik/token": ("per_token", True),
    "npmi": ("coherence.npmi", True),
    "umass": ("coherence.umass", True),
    "diversity": ("diversity", True),
    "exclusivity": ("exclusivity", True),
    "pred. rank": ("predictive_rank", False),
    "auto MP": ("auto_model_precision", True),
    "judge MP": ("judge_model_precision", True),  # with an LLM judge only (select(judge=...))
    "judge rating": ("judge_rating", True),
    **{name: (f"classic.{key}", higher) for key, (name, higher) in CLASSIC.items()},
}


def _value(row: dict[str, Any], key: str) -> float:
    v: Any = row
    for part in key.split("."):
        v = v.get(part) if isinstance(v, dict) else None
    return float("nan") if v is None else float(v)


def split(num_docs: int, holdout: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Training and held-out document indices (sorted), the held-out part a seeded random
    `holdout` fraction (at least one document each)."""
    if not 0 < holdout < 1:
        raise MethodError(f"holdout must be a fraction in (0, 1), got {holdout!r}")
    if num_docs < 2:
        raise MethodError(f"need at least 2 documents to split, got {num_docs}")
    n_test = min(num_docs - 1, max(1, round(holdout * num_docs)))
    perm = np.random.default_rng(np.random.SeedSequence([seed, 0x5E1])).permutation(num_docs)
    return np.sort(perm[n_test:]), np.sort(perm[:n_test])


def train(texts: Sequence[Sequence[str]], topics: int, trainer: str, iterations: int,
          seed: int, name: str) -> TopicModel:
    """An LDA model with `topics` topics trained on token lists."""
    docs = [list(t) for t in texts if len(t)]
    if trainer == "tomotopy":
        require("tomotopy", "tomotopy")
        import tomotopy as tp

        from ..io.tomotopy import from_tomotopy

        mdl = tp.LDAModel(k=topics, alpha=0.1, eta=BETA, seed=seed)
        for d in docs:
            mdl.add_doc(d)
        samples, burn_in, thin = _gibbs_schedule(iterations)
        mdl.train(burn_in, workers=1)
        lls = []
        for _ in range(samples):  # log p(w | z) of states after burn-in, for Griffiths and Steyvers 2004
            mdl.train(thin, workers=1)
            words = np.concatenate([np.asarray(d.words, np.int64) for d in mdl.docs])
            zs = np.concatenate([np.asarray(d.topics, np.int64) for d in mdl.docs])
            lls.append(log_p_w_given_z(words, zs, topics, len(mdl.vocabs), BETA))
        model = from_tomotopy(mdl, name=name)
        model.metadata["gibbs"] = {"log_p_w_given_z": lls, "burn_in": burn_in, "thin": thin}
        return model
    if trainer == "gensim":
        require("gensim", "gensim")
        from gensim.corpora import Dictionary
        from gensim.models import LdaModel

        from ..io.gensim import from_gensim

        dictionary = Dictionary(docs)
        bow = [dictionary.doc2bow(d) for d in docs]
        lda = LdaModel(bow, id2word=dictionary, num_topics=topics, alpha="auto", eta=BETA,
                       random_state=seed, passes=max(1, iterations // 50), iterations=100)
        return from_gensim(lda, name=name)
    if trainer == "sklearn":
        require("sklearn", "sklearn")
        from sklearn.decomposition import LatentDirichletAllocation
        from sklearn.feature_extraction.text import CountVectorizer

        from ..io.sklearn import from_sklearn

        vec = CountVectorizer(analyzer=lambda d: d)
        X = vec.fit_transform(docs)
        lda = LatentDirichletAllocation(n_components=topics, learning_method="batch",
                                        max_iter=max(10, iterations // 10), random_state=seed).fit(X)
        return from_sklearn(lda, vec, name=name)
    raise MethodError(f"unknown trainer {trainer!r} (known: {', '.join(TRAINERS)})")


def _gibbs_schedule(iterations: int) -> tuple[int, int, int]:
    """Samples, burn-in and thinning of the Gibbs states Griffiths and Steyvers' metric averages
    over: the first half of the iterations is burn-in, then up to 10 evenly spaced states."""
    burn_in = iterations // 2
    samples = min(10, iterations - burn_in)
    thin = (iterations - burn_in) // samples
    return samples, iterations - samples * thin, thin


# CPU seconds of each trainer's training, c + (a + b K) per token and pass (`train_seconds`: a call,
# then per token and pass, and per token, pass and topic), fitted by benchmarks/estimates.py
# (benchmarks/results/estimates.json "fit"; tests/test_doc_figures.py keeps them equal) on this
# project's 2-core machine
TRAIN_SECONDS = {"gensim": (0.0, 2.8e-05, 0.0), "sklearn": (0.0, 5e-06, 0.0),
                 "tomotopy": (0.0, 1e-07, 1.4e-09)}
FOLD_IN_ITERATIONS = 50  # fit_scores' EM iterations over the training documents (classic.fold_in)


def _passes(trainer: str, iterations: int) -> int:
    """Passes over the training tokens `train` makes: tomotopy's Gibbs sweeps, gensim's passes,
    scikit-learn's batch iterations."""
    return {"tomotopy": iterations, "gensim": max(1, iterations // 50),
            "sklearn": max(10, iterations // 10)}[trainer]


def train_seconds(texts: Sequence[Sequence[str]], topics: int, trainer: str, iterations: int) -> float:
    """Estimated CPU seconds of `train` (TRAIN_SECONDS per token, pass and topic)."""
    c, a, b = TRAIN_SECONDS[trainer]
    return c + _passes(trainer, iterations) * float(sum(map(len, texts))) * (a + b * topics)


def _plan_seconds(train: list[list[str]], test: list[list[str]], ks: list[int], restarts: int,
                  iterations: int, trainer: str, heldout_params: dict[str, Any],
                  coherence: Sequence[str] = DEFAULT_COHERENCE) -> float:
    """Estimated CPU seconds (one worker) of training and evaluating `restarts` models of every K in
    `ks`: training (`train_seconds`), the training likelihood and classic metrics (`fit_scores`:
    FOLD_IN_ITERATIONS over the training documents), then evaluate's stages as `evaluate.cost`
    prices them: held-out (by default left-to-right, 2 runs), coherence over the training
    documents, automated intrusion and the predictive metrics; once, the chosen model's per-topic
    diagnostics (theta's sweeps, as the predictive metrics', at the largest K)."""
    from ..evaluate.cost import counting_seconds, heldout_seconds, intrusion_seconds, predictive_seconds

    tokens = float(sum(map(len, train)))
    V = len({w for t in train for w in t})
    held_tokens = float(sum(map(len, test)))
    params = dict(heldout_params)
    spec = get_method(params.pop("method", "left-to-right"))
    runs = check_int("runs", params.pop("runs", 2), 1)
    resolved = spec.resolve({k: v for k, v in params.items() if k in spec.params})
    lengths = [len(t) for t in test]
    windows = {DEFAULT_WINDOWS.get(m) for m in coherence}

    def one(k: int) -> float:
        return (train_seconds(train, k, trainer, iterations)
                + FOLD_IN_ITERATIONS * tokens * k / OPS_RATE
                + heldout_seconds(spec, resolved, lengths, runs, k, 1)
                + sum(counting_seconds(tokens, w, k * COHERENCE_TOPN, "text", 1) for w in windows)
                + intrusion_seconds(k, V, tokens, "text", 1)
                + predictive_seconds(held_tokens, len(test), k, V, 1))

    chosen = predictive_seconds(held_tokens, len(test), max(ks), V, 1)  # the chosen model's diagnostics
    return restarts * sum(one(k) for k in ks) + chosen


def _check_plan(train: list[list[str]], test: list[list[str]], ks: list[int], restarts: int,
                iterations: int, workers: int, heldout_params: dict[str, Any],
                max_hours: float | None = None, trainer: str = "tomotopy",
                coherence: Sequence[str] = DEFAULT_COHERENCE) -> float:
    """Refuse, before training, a plan whose models would not fit in memory (K x (V + D) float64
    counts and topic-word matrices, three times over, per worker) or that would take longer than
    `max_hours` (`_plan_seconds`, spread over the workers). Returns the estimated seconds on one
    worker."""
    workers = check_int("workers", workers, 1)
    V, D = len({w for t in train for w in t}), len(train)
    if V < DIVERSITY_TOPN:
        raise MethodError(f"the training documents hold only {V} distinct word(s); select scores each "
                          f"model's top {DIVERSITY_TOPN} words (diversity) and needs at least that many")
    held = 3 * 8.0 * max(ks) * (V + D) * min(workers, len(ks) * restarts)
    check_cost(f"training LDA with up to {max(ks):,} topics over {V:,} words and {D:,} documents",
               nbytes=held, how="three float64 topics x (words + documents) matrices per worker")
    seconds = _plan_seconds(train, test, ks, restarts, iterations, trainer, heldout_params, coherence)
    check_cost(f"training and evaluating {len(ks) * restarts:,} models ({iterations:,} iterations each)",
               seconds=seconds / workers, max_hours=max_hours,
               how=f"{trainer} training and evaluate's stages at this machine's measured rates, "
                   f"{workers} worker(s)")
    return seconds


def _model_name(k: int, r: int) -> str:
    return f"K{k}-r{r}"


def fit_scores(model: TopicModel, texts: Sequence[Sequence[str]]) -> dict[str, Any]:
    """What a model says about its training documents: the training log-likelihood per token
    (proportions folded in, `classic.fold_in`; the decision rule's `best-train` ranks restarts by
    it) and the four classic metrics, each None with a note where it does not apply."""
    index = {w: i for i, w in enumerate(model.vocab or [])}
    rows, cols = [], []
    for d, t in enumerate(texts):
        ids = [index[w] for w in t if w in index]
        rows.extend([d] * len(ids))
        cols.extend(ids)
    rows_a, cols_a = np.asarray(rows, np.int64), np.asarray(cols, np.int64)
    key = rows_a * model.num_words + cols_a
    uniq, counts = np.unique(key, return_counts=True)
    r, c = uniq // model.num_words, uniq % model.num_words
    D = len(texts)
    theta, loglik = fold_in(model.phi, model.alpha, r, c, counts.astype(np.float64), D)
    lengths = np.bincount(r, weights=counts, minlength=D)
    classic: dict[str, float | None] = dict.fromkeys(CLASSIC)
    notes: dict[str, str] = {}
    if model.num_topics < 2:  # Arun's two normalised vectors are both [1] at K = 1: 0 for any model
        notes.update(dict.fromkeys(("arun_2010", "cao_juan_2009", "deveaud_2014"), "needs at least 2 topics"))
    else:
        classic["cao_juan_2009"] = cao_juan_2009(model.phi)
        classic["deveaud_2014"] = deveaud_2014(model.phi)
    if model.num_topics < 2:
        pass
    elif model.num_words >= model.num_topics and lengths.sum() > 0:
        classic["arun_2010"] = arun_2010(model.phi, theta, lengths)
    else:
        notes["arun_2010"] = "needs at least as many words as topics and a training token"
    gibbs = (model.metadata or {}).get("gibbs") or {}
    if gibbs.get("log_p_w_given_z"):
        classic["griffiths_2004"] = griffiths_2004(gibbs["log_p_w_given_z"])
    else:
        notes["griffiths_2004"] = ("n/a: no Gibbs samples were kept for this model (select keeps them "
                                   "for tomotopy; a model saved by an older version, gensim's and "
                                   "scikit-learn's have none)")
    train_per_token = float(loglik.sum() / counts.sum()) if counts.sum() else None
    return {"train_per_token": train_per_token, "classic": classic, "classic_notes": notes}


def _judged(judge: Any, model: TopicModel) -> dict[str, Any]:
    """An LLM judge's columns of one model (evaluate's, alone)."""
    from ..evaluate.judged import judge_models
    from ..evaluate.options import JUDGE_TASKS
    from ..util.stages import Stages

    got = judge_models(judge, [model], JUDGE_TASKS, Stages(["judge"], enabled=False))[model.name]
    return {**got["row"], "judge_notes": got["notes"]}


def _task(shared: tuple, item: tuple) -> dict[str, Any]:
    """Train (unless saved) and evaluate (unless saved) one model; returns its evaluation, and under
    "redone" what was saved but refused (`saved`: not what select writes, or another slot's) and
    done again."""
    train_texts, test_texts, reference, out, opts = shared
    k, r = item
    name = _model_name(k, r)
    eval_path = os.path.join(out, "evals", f"{name}.json") if out else None
    model_path = os.path.join(out, "models", f"{name}.npz") if out else None
    words = {w for t in train_texts for w in t}
    redone: list[str] = []

    def saved_model() -> TopicModel | None:
        if not (model_path and os.path.exists(model_path)):
            return None
        try:
            return read_model(model_path, name, k, words)
        except Exception as exc:  # noqa: BLE001 - a damaged or foreign file: train again
            redone.append(f"{shorten(str(exc), 300)}; trained again")
            return None

    if eval_path and os.path.exists(eval_path):
        try:
            saved = read_evaluation(eval_path, name, k, r, len(test_texts))
        except InputFileError as exc:
            saved = None
            redone.append(f"{shorten(str(exc), 300)}; evaluated again")
        if saved is not None:
            complete = "classic" in saved["row"] and "topic_words" in saved
            # evaluated before an LLM judge was asked for: its columns only are added
            unjudged = opts.get("judge") is not None and "judge_model_precision" not in saved["row"]
            if complete and not unjudged:
                return {**saved, "reused": "evaluation"}  # taken from `out` (select counts and pops it)
            model = saved_model()  # saved before these were kept: add them
            if model is not None:
                if not complete:
                    saved["row"].update(fit_scores(model, train_texts))
                    saved["topic_words"] = topic_words(model, STABILITY_TOPN)
                if unjudged:
                    saved["row"].update(_judged(opts["judge"], model))
                write_text(eval_path, json.dumps(json_safe(saved)), follow_link=False)
                return {**saved, "reused": "evaluation"}
            if "classic" in saved["row"] and not unjudged:  # no model file to take the top words from:
                return {**saved, "reused": "evaluation"}  # no stability for it
    t0 = time.perf_counter()
    model = saved_model()
    trained = model is None
    if model is None:
        model = train(train_texts, k, opts["trainer"], opts["iterations"],
                      opts["seed"] * 100_003 + k * 101 + r, name)
        if model_path:
            save_model(model, model_path, follow_link=False)
    train_seconds = time.perf_counter() - t0 if trained else None
    options = EvaluateOptions.of(coherence=tuple(opts["coherence"]), topn=COHERENCE_TOPN,
                                 diversity_topn=DIVERSITY_TOPN, compare_models="none", seed=opts["seed"],
                                 judge=opts.get("judge"), **opts["heldout_params"])
    res = evaluate([model], heldout=test_texts, reference=reference, options=options)
    row = {**res.rows[0], **fit_scores(model, train_texts)}
    out_doc = json_safe({"model": name, "topics": k, "restart": r, "row": row,
                         "doc_log_prob": res.heldout[name].doc_log_prob.tolist(),
                         "doc_tokens": res.heldout[name].doc_tokens.tolist(),
                         "topic_words": topic_words(model, STABILITY_TOPN),
                         "topic_coherence": res.topics[name]["coherence"],
                         "train_seconds": train_seconds, "eval_seconds": res.seconds})
    if eval_path:
        write_text(eval_path, json.dumps(out_doc), follow_link=False)
    if redone:
        out_doc = {**out_doc, "redone": redone}
    if not trained:
        out_doc = {**out_doc, "reused": "model"}
    if not out:  # no folder keeps the model: it comes back for the chosen K's per-topic diagnostics
        return {**out_doc, MODEL_KEY: model}
    return out_doc


@dataclass(repr=False)
class SelectionResult(Display):
    """Every model's evaluation (`evaluations`), per K the mean and sd over restarts of every
    metric (`per_k`), for each metric the K it favours, whether that K is significantly better
    than the runner-up and the direction the metric is known to err in (`choice`), the decision
    (`decision`: the chosen K by the stated rule, every other K compared with it, the Ks not
    separated from it; see `rule`), the metrics that favour another K and why (`disagreements`),
    and, once computed, the stability of each K's restarts (`stability`, one dict per K); where the
    chosen K lies in the grid (`edge`, `rule.edge`: {} inside it), the grid asked for and the Ks added
    by `extend` (`grid`), and the model that stands for the chosen K with its per-topic values
    (`chosen`: top words, coherence, stability, diagnostics)."""

    topics: list[int]
    restarts: int
    evaluations: list[dict[str, Any]]
    per_k: dict[str, dict[str, list[float]]]
    choice: dict[str, dict[str, Any]]
    params: dict[str, Any]
    seconds: float
    figures: list[str] = field(default_factory=list)
    decision: dict[str, Any] = field(default_factory=dict)
    disagreements: list[dict[str, Any]] = field(default_factory=list)
    stability: list[dict[str, Any]] = field(default_factory=list)
    edge: dict[str, Any] = field(default_factory=dict)
    grid: dict[str, Any] = field(default_factory=dict)
    chosen: dict[str, Any] = field(default_factory=dict)

    def table(self) -> str:
        shown = [m for m in METRICS if m in self.per_k]  # a result saved before a metric existed lacks it
        head = ["K", *shown]
        rows = []
        for i, k in enumerate(self.topics):
            cells = [str(k)]
            for m in shown:
                mean, sd = self.per_k[m]["mean"][i], self.per_k[m]["sd"][i]
                d = numbers.digits(METRICS[m][0])  # the report's rule too
                cells.append("-" if not math.isfinite(mean) else
                             f"{mean:.{d}f}" + (f" ± {sd:.{d}f}" if math.isfinite(sd) else ""))
            rows.append(cells)
        widths = [max(len(x) for x in col) for col in zip(head, *rows, strict=True)]
        lines = ["  ".join(c.rjust(w) for c, w in zip(cells, widths, strict=True))
                 for cells in [head, *rows]]
        lines.insert(1, "  ".join("-" * w for w in widths))
        return "\n".join(lines)

    def summary(self) -> str:
        lines = self.decision_lines()
        for m, c in self.choice.items():
            if c.get("k") is None or "runner_up" not in c:
                continue
            sig = "significantly" if c["significant"] else "not significantly"
            ref = self.decision.get("k") if self.decision.get("k") is not None else c["runner_up"]
            bias = (f"; known to favour {c['bias']} topics, and it does here" if c["k"] != ref
                    and leans(c.get("bias"), c["k"], ref) else "")
            lines.append(f"{m} favours K = {c['k']} ({sig} better than K = {c['runner_up']}: "
                         f"{c['why']}{bias})")
        lines += [f"* {e['model']}: automated intrusion: {e['row']['auto_note']}" for e in self.evaluations
                  if e["row"].get("auto_note")]
        lines += [v["text"] for v in (self.params.get("judge_agreement") or {}).values()]
        for s in self.stability:  # each K's restarts (tl.stability): its finding, said once
            said = s.get("finding_text") or "; ".join(f"{m}: {why}" for m, why in s["flagged"].items())
            lines.append(f"K = {s['topics']}: restarts' stability {s['score']:.2f} ({s['distance']}, top "
                         f"{s['topn']} words)" + (f": {said}" if said else ""))
        for side in ("few", "many"):  # the table's metrics by their known bias
            names = [m for m in METRICS if m in self.per_k and BIAS.get(m, ("neither",))[0] == side]
            if names:
                lines.append(f"known to favour {side} topics: {', '.join(names)}")
        return "\n".join(lines)

    def decision_lines(self) -> list[str]:
        """The decision first: the chosen K, every comparison, where the metrics disagree."""
        d = self.decision
        if not d:
            return []
        if d.get("k") is None:
            return [f"decision ({d['rule']}): {d['why']}"]
        lines = [f"decision ({d['rule']}): K = {d['k']}: {d['why']}"]
        for c in d["comparisons"]:
            verdict = "separated" if c["separated"] else "cannot be separated"
            lines.append(f"  K = {d['k']} - K = {c['k']}: {c['difference']:+.4f} nats per token, "
                         f"{interval_text(c, d.get('level', 0.95))}: {verdict}")
        if d.get("warning") and d["warning"] not in d["why"]:
            lines.append(f"  WARNING: {d['warning']}")
        if self.edge:
            lines.append(f"  EDGE OF THE GRID: {self.edge['message']}"
                         + ("" if self.grid.get("extend") or self.edge["status"] != "rising"
                            else " (or rerun with --extend N to add them)"))
        if self.grid.get("extend"):
            added = ", ".join(map(str, self.grid["added"])) or "none"
            lines.append(f"  grid extended (extend {self.grid['extend']}): K added: {added}; stopped: "
                         f"{self.grid['stopped']}")
        for g in self.disagreements:
            if g["known_bias"] == "neither":
                known = f", {g['why']}"
            elif g["expected"]:
                known = f", as it is known to do ({g['why']})"
            else:
                known = ""
            lines.append(f"  {g['metric']} favours K = {g['k']} ({g['side']} topics){known}")
        return lines

    def topic_lines(self) -> list[str]:
        """The chosen model's topics: number, top words (and stability among its K's restarts)."""
        c = self.chosen
        if not c or not c.get("words"):
            return []
        stab = c.get("stability")
        lines = [f"topics of {c['model']} ({c['why']}):"]
        for t, words in enumerate(c["words"]):
            s = f"  {stab[t]:.2f}" if stab and t < len(stab) and stab[t] is not None else ""
            lines.append(f"  {t:>3}{s}  {' '.join(words)}")
        if stab:
            lines.insert(1, "  (topic, stability among the restarts of its K, top words)")
        return lines

    def to_dict(self) -> dict[str, Any]:
        doc = {"task": "select", "topics": self.topics, "restarts": self.restarts,
               "per_k": self.per_k, "choice": self.choice, "decision": self.decision,
               "disagreements": self.disagreements, "params": self.params,
               "seconds": self.seconds, "figures": self.figures,
               "evaluations": [{k: v for k, v in e.items() if k not in ("doc_log_prob",)}
                               for e in self.evaluations]}
        if self.stability:
            doc["stability"] = self.stability
        if self.edge:
            doc["edge"] = self.edge
        if self.grid:
            doc["grid"] = self.grid
        if self.chosen:
            doc["chosen"] = self.chosen
        return json_safe(doc)

    _name = "SelectionResult"

    def _headline(self) -> list[tuple[str, Any]]:
        out: list[tuple[str, Any]] = [("K", ", ".join(map(str, self.topics))), ("restarts", self.restarts)]
        if self.decision.get("k") is not None:
            out.append((f"chosen K ({self.decision['rule']})", self.decision["k"]))
            if self.decision["tied"]:
                out.append(("not separated from it", ", ".join(map(str, self.decision["tied"]))))
        for m, c in self.choice.items():
            if c.get("k") is not None:
                out.append((f"{m} favours K", c["k"]))
        return out

    def _columns(self) -> tuple[str, dict[str, Any]]:
        cols: dict[str, Any] = {"K": self.topics}
        for m, v in self.per_k.items():
            cols[m] = v["mean"]
            cols[f"{m} sd"] = v["sd"]
        return "row", cols


def _heldout_choice(decision: dict[str, Any]) -> dict[str, Any]:
    """The held-out metric's choice is the decision rule's (`rule.decide`, the one paired bootstrap),
    its runner-up the K closest to it."""
    if decision.get("k") is None or not decision.get("comparisons"):
        return {"k": decision.get("k"), "significant": False}
    c = min(decision["comparisons"], key=lambda c: c["difference"])
    return {"k": decision["k"], "runner_up": c["k"], "significant": c["separated"],
            "why": f"{c['difference']:+.5f} nats per token, {interval_text(c, decision.get('level', 0.95))} "
                   f"({decision['rule']} rule)"}


def _choose(topics: list[int], evals: list[dict[str, Any]], per_k: dict, decision: dict[str, Any]
            ) -> dict[str, Any]:
    """For every metric the K it favours and whether it beats the runner-up significantly: held-out
    likelihood as the decision rule says (`_heldout_choice`), the others by their mean over restarts
    and Welch's t over restarts."""
    from scipy import stats

    out: dict[str, Any] = {}
    for m, (_, higher) in METRICS.items():
        if m not in per_k:
            continue
        if m == "log-lik/token":
            out[m] = _heldout_choice(decision)
            continue
        means = np.array(per_k[m]["mean"])
        ok = np.flatnonzero(np.isfinite(means))
        if ok.size < 2:  # a value at one K (or none) favours nothing: there is nothing to compare
            out[m] = {"k": None, "significant": False,
                      "why": f"a value at {'only one K' if ok.size else 'no K'}: nothing to compare"}
            continue
        order = ok[np.argsort(-means[ok] if higher else means[ok], kind="stable")]
        best, second = int(order[0]), int(order[1])
        key = METRICS[m][0]
        a, b = ([v for e in evals if e["topics"] == topics[i]
                 if math.isfinite(v := _value(e["row"], key))] for i in (best, second))
        if len(a) >= 2 and len(b) >= 2 and min(np.std(a), np.std(b)) > 0:
            p = float(stats.ttest_ind(a, b, equal_var=False).pvalue)
            significant = bool(p < 0.05)
            why = f"Welch's t over restarts, p = {p:.3g}"
        else:
            significant = False
            why = "no spread over restarts to test against"
        out[m] = {"k": topics[best], "runner_up": topics[second], "significant": significant, "why": why}
    for m, c in out.items():
        c["bias"], c["bias_why"] = BIAS.get(m, ("neither", "no known direction"))
    return out


def restart_stability(evals: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """For every K with at least two restarts, `tl.stability` of its restarts from their top
    STABILITY_TOPN words (average Jaccard after Hungarian matching; the trained models are not kept
    in memory), as dicts. Restarts whose evaluation was saved without top words are left out."""
    out = []
    for k in sorted({e["topics"] for e in evals}):
        group = [as_topics(e["topic_words"], e["model"]) for e in evals
                 if e["topics"] == k and e.get("topic_words")]
        if len(group) >= 2:
            out.append(stability(group, topn=STABILITY_TOPN).to_dict())
    return out


def select(corpus: Corpus | str | os.PathLike | Iterable[Sequence[str]],
           topics: Sequence[int] = (5, 10, 20, 50, 100), restarts: int = 3, holdout: float = 0.2,
           out: str | os.PathLike | None = None, trainer: str = "tomotopy", iterations: int = 500,
           coherence: Sequence[str] = DEFAULT_COHERENCE, seed: int = 0, workers: int = 1,
           progress: bool | None = None, tokenizer: str = "whitespace", encoding: str = "utf-8",
           rule: str = "best-train", extend: int = 0, max_hours: float | None = None, judge: Any = None,
           **heldout_params: Any) -> SelectionResult:
    """Train and evaluate LDA for every K in `topics` and restart (see the module notes). `out`
    keeps every finished step so an interrupted run resumes; `rule` is the decision rule
    (`rule.RULES`); `judge` (a `tl.Judge`) adds an LLM judge's word intrusion and ratings per model
    (columns "judge MP", "judge rating"); `heldout_params` go to the held-out estimator (for
    example particles=...). A chosen K at the edge of the grid is said (`result.edge`, `rule.edge`);
    with `extend` > 0, while the held-out likelihood still rises at the edge, up to `extend` further
    Ks are added one at a time (the grid's spacing continued, `rule.next_ks`), each only if the whole
    run's estimate stays within `max_hours` (default `util.limits.MAX_HOURS`, which the first plan is
    refused past)."""
    t0 = time.perf_counter()
    ks = sorted({int(k) for k in topics})
    if not ks or ks[0] < 1:
        raise MethodError(f"topics must be positive integers, got {list(topics)!r}")
    if isinstance(restarts, bool) or not isinstance(restarts, int) or restarts < 1:
        raise MethodError(f"restarts must be an integer >= 1, got {restarts!r}")
    if isinstance(iterations, bool) or not isinstance(iterations, int) or iterations < 1:
        raise MethodError(f"iterations must be an integer >= 1, got {iterations!r}")
    if trainer not in TRAINERS:
        raise MethodError(f"unknown trainer {trainer!r} (known: {', '.join(TRAINERS)})")
    if rule not in RULES:
        raise MethodError(f"unknown decision rule {rule!r} (known: {', '.join(RULES)})")
    extend = check_int("extend", extend, 0)
    limit = 3600 * (MAX_HOURS if max_hours is None else check_float("max_hours", max_hours, 0, low_open=True))
    texts = _texts(corpus, tokenizer, encoding)
    empty = sum(1 for t in texts if not t)
    texts = [t for t in texts if t]  # an empty line is no document to train on or score: counted
    out = os.fspath(out) if out is not None else None
    settings = json.loads(json.dumps(json_safe({"trainer": trainer, "iterations": iterations,
                                                "coherence": list(coherence),
                                                "heldout_params": heldout_params})))
    train_idx, test_idx = split(len(texts), holdout, seed)
    corpus_id = (corpus_hash(texts), _corpus_name(corpus))
    same_run = functools.partial(_same_run, out, test_idx, len(texts), settings, corpus_id)
    if out is not None:  # a folder of another run is refused before anything is touched
        runfolder.inspect(out, SPLIT, RUN_FOLDERS, same_run, "select")
    train_texts = [texts[i] for i in train_idx]
    test_texts = [texts[i] for i in test_idx]
    opts = {"trainer": trainer, "iterations": iterations, "coherence": list(coherence), "seed": seed,
            "heldout_params": heldout_params, "judge": judge}
    one_worker = _check_plan(train_texts, test_texts, ks, restarts, iterations, workers, heldout_params,
                             max_hours, trainer, list(coherence))
    manifest = {"documents": len(texts), "corpus": corpus_id[0], "corpus_name": corpus_id[1],
                "holdout": holdout, "seed": seed, "heldout": test_idx.tolist(), "settings": settings}

    def run(grid: list[int], seconds: float) -> list[dict[str, Any]]:
        plan = [(k, r) for k in grid for r in range(restarts)]
        bar = Progress(len(plan), "select: train and evaluate", enabled=progress)
        return run_tasks(_task, (train_texts, test_texts, train_texts, out, opts), plan, workers, bar,
                         [k for k, _ in plan],  # training and held-out cost grow with the topics
                         seconds, "select")

    claim = runfolder.claim(out, SPLIT, manifest, RUN_FOLDERS, same_run, TEMPORARY, "select") if out \
        is not None else contextlib.nullcontext()
    with _said_on_interrupt(out), claim as folder:
        evals = run(ks, one_worker)
        decision = decide(ks, evals, rule, seed)
        where = edge(ks, decision)
        spent = one_worker / workers  # the whole run's estimate, as max_hours counts it
        grid = {"asked": list(ks), "extend": extend, "added": [], "stopped": None}
        while extend:
            if not where or where["status"] != "rising":
                grid["stopped"] = (f"K = {decision.get('k')} lies inside the grid" if not where else
                                   "the held-out likelihood has levelled off at the edge of the grid"
                                   if where["status"] == "level" else "nothing to compare at the edge")
                break
            if len(grid["added"]) >= extend:
                grid["stopped"] = f"the {extend} extra K(s) allowed (extend) were added"
                break
            if not where["suggest"]:
                grid["stopped"] = "no K is left to try beyond the edge"
                break
            k_new = where["suggest"][0]
            cost = _plan_seconds(train_texts, test_texts, [k_new], restarts, iterations, trainer,
                                 heldout_params, list(coherence)) / workers
            if spent + cost > limit:
                grid["stopped"] = (f"K = {k_new} (about {cost / 3600:.2g} hours more) would take the run's "
                                   f"estimate past max_hours={limit / 3600:g}")
                break
            spent += cost
            evals += run([k_new], cost * workers)
            ks = sorted(ks + [k_new])
            grid["added"].append(k_new)
            decision = decide(ks, evals, rule, seed)
            where = edge(ks, decision)
        models = {e["model"]: e.pop(MODEL_KEY) for e in evals if MODEL_KEY in e}
        redone = [note for e in evals for note in e.pop("redone", [])]
        reused = [e.pop("reused", None) for e in evals]
        if folder is not None:
            folder.redone += redone
        params = {"holdout": holdout, "trainer": trainer, "iterations": iterations,
                  "coherence": list(coherence), "seed": seed, "out": out, "heldout_params": heldout_params,
                  "rule": rule, "empty_documents_left_out": empty, "max_hours": max_hours, "redone": redone,
                  "reused": {"evaluations": reused.count("evaluation"), "models": reused.count("model")}}
        if judge is not None:  # the judge's measured agreement with people, beside its columns
            from ..evaluate.judged import agreement
            from ..evaluate.options import JUDGE_TASKS

            params["judge_agreement"] = agreement(judge, JUDGE_TASKS)
        result = _result(ks, restarts, evals, len(texts), train_texts, test_texts, params,
                         time.perf_counter() - t0, where, grid, models, workers)
        if out:
            write_text(os.path.join(out, "selection.json"), json.dumps(result.to_dict()), follow_link=False)
    return result


@contextlib.contextmanager
def _said_on_interrupt(out: str | None) -> Iterator[None]:
    """Ctrl-C in the block, once `out` holds finished models: `Interrupted`, saying what it keeps
    (the folder is claimed inside the block, which removes it again when nothing finished)."""
    try:
        yield
    except KeyboardInterrupt:
        evals = os.path.join(out, RUN_FOLDERS[1]) if out is not None else ""
        done = [n for n in os.listdir(evals) if re.fullmatch(r"K\d+-r\d+\.json", n)] \
            if os.path.isdir(evals) else []
        if not done:
            raise
        raise Interrupted(f"{len(done)} trained model(s) and their evaluations kept in {out}", out,
                          "--out") from None


def _result(ks: list[int], restarts: int, evals: list[dict[str, Any]], documents: int, train_texts: list,
            test_texts: list, params: dict[str, Any], seconds: float, where: dict[str, Any] | None = None,
            grid: dict[str, Any] | None = None, models: dict[str, TopicModel] | None = None,
            workers: int = 1) -> SelectionResult:
    """The selection from every model's evaluation: per K each metric's mean and sd over restarts,
    the decision (`rule.decide`), each metric's choice, the grid's edge (`where`, `grid`: what
    `extend` added) and the chosen model's topics (`_chosen`; `models` the trained models no folder
    keeps); `params` as the run was asked."""
    per_k: dict[str, dict[str, list[float]]] = {}
    for m, (key, _) in METRICS.items():
        if m.startswith("judge") and not any(key in e["row"] for e in evals):
            continue  # a judge's columns only when one was asked for
        vals = [[_value(e["row"], key) for e in evals if e["topics"] == k] for k in ks]
        per_k[m] = {"mean": [float(np.nanmean(v)) if np.isfinite(v).any() else math.nan for v in vals],
                    "sd": [float(np.nanstd(v, ddof=1)) if np.isfinite(v).sum() > 1 else math.nan
                           for v in vals],
                    "values": vals}
    decision = decide(ks, evals, params["rule"], params["seed"])
    choice = _choose(ks, evals, per_k, decision)
    params = {"holdout": params["holdout"], "documents": documents, "training_documents": len(train_texts),
              "heldout_documents": len(test_texts), **{k: v for k, v in params.items() if k != "holdout"},
              "heldout_corpus": heldout_report(train_texts, test_texts)}
    stab = restart_stability(evals)
    return SelectionResult(ks, restarts, evals, per_k, choice, params, seconds,
                           decision=decision, disagreements=disagreements(decision, choice, BIAS),
                           stability=stab, edge=where, grid=grid,
                           chosen=_chosen(decision, evals, models or {}, params["out"], train_texts,
                                          test_texts, stab, params["seed"], workers, params["redone"]))


def _chosen(decision: dict[str, Any], evals: list[dict[str, Any]], models: dict[str, TopicModel],
            out: str | None, train_texts: list[list[str]], test_texts: list[list[str]],
            stab: list[dict[str, Any]], seed: int, workers: int, redone: list[str]) -> dict[str, Any]:
    """The model that stands for the chosen K (its restart by the rule; under "mean", the restart best
    by training likelihood) for the per-topic table: its top words, per-topic coherence, stability
    among its K's restarts and its per-topic diagnostics on the held-out documents (the model from
    `out/models`, or as its task handed it back). A saved model is used only when it is its slot's
    (`saved.read_model`: K topics, the training documents' words) and its top words are those of its
    saved evaluation; otherwise no diagnostics, and a note in `redone` says why."""
    k = decision.get("k")
    if k is None:
        return {}
    same = [e for e in evals if e["topics"] == k]
    restart = decision.get("restart", {}).get(str(k))
    if not isinstance(restart, int):
        restart = represent(same, "best-train")[1]
    e = next((e for e in same if e["restart"] == restart), same[0])
    name = e["model"]
    doc: dict[str, Any] = {"model": name, "k": k, "restart": e["restart"],
                           "why": (f"restart {e['restart']} of K = {k}: "
                                   + ("the restart the decision rule took" if decision.get("rule") != "mean"
                                      else "the best by training likelihood (the rule took the mean)")),
                           "words": e.get("topic_words"), "coherence": e.get("topic_coherence") or {}}
    doc["stability"] = next((g["per_topic"].get(name) for g in stab if g.get("topics") == k), None)
    doc = {key: v for key, v in doc.items() if v is not None}
    model = models.get(name)
    if model is None and out and os.path.exists(path := os.path.join(out, "models", f"{name}.npz")):
        try:
            model = read_model(path, name, k, {w for t in train_texts for w in t})
            if e.get("topic_words") is not None and topic_words(model, STABILITY_TOPN) != e["topic_words"]:
                raise InputFileError(f"{path}: its top words are not those of its saved evaluation "
                                     f"(evals/{name}.json)")
        except Exception as exc:  # noqa: BLE001 - a damaged, swapped or foreign file: no diagnostics
            model = None
            doc["diagnostics_note"] = f"{shorten(str(exc), 300)}: no diagnostics"
            redone.append(f"{shorten(str(exc), 300)}; the chosen model's diagnostics left out")
            return doc
    if model is None:
        doc["diagnostics_note"] = "the model was not kept (no --out folder holds it): no diagnostics"
        return doc
    from ..diagnostics import diagnostics

    heldout = Corpus.from_tokens(test_texts, list(model.vocab), "held-out documents")
    doc["diagnostics"] = diagnostics(model, heldout, seed=seed, workers=workers).to_dict()
    return doc


def heldout_report(train_texts: Sequence[Sequence[str]],
                   test_texts: Sequence[Sequence[str]]) -> dict[str, Any]:
    """The corpus report (`Corpus.report`) of the held-out documents on the training documents'
    words, which are the trained models' vocabulary: a held-out word never seen in training is
    dropped from every model's held-out likelihood, and counted here."""
    vocab = sorted({w for t in train_texts for w in t})
    return Corpus.from_tokens(test_texts, vocab, "held-out documents").report()


def _texts(corpus: Any, tokenizer: str, encoding: str) -> list[list[str]]:
    if isinstance(corpus, str | os.PathLike):
        if os.fspath(corpus) == "sotu":
            from ..datasets import sotu

            s = sotu()
            corpus = Corpus.from_word_ids(list(s.train) + list(s.heldout), s.train.vocab, "sotu")
        else:
            corpus = read_corpus(corpus, tokenizer=tokenizer, encoding=encoding)
    if isinstance(corpus, Corpus):
        if corpus.vocab is None:
            raise MethodError("select needs words: a Corpus with a vocabulary, text, or token lists")
        return [[corpus.vocab[i] for i in corpus[d]] for d in range(len(corpus))]
    return [[str(t) for t in doc] for doc in corpus]


def corpus_hash(texts: Sequence[Sequence[str]]) -> str:
    """`sha256:...` of the documents' tokens: which corpus a `select --out` folder was made from."""
    h = hashlib.sha256()
    for t in texts:
        h.update(json.dumps(list(t)).encode("utf-8") + b"\n")
    return "sha256:" + h.hexdigest()


def _corpus_name(corpus: Any) -> str:
    if isinstance(corpus, str | os.PathLike):
        return os.fspath(corpus)
    return getattr(corpus, "name", None) or "documents given in Python"


def _same_run(out: str, test_idx: np.ndarray, num_docs: int, settings: dict[str, Any],
              corpus: tuple[str, str], saved: dict[str, Any]) -> None:
    """Refuse the run folder `out` whose split.json (`saved`) is another run's: another corpus
    (hash, name), held-out documents, number of documents or settings that make each saved model
    and evaluation (trainer, iterations, measures, held-out parameters; a file saved before the
    corpus or settings were recorded is trusted on them)."""
    kept_hash = saved.get("corpus")
    if isinstance(kept_hash, str) and kept_hash != corpus[0]:
        raise MethodError(f"{out} holds models of another corpus ({saved.get('corpus_name')}, "
                          f"{kept_hash[:19]}...), not of {corpus[1]} ({corpus[0][:19]}...); "
                          "use another --out directory")
    if saved.get("heldout") != test_idx.tolist() or saved.get("documents") != num_docs:
        raise MethodError(f"{out} holds a run with another corpus, holdout or seed; use another "
                          "--out directory")
    kept = saved.get("settings")
    if isinstance(kept, dict) and kept != settings:
        diff = ", ".join(f"{k} {kept.get(k)!r} (now {v!r})" for k, v in settings.items()
                         if kept.get(k) != v)
        raise MethodError(f"{out} holds models and evaluations made with other settings: {diff}; "
                          "use another --out directory or the same settings")


__all__ = ["select", "SelectionResult", "split", "train", "fit_scores", "TRAINERS", "METRICS", "RULES"]
