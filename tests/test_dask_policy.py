"""Small jobs under `--dask` run here, say so on stderr and in the JSON, and do not import
`distributed`; `--dask-min-seconds 0` (or `min_seconds=0`) sends them to the cluster. The numbers
are identical either way. Workers started with `--preload tealeaves.cli.warmup` load the kernels."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from clirun import one_line_error

import tealeaves as tl
from tealeaves.errors import MethodError
from tealeaves.util.parallel import DASK_MIN_SECONDS, use_dask


@pytest.fixture(scope="module")
def cluster():
    from distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                      preload=["tealeaves.cli.warmup"]) as c:
        yield c


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    """A model and 30 documents: a job estimated far below the default threshold."""
    tmp = tmp_path_factory.mktemp("policy")
    m, d = tmp / "m.npz", tmp / "d.txt"
    assert tl.cli.main(["synth", str(m), str(d), "--topics", "5", "--words", "60", "--docs", "30",
                        "--seed", "3"]) == 0
    return m, d


def _cluster_tasks(cluster, argv: list[str]) -> tuple[subprocess.CompletedProcess, int]:
    """Run `tealeaves ARGV` and count the batches the cluster ran meanwhile (the scheduler's own
    task stream, not what tealeaves reports)."""
    from distributed import Client, get_task_stream

    with Client(cluster.scheduler_address) as client, get_task_stream(client) as ts:
        r = subprocess.run([sys.executable, "-m", "tealeaves", *argv], capture_output=True, text=True,
                           timeout=300)
    return r, sum("_call_batch" in str(t["key"]) for t in ts.data)


def test_small_job_runs_here_and_says_so_forcing_uses_the_cluster(cluster, job, tmp_path):
    m, d = job
    base = ["heldout", str(m), str(d), "--particles", "5", "--runs", "2", "--seed", "4"]
    plain = tmp_path / "plain.json"
    assert tl.cli.main([*base, "--quiet", "--json", str(plain)]) == 0
    outs = {}
    for name, extra in (("policy", []), ("forced", ["--dask-min-seconds", "0"])):
        outs[name] = tmp_path / f"{name}.json"
        r, tasks = _cluster_tasks(cluster, [*base, "--quiet", "--json", str(outs[name]), "--dask",
                                            cluster.scheduler_address, *extra])
        assert r.returncode == 0, r.stderr
        said = [line for line in r.stderr.splitlines() if "not on the Dask cluster" in line]
        record = json.loads(outs[name].read_text())["dask"]
        if name == "policy":
            assert tasks == 0
            assert len(said) == 1 and "--dask-min-seconds 0" in said[0]
            assert f"below the {DASK_MIN_SECONDS:g} s threshold" in said[0]
            assert record["ran"] == "local" and record["jobs"][0]["estimated_seconds"] < DASK_MIN_SECONDS
        else:
            assert tasks >= 1 and said == []
            assert record["ran"] == "cluster" and record["min_seconds"] == 0
    values = [json.loads(p.read_text())["results"][0]["documents"]["log_prob"]
              for p in (plain, *outs.values())]
    assert values[0] == values[1] == values[2]
    assert "dask" not in json.loads(plain.read_text())


def test_small_job_does_not_import_distributed_or_contact_the_address(job):
    m, d = job
    code = ("import sys, tealeaves as tl\n"
            "from tealeaves.util.parallel import DASK_MIN_SECONDS, use_dask\n"
            f"model = tl.load_model({str(m)!r}); docs = tl.read_corpus({str(d)!r}, vocab=model.vocab)\n"
            "with use_dask('tcp://127.0.0.1:9') as s:\n"
            "    r = tl.heldout(model, docs, particles=5, progress=False)\n"
            "print('distributed' in sys.modules, s.record['ran'])\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["False", "local"]
    assert "runs here, not on the Dask cluster at tcp://127.0.0.1:9" in r.stderr


def test_larger_job_and_threshold_in_python(cluster, job):
    """A job above the threshold connects, and later small jobs of the block use the cluster too;
    the numbers match one local process."""
    from distributed import Client, get_task_stream

    model = tl.load_model(str(job[0]))
    docs = tl.read_corpus(str(job[1]), vocab=model.vocab)
    two = [list(map(int, docs[d])) for d in range(2)]
    kw = dict(particles=5, runs=2, seed=9, progress=False)
    local = tl.heldout(model, docs, **kw)
    with Client(cluster.scheduler_address) as client, get_task_stream(client) as ts:
        with use_dask(cluster.scheduler_address, min_seconds=1e-9) as session:
            big = tl.heldout(model, docs, **kw)
            small = tl.heldout(model, two, **kw)
    assert sum("_call_batch" in str(t["key"]) for t in ts.data) >= 2
    assert [j["ran"] for j in session.record["jobs"]] == ["cluster", "cluster"]
    np.testing.assert_array_equal(big.run_log_prob, local.run_log_prob)
    np.testing.assert_array_equal(small.run_log_prob, tl.heldout(model, two, **kw).run_log_prob)


def test_coherence_counting_of_a_small_file_runs_here(cluster, tmp_path):
    from tealeaves.coherence import count

    rng = np.random.default_rng(2)
    words = [f"w{i}" for i in range(20)]
    ref = tmp_path / "ref.txt"
    ref.write_text("\n".join(" ".join(rng.choice(words, 25)) for _ in range(200)) + "\n")
    local = count(str(ref), words[:8], window=5)
    with use_dask(cluster.scheduler_address) as policy:
        here = count(str(ref), words[:8], window=5)
    with use_dask(cluster.scheduler_address, min_seconds=0) as forced:
        remote = count(str(ref), words[:8], window=5)
    assert policy.record["ran"] == "local" and forced.record["ran"] == "cluster"
    for c in (here, remote):
        np.testing.assert_array_equal(c.joint, local.joint)
        np.testing.assert_array_equal(c.single, local.single)


def test_bad_threshold_is_one_error(job):
    m, d = job
    for bad in ("-1", "nan", "inf", "x"):
        one_line_error(["heldout", m, d, "--dask", "tcp://127.0.0.1:9", "--dask-min-seconds", bad],
                       "--dask-min-seconds")
    with pytest.raises(MethodError, match="dask min_seconds"), use_dask("tcp://127.0.0.1:9", min_seconds=-2):
        pass


def test_preloaded_workers_have_the_kernels(cluster):
    from distributed import Client

    def loaded() -> bool:
        return "tealeaves.cli.warmup" in sys.modules and "tealeaves.sampling.sequential" in sys.modules

    with Client(cluster.scheduler_address) as client:
        assert set(client.run(loaded).values()) == {True}


def test_theta_and_biased_csl_have_estimates_small_ones_run_here(job):
    """θ inference and biased CSL carry their cost models' estimates, so a small job runs here (an
    unreachable address is never contacted) and the record names it; before, a job with no estimate
    always went to the cluster."""
    from tealeaves.csl import csl
    from tealeaves.intrusion.predictive import infer_theta

    model = tl.load_model(str(job[0]))
    docs = tl.read_corpus(str(job[1]), vocab=model.vocab)
    local_theta = infer_theta(model, docs, burn_in=5, samples=5, progress=False)
    local_csl = csl(model, docs, samples=5, chains=2, biased=True).item_log_prob
    with use_dask("tcp://127.0.0.1:9") as session:
        theta = infer_theta(model, docs, burn_in=5, samples=5, progress=False)
        est = csl(model, docs, samples=5, chains=2, biased=True).item_log_prob
    jobs = {j["what"]: j for j in session.record["jobs"]}
    assert set(jobs) == {"theta", "biased CSL"}
    for j in jobs.values():
        assert j["ran"] == "local" and 0 < j["estimated_seconds"] < DASK_MIN_SECONDS
    np.testing.assert_array_equal(theta, local_theta)
    np.testing.assert_array_equal(est, local_csl)
