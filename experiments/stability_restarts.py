"""How well `tealeaves.diagnostics.stability` flags a restart stuck with two true topics merged, and
how often it flags a restart that is not; the floors `MATCH_FLOOR` are chosen here.

Each corpus: a synthetic LDA model with a known K (`tealeaves.synthetic.random_model`: V = 500
words, topics Dir(0.05), symmetric alpha 0.1 per topic) generates D = 400 documents of 80 tokens.
Six restarts are trained on it (`tealeaves.select.train`, tomotopy, 200 iterations, seeds 0-3).
Each trained restart is labelled from the truth (never from the restarts): it *merged* two true
topics if one of its topics is closer (Jensen-Shannon) to the even mixture of two true topics than
to any single true topic. A *planted* stuck restart is made from each trained one: two of its
topics (matched to true topics i and j) become their even mixture and a third topic c is split in
two (its words divided at random between two halves, each renormalised), so that K stays the same,
as a stuck sampler does.

Groups of restarts scored: the four trained restarts (clean groups), and for each trained restart r
one planted stuck restart (made from r) with the other three (stuck groups). A restart labelled
merged by the truth counts as stuck wherever it appears. Hit rate: the share of stuck restarts that
are flagged; false-flag rate: the share of the other restarts flagged. Every floor in FLOORS is
scored from the same matchings; the floor chosen per distance is the lowest with the highest hit
rate minus false-flag rate. Settings: K in (5, 10) x 4 seeds.

    python experiments/stability_restarts.py [--seeds 4] [--out experiments/results/stability_restarts.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

import numpy as np

import tealeaves as tl
from tealeaves.diagnostics.stability import (
    DISTANCES,
    MATCH_FLOOR,
    RULE,
    RULES,
    average_jaccard,
    flag_restarts,
    js_distances,
    stability,
)
from tealeaves.select import train

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)  # experiments/corpora.py
RESTARTS, ITERATIONS = 6, 200
# (K, V, topic concentration beta, documents, tokens per document): topics recovered by some restarts
# and merged by others (symmetric alpha 0.1 per topic)
SETTINGS = [(10, 500, 0.05, 400, 80), (20, 500, 0.05, 400, 80)]
MERGE_RATIO = 0.8  # the truth's label: a topic this much closer to a mixture of two true topics
FLOORS = [round(x, 2) for x in np.arange(0.2, 0.91, 0.05)]


def truth_and_restarts(K: int, V: int, beta: float, D: int, length: int,
                       seed: int) -> tuple[tl.TopicModel, list[tl.TopicModel]]:
    truth = tl.synthetic.random_model(K, V, beta=beta, alpha_sum=0.1 * K, alpha_shape="symmetric", seed=seed)
    docs = tl.synthetic.generate(truth, D, length, seed=seed)
    texts = [[docs.vocab[w] for w in docs[d]] for d in range(len(docs))]
    return truth, [_on_truth_words(train(texts, K, "tomotopy", ITERATIONS, r, f"K{K}-s{seed}-r{r}"), truth)
                   for r in range(RESTARTS)]


def _on_truth_words(m: tl.TopicModel, truth: tl.TopicModel) -> tl.TopicModel:
    """A trained model on all of the truth's words (a word no document used gets probability 0 ->
    the smallest share), in the truth's order."""
    index = m.word_index()
    phi = np.full((m.num_topics, truth.num_words), 1e-12)
    cols = [i for i, w in enumerate(truth.vocab) if w in index]
    phi[:, cols] = m.phi[:, [index[truth.vocab[i]] for i in cols]]
    return tl.TopicModel(phi / phi.sum(axis=1, keepdims=True), m.alpha, vocab=truth.vocab, name=m.name)


def merge_ratio(m: tl.TopicModel, truth: tl.TopicModel) -> float:
    """The smallest, over m's topics, Jensen-Shannon distance to the nearest even mixture of two true
    topics / distance to the nearest true topic: below MERGE_RATIO, m merged two true topics."""
    K = truth.num_topics
    single = js_distances(m.phi, truth.phi).min(axis=1)
    mixes = np.array([(truth.phi[i] + truth.phi[j]) / 2 for i in range(K) for j in range(i + 1, K)])
    return float((js_distances(m.phi, mixes).min(axis=1) / single).min())


