"""What people said, in the report: each metric's agreement with people beside the evaluation
(`evaluate --human`, `evaluate.human`), and a ProxAnn study's scores (`proxann score --json`, and
the same block inside `metaeval` of an app study): the per-model figures (how well people's fit
ratings and rankings follow theta, the human baseline, agreement between annotators), a chart and
a sortable table per topic, every exclusion counted."""

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


def _interval(est: Any, lo: Any, hi: Any, digits: int = 2) -> str:
    if est is None:
        return DASH
    return _f(est, digits) + (f" [{_f(lo, digits)}, {_f(hi, digits)}]" if lo is not None and hi is not None else "")


def _note(text: str) -> str:
    return f'<p class="note">{escape(text)}</p>'


def evaluation(doc: dict[str, Any]) -> list[Part]:
    """The agreement block of an `evaluate` result: one row per metric, its agreement with people
    (or why there is none), with whom, and how the figure was measured."""
    h = doc.get("human")
    if not isinstance(h, dict) or not isinstance(h.get("metrics"), dict):
        return []
    carried = h.get("kind") == "carried"
    stat = STATISTICS.get(str(h.get("statistic")), str(h.get("statistic", "")))
    rows = []
    for key, m in h["metrics"].items():
        if not isinstance(m, dict):
            continue
        if m.get("estimate") is None:
            rows.append([str(m.get("label", key)), DASH, DASH, DASH, "", str(m.get("why", ""))])
            continue
        how = str(m.get("how", "")) + ("" if m.get("same_convention", True) else
                                       " (not tealeaves' default convention)")
        rows.append([str(m.get("label", key)), _interval(m["estimate"], m.get("low"), m.get("high")),
                     str(m.get("topics", DASH)), _f(m.get("ceiling")), str(m.get("people", "")), how])
    head = (f"<h3>Agreement with people ({escape(str(h.get('study', '')))})</h3>",
            _note(("Measured on a bundled study's topics, not yours: each figure tells how the metric, "
                   "computed as stated, agreed with people there; it carries over as a property of the metric."
                   if carried else "Measured on your judgments of these models' topics.")
                  + f" {stat} with the people's per-topic score, 95% two-stage bootstrap interval; the ceiling "
                  "is how well a score equal to the true topic quality would agree with these people."))
    out: list[Part] = [*head, Table(["metric", stat, "topics", "ceiling", "people's judgment", "how measured"],
                                    rows, "Each metric against the people's per-topic judgments")]
    t = h.get("trusted")
    if isinstance(t, dict):
        out.append(_note(f"Trusted for interpretability: {t.get('label')}, {t.get('why')}."))
    out += [_note(str(n)) for n in h.get("notes") or []]
    return out


def metaeval_extra(doc: dict[str, Any]) -> list[Part]:
    """What `metaeval` adds for judges and ProxAnn studies: each judge's document agreement, the
    human baseline of the topic ranking, an app study's per-topic and per-document scores, and
    the notes on the study and the matching of its models."""
    out: list[Part] = []
    docs = doc.get("document_agreement") or {}
    if docs:
        out.append(Table(["judge", "Kendall tau with the people's mean fit", "topics", "people with each other",
                          "note"],
                         [[str(k), _interval(d.get("mean"), d.get("low"), d.get("high")), str(d.get("topics", DASH)),
                           _f(d.get("human_baseline")), str(d.get("why") or "")] for k, d in docs.items()],
                         "Document agreement: each judge's document fits against the people's, averaged over topics"))
    loo = doc.get("leave_one_out") or {}
    if loo:
        out.append(Table(["people's judgment", "Kendall tau, one annotator against the rest", "topics", "draws",
                          "note"],
                         [[str(t), f"{_f(x.get('mean'))} ± {_f(x.get('sd'))}" if x.get("mean") is not None else DASH,
                           str(x.get("topics", DASH)), str(x.get("repeats", DASH)), str(x.get("why") or "")]
                          for t, x in loo.items()],
                         "The human baseline of the topic ranking (leave one annotator out)"))
    if isinstance(doc.get("proxann_score"), dict):
        out.append("<h3>Per topic and document against theta</h3>")
        out += proxann_score(doc["proxann_score"], heading=False)
    out += [_note(str(n)) for n in [*(doc.get("model_notes") or []), *(doc.get("study_notes") or [])]]
    return out


