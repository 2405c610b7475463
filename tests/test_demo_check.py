"""The demo's cross-check judges like `heldout(check=K)`: an estimator unbiased for P(w) that sits
significantly above an AIS reference convicts the reference (red team 5, F18), not the estimate."""

from types import SimpleNamespace

import numpy as np

import tealeaves as tl
from tealeaves.cli import demo


def test_demo_cross_check_does_not_blame_an_unbiased_estimate_above_the_reference(monkeypatch):
    model = tl.synthetic.random_model(3, 20, seed=1)
    docs = tl.synthetic.generate(model, 12, 15, seed=2)
    truth = np.linspace(-40.0, -30.0, len(docs))
    ais = {"exact": 0, "ais": len(docs), "ais_temperatures": 10}
    # a reference 0.1 nats per token low on every document: the estimates sit above it
    low = (truth - 1.5, np.full(len(docs), 1e-4), ais, np.zeros(len(docs), dtype=bool))
    monkeypatch.setattr(demo, "reference", lambda *a, **k: low)
    monkeypatch.setattr(demo, "choose", lambda lengths, k, seed: np.arange(len(docs)))
    runs = truth + np.random.default_rng(0).normal(0, 0.01, (3, len(docs)))
    make = lambda unbiased: SimpleNamespace(run_log_prob=runs, doc_log_prob=runs.mean(axis=0),  # noqa: E731
                                            unbiased=unbiased)
    size = {"check": len(docs), "check_temperatures": 10}
    fair, biased = demo.cross_check(model, docs, [make(True), make(False)], size, 0, 1)
    assert fair["reference_weak"] and not fair["flagged"]
    assert biased["flagged"] and not biased["reference_weak"]
