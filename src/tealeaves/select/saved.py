"""What a `select --out` folder keeps of each model, read back only when it is what select wrote, in
its own slot: `read_evaluation` (evals/K{k}-r{r}.json) and `read_model` (models/K{k}-r{r}.npz).

Every value of a saved evaluation goes through the strict value parsers of `files.records`
(whole numbers, finite numbers, strings) and is checked against the slot it sits in: its model
name, K and restart, one log-probability and one token count per held-out document, K lists of
top words, the row's tokens the sum of the documents'. Anything else (a key select never writes,
text where a number belongs, a negative count, a number of 300 digits, K = 3's evaluation in
K = 2's place) is a one-line `InputFileError` naming the file and the field: the caller evaluates
the model again and says so (`files.runfolder.RunFolder.redone`).
"""

from __future__ import annotations

import os
from typing import Any

from ..datasets import load_model
from ..errors import InputFileError
from ..files.records import read_json, strict_float, strict_int, strict_strings
from ..model import TopicModel
from .classic import CLASSIC

NUMBERS = ("per_token", "per_token_sd", "perplexity", "total", "diversity", "exclusivity", "predictive_rank",
           "predictive_log_likelihood", "auto_model_precision", "irbo", "we_pairwise", "we_centroid",
           "we_irbo", "train_per_token", "judge_model_precision", "judge_rating")  # a finite number or null
NONNEGATIVE = ("per_token_sd", "perplexity", "diversity", "exclusivity", "predictive_rank")
TEXTS = ("kind", "heldout", "auto_note", "heldout_note")  # a string (heldout: or null)
UPGRADED = ("classic", "classic_notes")  # the row's fit scores, absent from a file saved before them
RELATIVE = 1e-9  # the rounding allowed between a row's total and its documents' sum


def _number(v: Any, where: str, field: str, low: float | None = None) -> float | None:
    return None if v is None else strict_float(v, where, field, low=low)


def _strings_of(v: Any, where: str, field: str) -> dict[str, str]:
    if not isinstance(v, dict) or not all(isinstance(x, str) for x in v.values()):
        raise InputFileError(f"{where}: {field} is not an object of strings")
    return v


def _row(row: Any, where: str, name: str, k: int, tokens: int, logp: list[float | None]) -> dict[str, Any]:
    """The evaluation's row, its values parsed (as `evaluate` and `fit_scores` make it), its total
    the sum of the documents' log-probabilities `logp` and its per-token value that over `tokens`
    (to float rounding, RELATIVE of the sum of their sizes)."""
    if not isinstance(row, dict):
        raise InputFileError(f"{where}: row is not an object")
    known = {"model", "topics", "words", "tokens", "coherence", "auto_model_precision_ci", "not_applicable",
             "not_computed", "we_missing_words", "judge_notes", "judge_accounting", "vs_best", *NUMBERS,
             *TEXTS, *UPGRADED}
    unknown = sorted(set(row) - known)
    if unknown:
        raise InputFileError(f"{where}: row.{unknown[0]} is not a field select writes")
    out = dict(row)
    if row.get("model") != name or strict_int(row.get("topics"), where, "row.topics") != k:
        raise InputFileError(f"{where}: row is of {row.get('model')!r}, not of {name} (K = {k})")
    if row.get("vs_best") is not None:  # one model evaluated: it is its own best (null)
        raise InputFileError(f"{where}: row.vs_best is not null (select evaluates one model at a time)")
    for key in NUMBERS:
        if key in row:
            out[key] = _number(row[key], where, f"row.{key}", 0 if key in NONNEGATIVE else None)
    for key in TEXTS:
        if key in row and not (isinstance(row[key], str) or (key == "heldout" and row[key] is None)):
            raise InputFileError(f"{where}: row.{key} is not a string")
    if row.get("words") is not None:
        out["words"] = strict_int(row["words"], where, "row.words", low=1)
    if row.get("we_missing_words") is not None:
        out["we_missing_words"] = strict_int(row["we_missing_words"], where, "row.we_missing_words", low=0)
    if row.get("tokens") is not None and strict_int(row["tokens"], where, "row.tokens", low=0) != tokens:
        raise InputFileError(f"{where}: row.tokens {row['tokens']} is not the documents' {tokens}")
    if None not in logp:
        total, scale = sum(logp), 1.0 + sum(map(abs, logp))
        for key, want in (("total", total), ("per_token", total / tokens if tokens else None)):
            got = out.get(key)
            if want is not None and got is not None and abs(got - want) > RELATIVE * scale:
                raise InputFileError(f"{where}: row.{key} {got!r} is not the documents' ({want!r})")
    if not isinstance(row.get("coherence"), dict):
        raise InputFileError(f"{where}: row.coherence is not an object")
    out["coherence"] = {m: _number(v, where, f"row.coherence.{m}") for m, v in row["coherence"].items()}
    ci = row.get("auto_model_precision_ci")
    if ci is not None:
        if not isinstance(ci, list) or len(ci) != 2:
            raise InputFileError(f"{where}: row.auto_model_precision_ci is not two numbers")
        out["auto_model_precision_ci"] = [_number(v, where, "row.auto_model_precision_ci") for v in ci]
    for key in ("not_applicable", "not_computed"):
        if key in row:
            _strings_of(row[key], where, f"row.{key}")
    if "judge_notes" in row and not (isinstance(row["judge_notes"], list)
                                     and all(isinstance(x, str) for x in row["judge_notes"])):
        raise InputFileError(f"{where}: row.judge_notes is not a list of strings")
    if "judge_accounting" in row and not isinstance(row["judge_accounting"], dict):
        raise InputFileError(f"{where}: row.judge_accounting is not an object")
    if "classic" in row:
        classic = row["classic"]
        if not isinstance(classic, dict) or set(classic) != set(CLASSIC):
            raise InputFileError(f"{where}: row.classic is not the classic metrics ({', '.join(CLASSIC)})")
        out["classic"] = {m: _number(v, where, f"row.classic.{m}") for m, v in classic.items()}
        _strings_of(row.get("classic_notes"), where, "row.classic_notes")
    return out


