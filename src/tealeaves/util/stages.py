"""Stages of a long command (`evaluate`): wall and CPU seconds per named stage, and a one-line
note on stderr as each stage starts (shown when stderr is a terminal, as the progress bars are;
`enabled=False`, the CLI's `--quiet`, turns it off). CPU seconds count this process and the
worker processes that have finished (the pools of `--workers`), not a Dask cluster's."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

try:  # not on Windows: CPU seconds of finished worker processes are then left out
    import resource
except ImportError:  # pragma: no cover
    resource = None  # type: ignore[assignment]


def cpu_seconds() -> float:
    """CPU seconds used so far by this process and its finished child processes."""
    total = time.process_time()
    if resource is not None:
        ru = resource.getrusage(resource.RUSAGE_CHILDREN)
        total += ru.ru_utime + ru.ru_stime
    return total


class Stages:
    """A clock over the `names` stages (in order), started on creation; `with stages.stage(name,
    detail):` times one piece of a stage (a stage may be entered many times: its seconds add up)."""

    def __init__(self, names: Sequence[str], label: str = "evaluate", enabled: bool | None = None) -> None:
        self.names = list(names)
        self.label = label
        self.enabled = sys.stderr.isatty() if enabled is None else bool(enabled)
        self.wall: dict[str, float] = dict.fromkeys(self.names, 0.0)
        self.cpu: dict[str, float] = dict.fromkeys(self.names, 0.0)
        self._t0, self._c0 = time.perf_counter(), cpu_seconds()

    def say(self, text: str) -> None:
        """One line on stderr (when enabled)."""
        if self.enabled:
            sys.stderr.write(f"{self.label}: {text}\n")
            sys.stderr.flush()

    @contextmanager
    def stage(self, name: str, detail: str = "") -> Iterator[None]:
        if name not in self.wall:
            raise KeyError(name)
        self.say(f"stage {self.names.index(name) + 1}/{len(self.names)} {name}"
                 + (f": {detail}" if detail else ""))
        t, c = time.perf_counter(), cpu_seconds()
        try:
            yield
        finally:
            self.wall[name] += time.perf_counter() - t
            self.cpu[name] += cpu_seconds() - c

    def total(self) -> tuple[float, float]:
        """Wall and CPU seconds since the clock started."""
        return time.perf_counter() - self._t0, cpu_seconds() - self._c0

    def to_dict(self) -> dict[str, Any]:
        """{stage: {"wall": s, "cpu": s}} in stage order, and the totals under "total"."""
        wall, cpu = self.total()
        out: dict[str, Any] = {n: {"wall": self.wall[n], "cpu": self.cpu[n]} for n in self.names}
        out["total"] = {"wall": wall, "cpu": cpu}
        return out


def estimated_stages(estimate: dict[str, Any]) -> dict[str, float]:
    """The estimate per stage and in total, counting Ratio-AIS that `auto` may run (at most)."""
    if not estimate.get("stages"):
        return {}
    out = dict(estimate["stages"])
    extra = estimate.get("ratio_ais_up_to") or 0.0
    out["comparisons"] = out.get("comparisons", 0.0) + extra
    out["total"] = estimate.get("total", 0.0) + extra
    return out


def stage_lines(stages: dict[str, Any], estimate: dict[str, float] | None = None) -> list[str]:
    """The per-stage seconds as terminal lines (with the estimate made before the work, if any:
    {stage: seconds}, "total" included)."""
    est = estimate or {}
    head = ["stage", "wall s", "CPU s"] + (["estimated s"] if est else [])
    rows = [[n, f"{v['wall']:.2f}", f"{v['cpu']:.2f}"]
             + ([f"{est[n]:.1f}" if n in est else "-"] if est else [])  # a stage done before the estimate
            for n, v in stages.items()]
    widths = [max(len(x) for x in col) for col in zip(head, *rows, strict=True)]
    return ["  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in
                      enumerate(zip(r, widths, strict=True))) for r in [head, *rows]]


__all__ = ["Stages", "cpu_seconds", "estimated_stages", "stage_lines"]
