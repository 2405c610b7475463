"""`tealeaves metaeval`: how well per-topic scores (the study's own metrics, a CSV of the user's,
automated judges' answers) agree with people's judgments, with intervals, the human ceiling,
paired comparisons and, for judges, the alternative-annotator test."""

from __future__ import annotations

import argparse
import os
from typing import Any

from ..errors import InputFileError, MethodError, shown
from ..output.jsonout import write_json
from ..util.limits import at_least, fraction
from .options import add_model_options, load_kind_arg, sub_parser

EXAMPLES = {
    "metaeval": "tealeaves metaeval hoyle2021 --metric c_npmi_10_full --metric c_v_full --json agree.json   "
                "(your app study: tealeaves metaeval --responses export.csv --key key.jsonl --model lda.npz "
                "--reference train.txt)",
}
STATISTICS = ("spearman", "pearson", "kendall")  # metaeval.stats.STATISTICS (no numpy for --help)
QUALITIES = ("mean", "theta", "assigned")


def _add_metaeval(sub: Any) -> None:
    p = sub_parser(EXAMPLES, sub, "metaeval",
                   "agreement of per-topic scores with human judgments: Spearman, Pearson and Kendall with "
                   "two-stage bootstrap intervals, the split-half ceiling, paired comparisons, per corpus "
                   "and pooled; the alternative-annotator test for automated judges; a study collected with "
                   "the annotation app read from its export and key")
    p.add_argument("judgments", metavar="JUDGMENTS", nargs="?", default=None,
                   help="a bundled study (hoyle2021, proxann2025:bills), a study file (.json.gz), a CSV of "
                        "answers (topic, annotator, task, value) or a folder of a study's own files; or give "
                        "--responses and --key")
    p.add_argument("--responses", default=None, metavar="EXPORT",
                   help="a study collected with the annotation app: the export of `tealeaves annotate "
                        "export` (word intrusion or ProxAnn), with --key")
    p.add_argument("--key", default=None, help="the key of the task set the export answers")
    p.add_argument("--judge-responses", action="append", default=None, metavar="NAME=EXPORT",
                   help="an automated judge's answers to the same tasks, in the export's format (repeat); "
                        "then --judge NAME (or all) compares it")
    p.add_argument("--max-attention-failures", type=at_least(0), default=0,
                   help="an app study: attention checks an annotator may fail and still be counted")
    p.add_argument("--distractor-max", type=at_least(1, 4), default=2,
                   help="an app ProxAnn study: a distractor rated above this fails the attention check")
    p.add_argument("--task", default=None,
                   help="the task whose answers are the human side (default: rating, else word-intrusion, "
                        "else fit)")
    p.add_argument("--metric", action="append", default=None, metavar="NAME",
                   help="a per-topic metric the study carries (repeat; default: all of them)")
    p.add_argument("--scores", default=None, metavar="CSV",
                   help="a CSV of your own scores: a topic column (the study's topic ids; an app study's are "
                        "MODEL/K) and one column per score")
    p.add_argument("--model", action="append", default=None, metavar="[NAME=]FILE",
                   help="a model whose topics the study judged (repeat; NAME as the study names it, default "
                        "the file's model name): tealeaves computes its coherence (--measure over "
                        "--reference) and exclusivity on those very topics")
    p.add_argument("--reference", default=None,
                   help="reference texts (or a .tlx index) for the coherence of --model's topics")
    p.add_argument("--measure", default="npmi,umass",
                   help="coherence measures for --model, comma-separated (default npmi,umass)")
    p.add_argument("--topn", type=at_least(1), default=10, help="top words per topic for --model's coherence")
    p.add_argument("--judge", action="append", default=None, metavar="NAME",
                   help="an automated judge of the study (repeat; 'all' for every one): its answers as a "
                        "per-topic score, and the alternative-annotator test")
    p.add_argument("--quality", default=None, choices=QUALITIES,
                   help="the people's per-topic score: mean (answers about topics; the default there) or, "
                        "for answers about documents, Kendall's tau of their mean with the model's theta "
                        "(the default there) or its 0/1 assignments")
    p.add_argument("--statistic", action="append", default=None, choices=STATISTICS,
                   help="correlations to report (repeat; default all three)")
    p.add_argument("--bootstrap", type=at_least(0), default=2000, help="bootstrap replicates (default 2000)")
    p.add_argument("--level", type=fraction(open_low=True), default=0.95,
                   help="interval level (default 0.95)")
    p.add_argument("--seed", type=at_least(0), default=0)
    p.add_argument("--exclude", default="authors", choices=("authors", "strict", "none"),
                   help="a ProxAnn study's attention-check rule (default: the authors')")
    p.add_argument("--epsilon", type=fraction(), default=0.1,
                   help="the alternative-annotator test's cost-benefit margin (default 0.1, as ProxAnn)")
    p.add_argument("--pseudo", default="auto", choices=("auto", "dataset", "model", "none"),
                   help="alternative-annotator test: combine one-topic annotators into pseudo-annotators "
                        "(auto: when every annotator answered a single topic)")
    p.add_argument("--json", default=None, help="write every value as JSON ('-': standard output)")
    add_model_options(p)
    p.set_defaults(func=_cmd_metaeval)


