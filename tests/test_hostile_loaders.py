"""Model files that attack the loader: a pickle runs nothing without consent, and tomotopy's native
loader (which aborts the process or loops on bad files) fails with one line, in time."""

from __future__ import annotations

import pickle
import subprocess
import sys
import time

import numpy as np
import pytest

import tealeaves as tl
from tealeaves.cli.tools import example_paths


class Payload:
    """Unpickling this writes `marker`: stands for any code a crafted model file could run."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (exec, (f"open({self.marker!r}, 'w').write('ran')",))


def _cli(*args, timeout=120):
    return subprocess.run([sys.executable, "-m", "tealeaves", *map(str, args)], capture_output=True,
                          text=True, timeout=timeout)


def _one_line_error(proc):
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tealeaves: error:"), proc.stderr
    assert "Traceback" not in proc.stderr
    return lines[0]


@pytest.fixture
def crafted(tmp_path):
    """A malicious pickle named like a gensim model (with the .state sibling gensim writes)."""
    marker = tmp_path / "PWNED"
    path = tmp_path / "lda.gensim"
    path.write_bytes(pickle.dumps(Payload(marker), protocol=4))
    (tmp_path / "lda.gensim.state").write_bytes(pickle.dumps(Payload(marker), protocol=4))
    return path, marker


@pytest.mark.parametrize("fmt", [None, "gensim", "pickle", "sklearn"])
def test_a_pickle_is_never_loaded_without_consent(crafted, fmt):
    path, marker = crafted
    with pytest.raises(tl.MethodError, match="unpickling runs code.*allow_pickle=True"):
        tl.load_model(path, format=fmt)
    assert not marker.exists()


def test_consent_is_what_runs_the_file(crafted):
    """allow_pickle=True really unpickles (so the refusal above is the only guard)."""
    path, marker = crafted
    with pytest.raises(tl.TealeavesError):
        tl.load_model(path, format="pickle", allow_pickle=True)
    assert marker.read_text() == "ran"


@pytest.mark.parametrize("command", ["heldout", "coherence", "diversity", "predictive", "intrusion words"])
def test_cli_refuses_the_pickle_in_one_line(crafted, tmp_path, command):
    path, marker = crafted
    _, docs = example_paths()
    extra = {"heldout": [docs, "--model-format", "gensim"], "coherence": [docs],
             "diversity": [], "predictive": [docs],
             "intrusion words": ["-o", tmp_path / "t.jsonl", "--key", tmp_path / "k.jsonl"]}[command]
    line = _one_line_error(_cli(*command.split(), path, *extra))
    assert "--allow-pickle" in line and not marker.exists()


def test_sklearn_pickle_loads_with_consent(tmp_path):
    import joblib
    from sklearn.decomposition import LatentDirichletAllocation
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.pipeline import make_pipeline

    texts = ["apple pear fig plum apple", "car road wheel tyre car", "apple car sky road"] * 5
    pipe = make_pipeline(CountVectorizer(), LatentDirichletAllocation(n_components=2, random_state=0))
    pipe.fit(texts)
    joblib.dump(pipe, tmp_path / "sk.joblib")
    with open(tmp_path / "sk.pkl", "wb") as fh:
        pickle.dump(pipe, fh)
    (tmp_path / "docs.txt").write_text("apple pear fig\ncar road\n")
    for name in ("sk.joblib", "sk.pkl"):
        with pytest.raises(tl.MethodError, match="unpickling runs code"):
            tl.load_model(tmp_path / name, format="sklearn")
        m = tl.load_model(tmp_path / name, format="sklearn", allow_pickle=True)
        np.testing.assert_allclose(m.phi, tl.load_model(pipe).phi)
    assert tl.io.detect(str(tmp_path / "sk.pkl")) == "pickle"
    proc = _cli("heldout", tmp_path / "sk.pkl", tmp_path / "docs.txt", "--allow-pickle", "--quiet")
    assert proc.returncode == 0 and "2 documents, 5 tokens scored" in proc.stdout, proc.stderr


def _tomotopy_file(tmp_path):
    import tomotopy as tp

    mdl = tp.LDAModel(k=2, seed=1)
    for d in [["apple", "pear", "fig"] * 3, ["car", "road", "wheel"] * 3] * 5:
        mdl.add_doc(d)
    mdl.train(10, workers=1)
    path = tmp_path / "good.tomotopy"
    mdl.save(str(path))
    return path


def test_tomotopy_loader_crashes_become_one_line_errors(tmp_path, crafted):
    model_path, _ = example_paths()
    fake = tmp_path / "fake.bin"
    fake.write_bytes(b"LDA\x00" + b"\x00" * 64)  # detected as tomotopy; its loader aborts (SIGABRT)
    for path, fmt in [(fake, None), (model_path, "tomotopy"), (crafted[0], "tomotopy")]:
        # a file detected as another format is named as such before tomotopy's loader runs
        with pytest.raises(tl.InputFileError, match="tomotopy cannot load it|not a tomotopy model file"):
            tl.load_model(path, format=fmt)
    assert not crafted[1].exists()
    _one_line_error(_cli("diversity", model_path, "--model-format", "tomotopy"))


def test_truncated_tomotopy_file_stops_at_the_time_limit(tmp_path, monkeypatch):
    good = _tomotopy_file(tmp_path)
    assert tl.load_model(good).num_topics == 2  # the child process reads a good file
    data = good.read_bytes()
    cut = tmp_path / "cut.tomotopy"
    cut.write_bytes(data[: len(data) // 2])  # tomotopy's loader never returns on this file
    line = _one_line_error(_cli("diversity", cut, "--load-timeout", "2"))
    assert "truncated or damaged: the tagged block at byte" in line  # seen before the loader runs
    import tealeaves.io.tomotopy as reader

    monkeypatch.setattr(reader, "check_complete", lambda path: None)  # a cut that check does not see
    t0 = time.perf_counter()
    with pytest.raises(tl.InputFileError, match="did not finish within 3 s"):
        tl.load_model(cut, timeout=3)
    assert time.perf_counter() - t0 < 30
