"""LLM judges on any OpenAI-compatible endpoint (vLLM, llama.cpp's server, Ollama, LM Studio, a
hosted API): word and topic intrusion (Chang et al. 2009), 3-point topic ratings (Hoyle et al.
2021) and ProxAnn's label, fit and rank steps (Hoyle et al. 2025), answered by a language model,
with every request cached, its cost estimated first and its failures counted.

Modules: endpoint.py (the address, consent, requests with timeouts and back-off), cache.py (SQLite),
prompts.py (the task texts, versioned), answers.py (strict parsing; distributions from
log-probabilities or samples), run.py (queries to requests: estimate, concurrency, progress,
fallbacks), judge.py (Judge and its tasks), result.py (JudgeResult), qualify.py (a judge's agreement
with people on the bundled studies' own topics, before it is trusted)."""

from .endpoint import Endpoint, EndpointError, is_loopback
from .judge import APIS, METHODS, Judge, default_cache
from .prompts import TEXTS, TEXTS_VERSION
from .qualify import qualify, saved_qualification
from .result import JudgeResult

__all__ = ["Judge", "JudgeResult", "Endpoint", "EndpointError", "is_loopback", "default_cache", "METHODS",
           "APIS", "TEXTS", "TEXTS_VERSION", "qualify", "saved_qualification"]
