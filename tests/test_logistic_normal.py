"""Held-out likelihood under a logistic-normal prior (issue 24, point 3): AIS over eta with elliptical
slice sampling, checked against tensor Gauss-Hermite quadrature of the integral (2 and 3 topics, short
documents, both decoders, a singular covariance), for convergence as temperatures grow, for the
kernel's invariant distribution, and on a tomotopy CTM against the variational bound."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import logsumexp

from tealeaves.errors import InvalidCorpusError, InvalidModelError, MethodError
from tealeaves.heldout.logistic_normal import (
    combine_runs,
    logistic_normal_elbo,
    logistic_normal_log_prob,
    prior_factor,
)
from tealeaves.sampling import logistic_normal as kernel
from tealeaves.sampling.rng import child, new_state

# --- an independent reference: the integral by quadrature ---------------------------------------


def nodes(L: np.ndarray, mean: np.ndarray, h: float) -> tuple[np.ndarray, np.ndarray]:
    """A tensor trapezoid grid eta = mean + L x over x ~ N(0, I_r), x in [-12, 12]^r with step h, and
    the log weights (for a smooth, fast-decaying integrand the rule's error falls like exp(-c / h))."""
    x = np.arange(-12.0, 12.0 + h / 2, h)
    grids = np.meshgrid(*[x] * L.shape[1], indexing="ij")
    X = np.stack([g.ravel() for g in grids], axis=1)
    logw = L.shape[1] * np.log(h / np.sqrt(2 * np.pi)) - 0.5 * (X**2).sum(axis=1)
    return mean + X @ L.T, logw


def log_lik(eta: np.ndarray, beta: np.ndarray, doc, decoder: str) -> np.ndarray:
    """log p(doc | eta) for each row of eta, in plain numpy."""
    log_theta = eta - logsumexp(eta, axis=1, keepdims=True)
    if decoder == "mixture":
        return sum(logsumexp(log_theta + np.log(beta[:, w]), axis=1) for w in doc)
    scores = np.exp(log_theta) @ beta
    logp = scores - logsumexp(scores, axis=1, keepdims=True)
    return logp[:, doc].sum(axis=1)


def quadrature(beta, mean, L, doc, decoder, h=0.05, tau=1.0, moments=False):
    """log ∫ p(doc | eta)^tau N(eta) d eta; with `moments`, also the tempered posterior's E[eta] and
    E[eta^2]."""
    eta, logw = nodes(L, mean, h)
    a = logw + tau * log_lik(eta, beta, doc, decoder)
    logz = logsumexp(a)
    if not moments:
        return logz
    p = np.exp(a - logz)
    return logz, p @ eta, p @ eta**2


# --- the cases ------------------------------------------------------------------------------------

RNG = np.random.default_rng(2024)
V = 6
PHI2 = RNG.dirichlet(np.full(V, 0.7), 2)
PHI3 = RNG.dirichlet(np.full(V, 0.7), 3)
B3 = RNG.normal(0, 2.0, size=(3, V))
B2 = RNG.normal(0, 2.0, size=(2, V))
FULL2 = (np.array([0.4, -0.3]), np.array([[1.0, 0.6], [0.6, 1.5]]))
# Blei & Lafferty's CTM with 3 topics: eta_3 = 0, a 2-d Gaussian padded with a zero row and column
SMALL = np.array([[1.2, -0.7], [-0.7, 0.9]])
DEGENERATE3 = (np.array([0.5, -0.4, 0.0]), np.pad(SMALL, ((0, 1), (0, 1))))
DEGENERATE2 = (np.array([-0.2, 0.0]), np.array([[2.0, 0.0], [0.0, 0.0]]))

CASES = {  # name: beta, decoder, (mean, cov), given as a factor?, documents
    "T2-full-mixture": (PHI2, "mixture", FULL2, False, [[0, 1, 1], [2, 5, 3, 0]]),
    "T2-degenerate-poe-factor": (B2, "product-of-experts", DEGENERATE2, True, [[0, 4, 4, 1]]),
    "T3-degenerate-mixture": (PHI3, "mixture", DEGENERATE3, False, [[0, 1, 1, 4], [2, 3, 5]]),
    "T3-degenerate-poe": (B3, "product-of-experts", DEGENERATE3, False, [[1, 2, 2, 0], [5]]),
    "T3-degenerate-mixture-factor": (PHI3, "mixture", DEGENERATE3, True, [[3, 3, 0, 2, 1]]),
}


def prior_of(case):
    beta, decoder, (mean, cov), as_factor, docs = CASES[case]
    L = np.linalg.cholesky(cov[:-1, :-1]) if as_factor else None
    if as_factor:  # the T - 1 free dimensions, the last row zero
        L = np.vstack([L, np.zeros((1, L.shape[1]))])
    return beta, decoder, mean, cov, L, docs


def estimate(case, temperatures, runs, seed):
    beta, decoder, mean, cov, L, docs = prior_of(case)
    return logistic_normal_log_prob(beta, mean, None if L is not None else cov, docs, factor=L,
                                    decoder=decoder, temperatures=temperatures, runs=runs, seed=seed)


def truths(case):
    beta, decoder, mean, cov, _, docs = prior_of(case)
    _, L = prior_factor(mean, cov)
    return np.array([quadrature(beta, mean, L, doc, decoder) for doc in docs])


@pytest.mark.parametrize("case", CASES)
def test_quadrature_reference_has_converged(case):
    """The reference itself: steps 0.1 and 0.05 (the one used) agree to 1e-8; the rule's error shrinks
    like exp(-c / h), so at 0.05 it is far smaller still."""
    beta, decoder, mean, cov, _, docs = prior_of(case)
    _, L = prior_factor(mean, cov)
    for doc in docs:
        assert quadrature(beta, mean, L, doc, decoder) == pytest.approx(
            quadrature(beta, mean, L, doc, decoder, h=0.1), abs=1e-8)


def test_singular_covariance_keeps_its_rank():
    """A CTM's padded covariance gives a T x (T - 1) factor that reproduces it."""
    mean, cov = DEGENERATE3
    _, L = prior_factor(mean, cov)
    assert L.shape == (3, 2) and np.allclose(L @ L.T, cov)


@pytest.mark.parametrize("case", CASES)
def test_unbiased_in_probability(case):
    """exp(estimate - truth) averages to 1 within 4 standard errors, with few temperatures (10) so the
    weights vary: the log estimates are visibly low on average (Jensen), their exp is not."""
    truth = truths(case)
    runs = 4000
    est = estimate(case, temperatures=10, runs=runs, seed=7)
    ratio = np.exp(est - truth)
    se = ratio.std(axis=0, ddof=1) / np.sqrt(runs)
    assert (np.abs(ratio.mean(axis=0) - 1) < 4 * se).all(), (ratio.mean(axis=0), se)
    assert (se < 0.05).all()  # the check is decisive: a bias of 20% would be 4 SE


@pytest.mark.parametrize("case", ["T3-degenerate-mixture", "T3-degenerate-poe"])
def test_error_shrinks_at_the_monte_carlo_rate(case):
    """The root mean square error of the log estimate at 10, 100 and 1000 temperatures: each tenfold
    increase divides it by at least sqrt(10) / 2 (the Monte Carlo rate, with room for the noise in a
    root mean square over 300 runs)."""
    truth = truths(case)
    rmse = [np.sqrt(((estimate(case, S, 300, seed=3) - truth) ** 2).mean()) for S in (10, 100, 1000)]
    for a, b in zip(rmse, rmse[1:], strict=False):
        assert b < a * 2 / np.sqrt(10), rmse


@pytest.mark.parametrize(("case", "tau"), [("T3-degenerate-mixture", 1.0), ("T3-degenerate-poe", 1.0),
                                           ("T2-full-mixture", 0.3)])
def test_slice_sampler_leaves_the_tempered_posterior_invariant(case, tau):
    """A long ESS chain at temperature tau: its mean of eta and eta^2 against quadrature of the tempered
    posterior N(eta) p(w | eta)^tau, within 4 batch-means standard errors."""
    beta, decoder, mean, cov, _, docs = prior_of(case)
    doc = np.asarray(docs[0])
    _, L = prior_factor(mean, cov)
    _, m1, m2 = quadrature(beta, mean, L, doc, decoder, tau=tau, moments=True)
    ids, counts = np.unique(doc, return_counts=True)
    code = kernel.PRODUCT if decoder == "product-of-experts" else kernel.MIXTURE
    words = np.ascontiguousarray(beta.T)
    state = np.array([1, 2, 3, 4], dtype=np.uint64)
    chain = kernel.ess_chain(mean, L, code, np.ascontiguousarray(beta[:, ids].T), counts.astype(float),
                             float(doc.size), words, tau, 200_000, state)
    for values, want in ((chain, m1), (chain**2, m2)):
        batches = values.reshape(100, -1, values.shape[1]).mean(axis=1)
        se = batches.std(axis=0, ddof=1) / 10
        free = se > 0  # the pinned coordinate (eta_3 = 0) has no spread
        got = values.mean(axis=0)
        assert (np.abs(got - want)[free] < 4 * se[free]).all(), (got, want, se)
        assert np.allclose(values.mean(axis=0)[~free], want[~free])


def test_runs_depend_only_on_seed_document_and_run():
    a = estimate("T3-degenerate-mixture", 20, 3, seed=5)
    b = logistic_normal_log_prob(PHI3, *DEGENERATE3, [[2, 3, 5]], temperatures=20, runs=3, seed=5)
    assert not np.array_equal(a[:, 1], b[:, 0])  # a different document index, a different stream
    c = logistic_normal_log_prob(PHI3, *DEGENERATE3, [[0, 1, 1, 4]], temperatures=20, runs=3, seed=5)
    assert np.array_equal(a[:, 0], c[:, 0])


def test_empty_document_has_probability_one():
    est = logistic_normal_log_prob(PHI3, *DEGENERATE3, [[]], temperatures=5, runs=2)
    assert (est == 0).all()


def test_variational_bound_lies_below_the_truth():
    beta, _, mean, cov, _, docs = prior_of("T2-full-mixture")
    _, L = prior_factor(mean, cov)
    truth = np.array([quadrature(beta, mean, L, doc, "mixture") for doc in docs])
    bound = logistic_normal_elbo(beta, mean, cov, docs)
    assert (bound < truth).all() and (bound > truth - 5).all(), (bound, truth)


# --- building blocks of an AIS started at the Laplace approximation (issue 36, point 2) --------------


def laplace_start(case, doc):
    """The kernel's inputs for one document and its Laplace approximation over x: (mode, K, converged)
    with K K^T = -Hessian at the mode."""
    beta, decoder, mean, cov, _, _ = prior_of(case)
    _, L = prior_factor(mean, cov)
    code = kernel.PRODUCT if decoder == "product-of-experts" else kernel.MIXTURE
    if code == kernel.PRODUCT:
        beta = beta - beta.max(axis=1, keepdims=True)
    ids, counts = np.unique(np.asarray(doc), return_counts=True)
    rows = np.ascontiguousarray(beta[:, ids].T)
    args = (mean, L, code, rows, counts.astype(float), 0, ids.size, float(len(doc)),
            np.ascontiguousarray(beta.T))
    x, K, _, converged = kernel.laplace(*args, np.zeros(L.shape[1]), 200, 1e-9)
    return args, x, K, converged


@pytest.mark.parametrize("decoder", ["mixture", "product-of-experts"])
def test_derivatives_match_finite_differences(decoder):
    """The gradient and Hessian of log p(w | eta) in eta against central differences of the kernel's own
    log-likelihood (which the quadrature tests check)."""
    rng = np.random.default_rng(5)
    T = 4
    beta = rng.dirichlet(np.ones(V), T) if decoder == "mixture" else rng.normal(0, 2, (T, V))
    code = kernel.MIXTURE if decoder == "mixture" else kernel.PRODUCT
    if code == kernel.PRODUCT:
        beta = beta - beta.max(axis=1, keepdims=True)
    ids, counts = np.unique([0, 1, 1, 5, 3, 3, 3], return_counts=True)
    fixed = (code, np.ascontiguousarray(beta[:, ids].T), counts.astype(float), 0, ids.size, 7.0,
             np.ascontiguousarray(beta.T))

    def grad(eta):
        g = np.empty(T)
        kernel.derivatives(eta, *fixed, g, np.empty((T, T)))
        return g

    def value(eta):
        return kernel.log_likelihood(eta, *fixed, np.empty(T))

    eta = rng.normal(size=T)
    g, H = np.empty(T), np.empty((T, T))
    assert kernel.derivatives(eta, *fixed, g, H) == pytest.approx(value(eta), abs=1e-12)
    h = 1e-5
    eye = np.eye(T)
    g_fd = np.array([(value(eta + h * e) - value(eta - h * e)) / (2 * h) for e in eye])
    H_fd = np.array([(grad(eta + h * e) - grad(eta - h * e)) / (2 * h) for e in eye])
    np.testing.assert_allclose(g, g_fd, atol=1e-8)
    np.testing.assert_allclose(H, H_fd, atol=1e-8)


@pytest.mark.parametrize("case", ["T2-full-mixture", "T3-degenerate-mixture", "T3-degenerate-mixture-factor"])
def test_ais_from_the_laplace_start_is_unbiased_in_probability(case):
    """AIS annealed from q = N(mode, (-H)^-1) (`kernel.ais_from`) to the posterior, 10 temperatures: the
    mode is a stationary point (gradient below the tolerance), and exp(estimate - quadrature) averages to
    1 within 4 standard errors for every document, each standard error below 0.01."""
    beta, decoder, mean, cov, _, docs = prior_of(case)
    _, L = prior_factor(mean, cov)
    runs = 2000
    for d, doc in enumerate(docs):
        args, x, K, converged = laplace_start(case, doc)
        assert converged
        scale = np.ascontiguousarray(np.linalg.inv(K).T)  # scale scale^T = (K K^T)^-1
        states = np.array([new_state(child(np.random.SeedSequence(11 + d), r)) for r in range(runs)])
        taus = np.linspace(0.0, 1.0, 11) ** 4
        w = kernel.ais_from(args[0], args[1], x, scale, -float(np.log(np.diag(K)).sum()), *args[2:], taus,
                            states)
        ratio = np.exp(w - quadrature(beta, mean, L, doc, decoder))
        se = ratio.std(ddof=1) / np.sqrt(runs)
        assert abs(ratio.mean() - 1) < 4 * se and se < 0.01, (doc, ratio.mean(), se)


# --- bad input ------------------------------------------------------------------------------------

GOOD = {"beta": PHI3, "mean": DEGENERATE3[0], "cov": DEGENERATE3[1], "docs": [[0, 1]]}


@pytest.mark.parametrize(("change", "error", "words"), [
    ({"beta": PHI3 * 1.1}, InvalidModelError, "sums to"),
    ({"beta": np.vstack([PHI3[:2], -PHI3[2]])}, InvalidModelError, "negative"),
    ({"mean": [0.0, np.nan, 0.0]}, InvalidModelError, "non-finite"),
    ({"cov": np.diag([1.0, -1.0, 0.0])}, InvalidModelError, "positive semi-definite"),
    ({"cov": np.array([[1.0, 0.5, 0], [0.2, 1.0, 0], [0, 0, 0]])}, InvalidModelError, "not symmetric"),
    ({"cov": np.eye(2)}, InvalidModelError, "cov has shape (2, 2), expected 3 x 3"),
    ({"factor": np.eye(3)}, InvalidModelError, "exactly one of cov and factor"),
    ({"docs": [[0, 6]]}, InvalidCorpusError, "document 0 has word id 6"),
    ({"docs": [[0.5]]}, InvalidCorpusError, "integer word ids"),
    ({"beta": np.vstack([np.r_[0, PHI3[0, 1:] / PHI3[0, 1:].sum()]] * 3)}, InvalidCorpusError,
     "probability 0 under every topic"),
    ({"decoder": "softmax"}, MethodError, "unknown decoder 'softmax'"),
    ({"temperatures": 0}, MethodError, "temperatures must be an integer >= 1"),
    ({"runs": 2.5}, MethodError, "runs must be an integer >= 1"),
    ({"schedule": "cosine"}, MethodError, "unknown schedule 'cosine'"),
])
def test_bad_input_is_one_line(change, error, words):
    args = {**GOOD, **change}
    with pytest.raises(error) as e:
        logistic_normal_log_prob(args.pop("beta"), args.pop("mean"), args.pop("cov"), args.pop("docs"),
                                 temperatures=args.pop("temperatures", 5), **args)
    assert words in str(e.value) and "\n" not in str(e.value)


# --- a real model: tomotopy's CTM -----------------------------------------------------------------


def test_tomotopy_ctm_estimate_is_above_its_variational_bound():
    """A CTM trained by tomotopy on 300 SOTU paragraphs: its prior is full rank in T = k dimensions
    (read as N(prior_mean, prior_cov), theta = softmax(eta)); for short held-out paragraphs, two seeds
    agree within 4 SE, and the estimate (log of the mean of 40 runs' P(w)) is nowhere below the CTM
    variational bound beyond 4 SE, and above it in total by more than 4 SE."""
    tp = pytest.importorskip("tomotopy")
    from tealeaves import datasets

    corpus = datasets.sotu()
    train, held = corpus.train, corpus.heldout
    model = tp.CTModel(k=4, seed=3)
    for i in range(300):
        model.add_doc([train.vocab[j] for j in train[i]])
    model.train(40, workers=1)
    k = model.k
    mean, cov = np.array(model.prior_mean), np.array(model.prior_cov).reshape(k, k)
    assert mean.shape == (k,) and np.linalg.matrix_rank(cov) == k
    phi = np.array([model.get_topic_word_dist(t) for t in range(k)], dtype=np.float64)
    phi /= phi.sum(axis=1, keepdims=True)  # float32 rows from tomotopy: sums off by ~1e-7
    index = {w: i for i, w in enumerate(model.used_vocabs)}
    docs = []
    for d in range(len(held)):
        ids = [index[held.vocab[j]] for j in held[d] if held.vocab[j] in index][:12]
        if len(ids) >= 8:
            docs.append(ids)
        if len(docs) == 4:
            break
    runs = 20
    a, b = (logistic_normal_log_prob(phi, mean, cov, docs, temperatures=300, runs=runs, seed=s)
            for s in (1, 2))
    se = np.sqrt(a.var(axis=0, ddof=1) / runs + b.var(axis=0, ddof=1) / runs)
    assert (np.abs(a.mean(axis=0) - b.mean(axis=0)) < 4 * se + 1e-9).all()
    best = combine_runs(np.vstack([a, b]))
    bound = logistic_normal_elbo(phi, mean, cov, docs)
    se_best = se / 2  # the mean of 2 x 20 runs
    assert (best - bound > -4 * se_best).all(), (best, bound, se)  # never below the bound beyond noise
    assert (best - bound).sum() > 4 * np.sqrt((se_best**2).sum()), (best, bound, se)  # and above it in all


def test_heldout_of_a_logistic_normal_model_is_this_estimator():
    """`tl.heldout` on a `Topics` with a logistic-normal prior runs ais over eta: the same numbers as
    `logistic_normal_log_prob` with the same seed; other estimators and options are one-line errors,
    and the cost is checked before the work."""
    import tealeaves as tl
    from tealeaves.topics import Topics

    phi = np.array([[0.5, 0.3, 0.2], [0.1, 0.2, 0.7]])
    t = Topics(name="ln", source="test", vocab=("a", "b", "c"), weights=phi, weights_kind="distributions",
               prior="logistic-normal", mean=np.array([0.2, -0.1]), cov=np.array([[1.0, 0.3], [0.3, 0.5]]),
               decoder="mixture")
    docs = [[0, 1, 2, 2], [1, 1]]
    res = tl.heldout(t, docs, temperatures=30, runs=3, seed=4, bootstrap=0)
    direct = logistic_normal_log_prob(phi, t.mean, t.cov, docs, temperatures=30, runs=3, seed=4)
    np.testing.assert_array_equal(res.run_log_prob, direct)
    assert res.method == "ais" and res.params["prior"] == "logistic-normal" and res.unbiased
    with pytest.raises(MethodError, match="is-pzw integrates over a Dirichlet prior"):
        tl.heldout(t, docs, method="is-pzw")
    with pytest.raises(MethodError, match="particles is not available for a logistic-normal prior"):
        tl.heldout(t, docs, particles=5)
    with pytest.raises(MethodError, match="would take about .* more than max_hours"):
        tl.heldout(t, docs, temperatures=10**7, runs=10**4, max_hours=1e-6)
