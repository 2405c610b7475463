"""The recommendation the report states first: the model (`evaluate`) or number of topics
(`select`) to use, with its reasons: the held-out evidence, which other metrics agree and which
disagree (and which are known to favour few or many topics, when they lean that way), what the
evidence cannot separate, and what stability says (a K unstable as a whole, a restart stuck
apart). Plain sentences; `render` escapes them."""

from __future__ import annotations

from typing import Any

from ..output import numbers
from ..select.classic import BIAS
from ..select.rule import interval_text, leans
from ..util.numbers import finite_float
from .pertopic import MEASURE_NAMES

# evaluate's row key -> (label, higher is better, select's name of the metric: its known bias is
# select.classic.BIAS, the one place it is stated)
EVAL_METRICS = {
    "diversity": ("diversity", True, "diversity"),
    "exclusivity": ("exclusivity", True, "exclusivity"),
    "predictive_rank": ("predictive rank", False, "pred. rank"),
    "auto_model_precision": ("automated intrusion", True, "auto MP"),
    "judge_model_precision": ("an LLM judge's intrusion", True, "judge MP"),
    "judge_rating": ("an LLM judge's rating", True, "judge rating"),
}
HELDOUT = "log-lik/token"


def _bias(metric: str) -> str:
    """"known to favour few (or many) topics" for a metric `select` names, "" when it has no known
    direction."""
    side = BIAS.get(metric, ("neither",))[0]
    return f"known to favour {side} topics" if side in ("few", "many") else ""


def _best(values: dict[str, Any], higher: bool) -> list[str]:
    """The names with the best finite value (ties kept)."""
    ok = {k: v for k, v in values.items() if finite_float(v) is not None}
    if not ok:
        return []
    top = max(ok.values()) if higher else min(ok.values())
    return [k for k, v in ok.items() if v == top]


def _stability(stability: Any) -> list[str]:
    """What each group of restarts says, once per group: unstable as a whole, or which restart is
    stuck apart from the rest (nothing when the restarts agree); a result saved before the finding
    was kept: every restart it flagged."""
    out = []
    for g in stability if isinstance(stability, list) else []:
        if not isinstance(g, dict):
            continue
        finding, flagged = g.get("finding"), g.get("flagged")
        if finding in ("unstable", "stuck") and isinstance(g.get("finding_text"), str):
            text = g["finding_text"]
            out.append(f"Stability: {text[0].upper()}{text[1:]}.")
        elif finding is None and isinstance(flagged, dict):
            out += [f"Restart flagged by stability: {name}: {why}." for name, why in flagged.items()]
    return out


def _agreement(agree: list[str], disagree: list[str]) -> list[str]:
    out = []
    if agree:
        out.append("Agree: " + "; ".join(agree) + ".")
    if disagree:
        out.append("Disagree: " + "; ".join(disagree) + ".")
    return out


def evaluate(doc: dict[str, Any]) -> tuple[str, list[str]]:
    """The recommended model of an `evaluate` result (its headline) and the reasons."""
    rows = [r for r in doc.get("rows", []) if isinstance(r, dict)]
    groups = doc.get("groups") or []
    warning = (doc.get("scoring") or {}).get("warning") if isinstance(doc.get("scoring"), dict) else None
    caveat = [f"Warning: {warning}."] if isinstance(warning, str) else []  # the held-out tokens dropped
    if not groups and isinstance(doc.get("groups_note"), str):
        return (f"No recommendation by held-out likelihood: {doc['groups_note']}", caveat)
    if not groups:
        return ("No recommendation by held-out likelihood: no model has one", caveat)
    best = list(groups[0])
    pick = best[0]
    by = {r["model"]: r for r in rows}
    r = by.get(pick, {})
    scored = sum(len(g) for g in groups)
    what = "the best held-out likelihood" if scored > 1 else "the only model with a held-out likelihood"
    head = f"Recommended: {pick}, {what} ({numbers.metric('per_token', r.get('per_token'))} nats per token)"
    reasons = list(caveat)
    if len(best) > 1:
        reasons.append(f"Could not be separated: {', '.join(best)} (the held-out evidence does not tell them "
                       "apart; any of them is as good on it).")
    for c in doc.get("comparisons") or []:
        if c.get("a") in best and c.get("b") in best:
            lo, hi = c.get("per_token_interval") or (None, None)  # null when unavailable
            interval = ("95% interval unavailable" if finite_float(lo) is None or finite_float(hi) is None
                        else f"95% [{numbers.signed(lo, 5)}, {numbers.signed(hi, 5)}]")
            reasons.append(f"{c['a']} − {c['b']}: {numbers.signed(c.get('per_token'), 5, 'no value')} nats "
                           f"per token, {interval}: {c['verdict']}.")
    agree, disagree = [], []
    metrics = {**{f"coherence.{m}": (f"{MEASURE_NAMES.get(m, m)} coherence", True, m) for m in
                  dict.fromkeys(m for r in rows for m in (r.get("coherence") or {}))}, **EVAL_METRICS}
    for key, (label, higher, name) in metrics.items():
        vals = {n: (x.get("coherence") or {}).get(key.split(".", 1)[1]) if key.startswith("coherence.")
                else x.get(key) for n, x in by.items()}
        top = _best(vals, higher)
        if not top:
            continue
        if set(top) & set(best):
            agree.append(label)
        else:
            side = BIAS.get(name, ("neither",))[0]
            topics = [by[n].get("topics") for n in top]  # the bias is named only when the result leans its way
            why = f" ({_bias(name)})" if topics and all(leans(side, t, r.get("topics")) for t in topics) else ""
            disagree.append(f"{label} favours {', '.join(top)}{why}")
    reasons += _agreement(agree, disagree)
    reasons += _people(doc, by, best)
    reasons += _stability(doc.get("stability"))
    return head, reasons


