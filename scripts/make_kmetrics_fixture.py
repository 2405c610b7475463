"""Make tests/fixtures/kmetrics_tmtoolkit.json: the classic K-selection metrics computed by
tmtoolkit (the peer; R's ldatuning is the reference but needs R and CRAN) on small seeded inputs,
stored beside the inputs for tests/test_kmetrics.py. tmtoolkit 0.12.0 has Arun 2010, Cao Juan 2009
and Griffiths 2004 (no Deveaud 2014). tmtoolkit's runtime dependencies are too heavy for CI, so it
is installed without them (its metrics need only numpy, scipy and gmpy2):

    python -m venv --system-site-packages /tmp/tmtk && /tmp/tmtk/bin/pip install --no-deps \\
        tmtoolkit==0.12.0 gmpy2 globre bidict
    /tmp/tmtk/bin/python scripts/make_kmetrics_fixture.py

Made with tmtoolkit 0.12.0, gmpy2 2.3.2, numpy 2.4.6, Python 3.11.7."""

import json
from importlib.metadata import version
from pathlib import Path

import numpy as np
from tmtoolkit.topicmod.evaluate import metric_arun_2010, metric_cao_juan_2009, metric_griffiths_2004

OUT = Path("tests/fixtures/kmetrics_tmtoolkit.json")
cases = []
for seed, (K, V, D) in enumerate([(4, 30, 20), (7, 50, 25)]):
    rng = np.random.default_rng(seed)
    phi = rng.dirichlet(np.full(V, 0.1), size=K)
    theta = rng.dirichlet(np.full(K, 0.3), size=D)
    lengths = rng.integers(5, 60, size=D).astype(float)
    logliks = -50_000.0 + rng.normal(0, 40, size=12)
    cases.append({"phi": phi.tolist(), "theta": theta.tolist(), "lengths": lengths.tolist(),
                  "logliks": logliks.tolist(),
                  "cao_juan_2009": float(metric_cao_juan_2009(phi)),
                  "arun_2010": float(metric_arun_2010(phi, theta, lengths)),
                  "griffiths_2004": float(metric_griffiths_2004(logliks))})
OUT.write_text(json.dumps({"made_by": "scripts/make_kmetrics_fixture.py",
                           "versions": {p: version(p) for p in ("tmtoolkit", "gmpy2", "numpy")},
                           "cases": cases}, indent=1))
print(f"wrote {OUT}")
