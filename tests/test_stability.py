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
    assess,
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


# The rule's logic on hand-made restarts, at a stated floor (0.45) and tolerance, without a margin
# (the measured defaults are tested below, against the experiment's results)
RULE_FLOOR = 0.45


@pytest.fixture
def no_margin(monkeypatch):
    from tealeaves.diagnostics import stability as module

    for d in module.DISTANCES:
        monkeypatch.setitem(module.MARGIN, d, None)


def test_a_restart_that_merged_two_topics_is_flagged_stuck(no_margin):
    m = tl.synthetic.random_model(8, 300, beta=0.05, seed=5, name="r1")
    other = lda(m.phi[::-1], "r2", m.vocab)
    r = stability([m, other, merged_copy(m)], tolerance=0, floor=RULE_FLOOR)
    assert list(r.flagged) == ["stuck"] and "disagrees with 2 of the 2" in r.flagged["stuck"]
    assert r.finding == "stuck"
    assert r.finding_text.startswith("stuck restart(s) at K = 8: stuck apart from the 2")
    assert r.unmatched["stuck"] and not r.unmatched["r1"]
    assert r.per_model["stuck"] < r.per_model["r1"] == pytest.approx(r.per_model["r2"])


def test_restarts_that_disagree_with_each_other_are_unstable_not_each_stuck(no_margin):
    """Issue 33: three restarts that each disagree with the others were each FLAGGED; that is one
    finding about the model at this K (unstable), said once, and no restart is singled out."""
    m = tl.synthetic.random_model(8, 300, beta=0.05, seed=5, name="r1")
    two = stability([m, merged_copy(m)], tolerance=0, floor=RULE_FLOOR)
    assert two.flagged == {} and two.finding == "unstable"
    assert two.finding_text.startswith("unstable at K = 8: no two of the 2 restarts agree (two restarts "
                                       "agree when every matched topic is at least 0.45 similar)")
    assert "which one is stuck cannot be told" in two.finding_text
    a, b, c = (tl.synthetic.random_model(8, 300, beta=0.05, seed=s, name=f"s{s}") for s in (1, 2, 3))
    three = stability([a, b, c], tolerance=0, floor=RULE_FLOOR)  # three unrelated solutions
    assert three.flagged == {} and three.finding == "unstable" and three.recurring == []
    assert "so none is singled out as stuck" in three.finding_text and "STUCK" not in three.summary()
    shuffled = lda(np.concatenate([m.phi[::2], m.phi[1::2]]), "r3", m.vocab)
    same = stability([m, lda(m.phi[::-1], "r2", m.vocab), shuffled], tolerance=0, floor=RULE_FLOOR)
    assert same.finding == "stable" and same.recurring == list(range(8)) and same.flagged == {}


def test_tolerance_lets_restarts_that_differ_in_a_few_topics_agree(no_margin):
    """Ten topics, the third restart with one topic replaced: with tolerance 0 it is apart from the
    two that agree; allowing 10% of topics without a counterpart, all three agree."""
    m = tl.synthetic.random_model(10, 400, beta=0.05, seed=8, name="a")
    phi = m.phi.copy()
    phi[4] = tl.synthetic.random_model(1, 400, beta=0.05, seed=99).phi[0]
    odd = lda(phi, "c", m.vocab)
    strict = stability([m, lda(m.phi[::-1], "b", m.vocab), odd], tolerance=0, floor=RULE_FLOOR)
    assert strict.finding == "stuck" and list(strict.flagged) == ["c"]
    loose = stability([m, lda(m.phi[::-1], "b", m.vocab), odd], tolerance=0.1, floor=RULE_FLOOR)
    assert loose.finding == "stable" and loose.flagged == {} and 4 not in loose.recurring
    with pytest.raises(MethodError, match=r"tolerance must be a share in \[0, 1\), got 1.0"):
        stability([m, odd], tolerance=1.0)


def test_the_aligned_table_pairs_each_topic_with_its_match_in_every_restart():
    """Restarts that are permuted copies (one with a topic replaced): each row of the aligned table
    is a topic of the reference restart and, in each other restart, the topic the permutation puts
    there (computed here from the permutations, not from the matching)."""
    m = tl.synthetic.random_model(6, 120, beta=0.1, seed=3, name="m")
    p1, p2 = np.array([3, 0, 5, 1, 4, 2]), np.array([1, 2, 0, 5, 3, 4])
    r = stability([m, lda(m.phi[p1], "x", m.vocab), lda(m.phi[p2], "y", m.vocab)])
    assert r.reference in ("m", "x", "y")
    where = {"m": np.arange(6), "x": np.argsort(p1), "y": np.argsort(p2)}  # true topic t -> its index
    rows = r.aligned()
    assert len(rows) == 6
    for row in rows:
        true = int(np.flatnonzero(where[r.reference] == row["topic"])[0])
        for name, (j, sim) in row["matches"].items():
            assert j == where[name][true] and sim == pytest.approx(1.0, abs=1e-7)
    text = r.aligned_table()
    assert text.splitlines()[0].startswith(f"{r.reference} (reference)")
    assert " ".join(r.words["m"][0][:5]) in text
    assert r.to_dict()["aligned"] == rows


