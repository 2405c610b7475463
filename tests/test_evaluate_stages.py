"""`evaluate` at scale (issue 22 point 4): seconds per stage in the terminal, JSON and report; the
default comparison is the free difference of held-out estimates, Ratio-AIS only when asked
(`ratio-ais`) or, with `auto`, for the pairs the difference cannot separate, and each comparison
says which method it used and why; the cost estimate is checked against `--max-hours` before
any model is evaluated."""

from __future__ import annotations

import importlib
import json

import pytest

import tealeaves as tl
from tealeaves import datasets
from tealeaves.cli import main
from tealeaves.corpus import write_text_corpus
from tealeaves.errors import MethodError

ev = importlib.import_module("tealeaves.evaluate")  # the module (tl.evaluate is the function)
SEED = 5
FEW = {"particles": 5, "runs": 2}


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("stages")
    c = datasets.sotu()
    good = datasets.sotu_model("sotu-20-asym")
    flat = good.with_params(phi=0.3 * good.phi + 0.7 / good.num_words, name="flattened")  # clearly worse
    tl.save_model(good, d / "good.npz")
    tl.save_model(flat, d / "flat.npz")
    tl.save_model(datasets.sotu_model("sotu-50-asym"), d / "k50.npz")
    write_text_corpus(c.heldout.subset(range(8)), d / "heldout.txt")
    write_text_corpus(c.train.subset(range(100)), d / "ref.txt")
    return d


def test_stage_seconds_in_terminal_json_and_report(files, capsys):
    d = files
    code = main(["evaluate", str(d / "good.npz"), str(d / "k50.npz"), "--heldout", str(d / "heldout.txt"),
                 "--reference", str(d / "ref.txt"), "--particles", "5", "--seed", str(SEED), "--quiet",
                 "--json", str(d / "ev.json"), "--report", str(d / "ev.html")])
    assert code == 0
    out = capsys.readouterr().out
    doc = json.loads((d / "ev.json").read_text())
    stages = doc["stages"]
    assert list(stages) == [*ev.STAGES, "total"]
    for name in ev.STAGES:
        assert stages[name]["wall"] >= 0 and stages[name]["cpu"] >= 0
        assert any(line.split()[:1] == [name] for line in out.splitlines()), name
    for kind in ("wall", "cpu"):
        assert sum(stages[n][kind] for n in ev.STAGES) <= stages["total"][kind] + 1e-6
    assert stages["held-out"]["wall"] > 0 and stages["coherence"]["wall"] > 0  # work was timed
    assert doc["seconds"] == stages["total"]["wall"]
    # every stage after the estimate is estimated; loading (done before it) is not, and says so
    assert set(doc["estimate"]["stages"]) == set(ev.STAGES) - {"loading"} and doc["estimate"]["total"] > 0
    assert next(line for line in out.splitlines() if line.startswith("loading ")).split()[-1] == "-"
    html = (d / "ev.html").read_text()
    assert "Time per stage" in html
    for name in ev.STAGES:
        assert f"<td>{name}</td>" in html


def test_python_result_has_stages_and_progress_goes_to_stderr(files, capsys):
    d = files
    res = tl.evaluate([d / "good.npz"], heldout=d / "heldout.txt", names=["good"], seed=SEED, progress=True,
                      **FEW)
    err = capsys.readouterr().err
    assert "evaluate: stage 2/8 held-out: good (1/1)" in err
    assert "stage" in res.timing() and set(res.stages) == {*ev.STAGES, "total"}
    tl.evaluate([d / "good.npz"], heldout=d / "heldout.txt", seed=SEED, progress=False, **FEW)
    assert "evaluate:" not in capsys.readouterr().err


def test_a_large_estimate_is_shown_before_the_work(files, capsys, monkeypatch):
    d = files
    monkeypatch.setattr(ev.cost, "LARGE_SECONDS", 0.0)  # every estimate counts as large
    tl.evaluate([d / "good.npz"], heldout=d / "heldout.txt", seed=SEED, progress=None, **FEW)
    err = capsys.readouterr().err  # not a terminal: no stage lines, but the estimate
    assert err.startswith("evaluate: estimated ") and "before any work (held-out" in err
    assert "stage 2/8" not in err
    tl.evaluate([d / "good.npz"], heldout=d / "heldout.txt", seed=SEED, progress=False, **FEW)
    assert capsys.readouterr().err == ""


def _no_ratio_ais(*args, **kwargs):
    raise AssertionError("Ratio-AIS ran")


@pytest.mark.parametrize("mode", ["difference", "auto"])
def test_separated_pair_uses_the_difference_only(files, monkeypatch, mode):
    d = files
    monkeypatch.setattr(ev.pairs, "compare", _no_ratio_ais)
    res = tl.evaluate([d / "good.npz", d / "flat.npz"], heldout=d / "heldout.txt", names=["good", "flat"],
                      compare_models=mode,
                      seed=SEED, **FEW)
    (c,) = res.comparisons
    assert c["method"] == "difference"
    assert c["per_token_interval"][0] > 0 and "good is better" in c["verdict"]
    assert "separates the pair" in c["method_reason"]
    assert res.groups == [["good"], ["flat"]]
    assert "difference: the difference of held-out estimates separates the pair" in res.summary()


