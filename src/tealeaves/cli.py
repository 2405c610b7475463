"""The `tealeaves` command. Subcommands call the same public functions as Python users.
Every input error prints one line `tealeaves: error: ...` and exits with status 2."""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import re
import sys
from collections.abc import Sequence
from importlib import resources
from typing import TYPE_CHECKING, Any, NoReturn

import numpy as np

from . import __version__, atomic, csvout, jsonout, synthetic
from .atomic import atomic_path, write_text
from .checks import above, at_least, check_array_file, fraction, not_below, text_encoding
from .cli_models import MODEL_HELP, add_model_options, check_scorable, load_model_arg, load_topics_arg
from .cli_paths import check_outputs
from .corpus import Corpus, read_corpus, write_text_corpus
from .csl import csl
from .csl import lda as csl_lda
from .display import perplexity_text
from .errors import ARCHIVE_ERRORS, InvalidCorpusError, MethodError, TealeavesError
from .heldout import HeldoutResult, completion, get_method, heldout, method_names
from .heldout.ais import SCHEDULES
from .heldout.check import CHECK_TEMPERATURES
from .heldout.check import describe as describe_check
from .io import load_model, save_model
from .jsonout import write_json
from .model import TopicModel
from .parallel import DASK_ENV, DASK_MIN_SECONDS, use_dask
from .textfile import read_lines

if TYPE_CHECKING:
    from .compare import CompareResult

# CLI option -> method parameter (parameter names follow table 1 of Wallach et al. 2009)
METHOD_OPTIONS = {
    "particles": int, "variant": str, "rejuvenate": int, "temperatures": int, "samples": int, "burn_in": int,
    "iterations": int, "chain_length": int, "schedule": str, "max_states": int,
}

EXAMPLES = {
    "heldout": "tealeaves heldout model.npz heldout.txt --methods left-to-right,ais,chib --runs 10 "
               "--json out.json",
    "completion": "tealeaves completion model.npz heldout.txt --method left-to-right --observed 0.5",
    "demo": "tealeaves demo --report demo.html   (or --quick; --synthetic for the exact-value check)",
    "methods": "tealeaves methods",
    "convert": "tealeaves convert lda.gensim lda.npz --allow-pickle   (or a MALLET state, tomotopy, "
               "scikit-learn pickle, pyLDAvis JSON with --alpha)",
    "synth": "tealeaves synth model.npz docs.txt --topics 20 --words 1000 --docs 50 --length 100",
    "compare": "tealeaves compare new.npz baseline.npz heldout.txt --path convex --direction both "
               "--temperatures 1000 --chains 4 --json cmp.json",
    "curve": "tealeaves curve iter100.npz iter200.npz iter500.npz heldout.txt --temperatures 500",
    "coherence": "tealeaves coherence model.npz reference.txt --measure umass,npmi,c_v --topn 10",
    "diversity": "tealeaves diversity model.npz --topn 25",
    "bcubed": "tealeaves bcubed predicted_labels.txt gold_labels.txt --json b3.json",
    "report": "tealeaves report heldout.json coherence.json scores.json -o report.html",
    "warm-up": "tealeaves warm-up   (once after installing or upgrading: compiles every numba kernel)",
    "csl": "tealeaves csl model.npz heldout.txt --samples 10000 --json csl.json   "
           "(or an RBM .npz with DATA = digits:test)",
}


