"""Held-out likelihood and coherence counting on a Dask LocalCluster give the same numbers as one
local process with the same seed."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import tealeaves as tl
from tealeaves.util.parallel import use_dask


@pytest.fixture(scope="module")
def cluster():
    from distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as c:
        yield c


def test_heldout_and_compare_on_dask_equal_local(cluster, example):
    model, docs = example[:2]
    local = tl.heldout(model, docs, method="left-to-right", particles=5, runs=2, seed=7)
    with use_dask(cluster.scheduler_address, min_seconds=0):
        remote = tl.heldout(model, docs, method="left-to-right", particles=5, runs=2, seed=7)
    np.testing.assert_array_equal(remote.run_log_prob, local.run_log_prob)
    other = model.with_params(alpha=model.alpha * 1.5, name="b")
    local_c = tl.compare(model, other, docs, temperatures=30, chains=1, start_temperatures=30, seed=3)
    with use_dask(cluster.scheduler_address, min_seconds=0):
        remote_c = tl.compare(model, other, docs, temperatures=30, chains=1, start_temperatures=30, seed=3)
    assert remote_c.to_dict()["documents"] == local_c.to_dict()["documents"]


def test_coherence_counting_on_dask_equals_local(cluster, tmp_path):
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(40)]
    ref = tmp_path / "ref.txt"
    ref.write_text("\n".join(" ".join(rng.choice(words, 30)) for _ in range(300)) + "\n")
    topics = [words[:10], words[10:20]]
    local = tl.coherence(topics, str(ref), measure="npmi")
    from tealeaves.coherence import count

    with use_dask(cluster.scheduler_address, min_seconds=0):
        remote = tl.coherence(topics, str(ref), measure="npmi")
        counts = count(str(ref), words[:20], window=10, chunk_docs=7)
    np.testing.assert_array_equal(remote.per_topic, local.per_topic)
    np.testing.assert_array_equal(counts.joint, count(str(ref), words[:20], window=10).joint)


def test_cli_dask_option_and_environment(cluster, tmp_path):
    m, d = tmp_path / "m.npz", tmp_path / "d.txt"
    assert tl.cli.main(["synth", str(m), str(d), "--topics", "5", "--words", "50", "--docs", "6"]) == 0
    outs = []
    force = ["--dask-min-seconds", "0"]  # a job this small would run here (test_dask_policy.py)
    for extra, env in (([], {}), (["--dask", cluster.scheduler_address, *force], {}),
                       (force, {"TEALEAVES_DASK": cluster.scheduler_address})):
        out = tmp_path / f"r{len(outs)}.json"
        r = subprocess.run([sys.executable, "-m", "tealeaves", "heldout", str(m), str(d), "--particles", "3",
                            "--json", str(out), *extra], capture_output=True, text=True,
                           env={**os.environ, **env}, timeout=300)
        assert r.returncode == 0, r.stderr
        outs.append(json.loads(out.read_text())["results"][0]["documents"]["log_prob"])
    assert outs[0] == outs[1] == outs[2]
    r = subprocess.run([sys.executable, "-m", "tealeaves", "heldout", str(m), str(d), "--dask", "tcp://127.0.0.1:9",
                        *force],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "cannot reach the Dask scheduler" in r.stderr and "Traceback" not in r.stderr
