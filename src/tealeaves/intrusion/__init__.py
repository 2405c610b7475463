"""Reading tea leaves (Chang et al. 2009): word and topic intrusion tasks for human annotators,
their scoring (model precision, topic log odds), agreement between annotators, exact tests and
a sample-size planner, the predictive metrics of section 4.2, and an
automated proxy for word intrusion (Lau, Newman & Baldwin 2014)."""

from .agreement import agreement, fleiss_kappa, krippendorff_alpha
from .auto import AutoResult, auto
from .exact import chance_test, permutation_test
from .plan import IntrusionPlan, plan_intrusion
from .plots import plot_scores
from .predictive import PredictiveResult, infer_theta, predictive
from .scoring import (
    IntrusionScores,
    check_key,
    compare_models,
    read_key,
    read_responses,
    score,
    statistics_lines,
)
from .tasks import (
    Task,
    key_secret,
    low_words,
    most_repeated_guess,
    new_secret,
    read_tasks,
    secret_path,
    topic_tasks,
    word_tasks,
    write_tasks,
)

__all__ = [
    "Task",
    "word_tasks",
    "low_words",
    "most_repeated_guess",
    "topic_tasks",
    "write_tasks",
    "new_secret",
    "key_secret",
    "secret_path",
    "read_tasks",
    "read_key",
    "score",
    "IntrusionScores",
    "check_key",
    "fleiss_kappa",
    "krippendorff_alpha",
    "agreement",
    "chance_test",
    "permutation_test",
    "compare_models",
    "statistics_lines",
    "plan_intrusion",
    "IntrusionPlan",
    "read_responses",
    "infer_theta",
    "predictive",
    "PredictiveResult",
    "auto",
    "AutoResult",
    "plot_scores",
]
