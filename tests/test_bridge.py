"""The bridge estimator (bridge sampling over theta from one Gibbs chain): consistent for log P(w)
against exact values (its error shrinks as samples grow, to within its own standard error), its
single-run error estimate honest (the interval log P-hat +- 1.96 sqrt(V) covers the exact value at
its stated rate, per document and for a call's total), its pieces against independent
computations (the bridge equation, Dirichlet draws, unique rows), its cost linear in the document,
and documents outside what it was measured on scored by left-to-right, which the result says."""

import math

import numpy as np
import pytest
from conftest import random_tiny
from scipy.special import digamma

import tealeaves as tl
from tealeaves.errors import MethodError
from tealeaves.heldout.registry import get_method
from tealeaves.sampling import new_state
from tealeaves.sampling.bridge import _log_theta, relative_error, solve, unique_rows

CASES = range(20)
_exact: dict[int, tuple] = {}


def _case(seed):
    if seed not in _exact:
        model, docs = random_tiny(2000 + seed, N_range=(4, 12))
        _exact[seed] = (model, docs, tl.heldout(model, docs, method="exact").total)
    return _exact[seed]


@pytest.fixture(scope="module")
def runs_at():
    """Errors and error estimates of 100 runs on each of the 20 tiny models at samples = 10 and 160,
    the proposal's components untempered (temper = 1)."""
    out = {}
    for S in (10, 160):
        err, var = [], []
        for seed in CASES:
            model, docs, exact = _case(seed)
            res = tl.heldout(model, docs, method="bridge", samples=S, runs=100, seed=seed, bootstrap=0,
                             temper=1.0)
            err.append(res.run_log_prob[:, 0] - exact)
            var.append(res.run_rel_var[:, 0])
        out[S] = (np.array(err), np.array(var))  # (cases, runs)
    return out


def test_error_shrinks_to_its_own_standard_error_as_samples_grow(runs_at):
    """Consistent: the mean squared error falls about 16-fold from S = 10 to 160 (1/S); at 160 each
    model's mean error over 100 runs is within 4 standard errors of 0 (a bias of order 1/S is far
    below that)."""
    small, large = runs_at[10][0], runs_at[160][0]
    assert (large**2).mean() < (small**2).mean() / 6
    se = large.std(axis=1, ddof=1) / math.sqrt(large.shape[1])
    assert (np.abs(large.mean(axis=1)) <= 4 * se).all(), (large.mean(axis=1), se)


def test_interval_covers_at_its_stated_rate(runs_at):
    """At S = 160, log P-hat +- 1.96 sqrt(V) covers the exact value in 95% of 2,000 runs (within 4
    binomial standard errors), and V averages to the runs' mean squared error (within 25%)."""
    err, var = runs_at[160]
    z = err / np.sqrt(var)
    covered = float(np.mean(np.abs(z) <= 1.96))
    assert abs(covered - 0.95) <= 4 * math.sqrt(0.95 * 0.05 / z.size), covered
    ratio = float((err**2).mean() / var.mean())
    assert 0.8 < ratio < 1.25, ratio


def test_interval_of_a_calls_total_covers_at_its_stated_rate():
    """A call on 12 documents (4 to 12 tokens, one 4-topic model): its total's interval from the
    documents' V covers the exact total in 95% of 400 runs (within 4 binomial standard errors)."""
    model = tl.synthetic.random_model(4, 15, beta=0.3, alpha_sum=1.2, alpha_shape="dirichlet", seed=11)
    lengths = np.random.default_rng(11).integers(4, 13, size=12)
    docs = tl.synthetic.generate(model, 12, lengths, seed=12)
    exact = tl.heldout(model, docs, method="exact").total
    res = tl.heldout(model, docs, method="bridge", samples=40, runs=400, seed=13, bootstrap=0)
    z = (res.run_log_prob.sum(axis=1) - exact) / np.sqrt(res.run_rel_var.sum(axis=1))
    covered = float(np.mean(np.abs(z) <= 1.96))
    assert abs(covered - 0.95) <= 4 * math.sqrt(0.95 * 0.05 / z.size), covered


