"""Bridge sampling over theta from one Gibbs chain (`method="bridge"`, issue 36): its accuracy
against exact values and long references, on short and long real documents, and where it stops
being trustworthy.

Parts (each replaces its section of the saved JSON; `--only PART`):
- `exact`: 20 tiny random models (2-5 topics, 4-12 tokens; tests/test_bridge.py's cases) against
  the exact value: error and mean squared error of one run, and how often the run's interval
  +- 1.96 sqrt(V) covers the exact value, at samples S = 10 .. 160 (100 runs each).
- `paragraphs`: 100 random held-out paragraphs (the set of experiments/default_accuracy.py and
  linear_smc.py) under `sotu-20-asym` against the 200,000-temperature AIS reference (2 runs), 8
  seeds: error of the total per token, the worst paragraph, the summed squared error, the z-score
  of the total against its own sd (sqrt sum V), CPU seconds of one call; bridge at S = 25 .. 200
  and left-to-right (the default before issue 36) at its defaults.
- `long`: 6 whole held-out addresses (604 to 5,266 tokens) under `sotu-20-asym` and
  `sotu-50-asym` against left-to-right `smc` with 500 particles, K = 256, 2 runs (the reference
  of linear_smc.py's held-out report), 3 seeds: every document's error and its own sd; samples,
  temper and (at 50 topics) burn-in varied.
- `proposals`: at S = 100 on the same addresses, the effective sample sizes of the chain's mixture
  (untempered and tempered), a moment-matched Dirichlet and a logistic normal fitted to the draws,
  and the bridge's and plain importance sampling's errors with each.
- `windows`: random windows of 150 and 300 tokens of held-out addresses under `sotu-50-asym`
  against `smc` with 1,000 particles, K = 512 (a full pass at these lengths), 2 runs, 3 seeds.

References are kept in the JSON (per document) and reused unless --recompute-references.
CPU seconds: time.process_time of one in-process call (workers=1) on a 2-core machine shared with
other jobs.

    python experiments/heldout_bridge.py [--only exact] [--only paragraphs] [--only long] [--only windows]

Writes experiments/results/heldout_bridge.json and docs/heldout_bridge.md.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time

import numpy as np

import tealeaves as tl
from tealeaves import datasets

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
RESULTS = os.path.join(HERE, "results", "heldout_bridge.json")
EXACT_SAMPLES = (10, 20, 40, 80, 160)
EXACT_TEMPERED = (40, 160)  # also with temper = TEMPERED
TEMPERED = 0.25
PROPOSAL_SAMPLES = 100
PARAGRAPH_SAMPLES = (25, 50, 100, 150, 200)
LONG_SAMPLES = (50, 100, 200)
WINDOW_SAMPLES = (100, 400)
TOPICS = (20, 50, 200)
TOPIC_SAMPLES = (100, 200)
SEEDS = 8
LONG_SEEDS = 3
AIS = {"method": "ais", "temperatures": 200_000, "runs": 2, "seed": 12345}
LONG_REF = {"method": "left-to-right", "particles": 500, "rejuvenate": 256, "runs": 2, "seed": 999}
WINDOW_REF = {"method": "left-to-right", "particles": 1000, "rejuvenate": 512, "runs": 2, "seed": 999}


def paragraphs() -> tl.Corpus:
    c = datasets.sotu().heldout
    return c.subset(np.sort(np.random.default_rng(0).choice(len(c), 100, replace=False)))


def addresses(count: int = 6, seed: int = 5) -> tl.Corpus:
    """`count` random whole held-out addresses (their paragraphs joined)."""
    s = datasets.sotu()
    held, addr = s.heldout, s.address["heldout"]
    pick = np.sort(np.random.default_rng(seed).choice(np.unique(addr), count, replace=False))
    return tl.Corpus.from_word_ids(
        [np.concatenate([held[i] for i in np.flatnonzero(addr == a)]) for a in pick], vocab=held.vocab
    )


def windows(N: int, count: int) -> tl.Corpus:
    """A random window of N tokens from each of `count` random held-out addresses of at least N."""
    s = datasets.sotu()
    held, addr = s.heldout, s.address["heldout"]
    texts = {a: np.concatenate([held[i] for i in np.flatnonzero(addr == a)]) for a in np.unique(addr)}
    longs = sorted(a for a, w in texts.items() if w.size >= N)
    out = []
    for a in sorted(np.random.default_rng(N).choice(longs, count, replace=False)):
        start = np.random.default_rng(int(a) + N).integers(0, texts[a].size - N + 1)
        out.append(texts[a][start : start + N])
    return tl.Corpus.from_word_ids(out, vocab=held.vocab)


def reference(out: dict, key: str, model, docs, params: dict, recompute: bool) -> np.ndarray:
    refs = out.setdefault("references", {})
    if key not in refs or recompute:
        p = dict(params)
        t0 = time.time()
        res = tl.heldout(model, docs, workers=2, bootstrap=0, max_hours=1000, **p)
        refs[key] = {
            "params": params,
            "doc_log_prob": res.doc_log_prob.tolist(),
            "run_log_prob": res.run_log_prob.tolist(),
            "seconds": time.time() - t0,
        }
        save(out)
    return np.array(refs[key]["doc_log_prob"])


def call(model, docs, seed: int, **params) -> tuple[tl.HeldoutResult, float]:
    t0 = time.process_time()
    res = tl.heldout(model, docs, seed=seed, workers=1, bootstrap=0, max_hours=1000, **params)
    return res, time.process_time() - t0


def exact_part() -> list[dict]:
    from conftest import random_tiny

    rows = []
    cases = []
    for seed in range(20):
        model, docs = random_tiny(2000 + seed, N_range=(4, 12))
        cases.append((model, docs, tl.heldout(model, docs, method="exact").total))
    settings = [(S, 1.0) for S in EXACT_SAMPLES] + [(S, TEMPERED) for S in EXACT_TEMPERED]
    for S, lam in settings:
        err, var = [], []
        for seed, (model, docs, exact) in enumerate(cases):
            res = tl.heldout(model, docs, method="bridge", samples=S, runs=100, seed=seed, bootstrap=0,
                             temper=lam)
            err.append(res.run_log_prob[:, 0] - exact)
            var.append(res.run_rel_var[:, 0])
        err, var = np.array(err), np.array(var)
        z = err / np.sqrt(var)
        rows.append(
            {
                "samples": S,
                "temper": lam,
                "mean_error": float(err.mean()),
                "largest_case_mean_error": float(np.abs(err.mean(axis=1)).max()),
                "mean_squared_error": float((err**2).mean()),
                "mean_V": float(var.mean()),
                "coverage": float(np.mean(np.abs(z) <= 1.96)),
            }
        )
        print("  exact", rows[-1], flush=True)
    return rows


def seeds_row(model, docs, ref: np.ndarray, seeds: int, **params) -> dict:
    """One call per seed: each call's error per token, the worst document, the summed squared error,
    the z-score of the total against its own sd (bridge), CPU seconds per call."""
    call(model, docs.subset([0]), 0, **params)  # compile or load outside the timing
    per_token, worst, sq, z, cpu, per_doc, sds = [], 0.0, [], [], 0.0, [], []
    for s in range(seeds):
        res, sec = call(model, docs, 100 + s, **params)
        err = res.doc_log_prob - ref
        per_token.append(float(err.sum() / docs.num_tokens))
        worst = max(worst, float(np.abs(err).max()))
        sq.append(float((err**2).sum()))
        ve = res.variance_estimate
        if ve is not None and ve["kind"] == "bridge":
            z.append(float(err.sum() / ve["sd_total"]))
            sds.append(np.sqrt(res.doc_rel_var).tolist())
        per_doc.append(err.tolist())
        cpu += sec
    row = {
        "label": res.label,
        "params": params,
        "seeds": seeds,
        "tokens": int(docs.num_tokens),
        "error_per_token": per_token,
        "largest_document_error": worst,
        "squared_error": float(np.mean(sq)),
        "z_total": z,
        "cpu_per_call": cpu / seeds,
        "tokens_per_cpu_second": docs.num_tokens * seeds / cpu,
        "document_errors": per_doc,
        "document_sd": sds,
    }
    print(
        f"  {row['label']:<60} err/token {' '.join(f'{x:+.5f}' for x in per_token)} worst {worst:.2f} "
        f"sq {row['squared_error']:.2f} z {' '.join(f'{x:+.1f}' for x in z)} "
        f"{row['tokens_per_cpu_second']:,.0f} tok/s",
        flush=True,
    )
    return row


def paragraphs_part(out: dict, recompute: bool) -> dict:
    model = datasets.sotu_model("sotu-20-asym")
    docs = paragraphs()
    ref = reference(out, "sotu-20-asym/paragraphs", model, docs, AIS, recompute)
    rows = [seeds_row(model, docs, ref, SEEDS, method="bridge", samples=S, temper=1.0)
            for S in PARAGRAPH_SAMPLES]
    rows += [seeds_row(model, docs, ref, SEEDS, method="bridge", samples=S, temper=TEMPERED)
             for S in (100, 200)]
    rows.append(seeds_row(model, docs, ref, SEEDS, method="left-to-right"))
    return {"model": "sotu-20-asym", "documents": len(docs), "tokens": int(docs.num_tokens), "rows": rows}


def long_part(out: dict, recompute: bool) -> dict:
    docs = addresses()
    res = {"lengths": [len(d) for d in docs], "models": {}}
    for name in ("sotu-20-asym", "sotu-50-asym"):
        model = datasets.sotu_model(name)
        ref = reference(out, f"{name}/addresses", model, docs, LONG_REF, recompute)
        res["models"][name] = [
            seeds_row(model, docs, ref, LONG_SEEDS, method="bridge", samples=S, topics_limit=50, temper=lam)
            for lam in (1.0, 0.5, TEMPERED, 0.15) for S in LONG_SAMPLES if lam == 1.0 or S > 50
        ]
        if name == "sotu-50-asym":  # is it burn-in? a longer chain before the sweeps that count
            res["models"][name] += [
                seeds_row(model, docs, ref, LONG_SEEDS, method="bridge", samples=100, burn_in=B,
                          topics_limit=50, temper=lam)
                for lam in (1.0, TEMPERED) for B in (200, 1000)
            ]
    return res


def windows_part(out: dict, recompute: bool) -> dict:
    model = datasets.sotu_model("sotu-50-asym")
    res = {}
    for N, count in ((150, 10), (300, 8)):
        docs = windows(N, count)
        ref = reference(out, f"sotu-50-asym/windows-{N}", model, docs, WINDOW_REF, recompute)
        res[str(N)] = [
            seeds_row(model, docs, ref, LONG_SEEDS, method="bridge", samples=S, topics_limit=50, temper=1.0)
            for S in WINDOW_SAMPLES
        ]
    return res


def _proposal_rows(model, docs, ref: np.ndarray, S: int, seeds: int) -> list[dict]:
    """For each document and seed: one chain's counts (20 burn-in sweeps, then 3 S sweeps: the first
    S fit the proposal, the other 2 S give posterior draws theta ~ Dir(alpha + n)), S draws from each
    proposal, and for each proposal the optimal bridge's error against `ref` and the effective sample
    size (sum w)^2 / sum w^2 of the importance weights on each side (w = p / q at the proposal's
    draws, q / p at the posterior draws). Proposals: the chain's mixture of Dir(alpha + lambda n^(k))
    (lambda = 1, `method="bridge"`, and TEMPERED); a Dirichlet with the mean and total variance of
    the S fitted draws; a logistic normal fitted to them (additive log ratios of the topics with mean
    count >= 1 and of the rest's total, the rest split by Dir(alpha + mean counts))."""
    from scipy import stats
    from scipy.special import gammaln, logsumexp

    from tealeaves.sampling import prepare_doc
    from tealeaves.sampling.bridge import chain_counts, solve, unique_rows
    from tealeaves.sampling.rng import new_state

    def logdir(th, a):
        return gammaln(a.sum()) - gammaln(a).sum() + ((a - 1) * np.log(th)).sum(-1)

    def ess(lw):
        w = np.exp(lw - lw.max())
        return float(w.sum() ** 2 / (w * w).sum())

    rows = []
    for i, d in enumerate(docs):
        p = prepare_doc(model.phi_wt, np.asarray(model.alpha, np.float64), np.asarray(d, np.int64))
        a, T = p.alpha, p.alpha.size
        urows, cnt = unique_rows(p.rows, np.asarray(p.words, np.int64))

        def logp(th, p=p, a=a, urows=urows, cnt=cnt):
            return (cnt * np.log(th @ urows.T)).sum(1) + logdir(th, a) + p.log_scale

        for seed in range(seeds):
            rng = np.random.default_rng([seed, i])
            state = new_state(np.random.SeedSequence([seed, i]))
            tops, vals, off = chain_counts(p.rows, p.cum, 20, 3 * S, state)
            C = np.zeros((3 * S, T))
            for k in range(3 * S):
                C[k, tops[off[k]:off[k + 1]]] = vals[off[k]:off[k + 1]]
            fit = C[:S]
            post = np.maximum([rng.dirichlet(a + c) for c in C[S:]], 1e-300)
            th_f = np.maximum([rng.dirichlet(a + c) for c in fit], 1e-300)
            props = {}
            for lam in (1.0, TEMPERED):
                comps = a + lam * fit

                def lq(th, comps=comps):
                    return logsumexp(np.stack([logdir(th, c) for c in comps], 1), 1) - math.log(len(comps))

                pick = rng.integers(0, S, S)
                draws = np.maximum([rng.dirichlet(comps[k]) for k in pick], 1e-300)
                props[f"mixture, temper {lam:g}"] = (lq, draws)
            m, v = th_f.mean(0), th_f.var(0)
            beta = m * ((m * (1 - m)).sum() / v.sum() - 1)
            props["moment-matched Dirichlet"] = (lambda th, beta=beta: logdir(th, beta),
                                                 np.maximum(rng.dirichlet(beta, S), 1e-300))
            nbar = fit.mean(0)
            used, rest = np.flatnonzero(nbar >= 1.0), np.flatnonzero(nbar < 1.0)
            j = int(np.argmax(nbar[used]))

            def parts(th, used=used, rest=rest):
                cols = [th[:, used]] + ([th[:, rest].sum(1, keepdims=True)] if rest.size else [])
                return np.log(np.concatenate(cols, 1))

            L = parts(th_f)
            X = np.delete(L - L[:, [j]], j, 1)
            gauss = stats.multivariate_normal(X.mean(0), np.cov(X.T) + 1e-9 * np.eye(X.shape[1]))
            split = a[rest] + nbar[rest]

            def lq_ln(th, gauss=gauss, used=used, rest=rest, j=j, split=split):
                L = parts(th)
                out = gauss.logpdf(np.delete(L - L[:, [j]], j, 1)) - L.sum(1)
                if rest.size > 1:
                    tot = th[:, rest].sum(1)
                    psi = np.maximum(th[:, rest] / tot[:, None], 1e-300)
                    out += logdir(psi, split) - (rest.size - 1) * np.log(tot)
                return out

            Y = np.insert(gauss.rvs(size=S, random_state=rng), j, 0.0, axis=1)
            P = np.exp(Y - logsumexp(Y, 1, keepdims=True))
            th = np.zeros((S, T))
            th[:, used] = P[:, :used.size]
            if rest.size:
                th[:, rest] = P[:, [used.size]] * rng.dirichlet(split, S)
            props["logistic normal"] = (lq_ln, np.maximum(th, 1e-300))
            for name, (lq, draws) in props.items():
                l1 = logp(post) - lq(post)
                l2 = logp(draws) - lq(draws)
                ok = np.isfinite(l1).all() and np.isfinite(l2).all()
                est = float(solve(np.ascontiguousarray(l1), np.ascontiguousarray(l2))) if ok else math.nan
                is_est = float(logsumexp(l2) - math.log(l2.size)) if ok else math.nan
                rows.append({"document": i, "tokens": len(d), "seed": seed, "proposal": name,
                             "error": est - float(ref[i]), "importance_error": is_est - float(ref[i]),
                             "ess_proposal": ess(l2) if ok else math.nan,
                             "ess_posterior": ess(-l1) if ok else math.nan, "used_topics": int(used.size)})
        print(f"  proposals: document {i} ({len(d)} tokens) done", flush=True)
    return rows


def proposals_part(out: dict, recompute: bool) -> dict:
    """Where the bridge's error at 50 topics comes from: the proposal's overlap with the posterior
    (_proposal_rows) on the whole addresses under both models, S = 100, 2 seeds."""
    docs = addresses()
    res = {"samples": PROPOSAL_SAMPLES, "seeds": 2, "models": {}}
    for name in ("sotu-20-asym", "sotu-50-asym"):
        model = datasets.sotu_model(name)
        ref = reference(out, f"{name}/addresses", model, docs, LONG_REF, recompute)
        res["models"][name] = _proposal_rows(model, docs, ref, PROPOSAL_SAMPLES, 2)
    return res


def topics_part() -> dict:
    """The 300 random held-out paragraphs of benchmarks/heldout_vs_peers.py under its tomotopy models
    (T = 20, 50, 200, trained on the training paragraphs; its --cache) against its references
    (left-to-right `smc-full`, 1,000 particles, 2 runs): run that benchmark first."""
    sys.path.insert(0, os.path.join(HERE, "..", "benchmarks"))
    import heldout_vs_peers as peers

    with open(peers.REFERENCES) as fh:
        refs = json.load(fh)
    docs = peers.documents()["paragraphs"]
    vocab = docs.vocab
    out = {}
    for T in TOPICS:
        model, _ = peers.as_topic_model(peers.tomotopy_model(T, peers.default_cache()), vocab)
        corpus = tl.Corpus.from_tokens([[vocab[i] for i in d] for d in docs], model.vocab)
        ref = np.array(refs[str(T)]["tomotopy/paragraphs"]["doc_log_prob"])
        out[str(T)] = [
            seeds_row(model, corpus, ref, LONG_SEEDS, method="bridge", samples=S, topics_limit=T, temper=1.0)
            for S in TOPIC_SAMPLES
        ]
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", action="append", choices=["exact", "paragraphs", "long", "windows", "topics",
                                                           "proposals"])
    ap.add_argument("--recompute-references", action="store_true")
    args = ap.parse_args()
    parts = args.only or ["exact", "paragraphs", "long", "windows", "topics", "proposals"]
    out: dict = {}
    if os.path.exists(RESULTS):
        with open(RESULTS) as fh:
            out = json.load(fh)
    out["cpu_time"] = "time.process_time of one in-process call (workers=1) on a shared 2-core machine"
    if "exact" in parts:
        out["exact"] = exact_part()
        save(out)
    if "paragraphs" in parts:
        out["paragraphs"] = paragraphs_part(out, args.recompute_references)
        save(out)
    if "long" in parts:
        out["long"] = long_part(out, args.recompute_references)
        save(out)
    if "windows" in parts:
        out["windows"] = windows_part(out, args.recompute_references)
        save(out)
    if "topics" in parts:
        out["topics"] = topics_part()
        save(out)
    if "proposals" in parts:
        out["proposals"] = proposals_part(out, args.recompute_references)
        save(out)


