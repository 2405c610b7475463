"""What the libraries' own "perplexity" numbers compute, next to log P(w) as tealeaves estimates it,
on one model per library trained on the same documents (issue 14).

Training: 4,000 State of the Union training paragraphs (the bundled 3,000-word vocabulary), 20
topics, with gensim (online variational Bayes), scikit-learn (batch variational Bayes) and
tomotopy (collapsed Gibbs sampling). Held out: 300 paragraphs from held-out addresses. For each
library: its own number, and tealeaves' estimate of log P(w) per token for the same model and
documents (left-to-right SMC with 100 particles, the default). For MALLET (Java, not run here),
what its `evaluate-topics` computes by default, left-to-right with 10 particles that only extend,
is tealeaves' `variant="extend-only", particles=10`, shown on the tomotopy model, and measured
against the exact value on the synthetic demo (`tealeaves demo --synthetic`) over 50 seeds.

    python experiments/library_conventions.py [--demo-only]

`--demo-only` recomputes just the cheap synthetic-demo part (seconds) and keeps the saved
library rows (training the three libraries' models takes much longer).

Writes experiments/results/library_conventions.json and docs/perplexity_conventions.md.
"""

from __future__ import annotations

import argparse
import json
import math
import os

import numpy as np

import tealeaves as tl
from tealeaves import datasets

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results", "library_conventions.json")
K = 20
DEMO_SEEDS = range(50)


def mallet_default_on_demo() -> dict:
    """MALLET's default (left-to-right, 10 particles, extend only; one run) minus the exact log P(w)
    of the synthetic demo's documents, under each of DEMO_SEEDS."""
    from tealeaves.cli.tools import example_paths

    model_path, docs_path = example_paths()
    model = tl.load_model(model_path)
    docs = tl.read_corpus(docs_path, vocab=model.vocab)
    exact = tl.heldout(model, docs, method="exact").total
    diffs = np.array([tl.heldout(model, docs, variant="extend-only", particles=10, seed=s).total - exact
                      for s in DEMO_SEEDS])
    return {"documents": len(docs), "tokens": int(docs.num_tokens), "exact_total": exact,
            "seeds": len(diffs), "minus_exact": diffs.tolist(), "mean": float(diffs.mean()),
            "se": float(diffs.std(ddof=1) / math.sqrt(len(diffs))), "min": float(diffs.min()),
            "max": float(diffs.max())}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--demo-only", action="store_true",
                    help="recompute only the synthetic-demo part; keep the saved library rows")
    if ap.parse_args().demo_only:
        with open(RESULTS) as fh:
            rows = json.load(fh)["libraries"]
    else:
        rows = train_and_score()
    save({"libraries": rows, "mallet_default_on_demo": mallet_default_on_demo()})


def save(result: dict) -> None:
    print(json.dumps(result["mallet_default_on_demo"]))
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    with open(RESULTS, "w") as fh:
        json.dump(result, fh, indent=1)
    with open(os.path.join(HERE, "..", "docs", "perplexity_conventions.md"), "w") as fh:
        fh.write(page(result))


def train_and_score() -> list[dict]:
    """One model per library on the same paragraphs: its own number and tealeaves' log P(w)."""
    corpus = datasets.sotu()
    vocab = corpus.train.vocab
    train = [[vocab[i] for i in d] for d in corpus.train.subset(range(4000)) if len(d)]
    held = corpus.heldout.subset(np.random.default_rng(0).choice(len(corpus.heldout), 300, replace=False))
    held_texts = [[vocab[i] for i in d] for d in held]
    rows = []

    def ours(model, name):
        res = tl.heldout(model, held_texts_corpus(model), runs=2, seed=0)
        return {"library": name, "tealeaves_per_token": res.per_token, "tealeaves_perplexity": res.perplexity,
                "tokens": res.tokens}

    def held_texts_corpus(model):
        return tl.Corpus.from_tokens(held_texts, model.vocab)

    # gensim
    from gensim.corpora import Dictionary
    from gensim.models import LdaModel

    dictionary = Dictionary(train)
    bow = [dictionary.doc2bow(d) for d in train]
    lda = LdaModel(bow, id2word=dictionary, num_topics=K, passes=10, random_state=1)
    held_bow = [dictionary.doc2bow(d) for d in held_texts]
    bound = float(lda.log_perplexity(held_bow))
    row = ours(tl.load_model(lda), "gensim")
    row.update({"own": "log_perplexity (per-word bound)", "own_value": bound,
                "own_perplexity_as_logged": 2 ** -bound, "own_perplexity_natural": math.exp(-bound)})
    rows.append(row)

    # scikit-learn
    from sklearn.decomposition import LatentDirichletAllocation
    from sklearn.feature_extraction.text import CountVectorizer

    vec = CountVectorizer(analyzer=lambda d: d)
    X = vec.fit_transform(train)
    sk = LatentDirichletAllocation(n_components=K, learning_method="batch", max_iter=50, random_state=1)
    sk.fit(X)
    pp = float(sk.perplexity(vec.transform(held_texts)))
    row = ours(tl.load_model(sk, vocab=vec), "scikit-learn")
    row.update({"own": "perplexity()", "own_value": pp, "own_per_token": -math.log(pp)})
    rows.append(row)

    # tomotopy
    import tomotopy as tp

    mdl = tp.LDAModel(k=K, seed=1)
    for d in train:
        mdl.add_doc(d)
    mdl.train(500, workers=1)
    model = tl.load_model(mdl)
    known = set(model.vocab)
    docs = [mdl.make_doc([w for w in d if w in known]) for d in held_texts]
    _, ll = mdl.infer(docs, iterations=100, workers=1)
    tokens = sum(len([w for w in d if w in known]) for d in held_texts)
    row = ours(model, "tomotopy")
    row.update({"own": "infer() log-likelihood per token; ll_per_word (training)",
                "own_value": float(np.sum(ll)) / tokens, "train_ll_per_word": float(mdl.ll_per_word),
                "train_perplexity": float(mdl.perplexity)})
    rows.append(row)
    mallet = tl.heldout(model, held_texts_corpus(model), variant="extend-only", particles=10, runs=2, seed=0)
    rows.append({"library": "MALLET (evaluate-topics defaults, reimplemented)",
                 "own": "left-to-right, 10 particles, no resampling", "own_value": mallet.per_token,
                 "tealeaves_per_token": row["tealeaves_per_token"],
                 "tealeaves_perplexity": row["tealeaves_perplexity"], "tokens": mallet.tokens})
    for r in rows:
        print(json.dumps(r))
    return rows


