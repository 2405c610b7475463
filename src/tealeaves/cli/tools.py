"""`tealeaves demo`, `report`, `convert`, `warm-up` and `synth`: the tools around the measures."""

from __future__ import annotations

import argparse
from importlib import resources
from typing import Any

from .. import synthetic
from ..corpus import write_text_corpus
from ..datasets import load_model, read_corpus
from ..errors import MethodError
from ..files import atomic
from ..files.atomic import write_text
from ..heldout import heldout
from ..io import save_model
from ..model import TopicModel
from ..output.jsonout import write_json
from ..util.limits import above, at_least
from .heldout import format_table, write_outputs
from .options import (
    MODEL_HELP,
    add_model_options,
    load_kind_arg,
    sub_parser,
)

# CPU seconds of `tealeaves demo --quick` and of the full demo on this project's 2-core machine,
# kernels compiled (benchmarks/estimates.py --part demo; tests/test_doc_figures.py keeps them equal
# to its JSON)
DEMO_CPU_SECONDS = {"quick": 10, "full": 351}

EXAMPLES = {
    "demo": "tealeaves demo --report demo.html   (or --quick; --synthetic for the exact-value check)",
    "report": "tealeaves report heldout.json coherence.json scores.json -o report.html",
    "convert": "tealeaves convert lda.gensim lda.npz --allow-pickle   (or a MALLET state, tomotopy, "
               "scikit-learn pickle, pyLDAvis JSON with --alpha)",
    "warm-up": "tealeaves warm-up   (once after installing or upgrading: compiles every numba kernel)",
    "synth": "tealeaves synth model.npz docs.txt --topics 20 --words 1000 --docs 50 --length 100",
}


def _add_demo(sub: Any) -> None:
    d = sub_parser(EXAMPLES, sub, "demo",
                   "evaluate the bundled State of the Union models end to end, with an HTML report")
    d.add_argument("--quick", action="store_true",
                   help=f"small settings: about {DEMO_CPU_SECONDS['quick']} CPU seconds (the full demo "
                        f"about {DEMO_CPU_SECONDS['full']}), plus the kernels' compilation on first use")
    d.add_argument("--report", default=None,
                   help="HTML report path (default tealeaves-demo.html; --synthetic: none unless given; "
                        "'' for none)")
    d.add_argument("--synthetic", action="store_true",
                   help="instead: every estimator against the exact value on a small synthetic example")
    d.add_argument("--runs", type=at_least(1), default=5, help="runs per method (--synthetic)")
    d.add_argument("--seed", type=at_least(0), default=0)
    d.add_argument("--workers", type=at_least(1), default=1)
    d.add_argument("--json", default=None, help="write results as JSON")
    d.add_argument("--quiet", action="store_true", help="no progress bar")
    d.set_defaults(func=_cmd_demo)


def _add_report(sub: Any) -> None:
    rp = sub_parser(EXAMPLES, sub, "report",
                    "one self-contained HTML report from the --json outputs of any commands")
    rp.add_argument("results", nargs="+", help="JSON files written with --json")
    rp.add_argument("-o", "--output", default=None,
                    help="the HTML report (default report.html, none if only --latex or --markdown is given)")
    rp.add_argument("--title", default="tealeaves report")
    rp.add_argument("--latex", default=None, metavar="FILE",
                    help="also every table as booktabs LaTeX (\\usepackage{booktabs}) in FILE")
    rp.add_argument("--markdown", default=None, metavar="FILE",
                    help="also every table as GitHub Markdown in FILE")
    rp.add_argument("--figures", default=None, metavar="DIR",
                    help="also write every chart as SVG (and PNG with the plot extra) into DIR")
    rp.set_defaults(func=_cmd_report)


def _add_convert(sub: Any) -> None:
    cvt = sub_parser(EXAMPLES, sub, "convert",
                     "save any readable model as a .npz of data (no pickle): an LDA in tealeaves' "
                     "format, any other model with topic-word weights as plain arrays")
    cvt.add_argument("model", help=MODEL_HELP)
    cvt.add_argument("model_out", metavar="OUT.npz", help="the .npz to write")
    add_model_options(cvt)
    cvt.set_defaults(func=_cmd_convert)


def _add_warm_up(sub: Any) -> None:
    w = sub_parser(EXAMPLES, sub, "warm-up",
                   "compile and cache every numba kernel now, so that no later command "
                   "compiles (about 30 CPU-seconds, once per install)")
    w.add_argument("--json", default=None, help="write the seconds of each part as JSON")
    w.add_argument("--quiet", action="store_true", help="no line per part")
    w.set_defaults(func=_cmd_warm_up)


