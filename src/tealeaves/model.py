"""`TopicModel`: the parameters of a trained LDA model, validated once."""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .errors import InvalidModelError, MethodError, shown

ROW_SUM_TOLERANCE = 1e-6
MAX_NAME = 1000  # characters of a model's name (it heads tables, messages and file names)

# How to give a model its words: said by every error about a model without a vocabulary.
VOCAB_HINT = ("give its vocabulary: --vocab FILE (one word per line, in word-id order), in Python "
              "load_model(..., vocab=words or the fitted vectorizer), or make a model that has it: "
              "tealeaves convert MODEL OUT.npz --vocab FILE")


@dataclass(frozen=True, eq=False)
class TopicModel:
    """An LDA model: topics `phi` (T x V, each row a distribution over words) and the
    Dirichlet parameter `alpha` over topic proportions (length T, alpha_t = alpha * m_t in
    the notation of Wallach et al. 2009, eq. 2).

    `vocab` (length V, unique strings) and `beta` (the topic-word concentration used in
    training) are optional. `normalize=True` rescales rows of `phi` that do not sum to one;
    otherwise such rows are an error.
    """

    phi: np.ndarray
    alpha: np.ndarray
    vocab: tuple[str, ...] | None = None
    beta: float | None = None
    name: str = "model"
    metadata: dict[str, Any] = field(default_factory=dict)

    def __init__(
        self,
        phi: Any,
        alpha: Any,
        vocab: Sequence[str] | None = None,
        beta: float | None = None,
        name: str = "model",
        metadata: dict[str, Any] | None = None,
        normalize: bool = False,
    ) -> None:
        phi_arr = _check_phi(phi, normalize)
        alpha_arr = _check_alpha(alpha, phi_arr.shape[0])
        vocab_t = _check_vocab(vocab, phi_arr.shape[1])
        if beta is not None:
            beta = float(beta)
            if not np.isfinite(beta) or beta <= 0:
                raise InvalidModelError(f"beta must be a positive finite number, got {beta}")
        phi_arr.setflags(write=False)
        alpha_arr.setflags(write=False)
        object.__setattr__(self, "phi", phi_arr)
        object.__setattr__(self, "alpha", alpha_arr)
        object.__setattr__(self, "vocab", vocab_t)
        object.__setattr__(self, "beta", beta)
        object.__setattr__(self, "name", _check_name(name))
        object.__setattr__(self, "metadata", dict(metadata or {}))

    @property
    def num_topics(self) -> int:
        return int(self.phi.shape[0])

    @property
    def num_words(self) -> int:
        return int(self.phi.shape[1])

    @property
    def alpha_sum(self) -> float:
        return float(self.alpha.sum())

    @property
    def m(self) -> np.ndarray:
        """The base measure m = alpha / sum(alpha)."""
        return self.alpha / self.alpha.sum()

    def require_vocab(self, why: str) -> tuple[str, ...]:
        """The vocabulary, or a one-line error saying `why` it is needed and how to give it."""
        if self.vocab is None:
            raise MethodError(f"model {shown(self.name, 120)} has no vocabulary ({why}); {VOCAB_HINT}")
        return self.vocab

    def word_index(self) -> dict[str, int]:
        return {w: i for i, w in enumerate(self.require_vocab("its words are needed"))}

    def with_vocab(self, vocab: Sequence[str], source: str = "the vocabulary given") -> TopicModel:
        """This model with `vocab` (word id = position) if it has none; if it has one, `vocab`
        must be identical to it."""
        words = tuple(str(w) for w in vocab)
        if self.vocab is not None:
            from .corpus import check_same_vocab

            check_same_vocab(words, self.vocab, source, f"the model {shown(self.name, 120)}")
            return self
        if len(words) != self.num_words:
            raise InvalidModelError(f"{source} has {len(words)} words but model {shown(self.name, 120)} has "
                                    f"{self.num_words}")
        return TopicModel(self.phi, self.alpha, vocab=words, beta=self.beta, name=self.name,
                          metadata=self.metadata)

    def with_params(self, phi: Any = None, alpha: Any = None, name: str | None = None) -> TopicModel:
        """A copy with `phi` and/or `alpha` replaced (validated again)."""
        return TopicModel(
            self.phi if phi is None else phi,
            self.alpha if alpha is None else alpha,
            vocab=self.vocab,
            beta=self.beta,
            name=self.name if name is None else name,
            metadata=self.metadata,
        )

    def __repr__(self) -> str:
        return (
            f"TopicModel(name={self.name!r}, T={self.num_topics}, V={self.num_words}, "
            f"alpha_sum={self.alpha_sum:.4g}, vocab={'yes' if self.vocab else 'no'})"
        )


