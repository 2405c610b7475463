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
from .options import sub_parser

EXAMPLES = {
    "metaeval": "tealeaves metaeval hoyle2021 --metric c_npmi_10_full --metric c_v_full --json agree.json",
}
STATISTICS = ("spearman", "pearson", "kendall")  # metaeval.stats.STATISTICS (no numpy for --help)
QUALITIES = ("mean", "theta", "assigned")


def _add_metaeval(sub: Any) -> None:
    p = sub_parser(EXAMPLES, sub, "metaeval",
                   "agreement of per-topic scores with human judgments: Spearman, Pearson and Kendall with "
                   "two-stage bootstrap intervals, the split-half ceiling, paired comparisons, per corpus "
                   "and pooled; the alternative-annotator test for automated judges")
    p.add_argument("judgments", metavar="JUDGMENTS",
                   help="a bundled study (hoyle2021, proxann2025:bills), a study file (.json.gz), a CSV of "
                        "answers (topic, annotator, task, value) or a folder of a study's own files")
    p.add_argument("--task", default=None,
                   help="the task whose answers are the human side (default: rating, else fit)")
    p.add_argument("--metric", action="append", default=None, metavar="NAME",
                   help="a per-topic metric the study carries (repeat; default: all of them)")
    p.add_argument("--scores", default=None, metavar="CSV",
                   help="a CSV of your own scores: a topic column (the study's topic ids) and one column "
                        "per score")
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


def _cmd_metaeval(args: argparse.Namespace) -> int:
    import time

    from ..datasets import load_judgments
    from ..metaeval import agreement, alt_test, judge_scores

    started = time.perf_counter()
    study = load_judgments(args.judgments, exclude=args.exclude)
    numeric = [k for k, j in study.tasks.items() if j.scale.kind != "text"]
    default = next((k for k in ("rating", "fit") if k in study.tasks), numeric[0] if numeric else None)
    task = args.task or default
    if task not in study.tasks:
        raise MethodError(f"{study.name} has no task {task!r} (tasks: {', '.join(study.tasks)})")
    if task is None:
        raise MethodError(f"{args.judgments}: no answers with numbers to compare scores with")
    people = study[task]
    documents = people.documents is not None and bool((people.item >= 0).any())
    quality = args.quality or ("theta" if documents else "mean")
    scores: dict[str, Any] = {}
    for name in args.metric or ([] if args.scores or args.judge else list(study.metrics)):
        scores[name] = study.metric(name)
    if args.scores:
        for name, values in _scores_csv(args.scores, people.topics).items():
            if name in scores:
                raise MethodError(f"score {name!r} is both a study metric and a column of {args.scores}")
            scores[name] = values
    judges = list(study.judges) if args.judge == ["all"] else (args.judge or [])
    for name in judges:
        if name not in study.judges:
            known = ", ".join(study.judges) or "none"
            raise MethodError(f"no judge {name!r} in {study.name} (judges: {known})")
        if task not in study.judges[name]:
            raise MethodError(f"judge {name!r} did not answer {task}")
        scores[f"judge:{name}"] = judge_scores(study.judges[name][task], quality)
    if not scores:
        raise MethodError(f"{study.name} carries no metrics: give --scores CSV or --judge NAME")
    statistics = tuple(dict.fromkeys(args.statistic)) if args.statistic else STATISTICS
    res = agreement(scores, people, quality=quality, statistics=statistics, bootstrap=args.bootstrap,
                    seed=args.seed, level=args.level)
    tests = {}
    for name in judges:
        one_topic = _each_answered_one_topic(people)
        pseudo = {"auto": "dataset" if one_topic else None, "none": None}.get(args.pseudo, args.pseudo)
        tests[name] = alt_test(study.judges[name][task], people, epsilon=args.epsilon, pseudo=pseudo,
                               level="document" if documents else "topic", seed=args.seed)
    print(format_agreement(res, study.name))
    for name, t in tests.items():
        print(format_alt_test(name, t))
    seconds = time.perf_counter() - started
    print(f"\n{seconds:.1f} s")
    if args.json:
        doc = {"command": "metaeval", "study": study.name, "judgments_path": os.fspath(args.judgments),
               "study_notes": list(study.notes), **res.to_dict(), "alt_test": tests, "seconds": seconds}
        write_json(args.json, doc)
    return 0


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
