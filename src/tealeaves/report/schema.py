"""The shape of every result the report reads, checked once when a result file is loaded: a
forged or mistyped JSON (a missing key, a list where an object belongs, a string where a number
belongs, an unknown kind) is a one-line `InputFileError` naming the file and the field, never a
traceback from deep inside the drawing code.

A spec is `NUM` (a number or null), `REAL` (a number), a `Num` range (`FRACTION`, a proportion
in 0..1 or null; `COUNT`, a whole number >= 0 or null; `SIZE`, a whole number >= 1; `NONNEG`, a
number >= 0 or null), `STR`, `ANY`, `[spec]` (a list of those), `Map(spec)` (an object with any
keys), `Pair(spec)` (a list of exactly two), `OrNull(spec)`, `PAIR_OR_NULL` or a dict of field specs (a name ending
in "?" is optional). Every number must be finite: tealeaves writes an unavailable value as null
and an infinity as the string "Infinity" or "-Infinity" (`output.jsonout`), which a numeric field
without an upper bound (`NUM`, `NONNEG`) accepts for the sign its range allows; the check turns
those strings into floats in place (`check_result`, `decode`), so the report shows inf, not "—"."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Any

from ..errors import InputFileError, shorten
from ..output.jsonout import json_number
from ..util.numbers import finite_float

NUM, REAL, STR, ANY = "a number or null", "a number", "a string", "anything"
PAIR_OR_NULL = "a list of two numbers or null"


@dataclass(frozen=True)
class Num:
    """A finite number (or null, when `null`) in `low`..`high`; a whole one when `whole`."""

    low: float | None = None
    high: float | None = None
    whole: bool = False
    null: bool = True

    def __str__(self) -> str:
        kind = "a whole number" if self.whole else "a number"
        span = (f" in {self.low:g}..{self.high:g}" if self.low is not None and self.high is not None
                else f" >= {self.low:g}" if self.low is not None else "")
        return f"{kind}{span}{' or null' if self.null else ''}"


FRACTION, COUNT, NONNEG = Num(0, 1), Num(0, whole=True), Num(0)
SIZE = Num(1, whole=True, null=False)
MAX_WHOLE = 2**53  # a count or size beyond this is not one tealeaves wrote


@dataclass(frozen=True)
class Map:
    value: Any


@dataclass(frozen=True)
class Pair:
    value: Any


@dataclass(frozen=True)
class OrNull:
    """`value`'s shape, or null."""

    value: Any


def _kind(v: Any) -> str:
    if isinstance(v, float) and not math.isfinite(v):
        return f"{v} (not a finite number)"
    return {dict: "an object", list: "a list", str: "a string", bool: "true/false",
            type(None): "null"}.get(type(v), "a number")


def _fail(where: str, want: str, v: Any) -> InputFileError:
    return InputFileError(f"field {shorten(where, 80)}: expected {want}, got {_kind(v)}")


def _infinity(v: Any, spec: Any) -> float | None:
    """The infinity the string `v` stands for, when the numeric `spec` admits it (else None)."""
    x = json_number(v) if isinstance(v, str) else None
    if x is None:
        return None
    if spec is NUM:
        return x
    if isinstance(spec, Num) and not spec.whole and spec.high is None and (spec.low is None or x > 0):
        return x
    return None


def _in_range(v: Any, spec: Num) -> bool:
    if v is None:
        return spec.null
    if finite_float(v) is None:
        return False
    if spec.whole and not (float(v).is_integer() and abs(v) <= MAX_WHOLE):
        return False
    return (spec.low is None or v >= spec.low) and (spec.high is None or v <= spec.high)


