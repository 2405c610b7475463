"""CSL (Bengio, Yao & Cho 2014) on binary RBMs, whose exact likelihood is computable, and on
tiny LDA models with the exact oracle."""

import itertools

import numpy as np
import pytest
from conftest import random_tiny
from scipy.special import logsumexp

import tealeaves as tl
from tealeaves.csl import BinaryRBM, LdaChain, load_digits_binary, train_rbm


def _random_rbm(V, H, scale, seed):
    rng = np.random.default_rng(seed)
    return BinaryRBM(rng.normal(0, scale, (V, H)), rng.normal(0, 1, V), rng.normal(0, 1, H))


def _brute_log_z(rbm):
    """log sum over every (x, h) pair of exp(b.x + c.h + x.W.h), from scratch."""
    V, H = rbm.W.shape
    xs = np.array(list(itertools.product((0.0, 1.0), repeat=V)))
    hs = np.array(list(itertools.product((0.0, 1.0), repeat=H)))
    energy = (xs @ rbm.b)[:, None] + (hs @ rbm.c)[None, :] + xs @ rbm.W @ hs.T
    return float(logsumexp(energy))


@pytest.mark.parametrize("V,H", [(7, 5), (5, 8)])
def test_exact_log_z_matches_brute_force(V, H):
    rbm = _random_rbm(V, H, 1.0, seed=V * H)
    assert rbm.log_z_exact() == pytest.approx(_brute_log_z(rbm), rel=1e-12)
    xs = np.array(list(itertools.product((0.0, 1.0), repeat=V)))
    assert logsumexp(rbm.log_prob_exact(xs)) == pytest.approx(0.0, abs=1e-10)


@pytest.fixture(scope="module")
def digits():
    return load_digits_binary()


def test_ais_log_z_agrees_with_exact(digits):
    train, _ = digits
    rbm = train_rbm(train, 10, epochs=20, seed=3)
    m = train.mean(axis=0).clip(1e-3, 1 - 1e-3)
    est, se = rbm.log_z_ais(np.random.default_rng(0), chains=200, temperatures=3000,
                            base_bias=np.log(m / (1 - m)))
    assert abs(est - rbm.log_z_exact()) <= 4 * se, (est, rbm.log_z_exact(), se)


def test_csl_is_conservative_on_an_rbm(digits):
    """Proposition 2: over independent sample sets, mean CSL estimate <= exact log P(x)."""
    train, test = digits
    rbm = train_rbm(train, 5, epochs=30, seed=0)
    X = test[:40]
    exact = rbm.log_prob_exact(X)
    runs = np.array([tl.csl(rbm, X, samples=50, chains=5, burn_in=20, seed=s).item_log_prob
                     for s in range(30)])
    err = (runs - exact).mean(axis=0)  # per item, averaged over sample sets
    se = (runs - exact).std(axis=0, ddof=1) / np.sqrt(len(runs))
    assert np.all(err <= 4 * se + 1e-9)
    assert err.mean() < 0


def test_csl_converges_with_a_well_mixing_chain(digits):
    """Proposition 1: with weak weights the block Gibbs chain mixes fast, and the error falls
    towards 0 as |S| grows."""
    _, test = digits
    rbm = _random_rbm(64, 5, 0.3, seed=0)
    X = test[:100]
    exact = rbm.log_prob_exact(X)
    errors = [np.abs(tl.csl(rbm, X, samples=S, chains=10, burn_in=20, seed=2).item_log_prob - exact).mean()
              for S in (100, 1000, 10000)]
    assert errors[0] > errors[1] > errors[2] and errors[2] < 0.05, errors


@pytest.fixture(scope="module")
def three_rbms(digits):
    train, test = digits
    rbms = [train_rbm(train, H, epochs=30, seed=0) for H in (1, 4, 12)]
    X = test[:100]
    return rbms, X, [r.log_prob_exact(X).mean() for r in rbms]


def test_biased_csl_overestimates(three_rbms):
    rbms, X, _ = three_rbms
    for rbm in rbms:
        diff = tl.csl(rbm, X, samples=1, chains=10, biased=True, seed=1).item_log_prob - rbm.log_prob_exact(X)
        assert diff.mean() > 4 * diff.std(ddof=1) / np.sqrt(diff.size)


@pytest.mark.parametrize("steps", [1, 30])
def test_biased_csl_orders_rbms_of_different_quality(three_rbms, steps):
    rbms, X, exact = three_rbms
    assert exact[0] < exact[1] < exact[2]  # more hidden units fit better here
    est = [tl.csl(r, X, samples=steps, chains=10, biased=True, seed=5).mean for r in rbms]
    assert est[0] < est[1] < est[2], est


def test_lda_with_exact_prior_draws_is_is_prior_theta():
    """With theta drawn from the prior, CSL is the is-prior-theta importance sampler: the same
    formula on the same thetas, and unbiased for P(w) in probability space."""
    model, docs = random_tiny(3, T_range=(3, 3), N_range=(6, 10))
    chain = LdaChain(model, exact_prior=True)
    res = tl.csl(chain, docs, samples=300, seed=4, return_latents=True)
    thetas = res.extra["latents"]
    w = docs[0]
    want = logsumexp(np.log(thetas @ model.phi[:, w]).sum(axis=1)) - np.log(len(thetas))
    assert res.item_log_prob[0] == pytest.approx(want, rel=1e-12)
    exact = tl.heldout(model, docs, method="exact").total
    runs = np.array([tl.csl(chain, docs, samples=5, seed=s).item_log_prob[0] for s in range(600)])
    ratio = np.exp(runs - exact)
    assert abs(ratio.mean() - 1) <= 4 * ratio.std(ddof=1) / np.sqrt(ratio.size)
    assert runs.mean() < exact  # Jensen: conservative in log space


