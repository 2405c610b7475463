"""Scoring human answers to intrusion tasks (Chang et al. 2009, section 4).

- Model precision of topic k (eq. 1): the fraction of subjects who chose the true intruder.
- Topic log odds of document d (eq. 2): mean over subjects of log theta_{d, j*} - log theta_{d, j_s},
  j* the true intruder topic and j_s the subject's choice (0 when they agree, negative otherwise).
Aggregates per model with percentile bootstrap intervals over items; annotators who fail more
than `max_attention_failures` attention checks are left out (and reported); agreement between
annotators is Fleiss' kappa and Krippendorff's alpha (`agreement.py`); each model is tested against
chance and every two models against each other (`exact.py`).
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import BadValueError, InputFileError, MethodError, shorten
from ..errors import shown as quoted
from ..files import csvout
from ..files.records import (
    numbered_csv,
    numbered_json_lines,
    parse_json,
    strict_bool,
    strict_choice,
    strict_float,
    strict_id,
    strict_int,
    strict_strings,
)
from ..output.display import Display
from ..output.jsonout import json_safe
from ..util.limits import check_bootstrap, check_int
from ..util.numbers import finite_float
from ..util.text import check_distinct_options
from .agreement import agreement as agreement_of
from .exact import MAX_PERMUTATIONS, PERMUTATIONS, chance_test, method_text, permutation_test
from .plan import intra_item_correlation


def read_responses(path: str | os.PathLike) -> list[dict[str, Any]]:
    """Responses as JSONL or CSV with columns annotator, item and choice (the chosen position) or
    chosen (the option text); an `options` column (JSON list, shown order) is checked if present."""
    return [r for _, r in numbered_responses(path)]


def numbered_responses(path: str | os.PathLike) -> list[tuple[str, dict[str, Any]]]:
    """`read_responses` with each response's place, "FILE:LINE"."""
    p = os.fspath(path)
    if not csvout.is_csv(p):
        return numbered_json_lines(p)
    header, rows = numbered_csv(p, ("annotator", "item"))
    if not {"choice", "chosen"} & set(header):
        raise InputFileError(f"{p}: the header {header[:8]} lacks a choice (or chosen) column")
    return rows


