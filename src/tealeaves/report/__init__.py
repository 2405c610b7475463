"""One self-contained HTML report (inline CSS, SVG and a small sorting script; nothing fetched at
view time, readable without the script) from the JSON that every command writes with `--json`:
many models evaluated side by side (`evaluate`) and the choice of the number of topics (`select`),
each with its recommendation and reasons first, then the details: held-out likelihood and
completion (estimates with ±1 sd and the expected Jensen gap, per-document scatter), comparisons
and training curves, coherence per topic with its top words, diversity, exclusivity, B-Cubed, CSL,
predictive metrics, intrusion scores, per-topic tables (top words, coherence, diagnostics,
stability, flags; sortable), stability across restarts, agreement with people (`metaeval`, each
metric's beside an evaluation: `people.py`) and a ProxAnn study's scores. A file may also hold `{"sections":
[...]}` (what `tealeaves demo` writes).

Sections are lists of HTML strings, `svg.Chart`s and `tables.Table`s; `render` lays consecutive
charts out in a grid of small multiples at the page's full width, `write_figures` writes each chart
as SVG and PNG (`figures`), `write_tables` every table as booktabs LaTeX or GitHub Markdown. Every
number is shown by `output.numbers`, the terminal's rule."""

from __future__ import annotations

import math
import os
import re
from collections.abc import Sequence
from html import escape, unescape
from typing import Any

from ..errors import InputFileError, shorten
from ..files.atomic import write_text
from ..files.records import read_json
from ..heldout.crosscheck import describe as describe_check
from ..output import numbers
from ..output.display import words_text
from ..util.numbers import finite_float
from ..util.stages import estimated_stages
from ..util.text import excerpt
from . import people, pertopic, recommend, svg, tables
from .pertopic import MEASURE_NAMES
from .schema import check_result, decode
from .svg import Chart
from .tables import Table

Part = str | Chart | Table

CSS = """body{font-family:system-ui,sans-serif;margin:1.5rem 2rem;color:#222;line-height:1.4}
h1{font-size:1.6rem}h2{border-bottom:1px solid #ccc;padding-bottom:.2rem;margin-top:2rem}
h1,h2,h3,p,li,caption{overflow-wrap:anywhere}
.tablewrap{max-width:100%;overflow-x:auto}
table{border-collapse:collapse;margin:.6rem 0}caption{text-align:left;font-weight:600;padding:.2rem 0;
max-width:calc(100vw - 4rem)}
td,th{border:1px solid #ccc;padding:.25rem .5rem;text-align:left;vertical-align:top;overflow-wrap:break-word}
td.long,th.long{overflow-wrap:anywhere}
td.n{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums}
th.sorter{cursor:pointer;user-select:none}th.sorter::after{content:" ↕";color:#999}
th[aria-sort=ascending]::after{content:" ▲";color:#222}th[aria-sort=descending]::after{content:" ▼";color:#222}
.note{color:#555;font-size:.9rem}.warn{color:#a30;font-weight:600;font-size:.9rem}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(100%,28rem),1fr));gap:1rem 1.5rem;
align-items:start;margin:.8rem 0}
figure.chart{margin:0;min-width:0}figure.chart.wide{grid-column:1/-1}
figure.chart svg{display:block;width:100%;height:auto;font-size:11px}
svg .title{font-size:13px;font-weight:600}svg .xtitle,svg .ytitle{font-size:12px}
svg .axis{stroke:#333}svg .grid{stroke:#eee}svg polygon.far{fill:#c0392b}
.summary{background:#f4f7fb;border:1px solid #c9d6e8;padding:.6rem 1rem;border-radius:4px}
.summary .headline{font-size:1.1rem;font-weight:600}
svg .err{stroke:#1f5fa8;stroke-width:2}svg .tiny{stroke-dasharray:2 2}svg .gap{stroke:#d68910;stroke-width:2}
svg circle.mark{fill:#1f5fa8}svg rect.mark{fill:#6c9bd2}svg .note{fill:#555}
svg .diag{stroke:#c33;stroke-dasharray:4 3}svg .tick{fill:#444}
tr.junk td{background:#fbe3e0}tr.caution td{background:#fdf3d8}
.folded{margin-bottom:1.6rem}.folded .controls{margin:0;font-size:.9rem}.folded .controls label{margin-right:1.2rem;cursor:pointer}
.folded:not(:has(input.rows:checked)) tr.more{display:none}
.folded:not(:has(input.cols:checked)) .x{display:none}"""

DASH = "–"


def _num(v: Any, digits: int = 2) -> str:
    """A value inside HTML text: escaped, numbers with `digits` decimals."""
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return DASH
    if isinstance(v, bool):
        return "yes" if v else "no"
    return f"{v:.{digits}f}" if isinstance(v, float) else escape(str(v))


def _m(key: str, v: Any) -> str:
    """A metric as every table shows it (the terminal's decimals), plain text."""
    return numbers.metric(key, v, DASH)


def _f(v: Any, digits: int) -> str:
    return numbers.fixed(v, digits, DASH)


def _text(v: Any) -> str:
    """A plain-text cell: numbers with two decimals, None as a dash."""
    if isinstance(v, str):
        return v
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return _f(v, 2)
    return DASH if v is None else str(v)


def _tab(head: Sequence[str], rows: Sequence[Sequence[Any]], caption: str = "",
         sortable: bool = False) -> Table:
    """A table of plain-text cells (escaped when drawn)."""
    return Table(list(head), [[_text(c) for c in r] for r in rows], caption, sortable)


def _table(head: Sequence[str], rows: Sequence[Sequence[Any]]) -> Table:
    """A table whose string cells are already HTML-escaped (older sections build them so)."""
    return Table(list(head), [[unescape(c) if isinstance(c, str) else unescape(_num(c)) for c in r]
                              for r in rows])


def _sd_interval(values: Sequence[float | None], sds: Sequence[float | None]) -> tuple[list, list]:
    lo = [v - s if v is not None and s is not None else None for v, s in zip(values, sds, strict=True)]
    hi = [v + s if v is not None and s is not None else None for v, s in zip(values, sds, strict=True)]
    return lo, hi


def _unnull(check: dict[str, Any]) -> dict[str, Any]:
    """A cross-check as JSON wrote it (NaN as null) back to the numbers `describe_check` formats."""
    nan = float("nan")
    out = {k: nan if v is None and k in ("bias_per_token", "excess_error", "excess_limit") else v
           for k, v in check.items()}
    out["ci95"] = [nan if v is None else v for v in check["ci95"]]
    return out


def jensen_gap(r: dict[str, Any]) -> float | None:
    """The expected Jensen gap of a held-out result's total (nats): an unbiased estimator's log falls
    below log P(w) by about that much, as its note says (Lee-Whiteley's when the run has it, else from
    the runs' sd: `heldout.result.jensen_gap`); None when it does not apply."""
    from ..heldout.result import jensen_gap as gap

    ve = r.get("variance_estimate")  # the note's own figure when the run has one (Lee-Whiteley)
    if isinstance(ve, dict) and (own := finite_float(ve.get("jensen_gap"))) is not None:
        return own
    sd = (r.get("documents") or {}).get("sd")
    if not r.get("unbiased") or not isinstance(sd, list) or not isinstance(r.get("runs"), int):
        return None
    g = gap(sd, r["runs"])
    return g if math.isfinite(g) else None


