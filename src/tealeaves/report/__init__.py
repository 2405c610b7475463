"""One self-contained HTML report (inline CSS and SVG, nothing fetched at view time) from the JSON
that every command writes with `--json`: held-out likelihood and completion (estimates with error
bars, per-document scatter of one method against another), comparisons and training curves,
coherence per topic with its top words, diversity, B-Cubed, CSL, predictive metrics and
intrusion scores. A file may also hold `{"sections": [...]}` (what `tealeaves demo` writes)."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from html import escape
from typing import Any

from ..errors import InputFileError
from ..heldout.check import describe as describe_check
from . import svg

CSS = """body{font-family:system-ui,sans-serif;max-width:64rem;margin:2rem auto;padding:0 1rem;color:#222}
h1{font-size:1.6rem}h2{border-bottom:1px solid #ccc;padding-bottom:.2rem;margin-top:2rem}
table{border-collapse:collapse;margin:.6rem 0}td,th{border:1px solid #ccc;padding:.25rem .5rem;text-align:right}
th:first-child,td:first-child{text-align:left}.note{color:#555;font-size:.9rem}
.warn{color:#a30;font-weight:600;font-size:.9rem}
svg{display:block;margin:.8rem 0;max-width:100%;height:auto;font-size:11px}
svg .title{font-size:13px;font-weight:600}svg .axis{stroke:#333}svg .grid{stroke:#eee}
svg .err{stroke:#1f5fa8;stroke-width:2}svg circle.mark{fill:#1f5fa8}svg rect.mark{fill:#6c9bd2}
svg .diag{stroke:#c33;stroke-dasharray:4 3}svg .tick{fill:#444}"""


def _num(v: Any, digits: int = 2) -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "–"
    return f"{v:.{digits}f}" if isinstance(v, float) else escape(str(v))


def _table(head: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    h = "".join(f"<th>{escape(str(c))}</th>" for c in head)
    body = "".join(
        "<tr>" + "".join(f"<td>{c if isinstance(c, str) else _num(c)}</td>" for c in r) + "</tr>"
        for r in rows
    )
    return f"<table><thead><tr>{h}</tr></thead><tbody>{body}</tbody></table>"


def _heldout(doc: dict[str, Any]) -> str:
    results = doc["results"]
    task = results[0].get("task", "heldout") if results else "heldout"
    out = [
        f"<h2>{'Document completion' if task == 'completion' else 'Held-out likelihood'}: "
        f"{escape(str(doc.get('model', '')))} on {escape(str(doc.get('docs', '')))}</h2>"
    ]
    out.append(
        _table(
            ["method", "total log-lik", "± sd", "per token", "perplexity", "tokens", "dropped", "seconds"],
            [
                [
                    escape(r["label"]),
                    r["total"],
                    r.get("sd"),
                    _num(r["per_token"], 4),
                    r["perplexity"],
                    r["tokens"],
                    r.get("tokens_dropped", 0),
                    r["seconds"],
                ]
                for r in results
            ],
        )
    )
    for r in results:
        if r.get("note"):
            out.append(f'<p class="note">{escape(r["label"])}: {escape(r["note"])}</p>')
        if r.get("check"):
            cls = "warn" if r["check"].get("flagged") else "note"
            out.append(f'<p class="{cls}">{escape(describe_check(r["check"]))}</p>')
    out.append(
        svg.error_bars(
            [r["method"] for r in results],
            [r["total"] for r in results],
            [r.get("sd") for r in results],
            "Estimates with ±1 sd (runs or bootstrap)",
            "total log-likelihood (nats)",
        )
    )
    if len(results) >= 2:
        a, b = results[0], results[1]
        out.append(
            svg.scatter(
                a["documents"]["log_prob"],
                b["documents"]["log_prob"],
                f"Per document: {a['method']} vs {b['method']}",
                a["method"],
                b["method"],
            )
        )
    return "".join(out)


def _compare(doc: dict[str, Any]) -> str:
    lo, hi = doc.get("per_token_interval") or [None, None]
    out = [
        f"<h2>Comparison: {escape(str(doc.get('model_a')))} vs {escape(str(doc.get('model_b')))}</h2>",
        f"<p><strong>{escape(str(doc.get('verdict', '')))}</strong></p>",
        _table(
            [
                "log P(w|A) − log P(w|B)",
                "sd (chains)",
                "sd (documents)",
                "per token",
                "95% interval",
                "perplexity ratio",
            ],
            [
                [
                    doc["total"],
                    doc.get("sd_chains"),
                    doc.get("sd_documents"),
                    _num(doc.get("per_token"), 5),
                    f"{_num(lo, 5)} … {_num(hi, 5)}",
                    _num(doc.get("perplexity_ratio"), 5),
                ]
            ],
        ),
    ]
    ratios = doc.get("documents", {}).get("log_ratio", [])
    if ratios:
        out.append(
            svg.histogram(
                ratios, "Per-document log ratio (positive favours A)", "log P(w_d|A) − log P(w_d|B)"
            )
        )
    return "".join(out)


def _curve(doc: dict[str, Any]) -> str:
    names = [os.path.basename(str(m)) for m in doc["models"]]
    return (
        "<h2>Training curve (Iteration-AIS)</h2>"
        + _table(
            ["model", "total", "± sd", "per token"],
            [
                [escape(n), t, s, _num(p, 4)]
                for n, t, s, p in zip(names, doc["totals"], doc["sd"], doc["per_token"], strict=True)
            ],
        )
        + svg.error_bars(
            names, doc["totals"], doc["sd"], "log P(w | model) per snapshot", "total log-likelihood"
        )
    )


def _coherence(doc: dict[str, Any]) -> str:
    out = [f"<h2>Coherence: {escape(str(doc.get('model', '')))}</h2>"]
    for r in doc["results"]:
        out.append(
            f"<h3>{escape(r['measure'])} (mean {_num(r['mean'], 3)}; window {escape(str(r['params'].get('window')))})"
            "</h3>"
        )
        labels = [f"{i}: {' '.join(t['words'][:6])}" for i, t in enumerate(r["topics"])]
        out.append(
            svg.hbars(labels, [t["score"] for t in r["topics"]], f"{r['measure']} per topic", r["measure"])
        )
    return "".join(out)


def _intrusion(doc: dict[str, Any]) -> str:
    out = ["<h2>Intrusion (human annotators)</h2>"]
    rows = []
    for m, s in doc["summary"].items():
        ci = s.get("model_precision_ci") or [None, None]
        ti = s.get("topic_log_odds_ci") or [None, None]
        rows.append(
            [
                escape(m),
                s.get("model_precision"),
                f"{_num(ci[0])} … {_num(ci[1])}",
                s.get("topics", "–"),
                s.get("topic_log_odds"),
                f"{_num(ti[0])} … {_num(ti[1])}",
                s.get("documents", "–"),
            ]
        )
    out.append(
        _table(
            ["model", "model precision", "95% CI", "topics", "topic log odds", "95% CI", "documents"], rows
        )
    )
    for m, per in doc.get("model_precision", {}).items():
        out.append(
            svg.hbars(
                [f"topic {k}" for k in per],
                list(per.values()),
                f"Model precision per topic: {m}",
                "fraction who found the intruder",
            )
        )
    for m, per in doc.get("topic_log_odds", {}).items():
        out.append(svg.histogram(list(per.values()), f"Topic log odds of documents: {m}", "topic log odds"))
    return "".join(out)


def _auto(doc: dict[str, Any]) -> str:
    rows = [
        [
            escape(m),
            s["model_precision"],
            f"{_num(s['model_precision_ci'][0])} … {_num(s['model_precision_ci'][1])}",
            s["topics"],
        ]
        for m, s in doc["summary"].items()
    ]
    items = [
        [
            escape(" ".join(it["options"])),
            escape(it["options"][it["predicted"]]),
            escape(it["options"][it["intruder"]]),
            "yes" if it["correct"] else "no",
        ]
        for it in doc["items"]
    ]
    return (
        "<h2>Automated word intrusion (NPMI proxy)</h2>"
        + _table(["model", "automated MP", "95% CI", "topics"], rows)
        + _table(["options shown", "predicted intruder", "true intruder", "correct"], items)
    )


def _generic(doc: dict[str, Any], title: str) -> str:
    flat = [
        [escape(k), v if isinstance(v, int | float) else escape(json.dumps(v)[:120])]
        for k, v in doc.items()
        if k not in ("version", "documents", "items", "per_item")
    ]
    return f"<h2>{escape(title)}</h2>" + _table(["field", "value"], flat)


def _predictive(doc: dict[str, Any]) -> str:
    return (
        "<h2>Predictive metrics (Chang et al. 2009, 4.2)</h2>"
        + _table(
            ["log likelihood per word", "predictive rank", "documents", "tokens"],
            [[_num(doc["log_likelihood"], 4), doc["rank"], doc["documents"], doc["tokens"]]],
        )
        + svg.histogram(
            [v for v in doc["doc_log_lik"] if v is not None],
            "Per-document predictive log likelihood",
            "mean log p(w | theta_hat) per word",
        )
    )


def _intrusion_tasks(doc: dict[str, Any]) -> str:
    rows = [
        [escape(t["kind"]), escape(t.get("text", "")[:120]), escape(" | ".join(t["options"]))]
        for t in doc["tasks"]
    ]
    return "<h2>A sample of intrusion tasks</h2>" + _table(["kind", "document", "options (as shown)"], rows)


def section(doc: dict[str, Any]) -> str:
    """The HTML of one command's JSON output."""
    if isinstance(doc.get("result"), dict):  # compare and csl nest their result
        doc = {**doc["result"], **{k: v for k, v in doc.items() if k != "result"}}
    kind = doc.get("task") or doc.get("command")
    if kind in ("heldout", "completion") and "results" in doc:
        return _heldout(doc)
    if kind == "compare":
        return _compare(doc)
    if kind == "curve":
        return _curve(doc)
    if kind == "coherence" and "results" in doc:
        return _coherence(doc)
    if kind == "intrusion-score":
        return _intrusion(doc)
    if kind == "intrusion-auto":
        return _auto(doc)
    if kind == "predictive":
        return _predictive(doc)
    if kind == "intrusion-tasks":
        return _intrusion_tasks(doc)
    if kind in ("diversity", "bcubed", "csl"):  # tables of their scalar fields
        return _generic(
            doc,
            {"diversity": "Diversity and exclusivity", "bcubed": "B-Cubed and friends", "csl": "CSL"}[kind],
        )
    if kind == "text":
        return f"<h2>{escape(doc['title'])}</h2><p>{escape(doc['text'])}</p>"
    raise InputFileError(f"cannot report a result of kind {kind!r}")


def render(docs: Sequence[dict[str, Any]], title: str = "tealeaves report") -> str:
    parts = []
    for doc in docs:
        parts.extend(section(d) for d in (doc["sections"] if "sections" in doc else [doc]))
    from .. import __version__

    return (
        f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>{escape(title)}</title>"
        f"<style>{CSS}</style></head><body><h1>{escape(title)}</h1>"
        + "".join(parts)
        + f"<p class='note'>Written by tealeaves {__version__}. Error bars are ±1 standard deviation of "
        "the estimate (over runs, or a bootstrap over documents).</p></body></html>"
    )


def write_report(
    paths: Sequence[str | os.PathLike], out: str | os.PathLike, title: str = "tealeaves report"
) -> None:
    """Read every JSON result file in `paths` and write one HTML report to `out`."""
    docs = []
    for p in paths:
        try:
            with open(p, encoding="utf-8") as fh:
                docs.append(json.load(fh))
        except FileNotFoundError:
            raise InputFileError(f"{os.fspath(p)}: no such file") from None
        except (OSError, json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise InputFileError(f"{os.fspath(p)}: not a JSON result ({exc})") from None
        if not isinstance(docs[-1], dict):
            raise InputFileError(f"{os.fspath(p)}: not a JSON result of a tealeaves command")
    try:
        html = render(docs, title)
    except (KeyError, TypeError, IndexError) as exc:
        raise InputFileError(
            f"a result file lacks a field the report needs ({type(exc).__name__}: {exc})"
        ) from None
    with open(out, "w", encoding="utf-8") as fh:
        fh.write(html)