class Parser(argparse.ArgumentParser):
    """Usage errors are one line, like every other error."""

    def error(self, message: str) -> NoReturn:
        print(f"tealeaves: error: {message} (see '{self.prog} --help')", file=sys.stderr)
        raise SystemExit(2)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser(command_named(sys.argv[1:] if argv is None else argv))
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # usage error (one line, printed) or --help/--version
        return exc.code if isinstance(exc.code, int) else 2
    jsonout.STDOUT = sys.stdout
    try:
        # with --json - the JSON is the only thing on stdout; the table goes to stderr
        quiet_stdout = contextlib.redirect_stdout(sys.stderr) if getattr(args, "json", None) == "-" \
            else contextlib.nullcontext()
        address = getattr(args, "dask", None) or (os.environ.get(DASK_ENV) if hasattr(args, "dask") else None)
        # every output is put in place when the command succeeds; a failure leaves none behind
        with atomic.transaction(), quiet_stdout:
            check_outputs(args)
            if address:
                with use_dask(address, getattr(args, "dask_min_seconds", None)):
                    return args.func(args)
            return args.func(args)
    except BrokenPipeError:  # `tealeaves ... | head`: stop quietly
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except TealeavesError as exc:
        print(f"tealeaves: error: {message(exc, parser, args)}", file=sys.stderr)
        return 2
    except OSError as exc:
        name = f"{exc.filename}: " if getattr(exc, "filename", None) else ""
        print(f"tealeaves: error: {name}{exc.strerror or exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("tealeaves: interrupted", file=sys.stderr)
        return 130


def command_flags(parser: argparse.ArgumentParser, args: argparse.Namespace) -> dict[str, str]:
    """The flags of the command `args` ran, by parameter name: {"high_top": "--high-top", ...}."""
    p: argparse.ArgumentParser | None = parser
    flags: dict[str, str] = {}
    while p is not None:
        sub = None
        for action in p._actions:
            if isinstance(action, argparse._SubParsersAction):
                sub = action
            elif action.option_strings and action.dest != "help":
                flags[action.dest] = max(action.option_strings, key=len)
        p = sub.choices.get(getattr(args, sub.dest, None)) if sub is not None else None
    return flags


def message(exc: TealeavesError, parser: argparse.ArgumentParser, args: argparse.Namespace) -> str:
    """`exc`'s message with the parameters it names (`exc.options`) spelled as the command's flags."""
    text = str(exc)
    flags = command_flags(parser, args)
    for name in getattr(exc, "options", ()):
        if name in flags:
            text = re.sub(rf"(?<![\w-]){re.escape(name)}(?![\w-])", flags[name], text)
    return text


def command_named(argv: Sequence[str]) -> str | None:
    """The command `argv` runs: its first word that is not an option (the top level has no options
    that take a value), or None."""
    return next((a for a in argv if not a.startswith("-")), None)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """Every command's parser; given the `command` that runs, the commands of cli_intrusion and
    cli_evaluate (whose modules import most of the package) are left out unless it is one of them,
    so that other commands start faster. The list of commands (`tealeaves --help`) has them all."""
    p = Parser(prog="tealeaves", description="Evaluate topic models.")
    p.add_argument("--version", action="version", version=f"tealeaves {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    h = _sub(sub, "heldout", "held-out log-likelihood log P(w | Phi, alpha m) of documents")
    _common(h, "heldout")
    h.add_argument("--method", default=None, help="estimator (default left-to-right)")
    h.add_argument("--methods", default=None, help="comma-separated estimators to compare")
    h.set_defaults(func=_cmd_heldout, task="heldout")

    c = _sub(sub, "completion", "document completion log P(w2 | w1, Phi, alpha m)")
    _common(c, "completion")
    c.add_argument("--method", default=None, help="estimator (default left-to-right)")
    c.add_argument("--methods", default=None, help="comma-separated estimators to compare")
    c.add_argument("--observed", type=fraction(), default=0.5, help="fraction of each document observed")
    c.add_argument("--split", default="first", help="first (default) or random")
    c.set_defaults(func=_cmd_heldout, task="completion")

    d = _sub(sub, "demo", "evaluate the bundled State of the Union models end to end, with an HTML report")
    d.add_argument("--quick", action="store_true",
                   help="small settings: about 3 s (plus about 20 s once while numba compiles)")
    d.add_argument("--report", default=None,
                   help="HTML report path (default tealeaves-demo.html; --synthetic: none unless given; "
                        "'' for none)")
    d.add_argument("--synthetic", action="store_true",
                   help="instead: every estimator against the exact value on a small synthetic example")
    d.add_argument("--runs", type=at_least(1), default=5, help="runs per method (--synthetic)")
    d.add_argument("--seed", type=at_least(0), default=0)
    d.add_argument("--workers", type=at_least(1), default=1)
    d.add_argument("--json", default=None, help="write results as JSON")
    d.add_argument("--quiet", action="store_true")
    d.set_defaults(func=_cmd_demo)

    cp = _sub(sub, "compare", "compare two models directly: log P(w | A) - log P(w | B) by Ratio-AIS")
    cp.add_argument("model_a")
    cp.add_argument("model_b")
    cp.add_argument("docs")
    add_model_options(cp)
    _corpus_options(cp)
    cp.add_argument("--method", default="ratio-ais", choices=("ratio-ais", "difference"))
    cp.add_argument("--path", default="convex", choices=("convex", "geometric"))
    cp.add_argument("--direction", default="both", choices=("forward", "reverse", "both"))
    cp.add_argument("--temperatures", type=at_least(1), default=1000)
    cp.add_argument("--chains", type=at_least(1), default=4, help="chains per document and direction")
    cp.add_argument("--start", default="ais", choices=("ais", "burn-in"))
    cp.add_argument("--start-temperatures", type=at_least(1), default=2000, help="prior -> B (start ais)")
    cp.add_argument("--burn-in", type=at_least(0), default=200)
    cp.add_argument("--schedule", default="sigmoid", choices=SCHEDULES)
    cp.add_argument("--no-align-topics", dest="align_topics", action="store_false",
                    help="do not relabel B's topics to match A's")
    cp.add_argument("--estimator", default="left-to-right", help="for --method difference")
    cp.add_argument("--particles", type=at_least(1), default=None, help="for --method difference")
    _run_options(cp)
    cp.set_defaults(func=_cmd_compare)

    cv = _sub(sub, "curve", "Iteration-AIS: log P(w | M_i) for a sequence of models (snapshots)")
    cv.add_argument("paths", nargs="+", help="MODEL_1 ... MODEL_K DOCS")
    add_model_options(cv)
    _corpus_options(cv)
    cv.add_argument("--temperatures", type=at_least(1), default=500, help="per segment M_{i-1} -> M_i")
    cv.add_argument("--first-temperatures", type=at_least(1), default=2000, help="prior -> M_1")
    cv.add_argument("--chains", type=at_least(1), default=2)
    cv.add_argument("--schedule", default="sigmoid", choices=SCHEDULES)
    cv.add_argument("--align-topics", action="store_true", help="relabel each model's topics to match")
    _run_options(cv)
    cv.set_defaults(func=_cmd_curve)

    cs = _sub(sub, "csl", "CSL lower bound on log P(x) from a model's Markov chain (Bengio et al.)")
    cs.add_argument("model", help="topic model (any readable format), or an RBM .npz (arrays W, b, c)")
    cs.add_argument("data", help="documents for a topic model; for an RBM 0/1 rows (text or .npz "
                                 "with X) or digits:test / digits:train")
    add_model_options(cs)
    _corpus_options(cs)
    cs.add_argument("--samples", type=at_least(1), default=10000,
                    help="latent states (biased: consecutive states per chain)")
    cs.add_argument("--thin", type=at_least(1), default=1)
    cs.add_argument("--burn-in", type=at_least(0), default=100)
    cs.add_argument("--chains", type=at_least(1), default=10)
    cs.add_argument("--biased", action="store_true", help="chains started at each test item")
    cs.add_argument("--doc-length", type=at_least(1), default=csl_lda.DOC_LENGTH,
                    help="LDA: tokens of each generated document (longer mixes more slowly)")
    cs.add_argument("--sweeps", type=at_least(0), default=csl_lda.SWEEPS,
                    help="LDA: collapsed Gibbs sweeps over the generated topics per step")
    cs.add_argument("--exact-prior", action="store_true",
                    help="LDA: draw theta from the prior (CSL = is-prior-theta)")
    _run_options(cs)
    cs.set_defaults(func=_cmd_csl)

    co = _sub(sub, "coherence", "topic coherence over a reference corpus (UMass, UCI, NPMI, C_V)")
    co.add_argument("model", help="model file (any readable format), or a text file with one topic "
                                  "(its words) per line")
    co.add_argument("reference", help="reference corpus: text, one document per line (streamed)")
    add_model_options(co)
    co.add_argument("--measure", default="umass,npmi,c_v", help="comma-separated: umass,uci,npmi,c_v")
    co.add_argument("--topn", type=at_least(1), default=10)
    co.add_argument("--window", type=at_least(1), default=None, help="sliding window (default 10; c_v 110)")
    co.add_argument("--umass-form", default="gensim", choices=("gensim", "mimno"))
    co.add_argument("--zero", default="epsilon", choices=("epsilon", "limit"),
                    help="NPMI of pairs that never co-occur: gensim's epsilon value, or -1")
    co.add_argument("--workers", type=at_least(1), default=1)
    co.add_argument("--encoding", default="utf-8", type=text_encoding,
                   help="character encoding of the reference (default utf-8)")
    _dask_option(co)
    co.add_argument("--json", default=None)
    co.set_defaults(func=_cmd_coherence)

    dv = _sub(sub, "diversity", "topic diversity, and exclusivity (stm) for a model")
    dv.add_argument("model", help="model file (any readable format), or a text file of topics")
    add_model_options(dv)
    dv.add_argument("--topn", type=at_least(1), default=25)
    dv.add_argument("--json", default=None)
    dv.set_defaults(func=_cmd_diversity)

    bc = _sub(sub, "bcubed", "B-Cubed, purity, inverse purity and NMI of labels against gold labels")
    bc.add_argument("pred", help="predicted labels, one per line (or .npy: labels or doc-topic matrix)")
    bc.add_argument("gold", help="gold labels, one per line (or .npy)")
    bc.add_argument("--json", default=None)
    bc.set_defaults(func=_cmd_bcubed)

    if command is None or command not in EXAMPLES:  # not one of the commands built here
        from . import cli_evaluate, cli_intrusion

        cli_intrusion.add_parsers(sub)
        cli_evaluate.add_parsers(sub)

    rp = _sub(sub, "report", "one self-contained HTML report from the --json outputs of any commands")
    rp.add_argument("results", nargs="+", help="JSON files written with --json")
    rp.add_argument("-o", "--output", default="report.html")
    rp.add_argument("--title", default="tealeaves report")
    rp.add_argument("--figures", default=None, metavar="DIR",
                    help="also write every chart as SVG (and PNG with the plot extra) into DIR")
    rp.set_defaults(func=_cmd_report)

    cvt = _sub(sub, "convert", "save any readable model as tealeaves' own .npz (data, no pickle)")
    cvt.add_argument("model", help=MODEL_HELP)
    cvt.add_argument("model_out", metavar="OUT.npz", help="the .npz to write")
    add_model_options(cvt)
    cvt.set_defaults(func=_cmd_convert)

    m = _sub(sub, "methods", "list estimators and their parameters")
    m.set_defaults(func=_cmd_methods)

    w = _sub(sub, "warm-up", "compile and cache every numba kernel now, so that no later command "
                             "compiles (about 30 CPU-seconds, once per install)")
    w.add_argument("--json", default=None, help="write the seconds of each part as JSON")
    w.add_argument("--quiet", action="store_true", help="no line per part")
    w.set_defaults(func=_cmd_warm_up)

    s = _sub(sub, "synth", "write a random LDA model and documents drawn from it")
    s.add_argument("model_out")
    s.add_argument("docs_out")
    s.add_argument("--topics", type=at_least(1), default=20)
    s.add_argument("--words", type=at_least(1), default=1000)
    s.add_argument("--docs", type=at_least(1), default=50)
    s.add_argument("--length", type=at_least(1), default=100)
    s.add_argument("--beta", type=above(0), default=0.01)
    s.add_argument("--alpha-sum", type=above(0), default=5.0)
    s.add_argument("--alpha-shape", default="harmonic", choices=synthetic.ALPHA_SHAPES)
    s.add_argument("--seed", type=at_least(0), default=0)
    s.set_defaults(func=_cmd_synth)
    return p


def _sub(sub: Any, name: str, help_text: str) -> argparse.ArgumentParser:
    return sub.add_parser(name, help=help_text, description=help_text,
                          epilog=f"example: {EXAMPLES[name]}")


def _corpus_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", default=None, choices=("text", "ids", "npz"),
                   help="documents' format (default: from the extension; text)")
    p.add_argument("--tokenize", default="whitespace", choices=("whitespace", "default"),
                   help="text documents: split on whitespace (preprocessed text, the default) or "
                        "'default' = lower-cased runs of letters (raw text)")
    p.add_argument("--strict", action="store_true",
                   help="out-of-vocabulary tokens and empty documents are errors")
    p.add_argument("--encoding", default="utf-8", type=text_encoding,
                   help="character encoding of text files (default utf-8)")


def _run_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--seed", type=at_least(0), default=0)
    p.add_argument("--workers", type=at_least(1), default=1, help="local processes")
    _dask_option(p)
    p.add_argument("--bootstrap", type=at_least(0), default=10000, help="bootstrap resamples for the sd")
    p.add_argument("--max-hours", type=above(0), default=None, metavar="HOURS",
                   help="stop before starting a run estimated to take longer (default 24)")
    p.add_argument("--json", default=None, help="write results as JSON")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def _dask_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--dask", default=None, metavar="ADDRESS",
                   help=f"run on the Dask cluster at ADDRESS (tcp://host:8786; default ${DASK_ENV})")
    p.add_argument("--dask-min-seconds", type=not_below(0), default=None, metavar="S",
                   help=f"with --dask, jobs estimated under S seconds run here, not on the cluster "
                        f"(default {DASK_MIN_SECONDS:g}; 0: always the cluster)")