def _heldout(doc: dict[str, Any]) -> list[Part]:
    results = doc["results"]
    task = results[0].get("task", "heldout") if results else "heldout"
    models = [str(r.get("model") or doc.get("model", "")) for r in results]
    several = len(set(models)) > 1
    what = "Document completion" if task == "completion" else "Held-out likelihood"
    title = f"{what}: {escape(str(doc.get('model', '')))} on {escape(str(doc.get('docs', '')))}"
    gaps = [jensen_gap(r) for r in results]
    out: list[Part] = [f"<h2>{title}</h2>", _tab(
        ["model", "method", "total log-lik", "± sd", "expected Jensen gap", "per token", "perplexity", "tokens",
         "dropped", "seconds"],
        [[m, r["label"], _m("total", r["total"]), _m("sd", r.get("sd")), _m("jensen_gap", g),
          _m("per_token", r["per_token"]), _m("heldout_perplexity", r["perplexity"]), r["tokens"],
          r.get("tokens_dropped", 0), _m("seconds", r["seconds"])]
         for m, r, g in zip(models, results, gaps, strict=True)], sortable=True)]
    for m, r, g in zip(models, results, gaps, strict=True):
        name = f"{m}, {r['label']}" if several else r["label"]
        if g is not None:
            out.append(f'<p class="note">{escape(name)}: ±1 sd {escape(_m("sd", r.get("sd")))} nats; expected '
                       f"Jensen gap {escape(_m('jensen_gap', g))} nats (the log of an unbiased estimate is "
                       "low on average by about this much; drawn in orange beside the sd bar, from the "
                       "estimate up to where log P(w) is expected).</p>")
        elif r.get("note"):
            out.append(f'<p class="note">{escape(name)}: {escape(r["note"])}</p>')
        if r.get("check"):
            cls = "warn" if r["check"].get("flagged") else "note"
            out.append(f'<p class="{cls}">{escape(describe_check(_unnull(r["check"])))}</p>')
    methods = [r["method"] for r in results]
    labels = models if several else (methods if len(set(methods)) == len(methods) else [r["label"] for r in results])
    totals = [r["total"] for r in results]
    lo, hi = _sd_interval(totals, [r.get("sd") for r in results])
    clip = [] if several else svg.outliers(totals, lo, hi)  # one quantity: a far estimate is broken
    gap_title = " and the expected Jensen gap" if any(g is not None for g in gaps) else ""
    out.append(Chart("points", f"{what}: estimates with ±1 sd{gap_title}", "model" if several else "estimator",
                     "total log-likelihood (nats)", name=f"{task}-estimates", labels=labels, y=totals, lo=lo,
                     hi=hi, clip=clip, gap=gaps))
    if len(results) >= 2:
        a, b = results[0], results[1]
        la, lb = (models[0], models[1]) if several else (labels[0], labels[1])
        out.append(Chart("scatter", f"Per document: {lb} against {la}", la, lb, name=f"{task}-scatter",
                         x=a["documents"]["log_prob"], y=b["documents"]["log_prob"], diagonal=True))
    return out


def _compare(doc: dict[str, Any]) -> list[Part]:
    lo, hi = doc.get("per_token_interval") or [None, None]
    out: list[Part] = [
        f"<h2>Comparison: {escape(str(doc.get('model_a')))} against {escape(str(doc.get('model_b')))}</h2>",
        f"<p><strong>{escape(str(doc.get('verdict', '')))}</strong></p>",
        _tab(["log P(w|A) − log P(w|B)", "sd (chains)", "sd (documents)", "per token", "95% interval",
              "perplexity ratio A / B"],
             [[_f(doc["total"], 2), _f(doc.get("sd_chains"), 2), _f(doc.get("sd_documents"), 2),
               _f(doc.get("per_token"), 5), f"{_f(lo, 5)} … {_f(hi, 5)}", _f(doc.get("perplexity_ratio"), 5)]]),
        *_interval_notes(doc),
    ]
    ratios = doc.get("documents", {}).get("log_ratio", [])
    if ratios:
        out.append(Chart("hist", "Per-document log ratio log P(w|A) − log P(w|B)", "log ratio (nats)",
                         "documents", name="compare-log-ratios", y=[v for v in ratios if v is not None]))
    return out


def _interval_notes(c: dict[str, Any]) -> list[Part]:
    """What a comparison's 95% interval is about, and its warning (results before issue 21 have
    neither)."""
    about, warning = c.get("per_token_interval_about"), c.get("warning")
    out: list[Part] = []
    if isinstance(about, str):
        out.append(f"<p>The 95% interval is about {escape(about)}.</p>")
    if isinstance(warning, str):
        out.append(f"<p><strong>Warning:</strong> {escape(warning)}</p>")
    return out


def _curve(doc: dict[str, Any]) -> list[Part]:
    names = [os.path.basename(str(m)) for m in doc["models"]]
    lo, hi = _sd_interval(doc["totals"], doc["sd"])
    return ["<h2>Training curve (Iteration-AIS)</h2>",
            _tab(["model", "total", "± sd", "per token"],
                 [[n, _m("total", t), _m("sd", s), _m("per_token", p)] for n, t, s, p in
                  zip(names, doc["totals"], doc["sd"], doc["per_token"], strict=True)]),
            Chart("lines", "log P(w | model) per snapshot", "snapshot", "total log-likelihood (nats)",
                  name="curve", series=[{"name": "Iteration-AIS", "x": list(range(1, len(names) + 1)),
                                         "y": doc["totals"], "lo": lo, "hi": hi}])]


def _window(measure: str, params: dict[str, Any]) -> str:
    if measure == "umass":
        return "co-occurrence in whole documents"
    if measure == "c_a":
        return f"context windows of ±{params.get('window')} tokens"
    return f"sliding window of {params.get('window')} words"


def _coherence_flags(r: dict[str, Any]) -> tuple[list[list[str]] | None, str | None]:
    """An NPMI result's junk-topic flags per topic as `tealeaves coherence` shows them, or why there
    are none (the reference too small for them); (None, None) for another measure."""
    from ..diagnostics.flags import coherence_flags, too_small

    if r.get("measure") != "npmi":
        return None, None
    why = too_small(r)
    return (None, why) if why else (coherence_flags(r), None)