def _checked(v: Any, spec: Any, where: str) -> Any:
    """Raise a one-line InputFileError (naming the field `where`) unless `v` has the shape `spec`;
    `v`, with every infinity a numeric field holds turned into a float (lists and objects in place)."""
    if spec is ANY or (isinstance(spec, OrNull) and v is None):
        return v
    if isinstance(spec, OrNull):
        spec = spec.value
    if (inf := _infinity(v, spec)) is not None:
        return inf
    if isinstance(spec, Num):
        if not _in_range(v, spec):
            shown = shorten(repr(v), 40) if finite_float(v) is not None else _kind(v)
            raise InputFileError(f"field {shorten(where, 80)}: expected {spec}, got {shown}")
    elif spec in (NUM, REAL):
        if not ((v is None and spec is NUM) or finite_float(v) is not None):
            raise _fail(where, spec, v)
    elif spec is STR:
        if not isinstance(v, str):
            raise _fail(where, spec, v)
    elif spec is PAIR_OR_NULL:
        if v is not None:
            _checked(v, Pair(NUM), where)
    elif isinstance(spec, list | Pair):
        if not isinstance(v, list) or (isinstance(spec, Pair) and len(v) != 2):
            raise _fail(where, "a list" if isinstance(spec, list) else "a list of two", v)
        item = spec[0] if isinstance(spec, list) else spec.value
        for i, x in enumerate(v):
            v[i] = _checked(x, item, f"{where}[{i}]")
    elif not isinstance(v, dict):
        raise _fail(where, "an object", v)
    elif isinstance(spec, Map):
        for k, x in v.items():
            v[k] = _checked(x, spec.value, f"{where}.{k}")
    else:
        for name, sub in spec.items():
            key = name.rstrip("?")
            path = f"{where}.{key}" if where else key
            if key in v:
                v[key] = _checked(v[key], sub, path)
            elif not name.endswith("?"):
                raise InputFileError(f"field {shorten(path, 80)} is missing")
    return v


CHECK = {"ci95": Pair(NUM), "reference": {"exact": ANY, "ais": ANY, "ais_temperatures?": ANY},
         "documents": ANY, "bias_per_token": NUM, "excess_error?": NUM, "excess_limit?": NUM,
         "flagged": ANY, "flags?": [STR]}
HELDOUT_RESULT = {"task?": STR, "model?": ANY, "label": STR, "method": STR, "total": NUM, "sd?": NONNEG,
                  "per_token": NUM, "perplexity": NONNEG, "tokens": COUNT, "tokens_dropped?": COUNT,
                  "seconds": NONNEG, "note?": STR, "check?": ANY, "runs?": SIZE, "unbiased?": ANY,
                  "documents?": {"log_prob": [NUM], "sd?": [NUM]}}
# a stability result (CONTRACT3) and one model's per-topic diagnostics, as the report reads them
STABILITY = {"models": [STR], "per_topic": Map([Num(0, 1)]), "per_model?": Map(Num(0, 1)), "score?": Num(0, 1),
             "flagged?": Map(STR), "topics?": COUNT, "distance?": STR, "task?": STR,
             "topn?": Num(1, whole=True), "floor?": Num(0, 1), "words?": Map([[STR]]),
             "finding?": STR, "finding_text?": STR, "reference?": STR, "tolerance?": Num(0, 1),
             "recurring?": [COUNT],
             "aligned?": [{"topic": COUNT, "stability?": NUM, "matches": Map(Pair(NUM))}]}
DIAGNOSTICS = {"model?": ANY, "counts?": STR, "flagged?": [COUNT],
               "topics": [{"words?": STR, "flags?": STR, **{f"{k}?": NUM for k in (
                   "tokens", "document_entropy", "coherence", "uniform_dist", "corpus_dist", "eff_num_words",
                   "rank_1_docs", "exclusivity", "kl_background")}}]}

# each metric's agreement with people beside an evaluation (evaluate.human)
HUMAN = {"kind": STR, "study?": ANY, "statistic?": STR, "notes?": [STR], "trusted?": ANY,
         "metrics": Map({"label?": STR, "estimate?": NUM, "low?": NUM, "high?": NUM, "topics?": COUNT,
                         "ceiling?": NUM, "text?": STR, "why?": STR, "how?": STR, "people?": STR}),
         "comparisons?": [{"a": STR, "b": STR, "difference": NUM, "low": NUM, "high": NUM, "p": NUM}]}
