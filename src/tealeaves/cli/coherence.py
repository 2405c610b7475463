"""`tealeaves coherence`, `diversity` and `bcubed`: topic quality and clustering metrics."""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from ..datasets import read_corpus
from ..errors import InputFileError, MethodError
from ..files.textfile import read_lines
from ..model import TopicModel
from ..output.display import words_text
from ..output.jsonout import write_json
from ..topics import Topics, topic_labels, why_not
from ..util.limits import at_least
from .options import (
    add_model_options,
    dask_option,
    load_topics_arg,
    name_list,
    sub_parser,
    text_encoding,
)

EXAMPLES = {
    "coherence": "tealeaves coherence model.npz reference.txt --measure umass,npmi,c_v --topn 10",
    "diversity": "tealeaves diversity model.npz --topn 25",
    "bcubed": "tealeaves bcubed predicted_labels.txt gold_labels.txt --json b3.json",
}


def _add_coherence(sub: Any) -> None:
    co = sub_parser(EXAMPLES, sub, "coherence",
                    "topic coherence over a reference corpus (UMass, UCI, NPMI, C_V; Palmetto's C_P, C_A)")
    co.add_argument("model", help="model file (any readable format), or a text file with one topic "
                                  "(its words) per line")
    co.add_argument("reference", help="reference corpus: text, one document per line (streamed), or a "
                                      "reference index (.tlx, tealeaves index build)")
    add_model_options(co)
    co.add_argument("--measure", default="umass,npmi,c_v",
                    help="comma-separated: umass,uci,npmi,c_v (palmetto convention: also c_p,c_a)")
    co.add_argument("--convention", default="gensim", choices=("tealeaves", "gensim", "palmetto"),
                    help="whose counting and formulas: gensim (default: gensim's CoherenceModel's "
                         "numbers, what papers report), tealeaves (exact counts of repeated words), "
                         "palmetto (Palmetto's definitions)")
    co.add_argument("--topn", type=at_least(1), default=10,
                    help="top words per topic, under every convention (default 10, as OCTIS and papers "
                         "report; gensim's CoherenceModel on its own takes 20: give 20 to match it)")
    co.add_argument("--window", type=at_least(1), default=None,
                    help="sliding window (default 10; c_v 110; palmetto c_p 70, c_a 5)")
    co.add_argument("--umass-form", default=None, choices=("gensim", "mimno"),
                    help="tealeaves convention: UMass as gensim (default) or Mimno et al. sum it")
    co.add_argument("--zero", default=None, choices=("epsilon", "limit"),
                    help="tealeaves convention: NPMI of pairs that never co-occur: gensim's epsilon "
                         "value (default), or -1")
    co.add_argument("--absent", default=None, choices=("skip", "smooth", "fail"),
                    help="top words the reference lacks: skip (their pairs left out, counted), smooth "
                         "(the convention's value: probability epsilon, Palmetto's 0) or fail (an error "
                         "naming the topic and words); default: the convention's own (tealeaves: umass "
                         "smooth, others skip; gensim skip; palmetto smooth)")
    co.add_argument("--workers", type=at_least(1), default=1)
    co.add_argument("--encoding", default="utf-8", type=text_encoding,
                   help="character encoding of the reference (default utf-8)")
    dask_option(co)
    co.add_argument("--json", default=None, help="write the result as JSON ('-': standard output)")
    co.set_defaults(func=_cmd_coherence)


def _add_diversity(sub: Any) -> None:
    dv = sub_parser(EXAMPLES, sub, "diversity", "topic diversity, and exclusivity (stm) for a model")
    dv.add_argument("model", help="model file (any readable format), or a text file of topics")
    add_model_options(dv)
    dv.add_argument("--topn", type=at_least(1), default=25)
    dv.add_argument("--json", default=None, help="write the result as JSON ('-': standard output)")
    dv.set_defaults(func=_cmd_diversity)


def _add_bcubed(sub: Any) -> None:
    bc = sub_parser(EXAMPLES, sub, "bcubed",
                    "B-Cubed, purity, inverse purity and NMI of labels against gold labels")
    bc.add_argument("pred", help="predicted labels, one per line (or .npy: labels or doc-topic matrix)")
    bc.add_argument("gold", help="gold labels, one per line (or .npy)")
    bc.add_argument("--json", default=None, help="write the result as JSON ('-': standard output)")
    bc.set_defaults(func=_cmd_bcubed)


