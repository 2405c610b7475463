"""An automated judge's answers as `Judgments`: the one path every judge's answers take, whether read
from files (ProxAnn's LLM runs, `proxann.read_llm_runs`) or answered now by a language model on a
server (`tealeaves.judge.qualify`), so the statistics read both the same way.

A judge's runs (an LLM's seeds) are its annotators. `runs` maps a run's name to its answers by
topic index: a number (an answer about the whole topic), a list of numbers (one per judged document,
item 0..n-1 in the study's order; None for a document left unanswered) or a string (a label). A
topic a run did not answer is absent (or None): nothing is invented for it. `choices` (the same
shape, whole-topic answers only) keeps the option each run picked, on the people's coding (a
rating, an intrusion option's code), beside a value that may be an expectation.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..errors import MethodError
from . import WHOLE_TOPIC, Documents, Judgments, Scale, TopicSet


def judge_answers(task: str, scale: Scale, topics: TopicSet, runs: Mapping[str, Mapping[int, Any]],
                  documents: Documents | None = None, source: str = "",
                  choices: Mapping[str, Mapping[int, int]] | None = None) -> Judgments:
    """The answers of one task of an automated judge (see the module notes), checked
    (`Judgments.check`: on the scale, a ranking a permutation, nothing answered twice)."""
    names = tuple(runs)
    topic: list[int] = []
    annotator: list[int] = []
    item: list[int] = []
    value: list[float] = []
    text: list[str] = []
    picked: list[int] = []
    for a, name in enumerate(names):
        for t, answer in runs[name].items():
            if not isinstance(t, int | np.integer) or not 0 <= int(t) < len(topics):
                raise MethodError(f"{source or task}: run {name!r}: topic {t!r} is not among the "
                                  f"{len(topics)} topics")
            if answer is None:
                continue
            if isinstance(answer, str):
                cells: Sequence[tuple[int, Any]] = [(WHOLE_TOPIC, answer)]
            elif isinstance(answer, Sequence | np.ndarray):
                cells = [(d, v) for d, v in enumerate(answer) if v is not None]
            else:
                cells = [(WHOLE_TOPIC, answer)]
            for d, v in cells:
                if scale.kind == "text":
                    if not isinstance(v, str):
                        raise MethodError(f"{source or task}: run {name!r}, topic {t}: a label must be text")
                    text.append(v)
                    value.append(math.nan)
                else:
                    x = float(v)
                    if math.isnan(x):
                        continue
                    value.append(x)
                topic.append(int(t))
                annotator.append(a)
                item.append(d)
                if choices is not None:
                    c = (choices.get(name) or {}).get(t)
                    if d != WHOLE_TOPIC or c is None:
                        raise MethodError(f"{source or task}: run {name!r}, topic {t}: a choice goes with "
                                          "each answer about a whole topic")
                    picked.append(int(c))
    return Judgments(task, scale, topics, names, np.asarray(topic, dtype=np.int64),
                     np.asarray(annotator, dtype=np.int64), np.asarray(item, dtype=np.int64),
                     np.asarray(value, dtype=np.float64), tuple(text) if scale.kind == "text" else None,
                     None, None if choices is None else np.asarray(picked, dtype=np.int64), documents,
                     source).check()


__all__ = ["judge_answers"]
