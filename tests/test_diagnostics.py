"""Per-topic diagnostics (tealeaves.diagnostics): MALLET's scores against MALLET's own output and
against hand-computed values, the expected-count path against the exact one, OCTIS's topic
significance against its definition, the junk flags, and bad input."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

import tealeaves as tl
from tealeaves.diagnostics import SCORES, diagnostics
from tealeaves.diagnostics.significance import significance
from tealeaves.errors import InputFileError, MethodError
from tealeaves.topics import NotApplicableError

FIXTURE = Path(__file__).parent / "fixtures" / "mallet_diagnostics"
DATA = Path(tl.__file__).parent / "data"


def example():
    model = tl.load_model(DATA / "example_model.npz")
    return model, tl.read_corpus(DATA / "example_docs.txt", vocab=model.vocab)


def write_state(path: Path, docs: list[list[tuple[int, int]]], vocab: list[str], alpha, beta) -> Path:
    lines = ["#doc source pos typeindex type topic", "#alpha : " + " ".join(map(str, alpha)) + " ",
             f"#beta : {beta}"]
    for d, doc in enumerate(docs):
        lines += [f"{d} NA {i} {w} {vocab[w]} {t}" for i, (w, t) in enumerate(doc)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


# --- MALLET's own numbers ------------------------------------------------------------------------

def test_state_matches_mallet_xml():
    """Every topic score MALLET wrote (`--diagnostics-file`, 4 decimals) and every top word, for the
    state MALLET wrote in the same run (scripts/make_mallet_diagnostics.py)."""
    r = diagnostics(FIXTURE / "state.gz")
    topics = ET.parse(FIXTURE / "diagnostics.xml").getroot().findall("topic")
    assert len(topics) == r.num_topics == 8
    for t in topics:
        k = int(t.get("id"))
        for name in SCORES:
            assert f"{r.scores[name][k]:.4f}" == t.get(name), (k, name)
        words = t.findall("word")
        assert [w.text for w in words] == r.words[k]
    assert r.counts == "assignments"


def test_state_tokens_reader_agrees_with_read_state():
    from tealeaves.io.mallet import read_state, read_state_tokens
    st = read_state_tokens(FIXTURE / "state.gz")
    model = read_state(FIXTURE / "state.gz")
    counts = np.zeros((model.num_topics, model.num_words))
    np.add.at(counts, (st.topics, st.words), 1.0)
    phi = (counts + st.beta) / (counts.sum(axis=1, keepdims=True) + model.num_words * st.beta)
    np.testing.assert_allclose(phi, model.phi)
    assert np.all(np.diff(st.docs) >= 0) and st.docs.size == st.words.size


# --- hand-computed ---------------------------------------------------------------------------------

def test_hand_computed_state(tmp_path):
    """Two documents, two topics; each value worked out by hand from MALLET's formulas (including
    its padding of a one-word topic's top list with word 0)."""
    vocab = ["a", "bb", "ccc"]
    docs = [[(0, 0), (0, 0), (1, 1)], [(1, 1), (2, 1), (0, 0)]]
    path = write_state(tmp_path / "s.txt", docs, vocab, [0.5, 0.5], 0.1)
    s = diagnostics(path, topn=2).scores
    expect = {
        "tokens": [3, 3],
        "document_entropy": [math.log(3) - 2 * math.log(2) / 3] * 2,
        "word-length": [1 / 2, 5 / 2],
        "coherence": [0.0, math.log(1.1 / 2.1)],
        "uniform_dist": [math.log(3), 2 / 3 * math.log(2)],
        "corpus_dist": [math.log(2), math.log(2)],
        "eff_num_words": [1.0, 9 / 5],
        "token-doc-diff": [0.0, 0.0],
        "rank_1_docs": [0.5, 0.5],
        "allocation_ratio": [0.5, 0.5],  # proportions 0.625 and 0.375 in each document
        "allocation_count": [1.0, 1.0],
        "exclusivity": [3.1 / 3.2 / 2, (2.1 / 2.2 + 1.1 / 1.2) / 2],
        "top_doc_share": [2 / 3, 2 / 3],
    }
    for name, values in expect.items():
        np.testing.assert_allclose(s[name], values, rtol=1e-12, atol=1e-15, err_msg=name)


