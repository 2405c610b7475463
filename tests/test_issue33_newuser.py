"""What the new-user run of issue 33's measure (docs/new_user_run.md, a corpus of Linux manual
pages) found wrong in what a reader takes away, each checked where the reader sees it (the
terminal's summary, the JSON, the report in Debian's chromium)."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from servers import CHROMIUM, CHROMIUM_ARGS

import tealeaves as tl
from tealeaves.diagnostics.flags import MIN_REFERENCE_TOKENS
from tealeaves.report import render


def _browser(path, script):
    from playwright.sync_api import sync_playwright

    if not os.path.exists(CHROMIUM):
        pytest.skip("Debian's chromium is not installed (.ci/run installs it)")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        page = browser.new_context(viewport={"width": 1400, "height": 900}).new_page()
        page.goto(f"file://{path}")
        out = page.evaluate(script)
        browser.close()
    return out


def test_evaluate_says_when_the_coherence_flags_were_not_computed(tmp_path):
    """A reference under MIN_REFERENCE_TOKENS gets no coherence flags (incoherent, never-together,
    rare-words). The run's per-topic tables showed "flags: none" and "0 of 20 topics flagged" beside
    NPMI values far below the incoherent cut, with nothing anywhere saying the flags were not
    computed: now the summary, the JSON and every flags cell of the report say so."""
    model = tl.synthetic.random_model(5, 60, beta=0.1, seed=1, name="m5")
    rng = np.random.default_rng(0)
    ref, held = tmp_path / "ref.txt", tmp_path / "held.txt"
    ref.write_text("".join(" ".join(rng.choice(model.vocab, 30)) + "\n" for _ in range(100)))
    held.write_text("".join(" ".join(rng.choice(model.vocab, 10)) + "\n" for _ in range(3)))
    res = tl.evaluate([model], heldout=str(held), reference=str(ref), coherence=("npmi",), particles=5,
                      runs=1)
    why = f"the reference has 3,000 tokens, fewer than the {MIN_REFERENCE_TOKENS:,} they need"
    assert f"junk-topic flags: no coherence flags: {why}" in res.summary()
    doc = json.loads(json.dumps(res.to_dict()))
    assert why in doc["topic_flags_note"]["m5"]
    path = tmp_path / "r.html"
    path.write_text(render([doc]), encoding="utf-8")
    seen = _browser(path, """() => {
      const t = [...document.querySelectorAll('table')]
                  .find(t => t.tHead.textContent.includes('top words'));
      const col = [...t.tHead.rows[0].cells].findIndex(c => c.textContent.startsWith('flags'));
      return {caption: t.caption.innerText,
              flags: [...t.tBodies[0].rows].map(r => r.cells[col].innerText)}; }""")
    assert seen["flags"] == ["none*"] * 5, seen
    assert "*no coherence flags: " + why in seen["caption"], seen


def test_fold_controls_sit_under_the_table_they_unfold(tmp_path):
    """Two long per-topic tables one after the other: each "show all N rows" sits under its own
    table, nearer to it than to the next table's caption (above its table it read as the previous
    table's: "show all 159 rows" under a 20-topic table)."""
    words = {}
    for name, k in (("twenty", 30), ("many", 159)):
        words[name] = [[f"{name}{t}a", f"{name}{t}b"] for t in range(k)]
    rows = [{"model": n, "topics": len(w), "per_token": -7.0, "per_token_sd": 0.001, "perplexity": 1096.6,
             "coherence": {"npmi": 0.05}, "diversity": 0.8, "exclusivity": 9.0, "predictive_rank": 100.0,
             "auto_model_precision": 0.5} for n, w in words.items()]
    docs = [{"task": "evaluate", "rows": rows, "groups": [["twenty"], ["many"]], "comparisons": [],
             "params": {"coherence": ["npmi"]}, "topic_words": words,
             "topic_coherence": {n: {"npmi": [0.01 * (t % 7) for t in range(len(w))]}
                                 for n, w in words.items()}}]
    path = tmp_path / "r.html"
    path.write_text(render(docs), encoding="utf-8")
    got = _browser(path, """() => [...document.querySelectorAll('.folded')].map(f => {
      const t = f.querySelector('table'), c = f.querySelector('.controls');
      const next = f.nextElementSibling && f.nextElementSibling.querySelector('caption');
      return {caption: t.caption.innerText, controls: c.innerText,
              tableBottom: t.getBoundingClientRect().bottom, top: c.getBoundingClientRect().top,
              bottom: c.getBoundingClientRect().bottom,
              next: next ? next.getBoundingClientRect().top : null}; })""")
    shown = [g["controls"].strip().split(" (")[0] for g in got]
    assert shown == ["show all 30 rows", "show all 159 rows"], got
    for g in got:
        assert g["top"] >= g["tableBottom"], g  # under its own table
        if g["next"] is not None:
            assert g["next"] - g["bottom"] > g["top"] - g["tableBottom"], g  # nearer its own table


