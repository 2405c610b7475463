"""`TopicModel`: the parameters of a trained LDA model, validated once."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .errors import InvalidModelError, MethodError, shown

ROW_SUM_TOLERANCE = 1e-6
MAX_NAME = 1000  # characters of a model's name (it heads tables, messages and file names)
# phi is checked, converted and normalised in blocks of rows of about this many bytes: the only
# memory used beyond phi itself
BLOCK_BYTES = 4 * 2**20

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

    `phi` is stored word-major (Fortran order): `phi_wt`, the V x T layout the samplers read, is
    its transpose without a copy. `copy=False` takes a float64 Fortran-order `phi` as it is
    (normalised in place and made read-only) instead of copying it; any other `phi` is copied
    once, block by block.
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
        copy: bool = True,
    ) -> None:
        phi_arr = phi.array if isinstance(phi, CheckedPhi) else _check_phi(phi, normalize, copy)
        alpha_arr = check_alpha(alpha, phi_arr.shape[0])
        vocab_t = check_vocab(vocab, phi_arr.shape[1])
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
    def phi_wt(self) -> np.ndarray:
        """phi transposed (V x T, C order): a view, no copy."""
        return self.phi.T

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
        return TopicModel(CheckedPhi(self.phi), self.alpha, vocab=words, beta=self.beta, name=self.name,
                          metadata=self.metadata)

    def with_params(self, phi: Any = None, alpha: Any = None, name: str | None = None) -> TopicModel:
        """A copy with `phi` and/or `alpha` replaced (validated again)."""
        return TopicModel(
            CheckedPhi(self.phi) if phi is None else phi,
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
    check_number_kind(kind, what)


def check_number_kind(kind: str, what: str) -> None:
    """Refuse a numpy dtype kind that is not real numbers: text, booleans, complex values."""
    if kind in "USa":
        raise InvalidModelError(f"{what} holds text, not numbers")
    if kind == "b":
        raise InvalidModelError(f"{what} holds booleans, not numbers")
    if kind == "c":
        raise InvalidModelError(f"{what} has complex values; it must be real")


class CheckedPhi:
    """A phi already checked and in place: one a TopicModel holds, or one `fill_phi` wrote into
    a `phi_layout` array. `TopicModel(CheckedPhi(phi), ...)` takes it without a copy or a check."""

    def __init__(self, array: np.ndarray) -> None:
        self.array = array


def phi_layout(num_topics: int, num_words: int) -> np.ndarray:
    """An empty T x V float64 phi in the layout a TopicModel keeps (word-major: `.T` is V x T in
    C order), for readers that fill it and pass it with `copy=False`."""
    return np.empty((num_topics, num_words), dtype=np.float64, order="F")


def row_blocks(num_topics: int, num_words: int, itemsize: int = 8) -> Iterator[slice]:
    """Slices of consecutive topics, each about BLOCK_BYTES of phi."""
    step = max(1, BLOCK_BYTES // max(1, num_words * itemsize))
    for start in range(0, num_topics, step):
        yield slice(start, min(start + step, num_topics))


def _as_array(phi: Any) -> np.ndarray:
    if np.iscomplexobj(phi):
        raise InvalidModelError("phi has complex values; topic-word probabilities are real")
    _numbers(phi, "phi")
    try:
        arr = np.asarray(phi)
        if arr.dtype.kind not in "biuf":
            arr = np.asarray(arr, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidModelError(f"phi is not a numeric matrix: {exc}") from None
    if arr.ndim != 2 or arr.shape[0] < 1 or arr.shape[1] < 1:
        raise InvalidModelError(f"phi must be a T x V matrix, got shape {arr.shape}")
    return arr


def _check_phi(phi: Any, normalize: bool, copy: bool = True) -> np.ndarray:
    """phi as a checked float64 word-major array: copied once (unless `copy=False` and it already
    is one), checked and normalised in blocks of rows."""
    arr = _as_array(phi)
    own = not copy and arr.dtype == np.float64 and arr.flags.f_contiguous and arr.flags.writeable
    dest = arr if own else phi_layout(*arr.shape)
    return fill_phi(dest, (arr[rows] for rows in row_blocks(*arr.shape)), normalize)


def row_sums(arr: np.ndarray) -> np.ndarray:
    """Each row's sum; inf (no numpy warning) where finite values add up past float64's range."""
    with np.errstate(over="ignore", invalid="ignore"):
        return arr.sum(axis=1)


def normalized_rows(arr: np.ndarray, sums: np.ndarray) -> np.ndarray:
    """`arr`'s rows (finite, non-negative, sums > 0) rescaled to sum to 1. A row whose sum
    overflowed (inf) is divided by its largest value first (its sum then lies in 1..V): never the
    row of zeros x / inf gives."""
    out = arr / sums[:, None]
    _rescale_overflowed(out, sums, arr)
    return out


def _rescale_overflowed(block: np.ndarray, sums: np.ndarray, source: np.ndarray | None = None) -> None:
    """Rows of finite values (in `source`, default `block`) whose sum overflowed, written into
    `block` rescaled to sum to 1 (see `normalized_rows`); rows holding inf or NaN are left for the
    finiteness check."""
    source = block if source is None else source
    rows = np.flatnonzero(np.isinf(sums))
    if rows.size:
        rows = rows[np.isfinite(source[rows]).all(axis=1)]
        part = source[rows] / source[rows].max(axis=1, keepdims=True)
        block[rows] = part / part.sum(axis=1, keepdims=True)


def fill_phi(dest: np.ndarray, blocks: Iterable[np.ndarray], normalize: bool) -> np.ndarray:
    """Write `blocks` (consecutive rows of phi, any numeric dtype; together T x V) into `dest` as
    float64, checking every value and each row's sum and rescaling rows as `TopicModel` does.
    Each block is checked in a C-order float64 copy of itself (the same sums, bit for bit, as
    over the whole matrix), so nothing of phi's size is allocated here."""
    T, V = dest.shape
    sums = np.empty(T)
    nonfinite = negative = None
    start = 0
    for raw in blocks:
        try:
            block = np.array(raw, dtype=np.float64, order="C")
        except (TypeError, ValueError) as exc:
            raise InvalidModelError(f"phi is not a numeric matrix: {exc}") from None
        rows = slice(start, start + block.shape[0])
        if nonfinite is None and not np.isfinite(block).all():
            t, w = np.argwhere(~np.isfinite(block))[0]
            nonfinite = (start + t, w, block[t, w])
        if negative is None and (block < 0).any():
            t, w = np.argwhere(block < 0)[0]
            negative = (start + t, w, block[t, w])
        sums[rows] = s = row_sums(block)  # inf: finite values past float64's range
        _rescale_overflowed(block, s)
        rescale = (np.abs(s - 1.0) > 1e-12) & (s > 0) & np.isfinite(s)  # rows summing to 1 kept
        if rescale.any():  # beyond ROW_SUM_TOLERANCE only with normalize: an error below
            block[rescale] /= s[rescale, None]
        dest[rows] = block
        start += block.shape[0]
    if start != T:
        raise InvalidModelError(f"phi has {start} topic rows, expected {T}")
    if nonfinite is not None:
        t, w, x = nonfinite
        raise InvalidModelError(f"phi has a non-finite value ({x}) at topic {t}, word {w}")
    if negative is not None:
        t, w, x = negative
        raise InvalidModelError(f"phi has a negative value ({x:.3g}) at topic {t}, word {w}")
    if (sums <= 0).any():
        t = int(np.argmax(sums <= 0))
        raise InvalidModelError(f"phi row of topic {t} is all zeros")
    off = np.abs(sums - 1.0) > ROW_SUM_TOLERANCE
    if off.any() and not normalize:
        t = int(np.argmax(off))
        total = f"{sums[t]:.9g}" if np.isfinite(sums[t]) else "more than float64 holds (1.8e308)"
        raise InvalidModelError(
            f"phi row of topic {t} sums to {total}, not 1 "
            "(pass normalize=True / --normalize to rescale rows)"
        )
    return dest


