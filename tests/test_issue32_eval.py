"""Issue 32, points 5, 6, 8 and 9: figures never parse words or names as TeX; an estimator asked of a
logistic-normal model that does not apply to it is an error, and its bootstrap is checked; evaluate
over a mix of models gives every inapplicable metric (diagnostics too) and every unreadable model a
row with the reason, groups only models of one kind as restarts, names HDP's prior; JSON keeps
+Infinity apart from NaN; an empty topic is flagged empty; every command that scores documents
warns, in one message, when most held-out tokens were dropped (evaluate too, and its report)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from clirun import one_line_error, run_cli

import tealeaves as tl
from tealeaves.topics import Topics, why_not

HOSTILE = ["$x^$", "$\\frac{$", "a$b$c", "\\$", "50$", "$$", "$\\alpha_{$", "%_#&{}~^\\"]


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    """An LDA over 40 words, the same topics as a logistic-normal model (arrays with a mean and a
    covariance), held-out text, and a garbage file named like a model."""
    d = tmp_path_factory.mktemp("i32")
    lda = tl.synthetic.random_model(4, 40, beta=0.2, seed=3)
    vocab = [f"w{i:02d}" for i in range(40)]
    lda = tl.TopicModel(lda.phi, lda.alpha, vocab=vocab)
    tl.save_model(lda, d / "lda.npz")
    lda2 = tl.synthetic.random_model(4, 40, beta=0.2, seed=4)
    tl.save_model(tl.TopicModel(lda2.phi, lda2.alpha, vocab=vocab), d / "lda2.npz")
    np.savez(d / "ctm.npz", topic_word=lda.phi, vocab=np.array(vocab), mean=np.zeros(4), cov=np.eye(4),
             decoder=np.array("mixture"))
    docs = tl.synthetic.generate(lda, 6, 12, seed=5)
    (d / "docs.txt").write_text("".join(" ".join(vocab[i] for i in docs[k]) + "\n" for k in range(len(docs))))
    (d / "garbage.npz").write_bytes(b"PK\x03\x04 not a model at all")
    return {"dir": d, **{p.stem: p for p in d.iterdir()}}


# -- point 5: text that reaches matplotlib ---------------------------------------------------------

@pytest.mark.parametrize("text", HOSTILE + ["plain", "", "a\nb"])
def test_figure_text_is_never_parsed_as_tex(text):
    """Every text the PNG figures draw goes through `figures.literal`: matplotlib's own parser
    then finds no mathematics in it and shows it as given."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.text import Text

    from tealeaves.report.figures import literal

    shown, math = Text()._preprocess_math(literal(text))
    assert (shown, math) == (text, False)


def test_png_figures_with_tex_in_words_and_model_names(tmp_path):
    """Words and model names with $...$ (a crash in matplotlib's mathtext before) are drawn as
    they are: every figure is written."""
    vocab = [f"{h}{i}" for i, h in enumerate(HOSTILE)] + [f"v{i}" for i in range(30)]
    model = tl.synthetic.random_model(3, len(vocab), beta=0.3, seed=1)
    a = tl.TopicModel(model.phi, model.alpha, vocab=vocab)
    other = tl.synthetic.random_model(3, len(vocab), beta=0.3, seed=2)
    b = tl.TopicModel(other.phi, model.alpha, vocab=vocab)
    tl.save_model(a, tmp_path / "a.npz")
    tl.save_model(b, tmp_path / "b.npz")
    docs = tl.synthetic.generate(a, 5, 10, seed=3)
    (tmp_path / "d.txt").write_text("".join(" ".join(vocab[i] for i in docs[k]) + "\n" for k in range(5)))
    code, _, err = run_cli(["evaluate", tmp_path / "a.npz", tmp_path / "b.npz", "--heldout",
                            tmp_path / "d.txt",
                            "--reference", tmp_path / "d.txt", "--name", "$\\alpha_{$", "--name", "b$c$",
                            "--particles", "5", "--quiet", "--figures", tmp_path / "figs",
                            "--json", tmp_path / "e.json"])
    assert code == 0, err
    pngs = sorted((tmp_path / "figs").glob("*.png"))
    assert pngs and len(pngs) == len(list((tmp_path / "figs").glob("*.svg")))
    code, _, err = run_cli(["report", tmp_path / "e.json", "-o", tmp_path / "r.html",
                            "--figures", tmp_path / "figs2"])
    assert code == 0, err


