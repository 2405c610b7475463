"""Coherence speed and peak memory against gensim's CoherenceModel (issue 5's benchmark).

Reference: gensim's bundled Lee corpus (`test_data/lee_background.cor`, simple_preprocess),
repeated to about 3 million tokens; 20 topics of 10 words drawn from its frequent words. For
each measure both libraries get the same token lists in one process (gensim with processes=1);
time is wall clock, peak memory is tracemalloc's peak during the call. As gensim's u_mass is
given its bag-of-words corpus built beforehand, tealeaves is given its `Corpus` (word ids) built
beforehand too; the column `from_tokens` times tealeaves from the raw token lists instead.
Our numbers on texts where words repeat inside a window differ from gensim's by design (see
tealeaves.coherence.counts).

    pip install gensim && python benchmarks/coherence_speed.py [--tokens 3000000]
"""

from __future__ import annotations

import argparse
import json
import os
import time
import tracemalloc

import numpy as np

import tealeaves as tl


def measure(fn):
    tracemalloc.start()
    t0 = time.perf_counter()
    out = fn()
    sec = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return out, sec, peak


def main() -> None:
    from gensim.corpora import Dictionary
    from gensim.models import CoherenceModel
    from gensim.test.utils import datapath
    from gensim.utils import simple_preprocess

    ap = argparse.ArgumentParser()
    ap.add_argument("--tokens", type=int, default=3_000_000)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results",
                                                  "coherence_speed.json"))
    args = ap.parse_args()
    with open(datapath("lee_background.cor"), encoding="utf-8") as fh:
        base = [simple_preprocess(line) for line in fh]
    reps = max(1, round(args.tokens / sum(map(len, base))))
    texts = base * reps
    dct = Dictionary(texts)
    rng = np.random.default_rng(0)
    pool = [dct[i] for i, _ in sorted(dct.dfs.items(), key=lambda kv: -kv[1])[20:400]]
    topics = [list(rng.choice(pool, 10, replace=False)) for _ in range(20)]
    tokens = sum(map(len, texts))
    print(f"reference: Lee corpus x {reps} = {len(texts)} documents, {tokens} tokens; 20 topics x 10 words")
    tl.coherence(topics[:1], base[:5], measure="npmi")  # compile the counting kernel
    corpus = [dct.doc2bow(t) for t in texts]
    ids = tl.Corpus.from_word_ids([dct.doc2idx(t) for t in texts], vocab=[dct[i] for i in range(len(dct))])
    tl.coherence(topics[:1], ids, measure="umass")
    rows = []
    for ours, theirs in (("umass", "u_mass"), ("uci", "c_uci"), ("npmi", "c_npmi"), ("c_v", "c_v")):
        r, t_ours, m_ours = measure(lambda o=ours: tl.coherence(topics, ids, measure=o))
        _, t_tok, m_tok = measure(lambda o=ours: tl.coherence(topics, texts, measure=o))
        kw = {"corpus": corpus} if theirs == "u_mass" else {"texts": texts}
        g, t_g, m_g = measure(lambda th=theirs, kw=kw: CoherenceModel(
            topics=topics, dictionary=dct, coherence=th, topn=10, processes=1, **kw).get_coherence())
        rows.append({"measure": ours, "tealeaves_seconds": t_ours, "gensim_seconds": t_g,
                     "speedup": t_g / t_ours, "tealeaves_peak_mb": m_ours / 2**20,
                     "gensim_peak_mb": m_g / 2**20,
                     "tealeaves_mean": r.mean, "gensim_mean": float(g),
                     "from_tokens_seconds": t_tok, "from_tokens_peak_mb": m_tok / 2**20})
        print(f"{ours:6s} tealeaves {t_ours:7.2f} s {m_ours / 2**20:8.1f} MB | gensim {t_g:7.2f} s "
              f"{m_g / 2**20:8.1f} MB | {t_g / t_ours:6.1f}x faster | means {r.mean:.4f} / {g:.4f} | "
              f"from tokens {t_tok:.2f} s {m_tok / 2**20:.1f} MB", flush=True)
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as fh:
        json.dump({"tokens": tokens, "documents": len(texts), "topics": 20, "topn": 10,
                   "results": rows}, fh, indent=1)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
