"""Do the junk-topic flags find the topics people call junk? The 300 topics Hoyle et al. (NeurIPS
2021) had rated and tested by word intrusion (bundled: `tl.load_judgments("hoyle2021")`).

    pip install wordfreq    # the word frequencies below (the experiment only; tealeaves does not use it)
    python experiments/junk_human.py [--splits 200]

Writes experiments/results/junk_human.json and docs/junk_flags.md (from the JSON: `markdown`).

Junk, as people judged it:
- **rating** (the definition the thresholds are set on): the topic's mean rating is below 2 on the
  study's 3-point scale (1 not very related, 2 somewhat related, 3 very related): on average the
  raters found its words less than "somewhat related";
- **intrusion**: people did not find the intruder more often than guessing would (1 of 6 words):
  the one-sided exact binomial test of the topic's correct answers against 1/6 is not significant
  at 5%.

What can be computed for these topics. The study ships the topics' top words and the authors'
own metrics against the models' training corpora (Wikitext-103, NYTimes), not the corpora
themselves, so:
- the **incoherent** flag is tested on the authors' NPMI (`c_npmi_10_full`: the top 10 words,
  10-token windows, over the model's full training corpus), which is what tealeaves computes as
  `coherence(..., measure="npmi")` against the same reference;
- the **rare-words** flag is tested with word frequencies from the `wordfreq` package (English:
  Wikipedia, news, books, subtitles, web text, of which Wikipedia and news are these topics'
  own kinds of text) standing in for the reference's: a word is rare below one per million tokens
  (Zipf frequency 3), the rule tealeaves applies to its reference's counts;
- the **never-together** flag (more than half of the top-word pairs never co-occur in the
  reference) needs pair counts, which the study does not carry: not tested here.

The incoherent flag's threshold is chosen on a calibration half of the topics (split at random
within each corpus x model, seed 0) as the NPMI cut that maximises F1 for rating-junk, and its
precision and recall are reported on the other half (Wilson 95% intervals). The same is done
over `--splits` random splits to show how much the chosen cut and the test figures move.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "experiments" / "results" / "junk_human.json"
DOC = ROOT / "docs" / "junk_flags.md"
RATING_CUT = 2.0  # mean rating below: junk
CHANCE = 1 / 6  # word intrusion: one intruder among six words
GRID = [round(x, 3) for x in np.arange(-0.10, 0.301, 0.005)]  # NPMI cuts tried
RARE_ZIPF = 3.0  # below one per million tokens
COMMON_ZIPF = 5.0  # above one per 10,000 tokens: a generic word
TOPN = 10


def wilson(k: int, n: int) -> list[float | None]:
    """Wilson's 95% score interval of a proportion k / n."""
    if n == 0:
        return [None, None]
    z = 1.959963984540054
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return [round(centre - half, 4), round(centre + half, 4)]


def binomial_tail(k: int, n: int, p: float) -> float:
    """P(X >= k) for X ~ Binomial(n, p) (exact)."""
    return float(sum(math.comb(n, j) * p**j * (1 - p) ** (n - j) for j in range(k, n + 1)))


def topics() -> dict:
    """Per topic: corpus, model, top words, the people's answers summarised, the authors' NPMI and
    the words' frequencies."""
    from wordfreq import zipf_frequency

    import tealeaves as tl

    study = tl.load_judgments("hoyle2021")
    rating, intrusion = study["rating"], study["word-intrusion"]
    rated = rating.topic_means()
    n_right = np.bincount(intrusion.topic, weights=intrusion.value, minlength=300).astype(int)
    n_asked = np.bincount(intrusion.topic, minlength=300)
    t = study.topics
    out = []
    for k in range(len(t.ids)):
        words = list(t.words[k][:TOPN])
        zipf = [round(zipf_frequency(w.replace("_", " "), "en"), 2) for w in words]
        out.append({"id": t.ids[k], "corpus": t.corpus[k], "model": t.model[k], "words": words,
                    "rating": round(float(rated[k]), 4), "intrusion_right": int(n_right[k]),
                    "intrusion_answers": int(n_asked[k]),
                    "npmi": round(float(study.metric("c_npmi_10_full")[k]), 5), "zipf": zipf})
    import wordfreq
    return {"topics": out, "wordfreq": wordfreq.__version__ if hasattr(wordfreq, "__version__") else
            _version("wordfreq")}


def _version(package: str) -> str:
    from importlib.metadata import version

    return version(package)