def test_png_figures_with_usetex_set_by_the_user(tmp_path, monkeypatch):
    """A matplotlibrc with text.usetex (LaTeX for every text) changes nothing: the figures draw
    their texts as given, never through LaTeX."""
    import matplotlib

    from tealeaves.report import write_figures

    monkeypatch.setitem(matplotlib.rcParams, "text.usetex", True)
    doc = {"command": "evaluate", "rows": [
        {"model": name, "topics": 2, "per_token": -3.0 - i, "per_token_sd": 0.1, "perplexity": 20.0 + i,
         "coherence": {"npmi": 0.1}, "diversity": 0.5, "exclusivity": 0.2, "predictive_rank": 2.0,
         "auto_model_precision": 0.5} for i, name in enumerate(["a_b%c#", "$x^$"])]}
    written = write_figures([doc], tmp_path / "f")
    assert any(p.endswith(".png") for p in written)


@pytest.mark.parametrize("usetex", [False, True])
def test_intrusion_plot_with_tex_in_model_names(tmp_path, monkeypatch, usetex):
    """The intrusion figures (`tealeaves intrusion --plot`, Chang et al.'s box plots and histograms)
    draw model names with $...$ as given, with LaTeX off whatever the user's matplotlibrc says
    (before: mathtext's ParseSyntaxException, or "latex could not be found")."""
    import matplotlib

    from tealeaves.intrusion.plots import plot_scores
    from tealeaves.intrusion.scoring import IntrusionScores

    monkeypatch.setitem(matplotlib.rcParams, "text.usetex", usetex)
    names = ["$\\frac{$", "b$c$", "a_b%c#"]
    scores = IntrusionScores(model_precision={n: {0: 0.5, 1: 0.75} for n in names},
                             topic_log_odds={n: {0: -1.0, 1: -0.5} for n in names}, summary={},
                             excluded_annotators=[], agreement={}, responses_used=4, item_choices={})
    assert len(plot_scores(scores, tmp_path / "p.png")) == 4
    assert (tmp_path / "p.png").stat().st_size > 0


# -- point 6: logistic-normal models ---------------------------------------------------------------

def test_logistic_normal_refuses_an_explicit_left_to_right(files):
    one_line_error(["heldout", files["ctm"], files["docs"], "--method", "left-to-right"],
                   "left-to-right", "logistic-normal", "--method ais")


def test_logistic_normal_refuses_left_to_right_among_methods(files):
    """`--methods left-to-right,ais` compared AIS with itself, under two names."""
    one_line_error(["heldout", files["ctm"], files["docs"], "--methods", "left-to-right,ais"],
                   "left-to-right", "logistic-normal")


def test_logistic_normal_api_default_is_its_own_estimator(files):
    ctm = tl.load_topics(files["ctm"])
    docs = tl.read_corpus(files["docs"], vocab=ctm.vocab)
    with pytest.raises(tl.MethodError, match="left-to-right integrates over a Dirichlet prior"):
        tl.heldout(ctm, docs, method="left-to-right", temperatures=5)
    res = tl.heldout(ctm, docs, temperatures=5, runs=2)
    assert res.method == "ais"


def test_logistic_normal_bootstrap_is_checked_before_the_work(files):
    """10^11 resamples asked 745 GiB at once (a MemoryError traceback after the AIS had run)."""
    one_line_error(["heldout", files["ctm"], files["docs"], "--bootstrap", "100000000000", "--runs", "2"],
                   "the bootstrap with 100,000,000,000 resamples", "GiB")


def test_logistic_normal_bootstrap_api(files):
    ctm = tl.load_topics(files["ctm"])
    docs = tl.read_corpus(files["docs"], vocab=ctm.vocab)
    with pytest.raises(tl.TooLargeError, match="resamples"):
        tl.heldout(ctm, docs, runs=2, bootstrap=10**11, temperatures=5)


