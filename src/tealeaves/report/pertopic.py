"""The per-topic table of a model (which of its topics to trust): top words, coherence per topic,
the per-topic diagnostics (`tealeaves diagnostics`, `evaluate --diagnostics`), stability across
restarts (`stability` results, CONTRACT3) and the junk-topic flags; one row per topic, sortable by
any column."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..output import numbers
from .tables import Table

WORDS = 10  # top words shown per topic
JUDGE_HEADS = {"word-intrusion": ("judge P(intruder)", "judge_model_precision"),
               "ratings": ("judge rating", "judge_rating")}  # task -> (heading, the row key whose digits it takes)
MEASURE_NAMES = {"umass": "UMass", "uci": "UCI", "npmi": "NPMI", "c_v": "C_V", "c_p": "C_P", "c_a": "C_A"}


def _score(v: Any) -> str:
    return numbers.score(v, "–")


def stability_of(groups: Any, model: str) -> list[Any] | None:
    """`model`'s per-topic stability from a list of stability results (None if none covers it)."""
    for g in groups if isinstance(groups, list) else []:
        per = g.get("per_topic") if isinstance(g, dict) else None
        if isinstance(per, dict) and isinstance(per.get(model), list):
            return per[model]
    return None


def table(model: str, words: Sequence[Sequence[str]] | None = None,
          coherence: dict[str, Sequence[Any]] | None = None, diagnostics: dict[str, Any] | None = None,
          stability: Sequence[Any] | None = None, judge: dict[str, Sequence[Any]] | None = None) -> Table | None:
    """One row per topic of `model` from whatever is given; None when nothing per topic is. `judge`:
    an LLM judge's per-topic scores by task (evaluate's `topic_judge`)."""
    from ..diagnostics import SHOWN

    diag_rows = (diagnostics or {}).get("topics") or []
    coherence = coherence or {}
    judge = {t: v for t, v in (judge or {}).items() if t in JUDGE_HEADS and isinstance(v, list)}
    sizes = [len(x) for x in (words or [], diag_rows, stability or [], *coherence.values(), *judge.values())]
    k = max(sizes, default=0)
    if k == 0:
        return None
    head = ["topic", "top words", *[f"{MEASURE_NAMES.get(m, m)} coherence" for m in coherence],
            *[JUDGE_HEADS[t][0] for t in judge]]
    shown = [(n, h) for n, h in SHOWN if any(n in r for r in diag_rows)]
    head += [h for _, h in shown]
    if stability is not None:
        head.append("stability")
    if diag_rows:
        head.append("flags")
    rows = []
    for t in range(k):
        d = diag_rows[t] if t < len(diag_rows) and isinstance(diag_rows[t], dict) else {}
        w = list(words[t]) if words and t < len(words) else str(d.get("words", "")).split()
        row = [str(t), " ".join(w[:WORDS])]
        row += [numbers.metric("coherence", v[t] if t < len(v) else None, "–") for v in coherence.values()]
        row += [numbers.metric(JUDGE_HEADS[j][1], v[t] if t < len(v) else None, "–") for j, v in judge.items()]
        row += [_score(d.get(n)) for n, _ in shown]
        if stability is not None:
            row.append(numbers.metric("stability", stability[t] if t < len(stability) else None, "–"))
        if diag_rows:
            row.append(str(d.get("flags") or "").replace(" ", ", ") or "none")
        rows.append(row)
    parts = ["top words"] + [f"{MEASURE_NAMES.get(m, m)} coherence" for m in coherence]
    parts += ["an LLM judge"] if judge else []
    parts += ["diagnostics"] if diag_rows else []
    parts += ["stability across restarts"] if stability is not None else []
    return Table(head, rows, caption=f"Per topic, {model}: {', '.join(parts)}", sortable=True)
