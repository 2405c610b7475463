"""What `tl.evaluate` computes and how (`EvaluateOptions`): one frozen object, checked once when it
is made, so the orchestration, the cost estimate, `select` and the CLI read the same settings.

Keyword arguments of `tl.evaluate` are shorthand for it: `tl.evaluate(models, runs=3, particles=50)`
equals `tl.evaluate(models, options=EvaluateOptions(runs=3, heldout_params={"particles": 50}))`; a
keyword that is not a field is an estimator parameter (`heldout_params`, passed to `tl.heldout`)."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from ..coherence import ABSENT, DEFAULT_WINDOWS
from ..errors import MethodError
from ..util.limits import check_float, check_int

DEFAULT_COHERENCE = ("npmi", "umass")
JUDGE_TASKS = ("word-intrusion", "ratings")  # what an LLM judge answers for evaluate, per topic
COMPARE_MODES = ("difference", "auto", "ratio-ais", "none")


@dataclass(frozen=True)
class EvaluateOptions:
    """Settings of `tl.evaluate`.

    - held-out likelihood: `method`, `runs` and `heldout_params` go to `tl.heldout`, with the same
      `seed` for every model (so each row equals a separate `tl.heldout` call);
    - `compare_models`: "difference" (the difference of the held-out estimates for every pair, free),
      "auto" (and Ratio-AIS for the pairs with the same topics count and words that the difference
      does not separate), "ratio-ais" (Ratio-AIS for every such pair), "none";
    - coherence: the `coherence` measures over the top `topn` words, `absent` the policy for top
      words the reference lacks (`tl.coherence`; None: the measure's own); diversity over the top
      `diversity_topn`; `embeddings` (a word-vector file, `Vectors` or a mapping; its format
      `embeddings_format` as `read_vectors`) adds word-embedding coherence and WE-IRBO;
    - `diagnostics`: each LDA's per-topic diagnostics on the held-out documents; `stability`: models
      with the same K and words are restarts (`tl.stability`);
    - `judge` (a `tl.Judge`: a language model on an OpenAI-compatible server) answers `judge_tasks`
      ("word-intrusion": P(intruder), "ratings": the expected 3-point rating) for every model with
      top words: its mean per model is a column, its per-topic scores go to the report;
    - `tokenizer` and `encoding` of text files; `workers` local processes; `max_hours` (default 24)
      the longest estimated run accepted before any work;
    - `human`: each metric's agreement with people beside it (`evaluate.human`): a bundled study's
      name ("hoyle2021", "proxann2025:bills": figures measured on their topics, carried over), a
      study of these models' topics (a file `load_judgments` reads, the annotation app's export with
      its key in `human_key`, or a `judgments.Study`: measured on those topics, `human_bootstrap`
      replicates);
    - `keep`: a folder keeping each model's finished documents (held-out, Ratio-AIS, the predictive
      metrics' theta; `files.kept`), so that the same call or command with it resumes an interrupted
      run with the same numbers (the other stages, quick, are computed again)."""

    method: str = "left-to-right"
    runs: int = 2
    heldout_params: Mapping[str, Any] = field(default_factory=dict)
    compare_models: str = "difference"
    coherence: tuple[str, ...] = DEFAULT_COHERENCE
    topn: int = 10
    diversity_topn: int = 25
    absent: str | None = None
    embeddings: Any = None
    embeddings_format: str | None = None
    diagnostics: bool = False
    stability: bool = False
    seed: int = 0
    workers: int = 1
    tokenizer: str = "whitespace"
    encoding: str = "utf-8"
    max_hours: float | None = None
    keep: str | None = None
    judge: Any = None
    judge_tasks: tuple[str, ...] = JUDGE_TASKS
    human: Any = None
    human_key: str | os.PathLike | None = None
    human_bootstrap: int = 2000

    def __post_init__(self) -> None:
        def put(name: str, value: Any) -> None:
            object.__setattr__(self, name, value)

        if not isinstance(self.method, str):
            raise MethodError(f"method must be an estimator's name, got {self.method!r}")
        put("runs", check_int("runs", self.runs, 1))
        if not isinstance(self.heldout_params, Mapping):
            raise MethodError(f"heldout_params must be a mapping of estimator parameters, got "
                              f"{self.heldout_params!r}")
        put("heldout_params", MappingProxyType(dict(self.heldout_params)))
        if self.compare_models not in COMPARE_MODES:
            raise MethodError(f"compare_models must be one of {', '.join(COMPARE_MODES)}, "
                              f"got {self.compare_models!r}")
        measures = (self.coherence,) if isinstance(self.coherence, str) else tuple(self.coherence)
        for m in measures:
            if m not in DEFAULT_WINDOWS:
                raise MethodError(f"unknown coherence measure {m!r} (known: {', '.join(DEFAULT_WINDOWS)})")
        put("coherence", measures)
        put("topn", check_int("topn", self.topn, 1))
        put("diversity_topn", check_int("diversity_topn", self.diversity_topn, 1))
        if self.absent is not None and self.absent not in ABSENT:
            raise MethodError(f"absent must be one of {', '.join(ABSENT)}, got {self.absent!r}")
        for flag in ("diagnostics", "stability"):
            if not isinstance(getattr(self, flag), bool):
                raise MethodError(f"{flag} must be True or False, got {getattr(self, flag)!r}")
        put("seed", check_int("seed", self.seed, 0))
        put("workers", check_int("workers", self.workers, 1))
        if self.max_hours is not None:
            put("max_hours", check_float("max_hours", self.max_hours, 0, low_open=True))
        if self.judge is not None:
            from ..judge import Judge

            if not isinstance(self.judge, Judge):
                raise MethodError(f"judge must be a tl.Judge, got {type(self.judge).__name__}")
        tasks = (self.judge_tasks,) if isinstance(self.judge_tasks, str) else tuple(self.judge_tasks)
        for t in tasks:
            if t not in JUDGE_TASKS:
                raise MethodError(f"unknown judge task {t!r} (known: {', '.join(JUDGE_TASKS)})")
        put("judge_tasks", tasks)
        put("human_bootstrap", check_int("human_bootstrap", self.human_bootstrap, 0))
        from ..judgments import Study

        if self.human is not None and not isinstance(self.human, str | os.PathLike | Study):
            raise MethodError(f"human must be a bundled study's name, a file of judgments or a Study, got "
                              f"{type(self.human).__name__}")
        if self.human_key is not None and (self.human is None or isinstance(self.human, Study)):
            raise MethodError("human_key is the key of the annotation app's export given as human: give that "
                              "export too")
        if self.keep is not None:
            if not isinstance(self.keep, str | os.PathLike):
                raise MethodError(f"keep must be a folder's path, got {self.keep!r}")
            put("keep", os.fspath(self.keep))

    @classmethod
    def of(cls, options: EvaluateOptions | None = None, **kwargs: Any) -> EvaluateOptions:
        """`options` (default: the defaults) with `kwargs` applied: a field by its name, anything
        else an estimator parameter added to `heldout_params`."""
        base = cls() if options is None else options
        if not isinstance(base, EvaluateOptions):
            raise MethodError(f"options must be an EvaluateOptions, got {type(base).__name__}")
        names = {f.name for f in dataclasses.fields(cls)}
        given = {k: v for k, v in kwargs.items() if k in names}
        extra = {k: v for k, v in kwargs.items() if k not in names}
        if extra:
            given["heldout_params"] = {**given.get("heldout_params", base.heldout_params), **extra}
        return dataclasses.replace(base, **given) if given else base

    def to_dict(self) -> dict[str, Any]:
        """The settings a result records (the embeddings by what was read, elsewhere)."""
        return {"method": self.method, "runs": self.runs, "coherence": list(self.coherence),
                "topn": self.topn, "diversity_topn": self.diversity_topn,
                "compare_models": self.compare_models, "seed": self.seed, "absent": self.absent,
                "max_hours": self.max_hours, "keep": self.keep,
                "judge": None if self.judge is None else {**self.judge.settings(),
                                                          "tasks": list(self.judge_tasks)},
                **({"human": getattr(self.human, "name", None) or os.fspath(self.human)}
                   if self.human is not None else {})}
