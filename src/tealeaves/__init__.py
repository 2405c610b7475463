"""tealeaves: trustworthy numbers for topic models.

    import tealeaves as tl
    model = tl.load_model("model.npz")
    docs = tl.read_corpus("heldout.txt", vocab=model.vocab)
    res = tl.heldout(model, docs, method="left-to-right", particles=20, runs=10)

Names are imported on first use (PEP 562), so `import tealeaves` loads neither numpy, scipy nor
numba; `tl.heldout` loads what held-out estimation needs, and so on.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# public name -> the module that defines it
_NAMES = {
    "bcubed": ".clustering",
    "CoherenceResult": ".coherence", "coherence": ".coherence", "diversity": ".coherence",
    "comparable": ".coherence",
    "irbo": ".coherence.rbo", "we_irbo": ".coherence.embeddings",
    "embedding_coherence": ".coherence.embeddings",
    "read_vectors": ".coherence.embeddings", "train_vectors": ".coherence.embeddings",
    "EmbeddingResult": ".coherence.embeddings",
    "build_index": ".coherence.index",
    "CompareResult": ".compare", "CurveResult": ".compare", "compare": ".compare",
    "training_curve": ".compare",
    "DiagnosticsResult": ".diagnostics", "diagnostics": ".diagnostics",
    "Corpus": ".corpus", "read_corpus": ".datasets", "save_corpus": ".corpus",
    "load_judgments": ".datasets",
    "CSLResult": ".csl", "csl": ".csl",
    "InputFileError": ".errors", "InvalidCorpusError": ".errors", "InvalidModelError": ".errors",
    "MethodError": ".errors", "TealeavesError": ".errors", "TooLargeError": ".errors",
    "EvaluationResult": ".evaluate", "evaluate": ".evaluate", "EvaluateOptions": ".evaluate",
    "HeldoutResult": ".heldout", "completion": ".heldout", "heldout": ".heldout",
    "method_names": ".heldout",
    "load_model": ".datasets", "load_topics": ".datasets", "save_model": ".io",
    "Topics": ".topics",
    "TopicModel": ".model",
    "SelectionResult": ".select", "select": ".select",
    "StabilityResult": ".diagnostics.stability", "stability": ".diagnostics.stability",
    "plan_intrusion": ".intrusion.plan", "IntrusionPlan": ".intrusion.plan",
    "krippendorff_alpha": ".intrusion.agreement",
    "Judge": ".judge", "JudgeResult": ".judge",
}
_SUBMODULES = ("datasets", "intrusion", "judgments", "metaeval", "proxann", "synthetic")

__all__ = [
    "CompareResult", "CurveResult", "compare", "training_curve", "CSLResult", "csl",
    "CoherenceResult", "coherence", "comparable", "diversity", "bcubed", "EvaluationResult", "evaluate",
    "EvaluateOptions",
    "build_index",
    "SelectionResult", "select", "DiagnosticsResult", "diagnostics",
    "Corpus", "HeldoutResult", "InputFileError", "InvalidCorpusError", "InvalidModelError",
    "MethodError", "TealeavesError", "TooLargeError", "TopicModel", "completion", "heldout",
    "datasets", "intrusion", "judgments", "metaeval", "proxann", "load_judgments", "load_model",
    "load_topics",
    "Topics", "method_names", "read_corpus",
    "save_corpus", "save_model",
    "synthetic", "irbo", "we_irbo", "embedding_coherence", "read_vectors", "train_vectors",
    "EmbeddingResult",
    "StabilityResult", "stability",
    "EmbeddingResult", "plan_intrusion", "IntrusionPlan", "krippendorff_alpha", "Judge", "JudgeResult",
    "__version__",
]


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        value: Any = importlib.import_module(f".{name}", __name__)
    elif name in _NAMES:
        value = getattr(importlib.import_module(_NAMES[name], __name__), name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


class _Package(types.ModuleType):
    """Importing a submodule sets it as an attribute of its package; where a public function has
    its submodule's name (`tl.heldout`, `tl.coherence`, `tl.compare`, `tl.csl`, `tl.evaluate`,
    `tl.select`), keep the function, as the eager imports used to."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _NAMES and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package

if TYPE_CHECKING:  # what type checkers and editors see
    from . import datasets, intrusion, judgments, metaeval, proxann, synthetic
    from .clustering import bcubed
    from .coherence import CoherenceResult, coherence, diversity
    from .coherence.embeddings import (
        EmbeddingResult,
        embedding_coherence,
        read_vectors,
        train_vectors,
        we_irbo,
    )
    from .coherence.index import build_index
    from .coherence.rbo import irbo
    from .compare import CompareResult, CurveResult, compare, training_curve
    from .corpus import Corpus, save_corpus
    from .csl import CSLResult, csl
    from .datasets import load_judgments, load_model, load_topics, read_corpus
    from .diagnostics.stability import StabilityResult, stability
    from .errors import (
        InputFileError,
        InvalidCorpusError,
        InvalidModelError,
        MethodError,
        TealeavesError,
        TooLargeError,
    )
    from .evaluate import EvaluateOptions, EvaluationResult, evaluate
    from .heldout import HeldoutResult, completion, heldout, method_names
    from .intrusion.agreement import krippendorff_alpha
    from .intrusion.plan import IntrusionPlan, plan_intrusion
    from .io import save_model
    from .model import TopicModel
    from .select import SelectionResult, select
    from .topics import Topics
