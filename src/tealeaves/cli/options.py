"""The options the command groups share: the model arguments (`--model-format`, `--alpha`,
`--allow-pickle`, `--load-timeout`, `--normalize`, `--vocab`) and one way to turn a path into a model;
the documents' options and one way to read them; the run options (`--seed`, `--workers`, `--dask`,
...); `--encoding`'s type; a command's parser with its example."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

import numpy as np

from ..corpus import Corpus, dropped_warning
from ..datasets import bundled_model, load_topics, read_corpus
from ..errors import BadValueError, InputFileError, InvalidCorpusError, MethodError, TealeavesError
from ..files.records import check_proportions, read_npy, strict_float
from ..files.textfile import check_encoding, read_lines
from ..io import FORMAT_ALIASES, FORMATS, ZOO_FORMATS, sniff_format
from ..model import TopicModel
from ..topics import WEIGHTS_KINDS, Topics, as_lda
from ..util.limits import above, at_least, not_below
from ..util.parallel import DASK_ENV, DASK_MIN_SECONDS

MODEL_HELP = ("model file: tealeaves .npz, MALLET state or topic-word weights, tomotopy, pyLDAvis "
              "JSON, plain arrays (.npy, .npz with topic_word, CSV); gensim and other pickles with "
              "--allow-pickle")


TOP_WORDS = "top-words"  # --model-format: a top-words file read with every field a word


def add_model_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("model file")
    g.add_argument("--model-format", default=None,
                   choices=[*FORMATS, *ZOO_FORMATS, *FORMAT_ALIASES, TOP_WORDS], metavar="FORMAT",
                   help="model file format (default: detected); one of "
                        f"{', '.join([*FORMATS, *ZOO_FORMATS])}; {TOP_WORDS}: a text file of each "
                        "topic's top words, every field a word (numbers too), for the top-word measures")
    g.add_argument("--alpha", default=None,
                   help="alpha for formats without it (MALLET topic-word weights: the "
                        "--output-topic-keys file; pyLDAvis JSON: a number or comma-separated values)")
    g.add_argument("--allow-pickle", action="store_true",
                   help="load pickle-based files (gensim's save, scikit-learn pickles/joblib): "
                        "unpickling runs code stored in the file, so only for files you trust")
    g.add_argument("--load-timeout", type=above(0), default=None, metavar="SECONDS",
                   help="time limit for tomotopy's loader (default 60 s + 2 s per MB)")
    g.add_argument("--normalize", action="store_true",
                   help="rescale topic-word rows that do not sum to 1 (said on stderr: how many)")
    g.add_argument("--weights", default=None, choices=WEIGHTS_KINDS,
                   help="plain arrays: what the topic-word values are (default distributions, checked)")
    g.add_argument("--doc-topic", default=None, metavar="FILE",
                   help="plain arrays: the training documents' topic proportions (D x T, .npy or CSV)")
    g.add_argument("--time-slice", default=None, type=_time_slice, metavar="T",
                   help="a gensim LdaSeqModel: the time slice to read (0, 1, ...; 'all' with evaluate: "
                        "one model per slice)")
    g.add_argument("--dmr-metadata", default=None, metavar="VALUE",
                   help="a tomotopy DMRModel: the metadata value whose Dirichlet prior scores held-out "
                        "documents (without it a DMR has no single prior: no likelihood)")
    g.add_argument("--vocab", default=None, metavar="FILE",
                   help="the model's vocabulary, one word per line in word-id order: gives a model saved "
                        "without one its words (needed to read text documents); a model that has one "
                        "must match it (also the check for an ids corpus's vocabulary)")


def name_list(text: str, flag: str, what: str) -> list[str]:
    """A comma-separated list of names (`--measure a,b`): each given once, at least one."""
    names = [m.strip() for m in text.split(",") if m.strip()]
    if not names:
        raise MethodError(f"{flag} names no {what}")
    twice = sorted({m for m in names if names.count(m) > 1})
    if twice:
        raise MethodError(f"{flag} names {twice[0]!r} twice; give each {what} once")
    return names


def _time_slice(text: str) -> int | str:
    if text == "all":
        return text
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a time slice number or 'all', got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"a time slice is >= 0, got {value}")
    return value


def load_model_arg(args: argparse.Namespace, path: str, metric: str = "heldout") -> TopicModel:
    """The LDA a command that scores with one (`metric`, a name of `topics.NEEDS`) reads: a model
    of another kind is the one-line reason the metric does not apply to it."""
    model = load_any_arg(args, path)
    if isinstance(model, list):
        raise MethodError(f"{path}: --time-slice all gives {len(model)} models; this command takes one "
                          "(give --time-slice T)")
    return as_lda(metric, model)


def load_any_arg(args: argparse.Namespace, path: str) -> Topics | list[Topics]:
    """A model file of any kind as the options say (format, alpha for formats that lack it,
    consent); what --normalize did is said on stderr."""
    if getattr(args, "model_format", None) == TOP_WORDS:
        raise MethodError(f"--model-format {TOP_WORDS} is a list of top words, not a model: it is read by "
                          "coherence, diversity and the embedding measures")
    alpha: Any = getattr(args, "alpha", None)
    if alpha is not None and not os.path.exists(alpha):
        try:
            alpha = [strict_float(x.strip(), "--alpha", "value") for x in alpha.split(",")]
        except BadValueError:
            raise MethodError(f"--alpha {alpha[:60]!r}: neither a file nor comma-separated finite "
                              "numbers") from None
        bad = [a for a in alpha if not a > 0]
        if bad:
            raise MethodError(f"--alpha: every value must be > 0, got {bad[0]:g}")
        alpha = alpha[0] if len(alpha) == 1 else alpha
    timeout = getattr(args, "load_timeout", None)  # checked by its argparse type, as timeout= by native
    out = load_topics(path, format=getattr(args, "model_format", None),
                      normalize=getattr(args, "normalize", False), alpha=alpha,
                      allow_pickle=getattr(args, "allow_pickle", False), timeout=timeout,
                      vocab=getattr(args, "vocab", None), doc_topic=getattr(args, "doc_topic", None),
                      weights=getattr(args, "weights", None), time_slice=getattr(args, "time_slice", None),
                      metadata=getattr(args, "dmr_metadata", None))
    for m in out if isinstance(out, list) else [out]:
        note = m.metadata.get("normalized")
        if note:
            print(f"tealeaves: note: {path}: --normalize: {note}", file=sys.stderr)
        caveat = m.metadata.get("caveat")  # a model not fitted to word counts (io: sklearn, tomotopy)
        if caveat:
            print(f"tealeaves: warning: {path}: {caveat}", file=sys.stderr)
    return out


def load_kind_arg(args: argparse.Namespace, path: str) -> TopicModel | Topics:
    """One model of any kind: an LDA as its TopicModel, any other as `Topics` (for the commands
    that take every kind: they check what they need with `topics.require`)."""
    model = load_any_arg(args, path)
    if isinstance(model, list):
        raise MethodError(f"{path}: --time-slice all gives {len(model)} models; this command takes one "
                          "(give --time-slice T)")
    return model.lda if model.lda is not None else model


def load_topics_arg(args: argparse.Namespace, path: str) -> TopicModel | Topics | str | list[list[str]]:
    """A model, or the path of a text file of topics (one topic's words per line) when the file
    is no model format we know and no --model-format was given."""
    if getattr(args, "model_format", None) == TOP_WORDS:  # every field a word: years, ids
        from ..io.topwords import read_top_words

        return read_top_words(path, layout="words")
    if not bundled_model(path) and getattr(args, "model_format", None) is None and sniff_format(path) is None:
        return path
    return load_kind_arg(args, path)


def _removed(docs: Corpus) -> str:
    n = docs.tokenizer_dropped
    return f"; {n} string(s) removed whole by the tokenizer" if n else ""


def check_scorable(docs: Corpus, path: str) -> None:
    """No document or no known token is an input problem (often the wrong vocabulary); a
    majority of unknown tokens gets the one warning (`corpus.dropped_warning`)."""
    if len(docs) == 0:
        raise InvalidCorpusError(f"{path}: no documents")
    if docs.num_tokens == 0:
        raise InvalidCorpusError(
            f"{path}: no token is in the model's vocabulary ({docs.oov_tokens} dropped{_removed(docs)}); "
            "is this the model the documents were prepared for?"
        )
    warn(dropped_warning(docs.report(), path))


def warn(line: str | None) -> None:
    """A warning on stderr, one line (nothing for None)."""
    if line:
        print(f"tealeaves: warning: {line}", file=sys.stderr)


def text_encoding(text: str) -> str:
    """argparse type of `--encoding`: a text encoding Python knows (not rot13, hex, base64, ...)."""

    try:
        return check_encoding(text)
    except TealeavesError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def sub_parser(examples: dict[str, str], sub: Any, name: str, help_text: str) -> argparse.ArgumentParser:
    """A command's parser: `help_text` as its help and description, `examples[name]` under it."""
    return sub.add_parser(name, help=help_text, description=help_text,
                          epilog=f"example: {examples[name]}")


def corpus_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", default=None, choices=("text", "ids", "npz"),
                   help="documents' format (default: from the extension; text)")
    p.add_argument("--tokenize", default="whitespace", choices=("whitespace", "default"),
                   help="text documents: split on whitespace (preprocessed text, the default) or "
                        "'default' = lower-cased runs of letters (raw text)")
    p.add_argument("--strict", action="store_true",
                   help="out-of-vocabulary tokens and empty documents are errors")
    p.add_argument("--encoding", default="utf-8", type=text_encoding,
                   help="character encoding of text files (default utf-8)")