def save(out: dict) -> None:
    os.makedirs(os.path.dirname(RESULTS), exist_ok=True)
    with open(RESULTS, "w") as fh:
        json.dump(out, fh, indent=1)
    with open(os.path.join(HERE, "..", "docs", "heldout_bridge.md"), "w") as fh:
        fh.write(markdown(out))


def _seeds(xs: list[float]) -> str:
    return ", ".join(f"{x:+.5f}" for x in xs)


def markdown(out: dict) -> str:
    """docs/heldout_bridge.md from the results."""
    lines = [INTRO]
    if "exact" in out:
        lines += [
            "## Against exact values",
            "",
            "20 tiny random models (2 to 5 topics, 4 to 12 tokens), 100 runs each per setting: the mean "
            "error of one run's log estimate (over all runs; the largest of the 20 models' means), its "
            "mean squared error, the mean of the run's own error estimate V, and how often the run's "
            "interval log P-hat ± 1.96 √V covers the exact value (nominal 95%).",
            "",
            "| samples S | temper λ | mean error | largest model mean | mean squared error | mean V | "
            "coverage |",
            "|---|---|---|---|---|---|---|",
        ]
        for r in out["exact"]:
            lines.append(
                f"| {r['samples']} | {r.get('temper', 1.0):g} | {r['mean_error']:+.4f} | "
                f"{r['largest_case_mean_error']:.4f} | "
                f"{r['mean_squared_error']:.5f} | {r['mean_V']:.5f} | {r['coverage']:.1%} |"
            )
        lines.append("")
    if "paragraphs" in out:
        p = out["paragraphs"]
        lines += [
            f"## {p['documents']} random held-out paragraphs ({p['model']}, {p['tokens']:,} tokens)",
            "",
            "Against the 200,000-temperature AIS reference (2 runs; its own noise is up to 0.0003 nats per "
            "token: docs/default_accuracy.md). One call per seed: its error per token, the worst paragraph "
            "over all seeds, the summed squared error (mean per call, the reference's noise included), the "
            "total's error in units of its own sd (bridge), tokens per CPU-second.",
            "",
            "| estimator | error per token, each seed | worst paragraph | Σ squared error | z of the total | "
            "tokens per CPU-s |",
            "|---|---|---|---|---|---|",
        ]
        for r in p["rows"]:
            z = ", ".join(f"{x:+.1f}" for x in r["z_total"]) or "–"
            lines.append(
                f"| {r['label']} | {_seeds(r['error_per_token'])} | {r['largest_document_error']:.2f} | "
                f"{r['squared_error']:.2f} | {z} | {r['tokens_per_cpu_second']:,.0f} |"
            )
        lines.append("")
    if "long" in out:
        res = out["long"]
        lines += [
            "## Whole held-out addresses",
            "",
            f"6 addresses of {', '.join(f'{n:,}' for n in res['lengths'])} tokens, against left-to-right "
            "`smc` with 500 particles, K = 256, 2 runs (its two runs differ by up to about a nat on one "
            "address: docs/linear_smc.md). Error per token of each call (3 seeds), the worst address, "
            "the summed squared error, the total's error in units of its own sd.",
            "",
            "| model | estimator | error per token, each seed | worst address | Σ squared error | "
            "z of the total | tokens per CPU-s |",
            "|---|---|---|---|---|---|---|",
        ]
        for name, rows in res["models"].items():
            for r in rows:
                z = ", ".join(f"{x:+.1f}" for x in r["z_total"])
                lines.append(
                    f"| {name} | {r['label']} | {_seeds(r['error_per_token'])} | "
                    f"{r['largest_document_error']:.2f} | {r['squared_error']:.2f} | {z} | "
                    f"{r['tokens_per_cpu_second']:,.0f} |"
                )
        lines.append("")
    if "windows" in out:
        lines += [
            "## Windows of held-out addresses (sotu-50-asym)",
            "",
            "Random windows of N tokens against left-to-right `smc-full` with 1,000 particles (K = 512 "
            "is a full pass at these lengths), 2 runs; 3 seeds.",
            "",
            "| N | estimator | error per token, each seed | worst window | Σ squared error | "
            "z of the total |",
            "|---|---|---|---|---|---|",
        ]
        for N, rows in out["windows"].items():
            for r in rows:
                z = ", ".join(f"{x:+.1f}" for x in r["z_total"])
                lines.append(
                    f"| {N} | {r['label']} | {_seeds(r['error_per_token'])} | "
                    f"{r['largest_document_error']:.2f} | {r['squared_error']:.2f} | {z} |"
                )
        lines.append("")
    if "proposals" in out:
        res = out["proposals"]
        S = res["samples"]
        lines += [
            "## Where the error at 50 topics comes from: the proposal's overlap",
            "",
            f"The 6 whole addresses above; one chain per document and seed ({res['seeds']} seeds): 20 "
            f"burn-in sweeps, then {S} sweeps that fit a proposal and {2 * S} that give posterior draws "
            f"(θ ~ Dir(α + n)), and {S} draws from each proposal (numpy; `--only proposals`). For each "
            "proposal: the effective sample size (Σw)²/Σw² of the importance weights on the proposal's "
            f"side (w = p/q, of {S} draws) and on the posterior's side (w = q/p, of {2 * S}), median and "
            "range over documents and seeds, and the optimal bridge's error against the reference "
            "(worst document, and the total per token, each seed), and the worst document of plain "
            "importance sampling from the proposal's draws alone (log mean w). The logistic normal "
            "spans " + "; ".join(
                f"{min(r['used_topics'] for r in rows)} to {max(r['used_topics'] for r in rows)} topics "
                f"({name})" for name, rows in res["models"].items()) + " fitted to "
            f"{S} draws.",
            "",
            "| model | proposal | ESS, proposal side | ESS, posterior side | worst document | "
            "error per token, each seed | importance sampling: worst document |",
            "|---|---|---|---|---|---|---|",
        ]
        for name, rows in res["models"].items():
            tokens = sum({r["document"]: r["tokens"] for r in rows}.values())
            for prop in dict.fromkeys(r["proposal"] for r in rows):
                mine = [r for r in rows if r["proposal"] == prop]
                e1 = np.array([r["ess_proposal"] for r in mine])
                e2 = np.array([r["ess_posterior"] for r in mine])
                err = np.array([r["error"] for r in mine])
                seeds = sorted({r["seed"] for r in mine})
                tot = [np.sum([r["error"] for r in mine if r["seed"] == k]) / tokens for k in seeds]
                fmt = lambda e: f"{np.nanmedian(e):.1f} ({np.nanmin(e):.1f}–{np.nanmax(e):.1f})"  # noqa: E731
                imp = np.array([r["importance_error"] for r in mine])
                lines.append(f"| {name} | {prop} | {fmt(e1)} | {fmt(e2)} | {np.nanmax(np.abs(err)):.1f} | "
                             f"{_seeds(tot)} | {np.nanmax(np.abs(imp)):.1f} |")
        lines += [
            "",
            "Read with the tables above: the error at 50 topics is the proposal's coverage of the "
            "posterior. The bridge's iteration is not the cause (plain importance sampling from the same "
            "draws is further off), nor burn-in alone (200 or 1,000 sweeps instead of 20 leave the "
            "untempered bridge as far off, in the addresses table); more sweeps shrink it only slowly "
            "(S = 50 to 200 there). "
            "Widening the components (temper) halves it; the fitted proposals do no better than the "
            "chain's own mixture, since 100 to 300 draws fit a 30- to 47-dimensional shape poorly. "
            "A budget per document from the run's own error estimate does not rescue it: that estimate "
            "saturates near 1 (an sd of about a nat) when the two sides barely overlap "
            "(tests/test_bridge.py), so at 50 topics most totals above sit 3 to 18 of their own sd off. "
            "`bridge` therefore keeps topics_limit = 20 (with temper = 0.25 by default, measured at "
            "least as good as 1 on the paragraphs and addresses at 20 topics), and models with more "
            "topics fall back to left-to-right.",
            "",
        ]
    return "\n".join(lines)