def planted(m: tl.TopicModel, truth: tl.TopicModel, seed: int) -> tl.TopicModel:
    """m with the topics matched to true topics i, j merged and the one matched to c split."""
    from scipy.optimize import linear_sum_assignment

    rng = np.random.default_rng(seed)
    _, match = linear_sum_assignment(js_distances(truth.phi, m.phi))  # true k -> m's topic match[k]
    i, j, c = (int(match[k]) for k in rng.choice(truth.num_topics, 3, replace=False))
    phi = m.phi.copy()
    phi[i] = (m.phi[i] + m.phi[j]) / 2
    half = np.zeros(m.num_words, dtype=bool)
    half[np.argsort(-m.phi[c])[::2]] = True  # alternate ranks: each half about half of c's mass
    phi[c] = np.where(half, m.phi[c], 0.0) + 1e-12
    phi[j] = np.where(half, 0.0, m.phi[c]) + 1e-12
    return tl.TopicModel(phi / phi.sum(axis=1, keepdims=True), m.alpha, vocab=m.vocab, name=f"{m.name}-stuck")


def sims_of(result) -> dict:
    """The matched similarities of a result, as `flag_restarts` takes them."""
    names = result.models
    out = {}
    for pr in result.pairs:
        a, b = names.index(pr["a"]), names.index(pr["b"])
        s = np.array(pr["similarity"], dtype=float)
        out[a, b] = s
        back = np.empty_like(s)
        back[pr["matching"]] = s
        out[b, a] = back
    return out


def run(seeds: int) -> dict:
    groups, trained = [], []
    for K, V, beta, D, length in SETTINGS:
        for seed in range(seeds):
            t0 = time.perf_counter()
            truth, restarts = truth_and_restarts(K, V, beta, D, length, 100 * K + seed)
            ratios = [merge_ratio(m, truth) for m in restarts]
            labels = [r < MERGE_RATIO for r in ratios]
            sets = [("clean", restarts, labels)]
            for r in range(RESTARTS):
                stuck = planted(restarts[r], truth, 1000 * K + 10 * seed + r)
                others = [m for q, m in enumerate(restarts) if q != r]
                kept = [labels[q] for q in range(RESTARTS) if q != r]
                sets.append(("planted", [stuck, *others], [True, *kept]))
            for kind, models, stuck_labels in sets:
                for distance in DISTANCES:
                    res = stability(models, distance=distance)
                    pairs = [{"a": pr["a"], "b": pr["b"], "matching": pr["matching"],
                              "similarity": [round(x, 4) for x in pr["similarity"]]} for pr in res.pairs]
                    groups.append({"K": K, "V": V, "seed": seed, "kind": kind, "distance": distance,
                                   "models": res.models, "stuck": stuck_labels, "pairs": pairs})
            trained.append({"K": K, "seed": seed, "merge_ratio": [round(r, 4) for r in ratios]})
            print(f"K={K} seed={seed}: merge ratios {np.round(ratios, 2)} "
                  f"({time.perf_counter() - t0:.1f} s)", flush=True)
    return {"settings": [dict(zip(("K", "V", "beta", "D", "length"), s, strict=True)) for s in SETTINGS],
            "seeds": seeds, "restarts": RESTARTS, "iterations": ITERATIONS, "merge_ratio": MERGE_RATIO,
            "floors": FLOORS, "rules": list(RULES), "trained": trained, "groups": groups,
            "sweep": sweep(groups),
            "machine": platform.machine()}


class _Pairs:
    def __init__(self, g: dict):
        self.models, self.pairs = g["models"], g["pairs"]


def sweep(groups: list[dict]) -> dict:
    """Per distance: every pair of restarts' least similar matched pair of topics, for pairs of two
    restarts that merged no topics (clean) and pairs with a stuck one; the floor chosen in the gap
    between them (its middle, to 0.05); per rule and floor, stuck restarts flagged (hits) and other
    restarts flagged (false flags); the rule chosen: the largest hit rate minus false-flag rate at
    that floor."""
    out = {}
    for distance in DISTANCES:
        mine = [g for g in groups if g["distance"] == distance]
        clean, stuck_pairs = [], []
        for g in mine:
            st = dict(zip(g["models"], g["stuck"], strict=True))
            for pr in g["pairs"]:
                (stuck_pairs if st[pr["a"]] or st[pr["b"]] else clean).append(min(pr["similarity"]))
        low, high = max(stuck_pairs), min(clean)
        floor = round(round((low + high) / 2 * 20) / 20, 2) if high > low else None
        rows = []
        for rule in RULES:
            for f in FLOORS:
                hits = stuck = false = others = 0
                for g in mine:
                    _, flagged = flag_restarts(g["models"], sims_of(_Pairs(g)), f, rule)
                    for name, is_stuck in zip(g["models"], g["stuck"], strict=True):
                        stuck += is_stuck
                        others += not is_stuck
                        hits += is_stuck and name in flagged
                        false += (not is_stuck) and name in flagged
                rows.append({"rule": rule, "floor": f, "hits": hits, "stuck": stuck, "false": false,
                             "clean": others, "score": round(hits / stuck - false / others, 9)})
        at = [r for r in rows if r["floor"] == floor] or rows
        rule = max(at, key=lambda r: (r["score"], -RULES.index(r["rule"])))["rule"]
        out[distance] = {"rows": rows, "rule": rule, "floor": floor,
                         "clean_pairs": {"pairs": len(clean), "min": min(clean),
                                         "median": float(np.median(clean))},
                         "stuck_pairs": {"pairs": len(stuck_pairs), "max": low,
                                         "median": float(np.median(stuck_pairs))}}
    return out


