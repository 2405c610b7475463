"""`ais`: annealed importance sampling (algorithm 1; algorithm 4 for document completion).

Distributions P_s(z) ∝ P(w2 | z, Phi)^tau_s P(z | w1, alpha m) over 0 = tau_0 < ... < tau_S = 1,
one tempered Gibbs sweep (eq. 16) per intermediate temperature, cost about S N site updates.
Schedules (`schedule`):
- `linear`: tau_s = s / S (the default: a constant step, so powered topic rows cost one
  multiplication per entry per sweep);
- `sigmoid`: tau_s ∝ sigmoid(4 (2 s / S - 1)) rescaled to [0, 1] (Grosse et al. 2013);
- `geometric`: tau_s = 10^(-4 (S - s) / (S - 1)) for s >= 1.
Unbiased for P(w) (for completion: up to the burn-in that stands in for an exact draw of
z1 | w1).
"""

from __future__ import annotations

import numpy as np

from ..sampling import kernels
from .registry import MethodSpec, Param, register

SCHEDULES = ("linear", "sigmoid", "geometric")


def temperature_schedule(name: str, temperatures: int) -> np.ndarray:
    """tau_0 = 0 < tau_1 < ... < tau_S = 1 for S = `temperatures`."""
    S = temperatures
    s = np.arange(S + 1, dtype=np.float64)
    if name == "linear" or S == 1:
        taus = s / S
    elif name == "sigmoid":
        g = 1.0 / (1.0 + np.exp(-4.0 * (2.0 * s / S - 1.0)))
        taus = (g - g[0]) / (g[-1] - g[0])
    elif name == "geometric":
        taus = np.concatenate([[0.0], 10.0 ** (-4.0 * (S - s[1:]) / max(S - 1, 1))])
    else:
        raise ValueError(name)
    taus[0], taus[-1] = 0.0, 1.0
    return taus


def run(doc, n_obs, rng, state, temperatures, schedule, burn_in):
    taus = temperature_schedule(schedule, temperatures)
    logw = kernels.ais(doc.rows, doc.logrows, doc.alpha, taus, n_obs, burn_in, state)
    return logw + float(doc.scales[n_obs:].sum())


register(MethodSpec(
    name="ais", fn=run,
    description="annealed importance sampling over z, algorithm 1 (completion: algorithm 4)",
    params={"temperatures": Param(2000, int, "number of temperatures S"),
            "schedule": Param("linear", str, "temperature schedule", choices=SCHEDULES),
            "burn_in": Param(200, int, "completion only: Gibbs sweeps on w1 before annealing",
                             minimum=0)},
    cost=lambda N, p: p["temperatures"] * N,
    tasks=("heldout", "completion"),
    unbiased=True,
))