INTRO = """# Bridge sampling over theta: a cheaper held-out estimate (issue 36)

`python experiments/heldout_bridge.py`. P(w) = ∫ p(w | θ) Dir(θ; α) dθ, and given a collapsed Gibbs
chain's assignments z, θ | z, w ~ Dir(α + n(z)) exactly, so the posterior of θ is the mixture
E_z[Dir(α + n(z))]. `method="bridge"` runs one chain (sequential initialisation, `burn_in` sweeps),
takes the next S sweeps' counts as the components of a proposal q (their mixture), the 2 S sweeps
after those as posterior draws (one θ per sweep) and S draws from q, and combines the two sides with
the optimal bridge of Meng & Wong (1996). Each run also estimates its own relative mean squared error
(Frühwirth-Schnatter 2004, with the autocorrelation of the chain's side), from which the result gives
the sd of the total and a 95% interval. It is consistent (the error shrinks as S grows), not
unbiased. Its cost per document is (burn-in + 3 S) N Gibbs site updates plus 3 S draws of θ, each
scoring the document's distinct words once: linear in the document, where left-to-right with R
particles and rejuvenation K costs R N K. `temper=λ` widens the proposal's components to Dir(α + λ n):
any λ > 0 is a valid proposal (its density is evaluated exactly), so the estimator stays
consistent; the rows with `temper` below measure what it changes. The default is 0.25 (it was 1,
the rows with temper=1.0): on the tiny models its error is larger but its interval still covers,
and on real paragraphs and whole addresses it was as accurate or better at 20 and 50 topics.
"""


if __name__ == "__main__":
    main()
