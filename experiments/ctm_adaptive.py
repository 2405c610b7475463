"""The logistic-normal default's budget from its own diagnostics (issue 36, point 2): AIS over eta with
several chains per document and the temperatures doubled until two budgets and the chains agree
(`adaptive_log_prob`), against today's fixed 1,000 temperatures and an independent reference, on short
held-out SOTU paragraphs under tomotopy CTMs with T = 8 and 20 topics.

    python experiments/ctm_adaptive.py [--quick] [--doc-only] [--part N] [--merge]

- Reference (independent code, numpy/scipy only, none of tealeaves' kernels): importance sampling over
  x (eta = mean + L x, x ~ N(0, I)) with a defensive mixture proposal: the prior N(0, I) (weight 0.1, so
  every weight is at most 10, as p(w | eta) <= 1) and a multivariate t (5 degrees of
  freedom) at each posterior mode found by L-BFGS from many starts (the prior mean, each topic pushed
  up, prior draws), its scale 1.2^2 times the inverse Hessian (finite differences of the analytic
  gradient), the modes weighted by their Laplace mass; `draws` draws; its standard error and effective
  sample size are reported. Checked against tensor quadrature at T = 2 and 3 and against very long AIS
  (4 runs x 100,000 temperatures) on a few documents.
- Documents: random held-out paragraphs (every token the model knows) and their first 8 tokens.
Writes experiments/results/ctm_adaptive.json and docs/logistic_normal_budget.md.
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
RESULTS = os.path.join(HERE, "results", "ctm_adaptive.json")
PAGE = os.path.join(HERE, "..", "docs", "logistic_normal_budget.md")
CACHE = os.environ.get("CTM_CACHE", "/tmp/ctm_adaptive_models")
T_QUANTILE = 3.182446305284263  # t(0.975) with 3 degrees of freedom: the 95% interval of 4 chains' mean


# --- the independent reference --------------------------------------------------------------------


class Posterior:
    """log N(x; 0, I) + log p(doc | mean + L x) (mixture decoder) and its gradient, in numpy."""

    def __init__(self, phi: np.ndarray, mean: np.ndarray, L: np.ndarray, doc) -> None:
        ids, c = np.unique(np.asarray(doc), return_counts=True)
        self.logcols = np.log(phi[:, ids])  # T x U
        self.c = c.astype(float)
        self.mean, self.L = mean, L
        self.r = L.shape[1]

    def log_density(self, X: np.ndarray) -> np.ndarray:
        """Rows of X (n x r): the unnormalised log posterior (with the prior's normaliser)."""
        from scipy.special import logsumexp

        eta = self.mean + X @ self.L.T
        log_theta = eta - logsumexp(eta, axis=1, keepdims=True)
        ll = np.zeros(X.shape[0])
        for u in range(self.c.size):
            ll += self.c[u] * logsumexp(log_theta + self.logcols[:, u], axis=1)
        return ll - 0.5 * (X**2).sum(axis=1) - 0.5 * self.r * np.log(2 * np.pi)

    def value_grad(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        from scipy.special import logsumexp

        eta = self.mean + self.L @ x
        theta = np.exp(eta - logsumexp(eta))
        cols = np.exp(self.logcols)
        s = theta @ cols
        a = cols @ (self.c / s)
        g_eta = theta * (a - a @ theta)
        value = float(self.c @ np.log(s)) - 0.5 * x @ x
        return value, self.L.T @ g_eta - x


def find_modes(post: Posterior, starts: int, seed: int) -> list[tuple[np.ndarray, float, np.ndarray]]:
    """Local maxima of the posterior from the prior mean, each topic pushed up by 3 and 6 prior sds,
    and `starts` prior draws (sd doubled): (mode, log density, -Hessian), distinct modes only."""
    from scipy.optimize import minimize

    r, T = post.r, post.mean.size
    Lp = np.linalg.pinv(post.L)
    sd = np.sqrt((post.L**2).sum(axis=1))
    xs = [np.zeros(r)]
    for k in range(T):
        for push in (3.0, 6.0):
            xs.append(Lp @ (push * sd[k] * np.eye(T)[k]))
    rng = np.random.default_rng(seed)
    xs += list(2.0 * rng.standard_normal((starts, r)))
    modes: list[tuple[np.ndarray, float, np.ndarray]] = []
    for x0 in xs:
        fit = minimize(lambda x: tuple(-v for v in post.value_grad(x)), x0, jac=True, method="L-BFGS-B",
                       options={"maxiter": 2000, "gtol": 1e-9})
        x = fit.x
        if any(np.linalg.norm(x - m) < 1e-3 * (1 + np.linalg.norm(m)) for m, _, _ in modes):
            continue
        h = 1e-5
        H = np.array([(post.value_grad(x + h * e)[1] - post.value_grad(x - h * e)[1]) / (2 * h)
                      for e in np.eye(r)])
        neg = -0.5 * (H + H.T)
        if np.linalg.eigvalsh(neg).min() <= 0:
            continue  # a saddle or a flat direction: not a mode
        modes.append((x, float(post.log_density(x[None])[0]), neg))
    return modes


def reference(phi, mean, L, doc, draws: int, seed: int, starts: int = 20, df: float = 5.0,
              widen: float = 1.2, defensive: float = 0.1) -> dict:
    """log P(doc) by importance sampling with the defensive mixture proposal (module notes)."""
    from scipy.special import gammaln, logsumexp

    post = Posterior(phi, mean, L, doc)
    r = post.r
    modes = find_modes(post, starts, seed)
    chols, logdets, centres, logmass = [], [], [], []
    for x, h, neg in modes:
        cov = np.linalg.inv(neg) * widen**2
        C = np.linalg.cholesky(cov)
        chols.append(C)
        logdets.append(float(np.log(np.diag(C)).sum()))
        centres.append(x)
        logmass.append(h - 0.5 * np.linalg.slogdet(neg)[1])  # Laplace: log of the mode's mass
    logmass = np.array(logmass)
    mass = np.exp(logmass - logmass.max())
    mass = 0.5 * mass / mass.sum() + 0.5 / len(modes)  # half by mass, half evenly
    weights = np.concatenate([[defensive], (1 - defensive) * mass])
    rng = np.random.default_rng(seed + 1)
    const = gammaln((df + r) / 2) - gammaln(df / 2) - r / 2 * np.log(df * np.pi)

    def log_q(X):
        parts = [np.log(weights[0]) - 0.5 * (X**2).sum(axis=1) - 0.5 * r * np.log(2 * np.pi)]
        for j in range(len(modes)):
            z = np.linalg.solve(chols[j], (X - centres[j]).T).T
            parts.append(np.log(weights[j + 1]) + const - logdets[j]
                         - (df + r) / 2 * np.log1p((z**2).sum(axis=1) / df))
        return logsumexp(np.array(parts), axis=0)

    chunk = 20_000
    out = []
    for _ in range(max(draws // chunk, 1)):
        comp = rng.choice(len(weights), size=chunk, p=weights)
        X = rng.standard_normal((chunk, r))
        for j in range(len(modes)):
            sel = comp == j + 1
            n = int(sel.sum())
            if n:
                u = rng.chisquare(df, n)
                X[sel] = centres[j] + (X[sel] @ chols[j].T) / np.sqrt(u / df)[:, None]
        out.append(post.log_density(X) - log_q(X))
    w = np.concatenate(out)
    p = np.exp(w - w.max())
    return {"log_prob": float(logsumexp(w) - np.log(w.size)),
            "se": float(p.std(ddof=1) / p.mean() / np.sqrt(w.size)),
            "effective_fraction": float(p.sum() ** 2 / (p**2).sum() / w.size), "modes": len(modes)}


# --- the model and documents ----------------------------------------------------------------------


def model_arrays(topics: int, iterations: int, seed: int = 1):
    """A tomotopy CTM trained on the SOTU training paragraphs (cached in CTM_CACHE): phi, mean, cov,
    its words."""
    import tomotopy as tp
    from ctm_heldout import train

    path = os.path.join(CACHE, f"ctm-{topics}-{iterations}-{seed}.bin")
    if os.path.exists(path):
        model = tp.CTModel.load(path)
    else:
        model = train(topics, iterations, seed)
        os.makedirs(CACHE, exist_ok=True)
        model.save(path)
    k = model.k
    mean = np.array(model.prior_mean, dtype=np.float64)
    cov = np.array(model.prior_cov, dtype=np.float64).reshape(k, k)
    phi = np.array([model.get_topic_word_dist(t) for t in range(k)], dtype=np.float64)
    phi /= phi.sum(axis=1, keepdims=True)  # float32 from tomotopy
    return model, phi, mean, cov


def documents(model, count: int, tokens: int | None) -> list[list[int]]:
    """`count` random held-out paragraphs (seed 5) as the model's word ids; with `tokens`, the first
    that many tokens of paragraphs that long."""
    from ctm_heldout import held_out

    docs, _, _ = held_out(model, 20 * count, seed=5)
    if tokens is not None:
        docs = [d[:tokens] for d in docs if len(d) >= tokens]
    return docs[:count]


# --- the comparison -------------------------------------------------------------------------------


def fixed(phi, mean, cov, docs, seed: int) -> dict:
    """Today's default: one run of 1,000 temperatures."""
    from tealeaves.heldout.logistic_normal import logistic_normal_log_prob

    t0 = time.process_time()
    est = logistic_normal_log_prob(phi, mean, cov, docs, temperatures=1000, runs=1, seed=seed)[0]
    return {"seed": seed, "cpu_seconds": time.process_time() - t0, "log_prob": est.tolist()}


def adaptive(phi, mean, cov, docs, seed: int) -> dict:
    from tealeaves.heldout.logistic_normal import adaptive_log_prob, combine_runs, spread

    t0 = time.process_time()
    out = adaptive_log_prob(phi, mean, cov, docs, seed=seed)
    return {"seed": seed, "cpu_seconds": time.process_time() - t0,
            "log_prob": combine_runs(out["runs"]).tolist(), "se": spread(out["runs"]).tolist(),
            "temperatures": out["temperatures"].tolist(), "change": out["change"].tolist(),
            "converged": out["converged"].tolist()}


def run(topics: int, iterations: int, count: int, tokens: int | None, draws: int, seeds,
        long_docs: int) -> dict:
    from tealeaves.heldout.logistic_normal import combine_runs, logistic_normal_log_prob, prior_factor

    model, phi, mean, cov = model_arrays(topics, iterations)
    docs = documents(model, count, tokens)
    _, L = prior_factor(mean, cov)
    t0 = time.process_time()
    refs = [reference(phi, mean, L, d, draws, seed=i) for i, d in enumerate(docs)]
    ref_seconds = time.process_time() - t0
    print(f"T={topics} tokens={tokens}: reference {ref_seconds:.0f} CPU s", flush=True)
    t0 = time.process_time()
    long = combine_runs(logistic_normal_log_prob(phi, mean, cov, docs[:long_docs], temperatures=100_000,
                                                 runs=4, seed=99)) if long_docs else np.zeros(0)
    long_seconds = time.process_time() - t0
    rows = {"fixed": [fixed(phi, mean, cov, docs, s) for s in seeds],
            "adaptive": [adaptive(phi, mean, cov, docs, s) for s in seeds]}
    return {"topics": topics, "iterations": iterations, "tokens_per_document": tokens,
            "tokens": [len(d) for d in docs], "documents": len(docs),
            "prior_sd_max": float(np.sqrt(np.diag(cov)).max()),
            "reference": {"draws": draws, "cpu_seconds": ref_seconds,
                          "log_prob": [r["log_prob"] for r in refs], "se": [r["se"] for r in refs],
                          "effective_fraction": [r["effective_fraction"] for r in refs],
                          "modes": [r["modes"] for r in refs]},
            "long_ais": {"temperatures": 100_000, "runs": 4, "documents": len(long),
                         "cpu_seconds": long_seconds, "log_prob": long.tolist()},
            **rows}


def quadrature_check(draws: int) -> list[dict]:
    """The reference against tensor quadrature (tests/test_logistic_normal.py's cases, mixture decoder)."""
    sys.path.insert(0, os.path.join(HERE, "..", "tests"))
    from test_logistic_normal import CASES, prior_of, quadrature

    from tealeaves.heldout.logistic_normal import prior_factor

    out = []
    for i, case in enumerate(CASES):
        beta, decoder, mean, cov, _, docs = prior_of(case)
        if decoder != "mixture":
            continue
        _, L = prior_factor(mean, cov)
        for doc in docs:
            r = reference(beta, mean, L, doc, draws, seed=100 + 7 * i + len(out))
            exact = float(quadrature(beta, mean, L, doc, decoder))
            out.append({"case": case, "document": doc, "quadrature": exact, **r})
    return out


# Two topics, eta_1 - eta_0 ~ N(mu, s^2); word 0 is 50 times likelier under topic 1: n of it pull toward
# topic 1, away from the prior's mode near topic 0. (s, mu, n): a posterior with two modes, the second
# about 3 prior sds out (the first two) and 6 (the last: no chain from the prior reaches it).
CONSTRUCTED = [(3.5, -10.0, 4), (3.0, -9.0, 4), (2.0, -12.0, 6)]


def constructed(seeds: int) -> list[dict]:
    """The adaptive budget and 1,000 fixed temperatures on the constructed two-mode posteriors, against
    quadrature: mean error over seeds (the fixed one's over as many runs), mean budget, converged share."""
    sys.path.insert(0, os.path.join(HERE, "..", "tests"))
    from test_logistic_normal import quadrature

    from tealeaves.heldout.logistic_normal import (
        adaptive_log_prob,
        combine_runs,
        logistic_normal_log_prob,
        prior_factor,
    )

    phi = np.array([[0.01, 0.49, 0.5], [0.5, 0.25, 0.25]])
    out = []
    for s, mu, n in CONSTRUCTED:
        mean, cov = np.array([0.0, mu]), np.array([[0.0, 0.0], [0.0, s * s]])
        doc = [0] * n
        _, L = prior_factor(mean, cov)
        truth = float(quadrature(phi, mean, L, doc, "mixture"))
        fixed_err = logistic_normal_log_prob(phi, mean, cov, [doc], temperatures=1000, runs=seeds,
                                             seed=1)[:, 0] - truth
        runs = [adaptive_log_prob(phi, mean, cov, [doc], seed=i) for i in range(seeds)]
        err = np.array([combine_runs(r["runs"])[0] for r in runs]) - truth
        out.append({"prior_sd": s, "prior_mean": mu, "tokens": n, "truth": truth, "seeds": seeds,
                    "fixed_error_mean": float(fixed_err.mean()), "adaptive_error_mean": float(err.mean()),
                    "adaptive_error_abs_max": float(np.abs(err).max()),
                    "adaptive_temperatures_mean": float(np.mean([r["temperatures"][0] for r in runs])),
                    "adaptive_converged": float(np.mean([r["converged"][0] for r in runs]))})
    return out


def summary(r: dict) -> dict:
    """One setting's figures, from the JSON: per method and seed, the error per token against the
    reference, the largest document error, CPU seconds; for the adaptive budget, the budgets and how
    often its stated standard error covers the error."""
    ref = np.array(r["reference"]["log_prob"])
    ref_se = np.array(r["reference"]["se"])
    n = float(sum(r["tokens"]))
    out = {}
    for name in ("fixed", "adaptive"):
        rows = []
        for e in r[name]:
            err = np.array(e["log_prob"]) - ref
            row = {"seed": e["seed"], "error_per_token": float(err.sum() / n),
                   "error_abs_max": float(np.abs(err).max()), "cpu_seconds": e["cpu_seconds"]}
            if name == "adaptive":
                se = np.sqrt(np.array(e["se"]) ** 2 + ref_se**2)
                row.update({"temperatures_mean": float(np.mean(e["temperatures"])),
                            "temperatures_max": int(np.max(e["temperatures"])),
                            "at_bound": int(len(e["converged"]) - np.sum(e["converged"])),
                            "covered": float(np.mean(np.abs(err) <= T_QUANTILE * se)),
                            "z_total": float(err.sum() / np.sqrt((se**2).sum()))})
            rows.append(row)
        out[name] = rows
    long = np.array(r["long_ais"]["log_prob"])
    firm = ref_se < 0.05  # documents whose reference is itself good to 0.05 nat
    a = r["adaptive"][0]
    out["firm_documents"] = int(firm.sum())
    out["adaptive_error_abs_max_firm"] = float(np.abs(np.array(a["log_prob"]) - ref)[firm].max())
    out["cpu_ratio"] = float(np.mean([e["cpu_seconds"] for e in r["adaptive"]])
                             / np.mean([e["cpu_seconds"] for e in r["fixed"]]))
    out["long_minus_reference_max"] = (float(np.abs(long - ref[:long.size]).max()) if long.size
                                       else float("nan"))
    out["reference_se_max"] = float(ref_se.max())
    out["reference_ess_min"] = float(min(r["reference"]["effective_fraction"]) * r["reference"]["draws"])
    out["modes_max"] = int(max(r["reference"]["modes"]))
    out["tokens_mean"] = n / r["documents"]
    return out


def markdown(result: dict) -> str:
    """docs/logistic_normal_budget.md from the results."""
    q = result["quadrature_check"]
    qz = max(abs(c["log_prob"] - c["quadrature"]) / c["se"] for c in q)
    lines = [
        "# The logistic-normal default's budget",
        "",
        "`python experiments/ctm_adaptive.py` (results: `experiments/results/ctm_adaptive.json`;",
        f"tomotopy {result['tomotopy']}, Python {result['python']}; {result['machine']}).",
        "",
        "Held-out likelihood under a logistic-normal prior (CTM, ETM, ProdLDA) is estimated by AIS over eta",
        "(`docs/logistic_normal.md`). A short document's posterior under a CTM with a wide prior has several",
        "modes (one per topic that can explain its words), and a fixed 1,000 temperatures from the prior",
        "reaches them in the wrong proportions: the estimate is low, and one run's spread does not show it.",
        "The default now sets each document's budget from its own diagnostics",
        "(`tealeaves.heldout.logistic_normal.adaptive_log_prob`): 4 independent AIS chains at 100",
        "temperatures, then 200, 400, ... until two consecutive budgets' estimates (log mean exp over the",
        "chains) differ by at most 0.05 nats and the chains at the last budget agree (the delta-method",
        "standard error of their log mean exp at most 0.05 nats), or 102,400 temperatures are reached. The",
        "estimate is the last budget's log mean exp over its chains, and its standard error comes from",
        "their spread.",
        "",
        "The reference is independent code (numpy and scipy only): importance sampling with a defensive",
        "mixture proposal, the prior (weight 0.1, which bounds every weight) and a multivariate t (5 degrees",
        "of freedom, scale 1.2 times the inverse Hessian's) at every mode that L-BFGS finds from the prior",
        "mean, each topic pushed up and 20 prior draws. Against tensor quadrature at T = 2 and 3",
        f"({len(q)} documents, {result['quadrature_draws']:,} draws) it is within {qz:.1f} of its own "
        "standard errors on each.",
        "",
        "| topics | documents | mean tokens | modes (most) | estimator | seed | error per token "
        "| largest document error | CPU s | mean temperatures | at the bound, chains disagreeing "
        "| covered by 95% interval | total error / its sd |",
        "|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in result["runs"]:
        s = summary(r)
        for name, label in (("fixed", "1,000 temperatures, 1 run"), ("adaptive", "adaptive, 4 chains")):
            for row in s[name]:
                extra = (f"{row['temperatures_mean']:,.0f} | {row['at_bound']} | "
                         f"{100 * row['covered']:.0f}% | {row['z_total']:+.1f}" if name == "adaptive"
                         else "1,000 | — | — | —")
                lines.append(f"| {r['topics']} | {r['documents']} | {s['tokens_mean']:.1f} | "
                             f"{s['modes_max']} | "
                             f"{label} | {row['seed']} | {row['error_per_token']:+.4f} | "
                             f"{row['error_abs_max']:.3f} | {row['cpu_seconds']:.1f} | {extra} |")
    lines += [""]
    for r in result["runs"]:
        s = summary(r)
        lines.append(f"- T = {r['topics']}, {s['tokens_mean']:.1f} tokens: the adaptive default cost "
                     f"{s['cpu_ratio']:,.0f} times the CPU of 1,000 fixed temperatures; on the "
                     f"{s['firm_documents']} of {r['documents']} documents whose reference has a standard "
                     f"error below 0.05 nats its largest error is {s['adaptive_error_abs_max_firm']:.3f}. "
                     f"Reference: standard error at most {s['reference_se_max']:.3f} nats, at least "
                     f"{s['reference_ess_min']:,.0f} effective draws of {r['reference']['draws']:,}; "
                     f"4 runs of AIS at 100,000 temperatures on {r['long_ais']['documents']} documents "
                     f"within {s['long_minus_reference_max']:.3f} nats of it.")
    sums = [summary(r) for r in result["runs"]]
    per_token = max(abs(row["error_per_token"]) for x in sums for row in x["adaptive"])
    fixed_token = max(abs(row["error_per_token"]) for x in sums for row in x["fixed"])
    firm = max(x["adaptive_error_abs_max_firm"] for x in sums)
    fixed_doc = max(row["error_abs_max"] for x in sums for row in x["fixed"])
    ratios = [x["cpu_ratio"] for x in sums]
    zmax = max(abs(row["z_total"]) for x in sums for row in x["adaptive"])
    lines += [
        "",
        f"In all: the adaptive default is within {per_token:.4f} nats per token of the reference in every",
        f"setting (1,000 fixed temperatures: up to {fixed_token:.4f}), and within {firm:.3f} nats on every",
        "document whose reference is itself good to 0.05 nats (1,000 fixed temperatures: off by up to",
        f"{fixed_doc:.2f}); the total's error is within {zmax:.1f} of the sd it states. It costs",
        f"{min(ratios):,.0f} to {max(ratios):,.0f} times the CPU of 1,000 fixed temperatures: most",
        "documents' budgets rise to tens of thousands of temperatures before 4 chains agree within 0.05",
        "nats.",
        "Where the reference itself is weak (few effective draws: T = 20 paragraphs) the adaptive estimate",
        "lies mostly above it, as an estimate unbiased for P(w) does above a reference that misses mass;",
        "the documents whose chains still disagree at the bound are counted in the result",
        "(`extra[\"adaptive\"][\"not_converged\"]`) and on the terminal.",
        "T = 50 was not measured (training a CTM with 50 topics did not fit this machine's shared CPU in",
        "the time the work had).",
    ]
    lines += [
        "",
        "Error = estimate − reference, summed over the documents and divided by their tokens (per token),",
        "and the largest single document's |error|; covered: the share of documents whose error is within",
        "t(0.975, 3 df) = 3.18 of the combined standard error (the chains' `spread` and the reference's,",
        "in quadrature); total error / its sd: the total's error over the sd the result states",
        "(sqrt of the sum of the chains' `spread` squared, with the reference's): within about ±2 when",
        "the stated sd does not understate the error. CPU seconds were measured side by side in one run",
        "on a machine shared with other jobs.",
        "",
        "## Where it cannot help: modes no chain reaches",
        "",
        "The budget is set from what the chains show. A mode that no chain from the prior ever reaches",
        "leaves no trace in them: the chains agree, doubling the temperatures changes nothing, and the",
        "estimate is low by that mode's share. Two topics, eta_1 − eta_0 ~ N(mean, sd^2), and a document",
        "of one word 50 times likelier under topic 1 (`CONSTRUCTED` in the script), against quadrature,",
        f"{result['constructed'][0]['seeds']} seeds:",
        "",
        "| prior mean, sd | tokens | 1,000 temperatures: mean error | adaptive: mean error | largest "
        "| mean temperatures | converged |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for c in result["constructed"]:
        lines.append(f"| {c['prior_mean']:g}, {c['prior_sd']:g} | {c['tokens']} | "
                     f"{c['fixed_error_mean']:+.3f} | "
                     f"{c['adaptive_error_mean']:+.3f} | {c['adaptive_error_abs_max']:.3f} | "
                     f"{c['adaptive_temperatures_mean']:,.0f} | {100 * c['adaptive_converged']:.0f}% |")
    lines += [
        "",
        "Where the second mode lies about 3 prior sds out the chains reach it now and then, their weights",
        "spread, and the budget rises to the bound (`tests/test_logistic_normal_budget.py` checks this",
        "case); where it lies 6 sds out none does, and the estimate is off by the mode's share at any",
        "number of temperatures, and `check=K` (an AIS reference with 200,000 temperatures on K",
        "documents) cannot show it either. The reference above searches for modes by optimisation from",
        "many starts, so a real document with such a mode would show as a large error against it.",
        "",
    ]
    return "\n".join(lines)


# (topics, tokens per document or None for whole paragraphs, documents)
SETTINGS = [(8, None, 30), (8, 8, 40), (20, None, 30), (20, 8, 40)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small run to check the script")
    parser.add_argument("--doc-only", action="store_true", help="rewrite the page from the JSON")
    parser.add_argument("--part", type=int, help="run only this setting (an index into SETTINGS), "
                        "writing RESULTS.part-N; --merge puts the parts together")
    parser.add_argument("--merge", action="store_true", help="the JSON from the parts, then the page")
    args = parser.parse_args()
    draws = 20_000 if args.quick else 100_000
    if args.doc_only:
        with open(RESULTS, encoding="utf-8") as f:
            result = json.load(f)
    elif args.part is not None:  # -1: the checks on constructed cases (quadrature)
        if args.part == -1:
            part = {"quadrature_check": quadrature_check(draws), "constructed": constructed(20)}
        else:
            t, tok, n = SETTINGS[args.part]
            part = run(t, 100, n, tok, draws, (3,), 3)
        with open(f"{RESULTS}.part-{args.part}", "w", encoding="utf-8") as f:
            json.dump(part, f)
        return
    else:
        import tomotopy as tp

        result = {"tomotopy": tp.__version__, "python": platform.python_version(),
                  "machine": "2 cores shared with other jobs: CPU seconds are indicative only",
                  "quadrature_draws": draws}
        if args.merge:
            with open(f"{RESULTS}.part--1", encoding="utf-8") as f:
                result.update(json.load(f))
        else:
            result.update({"quadrature_check": quadrature_check(draws),
                           "constructed": constructed(4 if args.quick else 20)})
        if args.quick:
            result["runs"] = [run(8, 20, 4, 8, draws, (3,), 0)]
        elif args.merge:
            result["runs"] = []
            for i in range(len(SETTINGS)):
                if os.path.exists(f"{RESULTS}.part-{i}"):
                    with open(f"{RESULTS}.part-{i}", encoding="utf-8") as f:
                        result["runs"].append(json.load(f))
        else:
            result["runs"] = [run(t, 100, n, tok, draws, (3,), 3) for t, tok, n in SETTINGS]
        if not args.quick:
            os.makedirs(os.path.dirname(RESULTS), exist_ok=True)
            with open(RESULTS, "w", encoding="utf-8") as f:
                json.dump(result, f, indent=1)
                f.write("\n")
    page = markdown(result)
    if args.quick:
        print(page)
        return
    with open(PAGE, "w", encoding="utf-8") as f:
        f.write(page)


if __name__ == "__main__":
    main()
