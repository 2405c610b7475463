"""Do automated metrics agree with people? The published figures of Hoyle et al. (NeurIPS 2021) and
ProxAnn (Hoyle et al., ACL 2025) reproduced from their raw judgments (the bundled studies), and
tealeaves' own measures on the same topics.

    python experiments/human_agreement.py [--published-hoyle correlation_results.csv]

Writes experiments/results/human_agreement.json and docs/human_agreement.md (from the JSON:
`markdown`). `--published-hoyle`: the authors' analysis/correlation_results.csv (ahoho/topics),
whose 26,000 values are then compared one by one; without it, with the first 104 and the
summaries kept in tests/fixtures/judgments_reference.json.

1. Hoyle et al.'s Spearman and Pearson correlations of NPMI and C_V (every reference corpus) with
   mean ratings and intrusion accuracy, per corpus and pooled: their 500 resamples redrawn as they
   drew them (numpy's global RandomState seeded 42; per setting, each topic's answers drawn 15 /
   26 times with replacement from their subsample; metric columns as they prepared them), the
   full-data values, and tealeaves' two-stage intervals on every answer.
2. ProxAnn, Bills: NPMI's and each LLM's Kendall tau with the human topic ranking, the human
   leave-one-out baseline, and the alternative-annotator test of each LLM.
3. tealeaves' coherence measures on the ProxAnn topics, over the documents the annotators saw.
4. How long the meta-evaluation takes.
5. What carries over to a user's models (`tealeaves evaluate --human hoyle2021`): each coherence
   measure's agreement with people on Hoyle et al.'s 300 topics (the authors' UMass, UCI, NPMI and
   C_V against ratings and intrusion, paired comparisons) and tealeaves' own on the ProxAnn
   topics, written as src/tealeaves/data/human_agreement.json (`figures`: built from the JSON, so
   tests/test_doc_figures.py rebuilds and compares it).

`--only carry-over` (5.) or `--only full-data` (1.'s table without resampling) recomputes that
part alone into the existing JSON, and the page and the figures from it.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "experiments" / "results" / "human_agreement.json"
DOC = ROOT / "docs" / "human_agreement.md"
FIGURES = ROOT / "src" / "tealeaves" / "data" / "human_agreement.json"
REFERENCE = ROOT / "tests" / "fixtures" / "judgments_reference.json"

# Hoyle et al.'s columns, in the order their analysis loops over them (a column whose name holds
# the dataset is skipped for that dataset: "full" is already its own corpus)
HOYLE_COLUMNS = ["c_npmi_10_full", "c_npmi_10_nytimes_full", "c_npmi_10_train", "c_npmi_10_val",
                 "c_npmi_10_wikitext_full", "c_v_full", "c_v_nytimes_full", "c_v_train", "c_v_val",
                 "c_v_wikitext_full"]
HOYLE_TASKS = {"ratings": "rating", "intrusions": "word-intrusion"}
HOYLE_SIZE = {"ratings": 15, "intrusions": 26}
# The tables the authors' notebook (analysis/regress-auto-metrics.ipynb, ahoho/topics) prints: mean
# Spearman over 500 resamples; (task, train corpus) -> {metric: (NYT, Wiki, train, val) references}.
# RELEASED: the version that wrote the released correlation_results.csv (commit 47c70f9: every
# answer, a fresh draw per metric). FINAL: the notebook as released (9fc914e, the paper's
# "Concatenated" row): only answers marked familiar, one draw per task and corpus shared by the
# metrics, written to correlation_results_familiar.csv, which is not in the release.
PUBLISHED_HOYLE = {
    "released": {
        ("intrusions", "nytimes"): {"c_npmi_10": (0.27, 0.43, 0.27, 0.24), "c_v": (0.34, 0.45, 0.35, 0.34)},
        ("intrusions", "wikitext"): {"c_npmi_10": (0.34, 0.36, 0.39, 0.17), "c_v": (0.31, 0.34, 0.34, 0.20)},
        ("intrusions", "all"): {"c_npmi_10": (0.29, 0.40, 0.32, 0.17), "c_v": (0.32, 0.40, 0.35, 0.24)},
        ("ratings", "nytimes"): {"c_npmi_10": (0.37, 0.48, 0.38, 0.39), "c_v": (0.41, 0.46, 0.44, 0.45)},
        ("ratings", "wikitext"): {"c_npmi_10": (0.33, 0.41, 0.44, 0.28), "c_v": (0.32, 0.40, 0.41, 0.34)},
        ("ratings", "all"): {"c_npmi_10": (0.37, 0.44, 0.41, 0.35), "c_v": (0.38, 0.42, 0.42, 0.42)}},
    "final": {
        ("intrusions", "nytimes"): {"c_npmi_10": (0.34, 0.51, 0.32, 0.25), "c_v": (0.44, 0.55, 0.42, 0.38)},
        ("intrusions", "wikitext"): {"c_npmi_10": (0.39, 0.40, 0.40, 0.14), "c_v": (0.39, 0.40, 0.39, 0.13)},
        ("intrusions", "all"): {"c_npmi_10": (0.36, 0.45, 0.35, 0.18), "c_v": (0.41, 0.48, 0.41, 0.26)},
        ("ratings", "nytimes"): {"c_npmi_10": (0.45, 0.58, 0.44, 0.43), "c_v": (0.51, 0.58, 0.53, 0.52)},
        ("ratings", "wikitext"): {"c_npmi_10": (0.45, 0.52, 0.51, 0.21), "c_v": (0.44, 0.51, 0.51, 0.23)},
        ("ratings", "all"): {"c_npmi_10": (0.47, 0.54, 0.48, 0.35), "c_v": (0.49, 0.53, 0.51, 0.42)}},
}
PUBLISHED_REFERENCES = ("nytimes_full", "wikitext_full", "train", "val")

# ProxAnn, Bills. Table 4 (evaluation_scripts/top_ranking.ipynb at ahoho/proxann 3583fa4): Kendall
# tau across topics with the human topic ranking, mean +- sd over 50 topic resamples (the judge's
# fit against the people's fit, its rank against their rank); the human row: leave one out, 100 draws.
PUBLISHED_TABLE4 = {
    "npmi": {"fit": (0.04, 0.08), "rank": (-0.01, 0.12)},
    "Meta-Llama-3.1-8B-Instruct": {"fit": (0.19, 0.14), "rank": (0.20, 0.16)},
    "Qwen3-8B": {"fit": (0.39, 0.12), "rank": (0.35, 0.11)},
    "Qwen3-32B": {"fit": (0.61, 0.09), "rank": (0.49, 0.08)},
    "llama-3.3-70b-instruct-awq": {"fit": (0.42, 0.15), "rank": (0.20, 0.12)},
    "Qwen2.5-72B-Instruct-AWQ": {"fit": (0.41, 0.11), "rank": (0.32, 0.11)},
    "gpt-4o-2024-08-06": {"fit": (0.43, 0.11), "rank": (0.47, 0.11)},
    "human": {"fit": (0.10, 0.12), "rank": (0.18, 0.10)},
}
# Checks printed by the same notebook (its cell 18), over the same data: the share of documents
# on which the LLM's binarised fit (>= 4) agrees with the people's majority, and Kendall's tau across
# topics of the two agreements with the model's assignments.
PUBLISHED_LLM_USER = {"gpt-4o-2024-08-06": (0.714, 0.252), "Meta-Llama-3.1-8B-Instruct": (0.446, -0.034),
                      "llama-3.3-70b-instruct-awq": (0.768, 0.239), "Qwen2.5-72B-Instruct-AWQ": (0.667, 0.360),
                      "Qwen3-8B": (0.774, 0.395), "Qwen3-32B": (0.732, 0.325)}
# Table 3 (alt_test_tm_eval.ipynb): advantage probability, pseudo-annotators by dataset, epsilon 0.1;
# document-level fit, rank; topic-level fit, rank; "*": t-test winning rate above 0.5.
PUBLISHED_TABLE3 = {
    "gpt-4o-2024-08-06": ("0.65*", "0.71*", "0.77*", "0.75*"),
    "Meta-Llama-3.1-8B-Instruct": ("0.30", "0.53", "0.14", "0.44"),
    "llama-3.3-70b-instruct-awq": ("0.66*", "0.67*", "0.70*", "0.60"),
    "Qwen3-8B": ("0.66*", "0.57", "0.80*", "0.43"),
    "Qwen3-32B": ("0.67*", "0.68*", "0.74*", "0.70*"),
    "Qwen2.5-72B-Instruct-AWQ": ("0.61*", "0.71*", "0.78*", "0.65"),
}
LLM_NAMES = {"Meta-Llama-3.1-8B-Instruct": "Llama-3.1-8B", "Qwen3-8B": "Qwen-3-8B", "Qwen3-32B": "Qwen-3-32B",
             "llama-3.3-70b-instruct-awq": "Llama-3.3-70B", "Qwen2.5-72B-Instruct-AWQ": "Qwen-2.5-72B",
             "gpt-4o-2024-08-06": "GPT-4o", "Qwen3-30B-A3B": "Qwen-3-30B-A3B"}


# -- 1. Hoyle et al. 2021 ---------------------------------------------------------------------------

def hoyle_columns(study) -> dict[str, np.ndarray]:
    """The metric columns as the authors prepared them: a cross-corpus column missing for a topic
    takes the topic's own-corpus value (pandas combine_first), every other missing value 0 (fillna)."""
    out = {}
    for name in HOYLE_COLUMNS:
        v = study.metrics[name].copy()
        base = name.replace("_nytimes", "").replace("_wikitext", "")
        if base != name:
            v = np.where(np.isnan(v), study.metrics[base], v)
        out[name] = np.nan_to_num(v, nan=0.0)
    return out


