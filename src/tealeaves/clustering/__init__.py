"""Clustering measures against gold labels: B-Cubed (Bagga & Baldwin 1998, as the source README
defines it), its extended form for items with several labels (Amigó et al. 2009), purity,
inverse purity and normalised mutual information."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import MethodError
from ..output.display import Display
from ..util.limits import check_memory

__all__ = ["bcubed", "extended_bcubed", "BCubedResult", "purity", "inverse_purity", "nmi", "as_labels"]


def as_labels(x: Any, name: str) -> np.ndarray:
    """A label array, or the argmax of a doc-topic matrix. A missing label (NaN, None) is an
    error: NaN is not equal to itself, so it would silently form clusters of its own."""
    arr = np.asarray(x)
    if arr.ndim not in (1, 2):
        raise MethodError(f"{name} must be a label array or a documents x topics matrix, "
                          f"got shape {arr.shape}")
    if arr.dtype.kind == "c" or (arr.ndim == 2 and arr.dtype.kind not in "iuf"):
        raise MethodError(f"{name}: a documents x topics matrix must be real numbers, got {arr.dtype}")
    if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
        where = tuple(np.argwhere(~np.isfinite(arr))[0])
        raise MethodError(f"{name}: item {where[0]} has a missing or non-finite label ({float(arr[where])})")
    if arr.dtype.kind == "O":
        bad = next((i for i, v in enumerate(arr) if v is None or (isinstance(v, float) and v != v)), None)
        if bad is not None:
            raise MethodError(f"{name}: item {bad} has a missing label ({arr[bad]!r})")
    if arr.ndim == 2:
        arr = arr.argmax(axis=1)
    return arr


@dataclass(repr=False)
class BCubedResult(Display):
    item_precision: np.ndarray
    item_recall: np.ndarray
    clusters: np.ndarray  # cluster ids, in the order of the per-cluster arrays
    cluster_precision: np.ndarray
    cluster_recall: np.ndarray
    cluster_f: np.ndarray
    classes: np.ndarray
    class_precision: np.ndarray
    class_recall: np.ndarray
    class_f: np.ndarray

    @property
    def item_f(self) -> np.ndarray:
        p, r = self.item_precision, self.item_recall
        return np.where(p + r > 0, 2 * p * r / np.maximum(p + r, 1e-300), 0.0)

    @property
    def precision(self) -> float:
        return float(self.item_precision.mean())

    @property
    def recall(self) -> float:
        return float(self.item_recall.mean())

    @property
    def f(self) -> float:
        """Mean over items of B(d) = 2 P(d) R(d) / (P(d) + R(d)) (the source README)."""
        return float(self.item_f.mean())

    @property
    def f_of_means(self) -> float:
        """2 P R / (P + R) of the averaged precision and recall (Amigó et al. 2009)."""
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    _name = "BCubedResult"

    def _headline(self) -> list[tuple[str, Any]]:
        return [("precision", self.precision), ("recall", self.recall), ("F", self.f),
                ("items", len(self.item_precision))]

    def _columns(self) -> tuple[str, dict[str, Any]]:
        return "item", {"precision": self.item_precision, "recall": self.item_recall, "f": self.item_f}

    def to_dict(self) -> dict[str, Any]:
        return {"task": "bcubed", "precision": self.precision, "recall": self.recall, "f": self.f,
                "f_of_means": self.f_of_means,
                "per_cluster": [{"cluster": _plain(c), "precision": float(p), "recall": float(r),
                                 "f": float(f)} for c, p, r, f in zip(self.clusters, self.cluster_precision,
                                                      self.cluster_recall, self.cluster_f,
                                                      strict=True)],
                "per_class": [{"class": _plain(c), "precision": float(p), "recall": float(r), "f": float(f)}
                              for c, p, r, f in zip(self.classes, self.class_precision,
                                                    self.class_recall, self.class_f, strict=True)],
                "items": len(self.item_precision)}


def _plain(v):
    return v.item() if hasattr(v, "item") else v


def _group_means(keys: np.ndarray, values: Sequence[np.ndarray]):
    uniq, inv = np.unique(keys, return_inverse=True)
    sizes = np.bincount(inv)
    return uniq, [np.bincount(inv, weights=v) / sizes for v in values]


def bcubed(pred, gold) -> BCubedResult:
    """B-Cubed of a clustering `pred` against gold classes `gold` (label arrays or doc-topic
    matrices): for item d in cluster c and class l, P(d) = |c ∩ l| / |c|, R(d) = |c ∩ l| / |l|;
    averaged over all items, per cluster and per gold class."""
    c = as_labels(pred, "pred")
    g = as_labels(gold, "gold")
    if c.shape != g.shape:
        raise MethodError(f"pred has {c.size} items but gold has {g.size}")
    if c.size == 0:
        raise MethodError("no items to score")
    _, ci = np.unique(c, return_inverse=True)
    _, gi = np.unique(g, return_inverse=True)
    table = _contingency(ci, gi)
    both = table[ci, gi].astype(np.float64)
    p = both / table.sum(axis=1)[ci]
    r = both / table.sum(axis=0)[gi]
    res = BCubedResult(p, r, *([None] * 8))  # type: ignore[arg-type]
    f = res.item_f
    res.clusters, (res.cluster_precision, res.cluster_recall, res.cluster_f) = _group_means(c, (p, r, f))
    res.classes, (res.class_precision, res.class_recall, res.class_f) = _group_means(g, (p, r, f))
    return res


def extended_bcubed(pred: Sequence[set], gold: Sequence[set]) -> tuple[float, float, float]:
    """Extended B-Cubed (Amigó et al. 2009) for items with several clusters / classes:
    multiplicity precision of (e, e') = min(|C(e)∩C(e')|, |L(e)∩L(e')|) / |C(e)∩C(e')| over e'
    sharing a cluster with e, recall likewise over e' sharing a class; returns (P, R, F) with
    F the harmonic mean of the averages."""
    if len(pred) != len(gold):
        raise MethodError(f"pred has {len(pred)} items but gold has {len(gold)}")
    n = len(pred)
    if n == 0:
        raise MethodError("no items to score")
    P = np.zeros(n)
    R = np.zeros(n)
    for i in range(n):
        ps, rs = [], []
        for j in range(n):
            cc = len(pred[i] & pred[j])
            ll = len(gold[i] & gold[j])
            if cc:
                ps.append(min(cc, ll) / cc)
            if ll:
                rs.append(min(cc, ll) / ll)
        P[i] = np.mean(ps) if ps else 0.0
        R[i] = np.mean(rs) if rs else 0.0
    p, r = float(P.mean()), float(R.mean())
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def _table(pred, gold) -> np.ndarray:
    c = as_labels(pred, "pred")
    g = as_labels(gold, "gold")
    if c.shape != g.shape:
        raise MethodError(f"pred has {c.size} items but gold has {g.size}")
    _, ci = np.unique(c, return_inverse=True)
    _, gi = np.unique(g, return_inverse=True)
    return _contingency(ci, gi)


def _contingency(ci: np.ndarray, gi: np.ndarray) -> np.ndarray:
    """Clusters x classes counts; its size is checked against memory first (a million distinct
    labels on each side would need 8 TB)."""
    rows, cols = int(ci.max()) + 1, int(gi.max()) + 1
    check_memory(f"a {rows:,} clusters x {cols:,} classes table", 8.0 * rows * cols,
                  how="one int64 per pair of distinct labels")
    table = np.zeros((rows, cols), np.int64)
    np.add.at(table, (ci, gi), 1)
    return table


def purity(pred, gold) -> float:
    t = _table(pred, gold)
    return float(t.max(axis=1).sum() / t.sum())


def inverse_purity(pred, gold) -> float:
    t = _table(pred, gold)
    return float(t.max(axis=0).sum() / t.sum())


def nmi(pred, gold) -> float:
    """Mutual information normalised by the arithmetic mean of the two entropies (the default of
    scikit-learn's normalized_mutual_info_score)."""
    t = _table(pred, gold).astype(np.float64)
    n = t.sum()
    pc, pg, pj = t.sum(axis=1) / n, t.sum(axis=0) / n, t / n
    nz = pj > 0
    mi = float((pj[nz] * np.log(pj[nz] / np.outer(pc, pg)[nz])).sum())
    hc = -float((pc * np.log(pc)).sum())
    hg = -float((pg * np.log(pg)).sum())
    if hc == 0 and hg == 0:
        return 1.0
    return mi / ((hc + hg) / 2) if hc + hg > 0 else math.nan
