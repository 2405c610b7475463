"""`tealeaves intrusion ...`, `tealeaves predictive` and `tealeaves annotate ...`: the human-judgment
commands."""

from __future__ import annotations

import argparse
import math
import os
import sys
from typing import Any

from .. import intrusion
from ..datasets import read_corpus
from ..errors import InputFileError, MethodError, shown
from ..files import csvout
from ..files.atomic import atomic_path
from ..intrusion.auto import MEASURES as AUTO_MEASURES
from ..intrusion.exact import EXACT_LIMIT, MAX_PERMUTATIONS, PERMUTATIONS
from ..intrusion.plan import ANNOTATORS, MAX_ANNOTATORS
from ..output.jsonout import write_json
from ..util.limits import at_least, fraction
from .options import (
    MODEL_HELP,
    add_model_options,
    askable_documents,
    check_scorable,
    corpus_options,
    load_kind_arg,
    load_model_arg,
    read_docs,
    read_text_lines,
    read_theta,
    report_corpus,
    text_encoding,
)

EXAMPLES = {
    "intrusion words": "tealeaves intrusion words model.npz -o tasks.jsonl --key key.jsonl "
    "--attention-checks 3",
    "intrusion topics": "tealeaves intrusion topics model.npz docs.txt --texts titles.txt -o tasks.csv "
    "--key key.csv",
    "intrusion score": "tealeaves intrusion score key.jsonl responses.csv --plot scores.png "
    "--json scores.json",
    "intrusion auto": "tealeaves intrusion auto key.jsonl reference.txt --responses responses.csv",
    "intrusion plan": "tealeaves intrusion plan 0.6 0.75 --icc 0.2 --max-items 50",
    "predictive": "tealeaves predictive model.npz heldout.txt --json predictive.json",
    "annotate serve": "tealeaves annotate serve --tasks tasks.jsonl --key key.jsonl --db annotations.sqlite "
    "--port 8000",
    "annotate export": "tealeaves annotate export --db annotations.sqlite -o responses.csv",
}


def _parser(parent: Any, name: str, help_text: str, full: str) -> argparse.ArgumentParser:
    return parent.add_parser(
        name, help=help_text, description=help_text, epilog=f"example: {EXAMPLES[full]}"
    )