def test_consensus_rule_on_hand_made_similarities():
    high, low = np.full(3, 0.9), np.array([0.9, 0.1, 0.9])
    names = ["a", "b", "c", "d"]
    sims = {(i, j): high for i in range(4) for j in range(4) if i != j}
    sims[0, 3] = sims[3, 0] = sims[1, 3] = sims[3, 1] = sims[2, 3] = sims[3, 2] = low  # d disagrees with all
    unmatched, flagged = flag_restarts(names, sims, 0.5, "consensus")
    assert list(flagged) == ["d"] and unmatched == {"a": [], "b": [], "c": [], "d": [1]}
    assert list(flag_restarts(names, sims, 0.5, "majority")[1]) == ["d"]
    assert flag_restarts(names, sims, 0.5, "consensus", tolerance=1 / 3)[1] == {}  # 1 of 3 allowed
    five = {(i, j): high for i in range(5) for j in range(5) if i != j}
    five[0, 1] = five[1, 0] = low  # only a and b disagree: largest agreeing sets {a, c, d, e}, {b, c, d, e}
    assert sorted(flag_restarts([*names, "e"], five, 0.5, "consensus")[1]) == ["a", "b"]
    assert flag_restarts([*names, "e"], five, 0.5, "majority")[1] == {}  # 1 of 4 others is no majority
    none = {k: low for k in five}  # no two agree: unstable as a whole, none singled out
    assert flag_restarts([*names, "e"], none, 0.5, "consensus")[1] == {}
    assert assess([*names, "e"], none, 0.5)["finding"] == "unstable"
    half = {k: high for k in sims}  # a, b agree; c, d agree; the pairs across disagree: 2 of 4 is no majority
    for i in (0, 1):
        for j in (2, 3):
            half[i, j] = half[j, i] = low
    assert assess(names, half, 0.5)["finding"] == "unstable" and assess(names, half, 0.5)["stuck"] == {}


def test_floors_tolerances_and_default_distance_are_the_measured_ones():
    """The package's floor, tolerance and margin per distance, and the distance `auto` picks, are
    those experiments/stability_restarts.py chose on synthetic and real restarts."""
    from tealeaves.diagnostics.stability import DEFAULT_DISTANCE, MARGIN, TOLERANCE

    r = json.loads((ROOT / "experiments/results/stability_restarts.json").read_text(encoding="utf-8"))
    assert RULE == "consensus"
    for distance, s in r["sweep"].items():
        assert (MATCH_FLOOR[distance], TOLERANCE[distance], MARGIN[distance]) == (
            s["floor"], s["tolerance"], s["margin"]), distance
    assert DEFAULT_DISTANCE == r["default_distance"]
    assert {row["corpus"] for row in r["real_table"]} == {"sotu", "gnu-info"}
    assert {row["library"] for row in r["real_table"]} == {"tomotopy", "gensim", "sklearn"}


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
                              "--csv", tmp_path / "s.csv", "--floor", "0.45"])
    assert code == 0, err
    assert "STUCK r2.npz" in out
    assert "stuck restart(s) at K = 6: r2.npz apart from the 2 of the 3 restarts that agree" in out
    assert "topics matched across restarts" in out and "(reference)" in out
    doc = json.loads((tmp_path / "s.json").read_text())
    assert doc["command"] == "stability" and list(doc["flagged"]) == ["r2.npz"]
    assert doc["finding"] == "stuck" and len(doc["aligned"]) == 6
    assert (tmp_path / "s.csv").read_text().splitlines()[0].startswith("model,topic,stability")
    one_line_error(["stability", paths[0]], "at least 2")
    one_line_error(["stability", *paths[:2], "--tolerance", "1"],
                   "argument --tolerance: must be a finite number >= 0.0 and < 1.0, got 1.0")


def test_the_report_shows_the_aligned_table():
    """The report of a stability result: one row per topic of the reference restart, each cell of
    another restart its matched topic (from the JSON's matching), similarity and top words."""
    from tealeaves.report import render

    m = tl.synthetic.random_model(5, 150, beta=0.05, seed=12, name="m")
    perm = np.array([2, 4, 0, 1, 3])
    r = stability([m, lda(m.phi[perm], "p", m.vocab)])
    html = render([{**r.to_dict(), "command": "stability"}])
    assert "Topics matched across the 5-topic restarts" in html
    ref, other = r.reference, "p" if r.reference == "m" else "m"
    for row in r.aligned():
        j = row["matches"][other][0]
        want = np.argsort(perm)[row["topic"]] if ref == "m" else perm[row["topic"]]
        assert j == want
        assert f"{j} (1.00): {' '.join(r.words[other][j])}" in html


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


def test_the_recommendation_says_each_finding_once_not_a_flag_per_restart():
    """Issue 33: every restart of every K was a 'Restart flagged by stability' bullet (six filled
    select's recommendation). Now: the chosen K's finding, once; evaluate's groups one sentence each."""
    from tealeaves.report import recommend
    from tealeaves.select import restart_stability

    rng = np.random.default_rng(0)
    words = [[f"w{i}" for i in rng.permutation(200)[:10]] for _ in range(60)]  # unrelated topics
    evals = [{"model": f"K{k}-r{r}", "topics": k, "topic_words": words[(r * k) % 50:(r * k) % 50 + k]}
             for k in (5, 10) for r in range(3)]
    stab = restart_stability(evals)
    assert [g["finding"] for g in stab] == ["unstable", "unstable"]
    doc = {"decision": {"rule": "best-train", "k": 10, "why": "K = 10 is best", "comparisons": []},
           "choice": {}, "stability": stab}
    _, reasons = recommend.select(doc)
    said = [r for r in reasons if "stab" in r.lower()]
    assert len(said) == 1 and said[0].startswith("Stability: Unstable at K = 10: no two of the 3 restarts")
    assert not any("flagged" in r for r in reasons)
    _, reasons = recommend.evaluate({"rows": [{"model": "a", "topics": 5, "per_token": -7.0}],
                                     "groups": [["a"]], "stability": stab})
    assert [r for r in reasons if r.startswith("Stability:")] == [
        f"Stability: {g['finding_text'][0].upper()}{g['finding_text'][1:]}." for g in stab]
