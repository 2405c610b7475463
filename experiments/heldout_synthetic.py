"""Analogues of figures 1 and 3 of Wallach et al. (2009) on synthetic data.

Figure 1 analogue: a 50-topic model (V=5000, phi ~ Dir(0.01), alpha ∝ 1/k summing to 5) and 50
documents of 200 tokens drawn from it (the paper's "Synthetic, 50 topics" shape). Every method at
the cost of the Chib-style estimator with S=1000 ("1") and twice that ("2"), 10 runs per
document; totals sum_d log Pbar(w_d) with bootstrap sds. AIS with 10,000 temperatures is the
reference, as in the paper.

Figure 3 analogue: the same documents scored under phi -> (1-l) phi + l phi' and
m -> (1-l) m + l m' (section 6.4) for l in {0, .25, .5, .75}; the log ratio to l = 0 for
left-to-right, is-prior-theta and, for document completion, left-to-right and estimated theta.

    python experiments/heldout_synthetic.py [--quick] [--workers 2]

Writes experiments/results/heldout_synthetic.json and docs/heldout_experiments.md.
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


def figure1(model, docs, runs, workers, scale):
    N = 200
    S = int(1000 * scale)  # Chib chain length of the "1" setting; cost 2 S N
    rows = []

    def run(method, level, **params):
        t0 = time.perf_counter()
        res = tl.heldout(model, docs, method=method, runs=runs, seed=level, workers=workers, **params)
        rows.append({"method": method, "level": level, "label": res.label, "total": res.total,
                     "sd": res.sd, "seconds": time.perf_counter() - t0})
        print(f"{res.label:55s} {res.total:12.2f} ± {res.sd:6.2f}  {rows[-1]['seconds']:7.1f}s",
              flush=True)

    run("ais", 0, temperatures=int(10000 * scale))
    for level in (1, 2):
        cs = level * S
        budget = 2 * cs  # sweeps of N sites
        run("chib", level, chain_length=cs)
        run("left-to-right", level, particles=max(1, round(2 * budget / (N - 1))))
        run("ais", level, temperatures=budget)
        run("is-iterated", level, samples=budget - 10, iterations=10)
        run("is-pzw", level, samples=budget)
        run("is-prior-theta", level, samples=budget)
        run("harmonic-mean", level, burn_in=budget // 2, samples=budget // 2)
    return rows


def figure3(model, docs, workers, scale):
    lams = (0.0, 0.25, 0.5, 0.75)
    rng = np.random.default_rng(99)
    phi_other = rng.dirichlet(np.full(model.num_words, 0.01), size=model.num_topics)
    m_other = rng.dirichlet(np.ones(model.num_topics))
    methods = [
        ("heldout", "left-to-right", {"particles": 20}),
        ("heldout", "is-prior-theta", {"samples": int(2000 * scale)}),
        ("completion", "left-to-right", {"particles": 20}),
        ("completion", "estimated-theta", {"burn_in": 100, "samples": int(1000 * scale)}),
    ]
    out = []
    for what in ("phi", "m"):
        for task, method, params in methods:
            totals = []
            for lam in lams:
                if what == "phi":
                    mdl = synthetic.perturb_phi(model, lam, other=phi_other)
                else:
                    mdl = synthetic.perturb_m(model, lam, other=m_other)
                fn = tl.heldout if task == "heldout" else tl.completion
                totals.append(fn(mdl, docs, method=method, seed=5, workers=workers, **params).total)
            ratios = [t - totals[0] for t in totals]
            out.append({"perturbed": what, "task": task, "method": method,
                        "lambda": list(lams), "log_ratio": ratios})
            print(f"{what:4s} {task:10s} {method:16s} " + " ".join(f"{r:10.1f}" for r in ratios),
                  flush=True)
    return out


def write_markdown(path, fig1, fig3, args):
    ref = next(r for r in fig1 if r["level"] == 0)
    lines = [
        "# Held-out likelihood estimators on synthetic data",
        "",
        "Made by `python experiments/heldout_synthetic.py"
        + (" --quick" if args.quick else "") + f" --workers {args.workers}`"
        + " (results also in `experiments/results/heldout_synthetic.json`).",
        "",
        "Model: T=50, V=5000, phi ~ Dir(0.01), alpha ∝ 1/k summing to 5; 50 documents of 200",
        "tokens drawn from it (the shape of the paper's 'Synthetic, 50 topics' set).",
        "",
        "## Figure 1 analogue: sum_d log P(w_d | Phi, alpha m)",
        "",
        f"Reference: {ref['label']}, total {ref['total']:.2f} ± {ref['sd']:.2f}. Setting 1 costs",
        "as much as the Chib-style estimator with S=1000 (2 S N site updates per document),",
        "setting 2 twice that; 10 runs per document, sd from 10,000 bootstrap resamples of the runs.",
        "",
        "| method | setting | total | ± sd | minus reference | seconds |",
        "|---|---|---|---|---|---|",
    ]
    for r in fig1:
        if r["level"] == 0:
            continue
        lines.append(f"| {r['label']} | {r['level']} | {r['total']:.2f} | {r['sd']:.2f} | "
                     f"{r['total'] - ref['total']:+.2f} | {r['seconds']:.1f} |")
    lines += [
        "",
        "## Figure 3 analogue: sensitivity to perturbed Phi and m",
        "",
        "Log ratio of the total under the perturbed model to the total at lambda = 0 (nats).",
        "",
        "| perturbed | task | method | " + " | ".join(f"λ={x}" for x in fig3[0]["lambda"]) + " |",
        "|---|---|---|" + "---|" * len(fig3[0]["lambda"]),
    ]
    for r in fig3:
        lines.append(f"| {r['perturbed']} | {r['task']} | {r['method']} | "
                     + " | ".join(f"{x:.1f}" for x in r["log_ratio"]) + " |")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="a tenth of the compute")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--runs", type=int, default=10)
    args = ap.parse_args()
    scale = 0.1 if args.quick else 1.0
    model = synthetic.random_model(50, 5000, beta=0.01, alpha_sum=5.0, alpha_shape="harmonic", seed=1)
    docs = synthetic.generate(model, 50, 200, seed=2)
    fig1 = figure1(model, docs, args.runs, args.workers, scale)
    fig3 = figure3(model, docs, args.workers, scale)
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    with open(os.path.join(HERE, "results", "heldout_synthetic.json"), "w") as fh:
        json.dump({"figure1": fig1, "figure3": fig3, "quick": args.quick}, fh, indent=1)
    write_markdown(os.path.join(ROOT, "docs", "heldout_experiments.md"), fig1, fig3, args)


if __name__ == "__main__":
    main()