def run_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--seed", type=at_least(0), default=0)
    p.add_argument("--workers", type=at_least(1), default=1, help="local processes")
    dask_option(p)
    p.add_argument("--bootstrap", type=at_least(0), default=10000, help="bootstrap resamples for the sd")
    p.add_argument("--max-hours", type=above(0), default=None, metavar="HOURS",
                   help="stop before starting a run estimated to take longer (default 24)")
    p.add_argument("--json", default=None, help="write results as JSON")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def keep_option(p: argparse.ArgumentParser, unit: str = "document") -> None:
    """`--keep DIR`: the finished work of a long run kept as it finishes (`files.kept`)."""
    p.add_argument("--keep", default=None, metavar="DIR",
                   help=f"keep each finished {unit} in DIR (a new or empty folder); after Ctrl-C or a crash, "
                        "the same command with the same --keep resumes where it stopped, with the same "
                        "numbers (a folder of another run is refused)")


def dask_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--dask", default=None, metavar="ADDRESS",
                   help=f"run on the Dask cluster at ADDRESS (tcp://host:8786; default ${DASK_ENV})")
    p.add_argument("--dask-min-seconds", type=not_below(0), default=None, metavar="S",
                   help=f"with --dask, jobs estimated under S seconds run here, not on the cluster "
                        f"(default {DASK_MIN_SECONDS:g}; 0: always the cluster)")


