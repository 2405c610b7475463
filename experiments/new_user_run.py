"""The new-user run of issue 33's measure (docs/new_user_run.md): a corpus not used before (Linux
manual pages: experiments/new_user_corpus.py), LDA trained with gensim, tomotopy and scikit-learn
(several K, restarts; tomotopy's HDP), and every command of the README and the guide that applies
run as a user would type it, the common slips of issue 33's point 8 included. Each command's
exit status, stdout, stderr and CPU seconds are kept; the HTML reports are screenshot in Debian's
chromium (Playwright) for a reader to look at. Figures the note cites are collected into
`summary.json`.

    nice -n 10 python experiments/new_user_run.py /tmp/newuser      # about 15 CPU-minutes
    python experiments/new_user_run.py /tmp/newuser --only shots   # screenshots again

A finished step (its record in OUT/steps/) is not run again: delete it to rerun that step.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SEED = 33
PY = sys.executable
STEPS: set[str] | None = None  # --steps a,b: run only these steps (the others are read if recorded)


def cpu_children() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run(out: Path, name: str, args: list[str], cwd: Path | None = None) -> dict:
    """`tealeaves ARGS` in OUT, its record kept in OUT/steps/NAME.json (reused if it exists)."""
    rec_path = out / "steps" / f"{name}.json"
    if rec_path.exists() or (STEPS is not None and name not in STEPS):
        return json.loads(rec_path.read_text()) if rec_path.exists() else {}
    c0, t0 = cpu_children(), time.time()
    p = subprocess.run([PY, "-m", "tealeaves", *args], cwd=cwd or out, capture_output=True, text=True,
                       env={**os.environ, "COLUMNS": "120"})
    rec = {"args": args, "rc": p.returncode, "stdout": p.stdout, "stderr": p.stderr,
           "cpu": round(cpu_children() - c0, 1), "wall": round(time.time() - t0, 1)}
    rec_path.parent.mkdir(parents=True, exist_ok=True)
    rec_path.write_text(json.dumps(rec, indent=1))
    print(f"{name}: rc {rec['rc']}, {rec['cpu']} CPU-s", flush=True)
    return rec


def train(out: Path) -> dict:
    """LDA by each library on corpus/train.txt; the models a user would save."""
    models = out / "models"
    done = models / "trained.json"
    if done.exists():
        return json.loads(done.read_text())
    models.mkdir(parents=True, exist_ok=True)
    docs = [ln.split() for ln in (out / "corpus" / "train.txt").read_text().splitlines()]
    info: dict = {}

    import tomotopy as tp
    for k, seed in [(10, 0), (20, 0), (20, 1), (20, 2), (50, 0)]:
        t0 = time.process_time()
        m = tp.LDAModel(k=k, alpha=0.1, eta=0.01, seed=seed)
        for d in docs:
            m.add_doc(d)
        m.train(300, workers=1)
        m.save(str(models / f"tomotopy-{k}-r{seed}.bin"))
        info[f"tomotopy-{k}-r{seed}"] = round(time.process_time() - t0, 1)
    t0 = time.process_time()
    h = tp.HDPModel(initial_k=20, seed=0)
    for d in docs:
        h.add_doc(d)
    h.train(300, workers=1)
    h.save(str(models / "tomotopy-hdp.bin"))
    info["tomotopy-hdp"] = {"cpu": round(time.process_time() - t0, 1), "live_k": h.live_k}

    from gensim.corpora import Dictionary
    from gensim.models import LdaModel
    dictionary = Dictionary(docs)
    bow = [dictionary.doc2bow(d) for d in docs]
    for k, seed in [(10, 0), (20, 0), (20, 1), (20, 2)]:
        t0 = time.process_time()
        m = LdaModel(bow, id2word=dictionary, num_topics=k, passes=5, iterations=100, random_state=seed,
                     alpha="auto", eval_every=None)
        m.save(str(models / f"gensim-{k}-r{seed}.gensim"))
        info[f"gensim-{k}-r{seed}"] = round(time.process_time() - t0, 1)

    import joblib
    from sklearn.decomposition import LatentDirichletAllocation
    from sklearn.feature_extraction.text import CountVectorizer
    vec = CountVectorizer(analyzer=str.split, lowercase=False)
    x = vec.fit_transform([" ".join(d) for d in docs])
    (models / "sklearn-vocab.txt").write_text("\n".join(vec.get_feature_names_out()) + "\n")
    for k, seed in [(20, 0)]:
        t0 = time.process_time()
        m = LatentDirichletAllocation(n_components=k, max_iter=20, learning_method="batch", random_state=seed)
        m.fit(x)
        joblib.dump(m, models / f"sklearn-{k}-r{seed}.joblib")
        info[f"sklearn-{k}-r{seed}"] = round(time.process_time() - t0, 1)
    done.write_text(json.dumps(info, indent=1))
    return info


def commands(out: Path) -> None:
    m = "models/"
    ho, tr = "corpus/heldout.txt", "corpus/train.txt"
    sk = ["--vocab", m + "sklearn-vocab.txt"]
    # the machine is shared (2 cores, several jobs): Ratio-AIS on the first 200 held-out paragraphs,
    # select on the first 2,000 training ones (its own split: 400 held out)
    lines = (out / "corpus" / "heldout.txt").read_text().splitlines(keepends=True)
    (out / "corpus" / "heldout-200.txt").write_text("".join(lines[:200]))
    lines = (out / "corpus" / "train.txt").read_text().splitlines(keepends=True)
    (out / "corpus" / "select.txt").write_text("".join(lines[:2000]))
    # the README's evaluate: a mix of models from three libraries (and an HDP), the report
    run(out, "evaluate", ["evaluate", m + "tomotopy-20-r0.bin", m + "gensim-20-r0.gensim",
                          m + "tomotopy-hdp.bin", m + "tomotopy-10-r0.bin", m + "tomotopy-50-r0.bin",
                          "--heldout", ho, "--reference", tr, "--allow-pickle", "--diagnostics",
                          "--json", "evaluate.json", "--csv", "evaluate.csv", "--report", "evaluate.html",
                          "--latex", "evaluate.tex", "--markdown", "evaluate.md", "--quiet"])
    # the scikit-learn model needs its words: converted once as the guide says
    run(out, "convert-sklearn", ["convert", m + "sklearn-20-r0.joblib", "sklearn-20.npz", "--model-format",
                                 "sklearn", "--allow-pickle", *sk])
    run(out, "evaluate-stability", ["evaluate", m + "gensim-20-r0.gensim", m + "gensim-20-r1.gensim",
                                    m + "gensim-20-r2.gensim", "sklearn-20.npz", "--heldout", ho,
                                    "--reference", tr, "--allow-pickle", "--stability", "--json",
                                    "evaluate-stability.json", "--report", "evaluate-stability.html",
                                    "--quiet"])
    # stability, by itself, for each library's restarts
    run(out, "stability-gensim", ["stability", *(f"{m}gensim-20-r{s}.gensim" for s in range(3)),
                                  "--allow-pickle", "--json", "stability-gensim.json"])
    run(out, "stability-tomotopy", ["stability", *(f"{m}tomotopy-20-r{s}.bin" for s in range(3)),
                                    "--json", "stability-tomotopy.json"])
    # coherence: default convention, the others, --topn
    for conv in ("default", "tealeaves", "palmetto"):
        extra = [] if conv == "default" else ["--convention", conv]
        run(out, f"coherence-{conv}", ["coherence", m + "tomotopy-20-r0.bin", tr, "--measure", "npmi,c_v",
                                       *extra, "--json", f"coherence-{conv}.json"])
    run(out, "coherence-gensim-topn20", ["coherence", m + "tomotopy-20-r0.bin", tr, "--measure", "npmi,c_v",
                                         "--convention", "gensim", "--topn", "20", "--json",
                                         "coherence-gensim-topn20.json"])
    # the junk flags need a reference of 300,000 tokens or more: every man-page paragraph (1 million)
    full = out / "corpus" / "all-pages.txt"
    if not full.exists():
        sys.path.insert(0, str(HERE))
        import corpora

        corpora.write(corpora.man_pages(), str(full))
    run(out, "coherence-full", ["coherence", m + "tomotopy-20-r0.bin", "corpus/all-pages.txt", "--measure",
                                "npmi", "--json", "coherence-full.json"])
    # held-out, compare, report
    run(out, "heldout", ["heldout", m + "tomotopy-20-r0.bin", ho, "--json", "heldout.json", "--quiet"])
    run(out, "compare", ["compare", m + "tomotopy-20-r0.bin", m + "tomotopy-20-r1.bin",
                         "corpus/heldout-200.txt", "--json",
                         "compare.json", "--quiet"])
    run(out, "report", ["report", "heldout.json", "coherence-default.json", "compare.json",
                        "stability-gensim.json", "-o", "report.html", "--latex", "report.tex",
                        "--markdown", "report.md"])
    run(out, "convert-gensim", ["convert", m + "gensim-20-r0.gensim", "gensim-20.npz", "--allow-pickle"])
    run(out, "diagnostics", ["diagnostics", m + "gensim-20-r0.gensim", tr,
                             "--allow-pickle", "--json", "diagnostics.json"])
    # select: a grid whose best is at its edge, then --extend
    sel = ["select", "corpus/select.txt", "--topics", "5,10,20", "--restarts", "2", "--iterations", "200",
           "--seed", str(SEED)]
    run(out, "select", [*sel, "--out", "runs/", "--json", "select.json", "--report", "select.html",
                        "--latex", "select.tex", "--markdown", "select.md", "--quiet"])
    run(out, "select-extend", [*sel, "--extend", "2", "--out", "runs/", "--json", "select-extend.json",
                               "--report", "select-extend.html", "--quiet"])
    # the common slips (issue 33, point 8)
    run(out, "slip-swapped-coherence", ["coherence", tr, m + "tomotopy-20-r0.bin"])
    lone = out / "lone"
    lone.mkdir(exist_ok=True)
    shutil.copy(out / "models" / "gensim-20-r0.gensim", lone / "gensim-20-r0.gensim")
    run(out, "slip-gensim-alone", ["heldout", "lone/gensim-20-r0.gensim", ho, "--allow-pickle"])
    run(out, "slip-result-as-model", ["heldout", "heldout.json", ho])
    run(out, "slip-convert-hdp", ["convert", m + "tomotopy-hdp.bin", "hdp.npz"])
    for cmd in ("evaluate", "select", "stability", "coherence", "convert", "heldout", "compare", "report"):
        run(out, f"help-{cmd}", [cmd, "--help"])


def _read(path: Path) -> dict:
    return json.loads(path.read_text()) if path.exists() else {}


def _first_line(text: str) -> str:
    return next((ln for ln in text.splitlines() if ln.strip()), "")


def summary(out: Path) -> dict:
    """The figures docs/new_user_run.md cites, from the run's outputs
    (experiments/results/new_user_run.json)."""
    steps = {p.stem: _read(p) for p in sorted((out / "steps").glob("*.json"))}
    ev = _read(out / "evaluate.json")
    estimated = ev.get("estimate") or {}
    res: dict = {"corpus": _read(out / "corpus" / "info.json"),
                 "training_cpu": _read(out / "models" / "trained.json"),
                 "cpu": {k: v.get("cpu") for k, v in steps.items()}}
    res["evaluate"] = {
        "rows": [{k: r.get(k) for k in ("model", "topics", "per_token", "per_token_sd")}
                 | {"vs_best": (r.get("vs_best") or {}).get("interval"),
                    "difference": (r.get("vs_best") or {}).get("difference"),
                    "npmi": (r.get("coherence") or {}).get("npmi")} for r in ev.get("rows", [])],
        "stages": {k: {"cpu": v.get("cpu"),
                       "estimate": estimated.get("stages", {}).get(k, estimated.get("total"))}
                   for k, v in (ev.get("stages") or {}).items() if isinstance(v, dict)},
        "estimate_total": (ev.get("estimate") or {}).get("total"),
        "flags_note": ev.get("topic_flags_note"),
        "npmi_below_cut": {m: sum(1 for x in v.get("npmi", []) if x is not None and x < 0.045)
                           for m, v in (ev.get("topic_coherence") or {}).items()},
        "diagnostics_flagged": {m: len(d.get("flagged") or [])
                                for m, d in (ev.get("diagnostics") or {}).items()}}
    res["stability"] = {}
    for lib in ("gensim", "tomotopy"):
        s = _read(out / f"stability-{lib}.json")
        if s:
            floor = s.get("floor")
            res["stability"][lib] = {
                "score": s.get("score"), "finding": s.get("finding"),
                "flagged": sorted(s.get("flagged") or {}),
                "per_model": s.get("per_model"), "recurring": len(s.get("recurring") or []),
                "low_pairs": [[p["a"], p["b"], sum(1 for x in p["similarity"] if x < floor)]
                              for p in s.get("pairs", []) if "similarity" in p]}
    res["coherence"] = {}
    for name in ("default", "tealeaves", "palmetto", "gensim-topn20"):
        c = _read(out / f"coherence-{name}.json")
        if c:
            res["coherence"][name] = {r["measure"]: {"mean": r["mean"],
                                                     "convention": r["fingerprint"].get("convention"),
                                                     "topn": r["fingerprint"].get("topn")}
                                      for r in c["results"]}
    full = _read(out / "coherence-full.json")
    if full:
        from tealeaves.diagnostics.flags import coherence_flags

        r = full["results"][0]
        res["junk_full_reference"] = {
            "tokens": r["fingerprint"]["reference"]["tokens"],
            "flagged": [{"topic": k, "flags": f, "npmi": r["topics"][k]["score"],
                         "words": " ".join(r["topics"][k]["words"][:6])}
                        for k, f in enumerate(coherence_flags(r)) if f]}
    h, c = _read(out / "heldout.json"), _read(out / "compare.json")
    res["heldout"] = {"per_token": h["results"][0].get("per_token")} if h.get("results") else {}
    res["compare"] = ({k: c.get(k) for k in ("per_token", "per_token_interval", "verdict")} if c else {})
    for name in ("select", "select-extend"):
        s = _read(out / f"{name}.json")
        if s:
            dec = s.get("decision") or {}
            res[name] = {"chosen": dec.get("k"), "comparisons": dec.get("comparisons"), "edge": s.get("edge"),
                         "grid": s.get("grid"),
                         "stability": [{"topics": g.get("topics"), "finding": g.get("finding"),
                                        "flagged": sorted(g.get("flagged") or {})}
                                       for g in s.get("stability") or []],
                         "stdout_head": steps.get(name, {}).get("stdout", "").splitlines()[:12]}
    res["slips"] = {k: {"rc": v.get("rc"), "stderr": _first_line(v.get("stderr", ""))}
                    for k, v in steps.items() if k.startswith("slip-")}
    res["help_mentions_issue"] = sorted(k for k, v in steps.items() if k.startswith("help-")
                                        and "issue" in v.get("stdout", "").lower())
    return res


def shots(out: Path) -> list[str]:
    """Every HTML report, screenshot whole in Debian's chromium at 1400 px wide."""
    sys.path.insert(0, str(HERE.parent / "tests"))
    from playwright.sync_api import sync_playwright
    from servers import CHROMIUM, CHROMIUM_ARGS

    made = []
    (out / "shots").mkdir(exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        page = browser.new_context(viewport={"width": 1400, "height": 900}).new_page()
        for html in sorted(out.glob("*.html")):
            page.goto(f"file://{html}")
            shot = out / "shots" / f"{html.stem}.png"
            page.screenshot(path=shot, full_page=True)
            made.append(f"{shot.name}: {page.evaluate('document.body.scrollHeight')} px tall")
        browser.close()
    return made


if __name__ == "__main__":
    out = Path(sys.argv[1]).resolve()
    only = sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else None
    if "--steps" in sys.argv:
        STEPS = set(sys.argv[sys.argv.index("--steps") + 1].split(","))
    if only in (None, "corpus") and not (out / "corpus" / "train.txt").exists():
        built = subprocess.run([PY, str(HERE / "new_user_corpus.py"), str(out / "corpus")], check=True,
                               capture_output=True, text=True).stdout
        (out / "corpus" / "info.json").write_text(built)
    if only in (None, "train"):
        print(json.dumps(train(out)))
    if only in (None, "commands"):
        commands(out)
    if only in (None, "shots"):
        print("\n".join(shots(out)))
    if only in (None, "summary"):
        target = HERE / "results" / "new_user_run.json"
        target.write_text(json.dumps(summary(out), indent=1, ensure_ascii=False) + "\n")
        print(f"-> {target}")