# -- a ProxAnn study's scores -------------------------------------------------------------------------------

MODEL_FIGURES = [  # summary key, heading, interval key
    ("tau_fit", "tau, mean fit with theta", "tau_fit_ci"),
    ("tau_rank", "tau, mean rank with theta", "tau_rank_ci"),
    ("annotator_tau_fit", "one annotator's tau with theta", None),
    ("human_tau_fit", "one annotator's tau with the others", None),
]
TOPIC_COLUMNS = [("annotators", "annotators", 0), ("tau_fit", "tau fit", 2), ("tau_rank", "tau rank", 2),
                 ("spearman_fit", "Spearman fit", 2), ("annotator_tau_fit", "one annotator's tau", 2),
                 ("human_tau_fit", "tau with the others", 2), ("distractor_rating", "distractor rating", 2),
                 ("clarity", "clarity", 2)]


def _agreement(a: Any) -> list[str]:
    if not isinstance(a, dict):
        return [DASH] * 3
    return [_f(a.get("krippendorff_alpha_interval")), _f(a.get("krippendorff_alpha_ordinal")),
            _f(a.get("fleiss_kappa"))]


def proxann_score(doc: dict[str, Any], heading: bool = True) -> list[Part]:
    """A `proxann score` result: per model its figures, a chart of each topic's tau, and one row
    per topic (its top words, annotators, taus, distractor and clarity, the labels people gave)."""
    summary = doc.get("summary") or {}
    topics = [t for t in doc.get("topics") or [] if isinstance(t, dict)]
    used = len(doc.get("responses") or [])
    excluded = doc.get("excluded_annotators") or []
    out: list[Part] = []
    if heading:
        out.append("<h2>ProxAnn: do people's document fits follow the model?</h2>")
    out.append(_note(f"{used} responses used; {doc.get('incomplete', 0)} without a complete ranking left out; "
                     f"excluded by the attention checks: {', '.join(map(str, excluded)) or 'none'}. Kendall's "
                     "tau-b of the documents' mean fit rating (or mean rank) with the model's theta, per topic, "
                     "then averaged over topics (95% bootstrap interval over topics); the human baseline: one "
                     "annotator's ratings against the mean of the others'."))
    rows = []
    for m, s in summary.items():
        if not isinstance(s, dict):
            continue
        cells = [str(m), str(s.get("topics", DASH)), str(s.get("responses", DASH))]
        for key, _, ci in MODEL_FIGURES:
            lo, hi = (s.get(ci) or [None, None]) if ci else (None, None)
            cells.append(_interval(s.get(key), lo, hi, 3))
        cells += [_f(s.get("distractor_rating")), _f(s.get("clarity")), *_agreement(s.get("agreement"))]
        rows.append(cells)
    out.append(Table(["model", "topics", "responses", *[h for _, h, _ in MODEL_FIGURES], "distractor rating",
                      "clarity", "Krippendorff's alpha (interval)", "alpha (ordinal)", "Fleiss' kappa"], rows,
                     "Per model: how well people's fits and rankings follow theta, and how well they agree"))
    for m in summary:
        mine = [t for t in topics if t.get("model") == m]
        if mine:
            out.append(Chart("hbars", f"Kendall tau of the mean fit with theta, per topic: {m}", "tau", "",
                             name=f"proxann-tau-{m}",
                             labels=[f"{t.get('topic')}: {t.get('words', '')}".strip() for t in mine],
                             y=[t.get("tau_fit") for t in mine]))
    body = [[str(t.get("model", "")), str(t.get("topic", "")), str(t.get("words", "")),
             *[_f(t.get(k), d) if d else str(t.get(k, DASH)) for k, _, d in TOPIC_COLUMNS],
             " | ".join(map(str, t.get("labels") or []))] for t in topics]
    out.append(Table(["model", "topic", "top words", *[h for _, h, _ in TOPIC_COLUMNS], "labels people gave"],
                     body, "Per topic (a tau is – where a side is constant: it says nothing about order)",
                     sortable=True))
    failures = doc.get("attention_failures") or {}
    if failures:
        out.append(_note("Attention checks failed: " + ", ".join(f"{a} {n}" for a, n in failures.items()) + "."))
    return out