def _add_intrusion(sub: Any) -> None:
    it = sub.add_parser(
        "intrusion",
        help="word/topic intrusion tasks (Chang et al. 2009) and their scores",
        description="word/topic intrusion tasks (Chang et al. 2009) and their scores",
    )
    isub = it.add_subparsers(dest="intrusion_command", required=True)

    w = _parser(
        isub, "words", "word-intrusion tasks: top 5 words of each topic + 1 intruder", "intrusion words"
    )
    w.add_argument("model", help=MODEL_HELP)
    add_model_options(w)
    _task_outputs(w)
    w.add_argument("--n-words", type=at_least(1), default=5)
    w.add_argument(
        "--low-fraction",
        type=fraction(open_high=False, open_low=True),
        default=0.5,
        help="the intruder is in this bottom fraction of the words the topic uses (above its floor)",
    )
    w.add_argument("--high-top", type=at_least(1), default=10, help="... and in another topic's top N words")
    w.add_argument("--relax", action="store_true",
                   help="a topic with no such word gets the least probable of the other topics' top "
                        "words (marked relaxed in the key) instead of an error")
    w.add_argument("--attention-checks", type=at_least(0), default=0)
    w.set_defaults(func=_cmd_words)

    t = _parser(
        isub,
        "topics",
        "topic-intrusion tasks: a document's top 3 topics + 1 intruder topic",
        "intrusion topics",
    )
    t.add_argument("model", help=MODEL_HELP)
    t.add_argument("docs", help="documents (text, one per line) used to infer theta")
    add_model_options(t)
    _task_outputs(t)
    t.add_argument(
        "--texts", default=None, help="text shown per document (one line each; default the document)"
    )
    t.add_argument("--theta", default=None, help="doc-topic matrix (.npy, D x T) instead of inferring it")
    t.add_argument("--max-chars", type=at_least(1), default=400, help="shown text is cut to this length")
    t.add_argument("--burn-in", type=at_least(0), default=100)
    t.add_argument("--samples", type=at_least(1), default=200)
    t.add_argument("--quiet", action="store_true", help="no progress bar")
    t.add_argument("--encoding", default="utf-8", type=text_encoding,
                   help="character encoding of the text files")
    t.set_defaults(func=_cmd_topics)

    s = _parser(
        isub, "score", "model precision and topic log odds from a key and responses", "intrusion score"
    )
    s.add_argument("key")
    s.add_argument("responses", help="JSONL or CSV: annotator, item, choice (or chosen)")
    s.add_argument("--max-attention-failures", type=at_least(0), default=0)
    s.add_argument("--bootstrap", type=at_least(0), default=2000)
    s.add_argument("--seed", type=at_least(0), default=0)
    s.add_argument("--permutations", type=at_least(1, MAX_PERMUTATIONS), default=PERMUTATIONS,
                   help="random splits per comparison of two models when all splits are too many "
                        f"(more than {EXACT_LIMIT:,}) to enumerate")
    s.add_argument("--plot", default=None, help="write figures 3, 4, 6 (needs the plot extra)")
    s.add_argument("--json", default=None, help="write the result as JSON ('-': standard output)")
    s.add_argument("--csv", default=None, help="write one row per model, kind of item (agreement) and "
                   "comparison of two models, as CSV")
    s.set_defaults(func=_cmd_score)

    pl = _parser(isub, "plan", "items and annotators per model to tell two model precisions apart",
                 "intrusion plan")
    pl.add_argument("p1", type=float, help="expected model precision of one model (between 0 and 1)")
    pl.add_argument("p2", type=float, help="... and of the other")
    pl.add_argument("--power", type=float, default=0.8)
    pl.add_argument("--alpha", type=float, default=0.05, help="two-sided level of the test")
    pl.add_argument("--icc", type=float, default=0.1,
                    help="intra-item correlation of right/wrong answers (0: independent; `intrusion "
                         "score` of a pilot study estimates it)")
    pl.add_argument("--annotators", type=at_least(1, MAX_ANNOTATORS), nargs="+", default=list(ANNOTATORS),
                    help="numbers of annotators per item to plan for")
    pl.add_argument("--max-items", type=at_least(1), default=None,
                    help="items available per model (word intrusion: its number of topics)")
    pl.add_argument("--json", default=None, help="write the result as JSON ('-': standard output)")
    pl.set_defaults(func=_cmd_plan)

    a = _parser(isub, "auto", "automated word intrusion from reference-corpus NPMI", "intrusion auto")
    a.add_argument(
        "tasks",
        help="model file (fresh word tasks), or the key file (.jsonl/.csv) of the tasks annotators saw",
    )
    add_model_options(a)
    a.add_argument("reference", help="reference corpus: text, one document per line")
    a.add_argument("--measure", default="npmi", choices=AUTO_MEASURES)
    a.add_argument("--window", type=at_least(1), default=10)
    a.add_argument("--responses", default=None, help="human responses to the key's tasks, for agreement")
    a.add_argument("--seed", type=at_least(0), default=0)
    a.add_argument("--workers", type=at_least(1), default=1)
    a.add_argument("--json", default=None, help="write the result as JSON ('-': standard output)")
    a.add_argument("--encoding", default="utf-8", type=text_encoding,
                   help="character encoding of the reference")
    a.set_defaults(func=_cmd_auto)


