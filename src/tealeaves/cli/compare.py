"""`tealeaves compare` (two models, Ratio-AIS) and `curve` (Iteration-AIS over snapshots)."""

from __future__ import annotations

import argparse
import math
from typing import TYPE_CHECKING, Any

from ..errors import MethodError, shown
from ..heldout.ais import SCHEDULES
from ..heldout.result import sd_note
from ..output.jsonout import write_json
from ..util.limits import at_least
from .options import (
    add_model_options,
    corpus_options,
    keep_option,
    load_model_arg,
    print_corpus,
    read_docs,
    run_options,
    sub_parser,
)

if TYPE_CHECKING:
    from ..compare import CompareResult

EXAMPLES = {
    "compare": "tealeaves compare new.npz baseline.npz heldout.txt --path convex --direction both "
               "--temperatures 1000 --chains 4 --json cmp.json",
    "curve": "tealeaves curve iter100.npz iter200.npz iter500.npz heldout.txt --temperatures 500",
}


def _add_compare(sub: Any) -> None:
    cp = sub_parser(EXAMPLES, sub, "compare",
                    "compare two models directly: log P(w | A) - log P(w | B) by Ratio-AIS")
    cp.add_argument("model_a")
    cp.add_argument("model_b")
    cp.add_argument("docs")
    add_model_options(cp)
    corpus_options(cp)
    cp.add_argument("--method", default="ratio-ais", choices=("ratio-ais", "difference"))
    # the Ratio-AIS options (None: the API's default); given with --method difference: refused
    cp.add_argument("--path", default=None, choices=("convex", "geometric"), help="default convex")
    cp.add_argument("--direction", default=None, choices=("forward", "reverse", "both"), help="default both")
    cp.add_argument("--temperatures", type=at_least(1), default=None,
                    help="default 1000 (with --method difference --estimator ais: AIS's, default 2000)")
    cp.add_argument("--chains", type=at_least(1), default=4, help="chains per document and direction")
    cp.add_argument("--start", default=None, choices=("ais", "burn-in"), help="default ais")
    cp.add_argument("--start-temperatures", type=at_least(1), default=None,
                    help="prior -> B (start ais; default 2000)")
    cp.add_argument("--burn-in", type=at_least(0), default=None, help="default 200")
    cp.add_argument("--schedule", default=None, choices=SCHEDULES,
                    help="default sigmoid (with --method difference --estimator ais: AIS's, default "
                         "geometric)")
    cp.add_argument("--no-align-topics", dest="align_topics", action="store_const", const=False, default=None,
                    help="do not relabel B's topics to match A's")
    cp.add_argument("--estimator", default=None, help="for --method difference (default left-to-right)")
    cp.add_argument("--particles", type=at_least(1), default=None,
                    help="for --method difference: the estimator's particles (default: the estimator's own, "
                         "as tealeaves methods lists)")
    run_options(cp)
    keep_option(cp)
    cp.set_defaults(func=_cmd_compare)


def _add_curve(sub: Any) -> None:
    cv = sub_parser(EXAMPLES, sub, "curve",
                    "Iteration-AIS: log P(w | M_i) for a sequence of models (snapshots)")
    cv.add_argument("paths", nargs="+", help="MODEL_1 ... MODEL_K DOCS")
    add_model_options(cv)
    corpus_options(cv)
    cv.add_argument("--temperatures", type=at_least(1), default=500, help="per segment M_{i-1} -> M_i")
    cv.add_argument("--first-temperatures", type=at_least(1), default=2000, help="prior -> M_1")
    cv.add_argument("--chains", type=at_least(1), default=2)
    cv.add_argument("--schedule", default="sigmoid", choices=SCHEDULES)
    cv.add_argument("--align-topics", action="store_true", help="relabel each model's topics to match")
    run_options(cv)
    cv.set_defaults(func=_cmd_curve)


PARSERS = {  # command -> what adds its parser (`main.COMMANDS` lists them in order)
    "compare": _add_compare,
    "curve": _add_curve,
}


def _method_options(args: argparse.Namespace) -> dict[str, Any]:
    """The options given for the comparison method, checked before any file is read by the API's
    one check (`compare.method_options`); one given for the other method is refused."""
    from ..compare import RATIO_AIS, method_options

    given = {k: getattr(args, k) for k in RATIO_AIS if getattr(args, k) is not None}
    method_options(args.method, given, args.estimator)
    return {**given, **({"estimator": args.estimator} if args.estimator is not None else {})}


