"""Do the estimators converge to the same value on real text? The bundled `sotu-20-asym` model and
60 held-out State of the Union paragraphs (seed 0), each estimator at growing compute, 3 runs per
document. Also 30 paragraphs cut to their first 8 tokens, where the exact value is computable.

    python experiments/sotu_convergence.py

Writes experiments/results/sotu_convergence.json and docs/sotu_convergence.md.
"""

from __future__ import annotations

import json
import os
import time

import numpy as np

import tealeaves as tl
from tealeaves import datasets

HERE = os.path.dirname(os.path.abspath(__file__))
SETTINGS = [
    ("left-to-right", {"particles": 20, "variant": "algorithm-3"}),
    ("left-to-right", {"particles": 200, "variant": "algorithm-3"}),
    ("left-to-right", {"particles": 2000, "variant": "algorithm-3"}),
    ("left-to-right", {"particles": 200, "variant": "extend-only"}),
    ("left-to-right", {"particles": 20000, "variant": "extend-only"}),
    ("left-to-right", {"particles": 100}),
    ("left-to-right", {"particles": 2000}),
    ("chib", {"chain_length": 400}),
    ("chib", {"chain_length": 4000}),
    ("ais", {"temperatures": 1000}),
    ("ais", {"temperatures": 10000}),
    ("ais", {"temperatures": 50000}),
    ("is-iterated", {"samples": 20000}),
]


def run(model, docs, settings, exact=None):
    rows = []
    for method, params in settings:
        t0 = time.perf_counter()
        r = tl.heldout(model, docs, method=method, runs=3, seed=1, **params)
        row = {
            "method": method,
            "params": params,
            "label": r.label,
            "total": r.total,
            "sd": r.sd,
            "seconds": time.perf_counter() - t0,
        }
        if exact is not None:
            row["vs_exact"] = r.total - exact
        rows.append(row)
        print(
            f"  {r.label:<50} {r.total:12.2f} ± {r.sd:5.2f}"
            + (f"  vs exact {r.total - exact:+.3f}" if exact is not None else ""),
            flush=True,
        )
    return rows


def main() -> None:
    corpus, model = datasets.sotu(), datasets.sotu_model("sotu-20-asym")
    pick = np.sort(np.random.default_rng(0).choice(len(corpus.heldout), 60, replace=False))
    docs = corpus.heldout.subset(pick)
    print(f"60 paragraphs, {docs.num_tokens} tokens")
    full = run(model, docs, SETTINGS)
    short = tl.Corpus.from_word_ids([corpus.heldout[i][:8] for i in pick[:30]], model.vocab)
    exact = tl.heldout(model, short, method="exact", max_states=10**8).total
    print(f"30 paragraphs cut to 8 tokens: exact {exact:.3f}")
    cut = run(model, short, [SETTINGS[2], SETTINGS[6], SETTINGS[8], SETTINGS[10], SETTINGS[12]], exact)
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    with open(os.path.join(HERE, "results", "sotu_convergence.json"), "w") as fh:
        json.dump({"paragraphs": full, "short": {"exact": exact, "rows": cut}}, fh, indent=1)
    lines = [
        "# Estimators on real text (State of the Union, `sotu-20-asym`)",
        "",
        "`python experiments/sotu_convergence.py`: 60 held-out paragraphs "
        f"({docs.num_tokens} tokens), 3 runs per document; total log-likelihood ± bootstrap sd.",
        "",
        "| estimator | total | ± sd | seconds |",
        "|---|---|---|---|",
    ]
    lines += [f"| {r['label']} | {r['total']:.2f} | {r['sd']:.2f} | {r['seconds']:.1f} |" for r in full]
    lines += [
        "",
        f"30 paragraphs cut to their first 8 tokens (exact {exact:.3f}):",
        "",
        "| estimator | total | ± sd | vs exact |",
        "|---|---|---|---|",
    ]
    lines += [f"| {r['label']} | {r['total']:.3f} | {r['sd']:.3f} | {r['vs_exact']:+.3f} |" for r in cut]
    with open(os.path.join(HERE, "..", "docs", "sotu_convergence.md"), "w") as fh:
        fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