def test_intrusion_auto_bootstrap_is_checked(files):
    lda = tl.load_model(files["lda"])
    with pytest.raises((tl.TooLargeError, tl.MethodError), match="resamples"):
        tl.intrusion.auto(lda, files["docs"], bootstrap=10**12)


# -- point 8: evaluate over a mix of models --------------------------------------------------------

def test_diagnostics_of_a_ctm_among_ldas_is_a_dash(files, tmp_path):
    code, out, err = run_cli(["evaluate", files["lda"], files["ctm"], "--heldout", files["docs"],
                              "--diagnostics", "--particles", "5", "--quiet", "--json", tmp_path / "e.json"])
    assert code == 0, err
    doc = json.loads((tmp_path / "e.json").read_text())
    assert list(doc["diagnostics"]) == ["lda.npz"]
    ctm_row = doc["rows"][1]
    assert "proportions" in ctm_row["not_applicable"]["diagnostics"]
    assert "ctm.npz: diagnostics:" in out


def test_an_unreadable_model_gets_its_row(files, tmp_path):
    code, out, err = run_cli(["evaluate", files["lda"], files["garbage"], files["lda2"], "--heldout",
                              files["docs"], "--particles", "5", "--quiet", "--json", tmp_path / "e.json",
                              "--report", tmp_path / "r.html"])
    assert code == 0, err
    assert "1 of 3 models could not be read" in err and "garbage.npz" in err
    doc = json.loads((tmp_path / "e.json").read_text())
    assert [r["model"] for r in doc["rows"]] == ["lda.npz", "garbage.npz", "lda2.npz"]
    bad = doc["rows"][1]
    assert bad["per_token"] is None and "cannot read" in bad["unreadable"]
    assert doc["unreadable"] == [{"model": "garbage.npz", "reason": bad["unreadable"]}]
    assert doc["rows"][0]["per_token"] is not None and doc["rows"][2]["per_token"] is not None
    assert "garbage.npz: unreadable" in out
    assert "garbage.npz" in (tmp_path / "r.html").read_text()


def test_an_unreadable_model_in_the_api(files):
    res = tl.evaluate([files["lda"], files["garbage"]], heldout=files["docs"], particles=5)
    assert res.unreadable == ["garbage.npz"] and res.rows[1]["unreadable"]


def test_every_model_unreadable_is_an_error(files):
    one_line_error(["evaluate", files["garbage"], files["garbage"], "--heldout", files["docs"]],
                   "no model could be read", "garbage.npz")


def test_stability_groups_only_models_of_one_kind(files, tmp_path):
    """An LDA and a CTM with the same topics and words were 'restarts' with stability 1."""
    code, out, err = run_cli(["evaluate", files["lda"], files["ctm"], "--heldout", files["docs"],
                              "--stability", "--particles", "5", "--quiet", "--json", tmp_path / "e.json"])
    assert code == 0, err
    assert json.loads((tmp_path / "e.json").read_text())["stability"] == []
    vocab = tuple(f"w{i}" for i in range(30))
    w = np.random.default_rng(0).random((3, 30))
    nmf = Topics("nmf", "gensim Nmf", vocab=vocab, weights=w, weights_kind="nonnegative")
    lsi = Topics("lsi", "gensim LsiModel", vocab=vocab, weights=w - 0.5, weights_kind="signed")
    nmf2 = Topics("nmf2", "gensim Nmf", vocab=vocab, weights=w[::-1], weights_kind="nonnegative")
    res = tl.evaluate([nmf, lsi, nmf2], stability=True)
    assert [g.models for g in res.stability] == [["nmf", "nmf2"]]
    with pytest.raises(tl.MethodError, match="models of different kinds are not restarts"):
        tl.stability([files["lda"], files["ctm"]])


