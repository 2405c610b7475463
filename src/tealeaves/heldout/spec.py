"""What an estimator declares: its name, parameters (named as in table 1 of Wallach et al. 2009)
and cost (`MethodSpec`, `Param`); `register` adds it to the registry (`registry.py` looks names up).

Every estimator is a function `fn(doc, n_obs, rng, state, **params) -> float` returning one
run's estimate of log P(w2 | w1) for a prepared document whose first `n_obs` positions are
observed (n_obs = 0: log P(w)). `rng` is a numpy Generator and `state` the kernels' generator
state, both private to the document. A method with `variance=True` returns (that estimate, V):
V estimates the relative variance Var(P-hat) / P^2 from the same run (NaN when it has none);
`MethodSpec.call` gives both for every method.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import MethodError
from ..sampling import PreparedDoc, prepare_doc
from ..util.limits import check_bool, check_float, check_int


@dataclass(frozen=True)
class Param:
    default: Any
    kind: type
    help: str
    choices: tuple[Any, ...] | None = None
    minimum: float | None = 1
    tasks: tuple[str, ...] = ("heldout", "completion")
    # (other parameter, its values): the parameter exists only with one of these values; with any
    # other it is left out of the resolved parameters, and giving it is an error
    only_for: tuple[str, tuple[Any, ...]] | None = None
    # values above it give the same estimator: stored as it (one setting, one label)
    saturates_at: float | None = None

    def check(self, method: str, name: str, value: Any) -> Any:
        """`value` checked against this declaration: the one check of every estimator parameter,
        from the Python API and the command line alike. Numbers go through `limits.check_int` /
        `check_float` (a bool is not a number, nor is text: `particles=True` or `"5"` is refused),
        text must be one of `choices`."""
        what = f"{method}: parameter {name}"
        if self.kind is bool:
            return check_bool(what, value)
        allowed = f"one of {', '.join(map(str, self.choices))}" if self.choices is not None else ""
        if self.kind is int:
            v: Any = check_int(what, value, None if self.minimum is None else math.ceil(self.minimum))
        elif self.kind is float:
            v = check_float(what, value, self.minimum)
        elif not isinstance(value, str):
            raise MethodError(f"{what} must be {allowed or 'text'}, got {value!r}")
        else:
            v = value
        if self.choices is not None and v not in self.choices:
            raise MethodError(f"{what} must be {allowed}, got {value!r}")
        if self.saturates_at is not None and v > self.saturates_at:
            v = self.kind(self.saturates_at)
        return v


@dataclass(frozen=True)
class MethodSpec:
    name: str
    fn: Callable[..., float]
    description: str
    params: dict[str, Param]
    # Gibbs site updates for one run on a document of N tokens, cost(N, p); read it through `work`
    cost: Callable[[int, dict[str, Any]], float] | None = None
    tasks: tuple[str, ...] = ("heldout",)
    # E[estimate of P] = P exactly (in probability space); a function of the parameters when it
    # depends on them
    unbiased: bool | Callable[[dict[str, Any]], bool] = False
    aliases: tuple[str, ...] = field(default=())
    renamed: dict[str, str] = field(default_factory=dict)  # old parameter -> what replaced it
    budget: str | None = None  # the parameter that buys accuracy (doubled by target_sd)
    grow: tuple[str, ...] = ()  # the parameters target_gap doubles in turn (empty: `budget`)
    # why these parameters (and this alpha) are known to give a badly biased estimate, or None (a
    # warning the result carries: `HeldoutResult.caution`): caution(params, alpha)
    caution: Callable[[dict[str, Any], np.ndarray], str | None] | None = None
    variance: bool = False  # fn returns (log estimate, relative variance estimate V)
    # topics relabelled per document by expected mass (`prepare_doc`): it shortens the dense
    # kernels' scans; the sparse left-to-right kernels gain nothing from it and skip its cost
    relabel: bool = True
    # the kind of Gibbs kernel its site updates run on, for the time estimate (`util.limits.SITE_SECONDS`)
    kernel: str = "dense"
    # a step on the prepared document, once per document before its runs (left-to-right: the
    # order of its tokens): (doc, n_obs, resolved params) -> doc
    prepare: Callable[[Any, int, dict[str, Any]], Any] | None = None
    # instead of `cost`, a cost that depends on the number of topics T too, topic_cost(N, T, p)
    # (exact: the count vectors it enumerates)
    topic_cost: Callable[[int, int, dict[str, Any]], float] | None = None
    # documents outside what the method was measured on: fallback(N, T, params) names the method
    # that scores a document of N tokens under T topics instead (with that method's defaults), or
    # None; `registry.for_document` applies it, and the result lists those documents
    fallback: Callable[[int, int, dict[str, Any]], str | None] | None = None

    def __post_init__(self) -> None:
        if (self.cost is None) == (self.topic_cost is None):
            raise ValueError(f"method {self.name!r} needs exactly one of cost and topic_cost")

    def work(self, num_tokens: int, params: dict[str, Any], num_topics: int) -> float:
        """Gibbs-site-update equivalents for one run on a document of `num_tokens` tokens: the
        one accessor of a method's price."""
        if self.topic_cost is not None:
            return float(self.topic_cost(num_tokens, num_topics, params))
        assert self.cost is not None
        return float(self.cost(num_tokens, params))

    def document(self, phi_wt: np.ndarray, alpha: np.ndarray, words: np.ndarray, n_obs: int,
                 params: dict[str, Any]) -> PreparedDoc:
        """The arrays of one document for this method's runs: `prepare_doc` (relabelled if
        `relabel`), then `prepare`, once per document."""
        doc = prepare_doc(phi_wt, alpha, words, reorder=self.relabel)
        return doc if self.prepare is None else self.prepare(doc, n_obs, params)

    def call(self, doc: Any, n_obs: int, rng: Any, state: Any, params: dict[str, Any]) -> tuple[float, float]:
        """One run: (log estimate, V), V NaN for a method without a single-run variance estimate."""
        out = self.fn(doc, n_obs, rng, state, **params)
        return (float(out[0]), float(out[1])) if self.variance else (float(out), math.nan)

    def is_unbiased(self, params: dict[str, Any]) -> bool:
        return self.unbiased(params) if callable(self.unbiased) else self.unbiased

    def params_for(self, task: str) -> dict[str, Param]:
        return {k: p for k, p in self.params.items() if task in p.tasks}

    def resolve(self, given: dict[str, Any], task: str = "heldout") -> dict[str, Any]:
        """Defaults filled in, values checked; an unknown parameter is an error."""
        params = self.params_for(task)
        unknown = sorted(set(given) - set(params))
        for old in unknown:
            if old in self.renamed:
                raise MethodError(f"{task} method {self.name!r}: parameter {old!r} was replaced by "
                                  f"{self.renamed[old]}")
        if unknown:
            takes = ", ".join(params) or "no parameters"
            raise MethodError(f"{task} method {self.name!r} has no parameter {unknown[0]!r} "
                              f"(it takes: {takes})")
        out = {name: p.check(self.name, name, given[name]) if name in given else p.default
               for name, p in params.items()}
        for name, p in params.items():
            if p.only_for is not None and out[p.only_for[0]] not in p.only_for[1]:
                if name in given:
                    raise MethodError(f"{task} method {self.name!r}: parameter {name!r} applies only with "
                                      f"{p.only_for[0]} {' or '.join(map(str, p.only_for[1]))}, "
                                      f"not {out[p.only_for[0]]!r}")
                del out[name]
        return out


_METHODS: dict[str, MethodSpec] = {}
_ALIASES: dict[str, str] = {}


def register(spec: MethodSpec) -> MethodSpec:
    _METHODS[spec.name] = spec
    for a in spec.aliases:
        _ALIASES[a] = spec.name
    return spec
