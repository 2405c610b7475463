"""What an evaluation will cost, estimated before any work (`estimate_cost`), and the refusal of a
run estimated past `max_hours` (`check_estimate`)."""

from __future__ import annotations

import inspect
import os
import sys
from collections.abc import Sequence
from typing import Any

from ..coherence import DEFAULT_WINDOWS
from ..coherence.index import is_index, read_index
from ..compare import RATIO_AIS, compare
from ..corpus import Corpus
from ..heldout import get_method
from ..intrusion import auto, predictive
from ..model import TopicModel
from ..topics import Topics
from ..util.limits import OPS_RATE, RATE, check_cost, update_seconds
from ..util.stages import Stages
from .options import EvaluateOptions

LARGE_SECONDS = 60.0  # an estimate at least this long is shown before the work starts
BYTES_PER_TOKEN = 5.0  # a reference file's tokens, estimated from its size (errs towards more tokens)
TEXT_RATE = 1e6  # reference tokens read, tokenised and counted per second per worker (Python)
# Postings (occurrences of the words asked for) a reference index (.tlx) answers per second, one
# process: 2.8e7-3.4e7 per CPU second measured on this machine (2 shared cores) for 50 topics x 10
# words at windows None, 10 and 110 from a 2e6-token index (a one-off script, session 4), and 3.2e7
# in benchmarks/results/coherence_index.json (1 GB index, 4 measures); taken at a third of that.
# An index pass is priced as reading EVERY posting (one per token, its header's count), whatever
# the window: a query reads only its target words' postings, so the estimate errs on the long side.
INDEX_RATE = 1e7
# Topic x score x bootstrap replicates the agreement with people handles per second (metaeval's
# two-stage bootstrap with the ceiling): hoyle2021's 300 topics x (2 scores + the ceiling) x 3
# statistics x 2000 replicates took 16 s on this machine shared (experiments/human_agreement.py's
# timing), about 3e5 per second; taken at a third of that
PEOPLE_RATE = 1e5


def _default(fn: Any, name: str) -> Any:
    """The default of `fn`'s parameter `name` (so an estimate follows the function it prices)."""
    return inspect.signature(fn).parameters[name].default


def reference_tokens(reference: Any) -> tuple[float, str]:
    """The reference's number of tokens, or an estimate from a file's size, and how it was got."""
    if isinstance(reference, Corpus):
        return float(reference.num_tokens), f"{reference.num_tokens:,} tokens"
    if is_index(reference):  # a .tlx: its header counts the tokens (its bytes are not text)
        n = read_index(reference).tokens
        return float(n), f"{n:,} tokens (its index header)"
    if isinstance(reference, str | os.PathLike):
        try:
            size = os.path.getsize(reference)
        except OSError:
            return 0.0, "size unknown"
        n = size / BYTES_PER_TOKEN
        return n, f"about {n:,.0f} tokens ({size:,} bytes / {BYTES_PER_TOKEN:g})"
    if isinstance(reference, Sequence):
        n = sum(len(d) for d in reference)
        return float(n), f"{n:,} tokens"
    return 0.0, "size unknown (an iterator)"


# Site updates per token of `compare`'s Ratio-AIS at its defaults: (start + path temperatures) x
# chains x both directions, read from `compare.RATIO_AIS` and its signature so the estimate follows it
RATIO_AIS_PER_TOKEN = float((RATIO_AIS["start_temperatures"] + RATIO_AIS["temperatures"])
                            * _default(compare, "chains") * 2)

PREDICTIVE_SWEEPS = float(_default(predictive, "burn_in") + _default(predictive, "samples"))


def ratio_ais_updates(tokens: float) -> float:
    """Site updates of `compare`'s Ratio-AIS at its defaults (both directions) over `tokens`."""
    return float(tokens) * RATIO_AIS_PER_TOKEN