def hoyle_resampled(study, iterations: int = 500, seed: int = 42) -> list[dict]:
    """The authors' resampled correlations, redrawn: their global RandomState seeded 42; for each
    iteration, task, dataset (wikitext, nytimes, all) and column, every topic (in pandas' group
    order: dataset, model, topic) draws 15 (ratings) or 26 (intrusion) of its subsample's answers
    with replacement; Spearman and Pearson of the column with the topics' mean answers."""
    from tealeaves.judgments.hoyle import authors_sample
    from tealeaves.metaeval.stats import pearson_rows, spearman_rows

    cols = hoyle_columns(study)
    samples = {}
    for code, task in HOYLE_TASKS.items():
        sub = authors_sample(study[task])
        size = HOYLE_SIZE[code]
        samples[code] = sub.value.reshape(-1, size)  # topics in study order, each its answers in order
        assert np.array_equal(sub.topic.reshape(-1, size)[:, 0], np.arange(len(study.topics)))
    ids = study.topics.ids
    order = {}
    for ds in ("wikitext", "nytimes", "all"):
        keep = [i for i, t in enumerate(ids) if ds == "all" or t.startswith(ds + "/")]
        order[ds] = np.array(sorted(keep, key=lambda i: (ids[i].split("/")[0], ids[i].split("/")[1],
                                                         int(ids[i].split("/")[2]))))
    rng = np.random.RandomState(seed)
    drawn: dict[tuple[str, str, str], list[np.ndarray]] = {}
    settings = []
    for _ in range(iterations):
        for code in ("ratings", "intrusions"):
            size = HOYLE_SIZE[code]
            for ds in ("wikitext", "nytimes", "all"):
                topics = order[ds]
                for name in HOYLE_COLUMNS:
                    if ds in name:
                        continue
                    pos = rng.randint(0, size, size=(len(topics), size))  # = choice(size, size) per group
                    drawn.setdefault((code, ds, name), []).append(
                        np.take_along_axis(samples[code][topics], pos, axis=1).mean(axis=1))
                    settings.append((code, ds, name))
    corr = {}
    for (code, ds, name), means in drawn.items():
        y = np.asarray(means)
        x = np.broadcast_to(cols[name][order[ds]], y.shape)
        corr[(code, ds, name)] = (iter(spearman_rows(x, y).tolist()), iter(pearson_rows(x, y).tolist()))
    rows = []
    for code, ds, name in settings:
        metric = "c_npmi_10" if name.startswith("c_npmi_10") else "c_v"
        sp, pe = corr[(code, ds, name)]
        rows.append({"task": code, "dataset": ds, "metric": metric, "reference": name[len(metric) + 1:],
                     "spear_rho": next(sp), "pear_rho": next(pe)})
    return rows


