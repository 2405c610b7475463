"""`tealeaves stability`: do the topics of restarts of the same K recur (Hungarian-matched topics,
per-topic and per-restart stability, the group's finding: stable, a restart stuck apart from the
rest, or unstable as a whole; the topics matched across restarts, aligned)."""

from __future__ import annotations

import argparse
import os
from typing import Any

from ..errors import MethodError
from ..files import csvout
from ..files.atomic import atomic_path
from ..output.jsonout import write_json
from ..util.limits import at_least, fraction
from .options import add_model_options, load_kind_arg, sub_parser

EXAMPLES = {
    "stability": "tealeaves stability run1.npz run2.npz run3.npz --json stability.json --csv topics.csv",
}
# stability.DISTANCES and "auto", written out: importing the module would load numpy for --help
# (tests/test_stability.py checks they are the same)
DISTANCE_CHOICES = ("auto", "jensen-shannon", "average-jaccard", "rbo")


def _add_stability(sub: Any) -> None:
    p = sub_parser(EXAMPLES, sub, "stability",
                   "stability across restarts: topics matched between restarts of the same K, per-topic "
                   "and per-restart stability, restarts that disagree with the rest flagged")
    p.add_argument("models", nargs="+", metavar="MODEL",
                   help="two or more restarts (model files of any kind, the same number of topics and words)")
    p.add_argument("--name", action="append", default=None,
                   help="a name for each model, in order (default: the file names)")
    p.add_argument("--distance", default="auto", choices=DISTANCE_CHOICES,
                   help="auto (default): Jensen-Shannon between topic-word distributions when every model "
                        "has them, else average Jaccard over the top words")
    p.add_argument("--topn", type=at_least(1), default=None,
                   help="top words for the word distances (default 10; not with jensen-shannon)")
    p.add_argument("--p", type=fraction(open_low=True), default=None,
                   help="RBO persistence, in (0, 1) (default 0.9; --distance rbo only)")
    p.add_argument("--floor", type=fraction(open_high=False), default=None,
                   help="the similarity, in [0, 1], below which a matched topic has no counterpart "
                        "(default: the floor measured for the distance; the JSON's \"floor\")")
    p.add_argument("--tolerance", type=fraction(), default=None,
                   help="the share, in [0, 1), of two restarts' matched topics that may fall below the floor "
                        "while they still agree (default: the one measured for the distance; the JSON's "
                        "\"tolerance\")")
    add_model_options(p)
    p.add_argument("--json", default=None, help="write every value as JSON ('-': standard output)")
    p.add_argument("--csv", default=None, help="write one row per topic of every restart as CSV")
    p.set_defaults(func=_cmd_stability)


PARSERS = {"stability": _add_stability}


def _cmd_stability(args: argparse.Namespace) -> int:
    from ..diagnostics.stability import stability

    if len(args.models) < 2:
        raise MethodError("stability compares restarts: give at least 2 model files")
    if args.name is not None and len(args.name) != len(args.models):
        raise MethodError(f"{len(args.name)} --name for {len(args.models)} models")
    models = [load_kind_arg(args, path) for path in args.models]
    names = args.name or [os.path.basename(path) for path in args.models]
    result = stability(models, distance=args.distance, topn=args.topn, names=names, p=args.p,
                       floor=args.floor, tolerance=args.tolerance)
    print(result.table())
    print(result.summary())
    print(f"\ntopics matched across restarts (each row: a topic of {result.reference}, the restart most "
          "similar to the others, and its match in each other restart: topic, similarity, top words; "
          "most stable first):")
    print(result.aligned_table())
    if args.json:
        write_json(args.json, {"command": "stability", "model_paths": args.models, **result.to_dict()})
    if args.csv:
        with atomic_path(args.csv) as tmp, open(tmp, "w", newline="", encoding="utf-8") as fh:
            csvout.write_dicts(fh, result.rows())
    return 0
