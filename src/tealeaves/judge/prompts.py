"""The task texts a judge is given, written for tealeaves and versioned (TEXTS_VERSION, recorded in
every result and part of every cached request): any change to a text below changes the version.

Every choice is asked for as a number (an option's place, or a point on a scale), so that the
answer is one token whose log-probability the server can report. The tasks:

- word intrusion (Chang et al. 2009, section 3.1): which of a topic's top words and one intruder,
  numbered, does not belong;
- topic intrusion (section 3.2): which of a document's top topics and one intruder topic, each
  shown by its top words, does not describe the document;
- ratings (the 3-point scale Hoyle et al. 2021 asked people for, after Newman et al. 2010): how
  well a topic's top words fit together;
- ProxAnn (Hoyle, Calvo-Bartolomé, Boyd-Graber & Resnik 2025), three steps: a category label from
  the top words and exemplar documents; how well each evaluation document fits that label, 1-5;
  the evaluation documents ranked by fit.
"""

from __future__ import annotations

from collections.abc import Sequence

TEXTS_VERSION = "tealeaves-judge-1"

SYSTEM = ("You are an expert annotator helping researchers judge the output of a topic model. Follow the "
          "instructions exactly and reply in the format they ask for, with nothing else.")

WORD_INTRUSION = (
    "Here are {n} words. All but one of them belong to one common theme; one word does not belong.\n\n"
    "{options}\n\n"
    "Which word does not belong? Reply with its number only (1 to {n})."
)

TOPIC_INTRUSION = (
    "Here is a document, then {n} groups of words. Each group describes a theme. {k} of the themes "
    "are what the document is about; one is not.\n\n"
    "Document:\n{text}\n\n"
    "Themes:\n{options}\n\n"
    "Which theme is the document NOT about? Reply with its number only (1 to {n})."
)

RATING = (
    "Here are the most important words of one topic, most important first:\n\n"
    "{words}\n\n"
    "How closely do these words fit together as one theme?\n"
    "1 = not at all or barely\n"
    "2 = somewhat\n"
    "3 = very closely\n\n"
    "Reply with 1, 2 or 3 only."
)

PROXANN_LABEL = (
    "Here are the most important words of one topic, most important first, and {m} documents that are "
    "typical of it.\n\n"
    "Words: {words}\n\n"
    "{documents}\n\n"
    "Write a short category label (at most 8 words) that would let a reader find documents on this "
    "topic. Reply with the label only, on one line."
)

PROXANN_FIT = (
    "Category: {label}\n\n"
    "Document:\n{text}\n\n"
    "How well does the document fit the category?\n"
    "1 = not at all\n"
    "2 = a little\n"
    "3 = somewhat\n"
    "4 = well\n"
    "5 = very well\n\n"
    "Reply with one number from 1 to 5 only."
)

PROXANN_RANK = (
    "Category: {label}\n\n"
    "Here are {n} documents.\n\n"
    "{documents}\n\n"
    "Order the documents from the one that fits the category best to the one that fits it least. "
    "Reply with the {n} document numbers only, best first, separated by commas (with three documents, "
    "for example: 3, 1, 2)."
)

# every text above, as the version covers them
TEXTS = {"system": SYSTEM, "word-intrusion": WORD_INTRUSION, "topic-intrusion": TOPIC_INTRUSION,
         "rating": RATING, "proxann-label": PROXANN_LABEL, "proxann-fit": PROXANN_FIT,
         "proxann-rank": PROXANN_RANK}


def numbered(items: Sequence[str]) -> str:
    return "\n".join(f"{i}. {x}" for i, x in enumerate(items, 1))


def documents(texts: Sequence[str]) -> str:
    return "\n\n".join(f"Document {i}:\n{t}" for i, t in enumerate(texts, 1))


def word_intrusion(options: Sequence[str]) -> str:
    return WORD_INTRUSION.format(n=len(options), options=numbered(options))


def topic_intrusion(text: str, options: Sequence[str]) -> str:
    return TOPIC_INTRUSION.format(n=len(options), k=len(options) - 1, text=text, options=numbered(options))


def rating(words: Sequence[str]) -> str:
    return RATING.format(words=", ".join(words))


def proxann_label(words: Sequence[str], exemplars: Sequence[str]) -> str:
    return PROXANN_LABEL.format(m=len(exemplars), words=", ".join(words), documents=documents(exemplars))


def proxann_fit(label: str, text: str) -> str:
    return PROXANN_FIT.format(label=label, text=text)


def proxann_rank(label: str, texts: Sequence[str]) -> str:
    return PROXANN_RANK.format(label=label, n=len(texts), documents=documents(texts))


__all__ = ["TEXTS", "TEXTS_VERSION", "SYSTEM"]
