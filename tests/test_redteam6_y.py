"""Red team 6 (y): estimator numbers under --target-sd."""
import numpy as np

import tealeaves as tl


def test_target_sd_exact_one_token_document_converges():
    """F5: a one-token document is estimated exactly (sd 0 at every budget); float ulps between
    budgets must not make it 'not converged' after 12 doublings."""
    model = tl.TopicModel(np.array([[0.5, 0.3, 0.2], [0.1, 0.2, 0.7]]), [0.5, 1.5], vocab=["a", "b", "c"])
    docs = tl.Corpus.from_word_ids([[0, 1, 2, 0], [2, 2, 1], [0], [1, 0]], vocab=model.vocab)
    res = tl.heldout(model, docs, method="left-to-right", particles=4, target_sd=0.05, seed=1)
    a = res.adaptive
    assert a["not_converged"] == 0, a
    assert a["budgets"][2] <= 8, a


def test_subnormal_alpha_is_refused():
    """Red team 6, F1: alpha 5e-324 (subnormal) was accepted and left-to-right, is-pzw and chib
    were off by up to 744 nats with sd 0; the smallest normal float is accepted."""
    import numpy as np
    import pytest

    import tealeaves as tl
    from tealeaves.errors import InvalidModelError

    phi = np.array([[0.5, 0.3, 0.2], [0.1, 0.2, 0.7]])
    with pytest.raises(InvalidModelError, match=r"alpha\[0\] = 4.94066e-324 is below the smallest normal"):
        tl.TopicModel(phi, np.array([5e-324, 5e-324]), vocab=list("abc"))
    tl.TopicModel(phi, np.full(2, np.finfo(float).tiny), vocab=list("abc"))
