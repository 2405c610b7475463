"""Speed of every held-out estimator on the benchmark workload of issue 2.

Synthetic model T=50, V=5000, phi ~ Dir(0.01), alpha ∝ 1/k summing to 5; 50 documents of 200
tokens drawn from it. Every method gets the budget of left-to-right with R=20 particles
(R N(N-1)/2 = 398,000 Gibbs site updates per document, table 1 of Wallach et al. 2009);
prints seconds per document and site updates per second (one process, after warm-up) and
writes JSON.

    python benchmarks/heldout_speed.py [--docs 50] [--out benchmarks/results/heldout_speed.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time

import tealeaves as tl
from tealeaves import synthetic

T, V, N, R = 50, 5000, 200, 20


def settings(budget_sweeps: int) -> list[tuple[str, dict]]:
    """Parameters giving about `budget_sweeps` * N site updates per document."""
    S = budget_sweeps
    return [
        ("left-to-right", {"particles": R}),
        ("left-to-right", {"particles": S, "resample": False}),
        ("ais", {"temperatures": S}),
        ("chib", {"chain_length": S // 2, "iterations": 0}),
        ("harmonic-mean", {"burn_in": S // 2, "samples": S // 2}),
        ("is-prior-theta", {"samples": S}),
        ("is-pzw", {"samples": S}),
        ("is-iterated", {"samples": S - 10, "iterations": 10}),
    ]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", type=int, default=50)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results",
                                                  "heldout_speed.json"))
    args = ap.parse_args()
    model = synthetic.random_model(T, V, beta=0.01, alpha_sum=5.0, alpha_shape="harmonic", seed=1)
    docs = synthetic.generate(model, args.docs, N, seed=2)
    budget = R * (N - 1) // 2  # sweeps of N sites: 1990
    rows = []
    for method, params in settings(budget):
        tl.heldout(model, docs.subset([0]), method=method, **{**params, **_tiny(method)})  # compile
        t0 = time.perf_counter()
        res = tl.heldout(model, docs, method=method, **params)
        sec = time.perf_counter() - t0
        row = {
            "method": method, "params": params, "label": res.label,
            "seconds_per_doc": sec / len(docs),
            "site_updates_per_doc": res.site_updates / len(docs),
            "site_updates_per_second": res.site_updates / sec,
            "total_log_lik": res.total,
        }
        rows.append(row)
        print(f"{res.label:58s} {row['seconds_per_doc'] * 1e3:8.2f} ms/doc "
              f"{row['site_updates_per_second'] / 1e6:7.2f} M site updates/s "
              f"total {res.total:10.1f}", flush=True)
    out = {
        "workload": {"T": T, "V": V, "N": N, "docs": args.docs, "phi_beta": 0.01,
                     "alpha_sum": 5.0, "alpha_shape": "1/k"},
        "budget_site_updates_per_doc": R * N * (N - 1) / 2,
        "machine": {"python": platform.python_version(), "processor": platform.processor(),
                    "cpus": os.cpu_count()},
        "results": rows,
    }
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as fh:
        json.dump(out, fh, indent=1)
    print(f"wrote {args.out}")


def _tiny(method: str) -> dict:
    return {"left-to-right": {"particles": 1}, "ais": {"temperatures": 30},
            "chib": {"chain_length": 2}, "harmonic-mean": {"burn_in": 1, "samples": 1}}.get(
        method, {"samples": 2})


if __name__ == "__main__":
    main()
