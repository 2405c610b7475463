"""Comparison intervals (issue 21 point 4): per-document intervals of `method="difference"` from
the runs' spread, a per-token interval whose coverage of the population difference holds with
few documents, and every output saying what its interval is about."""

import json
import math
from pathlib import Path

import numpy as np
import pytest

import tealeaves as tl
from tealeaves.cli import main
from tealeaves.cli.compare import format_compare
from tealeaves.compare import intervals as iv
from tealeaves.compare.result import CompareResult
from tealeaves.report import render

ROOT = Path(__file__).resolve().parent.parent


def _population(size: int = 4000, seed: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """A population of (log ratio, tokens) pairs: log-normal lengths, per-token effects that
    differ between documents, and right-skewed noise."""
    rng = np.random.default_rng(seed)
    n = np.clip(np.round(rng.lognormal(2.5, 0.6, size)), 2, 200)
    d = n * rng.normal(-0.02, 0.05, size) + np.sqrt(n) * (rng.gamma(2.0, 0.5, size) - 1.0)
    return d, n


def _coverage(interval, size: int, reps: int, seed: int) -> float:
    d, n = _population()
    mu = d.sum() / n.sum()  # the population per-token difference, exactly
    rng = np.random.default_rng(seed)
    hits = 0
    for _ in range(reps):
        idx = rng.choice(d.size, size, replace=False)
        lo, hi = interval(d[idx], n[idx], rng)
        hits += lo <= mu <= hi
    return hits / reps


def _floor(reps: int) -> float:
    return 0.95 - 3 * math.sqrt(0.95 * 0.05 / reps)


@pytest.mark.parametrize("size", [iv.POPULATION_MIN_DOCUMENTS, 2 * iv.POPULATION_MIN_DOCUMENTS])
def test_population_interval_covers_the_population_difference(size):
    """From the measured minimum number of documents up, the jackknife t interval covers the
    population per-token difference within 3 binomial SE of 0.95 on either side (too narrow and
    too wide both fail)."""
    reps = 1500
    cover = _coverage(lambda d, n, rng: iv.jackknife_t(d, n), size, reps, seed=size)
    assert _floor(reps) <= cover <= 0.95 + 3 * math.sqrt(0.95 * 0.05 / reps), cover


def test_the_previous_bootstrap_under_covers_with_five_documents():
    """The same check fails for the percentile bootstrap over documents at 5 documents: the test
    can tell a bad interval from a good one."""
    reps = 1500
    cover = _coverage(lambda d, n, rng: iv.percentile(d, n, rng, 500), 5, reps, seed=5)
    assert cover < _floor(reps), cover


def _result(d, n, **kw) -> CompareResult:
    return CompareResult("ratio-ais", {}, "a", "b", np.asarray(d, float), np.asarray(n, np.int64), math.nan,
                         0.0, 0, 1, {}, **kw)


def test_population_interval_is_the_jackknife_t_interval_and_warns_below_the_measured_size():
    d, n = _population()
    small = _result(d[:5], n[:5])
    i = small.interval("population")
    assert (i.low, i.high) == pytest.approx(iv.jackknife_t(d[:5], n[:5].astype(float)))
    assert i.scope == "population" and "document sampling" in i.about
    assert i.warning and "only 5 documents" in i.warning
    assert "only 5 documents" in repr(small) and "population" in repr(small)
    big = _result(d[: iv.POPULATION_MIN_DOCUMENTS], n[: iv.POPULATION_MIN_DOCUMENTS])
    assert big.interval("population").warning is None
    one = _result(d[:1], n[:1])
    alone = one.interval("population")
    assert not alone.available and "1 scored document" in alone.reason
    assert one.verdict_interval().scope == "documents"
    with pytest.raises(tl.MethodError, match="scope must be population or documents"):
        small.interval("everything")


def test_ratio_t_by_hand():
    """sum d / sum n +- t_{D-1} * sqrt(sum (d - R n)^2 / (D (D-1))) / mean n, worked by hand."""
    d, n = np.array([1.0, -2.0, 4.0]), np.array([2.0, 4.0, 6.0])
    r = 3 / 12
    # residuals d - R n: 0.5, -3, 2.5
    se = math.sqrt((0.25 + 9 + 6.25) / 6) / 4
    assert iv.ratio_t(d, n) == pytest.approx((r - 4.302652729911275 * se, r + 4.302652729911275 * se))


def test_jackknife_t_by_hand():
    """Leave-one-out ratios 2/10, 5/8, -1/6; se = sqrt((D-1)/D sum (r_(i) - mean)^2); t_2."""
    loo = np.array([2 / 10, 5 / 8, -1 / 6])
    se = math.sqrt(2 / 3 * ((loo - loo.mean()) ** 2).sum())
    got = iv.jackknife_t(np.array([1.0, -2.0, 4.0]), np.array([2.0, 4.0, 6.0]))
    assert got == pytest.approx((0.25 - 4.302652729911275 * se, 0.25 + 4.302652729911275 * se))


@pytest.fixture(scope="module")
def tiny():
    rng = np.random.default_rng(4)
    A = tl.TopicModel(rng.dirichlet(np.full(12, 0.3), 3), np.array([0.2, 0.5, 1.0]),
                      vocab=[f"w{i}" for i in range(12)])
    B = tl.synthetic.perturb_phi(A, 0.4, seed=5).with_params(alpha=np.full(3, 0.4))
    docs = tl.synthetic.generate(A, 40, 8, seed=6)
    exact = [tl.heldout(m, docs, method="exact").doc_log_prob for m in (A, B)]
    exact = exact[0] - exact[1]
    return A, B, docs, exact


def test_difference_gives_per_document_intervals_from_the_runs(tiny):
    """With 3 runs every document's interval has width, covers the exact log ratio (at least
    0.95 - 3 binomial SE of documents), and the JSON holds the same numbers."""
    A, B, docs, exact = tiny
    res = tl.compare(A, B, docs, method="difference", chains=3, particles=5, seed=1, bootstrap=200)
    lo, hi = res.document_intervals()
    assert np.all(hi - lo > 1e-9) and res.document_interval_reason is None
    assert ((lo <= exact) & (exact <= hi)).mean() >= _floor(exact.size)
    d = res.to_dict()
    assert all(b > a for a, b in d["documents"]["interval"])
    assert d["documents"]["interval_unavailable"] is None
    i = res.interval("documents")
    truth = exact.sum() / res.tokens  # the exact per-token difference for these documents
    assert i.available and i.low < truth < i.high and "estimator noise only" in i.about, (i, truth)


def test_difference_with_one_run_says_the_interval_is_unavailable(tiny):
    A, B, docs, _ = tiny
    res = tl.compare(A, B, docs, method="difference", chains=1, particles=5, seed=1, bootstrap=200)
    lo, hi = res.document_intervals()
    assert np.isnan(lo).all() and np.isnan(hi).all()
    d = json.loads(json.dumps(res.to_dict()))
    assert all(pair == [None, None] for pair in d["documents"]["interval"])
    assert "1 run" in d["documents"]["interval_unavailable"]
    assert d["intervals"]["documents"]["low"] is None and "1 run" in d["intervals"]["documents"]["reason"]
    text = format_compare(res, "a.npz", "b.npz")
    assert "per-document intervals unavailable: 1 run" in text
    assert "95% interval (these documents): unavailable (1 run" in text


def test_every_output_says_what_the_interval_is_about(tiny, tmp_path, capsys):
    """Terminal, JSON, repr and report: population vs these documents; the warning below the
    measured number of documents."""
    A, B, docs, _ = tiny
    small = tl.Corpus.from_word_ids([docs[i] for i in range(4)], vocab=A.vocab)
    tl.save_model(A, tmp_path / "a.npz")
    tl.save_model(B, tmp_path / "b.npz")
    lines = [" ".join(A.vocab[w] for w in small[i]) for i in range(4)]
    (tmp_path / "d.txt").write_text("\n".join(lines) + "\n")
    assert main(["compare", str(tmp_path / "a.npz"), str(tmp_path / "b.npz"), str(tmp_path / "d.txt"),
                 "--temperatures", "50", "--chains", "2", "--start-temperatures", "50", "--quiet",
                 "--json", str(tmp_path / "c.json")]) == 0
    out = capsys.readouterr().out
    assert "95% interval (population):" in out and "95% interval (these documents):" in out
    assert "about the population the documents were drawn from" in out and "WARNING: only 4 documents" in out
    d = json.loads((tmp_path / "c.json").read_text())["result"]
    assert d["per_token_interval_scope"] == "population" and "only 4 documents" in d["warning"]
    for scope in ("population", "documents"):
        i = d["intervals"][scope]
        keys = {"low", "high", "scope", "about", "method", "level", "documents", "warning", "reason"}
        assert keys <= set(i)
        assert i["scope"] == scope and i["low"] < i["high"]
    html = render([json.loads((tmp_path / "c.json").read_text())], "t")
    assert "The 95% interval is about the population" in html and "only 4 documents" in html


def test_evaluate_comparisons_say_what_their_interval_is_about(tiny):
    A, B, docs, _ = tiny
    words = [[A.vocab[w] for w in docs[i]] for i in range(6)]
    res = tl.evaluate([A, B.with_params(name="B")], heldout=words, names=["A", "B"], coherence=(),
                      compare_models="difference", runs=2, particles=5, diversity_topn=5)
    c = res.comparisons[0]
    assert c["per_token_interval_scope"] == "population" and "only 6 documents" in c["warning"]
    assert c["intervals"]["documents"]["low"] < c["intervals"]["documents"]["high"]
    assert "about the population" in res.summary() and "WARNING: only 6 documents" in res.summary()


def test_measured_minimum_is_the_one_the_code_warns_below():
    out = json.loads((ROOT / "experiments/results/compare_small_n.json").read_text())
    assert out["minimum_documents"] == iv.POPULATION_MIN_DOCUMENTS
    assert out["chosen"] == "jackknife t"


def test_ratio_ais_with_one_chain_gives_no_interval_about_these_documents(tiny):
    """One chain: no spread between chains, so the per-document intervals and the interval about
    these documents are unavailable (they were zero-width brackets before); the verdict still
    rests on the population interval."""
    A, B, docs, _ = tiny
    res = tl.compare(A, B, docs, temperatures=20, start_temperatures=20, chains=1, seed=0, bootstrap=100)
    lo, hi = res.document_intervals()
    assert np.isnan(lo).all() and "1 chain" in res.document_interval_reason
    assert not res.interval("documents").available and "1 chain" in res.interval("documents").reason
    assert res.verdict_interval().scope == "population" and res.interval("population").available
