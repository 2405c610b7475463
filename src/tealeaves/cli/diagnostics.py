"""`tealeaves diagnostics`: per-topic diagnostics (MALLET's, OCTIS's topic significance) and the
junk-topic flags."""

from __future__ import annotations

import argparse
from typing import Any

from ..errors import MethodError
from ..files import csvout
from ..files.atomic import atomic_path
from ..output.jsonout import write_json
from ..util.limits import at_least
from .options import add_model_options, corpus_options, load_kind_arg, sub_parser

EXAMPLES = {
    "diagnostics": "tealeaves diagnostics state.gz   (a MALLET --output-state: exact)  |  "
                   "tealeaves diagnostics model.npz docs.txt --json diag.json --csv diag.csv",
}
def _add_diagnostics(sub: Any) -> None:
    p = sub_parser(EXAMPLES, sub, "diagnostics",
                   "per-topic diagnostics (MALLET's 12, OCTIS's topic significance) and junk-topic flags")
    p.add_argument("model", help="a MALLET --output-state file (exact, from its token assignments, when "
                                 "no CORPUS is given), or a model file of any kind with topic-word "
                                 "distributions")
    p.add_argument("corpus", nargs="?", default=None,
                   help="the documents (text, one per line, or .npz): the model's training documents when "
                        "its own document-topic proportions are to be used")
    add_model_options(p)
    corpus_options(p)
    p.add_argument("--topn", type=at_least(1), default=20, help="top words per topic (MALLET's default 20)")
    p.add_argument("--burn-in", type=at_least(0), default=100,
                   help="an LDA without proportions for these documents: Gibbs sweeps before averaging")
    p.add_argument("--samples", type=at_least(1), default=200, help="... and sweeps averaged")
    p.add_argument("--seed", type=at_least(0), default=0)
    p.add_argument("--workers", type=at_least(1), default=1, help="local processes")
    p.add_argument("--json", default=None, help="write every value as JSON ('-': standard output)")
    p.add_argument("--csv", default=None, help="write one row per topic, every value, as CSV")
    p.set_defaults(func=_cmd_diagnostics)


PARSERS = {"diagnostics": _add_diagnostics}


def _cmd_diagnostics(args: argparse.Namespace) -> int:
    from ..datasets import bundled_model, read_corpus
    from ..diagnostics import EMPTY, EMPTY_TOKENS, THRESHOLDS, diagnostics
    from ..io import sniff_format
    from .options import check_scorable, report_corpus

    fmt = args.model_format
    report = None
    state = (fmt in (None, "mallet-state", "mallet") and not bundled_model(args.model)
             and sniff_format(args.model) == "mallet-state")
    if args.corpus is None and state:
        result = diagnostics(args.model, topn=args.topn)
    elif args.corpus is None:
        raise MethodError(f"{args.model}: not a MALLET state file, so diagnostics need the documents: give "
                          "CORPUS (tealeaves diagnostics MODEL CORPUS)")
    else:
        model = load_kind_arg(args, args.model)
        vocab = getattr(model, "vocab", None)
        docs = read_corpus(args.corpus, vocab=vocab, format=args.format, strict=args.strict,
                           tokenizer=args.tokenize, encoding=args.encoding)
        check_scorable(docs, args.corpus)
        report = report_corpus(docs, len(docs.vocab or ()))
        result = diagnostics(model, docs, topn=args.topn, burn_in=args.burn_in, samples=args.samples,
                             seed=args.seed, workers=args.workers)
    how = ("exact, from the state's token assignments" if result.counts == "assignments"
           else f"expected counts from document-topic proportions ({result.params['theta']})")
    print(f"{result.model}: {result.num_topics} topics, {result.params['documents']} documents, "
          f"{result.params['tokens']} tokens; {how}")
    print(result.table())
    flagged = result.flagged()
    limits = ", ".join([*(f"{k} {v:g}" for k, v in THRESHOLDS.items()),
                        f"{EMPTY} below {EMPTY_TOKENS:g} token"])
    print(f"{len(flagged)} of {result.num_topics} topics flagged, listed first (thresholds: {limits}; "
          "rare-words is a caution, the others mark junk: docs/guide/diagnostics.md); "
          "npmi@10: NPMI of the top 10 words over these documents (10-token windows, gensim "
          "convention); mallet-coh@20: MALLET's coherence of the top 20; every value: --json, --csv")
    if isinstance(result.params.get("npmi"), str):  # coherence flags not computed: never read as passed
        print(f"no coherence flags (incoherent, never-together, rare-words): {result.params['npmi']}")
    if args.json:
        write_json(args.json, {"command": "diagnostics", "model_path": args.model, "corpus": args.corpus,
                               **result.to_dict(), **({"corpus_report": report} if report else {})})
    if args.csv:
        with atomic_path(args.csv) as tmp, open(tmp, "w", newline="", encoding="utf-8") as fh:
            csvout.write_dicts(fh, result.rows())
    return 0
