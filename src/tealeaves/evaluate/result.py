"""`EvaluationResult`: the table `tl.evaluate` returns, shown on a terminal, in a notebook, as JSON
and as a DataFrame."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..errors import MethodError
from ..heldout import HeldoutResult
from ..output import numbers
from ..output.jsonout import json_safe
from ..util.stages import estimated_stages, stage_lines

# row key -> column heading: IRBO for every model with top words, the others with word vectors
EMBEDDING_COLUMNS = {"irbo": "IRBO", "we_pairwise": "WE pair", "we_centroid": "WE centroid",
                     "we_irbo": "WE-IRBO"}
DASH = "—"
VS_BEST = "vs best [95%]"  # a model's held-out difference from the best, with the interval that ranks them
# row key -> the metric of `topics.NEEDS` it needs
ROW_METRICS = {"per_token": "heldout", "coherence": "coherence", "diversity": "diversity",
               "exclusivity": "exclusivity", "predictive_rank": "predictive",
               "auto_model_precision": "auto MP"}
# row key -> column heading of an LLM judge's columns (evaluate/judged.py), shown when a row has them
JUDGE_COLUMNS = {"judge_model_precision": "judge MP", "judge_rating": "judge rating"}


@dataclass
class EvaluationResult:
    """One row per model (`rows`), pairwise `comparisons`, ranking `groups` (best first; the
    models within a group are not separated by the evidence; None when no comparison ran, with
    the reason in `groups_note`), the token `scoring` rule."""

    rows: list[dict[str, Any]]
    comparisons: list[dict[str, Any]]
    groups: list[list[str]] | None
    scoring: dict[str, Any]
    params: dict[str, Any]
    seconds: float
    stages: dict[str, Any] = field(default_factory=dict)
    estimate: dict[str, Any] = field(default_factory=dict)
    heldout: dict[str, HeldoutResult] = field(default_factory=dict, repr=False)
    diagnostics: dict[str, Any] = field(default_factory=dict, repr=False)  # issue 26: per-topic, on request
    stability: list[Any] | None = field(default=None, repr=False)  # issue 26: groups of restarts, on request
    topics: dict[str, dict[str, Any]] = field(default_factory=dict, repr=False)  # per model: words, coherence
    groups_note: str | None = None  # why there is no ranking (groups None)
    human: dict[str, Any] | None = field(default=None, repr=False)  # agreement with people (evaluate.human)
    judge_agreement: dict[str, dict[str, Any]] = field(default_factory=dict)  # per judge column (judged.py)

    @property
    def names(self) -> list[str]:
        return [r["model"] for r in self.rows]

    @property
    def unreadable(self) -> list[str]:
        """The models that could not be read (their rows say why; none of their metrics computed)."""
        return [r["model"] for r in self.rows if r.get("unreadable")]

    @property
    def best(self) -> list[str]:
        """The models in the first group of the ranking."""
        return self.groups[0] if self.groups else []

    def table(self) -> str:
        """The terminal table: one row per model."""
        measures = self.params["coherence"]
        extra = [k for k in EMBEDDING_COLUMNS if any(k in r for r in self.rows)]
        best = self.best[0] if self.best and len(self.heldout) > 1 else None  # one likelihood: no "best"
        judged = [k for k in JUDGE_COLUMNS if any(k in r for r in self.rows)]
        head = ["model", "K", "log-lik/token", VS_BEST, "perplexity", *measures, "diversity",
                "exclusivity", "pred. rank", *[EMBEDDING_COLUMNS[k] for k in extra], "auto MP",
                *[JUDGE_COLUMNS[k] for k in judged], *(["stability"] if self.stability is not None else []),
                "estimator sd"]
        rows = []
        for r in self.rows:
            na = {**r.get("not_applicable", {}), **r.get("not_computed", {})}

            def cell(key: str, value: Any, shown: str | None = None, na: dict = na, row: dict = r) -> str:
                if row.get("unreadable") or ROW_METRICS.get(key) in na:
                    return DASH
                return numbers.metric(shown or key, value)

            vs = "(best)" if r["model"] == best else numbers.versus(r.get("vs_best"), DASH)
            rows.append([r["model"], DASH if r["topics"] is None else str(r["topics"]),
                         cell("per_token", r["per_token"]),
                         DASH if ROW_METRICS["per_token"] in na else vs,
                         cell("per_token", r["perplexity"], "perplexity"),
                         *[cell("coherence", r["coherence"].get(m)) for m in measures],
                         cell("diversity", r["diversity"]), cell("exclusivity", r["exclusivity"]),
                         cell("predictive_rank", r["predictive_rank"]),
                         *[DASH if r.get(k) is None else numbers.metric(k, r[k]) for k in extra],
                         cell("auto_model_precision", r["auto_model_precision"])
                         + ("*" if r.get("auto_note") and "auto MP" not in na else ""),
                         *[numbers.metric(k, r[k]) if k in r and JUDGE_COLUMNS[k] not in na else DASH
                           for k in judged],
                         *([numbers.metric("stability", r.get("stability"))]
                           if self.stability is not None else []),
                         cell("per_token", r["per_token_sd"], "per_token_sd")])
        if self.human:  # each column's agreement with people (evaluate.human), under the models
            from .human import agreement_row

            rows.append(agreement_row(self.human, head, measures))
        widths = [max(len(x) for x in col) for col in zip(head, *rows, strict=True)]
        lines = ["  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in
                           enumerate(zip(cells, widths, strict=True))) for cells in [head, *rows]]
        lines.insert(1, "  ".join("-" * w for w in widths))
        if self.human:
            lines.insert(len(lines) - 1, "  ".join("-" * w for w in widths))
        return "\n".join(lines)

    def legend(self) -> str:
        """What the table's held-out columns are (printed under it)."""
        best = self.best[0] if self.best else None
        if best is None or len(self.heldout) < 2:
            return ("estimator sd: the held-out estimator's run-to-run sd per token (its own noise, "
                    "not the uncertainty of a comparison)")
        return (f"{VS_BEST}: log-lik/token minus {best}'s, with its 95% interval over the documents sampled "
                "(and the estimator's noise): the uncertainty that decides the ranking; estimator sd: "
                "the held-out estimator's run-to-run sd per token (its own noise only)")

    def notes(self) -> list[str]:
        """Every fallback a row took, one line each (marked * in the table), then every metric that
        does not apply to a model, with the reason (— in the table)."""
        out = [f"* {r['model']}: automated intrusion: {r['auto_note']}"
               for r in self.rows if r.get("auto_note")]
        out += [f"{r['model']}: held-out: {r['heldout_note']}" for r in self.rows if r.get("heldout_note")]
        out += [f"{DASH} {r['model']}: unreadable, not evaluated: {r['unreadable']}"
                for r in self.rows if r.get("unreadable")]
        out += [v["text"] for v in self.judge_agreement.values()]
        out += [f"{r['model']}: {line}" for r in self.rows for line in r.get("judge_notes") or []]
        for r in self.rows:
            for metric, reason in {**r.get("not_applicable", {}), **r.get("not_computed", {})}.items():
                out.append(f"{DASH} {r['model']}: {metric}: {reason}")
        return out

    def flags_notes(self) -> dict[str, str]:
        """Why a model's topics have no coherence flags (incoherent, never-together, rare-words):
        the reference is too small for them (`diagnostics.flags.too_small`)."""
        return {k: v["flags_note"] for k, v in self.topics.items() if v.get("flags_note")}

    def meaningful(self) -> list[str]:
        """Which comparisons the table supports, in words."""
        rows = [r for r in self.rows if not r.get("unreadable")]
        lik = [r["model"] for r in rows if "heldout" not in r.get("not_applicable", {})]
        others = [r["model"] for r in rows if r["model"] not in lik]
        lines = []
        own = [r["model"] for r in rows if r.get("heldout_note")]
        if own and len(lik) > 1:
            lines.append(f"held-out log-likelihoods of {', '.join(own)} come from ais over eta (a "
                         "logistic-normal prior): the difference method compares them with the others on "
                         "the same tokens; Ratio-AIS only between LDA models")
        if not others:
            return lines
        have = "has" if len(others) == 1 else "have"
        if len(lik) > 1:
            lines.append(f"held-out likelihood, the comparisons and the ranking are among the models with "
                         f"a likelihood only ({', '.join(lik)}); {', '.join(others)} {have} none")
        elif lik:
            lines.append(f"only {lik[0]} has a likelihood: no held-out ranking; "
                         f"{', '.join(others)} {have} none")
        else:
            lines.append("no model has a likelihood: no held-out ranking")
        top = [r["model"] for r in rows if "coherence" not in r.get("not_applicable", {})]
        lines.append(f"coherence, diversity and automated intrusion compare every model with top words "
                     f"({', '.join(top)}); exclusivity those with non-negative topic-word weights ("
                     + ", ".join(r["model"] for r in rows if "exclusivity" not in r.get("not_applicable", {}))
                     + ")")
        return lines

    def summary(self) -> str:
        """What the table can compare, the ranking and the comparisons, in words, then the notes."""
        lines = list(self.meaningful())
        if self.scoring.get("warning"):  # beside the ranking: it is about these tokens only
            lines.append(f"WARNING: {self.scoring['warning']}")
        if self.groups is None and self.groups_note:
            lines.append(f"no ranking: {self.groups_note}")
        groups = self.groups or []
        alone = len(groups) == 1 and len(groups[0]) == 1 and len(self.rows) > 1
        for i, g in enumerate([] if alone else groups, 1):
            tie = " (not separated by the evidence)" if len(g) > 1 else ""
            lines.append(f"rank {i}: {', '.join(g)}{tie}")
        for c in self.comparisons:
            lo, hi = c["per_token_interval"]
            lines.append(f"{c['a']} vs {c['b']} ({c['method']}): {c['per_token']:+.5f} nats per token, "
                         f"95% [{lo:+.5f}, {hi:+.5f}] about {c['per_token_interval_about']}: {c['verdict']}")
            if c.get("method_reason"):
                lines.append(f"  {c['method']}: {c['method_reason']}")
            if c.get("warning"):
                lines.append(f"  WARNING: {c['warning']}")
        prints = self.params.get("coherence_fingerprint") or {}
        if prints:
            from ..coherence.fingerprint import line

            lines.append("coherence " + line(list(prints.values())))
        for note in dict.fromkeys(self.flags_notes().values()):  # one reference: one line
            lines.append(f"junk-topic flags: {note}")
        if self.human:
            from .human import lines as human_lines

            lines += human_lines(self.human)
        return "\n".join(lines + self.notes())

    def timing(self) -> str:
        """Wall and CPU seconds per stage, with the estimate made before the work."""
        return "\n".join(stage_lines(self.stages, estimated_stages(self.estimate)))

    def to_dict(self) -> dict[str, Any]:
        judged = {k: v["judge"] for k, v in self.topics.items() if v.get("judge")}
        return json_safe({"task": "evaluate", "rows": self.rows, "comparisons": self.comparisons,
                          "unreadable": [{"model": r["model"], "reason": r["unreadable"]}
                                         for r in self.rows if r.get("unreadable")],
                          **({"groups": self.groups} if self.groups is not None else
                             {"groups_note": self.groups_note}),
                          "scoring": self.scoring, "params": self.params,
                          "seconds": self.seconds, "stages": self.stages, "estimate": self.estimate,
                          **({"diagnostics": {k: v.to_dict() for k, v in self.diagnostics.items()}}
                             if self.diagnostics else {}),
                          "topic_words": {k: v["words"] for k, v in self.topics.items() if v["words"]},
                          "topic_coherence": {k: v["coherence"] for k, v in self.topics.items()
                                              if v["coherence"]},
                          "topic_flags": {k: v["flags"] for k, v in self.topics.items() if v.get("flags")},
                          **({"topic_flags_note": notes} if (notes := self.flags_notes()) else {}),
                          **({"topic_judge": judged} if judged else {}),
                          **({"judge_agreement": self.judge_agreement} if self.judge_agreement else {}),
                          **({"stability": [g.to_dict() for g in self.stability]}
                             if self.stability is not None else {}),
                          **({"human": self.human} if self.human is not None else {})})

    def to_frame(self):
        """The per-model table as a pandas DataFrame (one column per metric)."""
        try:
            import pandas as pd
        except ImportError:
            raise MethodError('to_frame needs pandas: pip install "tealeaves[pandas]"') from None
        flat = []
        for r in self.rows:
            row = {k: v for k, v in r.items()
                   if k not in ("coherence", "auto_model_precision_ci", "judge_notes", "judge_accounting")}
            row.update({f"coherence_{m}": v for m, v in r["coherence"].items()})
            flat.append(row)
        frame = pd.DataFrame(flat)
        return frame.drop(columns=[c for c in ("not_applicable",) if c in frame]).set_index("model")

    def __repr__(self) -> str:
        best = ", ".join(self.best) or "-"
        return f"EvaluationResult({len(self.rows)} models; best: {best})"

    def _repr_html_(self) -> str:
        from html import escape

        return f"<pre>{escape(self.table())}\n\n{escape(self.summary())}</pre>"