PARSERS = {"metaeval": _add_metaeval}


def _scores_csv(path: str, topics: Any) -> dict[str, Any]:
    import numpy as np

    from ..files.records import numbered_csv, strict_float

    header, rows = numbered_csv(path, ("topic",))
    names = [h for h in header if h != "topic"]
    if not names:
        raise InputFileError(f"{path}: no score columns beside 'topic'")
    out = {n: np.full(len(topics), np.nan) for n in names}
    seen: dict[str, str] = {}
    for where, row in rows:
        t = row["topic"]
        if t not in topics.ids:
            raise InputFileError(f"{where}: topic {shown(t)} is not among the study's {len(topics)} topics")
        if t in seen:
            raise InputFileError(f"{where}: topic {shown(t)} appears twice (also {seen[t]})")
        seen[t] = where
        i = topics.index(t)
        for n in names:
            if row[n].strip():
                out[n][i] = strict_float(row[n], where, n)
    return out


def _pairs(values: list[str] | None, flag: str) -> dict[str, str]:
    """NAME=VALUE arguments (a VALUE alone is named by itself) as a mapping; a name given twice is
    an error."""
    out: dict[str, str] = {}
    for v in values or []:
        name, _, value = v.partition("=") if "=" in v else ("", "", v)
        name = name or value
        if not value or name in out:
            why = "expected NAME=FILE" if not value else f"{name!r} given twice"
            raise MethodError(f"{flag} {v!r}: {why}")
        out[name] = value
    return out


def _study(args: argparse.Namespace) -> Any:
    """The study: a bundled name or a file (JUDGMENTS), or the app's export with its key."""
    from ..datasets import load_judgments

    app = args.responses is not None or args.key is not None
    if app and args.judgments is not None:
        raise MethodError("give a study (JUDGMENTS) or the annotation app's export (--responses with --key), "
                          "not both")
    if app:
        if args.responses is None or args.key is None:
            raise MethodError("an app study needs both its export (--responses) and its task set's key "
                              "(--key)")
        from ..metaeval.appstudy import app_study

        return app_study(args.responses, args.key, _pairs(args.judge_responses, "--judge-responses"),
                         args.max_attention_failures, args.distractor_max)
    if args.judgments is None:
        raise MethodError("give a study (JUDGMENTS: hoyle2021, proxann2025:bills or a file) or the "
                          "annotation app's export (--responses EXPORT --key KEY)")
    if args.judge_responses:
        raise MethodError("--judge-responses adds judges to an app study (--responses and --key)")
    return load_judgments(args.judgments, exclude=args.exclude)


def _model_scores(args: argparse.Namespace, study: Any) -> tuple[dict[str, Any], list[str]]:
    """tealeaves' coherence and exclusivity of the study's topics from --model (over --reference)."""
    from ..evaluate.rows import study_scores

    models = _pairs(args.model, "--model")
    if not models:
        if args.reference is not None:
            raise MethodError("--reference is for the coherence of --model's topics: give --model too")
        return {}, []
    loaded = {}
    for name, path in models.items():
        m = load_kind_arg(args, path)
        loaded[m.name if name == path else name] = m
    measures = [x.strip() for x in args.measure.split(",") if x.strip()] if args.reference is not None else []
    return study_scores(loaded, study, args.reference, measures, args.topn, encoding="utf-8")