def _sims(low: dict[tuple[int, int], int], k: int = 20) -> dict[tuple[int, int], np.ndarray]:
    """Matched-topic similarities of restarts with `low[a, b]` topics below the 0.35 floor."""
    out = {}
    for (a, b), n in low.items():
        out[a, b] = out[b, a] = np.array([0.2] * n + [0.6] * (k - n))
    return out


def test_three_restarts_of_an_unstable_model_single_none_out():
    """Tomotopy K = 20 restarts of the man pages had 4, 5 and 7 topics without a counterpart pair by
    pair: no two agree (unstable), yet the third was flagged STUCK because its two pairs both
    exceeded the one other pair, by one topic (the margin rule, margin 0, among three restarts).
    Among four restarts the margin still singles out one far from all the others."""
    from tealeaves.diagnostics.stability import assess

    names = ["r0", "r1", "r2"]
    three = assess(names, _sims({(0, 1): 4, (0, 2): 5, (1, 2): 7}), 0.35, 0.1, 0.0)
    assert three["finding"] == "unstable" and three["stuck"] == {} and three["apart"] == [], three
    low = {(0, 1): 3, (0, 2): 3, (1, 2): 3, (0, 3): 10, (1, 3): 11, (2, 3): 10}
    four = assess([*names, "early"], _sims(low), 0.35, 0.1, 0.0)
    assert four["finding"] == "unstable" and list(four["stuck"]) == ["early"], four


@pytest.mark.parametrize("docs", [100, 3000])
def test_a_coherence_report_shows_the_flags_the_terminal_shows(tmp_path, docs):
    """`tealeaves coherence` prints each topic's junk flags (or why there are none); the report of its
    JSON showed neither. Words drawn independently co-occur only by chance: over a reference large
    enough for the flags every topic is incoherent (NPMI near 0, below the cut); over a small one the
    report says the flags were not computed."""
    from clirun import run_cli

    model = tl.synthetic.random_model(4, 40, beta=0.1, seed=2, name="m4")
    tl.save_model(model, tmp_path / "m.npz")
    rng = np.random.default_rng(1)
    ref = tmp_path / "ref.txt"
    ref.write_text("".join(" ".join(rng.choice(model.vocab, 101)) + "\n" for _ in range(docs)))
    code, _, err = run_cli(["coherence", tmp_path / "m.npz", ref, "--measure", "npmi",
                            "--json", tmp_path / "c.json"])
    assert code == 0, err
    path = tmp_path / "r.html"
    path.write_text(render([json.loads((tmp_path / "c.json").read_text())]), encoding="utf-8")
    seen = _browser(path, """() => {
      const t = [...document.querySelectorAll('table')].find(t => t.tHead.textContent.includes('flags'));
      if (!t) return null;
      const col = [...t.tHead.rows[0].cells].findIndex(c => c.textContent.startsWith('flags'));
      return {caption: t.caption ? t.caption.innerText : '',
              flags: [...t.tBodies[0].rows].map(r => r.cells[col].innerText)}; }""")
    assert seen is not None, "no flags column"
    if docs * 101 >= MIN_REFERENCE_TOKENS:
        assert seen["flags"] == ["incoherent"] * 4 and seen["caption"] == "", seen
    else:
        assert seen["flags"] == ["none*"] * 4 and "fewer than the 300,000 they need" in seen["caption"], seen