def _coherence_coverage(r: dict[str, Any]) -> Table:
    """Per topic: the score (– with its reason), absent words, pairs that never co-occur, and with
    NPMI the junk-topic flags (or why none were computed, marked *)."""
    flags, why = _coherence_flags(r)
    rows = []
    for i, t in enumerate(r["topics"]):
        score = _m("coherence", t.get("score")) if t.get("score") is not None else f"– ({t.get('reason')})"
        pairs = f"{t['zero_pairs']} of {t['word_pairs']}" if "zero_pairs" in t and "word_pairs" in t else DASH
        raised = ([", ".join(flags[i]) or "none"] if flags is not None else []) + (["none*"] if why else [])
        rows.append([str(i), score, " ".join(t.get("missing") or []) or "none", pairs, *raised,
                     words_text(t["words"]), str(t.get("note") or "")])
    head = ["topic", "score", "absent from the reference", "pairs never together",
            *(["flags"] if flags is not None or why else []), "top words", "note"]
    if not any(row[-1] for row in rows):
        head, rows = head[:-1], [row[:-1] for row in rows]
    return _tab(head, rows, caption=f"*{why}" if why else "", sortable=True)


def _convention(r: dict[str, Any]) -> str:
    """The convention a coherence result was computed under, as the report names it."""
    conv = (r.get("fingerprint") or {}).get("convention") or r["params"].get("convention")
    return f"{conv} convention" if conv else "convention not recorded"


def _topic_label(i: int, words: Sequence[str] | None) -> str:
    """A topic as a chart labels it: its number and top words (all of them, wrapped, never cut)."""
    return f"topic {i}: {words_text(words[:pertopic.WORDS])}" if words else f"topic {i}"


def _coherence(doc: dict[str, Any]) -> list[Part]:
    from ..coherence.fingerprint import line

    out: list[Part] = [f"<h2>Coherence: {escape(str(doc.get('model', '')))}</h2>"]
    for r in doc["results"]:
        name = MEASURE_NAMES.get(r["measure"], r["measure"])
        out.append(f"<h3>{escape(name)} ({escape(_convention(r))}): mean {escape(_m('coherence', r['mean']))} "
                   f"over {len(r['topics'])} topics ({escape(_window(r['measure'], r['params']))})</h3>")
        fp = line([r["fingerprint"]]) if r.get("fingerprint") else "fingerprint: not recorded in this JSON"
        out.append(f"<p class=\"fingerprint\">{escape(fp)}</p>")
        labels = [_topic_label(i, t["words"]) for i, t in enumerate(r["topics"])]
        out.append(Chart("hbars", f"{name} per topic", f"{name} coherence", "", name=f"coherence-{r['measure']}",
                         labels=labels, y=[t["score"] for t in r["topics"]]))
        if any("zero_pairs" in t or t.get("missing") or t.get("score") is None for t in r["topics"]):
            out.append(_coherence_coverage(r))
    return out


def _diversity(doc: dict[str, Any]) -> list[Part]:
    out: list[Part] = [f"<h2>Diversity and exclusivity: {escape(str(doc.get('model', '')))}</h2>"]
    ex = doc.get("exclusivity")
    words = doc.get("words") or []
    rows = [["topic diversity (unique share of the top words)", _m("diversity", doc.get("diversity"))],
            ["top words per topic", _text(doc.get("topn"))]]
    if ex:
        rows.append(["exclusivity (stm FREX over the top 10, weight 0.7), mean", _m("exclusivity", sum(ex) / len(ex))])
    out.append(_tab(["measure", "value"], rows))
    if ex:
        out.append(Chart("hbars", "Exclusivity per topic", "exclusivity", "", name="exclusivity",
                         labels=[_topic_label(i, words[i] if i < len(words) else None) for i in range(len(ex))],
                         y=ex))
    if doc.get("per_model"):  # the demo's diversity of several models
        out.append(_tab(["model", f"diversity (top {_text(doc.get('topn'))})"],
                        [[k, _m("diversity", v)] for k, v in doc["per_model"].items()], sortable=True))
    return out


def _bcubed(doc: dict[str, Any]) -> list[Part]:
    d = numbers.digits("bcubed")
    rows = [["B-Cubed precision", doc.get("precision")], ["B-Cubed recall", doc.get("recall")],
            ["B-Cubed F (mean of item F)", doc.get("f")], ["F of the mean precision and recall", doc.get("f_of_means")]]
    for k, name in (("purity", "purity"), ("inverse_purity", "inverse purity"), ("nmi", "NMI")):
        if k in doc:
            rows.append([name, doc[k]])
    out: list[Part] = ["<h2>Clusters against gold labels (B-Cubed and friends)</h2>",
                       _tab(["measure", "value"], [[r[0], _f(r[1], d)] for r in rows]
                            + [["items", _text(doc.get("items"))]])]
    per = doc.get("per_class") or []
    if per:
        out.append(_tab(["gold class", "precision", "recall", "F"],
                        [[str(c["class"]), _f(c["precision"], d), _f(c["recall"], d), _f(c["f"], d)]
                         for c in per], caption="Per gold class", sortable=True))
    return out


def _csl(doc: dict[str, Any]) -> list[Part]:
    kind = "biased CSL (tends to overestimate)" if doc.get("biased") else "CSL (a lower bound in expectation)"
    rows = [["mean log P(x)", _f(doc.get("mean"), 4)], ["items", _text(doc.get("items"))],
            ["chain steps", _text(doc.get("chain_steps"))], ["seconds", _m("seconds", doc.get("seconds"))]]
    if doc.get("exact_mean") is not None:
        rows.insert(1, ["exact mean log P(x)", _f(doc["exact_mean"], 4)])
    out: list[Part] = [f"<h2>{escape(kind)}</h2>", _tab(["", "value"], rows)]
    items = [v for v in doc.get("item_log_prob", []) if v is not None]
    if items:
        out.append(Chart("hist", "Per-item CSL estimate of log P(x)", "log P(x) (nats)", "items",
                         name="csl-items", y=items))
    return out


def _intrusion(doc: dict[str, Any]) -> list[Part]:
    out: list[Part] = ["<h2>Intrusion (human annotators)</h2>"]
    rows = []
    for m, s in doc["summary"].items():
        ci = s.get("model_precision_ci") or [None, None]
        ti = s.get("topic_log_odds_ci") or [None, None]
        rows.append([escape(m), s.get("model_precision"), f"{_num(ci[0])} … {_num(ci[1])}", s.get("topics", "–"),
                     s.get("topic_log_odds"), f"{_num(ti[0])} … {_num(ti[1])}", s.get("documents", "–")])
    out.append(_table(["model", "model precision", "95% CI", "topics", "topic log odds", "95% CI", "documents"],
                      rows))
    from ..intrusion.scoring import statistics_lines  # agreement, tests against chance, comparisons

    out.extend(f'<p class="note">{escape(line)}</p>' for line in statistics_lines(doc))
    words = doc.get("topic_words") or {}
    for m, per in doc.get("model_precision", {}).items():
        named = words.get(m) or {}  # the topic's words as the annotators saw them (older files: none)
        labels = [f"{k}: {' '.join(named[k])}" if named.get(k) else f"topic {k}" for k in per]
        out.append(Chart("hbars", f"Model precision per topic: {m}", "fraction who found the intruder", "",
                         name=f"model-precision-{m}", labels=labels, y=list(per.values())))
    for m, per in doc.get("topic_log_odds", {}).items():
        out.append(Chart("hist", f"Topic log odds of documents: {m}", "topic log odds", "documents",
                         name=f"topic-log-odds-{m}", y=list(per.values())))
    return out