def _add_synth(sub: Any) -> None:
    s = sub_parser(EXAMPLES, sub, "synth", "write a random LDA model and documents drawn from it")
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


PARSERS = {  # command -> what adds its parser (`main.COMMANDS` lists them in order)
    "demo": _add_demo,
    "report": _add_report,
    "convert": _add_convert,
    "warm-up": _add_warm_up,
    "synth": _add_synth,
}


DEMO_METHODS: list[tuple[str, dict[str, Any]]] = [
    ("exact", {}),
    ("left-to-right", {}),
    ("left-to-right", {"particles": 100, "variant": "algorithm-3"}),
    ("left-to-right", {"particles": 100, "variant": "extend-only"}),
    ("chib", {"chain_length": 400}),
    ("ais", {"temperatures": 1000}),
    ("bridge", {}),
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
        from ..report import render
        from .demo import run_demo

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
    print("\nThe default left-to-right (SMC), Chib-style, AIS, bridge and iterated importance sampling land\n"
          "on the exact value; algorithm 3 and extend-only converge elsewhere; the harmonic mean\n"
          "overestimates and simple importance sampling underestimates (Wallach et al. 2009).")
    meta = {"command": "demo", "model": model_path, "docs": docs_path}
    write_outputs(args, results, meta)
    if args.report:
        from ..report import render

        doc = {**meta, "results": [r.to_dict() for r in results]}
        write_text(args.report, render([doc], "tealeaves demo --synthetic: every estimator against exact"))
        print(f"report -> {args.report}")
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    from ..report import write_report

    out = args.output if args.output or args.latex or args.markdown else "report.html"
    write_report(args.results, out, args.title, latex=args.latex, markdown=args.markdown)
    for what, path in (("report", out), ("LaTeX tables", args.latex), ("Markdown tables", args.markdown)):
        if path:
            print(f"{what} -> {path}")
    if args.figures:
        from ..report import load_results, write_figures

        docs = load_results(args.results)
        print(f"{len(write_figures(docs, args.figures))} figures -> {args.figures}")
    return 0


# what each command needs of a model, for the line `convert` prints about a model that is not an LDA
CONVERT_COMMANDS = (("heldout", "heldout"), ("compare", "compare"), ("coherence", "coherence"),
                    ("diversity", "diversity"), ("diagnostics", "diagnostics"),
                    ("word intrusion", "intrusion words"), ("topic intrusion", "intrusion topics"))


def _cmd_convert(args: argparse.Namespace) -> int:
    from ..io.arrays import save_arrays
    from ..topics import Topics, why_not

    model = load_kind_arg(args, args.model)
    out = atomic.with_extension(args.model_out, ".npz")
    lost = []
    if isinstance(model, Topics) and model.lda is not None:
        if model.doc_topic is not None:
            lost.append("its training documents' proportions (doc_topic)")
        model = model.lda
    if isinstance(model, TopicModel):
        save_model(model, args.model_out)
        vocab = "with its vocabulary" if model.vocab else "without a vocabulary"
        print(f"{args.model} -> {out}: {model.num_topics} topics, {model.num_words} words, {vocab}, "
              f"alpha sum {model.alpha_sum:.4g}" + ("" if model.beta is None else f", beta {model.beta:.4g}")
              + (f"; not kept: {'; '.join(lost)}" if lost else ""))
        return 0
    lost += save_arrays(model, args.model_out)
    kinds = {"distributions": "topic-word distributions", "nonnegative": "non-negative topic-word weights",
             "signed": "signed topic-word weights"}
    parts = [kinds[str(model.weights_kind)], "its vocabulary" if model.vocab else "no vocabulary"]
    parts += ["the training documents' proportions"] if model.doc_topic is not None else []
    if model.prior == "logistic-normal":
        parts.append(f"a logistic-normal prior ({model.decoder} decoder)")
    yes = [cmd for metric, cmd in CONVERT_COMMANDS if why_not(metric, model) is None]
    no = [(cmd, why_not(metric, model)) for metric, cmd in CONVERT_COMMANDS if why_not(metric, model)]
    print(f"{args.model} -> {out}: {model.num_topics} topics of a {model.source} as plain arrays "
          f"({', '.join(parts)}), not an LDA")
    if yes:
        print(f"  these commands take {out}: {', '.join(yes)}")
    if no:
        reasons = dict.fromkeys(r.split(": ", 1)[-1] for _, r in no)
        print(f"  these do not ({'; '.join(reasons)}): {', '.join(c for c, _ in no)}")
    if lost:
        print(f"  not kept: {'; '.join(lost)}")
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
