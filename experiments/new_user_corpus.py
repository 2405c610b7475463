"""The corpus of the new-user run (issue 33's measure, docs/new_user_run.md): paragraphs of the
Linux manual pages (`corpora.man_pages()`: sections 2-8 of /usr/share/man, parsed from groff and
tokenized as the other real corpora), a seeded sample of `DOCS` paragraphs, words seen fewer than
`MIN_COUNT` times in the sample dropped, paragraphs left with fewer than `MIN_TOKENS` tokens left
out, then a seeded split: `HELDOUT` of them held out. Writes `train.txt` and `heldout.txt` (one
paragraph per line, tokens separated by spaces) into OUT and prints what it wrote: documents,
tokens, words and the sha256 of each part (which pages exist depends on the Debian packages
installed; the hashes say whether a rerun read the same ones).

    python experiments/new_user_corpus.py /tmp/newuser/corpus
"""

from __future__ import annotations

import collections
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpora  # noqa: E402

SEED = 33
DOCS = 5000
HELDOUT = 0.2
MIN_COUNT = 5
MIN_TOKENS = 12


def build(out: Path) -> dict:
    docs = corpora.man_pages()
    rng = np.random.default_rng(SEED)
    sample = [docs[i] for i in sorted(rng.choice(len(docs), size=min(DOCS, len(docs)), replace=False))]
    counts = collections.Counter(w for d in sample for w in d)
    sample = [[w for w in d if counts[w] >= MIN_COUNT] for d in sample]
    sample = [d for d in sample if len(d) >= MIN_TOKENS]
    held = set(rng.choice(len(sample), size=round(HELDOUT * len(sample)), replace=False).tolist())
    parts = {"train": [d for i, d in enumerate(sample) if i not in held],
             "heldout": [d for i, d in enumerate(sample) if i in held]}
    out.mkdir(parents=True, exist_ok=True)
    info = {"source": "Linux manual pages, sections " + ", ".join(corpora.MAN_SECTIONS),
            "paragraphs_read": len(docs), "seed": SEED}
    for name, part in parts.items():
        corpora.write(part, str(out / f"{name}.txt"))
        info[name] = corpora.describe(part, None)
    return info


if __name__ == "__main__":
    print(json.dumps(build(Path(sys.argv[1])), indent=1))