def test_a_tempered_proposal_is_consistent_and_its_interval_covers():
    """temper = 0.25, the default (components Dir(alpha + n / 4), their density evaluated exactly): at
    S = 160 each of the 20 tiny models' mean error over 100 runs is within 4 standard errors of the
    exact value, the interval log P-hat +- 1.96 sqrt(V) covers in 95% of the 2,000 runs (within 4 binomial
    standard errors) and V averages to the mean squared error (within 25%). A wrong proposal density
    (the components' normalisation with lambda left out) biases every run."""
    err, var = [], []
    for seed in CASES:
        model, docs, exact = _case(seed)
        res = tl.heldout(model, docs, method="bridge", samples=160, runs=100, seed=seed, bootstrap=0)
        assert "temper=0.25" in res.label
        err.append(res.run_log_prob[:, 0] - exact)
        var.append(res.run_rel_var[:, 0])
    err, var = np.array(err), np.array(var)
    se = err.std(axis=1, ddof=1) / math.sqrt(err.shape[1])
    assert (np.abs(err.mean(axis=1)) <= 4 * se).all(), (err.mean(axis=1), se)
    covered = float(np.mean(np.abs(err / np.sqrt(var)) <= 1.96))
    assert abs(covered - 0.95) <= 4 * math.sqrt(0.95 * 0.05 / err.size), covered
    assert 0.8 < float((err**2).mean() / var.mean()) < 1.25


def test_solve_is_the_optimal_bridge_of_meng_and_wong():
    """The fixed point r solves mean_2[p / (s1 p + s2 r q)] = r mean_1[q / (s1 p + s2 r q)] (eq. 4.1 of
    Meng & Wong 1996) in ratios l = log p - log q; with p = q (all l = c) it is exactly c."""
    rng = np.random.default_rng(1)
    l1, l2 = rng.normal(3.0, 1.0, 300), rng.normal(2.0, 1.5, 500)
    r = solve(l1, l2)
    s1, s2 = 300 / 800, 500 / 800
    lhs = np.mean(np.exp(l2) / (s1 * np.exp(l2) + s2 * np.exp(r)))
    rhs = np.exp(r) * np.mean(1.0 / (s1 * np.exp(l1) + s2 * np.exp(r)))
    assert lhs == pytest.approx(rhs, rel=1e-9)
    assert solve(np.full(4, -7.5), np.full(9, -7.5)) == pytest.approx(-7.5, abs=1e-12)
    assert relative_error(np.full(4, -7.5), np.full(9, -7.5), -7.5) == pytest.approx(0.0, abs=1e-20)


def test_sides_thousands_of_nats_apart_give_a_finite_answer():
    """A proposal thousands of nats from the posterior (the bridge at 1,000 topics on whole addresses):
    solve and relative_error stay finite (their sums of 1 / (s1 + s2 e^{r - l}) underflowed to 0 and
    raised ZeroDivisionError), the fixed point satisfies the bridge equation (4.1 of Meng & Wong
    1996), checked in logs with numpy's logaddexp (the fixed-point iteration alone oscillates here),
    and the run's own relative error is of order 1: it flags the failure, but saturates there (an sd
    of about a nat) however far off the estimate is."""
    from scipy.special import logsumexp

    rng = np.random.default_rng(2)
    l1, l2 = rng.normal(0.0, 1.0, 200), rng.normal(-2000.0, 30.0, 100)
    r = solve(l1, l2)
    s1, s2 = 200 / 300, 100 / 300
    lhs = logsumexp(-np.logaddexp(math.log(s1), math.log(s2) + r - l2)) - math.log(100)
    rhs = r + logsumexp(-np.logaddexp(math.log(s1) + l1, math.log(s2) + r)) - math.log(200)
    assert math.isfinite(r) and lhs == pytest.approx(rhs, abs=1e-8)
    v = relative_error(l1, l2, r)
    assert math.isfinite(v) and 0.5 < v < 3.0, v


def test_theta_draws_follow_the_dirichlet():
    """Draws of log theta ~ Dir(alpha + counts), tiny shapes included: E[log theta_t] = psi(a_t) -
    psi(sum a) within 5 standard errors, and the normalisation holds."""
    alpha = np.array([0.03, 0.4, 1.0, 2.5, 9.0])
    tops, vals = np.array([1, 4]), np.array([3.0, 12.0])
    a = alpha.copy()
    a[tops] += vals
    state = new_state(np.random.SeedSequence(3))
    shape = alpha.copy()
    out = np.empty((40_000, 5))
    for i in range(out.shape[0]):
        _log_theta(alpha, tops, vals, 0, 2, shape, out[i], state)
    assert np.array_equal(shape, alpha)
    assert np.allclose(np.exp(out).sum(axis=1), 1.0)
    se = out.std(axis=0, ddof=1) / math.sqrt(out.shape[0])
    assert (np.abs(out.mean(axis=0) - (digamma(a) - digamma(a.sum()))) <= 5 * se).all()