def read_docs(args: argparse.Namespace, path: str, model: TopicModel) -> Corpus:
    docs = read_corpus(path, vocab=model.vocab, format=args.format, strict=args.strict,
                       tokenizer=args.tokenize, encoding=args.encoding)  # --vocab is on the model
    check_scorable(docs, path)
    return docs


def report_corpus(docs: Corpus, vocab_size: int) -> dict[str, Any]:
    """The one corpus policy every command that scores documents reports: print the corpus line
    (tokens scored, unknown words dropped and the most frequent, empty documents) and return the
    report for the command's JSON (`corpus_report`)."""
    rep = docs.report()
    print_corpus(rep, vocab_size)
    return rep


def print_corpus(rep: dict[str, Any], vocab_size: int) -> None:
    line = (f"{rep['documents']} documents, {rep['tokens']} tokens scored, "
            f"{rep['oov_tokens']} dropped (not among the model's {vocab_size} words), "
            f"{rep['empty_documents']} empty documents")
    if rep.get("tokenizer_dropped"):
        line += f"; {rep['tokenizer_dropped']} string(s) removed whole by the tokenizer"
    print(line)
    if rep["oov_top_words"]:
        top = ", ".join(f"{w} x{c}" for w, c in rep["oov_top_words"].items())
        print(f"most frequent dropped words: {top}")
    if rep.get("oov_lookalike_tokens"):
        tok, word = rep["oov_lookalike_example"]
        tok, word = ascii(tok), ascii(word)  # code points: the two look the same on screen
        print(f"{rep['oov_lookalike_tokens']} of the dropped tokens look like a vocabulary word (equal after "
              f"Unicode NFKC normalisation and removal of invisible characters; e.g. {tok} for "
              f"{word}): normalise the documents and the vocabulary the same way")


def read_theta(path: str, shape: tuple[int, int]) -> np.ndarray:
    theta = read_npy(path, "topic proportions (theta)")
    if theta.shape != shape:
        raise InputFileError(f"{path}: theta must have shape {shape}, got {theta.shape}")
    return check_proportions(theta, path)  # float: an integer matrix is not taken for documents


def read_text_lines(path: str, encoding: str = "utf-8") -> list[str]:
    return [line.rstrip("\n") for _, line in read_lines(path, encoding)]


def askable_documents(docs: Any, texts: list[str], given_theta: bool, source: str | None = None) -> list[int]:
    """The documents a task can show: a text to show, and (theta inferred from `docs`) a word of
    the model (an empty document's theta is only the prior: what it is about cannot be found from
    its text). The others are counted and said; none left is an error naming `source` (default
    the documents' file)."""
    blank = [d for d, t in enumerate(texts) if not t.strip()]
    empty = [] if given_theta else [d for d in docs.empty_documents if d not in set(blank)]
    skipped = set(blank) | set(empty)
    for what, ds in (("no text to show", blank), ("no word of the model", empty)):
        if ds:
            lines = ", ".join(str(d + 1) for d in ds[:10]) + (", ..." if len(ds) > 10 else "")
            print(f"{len(ds)} documents skipped, no task: {what} (lines {lines})")
    keep = [d for d in range(len(texts)) if d not in skipped]
    if not keep:
        raise InputFileError(f"{source or docs.source}: no document can be asked about (every one is "
                             "empty or has no word of the model)")
    return keep