def _tiny_cases(n):
    """n 3-topic models with one 10-token document each and its exact log P (the issue's setting)."""
    cases = []
    for seed in range(n):
        model, docs = random_tiny(100 + seed, T_range=(3, 3), N_range=(10, 10))
        cases.append((model, docs, tl.heldout(model, docs, method="exact").total))
    return cases


def test_default_lda_chain_converges_to_exact():
    """Proposition 1 with the default chain: the error falls as samples grow, to within 0.05 nats
    per document; the chain's states have the prior as their stationary distribution, so the limit
    is log P(w) itself (the chain before carried z settled 0.10-0.33 nats away)."""
    cases = _tiny_cases(8)
    errors = {S: np.array([tl.csl(m, d, samples=S, seed=1).item_log_prob[0] - e for m, d, e in cases])
              for S in (100, 20000)}
    assert np.abs(errors[20000]).max() < 0.05, errors[20000]
    assert np.abs(errors[20000]).mean() < np.abs(errors[100]).mean()


def test_default_lda_chain_is_conservative_at_small_samples():
    """Proposition 2: over independent sample sets the mean CSL estimate is at most log P(w)."""
    for model, docs, exact in _tiny_cases(3):
        runs = np.array([tl.csl(model, docs, samples=10, chains=2, burn_in=10, seed=s).item_log_prob[0]
                         for s in range(300)]) - exact
        assert runs.mean() <= 3 * runs.std(ddof=1) / np.sqrt(runs.size), runs.mean()


def test_lda_chain_keeps_the_prior_for_any_length():
    """Carrying z makes every step a valid kernel on the joint: theta's long-run mean and variance
    are the prior's, even with long generated documents and one sweep (which mix slowly)."""
    from scipy import stats

    model = tl.synthetic.random_model(3, 30, alpha_sum=2.0, alpha_shape="dirichlet", seed=4)
    a = model.alpha
    mean = a / a.sum()
    var = mean * (1 - mean) / (a.sum() + 1)
    for length, sweeps in ((1, 1), (30, 0), (30, 3)):
        chain = LdaChain(model, doc_length=length, sweeps=sweeps)
        H = chain.sample_latents(np.random.default_rng(0), chains=50, samples=100_000, burn_in=50)
        steps = H.reshape(-1, 50, 3)  # step-major: (steps, chains, topics)
        # 50 independent chains: their time averages of theta and theta^2 are i.i.d., so a t-test
        # on them has the right error rate however slowly each chain mixes
        for stat, want in ((steps, mean), (steps**2, var + mean**2)):
            per_chain = stat.mean(axis=0)
            t = (per_chain.mean(axis=0) - want) / (per_chain.std(axis=0, ddof=1) / np.sqrt(50))
            assert np.all(np.abs(t) < stats.t.ppf(1 - 0.001 / 12, 49)), (length, sweeps, t)


def test_mixing_diagnostic_flags_a_slow_chain_and_not_the_default():
    model, docs, _ = _tiny_cases(1)[0]
    default = tl.csl(model, docs, samples=5000, seed=2)
    assert default.mixing["warning"] is None and default.mixing["ess_median"] > 0.3 * 5000
    slow = tl.csl(LdaChain(model, doc_length=500, sweeps=1), docs, samples=5000, seed=2)
    assert slow.mixing["warning"] and slow.mixing["ess_median"] < 0.1 * 5000
    assert "mixed slowly" in slow.mixing["warning"] and slow.to_dict()["mixing"]["warning"]
    prior = tl.csl(LdaChain(model, exact_prior=True), docs, samples=5000, seed=2)
    assert prior.mixing["ess_median"] > 0.8 * 5000  # independent draws


def test_ess_against_an_ar1_process():
    """ESS of a stationary AR(1) series with coefficient r is n (1 - r) / (1 + r)."""
    from tealeaves.csl.mixing import ess

    rng = np.random.default_rng(5)
    for r in (0.0, 0.5, 0.9):
        x = np.zeros((20000, 8))
        x[0] = rng.normal(size=8) / np.sqrt(1 - r * r)
        for i in range(1, len(x)):
            x[i] = r * x[i - 1] + rng.normal(size=8)
        want = x.size * (1 - r) / (1 + r)
        assert ess(x) == pytest.approx(want, rel=0.15), (r, ess(x), want)
    assert ess(np.ones((100, 4))) == 400


def test_csl_takes_a_topic_model_and_refuses_other_objects():
    model, docs = random_tiny(3, T_range=(3, 3), N_range=(6, 8))
    direct = tl.csl(model, docs, samples=200, seed=3)
    wrapped = tl.csl(LdaChain(model), docs, samples=200, seed=3)
    assert direct.item_log_prob[0] == wrapped.item_log_prob[0]
    assert direct.params["doc_length"] == LdaChain(model).doc_length
    with pytest.raises(tl.MethodError, match="lacks sample_latents"):
        tl.csl(object(), docs)
    with pytest.raises(tl.MethodError, match="doc_length must be an integer >= 1"):
        LdaChain(model, doc_length=0)


def test_csl_counts_chain_steps_and_rejects_bad_parameters(digits):
    _, test = digits
    rbm = _random_rbm(64, 3, 0.1, seed=1)
    res = tl.csl(rbm, test[:5], samples=100, chains=10, burn_in=7, thin=2)
    assert res.chain_steps == 10 * 7 + 100 * 2 and res.item_log_prob.shape == (5,)
    assert tl.csl(rbm, test[:5], samples=3, chains=2, biased=True).chain_steps == 5 * 2 * 3
    with pytest.raises(tl.MethodError, match="samples must be an integer >= 1"):
        tl.csl(rbm, test[:5], samples=0)
