"""Does `select` find the number of topics a corpus was generated with, and is it fooled by a
stuck restart? Against what gensim's perplexity, scikit-learn's perplexity and the classic
metrics (Arun 2010, Cao Juan 2009, Deveaud 2014, Griffiths 2004) would have chosen.

Each corpus: LDA's generative process (`tealeaves.synthetic`) with K_true topics
phi_k ~ Dir(0.02) over V = 800 words, symmetric alpha (sum 1), D = 600 documents of 80 tokens;
K_true in (5, 10) x seeds (0, 1, 2). `tl.select` over the grid K in GRID with 3 restarts each
(tomotopy, 200 iterations, left-to-right with 20 particles), the same 20% held out. Each rule
(`tealeaves.select.rule.RULES`) is applied to the same evaluations; the rule before issue 26 is
`choice["log-lik/token"]`: the best mean over restarts, compared with the runner-up only.

The stuck restart: on each corpus, restart 1 of K = K_true is replaced (in a copy of the run's
`--out` folder, which select resumes from) by that model with its two most similar topics
merged into one and the freed topic a perturbed copy of its largest topic: a model that merged
two true topics and split another, as a collapsed Gibbs sampler stuck in a local optimum does.

A rule succeeds on a corpus when it picks K_true or says K_true cannot be separated from its
choice. gensim (`LdaModel`, online VB, 10 passes; its `log_perplexity` on the held-out documents)
and scikit-learn (`LatentDirichletAllocation`, batch VB, 50 iterations; its `perplexity`) train
one model per K on the same training documents; the classic metrics choose by their mean over
select's restarts.

    python experiments/select_synthetic.py [--out experiments/results/select_synthetic.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import tempfile
import time

import numpy as np

import tealeaves as tl
from tealeaves import synthetic
from tealeaves.io import save_model
from tealeaves.select import split
from tealeaves.select.classic import CLASSIC
from tealeaves.select.rule import RULES, decide

HERE = os.path.dirname(os.path.abspath(__file__))
V, D, LENGTH, BETA, ALPHA_SUM = 800, 600, 80, 0.02, 1.0
K_TRUE, SEEDS, GRID = (5, 10), (0, 1, 2), (3, 5, 7, 10, 14, 20)
RESTARTS, ITERATIONS, PARTICLES, HOLDOUT = 3, 200, 20, 0.2
CLASSIC_NAMES = [name for name, _ in CLASSIC.values()]
RECOVERED = 0.95  # a true topic is recovered when some learned topic has cosine >= this with it


def truth(k_true: int, seed: int) -> tl.TopicModel:
    return synthetic.random_model(k_true, V, beta=BETA, alpha_sum=ALPHA_SUM, alpha_shape="symmetric",
                                  seed=1000 * k_true + seed)


def corpus(k_true: int, seed: int) -> list[list[str]]:
    c = synthetic.generate(truth(k_true, seed), D, LENGTH, seed=1000 * k_true + seed + 1)
    return [[c.vocab[i] for i in doc] for doc in c]


def recovered(model: tl.TopicModel, true: tl.TopicModel) -> int:
    """How many true topics some topic of `model` matches (cosine >= RECOVERED)."""
    index = {w: i for i, w in enumerate(true.vocab)}
    phi = np.zeros((model.num_topics, true.num_words))
    for j, w in enumerate(model.vocab):
        phi[:, index[w]] = model.phi[:, j]
    unit = lambda a: a / np.linalg.norm(a, axis=1, keepdims=True)  # noqa: E731
    return int(((unit(true.phi) @ unit(phi).T).max(axis=1) >= RECOVERED).sum())


def stuck(model: tl.TopicModel) -> tl.TopicModel:
    """`model` with its two most similar topics merged and the freed one a perturbed copy of its
    largest remaining topic (the Gibbs samples dropped: a stuck model has none recorded here)."""
    phi, alpha = model.phi.copy(), np.array(model.alpha, dtype=float)
    unit = phi / np.linalg.norm(phi, axis=1, keepdims=True)
    cos = unit @ unit.T
    np.fill_diagonal(cos, -1)
    i, j = np.unravel_index(np.argmax(cos), cos.shape)
    phi[i] = (alpha[i] * phi[i] + alpha[j] * phi[j]) / (alpha[i] + alpha[j])
    alpha[i] += alpha[j]
    rest = [t for t in range(len(alpha)) if t not in (i, j)]
    big = max(rest, key=lambda t: alpha[t])
    noise = np.random.default_rng(7).gamma(20.0, 1 / 20.0, size=phi.shape[1])
    phi[j] = phi[big] * noise
    phi[j] /= phi[j].sum()
    alpha[big] /= 2
    alpha[j] = alpha[big]
    meta = {k: v for k, v in model.metadata.items() if k != "gibbs"}
    return tl.TopicModel(phi, alpha, vocab=model.vocab, beta=model.beta, name=model.name,
                         metadata={**meta, "stuck": f"topics {i} and {j} merged, {big} split"})


def baselines(texts: list[list[str]], seed: int) -> dict[str, dict[str, float]]:
    """gensim's held-out log_perplexity (a per-word bound; higher is better) and scikit-learn's
    held-out perplexity (lower is better) per K, one model each, on select's split."""
    from gensim.corpora import Dictionary
    from gensim.models import LdaModel
    from sklearn.decomposition import LatentDirichletAllocation
    from sklearn.feature_extraction.text import CountVectorizer

    train_idx, test_idx = split(len(texts), HOLDOUT, seed)
    train, test = [texts[i] for i in train_idx], [texts[i] for i in test_idx]
    dictionary = Dictionary(train)
    bow_train, bow_test = [dictionary.doc2bow(d) for d in train], [dictionary.doc2bow(d) for d in test]
    vec = CountVectorizer(analyzer=lambda d: d)
    X_train = vec.fit_transform(train)
    X_test = vec.transform(test)
    out: dict[str, dict[str, float]] = {"gensim": {}, "sklearn": {}}
    for k in GRID:
        lda = LdaModel(bow_train, id2word=dictionary, num_topics=k, passes=10, iterations=100,
                       random_state=seed)
        out["gensim"][str(k)] = float(lda.log_perplexity(bow_test))
        sk = LatentDirichletAllocation(n_components=k, learning_method="batch", max_iter=50,
                                       random_state=seed).fit(X_train)
        out["sklearn"][str(k)] = float(sk.perplexity(X_test))
    return out


