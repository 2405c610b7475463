"""A judge's qualification in the report (`tealeaves judge qualify --json`): per study and task, the
verdict in words first, then the judge's correlation with people beside one person against the
rest and the ceiling, and the alternative-annotator test; what the judge saw that people did not,
and what the run cost."""

from __future__ import annotations

from html import escape
from typing import Any

from ..output import numbers
from .svg import Chart
from .tables import Table

Part = str | Chart | Table
DASH = "–"
STATISTICS = {"spearman": "Spearman", "pearson": "Pearson", "kendall": "Kendall tau"}


def _f(v: Any, digits: int = 2) -> str:
    return numbers.fixed(v, digits, DASH)


def _interval(c: Any, key: str = "estimate") -> str:
    if not isinstance(c, dict) or c.get(key) is None:
        return DASH
    if c.get("low") is None or c.get("high") is None:
        return _f(c[key])
    return f"{_f(c[key])} [{_f(c['low'])}, {_f(c['high'])}]"


def _note(text: str) -> str:
    return f'<p class="note">{escape(text)}</p>'


def _test(a: dict[str, Any]) -> str:
    if a.get("winning_rate") is None:
        return str(a.get("why") or DASH)
    verdict = "passes" if a.get("passes") else "does not pass"
    return (f"advantage {_f(a.get('advantage_probability'))}, winning rate {_f(a.get('winning_rate'))} over "
            f"{a.get('annotators')} annotators: {verdict}")


def section(doc: dict[str, Any]) -> list[Part]:
    s = doc.get("settings") or {}
    out: list[Part] = [f"<h2>Qualification of the judge {escape(str(doc.get('judge', '')))}</h2>",
                       _note(f"{s.get('llm', doc.get('judge'))} at {s.get('base_url', 'an unknown address')}, method "
                             f"{s.get('method', DASH)}, task texts {s.get('texts_version', DASH)}: its answers on the "
                             "bundled human studies' own topics, compared with the people's. Trusted for a task "
                             "when it passes the alternative-annotator test (Calderon et al. 2025) there; the "
                             "correlation with people is shown beside one person's against the rest and the "
                             "ceiling (95% two-stage bootstrap intervals).")]
    for name, study in (doc.get("studies") or {}).items():
        tasks = study.get("tasks") or []
        sub = "" if study.get("topics") == study.get("of") else f", a random {study.get('topics')} of {study.get('of')}"
        verdicts = "".join(f"<li><strong>{escape(str(t.get('task')))}</strong> (for <code>tealeaves judge "
                           f"{escape(str(t.get('judge_task')))}</code>): {escape(str((t.get('verdict') or {}).get('text', '')))}"
                           "</li>" for t in tasks)
        out.append(f"<h3>{escape(str(name))} ({study.get('topics')} topics{escape(sub)})</h3><ul>{verdicts}</ul>")
        rows = []
        for t in tasks:
            stat = STATISTICS.get(str(t.get("statistic")), str(t.get("statistic")))
            base = t.get("human_baseline") or {}
            tests = t.get("alt_test") or {}
            rows.append([str(t.get("task")), f"{stat} with {t.get('people')}",
                         _interval((t.get("correlation") or {}).get("all")), _f(base.get("mean")),
                         _interval((t.get("ceiling") or {}).get("all"), "ceiling"),
                         f"{t.get('scored')} of {t.get('topics')}",
                         "; ".join(f"{lv}: {_test(a)}" for lv, a in tests.items())])
        out.append(Table(["task", "agreement with", "judge", "one person vs the rest", "ceiling", "topics scored",
                          "alternative-annotator test"], rows,
                         caption=f"{name}: the judge against the people"))
        out += [_note(n) for n in study.get("notes") or []]
        out += [_note(f"{t.get('task')}: {n}") for t in tasks for n in t.get("notes") or []]
    a = doc.get("accounting") or {}
    if a:
        out.append(_note(f"{a.get('requests', 0):,} requests ({a.get('cached', 0):,} from the cache, {a.get('sent', 0):,} "
                         f"sent) in {_f(a.get('seconds'), 1)} s; {a.get('unanswered', 0)} items unanswered, "
                         f"{a.get('malformed', 0)} malformed replies."))
    out += [_note(n) for n in doc.get("notes") or []]
    return out


__all__ = ["section"]
