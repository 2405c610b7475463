"""Putting two or more models on the same words and the same topic labels.

Vocabularies are aligned by word strings (columns permuted to the first model's order); words
that are not shared are reported, never silently dropped. Topic labels are arbitrary, so a
model may be relabelled (topics and alpha permuted together, which changes no probability) to
match a reference model: an assignment that minimises the total variation distance between
matched topics (Hungarian algorithm). Annealing paths between matched topics are shorter."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import InvalidModelError
from ..model import TopicModel


def labelled(models: Sequence[TopicModel], labels: Sequence[str] | None = None) -> list[str]:
    """How messages name each model: its label (the CLI: the file given), else its stored name,
    numbered when two models share one (every `synth` model is "synthetic")."""
    if labels is not None:
        return [str(x) for x in labels]
    names = [m.name for m in models]
    if len(set(names)) == len(names):
        return [repr(n) for n in names]
    return [f"model {i} ({n!r})" for i, n in enumerate(names, 1)]


def align_vocab(reference: TopicModel, other: TopicModel, labels: Sequence[str] | None = None) -> TopicModel:
    """`other` with its columns in `reference`'s word order; an error if the word sets differ
    (`labels`: the two models' names for messages, `labelled`)."""
    ref_name, other_name = labelled([reference, other], labels)
    if other.num_words != reference.num_words and (reference.vocab is None or other.vocab is None):
        raise InvalidModelError(
            f"models {ref_name} and {other_name} have {reference.num_words} and "
            f"{other.num_words} words and no vocabularies to align them by"
        )
    if reference.vocab is None or other.vocab is None or reference.vocab == other.vocab:
        return other
    index = other.word_index()
    only_ref = [w for w in reference.vocab if w not in index]
    ref_set = set(reference.vocab)
    only_other = [w for w in other.vocab if w not in ref_set]
    if only_ref or only_other:
        raise InvalidModelError(
            f"models {ref_name} and {other_name} do not share a vocabulary: "
            f"{len(only_ref)} words only in the first (e.g. {', '.join(only_ref[:3]) or '-'}), "
            f"{len(only_other)} only in the second (e.g. {', '.join(only_other[:3]) or '-'})"
        )
    perm = np.array([index[w] for w in reference.vocab])
    return TopicModel(other.phi[:, perm], other.alpha, vocab=reference.vocab, beta=other.beta,
                      name=other.name, metadata=other.metadata)


def match_topics(reference: TopicModel, other: TopicModel) -> np.ndarray:
    """perm such that topic perm[t] of `other` best matches topic t of `reference`."""
    from scipy.optimize import linear_sum_assignment

    cost = np.array([0.5 * np.abs(row - other.phi).sum(axis=1) for row in reference.phi])
    _, perm = linear_sum_assignment(cost)
    return perm


def relabel(model: TopicModel, perm: np.ndarray) -> TopicModel:
    return TopicModel(model.phi[perm], model.alpha[perm], vocab=model.vocab, beta=model.beta,
                      name=model.name, metadata=model.metadata)


def align_models(models: Sequence[TopicModel], topics: bool = True, labels: Sequence[str] | None = None,
                 hint: str = "use --method difference (Python: method='difference')"
                 ) -> list[TopicModel]:
    """Models on the first one's vocabulary order, each (with `topics`) relabelled to match its
    predecessor. All must have the same number of topics (else an error with `hint`); `labels`
    name the models in messages (`labelled`)."""
    names = labelled(models, labels)
    first = models[0]
    out = [first]
    for i, m in enumerate(models[1:], 1):
        if m.num_topics != first.num_topics:
            raise InvalidModelError(
                f"annealing between models needs the same number of topics: {names[0]} has K = "
                f"{first.num_topics}, {names[i]} has K = {m.num_topics}; {hint}"
            )
        m = align_vocab(first, m, [names[0], names[i]])
        if topics:
            m = relabel(m, match_topics(out[-1], m))
        out.append(m)
    return out