def hoyle_familiar(study, iterations: int = 500, seed: int = 42) -> list[dict]:
    """The notebook's final procedure: only the subsample's answers marked familiar; per
    iteration, task and dataset one draw (each topic 15 / 26 of its familiar answers with
    replacement, numpy's global RandomState seeded 42, groups in pandas' order) shared by every
    column; Spearman of each column with the topics' mean answers."""
    from tealeaves.judgments.hoyle import authors_sample
    from tealeaves.metaeval.stats import spearman_rows

    cols = hoyle_columns(study)
    ids = study.topics.ids
    familiar = {}
    for code, task in HOYLE_TASKS.items():
        sub = authors_sample(study[task])
        size = HOYLE_SIZE[code]
        v, f = sub.value.reshape(-1, size), sub.familiar.reshape(-1, size)
        familiar[code] = [v[t][f[t]] for t in range(len(ids))]
    order = {ds: sorted((i for i, t in enumerate(ids) if ds == "all" or t.startswith(ds + "/")),
                        key=lambda i: (ids[i].split("/")[0], ids[i].split("/")[1], int(ids[i].split("/")[2])))
             for ds in ("wikitext", "nytimes", "all")}
    rng = np.random.RandomState(seed)
    rows = []
    for _ in range(iterations):
        for code in ("ratings", "intrusions"):
            size = HOYLE_SIZE[code]
            for ds in ("wikitext", "nytimes", "all"):
                topics = [t for t in order[ds] if len(familiar[code][t])]  # a group with no row is absent
                means = np.array([familiar[code][t][rng.choice(len(familiar[code][t]), size, replace=True)].mean()
                                  for t in topics])
                for name in HOYLE_COLUMNS:
                    if ds in name:
                        continue
                    metric = "c_npmi_10" if name.startswith("c_npmi_10") else "c_v"
                    rows.append({"task": code, "dataset": ds, "metric": metric, "reference": name[len(metric) + 1:],
                                 "spear_rho": float(spearman_rows(cols[name][topics][None], means[None])[0])})
    return rows


def _published_table(ours: dict, published: dict) -> list[dict]:
    table = []
    for (code, ds), per_metric in published.items():
        for metric, values in per_metric.items():
            for ref, pub in zip(PUBLISHED_REFERENCES, values, strict=True):
                ref_name = "full" if ref == f"{ds}_full" else ref
                x = ours.get(f"{code}|{ds}|{metric}|{ref_name}")
                table.append({"task": code, "dataset": ds, "metric": metric, "reference": ref, "published": pub,
                              "ours": None if x is None else round(x["mean"], 2),
                              "ours_exact": None if x is None else x["mean"],
                              "q025": None if x is None else x["q025"], "q975": None if x is None else x["q975"]})
    return table


def _setting(r: dict) -> tuple[str, str, str, str]:
    return r["task"], r["dataset"], r["metric"], r["reference"]


def summaries(rows: list[dict], key: str = "spear_rho") -> dict[str, dict]:
    """Per setting: mean, sd, 2.5 % and 97.5 % quantiles, min and max of the resampled values."""
    by: dict[tuple, list[float]] = {}
    for r in rows:
        by.setdefault(_setting(r), []).append(float(r[key]))
    out = {}
    for k, v in by.items():
        a = np.asarray(v)
        out["|".join(k)] = {"mean": float(a.mean()), "sd": float(a.std(ddof=1)), "q025": float(np.quantile(a, 0.025)),
                            "q975": float(np.quantile(a, 0.975)), "min": float(a.min()), "max": float(a.max()),
                            "n": int(a.size)}
    return out


def read_published(path: str) -> list[dict]:
    with open(path, encoding="utf-8") as fh:
        return [{**r, "spear_rho": float(r["spear_rho"]), "pear_rho": float(r["pear_rho"])}
                for r in csv.DictReader(fh)]


def compare_rows(ours: list[dict], theirs: list[dict]) -> dict:
    """Value by value: the largest absolute differences and how many agree to every printed digit."""
    assert [_setting(a) for a in ours] == [_setting(b) for b in theirs]
    out = {"values": len(ours)}
    for key in ("spear_rho", "pear_rho"):
        a = np.array([r[key] for r in ours])
        b = np.array([r[key] for r in theirs])
        out[key] = {"max_abs_difference": float(np.max(np.abs(a - b))), "identical": int(np.sum(a == b))}
    return out


def hoyle_full_data(study, bootstrap: int, seed: int) -> list[dict]:
    """Each setting without resampling: Spearman of the authors' column with (a) the mean of their
    subsample, (b) tealeaves on every answer (complete cases: no filled values) with the two-stage
    interval and the split-half ceiling."""
    from scipy.stats import spearmanr

    from tealeaves.judgments.hoyle import authors_sample
    from tealeaves.metaeval import agreement

    cols = hoyle_columns(study)
    out = []
    for code, task in HOYLE_TASKS.items():
        sub_means = authors_sample(study[task]).topic_means()
        for ds in ("wikitext", "nytimes", "all"):
            keep = np.array([ds == "all" or t.startswith(ds + "/") for t in study.topics.ids])
            for name in HOYLE_COLUMNS:
                if ds in name:
                    continue
                raw = np.where(keep, study.metrics[name], np.nan)  # this corpus's topics, unfilled
                res = agreement({name: raw}, study[task], statistics=("spearman",), bootstrap=bootstrap,
                                seed=seed, compare=False)
                r = res.get(name, "all", "spearman")
                c = next(x for x in res.ceiling if x["group"] == "all")  # pooled, not the first corpus's
                out.append({"task": code, "dataset": ds, "column": name,
                            "authors_subsample": float(spearmanr(cols[name][keep], sub_means[keep])[0]),
                            "every_answer": r["estimate"], "low": r["low"], "high": r["high"], "topics": r["topics"],
                            "ceiling": c["ceiling"], "ceiling_low": c["low"], "ceiling_high": c["high"],
                            "missing_filled": int((~np.isfinite(study.metrics[name][keep])).sum())})
    return out


