"""The experiments of Foulds & Smyth's poster (Annealing Paths for the Evaluation of Topic Models,
UAI 2014) on synthetic data, until the bundled real corpus exists.

Model A: T=20, V=2000, phi ~ Dir(0.05), alpha ∝ 1/k summing to 2; 100 held-out documents of
100 tokens drawn from it. Model B: A with its topics perturbed, phi -> 0.95 phi + 0.05 phi'.

1. % of documents ordered correctly (A above B) at a cheap and an expensive setting, and the
   correlation of the per-document log ratios with a long left-to-right run (R=200 per model),
   for: the difference of two standard AIS runs, the difference of two left-to-right runs, and
   Ratio-AIS on each path and direction. Costs per document are matched: cheap = 2 x 100 N site
   updates, expensive = 2 x 1000 N (Ratio-AIS: a burn-in under the start model plus the path,
   half each; left-to-right: the particle count with that cost).
2. Variance of the corpus-level perplexity ratio PP_A / PP_B over 5 repeats with different seeds.
3. An asymmetric-alpha model against the same topics with a symmetric alpha of the same sum.

    python experiments/compare_synthetic.py [--workers 2]

Writes experiments/results/compare_synthetic.json and docs/compare_experiments.md.
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np

import tealeaves as tl
from tealeaves import synthetic

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
N = 100


def approaches(level: int) -> list[tuple[str, dict]]:
    """(label, compare() keywords) at a per-document budget of 2 * level * N site updates."""
    particles = max(1, round(4 * level / (N - 1)))
    out = [
        ("standard AIS (difference)", {"method": "difference", "estimator": "ais", "temperatures": level}),
        ("left-to-right (difference)", {"method": "difference", "estimator": "left-to-right",
                                        "particles": particles}),
    ]
    for path in ("geometric", "convex"):
        for direction in ("forward", "reverse"):
            out.append((f"Ratio-AIS {path} ({direction})",
                        {"path": path, "direction": direction, "temperatures": level,
                         "start": "burn-in", "burn_in": level}))
    return out


def run_all(A, B, docs, workers, reference):
    rows = []
    for setting, level in (("cheap", 100), ("expensive", 1000)):
        for label, kw in approaches(level):
            t0 = time.perf_counter()
            res = tl.compare(A, B, docs, seed=level, workers=workers, bootstrap=0, **kw)
            r = res.doc_log_ratio
            rows.append({
                "setting": setting, "approach": label,
                "percent_correct": float(100 * (r > 0).mean()),
                "agree_with_reference_sign": float(100 * (np.sign(r) == np.sign(reference)).mean()),
                "correlation_with_long_lr": float(np.corrcoef(r, reference)[0, 1]),
                "perplexity_ratio": res.perplexity_ratio,
                "seconds": time.perf_counter() - t0,
            })
            print(f"{setting:9s} {label:32s} {rows[-1]['percent_correct']:6.1f}%  "
                  f"r={rows[-1]['correlation_with_long_lr']:.3f}  PP ratio {res.perplexity_ratio:.4f}",
                  flush=True)
    return rows


def variance_of_ratio(A, B, docs, workers, repeats=5):
    rows = []
    for label, kw in approaches(100):
        ratios = [tl.compare(A, B, docs, seed=100 + k, workers=workers, bootstrap=0,
                             **kw).perplexity_ratio for k in range(repeats)]
        rows.append({"approach": label, "variance": float(np.var(ratios, ddof=1)),
                     "mean": float(np.mean(ratios))})
        print(f"variance  {label:32s} {rows[-1]['variance']:.3e}", flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    A = synthetic.random_model(20, 2000, beta=0.05, alpha_sum=2.0, alpha_shape="harmonic", seed=7,
                               name="A (original)")
    B = synthetic.perturb_phi(A, 0.05, beta=0.05, seed=8).with_params(name="B (perturbed topics)")
    docs = synthetic.generate(A, 100, N, seed=9)
    ref = tl.compare(A, B, docs, method="difference", estimator="left-to-right", particles=200,
                     seed=1, workers=args.workers, bootstrap=0)
    print(f"reference: long left-to-right, {100 * (ref.doc_log_ratio > 0).mean():.0f}% of documents "
          f"favour A, PP ratio {ref.perplexity_ratio:.4f}", flush=True)
    table = run_all(A, B, docs, args.workers, ref.doc_log_ratio)
    variances = variance_of_ratio(A, B, docs, args.workers)
    S = A.with_params(alpha=np.full(A.num_topics, A.alpha_sum / A.num_topics), name="symmetric alpha")
    alpha_rows = []
    for label, kw in approaches(1000):
        res = tl.compare(A, S, docs, seed=3, workers=args.workers, bootstrap=0, **kw)
        alpha_rows.append({"approach": label, "perplexity_ratio": res.perplexity_ratio,
                           "documents_favouring_asymmetric": res.favour["a"]})
        print(f"alpha     {label:32s} PP_asym/PP_sym {res.perplexity_ratio:.4f}", flush=True)
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    out = {"reference_pp_ratio": ref.perplexity_ratio, "ordering": table, "variance": variances,
           "alpha": alpha_rows}
    with open(os.path.join(HERE, "results", "compare_synthetic.json"), "w") as fh:
        json.dump(out, fh, indent=1)
    write_markdown(out, ref)


def write_markdown(out, ref) -> None:
    lines = [
        "# Comparing models directly: Ratio-AIS on synthetic data",
        "",
        "Made by `python experiments/compare_synthetic.py` (numbers also in",
        "`experiments/results/compare_synthetic.json`). Model A: T=20, V=2000, phi ~ Dir(0.05),",
        "alpha ∝ 1/k summing to 2; 100 documents of 100 tokens drawn from it; model B: A's topics",
        "perturbed 5% toward random topics. Reference: the difference of two left-to-right runs",
        f"with 200 particles each ({100 * (ref.doc_log_ratio > 0).mean():.0f}% of documents favour A,",
        f"PP_A / PP_B = {ref.perplexity_ratio:.4f}).",
        "",
        "Budgets per document: cheap 2 x 100 N site updates, expensive 2 x 1000 N (Ratio-AIS: half",
        "burn-in under the start model, half path; left-to-right: the particles of that cost).",
        "",
        "## Documents ordered correctly, and correlation with the long left-to-right run",
        "",
        "| setting | approach | % A above B | % same sign as reference | correlation "
        "| PP_A / PP_B | seconds |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in out["ordering"]:
        lines.append(f"| {r['setting']} | {r['approach']} | {r['percent_correct']:.1f} | "
                     f"{r['agree_with_reference_sign']:.1f} | {r['correlation_with_long_lr']:.3f} | "
                     f"{r['perplexity_ratio']:.4f} | {r['seconds']:.1f} |")
    lines += ["", "## Variance of the corpus-level perplexity ratio (cheap setting, 5 seeds)", "",
              "| approach | variance | mean |", "|---|---|---|"]
    for r in out["variance"]:
        lines.append(f"| {r['approach']} | {r['variance']:.2e} | {r['mean']:.4f} |")
    lines += ["", "## Asymmetric against symmetric alpha (expensive setting)", "",
              "| approach | PP_asymmetric / PP_symmetric | documents favouring asymmetric |",
              "|---|---|---|"]
    for r in out["alpha"]:
        lines.append(f"| {r['approach']} | {r['perplexity_ratio']:.4f} | "
                     f"{r['documents_favouring_asymmetric']} |")
    with open(os.path.join(ROOT, "docs", "compare_experiments.md"), "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