PAGE = """# Why the libraries' perplexities differ from each other and from tealeaves

Every library prints a "perplexity", and on the same documents they differ by a factor of a
hundred: they are not the same quantity. tealeaves estimates the held-out likelihood
log P(w | Phi, alpha m) of each document, the number of Wallach et al. (2009), and perplexity =
exp(-total / tokens). `python experiments/library_conventions.py` trains one 20-topic model with
each library on the same 4,000 State of the Union paragraphs and scores the same 300 held-out
paragraphs ({tokens:,} tokens):

| library | its number | value | as a perplexity | tealeaves log P(w) per token | tealeaves perplexity |
|---|---|---|---|---|---|
{rows}

- **gensim** `LdaModel.log_perplexity(chunk)` returns a per-word *variational bound* (ELBO): it
  puts E_q[log theta] + E_q[log beta] inside the sum over topics (below log P by Jensen), subtracts
  the KL divergence of each document's q(theta), and adds the KL term of the *whole topic-word
  matrix* (the global lambda), unscaled, to the chunk's score before dividing by the chunk's
  words: the smaller the held-out chunk, the lower the number. gensim then logs
  `perplexity = 2^(-bound)` although the bound is in nats.
- **scikit-learn** `LatentDirichletAllocation.perplexity(X)` is exp(-bound / words) with the same
  kind of bound, including the topic-word term for all topics: a statement about the variational
  approximation, not a held-out likelihood.
- **tomotopy** `ll_per_word` and `perplexity` are computed on the *training* documents from the
  sampler's state (the words together with their sampled topic assignments); `infer()` returns a
  log-likelihood per held-out document from its own short Gibbs run, again not log P(w) alone.
- **MALLET** `evaluate-topics` runs left-to-right with 10 particles that only extend
  (`--use-resampling` is off by default): tealeaves' `variant="extend-only", particles=10`. It is
  unbiased only with one particle; here it is close to the unbiased estimate. On the synthetic
  demo ({demo_tokens} tokens, where the exact value is known) one call's total minus the exact
  log P(w) ranged from {demo_min:+.1f} to {demo_max:+.1f} nats over {demo_seeds} seeds (mean
  {demo_mean:+.1f}, standard error {demo_se:.1f}): one call can be off by several nats either way.

So: compare models with one definition, computed the same way for all of them. `tealeaves
evaluate` does this for models from any of these libraries (`tealeaves convert` turns each into
tealeaves' own file format first, if you like).
"""


def page(result: dict) -> str:
    """docs/perplexity_conventions.md from the results."""
    g, s, t, m = result["libraries"]
    demo = result["mallet_default_on_demo"]
    cells = [
        ["gensim", "`log_perplexity` (per-word bound)", f"{g['own_value']:.3f}",
         f"{g['own_perplexity_as_logged']:,.0f} as logged (2^-bound); "
         f"e^-bound = {g['own_perplexity_natural']:,.0f}",
         g],
        ["scikit-learn", "`perplexity()`", f"{s['own_value']:,.0f}",
         f"{s['own_value']:,.0f} (per token {s['own_per_token']:.3f})", s],
        ["tomotopy", "`infer()` log-likelihood per token", f"{t['own_value']:.3f}",
         f"{math.exp(-t['own_value']):,.0f} (training `perplexity`: {t['train_perplexity']:,.0f})", t],
        ["MALLET", "`evaluate-topics` defaults (reimplemented)", f"{m['own_value']:.3f}",
         f"{math.exp(-m['own_value']):,.0f}", m],
    ]
    lines = [f"| {a} | {b} | {c} | {d} | {r['tealeaves_per_token']:.3f} | {r['tealeaves_perplexity']:,.0f} |"
             for a, b, c, d, r in cells]
    return PAGE.format(tokens=g["tokens"], rows="\n".join(lines), demo_tokens=demo["tokens"],
                       demo_min=demo["min"], demo_max=demo["max"], demo_seeds=demo["seeds"],
                       demo_mean=demo["mean"], demo_se=demo["se"])


if __name__ == "__main__":
    main()
