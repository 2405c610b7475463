"""Answers read strictly, and the distribution over answers.

A choice or a rating is a number, alone: surrounding white space and one final full stop are
allowed, nothing else ("2", " 2.", not "2 because", "Answer: 2", "two"). A ranking is a
permutation of 1..n separated by commas or white space. A label is one line of at most
LABEL_WORDS words (surrounding white space, one pair of enclosing quotes and a final full stop are
dropped). Anything else is malformed: counted and reported, never replaced by a default.

With log-probabilities, the distribution over the n answers is read from the first generated
token's top alternatives: every alternative whose text, stripped of white space, is one of the
answers' numbers adds its probability to that answer (so "2" and " 2" both count for 2); the
distribution is that, normalised, and `mass` is the probability all answers had before
normalisation (how much of the model's next token went to a well-formed answer). Without them,
the distribution is the share of well-formed sampled answers giving each number.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

LABEL_WORDS = 12
LABEL_CHARS = 200

_NUMBER = re.compile(r"\s*([0-9]{1,2})\s*\.?\s*")
_RANKING = re.compile(r"\s*[0-9]{1,2}(\s*[,\s]\s*[0-9]{1,2})*\s*\.?\s*")


def choice(text: str, n: int) -> int | None:
    """The 0-based answer a reply gives among n numbered options (1..n), or None if malformed."""
    m = _NUMBER.fullmatch(text)
    if m is None:
        return None
    v = int(m.group(1))
    return v - 1 if 1 <= v <= n else None


def ranking(text: str, n: int) -> list[int] | None:
    """The 0-based order a reply gives (best first) of n numbered items, or None unless it is a
    permutation of 1..n."""
    if _RANKING.fullmatch(text) is None:
        return None
    values = [int(v) for v in re.findall(r"[0-9]+", text)]
    if sorted(values) != list(range(1, n + 1)):
        return None
    return [v - 1 for v in values]


def label(text: str) -> str | None:
    """A category label: one line of 1..LABEL_WORDS words, or None."""
    t = text.strip()
    if len(t) >= 2 and t[0] == t[-1] and t[0] in "\"'":
        t = t[1:-1].strip()
    if t.endswith("."):
        t = t[:-1].rstrip()
    if not t or "\n" in t or "\r" in t or len(t) > LABEL_CHARS or len(t.split()) > LABEL_WORDS:
        return None
    return t


def reply_text(response: dict[str, Any], api: str) -> str | None:
    """The text of the first choice of a chat or completions answer, or None if it has none."""
    try:
        first = response["choices"][0]
        text = first["message"]["content"] if api == "chat" else first["text"]
    except (KeyError, IndexError, TypeError):
        return None
    return text if isinstance(text, str) else None


def first_token_alternatives(response: dict[str, Any], api: str) -> list[tuple[str, float]] | None:
    """The first generated token's top alternatives as (token text, log-probability), or None
    when the answer carries no log-probabilities."""
    try:
        lp = response["choices"][0].get("logprobs")
        if not lp:
            return None
        if api == "chat":
            first = lp["content"][0]
            alts = [(a["token"], float(a["logprob"])) for a in first.get("top_logprobs") or []]
            if not alts:
                alts = [(first["token"], float(first["logprob"]))]
        else:
            top = lp.get("top_logprobs")
            if top and top[0]:
                alts = [(str(t), float(v)) for t, v in top[0].items()]
            else:
                alts = [(lp["tokens"][0], float(lp["token_logprobs"][0]))]
    except (KeyError, IndexError, TypeError, ValueError, AttributeError):
        return None
    return [(t, v) for t, v in alts if isinstance(t, str) and not math.isnan(v)]


def distribution_from_logprobs(alternatives: Sequence[tuple[str, float]],
                               n: int) -> tuple[list[float], float] | None:
    """(distribution over the n answers numbered 1..n, the probability they had), or None when no
    alternative is an answer."""
    p = [0.0] * n
    for token, lp in alternatives:
        t = token.strip()
        if t.isascii() and t.isdigit() and t == str(int(t)) and 1 <= int(t) <= n:
            p[int(t) - 1] += math.exp(lp)
    mass = sum(p)
    if mass <= 0:
        return None
    return [x / mass for x in p], mass


def distribution_from_choices(choices: Sequence[int | None], n: int) -> list[float] | None:
    """The share of well-formed answers (0-based) giving each of n answers; None if there are none."""
    good = [c for c in choices if c is not None]
    if not good:
        return None
    return [good.count(i) / len(good) for i in range(n)]


def expected(dist: Sequence[float], scale: Sequence[float]) -> float:
    """The mean of `scale` under `dist` (an expected rating)."""
    return float(sum(p * s for p, s in zip(dist, scale, strict=True)))


__all__ = ["choice", "ranking", "label", "reply_text", "first_token_alternatives",
           "distribution_from_logprobs", "distribution_from_choices", "expected", "LABEL_WORDS"]
