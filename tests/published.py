"""Published figures the tests check tealeaves against, typed once from the papers."""

from __future__ import annotations

# ProxAnn (Hoyle et al., ACL 2025), Table 3, Bills: the advantage probability of each LLM at the
# document level (fit, rank) and the topic level (fit, rank), epsilon 0.1, pseudo-annotators by
# dataset; "*": the LLM wins against most (pseudo-)annotators (winning rate above 0.5, t-test)
PROXANN_TABLE3 = {
    "gpt-4o-2024-08-06": ("0.65*", "0.71*", "0.77*", "0.75*"),
    "Meta-Llama-3.1-8B-Instruct": ("0.30", "0.53", "0.14", "0.44"),
    "llama-3.3-70b-instruct-awq": ("0.66*", "0.67*", "0.70*", "0.60"),
    "Qwen3-8B": ("0.66*", "0.57", "0.80*", "0.43"),
    "Qwen3-32B": ("0.67*", "0.68*", "0.74*", "0.70*"),
    "Qwen2.5-72B-Instruct-AWQ": ("0.61*", "0.71*", "0.78*", "0.65"),
}
