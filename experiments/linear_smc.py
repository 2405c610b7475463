"""Left-to-right SMC whose rejuvenation stops growing with the document (issue 21, points 1 and
2): accuracy per CPU-second against the full pass over all earlier positions, on short and long
real documents.

`variant="smc-full"` (the previous default): at each position every particle's z_<n gets one Gibbs
pass (R N(N-1)/2 site updates per document). `variant="smc"`: the same pass while n <= K =
`rejuvenate`, then K positions per particle and position of a cyclic scan (at most R N K). Both
are unbiased for P(w); the question is accuracy per CPU-second.

The machine is shared (2 cores, several agents): every time is CPU time of this process
(time.process_time, one worker, in-process), never wall time. Runs are kept small (2 to 6
documents per length, 3,200 tokens at most).

Parts (each replaces its section of the saved JSON; `--only PART` computes just that one):
- `tune` (training text; K and R are chosen here): the first N tokens of training addresses (N =
  800, 3,200) against a reference, smc at K = 64, 128, 256 and smc-full, R = 100; and 100 random
  training paragraphs against a 200,000-temperature AIS reference, smc at R = 100, 200, 300.
- `heldout` (report): 100 random held-out paragraphs (the set of experiments/default_accuracy.py,
  against its 200,000-temperature AIS reference, recomputed with the same seed and checked equal to
  the cached total) and the first N tokens of held-out addresses (N = 50 .. 3,200), for smc-full
  (R = 100, the previous default), smc with K = 128 at R = 100 and the new default (R = 300): error per token, worst document,
  tokens per CPU-second of one call.

References for the address prefixes: smc with REF_PARTICLES particles and K = REF_K, two runs
averaged in probability space (unbiased for P(w) like every candidate; the largest difference
between its two runs on one document is reported as its noise).

    python experiments/linear_smc.py [--only tune] [--only heldout] [--model sotu-20-asym]

Writes experiments/results/linear_smc.json and docs/linear_smc.md.
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np

import tealeaves as tl
from tealeaves import datasets
from tealeaves.heldout.registry import get_method

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results", "linear_smc.json")
CACHED = os.path.join(HERE, "results", "default_accuracy.json")
MODELS = ("sotu-20-asym", "sotu-50-asym")
LENGTHS = (50, 200, 800, 3200)
DOCS_PER_LENGTH = {50: 6, 200: 4, 800: 3, 3200: 2}
TUNE_LENGTHS = (800, 3200)
TUNE_K = (64, 128, 256)
TUNE_PARTICLES = (100, 200, 300)
SEEDS = 3
FULL = {"variant": "smc-full", "particles": 100}  # the previous default
REF_PARTICLES = 1000
REF_K = 512


def address_prefixes(part: str, N: int, count: int, seed: int) -> tl.Corpus:
    """The first N tokens of `count` random addresses of `part` with at least N tokens."""
    s = datasets.sotu()
    corpus, addr = getattr(s, part), s.address[part]
    texts = {a: np.concatenate([corpus[i] for i in np.flatnonzero(addr == a)]) for a in np.unique(addr)}
    long = sorted(a for a, w in texts.items() if w.size >= N)
    pick = np.random.default_rng(seed).choice(long, count, replace=False)
    return tl.Corpus.from_word_ids([texts[a][:N] for a in sorted(pick)], vocab=corpus.vocab)


def paragraphs(part: str, count: int, seed: int) -> tl.Corpus:
    corpus = getattr(datasets.sotu(), part)
    return corpus.subset(np.sort(np.random.default_rng(seed).choice(len(corpus), count, replace=False)))


def timed(model, docs, seed: int, **params) -> tuple[tl.HeldoutResult, float]:
    """One call, one worker, in this process: the result and its CPU seconds."""
    t0 = time.process_time()
    res = tl.heldout(model, docs, method="left-to-right", seed=seed, workers=1, progress=None, bootstrap=0,
                     **params)
    return res, time.process_time() - t0


def repeated(model, docs, seeds: int, **params) -> dict:
    """`seeds` calls: per-document log P-hat (seeds x docs), CPU seconds per call, label."""
    timed(model, docs.subset([0]), 0, **params)  # compile outside the timing
    vals, cpu = [], 0.0
    for s in range(seeds):
        res, sec = timed(model, docs, 100 + s, **params)
        vals.append(res.doc_log_prob)
        cpu += sec
    return {"label": res.label, "params": params, "values": np.array(vals), "cpu_per_call": cpu / seeds,
            "site_updates": res.site_updates}


def tune(model) -> list[dict]:
    rows = []
    for N in TUNE_LENGTHS:
        docs = address_prefixes("train", N, DOCS_PER_LENGTH[N], N + 1)
        ref, spread = long_reference(model, docs)
        for params in [FULL] + [{"variant": "smc", "rejuvenate": K, "particles": 100} for K in TUNE_K]:
            rows.append(report_row(model, f"N = {N}", docs, ref, spread, params, SEEDS))
    if model.name == "sotu-20-asym":
        docs = paragraphs("train", 100, 1)
        ref = tl.heldout(model, docs, method="ais", temperatures=200_000, runs=2, seed=12345, workers=2,
                         progress=None).doc_log_prob
        for R in TUNE_PARTICLES:
            rows.append(report_row(model, "random paragraphs", docs, ref, 0.0,
                                   {"variant": "smc", "particles": R}, 5))
    return rows


def reference_paragraphs(model, docs) -> np.ndarray:
    """default_accuracy.py's reference (AIS, 200,000 temperatures, 2 runs, seed 12345), per paragraph;
    its total must equal the cached one (the same computation)."""
    with open(CACHED) as fh:
        cached = json.load(fh)["sets"]["random"]["reference_total"]
    res = tl.heldout(model, docs, method="ais", temperatures=200_000, runs=2, seed=12345, workers=2,
                     progress=None)
    assert abs(res.total - cached) < 1e-6 * abs(cached), (res.total, cached)
    return res.doc_log_prob


def long_reference(model, docs) -> tuple[np.ndarray, float]:
    """smc with REF_PARTICLES particles and K = REF_K, two runs averaged in probability space; and
    the largest difference between the two runs on one document."""
    res = tl.heldout(model, docs, particles=REF_PARTICLES, rejuvenate=REF_K, runs=2, seed=999, workers=2,
                     progress=None, max_hours=1000)
    return res.doc_log_prob, float(np.abs(np.diff(res.run_log_prob, axis=0)).max())


def report_row(model, name: str, docs, ref: np.ndarray, spread: float, params: dict, seeds: int) -> dict:
    r = repeated(model, docs, seeds, **params)
    err = r["values"] - ref  # seeds x docs
    per_token = err.sum(axis=1) / docs.num_tokens
    row = {"model": model.name, "documents": name, "count": len(docs), "tokens": int(docs.num_tokens),
           "reference": "AIS 200,000 temperatures" if spread == 0.0 else
           f"smc R = {REF_PARTICLES}, K = {REF_K}, 2 runs", "reference_run_difference_max": spread,
           "label": r["label"], "params": params, "seeds": seeds,
           "error_per_token_mean": float(per_token.mean()), "error_per_token_min": float(per_token.min()),
           "error_per_token_max": float(per_token.max()), "largest_document_error": float(np.abs(err).max()),
           "cpu_per_call": r["cpu_per_call"], "tokens_per_cpu_second": docs.num_tokens / r["cpu_per_call"],
           "site_updates": r["site_updates"]}
    print(f"  {model.name} {name:<18} {row['label']:<62} err/token {row['error_per_token_mean']:+.5f} "
          f"worst {row['largest_document_error']:.3f}  {row['tokens_per_cpu_second']:,.0f} tok/cpu-s",
          flush=True)
    return row


def heldout_part(model, new_default: dict) -> list[dict]:
    candidates = [FULL, dict(new_default, particles=FULL["particles"]), new_default]
    sets = []
    if model.name == "sotu-20-asym":
        docs = paragraphs("heldout", 100, 0)
        sets.append(("random paragraphs", docs, reference_paragraphs(model, docs), 0.0))
    for N in LENGTHS:
        docs = address_prefixes("heldout", N, DOCS_PER_LENGTH[N], N)
        sets.append((f"N = {N}", docs, *long_reference(model, docs)))
    return [report_row(model, name, docs, ref, spread, params, SEEDS if name.startswith("N") else 5)
            for name, docs, ref, spread in sets for params in candidates]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", action="append", choices=["tune", "heldout"])
    ap.add_argument("--model", action="append", choices=MODELS)
    ap.add_argument("--particles", type=int, default=None, help="the new default's particles (heldout)")
    ap.add_argument("--rejuvenate", type=int, default=None, help="the new default's K (heldout)")
    args = ap.parse_args()
    parts = args.only or ["tune", "heldout"]
    out: dict = {}
    if os.path.exists(RESULTS):
        with open(RESULTS) as fh:
            out = json.load(fh)
    spec = get_method("left-to-right")
    default = {"variant": "smc", "rejuvenate": args.rejuvenate or spec.params["rejuvenate"].default,
               "particles": args.particles or spec.params["particles"].default}
    out["cpu_time"] = "time.process_time of one in-process call (workers=1) on a shared 2-core machine"
    for name in args.model or MODELS:
        model = datasets.sotu_model(name)
        if "tune" in parts:
            out.setdefault("tune", {})[name] = tune(model)
        if "heldout" in parts:
            out["new_default"] = default
            out.setdefault("heldout", {})[name] = heldout_part(model, default)
        save(out)


def save(out: dict) -> None:
    os.makedirs(os.path.dirname(RESULTS), exist_ok=True)
    with open(RESULTS, "w") as fh:
        json.dump(out, fh, indent=1)
    path = os.path.join(HERE, "..", "docs", "linear_smc.md")
    with open(path, "w") as fh:
        fh.write(markdown(out))


def markdown(out: dict) -> str:
    """docs/linear_smc.md from the results."""
    lines = ["# Left-to-right at linear cost: bounded rejuvenation", "",
             "`python experiments/linear_smc.py`. Times are CPU seconds of one call in one process "
             "(`time.process_time`, one worker) on a 2-core machine shared with other jobs; runs are "
             "kept small (2 to 6 documents per length). `smc-full` is the previous default (a Gibbs pass "
             "over all earlier positions at every position, R N(N−1)/2 site updates); `smc` rejuvenates "
             "K random positions per particle and position (R N (K+1)).", ""]
    if "tune" in out:
        lines += ["## Choosing K and R (training text)", "",
                  "Error of the total per token against the reference (mean and range over seeds), the "
                  "largest error on one document over all seeds, CPU seconds of one call and tokens per "
                  "CPU-second.", ""]
        for model, rows in out["tune"].items():
            lines += [f"### {model}", ""] + table(rows)
    if "heldout" in out:
        lines += ["## Held-out documents (report)", "",
                  "Error of the total per token against the reference (mean and range over seeds), the "
                  "largest error on one document over all seeds, and tokens per CPU-second of one call.", ""]
        for model, rows in out["heldout"].items():
            lines += [f"### {model}", ""] + table(rows)
    return "\n".join(lines)


def table(rows: list[dict]) -> list[str]:
    lines = ["| documents | reference | estimator | error per token | range | worst document | CPU s "
             "| tokens per CPU-s |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['count']} × {r['documents']} | {r['reference']} | {r['label']} | "
                     f"{r['error_per_token_mean']:+.5f} | [{r['error_per_token_min']:+.5f}, "
                     f"{r['error_per_token_max']:+.5f}] | {r['largest_document_error']:.3f} | "
                     f"{r['cpu_per_call']:.3g} | {r['tokens_per_cpu_second']:,.0f} |")
    return lines + [""]


if __name__ == "__main__":
    main()
