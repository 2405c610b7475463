"""The judgments type, its readers and the bundled studies (tealeaves.judgments, load_judgments)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest

import tealeaves as tl
from tealeaves.errors import InputFileError
from tealeaves.judgments import BINARY, Scale, Study, TopicSet, bundle, from_rows, hoyle, proxann
from tealeaves.judgments.table import read_table

REFERENCE = json.loads((Path(__file__).parent / "fixtures" / "judgments_reference.json").read_text())
RATING = Scale("ordinal", 1, 3)


def rows(*answers):
    return [dict(zip(("topic", "annotator", "value"), a, strict=True)) for a in answers]


def test_long_form_means_and_counts():
    j = from_rows(rows(("a", "x", 3), ("a", "y", 2), ("b", "x", 1)), "rating", RATING)
    assert j.topics.ids == ("a", "b") and j.annotators == ("x", "y")
    assert j.topic_means().tolist() == [2.5, 1.0]
    assert j.counts().tolist() == [2, 1]
    # a topic no one answered is kept, with no mean
    j = from_rows(rows(("a", "x", 3)), "rating", RATING, TopicSet(("a", "b")))
    assert np.isnan(j.topic_means()[1])


def test_ranks_are_oriented_so_larger_is_better():
    r = [dict(topic="t", annotator="x", item=i, value=v) for i, v in enumerate((2, 1, 3))]
    j = from_rows(r, "rank", Scale("rank", 1, 3))
    assert j.oriented().tolist() == [-2, -1, -3]


@pytest.mark.parametrize("answers, places, message", [
    (rows(("a", "x", 3), ("a", "x", 1)), None, "answered this topic twice"),
    (rows(("a", "x", 4)), ["f.csv:2"], "f.csv:2 (topic 'a', annotator 'x'): value 4 is off the scale 1..3"),
    (rows(("a", "x", 2.5)), None, "not a whole number"),
    (rows(("a", "x", "many")), ["f.csv:7"], "f.csv:7: value 'many' is not a finite number"),
    ([{"topic": "a", "value": 1}], None, "needs a topic, an annotator and a value"),
])
def test_bad_answers_get_one_line_errors(answers, places, message):
    with pytest.raises(InputFileError, match=message.replace("(", r"\(").replace(")", r"\)")) as e:
        from_rows(answers, "rating", RATING, places=places)
    assert "\n" not in str(e.value)


def test_a_ranking_must_be_a_permutation():
    r = [dict(topic="t", annotator="x", item=i, value=v) for i, v in enumerate((1, 2, 2))]
    with pytest.raises(InputFileError, match=r"the ranks \[1, 2, 2\] are not a permutation of 1..3"):
        from_rows(r, "rank", Scale("rank", 1, 3))


def test_table_reader(tmp_path):
    f = tmp_path / "study.csv"
    f.write_text("topic,annotator,task,value,corpus,words\n"
                 "t1,ann1,word-intrusion,1,news,a b c\nt1,ann2,word-intrusion,0,news,a b c\n"
                 "t2,ann1,word-intrusion,1,web,d e f\n")
    s = read_table(f)
    j = s["word-intrusion"]
    assert j.scale == BINARY and j.topics.corpus == ("news", "web") and j.topics.words[1] == ("d", "e", "f")
    f.write_text("topic,annotator,task,value,corpus\nt1,a,rating,1,news\nt1,b,rating,2,web\n")
    with pytest.raises(InputFileError, match=r"study.csv:3: topic 't1' has corpus 'web' here but 'news'"):
        read_table(f)
    f.write_text("topic,annotator,task,value\nt1,a,rating,1\nt1,b,rating,3\n")
    assert "scale is the answers' range 1..3" in read_table(f).notes[0]


def test_save_and_read_back(tmp_path):
    study = tl.load_judgments("proxann2025:bills", exclude="none")
    path = tmp_path / "s.json.gz"
    bundle.save_study(study, path)
    back = bundle.read_study(path)
    assert back.topics.ids == study.topics.ids and back.notes == study.notes
    for task in study.tasks:
        a, b = study[task], back[task]
        assert a.annotators == b.annotators and np.array_equal(a.value, b.value, equal_nan=True)
        assert a.text == b.text and np.array_equal(a.item, b.item)
    assert back.documents.text == study.documents.text
    assert set(back.judges) == set(study.judges)


def test_a_damaged_file_is_named_by_field(tmp_path):
    obj = bundle.study_dict(tl.load_judgments("hoyle2021"))
    obj["tasks"]["rating"]["value"][5] = "x"
    path = tmp_path / "bad.json.gz"
    path.write_bytes(gzip.compress(json.dumps(obj).encode()))
    with pytest.raises(InputFileError, match=r"bad.json.gz: tasks.rating.value\[5\]: expected a number"):
        bundle.read_study(path)
    obj = bundle.study_dict(tl.load_judgments("hoyle2021"))
    obj["tasks"]["rating"]["value"][0] = 7
    path.write_bytes(gzip.compress(json.dumps(obj).encode()))
    with pytest.raises(InputFileError, match="value 7 is off the scale 1..3"):
        bundle.read_study(path)


def test_hoyle_bundle_redraws_the_authors_subsample():
    """The authors' per-topic means (all_data.json, read without tealeaves) from the bundled raw
    answers through the authors' sampling: every worker's answer is in the bundle, in order."""
    study = tl.load_judgments("hoyle2021")
    assert isinstance(study, Study) and len(study.topics) == 300
    want = REFERENCE["hoyle2021"]["authors_means"]
    for k, task in enumerate(("rating", "word-intrusion")):
        got = hoyle.authors_sample(study[task]).topic_means()
        assert np.allclose(got, [want[t][k] for t in study.topics.ids], atol=1e-9)
    assert study["rating"].counts().min() >= 9 and study["word-intrusion"].counts().min() >= 26
    assert "Copyright (c) 2021 Alexander Hoyle" in study.licence and "hoyle" in study.citation


def test_proxann_bundle():
    study = tl.load_judgments("proxann2025:bills", exclude="none")
    assert len(study.topics) == 24 and len(study.extra["responses"]) == 121
    # the authors' evaluation scripts print "Removed: 20" for the Bills export
    assert len(proxann.excluded(study)) == 20
    kept = tl.load_judgments("proxann2025:bills")
    assert len(kept["label"]) == 101 and "excluded 20 of 121" in kept.notes[-1]
    assert set(kept.judges) >= {"gpt-4o-2024-08-06", "Qwen3-32B"}
    assert all(len(v["fit"].annotators) == 5 for v in kept.judges.values())  # five runs each
    assert "Copyright (c) 2024 Alexander Hoyle" in study.licence
    # no worker identifiers: annotators are renumbered
    assert all(a.startswith("w") and len(a) == 4 for a in study["fit"].annotators)


def test_unknown_names_and_files():
    with pytest.raises(InputFileError, match="bundled: hoyle2021, proxann2025:bills"):
        tl.load_judgments("hoyle2022")
    assert tl.datasets.bundled_file("hoyle2021").endswith("hoyle2021.json.gz")


# -- the studies' own file formats, on small files written here ------------------------------------

def _hoyle_release(folder: Path, cell: str = '"3,4"') -> None:
    """all_data.json with two NYTimes MALLET topics and the four per-task files (Qualtrics codes)."""
    metrics = {"c_npmi_10_full": [0.1, 0.2], "c_v_full": [0.5, None],
               "ratings_scores_raw": [[1], [2]], "ratings_confidences_raw": [[1], [1]]}
    data = {"nytimes": {"mallet": {"topics": [["a", "b"], ["c", "d"]], "metrics": metrics}},
            "wikitext": {"mallet": {"topics": [["e", "f"]],
                                    "metrics": {"c_npmi_10_full": [0.3], "c_v_full": [0.4]}}}}
    (folder / "all_data.json").write_text(json.dumps(data))
    for c in ("nytimes", "wikitext"):
        cols = ["nytimes_mallet_0", "nytimes_mallet_1", "wikitext_mallet_0", "wikitext_fake_10000"]
        (folder / f"{c}_ratings.csv").write_text(",".join(["", *cols]) + "\n"
                                                 + f"2,{cell},\"1,5\",\"2,4\",\"3,4\"\n3,\"2,4\",,\"3,6\",\n")
        (folder / f"{c}_intrusion.csv").write_text(",".join(["", *cols[:3]])
                                                   + "\n0,\"6,7\",\"1,8\",\"6,7\"\n")


def test_hoyle_release_reader(tmp_path):
    _hoyle_release(tmp_path)
    study = tl.load_judgments(tmp_path)
    r = study["rating"]
    assert r.topics.ids == ("nytimes/mallet/0", "nytimes/mallet/1", "wikitext/mallet/0")
    # two files x two workers; the fake (attention-check) column left out and counted
    assert len(r.annotators) == 4
    assert any("left out 1 answers to the attention-check" in n for n in study.notes)
    assert r.topic_means()[0] == 2.5 and r.familiar.tolist()[:2] == [True, False]
    assert study["word-intrusion"].value.tolist()[:3] == [1.0, 0.0, 1.0]  # code 6 is the intruder
    assert np.isnan(study.metric("c_v_full")[1])


def test_hoyle_release_bad_cell(tmp_path):
    _hoyle_release(tmp_path, cell='"4,4"')
    with pytest.raises(InputFileError, match=r"wikitext_ratings.csv:2: column nytimes_mallet_0: '4,4' is not "
                                             "ANSWER,FAMILIARITY"):
        tl.load_judgments(tmp_path)


def _proxann_release(folder: Path, eval_id: str = "11",
                     ranks=(1, 2, 3, 4, 5, 6, 7, 8)) -> tuple[Path, Path]:
    docs = [{"doc_id": 10 + i, "text": f"document {i}", "prob": 1 - i / 7, "assigned_to_k": i < 3}
            for i in range(7)]
    config = {"data/models/x/bills-labeled/k-50/mallet/run": {"4": {
        "topic_words": ["tax", "credit"],
        "exemplar_docs": [{"doc_id": 1, "text": "an exemplar", "prob": 0.9}],
        "eval_docs": docs, "distractor_doc": {"text": "sponges"}}}}
    cfg = folder / "config_bills_part1.json"
    cfg.write_text(json.dumps(config))
    columns = ["StartDate", "Status", "Duration (in seconds)", "Q22", "practice_purpose", "cluster_label",
               "cluster_coherence", "11_loop_fit_a", "11_loop_familiarity", "id", "rank_99",
               *[f"practice_rank_{i}" for i in range(4)], *[f"{i + 1}_loop_fit_a" for i in range(7)],
               *[f"{i + 1}_loop_familiarity" for i in range(7)], *[f"rank_{i}" for i in range(7)],
               *[f"eval_id_{i}" for i in range(7)]]
    def response(worker, label):
        v = {"StartDate": "2024-12-12 07:00:00", "Status": "IP Address", "Duration (in seconds)": "600",
             "Q22": worker, "practice_purpose": "To see when documents are related to a single category",
             "cluster_label": label, "cluster_coherence": "4 - Clearly.",
             "11_loop_fit_a": "2 - It mostly doesn't fit", "11_loop_familiarity": "I am not familiar enough",
             "id": "data/models/x/bills-labeled/k-50/mallet/run/4",
             "rank_99": str(ranks[7])}
        v.update({f"practice_rank_{i}": str(i + 1) for i in range(4)})
        v.update({f"{i + 1}_loop_fit_a": f"{5 - i // 2} - fits" for i in range(7)})
        v.update({f"{i + 1}_loop_familiarity": "" for i in range(7)})
        v.update({f"rank_{i}": str(ranks[i]) for i in range(7)})
        v.update({f"eval_id_{i}": str(10 + i) for i in range(7)})
        v["eval_id_1"] = eval_id
        return v
    import csv as csv_module
    export = folder / "export_bills.csv"
    with open(export, "w", newline="", encoding="utf-8") as fh:
        w = csv_module.DictWriter(fh, columns)
        w.writeheader()
        w.writerow({c: c for c in columns})
        w.writerow({c: '{"ImportId":"x"}' for c in columns})
        w.writerow(response("5f0a1b2c3d4e5f6a7b8c9d0e", "Tax credits"))
        w.writerow(response("6a7b8c9d0e1f2a3b4c5d6e7f", "credit"))  # the label is a top word
    return cfg, export


def test_proxann_release_reader(tmp_path):
    cfg, export = _proxann_release(tmp_path)
    study = proxann.read_proxann(export, [cfg])
    assert study.topics.ids == ("bills/mallet/4",) and study["fit"].annotators == ("w001", "w002")
    assert "5f0a" not in json.dumps(bundle.study_dict(study))  # no worker ids
    assert study["rank"].scale.high == 8 and study["label"].text == ("Tax credits", "credit")
    assert proxann.failures(study)[1]["category"] and not proxann.failures(study)[0]["category"]
    # weighted failures: the label inside the top words counts 2 (> 1: excluded)
    assert proxann.excluded(study) == ["w002"]


def test_proxann_release_inconsistent(tmp_path):
    cfg, export = _proxann_release(tmp_path, eval_id="99")
    with pytest.raises(InputFileError, match=r"export_bills.csv:\d+: eval_id_1 is '99' but the "
                                             "configuration lists document 11"):
        proxann.read_proxann(export, [cfg])
    cfg, export = _proxann_release(tmp_path, ranks=(1, 2, 3, 4, 5, 6, 8, 8))
    with pytest.raises(InputFileError, match=r"not a permutation of 1..8"):
        proxann.read_proxann(export, [cfg])


def test_hoyle_resamples_redrawn_from_the_bundle():
    """The authors' first 2 x 52 resampled correlations (analysis/correlation_results.csv, kept in
    the fixture) redrawn from the bundled answers by experiments/human_agreement.py: equal to
    the last bits of a float sum."""
    import importlib.util

    path = Path(__file__).resolve().parent.parent / "experiments" / "human_agreement.py"
    spec = importlib.util.spec_from_file_location("human_agreement", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    ours = module.hoyle_resampled(tl.load_judgments("hoyle2021"), iterations=2)
    theirs = REFERENCE["hoyle2021"]["correlation_results_head"]
    assert [(r["task"], r["dataset"], r["metric"], r["reference"]) for r in ours] == \
        [(r["task"], r["dataset"], r["metric"], r["reference"]) for r in theirs]
    for key in ("spear_rho", "pear_rho"):
        diff = np.abs(np.array([r[key] for r in ours]) - np.array([float(r[key]) for r in theirs]))
        assert diff.max() < 1e-15, key


def test_hoyle_long_form_csv(tmp_path):
    """all_data.csv: the authors' subsample, one row per answer; each row its own annotator."""
    f = tmp_path / "all_data.csv"
    f.write_text("dataset,model,topic_idx,human_idx,c_npmi_10_full,scores_raw,confidences_raw,task\n"
                 "nytimes,etm,0,0,0.1,3,1,ratings\nnytimes,etm,0,1,0.1,2,0,ratings\n"
                 "nytimes,etm,1,0,0.2,1,1,intrusions\n")
    tasks = hoyle.read_all_data_csv(f)
    assert tasks["rating"].topic_means()[0] == 2.5 and tasks["word-intrusion"].value.tolist() == [1.0]
    f.write_text("dataset,model,topic_idx,human_idx,scores_raw,confidences_raw,task\n"
                 "nytimes,etm,0,0,5,1,ratings\n")
    with pytest.raises(InputFileError, match=r"all_data.csv:2 \(topic 'nytimes/etm/0', annotator "
                                             r"'rating/00001'\): value 5 is off the scale 1..3"):
        hoyle.read_all_data_csv(f)