# a ProxAnn study's scores (proxann score --json; inside metaeval of an app study)
PROXANN_SCORE = {"summary": Map({"topics": COUNT, "responses": COUNT, "tau_fit": NUM, "tau_rank": NUM,
                                 "tau_fit_ci?": PAIR_OR_NULL, "tau_rank_ci?": PAIR_OR_NULL,
                                 "annotator_tau_fit?": NUM, "human_tau_fit?": NUM, "distractor_rating?": NUM,
                                 "clarity?": NUM, "agreement?": Map(ANY)}),
                 "topics": [{"model": STR, "topic": COUNT, "annotators": COUNT, "tau_fit": NUM, "tau_rank": NUM,
                             "words?": STR, "labels?": [STR], **{f"{k}?": NUM for k in (
                                 "spearman_fit", "annotator_tau_fit", "human_tau_fit", "distractor_rating",
                                 "clarity")}}],
                 "responses?": [ANY], "excluded_annotators?": [STR], "incomplete?": COUNT,
                 "attention_failures?": Map(COUNT)}
# one task of a judge's qualification (metaeval.qualify.task_agreement)
QUALIFIED = {"task": STR, "judge_task": STR, "people": STR, "statistic": STR, "topics": COUNT, "scored": COUNT,
             "correlation": Map({"estimate": NUM, "low": NUM, "high": NUM, "topics": COUNT, "why?": ANY}),
             "ceiling": Map({"ceiling": NUM, "low": NUM, "high": NUM, "topics?": COUNT, "why?": ANY}),
             "human_baseline": {"mean": NUM, "sd?": NUM, "topics?": COUNT, "why?": ANY},
             "alt_test": Map({"winning_rate": NUM, "advantage_probability": NUM, "passes": ANY,
                              "annotators": COUNT, "why?": ANY}),
             "verdict": {"trusted": ANY, "text": STR}, "notes?": [STR],
             "per_topic?": {"ids": [STR], "judge": [NUM], "people": [NUM]}}
# a judge column's measured agreement with people (evaluate.judged.agreement)
AGREEMENT = {"qualified": ANY, "text": STR, "estimate?": NUM, "low?": NUM, "high?": NUM,
             "human_baseline?": NUM, "ceiling?": NUM, "trusted?": ANY}

