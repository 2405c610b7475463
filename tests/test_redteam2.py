"""Red team 2's findings on Topics, the logistic-normal estimators, the tomotopy loaders and
bundled names (issue 24-26 surface): each case reproduces a finding and checks the fix."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from clirun import run_cli

from tealeaves.datasets import sotu_model
from tealeaves.errors import InputFileError, InvalidCorpusError, InvalidModelError, MethodError, TooLargeError
from tealeaves.heldout.logistic_normal import logistic_normal_elbo, logistic_normal_log_prob
from tealeaves.topics import Topics, as_topics, why_not

BETA = np.full((3, 6), 1 / 6)
MEAN, COV = np.zeros(3), np.eye(3)
DOCS = [[0, 1, 2], [3, 3]]


# finding 13: Topics fields
def test_topics_arrays_given_as_lists_are_converted():
    t = Topics("x", "y", vocab=("a", "b"), weights=[[0.5, 0.5]], weights_kind="distributions",
               prior="dirichlet", alpha=[1.0], decoder="mixture", doc_topic=[[1.0]])
    assert isinstance(t.weights, np.ndarray) and isinstance(t.alpha, np.ndarray)
    assert t.weights.dtype == np.float64 and t.doc_topic.shape == (1, 1)
    assert why_not("heldout", t) is None


@pytest.mark.parametrize("weights", [np.array([["a"]]), np.array([[1.0]], dtype=object),
                                     np.array([[1 + 2j]]), [["a"]], np.array([[True]])])
def test_topics_weights_that_are_not_real_numbers_are_refused(weights):
    with pytest.raises(InvalidModelError, match="weights must") as err:
        Topics("x", "y", weights=weights, weights_kind="signed")
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("rows", [[[np.nan, 1.0]], [[-0.5, 1.5]], [[0.5, 0.6]], [[np.inf, 0.0]]])
def test_doc_topic_rows_must_be_proportions(rows):
    with pytest.raises(InvalidModelError, match="document 0's topic proportions are not a distribution"):
        Topics("x", "y", top_words=(("a",), ("b",)), doc_topic=np.array(rows))
    ok = Topics("x", "y", top_words=(("a",), ("b",)), doc_topic=np.array([[0.25, 0.75], [1.0, 0.0]]))
    assert why_not("topic intrusion", ok) is None


def test_empty_top_words_and_names_that_are_not_strings_are_refused():
    with pytest.raises(InvalidModelError, match="0 lists of top words for 0 topics"):
        Topics("x", "y", top_words=())
    with pytest.raises(InvalidModelError, match="topic 1's top words are not a non-empty list"):
        Topics("x", "y", top_words=(("a",), ()))
    with pytest.raises(MethodError, match="Topics name must be a string"):
        Topics(None, "y", top_words=(("a",),))
    with pytest.raises(MethodError, match="Topics source must be a string"):
        Topics("x", None, top_words=(("a",),))


# finding 14
def test_as_topics_refuses_a_string():
    with pytest.raises(MethodError, match="not a string"):
        as_topics("abc")
    with pytest.raises(MethodError, match="topic 0's top words are a string"):
        as_topics(["a b", "c d"])
    assert as_topics([["a", "b"], ("c", "d")]).top_words == (("a", "b"), ("c", "d"))


# finding 15
def test_unknown_metric_raises_for_an_lda_too():
    with pytest.raises(MethodError, match="unknown metric 'nonsense'"):
        why_not("nonsense", sotu_model())
    with pytest.raises(MethodError, match="unknown metric 'nonsense'"):
        why_not("nonsense", Topics.from_lda(sotu_model()))


def test_a_prior_without_a_decoder_is_named():
    t = Topics("x", "y", vocab=("a",), weights=np.ones((1, 1)), weights_kind="distributions",
               prior="dirichlet", alpha=np.ones(1))
    reason = why_not("heldout", t)
    assert "no decoder" in reason and "None" not in reason


@pytest.mark.parametrize("topn", [0, -1, 1.5, True])
def test_ranked_words_topn_is_checked(topn):
    with pytest.raises(MethodError, match="topn must be an integer >= 1"):
        as_topics([["a", "b"]]).ranked_words(topn)


# finding 25
@pytest.mark.parametrize("kw", [{"temperatures": 10**11}, {"runs": 10**12}])
def test_logistic_normal_size_is_checked_before_allocating(kw):
    with pytest.raises(TooLargeError, match="AIS over a logistic-normal prior .* needs about .* GiB"):
        logistic_normal_log_prob(BETA, MEAN, COV, DOCS, **kw)


def test_logistic_normal_time_is_checked_before_running():
    with pytest.raises(MethodError, match="would take about .* more than max_hours=0.001"):
        logistic_normal_log_prob(BETA, MEAN, COV, DOCS, runs=10**6, max_hours=0.001)
    with pytest.raises(MethodError, match="variational bound of 200,000 documents would take about"):
        logistic_normal_elbo(BETA, MEAN, COV, [[0, 1]] * 200_000, max_hours=0.01)


# finding 26
def test_product_of_experts_is_stable_or_refused():
    # rows of one constant give every word 1/6, whatever theta: log P(w) = -N log 6
    est = logistic_normal_log_prob(np.full((3, 6), 1e308), MEAN, COV, DOCS, decoder="product-of-experts",
                                   temperatures=5)
    np.testing.assert_allclose(est, [[-3 * np.log(6), -2 * np.log(6)]], rtol=1e-12)
    beta = np.zeros((3, 6))
    beta[:, 0], beta[:, 1] = 1e308, -1e308
    with pytest.raises(InvalidModelError, match="log-weights span .* overflows float64"):
        logistic_normal_log_prob(beta, MEAN, COV, DOCS, decoder="product-of-experts", temperatures=5)
    beta[:, 0], beta[:, 1] = 1e300, -1e300
    with pytest.raises(InvalidModelError, match="log-weights span 2e\\+300 .* up to 3 tokens"):
        logistic_normal_log_prob(beta, MEAN, COV, DOCS, decoder="product-of-experts", temperatures=5)


# finding 27
@pytest.mark.parametrize("cov, match", [([[1, 5, 0], [0, 1, 0], [0, 0, 1.0]], "cov is not symmetric"),
                                        (-np.eye(3), "not positive semi-definite"),
                                        (np.diag([1.0, 1.0, 0.0]), "must be positive definite")])
def test_elbo_checks_cov_as_the_ais_does(cov, match):
    with pytest.raises(InvalidModelError, match=match):
        logistic_normal_elbo(BETA, MEAN, cov, DOCS)


def test_elbo_zero_probabilities_and_overflow_without_warnings():
    zero = np.full((3, 6), 0.2)
    zero[:, 0] = 0.0
    with pytest.raises(InvalidCorpusError, match="word id 0 has probability 0 under every topic"):
        logistic_normal_elbo(zero, MEAN, COV, DOCS)
    some = BETA.copy()
    some[0] = [0, 0.2, 0.2, 0.2, 0.2, 0.2]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.isfinite(logistic_normal_elbo(some, MEAN, COV, DOCS)).all()
        with pytest.raises(InvalidModelError, match="variational bound of document 0 is nan"):
            logistic_normal_elbo(BETA, MEAN, 1e300 * COV, DOCS)


# finding 28
@pytest.mark.parametrize("seed", [-1, 1.5, "1"])
def test_logistic_normal_seed_is_checked(seed):
    with pytest.raises(MethodError, match="seed must be an integer >= 0"):
        logistic_normal_log_prob(BETA, MEAN, COV, DOCS, seed=seed)


def test_uint64_word_ids_are_not_wrapped():
    with pytest.raises(InvalidCorpusError, match="word id 9223372036854775813, outside"):
        logistic_normal_log_prob(BETA, MEAN, COV, [np.array([2**63 + 5], dtype=np.uint64)])


# finding 30
@pytest.mark.parametrize("timeout", [float("nan"), float("inf"), 0, -1, "5", True])
def test_zoo_timeout_is_checked_as_the_cli_option(tmp_path, timeout):
    pytest.importorskip("tomotopy")
    from tealeaves.io.zoo import zoo_load

    with pytest.raises(MethodError, match="timeout must be a finite number > 0"):
        zoo_load(tmp_path / "hdp.bin", "tomotopy-hdp", timeout=timeout)
    if isinstance(timeout, float | int) and not isinstance(timeout, bool):  # the CLI refuses the same
        code, _, err = run_cli(["diversity", tmp_path / "hdp.bin", "--load-timeout", str(timeout)])
        assert code == 2 and "--load-timeout" in err


# finding 32
@pytest.mark.parametrize("fraction", [0.03, 0.5, 0.99])
def test_truncated_tomotopy_file_is_refused_before_the_child_runs(tmp_path, monkeypatch, fraction):
    tp = pytest.importorskip("tomotopy")
    import tealeaves.io.tomotopy_zoo as tz

    model = tp.HDPModel(initial_k=3, seed=1)
    rng = np.random.default_rng(0)
    for _ in range(40):
        model.add_doc([f"w{i}" for i in rng.integers(0, 30, 20)])
    model.train(5, workers=1)
    path = tmp_path / "hdp.bin"
    model.save(str(path))
    data = path.read_bytes()
    cut = tmp_path / "cut.bin"
    cut.write_bytes(data[:int(len(data) * fraction)])
    monkeypatch.setattr(tz, "load_isolated", lambda *a, **k: pytest.fail("the child ran"))
    with pytest.raises(InputFileError, match="truncated or damaged: the tagged block at byte .* ends past"):
        tz.load_zoo(cut, "tomotopy-hdp")
    tz.check_complete(str(path))  # the whole file passes


# finding 31
@pytest.mark.parametrize("argv", [["coherence", "sotu:sotu-20-asym", "sotu:sotu-20-asym"],
                                  ["bcubed", "sotu:train", "sotu:heldout"]])
def test_bundled_name_where_a_file_is_expected_says_which_names_work(argv):
    code, _, err = run_cli(argv)
    assert code == 2 and err.count("\n") == 1
    assert "no such file; bundled names work only as a model (sotu:sotu-20-asym" in err
    assert "or as a corpus (sotu:train, sotu:heldout)" in err
