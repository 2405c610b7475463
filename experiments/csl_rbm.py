"""Analogues of table 2 and figure 1 of Bengio, Yao & Cho (2014) on binarised 8x8 digits.

Table 2: an RBM with 5 hidden units (CD-1, 30 epochs): CSL of the 400 test digits from 1k to 30k
latent samples (10 chains, every 10th Gibbs step after 100 burn-in steps) against the exact value
and AIS.

Figure 1: a dozen RBMs of different sizes (1 to 100 hidden units): exact test log-likelihood
where the hidden layer has at most 20 units, AIS (100 chains, 5,000 temperatures), biased CSL
with 1 and with 300 steps of 10 chains per test item. Does each order the models as the
reference (exact, else AIS) does?

    python experiments/csl_rbm.py            # plots too if matplotlib is installed (extra: plot)

Writes experiments/results/csl_rbm.json, docs/csl_experiments.md (and docs/csl_figure1.png).
"""

from __future__ import annotations

import json
import os
import time

import numpy as np
from scipy.stats import spearmanr

import tealeaves as tl
from tealeaves.csl import load_digits_binary, train_rbm

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SIZES = (1, 2, 3, 5, 8, 10, 12, 15, 20, 30, 50, 100)


def base_bias(train):
    m = train.mean(axis=0).clip(1e-3, 1 - 1e-3)
    return np.log(m / (1 - m))


def table2(train, test):
    rbm = train_rbm(train, 5, epochs=30, seed=0)
    exact = float(rbm.log_prob_exact(test).mean())
    log_z, se = rbm.log_z_ais(np.random.default_rng(0), chains=100, temperatures=5000,
                              base_bias=base_bias(train))
    ais = float(rbm.unnormalized_log_prob(test).mean() - log_z)
    rows = []
    for S in (1000, 2000, 5000, 10000, 20000, 30000):
        res = tl.csl(rbm, test, samples=S, chains=10, thin=10, burn_in=100, seed=S)
        rows.append({"samples": S, "csl": res.mean, "seconds": res.seconds})
        print(f"table 2: {S:6d} samples  CSL {res.mean:9.4f}", flush=True)
    print(f"table 2: exact {exact:.4f}  AIS {ais:.4f} (log Z se {se:.4f})")
    return {"rows": rows, "exact": exact, "ais": ais}


def figure1(train, test):
    out = []
    for H in SIZES:
        t0 = time.perf_counter()
        rbm = train_rbm(train, H, epochs=30, seed=H)
        exact = float(rbm.log_prob_exact(test).mean()) if H <= 20 else None
        log_z, _ = rbm.log_z_ais(np.random.default_rng(H), chains=100, temperatures=5000,
                                 base_bias=base_bias(train))
        ais = float(rbm.unnormalized_log_prob(test).mean() - log_z)
        b1 = tl.csl(rbm, test, samples=1, chains=10, biased=True, seed=1).mean
        b300 = tl.csl(rbm, test, samples=300, chains=10, biased=True, seed=1).mean
        out.append({"hidden": H, "exact": exact, "ais": ais, "biased_csl_1": b1, "biased_csl_300": b300,
                    "seconds": time.perf_counter() - t0})
        print(f"figure 1: H={H:3d} exact {exact if exact is not None else float('nan'):9.4f} "
              f"AIS {ais:9.4f} biased-1 {b1:9.4f} biased-300 {b300:9.4f}", flush=True)
    return out


def orderings(fig):
    ref = np.array([r["exact"] if r["exact"] is not None else r["ais"] for r in fig])
    res = {}
    for key in ("exact", "ais", "biased_csl_1", "biased_csl_300"):
        rows = [(i, r[key]) for i, r in enumerate(fig) if r[key] is not None]
        idx = np.array([i for i, _ in rows])
        val = np.array([v for _, v in rows])
        pairs = [(a, b) for a in range(len(idx)) for b in range(a + 1, len(idx))]
        agree = sum(np.sign(val[a] - val[b]) == np.sign(ref[idx[a]] - ref[idx[b]]) for a, b in pairs)
        res[key] = {"spearman": float(spearmanr(val, ref[idx]).statistic),
                    "pairs_ordered_as_reference": f"{agree}/{len(pairs)}"}
    return res


