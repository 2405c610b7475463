"""One self-contained HTML report (inline CSS and SVG, nothing fetched at view time) from the JSON
that every command writes with `--json`: many models evaluated side by side (`evaluate`) and the
choice of the number of topics (`select`) with a summary at the top, held-out likelihood and
completion (estimates with intervals, per-document scatter), comparisons and training curves,
coherence per topic with its top words, diversity, B-Cubed, CSL, predictive metrics and
intrusion scores. A file may also hold `{"sections": [...]}` (what `tealeaves demo` writes).

Sections are lists of HTML strings and `svg.Chart`s; `render` draws the charts inline and
`write_figures` writes each one as SVG and PNG (`figures`)."""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from html import escape
from typing import Any

from ..errors import InputFileError, shorten
from ..files.atomic import write_text
from ..files.records import read_json
from ..heldout.crosscheck import describe as describe_check
from ..util.stages import estimated_stages
from . import svg
from .schema import check_result
from .svg import Chart

Part = str | Chart

CSS = """body{font-family:system-ui,sans-serif;max-width:64rem;margin:2rem auto;padding:0 1rem;color:#222}
h1{font-size:1.6rem}h2{border-bottom:1px solid #ccc;padding-bottom:.2rem;margin-top:2rem}
table{border-collapse:collapse;margin:.6rem 0}td,th{border:1px solid #ccc;padding:.25rem .5rem;text-align:right}
th:first-child,td:first-child{text-align:left}.note{color:#555;font-size:.9rem}
.warn{color:#a30;font-weight:600;font-size:.9rem}
svg{display:block;margin:.8rem 0;max-width:100%;height:auto;font-size:11px}
svg .title{font-size:13px;font-weight:600}svg .xtitle,svg .ytitle{font-size:12px}
svg .axis{stroke:#333}svg .grid{stroke:#eee}svg polygon.far{fill:#c0392b}
.summary{background:#f4f7fb;border:1px solid #c9d6e8;padding:.6rem 1rem;border-radius:4px}
svg .err{stroke:#1f5fa8;stroke-width:2}svg circle.mark{fill:#1f5fa8}svg rect.mark{fill:#6c9bd2}
svg .diag{stroke:#c33;stroke-dasharray:4 3}svg .tick{fill:#444}"""


MEASURE_NAMES = {"umass": "UMass", "uci": "UCI", "npmi": "NPMI", "c_v": "C_V", "c_p": "C_P", "c_a": "C_A"}


def _num(v: Any, digits: int = 2) -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "–"
    if isinstance(v, bool):
        return "yes" if v else "no"
    return f"{v:.{digits}f}" if isinstance(v, float) else escape(str(v))


