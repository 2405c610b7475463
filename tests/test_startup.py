"""Start-up: what `import tealeaves` and the CLI's parser import (never how long they take), the lazy
public API, compile time reported apart from `seconds`, and `tealeaves warm-up`."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import tealeaves as tl

HEAVY = ("scipy.stats", "scipy.special", "scipy.optimize", "matplotlib", "sqlalchemy", "fastapi",
         "pandas", "dask", "distributed")


def _fresh(code: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600,
                          env=env, check=False)


def _imported_after(code: str) -> set[str]:
    """Top-level modules and subpackages in sys.modules after running `code` in a fresh Python."""
    out = _fresh(code + "\nimport sys, json\nprint(json.dumps(sorted(sys.modules)))")
    assert out.returncode == 0, out.stderr
    return set(json.loads(out.stdout.splitlines()[-1]))


def _heavy(modules: set[str]) -> set[str]:
    return {m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY)}


def test_import_tealeaves_loads_no_heavy_dependency():
    mods = _imported_after("import tealeaves")
    assert not _heavy(mods)
    # nor numpy or numba: names are loaded on first use
    assert "numpy" not in mods and "numba" not in mods


def test_cli_help_loads_no_heavy_dependency():
    mods = _imported_after(
        "import contextlib, io\nfrom tealeaves.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    assert main(['--help']) == 0 and main(['heldout', '--help']) == 0"
    )
    assert not _heavy(mods)


def test_every_public_name_resolves_and_is_listed():
    out = _fresh(
        "import tealeaves as tl, types\n"
        "missing = sorted(set(tl.__all__) - set(dir(tl)))\n"
        "kinds = {n: type(getattr(tl, n)).__name__ for n in tl.__all__}\n"
        "import json; print(json.dumps([missing, kinds]))"
    )
    assert out.returncode == 0, out.stderr
    missing, kinds = json.loads(out.stdout)
    assert missing == []
    assert kinds["heldout"] == kinds["evaluate"] == kinds["select"] == "function"
    assert kinds["intrusion"] == kinds["datasets"] == kinds["synthetic"] == "module"
    assert kinds["HeldoutResult"] == kinds["TealeavesError"] == "type"


def test_functions_keep_their_names_after_their_submodules_are_imported():
    """`tl.heldout` is the function even once `tealeaves.heldout` (the package) has been imported,
    which sets the package as an attribute of tealeaves."""
    import tealeaves.coherence.measures
    import tealeaves.compare.align
    import tealeaves.evaluate
    import tealeaves.heldout.ais
    import tealeaves.select  # noqa: F401

    for name in ("heldout", "coherence", "compare", "csl", "evaluate", "select"):
        assert callable(getattr(tl, name)) and not isinstance(getattr(tl, name), type(sys)), name
    from tealeaves import heldout

    assert heldout is tl.heldout
    with pytest.raises(AttributeError, match="no attribute 'nonexistent'"):
        tl.nonexistent  # noqa: B018


def test_result_reports_compile_seconds_apart():
    model = tl.synthetic.random_model(3, 20, seed=1)
    docs = tl.synthetic.generate(model, 3, 8, seed=2)
    res = tl.heldout(model, docs, method="is-prior-theta", runs=2, bootstrap=0, progress=False)
    d = res.to_dict()
    assert d["compile_seconds"] == res.compile_seconds >= 0
    assert "seconds" in d


def test_compile_time_is_not_counted_in_seconds(monkeypatch):
    """With a fake clock, the warm-up (where compiling happens) takes 1,000 s and each scored
    document 1 s: `compile_seconds` holds the 1,000, `seconds` only the documents' time."""
    import importlib
    import time

    heldout_pkg = importlib.import_module("tealeaves.heldout")
    clock = [0.0]
    monkeypatch.setattr(time, "perf_counter", lambda: clock[0])
    real_warm_up, real_task = heldout_pkg._warm_up, heldout_pkg._doc_task
    warming = [False]

    def slow_warm_up(shared, items):
        warming[0] = True
        real_warm_up(shared, items)
        warming[0] = False
        clock[0] += 1000.0

    def timed_task(shared, item):
        clock[0] += 0.0 if warming[0] else 1.0
        return real_task(shared, item)

    monkeypatch.setattr(heldout_pkg, "_warm_up", slow_warm_up)
    monkeypatch.setattr(heldout_pkg, "_doc_task", timed_task)
    model = tl.synthetic.random_model(3, 20, seed=1)
    docs = tl.synthetic.generate(model, 4, 8, seed=2)
    res = tl.heldout(model, docs, method="is-prior-theta", runs=2, bootstrap=0, progress=False)
    assert res.compile_seconds == 1000.0
    assert res.seconds == 4.0  # one fake second per document, nothing of the warm-up


