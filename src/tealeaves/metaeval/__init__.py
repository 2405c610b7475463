"""Meta-evaluation: how well automated scores of topics agree with people.

    from tealeaves.metaeval import agreement, alt_test, judge_scores, leave_one_out
    study = tl.load_judgments("hoyle2021")
    res = agreement({"npmi": study.metric("c_npmi_10_full")}, study["rating"])

`agreement` (agreement.py): correlations of per-topic scores with the people's per-topic score,
two-stage bootstrap intervals, the split-half ceiling, paired comparisons, per corpus and pooled;
`judge_scores`, `leave_one_out`, `document_agreement` (ranking.py): ProxAnn's topic quality,
its human baseline and document-level agreement; `alt_test` (alttest.py): may a judge replace a
person (Calderon et al. 2025).
"""

from __future__ import annotations

from .agreement import AgreementResult, agreement, people_side
from .alttest import alt_test, benjamini_yekutieli
from .ranking import document_agreement, judge_scores, leave_one_out

__all__ = ["AgreementResult", "agreement", "people_side", "alt_test", "benjamini_yekutieli",
           "document_agreement", "judge_scores", "leave_one_out"]