SPECS: dict[str, dict[str, Any]] = {
    "heldout": {"results": [HELDOUT_RESULT], "model?": ANY, "docs?": ANY},
    "compare": {"total": NUM, "per_token_interval?": Pair(NUM), "sd_chains?": NUM, "sd_documents?": NUM,
                "per_token_interval_about?": STR, "warning?": ANY,
                "per_token?": NUM, "perplexity_ratio?": NUM, "verdict?": STR, "model_a?": ANY,
                "model_b?": ANY, "documents?": {"log_ratio?": [NUM]}},
    "curve": {"models": [ANY], "totals": [NUM], "sd": [NONNEG], "per_token": [NUM]},
    "coherence": {"results": [{"measure": STR, "mean": NUM, "params": Map(ANY), "fingerprint?": Map(ANY),
                               "topics": [{"words": [STR], "score": NUM, "missing?": [STR],
                                           "word_pairs?": COUNT, "zero_pairs?": COUNT,
                                           "skipped_pairs?": COUNT, "reason?": ANY}]}], "model?": ANY},
    "diversity": {"exclusivity?": [NONNEG], "diversity?": FRACTION, "topn?": SIZE, "words?": [[STR]],
                  "per_model?": Map(FRACTION),
                  "model?": ANY},
    "bcubed": {"precision?": FRACTION, "recall?": FRACTION, "f?": FRACTION, "f_of_means?": FRACTION,
               "purity?": FRACTION, "inverse_purity?": FRACTION, "nmi?": FRACTION, "items?": COUNT,
               "per_class?": [{"class": ANY, "precision": FRACTION, "recall": FRACTION, "f": FRACTION}]},
    "csl": {"biased?": ANY, "mean?": NUM, "items?": COUNT, "chain_steps?": COUNT, "seconds?": NONNEG,
            "exact_mean?": NUM, "item_log_prob?": [NUM]},
    "intrusion-score": {"summary": Map({"model_precision?": FRACTION, "model_precision_ci?": PAIR_OR_NULL,
                                        "topics?": COUNT, "topic_log_odds?": NUM,
                                        "topic_log_odds_ci?": PAIR_OR_NULL, "documents?": COUNT}),
                        "model_precision?": Map(Map(FRACTION)), "topic_log_odds?": Map(Map(NUM)),
                        "topic_words?": Map(Map([STR]))},
    "intrusion-auto": {"summary": Map({"model_precision": FRACTION, "model_precision_ci": Pair(NUM),
                                       "topics": COUNT}),
                       "items": [{"options": [STR], "predicted": REAL, "intruder": REAL, "correct": ANY}]},
    "predictive": {"log_likelihood": NUM, "rank": NUM, "documents": COUNT, "tokens": COUNT,
                   "doc_log_lik": [NUM]},
    "intrusion-tasks": {"tasks": [{"kind": STR, "text?": STR, "options": [STR]}]},
    "evaluate": {"rows": [{"model": STR, "topics": COUNT, "per_token": NUM, "per_token_sd": NONNEG,
                           "perplexity": NONNEG, "coherence": Map(NUM), "diversity": FRACTION,
                           "exclusivity": NONNEG, "predictive_rank": NUM, "auto_model_precision": FRACTION,
                           "auto_model_precision_ci?": PAIR_OR_NULL, "stability?": FRACTION,
                           "vs_best?": OrNull({"model": STR, "difference": NUM, "interval": Pair(NUM),
                                               "method?": STR, "about?": ANY}),
                           "unreadable?": STR, "judge_model_precision?": FRACTION, "judge_rating?": Num(1, 3)}],
                 "topic_judge?": Map(Map([NUM])),
                 "judge_agreement?": Map(AGREEMENT),
                 "topic_words?": Map([[STR]]), "topic_coherence?": Map(Map([NUM])),
                 "topic_flags_note?": Map(STR), "diagnostics?": Map(DIAGNOSTICS), "stability?": [STABILITY],
                 "scoring?": {"documents?": COUNT, "tokens?": COUNT, "oov_tokens?": COUNT, "rule?": ANY,
                              "warning?": ANY},
                 "unreadable?": [{"model": STR, "reason": STR}],
                 "comparisons?": [{"a": STR, "b": STR, "method": STR, "per_token": NUM,
                                   "per_token_interval": Pair(NUM), "verdict": STR,
                                   "per_token_interval_scope?": STR, "per_token_interval_about?": STR,
                                   "warning?": ANY, "method_reason?": STR}],
                 "groups?": [[STR]], "groups_note?": STR, "stages?": Map({"wall": NONNEG, "cpu": NONNEG}),
                 "estimate?": {"stages?": Map(NUM), "total?": NUM, "ratio_ais_up_to?": NUM, "how?": STR},
                 "human?": HUMAN},
    "select": {"topics": [REAL], "per_k": Map({"mean": [NUM], "sd": [NUM]}), "params?": Map(ANY),
               "restarts?": ANY, "choice?": Map({"k?": ANY, "runner_up?": ANY, "significant?": ANY,
                                                 "why?": STR, "bias?": STR, "bias_why?": STR}),
               "decision?": {"rule?": STR, "k?": ANY, "why?": STR, "tied?": [REAL],
                             "warning?": ANY,
                             "comparisons?": [{"k": REAL, "difference": NUM, "interval": Pair(NUM),
                                               "separated": ANY, "note?": STR}]},
               "disagreements?": [{"metric": STR, "k": REAL, "known_bias?": STR, "why?": STR}],
               "stability?": [STABILITY],
               "edge?": {"side?": STR, "k?": NUM, "neighbour?": NUM, "status?": STR, "suggest?": [REAL],
                         "message?": STR, "separated?": ANY},
               "grid?": {"asked?": [REAL], "extend?": COUNT, "added?": [REAL], "stopped?": ANY},
               "chosen?": {"model?": STR, "k?": NUM, "restart?": NUM, "why?": STR, "words?": [[STR]],
                           "coherence?": Map([NUM]), "stability?": [NUM], "diagnostics?": DIAGNOSTICS,
                           "diagnostics_note?": STR}},
    "stability": STABILITY,
    "diagnostics": DIAGNOSTICS,
    "text": {"title": STR, "text": STR},
    "proxann-score": PROXANN_SCORE,
    "metaeval": {"judgment_task": STR, "quality": STR, "study?": ANY,
                 "rows": [{"score": STR, "group": STR, "statistic": STR, "estimate": NUM, "low": NUM,
                           "high": NUM, "topics": COUNT, "why?": ANY}],
                 "ceiling?": [{"group": STR, "statistic": STR, "ceiling": NUM, "low": NUM, "high": NUM,
                               "split_half?": NUM, "reliability?": NUM, "topics?": COUNT, "why?": ANY}],
                 "comparisons?": [{"a": STR, "b": STR, "group": STR, "statistic": STR, "difference": NUM,
                                   "low": NUM, "high": NUM, "p": NUM, "why?": ANY}],
                 "notes?": [STR], "params?": Map(ANY),
                 "alt_test?": Map({"winning_rate": NUM, "advantage_probability": NUM, "passes": ANY,
                                   "annotators": COUNT, "why?": ANY}),
                 "document_agreement?": Map({"mean": NUM, "low": NUM, "high": NUM, "topics": COUNT,
                                             "human_baseline": NUM, "why?": ANY}),
                 "leave_one_out?": Map({"mean": NUM, "sd": NUM, "topics": COUNT, "repeats": COUNT, "why?": ANY}),
                 "proxann_score?": PROXANN_SCORE, "model_notes?": [STR], "study_notes?": [STR]},
    "judge-qualify": {"judge": STR, "settings": Map(ANY), "notes?": [STR], "accounting?": Map(ANY),
                      "estimate?": ANY, "seconds?": NONNEG,
                      "studies": Map({"topics": COUNT, "of": COUNT, "notes?": [STR], "tasks": [QUALIFIED]})},
}
SPECS["completion"] = SPECS["demo"] = SPECS["heldout"]


