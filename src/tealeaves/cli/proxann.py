"""`tealeaves proxann ...`: ProxAnn tasks (Hoyle et al. 2025) and their scores. The tasks are served
and exported with `tealeaves annotate serve` and `tealeaves annotate export`."""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from .. import proxann
from ..datasets import read_corpus
from ..errors import InputFileError, MethodError
from ..files import csvout
from ..files.atomic import atomic_path
from ..intrusion.tasks import key_secret, secret_path
from ..output.jsonout import write_json
from ..topics import Topics
from ..util.limits import at_least, fraction
from .options import (
    MODEL_HELP,
    add_model_options,
    askable_documents,
    check_scorable,
    load_kind_arg,
    read_text_lines,
    read_theta,
    report_corpus,
    text_encoding,
)

EXAMPLES = {
    "proxann tasks": "tealeaves proxann tasks model.npz docs.txt --texts summaries.txt -o tasks.jsonl "
    "--key key.jsonl --instructed-check",
    "proxann score": "tealeaves proxann score key.jsonl responses.csv --json scores.json --csv scores.csv",
}


def _parser(parent: Any, name: str, help_text: str) -> argparse.ArgumentParser:
    return parent.add_parser(name, help=help_text, description=help_text,
                             epilog=f"example: {EXAMPLES['proxann ' + name]}")


def _add_proxann(sub: Any) -> None:
    p = sub.add_parser(
        "proxann",
        help="ProxAnn tasks (Hoyle et al. 2025): name a topic's category, rate and rank documents; scores",
        description="ProxAnn (Hoyle, Calvo-Bartolomé, Boyd-Graber & Resnik, ACL 2025): annotators name "
                    "the category a topic's top words and exemplar documents share, rate how well other "
                    "documents fit it (1-5) and rank them; the scores say how well that order follows the "
                    "model's theta. Serve the tasks with `tealeaves annotate serve`, export with "
                    "`tealeaves annotate export`.",
    )
    psub = p.add_subparsers(dest="proxann_command", required=True)
    t = _parser(psub, "tasks", "one ProxAnn task per topic: top words, exemplars, documents across theta, "
                               "a distractor")
    t.add_argument("model", help=MODEL_HELP)
    t.add_argument("docs", help="documents (text, one per line): theta is inferred from them (an LDA), or "
                                "read from --theta or the model's own document-topic proportions")
    add_model_options(t)
    t.add_argument("-o", "--output", required=True, help="annotator-facing tasks (.jsonl)")
    t.add_argument("--key", required=True, help="the key: each document's theta and role (.jsonl)")
    t.add_argument("--seed", type=at_least(0), default=0)
    t.add_argument("--texts", default=None,
                   help="text shown per document (one line each; default the document)")
    t.add_argument("--theta", default=None, help="doc-topic matrix (.npy, D x T) instead of inferring it")
    t.add_argument("--topics", type=at_least(0), nargs="+", default=None,
                   help="these topics only (default all)")
    t.add_argument("--n-words", type=at_least(1), default=15, help="top words shown")
    t.add_argument("--exemplars", type=at_least(1), default=7, help="exemplar documents (highest theta)")
    t.add_argument("--eval-docs", type=at_least(2, proxann.tasks.MAX_DOCUMENTS - 2), default=7,
                   help="documents rated and ranked, chosen across the range of theta")
    t.add_argument("--low-fraction", type=fraction(open_high=False, open_low=True), default=0.1,
                   help="the distractor is in this bottom fraction of the topic's theta")
    t.add_argument("--distractors", default=None,
                   help="outside texts (one per line) to draw each topic's distractor from, in place of a "
                        "document of the corpus")
    t.add_argument("--instructed-check", action="store_true",
                   help="add an instructed-response item to every task (\"choose 2\"), an attention check")
    t.add_argument("--max-chars", type=at_least(20), default=600, help="shown texts are cut to this length")
    t.add_argument("--burn-in", type=at_least(0), default=100)
    t.add_argument("--samples", type=at_least(1), default=200)
    t.add_argument("--quiet", action="store_true", help="no progress bar")
    t.add_argument("--encoding", default="utf-8", type=text_encoding,
                   help="character encoding of the text files")
    t.set_defaults(func=_cmd_tasks)

    s = _parser(psub, "score", "agreement of people's fit ratings and rankings with the model's theta")
    s.add_argument("key")
    s.add_argument("responses", help="the export of `tealeaves annotate export` (CSV or JSON lines)")
    s.add_argument("--max-attention-failures", type=at_least(0), default=0,
                   help="attention checks an annotator may fail and still be counted")
    s.add_argument("--distractor-max", type=at_least(1, proxann.tasks.SCALE - 1), default=2,
                   help="a distractor rated above this fails the attention check")
    s.add_argument("--bootstrap", type=at_least(0), default=2000)
    s.add_argument("--seed", type=at_least(0), default=0)
    s.add_argument("--json", default=None, help="write the result as JSON ('-': standard output)")
    s.add_argument("--csv", default=None, help="one row per model, topic and evaluation document")
    s.set_defaults(func=_cmd_score)