PARSERS = {  # command -> what adds its parser (`main.COMMANDS` lists them in order)
    "coherence": _add_coherence,
    "diversity": _add_diversity,
    "bcubed": _add_bcubed,
}


def _cmd_coherence(args: argparse.Namespace) -> int:
    from ..coherence import CONVENTION_MEASURES, coherence, count, counting, topic_words
    from ..coherence.counts import read_once

    names = name_list(args.measure, "--measure", "measure")
    known = CONVENTION_MEASURES[args.convention]
    for m in names:
        if m not in known:
            hint = "; it is Palmetto's: --convention palmetto" if m in CONVENTION_MEASURES["palmetto"] else ""
            raise MethodError(f"unknown coherence measure {m!r} under the {args.convention} convention "
                              f"(known: {', '.join(known)}){hint}")
    if args.convention != "tealeaves" and (args.umass_form or args.zero):
        raise MethodError(f"--umass-form and --zero belong to the tealeaves convention (add --convention "
                          f"tealeaves); the {args.convention} convention has its own definitions")
    topics = load_topics_arg(args, args.model)
    if isinstance(topics, str):
        check_not_swapped(args.model, args.reference)
    topn = args.topn
    lists = isinstance(topics, str | list) and args.convention == "gensim"  # gensim cuts lists itself
    words = topic_words(topics, 10**9 if lists else topn)
    reference = args.reference
    if reference.endswith(".npz"):
        reference = read_corpus(reference)
    reference = read_once(reference, args.encoding)  # a pipe: read once for every measure
    results = []
    cache: dict = {}
    targets = sorted({w for t in words for w in t})
    for m in names:
        opts = {}
        if args.convention == "tealeaves" and m != "uci":
            opts = {"form": args.umass_form or "gensim"} if m == "umass" else {"zero": args.zero or "epsilon"}
        win, rule = counting(m, args.convention, None if m == "umass" else args.window)
        if (win, rule) not in cache:
            cache[win, rule] = count(reference, targets, window=win, workers=args.workers,
                                     encoding=args.encoding, rule=rule, groups=words)
        results.append(coherence(words, reference, measure=m, topn=topn, window=win,
                                 counts=cache[win, rule], convention=args.convention, absent=args.absent,
                                 **opts))
    labels = topic_labels(words if isinstance(topics, str | list) else topics)
    shown = [_as_taken(full, kept, topn) for full, kept in zip(words, results[0].topics, strict=True)] \
        if lists else words
    for line in coherence_table(shown, results, labels):
        print(line)
    if args.json:
        write_json(args.json, {"command": "coherence", "model": args.model,
                               "reference": args.reference, "results": [r.to_dict() for r in results]})
    return 0


def check_not_swapped(model: str, reference: str) -> None:
    """A model file given where the reference goes, while the model's place holds a text file (read
    as topics): the arguments are swapped (a corpus read as topics fails with "topic 14 repeats a
    word")."""
    import os
    import zipfile

    from ..datasets import SOTU_CORPORA, bundled_model
    from ..errors import TealeavesError
    from ..io import sniff_format

    fmt = None
    if bundled_model(reference) and reference not in SOTU_CORPORA:
        fmt = "bundled model"
    elif os.path.isfile(reference) and not reference.endswith(".tlx"):
        try:
            fmt = sniff_format(reference)
        except TealeavesError:
            return
        if fmt in ("npz", "arrays") and reference.endswith(".npz"):  # a corpus .npz is no model
            with zipfile.ZipFile(reference) as z:
                names = set(z.namelist())
            fmt = fmt if names & {"phi.npy", "topic_word.npy"} else None
    if fmt is not None:
        raise MethodError(f"the arguments look swapped: {reference} is a model ({fmt}) and {model} a text "
                          f"file; give the model first: tealeaves coherence MODEL REFERENCE (e.g. "
                          f"tealeaves coherence {reference} {model})")


def _score(value: float) -> str:
    return "—" if np.isnan(value) else f"{value:.4f}"