def _known_measure(r: dict[str, Any], where: str) -> None:
    """A coherence result's convention (params, fingerprint) and measure must be ones tealeaves has:
    the report names them beside the number."""
    from ..coherence import CONVENTION_MEASURES

    fp = r.get("fingerprint") or {}
    if not isinstance(fp, dict) or not isinstance(r.get("params"), dict):
        raise InputFileError(f"field {where}.{'fingerprint' if not isinstance(fp, dict) else 'params'}: "
                             "expected an object")
    for field, conv in (("params.convention", r["params"].get("convention")),
                        ("fingerprint.convention", fp.get("convention"))):
        if conv is not None and (not isinstance(conv, str) or conv not in CONVENTION_MEASURES):
            raise InputFileError(f"field {where}.{field}: unknown convention {shorten(repr(conv), 40)} "
                                 f"(known: {', '.join(CONVENTION_MEASURES)})")
    conv = fp.get("convention") or r["params"].get("convention") or "tealeaves"
    if r["measure"] not in CONVENTION_MEASURES[conv]:
        raise InputFileError(f"field {where}.measure: {shorten(repr(r['measure']), 40)} is not a measure of "
                             f"the {conv} convention ({', '.join(CONVENTION_MEASURES[conv])})")


def _same_lengths(doc: dict[str, Any], kind: str) -> None:
    """Lists the report reads side by side must be equally long."""
    groups: list[tuple[str, list[Any]]] = []
    if kind == "curve":
        groups = [("models, totals, sd, per_token", [doc["models"], doc["totals"], doc["sd"], doc["per_token"]])]
    elif kind == "select":
        groups = [(f"topics, per_k.{m}.mean, per_k.{m}.sd", [doc["topics"], v["mean"], v["sd"]])
                  for m, v in doc["per_k"].items()]
    elif kind in ("heldout", "completion", "demo") and len(doc["results"]) >= 2:
        rs = doc["results"][:2]
        if any("documents" not in r for r in rs):
            raise InputFileError("field results[].documents is missing (the per-document chart needs it)")
        groups = [("results[0].documents.log_prob, results[1].documents.log_prob",
                   [r["documents"]["log_prob"] for r in rs])]
    for names, lists in groups:
        if len({len(x) for x in lists}) > 1:
            raise InputFileError(f"fields {shorten(names, 120)} differ in length")
    stab = [("", doc)] if kind == "stability" else [
        (f"stability[{i}].", g) for i, g in enumerate(doc.get("stability") or []) if isinstance(g, dict)]
    for where, g in stab:  # a stability group: its restarts, each with one value (and words) per topic
        if set(g["per_topic"]) != set(g["models"]):
            raise InputFileError(f"field {where}per_topic: expected one list per model of {where}models")
        for m, v in g["per_topic"].items():
            if len(v) != g.get("topics", len(v)) or m in (g.get("words") or {}) and len(g["words"][m]) != len(v):
                raise InputFileError(f"field {where}per_topic: {shorten(m, 40)!r} has {len(v)} values for "
                                     f"{g.get('topics', len(v))} topics (or as many words)")
    if kind == "intrusion-auto":
        for i, it in enumerate(doc["items"]):
            for k in ("predicted", "intruder"):
                if not (isinstance(it[k], int) and 0 <= it[k] < len(it["options"])):
                    raise InputFileError(f"field items[{i}].{k}: expected a position among the options")
    if kind == "coherence":
        for i, r in enumerate(doc["results"]):
            _known_measure(r, f"results[{i}]")
    if kind == "heldout" or kind in ("completion", "demo"):
        for i, r in enumerate(doc["results"]):
            if r.get("check"):
                _checked(r["check"], CHECK, f"results[{i}].check")


