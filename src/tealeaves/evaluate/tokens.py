"""The held-out tokens every model can score (`common_tokens`): models with different vocabularies
are scored on the same tokens; a held-out token counts only if every model's vocabulary has its word,
the others are dropped for all models and counted."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..corpus import Corpus, dropped_warning
from ..datasets import read_corpus
from ..errors import InvalidCorpusError, MethodError
from ..heldout import check_vocab_fits
from ..model import TopicModel
from ..topics import Topics


def common_tokens(models: Sequence[TopicModel | Topics], docs: Any, tokenizer: str = "whitespace",
                  encoding: str = "utf-8") -> tuple[list[Corpus], dict[str, Any]]:
    """The held-out documents on each model's word ids, keeping only the tokens every model
    knows (see the module notes), and the report of what that rule kept and dropped."""
    vocabs = [m.vocab for m in models]
    if any(v is None for v in vocabs):
        if any(v is not None for v in vocabs) or len({m.num_words for m in models}) > 1:
            raise MethodError("models without a vocabulary can be evaluated together only if none has "
                              "one and all have the same number of words")
        corpus = docs if isinstance(docs, Corpus) else (
            read_corpus(docs, tokenizer=tokenizer, encoding=encoding) if isinstance(docs, str | os.PathLike)
            else Corpus.from_word_ids(docs))
        for m in models:  # text against a model without words: an error before any work
            check_vocab_fits(corpus, m)
        return [corpus] * len(models), {"rule": "same word ids (no vocabularies)", **corpus.report()}
    shared = set(vocabs[0]).intersection(*vocabs[1:])
    common = tuple(w for w in vocabs[0] if w in shared)
    if not common:
        raise MethodError("the models share no word; they cannot be scored on the same tokens")
    if isinstance(docs, Corpus):
        if docs.vocab is None:
            raise InvalidCorpusError("held-out documents given as word ids need their vocabulary "
                                     "(Corpus.vocab) to be scored by several models")
        texts = [[docs.vocab[i] for i in docs[d]] for d in range(len(docs))]
        corpus = Corpus.from_tokens(texts, common, docs.source, docs.oov_tokens, docs.oov_words)
    elif isinstance(docs, str | os.PathLike):
        corpus = read_corpus(docs, vocab=common, tokenizer=tokenizer, encoding=encoding)
    else:
        corpus = Corpus.from_tokens(docs, common)
    out = []
    for m in models:
        index = m.word_index() if isinstance(m, TopicModel) else {w: i for i, w in enumerate(m.vocab)}
        ids = np.array([index[w] for w in common], dtype=np.int64)
        out.append(Corpus(ids[corpus.words], corpus.offsets, m.vocab, corpus.source,
                          corpus.oov_tokens, corpus.oov_words))
    report = corpus.report()
    report["rule"] = ("a token is scored only if every model's vocabulary has its word; the others "
                      "are dropped for all models")
    report["warning"] = dropped_warning(report, str(corpus.source),
                                        "every model's" if len(models) > 1 else "the model's")
    report["common_words"] = len(common)
    report["words_only_in_model"] = {m.name: m.num_words - len(common) for m in models}
    return out, report


