"""evaluate shows the uncertainty that decides its ranking (issue 33): each model's held-out
difference from the best with the pair's 95% interval over the documents sampled (and the
estimator's noise), in the table, the JSON and the report's chart; the estimator's own run-to-run
sd stays, by name ("estimator sd"), and is no longer the headline "± sd" nor the chart's bars."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import tealeaves as tl
from tealeaves import datasets
from tealeaves.report import charts, render


@pytest.fixture(scope="module")
def result():
    models = [datasets.sotu_model("sotu-20-asym"), datasets.sotu_model("sotu-50-asym"),
              datasets.sotu_model("sotu-20-sym")]
    docs = datasets.sotu().heldout.subset(range(40))
    return tl.evaluate(models, heldout=docs, particles=10, seed=1)


def _jackknife_t(d, n):
    """The t interval of sum d / sum n with the jackknife variance, written out here."""
    D = d.size
    loo = np.array([(d.sum() - d[i]) / (n.sum() - n[i]) for i in range(D)])
    se = math.sqrt((D - 1) / D * ((loo - loo.mean()) ** 2).sum())
    r = d.sum() / n.sum()
    h = stats.t.ppf(0.975, D - 1) * se
    return r - h, r + h


def test_each_model_carries_its_difference_from_the_best_with_the_paired_interval(result):
    best = result.best[0]
    b = result.heldout[best]
    assert best == max(result.rows, key=lambda r: r["per_token"])["model"]
    for r in result.rows:
        if r["model"] == best:
            assert r["vs_best"] is None
            continue
        h = result.heldout[r["model"]]
        v = r["vs_best"]
        assert v["model"] == best
        assert v["difference"] == pytest.approx(r["per_token"] - b.per_token, abs=1e-12)
        lo, hi = _jackknife_t(h.doc_log_prob - b.doc_log_prob, h.doc_tokens.astype(float))
        assert v["interval"] == pytest.approx([lo, hi], abs=1e-12)
        assert "document sampling" in v["about"]
        # far wider than the estimator's own noise, which the table used to show as "± sd"
        assert hi - lo > 10 * r["per_token_sd"]


def test_the_table_heads_with_the_interval_and_names_the_estimator_sd(result):
    text = result.table()
    head = text.splitlines()[0]
    assert "vs best [95%]" in head and "estimator sd" in head and "± sd" not in head
    best_line = next(line for line in text.splitlines() if line.startswith(result.best[0]))
    assert "(best)" in best_line
    other = next(r for r in result.rows if r["vs_best"])
    v = other["vs_best"]
    assert f"{v['difference']:+.4f} [{v['interval'][0]:+.4f}, {v['interval'][1]:+.4f}]" in text
    assert "decides the ranking" in result.legend()
    frame = result.to_frame()
    assert "per_token_sd" in frame.columns  # still there, by name


def test_the_reports_chart_draws_the_interval_that_ranks_not_the_estimator_sd(result):
    doc = result.to_dict()
    drawn = {c.name: c for c in charts([doc])}
    assert "evaluate-per_token" not in drawn
    c = drawn["evaluate-vs-best"]
    rows = {r["model"]: r for r in doc["rows"]}
    for label, y, lo, hi in zip(c.labels, c.y, c.lo, c.hi, strict=True):
        v = rows[label]["vs_best"]
        if v is None:
            assert y == 0.0 and lo is None and hi is None
        else:
            assert (y, lo, hi) == (v["difference"], *v["interval"])
    html = render([doc])
    assert "vs best [95%]" in html and "estimator sd" in html and "decides the ranking" in html
    # a result saved before vs_best was kept: the report finds it from the comparisons
    for r in doc["rows"]:
        del r["vs_best"]
    again = {c.name: c for c in charts([doc])}["evaluate-vs-best"]
    assert again.lo == c.lo and again.hi == c.hi