PARSERS = {"proxann": _add_proxann}


def _cmd_tasks(args: argparse.Namespace) -> int:
    proxann.tasks.check_task_files(args.output, args.key)  # before the work
    model = load_kind_arg(args, args.model)
    texts = read_text_lines(args.texts or args.docs, args.encoding)
    if args.theta:
        T = model.num_topics
        source: Any = read_theta(args.theta, (len(texts), T))
        documents = askable_documents(None, texts, given_theta=True, source=args.texts or args.docs)
    elif isinstance(model, Topics):
        if model.doc_topic is None:
            raise MethodError(f"{args.model}: this model keeps no document-topic proportions and cannot "
                              "infer them; give --theta (D x T, one row per document)")
        if model.doc_topic.shape[0] != len(texts):
            raise InputFileError(f"{args.texts or args.docs}: {len(texts)} lines for the model's "
                                 f"{model.doc_topic.shape[0]} documents (its document-topic proportions)")
        source = np.asarray(model.doc_topic, dtype=np.float64)
        documents = askable_documents(None, texts, given_theta=True, source=args.texts or args.docs)
    else:
        docs = read_corpus(args.docs, vocab=model.vocab, encoding=args.encoding)
        check_scorable(docs, args.docs)
        report_corpus(docs, model.num_words)
        if len(texts) != len(docs):
            raise InputFileError(f"{args.texts}: {len(texts)} lines for {len(docs)} documents")
        source, documents = docs, askable_documents(docs, texts, given_theta=False)
    outside = read_text_lines(args.distractors, args.encoding) if args.distractors else None
    secret = key_secret(args.key)
    tasks = proxann.proxann_tasks(
        model, source, texts=texts, topics=args.topics, documents=documents, n_words=args.n_words,
        n_exemplars=args.exemplars, n_eval=args.eval_docs, low_fraction=args.low_fraction,
        distractor_texts=outside, instructed_check=args.instructed_check, max_chars=args.max_chars,
        seed=args.seed, burn_in=args.burn_in, samples=args.samples,
        progress=False if args.quiet else None, secret=secret)
    proxann.write_proxann_tasks(tasks, args.output, args.key, secret=secret)
    print(f"{len(tasks)} ProxAnn tasks -> {args.output} (for annotators), answers -> {args.key} and its "
          f"secret -> {secret_path(args.key)} (keep both private)")
    passed = sum(t.passed_over for t in tasks)
    if passed:
        print(f"passed over: {passed} document(s) whose text looks blank or like another of the same task")
    print(f"serve them: tealeaves annotate serve --tasks {args.output} --key {args.key} "
          "--db annotations.sqlite")
    return 0


def _cmd_score(args: argparse.Namespace) -> int:
    res = proxann.score_proxann(args.key, args.responses, max_attention_failures=args.max_attention_failures,
                                distractor_max=args.distractor_max, bootstrap=args.bootstrap, seed=args.seed)
    for line in proxann.summary_lines(res):
        print(line)
    if args.json:
        write_json(args.json, {"command": "proxann score", **res.to_dict()})
    if args.csv:
        with atomic_path(args.csv) as tmp, open(tmp, "w", newline="", encoding="utf-8") as fh:
            csvout.write_dicts(fh, res.rows())
    return 0