def _common(p: argparse.ArgumentParser, task: str) -> None:
    p.add_argument("model", help=MODEL_HELP)
    p.add_argument("docs", help="documents: text (one per line), word ids, or .npz")
    add_model_options(p)
    _corpus_options(p)
    g = p.add_argument_group("estimator parameters (table 1 of Wallach et al. 2009)")
    for name, kind in METHOD_OPTIONS.items():
        g.add_argument("--" + name.replace("_", "-"), dest=name, type=kind, default=None,
                       metavar=name.upper(), help=_param_help(name, task))
    g.add_argument("--no-resample", dest="resample", action="store_true", default=None,
                   help=argparse.SUPPRESS)  # replaced by --variant: a one-line error says so
    p.add_argument("--runs", type=at_least(1), default=1, help="independent runs per document")
    a = p.add_argument_group("accuracy")
    a.add_argument("--target-sd", type=above(0), default=None, metavar="NATS",
                   help="nats per token: double each document's budget (particles, temperatures, ...) "
                        "until its run-to-run sd per token is below this and two budgets agree")
    a.add_argument("--check", type=at_least(0), default=0, metavar="K",
                   help="cross-check on K random documents against an independent reference "
                        "(exact if short enough, else long AIS) and report the bias per token")
    a.add_argument("--check-temperatures", type=at_least(1), default=CHECK_TEMPERATURES, metavar="S",
                   help=f"temperatures of the AIS reference of --check (default {CHECK_TEMPERATURES})")
    _run_options(p)
    p.add_argument("--csv", default=None, help="write per-document results as CSV")