def _auto(doc: dict[str, Any]) -> list[Part]:
    rows = [[m, _m("auto_model_precision", s["model_precision"]),
             f"{_m('auto_model_precision', s['model_precision_ci'][0])} … "
             f"{_m('auto_model_precision', s['model_precision_ci'][1])}", _text(s["topics"])]
            for m, s in doc["summary"].items()]
    items = [[" ".join(it["options"]), it["options"][it["predicted"]], it["options"][it["intruder"]],
              "yes" if it["correct"] else "no"] for it in doc["items"]]
    return ["<h2>Automated word intrusion (NPMI proxy)</h2>",
            _tab(["model", "automated MP", "95% CI", "topics"], rows),
            _tab(["options shown", "predicted intruder", "true intruder", "correct"], items, sortable=True)]


def _predictive(doc: dict[str, Any]) -> list[Part]:
    return ["<h2>Predictive metrics (Chang et al. 2009, 4.2)</h2>",
            _tab(["log likelihood per word", "predictive rank", "documents", "tokens"],
                 [[_f(doc["log_likelihood"], 4), _m("predictive_rank", doc["rank"]), _text(doc["documents"]),
                   _text(doc["tokens"])]]),
            Chart("hist", "Per-document predictive log likelihood", "mean log p(w | theta) per word", "documents",
                  name="predictive", y=[v for v in doc["doc_log_lik"] if v is not None])]


EXCERPT = 200  # characters of a document shown in a table


def _intrusion_tasks(doc: dict[str, Any]) -> list[Part]:
    rows = [[t["kind"], excerpt(t.get("text", ""), EXCERPT), " | ".join(t["options"])] for t in doc["tasks"]]
    return ["<h2>A sample of intrusion tasks</h2>", _tab(["kind", "document", "options (as shown)"], rows)]


EVAL_EXTRA = {"irbo": "IRBO", "we_pairwise": "WE pairwise", "we_centroid": "WE centroid",
              "we_irbo": "WE-IRBO"}  # evaluate's diversity and word-vector measures, shown when present
JUDGE_EXTRA = {"judge_model_precision": ("judge MP", "an LLM judge's word intrusion: P(intruder), mean"),
               "judge_rating": ("judge rating", "an LLM judge's 3-point rating, mean")}  # when present
EVAL_METRICS = [  # row key, label, interval
    ("per_token", "held-out log-likelihood per token", "per_token_sd"),
    ("perplexity", "perplexity", None),
    ("diversity", "diversity", None),
    ("exclusivity", "exclusivity", None),
    ("predictive_rank", "predictive rank (lower is better)", None),
    ("auto_model_precision", "automated intrusion model precision", "auto_model_precision_ci"),
]


def _notes(rows: Sequence[dict[str, Any]]) -> list[Part]:
    """Every fallback a model's row took (`auto_note`), marked * in its table."""
    return [f'<p class="warn">* {escape(str(r.get("model")))}: automated intrusion: '
            f"{escape(str(r['auto_note']))}</p>" for r in rows if isinstance(r, dict) and r.get("auto_note")]


def _na(row: dict[str, Any], metric: str, *cells: str) -> list[str]:
    """The cells of `metric` for a model's row: "—" where the metric does not apply to it."""
    na = row.get("not_applicable")
    dash = row.get("unreadable") or isinstance(na, dict) and metric in na
    return ["—"] * len(cells) if dash else list(cells)


def _judge_agreement(agreed: Any) -> list[Part]:
    """Beside an LLM judge's columns: its measured agreement with people on each (`judge qualify`),
    or that it was never measured."""
    if not isinstance(agreed, dict) or not agreed:
        return []
    items = "".join(f"<li>{escape(str(v.get('text')))}</li>" for v in agreed.values() if isinstance(v, dict))
    return ['<p class="note">The LLM judge\'s columns, with its agreement with people measured on the bundled '
            "human studies (<code>tealeaves judge qualify</code>):</p>", f"<ul>{items}</ul>"]


def _not_applicable(rows: Sequence[dict[str, Any]]) -> list[Part]:
    """Every metric that does not apply to a model (— in its table), with the reason."""
    items = [f"<li>{escape(str(r.get('model')))}: unreadable, not evaluated: {escape(str(r['unreadable']))}</li>"
             for r in rows if isinstance(r, dict) and r.get("unreadable")]
    items += [f"<li>{escape(str(r.get('model')))}: {escape(str(m))}: {escape(str(why))}</li>"
              for r in rows if isinstance(r, dict) for key in ("not_applicable", "not_computed")
              if isinstance(r.get(key), dict) for m, why in r[key].items()]
    return ['<p class="note">— does not apply (the model does not provide what the metric needs) or was '
            "not computed:</p>"
            f"<ul>{''.join(items)}</ul>"] if items else []


def _versus_best(doc: dict[str, Any]) -> tuple[str | None, list[dict[str, Any] | None]]:
    """The best model of an `evaluate` result and each row's difference from it with the pair's 95%
    interval (`vs_best`; for a result saved before it was kept, from its comparisons)."""
    from ..evaluate.pairs import versus_best

    groups = doc.get("groups")
    ranked = sum(len(g) for g in groups) if isinstance(groups, list) else 0
    best = groups[0][0] if ranked > 1 and groups[0] else None  # one model with a likelihood: no "best"
    rows = [dict(r) for r in doc["rows"]]
    if best is not None and not all("vs_best" in r for r in rows):
        versus_best(rows, doc.get("comparisons") or [], groups)
    return best, [r.get("vs_best") for r in rows]


def _evaluate_table(doc: dict[str, Any], measures: list[str]) -> Table:
    """The models side by side, every number as the terminal's `evaluate` table shows it."""
    from ..evaluate.result import VS_BEST

    rows = doc["rows"]
    best, versus = _versus_best(doc)
    stab = any("stability" in r for r in rows)
    extra = [k for k in EVAL_EXTRA if any(isinstance(r, dict) and k in r for r in rows)]
    judged = [k for k in JUDGE_EXTRA if any(isinstance(r, dict) and k in r for r in rows)]
    head = ["model", "K", "log-lik / token", VS_BEST, "perplexity", *[MEASURE_NAMES.get(m, m) for m in measures],
            "diversity", "exclusivity", "pred. rank", *[EVAL_EXTRA[k] for k in extra], "auto MP",
            *[JUDGE_EXTRA[k][0] for k in judged], *(["stability"] if stab else []), "estimator sd"]
    body = [[r["model"], _text(r["topics"]),
             *_na(r, "heldout", _m("per_token", r["per_token"]),
                  "(best)" if r["model"] == best else numbers.versus(v, "—"),  # the terminal's dash
                  _m("perplexity", r["perplexity"])),
             *[_na(r, "coherence", _m("coherence", r["coherence"].get(m)))[0] for m in measures],
             *_na(r, "diversity", _m("diversity", r["diversity"])),
             *_na(r, "exclusivity", _m("exclusivity", r["exclusivity"])),
             *_na(r, "predictive", _m("predictive_rank", r["predictive_rank"])),
             *(["—"] * len(extra) if r.get("unreadable") else [_m(k, r.get(k)) for k in extra]),
             *_na(r, "auto MP", _m("auto_model_precision", r["auto_model_precision"])
                  + ("*" if r.get("auto_note") else "")),
             *[_m(k, r.get(k)) if k in r else "—" for k in judged],
             *([_m("stability", r.get("stability"))] if stab else []),
             *_na(r, "heldout", _m("per_token_sd", r["per_token_sd"]))]
            for r, v in zip(rows, versus, strict=True)]
    caption = "Models side by side"
    if best is not None and len(rows) > 1:
        caption += (f" ({VS_BEST}: log-lik / token minus {best}'s, 95% interval over the documents sampled and "
                    "the estimator's noise; estimator sd: the estimator's own run-to-run sd)")
    return Table(head, body, caption, sortable=True)