def _check_name(name: Any) -> str:
    """A model's name: a string of at most MAX_NAME characters with no control character (a
    newline or an escape sequence would break or forge the tables and messages that show it)."""
    name = str(name)
    if len(name) > MAX_NAME:
        raise InvalidModelError(f"model name {shown(name)} is longer than {MAX_NAME} characters")
    bad = next((c for c in name if unicodedata.category(c) in ("Cc", "Cs")), None)
    if bad is not None:
        raise InvalidModelError(f"model name {shown(name)} holds the control character U+{ord(bad):04X}")
    return name


def _numbers(values: Any, what: str) -> None:
    """Refuse values that numpy would convert to numbers but that are not numbers: strings
    ("1" is text, not 1.0), booleans, complex values."""
    try:
        arr = np.asarray(values)
    except (TypeError, ValueError):
        return  # not an array at all: the conversion that follows says so
    kind = arr.dtype.kind
    if kind == "O":
        flat = arr.ravel()
        kind = next(("U" if isinstance(v, str | bytes) else "b" if isinstance(v, bool | np.bool_) else "c"
                     for v in flat if isinstance(v, str | bytes | bool | np.bool_ | complex)), "f")
    if kind in "USa":
        raise InvalidModelError(f"{what} holds text, not numbers")
    if kind == "b":
        raise InvalidModelError(f"{what} holds booleans, not numbers")
    if kind == "c":
        raise InvalidModelError(f"{what} has complex values; it must be real")


def _check_phi(phi: Any, normalize: bool) -> np.ndarray:
    if np.iscomplexobj(phi):
        raise InvalidModelError("phi has complex values; topic-word probabilities are real")
    _numbers(phi, "phi")
    try:
        arr = np.array(phi, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidModelError(f"phi is not a numeric matrix: {exc}") from None
    if arr.ndim != 2 or arr.shape[0] < 1 or arr.shape[1] < 1:
        raise InvalidModelError(f"phi must be a T x V matrix, got shape {arr.shape}")
    bad = ~np.isfinite(arr)
    if bad.any():
        t, w = np.argwhere(bad)[0]
        raise InvalidModelError(f"phi has a non-finite value ({arr[t, w]}) at topic {t}, word {w}")
    if (arr < 0).any():
        t, w = np.argwhere(arr < 0)[0]
        raise InvalidModelError(f"phi has a negative value ({arr[t, w]:.3g}) at topic {t}, word {w}")
    sums = arr.sum(axis=1)
    if (sums <= 0).any():
        t = int(np.argmax(sums <= 0))
        raise InvalidModelError(f"phi row of topic {t} is all zeros")
    off = np.abs(sums - 1.0) > ROW_SUM_TOLERANCE
    if off.any() and not normalize:
        t = int(np.argmax(off))
        raise InvalidModelError(
            f"phi row of topic {t} sums to {sums[t]:.9g}, not 1 "
            "(pass normalize=True / --normalize to rescale rows)"
        )
    rescale = np.abs(sums - 1.0) > 1e-12  # rows already normalised keep their exact values
    arr[rescale] /= sums[rescale, None]
    return np.ascontiguousarray(arr)


def _check_alpha(alpha: Any, num_topics: int) -> np.ndarray:
    if np.iscomplexobj(alpha):
        raise InvalidModelError("alpha has complex values")
    _numbers(alpha, "alpha")
    try:
        arr = np.array(alpha, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidModelError(f"alpha is not numeric: {exc}") from None
    if arr.ndim != 1 or arr.shape[0] != num_topics:
        raise InvalidModelError(
            f"alpha must have one value per topic (length {num_topics}), got shape {arr.shape}; "
            "for a symmetric prior pass numpy.full(T, a)"
        )
    if not np.all(np.isfinite(arr)):
        t = int(np.argmax(~np.isfinite(arr)))
        raise InvalidModelError(f"alpha[{t}] is not finite ({arr[t]})")
    if (arr <= 0).any():
        t = int(np.argmax(arr <= 0))
        raise InvalidModelError(f"alpha[{t}] = {arr[t]:.6g} must be > 0")
    return arr


def _check_vocab(vocab: Sequence[str] | None, num_words: int) -> tuple[str, ...] | None:
    if vocab is None:
        return None
    words = tuple(str(w) for w in vocab)
    if len(words) != num_words:
        raise InvalidModelError(f"vocab has {len(words)} words but phi has {num_words} columns")
    if len(set(words)) != len(words):
        seen: set[str] = set()
        for i, w in enumerate(words):
            if w in seen:
                raise InvalidModelError(f"vocab word {shown(w)} appears twice (second at index {i})")
            seen.add(w)
    for i, w in enumerate(words):
        if not w or any(c.isspace() for c in w):
            raise InvalidModelError(f"vocab word at index {i} ({shown(w)}) is empty or has whitespace")
    return words
