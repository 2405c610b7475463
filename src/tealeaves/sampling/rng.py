"""A small, fast, seedable generator for the kernels: xoshiro256+ (Blackman & Vigna 2018),
whose top 53 bits give uniform doubles. Its state is a uint64[4] array derived from a
`numpy.random.SeedSequence`, so results depend only on the seed, never on the process."""

from __future__ import annotations

import numpy as np
from numba import njit, uint64

_INV53 = 1.0 / 9007199254740992.0


def child(seed: np.random.SeedSequence, key: int) -> np.random.SeedSequence:
    """The `key`-th child of `seed`, without changing `seed` (unlike `SeedSequence.spawn`)."""
    return np.random.SeedSequence(seed.entropy, spawn_key=(*seed.spawn_key, key))


def new_state(seed: np.random.SeedSequence) -> np.ndarray:
    state = seed.generate_state(4, np.uint64)
    if not state.any():
        state[0] = 1
    return state


@njit(inline="always")
def uniform(state: np.ndarray) -> float:
    """A uniform double in the open interval (0, 1)."""
    s0 = state[0]
    s1 = state[1]
    s2 = state[2]
    s3 = state[3]
    result = s0 + s3
    t = s1 << uint64(17)
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    s3 = (s3 << uint64(45)) | (s3 >> uint64(19))
    state[0] = s0
    state[1] = s1
    state[2] = s2
    state[3] = s3
    return ((result >> uint64(11)) + 0.5) * _INV53
