"""How well `tealeaves.diagnostics.stability` tells a restart stuck apart from the others, on
synthetic and real restarts; the floors `MATCH_FLOOR`, tolerances `TOLERANCE`, margins `MARGIN` and
the default distance are chosen here (docs/stability_restarts.md is written from the results).

Synthetic: each corpus is drawn from an LDA model with a known K (`tealeaves.synthetic.random_model`:
V = 500 words, topics Dir(0.05), symmetric alpha 0.1 per topic; D = 400 documents of 80 tokens; K =
10 and 20, `--seeds` seeds). Six restarts are trained on it (`tealeaves.select.train`, tomotopy, 200
iterations). Each trained restart is labelled from the truth (never from the restarts): it *merged*
two true topics if one of its topics is closer (Jensen-Shannon) to the even mixture of two true
topics than to any single true topic, by a factor below MERGE_RATIO. A *planted* stuck restart is
made from each trained one: two of its topics become their even mixture and a third is split in two,
so that K stays the same, as a stuck sampler does. Groups: the six trained restarts, and each
restart in turn replaced by its planted copy.

Real: REAL_DOCUMENTS paragraphs (a seeded sample) of two real corpora (experiments/corpora.py: the
State of the Union and the GNU Info manuals), REAL_RESTARTS restarts per library (tomotopy, gensim,
scikit-learn) and K (REAL_KS) trained as `select` trains them, each in turn replaced by a planted
stuck copy, and one restart stopped early beside them (`run_real`).

Hit rate: the share of stuck restarts found stuck; false-flag rate: the share of the others found
stuck. Every floor x tolerance x margin is scored from the same matchings; the one chosen per
distance has the largest hit rate minus false-flag rate over the synthetic and real groups together.

    python experiments/stability_restarts.py [--seeds 4] [--cache DIR] [--reuse] \
        [--out experiments/results/stability_restarts.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time

import numpy as np

import tealeaves as tl
from tealeaves.diagnostics.stability import (
    DISTANCES,
    MARGIN,
    MATCH_FLOOR,
    TOLERANCE,
    assess,
    average_jaccard,
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
            "trained": trained, "groups": groups, "machine": platform.machine()}


class _Pairs:
    def __init__(self, g: dict):
        self.models, self.pairs = g["models"], g["pairs"]


# ---- real corpora (issue 33) ----------------------------------------------------------------
REAL_CORPORA = ("sotu", "gnu-info")
REAL_DOCUMENTS = 2000  # a seeded sample of each corpus's paragraphs
LIBRARIES = ("tomotopy", "gensim", "sklearn")
REAL_KS = (5, 10, 20)
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


def run_real(cache: str | None, skip: frozenset = frozenset()) -> dict:
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
                if f"{corpus}:{library}:{K}" in skip:
                    continue
                t0 = time.perf_counter()
                tag = f"{corpus}{REAL_DOCUMENTS}-{library}-K{K}"
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
            "skipped": sorted(skip),
            "iterations": REAL_ITERATIONS, "undertrained": UNDERTRAINED, "groups": groups, "cells": cells}


TOLERANCES = [0.0, 0.1, 0.2, 0.3, 0.4]
JS_CHOICE = {  # the page's last paragraph, by whether Jensen-Shannon stayed the default
    False: ("So the default distance reads the topics as a person does, by their top words; Jensen–Shannon "
            "stays available (`--distance jensen-shannon`) for comparing whole distributions, with its "
            "own floor."),
    True: ("Jensen–Shannon stays the default (it separated stuck restarts best here), with the floor chosen "
           "for it; a reader comparing top words should expect matched topics with the same top words to "
           "score well below 1, and can choose `--distance average-jaccard` or `rbo`."),
}
MARGINS = [None, 0.0, 0.05, 0.1, 0.2]


def _score(groups: list[dict], floor: float, tolerance: float, margin: float | None = None) -> dict:
    """Stuck restarts flagged (hits), other restarts flagged (false flags) and the groups' findings
    under `assess` at this floor, tolerance and margin."""
    hits = stuck = false = clean = 0
    findings: dict[str, int] = {}
    for g in groups:
        found = assess(g["models"], g["_sims"], floor, tolerance, margin)
        findings[found["finding"]] = findings.get(found["finding"], 0) + 1
        for name, is_stuck in zip(g["models"], g["stuck"], strict=True):
            stuck += is_stuck
            clean += not is_stuck
            hits += is_stuck and name in found["stuck"]
            false += (not is_stuck) and name in found["stuck"]
    return {"hits": hits, "stuck": stuck, "false": false, "clean": clean, "findings": findings}


def sweep(synthetic: list[dict], real: list[dict]) -> dict:
    """Per distance, every floor x tolerance scored on the synthetic and the real groups; the one
    chosen: the largest hit rate minus false-flag rate over both together (ties: the lower false-flag
    rate, then the smaller tolerance, then the lower floor)."""
    out = {}
    for distance in DISTANCES:
        syn = [g for g in synthetic if g["distance"] == distance]
        rea = [g for g in real if g["distance"] == distance]
        for g in syn + rea:
            g["_sims"] = sims_of(_Pairs(g))
        rows = []
        for margin in MARGINS:
            for tol in TOLERANCES:
                for f in FLOORS:
                    a, b = _score(syn, f, tol, margin), _score(rea, f, tol, margin)
                    hits, stuck = a["hits"] + b["hits"], a["stuck"] + b["stuck"]
                    false, clean = a["false"] + b["false"], a["clean"] + b["clean"]
                    rows.append({"floor": f, "tolerance": tol, "margin": margin, "synthetic": a, "real": b,
                                 "score": round(hits / stuck - false / clean, 9),
                                 "false_rate": false / clean})
        for g in syn + rea:
            del g["_sims"]
        best = max(rows, key=lambda r: (r["score"], -r["false_rate"], r["margin"] is None,
                                        -(r["margin"] or 0), -r["tolerance"], -r["floor"]))
        out[distance] = {"rows": rows, "floor": best["floor"], "tolerance": best["tolerance"],
                         "margin": best["margin"], "score": best["score"]}
    return out


def js_note(cells: list[dict]) -> dict:
    """Matched topics of clean real restarts (Jensen-Shannon matching): the similarity of those whose
    top 6 words are the same, where their divergence comes from, and how much of a topic the top 20
    words hold."""
    same = [m for c in cells for m in c["matched"] if m[1]]
    every = [m for c in cells for m in c["matched"]]

    def q(v: list[float]) -> dict:
        return {"median": float(np.median(v)), "min": float(min(v)), "max": float(max(v)), "n": len(v)}

    return {"same_top6": q([m[0] for m in same]) if same else None,
            "same_top6_jaccard": q([m[2] for m in same]) if same else None,
            "same_top6_divergence_similarity": q([m[4] for m in same]) if same else None,
            "tail_share": q([m[3] for m in every]),
            "tail_share_same_top6": q([m[3] for m in same]) if same else None}


def real_table(r: dict) -> list[dict]:
    """Per corpus, library and K: each distance's clean-group score and finding at its chosen floor
    and tolerance, and the training CPU seconds."""
    rows = []
    for c in r["real"]["cells"]:
        row = {"corpus": c["corpus"], "library": c["library"], "K": c["K"],
               "cpu": c["train_cpu_seconds"][:r["real"]["restarts"]]}
        for d in DISTANCES:
            key = (c["corpus"], c["library"], c["K"], "clean", d)
            g = next(g for g in r["real"]["groups"]
                     if (g["corpus"], g["library"], g["K"], g["kind"], g["distance"]) == key)
            s = r["sweep"][d]
            sims = sims_of(_Pairs(g))
            found = assess(g["models"], sims, s["floor"], s["tolerance"], s["margin"])
            row[d] = {"score": float(np.mean([np.mean(x) for x in sims.values()])),
                      "finding": found["finding"], "apart": found["apart"]}
        rows.append(row)
    return rows


def _rate(x: dict) -> str:
    return f"{x['hits']}/{x['stuck']}, {x['false']}/{x['clean']}"


def _margin(m: float | None) -> str:
    return "none" if m is None else f"{m:g}"


def _chosen_row(s: dict, floor: float) -> dict:
    """The sweep's row at `floor` and the distance's chosen tolerance and margin."""
    return next(x for x in s["rows"] if (x["floor"], x["tolerance"], x["margin"]) == (floor, s["tolerance"],
                                                                                     s["margin"]))


def markdown(r: dict) -> str:
    """docs/stability_restarts.md from the results."""
    n_trained = len(r["trained"]) * r["restarts"]
    merged_n = sum(x < r["merge_ratio"] for t in r["trained"] for x in t["merge_ratio"])
    settings = "; ".join(f"K = {s['K']}, V = {s['V']}, topics Dir({s['beta']:g}), {s['D']} documents of "
                         f"{s['length']} tokens" for s in r["settings"])
    real = r["real"]
    corpora = "; ".join(
        f"{name}: {c['sample']:,} of its {c['documents']:,} paragraphs ({c['tokens']:,} tokens, "
        f"{c['words']:,} words; sha256 of the whole corpus {c['sha256'][:12]})"
        + (f", from {len(c['files'])} Info files" if c.get("files") else "")
        for name, c in real["corpora"].items())
    best = r["default_distance"]
    lines = [
        "# Stability across restarts: stuck restarts and unstable models",
        "",
        "<!-- generated by experiments/stability_restarts.py from "
        "experiments/results/stability_restarts.json; do not edit -->",
        "",
        "`tealeaves stability` (and `select`, `evaluate --stability`) matches the topics of restarts of "
        "the same K and says one of three things about the group (`assess`): **stable** (every two "
        "restarts agree), a restart **stuck** apart from the rest (more than half of the restarts all agree "
        "with each other and it does not), or **unstable** as a whole (no set of more than half of them "
        "agrees: the model has several solutions at this K, and no restart can be singled out). Two "
        "restarts agree when at most a *tolerance* share of their matched topics is less similar than the "
        "*floor*; a restart is also stuck when it is farther from every other restart than any two others "
        "are from each other, by more than a *margin* (a share of K; none: not used). All three are chosen "
        "here, per distance, on restarts of synthetic and of real corpora.",
        "",
        "## What was measured",
        "",
        f"*Synthetic*: LDA corpora with a known K ({settings}; {r['seeds']} seeds each), {r['restarts']} "
        f"restarts each trained by tomotopy ({r['iterations']} iterations). Judged against the true topics, "
        f"{merged_n} of the {n_trained} trained restarts merged two true topics (one of their topics is "
        f"closer to an even mixture of two true topics, by a factor below {r['merge_ratio']:g}, than to any "
        "true topic): they count as stuck. Each group is scored as trained, and with a planted stuck restart "
        "(two topics merged, one split) in place of each restart in turn.",
        "",
        f"*Real*: {corpora} (`experiments/corpora.py` builds both from what a Debian machine has; the "
        f"samples are seeded). On each, {real['restarts']} restarts per library and K "
        f"({', '.join(map(str, real['ks']))}), trained as `select` trains them ({real['iterations']} "
        "iterations: tomotopy 500 Gibbs sweeps, gensim 10 passes, scikit-learn 50 batch iterations) by "
        f"{', '.join(real['libraries'])}. The trained restarts count as not stuck (some may be: a false flag "
        "here may be a true one). Stuck restarts: each trained restart in turn replaced by a planted copy "
        "(ceil(K / 20) pairs of its topics merged and as many others split), and one restart stopped early "
        f"({real['undertrained']} iterations: tomotopy 20 sweeps, gensim 1 pass, scikit-learn 10 iterations) "
        "beside the trained ones."
        + (" Not run (a reduced run: the 2-core machine was shared with other jobs): "
           + ", ".join(f"{c} {lib} K = {k}" for c, lib, k in (x.split(":") for x in real["skipped"]))
           + "." if real.get("skipped") else ""),
        "",
        "A stuck restart should be flagged (hit); any other should not (false flag). Every floor "
        f"({r['floors'][0]:.2f} to {r['floors'][-1]:.2f}) and tolerance "
        f"({', '.join(f'{t:g}' for t in r['tolerances'])}) and margin "
        f"({', '.join(map(_margin, r['margins']))}: a restart is also stuck when "
        "it has more topics without a counterpart against every other restart than any two others have "
        "between them, by more than the margin × K) is scored from the same matchings; the one chosen "
        "per distance has the largest hit rate minus false-flag rate over the synthetic and real groups "
        "together (ties: the lower false-flag rate, no margin, the smaller margin, tolerance and floor).",
        "",
        "## Chosen",
        "",
        "| distance | floor | tolerance | margin | synthetic: stuck flagged, others flagged | real: stuck "
        "flagged, others flagged | hit rate − false-flag rate |",
        "|---|---|---|---|---|---|---|",
    ]
    for d, s in r["sweep"].items():
        row = _chosen_row(s, s["floor"])
        mark = " **(default)**" if d == best else ""
        lines.append(f"| {d}{mark} | {s['floor']:.2f} | {s['tolerance']:g} | {_margin(s['margin'])} | "
                     f"{_rate(row['synthetic'])} | {_rate(row['real'])} | {s['score']:.3f} |")
    lines += ["", f"The default distance (`stability(distance=\"auto\")`) is {best}, the best of the three "
              "here; the others remain available by name.", "",
              "## Every floor, at each distance's chosen tolerance and margin", "",
              "Synthetic; real: stuck restarts flagged, other restarts flagged.", "",
              "| floor | " + " | ".join(f"{d} (tolerance {r['sweep'][d]['tolerance']:g}, margin "
                                       f"{_margin(r['sweep'][d]['margin'])})" for d in DISTANCES) + " |",
              "|---|" + "---|" * len(DISTANCES)]
    for f in r["floors"]:
        cells = []
        for d in DISTANCES:
            s = r["sweep"][d]
            row = _chosen_row(s, f)
            mark = " **chosen**" if f == s["floor"] else ""
            cells.append(f"{_rate(row['synthetic'])}; {_rate(row['real'])}{mark}")
        lines.append(f"| {f:.2f} | " + " | ".join(cells) + " |")
    lines += ["", "## The real restarts as trained", "",
              "Each group's stability (mean similarity of matched topics) and finding at the chosen floor "
              "and tolerance, and the CPU seconds one restart took to train (mean of the trained restarts).",
              "",
              "| corpus | library | K | " + " | ".join(DISTANCES) + " | training CPU s |",
              "|---|---|---|" + "---|" * len(DISTANCES) + "---|"]
    for row in r["real_table"]:
        cells = [f"{row[d]['score']:.2f} {row[d]['finding']}" for d in DISTANCES]
        lines.append(f"| {row['corpus']} | {row['library']} | {row['K']} | " + " | ".join(cells)
                     + f" | {np.mean(row['cpu']):.1f} |")
    j = r["js_note"]
    lines += ["", "## Topics with the same top words under Jensen–Shannon", ""]
    if j["same_top6"]:
        s, t, a = j["same_top6"], j["tail_share_same_top6"], j["tail_share"]
        div = j["same_top6_divergence_similarity"]["median"]
        lines += [
            "Of the matched topics of trained real restarts whose six top words are the same (as sets; "
            f"{s['n']} pairs), the Jensen–Shannon similarity (1 − the distance, base 2) was "
            f"{s['median']:.2f} at the median ({s['min']:.2f} to {s['max']:.2f}), although their average "
            f"Jaccard over the top 10 words was {j['same_top6_jaccard']['median']:.2f}. The distance "
            "compares the whole distributions: the words outside both topics' top 20 carried a median "
            f"{t['median']:.0%} of the divergence of these pairs ({a['median']:.0%} over every matched "
            "pair), and restarts spread that long tail differently. It is also the square root of the "
            f"divergence, which stretches small differences: 1 − the divergence itself was {div:.2f} for "
            "the same pairs."]
        lines += ["", JS_CHOICE[r["default_distance"] == "jensen-shannon"]]
    return "\n".join(lines) + "\n"


def dumps(result: dict) -> str:
    """The results as JSON: indented, but one line per group of restarts (they are many)."""
    real = result["real"]
    head = json.dumps({**{k: v for k, v in result.items() if k not in ("groups", "real")},
                       "real": {k: v for k, v in real.items() if k not in ("groups", "cells")}}, indent=1)
    groups = ",\n  ".join(json.dumps(g, separators=(",", ":")) for g in result["groups"])
    rgroups = ",\n  ".join(json.dumps(g, separators=(",", ":")) for g in real["groups"])
    cells = ",\n  ".join(json.dumps(c, separators=(",", ":")) for c in real["cells"])
    return (head[:-2] + ',\n "groups": [\n  ' + groups + "\n ],\n \"real_groups\": [\n  " + rgroups
            + "\n ],\n \"real_cells\": [\n  " + cells + "\n ]\n}\n")


def loads(text: str) -> dict:
    r = json.loads(text)
    r["real"]["groups"] = r.pop("real_groups")
    r["real"]["cells"] = r.pop("real_cells")
    return r


def analyse(r: dict) -> dict:
    """The sweep, the default distance, the real corpora's table and the Jensen-Shannon note."""
    r["floors"], r["tolerances"], r["margins"] = FLOORS, TOLERANCES, MARGINS
    r["sweep"] = sweep(r["groups"], r["real"]["groups"])
    r["default_distance"] = max(DISTANCES, key=lambda d: (r["sweep"][d]["score"], -DISTANCES.index(d)))
    r["real_table"] = real_table(r)
    r["js_note"] = js_note(r["real"]["cells"])
    return r


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=4)
    ap.add_argument("--cache", default=os.path.join(tempfile.gettempdir(), "tealeaves_stability_cache"),
                    help="the real restarts' trained models are kept here (a rerun trains none)")
    ap.add_argument("--skip", default="",
                    help="real cells not run, as corpus:library:K,... (a reduced run; the page lists them)")
    ap.add_argument("--reuse", action="store_true",
                    help="recompute the sweep and the page from --out's groups, training nothing")
    ap.add_argument("--out", default=os.path.join(HERE, "results", "stability_restarts.json"))
    ap.add_argument("--page", default=os.path.join(ROOT, "docs", "stability_restarts.md"))
    args = ap.parse_args()
    if args.reuse:
        with open(args.out, encoding="utf-8") as fh:
            result = loads(fh.read())
    else:
        skip = frozenset(x for x in args.skip.split(",") if x)
        result = {**run(args.seeds), "real": run_real(args.cache, skip)}
    result = analyse(result)
    for distance, s in result["sweep"].items():
        pkg = (MATCH_FLOOR[distance], TOLERANCE[distance], MARGIN[distance])
        note = "" if pkg == (s["floor"], s["tolerance"], s["margin"]) else f" (the package says {pkg})"
        print(f"{distance:16s} floor {s['floor']:.2f} tolerance {s['tolerance']:g} margin {s['margin']}"
              f"{note}: score {s['score']:.3f}")
    print(f"default distance: {result['default_distance']}")
    with open(args.out, "w", encoding="utf-8") as fh:
        fh.write(dumps(result))
    with open(args.page, "w", encoding="utf-8") as fh:
        fh.write(markdown(result))


if __name__ == "__main__":
    main()
