"""Models compared in pairs: the difference of their held-out estimates (free), Ratio-AIS where
asked for, and the ranking of models the evidence separates (`rank_groups`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..compare import CompareResult, compare
from ..corpus import Corpus
from ..heldout import HeldoutResult
from ..model import TopicModel
from ..util.limits import MAX_HOURS
from ..util.stages import Stages
from .cost import fmt_seconds, same_words
from .options import EvaluateOptions
from .rows import kept_folder


def comparison(name_a: str, name_b: str, res: CompareResult) -> dict[str, Any]:
    i = res.verdict_interval()
    where = "in the population" if i.scope == "population" else "on these documents"
    if not i.available:
        verdict = f"not separated: the interval is unavailable ({i.reason})"
    elif i.low > 0:
        verdict = f"{name_a} is better {where}"
    elif i.high < 0:
        verdict = f"{name_b} is better {where}"
    else:
        verdict = f"not separated {where}: the interval includes 0"
    return {"a": name_a, "b": name_b, "method": res.method, "total": res.total,
            "per_token": res.per_token, "per_token_interval": [i.low, i.high],
            "per_token_interval_scope": i.scope, "per_token_interval_about": i.about,
            "warning": i.warning, "intervals": {k: v.to_dict() for k, v in res.intervals().items()},
            "verdict": verdict, "perplexity_ratio": res.perplexity_ratio}


def difference(a: HeldoutResult, b: HeldoutResult, name_a: str, name_b: str, seed: int) -> CompareResult:
    """log P(w|A) - log P(w|B) from two held-out results on the same documents and tokens."""
    sd = float(np.hypot(a.sd, b.sd))
    return CompareResult(method="difference", params={"estimator": a.label}, model_a=name_a,
                         model_b=name_b, doc_log_ratio=a.doc_log_prob - b.doc_log_prob,
                         doc_tokens=a.doc_tokens, sd_chains=sd, seconds=0.0, seed=seed,
                         workers=a.workers, corpus=a.corpus, run_log_prob_a=a.run_log_prob,
                         run_log_prob_b=b.run_log_prob)


def versus_best(rows: list[dict[str, Any]], comparisons: list[dict[str, Any]],
                groups: list[list[str]] | None) -> None:
    """Each row's `vs_best`: its held-out log-likelihood per token minus the best model's (the
    ranking's first, `groups[0][0]`) with the pair's 95% interval (documents sampled + estimator
    noise, or what the comparison's interval is about): the uncertainty that decides the ranking.
    None for the best model itself, and for every row when nothing was compared."""
    best = groups[0][0] if groups else None
    for r in rows:
        r["vs_best"] = None
        if best is None or r["model"] == best:
            continue
        c = next((c for c in comparisons if {c["a"], c["b"]} == {r["model"], best}), None)
        if c is None:
            continue
        sign = 1.0 if c["b"] == best else -1.0  # the comparison is a - b; we want this - best
        lo, hi = (sign * x for x in c["per_token_interval"])
        r["vs_best"] = {"model": best, "difference": sign * c["per_token"], "interval": sorted([lo, hi]),
                        "method": c["method"], "about": c.get("per_token_interval_about")}


def rank_groups(names: list[str], per_token: list[float],
                worse: dict[tuple[str, str], bool]) -> list[list[str]]:
    """Best first; a group is the best remaining model and every remaining model that is not
    significantly worse than it (`worse[(a, b)]`: b is significantly worse than a)."""
    order = [n for _, n in sorted(zip(per_token, names, strict=True), key=lambda t: -t[0])]
    groups = []
    while order:
        lead = order[0]
        group = [lead] + [n for n in order[1:] if not worse.get((lead, n), False)]
        groups.append(group)
        order = [n for n in order if n not in group]
    return groups


def comparisons(loaded: list[TopicModel], corpora: list[Corpus], held: dict[str, HeldoutResult],
                options: EvaluateOptions, progress: bool | None, est: dict[str, Any],
                clock: Stages) -> tuple[list[dict[str, Any]], dict]:
    """Every pair: the difference of the held-out estimates (free), Ratio-AIS where
    `options.compare_models` asks for it ("ratio-ais": every pair with the same topics count and
    words; "auto": those pairs the difference does not separate, while the estimate stays within
    max_hours); each row says which method it used and why (`method_reason`)."""
    mode, seed, workers, max_hours = options.compare_models, options.seed, options.workers, options.max_hours
    out, worse = [], {}
    limit = (MAX_HOURS if max_hours is None else max_hours) * 3600
    spent = est["total"]
    eligible = iter(est["ratio_ais_each"])
    for i in range(len(loaded)):
        for j in range(i + 1, len(loaded)):
            a, b = loaded[i], loaded[j]
            same = same_words(a, b)
            cost = next(eligible) if same else 0.0
            diff = comparison(a.name, b.name, difference(held[a.name], held[b.name], a.name, b.name, seed))
            lo, hi = diff["per_token_interval"]
            separated = lo > 0 or hi < 0
            shown = f"95% [{lo:+.5f}, {hi:+.5f}]"
            run_ratio = same and (mode == "ratio-ais" or (mode == "auto" and not separated))
            if mode == "auto" and run_ratio and spent + cost > limit:
                run_ratio = False
                reason = (f"the difference did not separate the pair ({shown}); Ratio-AIS (about "
                          f"{fmt_seconds(cost)}) would take the estimate past max_hours, so it was not run")
            elif not (isinstance(a, TopicModel) and isinstance(b, TopicModel)):
                reason = ("Ratio-AIS runs between two LDA models only; the difference of held-out estimates "
                          "(same tokens) compares these")
            elif not same:
                reason = ("the models differ in their number of topics or their words; Ratio-AIS needs "
                          "both equal")
            elif separated and mode != "ratio-ais":
                reason = f"the difference of held-out estimates separates the pair ({shown})" + (
                    "; Ratio-AIS was not needed" if mode == "auto" else "")
            elif mode == "difference":
                reason = (f"the default (free once the held-out runs exist); it did not separate the pair "
                          f"({shown}): compare_models='auto' (--compare auto) runs Ratio-AIS for such pairs "
                          f"(about {fmt_seconds(cost)} here)")
            elif mode == "ratio-ais":
                reason = "requested (compare_models='ratio-ais')"
            else:
                reason = f"the difference of held-out estimates did not separate the pair ({shown})"
            if run_ratio:
                spent += cost if mode == "auto" else 0.0
                clock.say(f"  Ratio-AIS {a.name} vs {b.name} (about {fmt_seconds(cost)})")
                res = compare(a, b, corpora[i], seed=seed, workers=workers, progress=progress,
                              max_hours=max_hours, keep=kept_folder(options, "ratio-ais", a, b))
                row = comparison(a.name, b.name, res)
                row["difference"] = {"per_token": diff["per_token"], "per_token_interval": [lo, hi],
                                     "verdict": diff["verdict"]}
            else:
                row = diff
            row["method_reason"] = reason
            out.append(row)
            lo, hi = row["per_token_interval"]
            worse[(a.name, b.name)] = lo > 0
            worse[(b.name, a.name)] = hi < 0
    return out, worse