def read_evaluation(path: str | os.PathLike, name: str, k: int, r: int, documents: int) -> dict[str, Any]:
    """The evaluation saved at `path` for the model `name` (K = `k`, restart `r`) over `documents`
    held-out documents, every value parsed; a one-line InputFileError naming the file otherwise.
    It may lack what select adds later (`topic_words`, the row's `classic`): the caller adds them."""
    where = os.fspath(path)
    doc = read_json(where)
    if not isinstance(doc, dict):
        raise InputFileError(f"{where}: not a saved evaluation (a JSON object)")
    unknown = sorted(set(doc) - {"model", "topics", "restart", "row", "doc_log_prob", "doc_tokens",
                                 "topic_words", "topic_coherence", "train_seconds", "eval_seconds"})
    if unknown:
        raise InputFileError(f"{where}: {unknown[0]} is not a field select writes")
    if (doc.get("model") != name or strict_int(doc.get("topics"), where, "topics") != k
            or strict_int(doc.get("restart"), where, "restart") != r):
        raise InputFileError(f"{where}: the evaluation of {doc.get('model')!r} (K = {doc.get('topics')}, "
                             f"restart {doc.get('restart')}), not of {name}")
    out = dict(doc)
    logp, counts = doc.get("doc_log_prob"), doc.get("doc_tokens")
    if not (isinstance(logp, list) and isinstance(counts, list) and len(logp) == len(counts) == documents):
        raise InputFileError(f"{where}: doc_log_prob and doc_tokens are not one value per held-out document "
                             f"({documents})")
    out["doc_log_prob"] = [_number(v, where, f"doc_log_prob[{i}]") for i, v in enumerate(logp)]
    out["doc_tokens"] = [strict_int(v, where, f"doc_tokens[{i}]", low=0) for i, v in enumerate(counts)]
    out["row"] = _row(doc.get("row"), where, name, k, sum(out["doc_tokens"]), out["doc_log_prob"])
    if "topic_words" in doc:
        words = doc["topic_words"]
        if not isinstance(words, list) or len(words) != k:
            raise InputFileError(f"{where}: topic_words is not {k} lists of words")
        out["topic_words"] = [strict_strings(w, where, f"topic_words[{t}]") for t, w in enumerate(words)]
    if "topic_coherence" in doc:  # per measure, one value (or null) per topic
        coh = doc["topic_coherence"]
        if not isinstance(coh, dict) or not all(isinstance(v, list) and len(v) == k for v in coh.values()):
            raise InputFileError(f"{where}: topic_coherence is not, per measure, {k} values")
        out["topic_coherence"] = {str(m): [_number(x, where, f"topic_coherence.{m}[{t}]")
                                           for t, x in enumerate(v)] for m, v in coh.items()}
    for key in ("train_seconds", "eval_seconds"):
        out[key] = _number(doc.get(key), where, key, 0)
    return out


def read_model(path: str | os.PathLike, name: str, k: int, words: set[str]) -> TopicModel:
    """The model saved at `path` for the slot of `name` (K = `k`), trained on documents of `words`;
    a one-line error naming the file when it cannot be read or is another slot's."""
    model = load_model(path, name=name)
    if model.num_topics != k:
        raise InputFileError(f"{os.fspath(path)}: a model of {model.num_topics} topics, not of {name} "
                             f"(K = {k})")
    if model.vocab is None or not set(model.vocab) <= words:
        raise InputFileError(f"{os.fspath(path)}: its vocabulary is not of the training documents")
    return model
