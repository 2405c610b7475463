"""Build src/tealeaves/data/digits_binary.npz: scikit-learn's 8x8 handwritten digits (the
UCI "Optical Recognition of Handwritten Digits" data, E. Alpaydin and C. Kaynak, CC BY 4.0),
binarised at pixel value >= 8 of 16, split into 1,397 training and 400 test images with a
fixed seed. Needs scikit-learn (which ships the data); the package itself does not.

    pip install scikit-learn && python scripts/make_digits.py
"""

from pathlib import Path

import numpy as np
from sklearn.datasets import load_digits

OUT = Path(__file__).resolve().parent.parent / "src" / "tealeaves" / "data" / "digits_binary.npz"


def main() -> None:
    d = load_digits()
    x = (d.data >= 8).astype(np.uint8)
    order = np.random.default_rng(20140513).permutation(len(x))
    test, train = order[:400], order[400:]
    np.savez_compressed(OUT, train=np.packbits(x[train], axis=1), test=np.packbits(x[test], axis=1),
                        train_labels=d.target[train].astype(np.uint8),
                        test_labels=d.target[test].astype(np.uint8), width=np.int64(64),
                        source=np.array("UCI Optical Recognition of Handwritten Digits via "
                                        "scikit-learn load_digits; CC BY 4.0; binarised >= 8/16"))
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