def _cmd_metaeval(args: argparse.Namespace) -> int:
    import time

    from ..metaeval import agreement, alt_test, document_agreement, judge_scores, leave_one_out, people_side

    started = time.perf_counter()
    study = _study(args)
    people, quality = people_side(study, args.task, args.quality)
    task = next(k for k, j in study.tasks.items() if j is people)
    documents = quality in ("theta", "assigned")
    scores: dict[str, Any] = {}
    given = args.scores or args.judge or args.model
    for name in args.metric or ([] if given else list(study.metrics)):
        scores[name] = study.metric(name)
    if args.scores:
        for name, values in _scores_csv(args.scores, people.topics).items():
            if name in scores:
                raise MethodError(f"score {name!r} is both a study metric and a column of {args.scores}")
            scores[name] = values
    computed, model_notes = _model_scores(args, study)
    for name, values in computed.items():
        scores[f"{name} (tealeaves)" if name in scores else name] = values
    judges = list(study.judges) if args.judge == ["all"] else (args.judge or [])
    for name in judges:
        if name not in study.judges:
            known = ", ".join(study.judges) or "none"
            raise MethodError(f"no judge {name!r} in {study.name} (judges: {known})")
        if task not in study.judges[name]:
            raise MethodError(f"judge {name!r} did not answer {task}")
        scores[f"judge:{name}"] = judge_scores(study.judges[name][task], quality)
    family = study.extra.get("family")
    proxann = family == "proxann" or (documents and people.task in ("fit", "rank"))
    if not scores and not proxann:
        raise MethodError(f"{study.name} carries no metrics: give --scores CSV, --model FILE with "
                          "--reference, or --judge NAME")
    statistics = tuple(dict.fromkeys(args.statistic)) if args.statistic else STATISTICS
    res = agreement(scores, people, quality=quality, statistics=statistics, bootstrap=args.bootstrap,
                    seed=args.seed, level=args.level) if scores else None
    tests, doc_agreement = {}, {}
    for name in judges:
        one_topic = _each_answered_one_topic(people)
        pseudo = {"auto": "dataset" if one_topic else None, "none": None}.get(args.pseudo, args.pseudo)
        tests[name] = alt_test(study.judges[name][task], people, epsilon=args.epsilon, pseudo=pseudo,
                               level="document" if documents else "topic", seed=args.seed)
        if documents:
            doc_agreement[name] = document_agreement(study.judges[name][task], people,
                                                     bootstrap=args.bootstrap, seed=args.seed,
                                                     level=args.level)
    block: dict[str, Any] = {}
    scored = None
    if proxann:  # ProxAnn's own statistics: the human baseline of the topic ranking, per topic and document
        ranking = quality if quality != "mean" else "theta"
        block["leave_one_out"] = {t: leave_one_out(study[t], ranking, seed=args.seed)
                                  for t in ("fit", "rank") if t in study.tasks}
        if family == "proxann":
            from ..proxann import score_proxann

            scored = score_proxann(args.key, args.responses, args.max_attention_failures, args.distractor_max,
                                   args.bootstrap, args.seed)
            block["proxann_score"] = scored.to_dict()
    if res is not None:
        print(format_agreement(res, study.name))
    else:
        print(f"{study.name}: no per-topic scores given (--scores, --model with --reference, --judge): "
              "ProxAnn's own statistics only")
    for name, t in tests.items():
        print(format_alt_test(name, t))
    for name, d in doc_agreement.items():
        print(format_document_agreement(name, d))
    for line in format_proxann(block, scored):
        print(line)
    for n in [*model_notes, *study.notes]:
        print(f"note: {n}")
    seconds = time.perf_counter() - started
    print(f"\n{seconds:.1f} s")
    if args.json:
        body = res.to_dict() if res is not None else {
            "task": "metaeval", "judgment_task": people.task, "quality": quality, "rows": [], "ceiling": [],
            "comparisons": [], "notes": [], "params": {"bootstrap": args.bootstrap, "level": args.level}}
        doc = {"command": "metaeval", "study": study.name,
               "judgments_path": os.fspath(args.judgments or args.responses),
               "study_notes": list(study.notes),
               "model_notes": model_notes, **body, "alt_test": tests, "document_agreement": doc_agreement,
               **block, "seconds": seconds}
        write_json(args.json, doc)
    return 0


def format_document_agreement(name: str, d: dict[str, Any]) -> str:
    from ..output.numbers import fixed

    if d["mean"] is None:
        return f"\ndocument agreement, {name}: {d['why'] or 'undefined'}"
    ci = f" [{fixed(d['low'], 2)}, {fixed(d['high'], 2)}]" if d["low"] is not None else ""
    return (f"\ndocument agreement, {name}: Kendall tau of its document fits with the people's mean, "
            f"averaged over {d['topics']} topics: {fixed(d['mean'], 2)}{ci}; people with each other (each "
            f"against the mean of the others): {fixed(d['human_baseline'], 2)}"
            + (f"\nnote: {d['why']}" if d["why"] else ""))