def _as_taken(full: list[str], kept: list[str], topn: int) -> list[str]:
    """A topic's words as the gensim convention took them, with the absent words it dropped shown in
    their places (marked by `coherence_table`): the whole list, or, when it was cut to `topn`
    present words, the given words up to the last of them."""
    if len(kept) < topn:
        return full
    keep, seen = set(kept), 0
    for i, w in enumerate(full):
        seen += w in keep
        if seen == len(kept):
            return full[:i + 1]
    return full


def coherence_table(words: list[list[str]], results: list, labels: list[str] | None = None) -> list[str]:
    """The terminal table: per topic each measure's score (— where there is none), its absent
    words, its pairs that never co-occur (per measure) and its words (* absent); then the reason
    for every —, what was done with absent words, and the fingerprint line."""
    from ..coherence.fingerprint import line
    from ..coherence.measures import ABSENT_POLICY
    from ..diagnostics.flags import coherence_flags, too_small

    names = [r.measure for r in results]
    npmi = next((r for r in results if r.measure == "npmi"), None)
    flags = coherence_flags(npmi) if npmi is not None else None
    small = too_small(npmi) if npmi is not None else None
    head = ["topic", *names, "absent", "never together", *(["flags"] if flags else []), "top words"]
    rows = []
    for k, t in enumerate(words):
        miss = set().union(*(set(r.missing[k]) for r in results))
        shown = words_text(t, miss)
        zero = "/".join(str(r.coverage[k]["zero_pairs"]) for r in results)
        rows.append([labels[k] if labels else str(k), *[_score(r.per_topic[k]) for r in results],
                     str(len(miss)), f"{zero} of {results[0].coverage[k]['word_pairs']}",
                     *([",".join(flags[k]) or "-"] if flags else []), shown])
    rows.append(["mean", *[_score(r.mean) for r in results], "", "", *([""] if flags else []), ""])
    widths = [max(len(x) for x in col) for col in zip(head, *rows, strict=True)]
    out = ["  ".join(c.rjust(w) if 0 < i <= len(names) + 1 else c.ljust(w)
                     for i, (c, w) in enumerate(zip(cells, widths, strict=True))).rstrip()
           for cells in [head, *rows]]
    for r in results:
        out += [f"— topic {k} {r.measure}: {c['reason']}" for k, c in enumerate(r.coverage) if c["reason"]]
    for r in results:
        scored = int(np.sum(~np.isnan(r.per_topic)))
        if scored < len(r.per_topic):
            out.append(f"mean {r.measure}: over the {scored} of {len(r.per_topic)} topics with a score "
                       "(— left out)")
        out += standin_lines(r)
    nmiss = sum(len(m) for m in results[0].missing)
    if nmiss:
        policies = {r.params["absent"] for r in results}
        for p in sorted(policies):
            which = ", ".join(r.measure for r in results if r.params["absent"] == p)
            out.append(f"* {nmiss} top words do not occur in the reference; {which} (absent={p}): "
                       f"{ABSENT_POLICY[p]}")
    out.append(f"never together: pairs of present top words that never co-occur in {'/'.join(names)}'s units")
    if flags:
        out.append(flag_legend(npmi, flags))
    elif small:
        out.append(small)
    out.append(line([r.fingerprint for r in results]))
    return out


def flag_legend(npmi: Any, flags: list[list[str]]) -> str:
    """What the flags column means, with its thresholds and how many topics raised each."""
    from ..diagnostics.flags import THRESHOLDS

    n = {f: sum(f in fl for fl in flags) for f in ("incoherent", "never-together", "rare-words")}
    t = THRESHOLDS
    parts = [f"flags (from NPMI, top {npmi.params['topn']}, window {npmi.params['window']}):",
             f"incoherent = NPMI < {t['incoherent']:g} ({n['incoherent']} topics; the cut that best",
             "separates topics people rated junk, docs/junk_flags.md);",
             f"never-together = more than {t['never-together']:.0%} of the pairs never co-occur",
             f"({n['never-together']});",
             f"rare-words = at least {t['rare-words']:.0%} of the top words rarer than 1 per million tokens",
             f"or absent ({n['rare-words']}; a caution, not junk by itself)"]
    return " ".join(parts)