def _add_predictive(sub: Any) -> None:
    p = sub.add_parser(
        "predictive",
        help="predictive log likelihood and rank (Chang et al. 2009, 4.2)",
        description="predictive log likelihood and predictive rank of held-out documents "
        "from the posterior mean of theta (Chang et al. 2009, section 4.2)",
        epilog=f"example: {EXAMPLES['predictive']}",
    )
    p.add_argument("model", help=MODEL_HELP)
    p.add_argument("docs")
    add_model_options(p)
    p.add_argument("--theta", default=None, help="doc-topic matrix (.npy) instead of inferring it")
    p.add_argument("--burn-in", type=at_least(0), default=100)
    p.add_argument("--samples", type=at_least(1), default=200)
    p.add_argument("--seed", type=at_least(0), default=0)
    p.add_argument("--workers", type=at_least(1), default=1)
    p.add_argument("--json", default=None, help="write the result as JSON ('-': standard output)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    corpus_options(p)
    p.set_defaults(func=_cmd_predictive)


def _add_annotate(sub: Any) -> None:
    an = sub.add_parser(
        "annotate",
        help="the annotation web app and its export",
        description="the annotation web app (needs the annotate extra) and its export",
    )
    asub = an.add_subparsers(dest="annotate_command", required=True)
    sv = _parser(
        asub,
        "serve",
        "serve intrusion or ProxAnn tasks to annotators, storing responses in a database",
        "annotate serve",
    )
    sv.add_argument("--tasks", required=True, help="annotator-facing tasks (JSONL or CSV)")
    sv.add_argument("--key", default=None, help="key file: checked against the tasks; live scores on /admin")
    sv.add_argument(
        "--db",
        default="annotations.sqlite",
        help="SQLite path or SQLAlchemy URL (postgresql+psycopg://user@host/db)",
    )
    sv.add_argument("--host", default="127.0.0.1")
    sv.add_argument("--port", type=at_least(1, 65535), default=8000)
    sv.add_argument(
        "--admin-token",
        default=os.environ.get("TEALEAVES_ADMIN_TOKEN"),
        help="admin token, at least 16 characters, for logging in on /admin (default: "
        "$TEALEAVES_ADMIN_TOKEN, else random, printed)",
    )
    sv.add_argument("--max-new-per-minute", type=at_least(1), default=600,
                    help="new participants admitted per minute (429 beyond)")
    sv.add_argument(
        "--completion-code", default=None, help="one code for everyone (default: per participant)"
    )
    sv.add_argument("--redirect", default=None, help="URL at the end; {participant} and {code} are filled in")
    sv.add_argument("--per-annotator", type=at_least(1), default=None,
                    help="tasks per annotator (default all)")
    sv.set_defaults(func=_cmd_serve)
    ex = _parser(
        asub, "export", "write stored responses in the format `intrusion score` (or `proxann score`) reads",
        "annotate export"
    )
    ex.add_argument("--db", required=True, help="the annotations database: SQLite path or SQLAlchemy URL")
    ex.add_argument("-o", "--output", required=True, help=".csv or .jsonl")
    ex.set_defaults(func=_cmd_export)


PARSERS = {"intrusion": _add_intrusion, "predictive": _add_predictive, "annotate": _add_annotate}


def _task_outputs(p: argparse.ArgumentParser) -> None:
    p.add_argument("-o", "--output", required=True, help="annotator-facing tasks: .jsonl or .csv (long)")
    p.add_argument("--key", required=True, help="answer key: .jsonl or .csv")
    p.add_argument("--seed", type=at_least(0), default=0)


def _name(args: argparse.Namespace) -> str:
    sub = getattr(args, "intrusion_command", None)
    return f"intrusion {sub}" if sub else "predictive"


def _written(tasks: list[intrusion.Task], args: argparse.Namespace, secret: str) -> int:
    intrusion.write_tasks(tasks, args.output, args.key, secret=secret)
    print(f"{len(tasks)} tasks -> {args.output} (for annotators), answers -> {args.key} and its secret "
          f"-> {intrusion.secret_path(args.key)} (keep both private)")
    relaxed = [t.topic for t in tasks if t.relaxed]
    if relaxed:
        print(f"relaxed: {len(relaxed)} topic(s) ({', '.join(map(str, relaxed))}) had no intruder in the "
              f"bottom {args.low_fraction:.0%} of their used words; the least probable of the other "
              f"topics' top {args.high_top} was used (marked relaxed in the key)")
    passed = [(t.topic, w) for t in tasks for w in t.passed_over]
    if passed:
        shown_words = ", ".join(f"topic {k}: {shown(w)}" for k, w in passed[:5])
        shown_words += " ..." if len(passed) > 5 else ""
        print(f"passed over: {len(passed)} top word(s) that look blank or like another option of their task "
              f"({shown_words}); the next word was shown instead")
    return 0


def _cmd_words(args: argparse.Namespace) -> int:
    model = load_kind_arg(args, args.model)
    secret = intrusion.key_secret(args.key)
    return _written(
        intrusion.word_tasks(
            model,
            secret=secret,
            n_words=args.n_words,
            low_fraction=args.low_fraction,
            high_top=args.high_top,
            seed=args.seed,
            attention_checks=args.attention_checks,
            relax=args.relax,
        ),
        args,
        secret,
    )


def _cmd_topics(args: argparse.Namespace) -> int:
    model = load_model_arg(args, args.model, "topic intrusion")
    docs = read_corpus(args.docs, vocab=model.vocab, encoding=args.encoding)
    check_scorable(docs, args.docs)
    report_corpus(docs, model.num_words)
    source = read_theta(args.theta, (len(docs), model.num_topics)) if args.theta else docs
    texts = read_text_lines(args.texts or args.docs, args.encoding)
    if len(texts) != len(docs):
        raise InputFileError(f"{args.texts or args.docs}: {len(texts)} lines for {len(docs)} documents")
    documents = askable_documents(docs, texts, given_theta=bool(args.theta))
    texts = [t if len(t) <= args.max_chars else t[: args.max_chars].rsplit(" ", 1)[0] + " …" for t in texts]
    secret = intrusion.key_secret(args.key)
    tasks = intrusion.topic_tasks(
        model,
        source,
        secret=secret,
        texts=texts,
        documents=documents,
        seed=args.seed,
        burn_in=args.burn_in,
        samples=args.samples,
        progress=False if args.quiet else None,
    )
    return _written(tasks, args, secret)


def _num(s: dict[str, Any], k: str) -> str:
    return f"{s[k]:9.3f}" if k in s else f"{'-':>9}"


def _ci(s: dict[str, Any], k: str, unit: str, resamples: int) -> str:
    """A bootstrap interval, or why there is none (fewer than two topics or documents, no resamples)."""
    if k not in s:
        return f"{'-':>17}"
    lo, hi = s[k]
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return f"{'n/a (<2 ' + unit + ')' if resamples else 'n/a (--bootstrap 0)':>17}"
    return f"[{lo:6.3f}, {hi:6.3f}]"


def _cmd_score(args: argparse.Namespace) -> int:
    res = intrusion.score(
        args.key,
        args.responses,
        max_attention_failures=args.max_attention_failures,
        bootstrap=args.bootstrap,
        seed=args.seed,
        permutations=args.permutations,
    )
    print(
        f"{res.responses_used} responses used; excluded by attention checks: "
        f"{', '.join(res.excluded_annotators) or 'none'}"
    )
    head = ("model", "precision", "95% CI", "topics", "log odds", "95% CI", "docs")
    print("{:<20} {:>9} {:>17} {:>6} {:>9} {:>17} {:>5}".format(*head))
    for m, s in res.summary.items():
        mp_ci = _ci(s, "model_precision_ci", "topics", args.bootstrap)
        tlo_ci = _ci(s, "topic_log_odds_ci", "docs", args.bootstrap)
        mp = f"{_num(s, 'model_precision')} {mp_ci} {s.get('topics', '-'):>6}"
        tlo = f"{_num(s, 'topic_log_odds')} {tlo_ci} {s.get('documents', '-'):>5}"
        print(f"{m:<20} {mp} {tlo}")
    for line in intrusion.statistics_lines(res.to_dict()):
        print(line)
    if args.json:
        write_json(args.json, {"command": _name(args), **res.to_dict()})
    if args.csv:
        with atomic_path(args.csv) as tmp, open(tmp, "w", newline="", encoding="utf-8") as fh:
            csvout.write_dicts(fh, res.rows())
    if args.plot:
        panels = intrusion.plot_scores(res, args.plot)
        print(f"plot ({len(panels)} panels) -> {args.plot}")
    return 0


def _cmd_plan(args: argparse.Namespace) -> int:
    res = intrusion.plan_intrusion(args.p1, args.p2, power=args.power, alpha=args.alpha, icc=args.icc,
                                   annotators=args.annotators, max_items=args.max_items)
    print(f"to tell model precision {res.p1:g} from {res.p2:g} with power {res.power:g} (two-sided, alpha "
          f"{res.alpha:g}), intra-item correlation {res.icc:g}: {res.independent_answers} independent "
          "answers per model")
    print("{:>10} {:>16} {:>17} {:>7}".format("annotators", "items per model", "answers per model", "power"))
    for r in res.rows:
        more = "" if r["fits"] else f"  (more than the {res.max_items} items available)"
        print(f"{r['annotators']:>10} {r['items']:>16} {r['answers']:>17} {r['power']:>7.3f}{more}")
    print(res.note)
    if args.json:
        write_json(args.json, {"command": _name(args), **res.to_dict()})
    return 0


def _cmd_auto(args: argparse.Namespace) -> int:
    is_key = args.tasks.endswith((".jsonl", ".csv"))
    if args.responses and not is_key:
        raise MethodError(
            "--responses needs the key file of the tasks the annotators saw in place of a model"
        )
    tasks = args.tasks if is_key else load_kind_arg(args, args.tasks)
    res = intrusion.auto(
        tasks,
        args.reference,
        measure=args.measure,
        window=args.window,
        responses=args.responses,
        seed=args.seed,
        workers=args.workers,
        encoding=args.encoding,
        **({} if is_key else {"relax": True}),  # as `evaluate` does; the relaxed topics are listed
    )
    for m, s in res.summary.items():
        lo, hi = s["model_precision_ci"]
        ci = f"[{lo:.3f}, {hi:.3f}]" if math.isfinite(lo) and math.isfinite(hi) else "[n/a: <2 topics]"
        print(
            f"{m}: automated model precision {s['model_precision']:.3f} {ci} "
            f"over {s['topics']} topics ({args.measure}, window {args.window})"
        )
    relaxed = [str(it["topic"]) for it in res.items if it.get("relaxed")]
    if relaxed:
        print(f"relaxed: {len(relaxed)} topic(s) ({', '.join(relaxed)}) had no intruder in the bottom of "
              "their used words; the least probable of the other topics' top words was used")
    if res.absent_items:
        n = len(res.absent_items)
        print(f"{n} item(s) have an option absent from the reference (predicted as intruder)")
    if res.agreement:
        a = res.agreement
        maj = "n/a" if a["majority_agreement"] is None else f"{a['majority_agreement']:.3f}"
        r = "n/a" if a["pearson"] is None else f"{a['pearson']:.3f}"
        print(
            f"agreement with annotators: picks the majority choice on {maj} of {a['items_with_responses']} "
            f"items; Pearson r with human model precision {r} over {a['topics']} topics"
        )
    if args.json:
        write_json(args.json, {"command": _name(args), **res.to_dict()})
    return 0


def _cmd_predictive(args: argparse.Namespace) -> int:
    model = load_model_arg(args, args.model, "predictive")
    docs = read_docs(args, args.docs, model)
    report = report_corpus(docs, model.num_words)
    theta = read_theta(args.theta, (len(docs), model.num_topics)) if args.theta else None
    res = intrusion.predictive(
        model,
        docs,
        theta=theta,
        burn_in=args.burn_in,
        samples=args.samples,
        seed=args.seed,
        workers=args.workers,
        progress=False if args.quiet else None,
    )
    print(
        f"predictive log likelihood per word {res.log_likelihood:.4f}; predictive rank {res.rank:.1f} "
        f"(of {model.num_words} words; lower is better)"
    )
    if args.json:
        write_json(args.json, {"command": _name(args), **res.to_dict(), "corpus_report": report})
    return 0


def _load_tasks_and_key(args: argparse.Namespace) -> tuple[list[dict[str, Any]], list[dict[str, Any]] | None]:
    from ..annotate.taskset import check_task_set, read_key, read_task_set

    tasks = read_task_set(args.tasks)
    check_task_set(tasks, args.tasks)
    return tasks, read_key(args.key, tasks) if args.key else None


def _cmd_serve(args: argparse.Namespace) -> int:
    from .. import annotate

    tasks, key = _load_tasks_and_key(args)
    options = {"completion_code": args.completion_code, "redirect": args.redirect,
               "per_annotator": args.per_annotator, "new_participants_per_minute": args.max_new_per_minute}
    if args.admin_token:
        options["admin_token"] = args.admin_token
    config = annotate.AppConfig(**options)

    def announce() -> None:
        base = f"http://{args.host}:{args.port}"
        print(f"serving {len(tasks)} tasks on {base}/?participant=ID  (database {args.db})")
        token = "" if args.admin_token else f"; admin token {config.admin_token}"
        print(f"admin: {base}/admin (log in with the admin token{token})", flush=True)

    annotate.serve(tasks, args.db, key=key, host=args.host, port=args.port, config=config, announce=announce)
    return 0


def _cmd_export(args: argparse.Namespace) -> int:
    from .. import annotate

    n = annotate.export_responses(args.db, args.output)
    print(f"{n} rows -> {args.output}", file=sys.stdout)
    return 0
