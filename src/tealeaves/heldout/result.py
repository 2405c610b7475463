"""`HeldoutResult`, and the run-averaging and bootstrap of section 6.2 of Wallach et al.:
each document's estimate is the mean over runs in probability space, log Pbar(w_d); the total
is sum_d log Pbar(w_d); its standard deviation comes from resampling, for every document
independently, its runs with replacement (10,000 resamples by default)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import MethodError
from ..output.display import Display
from ..output.jsonout import json_float
from ..util.limits import check_bootstrap


def log_mean_exp(x: np.ndarray, axis: int | None = None):
    """log mean exp(x), stably (-inf entries allowed)."""
    from scipy.special import logsumexp

    n = x.size if axis is None else x.shape[axis]
    return logsumexp(x, axis=axis) - math.log(n)


def doc_log_mean(run_log_prob: np.ndarray) -> np.ndarray:
    """log of the mean over runs (axis 0) of exp(run_log_prob), per document."""
    return log_mean_exp(run_log_prob, axis=0)


LOG_PROB_SLACK = 1e-9  # rounding allowed above 0 (a word of probability 1 in every topic sums to ~0)


def impossible_log_prob(log_prob: np.ndarray) -> np.ndarray:
    """Where an estimate of log P(w) (or log P(w2 | w1)) cannot be one: not finite, or above 0 by
    more than rounding (P <= 1 for discrete data). An estimator that gives one has failed
    numerically (red team 7: a subnormal phi overflowed to +inf); its value must not be ranked."""
    x = np.asarray(log_prob, dtype=np.float64)
    return ~np.isfinite(x) | (x > LOG_PROB_SLACK)


def perplexity(per_token: float) -> float:
    """exp(-per_token): +inf when that is past the largest float (per token below about -709.8
    nats: a word of probability 1e-320 is a valid model's), not an OverflowError."""
    return math.exp(-per_token) if -per_token < 709.78 else math.inf


def bootstrap_bytes(resamples: int, runs: int, block: float = 4e6) -> float:
    """Peak memory of `bootstrap_sd` (and `bootstrap_over_chains`): the totals and about four
    arrays of resamples x runs x documents-per-block values, a block holding `block` values
    (at least one document)."""
    return 8.0 * resamples + 4 * 8.0 * max(block, float(resamples) * runs)


def bootstrap_sd(run_log_prob: np.ndarray, resamples: int, seed: int) -> float:
    """Standard deviation of sum_d log mean_r P_rd when each document's runs are resampled
    with replacement. NaN with fewer than two runs (nothing to resample)."""
    from scipy.special import logsumexp

    runs, docs = run_log_prob.shape
    if runs < 2 or resamples < 2 or docs == 0:
        return float("nan")
    check_bootstrap(resamples, float(runs) * docs, bootstrap_bytes(resamples, runs))  # callers check first
    rng = np.random.default_rng(np.random.SeedSequence([seed, 0x7EA1EAF]))
    totals = np.zeros(resamples)
    chunk = max(1, 4_000_000 // (resamples * runs))
    for lo in range(0, docs, chunk):
        block = run_log_prob[:, lo : lo + chunk]  # (runs, c)
        idx = rng.integers(0, runs, size=(resamples, runs, block.shape[1]))
        picked = np.take_along_axis(block[None, :, :], idx, axis=1)  # (B, runs, c)
        totals += (logsumexp(picked, axis=1) - math.log(runs)).sum(axis=1)
    return float(totals.std(ddof=1))


def sd_note(runs: int, resamples: int, docs: int, unit: str = "run",
            advice: str = "use --runs >= 2") -> str | None:
    """Why `bootstrap_sd` (or a spread over documents) has no value, or None when it has one:
    the one reason printed in place of a NaN sd (terminal "—" and a note; JSON `sd_note`)."""
    if docs == 0:
        return "no scored documents"
    if runs < 2:
        return f"{runs} {unit}{'' if runs == 1 else 's'}: no spread between {unit}s ({advice})"
    if resamples < 2:
        return f"--bootstrap {resamples}: too few resamples for an sd (use >= 2; default 10000)"
    return None


def jensen_gap(doc_sd: Any, runs: int) -> float:
    """The expected amount by which the log of an average of `runs` unbiased estimates of P(w) falls
    below log P(w), summed over documents: about half the variance of each document's log mean,
    0.5 * sum_d sd_d^2 / runs (NaN with fewer than two runs or no sd)."""
    sd = np.asarray([np.nan if v is None else v for v in doc_sd], dtype=float)
    if runs < 2 or not sd.size or np.isnan(sd).all():
        return float("nan")
    with np.errstate(over="ignore"):  # a forged sd of 1e300: an infinite gap, not a warning
        return 0.5 * float(np.nansum(sd**2)) / runs


class PerDocumentTotals:
    """`total`, `tokens` and `per_token` for results holding one value per document
    (`_doc_values`) and `doc_tokens`."""

    doc_tokens: np.ndarray

    def _doc_values(self) -> np.ndarray:
        raise NotImplementedError

    @property
    def total(self) -> float:
        return float(self._doc_values().sum())

    @property
    def tokens(self) -> int:
        return int(self.doc_tokens.sum())

    @property
    def per_token(self) -> float:
        return self.total / self.tokens if self.tokens else float("nan")


@dataclass(repr=False)
class HeldoutResult(PerDocumentTotals, Display):
    """Estimates of log P(w_d | Phi, alpha m) (task `heldout`) or log P(w2_d | w1_d, ...)
    (task `completion`) for every document, over `runs` independent runs."""

    method: str
    params: dict[str, Any]
    run_log_prob: np.ndarray  # (runs, D)
    doc_tokens: np.ndarray  # (D,) tokens scored in each document
    seconds: float
    seed: int
    workers: int
    corpus: dict[str, Any]
    model: str = "model"
    task: str = "heldout"
    site_updates: float = 0.0
    sd: float = float("nan")
    bootstrap: int = 10000
    extra: dict[str, Any] = field(default_factory=dict)
    unbiased: bool = False  # the estimate of P(w) (not of its log) is unbiased
    compile_seconds: float = 0.0  # compiling or loading the kernels, before (not in) `seconds`
    # (runs, D): each run's single-run estimate V of Var(P-hat) / P^2 (Lee & Whiteley 2018), or None
    run_rel_var: np.ndarray | None = None

    def __post_init__(self) -> None:
        """The one check of every result built: each run's estimate of each document is finite and
        at most 0 (`impossible_log_prob`); else a one-line error naming the method and documents."""
        wrong = impossible_log_prob(self.run_log_prob)
        bad = np.flatnonzero(wrong.any(axis=0))
        if bad.size:
            value = self.run_log_prob[:, bad[0]][wrong[:, bad[0]]][0]
            docs = ", ".join(map(str, bad[:5])) + (f" and {bad.size - 5} more" if bad.size > 5 else "")
            what = "log P(w)" if self.task == "heldout" else "log P(w2 | w1)"
            plural = "s" if bad.size > 1 else ""
            raise MethodError(f"{self.label}: its estimate of {what} for document{plural} {docs} (of "
                              f"{wrong.shape[1]}, counting from 0) is {value:g}, not a finite number at most "
                              "0 (a probability is at most 1): the estimator failed numerically on them; no "
                              "result is given")

    @property
    def runs(self) -> int:
        return int(self.run_log_prob.shape[0])

    @property
    def sd_note(self) -> str | None:
        """Why `sd` is missing (NaN), or None (`sd_note` of the module)."""
        if math.isfinite(self.sd):
            return None
        return sd_note(self.runs, self.bootstrap, int(self.doc_tokens.size))

    @property
    def doc_sd(self) -> np.ndarray:
        """Run-to-run standard deviation of each document's log estimate (NaN with one run)."""
        if self.runs < 2:
            return np.full(self.run_log_prob.shape[1], np.nan)
        return self.run_log_prob.std(axis=0, ddof=1)

    @property
    def doc_rel_var(self) -> np.ndarray:
        """Each document's estimated relative variance Var(P-bar) / P^2 of its estimate P-bar (the
        mean over runs): sum_r P_r^2 V_r / (sum_r P_r)^2 (NaN where a run has no estimate V)."""
        if self.run_rel_var is None:
            return np.full(self.run_log_prob.shape[1], np.nan)
        w = np.exp(self.run_log_prob - self.run_log_prob.max(axis=0, initial=-np.inf))
        with np.errstate(invalid="ignore", divide="ignore"):
            return (w**2 * self.run_rel_var).sum(axis=0) / w.sum(axis=0) ** 2

    @property
    def variance_estimate(self) -> dict[str, Any] | None:
        """From the runs' single-run estimates V of each document's relative error, when every
        document has one: the sd of the total (sqrt of sum_d V_d, the delta method: Var(log P-hat) ~ V
        for small V). Lee-Whiteley's (left-to-right, multinomial resampling) also give the expected
        Jensen gap of the total (sum_d V_d / 2: by how much an unbiased estimate's log is low on
        average) and the documents whose runs all ended with one lineage (V = 1 exactly: no
        information; too many tokens for the particles). The bridge's (a consistent estimate, no
        Jensen gap to state) give a 95% interval of the total, total +- 1.96 sd, over the documents it
        scored itself (`documents`; those that fell back to another method have none)."""
        v = self.doc_rel_var
        if v.size == 0 or self.run_rel_var is None:
            return None
        if self.method == "bridge":
            own = np.isfinite(v)
            if not own.any():
                return None
            sd = math.sqrt(max(float(v[own].sum()), 0.0))
            part = float(self.doc_log_prob[own].sum())
            return {"kind": "bridge", "sd_total": sd, "documents": int(own.sum()),
                    "ci95": [part - 1.96 * sd, part + 1.96 * sd] if own.all() else None}
        if not np.isfinite(v).all():
            return None
        total = float(v.sum())
        return {"kind": "lee-whiteley", "sd_total": math.sqrt(max(total, 0.0)), "jensen_gap": total / 2,
                "doc_rel_var_max": float(v.max()),
                "coalesced_documents": int((self.run_rel_var == 1.0).all(axis=0).sum())}

    @property
    def check(self) -> dict[str, Any] | None:
        """The cross-check (`check=K`), if one was run: bias per token, 95% interval, flagged."""
        return self.extra.get("check")

    @property
    def adaptive(self) -> dict[str, Any] | None:
        """With `target_sd=`: the target, each document's budget, convergence, seconds."""
        return self.extra.get("adaptive")

    @property
    def caution(self) -> str | None:
        """Why this method, at these settings and this model's alpha, is known to be badly off
        (`MethodSpec.caution`), or None."""
        return self.extra.get("caution")

    @property
    def note(self) -> str:
        """What kind of number this is: an unbiased estimate of P(w) has a log that is low on
        average (Jensen's inequality), by about half the variance of the log estimate; then the
        caution, if any."""
        return self.kind if self.caution is None else f"{self.kind}; warning: {self.caution}"

    @property
    def kind(self) -> str:
        """What kind of number this is (`note` without the caution)."""
        if self.method == "exact":
            return "exact"
        fallback = self.extra.get("fallback")
        fell = (f"; {len(fallback['documents'])} of {self.doc_tokens.size} documents were scored by "
                f"{fallback['method']} instead of {fallback['from']} (outside what {fallback['from']} was "
                "measured on; result.extra['fallback'])") if fallback else ""
        if self.method == "bridge":
            text = ("bridge sampling: consistent for log P(w) (its error shrinks as samples grow), not "
                    "unbiased")
            ve = self.variance_estimate
            if ve is not None:
                text += f"; its own error estimate gives the total an sd of {ve['sd_total']:.2f} nats"
                if ve["ci95"] is not None:
                    text += f", 95% interval [{ve['ci95'][0]:.2f}, {ve['ci95'][1]:.2f}]"
                else:
                    text += f" on the {ve['documents']} documents it scored"
            return text + fell
        if not self.unbiased:
            return ("not unbiased for P(w): its error has no known sign; compare it with a "
                    "reference (check=K)") + fell
        sd = self.doc_sd
        text = ("unbiased for P(w), so its log is low on average by about half its variance "
                "(Jensen)")
        ve = self.variance_estimate
        if ve is not None:
            text += (f"; from this run's particle genealogy (Lee-Whiteley) the sd of the total is about "
                     f"{ve['sd_total']:.2f} nats, its expected gap {ve['jensen_gap']:.2f} nats")
            if ve["coalesced_documents"]:
                text += (f" (not to be trusted: on {ve['coalesced_documents']} documents every particle "
                         "descends from one first particle, too many tokens for the particles)")
        elif self.runs >= 2 and sd.size:
            gap = jensen_gap(sd, self.runs)
            text += (f"; run-to-run sd per document median {float(np.nanmedian(sd)):.3f}, max "
                     f"{float(np.nanmax(sd)):.3f} nats: expected gap of the total about {gap:.2f} nats")
        elif self.params.get("resampling") == "systematic" and self.params.get("ess", 1.0) >= 1:
            # a particle filter resampling at every position: V needs multinomial
            text += ("; run it with runs >= 2, or with resampling=multinomial for an estimate from one "
                     "run (Lee-Whiteley), to see the size of that gap")
        else:
            text += "; run it with runs >= 2 to see the size of that gap"
        return text + fell

    @property
    def doc_log_prob(self) -> np.ndarray:
        return doc_log_mean(self.run_log_prob)

    def _doc_values(self) -> np.ndarray:
        return self.doc_log_prob

    @property
    def perplexity(self) -> float:
        return perplexity(self.per_token) if self.tokens else float("nan")

    @property
    def label(self) -> str:
        """method(parameters); `resampling`, `ess`, `order` and `topics_limit` only when not their
        defaults (systematic, 1, peaked, 20: so the labels of earlier results stay as they were; those
        made before `order` existed took the tokens in the given order)."""
        shown = {k: v for k, v in self.params.items()
                 if k != "max_states" and (k, v) not in (("resampling", "systematic"), ("ess", 1.0),
                                                               ("order", "peaked"), ("topics_limit", 20))}
        inner = ", ".join(f"{k}={v}" for k, v in shown.items())
        return f"{self.method}({inner})" if inner else self.method

    def summary(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "label": self.label,
            "total": self.total,
            "sd": json_float(self.sd),
            **({"sd_note": why} if (why := self.sd_note) else {}),
            "per_token": json_float(self.per_token),
            "perplexity": json_float(self.perplexity),
            "tokens": self.tokens,
            "tokens_dropped": int(self.corpus.get("oov_tokens", 0)),
            "empty_documents": int(self.corpus.get("empty_documents", 0)),
            "seconds": self.seconds,
            "compile_seconds": self.compile_seconds,
            "unbiased": self.unbiased,
            "variance_estimate": self.variance_estimate,
            "note": self.note,
        }

    def to_dict(self) -> dict[str, Any]:
        d = {
            "task": self.task,
            "model": self.model,
            **self.summary(),
            "params": self.params,
            "runs": self.runs,
            "seed": self.seed,
            "workers": self.workers,
            "bootstrap_resamples": self.bootstrap,
            "site_updates": self.site_updates,
            "corpus": self.corpus,
            "documents": {
                "log_prob": [json_float(v) for v in self.doc_log_prob],
                "tokens": [int(v) for v in self.doc_tokens],
                "sd": [json_float(v) for v in self.doc_sd],
                "rel_var": [json_float(v) for v in self.doc_rel_var],
                "run_log_prob": [[json_float(v) for v in row] for row in self.run_log_prob],
            },
        }
        d.update(self.extra)
        return d

    _name = "HeldoutResult"

    def _headline(self) -> list[tuple[str, Any]]:
        return [("method", self.label), ("total", round(self.total, 2)), ("sd", self.sd),
                ("tokens", self.tokens), ("per token", self.per_token), ("perplexity", self.perplexity)]

    def _columns(self) -> tuple[str, dict[str, Any]]:
        cols: dict[str, Any] = {"log_prob": self.doc_log_prob, "tokens": self.doc_tokens, "sd": self.doc_sd,
                                "rel_var": self.doc_rel_var}
        cols.update({f"run_{r}": self.run_log_prob[r] for r in range(self.runs)})
        return "document", cols