def _ks(res) -> dict:
    """What every rule and metric chooses from one select result."""
    evals = res.evaluations
    rules = {}
    for rule in RULES:
        d = decide(res.topics, evals, rule, seed=0)
        rules[rule] = {"k": d["k"], "tied": d["tied"], "restart": d["restart"],
                       "comparisons": d["comparisons"]}
    old = res.choice["log-lik/token"]
    rules["old"] = {"k": old["k"], "tied": [] if old["significant"] else [old["runner_up"]],
                    "runner_up": old["runner_up"], "why": old["why"]}
    metrics = {m: res.choice[m]["k"] for m in res.choice}
    per_k = {m: res.per_k[m]["mean"] for m in ["log-lik/token", *CLASSIC_NAMES]}
    return {"rules": rules, "metrics": metrics, "per_k": per_k,
            "train_per_token": {e["model"]: e["row"]["train_per_token"] for e in evals},
            "heldout_per_token": {e["model"]: e["row"]["per_token"] for e in evals}}


def run_one(texts, k_true: int, seed: int, folder: str) -> dict:
    kw = dict(topics=GRID, restarts=RESTARTS, holdout=HOLDOUT, iterations=ITERATIONS, seed=seed,
              particles=PARTICLES, progress=False)
    t0 = time.perf_counter()
    res = tl.select(texts, out=folder, **kw)
    true = truth(k_true, seed)
    models = {r: tl.load_model(os.path.join(folder, "models", f"K{k_true}-r{r}.npz"))
              for r in range(RESTARTS)}
    row = {"k_true": k_true, "seed": seed, "stuck": False, **_ks(res), "seconds": time.perf_counter() - t0,
           "recovered": {str(r): recovered(m, true) for r, m in models.items()}}
    t0 = time.perf_counter()
    row["baselines"] = baselines(texts, seed)
    row["baseline_seconds"] = time.perf_counter() - t0
    copy = folder + "-stuck"  # restart 1 of K_true stuck
    shutil.copytree(folder, copy)
    name = f"K{k_true}-r1"
    bad = stuck(models[1])
    save_model(bad, os.path.join(copy, "models", f"{name}.npz"))
    os.unlink(os.path.join(copy, "evals", f"{name}.json"))
    t0 = time.perf_counter()
    res = tl.select(texts, out=copy, **kw)
    return [row, {"k_true": k_true, "seed": seed, "stuck": True, **_ks(res), "baselines": row["baselines"],
                  "seconds": time.perf_counter() - t0,
                  "recovered": {**row["recovered"], "1": recovered(bad, true)}}]


