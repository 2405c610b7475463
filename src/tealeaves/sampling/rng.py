"""A small, fast, seedable generator for the kernels: xoshiro256+ (Blackman & Vigna 2018),
whose top 53 bits give uniform doubles. Its state is a uint64[4] array derived from a
`numpy.random.SeedSequence`, so results depend only on the seed, never on the process."""

from __future__ import annotations

import numpy as np
from numba import njit, uint64

INV53 = 1.0 / 9007199254740992.0


def child(seed: np.random.SeedSequence, key: int) -> np.random.SeedSequence:
    """The `key`-th child of `seed`, without changing `seed` (unlike `SeedSequence.spawn`)."""
    return np.random.SeedSequence(seed.entropy, spawn_key=(*seed.spawn_key, key))


def new_state(seed: np.random.SeedSequence) -> np.ndarray:
    state = seed.generate_state(4, np.uint64)
    if not state.any():
        state[0] = 1
    return state


@njit(inline="always")
def step(s0, s1, s2, s3):
    """One xoshiro256+ step on the four state words: (a uniform double in (0, 1), the new words).
    The one place the generator is written: `uniform` steps the state array, and a hot loop may
    hold the words in locals across its draws (`sparse.update`: same draws, 1-3% faster)."""
    result = s0 + s3
    t = s1 << uint64(17)
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    s3 = (s3 << uint64(45)) | (s3 >> uint64(19))
    return ((result >> uint64(11)) + 0.5) * INV53, s0, s1, s2, s3


@njit(inline="always")
def uniform(state: np.ndarray) -> float:
    """A uniform double in the open interval (0, 1)."""
    u, state[0], state[1], state[2], state[3] = step(state[0], state[1], state[2], state[3])
    return u


@njit(cache=True)
def normal(state: np.ndarray) -> float:
    """A standard normal draw (Marsaglia's polar method; the second value is discarded so the
    generator's state stays the only state)."""
    while True:
        u = 2.0 * uniform(state) - 1.0
        v = 2.0 * uniform(state) - 1.0
        s = u * u + v * v
        if 0.0 < s < 1.0:
            return u * np.sqrt(-2.0 * np.log(s) / s)


@njit(cache=True)
def log_gamma(state: np.ndarray, shape: float) -> float:
    """log of a Gamma(shape, 1) draw, shape > 0: Marsaglia & Tsang (2000) for shape >= 1, and
    log G(shape + 1) + log(U) / shape below 1 (in logs, so tiny shapes do not underflow)."""
    boost = 0.0
    if shape < 1.0:
        boost = np.log(uniform(state)) / shape
        shape += 1.0
    d = shape - 1.0 / 3.0
    c = 1.0 / np.sqrt(9.0 * d)
    while True:
        x = normal(state)
        v = 1.0 + c * x
        if v <= 0.0:
            continue
        v = v * v * v
        u = uniform(state)
        if u < 1.0 - 0.0331 * x * x * x * x or np.log(u) < 0.5 * x * x + d * (1.0 - v + np.log(v)):
            return np.log(d * v) + boost


@njit(cache=True)
def dirichlet(state: np.ndarray, concentration: np.ndarray, out: np.ndarray) -> None:
    """`out` ~ Dirichlet(concentration): Gamma draws, normalised in log space."""
    top = -np.inf
    for t in range(concentration.size):
        out[t] = log_gamma(state, concentration[t])
        top = max(top, out[t])
    total = 0.0
    for t in range(concentration.size):
        out[t] = np.exp(out[t] - top)
        total += out[t]
    for t in range(concentration.size):
        out[t] /= total
