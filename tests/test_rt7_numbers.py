"""Red team 7, impossible numbers: a valid model with a subnormal probability (phi = 1e-320) made
every prepared row +inf (1 / 1e-320 overflows), so `heldout` printed a log-likelihood of +inf,
perplexity 0, and `evaluate` ranked that model best; a `--keep` part forged to hold inf was taken
on resume; and the report could not draw evaluate's own JSON holding "Infinity" and null intervals.
Now rows are scaled by division where the inverse overflows (`sampling.prepare`), every
`HeldoutResult` built checks that each estimate is finite and at most 0 (`impossible_log_prob`),
and kept values are held to the same."""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pytest
from clirun import one_line_error, run_cli

import tealeaves as tl
from tealeaves.cli.tools import example_paths
from tealeaves.files import kept as kept_module
from tealeaves.heldout.result import HeldoutResult
from tealeaves.report import recommend
from tealeaves.sampling.prepare import prepare_doc

P = 1e-320  # subnormal: 1 / P overflows to inf


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """A valid LDA whose word w00 has probability 1e-320 in every topic, and 'w00 w00 w00 / w00 w00':
    then P(w_d) = p^N_d exactly (the same probability under every topic), p = phi[:, 0]."""
    d = tmp_path_factory.mktemp("rt7")
    vocab = [f"w{i:02d}" for i in range(30)]
    m = tl.synthetic.random_model(4, 30, beta=0.5, seed=1)
    phi = np.array(m.phi)
    phi[:, 0] = 0.0
    phi /= phi.sum(axis=1, keepdims=True)
    phi[:, 0] = P  # every row still sums to 1 (1 + 1e-320 is 1), p the same in every topic
    tl.save_model(tl.TopicModel(phi, m.alpha, vocab=vocab), d / "tiny.npz")
    (d / "d.txt").write_text("w00 w00 w00\nw00 w00\n")
    return d, float(tl.load_model(d / "tiny.npz").phi[0, 0])


def test_prepared_rows_of_a_subnormal_word_are_finite(tiny):
    _, p = tiny
    phi_wt = np.full((2, 3), p)
    doc = prepare_doc(phi_wt, np.ones(3), np.array([0, 0]))
    assert np.array_equal(doc.rows, np.ones((2, 3)))
    assert doc.log_scale == pytest.approx(2 * math.log(p), rel=1e-12)


@pytest.mark.parametrize("method", ["left-to-right", "exact"])
def test_subnormal_probabilities_give_the_exact_log_likelihood(tiny, method):
    d, p = tiny
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # none may be raised on the way
        m = tl.load_model(d / "tiny.npz")
        r = tl.heldout(m, tl.read_corpus(d / "d.txt", m.vocab), method=method, runs=1,
                       **({"particles": 5} if method == "left-to-right" else {}))
    assert r.doc_log_prob == pytest.approx([3 * math.log(p), 2 * math.log(p)], rel=1e-9)
    assert r.perplexity == math.inf  # exp(736.8) is past the largest float: +inf, not an OverflowError


def test_cli_heldout_prints_the_finite_total_and_no_warning(tiny):
    d, p = tiny
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        code, out, err = run_cli(["heldout", d / "tiny.npz", d / "d.txt", "--particles", 5, "--runs", 1,
                                  "--quiet"])
    assert code == 0, err
    assert f"{5 * math.log(p):.2f}" in out and " inf " in out  # the total; the perplexity
    assert "Warning" not in err and not [w for w in caught if issubclass(w.category, RuntimeWarning)]


def test_evaluate_ranks_the_subnormal_model_last(tiny, tmp_path):
    d, _ = tiny
    other = tl.synthetic.random_model(4, 30, beta=0.5, seed=2)
    vocab = [f"w{i:02d}" for i in range(30)]
    tl.save_model(tl.TopicModel(other.phi, other.alpha, vocab=vocab), tmp_path / "m.npz")
    code, _, err = run_cli(["evaluate", d / "tiny.npz", tmp_path / "m.npz", "--heldout", d / "d.txt",
                            "--particles", 5, "--runs", 1, "--quiet", "--json", tmp_path / "e.json"])
    assert code == 0, err
    e = json.loads((tmp_path / "e.json").read_text())
    assert e["groups"][0] == ["m.npz"]
    row = next(r for r in e["rows"] if r["model"] == "tiny.npz")
    assert row["per_token"] < -700 and row["perplexity"] == "Infinity"
    assert tl.report.write_report([tmp_path / "e.json"], tmp_path / "r.html") is None  # it draws "Infinity"


def _result(values) -> HeldoutResult:
    values = np.asarray(values, dtype=float)
    return HeldoutResult(method="left-to-right", params={"particles": 5}, run_log_prob=values,
                         doc_tokens=np.full(values.shape[1], 3), seconds=0.0, seed=0, workers=1, corpus={})


@pytest.mark.parametrize("bad", [math.inf, math.nan, -math.inf, 0.5])
def test_a_result_with_an_impossible_estimate_is_refused_naming_documents_and_method(bad):
    assert _result([[-3.0, 0.0, -2.0]]).total == -5.0  # 0 (P = 1) is possible
    with pytest.raises(tl.MethodError, match=r"left-to-right\(particles=5\): its estimate of log P\(w\) "
                                             r"for document 1 \(of 3, counting from 0\)"):
        _result([[-3.0, bad, -2.0], [-3.0, -1.0, -2.0]])


def test_a_kept_part_forged_to_infinity_is_refused(tmp_path):
    model, docs = example_paths()
    keep = tmp_path / "kp"
    m = tl.load_model(model)
    first = tl.heldout(m, tl.read_corpus(docs, m.vocab), particles=5, runs=1, keep=keep)
    for part in keep.glob("part-*.json"):  # the value changed, its checksum recomputed
        doc = json.loads(part.read_text())
        key = next(iter(doc["items"]))
        doc["items"][key]["values"][0] = "inf"
        doc["sha256"] = kept_module.digest(doc["items"])
        part.write_text(json.dumps(doc))
    assert math.isfinite(first.total)
    one_line_error(["heldout", model, docs, "--particles", 5, "--runs", 1, "--quiet", "--keep", keep],
                   "damaged or not this run's", "not a value this run gives")


def test_the_recommendation_states_an_infinite_difference_and_an_unavailable_interval():
    doc = {"rows": [{"model": "a", "per_token": math.inf}, {"model": "b", "per_token": -20.0}],
           "groups": [["a", "b"]],
           "comparisons": [{"a": "a", "b": "b", "per_token": math.inf, "per_token_interval": [None, None],
                            "verdict": "not separated"}]}
    _, reasons = recommend.evaluate(doc)
    assert "a − b: +inf nats per token, 95% interval unavailable: not separated." in reasons
