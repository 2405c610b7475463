"""B-Cubed and companions against hand-worked examples and an independent implementation."""

import math

import numpy as np
import pytest

import tealeaves as tl
from tealeaves.clustering import extended_bcubed, inverse_purity, nmi, purity


def test_bcubed_worked_example():
    pred = ["a", "a", "b", "b", "c"]
    gold = ["x", "x", "x", "y", "y"]
    res = tl.bcubed(pred, gold)
    # P(d) = |cluster ∩ class| / |cluster|, R(d) = |cluster ∩ class| / |class|
    np.testing.assert_allclose(res.item_precision, [1, 1, 0.5, 0.5, 1])
    np.testing.assert_allclose(res.item_recall, [2 / 3, 2 / 3, 1 / 3, 1 / 2, 1 / 2])
    f = [2 * p * r / (p + r) for p, r in zip(res.item_precision, res.item_recall, strict=True)]
    assert res.f == pytest.approx(np.mean(f)) and res.precision == pytest.approx(0.8)
    assert list(res.clusters) == ["a", "b", "c"]
    np.testing.assert_allclose(res.cluster_recall, [2 / 3, (1 / 3 + 1 / 2) / 2, 1 / 2])
    np.testing.assert_allclose(res.class_precision, [(1 + 1 + 0.5) / 3, (0.5 + 1) / 2])
    assert purity(pred, gold) == pytest.approx(4 / 5)
    assert inverse_purity(pred, gold) == pytest.approx(3 / 5)


def test_doc_topic_matrix_input_and_perfect_clustering():
    theta = np.array([[0.9, 0.1], [0.8, 0.2], [0.1, 0.9]])
    res = tl.bcubed(theta, ["u", "u", "v"])
    assert res.precision == res.recall == res.f == 1.0
    assert nmi(theta, ["u", "u", "v"]) == pytest.approx(1.0)


def test_nmi_by_hand():
    pred, gold = [0, 0, 1, 1], [0, 1, 0, 1]
    assert nmi(pred, gold) == pytest.approx(0.0, abs=1e-12)
    pred, gold = [0, 0, 1, 1], [0, 0, 0, 1]
    # I = sum p(c,g) log p(c,g)/(p(c)p(g)); H(C) = log 2, H(G) = -(3/4 log 3/4 + 1/4 log 1/4)
    mi = 0.5 * math.log(0.5 / (0.5 * 0.75)) + 0.25 * math.log(0.25 / (0.5 * 0.75)) + 0.25 * math.log(
        0.25 / (0.5 * 0.25))
    hg = -(0.75 * math.log(0.75) + 0.25 * math.log(0.25))
    assert nmi(pred, gold) == pytest.approx(mi / ((math.log(2) + hg) / 2))


def test_length_mismatch():
    with pytest.raises(tl.MethodError, match="pred has 2 items but gold has 3"):
        tl.bcubed([0, 1], [0, 1, 1])


bcubed_pkg = pytest.importorskip("bcubed")


def test_extended_bcubed_equals_the_bcubed_package():
    rng = np.random.default_rng(1)
    n = 40
    pred = [set(rng.choice(5, size=rng.integers(1, 3), replace=False).tolist()) for _ in range(n)]
    gold = [set(rng.choice(4, size=rng.integers(1, 3), replace=False).tolist()) for _ in range(n)]
    cdict = dict(enumerate(pred))
    ldict = dict(enumerate(gold))
    p, r, f = extended_bcubed(pred, gold)
    assert p == pytest.approx(bcubed_pkg.precision(cdict, ldict), abs=1e-12)
    assert r == pytest.approx(bcubed_pkg.recall(cdict, ldict), abs=1e-12)
    assert f == pytest.approx(bcubed_pkg.fscore(p, r), abs=1e-12)
    single = tl.bcubed([min(s) for s in pred], [min(s) for s in gold])
    cd = {i: {min(s)} for i, s in enumerate(pred)}
    ld = {i: {min(s)} for i, s in enumerate(gold)}
    assert single.precision == pytest.approx(bcubed_pkg.precision(cd, ld), abs=1e-12)
    assert single.recall == pytest.approx(bcubed_pkg.recall(cd, ld), abs=1e-12)
