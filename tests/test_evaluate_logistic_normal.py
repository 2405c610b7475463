"""`tl.evaluate` / `tealeaves evaluate` with a logistic-normal model (a real tomotopy CTM) among LDA
models: its held-out column is filled by ais over eta, equal to a separate `tl.heldout` on the same
tokens; the difference method compares it with the LDA models; Ratio-AIS runs only between LDA models."""

from __future__ import annotations

import numpy as np
import pytest

import tealeaves as tl
from tealeaves.corpus import write_text_corpus

tp = pytest.importorskip("tomotopy")
DOCS = 150
SEED = 2


@pytest.fixture(scope="module")
def zoo(tmp_path_factory):
    """Paths of a tomotopy CTM and two tomotopy LDAs (3 topics) trained on a slice of sotu(), and
    a short held-out text."""
    from tealeaves.datasets import sotu

    s = sotu()
    c = s.train
    docs = [[c.vocab[w] for w in c[d]] for d in range(DOCS)]
    d = tmp_path_factory.mktemp("lnzoo")
    paths = {}
    for name, mdl in (("ctm", tp.CTModel(k=3, seed=1)), ("lda", tp.LDAModel(k=3, seed=1)),
                      ("lda2", tp.LDAModel(k=3, seed=5))):
        for words in docs:
            if words:
                mdl.add_doc(words)
        mdl.train(30, workers=1)
        paths[name] = d / f"{name}.bin"
        mdl.save(str(paths[name]))
    held = s.heldout.subset(range(4))
    write_text_corpus(held, d / "heldout.txt")
    return paths, d / "heldout.txt"


def _common_docs(models, path):
    """The held-out text on the first model's ids, keeping the words every model knows (made here,
    not by evaluate)."""
    shared = set(models[0].vocab).intersection(*[m.vocab for m in models[1:]])
    index = {w: i for i, w in enumerate(models[0].vocab)}
    lines = path.read_text(encoding="utf-8").splitlines()
    return [[index[w] for w in line.split() if w in shared] for line in lines]


def test_a_ctm_gets_its_own_heldout_estimate_and_is_compared_by_difference(zoo):
    paths, held = zoo
    res = tl.evaluate([paths["lda"], paths["ctm"]], heldout=held, runs=2, seed=SEED, particles=10,
                      names=["lda", "ctm"])
    lda_row, ctm_row = res.rows
    assert ctm_row["heldout"].startswith("ais") and "heldout" not in ctm_row.get("not_applicable", {})
    assert "predictive" in ctm_row["not_applicable"]
    ctm = tl.load_topics(paths["ctm"])
    lda = tl.load_topics(paths["lda"])
    alone = tl.heldout(ctm, _common_docs([ctm, lda.lda], held), method="ais", runs=2, seed=SEED)
    assert ctm_row["total"] == pytest.approx(alone.total, rel=1e-12)
    assert ctm_row["tokens"] == lda_row["tokens"] == alone.tokens
    (pair,) = res.comparisons
    assert pair["method"] == "difference" and "two LDA models only" in pair["method_reason"]
    assert pair["per_token"] == pytest.approx(lda_row["per_token"] - ctm_row["per_token"], rel=1e-9)
    assert np.isfinite(ctm_row["per_token"]) and ctm_row["per_token"] < 0
    text = res.summary()
    assert "ctm: held-out: its own estimator, ais over eta" in text
    assert "Ratio-AIS only between LDA models" in text
    assert sum(len(g) for g in res.groups) == 2


def test_ratio_ais_runs_between_the_lda_models_only(zoo):
    paths, held = zoo
    res = tl.evaluate([paths["lda"], paths["lda2"], paths["ctm"]], heldout=held, runs=1, seed=SEED,
                      particles=5, names=["lda", "lda2", "ctm"], compare_models="ratio-ais",
                      )
    methods = {(c["a"], c["b"]): c["method"] for c in res.comparisons}
    assert methods[("lda", "lda2")] != "difference"
    assert methods[("lda", "ctm")] == methods[("lda2", "ctm")] == "difference"
    assert res.rows[2]["heldout"].startswith("ais")


def test_the_cli_table_fills_the_ctm_heldout_column(zoo):
    from clirun import run_cli

    paths, held = zoo
    code, out, err = run_cli(["evaluate", paths["lda"], paths["ctm"], "--heldout", held, "--runs", "1",
                              "--particles", "5"])
    assert code == 0, err
    row = next(line for line in out.splitlines() if line.startswith("ctm"))
    assert row.split()[2] != "—" and float(row.split()[2]) < 0
    assert "its own estimator, ais over eta" in out
