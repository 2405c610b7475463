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
from ..intrusion.tasks import word_tasks, word_tasks_work
from ..model import TopicModel
from ..topics import Topics
from ..util.limits import OPS_RATE, check_cost, update_seconds
from ..util.stages import Stages
from .options import EvaluateOptions

LARGE_SECONDS = 60.0  # an estimate at least this long is shown before the work starts
BYTES_PER_TOKEN = 5.0  # a reference file's tokens, estimated from its size (errs towards more tokens)
# The rates below are CPU seconds of one process on this project's 2-core machine, fitted by
# benchmarks/estimates.py (benchmarks/results/estimates.json "fit"; tests/test_doc_figures.py keeps
# them equal): reference tokens read and split from a text file (Python), tokens x window positions
# counted (numba), entries of the targets x targets pair matrix made and finished per window, and
# Python steps of `word_tasks` (its topics x other topics' top words candidates); PASS_SECONDS: the
# fixed CPU seconds of a counting pass whatever its size (an in-memory reference of 74,000 tokens
# took 0.05 CPU s). A rate the fit leaves out (null: its term fitted to zero) keeps its earlier value.
TEXT_RATE = 5.1e6
COUNT_RATE = 2e8
PAIR_RATE = 1.1e7
PASS_SECONDS = 0.019
TASK_RATE = 5.5e5
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
# CPU seconds per document of `predictive` after its sweeps, c + d x topics^2 x words (its preparation,
# theta_d phi over every word and the words' ranks), fitted with SITE_SECONDS["theta"] on the
# predictive stage of benchmarks/estimates.py's full-size run (non-negative least squares of the
# relative error). The shape is the one measured, not the operation count (T x V): per document the
# 200-topic model cost about ten times the 50-topic one, and a term in T x V left the 200-topic
# workloads 2x short. Every model there has 3,000 words, so c also holds the ranking's V log V at
# that size (benchmarks/results/estimates.json "fit"; tests/test_doc_figures.py keeps them equal).
PREDICTIVE_DOC_SECONDS = (0.00043, 5.1e-11)


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


def reference_kind(reference: Any) -> str:
    """How a reference is read: "index" (a .tlx), "memory" (a Corpus: counted from its arrays) or
    "text" (a file, or token lists: every token passes through Python)."""
    if reference is not None and is_index(reference):
        return "index"
    return "memory" if isinstance(reference, Corpus) else "text"


def heldout_seconds(spec: Any, resolved: dict[str, Any], lengths: Sequence[int], runs: int, topics: int,
                    workers: int) -> float:
    """Held-out estimation of documents of `lengths` tokens: the estimator's own cost model (site
    updates) on its kind of kernel."""
    work = runs * sum(spec.work(int(n), resolved, topics) for n in lengths)
    return update_seconds(work, workers, topics, spec.kernel)


def predictive_seconds(tokens: float, documents: int, topics: int, words: int, workers: int) -> float:
    """`predictive`: theta's Gibbs sweeps (the "theta" kernel), then per document its preparation,
    theta_d phi over every word and the ranks of the words: c + d x topics^2 x words seconds
    (PREDICTIVE_DOC_SECONDS)."""
    sweeps = update_seconds(tokens * PREDICTIVE_SWEEPS, workers, topics, "theta")
    c, d = PREDICTIVE_DOC_SECONDS
    return sweeps + documents * (c + d * topics**2 * words)  # the products and ranks: in this process


def counting_seconds(tokens: float, window: int | None, targets: int, kind: str, workers: int) -> float:
    """Counting `targets` words in a reference of `tokens` tokens at `window` (None: whole
    documents): an index's postings (one process, whatever the window); else the text read (a file
    or token lists, not a Corpus), every window position counted, and the pair matrix made."""
    if kind == "index":
        return tokens / INDEX_RATE
    w = max(int(workers), 1)
    read = tokens / (TEXT_RATE * w) if kind == "text" else 0.0
    return PASS_SECONDS + read + tokens * (window or 1) / (COUNT_RATE * w) + float(targets) ** 2 / PAIR_RATE


