"""LDA as a CSL model (Bengio, Yao & Cho 2014, section 3): latent h = theta, observation x = a
document, P(w | theta) = prod_n sum_t theta_t phi[t, w_n].

The chain alternates a generated document given theta (`doc_length` tokens from the LDA
generative process) and theta given that document (`sweeps` Gibbs sweeps over its z, eq. 7,
then theta ~ Dir(n + alpha)). Its stationary distribution over theta is close to the prior
Dir(alpha) (exactly so if z | w were drawn exactly). With `exact_prior=True` the chain is
replaced by independent draws theta ~ Dir(alpha): CSL then *is* the `is-prior-theta`
importance sampler of Wallach et al. (eq. 12-13), unbiased for P(w) in probability space.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..model import TopicModel
from ..sampling import kernels, new_state, prepare_doc


class LdaChain:
    def __init__(self, model: TopicModel, doc_length: int = 50, sweeps: int = 5,
                 exact_prior: bool = False) -> None:
        self.model = model
        self.doc_length = int(doc_length)
        self.sweeps = int(sweeps)
        self.exact_prior = bool(exact_prior)
        self._phi_wt = np.ascontiguousarray(model.phi.T)
        self._cum = np.cumsum(model.phi, axis=1)
        self._cum /= self._cum[:, -1:]

    def _generate(self, theta: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        z = rng.choice(self.model.num_topics, size=self.doc_length, p=theta / theta.sum())
        w = np.array([np.searchsorted(self._cum[t], u, side="right") for t, u in
                      zip(z, rng.random(self.doc_length), strict=True)], dtype=np.int64)
        return np.minimum(w, self.model.num_words - 1)

    def _theta_given(self, words: np.ndarray, rng: np.random.Generator, state) -> np.ndarray:
        doc = prepare_doc(self._phi_wt, self.model.alpha, words, reorder=False)
        _, na = kernels.burned_in(doc.rows, doc.alpha, words.size, self.sweeps, state)
        return rng.dirichlet(na)

    def sample_latents(self, rng: np.random.Generator, chains: int, samples: int, thin: int = 1,
                       burn_in: int = 0, start: Sequence[int] | None = None) -> np.ndarray:
        alpha = self.model.alpha
        if self.exact_prior:
            return rng.dirichlet(alpha, size=samples)
        state = new_state(np.random.SeedSequence(int(rng.integers(2**63))))
        if start is None:
            thetas = rng.dirichlet(alpha, size=chains)
        else:
            words = np.asarray(start, dtype=np.int64)
            thetas = np.array([self._theta_given(words, rng, state) for _ in range(chains)])
        out = []
        step = 0
        while len(out) < samples:
            if step >= burn_in and (step - burn_in) % thin == 0:
                out.extend(thetas)
            thetas = np.array([self._theta_given(self._generate(th, rng), rng, state) for th in thetas])
            step += 1
        return np.array(out[:samples])

    def log_p_x_given_h(self, docs, thetas: np.ndarray) -> np.ndarray:
        """(len(docs), len(thetas)): sum_n log sum_t theta_t phi[t, w_n]."""
        out = np.empty((len(docs), len(thetas)))
        for d, words in enumerate(docs):
            with np.errstate(divide="ignore"):
                out[d] = np.log(thetas @ self.model.phi[:, np.asarray(words, dtype=np.int64)]).sum(axis=1)
        return out

    def item_count(self, docs) -> int:
        return len(docs)

    def select(self, docs, indices) -> list[np.ndarray]:
        return [np.asarray(docs[i]) for i in indices]
