"""An LLM judge's columns in `evaluate`: for every model with top words, the judge's mean
probability of choosing the intruder ("judge MP") and its mean expected 3-point rating ("judge
rating"), with the per-topic scores for the report. The judge is checked (consent to send, the
server answering and serving the model) and its cost estimated before any other work."""

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


__all__ = ["COLUMNS", "check_judge", "judge_models"]
