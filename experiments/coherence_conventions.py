"""How far gensim's and Palmetto's coherence numbers are from tealeaves' on the bundled corpus, and
why (issue 25).

Reference: the bundled State of the Union training paragraphs; topics: the top 10 words of each
topic of the bundled tomotopy models sotu-20-asym and sotu-50-asym. For each measure (umass,
uci, npmi, c_v at their default windows): every topic scored under `convention="tealeaves"`
(exact window counts) and `convention="gensim"`, the largest per-topic difference and the
difference of the means; and, as a check, the gensim convention against gensim's own
`CoherenceModel` (processes=1), the largest per-topic difference. The cause: each topic word's
window count (window 10 and 110) under gensim's rule against the exact count, the largest
relative undercount. Palmetto (`convention="palmetto"`, all six of its measures): each
measure's mean, the share of its values that are undefined (counted as 0), and the share of the
topics' word pairs whose joint count is below Palmetto's minimum frequency (10 documents, 10 x
window windows), which Palmetto treats as never co-occurring (probability 0).

    python experiments/coherence_conventions.py

Writes experiments/results/coherence_conventions.json.
"""

from __future__ import annotations

import json
import os

import numpy as np

import tealeaves as tl
from tealeaves import datasets
from tealeaves.coherence import DEFAULT_WINDOWS, MEASURES, count, palmetto, topic_words

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results", "coherence_conventions.json")
MODELS = ("sotu-20-asym", "sotu-50-asym")
GENSIM = {"umass": "u_mass", "uci": "c_uci", "npmi": "c_npmi", "c_v": "c_v"}


def gensim_scores(topics, texts, dct, measure: str) -> np.ndarray:
    from gensim.models import CoherenceModel

    if measure == "umass":
        cm = CoherenceModel(topics=topics, corpus=[dct.doc2bow(t) for t in texts], dictionary=dct,
                            coherence="u_mass", topn=len(topics[0]))
    else:
        cm = CoherenceModel(topics=topics, texts=texts, dictionary=dct, coherence=GENSIM[measure],
                            topn=len(topics[0]), processes=1)
    return np.array(cm.get_coherence_per_topic())


def undercount(ref, words: list[str], window: int) -> dict:
    """Each word's window count under gensim's rule against the exact count."""
    exact = count(ref, words, window=window)
    g = count(ref, words, window=window, rule="gensim")
    short = 1 - g.single / np.maximum(exact.single, 1)
    worst = int(np.argmax(short))
    return {"window": window, "words": len(words), "largest_relative_undercount": float(short[worst]),
            "word": words[worst], "exact": int(exact.single[worst]), "gensim": int(g.single[worst]),
            "words_undercounted": int(np.sum(g.single < exact.single))}


def main() -> None:
    from gensim.corpora import Dictionary

    ref = datasets.sotu().train
    texts = [[ref.vocab[i] for i in ref.words[ref.offsets[d] : ref.offsets[d + 1]]] for d in range(len(ref))]
    dct = Dictionary(texts)
    out: dict = {"reference": {"name": "sotu:train", "paragraphs": len(ref), "tokens": int(ref.num_tokens)},
                 "topn": 10, "models": {}}
    for name in MODELS:
        topics = topic_words(datasets.sotu_model(name), 10)
        rows = {}
        for m in MEASURES:
            t = tl.coherence(topics, ref, measure=m).per_topic
            g = tl.coherence(topics, ref, measure=m, convention="gensim").per_topic
            lib = gensim_scores(topics, texts, dct, m)
            rows[m] = {"window": DEFAULT_WINDOWS[m], "tealeaves_mean": float(t.mean()),
                       "gensim_mean": float(g.mean()),
                       "largest_topic_difference": float(np.max(np.abs(t - g))),
                       "gensim_convention_vs_gensim": float(np.max(np.abs(g - lib)))}
            print(name, m, rows[m])
        pal = {}
        for m in palmetto.MEASURES:
            r = tl.coherence(topics, ref, measure=m, convention="palmetto")
            c = count(ref, sorted({w for t in topics for w in t}), window=r.params["window"],
                      rule=palmetto.rule(m))
            idx = c.index()
            low = [c.joint[idx[a], idx[b]] < palmetto.min_frequency(r.params["window"])
                   for t in topics for i, a in enumerate(t) for b in t[:i]]
            pal[m] = {"window": r.params["window"], "mean": r.mean,
                      "undefined_share": sum(r.undefined_pairs) / len(r.pairs),
                      "pairs_below_minimum": float(np.mean(low))}
            print(name, "palmetto", m, pal[m])
        words = sorted({w for t in topics for w in t})
        out["models"][name] = {"topics": len(topics), "measures": rows, "palmetto": pal,
                               "undercount": [undercount(ref, words, w) for w in (10, 110)]}
        print(name, out["models"][name]["undercount"])
    ms = [r for v in out["models"].values() for r in v["measures"].values()]
    out["largest_topic_difference"] = {m: max(v["measures"][m]["largest_topic_difference"]
                                              for v in out["models"].values()) for m in MEASURES}
    out["gensim_agreement"] = max(r["gensim_convention_vs_gensim"] for r in ms)
    os.makedirs(os.path.dirname(RESULTS), exist_ok=True)
    with open(RESULTS, "w", encoding="utf-8") as fh:
        json.dump(out, fh, indent=1)
        fh.write("\n")
    print("wrote", RESULTS)


if __name__ == "__main__":
    main()
