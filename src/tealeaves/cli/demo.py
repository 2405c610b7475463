"""`tealeaves demo`: the whole evaluation on the bundled State of the Union corpus and models.

Held-out likelihood of held-out paragraphs under the 20-topic asymmetric-alpha model by several
estimators (with their spread over runs), the 20- and 50-topic models and symmetric alpha side by
side, Ratio-AIS between asymmetric and symmetric alpha, coherence (UMass and NPMI over the training
paragraphs), diversity, B-Cubed of each paragraph's main topic against the party of its president,
the predictive metrics of Chang et al. and a sample of intrusion tasks. Returns report sections
(see `tealeaves.report`) and prints a summary."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import datasets
from ..clustering import bcubed
from ..coherence import coherence, diversity, exclusivity, topic_words
from ..compare import compare
from ..heldout import heldout
from ..heldout.crosscheck import CHECK_TEMPERATURES, choose, reference
from ..heldout.crosscheck import summarise as check_summary
from ..heldout.exact import DEFAULT_MAX_STATES
from ..intrusion import infer_theta, predictive, topic_tasks, word_tasks

SIZES = {  # held-out paragraphs, runs per estimator, compare temperatures, the reference's size
    "full": {"documents": 1000, "runs": 5, "temperatures": 1000, "coherence_docs": None,
             "check": 40, "check_temperatures": CHECK_TEMPERATURES},
    "quick": {"documents": 24, "runs": 2, "temperatures": 40, "coherence_docs": 2000,
              "check": 6, "check_temperatures": 20_000},
}
METHODS = [
    ("left-to-right", {}),
    ("chib", {"chain_length": 400}),
    ("ais", {"temperatures": 1000}),
    ("is-prior-theta", {"samples": 1000}),
    ("harmonic-mean", {"samples": 1000, "burn_in": 100}),
]


def run_demo(
    quick: bool = False,
    seed: int = 0,
    workers: int = 1,
    progress: bool | None = None,
    say: Callable[[str], None] = print,
) -> list[dict[str, Any]]:
    size = SIZES["quick" if quick else "full"]
    t0 = time.perf_counter()
    corpus = datasets.sotu()
    models = {name: datasets.sotu_model(name) for name in datasets.SOTU_MODELS}
    main = models["sotu-20-asym"]
    rng = np.random.default_rng(seed)
    pick = np.sort(rng.choice(len(corpus.heldout), size["documents"], replace=False))
    docs = corpus.heldout.subset(pick)
    say(
        f"tealeaves demo: {len(corpus.train)} training and {len(corpus.heldout)} held-out paragraphs of "
        f"the State of the Union addresses (1790-2026), {main.num_words} words; {len(docs)} held-out "
        f"paragraphs ({docs.num_tokens} tokens) scored; models {', '.join(models)} (tomotopy, bundled).\n"
    )
    sections: list[dict[str, Any]] = [
        {
            "task": "text",
            "title": "What this demo shows",
            "text": (
                f"{len(docs)} held-out paragraphs from addresses never seen in training, under three LDA "
                "models trained on the rest. Estimators that agree are trustworthy; the harmonic mean and "
                "importance sampling from the prior are the known failures (Wallach et al. 2009)."
            ),
        }
    ]
    common = {"seed": seed, "workers": workers, "progress": progress}
    results = []
    for method, params in METHODS:
        p = dict(params)
        if method == "ais" and quick:
            p["temperatures"] = 200
        results.append(heldout(main, docs, method=method, runs=size["runs"], **common, **p))
    checks = cross_check(main, docs, results, size, seed, workers)
    w = max(len("estimator"), *(len(r.label) for r in results))  # labels whole, columns aligned
    say(f"{'estimator':<{w}} {'total log-lik':>14} {'± sd':>7} {'per token':>10} "
        f"{'vs reference per token [95%]':>32} {'seconds':>8}")
    for r, c in zip(results, checks, strict=True):
        sd = "" if np.isnan(r.sd) else f"{r.sd:7.2f}"
        lo, hi = c["ci95"]
        mark = " !" if c["flagged"] else (" ~" if c.get("reference_weak") else "")
        vs = f"{c['bias_per_token']:+.4f} [{lo:+.4f}, {hi:+.4f}]{mark}"
        say(f"{r.label:<{w}} {r.total:14.2f} {sd:>7} {r.per_token:10.4f} {vs:>32} {r.seconds:8.2f}")
    ref = checks[0]["reference"]
    note = (
        f"Every estimate is checked against a reference on {checks[0]['documents']} random paragraphs "
        f"(AIS with {ref['ais_temperatures']:,} temperatures): '!' marks an estimator whose errors "
        "there are biased or larger than its run-to-run noise explains (check=K in Python, --check K "
        "on the command line); '~' an estimator unbiased for P(w) that sits significantly above the "
        "reference, which convicts the reference (too weak to judge it), not the estimate. Left-to-right "
        "(the default), Chib-style, AIS and importance sampling "
        "are unbiased for P(w), so their logs sit low by a gap that shrinks with compute; the "
        f"harmonic mean is {results[-1].total - results[0].total:+.0f} nats away."
    )
    say(note)
    for r, c in zip(results, checks, strict=True):
        r.extra["check"] = c
    sections.append(
        {
            "command": "heldout",
            "model": main.name,
            "docs": f"{len(docs)} held-out paragraphs",
            "results": [r.to_dict() for r in results],
        }
    )
    sections.append({"task": "text", "title": "How far is each estimator from the truth?", "text": note})
    by_model = [heldout(m, docs, runs=size["runs"], **common) for m in models.values()]
    say("\nleft-to-right (the default) per model:")
    for m, r in zip(models, by_model, strict=True):
        say(f"  {m:<14} total {r.total:10.2f} ± {r.sd:5.2f}   perplexity {r.perplexity:8.1f}")
    sections.append(
        {
            "command": "heldout",
            "model": "three models",
            "docs": f"{len(docs)} held-out paragraphs",
            "results": [{**r.to_dict(), "model": m} for m, r in zip(models, by_model, strict=True)],
        }
    )
    cmp = compare(
        main,
        models["sotu-20-sym"],
        docs,
        temperatures=size["temperatures"],
        start_temperatures=size["temperatures"],
        seed=seed,
        workers=workers,
        progress=progress,
    )
    say(f"\nRatio-AIS, asymmetric vs symmetric alpha: {cmp.verdict()}")
    sections.append(
        {"command": "compare", "model_a": main.name, "model_b": "sotu-20-sym", "result": cmp.to_dict()}
    )
    train = (
        corpus.train if size["coherence_docs"] is None else corpus.train.subset(range(size["coherence_docs"]))
    )
    coh = [coherence(main, train, measure=m) for m in ("umass", "npmi")]
    say(
        f"coherence of {main.name} over {len(train)} training paragraphs: UMass {coh[0].mean:.3f}, "
        f"NPMI {coh[1].mean:.3f}; diversity (top 25) {diversity(main):.3f}"
    )
    sections.append({"command": "coherence", "model": main.name, "results": [c.to_dict() for c in coh]})
    sections.append(
        {"command": "diversity", "model": main.name, "diversity": diversity(main), "topn": 25,
         "exclusivity": [float(v) for v in exclusivity(main)], "words": topic_words(main, 10),
         "per_model": {name: diversity(m) for name, m in models.items()}}
    )
    theta = infer_theta(main, docs, burn_in=50, samples=100, seed=seed, workers=workers)
    party = np.asarray(corpus.parties)[corpus.party["heldout"][pick]]  # gold classes by name
    b3 = bcubed(theta.argmax(axis=1), party)
    say(
        f"B-Cubed of each paragraph's main topic against its president's party: "
        f"precision {b3.precision:.3f}, recall {b3.recall:.3f}, F {b3.f:.3f}"
    )
    sections.append({"command": "bcubed", **b3.to_dict()})
    pred = predictive(main, docs, theta=theta)
    say(
        f"predictive log likelihood per word {pred.log_likelihood:.3f}, predictive rank {pred.rank:.1f} "
        f"of {main.num_words}"
    )
    sections.append(pred.to_dict())
    texts = [corpus.heldout_text[i] for i in pick]
    sample = word_tasks(main, topics=range(5), seed=seed) + topic_tasks(
        main, theta, texts=texts, documents=range(3), seed=seed
    )
    sections.append({"task": "intrusion-tasks", "tasks": [t.public() for t in sample]})
    say(
        f"\nintrusion: {len(sample)} sample tasks in the report (`tealeaves intrusion words|topics` "
        f"makes full sets; `tealeaves annotate serve` collects answers). "
        f"Done in {time.perf_counter() - t0:.0f} s."
    )
    return sections


def cross_check(model, docs, results, size: dict, seed: int, workers: int) -> list[dict[str, Any]]:
    """One reference on `size["check"]` random paragraphs, every estimator's error against it
    (the check of `heldout(..., check=K)`, computed once for all)."""
    t0 = time.perf_counter()
    idx = choose(docs.lengths, size["check"], seed)
    words = [docs[i] for i in idx]

    def estimate(sub, method, runs, **p):
        return heldout(model, sub, method=method, runs=runs, seed=seed + 1, workers=workers, **p)

    ref, ref_var, how, exact = reference(estimate, words, [0] * len(words), model.num_topics,
                                         DEFAULT_MAX_STATES, size["check_temperatures"], model.vocab)
    out = []
    for r in results:
        runs = r.run_log_prob[:, idx]
        noise = runs.var(axis=0, ddof=1) / runs.shape[0] + ref_var
        out.append(check_summary(r.doc_log_prob[idx], ref, docs.lengths[idx], idx, how,
                                 time.perf_counter() - t0, noise, r.unbiased, exact))
    return out
