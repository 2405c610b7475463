"""Third-party binary loaders run in a child process with a time limit.

A native loader can abort the whole process (tomotopy throws a C++ exception through Python on
a file with a fake header: signal 6) or never return (a truncated tomotopy file: 100% CPU until
killed). So the library's loader runs in a fresh interpreter that writes the arrays tealeaves
needs to an `.npz` (data, read back with `allow_pickle=False`) and phi, when it has one, to a
separate `phi.npy` that is streamed into the model's layout (`common.read_phi`); a crash, an
error or the time limit becomes a one-line `InputFileError`. The child does not import tealeaves
(fast start)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ARCHIVE_ERRORS, InputFileError, InvalidModelError, no_such_file
from ..util.limits import check_float
from .common import read_phi

# seconds: a fixed allowance for starting the interpreter and the library, plus a rate per MB
BASE_SECONDS = 60.0
SECONDS_PER_MB = 2.0
CHILDREN = Path(__file__).resolve().parent / "children"


def default_timeout(path: str) -> float:
    """The time limit for loading the file at `path`: 60 s + 2 s per MB."""
    try:
        mb = os.path.getsize(path) / 1e6
    except OSError:
        mb = 0.0
    return BASE_SECONDS + SECONDS_PER_MB * mb


def load_timeout(timeout: Any) -> float:
    """`timeout` (seconds, for a loader run in a child) checked: a finite number > 0, the check the
    CLI's --load-timeout makes."""
    return check_float("timeout", timeout, 0, low_open=True)


def load_isolated(child: str, path: str, what: str, timeout: float | None = None,
                  args: Sequence[str] = ()) -> dict[str, Any]:
    """Run `children/<child>.py PATH OUTDIR *ARGS` in a fresh interpreter and return the arrays it
    wrote (`phi` as a checked `CheckedPhi`, rows rescaled to sum to one). `what` names the loader
    in errors ("tomotopy")."""
    limit = default_timeout(path) if timeout is None else load_timeout(timeout)
    if not os.path.exists(path):
        raise no_such_file(path)
    script = CHILDREN / f"{child}.py"
    with tempfile.TemporaryDirectory(prefix="tealeaves-load-") as tmp:
        # -P: no script or working directory on sys.path (a local tomotopy.py must not shadow
        # the library); run_path on a file leaves sys.path alone
        cmd = [sys.executable, "-P", "-c",
               "import runpy, sys; sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')",
               str(script), os.path.abspath(path), tmp, *args]
        try:
            proc = subprocess.run(cmd, capture_output=True, timeout=limit, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise InputFileError(
                f"{path}: {what}'s loader did not finish within {limit:.0f} s (a truncated or "
                "corrupt file makes it loop); if the file is good and very large, raise the "
                "limit (timeout=, CLI --load-timeout)"
            ) from None
        if proc.returncode != 0:
            raise InputFileError(f"{path}: {what} cannot load it ({_why(proc)})")
        try:
            with np.load(os.path.join(tmp, "arrays.npz"), allow_pickle=False) as f:
                arrays: dict[str, Any] = {k: f[k] for k in f.files}
            phi = os.path.join(tmp, "phi.npy")
            if os.path.exists(phi):
                with open(phi, "rb") as fh:
                    arrays["phi"] = read_phi(fh, normalize=True)
        except InvalidModelError as exc:
            raise InvalidModelError(f"{path}: {exc}") from None
        except ARCHIVE_ERRORS as exc:
            raise InputFileError(f"{path}: {what}'s loader wrote no readable result ({exc})") from None
        return arrays


def _why(proc: subprocess.CompletedProcess) -> str:
    lines = [ln.strip() for ln in proc.stderr.decode("utf-8", "replace").splitlines() if ln.strip()]
    last = lines[-1][:200] if lines else ""
    if proc.returncode < 0:
        try:
            name = signal.Signals(-proc.returncode).name
        except ValueError:
            name = f"signal {-proc.returncode}"
        return f"the loader crashed with {name}" + (f": {last}" if last else "")
    return last or f"the loader exited with status {proc.returncode}"