def standin_lines(r: Any) -> list[str]:
    """Under the Palmetto convention, what of a result's scores is stand-ins rather than counts:
    one line per topic with a note, and one line of totals (a warning when every topic has one)."""
    cov = [c for c in r.coverage if "note" in c]
    if not cov:
        return []
    out = [f"! topic {k} {r.measure}: {c['note']}" for k, c in enumerate(r.coverage) if c.get("note")]
    noted = sum(bool(c["note"]) for c in cov)
    rare = sum(len(c["below_min_frequency"]) for c in cov)
    below = sum(c["pairs_below_min_frequency"] for c in cov)
    total = (f"{r.measure} (palmetto): {rare} of {sum(len(t) for t in r.topics)} top words and {below} of "
             f"{sum(c['word_pairs'] for c in cov)} word pairs below its minimum frequency (probability 0); "
             f"{sum(r.undefined_pairs)} undefined values counted as 0, "
             f"{sum(c['epsilon_values'] for c in cov)} values from ε alone; "
             f"{noted} of {len(cov)} topics noted (!)")
    warn = "warning: every score is mostly stand-ins, not a measurement; " if noted == len(cov) else ""
    if rare or below or noted:
        out.append(warn + total)
    return out


def _cmd_diversity(args: argparse.Namespace) -> int:
    from ..coherence import diversity, exclusivity

    topics = load_topics_arg(args, args.model)
    div = diversity(topics, args.topn)
    print(f"topic diversity (unique share of the top {args.topn} words): {div:.4f}")
    out: dict[str, Any] = {"diversity": div, "topn": args.topn}
    reason = why_not("exclusivity", topics) if isinstance(topics, Topics) else None
    if reason is not None:
        print(f"exclusivity: — ({reason})")
        out["exclusivity"], out["exclusivity_reason"] = None, reason
    elif isinstance(topics, TopicModel | Topics):
        ex = exclusivity(topics)
        labels = topic_labels(topics)
        each = " ".join(f"{v:.2f}" if lab == str(k) else f"{lab}={v:.2f}"
                        for k, (lab, v) in enumerate(zip(labels, ex, strict=True)))
        print(f"exclusivity (stm, FREX over top 10, weight 0.7): mean {ex.mean():.4f}, per topic {each}")
        out["exclusivity"] = [float(v) for v in ex]
        out["words"] = _words(topics)
    if args.json:
        write_json(args.json, {"command": "diversity", "model": args.model, **out})
    return 0


def _words(topics: Any) -> list[list[str]] | None:
    """Each topic's top 10 words (the report labels its bars with them), None without words."""
    from ..coherence import topic_words

    try:
        return topic_words(topics, 10, "exclusivity")
    except MethodError:
        return None


MISSING_LABELS = ("", "nan", "na", "n/a", "none", "null")


def _read_labels(path: str):


    if path.endswith(".npy"):
        from ..files.records import check_proportions, read_npy

        labels = read_npy(path, "labels")
        if labels.ndim == 2:  # a doc-topic matrix: its argmax
            return check_proportions(labels, path, rows_sum_to_one=False)
        return labels
    labels = [line.strip() for _, line in read_lines(path)]
    for i, label in enumerate(labels, 1):
        if label.lower() in MISSING_LABELS:
            raise InputFileError(f"{path}:{i}: missing label {label!r} (every item needs one; a blank line "
                                 "would shift every label after it)")
    return np.array(labels)


def _cmd_bcubed(args: argparse.Namespace) -> int:
    from ..clustering import bcubed, inverse_purity, nmi, purity

    pred, gold = _read_labels(args.pred), _read_labels(args.gold)
    if len(pred) != len(gold):
        raise MethodError(f"{args.pred} has {len(pred)} labels but {args.gold} has {len(gold)}")
    res = bcubed(pred, gold)
    extra = {"purity": purity(pred, gold), "inverse_purity": inverse_purity(pred, gold),
             "nmi": nmi(pred, gold)}
    print(f"B-Cubed over {len(res.item_precision)} items: precision {res.precision:.4f}, "
          f"recall {res.recall:.4f}, F {res.f:.4f} (mean of item F; F of the means {res.f_of_means:.4f})")
    print(f"purity {extra['purity']:.4f}, inverse purity {extra['inverse_purity']:.4f}, "
          f"NMI {extra['nmi']:.4f}")
    if args.json:
        write_json(args.json, {"command": "bcubed", **res.to_dict(), **extra})
    return 0