def _method_list(args: argparse.Namespace) -> list[str]:
    if args.method and args.methods:
        raise MethodError("give --method or --methods, not both")
    text = args.methods or args.method or "left-to-right"
    names = [m.strip() for m in text.split(",") if m.strip()]
    if not names:
        raise MethodError("no method given")
    return names


def _param_help(name: str, task: str) -> str:
    """Which methods take the parameter, what it is and its default there."""
    parts = []
    for method in method_names(task):
        p = get_method(method, task).params_for(task).get(name)
        if p is not None:
            named = p.choices and all(str(c) in p.help for c in p.choices)
            choices = f"; one of {', '.join(map(str, p.choices))}" if p.choices and not named else ""
            parts.append(f"{method}: {p.help} (default {p.default}{choices})")
    return "; ".join(parts)


def _params_for(args: argparse.Namespace, names: list[str], task: str) -> list[dict[str, Any]]:
    if getattr(args, "resample", None):
        raise MethodError("--no-resample was replaced by --variant extend-only (and --variant "
                          "algorithm-3 is the paper's algorithm 3; the default smc is unbiased)")
    given = {k: getattr(args, k) for k in METHOD_OPTIONS if getattr(args, k) is not None}
    specs = [get_method(n, task) for n in names]
    accepted = [s.params_for(task) for s in specs]
    for k in given:
        if not any(k in a for a in accepted):
            raise MethodError(f"--{k.replace('_', '-')} does not apply to {', '.join(names)}")
    return [{k: v for k, v in given.items() if k in a} for a in accepted]


def _read_docs(args: argparse.Namespace, path: str, model: TopicModel) -> Corpus:
    docs = read_corpus(path, vocab=model.vocab, format=args.format, strict=args.strict,
                       tokenizer=args.tokenize, encoding=args.encoding)  # --vocab is on the model
    check_scorable(docs, path)
    return docs