def markdown(r: dict) -> str:
    """docs/stability_restarts.md from the results."""
    n_trained = len(r["trained"]) * r["restarts"]
    merged_n = sum(x < r["merge_ratio"] for t in r["trained"] for x in t["merge_ratio"])
    settings = "; ".join(f"K = {s['K']}, V = {s['V']}, topics Dir({s['beta']:g}), {s['D']} documents of "
                         f"{s['length']} tokens" for s in r["settings"])
    lines = [
        "# Stability across restarts: flagging a stuck restart",
        "",
        "<!-- generated by experiments/stability_restarts.py from "
        "experiments/results/stability_restarts.json; do not edit -->",
        "",
        f"Synthetic LDA corpora with a known K ({settings}; {r['seeds']} seeds each), "
        f"{r['restarts']} restarts each trained by tomotopy ({r['iterations']} iterations). Judged against "
        "the true topics, "
        f"{merged_n} of the {n_trained} trained restarts merged two true topics (one of their topics is "
        f"closer to an even mixture of two true topics, by a factor below {r['merge_ratio']:g}, than to any "
        "true topic). Each group of restarts is scored as trained, and with a planted stuck restart (two "
        "topics merged, one split) in place of each restart in turn. A stuck restart should be flagged "
        "(hit); any other should not (false flag). The rules (`flag_restarts`): *consensus* flags the "
        "restarts outside every largest set of restarts that all agree; *majority* flags a restart that "
        "disagrees with more than half of the others; two restarts agree when every matched pair of "
        "topics is at least as similar as the floor.",
        "",
        "Stuck restarts flagged / other restarts flagged:",
        "",
        "| floor | " + " | ".join(f"{d} {rule}" for d in DISTANCES for rule in RULES) + " |",
        "|---|" + "---|" * (len(DISTANCES) * len(RULES)),
    ]
    for floor in r["floors"]:
        cells = []
        for d in DISTANCES:
            for rule in RULES:
                row = next(x for x in r["sweep"][d]["rows"] if x["rule"] == rule and x["floor"] == floor)
                chosen = (r["sweep"][d]["rule"], r["sweep"][d]["floor"]) == (rule, floor)
                mark = " **chosen**" if chosen else ""
                cells.append(f"{row['hits']}/{row['stuck']}, {row['false']}/{row['clean']}{mark}")
        lines.append(f"| {floor:.2f} | " + " | ".join(cells) + " |")
    lines += ["", "The floor (`tealeaves.diagnostics.stability.MATCH_FLOOR`) is the middle, to 0.05, of the "
              "gap between two pairs of restarts' least similar matched topics when neither restart is "
              "stuck and when one is; the rule (`RULE`), the one with the larger hit rate minus "
              "false-flag rate at that floor:", ""]
    for d, s in r["sweep"].items():
        c, t = s["clean_pairs"], s["stuck_pairs"]
        lines.append(f"- {d}: floor {s['floor']:.2f}, rule {s['rule']}: the least similar match of a pair of "
                     f"clean restarts {c['min']:.3f} at the lowest (median {c['median']:.3f}, "
                     f"{c['pairs']} pairs), of "
                     f"a pair with a stuck restart {t['max']:.3f} at the highest (median {t['median']:.3f}, "
                     f"{t['pairs']} pairs)")
    lines += ["", "Every miss and false flag at the chosen floors comes from groups where most restarts are "
              "stuck, each in its own way (K = 20): no two restarts then agree, or two stuck ones agree, and "
              "no rule that looks only at the restarts can tell which is right. Train more restarts when "
              "many are flagged."]
    return "\n".join(lines) + "\n"


