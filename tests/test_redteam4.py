"""Red team 4 (this session's surface): each finding with a test that failed before its fix."""

from __future__ import annotations

import json

import numpy as np
import pytest

import tealeaves as tl
from tealeaves.diagnostics.stability import WORDS_SHOWN
from tealeaves.errors import InputFileError
from tealeaves.intrusion.plan import MAX_ANNOTATORS, plan_intrusion
from tealeaves.report.schema import check_result


@pytest.mark.parametrize("kw", [dict(icc=1.0, annotators=[3], max_items=395),
                                dict(annotators=[MAX_ANNOTATORS]), dict(icc=1.0, annotators=[1, 20])])
def test_the_planners_note_agrees_with_its_rows(kw):
    """The note said 'n/a' (or more items than a row) for designs the table itself showed reaching the
    power: it used need x icc, the asymptote, not the rows' power computation."""
    plan = plan_intrusion(0.5, 0.6, **kw)
    if kw.get("max_items"):
        assert all(r["fits"] for r in plan.rows) and not plan.note.startswith("n/a")
    else:
        fewest = int(plan.note.split("at least ")[1].split()[0])
        assert fewest <= min(r["items"] for r in plan.rows)


def _restarts():
    rng = np.random.default_rng(3)
    vocab = [f"w{i}" for i in range(30)]
    phi = rng.dirichlet(np.full(30, 0.2), size=4)
    return [tl.TopicModel(phi[p], np.full(4, 0.1), vocab=vocab, name=n)
            for p, n in ((np.arange(4), "a"), (np.array([2, 0, 3, 1]), "b"))]


def test_stability_json_carries_each_topics_words_for_the_report():
    """The report's per-topic stability table promised top words but the JSON had none."""
    from tealeaves.report import render

    doc = json.loads(json.dumps(tl.stability(_restarts()).to_dict()))
    assert len(doc["words"]["a"]) == 4 and all(len(w) == WORDS_SHOWN for w in doc["words"]["a"])
    check_result(doc, "s.json")
    page = render([doc])
    assert " ".join(doc["words"]["b"][0][:5]) in page


@pytest.mark.parametrize("forge, field", [
    (lambda d: d.update(floor=7), "floor"),
    (lambda d: d["models"].append("ghost"), "per_topic"),
    (lambda d: d["per_topic"].update(a=d["per_topic"]["a"][:1]), "per_topic"),
    (lambda d: d["words"].update(a=d["words"]["a"][:2]), "per_topic"),
])
def test_a_forged_stability_result_is_one_line(forge, field):
    doc = json.loads(json.dumps(tl.stability(_restarts()).to_dict()))
    forge(doc)
    with pytest.raises(InputFileError, match=field) as e:
        check_result(doc, "s.json")
    assert "\n" not in str(e.value)
