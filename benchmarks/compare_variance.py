"""How much compute each way of comparing two models needs to reach a standard deviation of
0.1 nats in the per-document log ratio log P(w|A) - log P(w|B) (issue 3's benchmark).

Workload: the held-out benchmark's model A (T=50, V=5000, phi ~ Dir(0.01), alpha ∝ 1/k summing
to 5) and B = A with phi -> 0.8 phi + 0.2 phi' and m -> 0.7 m + 0.3 m' (section 6.4 of Wallach
et al.); documents of 200 tokens drawn from A. Every approach runs at a ladder of settings; at
each, every document is estimated `--replicates` times with independent seeds and the per-
document sd is averaged (root mean square) over documents. The cost to reach sd 0.1 is
interpolated log-log between the two settings that straddle it. Costs are Gibbs site updates
per document, all included (Ratio-AIS: 50 burn-in sweeps under B plus the path; differences:
both models' runs).

    python benchmarks/compare_variance.py [--docs 10] [--replicates 6] [--workers 2]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time

import numpy as np

import tealeaves as tl
from tealeaves import synthetic

T, V, N, BURN = 50, 5000, 200, 50
TARGET = 0.1


def per_doc_sd(doc_values: np.ndarray, docs: int, reps: int) -> float:
    x = doc_values.reshape(reps, docs)
    return float(np.sqrt((x.std(axis=0, ddof=1) ** 2).mean()))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", type=int, default=10)
    ap.add_argument("--replicates", type=int, default=6)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results",
                                                  "compare_variance.json"))
    args = ap.parse_args()
    A = synthetic.random_model(T, V, beta=0.01, alpha_sum=5.0, alpha_shape="harmonic", seed=1, name="A")
    B = synthetic.perturb_m(synthetic.perturb_phi(A, 0.2, seed=3), 0.3, seed=4).with_params(name="B")
    base = synthetic.generate(A, args.docs, N, seed=2)
    docs = tl.Corpus.from_word_ids([base[d] for _ in range(args.replicates) for d in range(args.docs)],
                                   vocab=A.vocab)
    reps, D = args.replicates, args.docs
    tl.compare(A, B, base.subset([0]), temperatures=2, start="burn-in", burn_in=1, bootstrap=0)  # compile
    ladders = {
        "ratio-ais convex": [10, 30, 100, 300, 1000, 3000, 10000],
        "ratio-ais geometric": [10, 30, 100, 300, 1000, 3000, 10000],
        "difference left-to-right": [1, 4, 16, 64, 256],
        "difference ais": [100, 1000, 10000],
    }
    rows = []
    for name, levels in ladders.items():
        points = []
        for level in levels:
            t0 = time.perf_counter()
            if name.startswith("ratio-ais"):
                path = name.split()[-1]
                res = tl.compare(A, B, docs, path=path, direction="forward", temperatures=level,
                                 start="burn-in", burn_in=BURN, chains=1, seed=level,
                                 workers=args.workers, bootstrap=0)
                cost = (BURN + level) * N
            elif name == "difference left-to-right":
                res = tl.compare(A, B, docs, method="difference", estimator="left-to-right",
                                 particles=level, chains=1, seed=level, workers=args.workers, bootstrap=0)
                cost = 2 * level * N * (N - 1) / 2
            else:
                res = tl.compare(A, B, docs, method="difference", estimator="ais", temperatures=level,
                                 chains=1, seed=level, workers=args.workers, bootstrap=0)
                cost = 2 * level * N
            sec = time.perf_counter() - t0
            sd = per_doc_sd(res.doc_log_ratio, D, reps)
            points.append({"level": level, "site_updates_per_doc": cost, "sd": sd,
                           "seconds_per_doc": sec / (D * reps),
                           "mean_ratio": float(res.doc_log_ratio.mean())})
            print(f"{name:26s} level {level:6d}  sd {sd:8.4f}  cost {cost:12.0f}  "
                  f"{sec / (D * reps) * 1e3:8.2f} ms/doc", flush=True)
            if sd < TARGET:
                break
        reached = points[-1]["sd"] < TARGET
        rows.append({"approach": name, "points": points, "cost_to_target": cost_to_target(points),
                     "how": "interpolated" if reached else "extrapolated with sd ∝ cost^-1/2"})
    base_cost = rows[0]["cost_to_target"]
    print(f"\nsite updates per document to reach sd {TARGET} nats in the per-document log ratio:")
    for r in rows:
        c = r["cost_to_target"]
        r["relative_to_ratio_ais_convex"] = c / base_cost if c and base_cost else None
        print(f"  {r['approach']:26s} {c:14.3g}  ({r['relative_to_ratio_ais_convex']:.3g} x Ratio-AIS "
              f"convex; {r['how']})" if c else f"  {r['approach']:26s} no estimate")
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as fh:
        json.dump({"workload": {"T": T, "V": V, "N": N, "docs": D, "replicates": reps, "target_sd": TARGET,
                                "B": "phi 0.2 toward random Dir(0.01) topics, m 0.3 toward Dir(1)"},
                   "results": rows}, fh, indent=1)
    print(f"wrote {args.out}")


def cost_to_target(points: list[dict]) -> float | None:
    """Log-log interpolation of cost at sd = TARGET between the straddling settings (or an
    extrapolation with the Monte Carlo rate sd ∝ cost^-1/2 from the last one)."""
    for p, q in zip(points, points[1:], strict=False):
        if p["sd"] >= TARGET > q["sd"]:
            x0, x1 = math.log(p["site_updates_per_doc"]), math.log(q["site_updates_per_doc"])
            y0, y1 = math.log(p["sd"]), math.log(q["sd"])
            return math.exp(x0 + (math.log(TARGET) - y0) * (x1 - x0) / (y1 - y0))
    if points and points[0]["sd"] < TARGET:
        return points[0]["site_updates_per_doc"]
    last = points[-1]
    return last["site_updates_per_doc"] * (last["sd"] / TARGET) ** 2 if last["sd"] > 0 else None


if __name__ == "__main__":
    main()