def _cmd_compare(args: argparse.Namespace) -> int:
    from ..compare import compare

    extra = {"particles": args.particles} if args.particles is not None else {}
    extra.update(_method_options(args))
    a = load_model_arg(args, args.model_a, "compare")
    b = load_model_arg(args, args.model_b, "compare")
    docs = read_docs(args, args.docs, a)
    res = compare(a, b, docs, method=args.method, chains=args.chains, seed=args.seed,
                  workers=args.workers, bootstrap=args.bootstrap,
                  progress=None if not args.quiet else False,
                  max_hours=args.max_hours, labels=[shown(args.model_a), shown(args.model_b)], keep=args.keep,
                  **extra)
    print_corpus(docs.report(), a.num_words)
    print(format_compare(res, args.model_a, args.model_b))
    if args.json:
        write_json(args.json, {"command": "compare", "model_a": args.model_a,
                               "model_b": args.model_b, "docs": args.docs, "result": res.to_dict()})
    return 0


DASH = "—"


def _sd(value: float, why: str | None) -> str:
    """An sd for the headline, or why there is none."""
    return f"{value:.2f}" if math.isfinite(value) else f"{DASH} ({why or 'no spread'})"


def format_compare(res: CompareResult, path_a: str, path_b: str) -> str:
    """Which model wins, by how much per token, how sure (about the population and about these
    documents), and how many documents favour each."""
    boot = res.document_bootstrap()
    p = res.params
    chains = int(p.get("chains", p.get("runs", 0)))
    chains_why = sd_note(chains, 2, res.documents, "chain", "use --chains >= 2")
    docs_why = sd_note(res.documents, res.bootstrap, res.documents, "document", "score more documents")
    how = (f"{res.method} ({p['path']} path, {p['direction']}, {p['temperatures']} temperatures, "
           f"{p['chains']} chains)" if res.method == "ratio-ais" else
           f"difference of two {p['estimator']} runs")
    lines = [f"A = {path_a}", f"B = {path_b}", f"{how}:",
             f"  log P(W|A) - log P(W|B) = {res.total:+.2f} nats over {res.tokens} tokens in "
             f"{res.documents} documents (sd over chains {_sd(res.sd_chains, chains_why)}, "
             f"over documents {_sd(boot['sd_total'], docs_why)})",
             f"  per token {res.per_token:+.5f}"]
    for scope, i in res.intervals().items():
        label = "population" if scope == "population" else "these documents"
        lines.append(f"  95% interval ({label}): {i.short()}  about {i.about}; {i.method}")
    lines.append(f"  perplexity ratio PP_A / PP_B = {res.perplexity_ratio:.4f}")
    if res.forward is not None and res.reverse is not None:
        lines.append(f"  forward {res.forward.total:+.2f}, reverse {res.reverse.total:+.2f}, "
                     f"gap {res.gap:.2f} nats (a large gap means too few temperatures)")
    if res.document_interval_reason:
        lines.append(f"  per-document intervals unavailable: {res.document_interval_reason}")
    fav = res.favour
    lines.append(f"  documents favouring A: {fav['a']}, favouring B: {fav['b']}")
    lines.append(f"verdict: {res.verdict()}")
    warning = res.interval("population").warning
    if warning:
        lines.append(f"WARNING: {warning}")
    return "\n".join(lines)


def _cmd_curve(args: argparse.Namespace) -> int:
    from ..compare import training_curve

    if len(args.paths) < 2:
        raise MethodError("curve needs at least one model and the documents: MODEL_1 ... MODEL_K DOCS")
    model_paths, docs_path = args.paths[:-1], args.paths[-1]
    models = [load_model_arg(args, p, "curve") for p in model_paths]
    docs = read_docs(args, docs_path, models[0])
    res = training_curve(models, docs, labels=[shown(p) for p in model_paths], temperatures=args.temperatures,
                         first_temperatures=args.first_temperatures, chains=args.chains,
                         schedule=args.schedule, align_topics=args.align_topics, seed=args.seed,
                         workers=args.workers, bootstrap=args.bootstrap,
                         progress=None if not args.quiet else False, max_hours=args.max_hours)
    print_corpus(docs.report(), models[0].num_words)
    width = max(len(p) for p in model_paths)
    print(f"{'model'.ljust(width)}  {'total log-lik':>14}  {'± sd':>7}  {'per token':>10}  "
          f"{'perplexity':>10}")
    for p, tot, sd, pt, pp in zip(model_paths, res.totals, res.sd, res.per_token, res.perplexity,
                                  strict=True):
        sd_text = f"{sd:7.2f}" if math.isfinite(sd) else f"{DASH:>7}"
        print(f"{p.ljust(width)}  {tot:14.2f}  {sd_text}  {pt:10.4f}  {pp:10.2f}")
    if res.sd_note:
        print(f"± sd {DASH}: {res.sd_note}")
    if args.json:
        write_json(args.json, {"command": "curve", "models": model_paths, "docs": docs_path,
                               "result": res.to_dict()})
    return 0