def _cmd_heldout(args: argparse.Namespace) -> int:
    names = _method_list(args)
    params = _params_for(args, names, args.task)
    model = load_model_arg(args, args.model)
    docs = _read_docs(args, args.docs, model)
    progress = None if not args.quiet else False
    results = []
    for name, p in zip(names, params, strict=True):
        common = dict(runs=args.runs, seed=args.seed, workers=args.workers,
                      bootstrap=args.bootstrap, progress=progress, target_sd=args.target_sd,
                      check=args.check, check_temperatures=args.check_temperatures,
                      max_hours=args.max_hours)
        if args.task == "completion":
            res = completion(model, docs, method=name, observed=args.observed, split=args.split,
                             **common, **p)
        else:
            res = heldout(model, docs, method=name, **common, **p)
        results.append(res)
    _print_corpus(docs.report(), model.num_words)
    print(format_table(results))
    for line in result_notes(results):
        print(line)
        if line.startswith(("warning", "  warning")):
            print(f"tealeaves: {line.strip()}", file=sys.stderr)
    _write_outputs(args, results, {"command": args.task, "model": args.model, "docs": args.docs})
    return 0


def result_notes(results: list[HeldoutResult]) -> list[str]:
    """Under the table: what kind of number each estimate is, the cross-check, the budgets."""
    lines = []
    for r in results:
        lines.append(f"{r.label}: {r.note}")
        if r.compile_seconds >= 0.1:
            lines.append(f"  {r.compile_seconds:.1f} s compiling or loading the numba kernels before the "
                         "timed part (not in seconds)")
        spec = get_method(r.method)
        caution = spec.caution(r.params) if spec.caution else None
        if caution:
            lines.append(f"  warning: {caution}")
        if r.check is not None:
            lines.append("  " + describe_check(r.check))
        if r.adaptive is not None:
            a = r.adaptive
            b = np.array(a["budgets"])
            lines.append(f"  target sd {a['target_sd']} nats per token: {a['budget_parameter']} per "
                         f"document median {int(np.median(b))}, max {int(b.max())}; "
                         f"{a['not_converged']} document(s) did not converge")
    return lines


def _print_corpus(rep: dict[str, Any], vocab_size: int) -> None:
    line = (f"{rep['documents']} documents, {rep['tokens']} tokens scored, "
            f"{rep['oov_tokens']} dropped (not among the model's {vocab_size} words), "
            f"{rep['empty_documents']} empty documents")
    if rep.get("tokenizer_dropped"):
        line += f"; {rep['tokenizer_dropped']} string(s) removed whole by the tokenizer"
    print(line)
    if rep["oov_top_words"]:
        top = ", ".join(f"{w} x{c}" for w, c in rep["oov_top_words"].items())
        print(f"most frequent dropped words: {top}")