def test_expected_counts_equal_exact_counts_when_words_are_not_shared(tmp_path):
    """When no word is in two topics, every token's topic is certain: the expected counts from
    proportions are the counts, and every score equals the exact one from the assignments."""
    rng = np.random.default_rng(3)
    K, V = 3, 12
    owner = np.arange(V) % K
    vocab = [f"w{'x' * (i % 4)}{i}" for i in range(V)]
    docs_words = [rng.integers(0, V, size=rng.integers(5, 30)) for _ in range(25)]
    alpha, beta = [0.3, 0.7, 0.2], 0.05
    path = write_state(tmp_path / "s.txt", [[(int(w), int(owner[w])) for w in d] for d in docs_words],
                       vocab, alpha, beta)
    exact = diagnostics(path, topn=3)
    phi = rng.random((K, V)) * (owner[None, :] == np.arange(K)[:, None])
    phi /= phi.sum(axis=1, keepdims=True)
    model = tl.TopicModel(phi, np.array(alpha), vocab=vocab, beta=beta)
    theta = rng.dirichlet(np.ones(K), size=len(docs_words))
    corpus = tl.Corpus.from_word_ids(docs_words, vocab)
    expected = diagnostics(model, corpus, theta=theta, topn=3)
    assert expected.counts == "expected" and expected.words == exact.words
    for name in (*SCORES, "top_doc_share", "top_words_doc_freq"):
        np.testing.assert_allclose(expected.scores[name], exact.scores[name], rtol=1e-9, err_msg=name)


def test_lda_without_theta_infers_it():
    model, corpus = example()
    r = diagnostics(model, corpus, burn_in=5, samples=5)
    assert r.num_topics == 5 and "posterior mean" in r.params["theta"]
    assert np.all(np.isfinite(r.scores["corpus_dist"]))
    np.testing.assert_allclose(r.scores["tokens"].sum(), corpus.num_tokens)


# --- OCTIS's topic significance --------------------------------------------------------------------

def _octis_kl(p, q):
    e = 0.00001
    return sum((a + e) * math.log((a + e) / (b + e)) for a, b in zip(p, q, strict=True))


def test_significance_follows_octis_definitions():
    """Against OCTIS's definitions written out as loops (per topic; OCTIS reports their mean)."""
    rng = np.random.default_rng(0)
    phi = rng.dirichlet(np.ones(6), size=3)
    phi[1] *= 2.0  # not normalised: the vacuous distribution uses the rows as given
    theta = rng.dirichlet(np.ones(3), size=4)
    theta[:, 2] = 0.0  # a topic no document uses: replaced by the uniform row, as OCTIS does
    s = significance(phi, theta)
    V, D = 6, 4
    tk = theta.T.copy()
    tk[2] = 1.0 / D
    vacuous = [sum(phi[k][i] * tk[k].sum() / D for k in range(3)) for i in range(V)]
    for k in range(3):
        P = phi[k] / phi[k].sum()
        assert s["kl_uniform"][k] == pytest.approx(_octis_kl(P, [1 / V] * V), rel=1e-12)
        assert s["kl_vacuous"][k] == pytest.approx(_octis_kl(P, vacuous), rel=1e-12)
        assert s["kl_background"][k] == pytest.approx(_octis_kl(tk[k] / tk[k].sum(), [1 / D] * D), rel=1e-12)
    assert s["kl_background"][2] == pytest.approx(0.0, abs=1e-15)


# --- flags -----------------------------------------------------------------------------------------

