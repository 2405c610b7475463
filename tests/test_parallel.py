"""Same seed, same numbers, whatever the number of worker processes."""

import numpy as np
import pytest

import tealeaves as tl


@pytest.mark.parametrize("method,params", [
    ("left-to-right", {"particles": 3}),
    ("ais", {"temperatures": 50}),
    ("is-prior-theta", {"samples": 20}),
    ("chib", {"chain_length": 10}),
])
def test_workers_do_not_change_results(method, params):
    model = tl.synthetic.random_model(8, 100, seed=1)
    docs = tl.synthetic.generate(model, 7, [5, 30, 0, 12, 40, 3, 25], seed=2)
    one = tl.heldout(model, docs, method=method, runs=2, seed=42, workers=1, **params)
    two = tl.heldout(model, docs, method=method, runs=2, seed=42, workers=2, **params)
    np.testing.assert_array_equal(one.run_log_prob, two.run_log_prob)
    assert one.sd == two.sd
    other = tl.heldout(model, docs, method=method, runs=2, seed=43, workers=1, **params)
    assert not np.array_equal(one.run_log_prob[:, 1], other.run_log_prob[:, 1])


def test_document_results_do_not_depend_on_other_documents():
    model = tl.synthetic.random_model(5, 50, seed=3)
    docs = tl.synthetic.generate(model, 4, 20, seed=4)
    full = tl.heldout(model, docs, method="left-to-right", particles=2, seed=7)
    again = tl.heldout(model, docs.subset([0, 1, 2, 3]), method="left-to-right", particles=2, seed=7)
    np.testing.assert_array_equal(full.doc_log_prob, again.doc_log_prob)
