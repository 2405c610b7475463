"""A time limit for tests of inputs that once hung: the block fails with TimeoutError instead of
hanging the suite (SIGALRM, main thread only). Not a timing assertion: the limits are far above
what the work needs."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator


@contextlib.contextmanager
def time_limit(seconds: int = 60) -> Iterator[None]:
    """Raise TimeoutError in the block after `seconds`."""

    def expired(*_):
        raise TimeoutError(f"no answer within {seconds} s: a hang")

    old = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
