"""matplotlib drawing that shows every text as given: `literal` escapes what mathtext would parse
(`$...$` in a word or a model name crashed the figures), and `pyplot` draws with the Agg backend and
LaTeX off (`text.usetex`, whatever the user's matplotlibrc says). Every figure tealeaves draws
(the report's PNGs, the intrusion plots) goes through both."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any


def literal(text: Any) -> str:
    """`text` as matplotlib shows it literally: every `$` escaped (`\\$`), so no pair of them opens
    mathtext; a backslash elsewhere is already literal outside mathematics."""
    return str(text).replace("$", "\\$")


@contextlib.contextmanager
def pyplot() -> Iterator[Any]:
    """`matplotlib.pyplot` on the Agg backend with LaTeX off for the block (texts through `literal`)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with matplotlib.rc_context({"text.usetex": False}):
        yield plt
