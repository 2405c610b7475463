"""Does how often a word is shown give the word-intrusion answer away? (issue 20, point 8.)

The annotator who sees every task and, in each, picks the option shown most often across the task
set (ties at random, seeded; `tl.intrusion.most_repeated_guess`) is scored against chance (1/6 with
5 top words + 1 intruder), with a one-sided binomial test (is the accuracy above chance?), for two
ways of choosing the intruder from the same candidate pools (another topic's top 10, this topic's
bottom half of used words):

- `uniform`: drawn uniformly from the pool (what `word_tasks` did before);
- `balanced`: `word_tasks` today (each intruder's appearance count matched to one of its topic's
  top words).

Also the least-repeated annotator (the opposite guess; expected accuracy), and, per model, how many
topics have an intruder at the defaults under the old rule (bottom half of the whole vocabulary)
and the new one (bottom half of the words the topic uses).

Models: LDA trained the way `tealeaves select` trains (tomotopy, alpha 0.1, eta 0.01) on the
bundled State of the Union training paragraphs, K = 20 and 60, two training seeds each; the bundled
`sotu-20-asym` and `sotu-50-asym`; a dense random 60-topic model. 20 task seeds per model.

    python experiments/intrusion_repetition.py [--iterations 200] [--seeds 20]

Writes experiments/results/intrusion_repetition.json.
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np
from scipy.stats import binomtest

import tealeaves as tl
from tealeaves import datasets
from tealeaves.intrusion import low_words, most_repeated_guess, word_tasks
from tealeaves.select import train

HERE = os.path.dirname(os.path.abspath(__file__))
LEVEL = 0.01  # one-sided test level


def models(iterations: int) -> list[tl.TopicModel]:
    c = datasets.sotu().train
    texts = [[c.vocab[i] for i in c[d]] for d in range(len(c))]
    out = [train(texts, k, "tomotopy", iterations, s, f"tomotopy-K{k}-s{s}")
           for k in (20, 60) for s in (0, 1)]
    out += [datasets.sotu_model("sotu-20-asym"), datasets.sotu_model("sotu-50-asym")]
    out.append(tl.synthetic.random_model(60, 3000, beta=0.05, seed=1, name="dense-K60"))
    return out


def pools(model: tl.TopicModel, whole_vocabulary: bool = False) -> dict[int, list[int]]:
    """Each topic's intruder candidates at the defaults (n_words 5, high_top 10, low_fraction 0.5);
    `whole_vocabulary`: the old rule (rank over the whole vocabulary, ties by word id)."""
    T, V = model.phi.shape
    order = np.argsort(-model.phi, axis=1, kind="stable")
    rank = np.empty_like(order)
    rank[np.arange(T)[:, None], order] = np.arange(V)[None, :]
    out = {}
    for k in range(T):
        top = set(order[k, :5].tolist())
        others = [int(w) for w in np.unique(order[np.arange(T) != k, :10]) if w not in top]
        low = rank[k] >= V / 2 if whole_vocabulary else low_words(model.phi[k], 0.5)
        out[k] = [w for w in others if low[w]]
    return out


def uniform_tasks(model: tl.TopicModel, seed: int) -> list[dict]:
    """Key rows with the intruder drawn uniformly from each topic's pool (the previous rule)."""
    rng = np.random.default_rng(seed)
    order = np.argsort(-model.phi, axis=1, kind="stable")
    rows = []
    for k, pool in pools(model).items():
        words = [model.vocab[w] for w in order[k, :5]] + [model.vocab[int(rng.choice(pool))]]
        perm = rng.permutation(6)
        rows.append({"kind": "word", "options": [words[i] for i in perm],
                     "intruder": int(np.flatnonzero(perm == 5)[0])})
    return rows


def least_repeated(rows: list[dict]) -> float:
    """Expected accuracy of picking the option shown least often (ties at random)."""
    seen: dict[str, int] = {}
    for r in rows:
        for o in r["options"]:
            seen[o] = seen.get(o, 0) + 1
    acc = 0.0
    for r in rows:
        c = np.array([seen[o] for o in r["options"]])
        best = np.flatnonzero(c == c.min())
        acc += (r["intruder"] in best) / len(best)
    return acc / len(rows)


def measure(rows_by_seed: list[list[dict]]) -> dict:
    hits = items = 0
    expected, least = [], []
    for s, rows in enumerate(rows_by_seed):
        g = most_repeated_guess(rows, seed=s)
        hits, items = hits + g["hits"], items + g["items"]
        expected.append(g["expected"])
        least.append(least_repeated(rows))
    p = binomtest(hits, items, 1 / 6, alternative="greater").pvalue
    return {"items": items, "hits": hits, "accuracy": hits / items, "expected": float(np.mean(expected)),
            "least_repeated_expected": float(np.mean(least)), "chance": 1 / 6, "p_greater": float(p)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--iterations", type=int, default=200)
    ap.add_argument("--seeds", type=int, default=20)
    args = ap.parse_args()
    t0 = time.perf_counter()
    out: dict = {"level": LEVEL, "iterations": args.iterations, "seeds": args.seeds, "models": {}}
    totals = {"uniform": [0, 0], "balanced": [0, 0]}
    for m in models(args.iterations):
        T = m.num_topics
        old, new = pools(m, whole_vocabulary=True), pools(m)
        floor = m.phi <= m.phi.min(axis=1, keepdims=True) * (1 + 1e-6)
        row = {
            "topics": T, "words": m.num_words, "floor_share": float(floor.mean()),
            "topics_with_intruder_old_rule": sum(1 for p in old.values() if p),
            "topics_with_intruder": sum(1 for p in new.values() if p),
            "median_pool": float(np.median([len(p) for p in new.values()])),
        }
        seeds = range(args.seeds)
        row["uniform"] = measure([uniform_tasks(m, s) for s in seeds])
        row["balanced"] = measure([[t.key() for t in word_tasks(m, seed=s)] for s in seeds])
        for kind in totals:
            totals[kind][0] += row[kind]["hits"]
            totals[kind][1] += row[kind]["items"]
        out["models"][m.name] = row
        print(m.name, {k: v if not isinstance(v, dict) else round(v["accuracy"], 3) for k, v in row.items()})
    for kind, (h, n) in totals.items():
        out[kind] = {"hits": h, "items": n, "accuracy": h / n,
                     "p_greater": float(binomtest(h, n, 1 / 6, alternative="greater").pvalue)}
        print(kind, out[kind])
    out["seconds"] = time.perf_counter() - t0
    path = os.path.join(HERE, "results", "intrusion_repetition.json")
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(out, fh, indent=1)
    print("->", path)


if __name__ == "__main__":
    main()
