"""Run averaging and the bootstrap of section 6.2, checked against closed forms."""

import json
import math

import numpy as np

import tealeaves as tl
from tealeaves.heldout.result import bootstrap_sd, doc_log_mean


def test_documents_are_averaged_in_probability_space():
    runs = np.log(np.array([[1e-3, 2.0], [3e-3, 4.0]]))
    np.testing.assert_allclose(doc_log_mean(runs), np.log([2e-3, 3.0]))


def test_bootstrap_sd_matches_its_exact_distribution():
    """Two runs of one document: a resample is (a,a), (a,b), (b,a) or (b,b), each with
    probability 1/4, so the bootstrap sd has a closed form."""
    a, b = math.log(0.01), math.log(0.05)
    values = np.array([a, math.log((0.01 + 0.05) / 2), math.log((0.01 + 0.05) / 2), b])
    want = values.std()
    got = bootstrap_sd(np.array([[a], [b]]), resamples=20000, seed=0)
    assert abs(got - want) < 4 * want / math.sqrt(2 * 20000)


def test_bootstrap_sd_of_independent_documents_adds_in_quadrature():
    rng = np.random.default_rng(0)
    runs = rng.normal(-50, 1.0, size=(10, 3))
    one = [bootstrap_sd(runs[:, [d]], 4000, d) for d in range(3)]
    total = bootstrap_sd(runs, 4000, 7)
    assert abs(total - math.sqrt(sum(s * s for s in one))) < 0.1 * total


def test_single_run_has_no_bootstrap_sd_and_json_is_clean():
    model = tl.synthetic.random_model(3, 20, seed=0)
    docs = tl.synthetic.generate(model, 3, [4, 0, 6], seed=1)
    res = tl.heldout(model, docs, method="exact")
    assert math.isnan(res.sd)
    d = json.loads(json.dumps(res.to_dict(), allow_nan=False))
    assert d["sd"] is None and d["tokens"] == 10 and d["empty_documents"] == 1
    assert d["documents"]["log_prob"][1] == 0.0
    assert res.perplexity == math.exp(-res.total / 10)
