"""The `tealeaves` command's entry point. It lives outside the tealeaves package so that Ctrl-C
while the package is still importing (numpy, scipy and numba take about a second) ends with one
line, like Ctrl-C at any other time, instead of a traceback.

Ctrl-C while numba compiles: llvmlite calls back into Python from C (its object cache), and an
exception raised inside such a callback is printed and ignored, so the interrupt was lost and the
command ran on. The handler below defers an interrupt that lands in llvmlite's frames: it sends
SIGINT again a moment later, until it lands outside them.

Ctrl-C while the package imports is held until the import is over (about a second): raised
inside a C extension's import (numpy's), it came out as an ImportError with a traceback."""

from __future__ import annotations

import os
import signal
import sys
import threading

RETRY_SECONDS = 0.05
_importing = False
_held = False


def _in_llvmlite(frame) -> bool:
    while frame is not None:
        if "llvmlite" in frame.f_code.co_filename:
            return True
        frame = frame.f_back
    return False


def _interrupt(signum, frame) -> None:
    global _held
    if _importing:
        _held = True
        return
    if _in_llvmlite(frame):
        retry = threading.Timer(RETRY_SECONDS, os.kill, (os.getpid(), signal.SIGINT))
        retry.daemon = True
        retry.start()
        return
    raise KeyboardInterrupt


def main() -> int:
    global _importing
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # not when SIGINT is ignored
        signal.signal(signal.SIGINT, _interrupt)
    try:
        _importing = True
        try:
            from tealeaves.cli import main as cli_main
        finally:
            _importing = False
        if _held:
            raise KeyboardInterrupt
        status = cli_main()
    except KeyboardInterrupt:
        print("tealeaves: interrupted", file=sys.stderr)
        status = 130
    if status == 130:
        # worker processes killed by the same Ctrl-C leave concurrent.futures' exit hook writing
        # to a closed pipe ("Exception ignored in: <module 'threading'>", a traceback after the
        # one line); the command has said what it had to say
        sys.unraisablehook = _quiet
    return status


def _quiet(unraisable) -> None:
    """An exception Python can only print while an interrupted command exits: not printed."""