def test_diagnostics_of_too_few_tokens_say_the_coherence_flags_are_missing(tmp_path):
    """select's chosen model (diagnostics on its 400 held-out paragraphs, 15,471 tokens) showed "flags:
    none" on every topic beside NPMI as low as -0.36: the diagnostics had no coherence flags (fewer
    tokens than they need) and the per-topic table did not say so. Every per-topic table built from
    such diagnostics (select's chosen model, `tealeaves diagnostics`, evaluate --diagnostics) marks
    its flags * and says why."""
    from tealeaves.diagnostics import diagnostics

    model = tl.synthetic.random_model(4, 40, beta=0.1, seed=2, name="m4")
    rng = np.random.default_rng(3)
    texts = [list(rng.choice(model.vocab, 30)) for _ in range(20)]
    docs = tl.Corpus.from_tokens(texts, list(model.vocab), "d")
    doc = json.loads(json.dumps(diagnostics(model, docs, seed=0).to_dict()))
    path = tmp_path / "r.html"
    path.write_text(render([doc]), encoding="utf-8")
    seen = _browser(path, """() => {
      const t = [...document.querySelectorAll('table')].find(t => t.tHead.textContent.includes('flags'));
      const col = [...t.tHead.rows[0].cells].findIndex(c => c.textContent.startsWith('flags'));
      return {caption: t.caption.innerText,
              flags: [...t.tBodies[0].rows].map(r => r.cells[col].innerText)}; }""")
    assert all(f.endswith("*") for f in seen["flags"]) and len(seen["flags"]) == 4, seen
    assert "the documents diagnosed have 600 tokens, fewer than the 300,000" in seen["caption"], seen


def test_the_diagnostics_command_says_when_the_coherence_flags_were_not_computed(tmp_path):
    """`tealeaves diagnostics` on the man pages' 205,250 training tokens listed the thresholds of
    incoherent, never-together and rare-words under the table, though none of them was computed."""
    from clirun import run_cli

    model = tl.synthetic.random_model(4, 40, beta=0.1, seed=2, name="m4")
    tl.save_model(model, tmp_path / "m.npz")
    rng = np.random.default_rng(4)
    (tmp_path / "d.txt").write_text("".join(" ".join(rng.choice(model.vocab, 30)) + "\n" for _ in range(20)))
    code, out, err = run_cli(["diagnostics", tmp_path / "m.npz", tmp_path / "d.txt", "--burn-in", "2",
                              "--samples", "2"])
    assert code == 0, err
    assert (f"no coherence flags (incoherent, never-together, rare-words): not computed: 600 tokens, fewer "
            f"than the {MIN_REFERENCE_TOKENS:,} the coherence flags need") in out, out


def test_one_model_without_a_likelihood_has_none():
    """'tomotopy-hdp.bin have none' in the run's summary: one model takes the singular."""
    from tealeaves.evaluate.result import EvaluationResult

    rows = [{"model": "lda", "not_applicable": {}},
            {"model": "hdp", "not_applicable": {"heldout": "no prior"}},
            {"model": "lda2", "not_applicable": {}}]
    def result():
        return EvaluationResult(rows=rows, comparisons=[], groups=None, scoring={}, params={}, seconds=0.0)

    lines = result().meaningful()
    assert "(lda, lda2); hdp has none" in lines[0], lines
    rows.append({"model": "hdp2", "not_applicable": {"heldout": "no prior"}})
    assert "hdp, hdp2 have none" in result().meaningful()[0]


def test_an_estimator_sd_too_small_for_its_decimals_is_not_shown_as_zero():
    """The run's 'estimator sd' column read 0.0000 for sds of 2.8e-05 to 7.0e-05 nats per token:
    nonzero, so shown with two significant digits (terminal, report, LaTeX and Markdown share it)."""
    from tealeaves.output.numbers import metric

    assert metric("per_token_sd", 3.898860934846894e-05) == "3.9e-05"
    assert metric("per_token_sd", 0.0) == "0.0000" and metric("per_token_sd", 0.00123) == "0.0012"
    assert metric("per_token_sd", None, "—") == "—"


def test_a_caption_says_only_what_every_format_shows():
    """The per-topic table's caption goes to HTML, LaTeX and Markdown alike: it names how many
    topics are flagged, not "shaded" (before: LaTeX and Markdown, which have no shading, said so)."""
    from tealeaves.report import pertopic
    from tealeaves.report.tables import latex, markdown

    t = pertopic.table("m", [["a", "b"], ["c", "d"]], {"npmi": [0.2, -0.3]},
                       flags=[[], ["incoherent"]])
    assert "1 of 2 topics flagged as junk" in t.caption and "shaded" not in t.caption
    for text in (latex(t), markdown(t)):
        assert "flagged as junk" in text and "shaded" not in text