def intrusion_seconds(topics: int, words: int, tokens: float, kind: str, workers: int) -> float:
    """Automated word intrusion of one model: its word tasks (`word_tasks_work`, and the Python
    steps over each topic's candidate intruders: topics x other topics' top words), then counting
    the options (6 words per topic) at the proxy's window."""
    high = _default(word_tasks, "high_top")
    tasks = word_tasks_work(topics, words, high) / OPS_RATE + float(topics) ** 2 * high / TASK_RATE
    return tasks + counting_seconds(tokens, _default(auto, "window"), 6 * topics, kind, workers)


def estimate_cost(models: Sequence[TopicModel | Topics], corpora: Sequence[Corpus], reference: Any,
                  options: EvaluateOptions,
                  every: Sequence[TopicModel | Topics] | None = None) -> dict[str, Any]:
    """Estimated seconds per stage before any work: held-out by the estimator's own cost model,
    Ratio-AIS per pair that will (`"ratio-ais"`) or may (`"auto"`: `ratio_ais_up_to`) run it,
    reference counting per distinct window (coherence) and per model (intrusion), predictive
    sweeps; the agreement with people over the topics of `every` model (default `models`). Every
    figure assumes the rates above and in `tealeaves.util.limits` (SITE_SECONDS) and TEXT_RATE (a
    reference text) or INDEX_RATE (a reference index: its postings, not text)."""
    o = options
    method, runs, workers, params = o.method, o.runs, o.workers, dict(o.heldout_params)
    coherence, compare_models = o.coherence, o.compare_models
    spec = get_method(method, "heldout")
    resolved = spec.resolve({k: v for k, v in params.items() if k in spec.params}, "heldout")
    held = sum(heldout_seconds(spec, resolved, c.lengths, runs, m.num_topics, workers)
               if isinstance(m, TopicModel) else
               update_seconds(_logistic_normal_updates(m, c, runs, params), 1)
               for m, c in zip(models, corpora, strict=True))
    pred = sum(predictive_seconds(c.num_tokens, len(c), m.num_topics, m.num_words, workers)
               for m, c in zip(models, corpora, strict=True) if isinstance(m, TopicModel))
    ref, ref_how = reference_tokens(reference) if reference is not None else (0.0, "no reference")
    kind = reference_kind(reference)
    w = max(int(workers), 1)
    read = {"index": f"(its postings read at {INDEX_RATE:.0e} per second, one process)",
            "text": f"read at {TEXT_RATE:.0e} tokens per second per worker",
            "memory": "(a Corpus: counted from its arrays)"}[kind]
    windows = {DEFAULT_WINDOWS[m] for m in coherence} if reference is not None else set()
    worded = [m for m in models if m.vocab is not None]
    targets = sum(m.num_topics for m in worded) * o.topn
    pairs = [(i, j) for i in range(len(models)) for j in range(i + 1, len(models))
             if same_words(models[i], models[j])]
    ratio = [update_seconds(ratio_ais_updates(corpora[i].num_tokens), workers, models[i].num_topics, "pair")
             for i, _ in pairs]
    seconds = {"held-out": held,  # loading is done before the estimate: not estimated
               "comparisons": sum(ratio) if compare_models == "ratio-ais" else 0.0,
               "coherence": sum(counting_seconds(ref, win, targets, kind, workers) for win in windows),
               "intrusion": sum(intrusion_seconds(m.num_topics, m.num_words if isinstance(m, TopicModel)
                                                  else len(m.vocab or ()), ref, kind, workers)
                                for m in worded) if ref else 0.0,
               "predictive": pred,
               "people": _people_seconds(models if every is None else every, o)}
    return {"seconds": seconds, "total": sum(seconds.values()),
            "ratio_ais_pairs": len(pairs), "ratio_ais_each": ratio,
            "ratio_ais_up_to": sum(ratio) if compare_models == "auto" else 0.0,
            "how": f"held-out site updates by the {spec.name} cost model and Ratio-AIS at compare's "
                   f"defaults at this machine's measured rates (util.limits.SITE_SECONDS); reference "
                   f"{ref_how} {read}; {w} worker(s)"}


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
    """The updates `heldout_logistic_normal` checks against its budget (its own cost model): with the
    adaptive default (no `temperatures`), the budgets up to EXPECTED_TEMPERATURES of CHAINS chains."""
    from ..heldout.logistic_normal import CHAINS, EXPECTED_TEMPERATURES

    temps = params.get("temperatures")
    if temps is None:
        temps, runs = 2 * EXPECTED_TEMPERATURES, max(runs, CHAINS)
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


