"""How well the junk-topic flags of `tealeaves.diagnostics` find planted junk topics, and how often
they flag ordinary ones.

Each corpus: K ordinary topics phi_k ~ Dir(0.05) over V = 1000 words, and four planted junk topics:
a uniform topic (1/V), a corpus topic (the corpus's expected word distribution, the mixture of the
ordinary topics), a one-document topic (a Dir(0.05) topic that only document 0 uses, for 80% of its
tokens) and a stop-word topic (15 words of its own, evenly weighted, in every document). Each
document's proportions: uniform 0.05, corpus 0.05, stop words 0.15, the rest Dir(a) over the
ordinary topics; D = 300 documents of 100 tokens. Settings: K in (10, 25) x a in (0.1, 0.5),
5 seeds each.

The diagnostics are computed twice per corpus: from the true token assignments (the MALLET-state
path: exact counts) and from the true topics plus the corpus with proportions inferred
(`infer_theta`, the path for any model: expected counts). A flag's hit rate: the share of corpora
where it flags the topic planted for it; its false-flag rate: the share of ordinary topics it
flags. Also recorded: each flag's value on the ordinary topics (lowest and highest) and on its
planted topic, from which the thresholds (`tealeaves.diagnostics.flags.THRESHOLDS`) are chosen.

    python experiments/junk_topics.py [--seeds 5] [--out experiments/results/junk_topics.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform

import numpy as np

import tealeaves as tl
from tealeaves.diagnostics import mallet
from tealeaves.diagnostics.flags import FLAGS, THRESHOLDS, flag_values

HERE = os.path.dirname(os.path.abspath(__file__))
V, D, LENGTH, STOP = 1000, 300, 100, 15
SHARES = {"uniform": 0.05, "corpus": 0.05, "stop": 0.15}
SETTINGS = [(10, 0.1), (10, 0.5), (25, 0.1), (25, 0.5)]
PLANTED = {"near-uniform": "uniform", "near-corpus": "corpus", "one-document": "one-document",
           "stop-word-like": "stop-word"}
JUNK = ("uniform", "corpus", "one-document", "stop-word")


def corpus(K: int, a: float, seed: int):
    """phi (K + 4 topics: the ordinary ones, then JUNK), theta, documents and their assignments."""
    rng = np.random.default_rng(seed)
    ordinary = rng.dirichlet(np.full(V, 0.05), size=K)
    real = rng.dirichlet(np.full(K, a), size=D) * (1 - sum(SHARES.values()))
    stop = np.zeros(V)
    stop[rng.choice(V, STOP, replace=False)] = 1.0 / STOP
    corpus_topic = real.mean(axis=0) @ ordinary / real.mean(axis=0).sum()
    phi = np.vstack([ordinary, np.full(V, 1.0 / V), corpus_topic, rng.dirichlet(np.full(V, 0.05)), stop])
    theta = np.hstack([real, np.full((D, 1), SHARES["uniform"]), np.full((D, 1), SHARES["corpus"]),
                       np.zeros((D, 1)), np.full((D, 1), SHARES["stop"])])
    theta[0] = 0.0
    theta[0, K + 2] = 0.8
    theta[0, :K] = 0.2 / K
    theta /= theta.sum(axis=1, keepdims=True)
    docs, zs = [], []
    for d in range(D):
        z = rng.choice(K + 4, size=LENGTH, p=theta[d])
        docs.append(np.array([rng.choice(V, p=phi[k]) for k in z]))
        zs.append(z)
    return phi, theta, docs, zs


def values(result, num_words: int) -> dict[str, list[float]]:
    return {f: [round(float(x), 4) for x in v] for f, v in flag_values(result.scores, num_words).items()}


def from_assignments(phi, docs, zs, alpha) -> tl.DiagnosticsResult:
    from tealeaves.diagnostics import _result
    K = phi.shape[0]
    d_ids = np.concatenate([np.full(len(w), d) for d, w in enumerate(docs)])
    words, topics = np.concatenate(docs), np.concatenate(zs)
    vocab = [f"w{i:03d}" for i in range(V)]
    stats = mallet.accumulate(lambda: mallet.state_docs(d_ids, words, topics, K, alpha), K, V, 20)
    theta = np.zeros((D, K))
    np.add.at(theta, (d_ids, topics), 1.0)
    theta = (theta + alpha) / (theta.sum(axis=1, keepdims=True) + alpha.sum())
    smoothed = (stats.topic_word + 0.01) / (stats.topic_word.sum(axis=1, keepdims=True) + V * 0.01)
    return _result("truth", "assignments", stats, vocab, 0.01, smoothed, theta, {})


def run(seeds: int) -> dict:
    rows = []
    for K, a in SETTINGS:
        for seed in range(seeds):
            phi, theta, docs, zs = corpus(K, a, 1000 * K + int(10 * a) + seed)
            alpha = np.maximum(theta.mean(axis=0), 1e-3)
            vocab = [f"w{i:03d}" for i in range(V)]
            model = tl.TopicModel(np.maximum(phi, 1e-12), alpha, vocab=vocab, beta=0.01)
            exact = from_assignments(phi, docs, zs, alpha)
            expected = tl.diagnostics(model, tl.Corpus.from_word_ids(docs, vocab), burn_in=50, samples=100,
                                      seed=seed)
            for counts, r in (("assignments", exact), ("expected", expected)):
                rows.append({"K": K, "a": a, "seed": seed, "counts": counts, "values": values(r, V),
                             "flags": r.flags})
            print(f"K={K} a={a} seed={seed}: junk flags {exact.flags[K:]} / {expected.flags[K:]}", flush=True)
    return {"settings": [{"K": K, "a": a} for K, a in SETTINGS], "seeds": seeds, "V": V, "D": D,
            "length": LENGTH, "thresholds": THRESHOLDS, "rows": rows, "summary": summary(rows),
            "machine": platform.machine()}


def summary(rows: list[dict]) -> dict:
    """Per counts path and flag: hit rate, false-flag rate, the flag's value ranges."""
    out = {}
    for counts in ("assignments", "expected"):
        mine = [r for r in rows if r["counts"] == counts]
        per = {}
        for f in FLAGS:
            j = JUNK.index(PLANTED[f])
            hits = [f in r["flags"][r["K"] + j] for r in mine]
            ordinary = [f in fl for r in mine for fl in r["flags"][: r["K"]]]
            real_values = [v for r in mine for v in r["values"][f][: r["K"]]]
            planted_values = [r["values"][f][r["K"] + j] for r in mine]
            others = [f in r["flags"][r["K"] + i] for r in mine for i in range(4) if i != j]
            per[f] = {"hit_rate": float(np.mean(hits)), "false_rate": float(np.mean(ordinary)),
                      "hits": int(sum(hits)), "corpora": len(hits), "false": int(sum(ordinary)),
                      "ordinary_topics": len(ordinary), "other_junk_flagged": int(sum(others)),
                      "ordinary_min": min(real_values), "ordinary_max": max(real_values),
                      "planted_min": min(planted_values), "planted_max": max(planted_values)}
        out[counts] = per
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--out", default=os.path.join(HERE, "results", "junk_topics.json"))
    args = ap.parse_args()
    result = run(args.seeds)
    for counts, per in result["summary"].items():
        for f, s in per.items():
            print(f"{counts:12s} {f:15s} hit {s['hits']}/{s['corpora']}"
                  f"  false {s['false']}/{s['ordinary_topics']}"
                  f"  ordinary [{s['ordinary_min']:.3f}, {s['ordinary_max']:.3f}]"
                  f"  planted [{s['planted_min']:.3f}, {s['planted_max']:.3f}]")
    with open(args.out, "w", encoding="utf-8") as fh:
        json.dump(result, fh, indent=1)
        fh.write("\n")


if __name__ == "__main__":
    main()