def test_flags_find_planted_junk():
    """A uniform topic, a topic of one document's own words and a stop-word topic planted in a
    model of four ordinary topics each raise their flag; the ordinary topics raise none."""
    rng = np.random.default_rng(5)
    V, D, K = 200, 60, 4
    phi = np.zeros((K + 3, V))
    for k in range(K):
        phi[k, 40 * k: 40 * (k + 1)] = rng.dirichlet(np.full(40, 0.3))
    phi[K] = 1.0 / V  # uniform
    phi[K + 1, 160:190] = 1 / 30  # the words of document 0 only
    phi[K + 2, 190:] = 0.1  # ten stop words, in every document
    theta = np.zeros((D, K + 3))
    theta[np.arange(D), rng.integers(0, K, size=D)] = 0.7
    theta[:, K], theta[:, K + 2] = 0.1, 0.2
    theta[0] = 0.0
    theta[0, K + 1] = 1.0
    docs = []
    for d in range(D):
        z = rng.choice(K + 3, size=80, p=theta[d] / theta[d].sum())
        docs.append(np.array([rng.choice(V, p=phi[k]) for k in z]))
    model = tl.TopicModel(phi + 1e-12, np.full(K + 3, 0.1), vocab=[f"w{i}" for i in range(V)])
    r = diagnostics(model, tl.Corpus.from_word_ids(docs, model.vocab), theta=theta, topn=10)
    assert r.flags[:K] == [[]] * K
    assert "near-uniform" in r.flags[K]
    assert "one-document" in r.flags[K + 1]
    assert "stop-word-like" in r.flags[K + 2]


def test_a_topic_of_most_of_the_corpus_is_near_corpus(tmp_path):
    """The stated limitation: a topic holding a share s of the tokens, even with words of its own,
    has corpus_dist = -log s, under 1 nat once s > 1/e."""
    vocab = ["a", "b", "c", "d"]
    docs = [[(0, 0), (1, 0), (2, 1), (3, 0)], [(0, 0), (1, 0), (3, 0), (2, 1)]]
    r = diagnostics(write_state(tmp_path / "s.txt", docs, vocab, [0.5, 0.5], 0.1), topn=2)
    assert r.scores["corpus_dist"][0] == pytest.approx(-math.log(6 / 8))
    assert "near-corpus" in r.flags[0]


# --- results and bad input -------------------------------------------------------------------------

def test_result_dict_and_frame():
    r = diagnostics(FIXTURE / "state.gz")
    d = r.to_dict()
    assert d["task"] == "diagnostics" and len(d["topics"]) == 8
    assert set(SCORES) <= set(d["topics"][0]) and "kl_background" in d["topics"][0]
    assert "DiagnosticsResult(" in repr(r)
    pytest.importorskip("pandas")
    assert list(r.to_frame().index) == list(range(8))


def test_model_without_corpus_is_refused():
    with pytest.raises(MethodError, match="need its documents"):
        diagnostics(example()[0])


def test_top_words_only_model_is_refused():
    t = tl.Topics(name="lists", source="test", top_words=(("a", "b"), ("c", "d")))
    with pytest.raises(NotApplicableError, match="top words only"):
        diagnostics(t, [[0, 1]])


def test_theta_of_wrong_shape_is_refused():
    model, corpus = example()
    with pytest.raises(MethodError, match="theta must be a 20 x 5"):
        diagnostics(model, corpus, theta=np.ones((3, 5)))


def test_topn_must_be_positive():
    with pytest.raises(MethodError, match="topn"):
        diagnostics(FIXTURE / "state.gz", topn=0)


def test_damaged_state_names_the_line(tmp_path):
    p = tmp_path / "s.txt"
    p.write_text("#doc source pos typeindex type topic\n#alpha : 0.5 0.5 \n#beta : 0.1\n0 NA 0 0 a 7\n")
    with pytest.raises(InputFileError, match="topic 7 but #alpha has 2 values"):
        diagnostics(p)