def format_table(results: list[HeldoutResult]) -> str:
    """method, total ± sd, [vs exact], per token, perplexity, tokens scored/dropped, seconds."""
    exact = next((r for r in results if r.method == "exact"), None)
    head = ["method", "total log-lik", "± sd"]
    if exact is not None:
        head.append("vs exact")
    head += ["per token", "perplexity", "tokens", "dropped", "seconds"]
    rows = []
    for r in results:
        row = [r.label, f"{r.total:.2f}", "" if math.isnan(r.sd) else f"{r.sd:.2f}"]
        if exact is not None:
            row.append(f"{r.total - exact.total:+.2f}")
        row += [f"{r.per_token:.4f}", perplexity_text(r.perplexity), str(r.tokens),
                str(r.corpus.get("oov_tokens", 0)), f"{r.seconds:.2f}"]
        rows.append(row)
    widths = [max(len(x) for x in col) for col in zip(head, *rows, strict=True)]
    lines = ["  ".join(h.ljust(w) if i == 0 else h.rjust(w) for i, (h, w) in
                       enumerate(zip(cells, widths, strict=True)))
             for cells in [head, *rows]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _write_outputs(args: argparse.Namespace, results: list[HeldoutResult], meta: dict) -> None:
    """--json and --csv (each written whole, via a temporary file)."""
    if getattr(args, "json", None):
        write_json(args.json, {**meta, "results": [r.to_dict() for r in results]})
    if getattr(args, "csv", None):
        with atomic_path(args.csv) as tmp, open(tmp, "w", newline="", encoding="utf-8") as fh:
            w = csvout.writer(fh)
            runs = max(r.runs for r in results)
            w.writerow(["method", "label", "document", "tokens", "log_prob",
                        *[f"run_{i}" for i in range(runs)]])
            for r in results:
                for d, (lp, n) in enumerate(zip(r.doc_log_prob, r.doc_tokens, strict=True)):
                    w.writerow([r.method, r.label, d, int(n), repr(float(lp)),
                                *[repr(float(v)) for v in r.run_log_prob[:, d]]])


DEMO_METHODS: list[tuple[str, dict[str, Any]]] = [
    ("exact", {}),
    ("left-to-right", {}),
    ("left-to-right", {"particles": 100, "variant": "algorithm-3"}),
    ("left-to-right", {"particles": 100, "variant": "extend-only"}),
    ("chib", {"chain_length": 400}),
    ("ais", {"temperatures": 1000}),
    ("is-iterated", {"samples": 1000}),
    ("is-pzw", {"samples": 1000}),
    ("is-prior-theta", {"samples": 1000}),
    ("harmonic-mean", {"burn_in": 500, "samples": 500}),
]


def example_paths() -> tuple[str, str]:
    base = resources.files("tealeaves") / "data"
    return str(base / "example_model.npz"), str(base / "example_docs.txt")


def _cmd_demo(args: argparse.Namespace) -> int:
    if not args.synthetic:
        from .demo import run_demo
        from .report import render

        sections = run_demo(quick=args.quick, seed=args.seed, workers=args.workers,
                            progress=False if args.quiet else None)
        report = "tealeaves-demo.html" if args.report is None else args.report
        if report:
            write_text(report, render([{"sections": sections}], "tealeaves demo: State of the Union"))
            print(f"report -> {report}")
        if args.json:
            write_json(args.json, {"command": "demo", "sections": sections})
        return 0
    model_path, docs_path = example_paths()
    model = load_model(model_path)
    docs = read_corpus(docs_path, vocab=model.vocab)
    lengths = docs.lengths
    print(f"tealeaves demo: {len(docs)} held-out documents of {lengths.min()}-{lengths.max()} "
          f"tokens under a bundled {model.num_topics}-topic synthetic model "
          f"(V={model.num_words}); {args.runs} runs per method.\n"
          "The exact value is computable here, so every estimator can be judged against it.\n")
    progress = None if not args.quiet else False
    results = [heldout(model, docs, method=m, runs=1 if m == "exact" else args.runs,
                       seed=args.seed, workers=args.workers, progress=progress, **p)
               for m, p in DEMO_METHODS]
    print(format_table(results))
    print("\nThe default left-to-right (SMC), Chib-style, AIS and iterated importance sampling land on the\n"
          "exact value; algorithm 3 and extend-only converge elsewhere; the harmonic mean overestimates\n"
          "and simple importance sampling underestimates (Wallach et al. 2009).")
    meta = {"command": "demo", "model": model_path, "docs": docs_path}
    _write_outputs(args, results, meta)
    if args.report:
        from .report import render

        doc = {**meta, "results": [r.to_dict() for r in results]}
        write_text(args.report, render([doc], "tealeaves demo --synthetic: every estimator against exact"))
        print(f"report -> {args.report}")
    return 0


def _cmd_compare(args: argparse.Namespace) -> int:
    from .compare import compare

    a = load_model_arg(args, args.model_a)
    b = load_model_arg(args, args.model_b)
    docs = _read_docs(args, args.docs, a)
    extra = {"particles": args.particles} if args.particles is not None else {}
    res = compare(a, b, docs, method=args.method, path=args.path, direction=args.direction,
                  temperatures=args.temperatures, chains=args.chains, start=args.start,
                  start_temperatures=args.start_temperatures, burn_in=args.burn_in,
                  schedule=args.schedule, align_topics=args.align_topics, seed=args.seed,
                  workers=args.workers, bootstrap=args.bootstrap,
                  progress=None if not args.quiet else False, estimator=args.estimator,
                  max_hours=args.max_hours, **extra)
    _print_corpus(docs.report(), a.num_words)
    print(format_compare(res, args.model_a, args.model_b))
    if args.json:
        write_json(args.json, {"command": "compare", "model_a": args.model_a,
                               "model_b": args.model_b, "docs": args.docs, "result": res.to_dict()})
    return 0


def format_compare(res: CompareResult, path_a: str, path_b: str) -> str:
    """Which model wins, by how much per token, how sure (about the population and about these
    documents), and how many documents favour each."""
    boot = res.document_bootstrap()
    p = res.params
    how = (f"{res.method} ({p['path']} path, {p['direction']}, {p['temperatures']} temperatures, "
           f"{p['chains']} chains)" if res.method == "ratio-ais" else
           f"difference of two {p['estimator']} runs")
    lines = [f"A = {path_a}", f"B = {path_b}", f"{how}:",
             f"  log P(W|A) - log P(W|B) = {res.total:+.2f} nats over {res.tokens} tokens in "
             f"{res.documents} documents (sd over chains {res.sd_chains:.2f}, over documents "
             f"{boot['sd_total']:.2f})",
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
    from .compare import training_curve

    if len(args.paths) < 2:
        raise MethodError("curve needs at least one model and the documents: MODEL_1 ... MODEL_K DOCS")
    model_paths, docs_path = args.paths[:-1], args.paths[-1]
    models = [load_model_arg(args, p) for p in model_paths]
    docs = _read_docs(args, docs_path, models[0])
    res = training_curve(models, docs, temperatures=args.temperatures,
                         first_temperatures=args.first_temperatures, chains=args.chains,
                         schedule=args.schedule, align_topics=args.align_topics, seed=args.seed,
                         workers=args.workers, bootstrap=args.bootstrap,
                         progress=None if not args.quiet else False, max_hours=args.max_hours)
    _print_corpus(docs.report(), models[0].num_words)
    width = max(len(p) for p in model_paths)
    print(f"{'model'.ljust(width)}  {'total log-lik':>14}  {'± sd':>7}  {'per token':>10}  "
          f"{'perplexity':>10}")
    for p, tot, sd, pt, pp in zip(model_paths, res.totals, res.sd, res.per_token, res.perplexity,
                                  strict=True):
        print(f"{p.ljust(width)}  {tot:14.2f}  {sd:7.2f}  {pt:10.4f}  {pp:10.2f}")
    if args.json:
        write_json(args.json, {"command": "curve", "models": model_paths, "docs": docs_path,
                               "result": res.to_dict()})
    return 0


def _cmd_csl(args: argparse.Namespace) -> int:
    from .csl import LdaChain, load_rbm

    exact = None
    if _is_rbm(args.model):
        model = load_rbm(args.model)
        data = _read_binary_rows(args.data, model.num_visible)
        what = f"RBM {model.num_visible} visible x {model.num_hidden} hidden, {len(data)} test items"
        if min(model.num_visible, model.num_hidden) <= 20:
            exact = float(model.log_prob_exact(data).mean())
    else:
        topic_model = load_model_arg(args, args.model)
        data = _read_docs(args, args.data, topic_model)
        model = LdaChain(topic_model, doc_length=args.doc_length, sweeps=args.sweeps,
                         exact_prior=args.exact_prior)
        what = f"LDA {topic_model.num_topics} topics, {len(data)} documents"
    res = csl(model, data, samples=args.samples, thin=args.thin, burn_in=args.burn_in,
              biased=args.biased, chains=args.chains, seed=args.seed, workers=args.workers,
              max_hours=args.max_hours)
    kind = "biased CSL (tends to overestimate)" if args.biased else "CSL (a lower bound in expectation)"
    print(f"{kind} on {what}: mean log P(x) = {res.mean:.4f} "
          f"({res.chain_steps} chain steps, {res.seconds:.1f} s)")
    if res.mixing.get("ess_median") is not None:
        print(f"chain mixing: median effective sample size {res.mixing['ess_median']:.0f} of "
              f"{res.mixing['samples']} states (smallest {res.mixing['ess_min']:.0f}, over "
              f"{res.mixing['items_checked']} items)")
    if res.mixing.get("warning"):
        print(f"tealeaves: warning: {res.mixing['warning']}", file=sys.stderr)
    if exact is not None:
        print(f"exact mean log P(x) = {exact:.4f}")
        res.extra["exact_mean"] = exact
    if args.json:
        write_json(args.json, {"command": "csl", "model": args.model, "data": args.data,
                               "result": res.to_dict()})
    return 0


def _cmd_coherence(args: argparse.Namespace) -> int:
    from .coherence import MEASURES, coherence, count, topic_words

    names = [m.strip() for m in args.measure.split(",") if m.strip()]
    for m in names:
        if m not in MEASURES:
            raise MethodError(f"unknown coherence measure {m!r} (known: {', '.join(MEASURES)})")
    topics = load_topics_arg(args, args.model)
    words = topic_words(topics, args.topn)
    reference = args.reference
    if reference.endswith(".npz"):
        reference = read_corpus(reference)
    results = []
    cache: dict = {}
    targets = sorted({w for t in words for w in t})
    for m in names:
        opts = {"form": args.umass_form} if m == "umass" else ({} if m == "uci" else {"zero": args.zero})
        win = None if m == "umass" else (args.window or (110 if m == "c_v" else 10))
        if win not in cache:
            cache[win] = count(reference, targets, window=win, workers=args.workers, encoding=args.encoding)
        results.append(coherence(words, reference, measure=m, topn=args.topn,
                                 window=None if m == "umass" else win, counts=cache[win], **opts))
    head = ["topic"] + names + ["top words"]
    rows = []
    for k, t in enumerate(words):
        miss = set().union(*(set(r.missing[k]) for r in results))
        shown = " ".join(w + ("*" if w in miss else "") for w in t)
        rows.append([str(k)] + [f"{r.per_topic[k]:.4f}" for r in results] + [shown])
    rows.append(["mean"] + [f"{r.mean:.4f}" for r in results] + [""])
    widths = [max(len(x) for x in col) for col in zip(head, *rows, strict=True)]
    for cells in [head, *rows]:
        print("  ".join(c.rjust(w) if i and i <= len(names) else c.ljust(w)
                        for i, (c, w) in enumerate(zip(cells, widths, strict=True))).rstrip())
    nmiss = sum(len(m) for m in results[0].missing)
    if nmiss:
        print(f"* {nmiss} top words do not occur in the reference; pairs with them are undefined: "
              "umass uses gensim's value 0 for them, the other measures leave them out")
    if args.json:
        write_json(args.json, {"command": "coherence", "model": args.model,
                               "reference": args.reference, "results": [r.to_dict() for r in results]})
    return 0


def _cmd_diversity(args: argparse.Namespace) -> int:
    from .coherence import diversity, exclusivity

    topics = load_topics_arg(args, args.model)
    div = diversity(topics, args.topn)
    print(f"topic diversity (unique share of the top {args.topn} words): {div:.4f}")
    out: dict[str, Any] = {"diversity": div, "topn": args.topn}
    if isinstance(topics, TopicModel):
        ex = exclusivity(topics)
        print(f"exclusivity (stm, FREX over top 10, weight 0.7): mean {ex.mean():.4f}, "
              f"per topic {' '.join(f'{v:.2f}' for v in ex)}")
        out["exclusivity"] = [float(v) for v in ex]
    if args.json:
        write_json(args.json, {"command": "diversity", "model": args.model, **out})
    return 0


MISSING_LABELS = ("", "nan", "na", "n/a", "none", "null")


def _read_labels(path: str):
    import numpy as np

    from .errors import InputFileError

    if path.endswith(".npy"):
        from .records import check_proportions, read_npy

        labels = read_npy(path, "labels")
        if labels.ndim == 2:  # a doc-topic matrix: its argmax
            return check_proportions(labels, path, rows_sum_to_one=False)
        return labels
    labels = [line.strip() for _, line in read_lines(path)]
    for i, label in enumerate(labels, 1):
        if label.lower() in MISSING_LABELS:
            raise InputFileError(f"{path}:{i}: missing label {label!r} (every item needs one; a blank line "
                                 "would shift every label after it)")
    return np.array(labels)


def _cmd_bcubed(args: argparse.Namespace) -> int:
    from .clustering import bcubed, inverse_purity, nmi, purity

    pred, gold = _read_labels(args.pred), _read_labels(args.gold)
    if len(pred) != len(gold):
        raise MethodError(f"{args.pred} has {len(pred)} labels but {args.gold} has {len(gold)}")
    res = bcubed(pred, gold)
    extra = {"purity": purity(pred, gold), "inverse_purity": inverse_purity(pred, gold),
             "nmi": nmi(pred, gold)}
    print(f"B-Cubed over {len(res.item_precision)} items: precision {res.precision:.4f}, "
          f"recall {res.recall:.4f}, F {res.f:.4f} (mean of item F; F of the means {res.f_of_means:.4f})")
    print(f"purity {extra['purity']:.4f}, inverse purity {extra['inverse_purity']:.4f}, "
          f"NMI {extra['nmi']:.4f}")
    if args.json:
        write_json(args.json, {"command": "bcubed", **res.to_dict(), **extra})
    return 0


def _is_rbm(path: str) -> bool:
    import zipfile

    try:
        with zipfile.ZipFile(path) as z:
            return "W.npy" in z.namelist()
    except ARCHIVE_ERRORS:
        return False


def _read_binary_rows(path: str, width: int):
    import numpy as np

    from .csl import load_digits_binary

    if path in ("digits:test", "digits:train"):
        train, test = load_digits_binary()
        X = test if path.endswith("test") else train
    elif path.endswith(".npz"):
        check_array_file(path)
        try:
            with np.load(path, allow_pickle=False) as f:
                X = np.asarray(f["X"], dtype=np.float64)
        except ARCHIVE_ERRORS as exc:
            raise InvalidCorpusError(f"{path}: expected an .npz with a 0/1 array X ({exc})") from None
    else:
        rows = [line.split() for _, line in read_lines(path) if line.strip()]
        try:
            X = np.array(rows, dtype=np.float64)
        except ValueError as exc:
            raise InvalidCorpusError(f"{path}: expected rows of 0/1 values of equal length ({exc})") from None
    if X.ndim != 2 or X.shape[1] != width or not np.isin(X, (0.0, 1.0)).all():
        raise InvalidCorpusError(f"{path}: expected 0/1 rows of width {width}, got shape {X.shape}")
    return X


def _cmd_report(args: argparse.Namespace) -> int:
    from .report import write_report

    write_report(args.results, args.output, args.title)
    print(f"report -> {args.output}")
    if args.figures:
        from .report import load_results, write_figures

        docs = load_results(args.results)
        print(f"{len(write_figures(docs, args.figures))} figures -> {args.figures}")
    return 0


def _cmd_convert(args: argparse.Namespace) -> int:
    model = load_model_arg(args, args.model)
    save_model(model, args.model_out)
    vocab = "with its vocabulary" if model.vocab else "without a vocabulary"
    out = atomic.with_extension(args.model_out, ".npz")
    print(f"{args.model} -> {out}: {model.num_topics} topics, {model.num_words} words, {vocab}, "
          f"alpha sum {model.alpha_sum:.4g}" + ("" if model.beta is None else f", beta {model.beta:.4g}"))
    return 0


def _cmd_methods(args: argparse.Namespace) -> int:
    for task in ("heldout", "completion"):
        print(f"{task} methods:")
        for name in method_names(task):
            spec = get_method(name, task)
            alias = f" (alias {', '.join(spec.aliases)})" if spec.aliases else ""
            print(f"  {name}{alias}: {spec.description}")
            for pname, p in spec.params_for(task).items():
                flag = pname.replace("_", "-")
                if p.kind is bool:
                    flag = f"no-{flag}" if p.default else flag
                print(f"      --{flag} (default {pname}={p.default}): {p.help}")
    return 0


def _cmd_warm_up(args: argparse.Namespace) -> int:
    from .warmup import warm_up

    res = warm_up(quiet=args.quiet)
    print(f"compiled or loaded every kernel in {res['seconds']:.1f} s")
    if args.json:
        write_json(args.json, res)
    return 0


def _cmd_synth(args: argparse.Namespace) -> int:
    for name in ("topics", "words", "docs", "length"):
        if getattr(args, name) < 1:
            raise MethodError(f"--{name} must be >= 1")
    if not (args.beta > 0 and args.alpha_sum > 0):
        raise MethodError("--beta and --alpha-sum must be > 0")
    model = synthetic.random_model(args.topics, args.words, beta=args.beta,
                                   alpha_sum=args.alpha_sum, alpha_shape=args.alpha_shape,
                                   seed=args.seed)
    docs = synthetic.generate(model, args.docs, args.length, seed=args.seed + 1)
    save_model(model, args.model_out)
    write_text_corpus(docs, args.docs_out)
    out = atomic.with_extension(args.model_out, ".npz")
    print(f"wrote {out} ({model.num_topics} topics, {model.num_words} words) and "
          f"{args.docs_out} ({len(docs)} documents of {args.length} tokens)")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
