"""Reading tea leaves (Chang et al. 2009): word and topic intrusion tasks for human annotators,
and their scoring (model precision, topic log odds)."""

from .scoring import IntrusionScores, fleiss_kappa, read_responses, score
from .tasks import Task, topic_tasks, word_tasks, write_tasks

__all__ = ["Task", "word_tasks", "topic_tasks", "write_tasks", "score", "IntrusionScores",
           "fleiss_kappa", "read_responses"]