def format_proxann(block: dict[str, Any], scored: Any = None) -> list[str]:
    """ProxAnn's own statistics: the human baseline of the topic ranking, and (an app study) the
    per-model scores against theta (`scored`, a `ProxAnnScores`)."""
    from ..output.numbers import fixed

    out = []
    for t, loo in (block.get("leave_one_out") or {}).items():
        head = (f"\nhuman baseline of the topic ranking by {t} (one annotator against the rest, Kendall tau "
                f"over {loo['topics']} topics, {loo['repeats']} draws)")
        out.append(f"{head}: {fixed(loo['mean'], 2)} ± {fixed(loo['sd'], 2)}" if loo["mean"] is not None and
                   loo["why"] is None else f"{head}: {loo['why'] or 'undefined'}")
    if scored is not None:
        from ..proxann import summary_lines

        out.append("\nper topic and document against theta (as tealeaves proxann score):")
        out += summary_lines(scored)
    return out


def _each_answered_one_topic(j: Any) -> bool:
    import numpy as np

    pairs = np.unique(np.stack([j.annotator, j.topic]), axis=1)
    return bool(np.all(np.bincount(pairs[0]) <= 1))


def _cell(r: dict[str, Any]) -> str:
    from ..output.numbers import fixed

    if r.get("estimate") is None:
        return "n/a"
    if r.get("low") is None:
        return f"{fixed(r['estimate'], 2)} (no interval)"
    return f"{fixed(r['estimate'], 2)} [{fixed(r['low'], 2)}, {fixed(r['high'], 2)}]"


def format_agreement(res: Any, name: str) -> str:
    """The terminal table: one line per score, a column per group, for each statistic."""
    lines = [f"{name}: agreement with people's {res.task} ({res.quality}), "
             f"{int(res.params['level'] * 100)}% intervals from {res.params['bootstrap']} two-stage "
             "resamples"]
    groups = res.groups
    for stat in res.params["statistics"]:
        rows = [[s] + [_cell(res.get(s, g, stat)) for g in groups] for s in res.scores]
        ceil = {c["group"]: c for c in res.ceiling if c["statistic"] == stat}
        if ceil:
            cells = [_cell({"estimate": ceil[g]["ceiling"], "low": ceil[g]["low"], "high": ceil[g]["high"]})
                     if g in ceil else "" for g in groups]
            rows.append(["ceiling (split half)", *cells])
        head = [stat] + [f"{g} ({res.get(res.scores[0], g, stat)['topics']} topics)" for g in groups]
        widths = [max(len(str(x)) for x in col) for col in zip(head, *rows, strict=True)]
        lines.append("")
        lines += ["  ".join(str(x).ljust(w) for x, w in zip(row, widths, strict=True)).rstrip()
                  for row in [head, *rows]]
    why = sorted({r["why"] for r in res.rows if r.get("why")}
                 | {c["why"] for c in res.ceiling if c.get("why")})
    best = _best(res)
    if best:
        lines.append("")
        lines += best
    lines += [f"note: {n}" for n in [*why, *res.notes]]
    return "\n".join(lines)


def _best(res: Any) -> list[str]:
    """Each other score against the best one (pooled, the first statistic): the paired test."""
    from ..output.numbers import fixed

    stat = res.params["statistics"][0]
    pooled = [res.get(s, "all", stat) for s in res.scores]
    ranked = [r for r in pooled if r["estimate"] is not None]
    if len(ranked) < 2 or not res.comparisons:
        return []
    top = max(ranked, key=lambda r: r["estimate"])["score"]
    out = [f"paired comparisons with the best score, {top} ({stat}, all topics):"]
    for c in res.comparisons:
        if c["group"] == "all" and c["statistic"] == stat and top in (c["a"], c["b"]):
            other = c["b"] if c["a"] == top else c["a"]
            sign = 1 if c["a"] == top else -1
            if c["difference"] is None or c["p"] is None:
                out.append(f"  {other}: n/a")
                continue
            lo, hi = sorted((sign * c["low"], sign * c["high"]))
            out.append(f"  {top} - {other}: {fixed(sign * c['difference'], 3)} [{fixed(lo, 3)}, "
                       f"{fixed(hi, 3)}], p = {fixed(c['p'], 3)}")
    return out


def format_alt_test(name: str, t: dict[str, Any]) -> str:
    from ..output.numbers import fixed

    head = f"\nalternative-annotator test, {name} (epsilon {t['epsilon']}, {t['level']} level"
    head += f", pseudo-annotators by {t['pseudo']}, {t['resamples']} draws)" if t["pseudo"] else ")"
    if t["winning_rate"] is None:
        return f"{head}: {t['why']}"
    verdict = "passes" if t["passes"] else "does not pass"
    out = (f"{head}: winning rate {fixed(t['winning_rate'], 2)} over {t['annotators']} annotators "
           f"({verdict}: needs 0.5), advantage probability {fixed(t['advantage_probability'], 2)}")
    return out + (f"\nnote: {t['why']}" if t.get("why") else "")
