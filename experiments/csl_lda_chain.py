"""CSL with LDA's own chain: which generated-document length and how many Gibbs sweeps mix, measured
against the exact likelihood (tiny models, 10-token documents) and long AIS (real paragraphs).

    python experiments/csl_lda_chain.py [--quick] [--doc-only]

Writes experiments/results/csl_lda_chain.json and docs/csl_lda_chain.md.
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np

import tealeaves as tl
from tealeaves.csl import LdaChain

HERE = os.path.dirname(os.path.abspath(__file__))
CONFIGS = [(1, 1), (1, 0), (5, 1), (10, 1), (50, 5), (200, 1), (200, 20)]  # (doc_length, sweeps)


def tiny_cases(n: int) -> list[tuple[tl.TopicModel, tl.Corpus, float]]:
    """n random 3-topic models over 15 words, one 10-token document each, with its exact log P."""
    out = []
    for seed in range(n):
        model = tl.synthetic.random_model(3, 15, beta=0.3, alpha_sum=1.5, alpha_shape="dirichlet", seed=seed)
        docs = tl.synthetic.generate(model, 1, 10, seed=1000 + seed)
        out.append((model, docs, tl.heldout(model, docs, method="exact").total))
    return out


def run_tiny(cases, samples_list, seeds) -> list[dict]:
    rows = []
    for label, make in [
        *[
            (f"L={L}, sweeps={s}", (lambda m, L=L, s=s: LdaChain(m, doc_length=L, sweeps=s)))
            for L, s in CONFIGS
        ],
        ("exact prior draws", lambda m: LdaChain(m, exact_prior=True)),
    ]:
        for samples in samples_list:
            errors, ess, seconds = [], [], 0.0
            for model, docs, exact in cases:
                chain = make(model)
                for seed in range(seeds):
                    t0 = time.perf_counter()
                    r = tl.csl(chain, docs, samples=samples, chains=10, burn_in=100, seed=seed)
                    seconds += time.perf_counter() - t0
                    errors.append(r.item_log_prob[0] - exact)
                    if r.mixing["ess_median"] is not None:
                        ess.append(r.mixing["ess_median"] / samples)
            e = np.array(errors)
            rows.append(
                {
                    "chain": label,
                    "samples": samples,
                    "mean_error": float(e.mean()),
                    "se": float(e.std(ddof=1) / np.sqrt(e.size)),
                    "mean_abs_error": float(np.abs(e).mean()),
                    "ess_share": float(np.median(ess)) if ess else None,
                    "ms_per_run": 1000 * seconds / e.size,
                    "runs": int(e.size),
                }
            )
            print(
                f"{label:<20} S={samples:>6}: error {e.mean():+.4f} ± {rows[-1]['se']:.4f}, "
                f"|error| {rows[-1]['mean_abs_error']:.4f}, ESS/S {rows[-1]['ess_share']}",
                flush=True,
            )
    return rows


def run_real(n_docs: int, samples_list) -> dict:
    """sotu-20-asym on held-out paragraphs of 20-60 tokens: CSL against AIS with 200,000 temperatures."""
    model = tl.datasets.sotu_model("sotu-20-asym")
    held = tl.datasets.sotu().heldout
    lengths = np.array([len(held[d]) for d in range(len(held))])
    pick = np.flatnonzero((lengths >= 20) & (lengths <= 60))[:n_docs]
    docs = held.subset(pick)
    t0 = time.perf_counter()
    ref = tl.heldout(model, docs, method="ais", temperatures=200_000, runs=2, seed=7)
    out = {
        "documents": int(len(docs)),
        "tokens": int(docs.num_tokens),
        "reference": "AIS, 200,000 temperatures, 2 runs",
        "reference_seconds": time.perf_counter() - t0,
        "reference_mean": float(ref.doc_log_prob.mean()),
        "reference_sd_of_mean": float(np.sqrt((ref.doc_sd**2 / ref.runs).sum()) / len(docs)),
        "rows": [],
    }
    for label, chain in [
        ("default (L=1, sweeps=1)", LdaChain(model)),
        ("L=200, sweeps=1", LdaChain(model, doc_length=200, sweeps=1)),
        ("exact prior draws", LdaChain(model, exact_prior=True)),
    ]:
        for samples in samples_list:
            t0 = time.perf_counter()
            r = tl.csl(chain, docs, samples=samples, chains=10, burn_in=100, seed=3)
            gap = float((r.item_log_prob - ref.doc_log_prob).mean())
            out["rows"].append(
                {
                    "chain": label,
                    "samples": samples,
                    "mean_gap": gap,
                    "ess_median": r.mixing["ess_median"],
                    "warning": r.mixing["warning"] is not None,
                    "seconds": time.perf_counter() - t0,
                }
            )
            print(
                f"real {label:<24} S={samples:>7}: CSL - AIS {gap:+.2f} nats/doc, "
                f"median ESS {r.mixing['ess_median']:.0f}",
                flush=True,
            )
    return out


def write_doc(result: dict, path: str) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(markdown(result))


def markdown(result: dict) -> str:
    """docs/csl_lda_chain.md from the results."""
    lines = [
        "# CSL with LDA's own chain: mixing and accuracy",
        "",
        "`python experiments/csl_lda_chain.py` (results: `experiments/results/csl_lda_chain.json`).",
        "",
        "The chain (`tealeaves.sampling.generative`) generates a document of L tokens *with their topics*",
        "from theta, runs `sweeps` collapsed Gibbs sweeps over those topics given the words, and draws",
        "theta ~ Dir(alpha + counts). Every part is a valid kernel on the joint distribution, so theta's",
        "stationary distribution is exactly the prior for every L and number of sweeps: the error",
        "vanishes as samples grow in every row below. What L and the sweeps change is how fast theta",
        "moves, measured here by the median effective sample size (ESS) of log P(w | theta) along the",
        "chains, as a share of the states drawn (`CSLResult.mixing`).",
        "",
        "The version before this one restarted the topics from scratch at every step and swept 5 times",
        "over a 50-token generated document; when the problem was reported, it was off by 0.10 to 0.33",
        "nats per document on this kind of model at 20,000 samples (its theta settled near, not at,",
        "the prior). That version is gone, so it is not in the tables below.",
        "",
        f"## Tiny models, exact likelihood ({result['tiny_cases']} models x {result['seeds']} seeds)",
        "",
        "3 topics, 15 words, one 10-token document each; error = CSL - exact log P(w), in nats per",
        "document (mean ± standard error over models and seeds); 10 chains, 100 burn-in steps.",
        "",
        "| chain | samples | error | mean abs. error | ESS / samples | ms per run |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for r in result["tiny"]:
        ess = "–" if r["ess_share"] is None else f"{r['ess_share']:.2f}"
        lines.append(
            f"| {r['chain']} | {r['samples']:,} | {r['mean_error']:+.4f} ± {r['se']:.4f} | "
            f"{r['mean_abs_error']:.4f} | {ess} | {r['ms_per_run']:.1f} |"
        )
    real = result["real"]
    lines += [
        "",
        f"## Real paragraphs ({real['documents']} held-out paragraphs of 20-60 tokens, sotu-20-asym)",
        "",
        f"Reference: {real['reference']} (mean log P {real['reference_mean']:.2f} per paragraph, standard",
        f"error of that mean {real['reference_sd_of_mean']:.3f}). Gap = mean over paragraphs of CSL - AIS.",
        "",
        "| chain | samples | gap (nats per paragraph) | median ESS | flagged | seconds |",
        "|---|---:|---:|---:|---|---:|",
    ]
    for r in real["rows"]:
        lines.append(
            f"| {r['chain']} | {r['samples']:,} | {r['mean_gap']:+.2f} | {r['ess_median']:.0f} | "
            f"{'yes' if r['warning'] else 'no'} | {r['seconds']:.1f} |"
        )
    def gap(chain: str, samples: int) -> float:
        return next(r["mean_gap"] for r in real["rows"] if r["chain"] == chain and r["samples"] == samples)

    def tiny(chain: str, key: str) -> float:
        return next(r[key] for r in result["tiny"] if r["chain"] == chain and r["samples"] == 10000)

    default, no_sweep = "L=1, sweeps=1", "L=1, sweeps=0"

    lines += [
        "",
        "Both CSL and AIS are stochastic lower bounds (too low on average; one run can be high), so",
        "where exact prior draws with 100,000 states end a few hundredths of a nat above the AIS",
        "reference, the reference is about that much low, or the gap is within the noise of 10",
        "paragraphs.",
        "",
        "## The defaults",
        "",
        "`doc_length=1, sweeps=1`: of the chains, it has the largest effective sample size per state",
        f"({tiny(default, 'ess_share'):.2f} of the states at 10,000 samples), though it is not the fastest",
        f"per state: without the sweep (`sweeps=0`) a run takes {tiny(no_sweep, 'ms_per_run'):.1f} ms against"
        f" {tiny(default, 'ms_per_run'):.1f} but mixes worse ({tiny(no_sweep, 'ess_share'):.2f}), and exact",
        "prior draws (not a chain) are faster still. Its error on the exact cases shrinks about as fast",
        "as that of exact prior draws. Longer generated documents are valid but mix slowly (see the ESS",
        "column), so",
        "the same number of states buys a noisier bound, and the diagnostic flags them (a warning when the",
        "median ESS is below a tenth of the states drawn). On real paragraphs, with ten times the",
        f"states, the long-document chain is {gap('L=200, sweeps=1', 10000):+.2f} nats per paragraph off"
        f" against the default's {gap('default (L=1, sweeps=1)', 1000):+.2f}.",
        "For the number itself use left-to-right or AIS; CSL is for models whose likelihood has no",
        "such estimator.",
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--doc-only", action="store_true", help="rewrite the doc from the saved JSON")
    args = ap.parse_args()
    saved = os.path.join(HERE, "results", "csl_lda_chain.json")
    if args.doc_only:
        with open(saved, encoding="utf-8") as fh:
            write_doc(json.load(fh), os.path.join(HERE, "..", "docs", "csl_lda_chain.md"))
        return
    n_cases, seeds = (5, 2) if args.quick else (20, 5)
    samples_list = [100, 1000, 10000]
    result = {
        "tiny_cases": n_cases,
        "seeds": seeds,
        "tiny": run_tiny(tiny_cases(n_cases), samples_list, seeds),
        "real": run_real(5 if args.quick else 10, [1000, 10000, 100000]),
    }
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    with open(saved, "w", encoding="utf-8") as fh:
        json.dump(result, fh, indent=1)
    write_doc(result, os.path.join(HERE, "..", "docs", "csl_lda_chain.md"))


if __name__ == "__main__":
    main()