def _per_topic(doc: dict[str, Any], names: Sequence[str]) -> list[Part]:
    """A per-topic table for every model that has anything per topic."""
    words, coh = doc.get("topic_words") or {}, doc.get("topic_coherence") or {}
    diag, stab, judge = doc.get("diagnostics") or {}, doc.get("stability"), doc.get("topic_judge") or {}
    flags, why = doc.get("topic_flags") or {}, doc.get("topic_flags_note") or {}
    prints = (doc.get("params") or {}).get("coherence_fingerprint") or {}
    out: list[Part] = []
    for name in names:
        t = pertopic.table(name, words.get(name), coh.get(name), diag.get(name), pertopic.stability_of(stab, name),
                           flags=flags.get(name), fingerprints=prints, judge=judge.get(name),
                           flags_note=why.get(name))
        if t is not None:
            out.append(t)
    if out:
        out.insert(0, "<h3>Per topic</h3>")
        out.insert(1, f'<p class="note">{per_topic_note()}</p>')
    return out


def per_topic_note() -> str:
    """What the per-topic tables show, their order and their flags (with the thresholds in force)."""
    from ..diagnostics.flags import THRESHOLDS

    return ("The worst topics first: those with junk-topic flags (shaded red), then those with a caution "
            "only (rare-words, shaded yellow), then by the coherence column, lowest first. Click a column "
            "heading to sort by it. Flags: incoherent = NPMI of the top 10 words below "
            f"{THRESHOLDS['incoherent']:g} (set against people's ratings: docs/junk_flags.md), never-together "
            "= most of its word pairs never co-occur, rare-words = most of its top words rarer than one per "
            "million tokens; the others and their thresholds: <code>tealeaves diagnostics</code>. Stability: "
            "1 = the topic recurs exactly in the other restarts.")


def _evaluate(doc: dict[str, Any]) -> list[Part]:
    from ..evaluate.result import VS_BEST

    rows = doc["rows"]
    names = [r["model"] for r in rows]
    measures = list(rows[0]["coherence"]) if rows else []
    out: list[Part] = [f"<h2>Evaluation of {len(rows)} models</h2>"]
    sc = doc.get("scoring", {})
    if sc:
        out.append(f'<p class="note">{_num(sc.get("documents"))} held-out documents, {_num(sc.get("tokens"))} '
                   f"tokens scored by every model, {_num(sc.get('oov_tokens'))} dropped: "
                   f"{escape(str(sc.get('rule', '')))}.</p>")
        if isinstance(sc.get("warning"), str):
            out.append(f'<p class="warn">Warning: {escape(sc["warning"])}.</p>')
    out.append(_evaluate_table(doc, measures))
    best, _ = _versus_best(doc)
    if best is not None and len(rows) > 1:
        out.append(f'<p class="note">{escape(VS_BEST)}: the interval that decides the ranking (a model whose '
                   f"interval reaches 0 cannot be told from {escape(best)}); the estimator sd is the held-out "
                   "estimator's own noise, far smaller, and says nothing about which model is better.</p>")
    out.extend(_judge_agreement(doc.get("judge_agreement")))
    out.extend(_notes(rows))
    out.extend(_not_applicable(rows))
    out.extend(people.evaluation(doc))  # each metric's agreement with people (evaluate --human)
    best, versus = _versus_best(doc)
    if best is not None and len(rows) > 1:  # the uncertainty that decides the ranking
        diffs = [0.0 if r["model"] == best else (v or {}).get("difference") for r, v in zip(rows, versus, strict=True)]
        ci = [(v or {}).get("interval") or [None, None] for v in versus]
        out.append(Chart("points", f"Held-out log-likelihood per token minus {best}'s (the best), with 95% "
                         "intervals over the documents sampled and the estimator's noise",
                         "model", "difference (nats per token)", name="evaluate-vs-best", labels=names, y=diffs,
                         lo=[c[0] for c in ci], hi=[c[1] for c in ci]))
    for key, label, interval in EVAL_METRICS:
        vals = [r.get(key) for r in rows]
        if key == "per_token" and best is not None and len(rows) > 1:
            continue  # drawn above as the difference from the best, with the interval that ranks
        if interval == "per_token_sd":
            lo, hi = [None] * len(vals), [None] * len(vals)  # the estimator's own sd: in the table, by name
        elif interval:
            cis = [r.get(interval) or [None, None] for r in rows]
            lo, hi = [c[0] for c in cis], [c[1] for c in cis]
        else:
            lo, hi = [None] * len(vals), [None] * len(vals)
        out.append(Chart("points", label[0].upper() + label[1:], "model", label, name=f"evaluate-{key}",
                         labels=names, y=vals, lo=lo, hi=hi))
    for key, (_, label) in JUDGE_EXTRA.items():
        if any(key in r for r in rows):
            out.append(Chart("points", label[0].upper() + label[1:], "model", label, name=f"evaluate-{key}",
                             labels=names, y=[r.get(key) for r in rows], lo=[None] * len(rows),
                             hi=[None] * len(rows)))
    for m in measures:
        out.append(Chart("points", f"{MEASURE_NAMES.get(m, m)} coherence (mean over topics)", "model",
                         MEASURE_NAMES.get(m, m), name=f"evaluate-{m}", labels=names,
                         y=[r["coherence"].get(m) for r in rows], lo=[None] * len(rows), hi=[None] * len(rows)))
    out.extend(_per_topic(doc, names))
    if doc.get("comparisons"):
        out.append("<h3>Pairwise comparisons</h3>")
        out.append(_tab(["A", "B", "method", "log P(w|A) − log P(w|B) per token", "95% interval", "about",
                         "verdict", "why this method"],
                        [[c["a"], c["b"], c["method"], _f(c["per_token"], 5),
                          f"{_f(c['per_token_interval'][0], 5)} … {_f(c['per_token_interval'][1], 5)}",
                          str(c.get("per_token_interval_scope", "population")),
                          c["verdict"] + (f" (warning: {c['warning']})" if isinstance(c.get("warning"), str) else ""),
                          str(c.get("method_reason") or "")]
                         for c in doc["comparisons"]], sortable=True))
    out.extend(_stability_groups(doc.get("stability")))
    out.extend(_stages(doc))
    return out