def hoyle_section(study, published_path: str | None, iterations: int, bootstrap: int) -> dict:
    reference = json.loads(REFERENCE.read_text(encoding="utf-8"))["hoyle2021"]
    t0 = time.perf_counter()
    rows = hoyle_resampled(study, iterations)
    seconds = time.perf_counter() - t0
    head = reference["correlation_results_head"]
    check_head = compare_rows(rows[: len(head)], [{**r, "spear_rho": float(r["spear_rho"]),
                                                    "pear_rho": float(r["pear_rho"])} for r in head])
    full = None
    if published_path:
        full = compare_rows(rows, read_published(published_path))
    ours = summaries(rows)
    t0 = time.perf_counter()
    final = summaries(hoyle_familiar(study, iterations))
    final_seconds = time.perf_counter() - t0
    return {"iterations": iterations, "resample_seconds": seconds, "final_seconds": final_seconds,
            "first_104": check_head, "all_26000": full,
            "published_path": published_path and os.path.basename(published_path), "summaries": ours,
            "summaries_final": final, "table": _published_table(ours, PUBLISHED_HOYLE["released"]),
            "table_final": _published_table(final, PUBLISHED_HOYLE["final"]),
            "full_data": hoyle_full_data(study, min(bootstrap, 1000), 0)}


# -- 2. ProxAnn, Bills --------------------------------------------------------------------------------

def _authors_bootstrap(a: np.ndarray, b: np.ndarray, ids: list[str], misalign: bool = False) -> tuple[float, float]:
    """Table 4's 50 topic resamples (RandomState(42); rows in id order, drawn with replacement,
    sorted by id again): mean and sd of Kendall's tau. `misalign`: the NPMI row pairs the full NPMI
    list (in id order) with the resampled, re-sorted people's values, as the notebook does."""
    from scipy.stats import kendalltau

    order = np.argsort(ids, kind="stable")
    rng = np.random.RandomState(42)
    out = []
    for _ in range(50):
        rows = order[rng.randint(0, len(ids), size=len(ids))]
        rows = rows[np.argsort([ids[r] for r in rows], kind="stable")]
        x = a[order] if misalign else a[rows]
        out.append(kendalltau(x, b[rows], nan_policy="omit").statistic)
    return float(np.mean(out)), float(np.std(out))


def proxann_section(study, bootstrap: int) -> dict:
    from scipy.stats import kendalltau

    from tealeaves.judgments import proxann
    from tealeaves.metaeval import agreement, alt_test, judge_scores, leave_one_out
    from tealeaves.metaeval.ranking import _doc_means

    ids = [f"bills-labeled/{t.split('/')[1]}/{t.split('/')[2]}" for t in study.topics.ids]
    out: dict = {"excluded": len(proxann.excluded(tl_load("proxann2025:bills", "none"))), "published_excluded": 20}
    # the notebook's own checks over the same data
    docs = study.documents
    assign = np.array([docs.assigned[docs.of(t, "evaluated")] for t in range(len(study.topics))])
    hm, _ = _doc_means(study["fit"])
    hagree = np.mean((np.round(hm) >= 4) == assign, axis=1)
    checks = {}
    for j, (pub_user, pub_tau) in PUBLISHED_LLM_USER.items():
        jm, _ = _doc_means(study.judges[j]["fit"])
        user = float(np.mean(np.mean((np.round(hm) >= 4) == (jm >= 4), axis=1)))
        lagree = np.mean(assign == (jm >= 4), axis=1)
        checks[j] = {"llm_user": user, "published_llm_user": pub_user,
                     "tau_topics": float(kendalltau(lagree, hagree, nan_policy="omit").statistic),
                     "published_tau_topics": pub_tau}
    out["notebook_checks"] = checks
    # Table 4
    human = {t: judge_scores(study[t], "assigned") for t in ("fit", "rank")}
    table4 = {}
    for name, pub in PUBLISHED_TABLE4.items():
        row = {}
        for t in ("fit", "rank"):
            if name == "human":
                draws = leave_one_out(study[t], "theta", repeats=100, seed=0)
                row[t] = {"published": pub[t], "authors_procedure": (draws["mean"], draws["sd"]),
                          "note": "leave one out, 100 draws, theta (as the authors' code: not binarised)"}
                continue
            score = study.metrics["npmi"] if name == "npmi" else judge_scores(study.judges[name][t], "assigned")
            row[t] = {"published": pub[t], "full_data": float(kendalltau(score, human[t]).statistic),
                      "authors_procedure": _authors_bootstrap(score, human[t], ids, misalign=name == "npmi")}
            if name == "npmi":
                row[t]["aligned_bootstrap"] = _authors_bootstrap(score, human[t], ids)
        table4[name] = row
    out["table4"] = table4
    # tealeaves' own: two-stage intervals, ceiling, for fit and rank, assignments and theta
    scores = {"npmi": study.metrics["npmi"], "cv": study.metrics["cv"]}
    ours = {}
    for quality in ("assigned", "theta"):
        for t in ("fit", "rank"):
            s = dict(scores)
            for j in study.judges:
                s[f"judge:{j}"] = judge_scores(study.judges[j][t], quality)
            res = agreement(s, study[t], quality=quality, statistics=("kendall",), bootstrap=bootstrap, seed=0)
            ours[f"{t}|{quality}"] = res.to_dict()
    out["agreement"] = ours
    # Table 3
    def flip(v):
        return np.maximum(1, 8 - v)
    table3 = {}
    for j in study.judges:
        got = []
        for level in ("document", "topic"):
            for t in ("fit", "rank"):
                r = alt_test(study.judges[j][t], study[t], epsilon=0.1, level=level, pseudo="dataset", resamples=10,
                             seed=42, transform=flip if t == "rank" else None)
                got.append({"advantage_probability": r["advantage_probability"], "winning_rate": r["winning_rate"],
                            "passes": r["passes"]})
        table3[j] = {"ours": got, "published": PUBLISHED_TABLE3.get(j)}
    out["table3"] = table3
    return out