def test_hdp_reason_names_its_prior():
    """An HDP has a prior over topic proportions (a hierarchical Dirichlet process): the reason
    says so and what is missing, never 'no prior'."""
    gensim = pytest.importorskip("gensim")
    tp = pytest.importorskip("tomotopy")
    texts = [["a", "b", "c", "a"], ["b", "c", "d"], ["a", "d", "e", "e"], ["c", "e", "a"]] * 5
    dictionary = gensim.corpora.Dictionary(texts)
    hdp = gensim.models.HdpModel([dictionary.doc2bow(t) for t in texts], id2word=dictionary, T=5, K=3,
                                 random_state=0)
    from tealeaves.io import gensim_topics

    t1 = gensim_topics(hdp, "hdp")
    m = tp.HDPModel(initial_k=2, seed=1)
    for t in texts:
        m.add_doc(t)
    m.train(20, workers=1)
    d = Path(__import__("tempfile").mkdtemp())
    m.save(str(d / "hdp.bin"))
    t2 = tl.load_topics(d / "hdp.bin")
    for t in (t1, t2):
        reason = why_not("heldout", t)
        assert "no prior" not in reason and "hierarchical Dirichlet-process prior" in reason, reason
        assert "truncat" in reason


def test_json_keeps_infinity_apart_from_nan(tmp_path):
    """+Infinity was written as null, like NaN: the documented encoding keeps them apart."""
    from tealeaves.output.jsonout import json_number, json_safe, write_json

    data = {"a": float("inf"), "b": float("-inf"), "c": float("nan"), "d": [1.5, float("inf")]}
    assert json_safe(data) == {"a": "Infinity", "b": "-Infinity", "c": None, "d": [1.5, "Infinity"]}
    write_json(tmp_path / "x.json", data)
    back = json.loads((tmp_path / "x.json").read_text())
    assert [json_number(back[k]) for k in "ab"] == [float("inf"), float("-inf")]
    assert json_number(back["c"]) is None


def test_the_report_reads_infinity(tmp_path):
    """A perplexity of +Infinity (a model that gives a held-out token probability 0) is shown as
    inf in the report, not as a missing value."""
    from tealeaves.output.jsonout import write_json
    from tealeaves.report import write_report

    values = (("a", -3.0, 20.0), ("b", float("-inf"), float("inf")), ("c", float("nan"), float("nan")))
    rows = [{"model": n, "topics": 2, "per_token": p, "per_token_sd": 0.1, "perplexity": x,
             "coherence": {}, "diversity": None, "exclusivity": None, "predictive_rank": None,
             "auto_model_precision": None} for n, p, x in values]
    write_json(tmp_path / "e.json", {"command": "evaluate", "rows": rows, "groups": [["a"], ["b"]]})
    write_report([tmp_path / "e.json"], tmp_path / "r.html")
    html = (tmp_path / "r.html").read_text()
    assert ">inf<" in html and ">-inf<" in html


def test_empty_topic_is_flagged_empty(tmp_path):
    """A topic no token is assigned to was flagged near-uniform and near-corpus."""
    rng = np.random.default_rng(0)
    lines = ["#doc source pos typeindex type topic", "#alpha : 0.1 0.1 0.1", "#beta : 0.01"]
    for d in range(30):
        for p in range(10):
            w = int(rng.integers(20))
            lines.append(f"{d} NA {p} {w} w{w:02d} {int(rng.integers(2))}")
    (tmp_path / "state.txt").write_text("\n".join(lines) + "\n")
    r = tl.diagnostics(str(tmp_path / "state.txt"))
    assert r.flags[2] == ["empty"]
    assert "empty" not in r.flags[0] and "empty" not in r.flags[1]
    code, out, err = run_cli(["diagnostics", tmp_path / "state.txt", "--json", tmp_path / "d.json"])
    assert code == 0, err
    doc = json.loads((tmp_path / "d.json").read_text())
    assert doc["topics"][2]["flags"] == "empty"


# -- point 9: held-out tokens outside the vocabulary -----------------------------------------------

def _mostly_unknown(files, tmp_path) -> Path:
    p = tmp_path / "unknown.txt"
    text = files["docs"].read_text().splitlines()
    p.write_text("".join(f"{line} " + " ".join(f"zz{i}" for i in range(40)) + "\n" for line in text))
    return p


