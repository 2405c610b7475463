"""Reading tea leaves (Chang et al. 2009): word and topic intrusion tasks for human annotators,
their scoring (model precision, topic log odds), the predictive metrics of section 4.2, and an
automated proxy for word intrusion (Lau, Newman & Baldwin 2014)."""

from .auto import AutoResult, auto
from .plots import plot_scores
from .predictive import PredictiveResult, infer_theta, predictive
from .scoring import IntrusionScores, check_key, fleiss_kappa, read_key, read_responses, score
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
    "read_responses",
    "infer_theta",
    "predictive",
    "PredictiveResult",
    "auto",
    "AutoResult",
    "plot_scores",
]
