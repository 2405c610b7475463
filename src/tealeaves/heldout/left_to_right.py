"""`left-to-right` (algorithm 3; section 5.3 for document completion).

P(w) = prod_n P(w_n | w_<n), each factor estimated by R particles; by default every particle
re-samples z_<n at every position (cost R N(N-1)/2 site updates), as the paper's algorithm 3.
`resample=False` is a different, cheaper estimator (cost R N): particles only extend, as in the
default of a widely used Java implementation; with one particle it is sequential importance
sampling and unbiased, with more it is neither the paper's algorithm nor unbiased.
Algorithm 3 itself is not exactly unbiased (Buntine 2009); its bias is small (see tests)."""

from __future__ import annotations

import numpy as np

from ..sampling import PreparedDoc, kernels
from .registry import MethodSpec, Param, register


def run(doc: PreparedDoc, n_obs: int, rng: np.random.Generator, state: np.ndarray,
        particles: int, resample: bool) -> float:
    est = kernels.left_to_right(doc.rows, doc.alpha, particles, resample, n_obs, state)
    return est + float(doc.scales[n_obs:].sum())


register(MethodSpec(
    name="left-to-right", fn=run,
    description="left-to-right sequential estimator, algorithm 3",
    params={"particles": Param(20, int, "particles R"),
            "resample": Param(True, bool, "re-sample z_<n at every position (algorithm 3)")},
    cost=lambda N, p: p["particles"] * (N * (N - 1) / 2 if p["resample"] else N),
    tasks=("heldout", "completion"),
))
