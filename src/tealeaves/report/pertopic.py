"""The per-topic table of a model (which of its topics to trust): top words, one coherence column
(named with its convention, top-n, window and reference), the junk-topic flags, stability across
restarts (`stability` results, CONTRACT3), and on request every other coherence measure and the
per-topic diagnostics (`tealeaves diagnostics`, `evaluate --diagnostics`). The worst topics come
first: those with junk flags (shaded), then those with a caution, then by the coherence column,
lowest first; a long table shows its first `FOLD` rows until the reader asks for all (no script
needed); every column sorts on a click."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..output import numbers
from ..output.display import words_text
from ..util.numbers import finite_float
from .tables import Table

WORDS = 10  # top words shown per topic
FOLD = 25  # rows shown before "show all"
JUDGE_HEADS = {"word-intrusion": ("judge P(intruder)", "judge_model_precision"),
               "ratings": ("judge rating", "judge_rating")}  # task -> (heading, the row key whose digits it takes)
MEASURE_NAMES = {"umass": "UMass", "uci": "UCI", "npmi": "NPMI", "c_v": "C_V", "c_p": "C_P", "c_a": "C_A"}
PRIMARY = ("npmi", "c_v", "uci", "umass", "c_p", "c_a")  # the coherence column shown by default, first present


def _score(v: Any) -> str:
    return numbers.score(v, "–")


def stability_of(groups: Any, model: str) -> list[Any] | None:
    """`model`'s per-topic stability from a list of stability results (None if none covers it)."""
    for g in groups if isinstance(groups, list) else []:
        per = g.get("per_topic") if isinstance(g, dict) else None
        if isinstance(per, dict) and isinstance(per.get(model), list):
            return per[model]
    return None


def heading(measure: str, fingerprint: dict[str, Any] | None = None) -> str:
    """A coherence column's heading: the measure, and when known its convention, top-n, window and
    reference ("NPMI (tealeaves convention, top 10, window 10, reference train.txt)")."""
    name = MEASURE_NAMES.get(measure, measure)
    fp = fingerprint if isinstance(fingerprint, dict) else {}
    parts = []
    if fp.get("convention"):
        parts.append(f"{fp['convention']} convention")
    if fp.get("topn"):
        parts.append(f"top {fp['topn']}")
    if fp.get("window"):
        parts.append(f"window {fp['window']}")
    elif measure == "umass":
        parts.append("documents")
    ref = (fp.get("reference") or {}).get("name") if isinstance(fp.get("reference"), dict) else None
    if ref:
        parts.append(f"reference {ref}")
    return f"{name} ({', '.join(parts)})" if parts else f"{name} coherence"


def table(model: str, words: Sequence[Sequence[str]] | None = None,
          coherence: dict[str, Sequence[Any]] | None = None, diagnostics: dict[str, Any] | None = None,
          stability: Sequence[Any] | None = None, flags: Sequence[Sequence[str]] | None = None,
          fingerprints: dict[str, Any] | None = None,
          judge: dict[str, Sequence[Any]] | None = None, flags_note: str | None = None) -> Table | None:
    """One row per topic of `model` from whatever is given (`flags`: the coherence flags of each
    topic, `fingerprints`: each coherence measure's, for the headings, `judge`: an LLM judge's
    per-topic scores by task, evaluate's `topic_judge`; `flags_note`: why the coherence flags were
    not computed, marked * on every flags cell and said in the caption); None when nothing per topic
    is."""
    from ..diagnostics import SHOWN
    from ..diagnostics.flags import CAUTION, JUNK

    diag_rows = (diagnostics or {}).get("topics") or []
    held = ((diagnostics or {}).get("params") or {}).get("npmi")
    if flags_note is None and flags is None and isinstance(held, str):  # too few tokens diagnosed
        flags_note = ("no coherence flags (incoherent, never-together, rare-words): the documents diagnosed "
                      f"have {held.removeprefix('not computed: ')}")
    coherence = coherence or {}
    judge = {t: v for t, v in (judge or {}).items() if t in JUDGE_HEADS and isinstance(v, list)}
    sizes = [len(x) for x in (words or [], diag_rows, stability or [], flags or [], *coherence.values(),
                              *judge.values())]
    k = max(sizes, default=0)
    if k == 0:
        return None
    primary = next((m for m in PRIMARY if m in coherence), next(iter(coherence), None))
    others = [m for m in coherence if m != primary]
    shown = [(n, h) for n, h in SHOWN if any(n in r for r in diag_rows)]
    head = ["topic", "top words"]
    head += [heading(primary, (fingerprints or {}).get(primary))] if primary else []
    flagged = bool(diag_rows) or flags is not None or bool(flags_note)
    head += ["flags"] if flagged else []
    head += ["stability"] if stability is not None else []
    head += [JUDGE_HEADS[j][0] for j in judge]
    extra_from = len(head)
    head += [heading(m, (fingerprints or {}).get(m)) for m in others]
    head += [h for _, h in shown]

    def cell(values: Sequence[Any], t: int) -> Any:
        return values[t] if t < len(values) else None

    rows, marks, keys = [], [], []
    for t in range(k):
        d = diag_rows[t] if t < len(diag_rows) and isinstance(diag_rows[t], dict) else {}
        w = list(words[t]) if words and t < len(words) else str(d.get("words", "")).split()
        raised = list(dict.fromkeys([*str(d.get("flags") or "").split(), *(cell(flags or [], t) or [])]))
        row = [str(t), words_text(w[:WORDS])]
        if primary:
            row.append(numbers.metric("coherence", cell(coherence[primary], t), "–"))
        if flagged:
            row.append((", ".join(raised) or "none") + ("*" if flags_note else ""))
        if stability is not None:
            row.append(numbers.metric("stability", cell(stability, t), "–"))
        row += [numbers.metric(JUDGE_HEADS[j][1], cell(v, t), "–") for j, v in judge.items()]
        row += [numbers.metric("coherence", cell(coherence[m], t), "–") for m in others]
        row += [_score(d.get(n)) for n, _ in shown]
        junk = sum(f in JUNK for f in raised)
        caution = sum(f in CAUTION for f in raised)
        value = finite_float(cell(coherence[primary], t)) if primary else None
        rows.append(row)
        marks.append("junk" if junk else "caution" if caution else "")
        keys.append((-junk, -caution, math.inf if value is None else value, t))
    order = sorted(range(k), key=lambda t: keys[t])
    parts = ["top words"] + ([f"{MEASURE_NAMES.get(primary, primary)} coherence"] if primary else [])
    parts += ["junk-topic flags"] if flagged else []
    parts += ["stability across restarts"] if stability is not None else []
    parts += ["an LLM judge"] if judge else []
    n_junk = sum(m == "junk" for m in marks)
    caption = (f"Per topic, {model}: {', '.join(parts)}; worst first"
               + (f" ({n_junk} of {k} topics flagged as junk" if flagged else "")
               + (f"; *{flags_note}" if flags_note else "") + (")" if flagged else ""))
    return Table(head, [rows[t] for t in order], caption=caption, sortable=True,
                 row_classes=[marks[t] for t in order], fold=FOLD if k > FOLD else 0,
                 extra_columns=list(range(extra_from, len(head))))
