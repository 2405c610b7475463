"""Results of comparing models: `CompareResult` (log P(w | A) - log P(w | B) per document) and
`CurveResult` (log P(w | M_i) for a sequence of models)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import MethodError
from ..heldout.result import PerDocumentTotals, bootstrap_bytes, doc_log_mean, sd_note
from ..heldout.result import perplexity as perplexity_of
from ..output.display import Display
from ..output.jsonout import json_float
from ..util.limits import check_bootstrap
from . import intervals as iv
from .intervals import Interval


def ratio_from_chains(start: np.ndarray, path: np.ndarray) -> np.ndarray:
    """Per-document log ratio from M chains (axis 0): the start weights act as importance
    weights of the chains' starting states, log (sum_m wS_m wP_m / sum_m wS_m)."""
    from scipy.special import logsumexp

    return logsumexp(start + path, axis=0) - logsumexp(start, axis=0)


BLOCK = 4_000_000  # values a document bootstrap draws at once


def bootstrap_over_chains(start: np.ndarray, path: np.ndarray, sign: float, resamples: int,
                          seed: int) -> float:
    """sd of sum_d sign * ratio_d when each document's chains are resampled with replacement."""
    from scipy.special import logsumexp

    M, D = start.shape
    if M < 2 or resamples < 2 or D == 0:
        return float("nan")
    check_bootstrap(resamples, float(M) * D, bootstrap_bytes(resamples, M, 2e6))  # callers check first
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
        from scipy.special import logsumexp

        M, D = self.start_log_weight.shape
        if M < 2:
            return np.full(D, np.nan)
        step = max(1, BLOCK // (resamples * M))  # documents a block at a time: the same draws, bounded memory
        check_bootstrap(resamples, float(M) * D, 8.0 * resamples * M + 3 * 8.0 * resamples * M * min(step, D))
        rng = np.random.default_rng(np.random.SeedSequence([seed, 0xD5D]))
        idx = rng.integers(0, M, size=(resamples, M))
        out = np.empty(D)
        for lo in range(0, D, step):
            s = self.start_log_weight[idx, lo:lo + step]  # (B, M, d)
            p = self.path_log_weight[idx, lo:lo + step]
            out[lo:lo + step] = (logsumexp(s + p, axis=1) - logsumexp(s, axis=1)).std(axis=0, ddof=1)
        return out

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
    run_log_prob_a: np.ndarray | None = None  # method "difference": (runs, D) of each model
    run_log_prob_b: np.ndarray | None = None

    def _doc_values(self) -> np.ndarray:
        return self.doc_log_ratio

    @property
    def documents(self) -> int:
        """Documents with at least one scored token (the D of the population interval)."""
        return int((self.doc_tokens > 0).sum())


    @property
    def perplexity_ratio(self) -> float:
        """PP_A / PP_B = exp(-(log P(W|A) - log P(W|B)) / tokens); below 1 means A is better."""
        return perplexity_of(self.per_token) if self.tokens else float("nan")

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
        """sd of the total when documents are resampled with replacement (the test set's sampling
        variability; chain noise is in sd_chains). Intervals: `interval()`."""
        B = self.bootstrap if resamples is None else resamples
        D = self.doc_log_ratio.size
        if D < 2 or B < 2 or not self.tokens:
            return {"sd_total": float("nan")}
        rows = max(1, BLOCK // D)  # resamples drawn a block at a time: the same draws, bounded memory
        check_bootstrap(B, float(D), 8.0 * B + 2 * 8.0 * rows * D)
        rng = np.random.default_rng(np.random.SeedSequence([self.seed, 0xD0C5]))
        totals = np.concatenate([self.doc_log_ratio[rng.integers(0, D, size=(min(rows, B - lo), D))]
                                 .sum(axis=1) for lo in range(0, B, rows)])
        return {"sd_total": float(totals.std(ddof=1))}

    def interval(self, scope: str = "population") -> Interval:
        """The 95% interval of the per-token difference about the `population` the documents
        were drawn from (jackknife t interval over documents: document sampling + estimator noise)
        or about these `documents` (estimator noise only). See `tealeaves.compare.intervals`."""
        if scope == "population":
            return self._population_interval()
        if scope == "documents":
            return self._documents_interval()
        raise MethodError(f"scope must be population or documents, got {scope!r}")

    def intervals(self) -> dict[str, Interval]:
        return {s: self.interval(s) for s in iv.ABOUT}

    def per_token_interval(self, scope: str = "population") -> tuple[float, float]:
        """(low, high) of `interval(scope)`."""
        i = self.interval(scope)
        return i.low, i.high

    def _population_interval(self) -> Interval:
        D = self.documents
        how = "t with the jackknife variance of sum d / sum n, documents - 1 degrees of freedom"
        if D < 2:
            return iv.unavailable("population", how, D,
                                  f"{D} scored document(s): no spread between documents")
        keep = self.doc_tokens > 0
        lo, hi = iv.jackknife_t(self.doc_log_ratio[keep], self.doc_tokens[keep].astype(float))
        return Interval(lo, hi, "population", how, D, warning=iv.small_sample_warning(D))

    def _documents_interval(self) -> Interval:
        D, n = self.documents, self.tokens
        if not n:
            return iv.unavailable("documents", "-", D, "no scored tokens")
        if self.method == "difference":
            how = "t on the runs' spread (Welch-Satterthwaite)"
            if self.run_log_prob_a is None or self.run_log_prob_b is None:
                return iv.unavailable("documents", how, D, "the runs were not kept")
            if min(self.run_log_prob_a.shape[0], self.run_log_prob_b.shape[0]) < 2:
                return iv.unavailable("documents", how, D, "1 run: no run-to-run spread (use runs >= 2)")
            var, dfs = iv.difference_variances(self.run_log_prob_a, self.run_log_prob_b)
            lo, hi = iv.welch(self.total, var.reshape(-1), np.tile(dfs, var.shape[0]))
            return Interval(float(lo) / n, float(hi) / n, "documents", how, D)
        ests = [e for e in (self.forward, self.reverse) if e is not None]
        how = ("the forward-reverse bracket widened by 1.96 chain sd" if len(ests) == 2
               else "the estimate +- 1.96 chain sd")
        if not ests:
            return iv.unavailable("documents", how, D, "no chains were kept")
        sd = max(e.sd for e in ests)
        if not math.isfinite(sd):
            return iv.unavailable("documents", how, D, "1 chain: no spread between chains (use chains >= 2)")
        totals = [e.total for e in ests]
        return Interval((min(totals) - 1.96 * sd) / n, (max(totals) + 1.96 * sd) / n, "documents", how, D)

    def document_intervals(self) -> tuple[np.ndarray, np.ndarray]:
        """Per document, about that document (estimator noise only). Ratio-AIS: the
        forward-reverse bracket widened by 1.96 chain sd on each side (one direction: its
        estimate +- 1.96 chain sd); on average forward <= exact <= reverse, for one document
        only with enough temperatures (docs/compare_coverage.md). Difference: a Welch t interval
        from each model's run-to-run spread. NaN where unavailable (`document_interval_reason`)."""
        D = self.doc_log_ratio.size
        if self.document_interval_reason is not None:
            return np.full(D, np.nan), np.full(D, np.nan)
        if self.method == "difference":
            var, dfs = iv.difference_variances(self.run_log_prob_a, self.run_log_prob_b)
            return iv.welch(self.doc_log_ratio, var, dfs)
        ests = [e for e in (self.forward, self.reverse) if e is not None]
        ratios = np.array([e.doc_log_ratio for e in ests])
        sd = np.array([e.doc_sd(seed=self.seed) for e in ests]).max(axis=0)
        return ratios.min(axis=0) - 1.96 * sd, ratios.max(axis=0) + 1.96 * sd

    @property
    def document_interval_reason(self) -> str | None:
        """Why the per-document intervals are unavailable (None when they are given)."""
        if self.method == "difference":
            if self.run_log_prob_a is None or self.run_log_prob_b is None:
                return "the runs were not kept"
            if min(self.run_log_prob_a.shape[0], self.run_log_prob_b.shape[0]) < 2:
                return "1 run: no run-to-run spread (use runs >= 2)"
            return None
        if not any(e is not None for e in (self.forward, self.reverse)):
            return "no chains were kept"
        if min(e.start_log_weight.shape[0] for e in (self.forward, self.reverse) if e is not None) < 2:
            return "1 chain: no spread between chains (use chains >= 2)"
        return None

    def verdict_interval(self) -> Interval:
        """The interval the verdict rests on: the population one, or with fewer than two
        documents the one about these documents."""
        pop = self.interval("population")
        return pop if pop.available or self.documents >= 2 else self.interval("documents")

    def verdict(self) -> str:
        i = self.verdict_interval()
        where = "in the population" if i.scope == "population" else "on these documents"
        if not i.available:
            return f"no verdict: the interval is unavailable ({i.reason})"
        if i.low > 0:
            return f"A ({self.model_a}) is better {where}"
        if i.high < 0:
            return f"B ({self.model_b}) is better {where}"
        return f"no clear winner {where}: the 95% interval of the per-token difference includes 0"

    def to_dict(self) -> dict[str, Any]:
        boot = self.document_bootstrap()
        ints = self.intervals()
        v = self.verdict_interval()
        dlo, dhi = self.document_intervals()
        d: dict[str, Any] = {
            "task": "compare", "method": self.method, "params": self.params,
            "model_a": self.model_a, "model_b": self.model_b,
            "total": self.total, "per_token": json_float(self.per_token),
            "perplexity_ratio": json_float(self.perplexity_ratio),
            "sd_chains": json_float(self.sd_chains),
            "sd_documents": json_float(boot["sd_total"]),
            "per_token_interval": [json_float(v.low), json_float(v.high)],
            "per_token_interval_scope": v.scope, "per_token_interval_about": v.about,
            "warning": v.warning,
            "intervals": {k: i.to_dict() for k, i in ints.items()},
            "verdict": self.verdict(), "documents_favouring": self.favour,
            "tokens": self.tokens, "seconds": self.seconds, "seed": self.seed,
            "workers": self.workers, "site_updates": self.site_updates, "corpus": self.corpus,
            "documents": {"log_ratio": [json_float(x) for x in self.doc_log_ratio],
                          "tokens": [int(x) for x in self.doc_tokens],
                          "interval": [[json_float(lo), json_float(hi)]
                                       for lo, hi in zip(dlo, dhi, strict=True)],
                          "interval_about": "each document (estimator noise only)",
                          "interval_unavailable": self.document_interval_reason},
        }
        for est in (self.forward, self.reverse):
            if est is not None:
                d[est.direction] = {"total": est.total, "sd_chains": json_float(est.sd),
                                    "log_ratio": [json_float(x) for x in est.doc_log_ratio]}
        if self.forward is not None and self.reverse is not None:
            d["gap"] = self.gap
        d.update(self.extra)
        return d

    _name = "CompareResult"

    def _headline(self) -> list[tuple[str, Any]]:
        ints = self.intervals()
        out = [("method", self.method), ("log P(W|A) - log P(W|B)", round(self.total, 3)),
               ("per token", self.per_token)]
        for scope, i in ints.items():
            label = "population" if scope == "population" else "these documents"
            out.append((f"95% interval ({label})", i.short()))
        out += [("PP_A / PP_B", self.perplexity_ratio), ("verdict", self.verdict())]
        if ints["population"].warning:
            out.append(("warning", f"only {self.documents} documents, coverage measured from "
                                   f"{iv.POPULATION_MIN_DOCUMENTS}"))
        return out

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
    def sd_note(self) -> str | None:
        """Why the sd is missing (NaN), or None (`heldout.result.sd_note`)."""
        if len(self.sd) and np.isfinite(self.sd).all():
            return None
        return sd_note(self.cumulative_log_weight.shape[0], int(self.params.get("bootstrap", 2)),
                       int(self.doc_tokens.size), "chain", "use --chains >= 2")

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
            **({"sd_note": why} if (why := self.sd_note) else {}),
            "per_token": [json_float(v) for v in self.per_token],
            "perplexity": [json_float(v) for v in self.perplexity],
            "tokens": self.tokens, "seconds": self.seconds, "seed": self.seed,
            "workers": self.workers, "corpus": self.corpus,
            "documents": {"log_prob": [[json_float(v) for v in row] for row in self.doc_log_prob],
                          "tokens": [int(v) for v in self.doc_tokens]},
        }
