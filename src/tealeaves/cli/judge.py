"""`tealeaves judge ...`: a language model on an OpenAI-compatible server answers word intrusion,
topic intrusion, 3-point ratings and ProxAnn's steps (needs the judge extra: httpx)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..errors import InputFileError
from ..files import csvout
from ..files.atomic import atomic_path
from ..output.jsonout import write_json
from ..util.limits import above, at_least, not_below
from .options import MODEL_HELP, add_model_options, load_kind_arg, load_topics_arg

EXAMPLES = {
    "judge words": "tealeaves judge words key.jsonl --base-url http://127.0.0.1:8080/v1 --llm qwen2.5-7b "
                   "--json judge.json",
    "judge topics": "tealeaves judge topics topic-key.jsonl --base-url http://127.0.0.1:8080/v1 "
                    "--llm qwen2.5-7b",
    "judge ratings": "tealeaves judge ratings model.npz --base-url http://127.0.0.1:8080/v1 --llm qwen2.5-7b "
                     "--estimate",
    "judge proxann": "tealeaves judge proxann items.jsonl --base-url https://api.example.org/v1 --llm gpt-4o "
                     "--key-env OPENAI_API_KEY --allow-remote",
    "judge check": "tealeaves judge check --base-url http://127.0.0.1:8080/v1 --llm qwen2.5-7b",
    "judge qualify": "tealeaves judge qualify --base-url http://127.0.0.1:8080/v1 --llm qwen2.5-7b "
                     "--json qualify.json",
}
# judge.qualify's names, written out (no numpy for --help)
QUALIFY_STUDIES = ("hoyle2021", "proxann2025:bills")
QUALIFY_TASKS = ("ratings", "words", "proxann")
# judge.METHODS and judge.APIS, written out: importing the package would load numpy for --help
METHOD_CHOICES = ("auto", "logprobs", "samples")
API_CHOICES = ("chat", "completions")


def _judge_options(p: argparse.ArgumentParser, csv: bool = True) -> None:
    g = p.add_argument_group("the judge (an OpenAI-compatible server)")
    g.add_argument("--base-url", required=True,
                   help="the API's address, e.g. http://127.0.0.1:8080/v1 (llama.cpp, vLLM, Ollama, "
                        "LM Studio)")
    g.add_argument("--llm", required=True, help="the model's name on the server")
    g.add_argument("--api", default="chat", choices=API_CHOICES,
                   help="chat (/chat/completions, default) or completions (/completions: base models)")
    g.add_argument("--method", default="auto", choices=METHOD_CHOICES,
                   help="auto (default): log-probabilities where the server gives them, else samples, each "
                        "fallback counted; logprobs: only log-probabilities; samples: only samples")
    g.add_argument("--samples", type=at_least(1, 1000), default=5, help="replies per item when sampling")
    g.add_argument("--temperature", type=not_below(0), default=1.0, help="sampling temperature (0-2)")
    g.add_argument("--seed", type=at_least(0), default=0,
                   help="the seed every request's own seed is derived from")
    g.add_argument("--top-logprobs", type=at_least(1, 20), default=20)
    g.add_argument("--key-env", default="TEALEAVES_JUDGE_KEY",
                   help="environment variable holding the API key (default TEALEAVES_JUDGE_KEY; unset: "
                        "no key)")
    g.add_argument("--allow-remote", action="store_true",
                   help="consent to send topics and documents to an address that is not this machine")
    g.add_argument("--cache", default=None,
                   help="SQLite file of every request and answer (default ~/.cache/tealeaves/judge.sqlite)")
    g.add_argument("--concurrency", type=at_least(1, 256), default=4, help="requests at a time")
    g.add_argument("--max-rps", type=above(0), default=None, help="at most this many requests per second")
    g.add_argument("--timeout", type=above(0), default=120.0, help="seconds to wait for one answer")
    g.add_argument("--retries", type=at_least(0, 20), default=4,
                   help="tries after a 429, a 5xx, a dropped connection or a timeout")
    g.add_argument("--max-hours", type=above(0), default=None,
                   help="refuse a run estimated (before, and at the measured speed) to take longer")
    g.add_argument("--request-seconds", type=above(0), default=2.0,
                   help="seconds per request the estimate assumes until the cache has timed this model")
    g.add_argument("--extra-body", default=None, metavar="JSON",
                   help="fields added to every request, a JSON object (a server's own sampling settings, "
                        "e.g. '{\"repeat_penalty\": 1}' for llama.cpp)")
    g.add_argument("--estimate", action="store_true", help="print the estimate of requests, tokens and time; "
                                                           "send nothing")
    g.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--json", default=None, help="write every value as JSON ('-': standard output)")
    if csv:
        p.add_argument("--csv", default=None, help="write one row per item as CSV")


def _sub(jsub: Any, name: str, help_text: str) -> argparse.ArgumentParser:
    return jsub.add_parser(name, help=help_text, description=help_text,
                           epilog=f"example: {EXAMPLES['judge ' + name]}")


def _add_judge(sub: Any) -> None:
    jp = sub.add_parser("judge", help="an LLM on an OpenAI-compatible server answers the tasks people answer",
                        description="an LLM on an OpenAI-compatible server answers word and topic intrusion, "
                                    "3-point ratings and ProxAnn's label, fit and rank (needs the judge "
                                    "extra)")
    jsub = jp.add_subparsers(dest="judge_command", required=True)

    w = _sub(jsub, "words", "word intrusion: P(intruder) per topic")
    w.add_argument("tasks", help="a model file (fresh word tasks), or the key file (.jsonl/.csv) of the "
                                 "tasks annotators saw (tealeaves intrusion words --key)")
    add_model_options(w)
    w.add_argument("--n-words", type=at_least(1, 8), default=5, help="fresh tasks: top words shown")
    w.add_argument("--task-seed", type=at_least(0), default=0, help="fresh tasks: their seed")
    _judge_options(w)
    w.set_defaults(func=_cmd_words)

    t = _sub(jsub, "topics", "topic intrusion: P(intruder) and expected topic log odds per "
                                             "document")
    t.add_argument("key", help="the key file of topic-intrusion tasks (tealeaves intrusion topics --key)")
    _judge_options(t)
    t.set_defaults(func=_cmd_topics)

    r = _sub(jsub, "ratings", "3-point ratings of each topic's top words (expected rating)")
    r.add_argument("model", help=MODEL_HELP + "; or a text file of topics, one topic's words per line")
    add_model_options(r)
    r.add_argument("--n-words", type=at_least(1, 100), default=10, help="top words shown per topic")
    _judge_options(r)
    r.set_defaults(func=_cmd_ratings)

    x = _sub(jsub, "proxann", "ProxAnn: a label per topic, each document's fit 1-5 and their "
                                              "ranking; Kendall's tau with theta")
    x.add_argument("items", help="JSON lines: topic, words, exemplars (texts), documents (texts), theta "
                                 "(the documents' proportions of the topic, optional)")
    x.add_argument("--n-words", type=at_least(1, 100), default=15, help="top words shown per topic")
    _judge_options(x)
    x.set_defaults(func=_cmd_proxann)

    c = _sub(jsub, "check", "the server's models, and whether it gives log-probabilities "
                                            "(one request of one token)")
    _judge_options(c)
    c.set_defaults(func=_cmd_check)

    q = _sub(jsub, "qualify", "qualify a judge before trusting it: it answers the bundled human studies' "
                              "topics (Hoyle et al. 2021: ratings, word intrusion; ProxAnn's Bills study: "
                              "label, fit, rank) and its agreement with the people is measured (correlation "
                              "with its interval, the ceiling, one person against the rest, the "
                              "alternative-annotator test); kept in the cache for evaluate and the report")
    q.add_argument("--study", action="append", default=None, choices=QUALIFY_STUDIES,
                   help="a bundled study (repeat; default both: hoyle2021's 300 topics, "
                        "proxann2025:bills's 24)")
    q.add_argument("--task", action="append", default=None, choices=QUALIFY_TASKS,
                   help="the judge tasks to qualify (repeat; default all): ratings and words on hoyle2021, "
                        "proxann on proxann2025:bills")
    q.add_argument("--topics", type=at_least(1), default=None, metavar="N",
                   help="a random N topics of each study (cheaper; intervals widen about as sqrt(all / N), "
                        "and the alternative-annotator test needs each of Hoyle et al.'s annotators on 30 "
                        "topics)")
    q.add_argument("--epsilon", type=above(0), default=0.1,
                   help="the alternative-annotator test's margin (default 0.1, as ProxAnn; Calderon et al. "
                        "0.2)")
    q.add_argument("--bootstrap", type=at_least(0), default=2000, help="bootstrap replicates (default 2000)")
    q.add_argument("--no-save", action="store_true",
                   help="do not keep the qualification in the cache (evaluate then shows the judge as not "
                        "qualified)")
    _judge_options(q, csv=False)
    q.set_defaults(func=_cmd_qualify)


PARSERS = {"judge": _add_judge}


def _judge(args: argparse.Namespace) -> Any:
    from ..judge import Judge

    return Judge(args.base_url, args.llm, api=args.api, method=args.method, samples=args.samples,
                 temperature=args.temperature, seed=args.seed, top_logprobs=args.top_logprobs,
                 key_env=args.key_env or None, allow_remote=args.allow_remote, cache=args.cache,
                 concurrency=args.concurrency, max_rps=args.max_rps, timeout=args.timeout,
                 retries=args.retries,
                 max_hours=args.max_hours, request_seconds=args.request_seconds,
                 extra_body=_json_object(args.extra_body),
                 progress=False if args.quiet else None)


def _json_object(text: str | None) -> dict[str, Any] | None:
    from ..errors import MethodError
    from ..files.records import parse_json

    if text is None:
        return None
    value = parse_json(text, "--extra-body")
    if not isinstance(value, dict):
        raise MethodError("--extra-body must be a JSON object")
    return value


def _finish(args: argparse.Namespace, judge: Any, result: Any, inputs: dict[str, Any]) -> int:
    if isinstance(result, dict):  # --estimate
        _print_estimate(result, judge)
        if args.json:
            write_json(args.json, {"command": f"judge {args.judge_command}", **inputs, "estimate": result})
        return 0
    print("\n".join(result.lines()))
    if args.json:
        write_json(args.json, {"command": f"judge {args.judge_command}", **inputs, **result.to_dict()})
    if args.csv:
        rows = [{k: (json.dumps(v) if isinstance(v, list | dict) else v) for k, v in it.items()}
                for it in result.items]
        with atomic_path(args.csv) as tmp, open(tmp, "w", newline="", encoding="utf-8") as fh:
            csvout.write_dicts(fh, rows)
    return 0


def _print_estimate(est: dict[str, Any], judge: Any) -> None:
    print(f"estimate: {est['requests']:,} requests ({est['cached']:,} already cached, "
          f"{est['to_send']:,} to send"
          + (f"; up to {est['fallback_requests_at_most']:,} more if log-probabilities fail"
             if est.get("fallback_requests_at_most") else "") + ")")
    print(f"  about {est['prompt_tokens']:,} prompt tokens and at most {est['completion_tokens_at_most']:,} "
          "completion tokens")
    print(f"  about {est['seconds']:.0f} s at {est['seconds_per_request']:.3g} s per request "
          f"({est['seconds_per_request_from']}), {est['concurrency']} at a time")
    print(f"  to {judge.base_url} ({'remote' if judge.endpoint.remote else 'this machine'})")


def _run(args: argparse.Namespace, call: Any, inputs: dict[str, Any]) -> int:
    judge = _judge(args)
    try:
        result = call(judge)
        if not isinstance(result, dict):
            where = judge.open_cache().path
            print(f"answers kept in {where}", file=sys.stderr)
        return _finish(args, judge, result, inputs)
    finally:
        judge.close()


def _cmd_words(args: argparse.Namespace) -> int:
    path = args.tasks
    is_key = (path.lower().endswith(".jsonl") or csvout.is_csv(path)) and args.model_format is None
    tasks = path if is_key else load_kind_arg(args, path)
    opts = {} if is_key else {"n_words": args.n_words}
    return _run(args, lambda j: j.word_intrusion(tasks, dry_run=args.estimate, task_seed=args.task_seed,
                                                 **opts), {"tasks": path})


def _cmd_topics(args: argparse.Namespace) -> int:
    return _run(args, lambda j: j.topic_intrusion(args.key, dry_run=args.estimate), {"key": args.key})


def _cmd_ratings(args: argparse.Namespace) -> int:
    topics = load_topics_arg(args, args.model)
    if isinstance(topics, str):
        from ..io.topwords import read_top_words

        topics = read_top_words(topics)
    return _run(args, lambda j: j.ratings(topics, n_words=args.n_words, dry_run=args.estimate),
                {"model": args.model})


def _cmd_proxann(args: argparse.Namespace) -> int:
    items = read_items(args.items)
    return _run(args, lambda j: j.proxann(items, n_words=args.n_words, dry_run=args.estimate),
                {"items": args.items})


def read_items(path: str) -> list[dict[str, Any]]:
    """ProxAnn items, one JSON object per line (strict JSON, read through the bounded readers)."""
    from ..files.records import numbered_json_lines

    rows = numbered_json_lines(path)
    out = []
    for where, r in rows:
        if not isinstance(r, dict):
            raise InputFileError(f"{where}: expected a JSON object with words, exemplars and documents")
        out.append(r)
    if not out:
        raise InputFileError(f"{path}: no items")
    return out


def _cmd_check(args: argparse.Namespace) -> int:
    judge = _judge(args)
    try:
        info = judge.check()
    finally:
        judge.close()
    print(f"{judge.base_url} ({'remote' if judge.endpoint.remote else 'this machine'}) lists: "
          f"{', '.join(info['served']) if info['served'] is not None else '(no list of models)'}")
    print(f"{args.llm}: reported as {info['reported_model'] or '(not said)'}; log-probabilities: "
          f"{'yes' if info['logprobs'] else 'no (the judge will sample)'}")
    if args.json:
        write_json(args.json, {"command": "judge check", **info})
    return 0


def _cmd_qualify(args: argparse.Namespace) -> int:
    from ..judge.qualify import qualify

    judge = _judge(args)
    studies = args.study or list(QUALIFY_STUDIES)
    try:
        est = qualify(judge, studies, args.task, args.topics, seed=args.seed, dry_run=True,
                      epsilon=args.epsilon, bootstrap=args.bootstrap)
        _print_estimate(est["total"], judge)
        if args.estimate:
            if args.json:
                write_json(args.json, {"command": "judge qualify", "studies": studies, "estimate": est})
            return 0
        result = qualify(judge, studies, args.task, args.topics, seed=args.seed, save=not args.no_save,
                         epsilon=args.epsilon, bootstrap=args.bootstrap)
        print(f"answers kept in {judge.open_cache().path}"
              + ("" if args.no_save else "; the qualification too (evaluate and the report show it)"),
              file=sys.stderr)
    finally:
        judge.close()
    print("\n".join(result.lines()))
    if args.json:
        write_json(args.json, {"command": "judge qualify", **result.to_dict()})
    return 0


__all__ = ["PARSERS", "EXAMPLES", "read_items"]
