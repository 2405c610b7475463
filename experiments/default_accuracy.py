"""How accurate is each estimator's default call on real paragraphs? (issue 12: the measurement
behind the default method and budget of `tl.heldout`.)

Model `sotu-20-asym`; documents: 100 random held-out State of the Union paragraphs (seed 0; 12 to
300+ tokens) and, separately, every held-out paragraph of 150 tokens or more. Reference: AIS with
200,000 temperatures (2 runs per paragraph, averaged in probability space; unbiased for P(w), and
at this length its run-to-run sd is a few hundredths of a nat). Also 30 paragraphs cut to their
first 7 tokens, where the exact value is computable. The reference's own noise: three more
independent references (other seeds) on the same paragraphs, and how far apart their totals per
token are; and left-to-right with 1,000 and 3,000 particles against the reference (`--only
reference-spread`, `--only convergence`: compute just that part and add it to the saved JSON).
Each candidate runs once per paragraph (the default call, runs=1) under 5 seeds; reported: the
error of the total per token (mean over seeds, and its range), the largest error on one
paragraph, and the cost in site updates relative to today's default (left-to-right algorithm 3,
R = 20).

    python experiments/default_accuracy.py [--workers 2] [--reference-temperatures 200000]
    python experiments/default_accuracy.py --only reference-spread --only convergence

Writes experiments/results/default_accuracy.json and docs/default_accuracy.md.
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np

import tealeaves as tl
from tealeaves import datasets

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results", "default_accuracy.json")
SEEDS = range(5)
CANDIDATES = [
    ("left-to-right", {"particles": 20, "variant": "algorithm-3"}),  # the previous default
    ("left-to-right", {"particles": 20}),
    ("left-to-right", {"particles": 40}),
    ("left-to-right", {"particles": 60}),
    ("left-to-right", {"particles": 100}),
    ("left-to-right", {"particles": 150}),
    ("chib", {"chain_length": 400}),
    ("chib", {"chain_length": 1000}),
    ("ais", {"temperatures": 1000}),
    ("is-prior-theta", {"samples": 1000}),
]


SPREAD_SEEDS = (1, 2, 3)


def reference(model, docs, temperatures, workers, seed=12345):
    t0 = time.perf_counter()
    res = tl.heldout(model, docs, method="ais", temperatures=temperatures, runs=2, seed=seed,
                     workers=workers, progress=None)
    return res, time.perf_counter() - t0


def reference_spread(model, docs, temperatures, workers) -> dict:
    """Three independent references (seeds SPREAD_SEEDS, each like the reference: 2 runs) on the
    same paragraphs: their totals per token and the largest difference between two of them."""
    per_token = [reference(model, docs, temperatures, workers, seed=s)[0].total / docs.num_tokens
                 for s in SPREAD_SEEDS]
    spread = max(per_token) - min(per_token)
    print(f"  {len(SPREAD_SEEDS)} independent references per token {per_token}: spread {spread:.5f}",
          flush=True)
    return {"seeds": list(SPREAD_SEEDS), "per_token": per_token, "largest_difference_per_token": spread}


CONVERGENCE = ((1000, range(3)), (3000, range(3)))


def convergence(model, docs, reference_total: float) -> list[dict]:
    """Left-to-right with many particles: the error of the total per token against the reference."""
    rows = []
    for particles, seeds in CONVERGENCE:
        errs = [(tl.heldout(model, docs, particles=particles, seed=s).total - reference_total)
                / docs.num_tokens for s in seeds]
        rows.append({"particles": particles, "seeds": len(errs), "error_per_token_mean": float(np.mean(errs)),
                     "error_per_token_min": float(min(errs)), "error_per_token_max": float(max(errs))})
        print(f"  left-to-right({particles}) error/token {np.mean(errs):+.5f}", flush=True)
    return rows


def paragraph_sets() -> tuple[tl.TopicModel, dict, np.random.Generator]:
    model = datasets.sotu_model("sotu-20-asym")
    held = datasets.sotu().heldout
    rng = np.random.default_rng(0)
    sets = {
        "random": held.subset(np.sort(rng.choice(len(held), 100, replace=False))),
        "long": held.subset(np.flatnonzero(held.lengths >= 150)),
    }
    return model, sets, rng


def previous_default_seconds(model, docs) -> float:
    """Time of the previous default (algorithm 3, R = 20) on the previous dense kernel, one
    process (the benchmark keeps that kernel)."""
    import sys

    sys.path.insert(0, os.path.join(HERE, "..", "benchmarks"))
    from heldout_speed import dense_algorithm3

    from tealeaves.sampling import new_state, prepare_doc

    phi_wt = np.ascontiguousarray(model.phi.T)
    state = new_state(np.random.SeedSequence(0))
    warm = prepare_doc(phi_wt, model.alpha, docs[0][:3])
    dense_algorithm3(warm.rows, warm.alpha, 2, state)
    t0 = time.perf_counter()
    for d in range(len(docs)):
        doc = prepare_doc(phi_wt, model.alpha, docs[d])
        dense_algorithm3(doc.rows, doc.alpha, 20, state)
    return time.perf_counter() - t0


def evaluate(model, docs, ref_doc, workers):
    base_cost = None
    base_seconds = previous_default_seconds(model, docs)
    rows = []
    tokens = docs.lengths
    for method, params in CANDIDATES:
        errs, doc_errs, secs, cost = [], [], 0.0, 0.0
        tl.heldout(model, docs.subset([0]), method=method, **params)  # compile outside the timing
        for seed in SEEDS:
            t0 = time.perf_counter()
            res = tl.heldout(model, docs, method=method, seed=seed, workers=1, **params)
            secs += time.perf_counter() - t0
            cost = res.site_updates
            d = res.doc_log_prob - ref_doc
            errs.append(float(d.sum() / tokens.sum()))
            doc_errs.append(d)
        doc_errs = np.array(doc_errs)
        if base_cost is None:
            base_cost = cost
        row = {"method": method, "params": params, "label": res.label,
               "error_per_token_mean": float(np.mean(errs)),
               "error_per_token_min": float(np.min(errs)), "error_per_token_max": float(np.max(errs)),
               "largest_paragraph_error": float(np.abs(doc_errs).max()),
               "mean_abs_paragraph_error": float(np.abs(doc_errs).mean()),
               "cost_vs_previous_default": cost / base_cost, "seconds_per_call": secs / len(SEEDS),
               "time_vs_previous_default": secs / len(SEEDS) / base_seconds}
        rows.append(row)
        print(f"  {row['label']:<50} error/token {row['error_per_token_mean']:+.5f} "
              f"[{row['error_per_token_min']:+.5f}, {row['error_per_token_max']:+.5f}]  "
              f"worst paragraph {row['largest_paragraph_error']:.3f}  "
              f"cost x{row['cost_vs_previous_default']:.2f}  time x{row['time_vs_previous_default']:.2f}",
              flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--reference-temperatures", type=int, default=200_000)
    ap.add_argument("--only", action="append", choices=["reference-spread", "convergence"],
                    help="compute only this part and add it to the saved JSON")
    args = ap.parse_args()
    model, sets, rng = paragraph_sets()
    held = datasets.sotu().heldout
    if args.only:
        with open(RESULTS) as fh:
            out = json.load(fh)
        for name, docs in sets.items():
            s = out["sets"][name]
            if "reference-spread" in args.only:
                s["reference_spread"] = reference_spread(model, docs, out["reference_temperatures"],
                                                         args.workers)
            if "convergence" in args.only and name == "random":
                s["convergence"] = convergence(model, docs, s["reference_total"])
        save(out)
        return
    out: dict = {"model": model.name, "reference_temperatures": args.reference_temperatures, "sets": {}}
    for name, docs in sets.items():
        print(f"{name}: {len(docs)} paragraphs, {docs.num_tokens} tokens "
              f"({docs.lengths.min()}-{docs.lengths.max()} per paragraph)", flush=True)
        ref, sec = reference(model, docs, args.reference_temperatures, args.workers)
        ref_sd = ref.run_log_prob.std(axis=0, ddof=1)
        print(f"  reference AIS({args.reference_temperatures}) total {ref.total:.2f}, run-to-run sd "
              f"per paragraph: median {np.median(ref_sd):.3f}, max {ref_sd.max():.3f} ({sec:.0f} s)")
        out["sets"][name] = {"paragraphs": len(docs), "tokens": int(docs.num_tokens),
                             "reference_total": ref.total,
                             "reference_paragraph_sd_median": float(np.median(ref_sd)),
                             "reference_paragraph_sd_max": float(ref_sd.max()),
                             "reference_seconds": sec,
                             "reference_spread": reference_spread(model, docs, args.reference_temperatures,
                                                                  args.workers),
                             "candidates": evaluate(model, docs, ref.doc_log_prob, args.workers)}
        if name == "random":
            out["sets"][name]["convergence"] = convergence(model, docs, ref.total)
    cut = held.subset(np.sort(rng.choice(len(held), 30, replace=False)))
    cut = tl.Corpus.from_word_ids([cut[d][:7] for d in range(len(cut))], vocab=model.vocab)
    exact = tl.heldout(model, cut, method="exact")
    print(f"exact: 30 paragraphs cut to 7 tokens, total {exact.total:.3f}")
    out["sets"]["cut-to-7-exact"] = {"paragraphs": 30, "tokens": int(cut.num_tokens),
                                     "reference_total": exact.total,
                                     "candidates": evaluate(model, cut, exact.doc_log_prob, args.workers)}
    save(out)


def save(out: dict) -> None:
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    with open(RESULTS, "w") as fh:
        json.dump(out, fh, indent=1)
    path = os.path.join(HERE, "..", "docs", "default_accuracy.md")
    with open(path, "w") as fh:
        fh.write(markdown(out))
    print(f"wrote {os.path.normpath(path)}")


def markdown(out: dict) -> str:
    """docs/default_accuracy.md from the results."""
    lines = ["# Accuracy of each estimator's default call on real paragraphs", "",
             "`python experiments/default_accuracy.py` (model `sotu-20-asym`; reference AIS with "
             f"{out['reference_temperatures']:,} temperatures, 2 runs per paragraph, or the exact value). "
             "Each candidate runs once per paragraph under 5 seeds: the error of the total per token "
             "(mean over seeds, range), the largest error on one paragraph over all seeds, the "
             "cost in site updates relative to the previous default (left-to-right algorithm 3, "
             "R = 20), and the time of one call (one process) relative to that default on its "
             "previous dense kernel.", ""]
    for name, s in out["sets"].items():
        lines += [f"## {name}: {s['paragraphs']} paragraphs, {s['tokens']} tokens", ""]
        if "reference_paragraph_sd_median" in s:
            lines += [f"Reference total {s['reference_total']:.2f}; its run-to-run sd per paragraph: "
                      f"median {s['reference_paragraph_sd_median']:.3f}, largest "
                      f"{s['reference_paragraph_sd_max']:.3f} nats.", ""]
            if "reference_spread" in s:
                sp = s["reference_spread"]
                lines += [f"The reference's own noise: {len(sp['seeds'])} more independent references "
                          "(other seeds) on the same paragraphs differ by up to "
                          f"{sp['largest_difference_per_token']:.4f} nats per token, so errors per token "
                          "of that size are within the reference's noise.", ""]
            for c in s.get("convergence", []):
                lines += [f"Left-to-right with {c['particles']:,} particles ({c['seeds']} seeds): error per "
                          f"token {c['error_per_token_mean']:+.5f} (range {c['error_per_token_min']:+.5f} to "
                          f"{c['error_per_token_max']:+.5f}).", ""]
        else:
            lines += [f"Exact total {s['reference_total']:.3f}.", ""]
        lines += ["| estimator | error per token (mean) | range over seeds | worst paragraph | site updates "
                  "| time |", "|---|---|---|---|---|---|"]
        for r in s["candidates"]:
            lines.append(f"| {r['label']} | {r['error_per_token_mean']:+.5f} | "
                         f"[{r['error_per_token_min']:+.5f}, {r['error_per_token_max']:+.5f}] | "
                         f"{r['largest_paragraph_error']:.3f} | ×{r['cost_vs_previous_default']:.2f} | "
                         f"×{r['time_vs_previous_default']:.2f} |")
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
