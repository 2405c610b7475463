"""Why the Chib-style estimator is low at small alpha, and the range where its claim holds (red
team 6, F2: at alpha <= 1e-6 the mean of exp(estimate - exact) over runs was 0.757 +- 0.033).

`chib` is algorithm 2 of Wallach et al. (2009) with the Murray & Salakhutdinov (2009) proposal:
P-hat = P(w, z*) / ((1/S) sum_s T(z* <- z^(s))), with s uniform, z^(s) ~ T~(. <- z*) and the
rest of the chain run forward and backward from z^(s). E[P-hat] = P(w) exactly, for any z*
(the identity needs only that T leaves P(z | w) invariant and T~ is its reversal). But at small
alpha the posterior over z has separate modes (roughly: which topics the document uses; each
further topic costs a factor of about alpha_t), a Gibbs sweep leaves its mode with probability of
order alpha, and the chain started at z* stays in z*'s mode: (1/S) sum_s T(z* <- z^(s)) is then
about P(z* | w, that mode), and P-hat about P(w) P(mode of z* | w). The expectation is kept by
rare runs whose chain leaves the mode, worth about 1/alpha times more: at small alpha no feasible
number of runs sees them, so the mean of the runs is low by the posterior mass outside z*'s mode,
and the runs' spread does not show it. z* is found from the sequential initialisation, whose
first tokens pick the mode, so z* is often not even in the most probable one.

Parts:
- `tiny`: 20 tiny random models (as tests/conftest.random_tiny: T 2-5, N 1-12, asymmetric alpha),
  alpha rescaled to a mean alpha_t of 0.1, 0.03, 0.01, 0.001 and 1e-6 (and as drawn, a mean of
  0.17 to 2.5); S = 3, 30 and 300 (iterations 10); 2,000 runs: the cases whose mean of
  P-hat / P is more than 4 standard errors from 1.
- `mechanism`: mean alpha_t 1e-6, S = 1000, 400 runs: the share of runs whose estimate is
  log P(w, z) of a one-topic z (every token in one topic; computed by formula, not by tealeaves)
  to 1e-4 nats, and of those, the share whose topic is the most probable one.

    python experiments/chib_small_alpha.py [--only tiny] [--only mechanism]

Writes experiments/results/chib_small_alpha.json and docs/chib_small_alpha.md.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time

import numpy as np
from scipy.special import gammaln

import tealeaves as tl

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results", "chib_small_alpha.json")
PAGE = os.path.join(HERE, "..", "docs", "chib_small_alpha.md")
CASES = range(20)
ALPHAS = [None, 0.1, 0.03, 0.01, 0.001, 1e-6]  # mean alpha_t; None: as drawn
CHAINS = [3, 30, 300]
RUNS = 2000


def tiny_case(seed: int):
    """As tests/conftest.random_tiny(1000 + seed)."""
    rng = np.random.default_rng(1000 + seed)
    T = int(rng.integers(2, 6))
    N = int(rng.integers(1, 13))
    phi = rng.dirichlet(np.full(15, 0.3), size=T)
    alpha = rng.gamma(1.0, 1.0, size=T) * rng.uniform(0.2, 2.0) + 0.02
    model = tl.TopicModel(phi, alpha)
    return model, tl.synthetic.generate(model, 1, N, seed=rng)


def scaled(model: tl.TopicModel, mean: float | None) -> tl.TopicModel:
    """The model with alpha rescaled to mean alpha_t = `mean` (its shape kept)."""
    return model if mean is None else model.with_params(alpha=model.alpha / model.alpha.mean() * mean)


def ratios(model, docs, S: int, runs: int, seed: int) -> np.ndarray:
    """P-hat / P of each run (runs x documents)."""
    exact = tl.heldout(model, docs, method="exact").doc_log_prob
    res = tl.heldout(model, docs, method="chib", chain_length=S, iterations=10, runs=runs, seed=seed,
                     bootstrap=0)
    return np.exp(res.run_log_prob - exact)


def summary(x: np.ndarray) -> dict:
    mean, se = float(x.mean()), float(x.std(ddof=1) / math.sqrt(x.size))
    return {"mean": mean, "se": se, "off": bool(abs(mean - 1.0) > 4 * se + 1e-12), "max": float(x.max()),
            "above_1_5": float((x > 1.5).mean())}


def tiny_part() -> list[dict]:
    rows = []
    for S in CHAINS:
        for mean in ALPHAS:
            cases = []
            for seed in CASES:
                model, docs = tiny_case(seed)
                x = ratios(scaled(model, mean), docs, S, RUNS, seed)[:, 0]
                cases.append({"case": seed, **summary(x)})
            row = {"S": S, "alpha_mean": mean, "runs": RUNS, "cases": cases,
                   "off": [c["case"] for c in cases if c["off"]],
                   "mean_of_means": float(np.mean([c["mean"] for c in cases])),
                   "least_mean": float(min(c["mean"] for c in cases))}
            rows.append(row)
            print({k: v for k, v in row.items() if k != "cases"}, flush=True)
    return rows


def one_topic_joint(model: tl.TopicModel, words: np.ndarray) -> np.ndarray:
    """log P(w, z) for each z that puts every token in one topic t: sum_i log phi[t, w_i] plus
    eq. (5), log Gamma(A) - log Gamma(A + N) + log Gamma(alpha_t + N) - log Gamma(alpha_t)."""
    a, N = model.alpha, words.size
    A = a.sum()
    return np.array([np.log(model.phi[t, words]).sum() + gammaln(A) - gammaln(A + N) + gammaln(a[t] + N)
                     - gammaln(a[t]) for t in range(a.size)])


def mechanism_part() -> dict:
    stuck = in_best = total = 0
    per_case = []
    for seed in CASES:
        model, docs = tiny_case(seed)
        model = scaled(model, 1e-6)
        words = np.asarray(docs[0])
        if words.size < 2:  # one token: exact, nothing to show
            continue
        res = tl.heldout(model, docs, method="chib", chain_length=1000, iterations=10, runs=400, seed=seed,
                         bootstrap=0)
        est = res.run_log_prob[:, 0]
        joint = one_topic_joint(model, words)
        gap = np.abs(est[:, None] - joint[None, :])
        hit = gap.min(axis=1) < 1e-4
        best = hit & (gap.argmin(axis=1) == joint.argmax())
        stuck, in_best, total = stuck + int(hit.sum()), in_best + int(best.sum()), total + est.size
        per_case.append({"case": seed, "tokens": int(words.size), "one_topic": float(hit.mean()),
                         "most_probable": float(best.mean())})
    out = {"runs": total, "one_topic": stuck / total, "most_probable_of_those": in_best / max(stuck, 1),
           "cases": per_case}
    print(out, flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", action="append", choices=["tiny", "mechanism"])
    args = ap.parse_args()
    out = json.load(open(RESULTS)) if args.only and os.path.exists(RESULTS) else {}
    parts = args.only or ["tiny", "mechanism"]
    t0 = time.process_time()
    if "tiny" in parts:
        out["tiny"] = tiny_part()
    if "mechanism" in parts:
        out["mechanism"] = mechanism_part()
    out["cpu_seconds"] = time.process_time() - t0
    os.makedirs(os.path.dirname(RESULTS), exist_ok=True)
    with open(RESULTS, "w") as fh:
        json.dump(out, fh, indent=1)
    with open(PAGE, "w") as fh:
        fh.write(markdown(out))
    print(f"wrote {os.path.normpath(PAGE)}")


def _alpha(mean: float | None) -> str:
    return "as drawn (0.17 to 2.5)" if mean is None else f"{mean:g}"


def markdown(out: dict) -> str:
    """docs/chib_small_alpha.md from the results."""
    lines = ["# The Chib-style estimator at small α", "",
             "`python experiments/chib_small_alpha.py` (red team 6, F2). `chib` is algorithm 2 of Wallach "
             "et al. (2009) with the Murray & Salakhutdinov (2009) proposal: P̂ = P(w, z\\*) / "
             "((1/S) Σ_s T(z\\* ← z^(s))), the chain started at z\\*. E[P̂] = P(w) exactly, for any z\\*. "
             "But at small α the posterior over z has separate modes (roughly, which topics the document "
             "uses: each further topic costs a factor of about α_t), a Gibbs sweep leaves its mode with "
             "probability of order α, and the chain stays in z\\*'s mode. Then the denominator is about "
             "P(z\\* | w, that mode) and P̂ about P(w) × P(mode of z\\* | w). The expectation is kept by "
             "rare runs whose chain leaves the mode, worth about 1/α times more; at small α no feasible "
             "number of runs sees them, so the mean of the runs is low by the posterior mass outside "
             "z\\*'s mode, and the runs' spread does not show it. So tealeaves calls `chib` unbiased "
             "(it is), and warns when the model's mean α_t is below 0.1, the range measured below.", ""]
    if "tiny" in out:
        lines += ["## Tiny models against exact values", "",
                  f"20 random models (T 2–5, N 1–12, asymmetric α, as the unbiasedness tests draw them), "
                  f"α rescaled to the mean α_t shown; {out['tiny'][0]['runs']:,} runs of `chib` (iterations "
                  "10) per model. \"Off\": models whose mean of P̂/P is more than 4 standard errors from 1 "
                  "(the unbiasedness tests' rule); then the mean over the 20 models of that mean, and the "
                  "least.", "",
                  "| chain length S | mean α_t | models off | mean of P̂/P | least |", "|---|---|---|---|---|"]
        for r in out["tiny"]:
            lines.append(f"| {r['S']:,} | {_alpha(r['alpha_mean'])} | {len(r['off'])} of 20 | "
                         f"{r['mean_of_means']:.3f} | {r['least_mean']:.3f} |")
        lines += ["", "A mean of P̂/P well above 1 is one of the rare large runs seen among the 2,000: they "
                  "keep the expectation at P(w) and are why the other models' means are low.", ""]
    if "mechanism" in out:
        m = out["mechanism"]
        lines += ["## Why", "",
                  f"At mean α_t 1e-6 (S = 1,000, 400 runs per model, the models with at least 2 tokens), "
                  f"{m['one_topic']:.0%} of {m['runs']:,} runs returned exactly (to 1e-4 nats) log P(w, z) "
                  "of a z that puts every token in one topic, computed here by formula: the chain never left "
                  f"z\\*, so P̂ = P(w, z\\*) = P(w) P(z\\* | w). {m['most_probable_of_those']:.0%} of "
                  "those z\\* were the most probable such z: the sequential initialisation's first tokens "
                  "pick the mode, and neither the Gibbs sweeps nor the climb leave it.", ""]
    lines += ["## What follows", ""]
    if "tiny" in out:
        high = [r for r in out["tiny"] if r["alpha_mean"] is None or r["alpha_mean"] >= 0.1]
        low = [r for r in out["tiny"] if r["alpha_mean"] is not None and r["alpha_mean"] < 0.1]
        lines.append(
            f"- At a mean α_t of 0.1 and above (as drawn, and rescaled to 0.1), "
            f"{sum(len(r['off']) for r in high)} of {20 * len(high)} (model, S) cases were off, the least "
            f"mean {min(r['least_mean'] for r in high):.3f}; below 0.1, {sum(len(r['off']) for r in low)} of "
            f"{20 * len(low)}, the least mean {min(r['least_mean'] for r in low):.3f}. "
            "`tests/test_unbiased.py` checks `chib` against exact values at α as drawn.")
    lines += ["- Below a mean α_t of 0.1 every `chib` result carries the warning (`res.note`, `res.caution`, "
              "JSON `caution`, a line under the table): the estimate may be low by the posterior mass "
              "outside z\\*'s mode, which more runs and their spread do not reveal; use `left-to-right` or "
              "`ais`, or cross-check (`check=K`).", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
