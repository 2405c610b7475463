"""A reference index (`.tlx`): a reference corpus read once, then any topic words' co-occurrence
counts answered from it without reading the text again (`counts.count` takes its path).

What it stores: the vocabulary (sorted), every document's length, and for every word the sorted
global positions of its occurrences (an inverted index; position = tokens before the document +
position in it), delta + varint coded. The package, as `sampling/` is:

  kernels.py    the numba kernels, pure over flat arrays: the postings' code, and every counting
                rule answered from words' positions
  tlx.py        the file format: header, sections and their checksums, writing, reading, verifying
  build.py      the build (`build_index`): streamed, resumable, parallel
  reference.py  the counts of any topic words (`ReferenceIndex.counts`), `read_index`, `is_index`
"""

from __future__ import annotations

from .build import CHUNK_CHARS, MERGE_POSTINGS, build_estimate, build_index
from .reference import ReferenceIndex, count_index, is_index, read_index
from .tlx import MAGIC, RULES, SUFFIX, VERSION

__all__ = ["CHUNK_CHARS", "MAGIC", "MERGE_POSTINGS", "RULES", "SUFFIX", "VERSION", "ReferenceIndex",
           "build_estimate", "build_index", "count_index", "is_index", "read_index"]