TINY = float(np.finfo(np.float64).tiny)  # the smallest normal float64, about 2.2e-308


def check_alpha(alpha: Any, num_topics: int) -> np.ndarray:
    """A Dirichlet prior over topics: one finite value > 0 per topic, whose sum is finite too
    (every use of alpha divides by its sum), or a one-line InvalidModelError."""
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
    if (arr < TINY).any():  # subnormal: alpha_t phi products round to 0 (red team 6, F1)
        t = int(np.argmax(arr < TINY))
        raise InvalidModelError(f"alpha[{t}] = {arr[t]:.6g} is below the smallest normal number "
                                f"({TINY:.3g}): the estimators' products with it round to 0")
    with np.errstate(over="ignore"):
        total = arr.sum()
    if not np.isfinite(total):
        raise InvalidModelError(f"alpha's values sum beyond the largest number (largest {arr.max():.6g})")
    return arr


def check_vocab(vocab: Sequence[str] | None, num_words: int, *, phrases: bool = False
                ) -> tuple[str, ...] | None:
    """The words of a model's columns, checked for every model (`TopicModel`, `Topics`): one per
    column, none twice, none empty or holding white space (documents are split on white space, so
    such a word could never be counted, and would shift the words shown after it). `phrases`
    (`Topics`: metrics of words only) lets a word be an n-gram, words joined by single spaces
    ("new york", as scikit-learn's and BERTopic's n-gram vectorizers name their columns)."""
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
        parts = w.split(" ") if phrases else [w]
        if not all(p and not any(c.isspace() for c in p) for p in parts):
            raise InvalidModelError(f"vocab word at index {i} ({shown(w)}) is empty or has whitespace")
    return words