def test_evaluate_warns_when_most_tokens_are_dropped(files, tmp_path):
    docs = _mostly_unknown(files, tmp_path)
    code, out, err = run_cli(["evaluate", files["lda"], files["lda2"], "--heldout", docs, "--particles", "5",
                              "--quiet", "--json", tmp_path / "e.json", "--report", tmp_path / "r.html"])
    assert code == 0, err
    warning = [line for line in err.splitlines() if "were dropped" in line]
    assert len(warning) == 1 and warning[0].startswith("tealeaves: warning: ") and "%" in warning[0]
    doc = json.loads((tmp_path / "e.json").read_text())
    assert "were dropped" in doc["scoring"]["warning"]
    html = (tmp_path / "r.html").read_text()
    head = html[:html.index("Models side by side")]  # beside the recommendation, before the table
    assert "were dropped" in head


def test_every_scoring_command_warns_in_one_message(files, tmp_path):
    """heldout, compare, completion, predictive and evaluate: the same message from one function."""
    docs = _mostly_unknown(files, tmp_path)
    lines = {}
    for argv in (["heldout", files["lda"], docs, "--particles", "5"],
                 ["completion", files["lda"], docs, "--particles", "5"],
                 ["compare", files["lda"], files["lda2"], docs, "--method", "difference", "--particles", "5"],
                 ["predictive", files["lda"], docs],
                 ["evaluate", files["lda"], "--heldout", docs, "--particles", "5"]):
        code, _, err = run_cli([*argv, "--quiet"])
        assert code == 0, err
        got = [line for line in err.splitlines() if "were dropped" in line]
        assert len(got) == 1, (argv[0], err)
        lines[argv[0]] = got[0]
    shapes = {line.split(" of the tokens")[0].split(": ")[-1] for line in lines.values()}
    assert len(shapes) == 1, lines  # one share, computed the same way
    assert all(" of the tokens in " in line and "were dropped" in line for line in lines.values())


def test_select_warns_when_most_held_out_tokens_are_unseen(tmp_path):
    """Held-out documents whose words are mostly unseen in training (10 of 13 each): select says so."""
    pytest.importorskip("tomotopy")
    lines = [" ".join(["aa", "bb", "cc", *(f"u{d}x{i}" for i in range(10))]) for d in range(20)]
    (tmp_path / "c.txt").write_text("\n".join(lines) + "\n")
    code, _, err = run_cli(["select", tmp_path / "c.txt", "--topics", "2", "--restarts", "1", "--holdout",
                            "0.3", "--iterations", "10", "--particles", "5", "--quiet"])
    assert code == 0, err
    warning = [line for line in err.splitlines() if "were dropped" in line]
    assert len(warning) == 1 and "77% of the tokens in the held-out documents" in warning[0], err
    assert "not in the training documents' vocabulary" in warning[0]


def test_every_bootstrap_primitive_checks_its_size():
    """Every bootstrap draws resamples x items at most a block at a time and checks its size first
    (`util.limits.check_bootstrap`): 10^12 resamples is a one-line error, never a MemoryError."""
    import importlib

    from tealeaves.compare.result import DirectionEstimate, bootstrap_over_chains
    from tealeaves.heldout.result import bootstrap_sd
    from tealeaves.intrusion.scoring import bootstrap_ci

    intervals = importlib.import_module("tealeaves.compare.intervals")
    rng = np.random.default_rng(0)
    x = rng.normal(size=(3, 5))
    big = 10**12
    calls = [lambda: bootstrap_sd(x, big, 0), lambda: bootstrap_over_chains(x, x, 1.0, big, 0),
             lambda: bootstrap_ci(x[0], big, rng), lambda: intervals.percentile(x[0], np.ones(5), rng, big),
             lambda: intervals.bootstrap_t(x[0], np.ones(5), rng, big),
             lambda: DirectionEstimate("forward", x, x, np.zeros(5)).doc_sd(resamples=big)]
    for call in calls:
        with pytest.raises((tl.TooLargeError, tl.MethodError), match="resamples"):
            call()
    a, b = tl.synthetic.random_model(2, 10, seed=1), tl.synthetic.random_model(2, 10, seed=2)
    docs = tl.synthetic.generate(a, 3, 4, seed=3)
    res = tl.compare(a, b, docs, method="difference", chains=2, particles=5, bootstrap=10)
    res.bootstrap = big
    with pytest.raises(tl.TooLargeError, match="resamples"):
        res.document_bootstrap()
