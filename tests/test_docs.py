"""The documentation cannot go stale: the MkDocs site builds with --strict, every code example of
the user guide runs (Python blocks of a page in one namespace, each shell line as a command), and
so does the README's quick tour. Examples run in a folder holding the files they name (models,
documents, MALLET, gensim, scikit-learn and tomotopy files made here from the bundled corpus)."""

from __future__ import annotations

import gzip
import os
import re
import runpy
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tealeaves as tl
from tealeaves import datasets
from tealeaves.corpus import write_text_corpus

ROOT = Path(__file__).resolve().parent.parent
GUIDE = sorted((ROOT / "docs" / "guide").glob("*.md"))
BLOCK = re.compile(r"(<!-- not run: [^>]+-->\s*\n)?```(python|bash)\n(.*?)\n```", re.S)


def blocks(text: str) -> list[tuple[str, str, bool]]:
    """(language, code, skipped) for every python/bash block."""
    return [(m.group(2), m.group(3), bool(m.group(1))) for m in BLOCK.finditer(text)]


def _texts(corpus):
    return [[corpus.vocab[i] for i in d] for d in corpus]


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    d = tmp_path_factory.mktemp("docs")
    c = datasets.sotu()
    files = {"sotu-20-asym": "model.npz", "sotu-20-sym": "model_b.npz", "sotu-50-asym": "model50.npz"}
    for name, file in files.items():
        tl.save_model(datasets.sotu_model(name), d / file)
    write_text_corpus(c.heldout.subset(range(30)), d / "heldout.txt")
    write_text_corpus(c.train.subset(range(600)), d / "reference.txt")
    write_text_corpus(c.train.subset(range(600)), d / "corpus.txt")
    (d / "topics.txt").write_text("war army navy military\ntax budget billion percent\n")
    (d / "predicted.txt").write_text("1\n1\n2\n2\n3\n")
    (d / "gold.txt").write_text("a\na\na\nb\nb\n")
    (d / "latin1.txt").write_bytes("the café government\npeople congress\n".encode("latin-1"))
    texts = _texts(c.train.subset(range(600)))
    _library_models(d, texts)
    runpy.run_path(str(ROOT / "scripts" / "make_zoo_examples.py"))["make"](d)  # tomotopy's zoo, fixtures
    return d


def _library_models(d: Path, texts: list[list[str]]) -> None:
    """gensim, scikit-learn and tomotopy models saved the libraries' way, and MALLET's files."""
    import joblib
    import tomotopy as tp
    from gensim.corpora import Dictionary
    from gensim.models import LdaModel
    from sklearn.decomposition import LatentDirichletAllocation
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.pipeline import make_pipeline

    dictionary = Dictionary(texts)
    LdaModel([dictionary.doc2bow(t) for t in texts], id2word=dictionary, num_topics=5, passes=2,
             random_state=1).save(str(d / "lda.gensim"))
    pipe = make_pipeline(CountVectorizer(),
                         LatentDirichletAllocation(n_components=5, max_iter=5, random_state=0))
    pipe.fit([" ".join(t) for t in texts])
    joblib.dump(pipe, d / "sk.joblib")
    mdl = tp.LDAModel(k=5, seed=1)
    for t in texts:
        if t:
            mdl.add_doc(t)
    mdl.train(50, workers=1)
    mdl.save(str(d / "model.tomotopy"))
    # MALLET: --output-state from the tomotopy assignments, then weights, keys and doc-topics
    alpha, beta = np.asarray(mdl.alpha, dtype=float), float(mdl.eta)
    vocab = list(mdl.vocabs)
    lines = ["#doc source pos typeindex type topic",
             "#alpha : " + " ".join(repr(float(a)) for a in alpha) + " ", f"#beta : {beta}"]
    counts = np.zeros((5, len(vocab)))
    for i, doc in enumerate(mdl.docs):
        for pos, (w, z) in enumerate(zip(doc.words, doc.topics, strict=True)):
            lines.append(f"{i} NA {pos} {w} {vocab[w]} {z}")
            counts[z, w] += 1
    with gzip.open(d / "state.gz", "wt", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")
    with open(d / "weights.txt", "w") as fh:
        for t in range(5):
            for w, word in enumerate(vocab):
                fh.write(f"{t}\t{word}\t{beta + counts[t, w]}\n")
    with open(d / "keys.txt", "w") as fh:
        for t in range(5):
            fh.write(f"{t}\t{float(alpha[t])!r}\t{' '.join(vocab[w] for w in np.argsort(-counts[t])[:10])}\n")
    with open(d / "doc-topics.txt", "w") as fh:
        for i, doc in enumerate(mdl.docs):
            theta = doc.get_topic_dist()
            fh.write(f"{i}\tdoc{i}\t" + "\t".join(repr(float(x)) for x in theta) + "\n")


def _run_blocks(page: Path, found: list[tuple[str, str, bool]], cwd: Path) -> None:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "MPLBACKEND": "Agg"}
    namespace: dict = {"__name__": "__docs__"}
    old = os.getcwd()
    os.chdir(cwd)
    try:
        for lang, code, skipped in found:
            if skipped:
                continue
            if lang == "python":
                exec(compile(code, f"{page.name} (python block)", "exec"), namespace)
                continue
            for line in code.replace("\\\n", " ").splitlines():  # continued lines joined
                line = line.split("  #")[0].rstrip()
                if not line or line.startswith("#"):
                    continue
                r = subprocess.run(["bash", "-c", line], capture_output=True, text=True, env=env, timeout=600)
                assert r.returncode == 0, f"{page.name}: {line}\n{r.stderr}"
    finally:
        os.chdir(old)