def labels(rows: list[dict]) -> dict[str, np.ndarray]:
    """Junk per definition (see the module notes)."""
    rating = np.array([r["rating"] < RATING_CUT for r in rows])
    intrusion = np.array([binomial_tail(r["intrusion_right"], r["intrusion_answers"], CHANCE) >= 0.05
                          for r in rows])
    return {"rating": rating, "intrusion": intrusion, "either": rating | intrusion}


def values(rows: list[dict]) -> dict[str, np.ndarray]:
    z = np.array([r["zipf"] for r in rows])
    return {"npmi": np.array([r["npmi"] for r in rows]), "rare_share": (z < RARE_ZIPF).mean(axis=1),
            "common_share": (z > COMMON_ZIPF).mean(axis=1)}


def split(rows: list[dict], seed: int) -> np.ndarray:
    """True for the calibration half: half of each corpus x model group, at random."""
    rng = np.random.default_rng(seed)
    cal = np.zeros(len(rows), dtype=bool)
    groups: dict[tuple[str, str], list[int]] = {}
    for i, r in enumerate(rows):
        groups.setdefault((r["corpus"], r["model"]), []).append(i)
    for members in groups.values():
        pick = rng.permutation(members)[: len(members) // 2]
        cal[pick] = True
    return cal


def score(flag: np.ndarray, junk: np.ndarray) -> dict:
    tp, n_flag, n_junk = int((flag & junk).sum()), int(flag.sum()), int(junk.sum())
    return {"flagged": n_flag, "junk": n_junk, "hits": tp,
            "precision": round(tp / n_flag, 4) if n_flag else None, "precision_ci": wilson(tp, n_flag),
            "recall": round(tp / n_junk, 4) if n_junk else None, "recall_ci": wilson(tp, n_junk),
            "topics": int(flag.size)}


def choose(npmi: np.ndarray, junk: np.ndarray) -> float:
    """The NPMI cut (flag below it) with the largest F1 for `junk`; the smallest such cut."""
    best, cut = -1.0, GRID[0]
    for c in GRID:
        flag = npmi < c
        tp = int((flag & junk).sum())
        f1 = 2 * tp / (flag.sum() + junk.sum()) if flag.sum() + junk.sum() else 0.0
        if f1 > best + 1e-12:
            best, cut = f1, c
    return cut


def run(splits: int) -> dict:
    data = topics()
    rows = data["topics"]
    junk, v = labels(rows), values(rows)
    cal = split(rows, 0)
    cut = choose(v["npmi"][cal], junk["rating"][cal])
    swapped = choose(v["npmi"][~cal], junk["rating"][~cal])
    incoherent = v["npmi"] < cut
    rare = v["rare_share"] >= 0.5
    result = {
        "junk_counts": {k: int(a.sum()) for k, a in junk.items()},
        "chosen": {"incoherent": cut, "incoherent_swapped_halves": swapped},
        "calibration_topics": int(cal.sum()), "test_topics": int((~cal).sum()),
        "incoherent": {d: {"test": score(incoherent[~cal], junk[d][~cal]),
                           "swapped_test": score((v["npmi"] < swapped)[cal], junk[d][cal]),
                           "all": score(incoherent, junk[d])} for d in junk},
        "rare_words": {d: score(rare, junk[d]) for d in junk},
        "rare_words_npmi": sorted(round(float(x), 3) for x in v["npmi"][rare]),
        "rare_words_rating": round(float(np.mean([r["rating"] for r, f in zip(rows, rare, strict=True)
                                                  if f])), 3),
        "npmi_below_zero": score(v["npmi"] < 0, junk["rating"]),
        "generic": {"topics": int((v["common_share"] >= 0.7).sum()),
                    "junk": int(((v["common_share"] >= 0.7) & junk["rating"]).sum()),
                    "junk_flagged_incoherent": int(((v["common_share"] >= 0.7) & junk["rating"]
                                                    & incoherent).sum())},
        "by_model": {m: score(incoherent[[r["model"] == m for r in rows]],
                              junk["rating"][[r["model"] == m for r in rows]])
                     for m in ("mallet", "dvae", "etm")},
        "curve": [{"cut": c, **score(v["npmi"] < c, junk["rating"])} for c in GRID if -0.02 <= c <= 0.2],
    }
    many = []
    for seed in range(1, splits + 1):
        c = split(rows, seed)
        chosen = choose(v["npmi"][c], junk["rating"][c])
        s = score((v["npmi"] < chosen)[~c], junk["rating"][~c])
        many.append((chosen, s["precision"], s["recall"]))
    arr = np.array([(a, b if b is not None else np.nan, c) for a, b, c in many], dtype=float)
    result["splits"] = {"count": splits, "cut": _spread(arr[:, 0], 3), "precision": _spread(arr[:, 1]),
                        "recall": _spread(arr[:, 2])}
    result["examples"] = examples(rows, junk, v, cut)
    result["reference_sizes"] = reference_sizes()
    result["reference_settled"] = settled(result["reference_sizes"])
    from tealeaves.diagnostics.flags import MIN_REFERENCE_TOKENS
    result["min_reference_tokens"] = MIN_REFERENCE_TOKENS
    return {"study": "hoyle2021", "rating_cut": RATING_CUT, "chance": CHANCE, "rare_zipf": RARE_ZIPF,
            "common_zipf": COMMON_ZIPF, "topn": TOPN, "grid": [GRID[0], GRID[-1], 0.005],
            "wordfreq": data["wordfreq"], "machine": platform.machine(), **result, "topics": rows}


SIZES = (1000, 3000, 5000, 7000, 10000)  # paragraphs of the bundled training corpus, then all of it


def reference_sizes() -> dict:
    """How many topics of the bundled models each coherence flag marks over random subsets of the
    bundled training paragraphs (seed 0) and over all of them: where the counts settle is the
    smallest reference the flags are computed over (`flags.MIN_REFERENCE_TOKENS`)."""
    import tealeaves as tl
    from tealeaves.coherence import topic_words
    from tealeaves.diagnostics.flags import COHERENCE_FLAGS, THRESHOLDS, coherence_values

    train = tl.read_corpus("sotu:train")
    perm = np.random.default_rng(0).permutation(len(train))
    out = {}
    for name in ("sotu-20-asym", "sotu-50-asym"):
        words = topic_words(tl.load_model(f"sotu:{name}"), TOPN)
        rows = []
        for n in (*SIZES, len(train)):
            sub = train.subset(sorted(perm[:n]))
            v = coherence_values(tl.coherence(words, sub, measure="npmi", topn=TOPN))
            with np.errstate(invalid="ignore"):
                hit = {"incoherent": v["npmi"] < THRESHOLDS["incoherent"],
                       "never-together": v["never_together"] > THRESHOLDS["never-together"],
                       "rare-words": v["rare_share"] >= THRESHOLDS["rare-words"]}
            rows.append({"documents": n, "tokens": int(sub.num_tokens),
                         "mean_npmi": round(float(np.nanmean(v["npmi"])), 4),
                         **{f: int(hit[f].sum()) for f in COHERENCE_FLAGS}})
        out[name] = rows
    return out


def settled(sizes: dict) -> dict:
    """The smallest measured reference from which every model's flag counts equal the whole
    reference's, and the largest one below it."""
    from tealeaves.diagnostics.flags import COHERENCE_FLAGS

    n = len(next(iter(sizes.values())))
    ok = [all(all(rows[i][f] == rows[-1][f] for f in COHERENCE_FLAGS) for rows in sizes.values())
          for i in range(n)]
    first = next(i for i in range(n) if all(ok[i:]))
    tokens = [next(iter(sizes.values()))[i]["tokens"] for i in range(n)]
    return {"settled_tokens": tokens[first], "unsettled_tokens": tokens[first - 1] if first else None}


def _spread(x: np.ndarray, digits: int = 2) -> dict:
    x = x[~np.isnan(x)]
    return {"median": round(float(np.median(x)), digits), "p5": round(float(np.quantile(x, 0.05)), digits),
            "p95": round(float(np.quantile(x, 0.95)), digits)}


def examples(rows: list[dict], junk: dict, v: dict, cut: float) -> dict:
    """A few topics of each kind, lowest rating first: junk caught, junk missed, flagged but rated well."""
    order = np.argsort([r["rating"] for r in rows], kind="stable")
    flag = v["npmi"] < cut
    pick = {"caught": [i for i in order if junk["rating"][i] and flag[i]][:4],
            "missed": [i for i in order if junk["rating"][i] and not flag[i]][:4],
            "false": [i for i in order[::-1] if flag[i] and not junk["rating"][i]][:3],
            "rare": [i for i in order if v["rare_share"][i] >= 0.5][:4]}
    return {k: [{"id": rows[i]["id"], "rating": rows[i]["rating"], "npmi": rows[i]["npmi"],
                 "words": " ".join(rows[i]["words"])} for i in idx] for k, idx in pick.items()}


def _pr(s: dict) -> str:
    def pct(x: float | None) -> str:
        return "–" if x is None else f"{x:.2f}"
    return (f"{pct(s['precision'])} [{pct(s['precision_ci'][0])}, {pct(s['precision_ci'][1])}] | "
            f"{pct(s['recall'])} [{pct(s['recall_ci'][0])}, {pct(s['recall_ci'][1])}] | "
            f"{s['hits']} of {s['flagged']} flagged, {s['junk']} junk")


def markdown(r: dict) -> str:
    """docs/junk_flags.md from the results."""
    cut = r["chosen"]["incoherent"]
    inc = r["incoherent"]
    sp = r["splits"]
    lines = [
        "# Junk-topic flags against people",
        "",
        "<!-- generated by experiments/junk_human.py from experiments/results/junk_human.json -->",
        "",
        "Do the flags find the topics people call junk? The test: the 300 topics of Hoyle et al. (NeurIPS "
        "2021), bundled as `tl.load_judgments(\"hoyle2021\")`: Wikitext and NYTimes × MALLET LDA, D-VAE "
        "and ETM, each rated by about 15 crowd workers on a 3-point scale and tested by word intrusion.",
        "",
        "**Junk**, as people judged it: a topic whose mean rating is below "
        f"{r['rating_cut']:g} (on average its words were rated less than \"somewhat related\"; "
        f"{r['junk_counts']['rating']} of 300 topics). The thresholds are set on this definition. "
        "A second definition checks them: people could not find the intruder more often than guessing "
        f"(1 in 6): the exact one-sided binomial test against 1/6 is not significant at 5% "
        f"({r['junk_counts']['intrusion']} topics; {r['junk_counts']['either']} are junk by either).",
        "",
        "**What could be computed.** The study ships the topics' words and the authors' metrics against "
        "the models' training corpora, not the corpora. So the *incoherent* flag is tested on the "
        "authors' NPMI (`c_npmi_10_full`: top 10 words, 10-token windows, the whole training corpus), the "
        "value tealeaves computes with `measure=\"npmi\"` against such a reference; the *rare-words* flag "
        f"with English word frequencies from the `wordfreq` package ({r['wordfreq']}; Wikipedia and news "
        "among its sources) in place of the reference's own; the *never-together* flag (pairs that "
        "never co-occur) needs pair counts the study does not carry and is not tested here.",
        "",
        "## incoherent: NPMI below a cut",
        "",
        f"Calibration: {r['calibration_topics']} topics (half of each corpus × model, at random, seed 0); "
        f"the cut with the largest F1 for rating-junk there is **NPMI < {cut:g}** "
        f"(`tealeaves.diagnostics.flags.THRESHOLDS[\"incoherent\"]`). "
        f"With the halves swapped the cut would be {r['chosen']['incoherent_swapped_halves']:g}. "
        f"Precision and recall on the other {r['test_topics']} topics, with 95% Wilson intervals:",
        "",
        "| junk by | precision [95%] | recall [95%] | counts |",
        "|---|---|---|---|",
    ]
    for d in ("rating", "intrusion", "either"):
        lines.append(f"| {d} (test half) | {_pr(inc[d]['test'])} |")
    lines.append(f"| rating (swapped halves, its own cut) | {_pr(inc['rating']['swapped_test'])} |")
    lines.append(f"| rating (all 300, cut {cut:g}) | {_pr(inc['rating']['all'])} |")
    lines += [
        "",
        f"Over {sp['count']} other random splits the chosen cut has median {sp['cut']['median']:g} "
        f"(5–95%: {sp['cut']['p5']:g} to {sp['cut']['p95']:g}); test precision median "
        f"{sp['precision']['median']:.2f} ({sp['precision']['p5']:.2f}–{sp['precision']['p95']:.2f}), "
        f"recall {sp['recall']['median']:.2f} ({sp['recall']['p5']:.2f}–{sp['recall']['p95']:.2f}).",
        "",
        "Per model (all 300 topics, rating-junk):",
        "",
        "| model | precision [95%] | recall [95%] | counts |",
        "|---|---|---|---|",
        *[f"| {m} | {_pr(s)} |" for m, s in r["by_model"].items()],
        "",
        f"\"NPMI far below 0\" is not what junk looks like here: only {r['npmi_below_zero']['flagged']} of "
        f"300 topics have NPMI < 0 ({r['npmi_below_zero']['hits']} of them junk). Most junk topics are "
        "generic words that co-occur about as often as chance: of the "
        f"{r['generic']['topics']} topics whose top words are mostly common (at least 7 of 10 above one "
        f"per 10,000 tokens), {r['generic']['junk']} are "
        f"junk and the flag catches {r['generic']['junk_flagged_incoherent']} of those. A reference much "
        "smaller than these corpora (say, the model's own training paragraphs) gives NPMI its own scale: "
        "set the cut again with your people's ratings there (`tealeaves metaeval`).",
        "",
        "How precision and recall trade off with the cut (all 300 topics, rating-junk):",
        "",
        "| NPMI < | flagged | junk flagged | precision | recall |",
        "|---|---|---|---|---|",
        *[f"| {c['cut']:g} | {c['flagged']} | {c['hits']} | "
          f"{'–' if c['precision'] is None else format(c['precision'], '.2f')} | {c['recall']:.2f} |"
          for c in r["curve"] if round(c["cut"] * 1000) % 20 == 0],
        "",
        "## rare-words: most top words rare in the reference",
        "",
        f"At least half of the top {r['topn']} words below one per million tokens (Zipf frequency "
        f"{r['rare_zipf']:g}): {r['rare_words']['rating']['flagged']} of the 300 topics, "
        f"{r['rare_words']['rating']['hits']} of them rating-junk (their mean rating "
        f"{r['rare_words_rating']:.2f}; NPMI {', '.join(format(x, 'g') for x in r['rare_words_npmi'])}). "
        "Rare words alone do not make junk: these are specialist vocabularies (fungi, coins, publishing "
        "houses) whose words do co-occur. tealeaves therefore shows *rare-words* as a caution (the topic's "
        "coherence rests on few counts), not as junk; a topic of unrelated rare names, such as one of "
        "package maintainers, is junk because its words never co-occur, which *never-together* and "
        "*incoherent* catch; no such topic is among these 300.",
        "",
        "## How large a reference",
        "",
        "NPMI needs counts: over a small reference most word pairs never meet by chance, and the "
        "epsilon of gensim's formula (which tealeaves follows) scores such a pair far below 0. The flags' "
        "counts over random subsets of the bundled State of the Union training paragraphs, top 10 words "
        "of the bundled models, NPMI under gensim's convention (the default, as `tealeaves diagnostics` "
        "computes it):",
        "",
        "| model | paragraphs | tokens | mean NPMI | incoherent | never-together | rare-words |",
        "|---|---|---|---|---|---|---|",
        *[f"| {name} | {x['documents']:,} | {x['tokens']:,} | {x['mean_npmi']:.3f} | {x['incoherent']} | "
          f"{x['never-together']} | {x['rare-words']} |" for name, rows in r["reference_sizes"].items()
          for x in rows],
        "",
        f"From {r['reference_settled']['settled_tokens']:,} tokens on, every count equals the whole "
        f"reference's; at {r['reference_settled']['unsettled_tokens']:,} it does not. tealeaves computes the "
        f"three flags only over a reference of at least {r['min_reference_tokens']:,} tokens "
        "(`MIN_REFERENCE_TOKENS`) and says so otherwise; topics of rarer words need more.",
        "",
        "## Examples",
        "",
        "| kind | topic | mean rating | NPMI | top words |",
        "|---|---|---|---|---|",
    ]
    names = {"caught": "junk, flagged", "missed": "junk, not flagged", "false": "flagged, rated well",
             "rare": "rare-words"}
    for kind, items in r["examples"].items():
        lines += [f"| {names[kind]} | {e['id']} | {e['rating']:.2f} | {e['npmi']:.3f} | {e['words']} |"
                  for e in items]
    lines.append("")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--splits", type=int, default=200)
    ap.add_argument("--out", default=str(OUT))
    args = ap.parse_args()
    result = run(args.splits)
    with open(args.out, "w", encoding="utf-8") as fh:
        json.dump(result, fh, indent=1)
        fh.write("\n")
    if os.path.abspath(args.out) == str(OUT):
        DOC.write_text(markdown(result), encoding="utf-8")
    print(markdown(result))


if __name__ == "__main__":
    main()
