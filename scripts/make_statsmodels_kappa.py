"""Make tests/fixtures/statsmodels_fleiss_kappa.json: Fleiss' kappa as statsmodels computes it
(`statsmodels.stats.inter_rater.fleiss_kappa`, method "fleiss") for Fleiss' (1971) own table and for
random count tables, which tests/test_agreement.py compares with `tealeaves.intrusion.fleiss_kappa`.
statsmodels (12 MB, compiled) is not a test dependency; the fixture is made once:

    pip install --target /tmp/smlib statsmodels patsy
    PYTHONPATH=/tmp/smlib python scripts/make_statsmodels_kappa.py

Made with statsmodels 0.15.0, numpy 2.4.6, Python 3.11.7. Each case stores the count table (items
x categories: how many raters chose each category; statsmodels needs the same number of raters
per item) and statsmodels' kappa."""

import json
import platform
from pathlib import Path

import numpy as np
import statsmodels
from statsmodels.stats.inter_rater import fleiss_kappa

# Fleiss (1971), table 1 as reproduced in most textbooks: 10 subjects, 14 raters, 5 categories
FLEISS_1971 = [[0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
               [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7]]


def random_table(rng: np.random.Generator, items: int, raters: int, categories: int) -> list:
    prefs = rng.dirichlet(np.ones(categories) * 0.7, size=items)  # items differ: agreement above chance
    return [np.bincount(rng.choice(categories, size=raters, p=p), minlength=categories).tolist()
            for p in prefs]


rng = np.random.default_rng(20261124)
cases = [{"name": "fleiss-1971", "table": FLEISS_1971}]
for items, raters, categories in [(8, 3, 6), (30, 5, 6), (12, 2, 4), (50, 7, 4), (20, 10, 2)]:
    cases.append({"name": f"random-{items}x{raters}x{categories}",
                  "table": random_table(rng, items, raters, categories)})
for case in cases:
    case["statsmodels_kappa"] = float(fleiss_kappa(np.array(case["table"]), method="fleiss"))
out = {"made_by": "scripts/make_statsmodels_kappa.py",
       "versions": {"statsmodels": statsmodels.__version__, "numpy": np.__version__,
                    "python": platform.python_version()},
       "cases": cases}
Path("tests/fixtures/statsmodels_fleiss_kappa.json").write_text(json.dumps(out, indent=1) + "\n")
print({c["name"]: round(c["statsmodels_kappa"], 4) for c in cases})
