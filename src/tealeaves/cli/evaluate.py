"""`tealeaves evaluate` (many models, one table) and `tealeaves select` (the number of topics):
the model-choice commands."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from ..coherence import ABSENT
from ..coherence.embeddings import FORMATS
from ..corpus import dropped_warning
from ..errors import MethodError, TealeavesError
from ..evaluate import COMPARE_MODES, DEFAULT_COHERENCE, STAGES, EvaluateOptions, evaluate
from ..evaluate.rows import Unreadable
from ..files import csvout
from ..files.atomic import atomic_path, immediate
from ..output.jsonout import write_json
from ..select import RULES, TRAINERS, select
from ..util.limits import above, at_least, fraction
from ..util.stages import Stages
from .options import add_model_options, dask_option, keep_option, load_any_arg, text_encoding, warn

EXAMPLES = {
    "evaluate": "tealeaves evaluate lda20.npz lda50.npz mallet-state.gz --heldout heldout.txt "
                "--reference train.txt --json eval.json --report eval.html",
    "select": "tealeaves select corpus.txt --topics 5,10,20,50,100 --restarts 3 --holdout 0.2 "
              "--out runs/ --report select.html   (CORPUS may be 'sotu', the bundled corpus)",
}


def _add_evaluate(sub: Any) -> None:
    e = sub.add_parser("evaluate", help="evaluate many models on the same held-out documents: one table",
                       description="held-out likelihood, coherence, diversity, exclusivity, predictive "
                                   "rank and automated intrusion for every model; pairwise comparisons "
                                   "with intervals and a ranking",
                       epilog=f"example: {EXAMPLES['evaluate']}")
    e.add_argument("models", nargs="+",
                   help="model files of any kind (LDA, NMF, LSI, HDP, plain arrays, ...): each gets the "
                        "metrics that apply to it, a dash and the reason for the others")
    e.add_argument("--heldout", required=True, help="held-out documents: text (one per line) or .npz")
    e.add_argument("--reference", default=None,
                   help="reference texts for coherence and automated intrusion (one document per line), "
                        "or a reference index (.tlx, tealeaves index build)")
    e.add_argument("--name", action="append", default=None,
                   help="a name for each model, in order (default: the file names)")
    e.add_argument("--measure", default=None,
                   help="coherence measures, comma-separated (umass, uci, npmi, c_v; default "
                        f"{','.join(DEFAULT_COHERENCE)}); they need --reference")
    e.add_argument("--absent", default=None, choices=ABSENT,
                   help="coherence: top words the reference lacks are left out (skip), given the measure's "
                        "value (smooth) or an error (fail); default: each measure's own (as coherence)")
    e.add_argument("--embeddings", default=None, metavar="FILE",
                   help="word vectors (word2vec text or binary, GloVe, fastText .vec): adds word-embedding "
                        "coherence (pairwise, centroid) and WE-IRBO; IRBO is computed without them")
    e.add_argument("--embeddings-format", default=None, choices=FORMATS,
                   help="the vector file's format (default: detected)")
    e.add_argument("--method", default="left-to-right", help="held-out estimator (default left-to-right)")
    e.add_argument("--particles", type=at_least(1), default=None,
                   help="left-to-right particles (default 300, the estimator's own)")
    e.add_argument("--runs", type=at_least(1), default=2, help="runs per document (for the sd; default 2)")
    e.add_argument("--compare", default="difference", choices=COMPARE_MODES,
                   help="pairwise comparisons: the difference of the held-out estimates (default, free); "
                        "auto: also Ratio-AIS for pairs with the same topics count and words that the "
                        "difference does not separate; ratio-ais: Ratio-AIS for every such pair; none")
    e.add_argument("--max-hours", type=above(0), default=None, metavar="HOURS",
                   help="refuse, before any work, a run estimated to take longer (default 24)")
    e.add_argument("--tokenize", default="whitespace", choices=("whitespace", "default"))
    e.add_argument("--encoding", default="utf-8", type=text_encoding,
                   help="character encoding of the text files")
    add_model_options(e)
    _outputs(e)
    e.add_argument("--csv", default=None, help="write the per-model table as CSV")
    e.add_argument("--diagnostics", action="store_true",
                   help="also each LDA's per-topic diagnostics on the held-out documents (as "
                        "tealeaves diagnostics; in the JSON under \"diagnostics\")")
    keep_option(e, "document of every model (held-out, Ratio-AIS, the predictive metrics)")
    e.add_argument("--stability", action="store_true",
                   help="models of one kind with the same K and words are restarts: their stability (as "
                        "tealeaves "
                        "stability; a table column, and in the JSON under \"stability\")")
    e.add_argument("--judge", default=None, metavar="JSON",
                   help="an LLM judge on an OpenAI-compatible server answers word intrusion and 3-point "
                        "ratings for every model with top words: a JSON file of tl.Judge's settings, e.g. "
                        '{"base_url": "http://127.0.0.1:8080/v1", "llm": "qwen2.5-7b", "cache": '
                        '"judge.sqlite"} (allow_remote: true to send topics off this machine); columns '
                        "judge MP, judge rating, with the judge's agreement with people as `tealeaves judge "
                        "qualify` measured it for the same settings (or that it was never measured)")
    e.add_argument("--human", default=None, metavar="STUDY",
                   help="each metric's agreement with people beside it, and the metric the recommendation "
                        "trusts: hoyle2021 or proxann2025:bills (figures measured on those studies' topics, "
                        "carried over), or your judgments of these models' topics (a study file as metaeval "
                        "reads, topics named MODEL/K; or the annotation app's export with --human-key)")
    e.add_argument("--human-key", default=None, metavar="KEY",
                   help="the key of the task set whose export --human is (intrusion or ProxAnn)")
    e.set_defaults(func=_cmd_evaluate)


def _add_select(sub: Any) -> None:
    s = sub.add_parser("select", help="choose the number of topics: train, evaluate, compare",
                       description="split the documents, train LDA for every K and restart, evaluate "
                                   "every model and say which K each metric favours",
                       epilog=f"example: {EXAMPLES['select']}")
    s.add_argument("corpus", help="documents: text (one per line), .npz, or 'sotu' (bundled)")
    s.add_argument("--topics", default="5,10,20,50,100", help="numbers of topics, comma-separated")
    s.add_argument("--restarts", type=at_least(1), default=3, help="models per K (different seeds)")
    s.add_argument("--holdout", type=fraction(open_low=True), default=0.2,
                   help="fraction of documents held out")
    s.add_argument("--out", default=None, metavar="DIR",
                   help="keep models and evaluations here; a rerun resumes where it stopped")
    s.add_argument("--trainer", default="tomotopy", choices=TRAINERS)
    s.add_argument("--iterations", type=at_least(1), default=500, help="training iterations (default 500)")
    s.add_argument("--measure", default=",".join(DEFAULT_COHERENCE), help="coherence measures")
    s.add_argument("--particles", type=at_least(1), default=None,
                   help="left-to-right particles (default 300, the estimator's own)")
    s.add_argument("--rule", default="best-train", choices=RULES,
                   help="how each K's restarts stand for it in the decision: the restart best by training "
                        "likelihood (default), best by held-out likelihood, or the mean over restarts")
    s.add_argument("--extend", type=at_least(0), default=0, metavar="N",
                   help="when the chosen K is at the edge of the grid and the held-out likelihood still "
                        "rises there, add up to N further Ks, one at a time (the grid's spacing continued), "
                        "while the whole run's estimate stays within --max-hours (default 0: only say so)")
    s.add_argument("--max-hours", type=above(0), default=None, metavar="HOURS",
                   help="refuse, before any work, a plan estimated to take longer, and add no K by --extend "
                        "past it (default 24)")
    s.add_argument("--tokenize", default="whitespace", choices=("whitespace", "default"))
    s.add_argument("--encoding", default="utf-8", type=text_encoding,
                   help="character encoding of the corpus file")
    _outputs(s)
    s.add_argument("--judge", default=None, metavar="JSON",
                   help="an LLM judge answers word intrusion and 3-point ratings for every model (as "
                        "evaluate --judge): columns judge MP, judge rating, with its measured agreement "
                        "with people")
    s.set_defaults(func=_cmd_select)


PARSERS = {"evaluate": _add_evaluate, "select": _add_select}


def _outputs(p: argparse.ArgumentParser) -> None:
    p.add_argument("--seed", type=at_least(0), default=0)
    p.add_argument("--workers", type=at_least(1), default=1, help="local processes")
    dask_option(p)
    p.add_argument("--json", default=None, help="write the result as JSON")
    p.add_argument("--report", default=None, help="write an HTML report")
    p.add_argument("--figures", default=None, metavar="DIR",
                   help="write every chart of the report as SVG (and PNG with the plot extra)")
    p.add_argument("--latex", default=None, metavar="FILE",
                   help="write every table of the report as booktabs LaTeX (as tealeaves report --latex)")
    p.add_argument("--markdown", default=None, metavar="FILE",
                   help="write every table of the report as GitHub Markdown (as tealeaves report --markdown)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def judge_from_file(path: str, progress: bool | None) -> Any:
    """A `tl.Judge` from a JSON object of its settings (a setting it does not have is an error)."""
    import dataclasses

    from ..errors import InputFileError
    from ..files.records import read_json
    from ..judge import Judge

    conf = read_json(path)
    if not isinstance(conf, dict):
        raise InputFileError(f"{path}: a judge's settings must be a JSON object")
    known = {f.name for f in dataclasses.fields(Judge) if f.init}
    unknown = sorted(set(conf) - known)
    if unknown:
        raise InputFileError(f"{path}: {unknown[0]!r} is not a setting of the judge (known: "
                             f"{', '.join(sorted(known))})")
    missing = [k for k in ("base_url", "llm") if k not in conf]
    if missing:
        raise InputFileError(f"{path}: the judge needs {' and '.join(missing)}")
    return Judge(**{"progress": progress, **conf})


def _measures(text: str) -> list[str]:
    names = [m.strip() for m in text.split(",") if m.strip()]
    if not names:
        raise MethodError("--measure names no coherence measure")
    return names


def _cmd_evaluate(args: argparse.Namespace) -> int:
    if args.name is not None and len(args.name) != len(args.models):
        raise MethodError(f"{len(args.name)} --name for {len(args.models)} models")
    if args.measure is not None and args.reference is None:
        raise MethodError("--measure picks coherence measures, which are counted in a reference: give "
                          "--reference too")
    progress = False if args.quiet else None
    clock = Stages(STAGES, enabled=progress)  # started here: reading the models is timed too
    labels = args.name or [os.path.basename(p) for p in args.models]
    loaded: list[Any] = []
    with clock.stage("loading", f"reading {len(args.models)} model file(s)"):
        for p, label in zip(args.models, labels, strict=True):
            try:
                loaded.append(load_any_arg(args, p))
            except TealeavesError as exc:  # its row says why; the others are evaluated
                loaded.append(Unreadable(label, str(exc)))
    models, names = [], []
    for label, m in zip(labels, loaded, strict=True):
        for t, one in enumerate(m if isinstance(m, list) else [m]):
            models.append(one)
            names.append(f"{label}@{t}" if isinstance(m, list) else label)
    options = EvaluateOptions(
        method=args.method, runs=args.runs,
        heldout_params={} if args.particles is None else {"particles": args.particles},
        compare_models=args.compare, coherence=tuple(_measures(args.measure or ",".join(DEFAULT_COHERENCE))),
        absent=args.absent, embeddings=args.embeddings, embeddings_format=args.embeddings_format,
        diagnostics=args.diagnostics, stability=args.stability, seed=args.seed, workers=args.workers,
        tokenizer=args.tokenize, encoding=args.encoding, max_hours=args.max_hours, keep=args.keep,
        judge=judge_from_file(args.judge, progress) if args.judge else None, human=args.human,
        human_key=args.human_key)
    res = evaluate(models, heldout=args.heldout, reference=args.reference, names=names, options=options,
                   progress=progress, stages=clock)
    if res.unreadable:
        print(f"tealeaves: warning: {len(res.unreadable)} of {len(res.rows)} models could not be read and "
              f"were not evaluated (their rows say why): {', '.join(res.unreadable)}", file=sys.stderr)
    sc = res.scoring
    warn(sc.get("warning"))
    if "documents" in sc:
        print(f"{sc['documents']} held-out documents, {sc['tokens']} tokens scored by every model with a "
              f"likelihood, {sc['oov_tokens']} dropped ({sc['rule']})")
    else:
        print(sc["rule"])
    print(res.table())
    print(res.legend())
    print(res.summary())
    print(res.timing())
    for name, d in res.diagnostics.items():  # --diagnostics (issue 26)
        print(f"\nper-topic diagnostics of {name} on the held-out documents ({len(d.flagged())} flagged):")
        print(d.table())
    for g in res.stability or []:  # --stability (issue 26)
        print(f"\nstability of {', '.join(g.models)}:")
        print(g.table())
        print(g.summary())
    if res.stability == []:
        print("\nstability: no two models of one kind share K and words (no restarts to compare)")
    doc = {"command": "evaluate", "models": args.models, "heldout": args.heldout, **res.to_dict()}
    _write(args, doc, "tealeaves evaluate")
    if args.csv:
        with atomic_path(args.csv) as tmp, open(tmp, "w", newline="", encoding="utf-8") as fh:
            skip = ("coherence", "auto_model_precision_ci")

            def why(r: dict[str, Any]) -> str:
                return "; ".join(f"{k}: {v}" for k, v in r.get("not_applicable", {}).items())

            prints = json.dumps(res.params.get("coherence_fingerprint") or {}, sort_keys=True)
            frame_rows = [{**{k: v for k, v in r.items() if k not in skip},
                           **{f"coherence_{m}": v for m, v in r["coherence"].items()},
                           "coherence_fingerprint": prints if r["coherence"] else "",
                           "not_applicable": why(r)} for r in res.rows]
            csvout.write_dicts(fh, frame_rows)
    return 0


def _cmd_select(args: argparse.Namespace) -> int:
    try:
        topics = [int(k) for k in args.topics.split(",") if k.strip()]
    except ValueError:
        raise MethodError(f"--topics {args.topics!r}: expected comma-separated integers") from None
    params = {} if args.particles is None else {"particles": args.particles}
    with immediate():  # --out keeps each model as it is trained: a later run resumes from it
        res = select(args.corpus, topics=topics, restarts=args.restarts, holdout=args.holdout,
                     out=args.out, trainer=args.trainer, iterations=args.iterations,
                     coherence=_measures(args.measure), seed=args.seed, workers=args.workers,
                     progress=False if args.quiet else None, tokenizer=args.tokenize,
                     encoding=args.encoding, rule=args.rule, extend=args.extend, max_hours=args.max_hours,
                     judge=judge_from_file(args.judge, False) if args.judge else None, **params)
    p = res.params
    for note in p["redone"]:  # saved work refused when resuming (`select.saved`), done again
        print(f"tealeaves: warning: {note}", file=sys.stderr)
    if any(p["reused"].values()):
        n, m = p["reused"]["evaluations"], p["reused"]["models"]
        print(f"tealeaves: resumed: {n} of {len(res.evaluations)} models' evaluations"
              + (f" and {m} more trained models" if m else "")
              + f" taken from {p['out']}, kept by an earlier run", file=sys.stderr)
    print(f"{p['documents']} documents: {p['training_documents']} for training, "
          f"{p['heldout_documents']} held out; {len(res.topics)} values of K x {res.restarts} restarts "
          f"({p['trainer']}, {p['iterations']} iterations)"
          + (f"; {p['empty_documents_left_out']} empty documents left out" if p["empty_documents_left_out"]
             else ""))
    h = p["heldout_corpus"]
    print(f"held out: {h['documents']} documents, {h['tokens']} tokens scored, {h['oov_tokens']} dropped "
          f"(not in the training documents, so no model has them), {h['empty_documents']} with no word "
          "of the training documents"
          + (f"; most frequent: {', '.join(f'{w} x{c}' for w, c in h['oov_top_words'].items())}"
             if h["oov_top_words"] else ""))
    warn(dropped_warning(h, "the held-out documents", "the training documents'"))
    print(res.table())
    print(res.summary())
    if res.chosen.get("words"):
        print()
        print("\n".join(res.topic_lines()))
    _write(args, {"command": "select", "corpus": args.corpus, **res.to_dict()}, "tealeaves select")
    return 0


def _write(args: argparse.Namespace, doc: dict[str, Any], title: str) -> None:
    if args.json:
        write_json(args.json, doc)
    if args.report or args.figures or args.latex or args.markdown:
        from ..files.atomic import write_text
        from ..report import render, tables_text, write_figures

        if args.report:
            write_text(args.report, render([doc], title))
            print(f"report -> {args.report}")
        if args.figures:
            written = write_figures([doc], args.figures)
            print(f"{len(written)} figures -> {args.figures}")
        for path, kind, what in ((args.latex, "latex", "LaTeX"), (args.markdown, "markdown", "Markdown")):
            if path:
                write_text(path, tables_text([doc], kind))
                print(f"{what} tables -> {path}")
