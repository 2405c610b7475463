"""How well a CSL chain mixed: the effective sample size of a statistic along its chains.

`ess(x)` for x of shape (steps, chains) is the multi-chain estimate of Vehtari, Gelman, Simpson,
Carpenter & Bürkner (2021, eq. 10-11, without rank normalisation): autocorrelations from each
chain's FFT autocovariance, combined with the between-chain variance, summed in pairs by Geyer's
initial monotone sequence; ESS = steps x chains / (-1 + 2 sum_t rho_t). Chains that each stay
at one value have an ESS near the number of chains; a statistic that is the same everywhere, the
number of draws. Non-finite values (log 0) count as a value below every finite one."""

from __future__ import annotations

import numpy as np


def _autocov(x: np.ndarray) -> np.ndarray:
    """Autocovariance of each column at lags 0..n-1 (biased, divided by n), by FFT."""
    n = x.shape[0]
    centred = x - x.mean(axis=0)
    size = 1 << (2 * n - 1).bit_length()
    f = np.fft.rfft(centred, n=size, axis=0)
    return np.fft.irfft(f * np.conj(f), n=size, axis=0)[:n] / n


def ess(x: np.ndarray) -> float:
    """Effective sample size of the draws x[step, chain]."""
    x = np.asarray(x, dtype=np.float64)
    steps, chains = x.shape
    if steps < 4:
        return float(steps * chains)
    if not np.all(np.isfinite(x)):
        x = np.where(np.isfinite(x), x, np.nanmin(np.where(np.isfinite(x), x, np.nan)) - 1e3)
    acov = _autocov(x)
    within = acov[0].mean() * steps / (steps - 1)
    between = x.mean(axis=0).var(ddof=1) * steps if chains > 1 else 0.0
    var_plus = within * (steps - 1) / steps + between / steps
    if var_plus <= 0:
        return float(steps * chains) if np.ptp(x) == 0 else 1.0
    rho = 1.0 - (within - acov.mean(axis=1)) / var_plus
    rho[0] = 1.0
    total, previous = 0.0, np.inf
    for t in range(0, steps - 1, 2):
        pair = rho[t] + rho[t + 1]
        if pair < 0:
            break
        pair = min(pair, previous)  # initial monotone sequence
        total += pair
        previous = pair
    tau = -1.0 + 2.0 * total
    return float(steps * chains / max(tau, 1.0 / np.log10(max(steps * chains, 10))))
