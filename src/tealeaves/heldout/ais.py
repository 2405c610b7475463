"""`ais`: annealed importance sampling (algorithm 1; algorithm 4 for document completion).

Distributions P_s(z) ∝ P(w2 | z, Phi)^tau_s P(z | w1, alpha m) over 0 = tau_0 < ... < tau_S = 1,
one tempered Gibbs sweep (eq. 16) per intermediate temperature, cost about S N site updates.

Schedules (`schedule`), each a shape u -> tau(u) on [0, 1]:
- `geometric` (default): tau = 10^(-4 (1 - u)) for u > 0 (small steps where the likelihood
  is first switched on, where the weights vary most);
- `sigmoid`: tau ∝ sigmoid(4 (2u - 1)), rescaled to [0, 1] (Grosse et al. 2013);
- `linear`: tau = u.
With more than `KNOTS` temperatures the shape is followed exactly at KNOTS + 1 evenly placed
knots and linearly between them: tempered topic rows phi^tau are then updated by one
multiplication per entry per sweep, with only KNOTS rounds of exponentials in all.
Unbiased for P(w) (for completion: up to the burn-in that stands in for an exact draw of
z1 | w1).
"""

from __future__ import annotations

import numpy as np

from ..sampling import PreparedDoc, kernels
from .spec import MethodSpec, Param, register

SCHEDULES = ("geometric", "sigmoid", "linear")
KNOTS = 20
FEW_TEMPERATURES = 100  # below this, a warning (`caution`)


def caution(params: dict, alpha: np.ndarray | None = None) -> str | None:
    """A warning for a temperature count known to be far too small: with S temperatures AIS
    multiplies S importance ratios; with few, each ratio jumps from one tempered distribution to
    a very different one and the weights' variance explodes (S = 1 is plain importance sampling
    from the prior), so the log estimate is far below log P(w) (Jensen's gap, unbounded)."""
    S = params.get("temperatures")
    if S is None or S >= FEW_TEMPERATURES:
        return None
    return (f"ais with {S} temperature(s) is badly biased low: each step jumps between very different "
            f"tempered distributions, so the log estimate falls far below log P(w); use at least "
            f"{FEW_TEMPERATURES} (default 2000) and compare with a reference (check=K; CLI --check K)")


def _shape(name: str, u: np.ndarray) -> np.ndarray:
    if name == "linear":
        return u.copy()
    if name == "sigmoid":
        g = 1.0 / (1.0 + np.exp(-4.0 * (2.0 * u - 1.0)))
        lo, hi = 1.0 / (1.0 + np.exp(4.0)), 1.0 / (1.0 + np.exp(-4.0))
        return (g - lo) / (hi - lo)
    if name == "geometric":
        return np.where(u > 0, 10.0 ** (-4.0 * (1.0 - u)), 0.0)
    raise ValueError(f"unknown schedule {name!r}")


def temperature_schedule(name: str, temperatures: int, knots: int = KNOTS) -> np.ndarray:
    """tau_0 = 0 < tau_1 < ... < tau_S = 1 for S = `temperatures` (see the module notes)."""
    S = temperatures
    if S <= knots:
        taus = _shape(name, np.arange(S + 1) / S)
    else:
        at = np.round(np.linspace(0, S, knots + 1)).astype(np.int64)
        taus = np.interp(np.arange(S + 1), at, _shape(name, at / S))
    taus[0], taus[-1] = 0.0, 1.0
    return taus


def run(doc: PreparedDoc, n_obs: int, rng: np.random.Generator, state: np.ndarray,
        temperatures: int, schedule: str, burn_in: int = 0) -> float:
    taus = temperature_schedule(schedule, temperatures)
    logw = kernels.ais(doc.rows, doc.logrows, doc.alpha, taus, n_obs, burn_in, state)
    return logw + float(doc.scales[n_obs:].sum())


register(MethodSpec(
    name="ais", fn=run, budget="temperatures",
    description="annealed importance sampling over z, algorithm 1 (completion: algorithm 4)",
    params={"temperatures": Param(2000, int, "number of temperatures S"),
            "schedule": Param("geometric", str, "temperature schedule", choices=SCHEDULES),
            "burn_in": Param(200, int, "Gibbs sweeps on w1 before annealing", minimum=0,
                             tasks=("completion",))},
    cost=lambda N, p: p["temperatures"] * N,
    tasks=("heldout", "completion"),
    unbiased=True,
    caution=caution,
    kernel="ais",
))