# ---- real corpora (issue 33) ----------------------------------------------------------------
REAL_CORPORA = ("sotu", "gnu-info")
REAL_DOCUMENTS = 4000  # a seeded sample of each corpus's paragraphs
LIBRARIES = ("tomotopy", "gensim", "sklearn")
REAL_KS = (10, 20, 40)
REAL_RESTARTS = 4
REAL_ITERATIONS = 500  # select's default: tomotopy 500 sweeps, gensim 10 passes, sklearn 50 batch iterations
UNDERTRAINED = 20  # a restart stopped early: tomotopy 20 sweeps, gensim 1 pass, sklearn 10 iterations
TOP_SAME = 6  # matched topics with the same top words (as sets), for the Jensen-Shannon note
TAIL_TOP = 20  # the words outside both topics' top 20 make the tail of a Jensen-Shannon divergence


def real_texts(name: str) -> tuple[list[list[str]], dict]:
    """REAL_DOCUMENTS paragraphs of a real corpus (experiments/corpora.py), a seeded sample, and
    what the corpus was."""
    import corpora

    docs = corpora.sotu() if name == "sotu" else corpora.gnu_info()
    about = corpora.describe(docs, None if name == "sotu" else corpora.INFO)
    pick = np.sort(np.random.default_rng(33).choice(len(docs), REAL_DOCUMENTS, replace=False))
    return [docs[i] for i in pick], about


def _cached_train(texts, K, library, iterations, seed, name, cache):
    """`select.train`, its model kept in `cache` (a folder) so that a rerun trains nothing."""
    path = os.path.join(cache, f"{name}.npz") if cache else None
    if path and os.path.exists(path):
        return tl.load_model(path, name=name)
    t0 = time.process_time()
    m = train(texts, K, library, iterations, seed, name)
    m.metadata["cpu_seconds"] = time.process_time() - t0
    if path:
        os.makedirs(cache, exist_ok=True)
        tl.save_model(m, path)
    return m