def write_markdown(t2, fig, order):
    lines = [
        "# CSL on restricted Boltzmann machines (binarised 8x8 digits)",
        "",
        "Made by `python experiments/csl_rbm.py` (numbers in `experiments/results/csl_rbm.json`).",
        "Data: scikit-learn's 8x8 digits (UCI, CC BY 4.0) binarised at 8/16; 1,397 training and",
        "400 test images. RBMs trained by CD-1, 30 epochs. Values are mean test log-likelihoods (nats).",
        "",
        "## Table 2 analogue: RBM with 5 hidden units",
        "",
        "| latent samples | CSL |",
        "|---|---|",
    ]
    lines += [f"| {r['samples']:,} | {r['csl']:.4f} |" for r in t2["rows"]]
    lines += [f"| exact | {t2['exact']:.4f} |", f"| AIS (100 chains, 5,000 temperatures) | {t2['ais']:.4f} |",
              "", "## Figure 1 analogue: a dozen RBMs", "",
              "| hidden units | exact | AIS | biased CSL, 1 step x 10 chains "
              "| biased CSL, 300 steps x 10 chains |",
              "|---|---|---|---|---|"]
    for r in fig:
        ex = f"{r['exact']:.4f}" if r["exact"] is not None else "-"
        lines.append(f"| {r['hidden']} | {ex} | {r['ais']:.4f} | {r['biased_csl_1']:.4f} | "
                     f"{r['biased_csl_300']:.4f} |")
    lines += ["", "Ordering against the reference (exact where available, else AIS):", "",
              "| estimator | Spearman correlation | pairs ordered as the reference |", "|---|---|---|"]
    for k, v in order.items():
        lines.append(f"| {k} | {v['spearman']:.3f} | {v['pairs_ordered_as_reference']} |")
    if os.path.exists(os.path.join(ROOT, "docs", "csl_figure1.png")):
        lines += ["", "![figure 1 analogue](csl_figure1.png)"]
    with open(os.path.join(ROOT, "docs", "csl_experiments.md"), "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")


def plot(fig):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed (pip install 'tealeaves[plot]'): no figure")
        return
    H = [r["hidden"] for r in fig]
    f, ax = plt.subplots(figsize=(6, 4))
    ax.plot(H, [r["ais"] for r in fig], "o-", color="tab:blue", label="AIS")
    ax.plot(H, [r["biased_csl_1"] for r in fig], "s-", color="tab:red", label="biased CSL, 1 step")
    ax.plot(H, [r["biased_csl_300"] for r in fig], "^-", color="tab:cyan", label="biased CSL, 300 steps")
    ex = [(r["hidden"], r["exact"]) for r in fig if r["exact"] is not None]
    ax.plot(*zip(*ex, strict=True), "x--", color="tab:green", label="exact")
    ax.set_xscale("log")
    ax.set_xlabel("hidden units")
    ax.set_ylabel("mean test log-likelihood (nats)")
    ax.legend()
    f.tight_layout()
    f.savefig(os.path.join(ROOT, "docs", "csl_figure1.png"), dpi=110)


def main():
    train, test = load_digits_binary()
    t2 = table2(train, test)
    fig = figure1(train, test)
    order = orderings(fig)
    for k, v in order.items():
        print(f"ordering {k:16s} spearman {v['spearman']:.3f}  pairs {v['pairs_ordered_as_reference']}")
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    with open(os.path.join(HERE, "results", "csl_rbm.json"), "w") as fh:
        json.dump({"table2": t2, "figure1": fig, "ordering": order}, fh, indent=1)
    plot(fig)
    write_markdown(t2, fig, order)


if __name__ == "__main__":
    main()
