"""Shared helpers: random tiny models and an independent brute-force oracle.

`brute_log_prob` enumerates all T^N topic assignments with plain numpy/scipy and shares no
code with tealeaves, so it can check the package's exact dynamic programme."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.special import gammaln, logsumexp

import tealeaves as tl


def brute_log_prob(phi: np.ndarray, alpha: np.ndarray, words) -> float:
    """log P(w | Phi, alpha) = log sum_z prod_n phi[z_n, w_n] P(z | alpha) (eq. 5), by
    enumeration."""
    words = np.asarray(words, dtype=np.int64)
    T = phi.shape[0]
    N = words.size
    if N == 0:
        return 0.0
    A = alpha.sum()
    terms = []
    for z in itertools.product(range(T), repeat=N):
        z = np.array(z)
        counts = np.bincount(z, minlength=T)
        with np.errstate(divide="ignore"):
            lp = np.log(phi[z, words]).sum()
        lp += gammaln(A) - gammaln(N + A) + (gammaln(counts + alpha) - gammaln(alpha)).sum()
        terms.append(lp)
    return float(logsumexp(terms))


def random_tiny(seed: int, T_range=(2, 5), N_range=(1, 12), V: int = 15, concentration: float = 0.3):
    """A random model with asymmetric alpha and one document drawn from it."""
    rng = np.random.default_rng(seed)
    T = int(rng.integers(T_range[0], T_range[1] + 1))
    N = int(rng.integers(N_range[0], N_range[1] + 1))
    phi = rng.dirichlet(np.full(V, concentration), size=T)
    alpha = rng.gamma(1.0, 1.0, size=T) * rng.uniform(0.2, 2.0) + 0.02
    model = tl.TopicModel(phi, alpha)
    docs = tl.synthetic.generate(model, 1, N, seed=rng)
    return model, docs


@pytest.fixture(scope="module")
def longer():
    """A 4-topic model and 6 documents of 30 to 60 tokens: long enough that left-to-right's
    rejuvenation choices matter, short enough for the exact value."""
    model = tl.synthetic.random_model(4, 60, beta=0.1, alpha_sum=1.5, alpha_shape="dirichlet", seed=7)
    lengths = np.random.default_rng(7).integers(30, 61, size=6)
    docs = tl.synthetic.generate(model, 6, lengths, seed=8)
    return model, docs


@pytest.fixture(scope="session")
def example():
    from tealeaves.cli.tools import example_paths

    model_path, docs_path = example_paths()
    model = tl.load_model(model_path)
    return model, tl.read_corpus(docs_path, vocab=model.vocab), model_path, docs_path


@pytest.fixture(scope="session")
def gguf_models(tmp_path_factory):
    """The tiny GGUF models the judge's tests serve (tests/tinyllm.py), written once a session."""
    import tinyllm

    return tinyllm.judge_models(tmp_path_factory.mktemp("gguf"))


@pytest.fixture(scope="session")
def server(gguf_models):
    """llama.cpp's OpenAI-compatible server on those models, one per session (test_judge_server.py
    and test_judge_qualify.py share it), stopped at the end."""
    import tinyllm

    with tinyllm.llama_server(gguf_models) as s:
        yield s


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def backend(request, tmp_path_factory):
    """A function making a fresh database URL on this backend (SQLite files, or databases on a
    throwaway PostgreSQL server started for the module)."""
    from servers import create_database, postgres_bin, postgres_cluster

    if request.param == "sqlite":
        d = tmp_path_factory.mktemp("db")
        yield lambda name: str(d / f"{name}.sqlite")
        return
    if postgres_bin() is None:
        pytest.skip("PostgreSQL is not installed (.ci/run installs Debian's postgresql)")
    with postgres_cluster() as prefix:
        yield lambda name: create_database(prefix, name)


@pytest.fixture
def model_path(tmp_path) -> str:
    """A two-topic model over the words a, b, c, saved as .npz (the red-team CLI tests' model; a
    test module may define its own)."""
    p = tmp_path / "m.npz"
    phi = np.array([[0.6, 0.3, 0.1], [0.1, 0.3, 0.6]])
    tl.save_model(tl.TopicModel(phi, np.array([0.5, 0.5]), vocab=["a", "b", "c"]), p)
    return str(p)
