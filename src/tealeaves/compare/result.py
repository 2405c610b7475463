"""Results of comparing models: `CompareResult` (log P(w | A) - log P(w | B) per document) and
`CurveResult` (log P(w | M_i) for a sequence of models)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.special import logsumexp

from ..display import Display
from ..heldout.result import PerDocumentTotals, doc_log_mean
from ..jsonout import json_float


def ratio_from_chains(start: np.ndarray, path: np.ndarray) -> np.ndarray:
    """Per-document log ratio from M chains (axis 0): the start weights act as importance
    weights of the chains' starting states, log (sum_m wS_m wP_m / sum_m wS_m)."""
    return logsumexp(start + path, axis=0) - logsumexp(start, axis=0)


def bootstrap_over_chains(start: np.ndarray, path: np.ndarray, sign: float, resamples: int,
                          seed: int) -> float:
    """sd of sum_d sign * ratio_d when each document's chains are resampled with replacement."""
    M, D = start.shape
    if M < 2 or resamples < 2 or D == 0:
        return float("nan")
    rng = np.random.default_rng(np.random.SeedSequence([seed, 0xC4A1]))
    totals = np.zeros(resamples)
    chunk = max(1, 2_000_000 // (resamples * M))
    for lo in range(0, D, chunk):
        s, p = start[:, lo : lo + chunk], path[:, lo : lo + chunk]
        idx = rng.integers(0, M, size=(resamples, M, s.shape[1]))
        s_b = np.take_along_axis(s[None], idx, axis=1)
        p_b = np.take_along_axis(p[None], idx, axis=1)
        totals += sign * (logsumexp(s_b + p_b, axis=1) - logsumexp(s_b, axis=1)).sum(axis=1)
    return float(totals.std(ddof=1))


@dataclass
class DirectionEstimate:
    """One direction of Ratio-AIS. `start_log_weight` (M x D): the weights of the chains'
    starting states (0 with a burn-in start); `path_log_weight`: the annealing weights. Forward
    anneals B -> A; reverse anneals A -> B and its ratio is negated."""

    direction: str
    start_log_weight: np.ndarray
    path_log_weight: np.ndarray
    log_scale: np.ndarray  # (D,) row scales: start weight + log_scale estimates log P(w | source)
    sd: float = float("nan")

    @property
    def sign(self) -> float:
        return 1.0 if self.direction == "forward" else -1.0

    @property
    def doc_log_ratio(self) -> np.ndarray:
        return self.sign * ratio_from_chains(self.start_log_weight, self.path_log_weight)

    @property
    def total(self) -> float:
        return float(self.doc_log_ratio.sum())

    def doc_sd(self, resamples: int = 400, seed: int = 0) -> np.ndarray:
        """Each document's sd of the log ratio when its chains are resampled (NaN with one chain)."""
        M, D = self.start_log_weight.shape
        if M < 2:
            return np.full(D, np.nan)
        rng = np.random.default_rng(np.random.SeedSequence([seed, 0xD5D]))
        idx = rng.integers(0, M, size=(resamples, M))
        s, p = self.start_log_weight[idx], self.path_log_weight[idx]  # (B, M, D)
        r = logsumexp(s + p, axis=1) - logsumexp(s, axis=1)
        return r.std(axis=0, ddof=1)

    @property
    def source_log_prob(self) -> np.ndarray:
        """With an AIS start: estimate of log P(w_d | source model) (B forward, A reverse)."""
        return doc_log_mean(self.start_log_weight) + self.log_scale


@dataclass(repr=False)
class CompareResult(PerDocumentTotals, Display):
    """log P(w_d | A) - log P(w_d | B) for every document, with its uncertainty."""

    method: str
    params: dict[str, Any]
    model_a: str
    model_b: str
    doc_log_ratio: np.ndarray
    doc_tokens: np.ndarray
    sd_chains: float
    seconds: float
    seed: int
    workers: int
    corpus: dict[str, Any]
    forward: DirectionEstimate | None = None
    reverse: DirectionEstimate | None = None
    site_updates: float = 0.0
    bootstrap: int = 10000
    extra: dict[str, Any] = field(default_factory=dict)

    def _doc_values(self) -> np.ndarray:
        return self.doc_log_ratio

    @property
    def perplexity_ratio(self) -> float:
        """PP_A / PP_B = exp(-(log P(W|A) - log P(W|B)) / tokens); below 1 means A is better."""
        return math.exp(-self.per_token) if self.tokens else float("nan")

    @property
    def gap(self) -> float:
        """reverse total - forward total: the bracket's width (both directions only)."""
        if self.forward is None or self.reverse is None:
            return float("nan")
        return self.reverse.total - self.forward.total

    @property
    def favour(self) -> dict[str, int]:
        scored = self.doc_tokens > 0
        r = self.doc_log_ratio[scored]
        return {"a": int((r > 0).sum()), "b": int((r < 0).sum()), "tie": int((r == 0).sum())}

    def document_bootstrap(self, resamples: int | None = None) -> dict[str, float]:
        """Resampling documents with replacement: sd of the total and a 95% interval of the
        per-token difference (the test set's sampling variability; chain noise is in sd_chains)."""
        B = self.bootstrap if resamples is None else resamples
        D = self.doc_log_ratio.size
        if D < 2 or B < 2 or not self.tokens:
            return {"sd_total": float("nan"), "per_token_low": float("nan"),
                    "per_token_high": float("nan")}
        rng = np.random.default_rng(np.random.SeedSequence([self.seed, 0xD0C5]))
        idx = rng.integers(0, D, size=(B, D))
        totals = self.doc_log_ratio[idx].sum(axis=1)
        tokens = self.doc_tokens[idx].sum(axis=1)
        per = totals / np.maximum(tokens, 1)
        chain_sd_per_token = 0.0 if math.isnan(self.sd_chains) else self.sd_chains / self.tokens
        spread = np.percentile(per, [2.5, 97.5])
        widen = 1.96 * chain_sd_per_token  # add the chains' own noise, conservatively
        return {"sd_total": float(totals.std(ddof=1)),
                "per_token_low": float(spread[0] - widen),
                "per_token_high": float(spread[1] + widen)}

    def per_token_interval(self) -> tuple[float, float]:
        """The reported 95% interval of the per-token difference (`document_bootstrap`)."""
        b = self.document_bootstrap()
        return b["per_token_low"], b["per_token_high"]

    def document_intervals(self) -> tuple[np.ndarray, np.ndarray]:
        """Per document: the forward-reverse bracket widened by 1.96 chain sd on each side (one
        direction: its estimate +- 1.96 chain sd). On average forward <= exact <= reverse;
        for one document that holds only with enough temperatures (docs/compare_coverage.md)."""
        ests = [e for e in (self.forward, self.reverse) if e is not None]
        if not ests:
            return self.doc_log_ratio.copy(), self.doc_log_ratio.copy()
        ratios = np.array([e.doc_log_ratio for e in ests])
        sds = np.array([e.doc_sd(seed=self.seed) for e in ests])
        sd = np.zeros(ratios.shape[1]) if np.isnan(sds).all() else np.nan_to_num(sds).max(axis=0)
        return ratios.min(axis=0) - 1.96 * sd, ratios.max(axis=0) + 1.96 * sd

    def verdict(self) -> str:
        b = self.document_bootstrap()
        if b["per_token_low"] > 0:
            return f"A ({self.model_a}) is better"
        if b["per_token_high"] < 0:
            return f"B ({self.model_b}) is better"
        return "no clear winner: the 95% interval of the per-token difference includes 0"

    def to_dict(self) -> dict[str, Any]:
        boot = self.document_bootstrap()
        d: dict[str, Any] = {
            "task": "compare", "method": self.method, "params": self.params,
            "model_a": self.model_a, "model_b": self.model_b,
            "total": self.total, "per_token": json_float(self.per_token),
            "perplexity_ratio": json_float(self.perplexity_ratio),
            "sd_chains": json_float(self.sd_chains),
            "sd_documents": json_float(boot["sd_total"]),
            "per_token_interval": [json_float(boot["per_token_low"]), json_float(boot["per_token_high"])],
            "verdict": self.verdict(), "documents_favouring": self.favour,
            "tokens": self.tokens, "seconds": self.seconds, "seed": self.seed,
            "workers": self.workers, "site_updates": self.site_updates, "corpus": self.corpus,
            "documents": {"log_ratio": [json_float(v) for v in self.doc_log_ratio],
                          "tokens": [int(v) for v in self.doc_tokens],
                          "interval": [[json_float(lo), json_float(hi)]
                                       for lo, hi in zip(*self.document_intervals(), strict=True)]},
        }
        for est in (self.forward, self.reverse):
            if est is not None:
                d[est.direction] = {"total": est.total, "sd_chains": json_float(est.sd),
                                    "log_ratio": [json_float(v) for v in est.doc_log_ratio]}
        if self.forward is not None and self.reverse is not None:
            d["gap"] = self.gap
        d.update(self.extra)
        return d

    _name = "CompareResult"

    def _headline(self) -> list[tuple[str, Any]]:
        lo, hi = self.per_token_interval()
        return [("method", self.method), ("log P(W|A) - log P(W|B)", round(self.total, 3)),
                ("per token", self.per_token), ("95% interval", f"[{lo:+.5f}, {hi:+.5f}]"),
                ("PP_A / PP_B", self.perplexity_ratio), ("verdict", self.verdict())]

    def _columns(self) -> tuple[str, dict[str, Any]]:
        lo, hi = self.document_intervals()
        cols: dict[str, Any] = {"log_ratio": self.doc_log_ratio, "tokens": self.doc_tokens,
                                "interval_low": lo, "interval_high": hi}
        for est in (self.forward, self.reverse):
            if est is not None:
                cols[est.direction] = est.doc_log_ratio
        return "document", cols


@dataclass(repr=False)
class CurveResult(Display):
    """Iteration-AIS: log P(w_d | M_i) for models M_1..M_K from one annealing chain per
    document and chain. `cumulative_log_weight` is (chains, K, D)."""

    models: list[str]
    cumulative_log_weight: np.ndarray
    doc_tokens: np.ndarray
    params: dict[str, Any]
    seconds: float
    seed: int
    workers: int
    corpus: dict[str, Any]
    sd: np.ndarray = field(default_factory=lambda: np.zeros(0))

    @property
    def doc_log_prob(self) -> np.ndarray:
        """(K, D): log of the mean over chains of exp(cumulative log weight)."""
        return doc_log_mean(self.cumulative_log_weight)

    @property
    def totals(self) -> np.ndarray:
        return self.doc_log_prob.sum(axis=1)

    @property
    def tokens(self) -> int:
        return int(self.doc_tokens.sum())

    @property
    def per_token(self) -> np.ndarray:
        return self.totals / self.tokens if self.tokens else np.full(len(self.models), np.nan)

    @property
    def perplexity(self) -> np.ndarray:
        return np.exp(-self.per_token)

    _name = "CurveResult"

    def _headline(self) -> list[tuple[str, Any]]:
        return [("models", len(self.models)), ("tokens", self.tokens),
                ("per token", ", ".join(f"{v:.4f}" for v in self.per_token))]

    def _columns(self) -> tuple[str, dict[str, Any]]:
        sd = self.sd if len(self.sd) == len(self.models) else np.full(len(self.models), np.nan)
        return "model", {"model": self.models, "total": self.totals, "sd": sd, "per_token": self.per_token,
                         "perplexity": self.perplexity}

    def to_dict(self) -> dict[str, Any]:
        return {
            "task": "curve", "models": self.models, "params": self.params,
            "totals": [float(v) for v in self.totals],
            "sd": [json_float(v) for v in self.sd],
            "per_token": [json_float(v) for v in self.per_token],
            "perplexity": [json_float(v) for v in self.perplexity],
            "tokens": self.tokens, "seconds": self.seconds, "seed": self.seed,
            "workers": self.workers, "corpus": self.corpus,
            "documents": {"log_prob": [[json_float(v) for v in row] for row in self.doc_log_prob],
                          "tokens": [int(v) for v in self.doc_tokens]},
        }
