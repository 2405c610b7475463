"""Every result prints in one short line, shows a small table in notebooks, and converts to a
data frame with one row per document, topic, item or model."""

from __future__ import annotations

import numpy as np
import pytest

import tealeaves as tl
from tealeaves import datasets
from tealeaves.csl import LdaChain

pytest.importorskip("pandas")


@pytest.fixture(scope="module")
def results():
    model = datasets.sotu_model("sotu-20-asym")
    other = datasets.sotu_model("sotu-20-sym")
    docs = datasets.sotu().heldout.subset(range(12))
    ref = datasets.sotu().train.subset(range(800))
    scores_key = tl.intrusion.word_tasks(model)
    responses = [{"annotator": f"a{a}", "item": t.item, "choice": (t.intruder + a) % 6}
                 for a in range(3) for t in scores_key]
    return {
        "heldout": (tl.heldout(model, docs, runs=2, particles=5), len(docs)),
        "compare": (tl.compare(model, other, docs, temperatures=20, start_temperatures=20), len(docs)),
        "curve": (tl.training_curve([other, model], docs, temperatures=10, first_temperatures=20), 2),
        "coherence": (tl.coherence(model, ref, measure="umass"), 20),
        "predictive": (tl.intrusion.predictive(model, docs, samples=20, burn_in=10), len(docs)),
        "bcubed": (tl.bcubed([0, 0, 1, 1], ["a", "a", "a", "b"]), 4),
        "csl": (tl.csl(LdaChain(model), docs.subset(range(3)), samples=20, chains=2, burn_in=2), 3),
        "auto": (tl.intrusion.auto(model, ref), 20),
        "score": (tl.intrusion.score([t.key() for t in scores_key], responses), 20),
        "evaluate": (tl.evaluate([model, other], heldout=docs, compare_models="difference", particles=5), 2),
    }


@pytest.mark.parametrize("kind", ["heldout", "compare", "curve", "coherence", "predictive", "bcubed", "csl",
                                  "auto", "score", "evaluate"])
def test_short_repr_html_and_frame(results, kind):
    res, rows = results[kind]
    text = repr(res)
    assert "\n" not in text and len(text) < 400 and "array(" not in text, text
    html = res._repr_html_()
    assert html.startswith("<") and len(html) < 5000
    frame = res.to_frame()
    assert len(frame) == rows, (kind, len(frame))
    assert np.isfinite(frame.select_dtypes("number").to_numpy(dtype=float)).any()