NONE_MEASURED = ("no interpretability metric's agreement with people was measured here, so the coherence, "
                 "exclusivity and intrusion columns are proxies of unknown agreement (tealeaves evaluate "
                 "--human hoyle2021 carries published figures over; --human FILE measures it on your own "
                 "judgments of these topics)")


def _value(row: dict[str, Any], key: str) -> Any:
    """A row's value of an evaluate column key ("coherence.npmi", "exclusivity", ...)."""
    if key.startswith("coherence."):
        return (row.get("coherence") or {}).get(key.split(".", 1)[1])
    return row.get(key)


def _people(doc: dict[str, Any], by: dict[str, dict[str, Any]], best: list[str]) -> list[str]:
    """Which interpretability metric the recommendation trusts, citing its measured agreement
    with people (`evaluate.human`), and which model it favours; or that none was measured."""
    human = doc.get("human")
    t = human.get("trusted") if isinstance(human, dict) else None
    if not isinstance(t, dict) or not isinstance(t.get("metric"), str):
        where = f" ({human.get('study')})" if isinstance(human, dict) and human.get("study") else ""
        return [f"Interpretability: {NONE_MEASURED.replace(' here', where + ' here', 1)}."]
    key = t["metric"]
    top = _best({n: _value(r, key) for n, r in by.items()}, True)  # every such metric: higher is better
    line = f"Trusted for interpretability: {t.get('label', key)}, {t.get('why', '')}."
    if top:
        line += (f" By it, {', '.join(top)} scores best"
                 + (" (the held-out choice too)." if set(top) & set(best) else
                    " (not the held-out choice: weigh what the model is for)."))
    return [line]


def select(doc: dict[str, Any]) -> tuple[str, list[str]] | None:
    """The recommended K of a `select` result and the reasons (None without a held-out choice)."""
    choice = doc.get("choice") or {}
    c = choice.get(HELDOUT)
    d = doc.get("decision")
    if isinstance(d, dict) and d.get("k") is not None:  # select's stated decision rule
        k = d["k"]
        head = f"Recommended: K = {k}, by the {d.get('rule', '')} rule"
        e = doc.get("edge")
        if isinstance(e, dict) and e.get("status") == "rising":
            head += f", at the edge of the grid (the best K may lie beyond K = {k})"
        reasons = [f"{d.get('why', '')}."] if d.get("why") else []
        if isinstance(e, dict) and isinstance(e.get("message"), str):
            reasons.insert(0, f"Edge of the grid: {e['message']}.")
        for cmp in d.get("comparisons") or []:
            verdict = "worse" if cmp.get("separated") else "not separated"
            reasons.append(f"K = {cmp['k']}: {verdict}, {-cmp['difference']:+.5f} nats per token against "
                           f"K = {k}, {interval_text(cmp, d.get('level', 0.95), sign=-1)}.")
    elif isinstance(c, dict) and c.get("k") is not None:  # a result saved before the decision rule
        k = c["k"]
        head = f"Recommended: K = {k}, the best held-out likelihood"
        reasons = []
    else:
        return None
    if isinstance(c, dict) and "runner_up" in c and not (isinstance(d, dict) and d.get("k") is not None):
        if c.get("significant"):
            reasons.append(f"Significantly better than K = {c['runner_up']} ({c.get('why', '')}).")
        else:
            reasons.append(f"Could not be separated from K = {c['runner_up']} ({c.get('why', '')}).")
    agree, disagree = [], []
    for m, other in choice.items():
        if m == HELDOUT or not isinstance(other, dict) or other.get("k") is None:
            continue
        if other["k"] == k:
            agree.append(m)
        else:
            side = other.get("bias") or BIAS.get(m, ("neither",))[0]  # older results lack "bias"
            bias = f"known to favour {side} topics" if leans(side, other["k"], k) else ""
            disagree.append(f"{m} favours K = {other['k']}" + (f" ({bias})" if bias else ""))
    reasons += _agreement(agree, disagree)
    stab = doc.get("stability")  # the chosen K's restarts (every K's are in the section below)
    reasons += _stability([g for g in stab if isinstance(g, dict) and g.get("topics") == k]
                          if isinstance(stab, list) else stab)
    return head, reasons