def test_unique_rows_group_the_words():
    rows = np.arange(12.0).reshape(6, 2)
    urows, counts = unique_rows(rows, np.array([5, 2, 5, 9, 2, 5]))
    assert np.array_equal(urows, rows[[1, 0, 3]]) and np.array_equal(counts, [2.0, 3.0, 1.0])


def test_same_seed_same_numbers_and_a_new_seed_other_numbers():
    model, docs, _ = _case(3)
    a, b = (tl.heldout(model, docs, method="bridge", samples=20, seed=5) for _ in range(2))
    c = tl.heldout(model, docs, method="bridge", samples=20, seed=6)
    assert a.total == b.total and a.total != c.total


def test_cost_is_linear_in_the_document_and_checked_before_work():
    """Gibbs-site-update equivalents grow linearly in N at fixed T (no N^2 term), and a job past
    max_hours is refused with its estimate before any work."""
    spec = get_method("bridge")
    p = spec.resolve({})
    w = [spec.work(N, p, 50) for N in (1_000, 2_000, 4_000)]
    assert w[2] - w[1] == pytest.approx(2 * (w[1] - w[0]))
    model = tl.synthetic.random_model(5, 50, seed=1)
    doc = tl.Corpus.from_word_ids([np.zeros(20_000, np.int32)] * 40, vocab=model.vocab)
    with pytest.raises(MethodError, match=r"would take about .* Gibbs site updates"):
        tl.heldout(model, doc, method="bridge", max_hours=0.001)


def test_note_gives_the_interval_of_the_total():
    model, docs, _ = _case(4)
    res = tl.heldout(model, docs, method="bridge", samples=30, seed=1)
    ve = res.variance_estimate
    assert ve["kind"] == "bridge" and ve["documents"] == 1
    lo, hi = ve["ci95"]
    assert lo < res.total < hi and hi - lo == pytest.approx(2 * 1.96 * ve["sd_total"])
    assert f"95% interval [{lo:.2f}, {hi:.2f}]" in res.note and not res.unbiased
    assert res.to_dict()["variance_estimate"]["kind"] == "bridge"


def test_more_topics_than_measured_fall_back_to_left_to_right_and_the_result_says_so():
    """At T = 25 > topics_limit (20) every document is scored by left-to-right at its defaults: the
    same numbers as asking for it, labelled as such, and the note and JSON name the fallback; with
    topics_limit raised the bridge scores them."""
    model = tl.synthetic.random_model(25, 60, seed=2)
    docs = tl.synthetic.generate(model, 3, 15, seed=3)
    res = tl.heldout(model, docs, method="bridge", seed=4)
    ltr = tl.heldout(model, docs, method="left-to-right", seed=4)
    assert res.method == "left-to-right" and res.label == ltr.label and res.total == ltr.total
    assert res.extra["fallback"] == {"method": "left-to-right", "from": "bridge", "documents": [0, 1, 2]}
    assert "3 of 3 documents were scored by left-to-right instead of bridge" in res.note
    assert res.to_dict()["fallback"]["from"] == "bridge"
    own = tl.heldout(model, docs, method="bridge", seed=4, topics_limit=25)
    assert own.method == "bridge" and "fallback" not in own.extra


def test_a_fallback_for_some_documents_scores_those_by_the_named_method(monkeypatch):
    """The per-document mechanism (MethodSpec.fallback, registry.for_document): a method whose rule
    sends documents of more than 10 tokens elsewhere keeps its name, and those documents get the
    other method's numbers (the same seeds), listed in the result."""
    from dataclasses import replace

    from tealeaves.heldout import spec as spec_module

    bridge = get_method("bridge")
    monkeypatch.setitem(spec_module._METHODS, "bridge", replace(
        bridge, fallback=lambda N, T, p: "left-to-right" if N > 10 else None))
    model = tl.synthetic.random_model(5, 40, seed=5)
    docs = tl.synthetic.generate(model, 4, [6, 20, 8, 30], seed=6)
    res = tl.heldout(model, docs, method="bridge", seed=7)
    ltr = tl.heldout(model, docs, method="left-to-right", seed=7)
    assert res.method == "bridge" and res.extra["fallback"]["documents"] == [1, 3]
    assert np.array_equal(res.doc_log_prob[[1, 3]], ltr.doc_log_prob[[1, 3]])
    assert not np.isin(res.doc_log_prob[[0, 2]], ltr.doc_log_prob).any()
    assert "2 of 4 documents were scored by left-to-right instead of bridge" in res.note
    ve = res.variance_estimate
    assert ve["documents"] == 2 and ve["ci95"] is None
