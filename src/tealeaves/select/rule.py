"""The decision rule of `select`: which K, and which Ks cannot be separated from it.

Each K is represented on the held-out documents by one vector of per-document log-likelihoods,
taken from its restarts by the rule:

- `best-train` (the default): the restart with the highest training log-likelihood per token
  (each training document's topic proportions folded in, `classic.fold_in`); a restart stuck in
  a poor optimum fits its training documents worse and is passed over, without looking at the
  held-out documents.
- `best-heldout`: the restart with the highest held-out log-likelihood (the choice looks at the
  held-out documents, so its number is optimistic).
- `mean`: the per-document mean over restarts (the rule before issue 26, which one stuck restart
  drags down).

The chosen K has the highest held-out log-likelihood per token (the smaller K on a tie). EVERY
other K is compared with it by a paired bootstrap over held-out documents (the same resampled
documents for all Ks): the difference (chosen - K) in nats per token and its 95% interval. A K
whose interval reaches 0 cannot be separated from the chosen one (each interval at 95%, no
correction for the number of Ks). With one held-out document there is no spread between
documents, and below MIN_DOCUMENTS (6) too few to separate anything: no interval, and no K is
separated; with fewer documents than the population
interval was measured at (`compare.intervals.small_sample_warning`), a warning says so.

`edge` says where the chosen K lies in the grid: at its largest (or smallest) K, still separated
from its neighbour (the held-out likelihood still rising there: the best K may lie beyond the grid,
and the next Ks are suggested by continuing the grid's spacing geometrically), or not separated
from it (levelled off: further Ks are unlikely to be clearly better)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..compare.intervals import small_sample_warning
from ..errors import MethodError
from ..util.limits import check_bootstrap
from ..util.numbers import finite_float

RULES = ("best-train", "best-heldout", "mean")
DRAWS, LEVEL = 4000, 0.95
# Below 6 held-out documents no K is separated: with n documents all n differences favour one K by
# chance with probability 2^(1-n) > 5% (a sign test cannot reach 95%), and the percentile bootstrap
# over n <= 5 documents excludes 0 whenever they do (with 2 documents its interval is their range).
MIN_DOCUMENTS = 6


def interval_text(c: dict[str, Any], level: float = LEVEL, sign: int = 1) -> str:
    """A comparison's interval ("95% interval [lo, hi]", `sign` -1 for the other way round), or why it has
    none."""
    lo, hi = (_finite(v) for v in (c.get("interval") or (None, None)))
    if math.isnan(lo) or math.isnan(hi):
        return f"{level:.0%} interval unavailable ({c.get('note') or 'no interval'})"
    lo, hi = (lo, hi) if sign > 0 else (-hi, -lo)
    return f"{level:.0%} interval [{lo:+.5f}, {hi:+.5f}]"


def _finite(v: Any) -> float:
    """`v` as a float, NaN when it is not a finite number (`util.numbers.finite_float`)."""
    x = finite_float(v)
    return math.nan if x is None else x


def represent(evals: list[dict[str, Any]], rule: str) -> tuple[np.ndarray | None, Any, str]:
    """One K's held-out per-document log-likelihoods under `rule`, which restart they are ("mean"
    for the mean), and a note ("" or why a fallback was taken). None when no restart has finite
    values for every held-out document."""
    if rule not in RULES:
        raise MethodError(f"unknown decision rule {rule!r} (known: {', '.join(RULES)})")
    ok = [e for e in evals if e.get("doc_log_prob") is not None
          and np.isfinite(np.asarray(e["doc_log_prob"], dtype=float)).all()]
    dropped = len(evals) - len(ok)
    note = f"{dropped} restart(s) without finite held-out values left out" if dropped else ""
    if not ok:
        return None, None, note or "no restarts"
    docs = {len(e["doc_log_prob"]) for e in ok}
    if len(docs) > 1:
        raise MethodError(f"the restarts of K = {ok[0]['topics']} scored different numbers of held-out "
                          f"documents ({sorted(docs)})")
    if rule == "mean":
        return np.mean([np.asarray(e["doc_log_prob"], float) for e in ok], axis=0), "mean", note
    if rule == "best-train":
        scored = [(_finite(e.get("row", {}).get("train_per_token")), e) for e in ok]
        if all(math.isnan(s) for s, _ in scored):
            note = "; ".join(x for x in (note, "no training likelihood: the first restart taken") if x)
            best = ok[0]
        else:
            best = max(scored, key=lambda t: (-math.inf if math.isnan(t[0]) else t[0], -t[1]["restart"]))[1]
    else:
        best = max(ok, key=lambda e: (float(np.sum(e["doc_log_prob"])), -e["restart"]))
    return np.asarray(best["doc_log_prob"], float), best["restart"], note


def decide(topics: list[int], evals: list[dict[str, Any]], rule: str = "best-train", seed: int = 0,
           draws: int = DRAWS) -> dict[str, Any]:
    """The chosen K under `rule`, every other K compared with it, and the Ks not separated."""
    reps, used, notes = {}, {}, {}
    for k in topics:
        vec, which, note = represent([e for e in evals if e["topics"] == k], rule)
        if note:
            notes[str(k)] = note
        if vec is not None:
            reps[k], used[str(k)] = vec, which
    out: dict[str, Any] = {"rule": rule, "metric": "log-lik/token", "level": LEVEL, "restart": used,
                           "notes": notes, "k": None, "per_token": {}, "comparisons": [], "tied": []}
    if not reps:
        out["why"] = "no K has finite held-out log-likelihoods: nothing to choose"
        return out
    if len({v.size for v in reps.values()}) > 1:
        raise MethodError("the Ks scored different numbers of held-out documents")
    tokens = np.asarray(next(e["doc_tokens"] for e in evals if e["topics"] in reps), dtype=float)
    total = max(float(tokens.sum()), 1.0)
    per_token = {k: float(v.sum()) / total for k, v in reps.items()}
    best = max(reps, key=lambda k: (per_token[k], -k))
    out["k"], out["per_token"] = best, {str(k): v for k, v in per_token.items()}
    if len(reps) == 1:
        out["why"] = f"only K = {best} has held-out values: nothing to compare it with"
        return out
    if tokens.size < MIN_DOCUMENTS:
        n = int(tokens.size)
        note = ("1 held-out document: no spread between documents, so no K is separated; raise --holdout"
                if n == 1 else
                f"{n} held-out documents: too few to separate Ks (below {MIN_DOCUMENTS}, all of them "
                f"favouring one K happens by chance with probability 2^(1-n) = {2.0 ** (1 - n):.0%}); "
                "raise --holdout")
        out["comparisons"] = [{"k": k, "difference": (per_token[best] - per_token[k]),
                               "interval": [math.nan, math.nan], "separated": False, "note": note}
                              for k in sorted(reps) if k != best]
        out["tied"] = [c["k"] for c in out["comparisons"]]
        out["warning"] = note
        out["why"] = (f"K = {best} has the highest held-out log-likelihood per token; "
                      f"{note}")
        return out
    out["warning"] = small_sample_warning(int(tokens.size))
    check_bootstrap(draws, float(tokens.size), 3 * 8.0 * draws * tokens.size)  # the indices and two gathers
    rng = np.random.default_rng(np.random.SeedSequence([seed, 0x5E1EC7]))
    idx = rng.integers(0, tokens.size, size=(draws, tokens.size))
    boot_tokens = np.maximum(tokens[idx].sum(axis=1), 1.0)
    tail = (1 - LEVEL) / 2 * 100
    for k in sorted(reps):
        if k == best:
            continue
        diff = reps[best] - reps[k]
        lo, hi = np.percentile(diff[idx].sum(axis=1) / boot_tokens, [tail, 100 - tail])
        out["comparisons"].append({"k": k, "difference": float(diff.sum()) / total,
                                   "interval": [float(lo), float(hi)], "separated": bool(lo > 0)})
    out["tied"] = [c["k"] for c in out["comparisons"] if not c["separated"]]
    rep = {"best-train": "the restart best by training likelihood", "best-heldout":
           "the restart best by held-out likelihood", "mean": "the mean over restarts"}[rule]
    tied = (f"; K = {', '.join(map(str, out['tied']))} cannot be separated from it" if out["tied"]
            else f"; every other K is worse by its {LEVEL:.0%} interval")
    out["why"] = f"K = {best} has the highest held-out log-likelihood per token ({rep} of each K){tied}"
    return out


def leans(bias: Any, k: Any, reference: Any) -> bool:
    """A metric known to err towards `bias` ("few" or "many" topics) leans that way here: the K it
    favours (`k`) has fewer (or more) topics than `reference` (the decision's K). A known bias is
    mentioned beside a result only when this holds."""
    if not all(isinstance(x, int | float) and not isinstance(x, bool) for x in (k, reference)):
        return False
    return (bias == "few" and k < reference) or (bias == "many" and k > reference)


def disagreements(decision: dict[str, Any], choice: dict[str, dict[str, Any]],
                  bias: dict[str, tuple[str, str]]) -> list[dict[str, Any]]:
    """Each metric whose favoured K differs from the decision's, with the direction it is known
    to err in and why."""
    k0 = decision.get("k")
    out = []
    for m, c in choice.items():
        k = c.get("k")
        if k is None or k0 is None or k == k0 or m == decision.get("metric"):
            continue
        direction, why = bias.get(m, ("neither", "no known direction"))
        side = "fewer" if k < k0 else "more"
        expected = leans(direction, k, k0)
        out.append({"metric": m, "k": k, "side": side, "known_bias": direction, "expected": expected,
                    "why": why})
    return out


def next_ks(topics: list[int], side: str, count: int = 2) -> list[int]:
    """The next `count` values of K beyond the grid's `side` ("upper" or "lower"): the ratio of its
    last step (at least 1.5) continued geometrically, rounded, distinct, beyond the grid, and at
    least 2 below it (a model of one topic is no topic model)."""
    ks = sorted(set(topics))
    if side == "upper":
        ratio = max(ks[-1] / ks[-2], 1.5) if len(ks) > 1 else 2.0
        out, k = [], float(ks[-1])
        while len(out) < count:
            k *= ratio
            if round(k) > (out[-1] if out else ks[-1]):
                out.append(round(k))
        return out
    ratio = max(ks[1] / ks[0], 1.5) if len(ks) > 1 else 2.0
    out, k = [], float(ks[0])
    while len(out) < count:
        k /= ratio
        nxt = max(2, round(k))
        if nxt >= (out[-1] if out else ks[0]):
            break
        out.append(nxt)
    return out


def edge(topics: list[int], decision: dict[str, Any]) -> dict[str, Any]:
    """Where the decision's K lies in the grid `topics`: {} inside it; else its `side` ("upper",
    "lower", or "only" for a grid of one K), the `neighbour` K and whether the chosen K is
    `separated` from it by the decision's interval (`status` "rising": the held-out likelihood still
    rises towards the edge, so the best K may lie beyond it; "level": it has levelled off there), the
    Ks to try next (`suggest`, `next_ks`) and the `message` that says so."""
    k = decision.get("k")
    ks = sorted(set(topics))
    if k is None or k not in ks:
        return {}
    level = decision.get("level", LEVEL)
    if len(ks) == 1:
        suggest = sorted(set(next_ks(ks, "lower", 1) + next_ks(ks, "upper", 1)))
        return {"side": "only", "k": k, "neighbour": None, "separated": None, "status": "alone",
                "suggest": suggest,
                "message": f"only K = {k} was tried: nothing to compare it with; try K = "
                           f"{', '.join(map(str, suggest))} around it"}
    if ks[0] < k < ks[-1]:
        return {}
    side = "upper" if k == ks[-1] else "lower"
    neighbour = ks[-2] if side == "upper" else ks[1]
    c = next((c for c in decision.get("comparisons") or [] if c.get("k") == neighbour), None)
    separated = bool(c and c.get("separated"))
    interval = interval_text(c, level) if c else "no comparison"
    suggest = next_ks(ks, side)
    where, more = ("largest", "larger") if side == "upper" else ("smallest", "smaller")
    toward = "more" if side == "upper" else "fewer"
    if separated:
        status = "rising"
        message = (f"K = {k} is the {where} K tried and still better than K = {neighbour} "
                   f"({c['difference']:+.4f} nats per token, {interval}): the held-out likelihood still "
                   f"rises towards {toward} topics at the edge of the grid, so the best K may lie beyond "
                   "it")
    else:
        status = "level"
        message = (f"K = {k} is the {where} K tried, but it cannot be separated from K = {neighbour} "
                   f"({interval}): the held-out likelihood has levelled off at the edge of the grid, so "
                   f"{more} Ks are unlikely to be clearly better")
    if suggest:
        message += (f"; try K = {', '.join(map(str, suggest))} (the grid's spacing continued)"
                    if status == "rising" else f" (K = {suggest[0]} would tell)")
    else:
        message += f"; K = {k} is the smallest number of topics worth trying"
    return {"side": side, "k": k, "neighbour": neighbour, "separated": separated, "status": status,
            "suggest": suggest, "message": message}


__all__ = ["RULES", "decide", "represent", "disagreements", "edge", "next_ks", "leans"]