def plant_real(m: tl.TopicModel, seed: int) -> tl.TopicModel:
    """m stuck, without a truth to match: ceil(K / 20) pairs of its topics merged (their even
    mixture) and as many other topics split in two (alternate ranks of their words), K unchanged."""
    rng = np.random.default_rng(seed)
    n = -(-m.num_topics // 20)
    picks = rng.choice(m.num_topics, 3 * n, replace=False)
    phi = m.phi.copy()
    for q in range(n):
        i, j, c = (int(x) for x in picks[3 * q: 3 * q + 3])
        phi[i] = (m.phi[i] + m.phi[j]) / 2
        half = np.zeros(m.num_words, dtype=bool)
        half[np.argsort(-m.phi[c])[::2]] = True
        phi[c] = np.where(half, m.phi[c], 0.0) + 1e-12
        phi[j] = np.where(half, 0.0, m.phi[c]) + 1e-12
    return tl.TopicModel(phi / phi.sum(axis=1, keepdims=True), m.alpha, vocab=m.vocab, name=f"{m.name}-stuck")


def same_top_words(models: list[tl.TopicModel], res) -> list[list[float]]:
    """For every pair of restarts' matched topics (Jensen-Shannon matching): [similarity, top-6 words
    the same (1/0), average Jaccard of the top 10, the share of the divergence from words outside both
    topics' top TAIL_TOP, the divergence's similarity 1 - JSD]."""
    from scipy.special import rel_entr

    by = {m.name: m for m in models}
    out = []
    for pr in res.pairs:
        a, b = by[pr["a"]], by[pr["b"]]
        index = {w: i for i, w in enumerate(b.vocab)}
        pb = b.phi[:, [index[w] for w in a.vocab]]  # b's weights in a's word order
        for k, j in enumerate(pr["matching"]):
            p, q = a.phi[k], pb[j]
            mid = (p + q) / 2
            terms = (rel_entr(p, mid) + rel_entr(q, mid)) / (2 * np.log(2))
            top = np.union1d(np.argsort(-p)[:TAIL_TOP], np.argsort(-q)[:TAIL_TOP])
            jsd = float(terms.sum())
            tail = 1 - float(terms[top].sum()) / jsd if jsd > 0 else 0.0
            wa = [a.vocab[i] for i in np.argsort(-p)[:10]]
            wb = [a.vocab[i] for i in np.argsort(-q)[:10]]
            out.append([round(pr["similarity"][k], 4), int(set(wa[:TOP_SAME]) == set(wb[:TOP_SAME])),
                        round(average_jaccard(wa, wb), 4), round(tail, 4), round(1 - jsd, 4)])
    return out


def run_real(cache: str | None) -> dict:
    """Real restarts of real corpora: per corpus, library and K, REAL_RESTARTS restarts trained as
    select trains them (clean), each replaced in turn by a planted stuck copy (`plant_real`), and one
    restart stopped early (UNDERTRAINED iterations) beside the clean ones. Every group is scored
    under every distance, as the synthetic ones are."""
    groups, about, cells = [], {}, []
    for corpus in REAL_CORPORA:
        texts, about[corpus] = real_texts(corpus)
        about[corpus]["sample"] = REAL_DOCUMENTS
        for library in LIBRARIES:
            for K in REAL_KS:
                t0 = time.perf_counter()
                tag = f"{corpus}-{library}-K{K}"
                restarts = [_cached_train(texts, K, library, REAL_ITERATIONS, r, f"{tag}-r{r}", cache)
                            for r in range(REAL_RESTARTS)]
                early = _cached_train(texts, K, library, UNDERTRAINED, 99, f"{tag}-early", cache)
                sets = [("clean", restarts, [False] * REAL_RESTARTS),
                        ("undertrained", [*restarts, early], [False] * REAL_RESTARTS + [True])]
                for r in range(REAL_RESTARTS):
                    others = [m for q, m in enumerate(restarts) if q != r]
                    sets.append(("planted", [plant_real(restarts[r], 1000 * K + r), *others],
                                 [True] + [False] * (REAL_RESTARTS - 1)))
                for kind, models, stuck in sets:
                    for distance in DISTANCES:
                        res = stability(models, distance=distance)
                        pairs = [{"a": pr["a"], "b": pr["b"], "matching": pr["matching"],
                                  "similarity": [round(x, 4) for x in pr["similarity"]]} for pr in res.pairs]
                        groups.append({"corpus": corpus, "library": library, "K": K, "kind": kind,
                                       "distance": distance, "models": res.models, "stuck": stuck,
                                       "pairs": pairs})
                js = stability(restarts, distance="jensen-shannon")
                cells.append({"corpus": corpus, "library": library, "K": K,
                              "train_cpu_seconds": [round(m.metadata.get("cpu_seconds", float("nan")), 2)
                                                    for m in [*restarts, early]],
                              "matched": same_top_words(restarts, js)})
                print(f"{tag}: {time.perf_counter() - t0:.0f} s, clean JS score {js.score:.3f}", flush=True)
    return {"corpora": about, "libraries": list(LIBRARIES), "ks": list(REAL_KS), "restarts": REAL_RESTARTS,
            "iterations": REAL_ITERATIONS, "undertrained": UNDERTRAINED, "groups": groups, "cells": cells}


def dumps(result: dict) -> str:
    """The results as JSON: indented, but one line per group of restarts (they are many)."""
    head = json.dumps({k: v for k, v in result.items() if k != "groups"}, indent=1)
    groups = ",\n  ".join(json.dumps(g, separators=(",", ":")) for g in result["groups"])
    return head[:-2] + ',\n "groups": [\n  ' + groups + "\n ]\n}\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=4)
    ap.add_argument("--out", default=os.path.join(HERE, "results", "stability_restarts.json"))
    ap.add_argument("--page", default=os.path.join(ROOT, "docs", "stability_restarts.md"))
    args = ap.parse_args()
    result = run(args.seeds)
    for distance, s in result["sweep"].items():
        chosen = next(row for row in s["rows"] if (row["rule"], row["floor"]) == (s["rule"], s["floor"]))
        note = "" if (MATCH_FLOOR[distance], RULE) == (s["floor"], s["rule"]) else \
            f" (the package says {RULE} {MATCH_FLOOR[distance]})"
        print(f"{distance:16s} {s['rule']} floor {s['floor']:.2f}{note}: "
              f"hits {chosen['hits']}/{chosen['stuck']}, false {chosen['false']}/{chosen['clean']}")
    with open(args.out, "w", encoding="utf-8") as fh:
        fh.write(dumps(result))
    with open(args.page, "w", encoding="utf-8") as fh:
        fh.write(markdown(result))


if __name__ == "__main__":
    main()
