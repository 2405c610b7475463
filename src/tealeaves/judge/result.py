"""JudgeResult: a judge's answers, per item, with the scores they give each topic (or document),
how they were obtained (method, fallbacks, malformed replies, unanswered items), what it cost
(requests, cache hits, tokens, seconds) and where the data went."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..output.display import Display
from ..output.jsonout import json_safe


@dataclass(repr=False)
class JudgeResult(Display):
    task: str  # "word-intrusion", "topic-intrusion", "ratings" or "proxann"
    score_name: str  # what `scores` holds, e.g. "model_precision"
    scores: dict[int, float]  # topic (or document, for topic intrusion) -> score; NaN: unanswered
    items: list[dict[str, Any]]
    summary: dict[str, Any]
    settings: dict[str, Any]  # the judge: address, model, method, temperature, seed, texts version
    accounting: dict[str, Any]  # requests, cached, tokens, seconds, fallbacks, reported models
    estimate: dict[str, Any]
    sent_to: dict[str, Any]  # {"base_url", "remote", "sent": what left this machine}

    _name = "JudgeResult"

    def _headline(self) -> list[tuple[str, Any]]:
        return [("task", self.task), ("llm", self.settings["llm"]),
                (f"mean {self.score_name}", self.summary.get("mean", math.nan)),
                ("answered", f"{self.summary['answered']}/{len(self.items)}"),
                ("cache hits", self.accounting.get("cached", 0))]

    def _columns(self) -> tuple[str, dict[str, Any]]:
        keys = [k for k in ("topic", "document", "score", "choice", "expected", "label", "source", "mass",
                            "malformed", "unanswered") if any(k in it for it in self.items)]
        return "item", {k: [it.get(k) for it in self.items] for k in keys}

    def to_dict(self) -> dict[str, Any]:
        return json_safe({"task": f"judge-{self.task}", "score_name": self.score_name,
                          "scores": {str(k): v for k, v in self.scores.items()}, "summary": self.summary,
                          "settings": self.settings, "accounting": self.accounting, "estimate": self.estimate,
                          "sent_to": self.sent_to, "items": self.items})

    def lines(self) -> list[str]:
        """The result as terminal lines: what was asked and where, the scores' summary, and every
        count a reader must see (fallbacks, malformed replies, unanswered items)."""
        s, a, st = self.summary, self.accounting, self.settings
        where = f"{self.sent_to['base_url']} ({'remote' if self.sent_to['remote'] else 'this machine'})"
        out = [f"judge {self.task}: {st['llm']} at {where}; reported model(s): "
               f"{', '.join(a.get('reported_models') or ['none'])}",
               f"method {st['method']} (log-probabilities at temperature 0; {st['samples']} samples at "
               f"temperature {st['temperature']:g} where sampled), seed {st['seed']}, "
               f"texts {st['texts_version']}",
               f"{self.score_name}: mean {_f(s.get('mean'))} over {s['answered']} of {len(self.items)} "
               f"items" + (f" (95% bootstrap interval {_f(s['mean_ci'][0])} to {_f(s['mean_ci'][1])})"
                           if s.get("mean_ci") else "")]
        for k, label in (("unanswered", "unanswered items"), ("malformed", "malformed replies"),
                         ("fallback_no_logprobs", "items sampled: the server gave no log-probabilities"),
                         ("fallback_no_answer", "items sampled: no well-formed answer among the "
                                                "log-probabilities")):
            if a.get(k):
                out.append(f"  {label}: {a[k]}")
        out.append(f"requests {a['requests']} ({a['cached']} from the cache, hit rate "
                   f"{_f(a.get('cache_hit_rate'))}), {a['sent']} sent in {a['seconds']:.1f} s"
                   + (f", {a['tokens']['prompt']:,} prompt and {a['tokens']['completion']:,} completion "
                      "tokens" if a["sent"] else ""))
        return out


def _f(v: Any) -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "—"
    return f"{v:.3f}"


__all__ = ["JudgeResult"]