def _kind_of(doc: dict[str, Any]) -> Any:
    kind = doc.get("task") or doc.get("command")
    if not isinstance(kind, str) or kind not in SPECS:
        raise InputFileError(f"not a result the report knows (kind {shorten(repr(kind), 40)}; known: "
                             f"{', '.join(sorted(SPECS))})")
    return kind


def check_result(doc: Any, source: str | os.PathLike) -> None:
    """Raise a one-line InputFileError naming `source` and the field unless `doc` is a result the
    report can draw (a command's `--json`, or `{"sections": [...]}` of such results)."""
    source = os.fspath(source)
    try:
        if not isinstance(doc, dict):
            raise InputFileError(f"expected a JSON object, got {_kind(doc)}")
        parts = doc.get("sections", [doc]) if "sections" in doc else [doc]
        if not isinstance(parts, list):
            raise _fail("sections", "a list", parts)
        for i, part in enumerate(parts):
            if not isinstance(part, dict):
                raise _fail(f"sections[{i}]", "an object", part)
            nested = part.get("result") if isinstance(part.get("result"), dict) else None
            if nested is not None:  # compare and csl nest their result
                part = {**nested, **{k: v for k, v in part.items() if k != "result"}}
            kind = _kind_of(part)
            if kind in ("heldout", "completion", "demo", "coherence") and "results" not in part:
                raise InputFileError(f"field results is missing (a {kind} result)")
            _checked(part, SPECS[kind], "")
            if nested is not None:  # the infinities turned into floats, back where they were
                nested.update({k: part[k] for k in nested})
            _same_lengths(part, kind)
    except InputFileError as exc:
        raise InputFileError(f"{source}: not a result the report can read: {exc}") from None


def decode(doc: Any) -> Any:
    """`doc` with the infinities of its numeric fields turned into floats, as `check_result` does for
    a file, for a result made in this process (a command's `--report`); a shape the report cannot
    read is left to the drawing code, which says so."""
    try:
        check_result(doc, "<result>")
    except InputFileError:
        pass
    return doc