@dataclass(repr=False)
class IntrusionScores(Display):
    model_precision: dict[str, dict[int, float]]  # model -> topic -> MP
    topic_log_odds: dict[str, dict[int, float]]  # model -> document -> TLO
    summary: dict[str, dict[str, Any]]  # model -> aggregates with intervals
    excluded_annotators: list[str]
    agreement: dict[str, dict[str, Any]]  # kind -> Fleiss' kappa, Krippendorff's alpha, items, note
    responses_used: int
    item_choices: dict[str, list[int]]  # item -> positions chosen (responses used)
    comparisons: list[dict[str, Any]] = field(default_factory=list)  # every two models: exact tests
    topic_words: dict[str, dict[int, list[str]]] = field(default_factory=dict)  # model -> topic -> its words

    _name = "IntrusionScores"

    def _headline(self) -> list[tuple[str, Any]]:
        out: list[tuple[str, Any]] = []
        for m, s in self.summary.items():
            out += [(f"{m} model precision", s.get("model_precision", float("nan"))),
                    (f"{m} topic log odds", s.get("topic_log_odds", float("nan")))]
        return out + [("responses used", self.responses_used)]

    def _columns(self) -> tuple[str, dict[str, Any]]:
        rows = [(m, k, v) for m, d in self.model_precision.items() for k, v in d.items()]
        return "row", {"model": [r[0] for r in rows], "topic": [r[1] for r in rows],
                       "model_precision": [r[2] for r in rows]}

    def comparison(self, a: str, b: str) -> dict[str, Any]:
        """The tests of model `a` against model `b` (differences are a's minus b's)."""
        for name in (a, b):
            if name not in self.summary:
                raise MethodError(f"unknown model {name!r} (the scores have {', '.join(self.summary)})")
        if a == b:
            raise MethodError(f"compare two different models, not {a!r} with itself")
        for c in self.comparisons:
            if c["models"] == [a, b]:
                return c
            if c["models"] == [b, a]:
                return {"models": [a, b], **{k: _flipped(t) for k, t in c.items() if k != "models"}}
        raise MethodError(f"no comparison of {a!r} and {b!r}")  # every two models are compared

    def rows(self) -> list[dict[str, Any]]:
        """The CSV rows: one per model (scores, intervals, tests against chance), per kind of item
        (agreement) and per two models and measure (comparison); an undefined value is empty and
        its row's `note` says why."""
        out: list[dict[str, Any]] = []
        for m, s in self.summary.items():
            row: dict[str, Any] = {"row": "model", "model": m}
            for key in ("model_precision", "topic_log_odds"):
                lo, hi = s.get(f"{key}_ci", (None, None))
                row |= {key: s.get(key), f"{key}_ci_low": finite_float(lo),
                        f"{key}_ci_high": finite_float(hi)}
            row |= {"topics": s.get("topics"), "documents": s.get("documents"),
                    "intra_item_correlation": s.get("intra_item_correlation")}
            for kind, key in CHANCE_KEYS.items():
                test = s.get(key, {})
                row |= {f"{kind}_right": test.get("right"), f"{kind}_answers": test.get("answers"),
                        f"{kind}_chance": test.get("chance"), f"{kind}_p_vs_chance": test.get("p_value")}
            out.append(row)
        for kind, a in self.agreement.items():
            out.append({"row": "agreement", "kind": kind, **{k: a.get(k) for k in AGREEMENT_COLUMNS}})
        for c in self.comparisons:
            for measure in ("model_precision", "topic_log_odds"):
                t = c[measure]
                out.append({"row": "comparison", "model": c["models"][0], "other": c["models"][1],
                            "measure": measure, "difference": t.get("difference"),
                            "p_value": t.get("p_value"),
                            "method": method_text(t) if "p_value" in t else None, "note": t.get("note")})
        return out

    def to_dict(self) -> dict[str, Any]:
        return json_safe(
            {
                "task": "intrusion-score",
                "summary": self.summary,
                "model_precision": {
                    m: {str(k): v for k, v in d.items()} for m, d in self.model_precision.items()
                },
                "topic_log_odds": {
                    m: {str(k): v for k, v in d.items()} for m, d in self.topic_log_odds.items()
                },
                "excluded_annotators": self.excluded_annotators,
                "agreement": self.agreement,
                "comparisons": self.comparisons,
                "responses_used": self.responses_used,
                "item_choices": self.item_choices,
                "topic_words": {m: {str(k): v for k, v in d.items()} for m, d in self.topic_words.items()},
            }
        )


def _flipped(test: dict[str, Any]) -> dict[str, Any]:
    """A comparison of a with b as one of b with a."""
    out = dict(test)
    if "difference" in test:
        out |= {"difference": -test["difference"], "p_less": test["p_greater"], "p_greater": test["p_less"],
                "items": test["items"][::-1]}
    return out


AGREEMENT_COLUMNS = ("fleiss_kappa", "krippendorff_alpha", "items", "answers", "note")