def estimate_cost(models: Sequence[TopicModel | Topics], corpora: Sequence[Corpus], reference: Any,
                  options: EvaluateOptions,
                  every: Sequence[TopicModel | Topics] | None = None) -> dict[str, Any]:
    """Estimated seconds per stage before any work: held-out by the estimator's own cost model,
    Ratio-AIS per pair that will (`"ratio-ais"`) or may (`"auto"`: `ratio_ais_up_to`) run it,
    reference counting per distinct window (coherence) and per model (intrusion), predictive
    sweeps; the agreement with people over the topics of `every` model (default `models`). Every
    figure assumes the rates in `tealeaves.util.limits` and TEXT_RATE (a reference text) or
    INDEX_RATE (a reference index: its postings, not text)."""
    o = options
    method, runs, workers, params = o.method, o.runs, o.workers, dict(o.heldout_params)
    coherence, compare_models = o.coherence, o.compare_models
    spec = get_method(method, "heldout")
    resolved = spec.resolve({k: v for k, v in params.items() if k in spec.params}, "heldout")
    held = sum(update_seconds(runs * sum(spec.work(int(n), resolved, m.num_topics) for n in c.lengths),
                              workers,
                              m.num_topics) if isinstance(m, TopicModel) else
               update_seconds(_logistic_normal_updates(m, c, runs, params), 1)
               for m, c in zip(models, corpora, strict=True))
    pred = sum(update_seconds(c.num_tokens * PREDICTIVE_SWEEPS, workers, m.num_topics)
               for m, c in zip(models, corpora, strict=True) if isinstance(m, TopicModel))
    ref, ref_how = reference_tokens(reference) if reference is not None else (0.0, "no reference")
    indexed = reference is not None and is_index(reference)
    w = max(int(workers), 1)
    read = (f"(its postings read at {INDEX_RATE:.0e} per second, one process)" if indexed else
            f"read at {TEXT_RATE:.0e} tokens per second per worker")

    def counting(window: int | None) -> float:
        if indexed:  # one pass over (at most) every posting, one process; the window costs nothing
            return ref / INDEX_RATE
        return ref / (TEXT_RATE * w) + ref * (window or 1) / (OPS_RATE * w)

    windows = {DEFAULT_WINDOWS[m] for m in coherence} if reference is not None else set()
    pairs = [(i, j) for i in range(len(models)) for j in range(i + 1, len(models))
             if same_words(models[i], models[j])]
    ratio = [update_seconds(ratio_ais_updates(corpora[i].num_tokens), workers, models[i].num_topics)
             for i, _ in pairs]
    seconds = {"loading": 0.0, "held-out": held,
               "comparisons": sum(ratio) if compare_models == "ratio-ais" else 0.0,
               "coherence": sum(counting(win) for win in windows),
               "intrusion": len(models) * counting(_default(auto, "window")) if ref else 0.0,
               "predictive": pred,
               "people": _people_seconds(models if every is None else every, o)}
    return {"seconds": seconds, "total": sum(seconds.values()),
            "ratio_ais_pairs": len(pairs), "ratio_ais_each": ratio,
            "ratio_ais_up_to": sum(ratio) if compare_models == "auto" else 0.0,
            "how": f"held-out site updates by the {spec.name} cost model and Ratio-AIS at compare's "
                   f"defaults, at about {RATE:.0e} per second per worker; reference {ref_how} {read}; "
                   f"{w} worker(s)"}


def _people_seconds(models: Sequence[TopicModel | Topics], o: EvaluateOptions) -> float:
    """The agreement with people on the user's own study: at most every topic of the models, each
    coherence measure, exclusivity and the ceiling, `human_bootstrap` replicates (nothing for a
    bundled study's figures, which are read)."""
    from ..errors import JUDGMENT_STUDIES

    if o.human is None or (isinstance(o.human, str | os.PathLike) and o.human_key is None
                           and os.fspath(o.human) in (*JUDGMENT_STUDIES, "proxann2025")
                           and not os.path.exists(o.human)):
        return 0.0
    topics = sum(m.num_topics for m in models)
    return topics * (len(o.coherence) + 2) * o.human_bootstrap / PEOPLE_RATE


def _logistic_normal_updates(m: Topics, c: Corpus, runs: int, params: dict[str, Any]) -> float:
    """The updates `heldout_logistic_normal` checks against its budget (its own cost model)."""
    from ..heldout.logistic_normal import heldout_logistic_normal

    temps = params.get("temperatures", _default(heldout_logistic_normal, "temperatures"))
    T, V = m.weights.shape
    if m.decoder == "product-of-experts":
        return float(runs) * temps * len(c) * T * V
    return float(runs) * temps * c.num_tokens * T


def same_words(a: TopicModel | Topics, b: TopicModel | Topics) -> bool:
    """Ratio-AIS applies: two LDA models with the same number of topics and the same words."""
    if not (isinstance(a, TopicModel) and isinstance(b, TopicModel)):
        return False
    return a.num_topics == b.num_topics and a.num_words == b.num_words and (
        a.vocab is None or b.vocab is None or set(a.vocab) == set(b.vocab))


def fmt_seconds(s: float) -> str:
    return f"{s:.2g} s" if s < 10 else f"{s:,.0f} s" if s < 3600 else f"{s / 3600:,.1f} h"


def check_estimate(est: dict[str, Any], n: int, max_hours: float | None, clock: Stages, show: bool) -> None:
    """Show a large estimate on stderr (`show`), and refuse one longer than `max_hours`."""
    parts = ", ".join(f"{k} {fmt_seconds(v)}" for k, v in est["seconds"].items() if v > 0)
    if est["ratio_ais_up_to"]:
        parts += f"; Ratio-AIS up to {fmt_seconds(est['ratio_ais_up_to'])} more, only where needed"
    check_cost(f"evaluating {n} model(s)", seconds=est["total"], max_hours=max_hours,
               how=f"{parts}; {est['how']}")  # a refusal is the one line the user sees
    if est["total"] + est["ratio_ais_up_to"] >= LARGE_SECONDS and show:  # also when stderr is a file
        sys.stderr.write(f"{clock.label}: estimated {fmt_seconds(est['total'])} before any work ({parts})\n")


