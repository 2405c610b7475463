"""`tealeaves index build|info`: a reference index (.tlx) for coherence, built once."""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

from ..util.limits import above, at_least
from .options import dask_option, sub_parser, text_encoding

EXAMPLES = {
    "index": "tealeaves index build reference.txt -o reference.tlx --workers 2; "
             "tealeaves coherence model.npz reference.tlx",
}


def _add_index(sub: Any) -> None:
    p = sub_parser(EXAMPLES, sub, "index", "a reference index for coherence: build it once, then "
                                           "'tealeaves coherence MODEL ref.tlx' answers from it")
    verbs = p.add_subparsers(dest="verb", required=True)
    b = verbs.add_parser("build", help="index a reference corpus (one document per line, or sotu:train)",
                         description="index a reference corpus in one streamed pass",
                         epilog="example: tealeaves index build reference.txt -o reference.tlx --workers 2")
    b.add_argument("corpus", help="text, one document per line, whitespace tokens (as coherence reads "
                                  "a reference); or sotu:train")
    b.add_argument("-o", "--output", required=True, help="the index file to write (.tlx)")
    b.add_argument("--workers", type=at_least(1), default=1, help="local processes")
    b.add_argument("--max-memory", type=above(0), default=None, metavar="GB",
                   help="refuse, before any work, a build estimated to need more (default: half "
                        "this machine's memory)")
    b.add_argument("--encoding", default="utf-8", type=text_encoding,
                   help="character encoding of the corpus (default utf-8)")
    dask_option(b)
    b.set_defaults(func=_cmd_build)
    i = verbs.add_parser("info", help="what an index was built from",
                         description="print how an index was built",
                         epilog="example: tealeaves index info reference.tlx --verify")
    i.add_argument("reference", help="the index (.tlx)")
    i.add_argument("--verify", action="store_true", help="also check the postings' CRC-32 (reads it all)")
    i.set_defaults(func=_cmd_info)


def _cmd_build(args: argparse.Namespace) -> int:
    from ..coherence.index import build_estimate, build_index

    t0 = time.perf_counter()
    if os.path.isfile(args.corpus):
        est = build_estimate(os.path.getsize(args.corpus), args.workers)
        print(f"tealeaves: indexing {os.path.getsize(args.corpus) / 1e6:,.1f} MB of text: about "
              f"{est['memory'] / 2**30:.1f} GiB of memory, {est['seconds']:,.0f} s; finished chunks are "
              f"kept in {args.output}.work/ until the index is written", file=sys.stderr)
    h = build_index(args.corpus, args.output, workers=args.workers, encoding=args.encoding,
                    max_memory=args.max_memory)
    c = h["corpus"]
    print(f"{args.output}: {c['documents']:,} documents, {c['tokens']:,} tokens, {h['vocabulary']:,} "
          f"words from {c['name']} in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    return 0


def _cmd_info(args: argparse.Namespace) -> int:
    from ..coherence.index import ReferenceIndex

    r = ReferenceIndex(args.reference)
    h, c = r.header, r.header["corpus"]

    def get(d: Any, key: str) -> str:
        return str(d.get(key, "not recorded"))

    of = "arrays (a Corpus)" if r.content_of == "arrays" else "text, UTF-8"
    content = (f"{r.content[7:]} (of its {of}, "
               "as a coherence fingerprint takes it)" if r.content else
               "not recorded (built by an older tealeaves: rebuild it to compare results with its text)")
    rows = [("format", f"{get(h, 'format')}, version {get(h, 'version')}"),
            ("built by", f"tealeaves {get(h, 'tealeaves')}"), ("created", get(h, "created")),
            ("corpus", get(c, "name")),
            ("bytes", f"{c['bytes']:,}" if isinstance(c.get("bytes"), int) else get(c, "bytes")),
            ("sha256", content), ("chunk hash", f"{get(c, 'sha256')} (SHA-256 of its chunks' SHA-256s)"),
            ("documents", f"{r.documents:,}"), ("tokens", f"{r.tokens:,}"),
            ("vocabulary", f"{r.vocab_size:,}"), ("tokenizer", get(h, "tokenizer")),
            ("lowercase", get(h, "lowercase").lower()), ("rules", ", ".join(map(str, r.rules))),
            ("windows", get(h, "windows"))]
    if args.verify:
        r.verify()
        rows.append(("check", "postings verified: CRC-32, and every word's positions increasing, inside "
                              "the corpus, as many as its count, none held by two words"))
    for k, v in rows:
        print(f"{k:<11} {v}")
    return 0


PARSERS = {"index": _add_index}  # command -> what adds its parser (`main.COMMANDS` lists them in order)
