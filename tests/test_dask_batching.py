"""Work travels in batches of about equal estimated cost (issue 22 point 1): every item in exactly
one batch, a very long document alone in its batch, and the numbers bit-identical whether
documents run in this process, in local processes, or on a Dask cluster (a real scheduler and
worker processes started here)."""

from __future__ import annotations

import numpy as np
import pytest

import tealeaves as tl
from tealeaves.util.parallel import BATCHES_PER_WORKER, ITEM_OVERHEAD, batches, run_tasks, use_dask


def _covers_once(groups: list[list[int]], n: int) -> None:
    flat = [i for g in groups for i in g]
    assert sorted(flat) == list(range(n))
    assert all(g == sorted(g) and g for g in groups)


@pytest.mark.parametrize("n, workers", [(1, 1), (1, 8), (3, 8), (7, 2), (100, 2), (1000, 3)])
def test_batches_cover_every_item_once(n, workers):
    rng = np.random.default_rng(n)
    groups = batches(rng.integers(0, 50, n).astype(float), workers)
    _covers_once(groups, n)
    assert len(groups) == min(n, BATCHES_PER_WORKER * workers)


def test_batches_of_nothing_and_of_zero_cost():
    assert batches([], 4) == []
    groups = batches([0.0] * 12, 2, per_worker=2)
    _covers_once(groups, 12)
    assert [len(g) for g in groups] == [3, 3, 3, 3]  # zero estimates spread out like equal ones


def test_batches_put_a_huge_item_alone_and_first():
    costs = [1.0] * 60
    costs[17] = 1000.0
    groups = batches(costs, 2)
    _covers_once(groups, 60)
    assert groups[0] == [17]
    rest = [len(g) for g in groups[1:]]
    assert max(rest) - min(rest) <= 1  # the short items share the other batches evenly


def test_batches_are_about_equal_cost_heaviest_first():
    rng = np.random.default_rng(3)
    costs = rng.pareto(1.5, 2000) + 1
    groups = batches(costs, 2)
    _covers_once(groups, 2000)
    loads = [costs[g].sum() for g in groups]
    slack = ITEM_OVERHEAD * costs.mean() * max(map(len, groups))  # the per-item overhead counts too
    assert all(a >= b - slack for a, b in zip(loads, loads[1:], strict=False))
    assert max(loads) - min(loads) <= costs.max() + slack  # batches differ by at most one item


def test_batches_refuse_bad_costs():
    for bad in ([1.0, -1.0], [np.nan], [np.inf, 1.0]):
        with pytest.raises(ValueError, match="finite and non-negative"):
            batches(bad, 2)
    with pytest.raises(ValueError, match="2 costs for 3 items"):
        run_tasks(lambda s, x: x, None, [1, 2, 3], 2, costs=[1.0, 2.0])


def test_run_tasks_keeps_item_order_with_costs():
    items = list(range(40))
    costs = [float((7 * i) % 13) for i in items]
    assert run_tasks(_square, None, items, 2, costs=costs) == [i * i for i in items]


def _square(shared, item):
    return item * item


@pytest.fixture(scope="module")
def cluster():
    from distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as c:
        yield c


@pytest.fixture(scope="module")
def long_corpus(example):
    """The example documents, many short copies of them, and one document 30 times longer than the
    others put together would make a batch."""
    model, docs = example[:2]
    short = [list(map(int, docs[d])) for d in range(len(docs))]
    long = [w for d in short for w in d][:400]
    return model, short * 4 + [long] + short[:5]


def test_heldout_on_dask_batched_equals_local(cluster, long_corpus):
    from distributed import Client, get_task_stream

    model, docs = long_corpus
    kw = dict(method="left-to-right", particles=3, runs=2, seed=11, progress=False)
    one = tl.heldout(model, docs, workers=1, **kw)
    two = tl.heldout(model, docs, workers=2, **kw)
    with Client(cluster.scheduler_address) as client, use_dask(client), get_task_stream(client) as ts:
        remote = tl.heldout(model, docs, **kw)
    np.testing.assert_array_equal(two.run_log_prob, one.run_log_prob)
    np.testing.assert_array_equal(remote.run_log_prob, one.run_log_prob)
    tasks = {t["key"] for t in ts.data if "_call_batch" in str(t["key"])}
    assert 2 <= len(tasks) <= BATCHES_PER_WORKER * 2 < len(docs)  # batches, not one task a document


def test_completion_and_theta_on_dask_equal_local(cluster, long_corpus):
    from tealeaves.intrusion.predictive import infer_theta as theta

    model, docs = long_corpus
    local = tl.completion(model, docs, particles=3, seed=5, workers=2, progress=False)
    local_theta = theta(model, docs[:30], burn_in=2, samples=3, seed=5, workers=2)
    with use_dask(cluster.scheduler_address, min_seconds=0):
        remote = tl.completion(model, docs, particles=3, seed=5, progress=False)
        remote_theta = theta(model, docs[:30], burn_in=2, samples=3, seed=5)
    np.testing.assert_array_equal(remote.run_log_prob, local.run_log_prob)
    np.testing.assert_array_equal(remote_theta, local_theta)


def test_coherence_counts_on_dask_grouped_equal_local(cluster, tmp_path):
    from tealeaves.coherence import count

    rng = np.random.default_rng(1)
    words = [f"w{i}" for i in range(30)]
    ref = tmp_path / "ref.txt"
    lines = (" ".join(rng.choice(words, int(rng.integers(1, 60)))) for _ in range(500))
    ref.write_text("\n".join(lines) + "\n")
    local = {w: count(str(ref), words[:12], window=w, chunk_docs=9) for w in (None, 5)}
    with use_dask(cluster.scheduler_address, min_seconds=0):
        remote = {w: count(str(ref), words[:12], window=w, chunk_docs=9) for w in (None, 5)}
    for w in (None, 5):
        np.testing.assert_array_equal(remote[w].joint, local[w].joint)
        np.testing.assert_array_equal(remote[w].single, local[w].single)
        assert (remote[w].units, remote[w].documents, remote[w].tokens) == \
            (local[w].units, local[w].documents, local[w].tokens)


def test_scheduler_without_workers_is_one_error(monkeypatch):
    from distributed import LocalCluster

    import tealeaves.util.parallel as par
    from tealeaves.errors import MethodError

    monkeypatch.setattr(par, "WORKER_WAIT", 1.0)
    message = r"has no workers \(waited 1 s\); start some with: dask worker tcp://"
    with LocalCluster(n_workers=0, processes=True, dashboard_address=":0") as empty:
        with pytest.raises(MethodError, match=message), use_dask(empty.scheduler_address, min_seconds=0):
            pass


def test_run_tasks_on_dask_with_no_one_or_few_items(cluster):
    with use_dask(cluster.scheduler_address, min_seconds=0):
        assert run_tasks(_square, None, [], 1) == []
        assert run_tasks(_square, None, [3], 1, costs=[0.0]) == [9]
        assert run_tasks(_square, None, list(range(5)), 1, costs=[5, 0, 100, 1, 1]) == [0, 1, 4, 9, 16]
