"""CSL, the conservative sampling-based log-likelihood of Bengio, Yao & Cho (2014).

Any model implementing the small protocol below can be scored:
- `sample_latents(rng, chains, samples, thin, burn_in, start=None)`: latent states h from the
  model's Markov chain, which alternates h and observations x; `start` = x starts the chains
  there (for the biased variant);
- `log_p_x_given_h(items, H)`: log P(x | h) for a batch of items and latent states, an array
  (len(items), len(H));
- `item_count(items)` and `select(items, indices)` (a sub-batch in the same format).
Unbiased CSL (algorithm 1): one set S of latent states from the chain; for every test item,
log mean_{h in S} P(x | h). In expectation over S this is at most log P(x) (proposition 2)
and converges to it as |S| grows with a mixing chain (proposition 1).
Biased CSL (section 6): for each test item x, `chains` short chains started at x, their
consecutive latent states (`samples` per chain) as S_x. It tends to overestimate, but orders
models well with very few steps.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import InvalidCorpusError, MethodError
from ..model import TopicModel
from ..output.display import Display
from ..output.jsonout import json_float, json_safe
from ..topics import Topics, as_lda
from ..util.limits import check_cost
from ..util.parallel import run_tasks
from .lda import LdaChain
from .mixing import ess
from .rbm import BinaryRBM, load_digits_binary, load_rbm, train_rbm

PROTOCOL = ("sample_latents", "log_p_x_given_h", "item_count", "select")
MIXING_ITEMS = 100  # items whose log P(x | h) series the mixing diagnostic follows
LOW_ESS = 0.1  # warn when the median effective sample size is below this share of the samples

__all__ = ["csl", "CSLResult", "LdaChain", "BinaryRBM", "train_rbm", "load_rbm", "load_digits_binary"]


@dataclass(repr=False)
class CSLResult(Display):
    item_log_prob: np.ndarray
    biased: bool
    params: dict[str, Any]
    chain_steps: int
    seconds: float
    seed: int
    extra: dict[str, Any] = field(default_factory=dict)
    mixing: dict[str, Any] = field(default_factory=dict)  # effective sample sizes; a warning if low

    @property
    def mean(self) -> float:
        return float(self.item_log_prob.mean()) if self.item_log_prob.size else float("nan")

    @property
    def total(self) -> float:
        return float(self.item_log_prob.sum())

    _name = "CSLResult"

    def _headline(self) -> list[tuple[str, Any]]:
        out = [("kind", "biased CSL" if self.biased else "CSL"), ("mean log P(x)", self.mean),
               ("items", int(self.item_log_prob.size)), ("chain steps", self.chain_steps)]
        if self.mixing.get("ess_median") is not None:
            out.append(("median ESS", self.mixing["ess_median"]))
        return out

    def _columns(self) -> tuple[str, dict[str, Any]]:
        return "item", {"log_prob": self.item_log_prob}

    def to_dict(self) -> dict[str, Any]:
        return {"task": "csl", "biased": self.biased, "params": self.params, "mean": json_float(self.mean),
                "total": json_float(self.total), "items": int(self.item_log_prob.size),
                "chain_steps": self.chain_steps, "seconds": self.seconds, "seed": self.seed,
                "item_log_prob": [json_float(v) for v in self.item_log_prob],
                "mixing": json_safe(self.mixing), **self.extra}


def _log_mean_p(model, items, H, chunk: int = 4096) -> np.ndarray:
    """log mean_{h in H} P(x | h) for every item, in chunks of H to bound memory."""
    from scipy.special import logsumexp

    parts = [logsumexp(model.log_p_x_given_h(items, H[lo : lo + chunk]), axis=1)
             for lo in range(0, len(H), chunk)]
    return logsumexp(np.stack(parts), axis=0) - np.log(len(H))


def _biased_item(shared, item):
    model, chains, samples = shared
    one, seq = item
    rng = np.random.default_rng(seq)
    H = model.sample_latents(rng, chains, chains * samples, thin=1, burn_in=0, start=one[0])
    return float(_log_mean_p(model, one, H)[0])


def as_chain(model: Any, data: Any) -> tuple[Any, Any]:
    """(a CSL model, its data): a TopicModel is wrapped in `LdaChain` with its defaults and the
    documents checked against it; anything else must implement the protocol."""
    if isinstance(model, Topics):
        model = as_lda("csl", model)
    if isinstance(model, TopicModel):
        model = LdaChain(model)
    missing = [m for m in PROTOCOL if not callable(getattr(model, m, None))]
    if missing:
        raise MethodError(f"csl needs a TopicModel, a BinaryRBM, an LdaChain or an object with "
                          f"{', '.join(PROTOCOL)}; {type(model).__name__} lacks {', '.join(missing)}")
    if isinstance(model, LdaChain):
        from ..heldout import as_corpus

        data = as_corpus(data, model.model)
    return model, data


def _scorable(docs: Any) -> tuple[Any, dict[str, Any]]:
    """The documents with a scored token, and the corpus report (`corpus`: unknown words dropped,
    empty documents) with the empty ones left out (`empty_documents_left_out`: how many). An
    empty document (a blank line, or only unknown words) has log P = 0 under every model: counted
    in, it would only pull the mean per document towards 0. No document left is an error."""
    empty = docs.empty_documents
    extra: dict[str, Any] = {"corpus": docs.report(), "empty_documents_left_out": len(empty)}
    if not empty:
        return docs, extra
    if len(empty) == len(docs):
        raise InvalidCorpusError(f"{docs.source}: no document has a word of the model's vocabulary "
                                 f"({docs.oov_tokens} tokens dropped, {len(docs)} documents)")
    keep = set(empty)
    return docs.subset([d for d in range(len(docs)) if d not in keep]), extra


def mixing(model: Any, data: Any, H: np.ndarray, chains: int) -> dict[str, Any]:
    """Effective sample size of log P(x | h) along the chains, for up to MIXING_ITEMS items spread
    over `data`, and a warning when its median is below LOW_ESS of the states drawn."""
    n, samples = model.item_count(data), len(H)
    steps = samples // chains
    if n == 0 or steps < 4:
        return {"ess_median": None, "ess_min": None, "items_checked": 0, "samples": samples, "warning": None}
    idx = np.unique(np.linspace(0, n - 1, min(n, MIXING_ITEMS)).astype(int))
    lp = model.log_p_x_given_h(model.select(data, idx), H[: steps * chains])
    values = np.array([ess(row.reshape(steps, chains)) for row in lp])
    median = float(np.median(values))
    warning = None
    if median < LOW_ESS * samples:
        warning = (f"the chain mixed slowly: the median effective sample size of log P(x | h) is "
                   f"{median:.0f} of {samples} states drawn; the estimate is noisier than the number "
                   "of samples suggests (more samples, --thin, or a faster-mixing chain)")
    return {"ess_median": median, "ess_min": float(values.min()), "items_checked": int(idx.size),
            "samples": samples, "warning": warning}


def _check_cost(model, data, n: int, samples: int, thin: int, burn_in: int, biased: bool, chains: int,
                workers: int, max_hours: float | None) -> float | None:
    """Refuse a run over budget; return its estimated seconds on one worker (None: no cost model),
    which decides where a Dask session runs it."""
    cost = getattr(model, "cost", None)
    if cost is None:
        return None
    if biased:  # per item: chains x samples states; `workers` items at once
        states, held = float(n) * chains * samples, min(workers, max(n, 1)) * float(chains) * samples
        seconds, nbytes = cost(data, held, states, states, chains)
    else:
        seconds, nbytes = cost(data, float(samples), float(samples), float(chains) * burn_in
                               + float(samples) * thin, chains)
    check_cost(f"CSL with {samples:,} samples, {chains:,} chains, burn-in {burn_in:,}, thin {thin:,}"
               + "".join(f", {k.replace('_', ' ')} {v:,}" for k, v in getattr(model, "params", {}).items()
                         if isinstance(v, int) and not isinstance(v, bool)),
               nbytes, seconds / max(workers if biased else 1, 1), max_hours)
    return float(seconds)


def csl(model, data, samples: int = 10000, thin: int = 1, burn_in: int = 100, biased: bool = False,
        chains: int = 10, seed: int = 0, workers: int = 1, return_latents: bool = False,
        max_hours: float | None = None) -> CSLResult:
    """CSL estimates of log P(x) for every test item in `data` (see the module notes). `model` is a
    TopicModel (scored by its own chain, `LdaChain`), a BinaryRBM, or any object implementing the
    protocol.

    Unbiased: `samples` latent states from `chains` chains after `burn_in` steps, every `thin`-th;
    the result's `mixing` gives the effective sample size of log P(x | h) along the chains.
    Biased: per item, `chains` chains started at the item, `samples` consecutive states each.
    `chain_steps` in the result counts the latent-state draws spent. A run estimated to take more
    than `max_hours` (default 24) or half the memory stops before it starts (models that have a
    `cost` method: LdaChain, BinaryRBM)."""
    for name, v, low in (("samples", samples, 1), ("thin", thin, 1), ("burn_in", burn_in, 0),
                         ("chains", chains, 1), ("seed", seed, 0), ("workers", workers, 1)):
        if isinstance(v, bool) or not isinstance(v, int | np.integer) or v < low:
            raise MethodError(f"{name} must be an integer >= {low}, got {v!r}")
    model, data = as_chain(model, data)
    extra: dict[str, Any] = {}
    if isinstance(model, LdaChain):
        data, extra = _scorable(data)
    n = model.item_count(data)
    estimate = _check_cost(model, data, n, samples, thin, burn_in, biased, chains, workers, max_hours)
    t0 = time.perf_counter()
    if biased:
        seqs = np.random.SeedSequence(seed).spawn(n)
        items = [(model.select(data, [i]), seqs[i]) for i in range(n)]
        est = np.array(run_tasks(_biased_item, (model, chains, samples), items, workers,
                                 seconds=estimate, what="biased CSL"))
        steps = n * chains * samples
    else:
        rng = np.random.default_rng(np.random.SeedSequence(seed))
        H = model.sample_latents(rng, chains, samples, thin=thin, burn_in=burn_in)
        est = _log_mean_p(model, data, H) if n else np.zeros(0)
        steps = chains * burn_in + samples * thin
        diagnostic = mixing(model, data, H, chains)
        if return_latents:
            extra["latents"] = H
    params = {"samples": samples, "thin": thin, "burn_in": burn_in, "chains": chains,
              **getattr(model, "params", {})}
    res = CSLResult(np.asarray(est, dtype=np.float64), biased, params, int(steps),
                    time.perf_counter() - t0, seed)
    res.extra.update(extra)
    if not biased:
        res.mixing = diagnostic
    return res
