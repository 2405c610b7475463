"""Synthetic data: random LDA models, the LDA generative process, and the perturbations of
section 6.4 of Wallach et al. (2009)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .corpus import Corpus
from .errors import InvalidModelError, MethodError
from .model import TopicModel
from .util.limits import check_float, check_int, check_memory

ALPHA_SHAPES = ("harmonic", "dirichlet", "symmetric")


def _rng(seed: int | np.random.Generator | None, stream: int = 0) -> np.random.Generator:
    """A generator for `seed`; `stream` separates uses, so that, say, the random topics of a
    perturbation never coincide with those of `random_model` under the same seed."""
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None or stream == 0:
        return np.random.default_rng(seed)
    return np.random.default_rng(np.random.SeedSequence([seed, stream]))


def base_measure(num_topics: int, shape: str = "harmonic",
                 seed: int | np.random.Generator | None = None) -> np.ndarray:
    """m: `harmonic` (m_k ∝ 1/k, as the benchmark), `dirichlet` (m ~ Dir(1)) or `symmetric`."""
    if shape == "harmonic":
        m = 1.0 / np.arange(1, num_topics + 1)
    elif shape == "dirichlet":
        m = _rng(seed).dirichlet(np.ones(num_topics))
    elif shape == "symmetric":
        m = np.ones(num_topics)
    else:
        raise InvalidModelError(f"unknown alpha shape {shape!r} (known: {', '.join(ALPHA_SHAPES)})")
    return m / m.sum()


def random_model(num_topics: int, num_words: int, beta: float = 0.01, alpha_sum: float = 5.0,
                 alpha_shape: str = "harmonic", seed: int | np.random.Generator | None = 0,
                 vocab: Sequence[str] | None = None, name: str = "synthetic") -> TopicModel:
    """phi_t ~ Dir(beta 1) for every topic; alpha = alpha_sum * m (see `base_measure`).
    Rows of phi are floored at the smallest positive double so every word can be scored."""
    num_topics, num_words = check_int("num_topics", num_topics, 1), check_int("num_words", num_words, 1)
    check_float("beta", beta, 0, low_open=True)
    check_float("alpha_sum", alpha_sum, 0, low_open=True)
    check_memory(f"a {num_topics} x {num_words} model", 3 * 8.0 * num_topics * num_words)
    rng = _rng(seed)
    phi = rng.dirichlet(np.full(num_words, beta), size=num_topics)
    phi = np.maximum(phi, np.finfo(float).tiny)
    phi /= phi.sum(axis=1, keepdims=True)
    alpha = alpha_sum * base_measure(num_topics, alpha_shape, rng)
    if vocab is None:
        width = len(str(num_words - 1))
        vocab = [f"w{i:0{width}d}" for i in range(num_words)]
    return TopicModel(phi, alpha, vocab=vocab, beta=beta, name=name,
                      metadata={"generator": "tealeaves.synthetic.random_model"})


def generate(model: TopicModel, num_docs: int, length: int | Sequence[int],
             seed: int | np.random.Generator | None = 0,
             return_latents: bool = False):
    """Documents from the LDA generative process: theta_d ~ Dir(alpha), z_n ~ theta_d,
    w_n ~ phi_{z_n}. `length` is one length for all or one per document. With
    `return_latents`, also returns the thetas (D x T) and the topic assignments."""
    num_docs = check_int("num_docs", num_docs, 0)
    lengths = np.broadcast_to(np.asarray(length, dtype=np.int64), (num_docs,))
    if lengths.size and lengths.min() < 0:
        raise MethodError("document lengths must be >= 0")
    check_memory(f"{num_docs} documents of {int(lengths.sum()) // max(num_docs, 1)} tokens",
                 24.0 * float(lengths.sum()) + 8.0 * model.phi.size)
    rng = _rng(seed)
    T, V = model.phi.shape
    cum = np.cumsum(model.phi, axis=1)
    cum /= cum[:, -1:]
    flat = (cum + np.arange(T)[:, None]).ravel()  # row t spans (t, t + 1]
    docs, thetas, zs = [], [], []
    for n in lengths:
        theta = rng.dirichlet(model.alpha)
        z = rng.choice(T, size=int(n), p=theta / theta.sum())
        w = np.searchsorted(flat, z + rng.random(int(n)), side="right") - z * V
        docs.append(np.clip(w, 0, V - 1))
        thetas.append(theta)
        zs.append(z)
    corpus = Corpus.from_word_ids(docs, model.vocab, source="synthetic")
    if return_latents:
        return corpus, np.array(thetas), zs
    return corpus


def perturb_phi(model: TopicModel, lam: float, other: np.ndarray | None = None, beta: float = 0.01,
                seed: int | np.random.Generator | None = 0) -> TopicModel:
    """phi -> (1 - lam) phi + lam phi' (section 6.4), phi' random Dir(beta) topics unless given."""
    if other is None:
        other = _rng(seed, stream=1).dirichlet(np.full(model.num_words, beta), size=model.num_topics)
    return model.with_params(phi=(1 - lam) * model.phi + lam * np.asarray(other),
                             name=f"{model.name}+phi{lam:g}")


def perturb_m(model: TopicModel, lam: float, other: np.ndarray | None = None,
              seed: int | np.random.Generator | None = 0) -> TopicModel:
    """m -> (1 - lam) m + lam m' with alpha (the sum) kept (section 6.4); m' ~ Dir(1) unless given."""
    if other is None:
        other = _rng(seed, stream=2).dirichlet(np.ones(model.num_topics))
    m = (1 - lam) * model.m + lam * np.asarray(other) / np.sum(other)
    return model.with_params(alpha=model.alpha_sum * m, name=f"{model.name}+m{lam:g}")