def bootstrap_ci(values: np.ndarray, resamples: int, rng: np.random.Generator) -> tuple[float, float]:
    """Percentile bootstrap 95% interval of the mean of `values` (nan for fewer than 2, or for no
    resamples)."""
    if values.size < 2 or resamples == 0:
        return float("nan"), float("nan")
    check_bootstrap(resamples, float(values.size), 2 * 8.0 * resamples * values.size)  # callers check first
    means = values[rng.integers(0, values.size, size=(resamples, values.size))].mean(axis=1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return float(lo), float(hi)


KEY_FIELDS = ("item", "kind", "model", "options", "intruder")


def read_key(path: str | os.PathLike) -> list[dict[str, Any]]:
    """A key file written by `write_tasks` (JSON lines or long CSV), every row checked and typed
    (`key_row`: an intruder position, attention and relaxed true/false, ...)."""
    from .tasks import LOG_ZERO, numbered_tasks

    rows = numbered_tasks(path, LOG_ZERO)
    is_csv = csvout.is_csv(path)
    for where, r in rows:
        if is_csv:
            for k in ("option_topics", "option_log_theta"):
                r[k] = parse_json(r[k], f"{where}: {k}", constants=LOG_ZERO) if r.get(k) else []
    return [key_row(r, where) for where, r in rows]


def key_row(k: Any, where: str) -> dict[str, Any]:
    """One key row checked and typed: item, kind and model strings, options a list of at least 2
    strings no two of which look the same (`text.shown_as`, the app's rule), intruder an option
    position, attention and relaxed booleans (absent: false). A word item has a topic (a whole
    number) and no document, option_topics or option_log_theta; a topic item has a document and,
    per option a log proportion (option_log_theta, <= 0; -inf is log 0) and, when given, a
    distinct topic (option_topics)."""
    if not isinstance(k, dict):
        raise BadValueError(f"{where}: expected a record, got {type(k).__name__}")
    missing = [f for f in KEY_FIELDS if f not in k]
    if missing:
        raise BadValueError(f"{where}: missing field(s) {', '.join(missing)}")
    options = strict_strings(k["options"], where, "options")
    if len(options) < 2:
        raise BadValueError(f"{where}: options must be a list of at least 2 strings")
    check_distinct_options(options, where)
    if k["kind"] not in ("word", "topic") or not isinstance(k["model"], str) or \
            not isinstance(k["item"], str):
        raise BadValueError(f"{where}: kind must be word or topic; item and model strings")
    index, other = ("topic", "document") if k["kind"] == "word" else ("document", "topic")
    if k.get(index) is None:
        raise BadValueError(f"{where}: a {k['kind']} item needs an integer {index}")
    row = {**k, "options": options, index: strict_int(k[index], where, index, low=0),
           "intruder": strict_choice(k["intruder"], len(options), where, "intruder")}
    for flag in ("attention", "relaxed"):
        row[flag] = strict_bool(k[flag], where, flag) if flag in k else False
    topics, log_theta = k.get("option_topics") or [], k.get("option_log_theta") or []
    if not isinstance(topics, list) or not isinstance(log_theta, list):
        raise BadValueError(f"{where}: option_topics and option_log_theta must be lists")
    row["option_topics"] = [strict_int(t, where, "option_topics", low=0) for t in topics]
    row["option_log_theta"] = [_log_theta(v, where) for v in log_theta]
    _kind_agrees(row, where, other)
    return row


def _kind_agrees(row: dict[str, Any], where: str, other: str) -> None:
    """The fields of a word item or a topic item, and only those (a relabelled kind is refused)."""
    kind, n = row["kind"], len(row["options"])
    if row.get(other) is not None:
        raise BadValueError(f"{where}: a {kind} item has no {other} (got {quoted(str(row[other]))}); "
                            "is the kind wrong?")
    topics, log_theta = row["option_topics"], row["option_log_theta"]
    if kind == "word":
        if topics or log_theta:
            raise BadValueError(f"{where}: a word item has no option_topics or option_log_theta; "
                                "is the kind wrong?")
        return
    if len(log_theta) != n:
        raise BadValueError(f"{where}: a topic item needs one option_log_theta per option ({n}); "
                            f"got {len(log_theta)}")
    if topics and len(topics) != n:  # optional (scoring needs only the log proportions)
        raise BadValueError(f"{where}: option_topics names {len(topics)} topics for {n} options")
    if len(set(topics)) != len(topics):
        raise BadValueError(f"{where}: option_topics {topics} names a topic twice")


def _why_none(items: dict[str, dict[str, Any]], clean: list[tuple[str, str, int, str]],
              excluded: list[str]) -> str:
    """Why no response is left to score (for the one-line error)."""
    if not items:
        return "the key has no items"
    if all(k["attention"] for k in items.values()):
        return "every item in the key is an attention check"
    if not clean:
        return "the responses file holds no response"
    if all(items[i]["attention"] for _, i, _, _ in clean):
        return "every response answers an attention check"
    return (f"every annotator who answered a scored item was excluded by the attention checks "
            f"({len(excluded)} excluded; --max-attention-failures allows more failures)")


def _log_theta(value: Any, where: str) -> float:
    number = strict_float(value, where, "option_log_theta", finite=False)
    if not number <= 0:  # nan or > 0 (a proportion above 1); -inf is the log of a zero proportion
        raise BadValueError(f"{where}: option_log_theta {number} is not a log proportion (<= 0)")
    return number


def check_key(
    key: Sequence[dict[str, Any]], tasks: Sequence[dict[str, Any]] | None = None, source: str = "the key"
) -> dict[str, dict[str, Any]]:
    """The key as item -> row (checked and typed by `key_row`), after checking that it matches the
    annotator-facing `tasks` if given: the same items with the same options in the same order."""
    items: dict[str, dict[str, Any]] = {}
    for i, k in enumerate(key, 1):
        row = key_row(k, f"{source}, row {i}")
        if row["item"] in items:
            raise MethodError(f"{source}, row {i}: item {row['item']!r} appears twice")
        items[row["item"]] = row
    if tasks is not None:
        names = [str(t.get("item")) for t in tasks]
        if len(set(names)) != len(names):
            raise MethodError("the tasks list an item twice")
        unknown = [n for n in names if n not in items]
        if unknown:
            raise MethodError(
                f"{source} does not match the tasks: {len(unknown)} task item(s) are not in "
                f"it (first {unknown[0]!r})"
            )
        for t in tasks:
            if list(t.get("options", [])) != list(items[str(t["item"])]["options"]):
                raise MethodError(f"{source} does not match the tasks: item {t['item']!r} has other options")
        extra = set(items) - set(names)
        if extra:
            raise MethodError(
                f"{source} does not match the tasks: it has {len(extra)} item(s) the tasks "
                f"lack (first {sorted(extra)[0]!r})"
            )
    return items


def _choice(r: dict[str, Any], k: dict[str, Any], where: str, typed: bool = True) -> int:
    """The chosen position of a response: its `choice` (a position) or `chosen` (the option
    text); with both, they must agree. Options the response says were shown (a JSON list, or
    JSON text in a CSV cell) must equal the key's, in order. In a `typed` source (JSON, Python),
    a position is a number, never text ("2")."""
    item, options = k["item"], list(k["options"])
    shown = r.get("options")
    if shown not in (None, "", []):
        shown = strict_strings(shown, where, "options")
        if shown != options:
            raise MethodError(
                f"{where}: item {item!r} was shown with options {shown}, the key has {options}"
            )
    raw, chosen = r.get("choice"), r.get("chosen")
    if chosen not in (None, ""):
        if not isinstance(chosen, str) or chosen not in options:
            raise MethodError(f"{where}: item {item!r} has no option {chosen!r}")
        if raw in (None, ""):
            return options.index(chosen)
    if typed and isinstance(raw, str):
        raise BadValueError(f"{where}: choice {quoted(raw)} is text; in JSON a position is a number (2, not "
                            '"2")')
    choice = strict_choice(raw, len(options), where, "choice")
    if chosen not in (None, "") and options[choice] != chosen:
        raise MethodError(f"{where}: choice {choice} is {options[choice]!r} but chosen is {chosen!r}")
    return choice


@dataclass
class CleanResponses:
    """Responses checked against the key (`clean_responses`): `items` the key (item -> row),
    `answers` every response as (annotator, item, choice, place), `used` those scored (attention
    items and excluded annotators left out), `failures` per annotator, `excluded` annotators."""

    items: dict[str, dict[str, Any]]
    answers: list[tuple[str, str, int, str]]
    used: list[tuple[str, str, int]]
    failures: dict[str, int]
    excluded: list[str]


def clean_responses(
    key: Sequence[dict[str, Any]] | str | os.PathLike,
    responses: Iterable[dict[str, Any]] | str | os.PathLike,
    max_attention_failures: int = 0,
) -> CleanResponses:
    """The key and responses read and checked (every response a one-line error naming its place:
    an unknown item, a choice that is not an option, an annotator answering an item twice), the
    attention checks counted and the annotators failing more than `max_attention_failures`
    left out. What `score` scores and the meta-evaluation's study is made of."""
    if isinstance(key, str | os.PathLike):
        key = read_key(key)
    typed = not (isinstance(responses, str | os.PathLike) and os.fspath(responses).endswith(".csv"))
    if isinstance(responses, str | os.PathLike):
        placed = numbered_responses(responses)
    else:
        placed = [(f"response {i}", r) for i, r in enumerate(responses)]
    items = check_key(key)
    seen: set[tuple[str, str]] = set()
    clean = []
    for where, r in placed:
        if not isinstance(r, dict):
            raise MethodError(f"{where}: expected a record with annotator, item and choice")
        if r.get("annotator") in (None, ""):
            raise MethodError(f"{where}: no annotator (every response needs one)")
        ann, item = strict_id(r["annotator"], where, "annotator"), strict_id(r.get("item"), where, "item")
        if item not in items:
            raise MethodError(f"{where}: unknown item {item!r} (not in the key)")
        choice = _choice(r, items[item], where, typed)
        if (ann, item) in seen:
            raise MethodError(f"{where}: annotator {ann!r} answered item {item!r} twice")
        seen.add((ann, item))
        clean.append((ann, item, choice, where))
    failures: dict[str, int] = defaultdict(int)
    for ann, item, choice, _ in clean:
        k = items[item]
        if k["attention"] and choice != k["intruder"]:
            failures[ann] += 1
    excluded = sorted(a for a, f in failures.items() if f > max_attention_failures)
    used = [(a, i, c) for a, i, c, _ in clean if a not in excluded and not items[i]["attention"]]
    return CleanResponses(items, clean, used, dict(failures), excluded)


def score(
    key: Sequence[dict[str, Any]] | str | os.PathLike,
    responses: Iterable[dict[str, Any]] | str | os.PathLike,
    max_attention_failures: int = 0,
    bootstrap: int = 2000,
    seed: int = 0,
    permutations: int = PERMUTATIONS,
) -> IntrusionScores:
    """Model precision, topic log odds and their per-model aggregates from a key and responses;
    agreement between annotators, each model against chance and every two models compared (exact
    or permutation tests with `permutations` random splits where enumeration is too long)."""
    got = clean_responses(key, responses, max_attention_failures)
    items, used, excluded = got.items, got.used, got.excluded
    # per model, resamples x (topics or documents) index and value arrays: at most the key's items
    bootstrap = check_int("bootstrap", bootstrap, 0)
    permutations = check_int("permutations", permutations, 1, MAX_PERMUTATIONS)
    check_bootstrap(bootstrap, float(len(items)), 2 * 8.0 * len(items) * bootstrap)
    if not used:
        raise MethodError(f"no response to score: {_why_none(items, got.answers, excluded)}")
    mp: dict[str, dict[int, list[int]]] = defaultdict(lambda: defaultdict(list))
    tlo: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    by_item: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    words: dict[str, dict[int, list[str]]] = defaultdict(dict)  # a word task's options less its intruder
    for k in items.values():
        if k["kind"] == "word" and not k["attention"]:
            shown = [w for j, w in enumerate(k["options"]) if j != k["intruder"]]
            words[k["model"]].setdefault(k["topic"], shown)
    for _, item, choice in used:
        k = items[item]
        by_item[k["kind"]][item].append(choice)
        if k["kind"] == "word":
            mp[k["model"]][k["topic"]].append(int(choice == k["intruder"]))
        else:
            lt = k["option_log_theta"]
            # 0 when they agree (eq. 2), or when both proportions are equal (both 0: no nan)
            same = choice == k["intruder"] or lt[k["intruder"]] == lt[choice]  # both 0: -inf - -inf
            tlo[k["model"]][k["document"]].append(0.0 if same else lt[k["intruder"]] - lt[choice])
    rng = np.random.default_rng(seed)
    model_precision = {m: {t: float(np.mean(v)) for t, v in d.items()} for m, d in mp.items()}
    log_odds = {m: {t: float(np.mean(v)) for t, v in d.items()} for m, d in tlo.items()}
    summary: dict[str, dict[str, Any]] = {}
    for m in sorted(set(model_precision) | set(log_odds)):
        s: dict[str, Any] = {}
        if m in model_precision:
            v = np.array(list(model_precision[m].values()))
            s["model_precision"] = float(v.mean())
            s["model_precision_ci"] = bootstrap_ci(v, bootstrap, rng)
            s["topics"] = int(v.size)
        if m in log_odds:
            v = np.array(list(log_odds[m].values()))
            s["topic_log_odds"] = float(v.mean())
            s["topic_log_odds_ci"] = bootstrap_ci(v, bootstrap, rng)
            s["documents"] = int(v.size)
        summary[m] = s
    agreement = {kind: agreement_of(ch, max(len(items[i]["options"]) for i in ch))
                 for kind, ch in by_item.items()}
    _chance_tests(summary, used, items)
    comparisons = compare_models(model_precision, log_odds, permutations, seed)
    choices = {item: ch for kind in by_item.values() for item, ch in kind.items()}
    return IntrusionScores(model_precision, log_odds, summary, excluded, agreement, len(used), choices,
                           comparisons, {m: words[m] for m in model_precision})


CHANCE_KEYS = {"word": "model_precision_vs_chance", "topic": "topic_intrusion_vs_chance"}


def _chance_tests(summary: dict[str, dict[str, Any]], used: list[tuple[str, str, int]],
                  items: dict[str, dict[str, Any]]) -> None:
    """Per model and kind, the exact test of its answers against guessing (`exact.chance_test`)."""
    answers: dict[tuple[str, str], list[tuple[int, int]]] = defaultdict(list)
    by_item: dict[tuple[str, str], dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    for _, item, choice in used:
        k = items[item]
        answers[k["model"], k["kind"]].append((int(choice == k["intruder"]), len(k["options"])))
        by_item[k["model"], k["kind"]][item].append(int(choice == k["intruder"]))
    for (model, kind), pairs in answers.items():
        summary[model][CHANCE_KEYS[kind]] = chance_test(*zip(*pairs, strict=True))
        if kind == "word":  # what `plan_intrusion` needs from a pilot study
            icc = intra_item_correlation(list(by_item[model, kind].values()))
            summary[model]["intra_item_correlation"] = icc


def _why_not_compared(values: dict[str, dict[int, float]], a: str, b: str, unit: str) -> str | None:
    """Why models a and b cannot be compared on these per-item values, or None."""
    lacking = [m for m in (a, b) if not values.get(m)]
    if lacking:
        return (f"n/a, neither model has {unit}-intrusion items" if len(lacking) == 2
                else f"n/a, {lacking[0]} has no {unit}-intrusion items")
    for m in (a, b):  # a key's log proportion of -inf (a proportion of 0): no mean to compare
        if not np.isfinite(list(values[m].values())).all():
            return f"n/a, {m}'s topic log odds include -inf (a proportion of 0 in the key)"
    return None


def compare_models(model_precision: dict[str, dict[int, float]], log_odds: dict[str, dict[int, float]],
                   permutations: int = PERMUTATIONS, seed: int = 0) -> list[dict[str, Any]]:
    """Every two models: permutation tests of their mean model precision (topics the unit) and mean
    topic log odds (documents the unit), or why a test is n/a (`exact.permutation_test`)."""
    names = sorted(set(model_precision) | set(log_odds))
    out = []
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            row: dict[str, Any] = {"models": [a, b]}
            for key, values, unit in (("model_precision", model_precision, "word"),
                                      ("topic_log_odds", log_odds, "topic")):
                why = _why_not_compared(values, a, b, unit)
                if why:
                    row[key] = {"note": why}
                else:
                    row[key] = permutation_test(list(values[a].values()), list(values[b].values()),
                                                permutations=permutations, seed=seed)
            out.append(row)
    return out


def _p(p: float) -> str:
    return f"p = {p:.2g}"


def _number(value: Any, where: str) -> float:
    if (number := finite_float(value)) is None:
        raise InputFileError(f"field {where}: expected a finite number, got {shorten(repr(value), 40)}")
    return number


def _record(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InputFileError(f"field {where}: expected an object")
    return value


def _chance_line(model: str, s: dict[str, Any]) -> str:
    parts = []
    for kind, key in CHANCE_KEYS.items():
        if key in s:
            t = _record(s[key], f"summary.{model}.{key}")
            n = {k: _number(t.get(k), f"summary.{model}.{key}.{k}")
                 for k in ("right", "answers", "chance", "p_value")}
            parts.append(f"{kind} items {n['right']:.0f}/{n['answers']:.0f} right "
                         f"(chance {n['chance']:.3f}), {_p(n['p_value'])}")
    if s.get("intra_item_correlation") is not None:
        icc = _number(s["intra_item_correlation"], f"summary.{model}.intra_item_correlation")
        parts.append(f"intra-item correlation {icc:.3f} (intrusion plan --icc)")
    return f"{model} against guessing (exact, one-sided): {'; '.join(parts)}"


def _agreement_line(kind: str, a: Any) -> str:
    a = _record(a, f"agreement.{kind}")
    if a.get("note"):
        return f"agreement ({kind} intrusion): {a['note']}"
    where = f"agreement.{kind}"
    items, answers = (_number(a.get(k), f"{where}.{k}") for k in ("items", "answers"))
    kappa, alpha = (_number(a.get(k), f"{where}.{k}") for k in ("fleiss_kappa", "krippendorff_alpha"))
    return (f"agreement ({kind} intrusion, {items:.0f} items answered twice or more, {answers:.0f} answers): "
            f"Fleiss' kappa {kappa:.3f}, Krippendorff's alpha {alpha:.3f}")


def _comparison_line(i: int, c: Any) -> str:
    c = _record(c, f"comparisons[{i}]")
    models = c.get("models")
    if not (isinstance(models, list) and len(models) == 2 and all(isinstance(m, str) for m in models)):
        raise InputFileError(f"field comparisons[{i}].models: expected two model names")
    parts = []
    for measure, label in (("model_precision", "model precision"), ("topic_log_odds", "topic log odds")):
        t = _record(c.get(measure), f"comparisons[{i}].{measure}")
        if t.get("note"):
            parts.append(f"{label} {t['note']}")
            continue
        where = f"comparisons[{i}].{measure}"
        diff, p = (_number(t.get(k), f"{where}.{k}") for k in ("difference", "p_value"))
        try:
            how = method_text(t)
        except (KeyError, TypeError, ValueError):
            raise InputFileError(f"field {where}: does not say how its p-value was computed") from None
        parts.append(f"{label} {diff:+.3f}, {_p(p)} ({how})")
    return f"{models[0]} - {models[1]} (permutation test over items, two-sided): {'; '.join(parts)}"


def statistics_lines(doc: dict[str, Any]) -> list[str]:
    """What `intrusion score` prints and the report shows after its table, from the score's JSON
    (`IntrusionScores.to_dict`): each model against guessing, agreement per kind of item, every two
    models compared. A field of the wrong shape (a forged file) is a one-line InputFileError; a
    file written before these statistics existed (agreement a number) gives no line for them."""
    lines = []
    for model, s in _record(doc.get("summary", {}), "summary").items():
        if any(key in _record(s, f"summary.{model}") for key in CHANCE_KEYS.values()):
            lines.append(_chance_line(model, s))
    for kind, a in _record(doc.get("agreement", {}), "agreement").items():
        if not isinstance(a, int | float | type(None)):  # older files hold Fleiss' kappa alone
            lines.append(_agreement_line(kind, a))
    comparisons = doc.get("comparisons", [])
    if not isinstance(comparisons, list):
        raise InputFileError("field comparisons: expected a list")
    return lines + [_comparison_line(i, c) for i, c in enumerate(comparisons)]