def test_topic_without_tokens_gives_mallets_values(tmp_path):
    """A topic no token is assigned to: MALLET's arithmetic (0/0 is NaN, 1/0 infinite), no crash;
    JSON carries null for NaN and "Infinity" for an infinity (issue 32); the topic is flagged empty."""
    path = write_state(tmp_path / "s.txt", [[(0, 0), (1, 0)], [(1, 1)]], ["a", "b"], [0.5, 0.5, 0.5], 0.1)
    r = diagnostics(path, topn=2)
    assert r.scores["tokens"][2] == 0 and r.words[2] == []
    assert math.isnan(r.scores["document_entropy"][2]) and math.isnan(r.scores["rank_1_docs"][2])
    assert r.scores["eff_num_words"][2] == math.inf
    assert r.scores["uniform_dist"][2] == 0 and r.scores["exclusivity"][2] == 0
    row = r.to_dict()["topics"][2]
    assert row["eff_num_words"] == "Infinity" and row["document_entropy"] is None
    assert r.flags[2] == ["empty"]


# --- the command -----------------------------------------------------------------------------------

def run_cli(*argv: str) -> int:
    from tealeaves.cli import main
    return main(list(argv))


def test_cli_state_writes_table_json_and_csv(tmp_path, capsys):
    import csv
    import json
    js, cs = tmp_path / "d.json", tmp_path / "d.csv"
    assert run_cli("diagnostics", str(FIXTURE / "state.gz"), "--json", str(js), "--csv", str(cs)) == 0
    out = capsys.readouterr().out
    assert "exact, from the state's token assignments" in out and "topics flagged" in out
    data = json.loads(js.read_text())
    assert data["counts"] == "assignments" and len(data["topics"]) == 8
    rows = list(csv.DictReader(cs.open(newline="", encoding="utf-8")))
    assert len(rows) == 8 and float(rows[0]["tokens"]) == data["topics"][0]["tokens"]


def test_cli_model_and_corpus(capsys):
    assert run_cli("diagnostics", str(DATA / "example_model.npz"), str(DATA / "example_docs.txt"),
                   "--burn-in", "2", "--samples", "2", "--json", "-") == 0
    import json
    assert json.loads(capsys.readouterr().out)["counts"] == "expected"


def test_cli_model_without_corpus(capsys):
    assert run_cli("diagnostics", str(DATA / "example_model.npz")) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "give CORPUS" in err


def test_cli_output_over_input_refused(tmp_path, capsys):
    state = tmp_path / "state.gz"
    state.write_bytes((FIXTURE / "state.gz").read_bytes())
    assert run_cli("diagnostics", str(state), "--csv", str(state)) == 2
    assert "would be overwritten" in capsys.readouterr().err
    assert state.read_bytes() == (FIXTURE / "state.gz").read_bytes()


def test_cli_top_words_only_model(tmp_path, capsys):
    topics = tmp_path / "topics.txt"
    topics.write_text("w000 w001\nw002 w003\n")
    docs = tmp_path / "docs.txt"
    docs.write_text("w000 w001\n")
    assert run_cli("diagnostics", str(topics), str(docs)) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("tealeaves: error:") and err.count("\n") == 0


def test_evaluate_diagnostics_section(tmp_path, capsys):
    """`evaluate --diagnostics`: each LDA's table after the evaluation's, and the same numbers as
    `tl.diagnostics` on the held-out documents in the JSON."""
    import json
    js = tmp_path / "e.json"
    assert run_cli("evaluate", str(DATA / "example_model.npz"), "--heldout", str(DATA / "example_docs.txt"),
                   "--runs", "1", "--particles", "5", "--diagnostics", "--json", str(js), "--quiet") == 0
    assert "per-topic diagnostics of example_model.npz" in capsys.readouterr().out
    got = json.loads(js.read_text())["diagnostics"]["example_model.npz"]
    model, corpus = example()
    direct = diagnostics(model, corpus)
    assert [t["tokens"] for t in got["topics"]] == pytest.approx(list(direct.scores["tokens"]))
