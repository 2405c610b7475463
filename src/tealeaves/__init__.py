"""tealeaves: trustworthy numbers for topic models.

    import tealeaves as tl
    model = tl.load_model("model.npz")
    docs = tl.read_corpus("heldout.txt", vocab=model.vocab)
    res = tl.heldout(model, docs, method="left-to-right", particles=20, runs=10)
"""

from . import datasets, intrusion, synthetic
from .clustering import bcubed
from .coherence import CoherenceResult, coherence, diversity
from .compare import CompareResult, CurveResult, compare, training_curve
from .corpus import Corpus, read_corpus, save_corpus
from .csl import CSLResult, csl
from .errors import (
    InputFileError,
    InvalidCorpusError,
    InvalidModelError,
    MethodError,
    TealeavesError,
    TooLargeError,
)
from .evaluate import EvaluationResult, evaluate
from .heldout import HeldoutResult, completion, heldout, method_names
from .io import load_model, save_model
from .model import TopicModel
from .select import SelectionResult, select

__version__ = "0.1.0"

__all__ = [
    "CompareResult", "CurveResult", "compare", "training_curve", "CSLResult", "csl",
    "CoherenceResult", "coherence", "diversity", "bcubed", "EvaluationResult", "evaluate",
    "SelectionResult", "select",
    "Corpus", "HeldoutResult", "InputFileError", "InvalidCorpusError", "InvalidModelError",
    "MethodError", "TealeavesError", "TooLargeError", "TopicModel", "completion", "heldout",
    "datasets", "intrusion", "load_model", "method_names", "read_corpus", "save_corpus", "save_model",
    "synthetic",
    "__version__",
]