def _chosen(values: dict[str, float], higher: bool) -> int:
    ks = sorted(int(k) for k in values)
    vals = [values[str(k)] for k in ks]
    return ks[int(np.argmax(vals) if higher else np.argmin(vals))]


def summarise(rows: list[dict]) -> dict:
    """Per method: how often it picks K_true, how often K_true is its choice or not separated
    from it, and its mean signed error in K (over the ordinary runs and the stuck ones)."""
    methods: dict[str, list[tuple[int, list[int], int, bool]]] = {}
    for r in rows:
        picks = {f"rule: {k}": (v["k"], v["tied"]) for k, v in r["rules"].items()}
        picks["gensim log_perplexity"] = (_chosen(r["baselines"]["gensim"], True), [])
        picks["sklearn perplexity"] = (_chosen(r["baselines"]["sklearn"], False), [])
        for m, k in r["metrics"].items():
            if m != "log-lik/token":  # the rules' metric
                picks[m] = (k, [])
        for m, (k, tied) in picks.items():
            methods.setdefault(m, []).append((k, tied, r["k_true"], r["stuck"]))
    out = {}
    for m, xs in methods.items():
        for label, keep in (("ordinary", False), ("stuck", True)):
            sel = [x for x in xs if x[3] == keep]
            if not sel:
                continue
            out.setdefault(m, {})[label] = {
                "runs": len(sel),
                "exact": sum(k == kt for k, _, kt, _ in sel),
                "k_true_or_not_separated": sum(k == kt or kt in tied for k, tied, kt, _ in sel),
                "mean_signed_error": float(np.mean([k - kt for k, _, kt, _ in sel if k is not None])),
                "chosen": [k for k, _, _, _ in sel]}
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(HERE, "results", "select_synthetic.json"))
    args = ap.parse_args()
    t0 = time.perf_counter()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for k_true in K_TRUE:
            for seed in SEEDS:
                rows += run_one(corpus(k_true, seed), k_true, seed, os.path.join(tmp, f"K{k_true}-s{seed}"))
                print(f"K_true {k_true} seed {seed}: " + ", ".join(
                    f"{r['stuck'] and 'stuck ' or ''}{k} -> {v['k']} {v['tied']}"
                    for r in rows[-2:] for k, v in r["rules"].items()), flush=True)
    from importlib.metadata import version

    out = {"settings": {"V": V, "D": D, "length": LENGTH, "beta": BETA, "alpha_sum": ALPHA_SUM,
                        "k_true": list(K_TRUE), "seeds": list(SEEDS), "grid": list(GRID),
                        "restarts": RESTARTS, "iterations": ITERATIONS, "particles": PARTICLES,
                        "holdout": HOLDOUT, "recovered_cosine": RECOVERED},
           "rows": rows, "summary": summarise(rows), "seconds": time.perf_counter() - t0,
           "machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                       "tomotopy": version("tomotopy"), "gensim": version("gensim"),
                       "scikit-learn": version("scikit-learn")}}
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as fh:
        json.dump(out, fh, indent=1)
    path = os.path.join(HERE, "..", "docs", "select_experiment.md")
    with open(path, "w") as fh:
        fh.write(markdown(out))
    print(f"wrote {os.path.normpath(path)} in {out['seconds']:.0f} s")