def tl_load(name: str, exclude: str = "authors"):
    import tealeaves as tl

    return tl.load_judgments(name, exclude=exclude)


# -- 3. tealeaves' measures on the ProxAnn topics ---------------------------------------------------------

def tealeaves_section(study, bootstrap: int) -> dict:
    """Coherence by tealeaves over the documents the annotators saw (exemplars, evaluated documents
    and the distractor of all 24 topics: 360 texts cut near 1,000 characters), the top 10 words;
    agreement with the people's clarity ratings and topic quality (fit, theta)."""
    import tealeaves as tl
    from tealeaves.metaeval import agreement
    from tealeaves.util.text import tokenize

    texts = sorted(set(study.documents.text))
    reference = [tokenize(t) for t in texts]
    topics = [list(w[:10]) for w in study.topics.words]
    scores = {"npmi (authors, full Bills corpus)": study.metrics["npmi"],
              "c_v (authors, full Bills corpus)": study.metrics["cv"]}
    for measure in ("umass", "uci", "npmi", "c_v"):
        res = tl.coherence(topics, reference, measure=measure, absent="skip", convention="tealeaves")
        scores[f"{measure} (tealeaves, documents shown)"] = np.asarray(res.per_topic, dtype=float)
    out = {"reference_documents": len(texts), "reference_tokens": int(sum(len(r) for r in reference)), "targets": {}}
    for target, task, quality in (("clarity rating", "clarity", "mean"), ("fit quality (theta)", "fit", "theta"),
                                  ("rank quality (theta)", "rank", "theta")):
        res = agreement(scores, study[task], quality=quality, bootstrap=bootstrap, seed=0)
        out["targets"][target] = res.to_dict()
    return out


# -- 5. what carries over to a user's models -------------------------------------------------------

# Hoyle et al.'s columns for tealeaves' measures: gensim's CoherenceModel over the top 10 words, the
# reference each topic's own training corpus (train + validation + test), NPMI and UCI over
# 10-token windows, C_V over 110, UMass over documents (ahoho/topics, runs/calculate_coherence.py)
HOYLE_CARRY = {"u_mass_full": "umass", "c_uci_full": "uci", "c_npmi_10_full": "npmi", "c_v_full": "c_v"}
HOYLE_HOW = ("Hoyle et al.'s {name} (gensim's CoherenceModel and its window counting, the top 10 words, each "
             "topic's own training corpus as the reference, {window})")
HOYLE_WINDOWS = {"umass": "documents as windows", "uci": "10-token windows", "npmi": "10-token windows",
                 "c_v": "110-token windows"}
PROXANN_HOW = {"authors": "ProxAnn's authors' {name} over the whole Bills corpus",
               "tealeaves": "tealeaves' {name} (its exact counts, convention=\"tealeaves\") over the {documents} texts "
                            "the annotators saw"}
MEASURE_LABELS = {"umass": "UMass", "uci": "UCI", "npmi": "NPMI", "c_v": "C_V"}
PEOPLE = {("hoyle2021", "rating"): "people's mean ratings (1-3)",
          ("hoyle2021", "word-intrusion"): "people's word-intrusion accuracy",
          ("proxann2025:bills", "clarity rating"): "people's clarity ratings (1-5)",
          ("proxann2025:bills", "fit quality (theta)"): "the topic quality people's document fits give (Kendall "
                                                       "tau of their mean fit with theta)",
          ("proxann2025:bills", "rank quality (theta)"): "the topic quality people's rankings give (Kendall tau "
                                                        "of their mean rank with theta)"}
STUDIES = {"hoyle2021": {"name": "Hoyle et al. 2021", "headline": ["rating", "spearman"]},
           "proxann2025:bills": {"name": "ProxAnn (Hoyle et al. 2025), Bills", "headline": ["fit quality (theta)",
                                                                                            "kendall"]}}


def carry_section(study, bootstrap: int) -> dict:
    """Agreement of the authors' UMass, UCI, NPMI and C_V (reference: each topic's own corpus)
    with the people's ratings and intrusion accuracy: every statistic, per corpus and pooled, the
    ceiling, every pair compared on the same replicates."""
    from tealeaves.metaeval import agreement

    scores = {col: study.metrics[col] for col in HOYLE_CARRY}
    return {task: agreement(scores, study[task], bootstrap=bootstrap, seed=0).to_dict()
            for task in ("rating", "word-intrusion")}


def _measurement(metric: str, study: str, judgment: str, row: dict, ceiling: dict | None, how: str,
                 convention: str) -> dict:
    return {"metric": metric, "study": study, "judgment": judgment, "people": PEOPLE[(study, judgment)],
            "group": row["group"], "statistic": row["statistic"], "estimate": row["estimate"], "low": row["low"],
            "high": row["high"], "topics": row["topics"],
            "ceiling": ceiling and ceiling["ceiling"], "ceiling_low": ceiling and ceiling["low"],
            "ceiling_high": ceiling and ceiling["high"], "how": how, "convention": convention}


def figures(r: dict) -> dict:
    """The figures `tealeaves evaluate --human` carries over, from this experiment's JSON: per
    tealeaves measure, every (study, judgment, statistic) measured over all the study's topics,
    with its ceiling and how the measure was computed; the paired comparisons between measures."""
    out: dict = {"generated_by": "experiments/human_agreement.py",
                 "from": "experiments/results/human_agreement.json",
                 "studies": STUDIES, "measurements": [], "comparisons": []}
    for task, res in r["carry_over"].items():
        ceil = {(c["group"], c["statistic"]): c for c in res["ceiling"]}
        for row in (x for x in res["rows"] if x["group"] == "all"):
            m = HOYLE_CARRY[row["score"]]
            how = HOYLE_HOW.format(name=MEASURE_LABELS[m], window=HOYLE_WINDOWS[m])
            out["measurements"].append(_measurement(m, "hoyle2021", task, row,
                                                    ceil.get((row["group"], row["statistic"])), how, "gensim"))
        for c in (x for x in res["comparisons"] if x["group"] == "all"):
            out["comparisons"].append({"study": "hoyle2021", "judgment": task, "group": c["group"],
                                       "statistic": c["statistic"], "a": HOYLE_CARRY[c["a"]],
                                       "b": HOYLE_CARRY[c["b"]], "difference": c["difference"], "low": c["low"],
                                       "high": c["high"], "p": c["p"]})
    t = r["tealeaves"]
    for target, res in t["targets"].items():
        ceil = {(c["group"], c["statistic"]): c for c in res["ceiling"]}
        for row in (x for x in res["rows"] if x["group"] == "all"):
            m, who = row["score"].split(" (")[0], "authors" if "(authors" in row["score"] else "tealeaves"
            m = {"cv": "c_v"}.get(m, m)
            how = PROXANN_HOW[who].format(name=MEASURE_LABELS[m], documents=t["reference_documents"])
            out["measurements"].append(_measurement(m, "proxann2025:bills", target, row,
                                                    ceil.get((row["group"], row["statistic"])), how,
                                                    "tealeaves" if who == "tealeaves" else "authors"))
    return out


