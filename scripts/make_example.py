"""Build the bundled example (src/tealeaves/data/example_model.npz, example_docs.txt):
a 5-topic synthetic LDA model over 300 words with asymmetric alpha, and 20 documents of
20-40 tokens drawn from it: short enough that the exact likelihood is computable.

    python scripts/make_example.py
"""

from pathlib import Path

import numpy as np

from tealeaves import save_model, synthetic
from tealeaves.corpus import write_text_corpus

OUT = Path(__file__).resolve().parent.parent / "src" / "tealeaves" / "data"


def main() -> None:
    model = synthetic.random_model(5, 300, beta=0.05, alpha_sum=2.0, alpha_shape="harmonic",
                                   seed=20090614, name="example")
    lengths = np.random.default_rng(1).integers(20, 41, size=20)
    docs = synthetic.generate(model, 20, lengths, seed=2)
    OUT.mkdir(parents=True, exist_ok=True)
    save_model(model, OUT / "example_model.npz")
    write_text_corpus(docs, OUT / "example_docs.txt")
    print(f"wrote {OUT}/example_model.npz and example_docs.txt")


if __name__ == "__main__":
    main()
