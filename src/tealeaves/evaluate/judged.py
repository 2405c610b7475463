"""An LLM judge's columns in `evaluate`: for every model with top words, the judge's mean
probability of choosing the intruder ("judge MP") and its mean expected 3-point rating ("judge
rating"), with the per-topic scores for the report. The judge is checked (consent to send, the
server answering and serving the model) and its cost estimated before any other work. Beside its
columns, the judge's measured agreement with people on each task (`agreement`: the qualification
`tealeaves judge qualify` kept in its cache), or that it was never measured."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..errors import MethodError
from ..model import TopicModel
from ..topics import Topics

# judge task -> (the row's key, the column's heading, the Judge method)
COLUMNS = {"word-intrusion": ("judge_model_precision", "judge MP", "word_intrusion"),
           "ratings": ("judge_rating", "judge rating", "ratings")}


# evaluate's judge task -> (the bundled study, the people's task there, the `judge qualify --task`)
QUALIFIED_BY = {"word-intrusion": ("hoyle2021", "word-intrusion", "words"),
                "ratings": ("hoyle2021", "rating", "ratings")}
KEPT = ("requests", "cached", "sent", "malformed", "unanswered", "fallback_no_logprobs", "fallback_no_answer",
        "reported_models")  # the judge's counts kept in a row


def check_judge(judge: Any, models: Sequence[TopicModel | Topics], tasks: Sequence[str]) -> float:
    """Consent, the server and the model, then the estimated seconds of every task on every model
    (a model whose tasks cannot be built is left to `judge_models`, which says why)."""
    if not models:
        return 0.0
    judge.endpoint.check_consent(f"the top words of {len(models)} model(s)")
    judge.served()
    seconds = 0.0
    for m in models:
        for t in tasks:
            try:
                seconds += getattr(judge, COLUMNS[t][2])(m, dry_run=True)["seconds"]
            except MethodError:
                continue
    return seconds


def judge_models(judge: Any, models: Sequence[TopicModel | Topics], tasks: Sequence[str],
                 clock: Any) -> dict[str, dict[str, Any]]:
    """Per model: {"row": the columns' values, "not_computed": {column: why}, "per_topic":
    {task: scores}, "notes": [lines], "accounting": {task: the judge's counts}}."""
    out = {}
    for k, m in enumerate(models, 1):
        got: dict[str, Any] = {"row": {}, "not_computed": {}, "per_topic": {}, "notes": [], "accounting": {}}
        for t in tasks:
            key, head, method = COLUMNS[t]
            with clock.stage("judge", f"{m.name} {t} ({k}/{len(models)})"):
                try:
                    res = getattr(judge, method)(m)
                except MethodError as exc:
                    got["not_computed"][head] = str(exc)
                    got["row"][key] = None
                    continue
            mean = res.summary["mean"]
            got["row"][key] = None if not math.isfinite(mean) else mean
            got["per_topic"][t] = [res.scores.get(i, math.nan) for i in range(len(res.items))]
            a = res.accounting
            got["accounting"][t] = {x: a.get(x) for x in KEPT}
            unanswered = len(res.items) - res.summary["answered"]
            if unanswered or a.get("fallback_no_logprobs") or a.get("fallback_no_answer"):
                got["notes"].append(f"{head}: {unanswered} of {len(res.items)} topics unanswered, "
                                    f"{a.get('malformed', 0)} malformed replies, "
                                    f"{a.get('fallback_no_logprobs', 0) + a.get('fallback_no_answer', 0)} "
                                    "sampled instead of read from log-probabilities")
            if got["row"][key] is None:
                got["not_computed"][head] = f"the judge answered none of the {len(res.items)} topics"
        out[m.name] = got
    return out


def agreement(judge: Any, tasks: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Per column heading: the judge's agreement with people on that task, from the newest
    qualification of a judge with its settings kept in its cache (`judge.qualify.saved_qualification`):
    the study, the correlation with its interval, one person against the rest, the ceiling and the
    verdict of the alternative-annotator test, with a line saying so ("text"); or, never measured,
    "qualified": False and the command that measures it."""
    from ..judge.qualify import saved_qualification
    from ..metaeval.qualify import STATISTIC_NAMES
    from ..output.numbers import fixed

    saved = saved_qualification(judge) or {}
    out: dict[str, dict[str, Any]] = {}
    for t in tasks:
        head = COLUMNS[t][1]
        study, task, command = QUALIFIED_BY[t]
        kept = ((saved.get("studies") or {}).get(study) or {})
        found = next((x for x in kept.get("tasks") or [] if x.get("task") == task), None)
        if found is None:
            out[head] = {"qualified": False, "study": study, "task": task,
                         "text": f"{head}: the judge's agreement with people was never measured: "
                                 f"`tealeaves judge qualify --task {command}` with the same judge settings "
                                 "measures it before its column is trusted"}
            continue
        c = (found.get("correlation") or {}).get("all") or {}
        ceiling = (found.get("ceiling") or {}).get("all") or {}
        person = (found.get("human_baseline") or {}).get("mean")
        verdict = found.get("verdict") or {}
        n = kept.get("topics")
        of = "" if n == kept.get("of") else f" (a random {n} of {kept.get('of')})"
        iv = (f" [{fixed(c['low'], 2)}, {fixed(c['high'], 2)}]"
              if c.get("low") is not None and c.get("high") is not None else "")
        out[head] = {"qualified": True, "study": study, "task": task, "topics": n,
                     "statistic": found.get("statistic"), "estimate": c.get("estimate"), "low": c.get("low"),
                     "high": c.get("high"), "human_baseline": person, "ceiling": ceiling.get("ceiling"),
                     "trusted": verdict.get("trusted"), "verdict": verdict.get("text"),
                     "text": f"{head}: agreement with people on {study} {task}, {n} topics{of}: "
                             f"{STATISTIC_NAMES.get(found.get('statistic'), found.get('statistic'))} "
                             f"{fixed(c.get('estimate'), 2, 'n/a')}{iv}, one person against the rest "
                             f"{fixed(person, 2, 'n/a')}, ceiling {fixed(ceiling.get('ceiling'), 2, 'n/a')}; "
                             f"{verdict.get('text', 'no verdict')}"}
    return out


__all__ = ["COLUMNS", "QUALIFIED_BY", "agreement", "check_judge", "judge_models"]
