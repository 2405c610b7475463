"""AIS over a logistic-normal prior started at each document's Laplace approximation instead of the
prior (issue 36, point 2; not the default): its error against an independent importance-sampling
reference, beside today's default (AIS from the prior, 1,000 temperatures), on short held-out SOTU
paragraphs under a tomotopy CTM.

    python experiments/ctm_laplace_start.py [--topics 20] [--tokens 8] [--documents 20] [--quick]

- Laplace start: the posterior mode of x (eta = mean + L x, x ~ N(0, I)) by damped Newton
  (`kernel.laplace`, exact gradient and Hessian from `kernel.derivatives`), q = N(mode, (-H)^-1), then
  AIS through q^(1 - tau) (N(x; 0, I) p(w | eta))^tau by elliptical slice sampling with q as its
  Gaussian (`kernel.ais_from`); `chains` such runs per document combined as log mean exp.
- A second reference: today's AIS from the prior with 4 runs x 20,000 temperatures.
- Reference (independent code, numpy/scipy only): importance sampling over eta with a multivariate t
  proposal (5 degrees of freedom) centred at the mode found by L-BFGS, scale 1.2^2 times the inverse of
  the Hessian by finite differences of the analytic gradient; 200,000 draws; its effective sample
  size is reported.
Writes experiments/results/ctm_laplace_start.json (with --quick only prints).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
RESULTS = os.path.join(HERE, "results", "ctm_laplace_start.json")


def reference(phi, mean, cov, doc, draws: int, seed: int, df: float = 5.0, widen: float = 1.2):
    """log P(doc) by importance sampling with a t proposal at the posterior mode, and the effective
    sample size as a fraction of the draws."""
    from scipy.optimize import minimize
    from scipy.special import gammaln, logsumexp

    ids, c = np.unique(doc, return_counts=True)
    cols = phi[:, ids]
    P = np.linalg.inv(cov)
    logdet = np.linalg.slogdet(cov)[1]
    T = mean.size

    def f(eta):
        th = np.exp(eta - logsumexp(eta))
        s = th @ cols
        d = eta - mean
        a = cols @ (c / s)
        return -(c @ np.log(s) - 0.5 * d @ P @ d), -(th * (a - a @ th) - P @ d)

    m = minimize(f, mean.copy(), jac=True, method="L-BFGS-B", options={"maxiter": 5000, "gtol": 1e-10}).x
    h = 1e-5
    H = np.array([(f(m + h * e)[1] - f(m - h * e)[1]) / (2 * h) for e in np.eye(T)])
    C = np.linalg.cholesky(np.linalg.inv(0.5 * (H + H.T)) * widen**2)
    rng = np.random.default_rng(seed)
    chunk = 10_000
    out = []
    for _ in range(draws // chunk):
        z = rng.standard_normal((chunk, T))
        u = rng.chisquare(df, chunk)
        eta = m + (z @ C.T) / np.sqrt(u / df)[:, None]
        log_q = (gammaln((df + T) / 2) - gammaln(df / 2) - T / 2 * np.log(df * np.pi)
                 - np.log(np.diag(C)).sum() - (df + T) / 2 * np.log1p((z**2).sum(axis=1) / u))
        theta = np.exp(eta - logsumexp(eta, axis=1, keepdims=True))
        d = eta - mean
        log_prior = -0.5 * np.einsum("ij,jk,ik->i", d, P, d) - 0.5 * logdet - T / 2 * np.log(2 * np.pi)
        out.append(np.log(theta @ cols) @ c + log_prior - log_q)
    w = np.concatenate(out)
    e = np.exp(w - w.max())
    return float(logsumexp(w) - np.log(w.size)), float(e.sum() ** 2 / (e**2).sum() / w.size)


def laplace_ais(phi, mean, L, doc, temperatures: int, chains: int, seed: int) -> tuple[float, float]:
    """log mean exp of `chains` AIS weights from the Laplace start, and their sd."""
    from scipy.special import logsumexp

    from tealeaves.heldout.ais import temperature_schedule
    from tealeaves.heldout.logistic_normal import _flat
    from tealeaves.sampling import logistic_normal as kernel
    from tealeaves.sampling.rng import child, new_state

    rows, counts, offsets, tokens = _flat(phi, [np.asarray(doc)], kernel.MIXTURE)
    words = np.zeros((1, mean.size))
    args = (kernel.MIXTURE, rows, counts, 0, int(offsets[1]), float(tokens[0]), words)
    x, K, _, _ = kernel.laplace(mean, L, *args, np.zeros(L.shape[1]), 200, 1e-8)
    scale = np.ascontiguousarray(np.linalg.inv(K).T)
    root = np.random.SeedSequence(seed)
    states = np.array([new_state(child(root, i)) for i in range(chains)])
    w = kernel.ais_from(mean, L, x, scale, -float(np.log(np.diag(K)).sum()), *args,
                        temperature_schedule("geometric", temperatures), states)
    return float(logsumexp(w) - np.log(chains)), float(w.std(ddof=1))


def run(topics: int, tokens: int, documents: int, iterations: int, draws: int) -> dict:
    import tomotopy as tp
    from ctm_heldout import held_out, train

    from tealeaves.heldout.logistic_normal import logistic_normal_log_prob, prior_factor

    t0 = time.time()
    model = train(topics, iterations, seed=1)
    print(f"trained T={topics} in {time.time() - t0:.0f} s", flush=True)
    k = model.k
    mean = np.array(model.prior_mean, dtype=np.float64)
    cov = np.array(model.prior_cov, dtype=np.float64).reshape(k, k)
    phi = np.array([model.get_topic_word_dist(t) for t in range(k)], dtype=np.float64)
    phi /= phi.sum(axis=1, keepdims=True)
    docs, _, _ = held_out(model, 10 * documents, seed=5)
    docs = [d[:tokens] for d in docs if len(d) >= tokens][:documents]
    _, L = prior_factor(mean, cov)
    t0 = time.process_time()
    refs = [reference(phi, mean, cov, d, draws, seed=i) for i, d in enumerate(docs)]
    print(f"reference: {time.process_time() - t0:.0f} CPU s", flush=True)
    ref = np.array([r[0] for r in refs])
    n = float(sum(len(d) for d in docs))
    t0 = time.process_time()
    long = logistic_normal_log_prob(phi, mean, cov, docs, temperatures=20_000, runs=4, seed=99)
    long_seconds = time.process_time() - t0
    from tealeaves.heldout.logistic_normal import combine_runs

    long = combine_runs(long)
    print(f"prior start, 4 x 20,000 temperatures: {long_seconds:.0f} CPU s, minus the reference per token "
          f"{(long - ref).sum() / n:+.4f}, largest |difference| {np.abs(long - ref).max():.3f}", flush=True)
    rows = []
    for seed in (3, 4):
        t0 = time.process_time()
        est = logistic_normal_log_prob(phi, mean, cov, docs, temperatures=1000, runs=1, seed=seed)[0]
        rows.append({"method": "prior start (today's default)", "temperatures": 1000, "chains": 1,
                     "seed": seed,
                     "cpu_seconds": time.process_time() - t0, "error_per_token": float((est - ref).sum() / n),
                     "error_abs_max": float(np.abs(est - ref).max()), "log_prob": est.tolist()})
        print(rows[-1], flush=True)
    for S, chains in ((10, 4), (50, 4), (200, 4)):
        for seed in (3, 4):
            t0 = time.process_time()
            out = [laplace_ais(phi, mean, L, d, S, chains, seed=1000 * seed + i) for i, d in enumerate(docs)]
            est = np.array([o[0] for o in out])
            rows.append({"method": "Laplace start", "temperatures": S, "chains": chains, "seed": seed,
                         "cpu_seconds": time.process_time() - t0,
                         "error_per_token": float((est - ref).sum() / n),
                         "error_abs_max": float(np.abs(est - ref).max()),
                         "chain_sd_max": float(max(o[1] for o in out)), "log_prob": est.tolist()})
            print(rows[-1], flush=True)
    return {"tomotopy": tp.__version__, "python": platform.python_version(), "topics": k,
            "train_iterations": iterations, "tokens_per_document": tokens, "documents": len(docs),
            "reference": {"draws": draws, "log_prob": ref.tolist(),
                          "effective_fraction": [r[1] for r in refs]},
            "long_prior_ais": {"temperatures": 20_000, "runs": 4, "cpu_seconds": long_seconds,
                               "log_prob": long.tolist()},
            "rows": rows, "machine": "2 cores shared with other jobs: CPU seconds are indicative only"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", type=int, nargs="+", default=[20, 50])
    parser.add_argument("--tokens", type=int, default=8)
    parser.add_argument("--documents", type=int, default=20)
    parser.add_argument("--iterations", type=int, default=100)
    parser.add_argument("--quick", action="store_true", help="a small run to check the script")
    args = parser.parse_args()
    if args.quick:
        print(json.dumps(run(5, 6, 3, 10, 20_000), indent=1))
        return
    result = {"runs": [run(t, args.tokens, args.documents, args.iterations, 200_000) for t in args.topics]}
    os.makedirs(os.path.dirname(RESULTS), exist_ok=True)
    with open(RESULTS, "w", encoding="utf-8") as f:
        json.dump(result, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
