"""Issue 21, point 2: the options of the left-to-right particle filter that the accurate default
uses (`order`, `ess`) refuse bad values in one line, from the API and the CLI."""

import pytest

import tealeaves as tl
from tealeaves.cli import main
from tealeaves.errors import MethodError


@pytest.fixture(scope="module")
def tiny():
    model = tl.synthetic.random_model(3, 20, seed=1)
    return model, tl.synthetic.generate(model, 2, 10, seed=2)


@pytest.mark.parametrize("params,message", [
    ({"order": "bogus"}, "parameter order must be one of given, peaked, got 'bogus'"),
    ({"ess": -1}, "parameter ess must be a finite number >= 0, got -1"),
    ({"ess": float("nan")}, "parameter ess must be a finite number >= 0, got nan"),
    ({"ess": "x"}, "parameter ess must be a finite number >= 0, got 'x'"),
    ({"variant": "algorithm-3", "order": "peaked"},
     "parameter 'order' applies only with variant smc or smc-full"),
    ({"variant": "extend-only", "ess": 0.5}, "parameter 'ess' applies only with variant smc or smc-full"),
])
def test_bad_order_or_ess_is_a_one_line_error(tiny, params, message):
    model, docs = tiny
    with pytest.raises(MethodError, match=message.replace("(", r"\(").replace(")", r"\)")):
        tl.heldout(model, docs, particles=3, **params)


@pytest.mark.parametrize("option", [["--order", "bogus"], ["--variant", "algorithm-3", "--ess", "0.5"]])
def test_cli_bad_order_or_ess_is_one_line(example, capsys, option):
    _, _, model_path, docs_path = example
    code = main(["heldout", model_path, docs_path, "--quiet", *option])
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("tealeaves: error: ") and option[-2].strip("-") in err[0], err


def test_ess_above_one_resamples_at_every_position(tiny):
    """ess >= 1 means every position (the effective sample size never exceeds R)."""
    model, docs = tiny
    a = tl.heldout(model, docs, particles=5, seed=3, runs=2)
    b = tl.heldout(model, docs, particles=5, seed=3, runs=2, ess=2.0)
    assert (a.run_log_prob == b.run_log_prob).all()
    assert b.params["ess"] == 1.0 and b.label == a.label  # one setting, one label


def test_no_multinomial_advice_when_resampling_is_adaptive(tiny):
    """With ess < 1 multinomial resampling gives no Lee-Whiteley estimate either: not advised."""
    model, docs = tiny
    assert "multinomial" in tl.heldout(model, docs, particles=5, seed=3).note
    assert "multinomial" not in tl.heldout(model, docs, particles=5, seed=3, ess=0.5).note