def _stages(doc: dict[str, Any]) -> list[Part]:
    """Seconds per stage (wall and CPU) against the estimate made before the work."""
    stages = doc.get("stages")
    if not isinstance(stages, dict) or not stages:
        return []
    est = estimated_stages(doc.get("estimate") or {})
    rows = [[str(n), _m("seconds", v.get("wall")), _m("seconds", v.get("cpu")),
             _m("seconds", est.get(n)) if est else "-"]
            for n, v in stages.items() if isinstance(v, dict)]
    return ["<h3>Time per stage</h3>",
            '<p class="note">Seconds of wall-clock and CPU time (this process and its finished worker '
            "processes) per stage; the estimate was made before any work (for <code>--compare auto</code> "
            "it counts every Ratio-AIS that might have run).</p>",
            _tab(["stage", "wall s", "CPU s", "estimated s"], rows)]


def _stability_groups(groups: Any) -> list[Part]:
    """Each group of restarts: its finding (stable, a stuck restart, unstable as a whole), each
    restart's stability and whether it is stuck, and its topics matched across the restarts."""
    out: list[Part] = []
    for g in groups if isinstance(groups, list) else []:
        if not isinstance(g, dict) or not isinstance(g.get("per_model"), dict):
            continue
        flagged = g.get("flagged") or {}
        found = isinstance(g.get("finding_text"), str) and bool(g["finding_text"])
        if found:
            cls = "note" if g.get("finding") == "stable" else "warn"
            text = g["finding_text"]
            out.append(f'<p class="{cls}">{escape(text[0].upper() + text[1:])}.</p>')
        head = "stuck apart from the rest" if found else "flagged"
        out.append(_tab(["restart", "stability", head],
                        [[n, _m("stability", v), str(flagged.get(n, "no" if found else ""))]
                         for n, v in g["per_model"].items()],
                        caption=f"Stability of {g.get('topics', '?')}-topic restarts ({g.get('distance', '')} "
                                f"distance): {_m('stability', g.get('score'))}", sortable=True))
        out.extend(_aligned(g))
    return (["<h3>Stability across restarts</h3>"] + out) if out else []


def _aligned(g: dict[str, Any]) -> list[Part]:
    """A stability group's topics matched across its restarts: one row per topic of the reference
    restart, most stable first; each other restart's matched topic, similarity and top words."""
    rows, ref = g.get("aligned"), g.get("reference")
    if not isinstance(rows, list) or not rows or not isinstance(ref, str):
        return []
    words = g.get("words") or {}

    def top(model: str, k: Any) -> str:
        w = words.get(model)
        return words_text(w[k]) if isinstance(w, list) and isinstance(k, int) and 0 <= k < len(w) else ""

    others = [m for m in g.get("models", []) if m != ref]
    body = [[f"{r['topic']}: {top(ref, r['topic'])}",
             *(f"{r['matches'][m][0]} ({_m('stability', r['matches'][m][1])}): {top(m, r['matches'][m][0])}"
               for m in others)] for r in rows if isinstance(r, dict)]
    return [_tab([f"{ref} (reference)", *others], body,
                 caption=f"Topics matched across the {g.get('topics', '?')}-topic restarts: each topic of {ref} "
                         "(the restart most similar to the others), most stable first, and its match in each "
                         "other restart (topic, similarity, top words)")]


def _stability(doc: dict[str, Any]) -> list[Part]:
    out: list[Part] = ["<h2>Stability across restarts</h2>", *_stability_groups([doc])[1:]]
    for name in doc.get("models", []):
        t = pertopic.table(name, (doc.get("words") or {}).get(name),
                           stability=(doc.get("per_topic") or {}).get(name))
        if t is not None:
            out.append(t)
    return out


def _diagnostics(doc: dict[str, Any]) -> list[Part]:
    name = str(doc.get("model", ""))
    flagged = doc.get("flagged") or []
    out: list[Part] = [f"<h2>Per-topic diagnostics: {escape(name)}</h2>",
                       f'<p class="note">{len(flagged)} of {len(doc.get("topics") or [])} topics flagged '
                       f"({escape(str(doc.get('counts', '')))} counts).</p>"]
    t = pertopic.table(name, diagnostics=doc)
    return out + ([f'<p class="note">{per_topic_note()}</p>', t] if t is not None else [])


def _interval_text(est: Any, lo: Any, hi: Any) -> str:
    if est is None:
        return DASH
    return _f(est, 2) + (f" [{_f(lo, 2)}, {_f(hi, 2)}]" if lo is not None and hi is not None else "")


def _metaeval(doc: dict[str, Any]) -> list[Part]:
    """Agreement of per-topic scores with people (tealeaves metaeval): per statistic, a table of
    scores x groups with intervals and the human ceiling; the paired comparisons with the best
    score; the alternative-annotator tests; every note."""
    rows = doc["rows"]
    if not rows:  # an app ProxAnn study without scores: its own statistics only
        return [f"<h2>Agreement with people: {escape(str(doc.get('study', '')))}</h2>", *people.metaeval_extra(doc)]
    groups = list(dict.fromkeys(r["group"] for r in rows))
    scores = list(dict.fromkeys(r["score"] for r in rows))
    p = doc.get("params") or {}
    level = p.get("level", 0.95)
    out: list[Part] = [f"<h2>Agreement with people: {escape(str(doc.get('study', '')))} "
                       f"({escape(str(doc.get('judgment_task', '')))})</h2>",
                       f'<p class="note">The people\'s per-topic score: {escape(str(doc.get("quality")))}. '
                       f"{int(round(level * 100))}% intervals from {_num(p.get('bootstrap'))} two-stage bootstrap "
                       "resamples (topics within each corpus, then each topic's annotators). The ceiling: how "
                       "well a score equal to the true topic quality would agree with these people "
                       "(split halves, Spearman–Brown).</p>"]
    by = {(r["score"], r["group"], r["statistic"]): r for r in rows}
    ceil = {(c["group"], c["statistic"]): c for c in doc.get("ceiling") or []}
    for stat in dict.fromkeys(r["statistic"] for r in rows):
        table_rows = [[s] + [_interval_text(by[(s, g, stat)]["estimate"], by[(s, g, stat)]["low"],
                                            by[(s, g, stat)]["high"]) if (s, g, stat) in by else DASH
                             for g in groups] for s in scores]
        if any((g, stat) in ceil for g in groups):
            table_rows.append(["ceiling"] + [_interval_text(ceil[(g, stat)]["ceiling"], ceil[(g, stat)]["low"],
                                                            ceil[(g, stat)]["high"]) if (g, stat) in ceil else DASH
                                             for g in groups])
        topics = [by[(scores[0], g, stat)]["topics"] for g in groups]
        out.append(_tab([stat] + [f"{g} ({t} topics)" for g, t in zip(groups, topics, strict=True)], table_rows,
                        caption=f"{stat.capitalize()} with the people's per-topic score"))
    comparisons = [c for c in doc.get("comparisons") or [] if c["group"] == groups[-1]]
    if comparisons:
        stat = rows[0]["statistic"]
        pooled = [r for r in rows if r["group"] == groups[-1] and r["statistic"] == stat and r["estimate"] is not None]
        if pooled:
            top = max(pooled, key=lambda r: r["estimate"])["score"]
            cmp_rows = []
            for c in comparisons:
                if c["statistic"] != stat or top not in (c["a"], c["b"]) or c["difference"] is None:
                    continue
                sign = 1 if c["a"] == top else -1
                lo, hi = (None, None) if c["low"] is None else sorted((sign * c["low"], sign * c["high"]))
                cmp_rows.append([c["b"] if sign == 1 else c["a"], _interval_text(sign * c["difference"], lo, hi),
                                 _f(c["p"], 3) if c["p"] is not None else DASH])
            if cmp_rows:
                out.append(_tab(["score", f"{top} minus it", "p (paired bootstrap)"], cmp_rows,
                                caption=f"Paired comparisons with the best score ({stat}, {groups[-1]})"))
    tests = doc.get("alt_test") or {}
    if tests:
        out.append(_tab(["judge", "winning rate", "passes", "advantage probability", "annotators", "note"],
                        [[k, t.get("winning_rate"), t.get("passes"), t.get("advantage_probability"),
                          t.get("annotators"), t.get("why") or ""] for k, t in tests.items()],
                        caption="Alternative-annotator test (Calderon et al. 2025): may the judge replace a person?"))
    notes = sorted({r["why"] for r in rows if r.get("why")}) + list(doc.get("notes") or [])
    out += [f'<p class="note">{escape(n)}</p>' for n in notes]
    return out + people.metaeval_extra(doc)


