"""Speed of the held-out estimators (issue 11's benchmark).

Workload: V = 5000; pseudo-counts n_tw = round(s Dirichlet(0.01)) per topic with s = 1e6
(T <= 200) or 1e4 (T = 1000); beta = 0.01; phi = (n_tw + beta) / (n_t + V beta); alpha_k ∝ 1/k
summing to 5; documents of N tokens drawn from the model (50 of them at N <= 200, fewer for
longer ones so every cell takes seconds, not minutes).

Reports Gibbs site updates per second in one process after warm-up (a site update is one draw
of one z_i; left-to-right with R particles costs R N(N-1)/2 of them per document, extend-only
R N):
  1. left-to-right at R = 20: the variants smc, algorithm-3, extend-only on the sparse kernels,
     and algorithm 3 on the previous dense O(T)-per-site kernel (kept here only to measure);
  2. the other estimators at the budget of left-to-right R = 20 (T = 50 and 1000, N = 200);
  3. smc with workers = 2 against workers = 1;
  4. peak memory: the process's maximum resident set, and each cell's kernel arrays.

    python benchmarks/heldout_speed.py [--quick] [--out benchmarks/results/heldout_speed.json]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import resource
import time

import numpy as np
from numba import njit

import tealeaves as tl
from tealeaves.sampling import kernels, new_state, prepare_doc
from tealeaves.sampling.kernels import FM

V, R, BETA = 5000, 20, 0.01
TOPICS = (20, 50, 200, 1000)
LENGTHS = (50, 200, 800, 2000)
DOCS = {50: 200, 200: 50, 800: 8, 2000: 3}


def pseudo_counts(T: int, seed: int = 0) -> np.ndarray:
    """n_tw (T x V): the counts a count-based sampler (MALLET) holds for this workload."""
    rng = np.random.default_rng(seed)
    s = 1e6 if T <= 200 else 1e4
    return np.round(s * rng.dirichlet(np.full(V, 0.01), size=T))


def workload(T: int, N: int, docs: int, seed: int = 0) -> tuple[tl.TopicModel, tl.Corpus]:
    n = pseudo_counts(T, seed)
    phi = (n + BETA) / (n.sum(axis=1, keepdims=True) + V * BETA)
    alpha = 1.0 / np.arange(1, T + 1)
    alpha *= 5.0 / alpha.sum()
    model = tl.TopicModel(phi, alpha, name=f"T{T}")
    return model, tl.synthetic.generate(model, docs, N, seed=seed + 1)


@njit(cache=True, fastmath=FM)
def dense_algorithm3(rows, alpha, particles, state):
    """The previous kernel: algorithm 3 with an O(T) normaliser at every site (kernels._draw)."""
    N, T = rows.shape
    A = alpha.sum()
    p = np.zeros(N)
    z = np.zeros(N, np.int64)
    na = np.empty(T)
    for _ in range(particles):
        na[:] = alpha
        for i in range(N):
            for j in range(i):
                na[z[j]] -= 1.0
                k, _ = kernels._draw(rows[j], na, state)
                z[j] = k
                na[k] += 1.0
            k, s = kernels._draw(rows[i], na, state)
            p[i] += s / (i + A)
            z[i] = k
            na[k] += 1.0
    out = 0.0
    for i in range(N):
        out += math.log(p[i] / particles)
    return out


def time_heldout(model, docs, method, workers=1, **params) -> tuple[float, float, float]:
    """(site updates per second, seconds, total) after a warm-up on one short document. The
    particle filters take the tokens in the given order (the kernel's speed, as before `order`
    existed; the peaked order's sort is a per-document step outside the kernel)."""
    if method == "left-to-right" and params.get("variant", "smc") in ("smc", "smc-full"):
        params = {"order": "given", **params}
    tl.heldout(model, docs.subset([0]), method=method, **{**params, **_tiny(method, params)})
    t0 = time.perf_counter()
    res = tl.heldout(model, docs, method=method, workers=workers, bootstrap=0, **params)
    sec = time.perf_counter() - t0
    return res.site_updates / sec, sec, res.total


def time_dense(model, docs) -> tuple[float, float]:
    phi_wt = np.ascontiguousarray(model.phi.T)
    state = new_state(np.random.SeedSequence(0))
    warm = prepare_doc(phi_wt, model.alpha, docs[0][:5])
    dense_algorithm3(warm.rows, warm.alpha, 2, state)
    sites, t0 = 0.0, time.perf_counter()
    for d in range(len(docs)):
        doc = prepare_doc(phi_wt, model.alpha, docs[d])
        dense_algorithm3(doc.rows, doc.alpha, R, state)
        sites += R * doc.length * (doc.length - 1) / 2
    sec = time.perf_counter() - t0
    return sites / sec, sec


def _tiny(method: str, params: dict) -> dict:
    if method == "left-to-right":
        return {"particles": 1}
    return {"ais": {"temperatures": 30}, "chib": {"chain_length": 2},
            "harmonic-mean": {"burn_in": 1, "samples": 1}}.get(method, {"samples": 2})


def kernel_bytes(T: int, N: int) -> int:
    """rows, logrows and the prior table (N x T float64) plus 20 particles' z and counts."""
    return 3 * N * T * 8 + R * (N + 3 * T) * 4


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="T in 50, 1000 and N = 200 only")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results",
                                                  "heldout_speed.json"))
    args = ap.parse_args()
    topics = (50, 1000) if args.quick else TOPICS
    lengths = (200,) if args.quick else LENGTHS
    rows: list[dict] = []

    def record(row: dict) -> None:
        rows.append(row)
        print(f"{row['section']:<10} T={row['T']:<5} N={row['N']:<5} {row['what']:<34} "
              f"{row['site_updates_per_second'] / 1e6:7.1f} M/s  {row['seconds']:7.2f} s", flush=True)

    print("1. left-to-right, R = 20 (site updates per second, one process)")
    for T in topics:
        for N in lengths:
            model, docs = workload(T, N, DOCS[N])
            cell = {"section": "lr", "T": T, "N": N, "docs": len(docs),
                    "kernel_bytes": kernel_bytes(T, N)}
            # the full pass, smc-full, is recorded as "smc" (its name before issue 21)
            for variant in ("smc-full", "algorithm-3", "extend-only"):
                rate, sec, total = time_heldout(model, docs, "left-to-right", particles=R,
                                                variant=variant)
                name = "smc" if variant == "smc-full" else variant
                record({**cell, "what": f"left-to-right {name}", "variant": name,
                        "site_updates_per_second": rate, "seconds": sec, "total": total})
            if N <= 800:
                rate, sec = time_dense(model, docs)
                record({**cell, "what": "algorithm-3, previous dense kernel", "variant": "dense",
                        "site_updates_per_second": rate, "seconds": sec})

    print("2. every estimator at the budget of left-to-right R = 20 (N = 200)")
    N = 200
    budget = R * (N - 1) // 2  # sweeps of N sites
    for T in (50, 1000):
        model, docs = workload(T, N, 20)
        for method, params in [
            ("chib", {"chain_length": budget // 2, "iterations": 0}),
            ("harmonic-mean", {"burn_in": budget // 2, "samples": budget // 2}),
            ("ais", {"temperatures": budget}),
            ("is-prior-theta", {"samples": budget}),
            ("is-iterated", {"samples": budget - 10, "iterations": 10}),
        ]:
            rate, sec, total = time_heldout(model, docs, method, **params)
            record({"section": "estimators", "T": T, "N": N, "docs": len(docs), "what": method,
                    "params": params, "site_updates_per_second": rate, "seconds": sec,
                    "total": total})

    print("3. smc, workers = 2 against 1 (T = 50: 200 documents, T = 1000: 100; N = 200)")
    for T, D in ((50, 200), (1000, 100)):
        model, docs = workload(T, 200, D)
        one = time_heldout(model, docs, "left-to-right", workers=1, particles=R, variant="smc-full")
        two = time_heldout(model, docs, "left-to-right", workers=2, particles=R, variant="smc-full")
        for w, (rate, sec, total) in ((1, one), (2, two)):
            record({"section": "workers", "T": T, "N": 200, "docs": len(docs),
                    "what": f"smc, workers={w}", "workers": w, "site_updates_per_second": rate,
                    "seconds": sec, "total": total})
        assert one[2] == two[2], "workers changed the numbers"
        print(f"           speed-up with 2 workers at T={T}: {two[0] / one[0]:.2f}x")

    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"4. peak resident memory of this process: {peak_mb:.0f} MB "
          f"(largest cell's kernel arrays: {max(r.get('kernel_bytes', 0) for r in rows) / 1e6:.1f} MB)")
    out = {
        "workload": {"V": V, "phi": "(round(s Dir(0.01)) + 0.01) / (n_t + V 0.01), s = 1e6 (T <= 200) "
                     "or 1e4", "alpha": "1/k, sum 5", "particles": R, "docs_per_length": DOCS},
        "machine": {"python": platform.python_version(), "processor": platform.processor(),
                    "cpus": os.cpu_count(), "numba": __import__("numba").__version__},
        "peak_rss_mb": peak_mb,
        "results": rows,
    }
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as fh:
        json.dump(out, fh, indent=1)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