@pytest.mark.parametrize("page", GUIDE, ids=lambda p: p.stem)
def test_guide_examples_run(page, workdir):
    found = blocks(page.read_text())
    _run_blocks(page, found, workdir)


def test_every_skipped_example_says_why():
    for page in GUIDE:
        for m in re.finditer(r"<!-- not run:([^>]*)-->", page.read_text()):
            assert len(m.group(1).strip()) > 10, page


def test_readme_quick_tour_runs(workdir):
    text = (ROOT / "README.md").read_text()
    tour = text[text.index("## Quick tour") : text.index("## Documentation")]
    found = blocks(tour)
    assert [lang for lang, _, _ in found] == ["python", "bash"]
    _run_blocks(ROOT / "README.md", found, workdir)


def test_readme_is_short_and_its_links_exist():
    text = (ROOT / "README.md").read_text()
    assert len(text.encode()) <= 8500
    for link in re.findall(r"\]\((docs/[^)]+)\)", text):
        assert (ROOT / link).exists(), link


def test_readme_test_command_installs_what_the_tests_need():
    """The README's test command is `.ci/run`, which installs Debian's chromium and postgresql (the
    tests drive them), the test extra, and runs pytest; the README says roughly how long it takes."""
    text = (ROOT / "README.md").read_text()
    first = blocks(text[: text.index("tealeaves evaluates")])[0][1]
    test_line = next(line for line in first.splitlines() if "test" in line)
    assert test_line.startswith("bash .ci/run"), test_line
    assert re.search(r"about \d+ minutes on 2 cores", test_line), test_line
    run = (ROOT / ".ci" / "run").read_text()
    for need in ("chromium", "postgresql", '".[test]"', "python -m pytest"):
        assert need in run, need


def test_mkdocs_builds_strict(tmp_path):
    if shutil.which("mkdocs") is None and not (Path(sys.executable).parent / "mkdocs").exists():
        pytest.skip("mkdocs is not installed (the test extra installs it)")
    mkdocs = shutil.which("mkdocs") or str(Path(sys.executable).parent / "mkdocs")
    r = subprocess.run([mkdocs, "build", "--strict", "-d", str(tmp_path / "site")], cwd=ROOT,
                       capture_output=True, text=True, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
                       timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    api = (tmp_path / "site" / "reference" / "api" / "index.html").read_text()
    assert "Estimate log P(w_d" in api  # docstrings rendered
