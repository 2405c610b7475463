"""How often does each candidate 95% interval of a comparison's per-token difference cover the
POPULATION per-token difference, with 5, 10 and 30 documents? (issue 21 point 4: the measurement
behind `CompareResult.interval("population")` and `POPULATION_MIN_DOCUMENTS`.)

Two populations whose every document has an exact log P(w | A) - log P(w | B) (dynamic
programming, `tl.heldout(method="exact")`); the population difference is sum d / sum n over all
of them:
- `sotu`: A = sotu-20-asym, B = sotu-20-sym; 600 held-out State of the Union paragraphs, each cut
  to its first 2-6 tokens (uniformly at random);
- `synthetic`: 3 topics, 40 words; B is A with perturbed topics and a symmetric alpha; 2,000
  documents drawn from a third model with log-normal lengths (3-300 tokens), a skewed population.
Each replication draws n documents without replacement and computes every candidate on the exact
per-document differences (document sampling only): the percentile bootstrap over documents
(tealeaves' interval before issue 21), BCa, the studentized bootstrap (bootstrap-t), the ratio
(delta-method) t interval and a t interval with the jackknife variance. Then, on `sotu`, with
estimator noise: `tl.compare` (Ratio-AIS, defaults) and `method="difference"` (left-to-right, 2
runs) are run once on every population document, and each replication takes the estimates of its
documents; the result's own intervals are checked: the population one against the population
difference, the one about these documents against their exact difference, and the per-document
ones against each document's.

    python experiments/compare_small_n.py [--replications 2000]

Writes experiments/results/compare_small_n.json and docs/compare_small_n.md.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time

import numpy as np

import tealeaves as tl
from tealeaves import datasets
from tealeaves.compare import intervals as iv
from tealeaves.compare.result import CompareResult, DirectionEstimate, bootstrap_over_chains

HERE = os.path.dirname(os.path.abspath(__file__))
SIZES = (5, 10, 30)
CANDIDATES = ("percentile bootstrap (before)", "BCa bootstrap", "bootstrap-t", "ratio t (delta method)",
              "jackknife t")
CHOSEN = "jackknife t"
NOMINAL = 0.95
SE_MARGIN = 3  # coverage "holds" when within this many binomial standard errors of 95%, or above


def exact_diff(a: tl.TopicModel, b: tl.TopicModel, corpus: tl.Corpus) -> np.ndarray:
    exact = [tl.heldout(m, corpus, method="exact").doc_log_prob for m in (a, b)]
    return exact[0] - exact[1]


def sotu_population(size: int = 600) -> tuple[tl.TopicModel, tl.TopicModel, tl.Corpus]:
    held = datasets.sotu().heldout
    rng = np.random.default_rng(21)
    pick = rng.permutation([i for i in range(len(held)) if len(held[i]) >= 2])[:size]
    docs = [held[i][: rng.integers(2, 7)] for i in pick]
    corpus = tl.Corpus.from_word_ids(docs, vocab=held.vocab)
    return datasets.sotu_model("sotu-20-asym"), datasets.sotu_model("sotu-20-sym"), corpus


def synthetic_population(size: int = 2000) -> tuple[tl.TopicModel, tl.TopicModel, tl.Corpus]:
    rng = np.random.default_rng(2121)
    K, V = 3, 40
    vocab = [f"w{i}" for i in range(V)]
    phi_a = rng.dirichlet(np.full(V, 0.1), K)
    phi_b = 0.7 * phi_a + 0.3 * rng.dirichlet(np.full(V, 0.3), K)
    phi_c = 0.5 * phi_a + 0.5 * rng.dirichlet(np.full(V, 0.1), K)
    a = tl.TopicModel(phi_a, np.array([0.1, 0.3, 0.8]), vocab=vocab, name="A")
    b = tl.TopicModel(phi_b, np.full(K, 0.4), vocab=vocab, name="B")
    lengths = np.clip(np.round(rng.lognormal(3.0, 1.0, size)), 3, 300).astype(int)
    docs = []
    for n in lengths:
        theta = rng.dirichlet(np.full(K, 0.2))
        z = rng.choice(K, n, p=theta)
        docs.append(np.array([rng.choice(V, p=phi_c[k]) for k in z]))
    return a, b, tl.Corpus.from_word_ids(docs, vocab=vocab)


def candidates(d: np.ndarray, n: np.ndarray, rng: np.random.Generator, resamples: int) -> list:
    return [iv.percentile(d, n, rng, resamples), iv.bca(d, n, rng, resamples),
            iv.bootstrap_t(d, n, rng, resamples), iv.ratio_t(d, n), iv.jackknife_t(d, n)]


def exact_coverage(name: str, d: np.ndarray, n: np.ndarray, reps: int, resamples: int) -> list[dict]:
    mu = d.sum() / n.sum()
    rows = []
    for size in SIZES:
        rng = np.random.default_rng([size, 7])
        hits, widths = np.zeros(len(CANDIDATES)), np.zeros(len(CANDIDATES))
        for _ in range(reps):
            idx = rng.choice(d.size, size, replace=False)
            for k, (lo, hi) in enumerate(candidates(d[idx], n[idx], rng, resamples)):
                hits[k] += lo <= mu <= hi
                widths[k] += hi - lo
        for k, c in enumerate(CANDIDATES):
            rows.append({"population": name, "noise": "exact values", "documents": size, "interval": c,
                         "coverage": hits[k] / reps, "mean_width": widths[k] / reps, "replications": reps})
        print(name, size, {c: round(h / reps, 3) for c, h in zip(CANDIDATES, hits, strict=True)}, flush=True)
    return rows


def subset(res: CompareResult, idx: np.ndarray, resamples: int) -> CompareResult:
    """The comparison restricted to the documents `idx` (chains and runs kept, sds recomputed)."""
    dirs = {}
    for est in (res.forward, res.reverse):
        if est is not None:
            e = DirectionEstimate(est.direction, est.start_log_weight[:, idx], est.path_log_weight[:, idx],
                                  est.log_scale[idx])
            e.sd = bootstrap_over_chains(e.start_log_weight, e.path_log_weight, e.sign, resamples, res.seed)
            dirs[est.direction] = e
    runs = {k: getattr(res, k)[:, idx] for k in ("run_log_prob_a", "run_log_prob_b")
            if getattr(res, k) is not None}
    return CompareResult(res.method, res.params, res.model_a, res.model_b, res.doc_log_ratio[idx],
                         res.doc_tokens[idx], math.nan, 0.0, res.seed, 1, {}, forward=dirs.get("forward"),
                         reverse=dirs.get("reverse"), bootstrap=resamples, **runs)


def noisy_coverage(label: str, res: CompareResult, d: np.ndarray, n: np.ndarray, reps: int,
                   resamples: int) -> list[dict]:
    mu = d.sum() / n.sum()
    rows = []
    for size in SIZES:
        rng = np.random.default_rng([size, 11])
        pop = docs = doc_hits = 0
        width = 0.0
        for _ in range(reps):
            idx = rng.choice(d.size, size, replace=False)
            sub = subset(res, idx, resamples)
            lo, hi = sub.per_token_interval("population")
            pop += lo <= mu <= hi
            width += hi - lo
            lo, hi = sub.per_token_interval("documents")
            docs += lo <= d[idx].sum() / n[idx].sum() <= hi
            dlo, dhi = sub.document_intervals()
            doc_hits += int(((dlo <= d[idx]) & (d[idx] <= dhi)).sum())
        rows.append({"population": "sotu", "noise": label, "documents": size,
                     "interval": CHOSEN, "coverage": pop / reps, "mean_width": width / reps,
                     "documents_interval_coverage": docs / reps,
                     "document_interval_coverage": doc_hits / (reps * size), "replications": reps})
        print(label, size, rows[-1], flush=True)
    return rows


CRITERION = (f"coverage >= 95% less {SE_MARGIN} binomial standard errors of its replications, on every "
             "population, at that size and above")


def holds(coverage: float, replications: int) -> bool:
    """Coverage at least 95% less SE_MARGIN binomial standard errors of a 95% coverage over
    `replications` (3 SE: about 1.2 points at 3,000 replications, 1.7 at 1,500)."""
    return coverage >= NOMINAL - SE_MARGIN * math.sqrt(NOMINAL * (1 - NOMINAL) / replications)


def minimum_documents(rows: list[dict], interval: str) -> int | None:
    """The smallest size from which `interval` holds at every larger measured size, everywhere."""
    ok = [all(holds(r["coverage"], r["replications"]) for r in rows
              if r["interval"] == interval and r["documents"] >= size) for size in SIZES]
    return next((size for size, good in zip(SIZES, ok, strict=True) if good), None)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--replications", type=int, default=2000)
    ap.add_argument("--resamples", type=int, default=1000)
    args = ap.parse_args()
    t0 = time.perf_counter()
    rows, pops = [], {}
    for name, build in (("sotu", sotu_population), ("synthetic", synthetic_population)):
        a, b, corpus = build()
        d, n = exact_diff(a, b, corpus), corpus.lengths.astype(float)
        pops[name] = {"models": [a.name, b.name], "documents": int(d.size), "tokens": int(n.sum()),
                      "per_token_difference": float(d.sum() / n.sum()),
                      "doc_difference_sd": float(d.std(ddof=1)), "mean_length": float(n.mean())}
        rows += exact_coverage(name, d, n, args.replications, args.resamples)
        if name == "sotu":
            noisy_reps = args.replications // 2
            ratio = tl.compare(a, b, corpus, seed=5)
            rows += noisy_coverage("Ratio-AIS (defaults)", ratio, d, n, noisy_reps, args.resamples)
            diff = tl.compare(a, b, corpus, method="difference", chains=2, seed=5)
            label = "difference, left-to-right, 2 runs"
            rows += noisy_coverage(label, diff, d, n, noisy_reps, args.resamples)
    out = {"sizes": list(SIZES), "populations": pops, "rows": rows, "chosen": CHOSEN,
           "minimum_documents": minimum_documents(rows, CHOSEN),
           "criterion": CRITERION,
           "seconds": time.perf_counter() - t0}
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    with open(os.path.join(HERE, "results", "compare_small_n.json"), "w") as fh:
        json.dump(out, fh, indent=1)
    path = os.path.join(HERE, "..", "docs", "compare_small_n.md")
    with open(path, "w") as fh:
        fh.write(markdown(out))
    print(f"wrote {os.path.normpath(path)}; minimum documents {out['minimum_documents']}")


def markdown(out: dict) -> str:
    pops = out["populations"]
    lines = ["# Comparison intervals with few documents", "",
             "`python experiments/compare_small_n.py`: how often each 95% interval of the per-token "
             "difference log P(w|A) − log P(w|B) covers the **population** per-token difference "
             "(Σd / Σn over every document of a population with exact values), drawing 5, 10 or 30 "
             "documents without replacement.", "",
             "| population | documents | tokens | mean length | per-token difference "
             "| sd of d per document |",
             "|---|---|---|---|---|---|"]
    for name, p in pops.items():
        lines.append(f"| {name} ({' vs '.join(p['models'])}) | {p['documents']} | {p['tokens']} | "
                     f"{p['mean_length']:.1f} | {p['per_token_difference']:+.4f} | "
                     f"{p['doc_difference_sd']:.3f} |")
    lines += ["", "## Exact per-document values (document sampling only)", "",
              "| population | documents | interval | coverage | mean width | replications |",
              "|---|---|---|---|---|---|"]
    for r in out["rows"]:
        if r["noise"] == "exact values":
            lines.append(f"| {r['population']} | {r['documents']} | {r['interval']} | {r['coverage']:.1%} | "
                         f"{r['mean_width']:.4f} | {r['replications']} |")
    lines += ["", "## With estimator noise (`tl.compare` on every document once; sotu)", "",
              "The result's own intervals: the population interval (jackknife t) against the population "
              "difference; the interval about these documents against their exact per-token difference; "
              "per-document intervals against each document's exact difference.", "",
              "| estimator | documents | population interval covers | mean width | interval about these "
              "documents covers | per-document intervals cover | replications |",
              "|---|---|---|---|---|---|---|"]
    for r in out["rows"]:
        if r["noise"] != "exact values":
            lines.append(f"| {r['noise']} | {r['documents']} | {r['coverage']:.1%} | {r['mean_width']:.4f} | "
                         f"{r['documents_interval_coverage']:.1%} | {r['document_interval_coverage']:.1%} | "
                         f"{r['replications']} |")
    m = out["minimum_documents"]
    lines += ["", f"Chosen: **{out['chosen']}** (`CompareResult.interval(\"population\")`). Criterion: "
              f"{out['criterion']}; it held from **{m} documents** up in every row, and below that size "
              "every output carries a warning (`tealeaves.compare.intervals.POPULATION_MIN_DOCUMENTS`).", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