def _select(doc: dict[str, Any]) -> list[Part]:
    ks = doc["topics"]
    out: list[Part] = ["<h2>Choosing the number of topics</h2>"]
    p = doc.get("params", {})
    out.append(f'<p class="note">{_num(p.get("documents"))} documents: {_num(p.get("training_documents"))} for '
               f"training, {_num(p.get('heldout_documents'))} held out; {_num(doc.get('restarts'))} restarts per K "
               f"({escape(str(p.get('trainer')))}, {_num(p.get('iterations'))} iterations). Points are the "
               "mean over restarts, bars ±1 sd over restarts.</p>")
    out.extend(_edge(doc))
    metrics = list(doc["per_k"])
    rows = []
    for i, k in enumerate(ks):
        cells: list[Any] = [_text(k)]
        for m in metrics:
            d = numbers.digits(m)
            mean, sd = doc["per_k"][m]["mean"][i], doc["per_k"][m]["sd"][i]
            cells.append(f"{_f(mean, d)} ± {_f(sd, d)}" if sd is not None else _f(mean, d))
        rows.append(cells)
    out.append(_tab(["K", *metrics], rows, sortable=True))
    out.extend(_judge_agreement(p.get("judge_agreement")))
    out.extend(_notes([{**e.get("row", {}), "model": e.get("model")} for e in doc.get("evaluations", [])
                       if isinstance(e, dict) and isinstance(e.get("row"), dict)]))
    logx = bool(ks) and min(ks) > 0 and max(ks) / min(ks) >= 8
    for m in metrics:
        mean, sd = doc["per_k"][m]["mean"], doc["per_k"][m]["sd"]
        if not any(v is not None for v in mean):
            continue
        lo, hi = _sd_interval(mean, sd)
        out.append(Chart("lines", f"{m} against the number of topics", "number of topics K", m,
                         name=f"select-{m}", logx=logx,
                         series=[{"name": m, "x": ks, "y": mean, "lo": lo, "hi": hi}]))
    out.extend(_chosen_topics(doc.get("chosen")))
    out.extend(_stability_groups(doc.get("stability")))
    return out


def _edge(doc: dict[str, Any]) -> list[Part]:
    """Where select's chosen K lies in its grid, and the Ks `--extend` added."""
    out: list[Part] = []
    e, g = doc.get("edge"), doc.get("grid")
    if isinstance(e, dict) and isinstance(e.get("message"), str):
        cls = "warn" if e.get("status") == "rising" else "note"
        out.append(f'<p class="{cls}">Edge of the grid: {escape(e["message"])}.</p>')
    if isinstance(g, dict) and g.get("extend"):
        added = ", ".join(map(str, g.get("added") or [])) or "none"
        out.append(f'<p class="note">Grid asked for: K = {escape(", ".join(map(str, g.get("asked") or [])))}; '
                   f"extended (up to {_num(g.get('extend'))} more): K added: {escape(added)}; stopped: "
                   f"{escape(str(g.get('stopped')))}.</p>")
    return out


def _chosen_topics(c: Any) -> list[Part]:
    """The model that stands for select's chosen K: its per-topic table (top words, coherence,
    stability among the restarts of its K, diagnostics and flags)."""
    if not isinstance(c, dict) or not c.get("model"):
        return []
    name = str(c["model"])
    t = pertopic.table(name, c.get("words"), c.get("coherence") or None, c.get("diagnostics"),
                       c.get("stability"))
    if t is None:
        return []
    out: list[Part] = [f"<h3>Topics of the chosen model, {escape(name)}</h3>",
                       f'<p class="note">{escape(str(c.get("why", "")))}. Click a column heading to sort by '
                       "it; stability: 1 = the topic recurs exactly in the other restarts of its K; "
                       "diagnostics on the held-out documents.</p>"]
    if c.get("diagnostics_note"):
        out.append(f'<p class="note">{escape(str(c["diagnostics_note"]))}.</p>')
    return out + [t]


def summary(docs: Sequence[dict[str, Any]]) -> str:
    """The block at the top: the recommendation (model or K) and its reasons, then other verdicts."""
    lines = []
    for d in docs:
        kind = d.get("task") or d.get("command")
        rec = recommend.evaluate(d) if kind == "evaluate" else recommend.select(d) if kind == "select" else None
        if rec is not None:
            head, reasons = rec
            lines.append(f'<p class="headline">{escape(head)}.</p>'
                         + (f"<ul>{''.join(f'<li>{escape(r)}</li>' for r in reasons)}</ul>" if reasons else ""))
        if kind == "evaluate":
            best = (d.get("groups") or [[]])[0]
            for c in d.get("comparisons", []):
                if (c["a"] in best) != (c["b"] in best):
                    lo, hi = c["per_token_interval"]
                    about = c.get("per_token_interval_about")
                    about = f" about {escape(about)}" if isinstance(about, str) else ""
                    warn = c.get("warning")
                    warn = f" Warning: {escape(warn)}" if isinstance(warn, str) else ""
                    lines.append(f"<p>{escape(c['a'])} − {escape(c['b'])}: {_f(c['per_token'], 5)} nats per "
                                 f"token, 95% [{_f(lo, 5)}, {_f(hi, 5)}]{about}: {escape(c['verdict'])}.{warn}</p>")
        elif kind == "select":
            for m, c in d.get("choice", {}).items():
                if c.get("k") is None or "runner_up" not in c:
                    continue
                sure = "significantly" if c.get("significant") else "not significantly"
                lines.append(f"<p>{escape(m)} favours <strong>K = {_num(c['k'])}</strong>, {sure} better than "
                             f"K = {_num(c['runner_up'])} ({escape(str(c.get('why', '')))}).</p>")
        elif kind == "compare" and d.get("verdict"):
            lines.append(f"<p>{escape(str(d.get('model_a')))} against {escape(str(d.get('model_b')))}: "
                         f"<strong>{escape(d['verdict'])}</strong>.</p>")
    if not lines:
        return ""
    return '<div class="summary"><h2>Recommendation</h2>' + "".join(lines) + "</div>"


