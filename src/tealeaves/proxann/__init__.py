"""ProxAnn (Hoyle, Calvo-Bartolomé, Boyd-Graber & Resnik, "ProxAnn: Use-Oriented Evaluations of
Topic Models and Document Clustering", ACL 2025): people name the category a topic's top words and
exemplar documents share, rate how well other documents fit it and rank them; the scores say how
well that order follows the model's document-topic proportions. Tasks (`tasks.py`), what the app
accepts (`taskset.py`), the answers' long format (`responses.py`) and the scores (`scoring.py`)."""

from .responses import EXPORT_FIELDS, read_responses, rows_from_steps
from .scoring import ProxAnnScores, kendall, score_proxann, spearman, summary_lines
from .tasks import ProxAnnTask, proxann_tasks, write_proxann_tasks
from .taskset import check_key, read_key

__all__ = ["ProxAnnTask", "proxann_tasks", "write_proxann_tasks", "read_key", "check_key", "EXPORT_FIELDS",
           "read_responses", "rows_from_steps", "score_proxann", "ProxAnnScores", "kendall", "spearman",
           "summary_lines"]
