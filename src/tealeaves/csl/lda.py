"""LDA as a CSL model (Bengio, Yao & Cho 2014, section 3): latent h = theta, observation x = a
document, P(w | theta) = prod_n sum_t theta_t phi[t, w_n].

The chain alternates a generated document given theta (`doc_length` tokens, with their topics)
and theta given that document and topics (`sweeps` collapsed Gibbs sweeps over z | document,
started at the generated topics, then theta ~ Dir(n + alpha)); see `sampling.generative`. Its
stationary distribution over theta is exactly the prior Dir(alpha), so CSL's average over its
states converges to log P(w) as the number of states grows (proposition 1). Long generated
documents make theta move little per step: the defaults were chosen by measuring the chain's
effective sample size and CSL's error against the exact likelihood (docs/csl_lda_chain.md).
With `exact_prior=True` the chain is replaced by independent draws theta ~ Dir(alpha): CSL then
*is* the `is-prior-theta` importance sampler of Wallach et al. (eq. 12-13).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..model import TopicModel
from ..sampling import new_state
from ..sampling.generative import lda_chain, theta_given_words
from ..util.limits import RATE, check_int

DOC_LENGTH = 1  # measured: docs/csl_lda_chain.md
SWEEPS = 1
START_SWEEPS = 50  # biased CSL: sweeps over z | the test document before its chains start


class LdaChain:
    """The CSL protocol (`sample_latents`, `log_p_x_given_h`, `item_count`, `select`) for a
    `TopicModel`."""

    def __init__(self, model: TopicModel, doc_length: int = DOC_LENGTH, sweeps: int = SWEEPS,
                 exact_prior: bool = False, start_sweeps: int = START_SWEEPS) -> None:
        self.model = model
        self.doc_length = check_int("doc_length", doc_length, 1)
        self.sweeps = check_int("sweeps", sweeps, 0)
        self.start_sweeps = check_int("start_sweeps", start_sweeps, 0)
        self.exact_prior = bool(exact_prior)
        self._phi_wt = np.ascontiguousarray(model.phi.T)
        cum = np.cumsum(model.phi, axis=1)
        self._cum = np.ascontiguousarray(cum / cum[:, -1:])

    @property
    def params(self) -> dict:
        return {"doc_length": self.doc_length, "sweeps": self.sweeps, "exact_prior": self.exact_prior}

    def sample_latents(self, rng: np.random.Generator, chains: int, samples: int, thin: int = 1,
                       burn_in: int = 0, start: Sequence[int] | None = None) -> np.ndarray:
        """`samples` thetas (samples x T), step-major over `chains` chains."""
        alpha = self.model.alpha
        if self.exact_prior:
            return rng.dirichlet(alpha, size=samples)
        state = new_state(np.random.SeedSequence(int(rng.integers(2**63))))
        theta = np.empty((chains, alpha.size))
        if start is None:
            theta[:] = rng.dirichlet(alpha, size=chains)
        else:
            words = np.asarray(start, dtype=np.int64)
            for c in range(chains):
                theta_given_words(self._phi_wt, alpha, words, self.start_sweeps, state, theta[c])
        out = np.empty((samples, alpha.size))
        lda_chain(self._cum, self._phi_wt, alpha, theta, self.doc_length, self.sweeps, burn_in, thin, state,
                  out)
        return out

    def cost(self, docs, held: float, states: float, chain_steps: float, chains: int) -> tuple[float, float]:
        """(seconds, bytes): `chain_steps` steps of the chain (each generates `doc_length` words
        and sweeps them), scoring `docs` against `states` thetas, `held` thetas in memory at once."""
        T = self.model.num_topics
        tokens = float(sum(len(d) for d in docs))
        longest = float(max((len(d) for d in docs), default=0))
        updates = chain_steps * self.doc_length * (self.sweeps + 1) * T + states * tokens * T
        nbytes = 8.0 * held * T + 16.0 * chains * self.doc_length + 8.0 * 4096 * (len(docs) + longest)
        return updates / RATE, nbytes

    def log_p_x_given_h(self, docs, thetas: np.ndarray) -> np.ndarray:
        """(len(docs), len(thetas)): sum_n log sum_t theta_t phi[t, w_n]."""
        out = np.empty((len(docs), len(thetas)))
        for d in range(len(docs)):
            words = np.asarray(docs[d], dtype=np.int64)
            with np.errstate(divide="ignore"):
                out[d] = np.log(thetas @ self.model.phi[:, words]).sum(axis=1)
        return out

    def item_count(self, docs) -> int:
        return len(docs)

    def select(self, docs, indices) -> list[np.ndarray]:
        return [np.asarray(docs[i]) for i in indices]
