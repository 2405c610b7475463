"""Stability across restarts (tealeaves.diagnostics.stability, `tealeaves stability`, evaluate's
--stability): values against independent computations, the flag rule, the CLI and hostile input."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from clirun import one_line_error, run_cli
from scipy.optimize import linear_sum_assignment
from scipy.spatial.distance import jensenshannon

import tealeaves as tl
from tealeaves.diagnostics.stability import (
    MATCH_FLOOR,
    RULE,
    average_jaccard,
    flag_restarts,
    stability,
    stability_groups,
)
from tealeaves.errors import InvalidModelError, MethodError
from tealeaves.topics import NotApplicableError, Topics

ROOT = Path(__file__).resolve().parents[1]
CONTRACT = {"task", "distance", "topn", "topics", "models", "per_topic", "per_model", "score", "flagged",
            "params", "seconds"}


def lda(phi, name, vocab=None):
    phi = np.asarray(phi, dtype=float)
    return tl.TopicModel(phi, np.full(phi.shape[0], 0.1), vocab=vocab, name=name)


def merged_copy(m: tl.TopicModel, name: str = "stuck") -> tl.TopicModel:
    """Topics 0 and 1 merged into topic 0; topic 2 split into topics 1 and 2 (alternate ranks)."""
    phi = m.phi.copy()
    phi[0] = (m.phi[0] + m.phi[1]) / 2
    half = np.zeros(m.num_words, dtype=bool)
    half[np.argsort(-m.phi[2])[::2]] = True
    phi[1] = np.where(half, m.phi[2], 0.0) + 1e-12
    phi[2] = np.where(half, 0.0, m.phi[2]) + 1e-12
    return tl.TopicModel(phi / phi.sum(axis=1, keepdims=True), m.alpha, vocab=m.vocab, name=name)


def test_jensen_shannon_matches_scipy_and_hungarian():
    a = tl.synthetic.random_model(5, 60, beta=0.2, seed=1, name="a")
    b = tl.synthetic.random_model(5, 60, beta=0.2, seed=2, name="b")
    r = stability([a, b])
    cost = np.array([[jensenshannon(p, q, base=2) for q in b.phi] for p in a.phi])
    rows, match = linear_sum_assignment(cost)
    assert r.distance == "jensen-shannon" and r.topn is None
    np.testing.assert_allclose(r.per_topic["a"], 1 - cost[rows, match], rtol=0, atol=1e-12)
    back = np.empty(5)
    back[match] = 1 - cost[rows, match]
    np.testing.assert_allclose(r.per_topic["b"], back, rtol=0, atol=1e-12)
    assert r.score == pytest.approx(1 - cost[rows, match].mean(), abs=1e-12)
    assert r.pairs[0]["matching"] == list(match)


def test_permuted_copy_has_stability_one_and_its_permutation_is_recovered():
    m = tl.synthetic.random_model(6, 80, seed=3, name="m")
    perm = np.array([3, 0, 5, 1, 4, 2])
    words = np.random.default_rng(0).permutation(80)  # the copy's words in another order too
    copy = lda(m.phi[perm][:, words], "copy", [m.vocab[i] for i in words])
    r = stability([m, copy])
    np.testing.assert_allclose(r.per_topic["m"], 1.0, atol=1e-7)
    assert r.pairs[0]["matching"] == list(np.argsort(perm))  # topic k of m is topic argsort(perm)[k] of copy
    assert r.flagged == {} and r.unmatched == {"m": [], "copy": []}


def test_merged_topics_get_the_hand_computed_score():
    """Three topics on disjoint word pairs; the other restart merged topics 0 and 1 and split topic 2:
    two matches at the JS distance of a distribution and its even mixture with a disjoint one,
    sqrt(0.75 log2(4/3)) (worked by hand: both halves of the split give the same), and one at 1."""
    true = lda([[.5, .5, 0, 0, 0, 0], [0, 0, .5, .5, 0, 0], [0, 0, 0, 0, .5, .5]], "true")
    stuck = lda([[.25, .25, .25, .25, 0, 0], [0, 0, 0, 0, 1, 0], [0, 0, 0, 0, 0, 1]], "stuck")
    r = stability([true, stuck])
    d = math.sqrt(0.75 * math.log2(4 / 3))
    assert r.per_model["true"] == pytest.approx(2 * (1 - d) / 3, abs=1e-12)
    assert sorted(r.per_topic["true"]) == pytest.approx([0.0, 1 - d, 1 - d], abs=1e-12)
    assert sorted(r.per_topic["stuck"]) == pytest.approx([0.0, 1 - d, 1 - d], abs=1e-12)


def test_average_jaccard_and_rbo_over_top_words():
    # Greene et al.'s AJ by hand: depth 1: 0/2, depth 2: 2/2, depth 3: 2/4 -> 0.5
    assert average_jaccard(["a", "b", "c"], ["b", "a", "d"]) == pytest.approx(0.5)
    x = Topics(name="x", source="top words", top_words=(("a", "b", "c"), ("p", "q", "r")))
    y = Topics(name="y", source="top words", top_words=(("p", "q", "s"), ("b", "a", "d")))
    r = stability([x, y], topn=3)
    assert r.distance == "average-jaccard" and r.topn == 3  # auto: no distributions
    # x0 <-> y1 (AJ 0.5), x1 <-> y0 (AJ (1 + 1 + 2/4) / 3)
    assert list(r.per_topic["x"]) == pytest.approx([0.5, 2.5 / 3])
    assert r.pairs[0]["matching"] == [1, 0]
    ro = stability([x, y], topn=3, distance="rbo")
    # Webber et al.'s RBO_ext, two lists of 3, agreements A_d = 0, 1, 2/3 at p = 0.9
    p, agree = 0.9, [0.0, 1.0, 2 / 3]
    want = (1 - p) / p * sum(x * p ** d for d, x in enumerate(agree, 1)) + p ** 3 * agree[-1]
    assert ro.per_topic["x"][0] == pytest.approx(want, abs=1e-12) and ro.params == {"p": 0.9}


def test_a_restart_that_merged_two_topics_is_flagged():
    m = tl.synthetic.random_model(8, 300, beta=0.05, seed=5, name="r1")
    other = lda(m.phi[::-1], "r2", m.vocab)
    r = stability([m, other, merged_copy(m)])
    assert list(r.flagged) == ["stuck"] and "disagrees with 2 of the 2" in r.flagged["stuck"]
    assert r.unmatched["stuck"] and not r.unmatched["r1"]
    assert r.per_model["stuck"] < r.per_model["r1"] == pytest.approx(r.per_model["r2"])
    two = stability([m, merged_copy(m)])  # two restarts that disagree: both flagged, said why
    assert set(two.flagged) == {"r1", "stuck"} and "cannot be told" in two.flagged["r1"]


def test_consensus_rule_on_hand_made_similarities():
    high, low = np.full(3, 0.9), np.array([0.9, 0.1, 0.9])
    names = ["a", "b", "c", "d"]
    sims = {(i, j): high for i in range(4) for j in range(4) if i != j}
    sims[0, 3] = sims[3, 0] = sims[1, 3] = sims[3, 1] = sims[2, 3] = sims[3, 2] = low  # d disagrees with all
    unmatched, flagged = flag_restarts(names, sims, 0.5, "consensus")
    assert list(flagged) == ["d"] and unmatched == {"a": [], "b": [], "c": [], "d": [1]}
    assert list(flag_restarts(names, sims, 0.5, "majority")[1]) == ["d"]
    five = {(i, j): high for i in range(5) for j in range(5) if i != j}
    five[0, 1] = five[1, 0] = low  # only a and b disagree: largest agreeing sets {a, c, d, e}, {b, c, d, e}
    assert sorted(flag_restarts([*names, "e"], five, 0.5, "consensus")[1]) == ["a", "b"]
    assert flag_restarts([*names, "e"], five, 0.5, "majority")[1] == {}  # 1 of 4 others is no majority
    none = {k: low for k in five}  # no two agree: all flagged
    assert len(flag_restarts([*names, "e"], none, 0.5, "consensus")[1]) == 5


def test_floors_and_rule_are_the_measured_ones():
    r = json.loads((ROOT / "experiments/results/stability_restarts.json").read_text(encoding="utf-8"))
    for distance, s in r["sweep"].items():
        assert (MATCH_FLOOR[distance], RULE) == (s["floor"], s["rule"]), distance


def test_result_follows_the_contract():
    m = tl.synthetic.random_model(4, 50, seed=7, name="m")
    r = stability([m, lda(m.phi[::-1], "n", m.vocab)])
    d = r.to_dict()
    assert CONTRACT <= set(d) and d["task"] == "stability" and d["models"] == ["m", "n"]
    assert d["per_model"] == {"m": pytest.approx(1.0), "n": pytest.approx(1.0)} and d["topics"] == 4
    assert json.loads(json.dumps(d)) == d
    assert "score" in repr(r) and r.to_frame().shape == (4, 2)
    assert len(r.rows()) == 8 and "model" in r.table()


def test_stability_groups_for_select_and_evaluate():
    a = tl.synthetic.random_model(4, 40, seed=1, name="k4-a")
    b = tl.synthetic.random_model(4, 40, seed=2, name="k4-b")
    c = tl.synthetic.random_model(6, 40, seed=3, name="k6")
    groups = stability_groups([a, c, b])
    assert [g.models for g in groups] == [["k4-a", "k4-b"]]


def test_evaluate_stability_key_and_column():
    x = Topics(name="x", source="top words", top_words=(("a", "b", "c"), ("p", "q", "r")))
    y = Topics(name="y", source="top words", top_words=(("p", "q", "s"), ("b", "a", "d")))
    z = Topics(name="z", source="top words", top_words=(("a", "b", "c"),))
    res = tl.evaluate([x, y, z], stability=True)
    assert [r["stability"] for r in res.rows] == pytest.approx([(0.5 + 2.5 / 3) / 2] * 2 + [None])
    doc = res.to_dict()
    assert doc["stability"][0]["models"] == ["x", "y"] and "stability" in res.table()
    from tealeaves.report.schema import check_result
    check_result(json.loads(json.dumps(doc)), "eval.json")
    assert "stability" not in tl.evaluate([x, y]).to_dict()


def test_cli_stability(tmp_path):
    m = tl.synthetic.random_model(6, 200, beta=0.05, seed=9, name="m")
    paths = []
    for i, model in enumerate([m, lda(m.phi[::-1], "n", m.vocab), merged_copy(m)]):
        paths.append(tmp_path / f"r{i}.npz")
        tl.save_model(model, paths[-1])
    code, out, err = run_cli(["stability", *paths, "--json", tmp_path / "s.json",
                              "--csv", tmp_path / "s.csv"])
    assert code == 0, err
    assert "FLAGGED r2.npz" in out and "topics of r2.npz" in out
    doc = json.loads((tmp_path / "s.json").read_text())
    assert doc["command"] == "stability" and list(doc["flagged"]) == ["r2.npz"]
    assert (tmp_path / "s.csv").read_text().splitlines()[0].startswith("model,topic,stability")
    one_line_error(["stability", paths[0]], "at least 2")


def test_cli_evaluate_stability(tmp_path):
    m = tl.synthetic.random_model(3, 30, beta=0.5, seed=4, name="m")
    for name, model in (("a.npz", m), ("b.npz", lda(m.phi[::-1], "b", m.vocab))):
        tl.save_model(model, tmp_path / name)
    (tmp_path / "held.txt").write_text("\n".join(" ".join(m.vocab[:8]) for _ in range(3)) + "\n")
    code, out, err = run_cli(["evaluate", tmp_path / "a.npz", tmp_path / "b.npz", "--heldout",
                              tmp_path / "held.txt", "--particles", "5", "--runs", "1", "--stability",
                              "--quiet", "--json", tmp_path / "e.json", "--csv", tmp_path / "e.csv"])
    assert code == 0, err
    doc = json.loads((tmp_path / "e.json").read_text())
    assert doc["stability"][0]["per_model"] == {"a.npz": pytest.approx(1.0), "b.npz": pytest.approx(1.0)}
    assert "stability" in (tmp_path / "e.csv").read_text().splitlines()[0]


# --- hostile input (docs/hostile_input.md, "Stability across restarts (session 3)") ---

def test_one_model_is_an_error(tmp_path):
    m = tl.synthetic.random_model(3, 20, seed=0)
    with pytest.raises(MethodError, match="at least 2 models"):
        stability([m])
    with pytest.raises(MethodError, match="list of restarts"):
        stability(m)
    tl.save_model(m, tmp_path / "a.npz")
    one_line_error(["stability", tmp_path / "a.npz"], "at least 2")


def test_different_k_is_an_error():
    with pytest.raises(MethodError, match="same K: 'a' has 3 topics, 'b' has 4"):
        stability([tl.synthetic.random_model(3, 20, name="a"), tl.synthetic.random_model(4, 20, name="b")])


def test_different_vocabularies_are_an_error():
    a = tl.synthetic.random_model(3, 20, name="a")
    b = lda(a.phi, "b", [*a.vocab[:-1], "other"])
    with pytest.raises(InvalidModelError, match="do not share a vocabulary: 1 words only in the first"):
        stability([a, b])
    with pytest.raises(InvalidModelError, match="without vocabularies"):
        stability([lda(a.phi, "c"), a])


def test_nan_weights_are_an_error():
    a = tl.synthetic.random_model(3, 20, name="a")
    with pytest.raises(InvalidModelError):
        Topics(name="n", source="arrays", weights=np.full((3, 20), np.nan), weights_kind="distributions")
    t0 = Topics(name="t0", source="arrays", vocab=a.vocab, weights=a.phi.copy(), weights_kind="distributions")
    t = Topics(name="t", source="arrays", vocab=a.vocab, weights=a.phi.copy(), weights_kind="distributions")
    t.weights[1, 0] = np.nan  # changed after it was checked
    with pytest.raises(InvalidModelError, match="topic 1's weights are not finite"):
        stability([t0, t])  # restarts are models of one kind (issue 32): arrays, not an LDA with arrays


def test_jensen_shannon_needs_distributions():
    a = tl.synthetic.random_model(2, 20, name="a")
    signed = Topics(name="lsi", source="gensim LsiModel", vocab=a.vocab, weights=a.phi - 0.05,
                    weights_kind="signed")
    other = Topics(name="lsi2", source="gensim LsiModel", vocab=a.vocab, weights=a.phi[::-1] - 0.05,
                   weights_kind="signed")
    with pytest.raises(NotApplicableError, match="'lsi' .gensim LsiModel. has signed weights"):
        stability([signed, other], distance="jensen-shannon")
    r = stability([signed, other], topn=5)  # auto: top words by absolute weight
    assert r.distance == "average-jaccard"
    words_only = Topics(name="w", source="arrays", weights=a.phi - 0.05, weights_kind="signed")
    with pytest.raises(NotApplicableError, match="no vocabulary"):
        stability([words_only, Topics(name="v", source="arrays", weights=a.phi, weights_kind="signed")])


def test_duplicate_names_are_renamed_and_said():
    a = tl.synthetic.random_model(3, 20, name="run")
    r = stability([a, a, a])
    assert r.models == ["run", "run #2", "run #3"]
    assert r.params["renamed"] == {"run #2": "run", "run #3": "run"}


def test_bad_options_are_errors():
    a = tl.synthetic.random_model(3, 20, name="a")
    for kwargs, text in (({"distance": "cosine"}, "unknown distance"), ({"topn": 0}, "topn"),
                         ({"floor": 1.5}, "floor"), ({"names": ["x"]}, "1 names for 2 models")):
        with pytest.raises(MethodError, match=text):
            stability([a, a], **kwargs)


def test_the_cli_offers_exactly_the_apis_distances():
    from tealeaves.cli.stability import DISTANCE_CHOICES
    from tealeaves.diagnostics.stability import DISTANCES

    assert DISTANCE_CHOICES == ("auto", *DISTANCES)
