"""A binary restricted Boltzmann machine: the reference model of Bengio, Yao & Cho (2014),
where the exact log-likelihood is known for few hidden units.

E(x, h) = -b.x - c.h - x.W.h, x in {0,1}^V, h in {0,1}^H, p(x) = sum_h exp(-E) / Z.
- Block Gibbs chain: h ~ P(h | x) = sigmoid(c + x W), x ~ P(x | h) = sigmoid(b + W h).
- Exact log Z by summing over hidden configurations (H <= 24) or visible ones (V <= 24).
- AIS for log Z (Salakhutdinov & Murray 2008) from a base RBM with W = 0.
- Training by CD-k or persistent CD (PCD) with minibatch gradient ascent.
All in numpy (matrix products dominate; BLAS does them).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from importlib import resources

import numpy as np

from ..errors import ARCHIVE_ERRORS, InputFileError, MethodError, TooLargeError
from ..files.atomic import atomic_path, with_extension
from ..util.limits import FLOP_RATE, check_array_file

MAX_ENUMERATION_BITS = 24
MAX_ENERGY = 1e10  # bound on |log p*(x)|: float64 log probabilities near it keep about 5 decimals


def softplus(x: np.ndarray) -> np.ndarray:
    return np.logaddexp(0.0, x)


def _bits(n: int, start: int, stop: int) -> np.ndarray:
    """Rows start..stop-1 of all n-bit binary vectors."""
    idx = np.arange(start, stop, dtype=np.int64)[:, None]
    return ((idx >> np.arange(n, dtype=np.int64)) & 1).astype(np.float64)


@dataclass
class BinaryRBM:
    W: np.ndarray  # (V, H)
    b: np.ndarray  # (V,) visible biases
    c: np.ndarray  # (H,) hidden biases
    name: str = "rbm"

    def __post_init__(self) -> None:
        self.W = np.ascontiguousarray(self.W, dtype=np.float64)
        self.b = np.asarray(self.b, dtype=np.float64)
        self.c = np.asarray(self.c, dtype=np.float64)
        V, H = self.W.shape
        if self.b.shape != (V,) or self.c.shape != (H,):
            raise MethodError(f"RBM shapes disagree: W {self.W.shape}, b {self.b.shape}, c {self.c.shape}")
        if not (np.isfinite(self.W).all() and np.isfinite(self.b).all() and np.isfinite(self.c).all()):
            raise MethodError("RBM parameters must be finite")
        if V == 0 or H == 0:
            raise MethodError(f"an RBM needs visible and hidden units, got W of shape {self.W.shape}")
        with np.errstate(over="ignore"):  # the largest |b.x| + sum_j |c_j + x.W_j| over binary x
            energy = float(np.abs(self.b).sum() + (np.abs(self.c) + np.abs(self.W).sum(axis=0)).sum())
        if not energy <= MAX_ENERGY:
            raise MethodError(f"RBM parameters too large: log p*(x) can reach {energy:.3g} (limit "
                              f"{MAX_ENERGY:g}); its log probabilities would overflow or lose their "
                              "precision")

    @property
    def num_visible(self) -> int:
        return int(self.W.shape[0])

    @property
    def num_hidden(self) -> int:
        return int(self.W.shape[1])

    # ------------------------------------------------------------------ probabilities
    def unnormalized_log_prob(self, X: np.ndarray) -> np.ndarray:
        """log p*(x) = b.x + sum_j softplus(c_j + x.W_j) (hidden units summed out)."""
        X = np.atleast_2d(np.asarray(X, dtype=np.float64))
        return X @ self.b + softplus(self.c + X @ self.W).sum(axis=1)

    def log_z_exact(self, chunk: int = 1 << 15) -> float:
        """log Z by enumerating the smaller layer (at most 2^24 configurations)."""
        from scipy.special import logsumexp

        V, H = self.W.shape
        if min(V, H) > MAX_ENUMERATION_BITS:
            raise TooLargeError(f"exact log Z needs 2^{min(V, H)} terms; use log_z_ais")
        parts = []
        if H <= V:
            for lo in range(0, 1 << H, chunk):
                h = _bits(H, lo, min(1 << H, lo + chunk))
                parts.append(logsumexp(h @ self.c + softplus(self.b + h @ self.W.T).sum(axis=1)))
        else:
            for lo in range(0, 1 << V, chunk):
                x = _bits(V, lo, min(1 << V, lo + chunk))
                parts.append(logsumexp(self.unnormalized_log_prob(x)))
        return float(logsumexp(parts))

    def log_prob_exact(self, X: np.ndarray) -> np.ndarray:
        return self.unnormalized_log_prob(X) - self.log_z_exact()

    def log_z_ais(self, rng: np.random.Generator, chains: int = 100, temperatures: int = 10000,
                  base_bias: np.ndarray | None = None) -> tuple[float, float]:
        """AIS estimate of log Z and its standard error (delta method over chains), annealing
        from the base RBM (W = 0, c = 0, visible biases `base_bias`, e.g. from data marginals)
        through p_beta(x) ∝ exp((1-beta) b0.x + beta b.x) prod_j (1 + exp(beta (c_j + x.W_j)))."""
        from scipy.special import expit, logsumexp

        b0 = np.zeros(self.num_visible) if base_bias is None else np.asarray(base_bias, float)
        betas = np.linspace(0.0, 1.0, temperatures + 1)
        x = (rng.random((chains, self.num_visible)) < expit(b0)).astype(np.float64)

        def log_pstar(x, beta):
            return (1 - beta) * (x @ b0) + beta * (x @ self.b) + softplus(beta * (self.c + x @ self.W)).sum(1)

        logw = np.zeros(chains)
        for k in range(1, temperatures + 1):
            logw += log_pstar(x, betas[k]) - log_pstar(x, betas[k - 1])
            if k < temperatures:
                beta = betas[k]
                ph = expit(beta * (self.c + x @ self.W))
                h = (rng.random(ph.shape) < ph).astype(np.float64)
                px = expit((1 - beta) * b0 + beta * (self.b + h @ self.W.T))
                x = (rng.random(px.shape) < px).astype(np.float64)
        log_z0 = softplus(b0).sum() + self.num_hidden * np.log(2.0)
        m = logsumexp(logw) - np.log(chains)
        w = np.exp(logw - logw.max())
        rel_se = w.std(ddof=1) / (w.mean() * np.sqrt(chains)) if chains > 1 else np.nan
        return float(log_z0 + m), float(rel_se)

    # ------------------------------------------------------------------ the chain
    def sample_h(self, X: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        from scipy.special import expit

        p = expit(self.c + X @ self.W)
        return (rng.random(p.shape) < p).astype(np.float64)

    def sample_x(self, H: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        from scipy.special import expit

        p = expit(self.b + H @ self.W.T)
        return (rng.random(p.shape) < p).astype(np.float64)

    def sample_latents(self, rng: np.random.Generator, chains: int, samples: int, thin: int = 1,
                       burn_in: int = 0, start: np.ndarray | None = None) -> np.ndarray:
        """Hidden states from `chains` block Gibbs chains: after `burn_in` steps, every `thin`-th
        step, `samples` states in all (chains run in parallel, states interleaved). Chains start
        from x = `start` (the biased CSL of section 6) or from uniform random visible states."""
        if start is None:
            x = (rng.random((chains, self.num_visible)) < 0.5).astype(np.float64)
        else:
            x = np.repeat(np.atleast_2d(np.asarray(start, dtype=np.float64)), chains, axis=0)
        out = []
        collected = 0
        step = 0
        while collected < samples:
            h = self.sample_h(x, rng)
            if step >= burn_in and (step - burn_in) % thin == 0:
                out.append(h)
                collected += chains
            x = self.sample_x(h, rng)
            step += 1
        return np.concatenate(out)[:samples]

    def cost(self, X: np.ndarray, held: float, states: float, chain_steps: float,
             chains: int) -> tuple[float, float]:
        """(seconds, bytes) as `LdaChain.cost`: each step and each state scored is a V x H
        matrix product per chain or state."""
        V, H = self.num_visible, self.num_hidden
        flops = 2.0 * V * H * (chain_steps + states) + float(states) * len(X) * V
        nbytes = 8.0 * held * H + 8.0 * chains * (V + H) + 8.0 * 4096 * (len(X) + V)
        return flops / FLOP_RATE, nbytes

    def log_p_x_given_h(self, X: np.ndarray, H: np.ndarray) -> np.ndarray:
        """log P(x | h) for every x in X and h in H: (len(X), len(H))."""
        X = np.atleast_2d(np.asarray(X, dtype=np.float64))
        act = H @ self.W.T + self.b  # (m, V)
        return X @ act.T - softplus(act).sum(axis=1)[None, :]

    def item_count(self, X) -> int:
        return int(np.atleast_2d(X).shape[0])

    def select(self, X, indices) -> np.ndarray:
        return np.atleast_2d(X)[list(indices)]

    def save(self, path: str | os.PathLike) -> None:
        """Write the RBM to `path` (.npz added, numpy's rule), atomically (`tealeaves.files.atomic`)."""
        with atomic_path(with_extension(path, ".npz"), suffix=".npz") as tmp:
            np.savez_compressed(tmp, kind=np.array("binary-rbm"), W=self.W, b=self.b, c=self.c,
                                name=np.array(self.name))


def load_rbm(path: str | os.PathLike) -> BinaryRBM:
    check_array_file(path)
    try:
        with np.load(path, allow_pickle=False) as f:
            return BinaryRBM(f["W"], f["b"], f["c"], name=str(f["name"]) if "name" in f.files else "rbm")
    except ARCHIVE_ERRORS as exc:
        raise InputFileError(f"{path}: not an RBM file ({exc})") from None


def train_rbm(X: np.ndarray, hidden: int, epochs: int = 20, learning_rate: float = 0.05, k: int = 1,
              persistent: bool = False, batch_size: int = 20, weight_decay: float = 1e-4,
              seed: int = 0, name: str | None = None) -> BinaryRBM:
    """CD-k (or PCD-k with `persistent`) by minibatch gradient ascent on the log-likelihood.
    Visible biases start at the data's log-odds, weights at N(0, 0.01^2)."""
    from scipy.special import expit

    rng = np.random.default_rng(seed)
    X = np.array(X, dtype=np.float64)  # a copy: it is shuffled between epochs
    n, V = X.shape
    mean = X.mean(axis=0).clip(1e-3, 1 - 1e-3)
    rbm = BinaryRBM(rng.normal(0, 0.01, (V, hidden)), np.log(mean / (1 - mean)), np.zeros(hidden),
                    name=name or f"rbm-{hidden}h")
    fantasy = (rng.random((batch_size, V)) < 0.5).astype(np.float64)
    for _ in range(epochs):
        for lo in range(0, n, batch_size):
            xb = X[rng.permutation(n)[:batch_size]] if lo + batch_size > n else X[lo : lo + batch_size]
            ph = expit(rbm.c + xb @ rbm.W)
            xn = fantasy[: len(xb)] if persistent else xb
            for _ in range(k):
                hn = rbm.sample_h(xn, rng)
                xn = rbm.sample_x(hn, rng)
            phn = expit(rbm.c + xn @ rbm.W)
            if persistent:
                fantasy[: len(xb)] = xn
            m = len(xb)
            rbm.W += learning_rate * ((xb.T @ ph - xn.T @ phn) / m - weight_decay * rbm.W)
            rbm.b += learning_rate * (xb - xn).mean(axis=0)
            rbm.c += learning_rate * (ph - phn).mean(axis=0)
        rng.shuffle(X)
    return rbm


def load_digits_binary() -> tuple[np.ndarray, np.ndarray]:
    """The bundled binarised 8x8 digits (see data/DIGITS_LICENSE.txt): (train, test) as 0/1."""
    path = resources.files("tealeaves") / "data" / "digits_binary.npz"
    with np.load(str(path)) as f:
        unpack = lambda a: np.unpackbits(a, axis=1)[:, : int(f["width"])].astype(np.float64)  # noqa: E731
        return unpack(f["train"]), unpack(f["test"])