def section(doc: dict[str, Any]) -> list[Part]:
    """The parts (HTML, charts and tables) of one command's JSON output."""
    if isinstance(doc.get("result"), dict):  # compare and csl nest their result
        doc = {**doc["result"], **{k: v for k, v in doc.items() if k != "result"}}
    kind = doc.get("task") or doc.get("command")
    handlers = {"compare": _compare, "curve": _curve, "intrusion-score": _intrusion, "intrusion-auto": _auto,
                "predictive": _predictive, "intrusion-tasks": _intrusion_tasks, "diversity": _diversity,
                "bcubed": _bcubed, "csl": _csl, "evaluate": _evaluate, "select": _select,
                "diagnostics": _diagnostics, "stability": _stability, "metaeval": _metaeval,
                "proxann-score": people.proxann_score}
    if kind in ("heldout", "completion", "demo") and "results" in doc:
        return _heldout(doc)
    if kind == "coherence" and "results" in doc:
        return _coherence(doc)
    if kind == "judge-qualify":
        from .qualify import section as qualify_section

        return qualify_section(doc)
    if kind in handlers:
        return handlers[kind](doc)
    if kind == "text":
        return [f"<h2>{escape(doc['title'])}</h2><p>{escape(doc['text'])}</p>"]
    raise InputFileError(f"cannot report a result of kind {kind!r}")


def _sections(docs: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every result's sections, their infinities ("Infinity" in JSON) read back as floats (`decode`)."""
    return [d for doc in docs for d in (decode(doc)["sections"] if "sections" in doc else [decode(doc)])]


def charts(docs: Sequence[dict[str, Any]]) -> list[Chart]:
    """Every chart of the report, in order."""
    return [p for d in _sections(docs) for p in section(d) if isinstance(p, Chart)]


def all_tables(docs: Sequence[dict[str, Any]]) -> list[Table]:
    """Every table of the report, in order."""
    return [p for d in _sections(docs) for p in section(d) if isinstance(p, Table)]


WIDE_PX = 900  # a chart drawn wider than this (many models) spans the grid's whole row


def _html(parts: Sequence[Part]) -> str:
    """HTML of a section's parts, each run of consecutive charts in one grid of small multiples."""
    out, grid = [], []
    for p in [*parts, ""]:
        if isinstance(p, Chart):
            drawn = svg.render(p)
            note = (f'<figcaption class="note">Dashed: an interval narrower than {svg.MIN_BAR:.0f} px, drawn '
                    f"{svg.MIN_BAR:.0f} px long so that it shows (its value is in the table).</figcaption>"
                    if 'class="err tiny"' in drawn or 'class="gap tiny"' in drawn else "")
            wide = p.wide or float(re.search(r'width="([0-9.]+)"', drawn).group(1)) > WIDE_PX
            grid.append(f'<figure class="chart{" wide" if wide else ""}">{drawn}{note}</figure>')
            continue
        if grid:
            out.append('<div class="grid">' + "".join(grid) + "</div>")
            grid = []
        out.append(tables.html(p) if isinstance(p, Table) else p)
    return "".join(out)


def render(docs: Sequence[dict[str, Any]], title: str = "tealeaves report") -> str:
    flat = _sections(docs)
    body = "".join(_html(section(d)) for d in flat)
    from .. import __version__

    return (
        f"<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width,initial-scale=1'>"
        f"<title>{escape(title)}</title><style>{CSS}</style></head><body><h1>{escape(title)}</h1>"
        + summary(flat) + body
        + f"<p class='note'>Written by tealeaves {__version__}. Intervals are ±1 standard deviation of the "
        "estimate (over runs, restarts or a bootstrap over documents) unless a 95% interval is named.</p>"
        f"<script>{tables.SORT_JS}</script></body></html>"
    )


def write_figures(docs: Sequence[dict[str, Any]], folder: str | os.PathLike) -> list[str]:
    """Every chart of the report as SVG and (with matplotlib) PNG in `folder`."""
    from .figures import write_all

    return write_all(charts(docs), os.fspath(folder))


def tables_text(docs: Sequence[dict[str, Any]], kind: str) -> str:
    """Every table of the report as booktabs LaTeX (`kind` "latex") or GitHub Markdown ("markdown")."""
    return tables.documents(all_tables(docs), kind)


def load_results(paths: Sequence[str | os.PathLike]) -> list[dict[str, Any]]:
    """Every JSON result file in `paths`, each checked against the shape the report reads
    (`schema`): a forged or mistyped file is a one-line error naming it and the field."""
    docs = []
    for p in paths:
        try:
            doc = read_json(p)
        except InputFileError as exc:
            if "no such file" in str(exc):
                raise
            raise InputFileError(f"{os.fspath(p)}: not a JSON result of a tealeaves command "
                                 f"({str(exc).removeprefix(os.fspath(p) + ': ')})") from None
        check_result(doc, p)
        docs.append(doc)
    return docs


DRAW_ERRORS = (KeyError, TypeError, IndexError, ValueError, AttributeError, ArithmeticError)


def write_report(paths: Sequence[str | os.PathLike], out: str | os.PathLike | None,
                 title: str = "tealeaves report", latex: str | os.PathLike | None = None,
                 markdown: str | os.PathLike | None = None) -> None:
    """Read every JSON result file in `paths`; write one HTML report to `out` (if given) and every
    table as LaTeX to `latex` and as Markdown to `markdown` (if given)."""
    docs = load_results(paths)
    pages = []
    for p, doc in zip(paths, docs, strict=True):
        try:
            pages.append(render([doc], title))
        except DRAW_ERRORS as exc:
            raise InputFileError(  # a shape the schema let through: still one line, naming the file
                f"{os.fspath(p)}: a field the report cannot draw ({type(exc).__name__}: {shorten(exc, 80)})"
            ) from None
    if out is not None:
        write_text(out, pages[0] if len(pages) == 1 else render(docs, title))
    for path, kind in ((latex, "latex"), (markdown, "markdown")):
        if path is not None:
            write_text(path, tables_text(docs, kind))