# -- 4. timing -----------------------------------------------------------------------------------------

def timing() -> dict:
    """Wall seconds of the meta-evaluation on the bundled studies (2,000 replicates; the machine
    was shared, so these are upper bounds of what it takes alone)."""
    import tealeaves as tl
    from tealeaves.metaeval import agreement, alt_test, judge_scores

    out = {}
    hoyle = tl.load_judgments("hoyle2021")
    t0 = time.perf_counter()
    agreement({k: hoyle.metrics[k] for k in ("c_npmi_10_full", "c_v_full")}, hoyle["rating"], bootstrap=2000)
    out["hoyle2021 ratings: 2 metrics x 3 statistics x 3 groups, ceiling, 2000 replicates"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    agreement({k: hoyle.metrics[k] for k in ("c_npmi_10_full", "c_v_full")}, hoyle["word-intrusion"], bootstrap=2000)
    out["hoyle2021 intrusion: the same"] = time.perf_counter() - t0
    bills = tl.load_judgments("proxann2025:bills")
    t0 = time.perf_counter()
    s = {"npmi": bills.metrics["npmi"], **{j: judge_scores(bills.judges[j]["fit"], "theta") for j in bills.judges}}
    agreement(s, bills["fit"], quality="theta", bootstrap=2000)
    out["proxann2025:bills fit: NPMI + 7 LLMs, topic quality (theta), 2000 replicates"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    alt_test(bills.judges["gpt-4o-2024-08-06"]["fit"], bills["fit"], pseudo="dataset", resamples=10)
    out["proxann2025:bills: one alternative-annotator test, 10 pseudo-annotator draws"] = time.perf_counter() - t0
    return {k: round(v, 2) for k, v in out.items()}


# -- the page ------------------------------------------------------------------------------------------

def _f(x, d=2) -> str:
    return "–" if x is None else f"{x:.{d}f}".replace("-", "−")


def markdown(r: dict) -> str:
    h = r["hoyle2021"]
    p = r["proxann2025"]
    lines = ["# Do people agree with the metrics?", "",
             "<!-- generated by experiments/human_agreement.py from experiments/results/human_agreement.json -->",
             "",
             "Two public studies' raw judgments ship with tealeaves (`tl.load_judgments(\"hoyle2021\")`, "
             "`tl.load_judgments(\"proxann2025:bills\")`). This page reproduces their published agreement "
             "figures from those judgments with `tealeaves.metaeval`, says where a figure does not "
             "reproduce and why, and measures tealeaves' own coherence on the same topics.", "",
             "## Hoyle et al. 2021: NPMI and C_V against ratings and word intrusion", "",
             f"The authors resampled annotators {h['iterations']} times per setting "
             "(`analysis/correlation_results.csv`). Redrawing their resamples from the bundled answers "
             "(their subsample redrawn exactly, numpy's global `RandomState(42)`, the metric columns filled "
             "as they filled them) gives their values one by one: "]
    head = h["first_104"]
    lines[-1] += (f"the first {head['values']} of them (kept in the tests) agree within "
                  f"{head['spear_rho']['max_abs_difference']:.1e} (Spearman; {head['spear_rho']['identical']} "
                  f"identical) and {head['pear_rho']['max_abs_difference']:.1e} (Pearson)")
    if h["all_26000"]:
        a = h["all_26000"]
        lines[-1] += (f"; all {a['values']:,}: Spearman {a['spear_rho']['identical']:,} identical, largest "
                      f"difference {a['spear_rho']['max_abs_difference']:.1e}; Pearson largest difference "
                      f"{a['pear_rho']['max_abs_difference']:.1e} (the last bits of a float sum). The authors' "
                      "notebook then changed (answers marked familiar only, one draw shared by the metrics) and "
                      "printed the paper's table from a file it did not release; that procedure, redrawn the same "
                      "way, gives the paper's table too (the second table).")
    else:
        lines[-1] += "."
    for key, title in (("table", "the released file's version (every answer, a fresh draw per metric)"),
                       ("table_final", "the notebook's final version, the paper's table (answers marked familiar, "
                                       "one draw shared by the metrics; its file is not released)")):
        lines += ["", f"Mean Spearman over the {h['iterations']} resamples, published / reproduced, {title}:", "",
                  "| task | train corpus | NPMI NYT | NPMI Wiki | NPMI train | NPMI val | C_V NYT | C_V Wiki | C_V train | C_V val |",
                  "|---|---|---|---|---|---|---|---|---|---|"]
        for (code, ds) in PUBLISHED_HOYLE["released"]:
            cells = []
            for metric in ("c_npmi_10", "c_v"):
                for ref in PUBLISHED_REFERENCES:
                    e = next(x for x in h[key] if (x["task"], x["dataset"], x["metric"], x["reference"]) ==
                             (code, ds, metric, ref))
                    cells.append(f"{_f(e['published'])} / {_f(e['ours'])}")
            lines.append(f"| {'rating' if code == 'ratings' else 'intrusion'} | {ds} | " + " | ".join(cells) + " |")
        agree = sum(1 for x in h[key] if x["ours"] is not None and abs(x["published"] - x["ours"]) < 0.005)
        within = sum(1 for x in h[key] if x["ours"] is not None and abs(x["published"] - x["ours_exact"]) <= 0.0101)
        lines += ["", f"{agree} of {len(h[key])} cells agree to the printed digits; {within} within 0.01."]
    lines += ["",
              "Without resampling, and on every answer (tealeaves: Spearman with the mean of all of a topic's "
              "answers, 95% two-stage bootstrap interval, topics missing a cross-corpus value left out "
              "instead of filled):", "",
              "| task | corpus | column | authors' subsample | every answer [95%] | topics | filled by the authors | ceiling |",
              "|---|---|---|---|---|---|---|---|"]
    for x in h["full_data"]:
        if x["column"] not in ("c_npmi_10_full", "c_v_full", "c_npmi_10_nytimes_full", "c_npmi_10_wikitext_full"):
            continue
        lines.append(f"| {x['task'].rstrip('s')} | {x['dataset']} | {x['column']} | {_f(x['authors_subsample'])} | "
                     f"{_f(x['every_answer'])} [{_f(x['low'])}, {_f(x['high'])}] | {x['topics']} | "
                     f"{x['missing_filled']} | {_f(x['ceiling'])} |")
    lines += ["", "Why the cross-corpus columns differ: a topic whose words are not all in the other corpus has "
              "no value there; the authors fill it with the topic's own-corpus value (pandas `combine_first`), "
              "then any remaining gap with 0. tealeaves leaves such topics out and counts them. The ceiling is "
              "the correlation a score equal to the true topic quality would reach with these raters "
              "(split halves, Spearman–Brown): the metrics reach about half of it.", "",
              "## ProxAnn (Hoyle et al. 2025), Bills", "",
              f"The authors' attention-check rule removes {p['excluded']} of 121 responses (their scripts print "
              f"\"Removed: {p['published_excluded']}\"). Two checks their topic-ranking notebook prints reproduce "
              "to three decimals from the bundled data, for every LLM:", "",
              "| LLM | LLM–people fit agreement, published / ours | tau of agreements across topics, published / ours |",
              "|---|---|---|"]
    for j, c in p["notebook_checks"].items():
        lines.append(f"| {LLM_NAMES[j]} | {_f(c['published_llm_user'], 3)} / {_f(c['llm_user'], 3)} | "
                     f"{_f(c['published_tau_topics'], 3)} / {_f(c['tau_topics'], 3)} |")
    lines += ["", "Kendall tau across topics with the people's topic ranking (a topic's quality: tau of the "
              "people's mean fit, or rank, with the model's assignments), published (mean ± sd of 50 topic "
              "resamples) / the authors' procedure on the bundled data / the full data:", "",
              "| score | fit: published | fit: procedure | fit: full data | rank: published | rank: procedure | rank: full data |",
              "|---|---|---|---|---|---|---|"]
    for name, row in p["table4"].items():
        label = {"npmi": "NPMI", "human": "human (leave one out)"}.get(name, LLM_NAMES.get(name, name))
        cells = []
        for t in ("fit", "rank"):
            c = row[t]
            cells += [f"{_f(c['published'][0])} ± {_f(c['published'][1])}",
                      f"{_f(c['authors_procedure'][0])} ± {_f(c['authors_procedure'][1])}",
                      _f(c.get("full_data"))]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    npmi = p["table4"]["npmi"]
    lines += ["", "What reproduces and what does not: the human leave-one-out baseline reproduces within its "
              "random spread. The NPMI row of the authors' notebook pairs the full NPMI list (in topic order) "
              "with the resampled, re-sorted people's values, so its tau is between mismatched topics; run that "
              "way here, it gives the published fit figure; with the pairs kept together it is "
              f"{_f(npmi['fit']['aligned_bootstrap'][0])} ± {_f(npmi['fit']['aligned_bootstrap'][1])} (fit) and "
              f"{_f(npmi['rank']['aligned_bootstrap'][0])} ± {_f(npmi['rank']['aligned_bootstrap'][1])} (rank). "
              "The LLM rows do not follow from the released data: the same notebook's checks above (which use "
              "the same people, documents and LLM answers) do, so the table was printed by an earlier state of "
              "the notebook (its cells carry no execution count) or from other LLM files; the per-model "
              "averages its figure cell prints do not follow either.", "",
              "The alternative-annotator test (epsilon 0.1, pseudo-annotators by dataset, 10 draws; advantage "
              "probability, * = the judge wins against most annotators by the t-test), published / ours:", "",
              "| LLM | document fit | document rank | topic fit | topic rank |", "|---|---|---|---|---|"]
    for j, row in p["table3"].items():
        cells = []
        for k, g in enumerate(row["ours"]):
            ours = f"{_f(g['advantage_probability'])}{'*' if g['winning_rate'] > 0.5 else ''}"
            cells.append(f"{row['published'][k]} / {ours}" if row["published"] else ours)
        lines.append(f"| {LLM_NAMES.get(j, j)} | " + " | ".join(cells) + " |")
    lines += ["", "All 24 published advantage probabilities reproduce within 0.01 (the pseudo-annotators are "
              "random; the authors' draws cannot be repeated) and the same judges pass.", "",
              "## tealeaves' measures on the same topics", ""]
    t = r["tealeaves"]
    lines += [f"Coherence by tealeaves over the {t['reference_documents']} texts the annotators saw "
              f"({t['reference_tokens']:,} tokens; the top 10 words), beside the authors' NPMI and C_V over the "
              "whole Bills corpus. Kendall tau with the people (24 topics, 95% two-stage intervals); "
              "the ceiling is the split-half agreement of the people themselves:", ""]
    targets = list(t["targets"])
    lines += ["| measure | " + " | ".join(targets) + " |", "|---|" + "---|" * len(targets)]
    first = t["targets"][targets[0]]
    for score in dict.fromkeys(x["score"] for x in first["rows"]):
        cells = []
        for target in targets:
            x = next(y for y in t["targets"][target]["rows"] if y["score"] == score and y["statistic"] == "kendall")
            cells.append(f"{_f(x['estimate'])} [{_f(x['low'])}, {_f(x['high'])}]")
        lines.append(f"| {score} | " + " | ".join(cells) + " |")
    cells = []
    for target in targets:
        c = next(y for y in t["targets"][target]["ceiling"] if y["statistic"] == "kendall")
        cells.append(f"{_f(c['ceiling'])} [{_f(c['low'])}, {_f(c['high'])}]")
    lines += ["| ceiling (people) | " + " | ".join(cells) + " |", "",
              "With 24 topics every interval is wide: no coherence measure is distinguishable from another here, "
              "and none from zero on the document-based quality. Hoyle et al.'s 300 topics are the better guide "
              "for coherence against ratings and intrusion (above). Embedding coherence was not measured: the "
              "offline MiniLM package needs torch, which this experiment does not install.", ""]
    lines += carry_markdown(r)
    lines += ["## Time", "", "Wall seconds on a 2-core machine shared with other jobs (upper bounds):", ""]
    lines += [f"- {k}: {v:.1f} s" for k, v in r["timing"].items()]
    lines += ["", f"Redrawing the authors' {h['iterations']} x 52 resampled correlations: "
              f"{h['resample_seconds']:.0f} s.", ""]
    return "\n".join(lines)


def carry_markdown(r: dict) -> list[str]:
    """The section on what `tealeaves evaluate --human hoyle2021` carries over."""
    c = r["carry_over"]
    tasks = {"rating": "ratings", "word-intrusion": "word intrusion"}
    lines = ["## What carries over to your models", "",
             "`tealeaves evaluate --human hoyle2021` puts each coherence measure's agreement with people beside "
             "its column and lets the recommendation say which measure it trusts. Hoyle et al.'s people judged "
             "their 300 topics, not yours: what carries over is how the measure behaves, computed as they "
             "computed it (gensim's `CoherenceModel`, the top 10 words, each topic's own training corpus as the "
             "reference), which is tealeaves' default convention too (`convention=\"gensim\"`, top 10; the exact "
             "window counts differ: see [Why coherence numbers disagree](coherence_conventions.md)). Spearman with the people's mean per "
             "topic, all 300 topics, 95% two-stage intervals (`src/tealeaves/data/human_agreement.json` is "
             "written from these figures):", "",
             "| measure | " + " | ".join(tasks.values()) + " |", "|---|" + "---|" * len(tasks)]
    rows = {t: {x["score"]: x for x in c[t]["rows"] if x["group"] == "all" and x["statistic"] == "spearman"}
            for t in tasks}
    for col, m in HOYLE_CARRY.items():
        cells = [f"{_f(rows[t][col]['estimate'])} [{_f(rows[t][col]['low'])}, {_f(rows[t][col]['high'])}]"
                 for t in tasks]
        lines.append(f"| {MEASURE_LABELS[m]} (`{col}`) | " + " | ".join(cells) + " |")
    ceil = {t: next(x for x in c[t]["ceiling"] if x["group"] == "all" and x["statistic"] == "spearman")
            for t in tasks}
    lines += ["| ceiling (people) | " + " | ".join(f"{_f(ceil[t]['ceiling'])} [{_f(ceil[t]['low'])}, "
                                                   f"{_f(ceil[t]['high'])}]" for t in tasks) + " |", ""]
    for t, name in tasks.items():
        best = max(rows[t].values(), key=lambda x: x["estimate"])["score"]
        tied, below = [], []
        for x in c[t]["comparisons"]:
            if x["group"] != "all" or x["statistic"] != "spearman" or best not in (x["a"], x["b"]):
                continue
            sign = 1 if x["a"] == best else -1
            other = x["b"] if sign == 1 else x["a"]
            lo, hi = sorted((sign * x["low"], sign * x["high"]))
            (below if lo > 0 else tied).append(f"{MEASURE_LABELS[HOYLE_CARRY[other]]} "
                                               f"({_f(sign * x['difference'])} [{_f(lo)}, {_f(hi)}])")
        lines.append(f"- {name}: {MEASURE_LABELS[HOYLE_CARRY[best]]} agrees best; not separated from it (the "
                     f"paired difference's interval holds 0): {', '.join(tied) or 'none'}; below it: "
                     f"{', '.join(below) or 'none'}.")
    lines += ["", "On the ProxAnn topics (above) tealeaves' own measures, in its convention, are measured on "
              "24 topics only: `--human proxann2025:bills` carries those over, with their wide intervals.", ""]
    return lines


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--published-hoyle", default=None, help="the authors' correlation_results.csv")
    ap.add_argument("--iterations", type=int, default=500)
    ap.add_argument("--bootstrap", type=int, default=2000)
    ap.add_argument("--only", default=None, choices=("carry-over", "full-data"),
                    help="recompute this part alone into the existing JSON")
    args = ap.parse_args(argv)
    hoyle = tl_load("hoyle2021")
    if args.only:
        results = json.loads(OUT.read_text(encoding="utf-8"))
        if args.only == "carry-over":
            results["carry_over"] = carry_section(hoyle, args.bootstrap)
        else:
            results["hoyle2021"]["full_data"] = hoyle_full_data(hoyle, min(args.bootstrap, 1000), 0)
    else:
        bills = tl_load("proxann2025:bills")
        results = {"hoyle2021": hoyle_section(hoyle, args.published_hoyle, args.iterations, args.bootstrap),
                   "proxann2025": proxann_section(bills, args.bootstrap),
                   "tealeaves": tealeaves_section(bills, args.bootstrap),
                   "carry_over": carry_section(hoyle, args.bootstrap),
                   "timing": timing()}
    from tealeaves.output.jsonout import json_safe

    OUT.write_text(json.dumps(json_safe(results), indent=1) + "\n", encoding="utf-8")
    saved = json.loads(OUT.read_text(encoding="utf-8"))
    DOC.write_text(markdown(saved), encoding="utf-8")
    FIGURES.write_text(json.dumps(figures(saved), indent=1) + "\n", encoding="utf-8")
    print(f"wrote {OUT}, {DOC} and {FIGURES}", file=sys.stderr)


if __name__ == "__main__":
    main()