def markdown(out: dict) -> str:
    s, summ = out["settings"], out["summary"]
    lines = ["# Choosing K on synthetic corpora", "",
             "`python experiments/select_synthetic.py` (results in "
             "`experiments/results/select_synthetic.json`; this page is written from them): corpora "
             f"generated by LDA with a known number of topics K_true in {', '.join(map(str, s['k_true']))} "
             f"× seeds {', '.join(map(str, s['seeds']))} (V = {s['V']} words, φ ~ Dir({s['beta']}), "
             "symmetric α "
             f"summing to {s['alpha_sum']:g}, D = {s['D']} documents of {s['length']} tokens); `tl.select` "
             f"over K in {', '.join(map(str, s['grid']))} with {s['restarts']} restarts each (tomotopy, "
             f"{s['iterations']} iterations; left-to-right with {s['particles']} particles; "
             f"{s['holdout']:.0%} held out).", "",
             "**The stuck restart.** Each corpus is run a second time (`select` resuming from a copy of the "
             "first run's `--out` folder) with restart 1 of K = K_true replaced by itself with its two most "
             "similar topics merged and its largest topic split in two: what a Gibbs sampler stuck in a "
             "local optimum holds (the issue's K = 10 restart that merged two true topics).", "",
             "**Success.** A method succeeds when it picks K_true or says K_true cannot be separated from "
             "its choice. Only the rules give intervals; gensim's `log_perplexity` (a per-word bound on the "
             "held-out documents, one online-VB model per K), scikit-learn's `perplexity` (one batch-VB "
             "model per K) and the other metrics `select` reports, the classic ones among them (each "
             "by its mean over select's restarts), choose one K, so for them both counts agree. "
             "*rule: old* is `select` before issue 26: the best mean over restarts, "
             "compared with the "
             "runner-up only (not separated when that one comparison is not significant).", "",
             f"The whole run took {out['seconds'] / 60:.0f} minutes on {out['machine']['cpus']} shared cores "
             f"(tomotopy {out['machine']['tomotopy']}, gensim {out['machine']['gensim']}, scikit-learn "
             f"{out['machine']['scikit-learn']}).", ""]
    def hit(method: str, label: str) -> str:
        x = summ[method][label]
        return f"{x['k_true_or_not_separated']} of {x['runs']}"

    natural = [(r["k_true"], n) for r in out["rows"] if not r["stuck"] for n in r["recovered"].values()
               if n < r["k_true"]]
    lines += [f"**Measured.** `best-train`, `select`'s default, found K_true (or did not separate it "
              f"from its choice) in {hit('rule: best-train', 'ordinary')} ordinary runs and "
              f"{hit('rule: best-train', 'stuck')} with a stuck restart; `best-heldout` in "
              f"{hit('rule: best-heldout', 'ordinary')} and {hit('rule: best-heldout', 'stuck')}, picking "
              f"K_true itself in {summ['rule: best-heldout']['ordinary']['exact']} ordinary runs "
              f"(best-train: {summ['rule: best-train']['ordinary']['exact']}); the mean over restarts in "
              f"{hit('rule: mean', 'ordinary')} and "
              f"{hit('rule: mean', 'stuck')}; the rule before issue 26 in {hit('rule: old', 'ordinary')} and "
              f"{hit('rule: old', 'stuck')}. Without the planted one, {len(natural)} of the "
              f"{sum(1 for r in out['rows'] if not r['stuck']) * s['restarts']} restarts of K = K_true "
              f"recovered fewer than K_true true topics on their own (K_true "
              f"{', '.join(sorted({str(k) for k, _ in natural})) or '-'}): the mean over restarts is fooled "
              "by them too.", ""]
    for label, title in (("ordinary", "Ordinary runs"), ("stuck", "With restart 1 of K = K_true stuck")):
        lines += [f"## {title}", "",
                  "| method | picks K_true | K_true or not separated | mean error in K "
                  "| chosen K per corpus |",
                  "|---|---|---|---|---|"]
        for m, v in summ.items():
            if label in v:
                x = v[label]
                lines.append(f"| {m} | {x['exact']}/{x['runs']} | {x['k_true_or_not_separated']}/{x['runs']} "
                             f"| {x['mean_signed_error']:+.1f} | {', '.join(map(str, x['chosen']))} |")
        lines.append("")
    lines += ["## Every run", "",
              "Recovered: how many of the K_true true topics each restart of K = K_true matches (cosine "
              f">= {s['recovered_cosine']}); a restart that recovers fewer merged or lost some (stuck on its "
              "own when it is not the planted one).", "",
              "| K_true | seed | stuck r1 | recovered r0, r1, r2 | best-train (not separated) "
              "| restart per K | mean (not separated) | old |", "|---|---|---|---|---|---|---|---|"]
    for r in out["rows"]:
        ru = r["rules"]
        rec = ", ".join(str(r["recovered"][str(i)]) for i in range(s["restarts"]))
        restarts = " ".join(f"{k}:r{v}" for k, v in ru["best-train"]["restart"].items())
        lines.append(f"| {r['k_true']} | {r['seed']} | {'yes' if r['stuck'] else 'no'} | {rec} | "
                     f"{ru['best-train']['k']} ({', '.join(map(str, ru['best-train']['tied'])) or '-'}) | "
                     f"{restarts} | {ru['mean']['k']} ({', '.join(map(str, ru['mean']['tied'])) or '-'}) | "
                     f"{ru['old']['k']} (runner-up {ru['old']['runner_up']}) |")
    lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
