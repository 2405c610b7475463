"""Each metric's measured agreement with people, beside it in `evaluate` and the report
(`EvaluateOptions.human`), and which interpretability metric the recommendation trusts.

Two sources, said apart in every line:

- a bundled study (`"hoyle2021"`, `"proxann2025:bills"`): its people judged OTHER topics than
  the user's, so what carries over is a property of the metric (and of how it was computed): the
  figures `experiments/human_agreement.py` measured and wrote to the packaged
  `data/human_agreement.json` (`datasets.human_agreement_figures`), each with the study, the
  people's judgment, the topics, the interval, the ceiling and how the measure was computed (a
  figure computed in another convention than tealeaves' default, gensim's, says so);
- the user's own judgments of these models' topics (a study file, or the annotation app's export
  with its key): the agreement is measured on those topics (`metaeval.agreement`: two-stage
  bootstrap intervals, the ceiling, paired comparisons). A study topic is "MODEL/K" (K from 0):
  MODEL is matched to an evaluated model by name, else by its topics' words (said in a note).

`measured` takes any per-topic score (name -> model -> one value per topic), so a judge's column
(an LLM's answers, issue 35) gets its agreement by the same path; `trusted` names the metric the
recommendation trusts and why: the highest measured agreement, with the paired comparison against
the runner-up, or that none was measured.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..coherence import DEFAULT_CONVENTION
from ..errors import MethodError, shown
from ..metaeval.agreement import MIN_TOPICS
from ..output import numbers

# evaluate's per-topic columns (row key -> label); the model-level ones cannot be compared per topic
LABELS = {"coherence.umass": "UMass", "coherence.uci": "UCI", "coherence.npmi": "NPMI",
          "coherence.c_v": "C_V", "exclusivity": "exclusivity", "auto_model_precision": "automated intrusion",
          "judge_model_precision": "the LLM judge's intrusion (judge MP)",
          "judge_rating": "the LLM judge's rating (judge rating)"}
MODEL_LEVEL = {"diversity": "diversity", "irbo": "IRBO", "we_irbo": "WE-IRBO"}
NOT_MEASURED = "not measured against people"
PER_MODEL_ONLY = f"{NOT_MEASURED}: evaluate keeps its figure per model, not per topic"
MODEL_LEVEL_WHY = ("a number per model, not per topic: its agreement with people's per-topic judgments is "
                   "undefined")
STATISTIC_NAMES = {"spearman": "Spearman", "pearson": "Pearson", "kendall": "Kendall tau"}
PEOPLE = {"rating": "people's mean ratings", "word-intrusion": "people's word-intrusion accuracy",
          "topic-intrusion": "people's topic-intrusion accuracy",
          "fit": "the topic quality people's document fits give (Kendall tau with theta)",
          "rank": "the topic quality people's rankings give (Kendall tau with theta)"}
DEPTH = 50  # top words of a model's topic searched for the words a study showed


def label(key: str) -> str:
    if key.startswith("judge:"):
        return key.split(":", 1)[1]
    return LABELS.get(key, MODEL_LEVEL.get(key, key))


def source_of(human: Any, key: str | os.PathLike | None = None) -> tuple[str, Any]:
    """("carried", bundled name) or ("study", Study) for `EvaluateOptions.human` (with `key`: the
    annotation app's export and its key, `metaeval.appstudy.app_study`)."""
    from ..datasets import load_judgments
    from ..errors import JUDGMENT_STUDIES
    from ..judgments import Study

    if isinstance(human, Study):
        return "study", human
    if key is not None:
        from ..metaeval.appstudy import app_study

        return "study", app_study(human, key)
    name = os.fspath(human)
    name = "proxann2025:bills" if name == "proxann2025" else name
    if name in JUDGMENT_STUDIES and not os.path.exists(name):
        return "carried", name
    return "study", load_judgments(name)


# -- carried over from the bundled studies ----------------------------------------------------------

def _interval(r: Mapping[str, Any]) -> str:
    est = numbers.fixed(r.get("estimate"), 2)
    if r.get("low") is None or r.get("high") is None:
        return est
    return f"{est} [{numbers.fixed(r['low'], 2)}, {numbers.fixed(r['high'], 2)}]"


def carried(name: str, keys: Sequence[str]) -> dict[str, Any]:
    """The figures measured on bundled study `name` for each of evaluate's columns `keys`: the
    study's headline (its main judgment and statistic, all topics pooled) with every other
    measurement kept beside it, or why there is none."""
    from ..datasets import human_agreement_figures

    data = human_agreement_figures()
    study = data["studies"][name]
    judgment, statistic = study["headline"]
    metrics: dict[str, Any] = {}
    for key in keys:
        measure = key.split(".", 1)[1] if key.startswith("coherence.") else None
        rows = [m for m in data["measurements"] if m["study"] == name and m["metric"] == measure
                and m["group"] == "all"]
        head = [m for m in rows if m["judgment"] == judgment and m["statistic"] == statistic]
        if key in MODEL_LEVEL:
            metrics[key] = {"label": label(key), "estimate": None, "why": MODEL_LEVEL_WHY}
            continue
        if not head:
            metrics[key] = {"label": label(key), "estimate": None,
                            "why": f"{NOT_MEASURED} in {study['name']}"}
            continue
        # several measurements of one measure (the authors' and tealeaves'): the default convention's
        # first, then tealeaves' exact counts, then the authors'
        head.sort(key=lambda m: (m["convention"] != DEFAULT_CONVENTION, m["convention"] != "tealeaves"))
        h = head[0]
        same = h["convention"] == DEFAULT_CONVENTION
        text = (f"{label(key)}: {STATISTIC_NAMES[statistic]} {_interval(h)} with {h['people']} on "
                f"{study['name']}'s {h['topics']} topics (ceiling {numbers.fixed(h['ceiling'], 2)}); "
                f"measured with {h['how']}" + ("" if same else ", not tealeaves' default convention"))
        metrics[key] = {"label": label(key), "estimate": h["estimate"], "low": h["low"], "high": h["high"],
                        "topics": h["topics"], "ceiling": h["ceiling"], "statistic": statistic,
                        "people": h["people"], "how": h["how"], "same_convention": same, "text": text,
                        "where": f"{study['name']}, {h['topics']} other topics than yours",
                        "other": [m for m in rows if m is not h]}
    measures = {k.split(".", 1)[1]: k for k in keys if k.startswith("coherence.")}
    comparisons = [{**c, "a": measures[c["a"]], "b": measures[c["b"]]} for c in data["comparisons"]
                   if c["study"] == name and c["judgment"] == judgment and c["statistic"] == statistic
                   and c["group"] == "all" and c["a"] in measures and c["b"] in measures]
    return {"kind": "carried", "source": name, "study": study["name"], "judgment": judgment,
            "statistic": statistic, "metrics": metrics, "comparisons": comparisons,
            "notes": [f"agreement with people carried over from {study['name']} (tealeaves' bundled "
                      f"judgments, other topics than yours): {data['generated_by']} measured it"]}


# -- measured on the user's own judgments -------------------------------------------------------------

def _parse(topic_id: str, model: str) -> tuple[str, int]:
    """(model, topic index) of a study topic "MODEL/K"."""
    head, _, k = topic_id.rpartition("/")
    if not head or not k.isdigit():
        raise MethodError(f"study topic {shown(topic_id)} is not MODEL/K (K the topic's index from 0): "
                          "evaluate cannot tell which model's topic it is")
    return model or head, int(k)


def match_models(topics: Any, words: Mapping[str, Sequence[Sequence[str]]]
                 ) -> tuple[dict[str, str], list[str]]:
    """Study model -> evaluated model: by name; a study model no evaluated model is named after goes
    to the one model whose topics hold the words the study showed (each study topic's words among
    the model topic's top DEPTH), when exactly one does. A named model whose topics do not hold the
    words shown, or a study model nothing matches, is a one-line error."""
    per: dict[str, list[tuple[int, tuple[str, ...]]]] = {}
    for i, tid in enumerate(topics.ids):
        m, k = _parse(tid, topics.model[i])
        per.setdefault(m, []).append((k, tuple(topics.words[i]) if topics.words else ()))

    def misfit(name: str, k: int, w: tuple[str, ...]) -> bool:
        have = words[name]
        return k >= len(have) or not set(w) <= set(have[k][:DEPTH])

    out, notes = {}, []
    for m, shown_topics in per.items():
        if m in words:
            bad = [(k, w) for k, w in shown_topics if misfit(m, k, w)]
            if bad:
                k, w = bad[0]
                what = (f"model {m!r} has {len(words[m])} topics" if k >= len(words[m]) else
                        f"the words shown ({' '.join(w[:6])} ...) are not among the top {DEPTH} of model "
                        f"{m!r}'s topic {k}")
                raise MethodError(f"study topic {m}/{k}: {what}: is it the model the study judged?")
            out[m] = m
            continue
        fits = [n for n in words if all(w for _, w in shown_topics)
                and not any(misfit(n, k, w) for k, w in shown_topics)]
        if len(fits) != 1:
            why = "none" if not fits else f"{len(fits)} ({', '.join(fits[:3])})"
            raise MethodError(f"the study's model {m!r} is not among the evaluated models "
                              f"({', '.join(words)}) and {why} of them holds its topics' words: name the "
                              "model as the study does")
        out[m] = fits[0]
        notes.append(f"the study's model {m!r} is the evaluated model {fits[0]!r} (its topics hold the words "
                     "shown)")
    return out, notes


def align(scores: Mapping[str, Sequence[float] | None], topics: Any,
          matched: Mapping[str, str]) -> np.ndarray:
    """One value per study topic from per-model per-topic `scores` (NaN where a model has none)."""
    out = np.full(len(topics), np.nan)
    for i, tid in enumerate(topics.ids):
        m, k = _parse(tid, topics.model[i])
        values = scores.get(matched[m])
        if values is not None and k < len(values) and values[k] is not None:
            out[i] = float(values[k])
    return out


def measured(study: Any, scores: Mapping[str, Mapping[str, Sequence[float] | None]],
             words: Mapping[str, Sequence[Sequence[str]]], *, task: str | None = None,
             bootstrap: int = 2000, seed: int = 0, statistic: str = "spearman") -> dict[str, Any]:
    """Agreement of each per-topic score (key -> model -> one value per topic) with the people of
    `study` on the topics they judged (see the module notes); `words`: each evaluated model's top
    words (DEPTH of them) to match and check the study's topics."""
    from ..metaeval import agreement, people_side

    matched, notes = match_models(study.topics, words)
    people, quality = people_side(study, task)
    arrays = {k: align(v, study.topics, matched) for k, v in scores.items()}
    metrics: dict[str, Any] = {}
    usable = {k: v for k, v in arrays.items() if np.isfinite(v).sum() >= 3}
    for k, v in arrays.items():
        if k not in usable:
            metrics[k] = {"label": label(k), "estimate": None,
                          "why": f"{int(np.isfinite(v).sum())} of the study's topics have a value: too few"}
    # scores with values on the same topics are measured together (paired comparisons need the same
    # topics); a score missing some topics does not shrink the others' to its own
    sets: dict[bytes, dict[str, np.ndarray]] = {}
    for k, v in usable.items():
        sets.setdefault(np.isfinite(v).tobytes(), {})[k] = v
    what = PEOPLE.get(people.task, f"people's {people.task}") if quality != "assigned" else people.task
    comparisons: list[dict[str, Any]] = []
    ceiling = None
    for group in sets.values():
        res = agreement(group, people, quality=quality, statistics=(statistic,), bootstrap=bootstrap,
                        seed=seed)
        ceil = next((c for c in res.ceiling if c["group"] == "all"), None)
        ceiling = ceiling or ceil
        notes += [n for n in res.notes if n not in notes]
        comparisons += [c for c in res.comparisons if c["group"] == "all"]
        for k in group:
            r = res.get(k, "all", statistic)
            top = ceil["ceiling"] if ceil else None
            text = (f"{label(k)}: {STATISTIC_NAMES[statistic]} {_interval(r)} with {what} in {study.name} on "
                    f"{r['topics']} of these models' topics"
                    + ("" if top is None else f" (ceiling {numbers.fixed(top, 2)})")
                    + (f"; {r['why']}" if r.get("why") else ""))
            metrics[k] = {"label": label(k), "estimate": r["estimate"], "low": r["low"], "high": r["high"],
                          "topics": r["topics"], "ceiling": top, "statistic": statistic, "people": what,
                          "text": text, "where": f"{study.name}, {r['topics']} of these models' topics",
                          **({"why": r["why"]} if r.get("why") else {})}
    return {"kind": "measured", "source": study.name, "study": study.name, "judgment": people.task,
            "quality": quality, "statistic": statistic, "metrics": metrics, "comparisons": comparisons,
            "ceiling": ceiling, "notes": notes + list(study.notes), "models": matched}


# -- what the recommendation trusts ---------------------------------------------------------------------

def trusted(human: Mapping[str, Any]) -> dict[str, Any] | None:
    """The metric with the highest measured agreement and why (None when none was measured): its
    line, the paired comparison with the runner-up when there is one, and whether its interval
    excludes no agreement."""
    metrics = human.get("metrics") or {}
    ranked = sorted((k for k, m in metrics.items() if m.get("estimate") is not None
                     and m.get("low") is not None), key=lambda k: -metrics[k]["estimate"])
    if not ranked:
        few = [m for m in metrics.values() if m.get("estimate") is not None]
        if few:  # estimates without an interval: too few topics to trust any of them
            return {"metric": None, "label": None,
                    "why": f"measured on {few[0]['topics']} topics, too few for an interval (at least "
                           f"{MIN_TOPICS}): no metric is trusted on them"}
        return None
    best = ranked[0]
    m = metrics[best]
    why = [f"the highest measured agreement with people among the metrics shown, "
           f"{STATISTIC_NAMES.get(m['statistic'], m['statistic'])} {_interval(m)} ({m['where']})"]
    if len(ranked) > 1:
        other = ranked[1]
        c = next((c for c in human.get("comparisons") or [] if {c["a"], c["b"]} == {best, other}), None)
        if c and c.get("low") is not None:
            sign = 1 if c["a"] == best else -1
            lo, hi = sorted((sign * c["low"], sign * c["high"]))
            d = f"{numbers.fixed(sign * c['difference'], 2)} [{numbers.fixed(lo, 2)}, {numbers.fixed(hi, 2)}]"
            why.append(f"{'better than' if lo > 0 else 'not separated from'} {label(other)} by it "
                       f"(paired difference {d})")
        else:
            why.append(f"next: {metrics[other]['text']}")
    if m.get("low") is not None and m["low"] <= 0:
        why.append("its interval includes no agreement at all")
    return {"metric": best, "label": m["label"], "why": "; ".join(why)}


def lines(human: Mapping[str, Any]) -> list[str]:
    """What the terminal prints under the table: each metric's agreement, then the notes."""
    head = ("agreement with people, carried over from a bundled study (other topics than yours):"
            if human["kind"] == "carried" else
            f"agreement with people, measured on your judgments of these models' topics ({human['study']}):")
    out = [head]
    for m in human["metrics"].values():
        out.append(f"  {m['text']}" if m.get("estimate") is not None else f"  {m['label']}: {m['why']}")
    t = human.get("trusted")
    out.append(f"  trusted for interpretability: {t['label']} ({t['why']})" if t and t.get("metric") else
               f"  no interpretability metric is trusted: {t['why']}" if t else
               "  no interpretability metric's agreement with people was measured")
    return out + [f"  note: {n}" for n in human.get("notes", [])]


HEADINGS = {"diversity": "diversity", "exclusivity": "exclusivity", "auto MP": "auto_model_precision",
            "IRBO": "irbo", "WE-IRBO": "we_irbo", "judge MP": "judge_model_precision",
            "judge rating": "judge_rating"}  # the terminal table's headings -> column keys


def agreement_row(human: Mapping[str, Any], head: Sequence[str], measures: Sequence[str]) -> list[str]:
    """The terminal table's last row: under each column its headline agreement with people ("?":
    not measured; "n/a": a number per model; "" where the column is not an interpretability metric)."""
    metrics = human.get("metrics") or {}
    keys = {m: f"coherence.{m}" for m in measures} | HEADINGS

    def one(h: str) -> str:
        key = keys.get(h)
        if key is None:
            return ""
        m = metrics.get(key)
        if key in MODEL_LEVEL:
            return "n/a"
        return "?" if not m or m.get("estimate") is None else numbers.fixed(m["estimate"], 2)

    stat = STATISTIC_NAMES.get(human.get("statistic", ""), "")
    return [f"people ({stat})", *[one(h) for h in head[1:]]]


def people(human: Any, models: Sequence[Any], per_topic: Mapping[str, Mapping[str, Any]],
           extra: Mapping[str, Mapping[str, Sequence[float] | None]] | None = None, *,
           key: str | os.PathLike | None = None, columns: Sequence[str] = (), bootstrap: int = 2000,
           seed: int = 0) -> dict[str, Any]:
    """`evaluate`'s agreement block: for `human` (a bundled study's name, a study file or a
    `Study`), the carried or measured agreement of every per-topic column of the evaluation
    (`per_topic`: model -> {"coherence": {measure: per-topic list}, "judge": {task: per-topic
    list}}, the LLM judge's columns as `evaluate.judged` keeps them; exclusivity per topic from the
    models) and of any `extra` per-topic score, and what the recommendation trusts.
    `columns`: the table's other columns of interpretability (model-level ones, automated
    intrusion), each listed with why it has no agreement."""
    from ..coherence import exclusivity
    from ..topics import why_not
    from .judged import COLUMNS

    kind, src = source_of(human, key)
    measures = list(dict.fromkeys(ms for v in per_topic.values() for ms in (v.get("coherence") or {})))
    judged: dict[str, dict[str, Any]] = {}  # an LLM judge's columns (evaluate.judged): per topic too
    for name, v in per_topic.items():
        for task, values in (v.get("judge") or {}).items():
            judged.setdefault(COLUMNS[task][0], {})[name] = values
    extra = {**judged, **(extra or {})}
    keys = [f"coherence.{ms}" for ms in measures] + ["exclusivity", *extra]
    if kind == "carried":
        out = carried(src, keys + list(columns))
    else:
        from ..coherence import topic_words

        scores: dict[str, dict[str, Any]] = {f"coherence.{ms}": {} for ms in measures}
        scores["exclusivity"] = {}
        words = {}
        for m in models:
            try:
                words[m.name] = topic_words(m, DEPTH)
            except MethodError:
                continue
            for ms in measures:
                scores[f"coherence.{ms}"][m.name] = (per_topic.get(m.name, {}).get("coherence") or {}).get(ms)
            if why_not("exclusivity", m) is None:
                scores["exclusivity"][m.name] = exclusivity(m).tolist()
        scores.update({k: dict(v) for k, v in extra.items()})
        out = measured(src, scores, words, bootstrap=bootstrap, seed=seed)
        for k in columns:
            out["metrics"][k] = {"label": label(k), "estimate": None,
                                 "why": MODEL_LEVEL_WHY if k in MODEL_LEVEL else PER_MODEL_ONLY}
    out["trusted"] = trusted(out)
    return out