def _table(head: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    h = "".join(f"<th>{escape(str(c))}</th>" for c in head)
    body = "".join(
        "<tr>" + "".join(f"<td>{c if isinstance(c, str) else _num(c)}</td>" for c in r) + "</tr>"
        for r in rows
    )
    return f"<table><thead><tr>{h}</tr></thead><tbody>{body}</tbody></table>"


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


def _heldout(doc: dict[str, Any]) -> list[Part]:
    results = doc["results"]
    task = results[0].get("task", "heldout") if results else "heldout"
    models = [str(r.get("model") or doc.get("model", "")) for r in results]
    several = len(set(models)) > 1
    what = "Document completion" if task == "completion" else "Held-out likelihood"
    title = f"{what}: {escape(str(doc.get('model', '')))} on {escape(str(doc.get('docs', '')))}"
    out: list[Part] = [f"<h2>{title}</h2>", _table(
        ["model", "method", "total log-lik", "± sd", "per token", "perplexity", "tokens", "dropped", "seconds"],
        [[escape(m), escape(r["label"]), r["total"], r.get("sd"), _num(r["per_token"], 4), r["perplexity"],
          r["tokens"], r.get("tokens_dropped", 0), r["seconds"]] for m, r in zip(models, results, strict=True)])]
    for m, r in zip(models, results, strict=True):
        name = f"{m}, {r['label']}" if several else r["label"]
        if r.get("note"):
            out.append(f'<p class="note">{escape(name)}: {escape(r["note"])}</p>')
        if r.get("check"):
            cls = "warn" if r["check"].get("flagged") else "note"
            out.append(f'<p class="{cls}">{escape(describe_check(_unnull(r["check"])))}</p>')
    methods = [r["method"] for r in results]
    labels = models if several else (methods if len(set(methods)) == len(methods) else [r["label"] for r in results])
    totals = [r["total"] for r in results]
    lo, hi = _sd_interval(totals, [r.get("sd") for r in results])
    clip = [] if several else svg.outliers(totals, lo, hi)  # one quantity: a far estimate is broken
    out.append(Chart("points", f"{what}: estimates with ±1 sd", "model" if several else "estimator",
                     "total log-likelihood (nats)",
                     name=f"{task}-estimates", labels=labels, y=totals, lo=lo, hi=hi, clip=clip))
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
        _table(["log P(w|A) − log P(w|B)", "sd (chains)", "sd (documents)", "per token", "95% interval",
                "perplexity ratio A / B"],
               [[doc["total"], doc.get("sd_chains"), doc.get("sd_documents"), _num(doc.get("per_token"), 5),
                 f"{_num(lo, 5)} … {_num(hi, 5)}", _num(doc.get("perplexity_ratio"), 5)]]),
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
            _table(["model", "total", "± sd", "per token"],
                   [[escape(n), t, s, _num(p, 4)] for n, t, s, p in
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


def _coherence_coverage(r: dict[str, Any]) -> str:
    """Per topic: the score (– with its reason), absent words, pairs that never co-occur."""
    rows = []
    for i, t in enumerate(r["topics"]):
        score = _num(t.get("score"), 4) if t.get("score") is not None else f"– ({escape(str(t.get('reason')))})"
        pairs = f"{t['zero_pairs']} of {t['word_pairs']}" if "zero_pairs" in t and "word_pairs" in t else "–"
        rows.append([str(i), score, escape(" ".join(t.get("missing") or [])) or "none", pairs,
                     escape(" ".join(t["words"])), escape(str(t.get("note") or ""))])
    head = ["topic", "score", "absent from the reference", "pairs never together", "top words", "note"]
    if not any(row[-1] for row in rows):
        head, rows = head[:-1], [row[:-1] for row in rows]
    return _table(head, rows)


def _convention(r: dict[str, Any]) -> str:
    """The convention a coherence result was computed under, as the report names it."""
    conv = (r.get("fingerprint") or {}).get("convention") or r["params"].get("convention")
    return f"{conv} convention" if conv else "convention not recorded"


def _coherence(doc: dict[str, Any]) -> list[Part]:
    from ..coherence.fingerprint import line

    out: list[Part] = [f"<h2>Coherence: {escape(str(doc.get('model', '')))}</h2>"]
    for r in doc["results"]:
        name = MEASURE_NAMES.get(r["measure"], r["measure"])
        out.append(f"<h3>{escape(name)} ({escape(_convention(r))}): mean {_num(r['mean'], 3)} over "
                   f"{len(r['topics'])} topics ({escape(_window(r['measure'], r['params']))})</h3>")
        fp = line([r["fingerprint"]]) if r.get("fingerprint") else "fingerprint: not recorded in this JSON"
        out.append(f"<p class=\"fingerprint\">{escape(fp)}</p>")
        labels = [f"topic {i}: {' '.join(t['words'][:6])}" for i, t in enumerate(r["topics"])]
        out.append(Chart("hbars", f"{name} per topic", f"{name} coherence", "", name=f"coherence-{r['measure']}",
                         labels=labels, y=[t["score"] for t in r["topics"]]))
        if any("zero_pairs" in t or t.get("missing") or t.get("score") is None for t in r["topics"]):
            out.append(_coherence_coverage(r))
    return out


def _diversity(doc: dict[str, Any]) -> list[Part]:
    out: list[Part] = [f"<h2>Diversity and exclusivity: {escape(str(doc.get('model', '')))}</h2>"]
    ex = doc.get("exclusivity")
    rows = [["topic diversity (unique share of the top words)", _num(doc.get("diversity"), 4)],
            ["top words per topic", _num(doc.get("topn"))]]
    if ex:
        rows.append(["exclusivity (stm FREX over the top 10, weight 0.7), mean", _num(sum(ex) / len(ex), 3)])
    out.append(_table(["measure", "value"], rows))
    if ex:
        out.append(Chart("hbars", "Exclusivity per topic", "exclusivity", "", name="exclusivity",
                         labels=[f"topic {i}" for i in range(len(ex))], y=ex))
    if doc.get("per_model"):  # the demo's diversity of several models
        out.append(_table(["model", f"diversity (top {_num(doc.get('topn'))})"],
                          [[escape(k), _num(v, 4)] for k, v in doc["per_model"].items()]))
    return out


def _bcubed(doc: dict[str, Any]) -> list[Part]:
    rows = [["B-Cubed precision", doc.get("precision")], ["B-Cubed recall", doc.get("recall")],
            ["B-Cubed F (mean of item F)", doc.get("f")], ["F of the mean precision and recall", doc.get("f_of_means")]]
    for k, name in (("purity", "purity"), ("inverse_purity", "inverse purity"), ("nmi", "NMI")):
        if k in doc:
            rows.append([name, doc[k]])
    rows.append(["items", doc.get("items")])
    out: list[Part] = ["<h2>Clusters against gold labels (B-Cubed and friends)</h2>",
                       _table(["measure", "value"], [[r[0], _num(r[1], 4)] for r in rows])]
    per = doc.get("per_class") or []
    if per:
        out.append(_table(["gold class", "precision", "recall", "F"],
                          [[escape(str(c["class"])), _num(c["precision"], 3), _num(c["recall"], 3), _num(c["f"], 3)]
                           for c in per[:30]]))
    return out


def _csl(doc: dict[str, Any]) -> list[Part]:
    kind = "biased CSL (tends to overestimate)" if doc.get("biased") else "CSL (a lower bound in expectation)"
    rows = [["mean log P(x)", _num(doc.get("mean"), 4)], ["items", _num(doc.get("items"))],
            ["chain steps", _num(doc.get("chain_steps"))], ["seconds", _num(doc.get("seconds"))]]
    if doc.get("exact_mean") is not None:
        rows.insert(1, ["exact mean log P(x)", _num(doc["exact_mean"], 4)])
    out: list[Part] = [f"<h2>{escape(kind)}</h2>", _table(["", "value"], rows)]
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
    for m, per in doc.get("model_precision", {}).items():
        out.append(Chart("hbars", f"Model precision per topic: {m}", "fraction who found the intruder", "",
                         name=f"model-precision-{m}", labels=[f"topic {k}" for k in per], y=list(per.values())))
    for m, per in doc.get("topic_log_odds", {}).items():
        out.append(Chart("hist", f"Topic log odds of documents: {m}", "topic log odds", "documents",
                         name=f"topic-log-odds-{m}", y=list(per.values())))
    return out


def _auto(doc: dict[str, Any]) -> list[Part]:
    rows = [[escape(m), s["model_precision"],
             f"{_num(s['model_precision_ci'][0])} … {_num(s['model_precision_ci'][1])}", s["topics"]]
            for m, s in doc["summary"].items()]
    items = [[escape(" ".join(it["options"])), escape(it["options"][it["predicted"]]),
              escape(it["options"][it["intruder"]]), "yes" if it["correct"] else "no"] for it in doc["items"]]
    return ["<h2>Automated word intrusion (NPMI proxy)</h2>",
            _table(["model", "automated MP", "95% CI", "topics"], rows),
            _table(["options shown", "predicted intruder", "true intruder", "correct"], items)]


def _predictive(doc: dict[str, Any]) -> list[Part]:
    return ["<h2>Predictive metrics (Chang et al. 2009, 4.2)</h2>",
            _table(["log likelihood per word", "predictive rank", "documents", "tokens"],
                   [[_num(doc["log_likelihood"], 4), doc["rank"], doc["documents"], doc["tokens"]]]),
            Chart("hist", "Per-document predictive log likelihood", "mean log p(w | theta) per word", "documents",
                  name="predictive", y=[v for v in doc["doc_log_lik"] if v is not None])]


def _intrusion_tasks(doc: dict[str, Any]) -> list[Part]:
    rows = [[escape(t["kind"]), escape(t.get("text", "")[:120]), escape(" | ".join(t["options"]))]
            for t in doc["tasks"]]
    return ["<h2>A sample of intrusion tasks</h2>", _table(["kind", "document", "options (as shown)"], rows)]


EVAL_METRICS = [  # row key, label, digits, interval
    ("per_token", "held-out log-likelihood per token", 4, "per_token_sd"),
    ("perplexity", "perplexity", 1, None),
    ("diversity", "diversity", 3, None),
    ("exclusivity", "exclusivity", 2, None),
    ("predictive_rank", "predictive rank (lower is better)", 1, None),
    ("auto_model_precision", "automated intrusion model precision", 2, "auto_model_precision_ci"),
]


def _notes(rows: Sequence[dict[str, Any]]) -> list[Part]:
    """Every fallback a model's row took (`auto_note`), marked * in its table."""
    return [f'<p class="warn">* {escape(str(r.get("model")))}: automated intrusion: '
            f"{escape(str(r['auto_note']))}</p>" for r in rows if isinstance(r, dict) and r.get("auto_note")]


def _na(row: dict[str, Any], metric: str, *cells: str) -> list[str]:
    """The cells of `metric` for a model's row: "—" where the metric does not apply to it."""
    na = row.get("not_applicable")
    return ["—"] * len(cells) if isinstance(na, dict) and metric in na else list(cells)


def _not_applicable(rows: Sequence[dict[str, Any]]) -> list[Part]:
    """Every metric that does not apply to a model (— in its table), with the reason."""
    items = [f"<li>{escape(str(r.get('model')))}: {escape(str(m))}: {escape(str(why))}</li>"
             for r in rows if isinstance(r, dict) and isinstance(r.get("not_applicable"), dict)
             for m, why in r["not_applicable"].items()]
    return ['<p class="note">— does not apply (the model does not provide what the metric needs):</p>'
            f"<ul>{''.join(items)}</ul>"] if items else []


def _evaluate(doc: dict[str, Any]) -> list[Part]:
    rows = doc["rows"]
    names = [r["model"] for r in rows]
    measures = list(rows[0]["coherence"]) if rows else []
    out: list[Part] = ["<h2>Models side by side</h2>"]
    sc = doc.get("scoring", {})
    if sc:
        out.append(f'<p class="note">{_num(sc.get("documents"))} held-out documents, {_num(sc.get("tokens"))} '
                   f"tokens scored by every model, {_num(sc.get('oov_tokens'))} dropped: "
                   f"{escape(str(sc.get('rule', '')))}.</p>")
    head = ["model", "K", "log-lik / token", "± sd", "perplexity", *[MEASURE_NAMES.get(m, m) for m in measures],
            "diversity", "exclusivity", "pred. rank", "auto MP"]
    out.append(_table(head, [[escape(r["model"]), r["topics"], *_na(r, "heldout", _num(r["per_token"], 4),
                                                              _num(r["per_token_sd"], 4), _num(r["perplexity"], 1)),
                              *[_na(r, "coherence", _num(r["coherence"].get(m), 3))[0] for m in measures],
                              *_na(r, "diversity", _num(r["diversity"], 3)),
                              *_na(r, "exclusivity", _num(r["exclusivity"], 2)),
                              *_na(r, "predictive", _num(r["predictive_rank"], 1)),
                              *_na(r, "auto MP", _num(r["auto_model_precision"], 2)
                                   + ("*" if r.get("auto_note") else ""))]
                             for r in rows]))
    out.extend(_notes(rows))
    out.extend(_not_applicable(rows))
    if doc.get("comparisons"):
        out.append("<h3>Pairwise comparisons</h3>")
        out.append(_table(["A", "B", "method", "log P(w|A) − log P(w|B) per token", "95% interval", "about",
                           "verdict", "why this method"],
                          [[escape(c["a"]), escape(c["b"]), escape(c["method"]), _num(c["per_token"], 5),
                            f"{_num(c['per_token_interval'][0], 5)} … {_num(c['per_token_interval'][1], 5)}",
                            escape(str(c.get("per_token_interval_scope", "population"))),
                            escape(c["verdict"] + (f" (warning: {c['warning']})"
                                                   if isinstance(c.get("warning"), str) else "")),
                            escape(str(c.get("method_reason") or ""))]
                           for c in doc["comparisons"]]))
    out.extend(_stages(doc))
    for key, label, _, interval in EVAL_METRICS:
        vals = [r.get(key) for r in rows]
        if interval == "per_token_sd":
            lo, hi = _sd_interval(vals, [r.get(interval) for r in rows])
        elif interval:
            cis = [r.get(interval) or [None, None] for r in rows]
            lo, hi = [c[0] for c in cis], [c[1] for c in cis]
        else:
            lo, hi = [None] * len(vals), [None] * len(vals)
        out.append(Chart("points", label[0].upper() + label[1:], "model", label, name=f"evaluate-{key}",
                         labels=names, y=vals, lo=lo, hi=hi))
    for m in measures:
        out.append(Chart("points", f"{MEASURE_NAMES.get(m, m)} coherence (mean over topics)", "model",
                         MEASURE_NAMES.get(m, m), name=f"evaluate-{m}", labels=names,
                         y=[r["coherence"].get(m) for r in rows], lo=[None] * len(rows), hi=[None] * len(rows)))
    return out


def _stages(doc: dict[str, Any]) -> list[Part]:
    """Seconds per stage (wall and CPU) against the estimate made before the work."""
    stages = doc.get("stages")
    if not isinstance(stages, dict) or not stages:
        return []
    est = estimated_stages(doc.get("estimate") or {})
    rows = [[escape(str(n)), _num(v.get("wall")), _num(v.get("cpu")), _num(est.get(n)) if est else "-"]
            for n, v in stages.items() if isinstance(v, dict)]
    return ["<h3>Time per stage</h3>",
            '<p class="note">Seconds of wall-clock and CPU time (this process and its finished worker '
            "processes) per stage; the estimate was made before any work (for <code>--compare auto</code> "
            "it counts every Ratio-AIS that might have run).</p>",
            _table(["stage", "wall s", "CPU s", "estimated s"], rows)]


def _select(doc: dict[str, Any]) -> list[Part]:
    ks = doc["topics"]
    out: list[Part] = ["<h2>Choosing the number of topics</h2>"]
    p = doc.get("params", {})
    out.append(f'<p class="note">{_num(p.get("documents"))} documents: {_num(p.get("training_documents"))} for '
               f"training, {_num(p.get('heldout_documents'))} held out; {doc.get('restarts')} restarts per K "
               f"({escape(str(p.get('trainer')))}, {_num(p.get('iterations'))} iterations). Points are the "
               "mean over restarts, bars ±1 sd over restarts.</p>")
    metrics = list(doc["per_k"])
    head = ["K", *metrics]
    rows = []
    for i, k in enumerate(ks):
        cells: list[Any] = [k]
        for m in metrics:
            mean, sd = doc["per_k"][m]["mean"][i], doc["per_k"][m]["sd"][i]
            cells.append(f"{_num(mean, 4)} ± {_num(sd, 4)}" if sd is not None else _num(mean, 4))
        rows.append(cells)
    out.append(_table(head, rows))
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
    return out


def summary(docs: Sequence[dict[str, Any]]) -> str:
    """The block at the top: the winner and how sure, for evaluate, select and compare results."""
    lines = []
    for d in docs:
        kind = d.get("task") or d.get("command")
        if kind == "evaluate" and d.get("groups"):
            best = d["groups"][0]
            tie = " (not separated from each other by the evidence)" if len(best) > 1 else ""
            lines.append(f"Best by held-out likelihood: <strong>{escape(', '.join(best))}</strong>{tie}.")
            for c in d.get("comparisons", []):
                if c["a"] in best or c["b"] in best:
                    lo, hi = c["per_token_interval"]
                    about = c.get("per_token_interval_about")
                    about = f" about {escape(about)}" if isinstance(about, str) else ""
                    warn = c.get("warning")
                    warn = f" Warning: {escape(warn)}" if isinstance(warn, str) else ""
                    lines.append(f"{escape(c['a'])} − {escape(c['b'])}: {_num(c['per_token'], 5)} nats per token, "
                                 f"95% [{_num(lo, 5)}, {_num(hi, 5)}]{about}: {escape(c['verdict'])}.{warn}")
        elif kind == "select":
            for m, c in d.get("choice", {}).items():
                if c.get("k") is None or "runner_up" not in c:
                    continue
                sure = "significantly" if c.get("significant") else "not significantly"
                lines.append(f"{escape(m)} favours <strong>K = {c['k']}</strong>, {sure} better than "
                             f"K = {c['runner_up']} ({escape(c['why'])}).")
        elif kind == "compare" and d.get("verdict"):
            lines.append(f"{escape(str(d.get('model_a')))} against {escape(str(d.get('model_b')))}: "
                         f"<strong>{escape(d['verdict'])}</strong>.")
    if not lines:
        return ""
    return '<div class="summary"><h2>Summary</h2><p>' + "<br>".join(lines) + "</p></div>"


def section(doc: dict[str, Any]) -> list[Part]:
    """The parts (HTML and charts) of one command's JSON output."""
    if isinstance(doc.get("result"), dict):  # compare and csl nest their result
        doc = {**doc["result"], **{k: v for k, v in doc.items() if k != "result"}}
    kind = doc.get("task") or doc.get("command")
    handlers = {"compare": _compare, "curve": _curve, "intrusion-score": _intrusion, "intrusion-auto": _auto,
                "predictive": _predictive, "intrusion-tasks": _intrusion_tasks, "diversity": _diversity,
                "bcubed": _bcubed, "csl": _csl, "evaluate": _evaluate, "select": _select}
    if kind in ("heldout", "completion", "demo") and "results" in doc:
        return _heldout(doc)
    if kind == "coherence" and "results" in doc:
        return _coherence(doc)
    if kind in handlers:
        return handlers[kind](doc)
    if kind == "text":
        return [f"<h2>{escape(doc['title'])}</h2><p>{escape(doc['text'])}</p>"]
    raise InputFileError(f"cannot report a result of kind {kind!r}")


def _sections(docs: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    return [d for doc in docs for d in (doc["sections"] if "sections" in doc else [doc])]


def charts(docs: Sequence[dict[str, Any]]) -> list[Chart]:
    """Every chart of the report, in order."""
    return [p for d in _sections(docs) for p in section(d) if isinstance(p, Chart)]


def render(docs: Sequence[dict[str, Any]], title: str = "tealeaves report") -> str:
    flat = _sections(docs)
    parts = [p if isinstance(p, str) else svg.render(p) for d in flat for p in section(d)]
    from .. import __version__

    return (
        f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>{escape(title)}</title>"
        f"<style>{CSS}</style></head><body><h1>{escape(title)}</h1>" + summary(flat)
        + "".join(parts)
        + f"<p class='note'>Written by tealeaves {__version__}. Intervals are ±1 standard deviation of the "
        "estimate (over runs, restarts or a bootstrap over documents) unless a 95% interval is named.</p>"
        "</body></html>"
    )


def write_figures(docs: Sequence[dict[str, Any]], folder: str | os.PathLike) -> list[str]:
    """Every chart of the report as SVG and (with matplotlib) PNG in `folder`."""
    from .figures import write_all

    return write_all(charts(docs), os.fspath(folder))


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


def write_report(
    paths: Sequence[str | os.PathLike], out: str | os.PathLike, title: str = "tealeaves report"
) -> None:
    """Read every JSON result file in `paths` and write one HTML report to `out`."""
    docs = load_results(paths)
    pages = []
    for p, doc in zip(paths, docs, strict=True):
        try:
            pages.append(render([doc], title))
        except (KeyError, TypeError, IndexError, ValueError, AttributeError, ArithmeticError) as exc:
            raise InputFileError(  # a shape the schema let through: still one line, naming the file
                f"{os.fspath(p)}: a field the report cannot draw ({type(exc).__name__}: {shorten(exc, 80)})"
            ) from None
    write_text(out, pages[0] if len(pages) == 1 else render(docs, title))