def test_identical_models_are_never_separated(files, monkeypatch):
    d = files
    paths = [d / "good.npz", d / "good.npz"]
    with monkeypatch.context() as m:
        m.setattr(ev.pairs, "compare", _no_ratio_ais)
        res = tl.evaluate(paths, heldout=d / "heldout.txt", names=["a", "b"], seed=SEED, **FEW)
    (c,) = res.comparisons
    assert c["method"] == "difference" and c["verdict"].startswith("not separated")
    assert "did not separate" in c["method_reason"] and "--compare auto" in c["method_reason"]
    assert res.groups == [["a", "b"]]
    res = tl.evaluate(paths, heldout=d / "heldout.txt", names=["a", "b"], compare_models="auto", seed=SEED,
                      **FEW)
    (c,) = res.comparisons
    assert c["method"] == "ratio-ais" and c["verdict"].startswith("not separated")
    assert "did not separate" in c["method_reason"]
    assert c["difference"]["verdict"].startswith("not separated")
    assert res.groups == [["a", "b"]]


def test_ratio_ais_on_request_and_never_across_topic_counts(files, monkeypatch):
    d = files
    calls = []
    real = ev.pairs.compare
    monkeypatch.setattr(ev.pairs, "compare", lambda *a, **k: calls.append(1) or real(*a, **k))
    res = tl.evaluate([d / "good.npz", d / "flat.npz", d / "k50.npz"], heldout=d / "heldout.txt",
                      names=["good", "flat", "k50"],
                      compare_models="ratio-ais", seed=SEED, **FEW)
    by_pair = {(c["a"], c["b"]): c for c in res.comparisons}
    assert by_pair[("good", "flat")]["method"] == "ratio-ais" and len(calls) == 1
    assert "requested" in by_pair[("good", "flat")]["method_reason"]
    for pair in [("good", "k50"), ("flat", "k50")]:
        assert by_pair[pair]["method"] == "difference"
        assert "number of topics" in by_pair[pair]["method_reason"]


def test_auto_keeps_the_difference_when_ratio_ais_would_pass_max_hours(files, monkeypatch):
    d = files
    monkeypatch.setattr(ev.pairs, "compare", _no_ratio_ais)
    models = [tl.load_model(d / "good.npz"), tl.load_model(d / "good.npz")]
    corpora, _ = ev.common_tokens(models, d / "heldout.txt")
    est = ev.estimate_cost(models, corpora, None,
                           ev.EvaluateOptions.of(coherence=(), particles=5, compare_models="auto"))
    assert est["ratio_ais_up_to"] > 0
    between = (est["total"] + est["ratio_ais_up_to"] / 2) / 3600  # the sure part fits, Ratio-AIS does not
    res = tl.evaluate(models, heldout=d / "heldout.txt", names=["a", "b"], compare_models="auto",
                      max_hours=between, seed=SEED, **FEW)
    (c,) = res.comparisons
    assert c["method"] == "difference" and "past max_hours" in c["method_reason"]


def test_tiny_max_hours_refuses_before_any_model_is_evaluated(files, monkeypatch, capsys):
    d = files

    def never(*args, **kwargs):
        raise AssertionError("a model was evaluated")

    monkeypatch.setattr(ev.rows, "estimate_heldout", never)
    code = main(["evaluate", str(d / "good.npz"), str(d / "k50.npz"), "--heldout", str(d / "heldout.txt"),
                 "--reference", str(d / "ref.txt"), "--max-hours", "1e-9", "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and err.startswith("tealeaves: error: evaluating 2 model(s)")
    assert "held-out" in err and "coherence" in err and "max_hours=1e-09" in err
    with pytest.raises(MethodError, match="more than max_hours"):
        tl.evaluate([d / "good.npz"], heldout=d / "heldout.txt", max_hours=1e-9)
    with pytest.raises(MethodError, match="max_hours must be"):
        tl.evaluate([d / "good.npz"], heldout=d / "heldout.txt", max_hours=0)


def test_estimate_follows_the_estimator_cost_model(files):
    d = files
    models = [tl.load_model(d / "good.npz"), tl.load_model(d / "k50.npz")]
    corpora, _ = ev.common_tokens(models, d / "heldout.txt")
    small = ev.estimate_cost(models, corpora, None, ev.EvaluateOptions.of(coherence=(), particles=5))
    big = ev.estimate_cost(models, corpora, None, ev.EvaluateOptions.of(coherence=(), particles=50))
    assert big["seconds"]["held-out"] == pytest.approx(10 * small["seconds"]["held-out"])
    assert small["seconds"]["coherence"] == 0 and small["ratio_ais_pairs"] == 0


def test_stage_clock_attributes_time_to_the_stage_it_was_spent_in(monkeypatch):
    """A fake clock (wall and CPU) moved by known amounts inside and between stages: each stage gets
    exactly what was spent inside it (summed over its entries), the total everything."""
    import time

    stages_mod = importlib.import_module("tealeaves.util.stages")
    wall, cpu = [100.0], [50.0]
    monkeypatch.setattr(time, "perf_counter", lambda: wall[0])
    monkeypatch.setattr(stages_mod, "cpu_seconds", lambda: cpu[0])

    def spend(w: float, c: float) -> None:
        wall[0] += w
        cpu[0] += c

    clock = stages_mod.Stages(["a", "b"], enabled=False)
    with clock.stage("a"):
        spend(3.0, 5.0)  # two workers: more CPU than wall
    spend(1.0, 1.0)  # between stages: in the total only
    with clock.stage("b"):
        spend(2.0, 2.0)
    with clock.stage("a"):
        spend(4.0, 0.5)
    d = clock.to_dict()
    assert d["a"] == {"wall": 7.0, "cpu": 5.5} and d["b"] == {"wall": 2.0, "cpu": 2.0}
    assert d["total"] == {"wall": 10.0, "cpu": 8.5}
    with pytest.raises(KeyError):
        with clock.stage("c"):
            pass