def test_warm_up_does_not_change_results(monkeypatch):
    """The warm-up call has its own seed: results are the same as without it."""
    import importlib

    heldout_pkg = importlib.import_module("tealeaves.heldout")  # the package; tl.heldout is the function
    model = tl.synthetic.random_model(4, 30, seed=3)
    docs = tl.synthetic.generate(model, 4, 10, seed=4)
    for method in ("left-to-right", "ais"):
        warm = tl.heldout(model, docs, method=method, runs=2, seed=7, bootstrap=0, progress=False)
        monkeypatch.setattr(heldout_pkg, "_warm_up", lambda shared, items: None)
        cold = tl.heldout(model, docs, method=method, runs=2, seed=7, bootstrap=0, progress=False)
        monkeypatch.undo()
        assert (warm.run_log_prob == cold.run_log_prob).all()


def _heldout_cli(tmp_path, cache: str, *extra: str) -> subprocess.CompletedProcess:
    model = tmp_path / "m.npz"
    docs = tmp_path / "d.txt"
    if not model.exists():
        tl.save_model(tl.synthetic.random_model(3, 20, seed=1, vocab=[f"w{i}" for i in range(20)]), model)
        docs.write_text("w1 w2 w3\nw4 w5 w1 w2\n", encoding="utf-8")
    env = {**os.environ, "NUMBA_CACHE_DIR": cache}
    code = ("import sys; from tealeaves.cli import main; sys.exit(main(sys.argv[1:]))")
    return subprocess.run(
        [sys.executable, "-c", code, "heldout", str(model), str(docs), "--method", "is-prior-theta",
         "--json", str(tmp_path / "out.json"), *extra],
        capture_output=True, text=True, timeout=900, env=env, check=False)


def test_terminal_says_when_it_compiles_and_only_then(tmp_path):
    cache = str(tmp_path / "cache")
    first = _heldout_cli(tmp_path, cache)
    assert first.returncode == 0, first.stderr
    assert "compiling the numba kernels for heldout is-prior-theta (first run only" in first.stderr
    assert "compiling or loading the numba kernels before the timed part" in first.stdout
    assert json.loads((tmp_path / "out.json").read_text())["results"][0]["compile_seconds"] > 0
    again = _heldout_cli(tmp_path, cache)  # cached now: loading, not compiling
    assert again.returncode == 0, again.stderr
    assert "compiling the numba kernels" not in again.stderr


def test_quiet_says_nothing_while_compiling(tmp_path):
    quiet = _heldout_cli(tmp_path, str(tmp_path / "cache2"), "--quiet")
    assert quiet.returncode == 0, quiet.stderr
    assert "compiling" not in quiet.stderr


def test_warm_up_command_runs_every_estimator(tmp_path, capsys):
    from tealeaves.cli import main

    out = tmp_path / "warm.json"
    assert main(["warm-up", "--json", str(out), "--quiet"]) == 0
    parts = json.loads(out.read_text())["parts"]
    for task in ("heldout", "completion"):
        for name in tl.method_names(task):
            assert f"{task} {name}" in parts
    assert {"compare ratio-ais convex", "compare ratio-ais geometric", "curve", "csl", "predictive",
            "coherence counts"} <= set(parts)
    assert "compiled or loaded every kernel" in capsys.readouterr().out
